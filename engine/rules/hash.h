// Hashing of seeds, keys and file contents. Seeds of saved games and the order of training
// samples are derived with mix64, so its output must never change.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ultima {

// splitmix64's finalizer: spreads every input bit over the output.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// FNV-1a 64 of a byte string: the checksum of every file format the
// program writes (models, shards, checkpoints, networks, records).
inline std::uint64_t fnv1a64(const char* data, std::size_t size) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < size; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace ultima
