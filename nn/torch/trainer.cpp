// The module's trainer: the LibTorch side of nn/trainer.h behind the C
// interface of module_api.h (trainer_* entries). An UltimaNet of
// network.h in fp32, an optimizer, the loss; state blobs are LibTorch
// archives. Like module.cpp, it includes LibTorch, so it lives only in
// libultima_nn.so.
#include <ATen/Parallel.h>
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

Targets to_tensors(const UltimaNnTrainer& t, int32_t batch, const float* planes, const float* policy,
                   const float* wdl, const float* moves_left) {
  if (batch <= 0) throw std::invalid_argument("a training batch needs at least one position");
  if (!planes || !policy || !wdl || !moves_left) throw std::invalid_argument("a training batch lacks an array");
  const NetArchitecture& a = t.architecture;
  // The caller's arrays are only read; on the CPU they are used in place.
  auto wrap = [&](const float* data, c10::IntArrayRef sizes) {
    return torch::from_blob(const_cast<float*>(data), sizes, torch::kFloat).to(t.device);
  };
  return Targets{wrap(planes, {batch, a.input_planes, 8, 8}), wrap(policy, {batch, a.policy_planes * 64}),
                 wrap(wdl, {batch, 3}), wrap(moves_left, {batch})};
}

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
  const NetOutput out = t.net->forward(in.planes);
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

void write_losses(UltimaNnTrainer& t, const LossTensors& l, double* losses, bool shared) {
  torch::Tensor all = torch::stack({l.policy.detach(), l.value.detach(), l.moves_left.detach(), l.total.detach()});
  if (shared) dist::average_over_ranks(*t.group, {all});
  all = all.to(torch::kCPU, torch::kDouble);
  for (int i = 0; i < 4; ++i) losses[i] = all[i].item<double>();
}

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

int trainer_step(UltimaNnTrainer* t, int32_t batch, const float* planes, const float* policy, const float* wdl,
                 const float* moves_left, float lr, double* losses, char* error, size_t error_size) {
  return guarded(error, error_size, [&] {
    if (!(lr >= 0) || !std::isfinite(lr)) throw std::invalid_argument("learning rate " + std::to_string(lr));
    apply_threads(*t);
    const Targets in = to_tensors(*t, batch, planes, policy, wdl, moves_left);
    t->net->train();
    t->optimizer->zero_grad();
    // Batch norm's running statistics change in the forward pass; kept to
    // be put back when the step is refused.
    std::vector<torch::Tensor> buffers;
    for (const torch::Tensor& b : t->net->buffers()) buffers.push_back(b.clone());
    const LossTensors l = compute_losses(*t, in);
    write_losses(*t, l, losses, t->group != nullptr);
    // A non-finite loss would poison every weight: no step, nothing changed.
    if (!std::isfinite(losses[3])) {
      torch::NoGradGuard no_grad;
      std::size_t i = 0;
      for (torch::Tensor& b : t->net->buffers()) b.copy_(buffers[i++]);
      throw std::runtime_error("the loss is not finite (policy " + std::to_string(losses[0]) + ", value " +
                               std::to_string(losses[1]) + ", moves left " + std::to_string(losses[2]) +
                               "); no step taken");
    }
    l.total.backward();
    if (t->group) {
      std::vector<torch::Tensor> grads;
      for (torch::Tensor& p : t->net->parameters()) {
        if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
        grads.push_back(p.grad());
      }
      dist::average_over_ranks(*t->group, grads);
    }
    for (auto& group : t->optimizer->param_groups()) group.options().set_lr(lr);
    t->optimizer->step();
  });
}

int trainer_measure(UltimaNnTrainer* t, int32_t batch, const float* planes, const float* policy, const float* wdl,
                    const float* moves_left, double* losses, char* error, size_t error_size) {
  return guarded(error, error_size, [&] {
    apply_threads(*t);
    const Targets in = to_tensors(*t, batch, planes, policy, wdl, moves_left);
    torch::NoGradGuard no_grad;
    t->net->eval();
    write_losses(*t, compute_losses(*t, in), losses, false);
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
    t->net = net;
    t->optimizer = std::move(optimizer);
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
  api.trainer_measure = trainer_measure;
  api.trainer_state = trainer_state;
  api.trainer_restore = trainer_restore;
  api.trainer_payload = trainer_payload;
  api.trainer_join = trainer_join;
}

}  // namespace ultima::nn
