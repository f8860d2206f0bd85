// The web page of `embedscope serve` (docs/http_api.md "Web page"): GET / and GET /static/NAME
// answer the embedded files (web_assets.h) with a strict Content-Security-Policy, and
// vocab_document() is the body of GET /v1/vocab, the readable token of each row the page's
// scatter shows on hover.
//
// Security (docs/reliability.md H7): the page inserts token text with textContent only; the
// policy forbids inline scripts and styles, plugins, framing and every origin but the server's
// own. 'unsafe-eval' is allowed because regl (the WebGL layer under regl-scatterplot) compiles
// its draw calls with new Function(); no script can be loaded from elsewhere.
//
// Thread-safety: the handlers only read immutable data; vocab_document() reads the handle's
// shared word lookup, which is safe to call concurrently.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string_view>

#include "embedscope/handle/model_handle.h"

namespace embedscope::server {

// The Content-Security-Policy header value sent with every page file.
extern const char* const kPageCsp;

// Whether `path` is one of the page's files (served without an API key: they hold no data).
bool is_page_path(std::string_view path);

// Registers GET / and GET /static/... on `server`.
void install_page_routes(httplib::Server& server);

// {"model", "rows", "offset", "count", "tokens": [readable token of rows offset ..
// offset+count-1]}: each token as the CLI prints it (api::printable of the word lookup's
// display form: "␣computer" for GPT-2's " computer", control bytes as <0xNN>). Requires
// offset <= rows (count = min(limit, rows - offset)); the caller validates.
nlohmann::json vocab_document(const ModelHandle& h, size_t offset, size_t limit);

}  // namespace embedscope::server
