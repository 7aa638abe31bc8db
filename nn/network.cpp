#include "nn/network.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <sys/stat.h>

#include "engine/base/paths.h"
#include "nn/eigen_network.h"
#include "nn/module_api.h"
#include "nn/module_client.h"

namespace ultima::nn {
namespace {

using detail::ErrorBuffer;

}  // namespace

std::string nn_module_path() {
  if (const char* env = std::getenv("ULTIMA_NN_MODULE"); env && *env) return env;
  // Beside the program in a build folder; PREFIX/lib/ultima for a program
  // installed in PREFIX/bin.
  const std::string beside = program_directory() + "/" + kModuleFileName;
  const std::string installed = program_directory() + "/../lib/ultima/" + kModuleFileName;
  struct stat st;
  if (::stat(beside.c_str(), &st) != 0 && ::stat(installed.c_str(), &st) == 0) return installed;
  return beside;
}

const UltimaNnApi& nn_module() {
  static std::once_flag once;
  static const UltimaNnApi* api = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    const std::string path = nn_module_path();
    const bool from_env = std::getenv("ULTIMA_NN_MODULE") && *std::getenv("ULTIMA_NN_MODULE");
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      failure = "the network module " + path + " does not exist (" +
                (from_env ? std::string("named by ULTIMA_NN_MODULE") : "looked for next to the program and in ../lib/ultima; set ULTIMA_NN_MODULE to use another") +
                "); build the CMake target ultima_nn, which needs LibTorch";
      return;
    }
    // Never closed: evaluators and their threads run code from it.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      failure = "cannot load the network module " + path + ": " + ::dlerror();
      return;
    }
    auto entry = reinterpret_cast<UltimaNnApiFunction>(::dlsym(handle, ULTIMA_NN_API_SYMBOL));
    if (!entry) {
      failure = "the network module " + path + " lacks " + ULTIMA_NN_API_SYMBOL + " (not an ultima_nn module?)";
      return;
    }
    const UltimaNnApi* candidate = entry();
    if (!candidate || candidate->api_version != ULTIMA_NN_API_VERSION || candidate->api_size != sizeof(UltimaNnApi)) {
      failure = "the network module " + path + " speaks interface version " +
                std::to_string(candidate ? candidate->api_version : 0) + "; this program needs version " +
                std::to_string(ULTIMA_NN_API_VERSION) + " (rebuild ultima_nn)";
      return;
    }
    api = candidate;
  });
  if (!api) throw NnModuleError(failure);
  return *api;
}

std::string nn_library_version() { return nn_module().library_version(); }

Network::Network(UltimaNnNet* net, const NetArchitecture& architecture, ModelHeader header)
    : net_(net), architecture_(architecture), header_(std::move(header)) {}

Network::~Network() {
  if (net_) nn_module().destroy(net_);
}

namespace {

UltimaNnNet* create_net(const NetArchitecture& arch, const std::vector<char>* payload, std::uint64_t seed,
                        const DeviceOptions& device, const std::string& what) {
  const UltimaNnApi& api = nn_module();
  const UltimaNnArchitecture c = detail::to_c(arch);
  const UltimaNnOptions options{device.device.c_str(), device.precision.c_str(), device.threads,
                                device.interop_threads, seed};
  ErrorBuffer error;
  UltimaNnNet* net = api.create(&c, payload ? payload->data() : nullptr, payload ? payload->size() : 0, &options,
                                error.text, sizeof error.text);
  if (!net) error.raise(what);
  return net;
}

}  // namespace

std::unique_ptr<Network> Network::random(const NetArchitecture& architecture, std::uint64_t seed,
                                         const DeviceOptions& device) {
  const NetArchitecture arch = architecture.completed();
  arch.validate();
  UltimaNnNet* net = create_net(arch, nullptr, seed, device, "cannot create a " + arch.text() + " network");
  ModelHeader header;
  header.architecture = arch;
  return std::unique_ptr<Network>(new Network(net, arch, header));
}

std::unique_ptr<Network> Network::load(const std::string& path, const DeviceOptions& device) {
  ModelFile file = read_model_file(path);
  UltimaNnNet* net = create_net(file.header.architecture, &file.payload, 0, device, "model file " + path);
  return std::unique_ptr<Network>(new Network(net, file.header.architecture, file.header));
}

std::vector<char> Network::payload() const {
  const UltimaNnApi& api = nn_module();
  char* data = nullptr;
  std::uint64_t size = 0;
  ErrorBuffer error;
  if (api.serialize(net_, &data, &size, error.text, sizeof error.text) != 0) error.raise("cannot serialize the network");
  return detail::take_buffer(data, size);
}

void Network::save(const std::string& path, const std::string& rules, std::uint64_t training_step) const {
  ModelHeader header;
  header.architecture = architecture_;
  header.rules = rules;
  header.training_step = training_step;
  write_model_file(path, header, payload());
}

void Network::forward(const ForwardBatch& batch, const ForwardOutput& out) {
  ErrorBuffer error;
  if (nn_module().forward(net_, batch.size, batch.planes, batch.move_offsets, batch.move_slots, out.policy_logits,
                          out.wdl_logits, out.moves_left, error.text, sizeof error.text) != 0)
    error.raise("forward pass failed");
}

std::string Network::describe() const {
  char text[256] = {0};
  nn_module().describe(net_, text, sizeof text);
  return "net " + architecture_.text() + ", " + text;
}

std::unique_ptr<Network> make_network(const NnConfig& config) {
  const DeviceOptions device{config.device, config.precision, config.threads, config.interop_threads};
  if (config.weights.empty()) return Network::random(config.architecture, config.seed, device);
  if (config.given.blocks || config.given.channels || config.given.se_channels) {
    const ModelHeader header = read_model_header(config.weights);
    NetArchitecture expected = header.architecture;
    if (config.given.blocks) expected.blocks = config.architecture.blocks;
    if (config.given.channels) expected.channels = config.architecture.channels;
    if (config.given.se_channels) expected.se_channels = config.architecture.se_channels;
    check_architecture(config.weights, header.architecture, expected);
  }
  return Network::load(config.weights, device);
}

std::unique_ptr<BatchingEvaluator> make_nn_evaluator(const NnConfig& config) {
  if (config.backend == "eigen") {
    if (config.weights.empty())
      throw std::invalid_argument("network option backend=eigen needs weights=FILE (random weights come from LibTorch)");
    if (config.device != "cpu")
      throw std::invalid_argument("network option backend=eigen runs on the cpu, not " + config.device);
    std::shared_ptr<NetworkBackend> net = EigenNetwork::load(config.weights);
    if (config.given.blocks || config.given.channels || config.given.se_channels) {
      const NetArchitecture& a = static_cast<const EigenNetwork&>(*net).architecture();
      NetArchitecture expected = a;
      if (config.given.blocks) expected.blocks = config.architecture.blocks;
      if (config.given.channels) expected.channels = config.architecture.channels;
      if (config.given.se_channels) expected.se_channels = config.architecture.se_channels;
      check_architecture(config.weights, a, expected);
    }
    return std::make_unique<BatchingEvaluator>(net, config.batching);
  }
  return std::make_unique<BatchingEvaluator>(std::shared_ptr<NetworkBackend>(make_network(config)), config.batching);
}

}  // namespace ultima::nn
