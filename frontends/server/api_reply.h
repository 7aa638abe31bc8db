// An answer of the web server's JSON API, apart from HTTP (handlers.h,
// online.h).
#pragma once

#include <string>

namespace ultima {

// An answer: the HTTP status and the body, JSON text. An error's body is
// {"error": message, "field": the request's field at fault (absent: the
// request as a whole)}.
struct ApiReply {
  int status = 200;
  std::string body;
};

// The error answer the handlers give, for the server's own errors (a body
// too large, no such path) to look the same.
ApiReply api_error(int status, const std::string& message, const std::string& field = "");

}  // namespace ultima
