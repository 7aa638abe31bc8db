// The trainer: steps of nn::Trainer over batches from the run's samples,
// a learning-rate schedule, checkpoints that resume exactly, metrics.csv,
// and export of model versions for self-play (see nn/data/run_dir.h).
//
// Exact resume: the state after step k is the checkpoint of step k, and the
// batch of step k+1 is a function of the window and the seed (dataset.h), so
// a trainer killed at any moment and started again redoes the steps since
// its last checkpoint and ends with the same weights as one never killed
// (given the same shards and one LibTorch thread).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nn/data/run_dir.h"
#include "nn/network.h"
#include "nn/trainer.h"
#include "training/dataset.h"

namespace ultima::training {

struct TrainConfig {
  int batch_size = 256;
  std::string optimizer = "sgd";  // sgd (Nesterov momentum) or adamw
  float lr = 0.02f;
  float momentum = 0.9f;
  float weight_decay = 1e-4f;
  // lr rises linearly over warmup_steps, then: "constant"; "step" (times
  // lr_decay_factor every lr_decay_steps); "cosine" (to lr_min at
  // lr_decay_steps, then lr_min).
  int warmup_steps = 100;
  std::string lr_schedule = "constant";
  std::uint64_t lr_decay_steps = 10000;
  float lr_decay_factor = 0.3f;
  float lr_min = 0.0005f;
  float value_weight = 1.0f;
  // Share of the value target taken from the search's root value (the
  // sample's root_q, as a WDL with the least draw that has that mean)
  // instead of the game's result: 0 is the result alone.
  float q_ratio = 0.5f;
  // Share of each batch drawn from the window's tactics samples (the loop's
  // proven mates, shards tagged genNNNN-mates), which are otherwise about 2%
  // of it; 0: none apart from their place in the window. In [0, 0.9].
  float tactics_share = 0;
  float moves_left_weight = 0.05f;
  // The forward pass's arithmetic: fp32; bf16 (autocast); fp16 (autocast
  // with a dynamic loss scale, CUDA only). Weights stay fp32.
  std::string precision = "fp32";
  bool symmetries = true;
  WindowConfig window;
  // Exported models are an exponential moving average of the weights when
  // > 0, updated every k = max(1, ema_halflife / 50) steps: after step n it
  // keeps min(0.5^(k/ema_halflife), ((1+n)/(10+n))^k) of itself, so it
  // spans about the last tenth of training early on and has a half-life of
  // ema_halflife steps later. 0: the trainer's own weights are exported.
  int ema_halflife = 400;
  int checkpoint_every = 500;  // steps (a checkpoint is also written at the end of each call)
  int keep_checkpoints = 2;
  int log_every = 50;          // steps per metrics.csv row and progress line
  std::uint64_t seed = 1;

  void validate() const;  // throws std::invalid_argument naming the key
  float lr_at(std::uint64_t step) const;
};

struct TrainProgress {
  std::uint64_t step = 0, target = 0;
  float lr = 0;
  nn::TrainLosses losses;  // mean over the last log_every steps
  std::int64_t overflow_steps = 0;  // of them, fp16 steps skipped for overflowing gradients
  double samples_per_second = 0;
  std::uint64_t window = 0, total_samples = 0;
  double seconds = 0;
};

// Trains in one run directory. Starts from its newest readable checkpoint,
// else from model version 0 (which must exist: the loop and `ultima train`
// create it).
//
// Data-parallel: with a process group, every rank makes a TrainingRun on
// the same run directory and calls the same methods in the same order
// (each is then a collective). Rank 0 chooses the checkpoint and the shards
// and the others take its choice; each rank trains on its disjoint share
// of every batch; only rank 0 writes checkpoints, metrics and models; a
// stop seen by any rank stops all at the same step.
class TrainingRun {
 public:
  TrainingRun(const data::RunDir& run, TrainConfig config, nn::DeviceOptions device,
              nn::ProcessGroup* group = nullptr);
  ~TrainingRun();
  std::uint64_t step() const { return step_; }
  const TrainConfig& config() const { return config_; }
  nn::Trainer& trainer() { return *trainer_; }
  SampleStore& store() { return store_; }
  nn::ProcessGroup* group() { return group_; }
  // Whether this process writes the run's files (rank 0, or no group).
  bool writer() const { return !group_ || group_->rank() == 0; }

  // Reads new shards (all of the run's, or these paths when given).
  void refresh_samples(const std::vector<std::string>& paths = {});
  // Steps until step() == target (or `stop`). Returns false when stopped.
  // Throws std::runtime_error when there are no samples.
  bool train_until(std::uint64_t target, const std::function<void(const TrainProgress&)>& progress = {},
                   const std::atomic<bool>* stop = nullptr);
  // Writes the current weights (their moving average with ema_halflife) as
  // model `version` (atomic; by rank 0 alone, but every rank calls it).
  // Returns its path.
  std::string export_model(std::uint64_t version, const std::string& rules) const;
  void save_checkpoint();

 private:
  void load_latest_checkpoint();
  void append_metrics(const TrainProgress& p);
  void update_average();
  data::RunDir run_;
  TrainConfig config_;
  nn::ProcessGroup* group_;
  nn::NetArchitecture architecture_;
  std::unique_ptr<nn::Trainer> trainer_;
  SampleStore store_;
  BatchSampler sampler_;
  std::uint64_t step_ = 0;
  std::vector<char> average_;  // moving average of the weights (a payload), with ema_halflife
};

// Checkpoint files: checkpoints/step-NNNNNNNNN.ckpt, a text header (magic,
// step, architecture, state size, average size and FNV-1a checksum), the
// state blob and the weights' moving average (with ema_halflife).
std::string checkpoint_path(const data::RunDir& run, std::uint64_t step);

struct Checkpoint {
  std::uint64_t step = 0;
  std::vector<char> state;
  std::vector<char> average;
};
// A checkpoint file's bytes, checked against `arch`; throws
// std::runtime_error naming `path` and the problem.
Checkpoint parse_checkpoint(std::string_view bytes, const std::string& path, const nn::NetArchitecture& arch);

}  // namespace ultima::training
