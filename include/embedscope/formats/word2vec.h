// word2vec text / binary, GloVe (header-less text) and fastText .vec readers and writers.
//
// Byte layouts (reference: tmikolov/word2vec word2vec.c `save_vectors`, gensim
// KeyedVectors.save_word2vec_format, fastText `FastText::saveVectors`; docs/formats.md has the
// edge cases):
//
//   text     "N DIM\n"                          N > 0 vectors, DIM > 0 values each
//            "word v1 v2 ... vDIM\n"  x N       values are decimal floats separated by ' '
//   glove    the same rows without the header line (GloVe, some fastText exports)
//   binary   "N DIM\n"
//            "word " + DIM x float32 little-endian [+ "\n"]  x N
//
// Text rules (reliability.md W2, W8-W11, W15):
//  - Fields are separated by ASCII space only. The vector is the LAST DIM fields of a line;
//    the word is everything before the single space that precedes the first of them, so words
//    may contain TAB, NBSP, other spaces (GloVe 840B ". . .") or be a single space. A line
//    whose word ends in a space-separated number and that has more than DIM+1 fields is
//    reported as "DIM+k values" (an extra value cannot be told from such a word).
//  - A UTF-8 BOM at the start, CRLF line ends, trailing spaces / tabs and a missing final
//    newline are accepted; blank lines are accepted only at the end of the file.
//  - Header detection: a first line of exactly two numeric fields is a header and must be two
//    positive integers; any other first line starts a header-less GloVe file, whose DIM is the
//    most common number of trailing numeric fields among its first 100 lines.
//  - Values are parsed with std::from_chars as binary64 and rounded to float32, which is what
//    numpy / gensim do (so our values equal gensim's bit for bit); a leading '+' is accepted.
//
// Policies (each tested; docs/formats.md):
//  - NaN, Inf and values beyond float32 range (1e999, 1e39) are rejected with their line and
//    byte offset, in both text and binary files: they would poison every cosine computed from
//    the table. Values that underflow become 0 / subnormals, like numpy.
//  - Invalid UTF-8 in a word: replaced by U+FFFD per maximal ill-formed subsequence (Python's
//    errors="replace") and counted in one warning; LoadOptions::strict_utf8 rejects instead.
//  - Duplicate words: the first row is kept, later ones are dropped (gensim's policy); one
//    warning with the count and the first example. The table holds unique words only.
//  - Fewer rows than the header declares: Error(kCorrupt) "expected N vectors, found M (file
//    truncated?)". More rows / trailing bytes than declared: Error(kCorrupt) naming the line
//    (or byte offset) and the count, because a wrong header means the file was concatenated
//    or edited and silently dropping data (gensim's behaviour) hides that.
//  - Limits: a word may hold at most kMaxWordBytes bytes, a text line kMaxLineBytes, DIM at
//    most kMaxDim. The header's N x DIM is checked against the file size before anything is
//    allocated (W3), so a small file never causes a large allocation.
//
// Files are read through a read-only mmap (MappedFile); the size comes from fstat at open. The
// table returned is owned memory (values are parsed or copied out), so a later truncation of
// the file cannot affect it; a truncation *during* the load raises SIGBUS (W17, see
// core/mapped_file.h).
//
// Errors: Error(kNotFound / kIo) when the file cannot be opened; Error(kCorrupt) for any
// violation above, with the path, the line (text) or byte offset, the value and the limit.
// Thread-safety: free functions without shared state; safe to call concurrently.
//
//   LoadedEmbeddings e = load_word2vec_text("wiki.en.vec", {});
//   std::optional<TokenId> id = e.vocab.find("king");
//   save_word2vec_binary("out.bin", e.table, e.vocab);
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "embedscope/core/embedding_table.h"
#include "embedscope/core/vocabulary.h"
#include "embedscope/formats/embeddings_file.h"

namespace embedscope {

inline constexpr size_t kMaxWordBytes = 64 * 1024;
inline constexpr size_t kMaxLineBytes = 16 * 1024 * 1024;
inline constexpr size_t kMaxDim = kMaxTableDim;  // core/embedding_table.h's row-width limit

// Reads "N DIM" word2vec text, fastText .vec, or header-less GloVe (auto-detected from the
// first line; LoadOptions::format = kGlove forces header-less, kWord2VecText requires a
// header). Result format: kWord2VecText when a header was present, else kGlove; table F32.
LoadedEmbeddings load_word2vec_text(const std::string& path, const LoadOptions& options);
// The same, parsing the rows on n_threads threads (0: process_threads() for files over 1 MiB,
// else 1). The table, the warnings and the error thrown (always the one on the
// file's earliest bad line) do not depend on n_threads.
LoadedEmbeddings load_word2vec_text(const std::string& path, const LoadOptions& options,
                                    size_t n_threads);

// Reads word2vec binary (word2vec.c -binary 1, gensim binary=True). Result format
// kWord2VecBinary; table F32.
LoadedEmbeddings load_word2vec_binary(const std::string& path, const LoadOptions& options);

// Write "N DIM" text with each value as the shortest decimal that reads back to the same
// float32 (std::to_chars), so text round trips are exact. Atomic (AtomicFile).
// Throws Error(kInvalidArgument) when vocab.size() != table.n_rows(), when the table holds
// NaN/Inf, or when a word cannot be written so that it reads back: empty lines are not
// words, so a word holding '\n' or '\r', longer than kMaxWordBytes, or (text) whose last
// space-separated part is a number ("a 5") is refused, naming the row. Throws Error(kIo).
void save_word2vec_text(const std::string& path, const EmbeddingTable& table,
                        const Vocabulary& vocab);
// Binary: "N DIM\n" then "word " + float32 LE + "\n" per row (word2vec.c's layout). Words may
// not contain ' ' or start with '\n' (the reader could not find their end).
void save_word2vec_binary(const std::string& path, const EmbeddingTable& table,
                          const Vocabulary& vocab);

// Content sniffing for detect_format. `prefix` is the first (up to) 4096 bytes of the file.
// Binary: a "N DIM" header followed by a word and bytes that are not decimal text.
bool looks_like_word2vec_binary(std::span<const std::byte> prefix);
// Text: a "N DIM" header followed by text, or a header-less first line ending in at least two
// numbers (GloVe) whose following line, when present in the prefix, agrees.
bool looks_like_word2vec_text(std::span<const std::byte> prefix);

}  // namespace embedscope
