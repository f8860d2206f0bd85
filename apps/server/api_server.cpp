#include "api_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <mutex>

#include "embedscope/api/analogy.h"
#include "embedscope/api/compare.h"
#include "embedscope/api/explore.h"
#include "embedscope/api/hnsw.h"
#include "embedscope/api/neighbors.h"
#include "embedscope/api/stats.h"
#include "embedscope/api/text.h"
#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"
#include "metrics.h"
#include "projection_route.h"
#include "request_fields.h"
#include "web_routes.h"

namespace embedscope::server {

using json = nlohmann::json;

bool secure_equal(const std::string& a, const std::string& b) {
  size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? (unsigned char)a[i] : 0;
    unsigned char y = i < b.size() ? (unsigned char)b[i] : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  in_addr a4{};
  if (::inet_pton(AF_INET, host.c_str(), &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  in6_addr a6{};
  return ::inet_pton(AF_INET6, host.c_str(), &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

size_t json_depth(std::string_view s, size_t limit) {
  size_t d = 0, max = 0;
  bool in_str = false, esc = false;
  for (char c : s) {
    if (in_str) {
      if (esc)
        esc = false;
      else if (c == '\\')
        esc = true;
      else if (c == '"')
        in_str = false;
    } else if (c == '"') {
      in_str = true;
    } else if (c == '[' || c == '{') {
      max = std::max(max, ++d);
      if (max > limit) return max;
    } else if ((c == ']' || c == '}') && d > 0) {
      --d;
    }
  }
  return max;
}

namespace {

using Clock = std::chrono::steady_clock;

// Rows per GET /v1/vocab answer (the page asks for a 50,257-row vocabulary in one request).
constexpr size_t kVocabMax = 1 << 20;

}  // namespace

static ServerOptions with_body_limit(ServerOptions o) {
  o.front.max_body_bytes = o.payload_max + (64 << 10);  // + room for chunk framing
  return o;
}

// One served model: its name in requests and its own micro-batcher.
struct Served {
  std::string name;
  ModelHandlePtr h;
  std::unique_ptr<NeighborsBatcher> batcher;
  std::shared_ptr<const HnswIndex> index;  // mode "hnsw" (serve --index), else null
  std::unique_ptr<std::mutex> index_mu = std::make_unique<std::mutex>();  // one search at a time
};

struct ApiServer::Impl {
  ServerOptions o;
  HttpFront front;
  std::vector<Served> models;  // models[0] answers requests that name none
  Metrics metrics;

  Impl(std::vector<NamedModel> named, ServerOptions opts)
      : o(with_body_limit(std::move(opts))), front(o.front) {
    if (named.empty()) throw Error(ErrorCode::kInvalidArgument, "serve: no model to serve");
    for (NamedModel& n : named) {
      if (n.name.empty()) n.name = n.handle->name();
      for (const Served& m : models)
        if (m.name == n.name)
          throw Error(ErrorCode::kInvalidArgument, "serve: two models named '" + n.name + "'");
      auto b =
          std::make_unique<NeighborsBatcher>(n.handle, o.micro_batch_max, o.micro_batch_wait_us);
      models.push_back({std::move(n.name), std::move(n.handle), std::move(b), std::move(n.index)});
    }
  }

  size_t k_limit(const ModelHandlePtr& h) const { return std::min(o.max_k, h->n_search_rows()); }

  std::string model_names() const {
    std::string names;
    for (const Served& m : models) names += (names.empty() ? "'" : ", '") + m.name + "'";
    return names;
  }

  // The model a request names (by its served name, its file path, or "default" for the embedded
  // default model); models[0] when it names none. 404 naming the served models otherwise.
  const Served& pick(const std::string* name) const {
    if (!name) return models[0];
    for (const Served& m : models)
      if (*name == m.name || *name == m.h->model().path ||
          (m.h->is_default() && *name == "default"))
        return m;
    throw HttpError{404, "invalid_request_error", "model_not_found",
                    "model '" + name->substr(0, 200) +
                        "' is not served here (GET /v1/models lists " + model_names() + ")"};
  }
  const Served& pick(const json& j) const {
    if (!j.contains("model") || j["model"].is_null()) return models[0];
    const json& m = j["model"];
    if (!m.is_string()) bad_field("model", "a string", m);
    return pick(&m.get_ref<const std::string&>());
  }
  const Served& pick(const httplib::Request& req) const {
    if (!req.has_param("model")) return models[0];
    std::string name = req.get_param_value("model");
    return pick(&name);
  }

  // ---- plumbing ----
  static void send_json(httplib::Response& res, int status, const json& j) {
    res.status = status;
    res.set_content(api::dump_json(j, -1), "application/json");
  }
  static void send_error(httplib::Response& res, const HttpError& e) {
    send_json(res, e.status, error_body(e.type, e.code, e.message));
  }

  json parse_body(const httplib::Request& req) const {
    std::string ct = req.get_header_value("Content-Type");
    if (ct.rfind("application/json", 0) != 0)
      throw HttpError{400, "invalid_request_error", "invalid_content_type",
                      "Content-Type must be application/json, got '" + ct.substr(0, 80) + "'"};
    if (size_t d = json_depth(req.body, o.max_json_depth); d > o.max_json_depth)
      throw HttpError{
          400, "invalid_request_error", "nesting_too_deep",
          "JSON nesting too deep: more than " + std::to_string(o.max_json_depth) + " levels"};
    json j;
    try {
      j = json::parse(req.body);
    } catch (const json::exception& e) {
      throw HttpError{400, "invalid_request_error", "invalid_json",
                      std::string("malformed JSON: ") + e.what()};
    }
    if (!j.is_object())
      throw HttpError{400, "invalid_request_error", "invalid_json",
                      std::string("the body must be a JSON object, got ") + j.type_name()};
    return j;
  }

  // GET /v1/projection[/status] (projection_route.h); model= optional, as in the JSON bodies.
  void projection(const httplib::Request& req, httplib::Response& res, bool status_only) {
    if (req.get_param_value_count("model") > 1)
      throw HttpError{400, "invalid_request_error", "invalid_field",
                      "parameter 'model': expected one value"};
    answer_projection(*pick(req).h, req, res, status_only);
  }

  // Runs a route body with every failure turned into a JSON error.
  template <class F>
  void guarded(httplib::Response& res, F&& fn) {
    try {
      fn();
    } catch (const HttpError& e) {
      send_error(res, e);
    } catch (const Error& e) {
      send_error(res, from_library(e));
    } catch (const std::bad_alloc&) {
      send_error(
          res, {500, "server_error", "out_of_memory", "out of memory while answering the request"});
    } catch (const std::exception& e) {
      send_error(res,
                 {500, "server_error", "internal", std::string("internal error: ") + e.what()});
    } catch (...) {
      send_error(res, {500, "server_error", "internal", "internal error (unknown exception)"});
    }
  }

  using Route = void (Impl::*)(const ModelHandlePtr&, const json&, httplib::Response&);
  void post(const char* path, Route fn) {
    front.Post(path, [this, fn](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] {
        json j = parse_body(req);
        (this->*fn)(pick(j).h, j, res);
      });
    });
  }

  // ---- routes ----
  api::NeighborQuery query_of(const ModelHandlePtr& h, const json& v,
                              const std::string& field) const {
    if (v.is_string()) {
      const std::string& s = v.get_ref<const std::string&>();
      if (s.empty()) bad_field(field, "a non-empty word", v);
      if (s.size() > o.max_query_bytes)
        bad_field(field, "a word of at most " + std::to_string(o.max_query_bytes) + " bytes",
                  json("(" + std::to_string(s.size()) + " bytes)"));
      return api::NeighborQuery::word(s);
    }
    if (v.is_number_integer()) {
      if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))
        bad_field(field, "a row id", v);
      return api::NeighborQuery::row(v.get<int64_t>());
    }
    if (v.is_array()) {
      std::vector<float> vec;
      vec.reserve(v.size());
      for (size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_number()) bad_field(field + "[" + std::to_string(i) + "]", "a number", v[i]);
        double x = v[i].get<double>();
        if (!std::isfinite(float(x)))
          bad_field(field + "[" + std::to_string(i) + "]", "a finite float", v[i]);
        vec.push_back(float(x));
      }
      if (vec.size() != h->table().dim())
        bad_field(field, "a vector of " + std::to_string(h->table().dim()) + " numbers",
                  json("(" + std::to_string(vec.size()) + " numbers)"));
      return api::NeighborQuery::vec(std::move(vec));
    }
    if (v.is_object() && v.contains("expr")) {
      const json& e = v["expr"];
      if (!e.is_string() || e.get_ref<const std::string&>().empty() ||
          e.get_ref<const std::string&>().size() > o.max_query_bytes)
        bad_field(field + ".expr", "an expression string such as \"king - man + woman\"", e);
      return api::NeighborQuery::expr(e.get<std::string>());
    }
    bad_field(field, "a word, a row id, a vector, {\"expr\": ...} or a list of these", v);
  }

  void neighbors(const Served& m, const json& j, httplib::Response& res, bool& announced) {
    const ModelHandlePtr& h = m.h;
    Body b{j};
    api::NeighborsRequest r;
    r.k = size_t(b.integer("k", 10, 1, int64_t(k_limit(h))));
    r.metric = b.choice("metric", {"cosine", "dot", "l2"}, "cosine");
    r.mode = b.choice("mode", {"exact", "fast", "hnsw"}, "exact");
    r.include_query = b.boolean("include_query", false);
    r.center = b.boolean("center", false);
    const size_t ef = size_t(b.integer("ef", 64, 1, 100000));
    if (r.mode == "hnsw" && !m.index)
      bad_field("mode",
                "exact or fast: no HNSW index is loaded for this model (start the server "
                "with --index FILE from `embedscope index build`)",
                json("hnsw"));
    if (r.mode == "hnsw" && r.metric != "cosine")
      bad_field("metric", "cosine (an HNSW index searches by cosine)", json(r.metric));
    if (b.has("filters")) {
      const json& f = j["filters"];
      if (!f.is_object()) bad_field("filters", "an object {ids, top_n, min_count, class}", f);
      Body fb{f};
      for (auto it = f.begin(); it != f.end(); ++it)
        if (it.key() != "ids" && it.key() != "top_n" && it.key() != "min_count" &&
            it.key() != "class")
          bad_field("filters." + it.key(),
                    "one of ids, top_n, min_count, class (regex and word files are "
                    "not accepted over HTTP)",
                    it.value());
      if (fb.has("ids")) {
        for (int64_t id : id_list(f["ids"], "filters.ids")) {
          if (id < 0 || uint64_t(id) >= h->table().n_rows())
            bad_field("filters.ids", "row ids below " + std::to_string(h->table().n_rows()), id);
          r.filter.ids.push_back(TokenId(id));
        }
      }
      r.filter.top_n = size_t(fb.integer("top_n", 0, 0, int64_t(h->table().n_rows())));
      r.filter.min_count = uint64_t(fb.integer("min_count", 0, 0, INT64_MAX));
      if (fb.has("class"))
        r.filter.token_class =
            parse_token_class(fb.choice("class", {"any", "word", "alpha", "no-special"}, "any"));
    }
    const json& q = b.at("query");
    bool is_batch = q.is_array() && !q.empty() &&
                    !std::all_of(q.begin(), q.end(), [](const json& x) { return x.is_number(); });
    if (r.mode == "hnsw") {
      if (is_batch)
        bad_field("query", "one query (mode hnsw answers one at a time)", json("(a list)"));
      api::HnswRequest hr{.query = query_of(m.h, q, "query"),
                          .k = r.k,
                          .ef = ef,
                          .include_query = r.include_query,
                          .center = r.center,
                          .filter = r.filter};
      announced = false;
      m.batcher->withdraw();
      std::lock_guard<std::mutex> lock(*m.index_mu);
      send_json(res, 200, api::to_json(*h, api::neighbors_hnsw(*h, *m.index, hr)));
      return;
    }
    if (!is_batch) {
      r.queries.push_back(query_of(m.h, q, "query"));
      announced = false;  // submit() withdraws the announcement
      send_json(res, 200, api::to_json(*h, m.batcher->submit(std::move(r))));
      return;
    }
    if (q.size() > o.max_batch)
      bad_field("query", "at most " + std::to_string(o.max_batch) + " queries",
                json("(" + std::to_string(q.size()) + " queries)"));
    for (size_t i = 0; i < q.size(); ++i)
      r.queries.push_back(query_of(m.h, q[i], "query[" + std::to_string(i) + "]"));
    r.force_batch = true;
    announced = false;
    m.batcher->withdraw();
    api::NeighborsResult out = api::neighbors(*h, r);
    send_json(res, 200, api::to_json(*h, out));
  }

  void explore(const ModelHandlePtr& h, const json& j, httplib::Response& res) {
    Body b{j};
    api::ExploreRequest r;
    r.word = b.string("query", o.max_query_bytes);
    if (r.word.empty()) bad_field("query", "a non-empty word", j["query"]);
    r.k = size_t(b.integer("k", 10, 1, int64_t(std::min<size_t>(k_limit(h), 100))));
    r.seed = uint64_t(b.integer("seed", 42, 0, INT64_MAX));
    r.all_tokens = b.boolean("all_tokens", false);
    ExploreResult out = api::explore(*h, r);
    send_json(res, 200, api::to_json(*h, out));
  }

  void analogy(const ModelHandlePtr& h, const json& j, httplib::Response& res) {
    Body b{j};
    api::AnalogyRequest r;
    r.a = b.string("a", o.max_query_bytes);
    r.b = b.string("b", o.max_query_bytes);
    r.c = b.string("c", o.max_query_bytes);
    r.k = size_t(b.integer("k", 10, 1, int64_t(k_limit(h))));
    r.method = b.choice("method", {"3cosadd", "3cosmul"}, "3cosadd");
    r.mode = b.choice("mode", {"exact", "fast"}, "exact");
    r.include_query = b.boolean("include_query", false);
    send_json(res, 200, api::to_json(*h, api::analogy(*h, r)));
  }

  void tokenize(const ModelHandlePtr& h, const json& j, httplib::Response& res) {
    Body b{j};
    const char* f = b.has("text") ? "text" : "input";
    std::string text = b.string(f, o.payload_max);
    send_json(res, 200, api::to_json(api::tokenize(*h, text, b.boolean("allow_special", false))));
  }

  void decode(const ModelHandlePtr& h, const json& j, httplib::Response& res) {
    Body b{j};
    std::vector<int64_t> ids = id_list(b.at("ids"), "ids");
    send_json(res, 200, api::to_json(api::decode(*h, ids)));
  }

  api::EmbedRequest embed_request(const json& in, const std::string& field) const {
    api::EmbedRequest r;
    if (in.is_string()) {
      r.texts.push_back(in.get<std::string>());
    } else if (in.is_array() && !in.empty() && in[0].is_number_integer()) {
      r.id_lists.push_back(id_list(in, field));
    } else if (in.is_array() && !in.empty()) {
      if (in.size() > o.max_batch)
        bad_field(field, "at most " + std::to_string(o.max_batch) + " inputs",
                  json("(" + std::to_string(in.size()) + " inputs)"));
      bool texts = in[0].is_string();
      for (size_t i = 0; i < in.size(); ++i) {
        std::string fi = field + "[" + std::to_string(i) + "]";
        if (texts) {
          if (!in[i].is_string()) bad_field(fi, "a string (like the other inputs)", in[i]);
          r.texts.push_back(in[i].get<std::string>());
        } else {
          r.id_lists.push_back(id_list(in[i], fi));
        }
      }
    } else {
      bad_field(field, "a string, a list of strings or a list of token-id lists", in);
    }
    return r;
  }

  void embeddings(const ModelHandlePtr& h, const json& j, httplib::Response& res) {
    Body b{j};
    api::EmbedRequest r = embed_request(b.at("input"), "input");
    bool b64 = b.choice("encoding_format", {"float", "base64"}, "float") == "base64";
    api::EmbedResult e = api::embed(*h, r);
    json data = json::array();
    for (size_t i = 0; i < e.vectors.size(); ++i) {
      json emb;
      if (b64) {
        emb = base64(e.vectors[i].data(), e.vectors[i].size() * sizeof(float));
      } else {
        emb = json::array();
        for (float x : e.vectors[i]) emb.push_back(api::finite_or_null(x));
      }
      data.push_back({{"object", "embedding"}, {"embedding", std::move(emb)}, {"index", i}});
    }
    send_json(res, 200,
              {{"object", "list"},
               {"data", std::move(data)},
               {"model", h->name()},
               {"usage", {{"prompt_tokens", e.total_tokens}, {"total_tokens", e.total_tokens}}}});
  }

  void similarity(const ModelHandlePtr& h, const json& j, httplib::Response& res) {
    Body b{j};
    const json& in = b.at("inputs");
    if (!in.is_object()) bad_field("inputs", "an object {source_sentence, sentences}", in);
    Body ib{in};
    api::EmbedRequest r;
    r.texts.push_back(ib.string("source_sentence", o.payload_max));
    const json& s = ib.at("sentences");
    if (!s.is_array() || s.empty()) bad_field("inputs.sentences", "a non-empty list of strings", s);
    if (s.size() > o.max_batch)
      bad_field("inputs.sentences", "at most " + std::to_string(o.max_batch) + " sentences",
                json(s.size()));
    for (size_t i = 0; i < s.size(); ++i) {
      if (!s[i].is_string())
        bad_field("inputs.sentences[" + std::to_string(i) + "]", "a string", s[i]);
      r.texts.push_back(s[i].get<std::string>());
    }
    api::EmbedResult e = api::embed(*h, r);
    auto norm = [](const std::vector<float>& v) {
      double n = 0;
      for (float x : v) n += double(x) * x;
      return std::sqrt(n);
    };
    const std::vector<float>& a = e.vectors[0];
    json scores = json::array();
    for (size_t i = 1; i < e.vectors.size(); ++i) {
      double dot = 0;
      for (size_t d = 0; d < a.size(); ++d) dot += double(a[d]) * e.vectors[i][d];
      scores.push_back(api::finite_or_null(dot / (norm(a) * norm(e.vectors[i]))));  // 0/0 -> null
    }
    send_json(res, 200,
              {{"model", h->name()},
               {"metric", "cosine"},
               {"scores", std::move(scores)},
               {"usage", {{"prompt_tokens", e.total_tokens}, {"total_tokens", e.total_tokens}}}});
  }

  // POST /v1/compare {a, b, k?, words?, moved?, seed?}: two served models (api/compare.h).
  void post_compare() {
    front.Post("/v1/compare", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] {
        json j = parse_body(req);
        Body b{j};
        std::string a = b.string("a", 1024), bn = b.string("b", 1024);
        CompareOptions c;
        c.k = size_t(b.integer("k", 10, 1, int64_t(o.max_k)));
        c.n_words = size_t(b.integer("words", 1000, 1, 10000));
        c.n_moved = size_t(b.integer("moved", 20, 0, 1000));
        c.seed = uint64_t(b.integer("seed", 42, 0, INT64_MAX));
        c.n_threads = 0;
        const Served& ma = pick(&a);
        const Served& mb = pick(&bn);
        api::CompareReport r = api::compare(*ma.h, *mb.h, c);
        r.a = ma.name;
        r.b = mb.name;
        send_json(res, 200, api::to_json(r));
      });
    });
  }

  json info(const ModelHandlePtr& h) const {
    const EmbeddingTable& t = h->table();
    return json{{"model", h->name()},
                {"path", h->model().path},
                {"rows", t.n_rows()},
                {"dim", t.dim()},
                {"search_rows", h->n_search_rows()},
                {"tokenizer", h->tokenizer_source()},
                {"threads", process_threads()},
                {"version", "0.1.0"},
                {"limits",
                 {{"payload_bytes", o.payload_max},
                  {"json_depth", o.max_json_depth},
                  {"k", k_limit(h)},
                  {"batch", o.max_batch},
                  {"query_bytes", o.max_query_bytes},
                  {"header_lines", o.front.max_header_lines},
                  {"header_bytes", o.front.max_header_bytes},
                  {"uri_bytes", 8192},
                  {"request_timeout_s", o.front.request_timeout_s},
                  {"read_timeout_s", o.front.read_timeout_s},
                  {"write_timeout_s", o.front.write_timeout_s},
                  {"keep_alive_timeout_s", o.front.keep_alive_timeout_s},
                  {"workers", o.front.workers},
                  {"max_queued", o.front.max_queued},
                  {"micro_batch", o.micro_batch_max},
                  {"micro_batch_wait_us", o.micro_batch_wait_us}}}};
  }

  void install() {
    front.set_payload_max_length(o.payload_max);
    front.set_read_timeout(o.front.read_timeout_s, 0);
    front.set_write_timeout(o.front.write_timeout_s, 0);
    front.set_keep_alive_timeout(o.front.keep_alive_timeout_s);
    front.set_keep_alive_max_count(o.front.keep_alive_max);
    front.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      // Compressed bodies are refused before they are read: httplib would inflate them without
      // a limit (a gzip bomb).
      if (req.has_header("Content-Encoding") &&
          req.get_header_value("Content-Encoding") != "identity") {
        send_error(res,
                   {415, "invalid_request_error", "unsupported_encoding",
                    "Content-Encoding '" + req.get_header_value("Content-Encoding").substr(0, 40) +
                        "' is not accepted; send the body uncompressed"});
        res.set_header("Connection", "close");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (!o.api_key.empty() && req.path != "/health" && !is_page_path(req.path)) {
        std::string a = req.get_header_value("Authorization");
        std::string want = "Bearer " + o.api_key;
        if (!secure_equal(a, want)) {
          res.set_header("WWW-Authenticate", "Bearer");
          send_error(res, {401, "authentication_error", "invalid_api_key",
                           "missing or wrong API key (Authorization: Bearer KEY)"});
          return httplib::Server::HandlerResponse::Handled;
        }
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    front.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;  // our own JSON error
      int s = res.status;
      std::string code = s == 404   ? "not_found"
                         : s == 413 ? "payload_too_large"
                         : s == 414 ? "uri_too_long"
                         : s == 405 ? "method_not_allowed"
                                    : "bad_request";
      std::string msg = s == 404 ? "no route " + req.method + " " + req.path.substr(0, 200) +
                                       " (see docs/http_api.md)"
                        : s == 413 ? "request body too large"
                                   : std::string(status_reason(s));
      send_json(res, s, error_body(s >= 500 ? "server_error" : "invalid_request_error", code, msg));
    });
    front.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
          send_error(res, {500, "server_error", "internal", "internal error"});
        });
    front.on_front_answer = [this](const std::string& remote, int status) {
      metrics.record("other", status, 0);
      if (o.access_log)
        std::fprintf(stderr, "%s %s - - %d 0 (answered by the front)\n", utc_now().c_str(),
                     remote.c_str(), status);
    };
    front.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
      if (request_failed_in_front()) return;  // logged by on_front_answer
      double secs = std::chrono::duration<double>(Clock::now() - request_start()).count();
      metrics.record(req.path, res.status, secs);
      if (!o.access_log) return;
      std::string ts = utc_now();
      std::string path = req.path.substr(0, 200);
      for (char& c : path)
        if ((unsigned char)c < 0x20 || c == 0x7f) c = '?';
      std::fprintf(stderr, "%s %s %s %s %d %zu %.3fms\n", ts.c_str(), req.remote_addr.c_str(),
                   req.method.c_str(), path.c_str(), res.status, res.body.size(), secs * 1e3);
    });
    front.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      send_json(res, 200, {{"status", front.stopping() ? "stopping" : "ok"}});
    });
    front.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      std::vector<const NeighborsBatcher*> nbs;
      for (const Served& m : models) nbs.push_back(m.batcher.get());
      res.set_content(metrics.text(front, nbs), "text/plain; version=0.0.4");
    });
    front.Get("/v1/info", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] { send_json(res, 200, info(pick(req).h)); });
    });
    front.Get("/v1/stats", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] {
        const ModelHandlePtr& h = pick(req).h;
        send_json(res, 200, api::to_json(*h, *api::stats_cached(*h)));
      });
    });
    front.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      guarded(res, [&] {
        json data = json::array();
        for (const Served& m : models)
          data.push_back({{"id", m.name},
                          {"object", "model"},
                          {"owned_by", "embedscope"},
                          {"path", m.h->model().path},
                          {"rows", m.h->table().n_rows()},
                          {"dim", m.h->table().dim()},
                          {"default", &m == &models[0]}});
        send_json(res, 200, {{"object", "list"}, {"data", std::move(data)}});
      });
    });
    // Announced (to the first model's batcher, the usual target) before parsing, so the batcher
    // may wait (bounded) for this request's query; moved once the body names another model.
    front.Post("/v1/neighbors", [this](const httplib::Request& req, httplib::Response& res) {
      NeighborsBatcher* ann = models[0].batcher.get();
      ann->announce();
      bool announced = true;
      guarded(res, [&] {
        json j = parse_body(req);
        const Served& m = pick(j);
        if (m.batcher.get() != ann) {
          ann->withdraw();
          ann = m.batcher.get();
          ann->announce();
        }
        neighbors(m, j, res, announced);
      });
      if (announced) ann->withdraw();
    });
    post_compare();
    front.Get("/v1/projection", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] { projection(req, res, false); });
    });
    front.Get("/v1/projection/status", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] { projection(req, res, true); });
    });
    post("/v1/explore", &Impl::explore);
    post("/v1/analogy", &Impl::analogy);
    post("/v1/tokenize", &Impl::tokenize);
    post("/v1/decode", &Impl::decode);
    post("/v1/embeddings", &Impl::embeddings);
    post("/v1/similarity", &Impl::similarity);
    front.Get("/v1/vocab", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] {
        for (const auto& [name, value] : req.params)
          if (name != "offset" && name != "limit" && name != "model")
            throw HttpError{
                400, "invalid_request_error", "invalid_field",
                "unknown query parameter '" + name.substr(0, 80) + "' (offset, limit, model)"};
        for (const char* p : {"offset", "limit", "model"})
          if (req.get_param_value_count(p) > 1)
            throw HttpError{400, "invalid_request_error", "invalid_field",
                            std::string("query parameter '") + p + "': expected one value"};
        const ModelHandlePtr& h = pick(req).h;
        size_t rows = h->table().n_rows();
        size_t offset = size_t(query_integer(req, "offset", 0, 0, int64_t(rows)));
        size_t limit = size_t(
            query_integer(req, "limit", int64_t(std::min(rows, kVocabMax)), 0, int64_t(kVocabMax)));
        send_json(res, 200, vocab_document(*h, offset, limit));
      });
    });
    install_page_routes(front);
  }
};

ApiServer::ApiServer(ModelHandlePtr h, ServerOptions o)
    : ApiServer(std::vector<NamedModel>{{"", std::move(h)}}, std::move(o)) {}

ApiServer::ApiServer(std::vector<NamedModel> models, ServerOptions o)
    : impl_(std::make_unique<Impl>(std::move(models), std::move(o))) {
  impl_->install();
}

ApiServer::~ApiServer() { stop(); }

int ApiServer::start() {
  int port = impl_->front.bind_listen(impl_->o.host, impl_->o.port);
  impl_->front.start();
  return port;
}

void ApiServer::stop() {
  impl_->front.stop_gracefully();
  for (Served& m : impl_->models) m.batcher->stop();
}

}  // namespace embedscope::server
