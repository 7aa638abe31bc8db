// Hashing of seeds and keys. Seeds of saved games and the order of training
// samples are derived with mix64, so its output must never change.
#pragma once

#include <cstdint>

namespace ultima {

// splitmix64's finalizer: spreads every input bit over the output.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace ultima
