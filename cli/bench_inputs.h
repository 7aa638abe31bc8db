// What the benchmarks share: network inputs (positions from seeded random
// games, mixed phases, encoded once, with their legal moves' policy slots)
// and a scratch run directory.
#pragma once

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace ultima::cli {

// A scratch run directory under the system's temporary folder, removed
// with everything in it when it goes out of scope.
struct TempDir {
  std::string path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ultima-bench-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot make a temporary directory");
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

struct BenchInputs {
  std::vector<float> planes;               // count x planes x 64
  std::vector<std::int32_t> offsets{0};    // count + 1
  std::vector<std::int32_t> slots;
};

// `planes`: the network's input planes (nn/encoding.h).
BenchInputs make_inputs(int count, int planes);

}  // namespace ultima::cli
