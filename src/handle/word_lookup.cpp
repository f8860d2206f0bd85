#include "embedscope/handle/word_lookup.h"

#include <algorithm>
#include <charconv>

#include "embedscope/core/error.h"
#include "embedscope/handle/model_handle.h"

namespace embedscope {

namespace {

std::string ascii_lower(std::string_view s) {
  std::string o(s);
  for (char& c : o)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return o;
}

std::string capitalised(std::string_view s) {
  std::string o = ascii_lower(s);
  if (!o.empty() && o[0] >= 'a' && o[0] <= 'z') o[0] = char(o[0] - 'a' + 'A');
  return o;
}

}  // namespace

WordLookup::WordLookup(const Vocabulary* vocab, std::optional<BpeTokenizer> tok, size_t n_rows)
    : WordLookup(vocab,
                 tok ? std::shared_ptr<const Tokenizer>(make_tokenizer(std::move(*tok))) : nullptr,
                 n_rows) {}

WordLookup::WordLookup(const Vocabulary* vocab, std::shared_ptr<const Tokenizer> tok, size_t n_rows)
    : vocab_(vocab), owned_(std::move(tok)), tok_(owned_.get()), n_rows_(n_rows) {}

WordLookup::WordLookup(const Vocabulary* vocab, const Tokenizer* tok, size_t n_rows)
    : vocab_(vocab), tok_(tok), n_rows_(n_rows) {}

std::vector<TokenId> WordLookup::in_running_text(std::string_view word) const {
  // The word after "a ": what running text gives it, whatever the tokenizer's word-start
  // convention ("Ġ" from the space, "▁" prepended by a Metaspace, nothing for WordPiece).
  // Special tokens written in the word stay plain text.
  const EncodeOptions plain{.split_special_tokens = true};
  std::vector<TokenId> lead = tok_->encode_ids("a", plain);
  std::vector<TokenId> all = tok_->encode_ids("a " + std::string(word), plain);
  if (all.size() > lead.size() && std::equal(lead.begin(), lead.end(), all.begin()))
    return {all.begin() + std::ptrdiff_t(lead.size()), all.end()};
  return tok_->encode_ids(" " + std::string(word), plain);  // "a" merged with the word
}

WordLookup::WordLookup(const Model& m)
    : WordLookup(&m.emb.vocab, choose_tokenizer(m, "auto").tokenizer,
                 m.n_search_rows ? m.n_search_rows : m.emb.table.n_rows()) {}

std::optional<ResolvedWord> WordLookup::resolve(std::string_view q) const {
  if (q.empty()) throw Error(ErrorCode::kInvalidArgument, "empty query word");
  ResolvedWord r;
  r.query = std::string(q);
  auto finish = [&](std::string how) {
    r.how = std::move(how);
    for (TokenId id : r.ids) {
      if (id < 0 || size_t(id) >= n_rows_)
        throw Error(ErrorCode::kOutOfRange, "'" + r.query + "' maps to row " + std::to_string(id) +
                                                ", beyond the " + std::to_string(n_rows_) +
                                                " searchable rows");
      r.pieces.push_back(display(id));
      r.exclude.push_back(id);
    }
    std::sort(r.exclude.begin(), r.exclude.end());
    r.exclude.erase(std::unique(r.exclude.begin(), r.exclude.end()), r.exclude.end());
    return std::optional<ResolvedWord>(std::move(r));
  };
  if (q.size() > 1 && q[0] == '#') {
    int64_t id = -1;
    auto [p, ec] = std::from_chars(q.data() + 1, q.data() + q.size(), id);
    if (ec != std::errc() || p != q.data() + q.size() || id < 0)
      throw Error(ErrorCode::kInvalidArgument,
                  "'" + std::string(q) + "': expected '#' followed by a row id (digits)");
    if (size_t(id) >= n_rows_)
      throw Error(ErrorCode::kOutOfRange, "row id " + std::to_string(id) + " is out of range (" +
                                              std::to_string(n_rows_) + " rows)");
    r.ids = {TokenId(id)};
    return finish("id");
  }
  if (tok_) {
    auto add_variants = [&](std::string_view w) {
      for (const WordVariant& v : word_variants(*tok_, w))
        if (v.single_token() && v.ids[0] >= 0 && size_t(v.ids[0]) < n_rows_)
          r.exclude.push_back(v.ids[0]);
    };
    // "monday" is no GPT-2 token but " Monday" is: a single token of the word with its first
    // letter's case flipped beats averaging the pieces of " monday" (tokenizer's default_variant).
    auto case_variant = [&]() -> bool {
      auto vars = word_variants(*tok_, q);
      const WordVariant& v = vars[default_variant(vars)];
      if (!v.single_token() || v.ids[0] < 0 || size_t(v.ids[0]) >= n_rows_) return false;
      r.ids = v.ids;
      return true;
    };
    if (const BpeTokenizer* bpe = tok_->bpe()) {
      // GPT-2 family: the vocabulary holds raw bytes, so " computer" is looked up directly.
      if (q[0] == ' ') {
        if (auto id = bpe->token_id(q)) {
          r.ids = {*id};
          add_variants(q.substr(1));
          return finish("token");
        }
      }
      add_variants(q);
      if (auto id = bpe->token_id(" " + std::string(q))) {
        r.ids = {*id};
        return finish("token");
      }
      if (auto id = bpe->token_id(q)) {
        r.ids = {*id};
        return finish("bare-token");
      }
      if (case_variant()) return finish("case-variant");
      r.ids = bpe->encode(" " + std::string(q));
      if (r.ids.empty()) return std::nullopt;
      return finish("pieces");
    }
    // Other tokenizers spell word starts their own way (Llama-2's "▁computer", BERT's bare
    // "computer"), so the rows are found by encoding: the word as running text first.
    while (!q.empty() && q.front() == ' ') q.remove_prefix(1);
    if (q.empty()) throw Error(ErrorCode::kInvalidArgument, "empty query word");
    add_variants(q);
    std::vector<TokenId> running = in_running_text(q);
    if (running.size() == 1) {
      r.ids = std::move(running);
      return finish("token");
    }
    if (auto bare = tok_->encode_ids(q, {.split_special_tokens = true}); bare.size() == 1) {
      r.ids = std::move(bare);
      return finish("bare-token");
    }
    if (case_variant()) return finish("case-variant");
    r.ids = std::move(running);
    if (r.ids.empty()) return std::nullopt;
    return finish("pieces");
  }
  if (!vocab_ || vocab_->empty()) return std::nullopt;
  auto add = [&](const std::string& w) {
    if (auto id = vocab_->find(w); id && size_t(*id) < n_rows_) r.exclude.push_back(*id);
  };
  add(std::string(q));
  add(ascii_lower(q));
  add(capitalised(q));
  if (auto id = vocab_->find(q); id && size_t(*id) < n_rows_) {
    r.ids = {*id};
    return finish("word");
  }
  if (auto id = vocab_->find(ascii_lower(q)); id && size_t(*id) < n_rows_) {
    r.ids = {*id};
    return finish("lowercase");
  }
  // Token vocabularies without a tokenizer: the space-prefixed token running text uses.
  if (auto id = vocab_->find(" " + std::string(q)); id && size_t(*id) < n_rows_) {
    r.ids = {*id};
    return finish("token");
  }
  return std::nullopt;
}

std::string WordLookup::display(TokenId id) const {
  if (id >= 0) {
    if (tok_ && size_t(id) < tok_->vocab_size()) return tok_->display(id);
    if (vocab_ && size_t(id) < vocab_->size()) return vocab_->token(id);
  }
  return "#" + std::to_string(id);
}

std::string WordLookup::raw_token(TokenId id) const {
  if (id >= 0) {
    if (tok_ && size_t(id) < tok_->vocab_size()) return tok_->token_bytes(id);
    if (vocab_ && size_t(id) < vocab_->size()) return vocab_->token(id);
  }
  return "";
}

bool WordLookup::is_special(TokenId id) const {
  return tok_ && id >= 0 && size_t(id) < tok_->vocab_size() && tok_->is_special(id);
}

}  // namespace embedscope
