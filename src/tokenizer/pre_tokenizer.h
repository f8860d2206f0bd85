// The hand-written pre-tokenizers (internal): next_piece(kind, text, pos) returns the end of the
// pre-token starting at pos, exactly as the kind's regex (see PreTokenizerKind in
// embedscope/tokenizer/bpe.h) would match it by leftmost-first alternation. No regex engine,
// no recursion, no backtracking beyond one code point: linear time, constant stack (T10, T11).
#pragma once

#include <cstddef>
#include <cstdint>

#include "embedscope/tokenizer/bpe.h"

namespace embedscope::pretok {

// pos < n. Returns end, pos < end <= n.
size_t next_piece(PreTokenizerKind kind, const uint8_t* s, size_t n, size_t pos);

}  // namespace embedscope::pretok
