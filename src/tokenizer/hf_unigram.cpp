// tokenizer.json Unigram model (tokenizers/src/models/unigram/model.rs, 0.22: encode_optimized
// and tokenize), as T5, ALBERT and XLNet files declare it:
//   {"type": "Unigram", "unk_id": 2, "vocab": [["<pad>", 0.0], ["▁the", -3.1], ...],
//    "byte_fallback": false}
// An id is the position in `vocab`; a score is the piece's log-probability.
//
// Encoding one pre-token is a Viterbi search over its characters: at each character start, every
// vocabulary piece that begins there extends the best path ending at that start (score = sum of
// the pieces' scores; a candidate replaces the node only when strictly better, and pieces are
// tried shortest first, so ties keep the shorter piece); a character no one-character piece
// covers gets the unknown token with score min(scores) - 10. The best path is read back from
// the end; runs of consecutive unknowns are fused into one string, which becomes the unknown
// id, or with byte_fallback the <0xXX> ids of its bytes when all 256 byte pieces it needs
// exist (each byte token spans the whole run's offsets, as in HF).
#include <cmath>
#include <limits>
#include <unordered_set>

#include "embedscope/core/error.h"
#include "tokenizer/hf_impl.h"

namespace embedscope::hf {

namespace {

constexpr size_t kMaxPieceBytes = 1024;  // longer pieces are taken for a corrupt file
constexpr double kUnkPenalty = 10.0;

class Unigram final : public Model {
 public:
  Unigram(const Ctx& c, const json& j, Vocab& vocab) {
    scores_ = read_scored_vocab(c, j, "Unigram", vocab, ids_);
    double min_score = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < vocab.tokens.size(); ++i) {
      const std::string& piece = vocab.tokens[i];
      max_piece_ = std::max(max_piece_, piece.size());
      for (size_t k = 1; k < piece.size(); ++k) prefixes_.emplace(piece.substr(0, k));
      min_score = std::min(min_score, scores_[i]);
    }
    unk_score_ = min_score - kUnkPenalty;
    const json* unk = j.contains("unk_id") ? &j["unk_id"] : nullptr;
    if (!unk || unk->is_null())
      c.unsupported("model.unk_id", unk ? *unk : json(nullptr),
                    "an id (HF fails to encode a character no piece covers without one)");
    if (!unk->is_number_integer() || unk->get<int64_t>() < 0 ||
        uint64_t(unk->get<int64_t>()) >= vocab.tokens.size())
      c.corrupt("model.unk_id",
                unk->dump() + " is not an id in [0, " + std::to_string(vocab.tokens.size()) + ")");
    unk_id_ = TokenId(unk->get<int64_t>());
    byte_fallback_ = c.flag(j, "model", "byte_fallback", false);
  }

  std::string name() const override { return "Unigram"; }

  void tokenize(const Piece& p, std::vector<TokenId>& ids,
                std::vector<TokenSpan>& offsets) const override {
    const std::string& s = p.s;
    const size_t n = s.size();
    if (n == 0) return;
    struct Node {
      double score = 0;
      size_t start = kNone;
      TokenId id = 0;
    };
    std::vector<Node> best(n + 1);
    for (size_t at = 0; at < n;) {
      const double here = best[at].score;
      const size_t mblen = char_len(s, at);
      bool single = false;
      auto offer = [&](size_t end, TokenId id, double score) {
        Node& t = best[end];
        if (t.start == kNone || score + here > t.score) t = {score + here, at, id};
      };
      // Pieces starting at `at`, shortest first (HF's trie prefix search order).
      for (size_t len = 1; len <= max_piece_ && at + len <= n; ++len) {
        std::string_view sub(s.data() + at, len);
        if (auto it = ids_.find(sub); it != ids_.end()) {
          offer(at + len, it->second, scores_[size_t(it->second)]);
          single = single || len == mblen;
        }
        if (!prefixes_.contains(sub)) break;
      }
      if (!single) offer(at + mblen, unk_id_, unk_score_);
      at += mblen;
    }
    // Back from the end: [start, end) byte ranges, unknown runs fused.
    std::vector<std::pair<size_t, size_t>> path;
    size_t unk_end = kNone;
    for (size_t end = n; end > 0;) {
      const Node& node = best[end];
      if (node.id == unk_id_) {
        if (unk_end == kNone) unk_end = end;
      } else {
        if (unk_end != kNone) path.emplace_back(end, unk_end);
        unk_end = kNone;
        path.emplace_back(node.start, end);
      }
      end = node.start;
    }
    if (unk_end != kNone) path.emplace_back(0, unk_end);
    for (size_t k = path.size(); k-- > 0;) {
      const auto [b, e] = path[k];
      const TokenSpan span{p.a[b], p.b[e - 1]};
      std::string_view str(s.data() + b, e - b);
      if (auto it = ids_.find(str); it != ids_.end()) {
        ids.push_back(it->second);
        offsets.push_back(span);
        continue;
      }
      if (byte_fallback_ && push_bytes(str, span, ids, offsets)) continue;
      ids.push_back(unk_id_);
      offsets.push_back(span);
    }
  }

 private:
  static constexpr size_t kNone = std::numeric_limits<size_t>::max();

  // Length of the UTF-8 character at s[i] (the input is valid UTF-8 by the time it gets here).
  static size_t char_len(const std::string& s, size_t i) {
    const unsigned char b = static_cast<unsigned char>(s[i]);
    const size_t n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    return std::min(n, s.size() - i);
  }

  // <0xXX> for every byte, or nothing (false) when one of them is not a piece.
  bool push_bytes(std::string_view str, TokenSpan span, std::vector<TokenId>& ids,
                  std::vector<TokenSpan>& offsets) const {
    std::vector<TokenId> bytes;
    for (unsigned char ch : str) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", ch);
      auto it = ids_.find(std::string_view(name));
      if (it == ids_.end()) return false;
      bytes.push_back(it->second);
    }
    ids.insert(ids.end(), bytes.begin(), bytes.end());
    offsets.insert(offsets.end(), bytes.size(), span);
    return true;
  }

  TokenMap ids_;
  std::unordered_set<std::string, StrHash, std::equal_to<>> prefixes_;  // proper prefixes
  std::vector<double> scores_;
  double unk_score_ = 0;
  TokenId unk_id_ = 0;
  size_t max_piece_ = 0;
  bool byte_fallback_ = false;
};

}  // namespace

std::vector<double> read_scored_vocab(const Ctx& c, const json& j, const char* model, Vocab& vocab,
                                      TokenMap& ids) {
  const json& v = c.get(j, "model", "vocab");
  if (!v.is_array())
    c.corrupt("model.vocab", "is " + std::string(v.type_name()) +
                                 ", expected an array of [piece, score] (" + model + ")");
  if (v.empty()) c.corrupt("model.vocab", "is empty");
  if (v.size() > kMaxVocab)
    c.corrupt("model.vocab", "has " + std::to_string(v.size()) + " entries, more than the limit " +
                                 std::to_string(kMaxVocab));
  vocab.tokens.assign(v.size(), "");
  vocab.present.assign(v.size(), 1);
  std::vector<double> scores;
  scores.reserve(v.size());
  ids.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const json& e = v[i];
    const std::string path = "model.vocab[" + std::to_string(i) + "]";
    if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number())
      c.corrupt(path, e.dump().substr(0, 80) + " is not [piece, score]");
    std::string piece = e[0].get<std::string>();
    const double score = e[1].get<double>();
    if (!std::isfinite(score)) c.corrupt(path, "score " + e[1].dump() + " is not finite");
    if (piece.empty()) c.corrupt(path, "piece is empty");
    if (piece.size() > kMaxPieceBytes)
      c.corrupt(path, "piece has " + std::to_string(piece.size()) + " bytes, more than " +
                          std::to_string(kMaxPieceBytes));
    if (auto d = ids.find(piece); d != ids.end())
      c.corrupt(path,
                json(piece).dump() + " repeats model.vocab[" + std::to_string(d->second) + "]");
    ids.emplace(piece, TokenId(i));
    vocab.tokens[i] = std::move(piece);
    scores.push_back(score);
  }
  return scores;
}

std::unique_ptr<Model> make_unigram(const Ctx& c, const json& j, Vocab& vocab) {
  return std::make_unique<Unigram>(c, j, vocab);
}

}  // namespace embedscope::hf
