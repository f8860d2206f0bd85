// GET /v1/projection and GET /v1/projection/status (docs/http_api.md): the coordinates of every
// row (PCA or UMAP), computed once per (model, method, dims, parameters) in the background by
// api::ProjectionJob and cached in memory and on disk (api/projection.h).
//
//   /v1/projection?model=&method=pca|umap&dims=2|3&format=f32|json
//       [&n_neighbors=15&min_dist=0.1&seed=42]   (UMAP's parameters)
//     200 ready: format=f32 (default) the rows x dims little-endian float32 values, row-major,
//         application/octet-stream with headers X-Rows and X-Dims; format=json
//         {"model","method","dims","rows","coords":[[x,y],...]}
//     202 computing (the first request starts it): {"state","progress","stage","message"}
//   /v1/projection/status?model=&method=&dims=[&n_neighbors&min_dist&seed]
//     200 {"state":"idle|computing|ready|failed","progress","stage","message"}; starts nothing.
//
// Errors: Error(kInvalidArgument) for an unknown, repeated or malformed parameter (naming it and
// its value); a failed computation's error is answered once, then the next request retries;
// 503 {"error": {"code": "busy"}} with Retry-After when a request would start a computation
// while two are already running (results already computed or cached on disk are still served).
// The model parameter is checked by the caller (api_server.cpp answers 404 for another model).
#pragma once

#include <httplib.h>

#include "embedscope/handle/model_handle.h"

namespace embedscope::server {

void answer_projection(const ModelHandle& h, const httplib::Request& req, httplib::Response& res,
                       bool status_only);

}  // namespace embedscope::server
