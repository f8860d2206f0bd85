#include "web_routes.h"

#include <algorithm>
#include <string>

#include "embedscope/api/common.h"
#include "web_assets.h"

namespace embedscope::server {

const char* const kPageCsp =
    "default-src 'none'; script-src 'self' 'unsafe-eval'; style-src 'self'; img-src 'self' data: "
    "blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

bool is_page_path(std::string_view path) {
  return path == "/" || path == "/favicon.ico" || path.starts_with("/static/");
}

namespace {

void send_asset(const httplib::Request& req, httplib::Response& res, const WebAsset& a) {
  res.set_header("Content-Security-Policy", kPageCsp);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Cache-Control", "no-cache");  // revalidated by ETag: a rebuilt server shows
  res.set_header("ETag", a.etag);               // its own page at once
  if (req.get_header_value("If-None-Match") == a.etag) {
    res.status = 304;
    return;
  }
  res.status = 200;
  res.set_content(a.data, a.size, a.type);
}

}  // namespace

void install_page_routes(httplib::Server& server) {
  auto serve = [](const httplib::Request& req, httplib::Response& res) {
    const WebAsset* a = find_web_asset(req.path);
    if (a == nullptr) {
      res.status = 404;  // the error handler writes the JSON error naming the path
      return;
    }
    send_asset(req, res, *a);
  };
  server.Get("/", serve);
  server.Get(R"(/static/[A-Za-z0-9._-]+)", serve);
  server.Get("/favicon.ico", [](const httplib::Request&, httplib::Response& res) {
    res.status = 204;  // no icon; spares the browser's automatic request a 404
  });
}

nlohmann::json vocab_document(const ModelHandle& h, size_t offset, size_t limit) {
  size_t rows = h.table().n_rows();
  size_t count = std::min(limit, rows - std::min(offset, rows));
  const WordLookup& w = h.words();
  nlohmann::json tokens = nlohmann::json::array();
  for (size_t i = 0; i < count; ++i)
    tokens.push_back(api::printable(w.display(TokenId(offset + i))));
  return {{"model", h.name()},
          {"rows", rows},
          {"offset", offset},
          {"count", count},
          {"tokens", std::move(tokens)}};
}

}  // namespace embedscope::server
