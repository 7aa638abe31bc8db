// Internal to the program's side of the network module (loader.cpp,
// trainer.cpp): the conversions to the C structs of module_api.h and the
// error buffer that the module's calls fill. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/model_file.h"
#include "nn/module_api.h"
#include "nn/network.h"

namespace ultima::nn::detail {

inline UltimaNnArchitecture to_c(const NetArchitecture& a) {
  return UltimaNnArchitecture{a.input_planes,   a.policy_planes,       a.blocks,
                              a.channels,       a.se_channels,         a.value_channels,
                              a.value_hidden,   a.moves_left_channels, a.moves_left_hidden};
}

// Where a call of the module writes its message when it fails.
struct ErrorBuffer {
  char text[1024] = {0};
  [[noreturn]] void raise(const std::string& what) const { throw NnModuleError(what + ": " + text); }
};

// A buffer the module malloc'ed, copied out and released.
inline std::vector<char> take_buffer(char* data, std::uint64_t size) {
  std::vector<char> out(data, data + size);
  nn_module().free_buffer(data);
  return out;
}

}  // namespace ultima::nn::detail
