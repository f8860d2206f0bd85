#!/usr/bin/env bash
# Checks the habits that keep the tree uniform:
#   - every C++ file is formatted as .clang-format says (clang-format --dry-run --Werror);
#   - with --tidy, the .clang-tidy checks pass on every source file (needs the release build's
#     compile_commands.json: scripts/build.sh first).
# scripts/test.sh runs both. `scripts/lint.sh --fix` reformats the tree in place instead.
#
#   scripts/lint.sh            # format check
#   scripts/lint.sh --tidy     # format check + clang-tidy
#   scripts/lint.sh --fix      # apply clang-format
set -euo pipefail
cd "$(dirname "$0")/.."
tidy=0 fix=0
for a in "$@"; do
  case $a in
    --tidy) tidy=1 ;;
    --fix) fix=1 ;;
    -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "lint: unknown option $a" >&2; exit 2 ;;
  esac
done
# Generated files (line 1 says GENERATED) stay as their generator writes them.
mapfile -t files < <(git ls-files '*.cpp' '*.h' | grep -v '^fuzz/corpus/' |
  while read -r f; do head -1 "$f" | grep -q GENERATED || echo "$f"; done)
if ((fix)); then
  clang-format -i "${files[@]}"
  exit 0
fi
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/es-format.$$; then
  grep -m 20 'error:' /tmp/es-format.$$ >&2 || true
  n=$(grep -c 'error:' /tmp/es-format.$$ || true)
  rm -f /tmp/es-format.$$
  echo "lint: $n formatting differences from .clang-format; run scripts/lint.sh --fix" >&2
  exit 1
fi
rm -f /tmp/es-format.$$
echo "lint: ${#files[@]} files formatted as .clang-format says"
if ((tidy)); then
  [[ -f build/compile_commands.json ]] || { echo "lint: run scripts/build.sh first (no build/compile_commands.json)" >&2; exit 2; }
  mapfile -t srcs < <(git ls-files 'src/*.cpp' 'apps/*.cpp')
  printf '%s\n' "${srcs[@]}" | xargs -P "${ES_JOBS:-$(nproc)}" -n 4 clang-tidy -p build --quiet
  echo "lint: clang-tidy clean on ${#srcs[@]} files"
fi
