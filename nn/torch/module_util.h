// Internal to the network module libultima_nn.so (module.cpp,
// trainer_module.cpp): what both sides of its C interface need to turn C
// arguments into LibTorch ones and exceptions into the interface's error
// text. Includes LibTorch, so never include it from the program's side.
#pragma once

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <torch/cuda.h>
#include <torch/types.h>
#include <torch/version.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "nn/architecture.h"
#include "nn/module_api.h"

namespace ultima::nn::detail {

// Copies `text` into the caller's buffer, cut to fit and NUL-terminated.
inline void write_error(char* error, size_t size, const std::string& text) {
  if (!error || size == 0) return;
  const size_t n = std::min(size - 1, text.size());
  std::memcpy(error, text.data(), n);
  error[n] = '\0';
}

// LibTorch's messages carry a C++ backtrace; keep the first line.
inline std::string message_of(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  const std::string text = c10_error ? c10_error->what_without_backtrace() : e.what();
  const size_t eol = text.find('\n');
  return eol == std::string::npos ? text : text.substr(0, eol);
}

// Runs `body`, turning an exception into a message and status 1.
template <typename Body>
int guarded(char* error, size_t error_size, Body&& body) {
  try {
    body();
    return 0;
  } catch (const std::exception& e) {
    write_error(error, error_size, message_of(e));
    return 1;
  }
}

inline NetArchitecture from_c(const UltimaNnArchitecture& c) {
  NetArchitecture a;
  a.input_planes = c.input_planes;
  a.policy_planes = c.policy_planes;
  a.blocks = c.blocks;
  a.channels = c.channels;
  a.se_channels = c.se_channels;
  a.value_channels = c.value_channels;
  a.value_hidden = c.value_hidden;
  a.moves_left_channels = c.moves_left_channels;
  a.moves_left_hidden = c.moves_left_hidden;
  if (a.input_planes < 1 || a.policy_planes < 1 || a.blocks < 0 || a.channels < 1 || a.se_channels < 0 ||
      a.value_channels < 1 || a.value_hidden < 1 || a.moves_left_channels < 0 || a.moves_left_hidden < 1)
    throw std::invalid_argument("the architecture has a field out of range");
  return a;
}

// The device an option names (null: the CPU); a CUDA device only where this
// LibTorch sees one.
inline torch::Device device_of(const char* name) {
  const std::string text = name ? name : "cpu";
  const torch::Device device(text);
  if (device.is_cuda() && !torch::cuda::is_available())
    throw std::runtime_error("device " + text + ": this LibTorch (" + TORCH_VERSION +
                             ") has no CUDA, or no GPU is visible");
  return device;
}

// The inter-op pool's size is fixed once per process; later requests for
// another size are ignored.
inline void set_interop_threads(int threads) {
  if (threads > 0 && at::get_num_interop_threads() != threads) {
    try {
      at::set_num_interop_threads(threads);
    } catch (const std::exception&) {
      // Already fixed for this process (only the first setting counts).
    }
  }
}

// Into a malloc'ed buffer for the interface's free_buffer.
inline void copy_out(const char* data, size_t size, char** buffer, uint64_t* bytes) {
  *buffer = static_cast<char*>(std::malloc(size ? size : 1));
  if (!*buffer) throw std::bad_alloc();
  std::memcpy(*buffer, data, size);
  *bytes = size;
}

}  // namespace ultima::nn::detail
