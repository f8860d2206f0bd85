#!/usr/bin/env bash
# Configures and builds the release preset: the CLI lands at build/bin/embedscope.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release -j "${ES_JOBS:-$(nproc)}"
