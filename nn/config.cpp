#include "config.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace ultima::nn {

bool valid_device(std::string_view device) {
  if (device == "cpu" || device == "cuda") return true;
  if (device.rfind("cuda:", 0) != 0 || device.size() == 5) return false;
  return std::all_of(device.begin() + 5, device.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

bool valid_precision(std::string_view precision) {
  return precision == "auto" || precision == "fp32" || precision == "fp16" || precision == "bf16";
}
namespace {

template <typename T>
T parse_number(std::string_view key, std::string_view value, T min, T max) {
  T v{};
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || v < min || v > max)
    throw std::invalid_argument("network option " + std::string(key) + ": '" + std::string(value) +
                                "' is not a number from " + std::to_string(min) + " to " + std::to_string(max));
  return v;
}

}  // namespace

const std::vector<NnConfig::Key>& NnConfig::keys() {
  static const std::vector<Key> k = {
      {"backend", "torch (the LibTorch module, any device) or eigen (CPU fp32 without LibTorch; needs weights)"},
      {"weights", "model file (empty: random weights from seed)"},
      {"blocks", "residual blocks of a random network (checked against a model file when given)"},
      {"channels", "channels of a random network (checked against a model file when given)"},
      {"se_channels", "squeeze-excitation width of a random network, 0 for none"},
      {"seed", "seed of random weights"},
      {"device", "cpu, cuda or cuda:N"},
      {"precision", "auto (fp16 on CUDA, fp32 on CPU), fp32, fp16 (CUDA only) or bf16"},
      {"threads", "LibTorch intra-op threads (0: LibTorch's default)"},
      {"interop_threads", "LibTorch inter-op threads, set once per process (0: LibTorch's default)"},
      {"max_batch", "positions per forward pass at most"},
      {"max_wait_us", "microseconds the oldest queued position waits for a batch to fill"},
      {"cache_entries", "positions kept in the evaluation cache (0: none)"},
      {"workers", "threads running forward passes"},
  };
  return k;
}

void NnConfig::set(std::string_view key, std::string_view value) {
  if (key == "backend") {
    if (value != "torch" && value != "eigen")
      throw std::invalid_argument("network option backend: '" + std::string(value) + "' is not torch or eigen");
    backend = value;
  } else if (key == "weights") {
    weights = value;
  } else if (key == "blocks") {
    architecture.blocks = parse_number<int>(key, value, 0, 256);
    given.blocks = true;
  } else if (key == "channels") {
    architecture.channels = parse_number<int>(key, value, 1, 4096);
    given.channels = true;
  } else if (key == "se_channels") {
    architecture.se_channels = parse_number<int>(key, value, 0, 4096);
    given.se_channels = true;
  } else if (key == "seed") {
    seed = parse_number<std::uint64_t>(key, value, 0, UINT64_MAX);
  } else if (key == "device") {
    if (!valid_device(value))
      throw std::invalid_argument("network option device: '" + std::string(value) + "' is not cpu, cuda or cuda:N");
    device = value;
  } else if (key == "precision") {
    if (!valid_precision(value))
      throw std::invalid_argument("network option precision: '" + std::string(value) +
                                  "' is not auto, fp32, fp16 or bf16");
    precision = value;
  } else if (key == "threads") {
    threads = parse_number<int>(key, value, 0, 1024);
  } else if (key == "interop_threads") {
    interop_threads = parse_number<int>(key, value, 0, 1024);
  } else if (key == "max_batch") {
    batching.max_batch = parse_number<int>(key, value, 1, 1 << 16);
  } else if (key == "max_wait_us") {
    batching.max_wait_us = parse_number<int>(key, value, 0, 10'000'000);
  } else if (key == "cache_entries") {
    batching.cache_entries = parse_number<std::size_t>(key, value, 0, std::size_t{1} << 32);
  } else if (key == "workers") {
    batching.workers = parse_number<int>(key, value, 1, 64);
  } else {
    std::string names;
    for (const Key& k : keys()) names += (names.empty() ? "" : ", ") + std::string(k.name);
    throw std::invalid_argument("unknown network option '" + std::string(key) + "' (options: " + names + ")");
  }
}

NnConfig NnConfig::parse(std::string_view text) {
  NnConfig config;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw std::invalid_argument("network option '" + std::string(item) + "' is not key=value");
    config.set(item.substr(0, eq), item.substr(eq + 1));
  }
  return config;
}

}  // namespace ultima::nn
