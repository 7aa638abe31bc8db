#include "trainer.h"

#include <cstdlib>

#include "nn/module_api.h"
#include "nn/module_client.h"

namespace ultima::nn {
namespace {

using detail::ErrorBuffer;
using detail::take_buffer;

TrainLosses to_losses(const double (&values)[4]) { return TrainLosses{values[0], values[1], values[2], values[3]}; }

UltimaNnTrainBatch to_c(const TrainBatch& b) {
  return UltimaNnTrainBatch{b.size, b.planes, b.policy_offsets, b.policy_slots, b.policy_weights, b.wdl, b.moves_left};
}

}  // namespace

std::unique_ptr<Trainer> Trainer::create(const NetArchitecture& architecture, const std::vector<char>& payload,
                                         std::uint64_t seed, const TrainerOptions& options) {
  const NetArchitecture arch = architecture.completed();
  arch.validate();
  const UltimaNnApi& api = nn_module();
  const UltimaNnArchitecture c = detail::to_c(arch);
  // Training runs in fp32 whatever options.device.precision says.
  const UltimaNnTrainerOptions o{options.optimizer.c_str(),      options.momentum,
                                 options.weight_decay,           options.value_weight,
                                 options.moves_left_weight,      options.device.device.c_str(),
                                 options.device.threads,         options.device.interop_threads,
                                 options.precision.c_str()};
  ErrorBuffer error;
  UltimaNnTrainer* trainer = api.trainer_create(&c, payload.empty() ? nullptr : payload.data(), payload.size(), seed,
                                                &o, error.text, sizeof error.text);
  if (!trainer) error.raise("cannot create a trainer for a " + arch.text() + " network");
  return std::unique_ptr<Trainer>(new Trainer(trainer, arch));
}

Trainer::Trainer(UltimaNnTrainer* trainer, const NetArchitecture& architecture)
    : trainer_(trainer), architecture_(architecture) {}

Trainer::~Trainer() {
  if (trainer_) nn_module().trainer_destroy(trainer_);
}

void Trainer::queue_step(const TrainBatch& batch, float lr) {
  const UltimaNnTrainBatch b = to_c(batch);
  ErrorBuffer error;
  if (nn_module().trainer_step(trainer_, &b, lr, error.text, sizeof error.text) != 0)
    error.raise("training step failed");
}

TrainReport Trainer::report() {
  double means[4] = {0, 0, 0, 0};
  std::int64_t counts[3] = {0, 0, 0};
  ErrorBuffer error;
  if (nn_module().trainer_losses(trainer_, means, counts, error.text, sizeof error.text) != 0)
    error.raise("reading the training losses failed");
  return TrainReport{to_losses(means), counts[0], counts[1], counts[2]};
}

TrainLosses Trainer::step(const TrainBatch& batch, float lr) {
  report();  // steps queued before are not this one's
  queue_step(batch, lr);
  const TrainReport r = report();
  if (r.nonfinite > 0) throw NnModuleError("training step failed: the loss is not finite; no step taken");
  return r.mean;
}

TrainLosses Trainer::measure(const TrainBatch& batch) {
  const UltimaNnTrainBatch b = to_c(batch);
  double losses[4] = {0, 0, 0, 0};
  ErrorBuffer error;
  if (nn_module().trainer_measure(trainer_, &b, losses, error.text, sizeof error.text) != 0)
    error.raise("measuring the losses failed");
  return to_losses(losses);
}

std::vector<char> Trainer::state() const {
  char* data = nullptr;
  std::uint64_t size = 0;
  ErrorBuffer error;
  if (nn_module().trainer_state(trainer_, &data, &size, error.text, sizeof error.text) != 0)
    error.raise("cannot save the trainer's state");
  return take_buffer(data, size);
}

void Trainer::restore(const std::vector<char>& state) {
  ErrorBuffer error;
  if (nn_module().trainer_restore(trainer_, state.data(), state.size(), error.text, sizeof error.text) != 0)
    error.raise("cannot restore the trainer's state");
}

std::vector<char> Trainer::payload() const {
  char* data = nullptr;
  std::uint64_t size = 0;
  ErrorBuffer error;
  if (nn_module().trainer_payload(trainer_, &data, &size, error.text, sizeof error.text) != 0)
    error.raise("cannot serialize the trained network");
  return take_buffer(data, size);
}

void Trainer::join(ProcessGroup& group) {
  ErrorBuffer error;
  if (nn_module().trainer_join(trainer_, group.handle(), error.text, sizeof error.text) != 0)
    error.raise("the trainer cannot join the process group");
}

}  // namespace ultima::nn
