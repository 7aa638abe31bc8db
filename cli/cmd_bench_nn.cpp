// ultima bench nn: forward passes per second of a network by batch size,
// through the network module (loaded on demand; see nn/network.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/bench_inputs.h"
#include "commands.h"
#include "engine/rules/movegen.h"
#include "engine/rules/rule_set.h"
#include "nn/eigen_network.h"
#include "nn/encoding.h"
#include "nn/network.h"
#include "nn/policy_index.h"

namespace ultima::cli {

BenchInputs make_inputs(int count, int planes) {
  BenchInputs in;
  std::mt19937_64 rng(12345);
  const Rules rules;
  while (static_cast<int>(in.offsets.size()) - 1 < count) {
    Position pos = Position::start(rules);
    const int plies = std::uniform_int_distribution<int>(0, 60)(rng);
    for (int i = 0; i < plies && !game_status(pos).over(); ++i) {
      MoveList list;
      generate_legal(pos, list);
      pos.make(list[std::uniform_int_distribution<int>(0, list.size() - 1)(rng)]);
    }
    if (game_status(pos).over()) continue;
    const std::vector<float> encoded = nn::encode_position(pos, planes);
    in.planes.insert(in.planes.end(), encoded.begin(), encoded.begin() + planes * nn::kPlaneSize);
    MoveList list;
    generate_legal(pos, list);
    for (const Move& m : list) in.slots.push_back(nn::policy_index(m));
    in.offsets.push_back(static_cast<std::int32_t>(in.slots.size()));
  }
  return in;
}

namespace {

struct BenchNnOptions {
  nn::NnConfig config;
  std::string backend = "torch";  // torch, eigen, both
  std::vector<int> batches{1, 8, 32, 64, 128};
  double seconds = 1.0;
};

// Forward passes of `net` at each batch size, a line each.
void time_batches(nn::NetworkBackend& net, const BenchInputs& in, const BenchNnOptions& options, int largest) {
  std::printf("%6s %10s %12s %10s\n", "batch", "passes/s", "positions/s", "ms/pass");
  std::vector<float> logits(in.slots.size()), wdl(static_cast<std::size_t>(largest) * 3), moves_left(largest);
  for (const int batch : options.batches) {
    const nn::ForwardBatch fb{batch, in.planes.data(), in.offsets.data(), in.slots.data()};
    const nn::ForwardOutput fo{logits.data(), wdl.data(), moves_left.data()};
    for (int i = 0; i < 2; ++i) net.forward(fb, fo);  // warm-up: allocator, kernels
    int passes = 0;
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    while (passes < 3 || elapsed < options.seconds) {
      net.forward(fb, fo);
      ++passes;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    std::printf("%6d %10.1f %12.0f %10.3f\n", batch, passes / elapsed, passes * batch / elapsed,
                1000 * elapsed / passes);
    std::fflush(stdout);
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void bench_nn(const BenchNnOptions& options) {
  if (options.batches.empty()) throw std::invalid_argument("--batches: no batch sizes");
  const int largest = *std::max_element(options.batches.begin(), options.batches.end());
  const std::string& backend = options.backend;
  if (backend == "eigen" && !options.config.weights.empty()) {
    // Without LibTorch at all: what a bot with the Eigen backend pays.
    const auto load_start = std::chrono::steady_clock::now();
    auto net = nn::EigenNetwork::load(options.config.weights);
    std::printf("%s; model file read and network made in %.3f s (no LibTorch)\n", net->describe().c_str(),
                seconds_since(load_start));
    time_batches(*net, make_inputs(largest, net->input_planes()), options, largest);
    return;
  }
  const auto load_start = std::chrono::steady_clock::now();
  std::unique_ptr<nn::Network> net = nn::make_network(options.config);
  const double load_seconds = seconds_since(load_start);
  const BenchInputs in = make_inputs(largest, net->input_planes());
  if (backend != "eigen") {
    std::printf("%s\n%s; module loaded and network made in %.2f s\n", net->describe().c_str(),
                nn::nn_library_version().c_str(), load_seconds);
    time_batches(*net, in, options, largest);
  }
  if (backend == "torch") return;
  // The same weights (random ones come from LibTorch) on the Eigen backend.
  const auto eigen_start = std::chrono::steady_clock::now();
  auto eigen = nn::EigenNetwork::from_payload(net->architecture(), net->payload());
  std::printf("%s; network made from the payload in %.3f s\n", eigen->describe().c_str(),
              seconds_since(eigen_start));
  time_batches(*eigen, in, options, largest);
}

}  // namespace

void add_bench_nn_command(CLI::App& bench) {
  auto opts = std::make_shared<BenchNnOptions>();
  opts->config.batching.cache_entries = 0;
  CLI::App* cmd = bench.add_subcommand("nn", "network forward passes per second by batch size (random weights)");
  cmd->add_option_function<int>("--blocks", [opts](int v) { opts->config.set("blocks", std::to_string(v)); },
                                "residual blocks (default 6)");
  cmd->add_option_function<int>("--channels", [opts](int v) { opts->config.set("channels", std::to_string(v)); },
                                "channels (default 64)");
  cmd->add_option_function<int>("--se-channels",
                                [opts](int v) { opts->config.set("se_channels", std::to_string(v)); },
                                "squeeze-excitation width, 0 for none (default 16)");
  cmd->add_option_function<int>("--threads", [opts](int v) { opts->config.set("threads", std::to_string(v)); },
                                "LibTorch intra-op threads (default 1; 0: LibTorch's default)");
  cmd->add_option_function<int>("--interop-threads",
                                [opts](int v) { opts->config.set("interop_threads", std::to_string(v)); },
                                "LibTorch inter-op threads (default 1)");
  cmd->add_option_function<std::string>("--device", [opts](const std::string& v) { opts->config.set("device", v); },
                                        "cpu, cuda or cuda:N (default cpu)");
  cmd->add_option_function<std::string>("--precision",
                                        [opts](const std::string& v) { opts->config.set("precision", v); },
                                        "auto, fp32, fp16, bf16 (default auto: fp16 on CUDA, fp32 on CPU)");
  cmd->add_option_function<std::string>("--weights",
                                        [opts](const std::string& v) { opts->config.set("weights", v); },
                                        "a model file instead of random weights");
  cmd->add_option("--backend", opts->backend,
                  "torch (default), eigen (with --weights: without loading LibTorch), or both, one after the other")
      ->check(CLI::IsMember({"torch", "eigen", "both"}));
  cmd->add_option("--batches", opts->batches, "comma-separated batch sizes (default 1,8,32,64,128)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--seconds", opts->seconds, "seconds per batch size (default 1)")->check(CLI::Range(0.0, 3600.0));
  cmd->callback([opts] { bench_nn(*opts); });
}

}  // namespace ultima::cli
