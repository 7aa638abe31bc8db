// ultima train: the trainer on a run directory. Trains on the window of the
// run's samples from its last checkpoint, then exports a new model version.
#include <spdlog/spdlog.h>

#include <memory>
#include <string>

#include "commands.h"
#include "common.h"
#include "nn/data/run_lock.h"
#include "nn/model_file.h"
#include "training/loop/loop.h"

namespace ultima::cli {

using namespace ultima::loop;
namespace {

struct TrainOptions {
  std::string config;
  std::string run_dir = "runs/main";
  std::uint64_t steps = 0;
  std::uint64_t until = 0;
  bool promote = false;
};

void run_train_command(const TrainOptions& o) {
  require_run(o.run_dir);
  const RunConfig config = resolve_run_config(o.run_dir, o.config);
  selfplay::RunDir run(o.run_dir);
  std::string warning;
  selfplay::RoleLock role(run, "trainer", &warning);
  setup_logging(run, "train");
  if (!warning.empty()) spdlog::warn("train: {}", warning);
  install_stop_handlers();
  nn::DeviceOptions device;
  device.device = config.train_stage.device;
  device.threads = config.train_stage.threads;
  training::TrainingRun trainer(run, config.training, device);
  trainer.refresh_samples();
  if (trainer.store().total() == 0)
    throw std::runtime_error("no samples in " + run.path("selfplay") + " (run ultima selfplay first)");
  const std::uint64_t target =
      o.until ? o.until : trainer.step() + (o.steps ? o.steps : config.train_stage.max_steps);
  spdlog::info("train: step {} -> {}, {} samples in {} shards ({} skipped)", trainer.step(), target,
               trainer.store().total(), trainer.store().shard_count(), trainer.store().skipped());
  const bool finished = trainer.train_until(
      target,
      [&](const training::TrainProgress& p) {
        role.heartbeat({{"step", std::to_string(p.step) + "/" + std::to_string(p.target)},
                        {"samples", std::to_string(p.total_samples)}});
        spdlog::info("train: step {}/{}, loss {:.3f} (policy {:.3f}, value {:.3f}, moves left {:.3f}), lr {:.4g}, "
                     "{:.0f} samples/s, window {}/{}, ETA {}",
                     p.step, p.target, p.losses.total, p.losses.policy, p.losses.value, p.losses.moves_left, p.lr,
                     p.samples_per_second, p.window, p.total_samples,
                     format_duration(p.samples_per_second > 0
                                         ? (p.target - p.step) * config.training.batch_size / p.samples_per_second
                                         : -1));
      },
      &stop_requested());
  if (!finished) {
    spdlog::info("train: stopped at step {} (checkpoint written); run again to go on", trainer.step());
    return;
  }
  // A run killed after its export and started again exports nothing new.
  const std::uint64_t latest = run.latest_model().value_or(0);
  std::uint64_t version = latest;
  if (latest > 0 && nn::read_model_header(run.model_path(latest)).training_step == trainer.step()) {
    spdlog::info("train: model {} already holds step {}", latest, trainer.step());
  } else {
    version = latest + 1;
    const std::string path = trainer.export_model(version, config.rules.name());
    spdlog::info("train: exported model {} ({})", version, path);
  }
  if (o.promote) {
    run.set_best_model(version);
    spdlog::info("train: model {} is now the run's best", version);
  }
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto o = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand("train", "train on the run's samples and export a new model version");
  cmd->add_option("--config", o->config, "run config; default: the run directory's config.yaml, else built-in");
  cmd->add_option("--run-dir", o->run_dir, "run directory (default runs/main)");
  cmd->add_option("--steps", o->steps, "optimizer steps (default: training.max_steps)")
      ->check(CLI::Range(1, 1000000000));
  cmd->add_option("--until", o->until, "train until this total step count (a restart after a kill goes on to it)")
      ->check(CLI::Range(1, 1000000000))
      ->excludes("--steps");
  cmd->add_flag("--promote", o->promote, "make the exported model the one self-play uses");
  cmd->callback([o] { run_train_command(*o); });
}

}  // namespace ultima::cli
