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
  DeviceOptions device;           // precision is fp32 for training (autocast is not used)
};

// One batch. planes: size x kInputSize; policy: size x kPolicySize (a
// distribution per row, zeros off the target); wdl: size x 3 (a one-hot or
// soft win/draw/loss target for the side to move); moves_left: size floats
// (plies to the end; a negative value leaves that row out of the
// moves-left loss).
struct TrainBatch {
  int size = 0;
  const float* planes = nullptr;
  const float* policy = nullptr;
  const float* wdl = nullptr;
  const float* moves_left = nullptr;
};

struct TrainLosses {
  double policy = 0;      // cross-entropy, nats per sample
  double value = 0;       // WDL cross-entropy, nats per sample
  double moves_left = 0;  // Huber loss on plies / 20
  double total = 0;       // as optimized, weight decay not included
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

  // One optimizer step at learning rate `lr` (train mode: batch norm uses
  // and updates batch statistics).
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
  // state(), restore() and payload() become collectives; measure() stays
  // local. `group` must outlive the trainer.
  void join(ProcessGroup& group);
  const NetArchitecture& architecture() const { return architecture_; }

 private:
  Trainer(UltimaNnTrainer* trainer, const NetArchitecture& architecture);
  UltimaNnTrainer* trainer_;
  NetArchitecture architecture_;
};

}  // namespace ultima::nn
