// The module's trainer: the LibTorch side of nn/trainer.h behind the C
// interface of module_api.h (trainer_* entries). An UltimaNet of
// network.h with fp32 weights, an optimizer, the loss, optionally bf16 or
// fp16 autocast; state blobs are LibTorch archives. Like module.cpp, it
// includes LibTorch, so it lives only in libultima_nn.so.
//
// A step never waits for the device: the batch goes up through pinned
// memory without blocking, the losses are added up on the device, and a
// step whose loss is not finite (or whose fp16 gradients overflow) is
// undone on the device (the weights, batch norm statistics and optimizer
// state taken back from a copy made before it) and counted, so nothing
// reads back until trainer_losses.
#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/Reduction.h>
#include <torch/cuda.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>

#include "nn/module_api.h"
#include "nn/torch/distributed.h"
#include "nn/torch/module_util.h"
#include "nn/torch/net.h"

namespace {

using ultima::nn::NetArchitecture;

// What the trainer was made with; a state blob records it, and restore()
// refuses one of another architecture or optimizer.
enum class OptimizerKind : std::int64_t { kSgd = 0, kAdamW = 1 };
constexpr std::int64_t kStateFormat = 1;
enum class Precision { kFp32, kBf16, kFp16 };

}  // namespace

struct UltimaNnTrainer {
  NetArchitecture architecture;
  OptimizerKind kind = OptimizerKind::kSgd;
  UltimaNnTrainerOptions options{};  // its strings are not kept
  torch::Device device{torch::kCPU};
  int threads = 0;
  ultima::nn::UltimaNet net{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  UltimaNnGroup* group = nullptr;  // data-parallel training when set (not owned)
  Precision precision = Precision::kFp32;
  // On the device: policy, value, moves-left and total loss summed over the
  // steps that counted; steps whose loss was not finite; fp16 steps skipped
  // for an overflow. steps_queued on the host.
  torch::Tensor loss_sums, nonfinite_steps, overflow_steps;
  std::int64_t steps_queued = 0;
  // fp16's dynamic loss scale and the steps since it last shrank.
  torch::Tensor loss_scale, scale_good_steps;
};

namespace ultima::nn {
namespace {

using detail::copy_out;
using detail::device_of;
using detail::from_c;
using detail::guarded;
using detail::message_of;
using detail::write_error;

std::vector<std::int64_t> architecture_fields(const NetArchitecture& a) {
  return {a.input_planes,   a.policy_planes, a.blocks, a.channels, a.se_channels, a.value_channels, a.value_hidden,
          a.moves_left_channels, a.moves_left_hidden};
}

std::string architecture_text(const NetArchitecture& a) {
  return std::to_string(a.blocks) + "x" + std::to_string(a.channels) + " se" + std::to_string(a.se_channels);
}

const char* optimizer_name(OptimizerKind kind) { return kind == OptimizerKind::kSgd ? "sgd" : "adamw"; }

// Thread counts are per process, and OpenMP's per calling thread: applied on
// every call, as module.cpp's forward() does.
void apply_threads(const UltimaNnTrainer& t) {
  static std::once_flag interop_once;
  std::call_once(interop_once, [&] { detail::set_interop_threads(t.options.interop_threads); });
  thread_local int applied = -1;
  if (t.threads > 0 && applied != t.threads) {
    at::set_num_threads(t.threads);
    applied = t.threads;
  }
}

// Random initialization draws from LibTorch's global generator.
UltimaNet make_net(const NetArchitecture& architecture, std::uint64_t seed) {
  static std::mutex m;
  std::lock_guard lock(m);
  torch::manual_seed(seed);
  return UltimaNet(architecture);
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const UltimaNnTrainer& t, UltimaNet& net) {
  // The learning rate is set before every step.
  if (t.kind == OptimizerKind::kSgd)
    return std::make_unique<torch::optim::SGD>(net->parameters(), torch::optim::SGDOptions(0.01)
                                                                      .momentum(t.options.momentum)
                                                                      .nesterov(t.options.momentum > 0)
                                                                      .weight_decay(t.options.weight_decay));
  return std::make_unique<torch::optim::AdamW>(
      net->parameters(), torch::optim::AdamWOptions(0.001)
                             .betas(std::make_tuple(static_cast<double>(t.options.momentum), 0.999))
                             .weight_decay(t.options.weight_decay));
}

struct Targets {
  torch::Tensor planes, policy, wdl, moves_left;
};

// The batch on the trainer's device, the policy target made dense there
// from its sparse entries. On the CPU the caller's arrays are used in
// place; for a GPU they are gathered into pinned memory and copied without
// blocking (LibTorch's pinned allocator keeps the block until the copy is
// done).
Targets to_tensors(const UltimaNnTrainer& t, const UltimaNnTrainBatch* b) {
  if (!b) throw std::invalid_argument("no training batch");
  const std::int32_t batch = b->size;
  if (batch <= 0) throw std::invalid_argument("a training batch needs at least one position");
  if (!b->planes || !b->policy_offsets || !b->wdl || !b->moves_left)
    throw std::invalid_argument("a training batch lacks an array");
  const NetArchitecture& a = t.architecture;
  const std::int64_t slots = static_cast<std::int64_t>(a.policy_planes) * 64;
  // Offsets index policy_slots and policy_weights as they are (a slice of a
  // larger batch keeps its offsets), so the entries are [base, base + entries).
  const std::int32_t base = b->policy_offsets[0];
  const std::int32_t entries = b->policy_offsets[batch] - base;
  if (base < 0 || entries < 0 || (entries > 0 && (!b->policy_slots || !b->policy_weights)))
    throw std::invalid_argument("the batch's policy offsets are malformed");
  std::vector<std::int64_t> rows_and_slots(2 * static_cast<std::size_t>(entries));
  for (std::int32_t row = 0; row < batch; ++row) {
    const std::int32_t from = b->policy_offsets[row], to = b->policy_offsets[row + 1];
    if (to < from || from < base || to > base + entries)
      throw std::invalid_argument("the batch's policy offsets are malformed");
    for (std::int32_t e = from; e < to; ++e) {
      const std::int32_t slot = b->policy_slots[e];
      if (slot < 0 || slot >= slots)
        throw std::invalid_argument("policy slot " + std::to_string(slot) + " of row " + std::to_string(row) +
                                    " is outside 0.." + std::to_string(slots - 1));
      rows_and_slots[static_cast<std::size_t>(e - base)] = row;
      rows_and_slots[static_cast<std::size_t>(entries + e - base)] = slot;
    }
  }
  const std::int64_t plane_floats = static_cast<std::int64_t>(batch) * a.input_planes * 64;
  auto blob = [](const void* data, std::int64_t n, torch::ScalarType type) {
    return torch::from_blob(const_cast<void*>(data), {n}, type);
  };
  torch::Tensor floats, indices;
  if (t.device.is_cpu()) {
    floats = torch::cat({blob(b->planes, plane_floats, torch::kFloat), blob(b->wdl, 3 * batch, torch::kFloat),
                         blob(b->moves_left, batch, torch::kFloat),
                         entries ? blob(b->policy_weights + base, entries, torch::kFloat) : torch::empty({0})});
    indices = torch::from_blob(rows_and_slots.data(), {2 * static_cast<std::int64_t>(entries)}, torch::kLong).clone();
  } else {
    const auto pinned = torch::TensorOptions().pinned_memory(true);
    torch::Tensor host_floats = torch::empty({plane_floats + 4 * batch + entries}, pinned.dtype(torch::kFloat));
    float* at = host_floats.data_ptr<float>();
    std::memcpy(at, b->planes, sizeof(float) * plane_floats);
    std::memcpy(at + plane_floats, b->wdl, sizeof(float) * 3 * batch);
    std::memcpy(at + plane_floats + 3 * batch, b->moves_left, sizeof(float) * batch);
    if (entries) std::memcpy(at + plane_floats + 4 * batch, b->policy_weights + base, sizeof(float) * entries);
    torch::Tensor host_indices = torch::empty({2 * static_cast<std::int64_t>(entries)}, pinned.dtype(torch::kLong));
    std::memcpy(host_indices.data_ptr<std::int64_t>(), rows_and_slots.data(), sizeof(std::int64_t) * 2 * entries);
    floats = host_floats.to(t.device, /*non_blocking=*/true);
    indices = host_indices.to(t.device, /*non_blocking=*/true);
  }
  Targets out;
  out.planes = floats.narrow(0, 0, plane_floats).view({batch, a.input_planes, 8, 8});
  out.wdl = floats.narrow(0, plane_floats, 3 * batch).view({batch, 3});
  out.moves_left = floats.narrow(0, plane_floats + 3 * batch, batch);
  out.policy = torch::zeros({batch, slots}, torch::TensorOptions().device(t.device));
  if (entries)
    out.policy.index_put_({indices.narrow(0, 0, entries), indices.narrow(0, entries, entries)},
                          floats.narrow(0, plane_floats + 4 * batch, entries), /*accumulate=*/true);
  return out;
}

// LibTorch's autocast switches for one device type (CUDA or CPU); their
// names changed in LibTorch 2.4.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool autocast_on(bool cuda) { return at::autocast::is_autocast_enabled(cuda ? at::kCUDA : at::kCPU); }
at::ScalarType autocast_type(bool cuda) { return at::autocast::get_autocast_dtype(cuda ? at::kCUDA : at::kCPU); }
void set_autocast(bool cuda, bool on, at::ScalarType type) {
  at::autocast::set_autocast_dtype(cuda ? at::kCUDA : at::kCPU, type);
  at::autocast::set_autocast_enabled(cuda ? at::kCUDA : at::kCPU, on);
}
#else
bool autocast_on(bool cuda) { return cuda ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled(); }
at::ScalarType autocast_type(bool cuda) {
  return cuda ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
}
void set_autocast(bool cuda, bool on, at::ScalarType type) {
  if (cuda) {
    at::autocast::set_autocast_gpu_dtype(type);
    at::autocast::set_enabled(on);
  } else {
    at::autocast::set_autocast_cpu_dtype(type);
    at::autocast::set_cpu_enabled(on);
  }
}
#endif

// Autocast for the forward pass in bf16 or fp16 on the trainer's device,
// for as long as it lives.
class AutocastScope {
 public:
  explicit AutocastScope(const UltimaNnTrainer& t) : on_(t.precision != Precision::kFp32), cuda_(t.device.is_cuda()) {
    if (!on_) return;
    was_ = autocast_on(cuda_);
    old_type_ = autocast_type(cuda_);
    set_autocast(cuda_, true, t.precision == Precision::kFp16 ? at::kHalf : at::kBFloat16);
    at::autocast::increment_nesting();
  }
  ~AutocastScope() {
    if (!on_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    set_autocast(cuda_, was_, old_type_);
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool on_, cuda_, was_ = false;
  at::ScalarType old_type_ = at::kFloat;
};

struct LossTensors {
  torch::Tensor policy, value, moves_left, total;
};

// In a group (training mode), each rank's losses are of its share of one
// batch; averaged over ranks (as the gradients are), they are the batch's.
// The policy and value losses are means over equal shares, so that holds
// as they are; the moves-left loss is a mean over the rows with a known
// target, which the ranks count together.
LossTensors compute_losses(UltimaNnTrainer& t, const Targets& in) {
  const bool shared = t.group && t.net->is_training();
  NetOutput out;
  {
    AutocastScope autocast(t);
    out = t.net->forward(in.planes);
  }
  out.policy = out.policy.to(torch::kFloat);
  out.wdl = out.wdl.to(torch::kFloat);
  if (out.moves_left.defined()) out.moves_left = out.moves_left.to(torch::kFloat);
  LossTensors l;
  l.policy = -(in.policy * torch::log_softmax(out.policy, 1)).sum(1).mean();
  l.value = -(in.wdl * torch::log_softmax(out.wdl, 1)).sum(1).mean();
  if (out.moves_left.defined()) {
    // Rows with a negative target (unknown game length) count for nothing;
    // the mask keeps the head in the graph, so its gradient is zero, not absent.
    const torch::Tensor known = (in.moves_left >= 0).to(torch::kFloat);
    const torch::Tensor huber =
        torch::smooth_l1_loss(out.moves_left / 20, in.moves_left.clamp_min(0) / 20, at::Reduction::None);
    if (shared) {
      const torch::Tensor all_known = dist::sum_over_ranks(*t.group, known.sum().detach().reshape({1}));
      l.moves_left = (huber * known).sum() * dist::world_size(*t.group) / all_known.squeeze().clamp_min(1);
    } else {
      l.moves_left = (huber * known).sum() / known.sum().clamp_min(1);
    }
  } else {
    l.moves_left = torch::zeros({}, torch::TensorOptions().device(t.device));
  }
  l.total = l.policy + t.options.value_weight * l.value + t.options.moves_left_weight * l.moves_left;
  return l;
}

// Policy, value, moves-left and total loss as one tensor on the device (the
// whole batch's, averaged over ranks, in a group).
torch::Tensor loss_vector(UltimaNnTrainer& t, const LossTensors& l, bool shared) {
  torch::Tensor all = torch::stack({l.policy.detach(), l.value.detach(), l.moves_left.detach(), l.total.detach()});
  if (shared) dist::average_over_ranks(*t.group, {all});
  return all;
}

// Every tensor the optimizer keeps for a parameter (momentum; AdamW's
// moments). (The state map's key type differs between LibTorch versions;
// only its values are used.)
std::vector<torch::Tensor> optimizer_tensors(UltimaNnTrainer& t) {
  std::vector<torch::Tensor> out;
  for (auto& entry : t.optimizer->state()) {
    if (auto* sgd = dynamic_cast<torch::optim::SGDParamState*>(entry.second.get())) {
      if (sgd->momentum_buffer().defined()) out.push_back(sgd->momentum_buffer());
    } else if (auto* adam = dynamic_cast<torch::optim::AdamWParamState*>(entry.second.get())) {
      out.push_back(adam->exp_avg());
      out.push_back(adam->exp_avg_sq());
    }
  }
  return out;
}

// What a step changes, copied before it, to be taken back on the device
// where the step must not count.
struct Snapshot {
  std::vector<torch::Tensor> live, saved;
  std::size_t optimizer_from = 0;
};

Snapshot take_snapshot(UltimaNnTrainer& t) {
  torch::NoGradGuard no_grad;
  Snapshot s;
  for (const torch::Tensor& p : t.net->parameters()) s.live.push_back(p);
  for (const torch::Tensor& b : t.net->buffers()) s.live.push_back(b);
  s.optimizer_from = s.live.size();
  for (const torch::Tensor& o : optimizer_tensors(t)) s.live.push_back(o);
  for (const torch::Tensor& x : s.live) s.saved.push_back(x.clone());
  return s;
}

// Where `keep` (a device bool) is false: everything as it was. Optimizer
// state made by this step (the first) becomes zeros, which the optimizer
// reads as none.
void keep_or_restore(UltimaNnTrainer& t, const Snapshot& s, const torch::Tensor& keep) {
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < s.live.size(); ++i) {
    torch::Tensor x = s.live[i];
    x.copy_(torch::where(keep, x, s.saved[i]));
  }
  const std::vector<torch::Tensor> now = optimizer_tensors(t);
  for (const torch::Tensor& o : now) {
    bool known = false;
    for (std::size_t i = s.optimizer_from; i < s.live.size() && !known; ++i) known = s.live[i].is_same(o);
    if (!known) {
      torch::Tensor x = o;
      x.copy_(torch::where(keep, x, torch::zeros_like(x)));
    }
  }
}

void reset_loss_sums(UltimaNnTrainer& t) {
  const auto on_device = torch::TensorOptions().device(t.device);
  t.loss_sums = torch::zeros({4}, on_device.dtype(torch::kDouble));
  t.nonfinite_steps = torch::zeros({}, on_device.dtype(torch::kLong));
  t.overflow_steps = torch::zeros({}, on_device.dtype(torch::kLong));
  t.steps_queued = 0;
}

constexpr double kInitialLossScale = 65536.0;
constexpr std::int64_t kLossScaleGrowthSteps = 2000;

torch::Tensor state_tag(const UltimaNnTrainer& t) {
  std::vector<std::int64_t> tag{kStateFormat, static_cast<std::int64_t>(t.kind)};
  for (const std::int64_t f : architecture_fields(t.architecture)) tag.push_back(f);
  return torch::tensor(tag, torch::kLong);
}

std::vector<torch::Tensor> weights_and_buffers(UltimaNnTrainer& t) {
  std::vector<torch::Tensor> all = t.net->parameters();
  for (const torch::Tensor& b : t.net->buffers()) all.push_back(b);
  return all;
}

// A joined trainer's net: batch norm over the whole batch, rank 0's
// weights and statistics.
void attach(UltimaNnTrainer& t) {
  UltimaNnGroup* group = t.group;
  t.net->set_batch_norm([group](torch::nn::BatchNorm2dImpl& bn, const torch::Tensor& x) {
    return dist::synced_batch_norm(*group, bn, x);
  });
  dist::broadcast_from_first(*group, weights_and_buffers(t));
}

// Batch norm's running statistics are equal on every rank by construction
// (each rank updates them from the same whole-batch statistics); sent from
// rank 0 before they are saved anyway, so that what is written never
// depends on the rank that writes it.
void equalize_buffers(UltimaNnTrainer& t) {
  if (t.group) dist::broadcast_from_first(*t.group, t.net->buffers());
}

// ---- the interface ----

UltimaNnTrainer* trainer_create(const UltimaNnArchitecture* architecture, const void* payload, uint64_t payload_bytes,
                                uint64_t seed, const UltimaNnTrainerOptions* options, char* error, size_t error_size) {
  try {
    auto t = std::make_unique<UltimaNnTrainer>();
    t->architecture = from_c(*architecture);
    t->options = *options;
    t->options.optimizer = nullptr;
    t->options.device = nullptr;
    const std::string name = options->optimizer ? options->optimizer : "sgd";
    if (name == "sgd")
      t->kind = OptimizerKind::kSgd;
    else if (name == "adamw")
      t->kind = OptimizerKind::kAdamW;
    else
      throw std::invalid_argument("unknown optimizer '" + name + "' (sgd, adamw)");
    if (!(options->momentum >= 0 && options->momentum < 1))
      throw std::invalid_argument("momentum " + std::to_string(options->momentum) + " is outside [0, 1)");
    if (!(options->weight_decay >= 0)) throw std::invalid_argument("weight decay must not be negative");
    t->device = device_of(options->device);
    t->threads = options->threads;
    const std::string precision = options->precision ? options->precision : "fp32";
    if (precision == "fp32")
      t->precision = Precision::kFp32;
    else if (precision == "bf16")
      t->precision = Precision::kBf16;
    else if (precision == "fp16")
      t->precision = Precision::kFp16;
    else
      throw std::invalid_argument("unknown training precision '" + precision + "' (fp32, bf16, fp16)");
    if (t->precision == Precision::kFp16 && !t->device.is_cuda())
      throw std::invalid_argument("fp16 training needs a CUDA device (use bf16 or fp32 on " + t->device.str() + ")");
    t->options.precision = nullptr;
    reset_loss_sums(*t);
    const auto on_device = torch::TensorOptions().device(t->device);
    t->loss_scale = torch::full({}, kInitialLossScale, on_device.dtype(torch::kFloat));
    t->scale_good_steps = torch::zeros({}, on_device.dtype(torch::kLong));
    apply_threads(*t);
    t->net = make_net(t->architecture, seed);
    if (payload) load_payload(*t->net, static_cast<const char*>(payload), payload_bytes);
    t->net->to(t->device);
    t->optimizer = make_optimizer(*t, t->net);
    return t.release();
  } catch (const std::exception& e) {
    write_error(error, error_size, message_of(e));
    return nullptr;
  }
}

void trainer_destroy(UltimaNnTrainer* trainer) { delete trainer; }

int trainer_step(UltimaNnTrainer* t, const UltimaNnTrainBatch* batch, float lr, char* error, size_t error_size) {
  return guarded(error, error_size, [&] {
    if (!(lr >= 0) || !std::isfinite(lr)) throw std::invalid_argument("learning rate " + std::to_string(lr));
    apply_threads(*t);
    const Targets in = to_tensors(*t, batch);
    t->net->train();
    t->optimizer->zero_grad();
    const Snapshot before = take_snapshot(*t);
    const LossTensors l = compute_losses(*t, in);
    const torch::Tensor losses = loss_vector(*t, l, t->group != nullptr);
    const torch::Tensor finite = torch::isfinite(losses[3]);
    const bool fp16 = t->precision == Precision::kFp16;
    (fp16 ? l.total * t->loss_scale : l.total).backward();
    std::vector<torch::Tensor> grads;
    for (torch::Tensor& p : t->net->parameters()) {
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
      grads.push_back(p.grad());
    }
    if (t->group) dist::average_over_ranks(*t->group, grads);
    torch::Tensor keep = finite;
    if (fp16) {
      torch::NoGradGuard no_grad;
      torch::Tensor overflow = torch::zeros({}, torch::TensorOptions().device(t->device).dtype(torch::kBool));
      const torch::Tensor inverse = 1.0 / t->loss_scale;
      for (torch::Tensor& g : grads) {
        g.mul_(inverse);
        overflow = overflow.logical_or(torch::isfinite(g).logical_not().any());
      }
      keep = finite.logical_and(overflow.logical_not());
      t->overflow_steps.add_(finite.logical_and(overflow).to(torch::kLong));
      // Halve the scale at an overflow, double it after a run of good steps.
      const torch::Tensor good = torch::where(keep, t->scale_good_steps + 1, torch::zeros_like(t->scale_good_steps));
      const torch::Tensor grow = good >= kLossScaleGrowthSteps;
      t->loss_scale.copy_(torch::where(keep, torch::where(grow, t->loss_scale * 2, t->loss_scale), t->loss_scale / 2));
      t->scale_good_steps.copy_(torch::where(grow, torch::zeros_like(good), good));
    }
    for (auto& group : t->optimizer->param_groups()) group.options().set_lr(lr);
    t->optimizer->step();
    keep_or_restore(*t, before, keep);
    t->loss_sums.add_(torch::where(finite, losses.to(torch::kDouble), torch::zeros_like(t->loss_sums)));
    t->nonfinite_steps.add_(finite.logical_not().to(torch::kLong));
    ++t->steps_queued;
  });
}

int trainer_losses(UltimaNnTrainer* t, double* means, int64_t* counts, char* error, size_t error_size) {
  return guarded(error, error_size, [&] {
    const torch::Tensor sums = t->loss_sums.to(torch::kCPU);
    const std::int64_t nonfinite = t->nonfinite_steps.item<std::int64_t>();
    const std::int64_t overflow = t->overflow_steps.item<std::int64_t>();
    const std::int64_t counted = std::max<std::int64_t>(t->steps_queued - nonfinite, 1);
    for (int i = 0; i < 4; ++i) means[i] = sums[i].item<double>() / static_cast<double>(counted);
    counts[0] = t->steps_queued;
    counts[1] = nonfinite;
    counts[2] = overflow;
    reset_loss_sums(*t);
  });
}

int trainer_measure(UltimaNnTrainer* t, const UltimaNnTrainBatch* batch, double* losses, char* error,
                    size_t error_size) {
  return guarded(error, error_size, [&] {
    apply_threads(*t);
    const Targets in = to_tensors(*t, batch);
    torch::NoGradGuard no_grad;
    t->net->eval();
    const torch::Tensor all = loss_vector(*t, compute_losses(*t, in), false).to(torch::kCPU, torch::kDouble);
    for (int i = 0; i < 4; ++i) losses[i] = all[i].item<double>();
  });
}

int trainer_state(UltimaNnTrainer* t, char** buffer, uint64_t* bytes, char* error, size_t error_size) {
  return guarded(error, error_size, [&] {
    equalize_buffers(*t);
    torch::serialize::OutputArchive archive, model, optimizer;
    t->net->save(model);
    t->optimizer->save(optimizer);
    archive.write("ultima_trainer", state_tag(*t));
    archive.write("model", model);
    archive.write("optimizer", optimizer);
    archive.write("loss_scale", t->loss_scale.to(torch::kCPU));
    archive.write("loss_scale_good_steps", t->scale_good_steps.to(torch::kCPU));
    std::ostringstream out;
    archive.save_to(out);
    const std::string text = out.str();
    copy_out(text.data(), text.size(), buffer, bytes);
  });
}

int trainer_restore(UltimaNnTrainer* t, const char* buffer, uint64_t bytes, char* error, size_t error_size) {
  return guarded(error, error_size, [&] {
    torch::serialize::InputArchive archive;
    try {
      archive.load_from(buffer, bytes, t->device);
    } catch (const std::exception& e) {
      throw std::runtime_error("the trainer state is not a LibTorch archive (" + message_of(e) + ")");
    }
    torch::Tensor tag;
    if (!archive.try_read("ultima_trainer", tag))
      throw std::runtime_error("the archive is not a trainer state (no 'ultima_trainer' record)");
    tag = tag.to(torch::kCPU);
    const torch::Tensor expected = state_tag(*t);
    if (tag.scalar_type() != torch::kLong || !tag.sizes().equals(expected.sizes()) ||
        tag[0].item<std::int64_t>() != kStateFormat)
      throw std::runtime_error("the trainer state has an unknown format");
    if (!tag.equal(expected)) {
      NetArchitecture saved = t->architecture;
      int* fields[] = {&saved.input_planes, &saved.policy_planes, &saved.blocks, &saved.channels,
                       &saved.se_channels, &saved.value_channels, &saved.value_hidden, &saved.moves_left_channels,
                       &saved.moves_left_hidden};
      for (int i = 0; i < 9; ++i) *fields[i] = static_cast<int>(tag[2 + i].item<std::int64_t>());
      const auto kind = static_cast<OptimizerKind>(tag[1].item<std::int64_t>());
      throw std::runtime_error("the trainer state is of a " + architecture_text(saved) + " network with " +
                               optimizer_name(kind) + ", this trainer a " + architecture_text(t->architecture) +
                               " network with " + optimizer_name(t->kind));
    }
    // Loaded into a new net and optimizer, swapped in only when all is read.
    // (Its throwaway initialization reseeds LibTorch's global generator.)
    UltimaNet net = make_net(t->architecture, 0);
    net->to(t->device);
    std::unique_ptr<torch::optim::Optimizer> optimizer = make_optimizer(*t, net);
    torch::serialize::InputArchive model_archive, optimizer_archive;
    archive.read("model", model_archive);
    archive.read("optimizer", optimizer_archive);
    net->load(model_archive);
    optimizer->load(optimizer_archive);
    torch::Tensor scale, good;
    const bool has_scale = archive.try_read("loss_scale", scale) && archive.try_read("loss_scale_good_steps", good);
    t->net = net;
    t->optimizer = std::move(optimizer);
    if (has_scale) {
      t->loss_scale = scale.to(t->device, torch::kFloat).reshape({});
      t->scale_good_steps = good.to(t->device, torch::kLong).reshape({});
    }
    if (t->group) attach(*t);
  });
}

int trainer_payload(UltimaNnTrainer* t, char** payload, uint64_t* payload_bytes, char* error, size_t error_size) {
  return guarded(error, error_size, [&] {
    equalize_buffers(*t);
    const std::vector<char> bytes = save_payload(*t->net);
    copy_out(bytes.data(), bytes.size(), payload, payload_bytes);
  });
}

int trainer_join(UltimaNnTrainer* t, UltimaNnGroup* group, char* error, size_t error_size) {
  return guarded(error, error_size, [&] {
    if (!group) throw std::invalid_argument("no group to join");
    if (t->group) throw std::logic_error("the trainer is already in a group");
    t->group = group;
    try {
      attach(*t);
    } catch (...) {
      t->group = nullptr;
      t->net->set_batch_norm({});
      throw;
    }
  });
}

}  // namespace

void add_trainer_api(UltimaNnApi& api) {
  api.trainer_create = trainer_create;
  api.trainer_destroy = trainer_destroy;
  api.trainer_step = trainer_step;
  api.trainer_losses = trainer_losses;
  api.trainer_measure = trainer_measure;
  api.trainer_state = trainer_state;
  api.trainer_restore = trainer_restore;
  api.trainer_payload = trainer_payload;
  api.trainer_join = trainer_join;
}

}  // namespace ultima::nn
