// Finds and loads the network module libultima_nn.so (the only part of the
// program that links LibTorch) on first use, and wraps its C interface
// (module_api.h) in C++: Network (a net on a device) and make_nn_evaluator.
// Programs that never ask for a network never load LibTorch, so `ultima
// perft` and the alpha-beta engine start in milliseconds.
//
// The module is looked for at $ULTIMA_NN_MODULE, else next to the running
// program, else in ../lib/ultima from it (an installed copy). Once loaded
// it stays loaded for the life of the process (evaluators hold code from
// it).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "engine/mcts/evaluator.h"
#include "nn/backend.h"
#include "nn/batching_evaluator.h"
#include "nn/config.h"
#include "nn/model_file.h"

struct UltimaNnApi;
struct UltimaNnNet;

namespace ultima::nn {

constexpr const char* kModuleFileName = "libultima_nn.so";

class NnModuleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where the module is (or would be) loaded from.
std::string nn_module_path();
// The module's interface, loading it on the first call. Throws NnModuleError
// naming the path and the reason (missing file, missing LibTorch library,
// a module of another interface version).
const UltimaNnApi& nn_module();
// "LibTorch 1.13.1 ..." of the loaded module.
std::string nn_library_version();

// Where a network runs.
struct DeviceOptions {
  std::string device = "cpu";
  std::string precision = "auto";
  int threads = 1;
  int interop_threads = 1;
};

// A network living in the module, on one device. Thread-safe forward.
class Network final : public NetworkBackend {
 public:
  // Random weights (seeded): benchmarks, tests, the first generation.
  static std::unique_ptr<Network> random(const NetArchitecture& architecture, std::uint64_t seed,
                                         const DeviceOptions& device);
  // Weights from a model file (read_model_file's checks, then the module's
  // tensor-by-tensor shape checks). Throws ModelFileError or NnModuleError.
  static std::unique_ptr<Network> load(const std::string& path, const DeviceOptions& device);
  ~Network() override;

  // Writes a model file atomically (fp32 weights whatever the device).
  void save(const std::string& path, const std::string& rules, std::uint64_t training_step) const;
  std::vector<char> payload() const;

  void forward(const ForwardBatch& batch, const ForwardOutput& out) override;
  std::string describe() const override;
  int input_planes() const override { return architecture_.input_planes; }
  const NetArchitecture& architecture() const { return architecture_; }
  // The header of the file it was loaded from (default for random nets).
  const ModelHeader& header() const { return header_; }

 private:
  Network(UltimaNnNet* net, const NetArchitecture& architecture, ModelHeader header);
  UltimaNnNet* net_;
  NetArchitecture architecture_;
  ModelHeader header_;
};

// The network a config names (model file or random weights), on its device.
std::unique_ptr<Network> make_network(const NnConfig& config);
// A batching evaluator over that network.
std::unique_ptr<BatchingEvaluator> make_nn_evaluator(const NnConfig& config);

}  // namespace ultima::nn
