// ultima bench selfplay: self-play's throughput beside the raw network's at
// the same settings, so the search's and the batching's overhead shows:
// moves and evaluated positions per second of a self-play job (random
// weights), then forward passes at its mean batch size. By default it runs
// the main job's own self-play: the network, inference and selfplay
// sections of the built-in config (configs/cpu.yaml), or of --config.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/bench_inputs.h"
#include "commands.h"
#include "common.h"
#include "nn/data/run_dir.h"
#include "nn/encoding.h"
#include "nn/network.h"
#include "selfplay/selfplay.h"
#include "training/loop/run_config.h"

namespace ultima::cli {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Each option left at 0 (or empty) keeps the config's value.
struct BenchSelfPlayOptions {
  std::string config;  // empty: the built-in config
  int games = 16;
  int parallel_games = 0;
  int playouts = 0;  // every move a full search of this many playouts
  int max_plies = 0;
  int mcts_batch = 0, max_batch = 0, input_planes = 0;
  int blocks = -1, channels = 0, se_channels = -1, threads = -1;
  std::string device, precision;
  bool puct = false, no_mate_scan = false;
};

void bench_selfplay(const BenchSelfPlayOptions& o) {
  loop::RunConfig rc = o.config.empty() ? loop::RunConfig::parse(loop::builtin_config_text(), "(built-in)")
                                        : loop::RunConfig::load(o.config);
  if (o.blocks >= 0) rc.network.blocks = o.blocks;
  if (o.channels > 0) rc.network.channels = o.channels;
  if (o.se_channels >= 0) rc.network.se_channels = o.se_channels;
  if (o.input_planes > 0) rc.network.input_planes = o.input_planes;
  if (o.max_batch > 0) rc.inference.max_batch = o.max_batch;
  if (!o.device.empty()) rc.inference.device = o.device;
  if (!o.precision.empty()) rc.inference.precision = o.precision;
  if (o.threads >= 0) rc.inference.threads = o.threads;
  selfplay::SelfPlayConfig config = rc.selfplay;
  config.rules = rc.rules;
  config.games_per_shard = 4;
  if (o.parallel_games > 0) config.parallel_games = o.parallel_games;
  if (o.max_plies > 0) config.max_plies = o.max_plies;
  if (o.playouts > 0) {
    config.full_playouts = config.cheap_playouts = static_cast<std::uint64_t>(o.playouts);
    config.full_search_share = 1;
  }
  if (o.mcts_batch > 0) config.mcts.batch_size = o.mcts_batch;
  if (o.no_mate_scan) config.mcts.mate_scan = false;
  if (o.puct) {
    config.mcts.gumbel = false;
    config.policy_target = "visits";
  }
  config.validate();
  if (o.input_planes > 0) nn::check_input_planes(o.input_planes, "--input-planes");

  spdlog::set_level(spdlog::level::warn);
  TempDir dir;
  data::RunDir run(dir.path);
  nn::NnConfig nc = rc.nn_config("");  // random weights
  nc.architecture = nc.architecture.completed();
  std::shared_ptr<nn::BatchingEvaluator> evaluator = nn::make_nn_evaluator(nc);
  selfplay::SelfPlayJob job;
  job.games = o.games;
  job.evaluator = evaluator;
  std::printf("bench selfplay (%s): net %s, %d input planes (%s), %d games, %d at once, playouts %llu full / %llu cheap (%.0f%% full), "
              "%s root, mate scan %s, MCTS batch %d, max batch %d\n",
              o.config.empty() ? "the main job's settings" : o.config.c_str(), nc.architecture.text().c_str(),
              evaluator->backend().input_planes(), evaluator->name().c_str(), o.games, config.parallel_games,
              static_cast<unsigned long long>(config.full_playouts),
              static_cast<unsigned long long>(config.cheap_playouts), 100 * config.full_search_share,
              config.mcts.gumbel ? "Gumbel" : "PUCT", config.mcts.mate_scan ? "on" : "off", config.mcts.batch_size,
              nc.batching.max_batch);
  const auto stats = selfplay::run_selfplay(run, config, job);
  const nn::BatchingStats bs = evaluator->stats();
  const double evaluated = bs.evaluated / stats.seconds;
  std::printf("selfplay: %d games, %llu moves, %.1f s: %.1f moves/s, %llu samples\n", stats.games,
              static_cast<unsigned long long>(stats.moves), stats.seconds, stats.moves_per_second(),
              static_cast<unsigned long long>(stats.samples));
  std::printf("network calls: %llu positions asked, %.1f%% from the cache, %llu forward passes, mean batch %.1f\n",
              static_cast<unsigned long long>(bs.positions), bs.positions ? 100.0 * bs.cache_hits / bs.positions : 0,
              static_cast<unsigned long long>(bs.batches), bs.mean_batch());

  // The raw network at that batch size, on positions of random games.
  const int batch = std::max(1, static_cast<int>(std::lround(bs.mean_batch())));
  const BenchInputs in = make_inputs(batch, evaluator->backend().input_planes());
  std::vector<float> logits(in.slots.size()), wdl(static_cast<std::size_t>(batch) * 3), ml(batch);
  const nn::ForwardBatch fb{batch, in.planes.data(), in.offsets.data(), in.slots.data()};
  const nn::ForwardOutput fo{logits.data(), wdl.data(), ml.data()};
  nn::NetworkBackend& net = evaluator->backend();
  net.forward(fb, fo);
  int passes = 0;
  const auto start = Clock::now();
  while (passes < 3 || since(start) < 2.0) {
    net.forward(fb, fo);
    ++passes;
  }
  const double raw = passes * batch / since(start);
  std::printf("raw network at batch %d: %.0f positions/s; self-play evaluates %.0f positions/s = %.0f%% of raw\n",
              batch, raw, evaluated, 100 * evaluated / raw);
}

}  // namespace

void add_bench_selfplay_command(CLI::App& bench) {
  auto o = std::make_shared<BenchSelfPlayOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "selfplay", "self-play throughput beside the raw network's (random weights), at the main job's settings");
  cmd->add_option("--config", o->config, "a run config whose settings to measure (default: the main job's built-in one)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--games", o->games, "games")->check(CLI::Range(1, 100000))->capture_default_str();
  cmd->add_option("--parallel-games", o->parallel_games, "games at once (default: the config's)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--playouts", o->playouts,
                  "every move one search of this many playouts (default: the config's full and cheap searches)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--max-plies", o->max_plies, "game length cap (default: the config's)")->check(CLI::Range(1, 65535));
  cmd->add_option("--mcts-batch", o->mcts_batch, "leaves per evaluator call (default: the config's batch)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--max-batch", o->max_batch, "network batch at most (default: the config's)")
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--input-planes", o->input_planes, "the network's input planes (default: the config's)");
  cmd->add_option("--blocks", o->blocks, "residual blocks (default: the config's)")->check(CLI::Range(0, 64));
  cmd->add_option("--channels", o->channels, "channels (default: the config's)")->check(CLI::Range(1, 1024));
  cmd->add_option("--se-channels", o->se_channels, "squeeze-excitation width (default: the config's)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--threads", o->threads, "LibTorch intra-op threads (default: the config's)")
      ->check(CLI::Range(0, 256));
  cmd->add_option("--device", o->device, "cpu, cuda or cuda:N (default: the config's)");
  cmd->add_option("--precision", o->precision, "inference arithmetic: auto, fp32, bf16, fp16 (default: the config's)")
      ->check(CLI::IsMember({"auto", "fp32", "bf16", "fp16"}));
  cmd->add_flag("--puct", o->puct, "a PUCT root with visit targets instead of the config's Gumbel root");
  cmd->add_flag("--no-mate-scan", o->no_mate_scan, "search without the mate scan");
  cmd->callback([o] { bench_selfplay(*o); });
}

}  // namespace ultima::cli
