// Network inputs for the benchmarks: positions from seeded random games
// (mixed phases), encoded once, with their legal moves' policy slots.
#pragma once

#include <cstdint>
#include <vector>

namespace ultima::cli {

struct BenchInputs {
  std::vector<float> planes;               // count x planes x 64
  std::vector<std::int32_t> offsets{0};    // count + 1
  std::vector<std::int32_t> slots;
};

// `planes`: the network's input planes (nn/encoding.h).
BenchInputs make_inputs(int count, int planes);

}  // namespace ultima::cli
