// What the web server's games and players are named and timed by (not a
// public header): Unix time in milliseconds, and random texts drawn from
// the system's entropy for ids and secret tokens.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>

namespace ultima::server_ids {

inline std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// `n` characters out of `alphabet`.
inline std::string random_text(std::size_t n, std::string_view alphabet) {
  std::random_device entropy;
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += alphabet[entropy() % alphabet.size()];
  return out;
}

// A seat's or a player's secret: 128 random bits in hex.
inline std::string new_token() { return random_text(32, "0123456789abcdef"); }

}  // namespace ultima::server_ids
