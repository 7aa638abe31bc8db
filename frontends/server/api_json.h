// The JSON side of the web server's handlers, shared by handlers.cpp and
// online.cpp (not a public header): a refused request as an exception with
// its status and field, the request body read as an object of known fields,
// typed fields with their ranges, and a handler run with every error turned
// into the API's error answer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/rules/replay.h"
#include "engine/rules/rule_set.h"
#include "frontends/server/api_reply.h"

namespace ultima::api_json {

using json = nlohmann::json;

// A request the server refuses: its HTTP status, the message, and the
// field at fault (empty: the request as a whole).
struct HttpError {
  int status = 400;
  std::string message;
  std::string field;
};

[[noreturn]] inline void bad(const std::string& field, const std::string& message, int status = 400) {
  throw HttpError{status, message, field};
}

inline json error_body(const std::string& message, const std::string& field) {
  json e;
  e["error"] = message;
  if (!field.empty()) e["field"] = field;
  return e;
}

// An answer with a JSON body.
inline ApiReply reply_json(const json& body, int status = 200) {
  return {status, body.dump(-1, ' ', false, json::error_handler_t::replace)};
}

// The request's body as JSON; `object_error` when it is not an object.
inline json body_object(const std::string& text, const std::string& object_error) {
  json body;
  try {
    body = json::parse(text);
  } catch (const json::exception& e) {  // a syntax error, or a number out of range ("5e750")
    std::string what = e.what();
    const std::size_t at = what.find("] ");
    bad("", "the body is not valid JSON: " + (at == std::string::npos ? what : what.substr(at + 2)));
  }
  if (!body.is_object()) bad("", object_error);
  return body;
}

// The request's body as a JSON object with only the allowed fields.
inline json parse_body(const std::string& text, const std::vector<std::string>& allowed) {
  json body = body_object(text, "the body must be a JSON object");
  for (auto it = body.begin(); it != body.end(); ++it)
    if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end()) {
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      bad(it.key(), "unknown field '" + it.key() + "' (fields: " + list + ")");
    }
  return body;
}

inline std::string string_field(const json& body, const char* name, const std::string& fallback) {
  if (!body.contains(name) || body[name].is_null()) return fallback;
  if (!body[name].is_string()) bad(name, std::string(name) + " must be a string");
  return body[name].get<std::string>();
}

inline std::vector<std::string> string_list(const json& body, const char* name) {
  std::vector<std::string> out;
  if (!body.contains(name) || body[name].is_null()) return out;
  if (!body[name].is_array()) bad(name, std::string(name) + " must be an array of strings");
  for (const json& v : body[name]) {
    if (!v.is_string()) bad(name, std::string(name) + " must be an array of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

inline std::optional<std::int64_t> int_field(const json& body, const char* name, std::int64_t lo, std::int64_t hi) {
  if (!body.contains(name) || body[name].is_null()) return std::nullopt;
  const json& v = body[name];
  const std::string range = std::string(name) + " must be an integer from " + std::to_string(lo) + " to " +
                            std::to_string(hi);
  if (!v.is_number_integer()) bad(name, range);
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) bad(name, range);
  const std::int64_t n = v.get<std::int64_t>();
  if (n < lo || n > hi) bad(name, range);
  return n;
}

inline Rules rules_field(const json& body) {
  try {
    return Rules::parse(string_field(body, "rules", kDefaultRules));
  } catch (const HttpError&) {
    throw;
  } catch (const std::exception& e) {
    bad("rules", std::string("rules: ") + e.what());
  }
}

inline Position fen_position(const std::string& fen, const Rules& rules) {
  try {
    return start_position(fen, rules);
  } catch (const std::exception& e) {
    bad("fen", std::string("fen: ") + e.what());
  }
}

// Runs a handler, turning HttpError and other exceptions into JSON errors.
template <typename Handler>
ApiReply guarded(Handler h) {
  try {
    return h();
  } catch (const HttpError& e) {
    return reply_json(error_body(e.message, e.field), e.status);
  } catch (const std::exception& e) {
    return reply_json(error_body(std::string("internal error: ") + e.what(), ""), 500);
  }
}

}  // namespace ultima::api_json
