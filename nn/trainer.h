// Training a network: the program's side of the module's trainer (the
// LibTorch part lives in libultima_nn.so, see module_api.h). The caller
// builds batches of plain floats (training/ does: window, shuffling,
// symmetries); one call runs forward, loss, backward and an optimizer step.
// No LibTorch here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/distributed.h"
#include "nn/model_file.h"
#include "nn/network.h"

struct UltimaNnTrainer;

namespace ultima::nn {

struct TrainerOptions {
  std::string optimizer = "sgd";  // "sgd" (Nesterov momentum) or "adamw"
  float momentum = 0.9f;          // SGD momentum; AdamW's beta1
  float weight_decay = 1e-4f;     // SGD: L2 added to the gradient; AdamW: decoupled
  float value_weight = 1.0f;      // loss = policy + value_weight * value + moves_left_weight * moves_left
  float moves_left_weight = 0.05f;
  DeviceOptions device;           // its precision is not used: see `precision`
  // "fp32"; "bf16" (autocast: the forward pass in bfloat16); "fp16"
  // (autocast in half precision with a dynamic loss scale; CUDA only).
  // Weights, optimizer state and losses stay fp32 either way.
  std::string precision = "fp32";
};

// One batch. planes: size x kInputSize; the policy target, sparse: row i's
// entries are [policy_offsets[i], policy_offsets[i + 1]), each a slot of
// policy_index.h and its probability (a distribution per row); wdl: size x
// 3 (a one-hot or soft win/draw/loss target for the side to move);
// moves_left: size floats (plies to the end; a negative value leaves that
// row out of the moves-left loss).
struct TrainBatch {
  int size = 0;
  const float* planes = nullptr;
  const std::int32_t* policy_offsets = nullptr;  // size + 1
  const std::int32_t* policy_slots = nullptr;
  const float* policy_weights = nullptr;
  const float* wdl = nullptr;
  const float* moves_left = nullptr;
};

struct TrainLosses {
  double policy = 0;      // cross-entropy, nats per sample
  double value = 0;       // WDL cross-entropy, nats per sample
  double moves_left = 0;  // Huber loss on plies / 20
  double total = 0;       // as optimized, weight decay not included
};

// The losses of the steps queued since the last report.
struct TrainReport {
  TrainLosses mean;               // over the steps that counted
  std::int64_t steps = 0;         // queued
  std::int64_t nonfinite = 0;     // whose loss was not finite: undone, nothing changed
  std::int64_t overflow = 0;      // fp16 steps skipped for overflowing gradients (the loss scale halves)
};

class Trainer {
 public:
  // Starts from a model file's weights (payload), or random weights from
  // `seed` when payload is empty. Throws NnModuleError naming the problem.
  static std::unique_ptr<Trainer> create(const NetArchitecture& architecture, const std::vector<char>& payload,
                                         std::uint64_t seed, const TrainerOptions& options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Queues one optimizer step at learning rate `lr` (train mode: batch norm
  // uses and updates batch statistics) without waiting for the device. A
  // step whose loss is not finite, or an fp16 step whose gradients
  // overflow, changes nothing and is counted in the next report.
  void queue_step(const TrainBatch& batch, float lr);
  // The losses of the steps queued since the last report (waits for them).
  TrainReport report();
  // queue_step() and report() of that one step: its losses. Throws
  // NnModuleError when its loss was not finite (the trainer unchanged).
  TrainLosses step(const TrainBatch& batch, float lr);
  // Losses without a step (eval mode, no gradients).
  TrainLosses measure(const TrainBatch& batch);
  // Weights, batch-norm statistics and optimizer state, opaque: restore()
  // on a trainer of the same architecture and options continues exactly.
  std::vector<char> state() const;
  void restore(const std::vector<char>& state);
  // The weights as a model file payload (nn/model_file.h).
  std::vector<char> payload() const;
  // Data-parallel training (nn/distributed.h): rank 0's weights go to
  // every rank, and from then on each rank's batch is its share of one
  // batch (equal shares), with batch norm over the whole batch, gradients
  // averaged over ranks and the whole batch's losses returned. step(),
  // state(), restore() and payload() become collectives; measure() and
  // report() stay local. `group` must outlive the trainer.
  void join(ProcessGroup& group);
  const NetArchitecture& architecture() const { return architecture_; }

 private:
  Trainer(UltimaNnTrainer* trainer, const NetArchitecture& architecture);
  UltimaNnTrainer* trainer_;
  NetArchitecture architecture_;
};

}  // namespace ultima::nn
