#!/bin/sh
# Wrapper: side-by-side word2vec training (embedscope / gensim / fastText); adds the run to the
# "## training" section of bench/RESULTS.md (as its first subsection). Needs the CLI built
# (default build/bin/embedscope).
set -e
cd "$(dirname "$0")/.."
exec /usr/bin/python3 bench/compare_train.py --cli "${ES_CLI:-build/bin/embedscope}" --write "$@"
