// SentencePiece BPE (sentencepiece/src/bpe_model.cc, llama.cpp's llm_tokenizer_spm): the model of
// BPE-type .model files (Llama-2, Mistral) and of GGUF "llama" vocabularies, which carry pieces
// and scores but no merge list. Internal model type "SentencePieceBPE" (never accepted from a
// tokenizer.json file; spm_model.cpp and gguf_vocab.cpp build it):
//   {"type": "SentencePieceBPE", "vocab": [["<unk>", 0.0], ["▁t", -1.0], ...],
//    "types": [2, 1, ...], "unk_id": 0, "byte_fallback": true}
// An id is the position in `vocab`; `types` are SentencePiece's piece types (1 NORMAL, 2 UNKNOWN,
// 3 CONTROL, 4 USER_DEFINED, 5 UNUSED, 6 BYTE; all NORMAL when absent).
//
// Encoding one pre-token: start from its characters; repeatedly merge the adjacent pair whose
// concatenation is a NORMAL / USER_DEFINED / UNUSED piece with the highest score (the leftmost
// pair on equal scores); stop when no pair is a piece. A remaining symbol that is not a piece
// becomes its bytes' <0xXX> pieces with byte_fallback (each spanning the symbol), else the unknown
// id (consecutive unknowns fused into one, as SentencePiece reports them).
#include <array>
#include <cmath>
#include <queue>

#include "embedscope/core/error.h"
#include "tokenizer/hf_impl.h"

namespace embedscope::hf {

namespace {

class SpmBpe final : public Model {
 public:
  SpmBpe(const Ctx& c, const json& j, Vocab& vocab) {
    const std::vector<double> scores = read_scored_vocab(c, j, "SentencePieceBPE", vocab, ids_);
    const size_t n = scores.size();
    std::vector<int64_t> types(n, 1);
    if (auto t = j.find("types"); t != j.end() && !t->is_null()) {
      if (!t->is_array() || t->size() != n)
        c.corrupt("model.types", "is not an array of " + std::to_string(n) + " types");
      for (size_t i = 0; i < n; ++i) {
        const json& e = (*t)[i];
        if (!e.is_number_integer() || e.get<int64_t>() < 1 || e.get<int64_t>() > 6)
          c.corrupt("model.types[" + std::to_string(i) + "]",
                    e.dump() + " is not a piece type (1..6)");
        types[i] = e.get<int64_t>();
      }
    }
    scores_.assign(scores.begin(), scores.end());
    mergeable_.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const int64_t type = types[i];
      mergeable_[i] = type == 1 || type == 4 || type == 5;
      if (type == 6) {
        const int byte = byte_piece(vocab.tokens[i]);
        if (byte < 0)
          c.corrupt("model.vocab[" + std::to_string(i) + "]",
                    json(vocab.tokens[i]).dump() + " has type BYTE (6) but is not <0xXX>");
        byte_ids_[size_t(byte)] = TokenId(i);
      }
    }
    // Files without types (tokenizer.json-style) still fall back to <0xXX> pieces.
    for (size_t b = 0; b < 256; ++b) {
      if (byte_ids_[b] >= 0) continue;
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", unsigned(b));
      if (auto it = ids_.find(std::string_view(name)); it != ids_.end()) byte_ids_[b] = it->second;
    }
    const json* unk = j.contains("unk_id") ? &j["unk_id"] : nullptr;
    if (!unk || !unk->is_number_integer() || unk->get<int64_t>() < 0 ||
        uint64_t(unk->get<int64_t>()) >= n)
      c.corrupt("model.unk_id", (unk ? unk->dump() : std::string("nothing")) +
                                    " is not an id in [0, " + std::to_string(n) + ")");
    unk_id_ = TokenId(unk->get<int64_t>());
    byte_fallback_ = c.flag(j, "model", "byte_fallback", false);
  }

  std::string name() const override { return "SentencePiece BPE"; }

  void tokenize(const Piece& p, std::vector<TokenId>& ids,
                std::vector<TokenSpan>& offsets) const override {
    const std::string& s = p.s;
    if (s.empty()) return;
    // Symbols are byte ranges [b, e) linked in a list; a merged-away symbol has e == b.
    struct Sym {
      size_t b, e;
      int prev, next;
    };
    std::vector<Sym> sym;
    for (size_t i = 0; i < s.size();) {
      const size_t n = char_len(s, i);
      sym.push_back({i, i + n, int(sym.size()) - 1, int(sym.size()) + 1});
      i += n;
    }
    sym.back().next = -1;
    struct Pair {
      float score;
      int left, right;
      size_t size;
    };
    auto worse = [](const Pair& x, const Pair& y) {
      return x.score < y.score || (x.score == y.score && x.left > y.left);
    };
    std::priority_queue<Pair, std::vector<Pair>, decltype(worse)> agenda(worse);
    auto try_pair = [&](int l, int r) {
      if (l < 0 || r < 0) return;
      std::string_view t(s.data() + sym[size_t(l)].b, sym[size_t(r)].e - sym[size_t(l)].b);
      auto it = ids_.find(t);
      if (it == ids_.end() || !mergeable_[size_t(it->second)]) return;
      agenda.push({scores_[size_t(it->second)], l, r, t.size()});
    };
    for (size_t i = 1; i < sym.size(); ++i) try_pair(int(i - 1), int(i));
    while (!agenda.empty()) {
      const Pair top = agenda.top();
      agenda.pop();
      Sym& l = sym[size_t(top.left)];
      Sym& r = sym[size_t(top.right)];
      // Stale: one side was merged since (its size changed or it is gone).
      if (l.e == l.b || r.e == r.b || r.e - l.b != top.size || l.next != top.right) continue;
      l.e = r.e;
      r.e = r.b;
      l.next = r.next;
      if (r.next >= 0) sym[size_t(r.next)].prev = top.left;
      try_pair(l.prev, top.left);
      try_pair(top.left, l.next);
    }
    bool prev_unk = false;
    for (int i = 0; i >= 0; i = sym[size_t(i)].next) {
      const Sym& x = sym[size_t(i)];
      std::string_view t(s.data() + x.b, x.e - x.b);
      const TokenSpan span{p.a[x.b], p.b[x.e - 1]};
      auto it = ids_.find(t);
      if (it != ids_.end() && mergeable_[size_t(it->second)]) {
        ids.push_back(it->second);
        offsets.push_back(span);
        prev_unk = false;
        continue;
      }
      if (byte_fallback_ && push_bytes(t, span, ids, offsets)) {
        prev_unk = false;
        continue;
      }
      if (prev_unk) {
        offsets.back().end = span.end;  // fused with the previous unknown
        continue;
      }
      ids.push_back(unk_id_);
      offsets.push_back(span);
      prev_unk = true;
    }
  }

 private:
  static size_t char_len(const std::string& s, size_t i) {
    const unsigned char b = static_cast<unsigned char>(s[i]);
    const size_t n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    return std::min(n, s.size() - i);
  }

  // The byte of a "<0xXX>" piece (two uppercase hex digits, as SentencePiece writes them), or -1.
  static int byte_piece(std::string_view s) {
    if (s.size() != 6 || s.substr(0, 3) != "<0x" || s[5] != '>') return -1;
    int v = 0;
    for (size_t k = 3; k < 5; ++k) {
      const char h = s[k];
      const int d = h >= '0' && h <= '9' ? h - '0' : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
      if (d < 0) return -1;
      v = v * 16 + d;
    }
    return v;
  }

  bool push_bytes(std::string_view str, TokenSpan span, std::vector<TokenId>& ids,
                  std::vector<TokenSpan>& offsets) const {
    for (unsigned char ch : str)
      if (byte_ids_[ch] < 0) return false;
    for (unsigned char ch : str) {
      ids.push_back(byte_ids_[ch]);
      offsets.push_back(span);
    }
    return true;
  }

  TokenMap ids_;
  std::vector<float> scores_;
  std::vector<uint8_t> mergeable_;
  std::array<TokenId, 256> byte_ids_ = make_no_bytes();
  TokenId unk_id_ = 0;
  bool byte_fallback_ = false;

  static std::array<TokenId, 256> make_no_bytes() {
    std::array<TokenId, 256> a{};
    a.fill(-1);
    return a;
  }
};

}  // namespace

std::unique_ptr<Model> make_spm_bpe(const Ctx& c, const json& j, Vocab& vocab) {
  return std::make_unique<SpmBpe>(c, j, vocab);
}

}  // namespace embedscope::hf
