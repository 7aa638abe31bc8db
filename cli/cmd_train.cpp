// ultima train: the trainer on a run directory. Trains on the window of the
// run's samples from its last checkpoint, then exports a new model version.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "commands.h"
#include "common.h"
#include "launch.h"
#include "nn/data/run_lock.h"
#include "nn/distributed.h"
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
  bool watch = false;
  std::uint64_t export_every = 0;
  double poll_seconds = 10;
  int nproc = 0;
};

// Exports the trainer's weights as the next model version, unless the
// latest already holds this step (a run killed after its export). Every
// rank calls it; rank 0 decides.
std::uint64_t export_next(const data::RunDir& run, const RunConfig& config, training::TrainingRun& trainer) {
  std::uint64_t latest = 0, held = 0;
  if (trainer.writer()) {
    latest = run.latest_model().value_or(0);
    held = latest > 0 && nn::read_model_header(run.model_path(latest)).training_step == trainer.step();
  }
  if (nn::ProcessGroup* group = trainer.group()) {
    latest = group->agree(latest);
    held = group->agree(held);
  }
  if (held) {
    if (trainer.writer()) spdlog::info("train: model {} already holds step {}", latest, trainer.step());
    return latest;
  }
  const std::string path = trainer.export_model(latest + 1, config.rules.name());
  if (trainer.writer()) spdlog::info("train: exported model {} ({})", latest + 1, path);
  return latest + 1;
}

// Whether any rank was asked to stop (every rank asks, at the same points).
bool stopping(training::TrainingRun& trainer) {
  nn::ProcessGroup* group = trainer.group();
  return group ? group->any(stop_requested()) : stop_requested().load();
}

// Continuous training: steps as the data allows (at most train_ratio
// samples trained per sample played), a candidate exported every `every`
// steps, promoted at once when the config promotes every candidate (else a
// gatekeeper decides). Ends on SIGINT/SIGTERM.
void train_watch(const data::RunDir& run, const RunConfig& config, training::TrainingRun& trainer,
                 data::RoleLock* role, const TrainOptions& o,
                 const std::function<void(const training::TrainProgress&)>& progress) {
  const std::uint64_t every = o.export_every ? o.export_every : config.train_stage.min_steps;
  const auto batch = static_cast<double>(config.training.batch_size);
  if (trainer.writer())
    spdlog::info("train: watching {} for samples; a candidate every {} steps, at most {:g} samples trained per "
                 "sample played",
                 run.path("selfplay"), every, config.train_stage.train_ratio);
  while (!stopping(trainer)) {
    trainer.refresh_samples();
    const std::uint64_t total = trainer.store().total();
    const auto allowed = static_cast<std::uint64_t>(config.train_stage.train_ratio * total / batch);
    if (trainer.step() >= allowed) {
      if (role)
        role->heartbeat({{"step", std::to_string(trainer.step())},
                         {"samples", std::to_string(total)},
                         {"state", "waiting for samples"}});
      for (int i = 0; i < static_cast<int>(o.poll_seconds * 10) && !stop_requested(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    const std::uint64_t next_export = (trainer.step() / every + 1) * every;
    if (!trainer.train_until(std::min(allowed, next_export), progress, &stop_requested())) break;
    if (trainer.step() % every != 0) continue;
    const std::uint64_t version = export_next(run, config, trainer);
    if (config.eval.promotion == "continuous" && trainer.writer()) {
      run.set_best_model(version);
      spdlog::info("train: model {} is now the run's best (promotion: continuous)", version);
    }
  }
  if (trainer.writer())
    spdlog::info("train: stopped at step {} (checkpoint written); run again to go on", trainer.step());
}

// This process's place in data-parallel training, from the launch
// environment (nn/distributed.h); nullopt when it trains alone.
std::optional<nn::LaunchEnvironment> launch_environment() {
  try {
    std::optional<nn::LaunchEnvironment> e = nn::LaunchEnvironment::read();
    if (e && e->world_size > 1) return e;
    return std::nullopt;
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string("train: the launch environment is malformed: ") + e.what());
  }
}

void run_train_command(const TrainOptions& o) {
  const std::optional<nn::LaunchEnvironment> launch = launch_environment();
  const int rank = launch ? launch->rank : 0;
  require_run(o.run_dir);
  const RunConfig config = resolve_run_config(o.run_dir, o.config);
  data::RunDir run(o.run_dir);
  // Rank 0 holds the trainer's role for all ranks.
  std::string warning;
  std::unique_ptr<data::RoleLock> role;
  if (rank == 0) role = std::make_unique<data::RoleLock>(run, "trainer", &warning);
  setup_logging(run, rank == 0 ? "train" : "train-rank" + std::to_string(rank));
  if (!warning.empty()) spdlog::warn("train: {}", warning);
  install_stop_handlers();
  nn::DeviceOptions device;
  device.device = config.train_stage.device;
  device.threads = config.train_stage.threads;
  std::unique_ptr<nn::ProcessGroup> group;
  if (launch) {
    const nn::GroupOptions g = nn::GroupOptions::launched(*launch, device.device);
    device.device = g.device;  // one device per rank
    spdlog::info("train: rank {} of {} (from {}), device {}, meeting at {}:{}", launch->rank, launch->world_size,
                 launch->source, device.device, launch->master_addr, launch->master_port);
    group = nn::ProcessGroup::create(g);
  }
  training::TrainingRun trainer(run, config.training, device, group.get());
  const auto progress = [&](const training::TrainProgress& p) {
    role->heartbeat({{"step", std::to_string(p.step) + "/" + std::to_string(p.target)},
                     {"samples", std::to_string(p.total_samples)},
                     {"ranks", std::to_string(group ? group->world_size() : 1)}});
    spdlog::info("train: step {}/{}, loss {:.3f} (policy {:.3f}, value {:.3f}, moves left {:.3f}), lr {:.4g}, "
                 "{:.0f} samples/s, window {}/{}, ETA {}",
                 p.step, p.target, p.losses.total, p.losses.policy, p.losses.value, p.losses.moves_left, p.lr,
                 p.samples_per_second, p.window, p.total_samples,
                 format_duration(p.samples_per_second > 0
                                     ? (p.target - p.step) * config.training.batch_size / p.samples_per_second
                                     : -1));
  };
  if (o.watch) return train_watch(run, config, trainer, role.get(), o, progress);
  trainer.refresh_samples();
  if (trainer.store().total() == 0)
    throw std::runtime_error("no samples in " + run.path("selfplay") + " (run ultima selfplay first)");
  const std::uint64_t target =
      o.until ? o.until : trainer.step() + (o.steps ? o.steps : config.train_stage.max_steps);
  if (trainer.writer())
    spdlog::info("train: step {} -> {}, {} samples in {} shards ({} skipped)", trainer.step(), target,
                 trainer.store().total(), trainer.store().shard_count(), trainer.store().skipped());
  const bool finished = trainer.train_until(target, progress, &stop_requested());
  if (!finished) {
    if (trainer.writer())
      spdlog::info("train: stopped at step {} (checkpoint written); run again to go on", trainer.step());
    return;
  }
  const std::uint64_t version = export_next(run, config, trainer);
  if (o.promote && trainer.writer()) {
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
  cmd->add_flag("--watch", o->watch,
                "train on as samples arrive (at most training.train_ratio samples trained per sample played), "
                "exporting a candidate every --export-every steps, until SIGINT/SIGTERM")
      ->excludes("--steps")
      ->excludes("--until")
      ->excludes("--promote");
  cmd->add_option("--export-every", o->export_every, "with --watch: steps between candidates (default: training.min_steps)")
      ->check(CLI::Range(1, 1000000000));
  cmd->add_option("--poll-seconds", o->poll_seconds, "with --watch: how often to look for new samples (default 10)")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--nproc", o->nproc,
                  "data-parallel training in N processes on this machine (sets WORLD_SIZE, RANK, LOCAL_RANK, "
                  "MASTER_ADDR, MASTER_PORT for each; see deploy/README.md for clusters)")
      ->check(CLI::Range(1, 1024));
  cmd->callback([o] {
    if (o->nproc > 1) return launch_ranks(o->nproc);
    run_train_command(*o);
  });
}

}  // namespace ultima::cli
