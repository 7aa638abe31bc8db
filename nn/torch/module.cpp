// libultima_nn.so: the network module. Implements the C interface of
// module_api.h over net.h; with net.cpp and trainer.cpp the only files that
// include LibTorch. Loaded on demand by nn/network.cpp.
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <torch/cuda.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "nn/module_api.h"
#include "nn/torch/module_util.h"
#include "nn/torch/net.h"

namespace ultima::nn {
// The trainer's entries of the interface (trainer.cpp).
void add_trainer_api(UltimaNnApi& api);
namespace dist {
void add_group_api(UltimaNnApi& api);
}
}  // namespace ultima::nn

struct UltimaNnNet {
  ultima::nn::UltimaNet net{nullptr};
  torch::Device device{torch::kCPU};
  torch::ScalarType dtype = torch::kFloat;
  int threads = 0;
  std::string description;
};

namespace {

using ultima::nn::NetArchitecture;
using ultima::nn::detail::copy_out;
using ultima::nn::detail::device_of;
using ultima::nn::detail::from_c;
using ultima::nn::detail::guarded;
using ultima::nn::detail::message_of;
using ultima::nn::detail::write_error;

// Weight initialization draws from LibTorch's global generator.
std::mutex& seed_mutex() {
  static std::mutex m;
  return m;
}

// Thread counts are per process (inter-op: once per process; intra-op: the
// pool's size, plus OpenMP's count per calling thread, see forward()).
void apply_threads(int threads, int interop_threads) {
  static std::mutex m;
  std::lock_guard lock(m);
  ultima::nn::detail::set_interop_threads(interop_threads);
  if (threads > 0) at::set_num_threads(threads);
}

const char* library_version() {
  static const std::string text = [] {
    const bool cuda = torch::cuda::is_available();
    return std::string("LibTorch ") + TORCH_VERSION + ", CUDA " +
           (cuda ? "available (" + std::to_string(torch::cuda::device_count()) + " devices)" : "not available") +
           ", intra-op threads " + std::to_string(at::get_num_threads());
  }();
  return text.c_str();
}

UltimaNnNet* create(const UltimaNnArchitecture* architecture, const void* payload, uint64_t payload_bytes,
                    const UltimaNnOptions* options, char* error, size_t error_size) {
  try {
    auto net = std::make_unique<UltimaNnNet>();
    const NetArchitecture arch = from_c(*architecture);
    net->device = device_of(options->device);
    const std::string precision = options->precision ? options->precision : "auto";
    if (precision == "auto" || precision == "fp32") {
      net->dtype = precision == "auto" && net->device.is_cuda() ? torch::kHalf : torch::kFloat;
    } else if (precision == "fp16" || precision == "bf16") {
      if (precision == "fp16" && !net->device.is_cuda())
        throw std::runtime_error("precision fp16 needs a CUDA device (the CPU runs fp32 or bf16)");
      net->dtype = precision == "fp16" ? torch::kHalf : torch::kBFloat16;
    } else {
      throw std::runtime_error("unknown precision '" + precision + "' (auto, fp32, fp16, bf16)");
    }
    apply_threads(options->threads, options->interop_threads);
    net->threads = options->threads;
    {
      std::lock_guard lock(seed_mutex());
      torch::manual_seed(options->seed);
      net->net = ultima::nn::UltimaNet(arch);
    }
    if (payload) ultima::nn::load_payload(*net->net, static_cast<const char*>(payload), payload_bytes);
    net->net->eval();
    // Floating-point tensors take the dtype; BN's step counter stays int64.
    net->net->to(net->device);
    // On the CPU the dense layers stay fp32 under bf16: oneDNN 2.6 (Debian
    // 12's) failed now and then to make a bf16 inner-product kernel in
    // self-play (std::bad_array_new_length on an AVX512-BF16 EPYC), and
    // these layers are a sliver of the work; the convolutions take bf16.
    const bool dense_fp32 = net->dtype == torch::kBFloat16 && net->device.is_cpu();
    if (net->dtype != torch::kFloat) {
      torch::NoGradGuard no_grad;
      for (auto& module : net->net->modules(/*include_self=*/true)) {
        if (dense_fp32 && module->as<torch::nn::Linear>() != nullptr) continue;
        for (auto& p : module->parameters(/*recurse=*/false)) p.set_data(p.to(net->dtype));
        for (auto& b : module->buffers(/*recurse=*/false))
          if (b.is_floating_point()) b.set_data(b.to(net->dtype));
      }
    }
    const char* dtype_name = net->dtype == torch::kHalf ? "fp16" : net->dtype == torch::kBFloat16 ? "bf16" : "fp32";
    net->description = net->device.str() + " " + dtype_name + (dense_fp32 ? " (dense layers fp32)" : "");
    if (net->device.is_cpu())
      net->description += ", " + std::to_string(at::get_num_threads()) + " thread" + (at::get_num_threads() == 1 ? "" : "s");
    return net.release();
  } catch (const std::exception& e) {
    write_error(error, error_size, message_of(e));
    return nullptr;
  }
}

void destroy(UltimaNnNet* net) { delete net; }

int forward(UltimaNnNet* net, int32_t batch, const float* planes, const int32_t* move_offsets,
            const int32_t* move_slots, float* policy_logits, float* wdl_logits, float* moves_left, char* error,
            size_t error_size) {
  return guarded(error, error_size, [&] {
    if (batch <= 0) return;
    // OpenMP keeps its thread count per calling thread: set it on each
    // thread that runs passes (a worker thread of the batching evaluator).
    thread_local int threads_applied = -1;
    if (net->threads > 0 && threads_applied != net->threads) {
      at::set_num_threads(net->threads);
      threads_applied = net->threads;
    }
    c10::InferenceMode inference;
    const NetArchitecture& arch = net->net->architecture();
    torch::Tensor input = torch::from_blob(const_cast<float*>(planes), {batch, arch.input_planes, 8, 8}, torch::kFloat);
    input = input.to(net->device, net->dtype);
    ultima::nn::NetOutput out = net->net->forward(input);

    // Only the legal moves' logits leave the device.
    const int64_t slots_per_position = static_cast<int64_t>(arch.policy_planes) * 64;
    const int32_t moves = move_offsets[batch];
    if (moves > 0) {
      std::vector<int64_t> flat(static_cast<size_t>(moves));
      for (int32_t i = 0; i < batch; ++i)
        for (int32_t m = move_offsets[i]; m < move_offsets[i + 1]; ++m) {
          if (move_slots[m] < 0 || move_slots[m] >= slots_per_position)
            throw std::out_of_range("policy slot " + std::to_string(move_slots[m]) + " is out of range");
          flat[m] = i * slots_per_position + move_slots[m];
        }
      torch::Tensor index = torch::from_blob(flat.data(), {moves}, torch::kLong).to(net->device);
      torch::Tensor logits = out.policy.reshape({-1}).index_select(0, index).to(torch::kCPU, torch::kFloat).contiguous();
      std::memcpy(policy_logits, logits.data_ptr<float>(), sizeof(float) * static_cast<size_t>(moves));
    }
    torch::Tensor wdl = out.wdl.to(torch::kCPU, torch::kFloat).contiguous();
    std::memcpy(wdl_logits, wdl.data_ptr<float>(), sizeof(float) * 3 * static_cast<size_t>(batch));
    if (out.moves_left.defined()) {
      torch::Tensor ml = out.moves_left.to(torch::kCPU, torch::kFloat).contiguous();
      std::memcpy(moves_left, ml.data_ptr<float>(), sizeof(float) * static_cast<size_t>(batch));
    } else {
      std::fill_n(moves_left, batch, -1.0f);
    }
  });
}

int serialize(UltimaNnNet* net, char** payload, uint64_t* payload_bytes, char* error, size_t error_size) {
  return guarded(error, error_size, [&] {
    const std::vector<char> bytes = ultima::nn::save_payload(*net->net);
    copy_out(bytes.data(), bytes.size(), payload, payload_bytes);
  });
}

void free_buffer(char* buffer) { std::free(buffer); }

size_t describe(const UltimaNnNet* net, char* out, size_t out_size) {
  write_error(out, out_size, net->description);
  return std::min(net->description.size(), out_size ? out_size - 1 : 0);
}

UltimaNnApi make_api() {
  UltimaNnApi api{};
  api.api_version = ULTIMA_NN_API_VERSION;
  api.api_size = sizeof(UltimaNnApi);
  api.library_version = library_version;
  api.create = create;
  api.destroy = destroy;
  api.forward = forward;
  api.serialize = serialize;
  api.free_buffer = free_buffer;
  api.describe = describe;
  ultima::nn::add_trainer_api(api);
  ultima::nn::dist::add_group_api(api);
  return api;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const UltimaNnApi* ultima_nn_api(void) {
  static const UltimaNnApi api = make_api();
  return &api;
}
