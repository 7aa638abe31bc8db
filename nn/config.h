// Settings of a network evaluator, each a key that a command-line option,
// a UCI option or a config file can set ("device=cuda,max_batch=256").
// The keys are listed in nn/README.md and by NnConfig::keys().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nn/batching_evaluator.h"
#include "nn/model_file.h"

namespace ultima::nn {

// The devices and precisions a network may be given (cpu, cuda, cuda:N;
// auto, fp32, fp16, bf16): one check for network settings and run configs.
bool valid_device(std::string_view device);
bool valid_precision(std::string_view precision);

struct NnConfig {
  std::string backend = "torch";   // torch (the LibTorch module) or eigen (nn/eigen_network.h: CPU, fp32, no LibTorch)
  std::string weights;             // model file; empty: random weights from `seed` (benchmarks, tests)
  NetArchitecture architecture;    // for random weights; checked against the file when given explicitly
  struct {
    bool blocks = false, channels = false, se_channels = false;
  } given;                         // which architecture keys were set explicitly
  std::uint64_t seed = 1;
  std::string device = "cpu";      // cpu, cuda, cuda:N
  std::string precision = "auto";  // auto (fp16 on CUDA, fp32 on CPU), fp32, fp16, bf16
  int threads = 1;                 // LibTorch intra-op threads (0: LibTorch's default, all cores)
  int interop_threads = 1;         // LibTorch inter-op threads (set once per process)
  BatchingOptions batching;

  // Sets one key; throws std::invalid_argument naming the key or value.
  void set(std::string_view key, std::string_view value);
  // "key=value,key=value"; an empty text gives the defaults.
  static NnConfig parse(std::string_view text);

  struct Key {
    const char* name;
    const char* meaning;
  };
  static const std::vector<Key>& keys();
};

}  // namespace ultima::nn
