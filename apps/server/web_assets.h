// The web page's files (web/: index.html, the esbuild bundle, the style sheet), embedded into
// embedscope-serve at build time by scripts/gen_web_assets.py, so the server is one binary and
// the page works with no network at all. The data is static and immutable: safe from any thread.
//
//   if (const WebAsset* a = find_web_asset("/static/app.js")) send(a->data, a->size, a->type);
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace embedscope::server {

struct WebAsset {
  const char* url;   // "/" or "/static/NAME"
  const char* type;  // Content-Type
  const char* etag;  // quoted sha256 prefix of the bytes
  const char* data;
  size_t size;
};

// The asset served at `url`, or nullptr.
const WebAsset* find_web_asset(std::string_view url);
// Every asset (the generated table).
std::span<const WebAsset> web_assets();

}  // namespace embedscope::server
