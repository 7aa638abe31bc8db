// The module's process groups (module_api.h's group_* entries) and the
// collectives of data-parallel training (distributed.h), on PyTorch's own
// distributed engine, c10d.
#include "nn/torch/distributed.h"

#include <torch/autograd.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/version.h>
#ifdef ULTIMA_WITH_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "nn/torch/module_util.h"

// The process group classes derive from c10d::Backend since LibTorch 2.0,
// from c10d::ProcessGroup before.
#if TORCH_VERSION_MAJOR >= 2
using CollectiveBackend = c10d::Backend;
#else
using CollectiveBackend = c10d::ProcessGroup;
#endif

struct UltimaNnGroup {
  int rank = 0;
  int world_size = 1;
  torch::Device device{torch::kCPU};
  c10::intrusive_ptr<CollectiveBackend> control;  // Gloo, CPU tensors
  c10::intrusive_ptr<CollectiveBackend> tensors;  // on `device`
};

namespace ultima::nn::dist {
namespace {

using detail::guarded;
using detail::message_of;
using detail::write_error;

void wait(const c10::intrusive_ptr<c10d::Work>& work) {
  if (!work->wait()) throw std::runtime_error("a collective operation failed");
}

void all_reduce_sum(CollectiveBackend& group, torch::Tensor& t) {
  std::vector<torch::Tensor> one{t};
  wait(group.allreduce(one));
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

// Gloo's network device: the interface GLOO_SOCKET_IFNAME names (as with
// PyTorch), loopback when the rendezvous is on this machine, else the
// address the host name resolves to.
std::shared_ptr<gloo::transport::Device> gloo_device(const std::string& master) {
  if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface && *interface)
    return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  if (master.empty() || is_loopback(master)) return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

UltimaNnGroup* group_create(const UltimaNnGroupOptions* o, char* error, size_t error_size) {
  try {
    if (o->world_size < 1) throw std::invalid_argument("world size " + std::to_string(o->world_size));
    if (o->rank < 0 || o->rank >= o->world_size)
      throw std::invalid_argument("rank " + std::to_string(o->rank) + " is outside 0.." +
                                  std::to_string(o->world_size - 1));
    auto group = std::make_unique<UltimaNnGroup>();
    group->rank = o->rank;
    group->world_size = o->world_size;
    group->device = detail::device_of(o->device);
    const auto timeout = std::chrono::milliseconds(1000LL * (o->timeout_seconds > 0 ? o->timeout_seconds : 600));
    const std::string master = o->master_addr ? o->master_addr : "";
    c10::intrusive_ptr<c10d::Store> store;
    if (o->store_path && *o->store_path) {
      store = c10::make_intrusive<c10d::FileStore>(o->store_path, o->world_size);
      store->setTimeout(timeout);
    } else {
      if (master.empty()) throw std::invalid_argument("no rendezvous address (MASTER_ADDR)");
      if (o->master_port < 1 || o->master_port > 65535)
        throw std::invalid_argument("rendezvous port " + std::to_string(o->master_port) + " is outside 1..65535");
      c10d::TCPStoreOptions options;
      options.port = static_cast<std::uint16_t>(o->master_port);
      options.isServer = o->rank == 0;
      options.numWorkers = static_cast<std::size_t>(o->world_size);
      options.waitWorkers = true;
      options.timeout = timeout;
      try {
        store = c10::make_intrusive<c10d::TCPStore>(master, options);
      } catch (const std::exception& e) {
        throw std::runtime_error("the rendezvous at " + master + ":" + std::to_string(o->master_port) +
                                 " (MASTER_ADDR:MASTER_PORT) failed within " +
                                 std::to_string(timeout.count() / 1000) + " s (ULTIMA_DIST_TIMEOUT): " +
                                 message_of(e));
      }
    }
    auto gloo_options = c10d::ProcessGroupGloo::Options::create(timeout);
    gloo_options->devices.push_back(gloo_device(master));
    group->control = c10::make_intrusive<c10d::ProcessGroupGloo>(
        c10::make_intrusive<c10d::PrefixStore>("control", store), o->rank, o->world_size, gloo_options);
#ifdef ULTIMA_WITH_NCCL
    if (group->device.is_cuda()) {
      c10::cuda::set_device(group->device.index() < 0 ? 0 : group->device.index());
      auto nccl_options = c10d::ProcessGroupNCCL::Options::create();
      nccl_options->timeout = timeout;
      group->tensors = c10::make_intrusive<c10d::ProcessGroupNCCL>(
          c10::make_intrusive<c10d::PrefixStore>("tensors", store), o->rank, o->world_size, nccl_options);
    }
#endif
    if (!group->tensors) {
      auto options = c10d::ProcessGroupGloo::Options::create(timeout);
      options->devices.push_back(gloo_device(master));
      group->tensors = c10::make_intrusive<c10d::ProcessGroupGloo>(
          c10::make_intrusive<c10d::PrefixStore>("tensors", store), o->rank, o->world_size, options);
    }
    return group.release();
  } catch (const std::exception& e) {
    write_error(error, error_size, message_of(e));
    return nullptr;
  }
}

void group_destroy(UltimaNnGroup* group) { delete group; }

int group_broadcast(UltimaNnGroup* group, int32_t root, char** buffer, uint64_t* bytes, char* error,
                    size_t error_size) {
  return guarded(error, error_size, [&] {
    if (root < 0 || root >= group->world_size) throw std::invalid_argument("root rank " + std::to_string(root));
    const bool mine = group->rank == root;
    torch::Tensor size = torch::tensor({static_cast<std::int64_t>(mine ? *bytes : 0)}, torch::kLong);
    std::vector<torch::Tensor> one{size};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    wait(group->control->broadcast(one, options));
    const std::int64_t n = size.item<std::int64_t>();
    torch::Tensor data = mine ? torch::from_blob(*buffer, {n}, torch::kUInt8).clone() : torch::empty({n}, torch::kUInt8);
    if (n > 0) {
      std::vector<torch::Tensor> payload{data};
      wait(group->control->broadcast(payload, options));
    }
    if (!mine) detail::copy_out(static_cast<const char*>(data.data_ptr()), static_cast<size_t>(n), buffer, bytes);
  });
}

int group_sum(UltimaNnGroup* group, double* values, int32_t count, char* error, size_t error_size) {
  return guarded(error, error_size, [&] {
    if (count <= 0) return;
    torch::Tensor t = torch::from_blob(values, {count}, torch::kDouble).clone();
    all_reduce_sum(*group->control, t);
    std::memcpy(values, t.data_ptr<double>(), sizeof(double) * static_cast<size_t>(count));
  });
}

// The sum over ranks as an autograd function: y = sum_r x_r on every rank;
// the gradient of x_r is the sum over ranks of y's gradients.
struct SumOverRanks : public torch::autograd::Function<SumOverRanks> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, std::int64_t group) {
    ctx->saved_data["group"] = group;
    torch::Tensor y = x.clone();
    all_reduce_sum(*reinterpret_cast<UltimaNnGroup*>(group)->tensors, y);
    return y;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto* group = reinterpret_cast<UltimaNnGroup*>(ctx->saved_data["group"].toInt());
    torch::Tensor g = grads[0].contiguous().clone();
    all_reduce_sum(*group->tensors, g);
    return {g, torch::Tensor()};
  }
};

}  // namespace

int rank(const UltimaNnGroup& group) { return group.rank; }
int world_size(const UltimaNnGroup& group) { return group.world_size; }

torch::Tensor sum_over_ranks(UltimaNnGroup& group, const torch::Tensor& x) {
  return SumOverRanks::apply(x, reinterpret_cast<std::int64_t>(&group));
}

void average_over_ranks(UltimaNnGroup& group, const std::vector<torch::Tensor>& tensors, std::size_t bucket_bytes) {
  torch::NoGradGuard no_grad;
  struct Bucket {
    std::vector<torch::Tensor> members;
    torch::Tensor flat;
    c10::intrusive_ptr<c10d::Work> work;
  };
  std::vector<Bucket> buckets;
  std::size_t filled = bucket_bytes;
  for (const torch::Tensor& t : tensors) {
    const std::size_t bytes = static_cast<std::size_t>(t.numel() * t.element_size());
    if (buckets.empty() || filled + bytes > bucket_bytes || buckets.back().members[0].scalar_type() != t.scalar_type()) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().members.push_back(t);
    filled += bytes;
  }
  for (Bucket& b : buckets) {
    std::vector<torch::Tensor> flat_parts;
    for (const torch::Tensor& t : b.members) flat_parts.push_back(t.reshape({-1}));
    b.flat = torch::cat(flat_parts);
    std::vector<torch::Tensor> one{b.flat};
    b.work = group.tensors->allreduce(one);
  }
  for (Bucket& b : buckets) {
    wait(b.work);
    b.flat.div_(group.world_size);
    std::int64_t at = 0;
    for (const torch::Tensor& t : b.members) {
      t.copy_(b.flat.narrow(0, at, t.numel()).view_as(t));
      at += t.numel();
    }
  }
}

void broadcast_from_first(UltimaNnGroup& group, const std::vector<torch::Tensor>& tensors) {
  torch::NoGradGuard no_grad;
  c10d::BroadcastOptions options;
  options.rootRank = 0;
  for (const torch::Tensor& t : tensors) {
    std::vector<torch::Tensor> one{t};
    wait(group.tensors->broadcast(one, options));
  }
}

torch::Tensor synced_batch_norm(UltimaNnGroup& group, torch::nn::BatchNorm2dImpl& bn, const torch::Tensor& input) {
  if (!bn.is_training()) return bn.forward(input);
  // Statistics in fp32 whatever autocast made of the input.
  const torch::Tensor x = input.to(torch::kFloat);
  const std::int64_t channels = x.size(1);
  const double count = static_cast<double>(x.numel() / channels);
  // Sums and sums of squares of x - shift and the row count of every rank
  // in one message. The shift, the running mean (equal on every rank), keeps
  // E[(x-s)^2] - E[x-s]^2 from cancelling where a channel's mean is large
  // beside its spread.
  const torch::Tensor shift = (bn.options.track_running_stats() ? bn.running_mean.detach()
                                                                 : torch::zeros({channels}, x.options()))
                                  .view({1, channels, 1, 1});
  const torch::Tensor centred = x - shift;
  const torch::Tensor local = torch::cat({centred.sum({0, 2, 3}), (centred * centred).sum({0, 2, 3}),
                                          torch::full({1}, count, x.options())});
  const torch::Tensor total = sum_over_ranks(group, local);
  const torch::Tensor n = total.narrow(0, 2 * channels, 1);
  const torch::Tensor shifted_mean = total.narrow(0, 0, channels) / n;
  const torch::Tensor var = (total.narrow(0, channels, channels) / n - shifted_mean * shifted_mean).clamp_min(0);
  const torch::Tensor mean = shifted_mean + shift.view({channels});
  const double eps = bn.options.eps();
  const auto shape = std::vector<std::int64_t>{1, channels, 1, 1};
  torch::Tensor y = (x - mean.view(shape)) * torch::rsqrt(var.view(shape) + eps);
  if (bn.options.affine()) y = y * bn.weight.view(shape) + bn.bias.view(shape);
  if (bn.options.track_running_stats()) {
    torch::NoGradGuard no_grad;
    const double m = bn.options.momentum().value_or(0.1);
    const torch::Tensor rows = n.detach();
    bn.running_mean.mul_(1 - m).add_(mean.detach(), m);
    bn.running_var.mul_(1 - m).add_(var.detach() * (rows / (rows - 1).clamp_min(1)), m);
    bn.num_batches_tracked.add_(1);
  }
  return y;
}

void add_group_api(UltimaNnApi& api) {
  api.group_create = group_create;
  api.group_destroy = group_destroy;
  api.group_broadcast = group_broadcast;
  api.group_sum = group_sum;
}

}  // namespace ultima::nn::dist
