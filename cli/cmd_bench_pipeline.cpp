// ultima bench train: training's own throughput beside the raw network's at
// the same settings, so the pipeline's overhead shows: samples per second
// of training steps fed by the sample window (unpacking, symmetries,
// shuffling), and of the same steps on one batch made ahead. (bench
// selfplay is cmd_bench_selfplay.cpp.)
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include "cli/bench_inputs.h"
#include "commands.h"
#include "launch.h"
#include "engine/rules/movegen.h"
#include "engine/rules/rule_set.h"
#include "nn/network.h"
#include "nn/distributed.h"
#include "nn/trainer.h"
#include "selfplay/selfplay.h"
#include "training/dataset.h"

namespace fs = std::filesystem;

namespace ultima::cli {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct NetOptions {
  int blocks = 4, channels = 32, se_channels = 8, threads = 1;
  std::string device = "cpu";
  nn::NetArchitecture architecture() const {
    nn::NetArchitecture a;
    a.blocks = blocks;
    a.channels = channels;
    a.se_channels = se_channels;
    return a.completed();
  }
};

void add_net_options(CLI::App* cmd, NetOptions& o) {
  cmd->add_option("--blocks", o.blocks, "residual blocks (default 4)")->check(CLI::Range(0, 64));
  cmd->add_option("--channels", o.channels, "channels (default 32)")->check(CLI::Range(1, 1024));
  cmd->add_option("--se-channels", o.se_channels, "squeeze-excitation width (default 8)")->check(CLI::Range(0, 1024));
  cmd->add_option("--threads", o.threads, "LibTorch intra-op threads (default 1)")->check(CLI::Range(0, 256));
  cmd->add_option("--device", o.device, "cpu or cuda (default cpu)");
}

struct BenchTrainOptions {
  NetOptions net;
  int batch_size = 256;
  int steps = 20;
  int samples = 4096;
  int nproc = 1;
  std::string precision = "fp32";
};

// bench train inside a launched rank: steps of the trainer joined to the
// ranks' group, each rank with a share of batch_size x ranks (the batch per
// rank stays batch_size: weak scaling, as one GPU's batch per rank). Rank 0
// prints the whole group's samples/s, and its efficiency against the one
// rank's rate that the launcher measured (ULTIMA_BENCH_ONE_RANK).
void bench_train_rank(const BenchTrainOptions& o, const nn::LaunchEnvironment& launch,
                      training::SampleStore& store) {
  const nn::GroupOptions g = nn::GroupOptions::launched(launch, o.net.device);
  auto group = nn::ProcessGroup::create(g);
  nn::TrainerOptions options;
  options.device.device = g.device;
  options.device.threads = o.net.threads;
  options.precision = o.precision;
  auto trainer = nn::Trainer::create(o.net.architecture(), {}, 1, options);
  trainer->join(*group);
  training::BatchSampler sampler(1, o.batch_size * launch.world_size);
  sampler.set_share(launch.rank, launch.world_size);
  training::BatchData data;
  sampler.fill(store, 0, store.total(), 0, data);
  const nn::TrainBatch batch = data.view();
  trainer->queue_step(batch, 0.001f);  // warm-up
  trainer->report();
  const auto start = Clock::now();
  for (int i = 0; i < o.steps; ++i) trainer->queue_step(batch, 0.001f);
  trainer->report();
  const double seconds = since(start);
  const double rate = static_cast<double>(o.steps) * o.batch_size * launch.world_size / seconds;
  if (launch.rank != 0) return;
  const char* one = std::getenv("ULTIMA_BENCH_ONE_RANK");
  const double one_rank = one ? std::atof(one) : 0;
  std::printf("%d ranks (Gloo%s), %d per rank: %.0f samples/s", launch.world_size,
              g.device == "cpu" ? "" : ", or NCCL where built", o.batch_size, rate);
  if (one_rank > 0)
    std::printf(" = %.2fx one rank, scaling efficiency %.0f%%", rate / one_rank,
                100 * rate / (one_rank * launch.world_size));
  std::printf("\n");
}

void bench_train(const BenchTrainOptions& o) {
  spdlog::set_level(spdlog::level::warn);
  TempDir dir;
  // Samples from random games: any position and a spread policy will do
  // for timing.
  std::vector<data::Sample> samples;
  std::mt19937_64 rng(11);
  while (static_cast<int>(samples.size()) < o.samples) {
    Position pos = Position::start();
    for (int ply = 0; ply < 120 && !game_status(pos).over() && static_cast<int>(samples.size()) < o.samples; ++ply) {
      MoveList list;
      generate_legal(pos, list);
      data::Sample s;
      data::pack_position(pos, s);
      s.ply = static_cast<std::uint16_t>(ply);
      s.result = static_cast<std::int8_t>(static_cast<int>(rng() % 3) - 1);
      s.plies_to_end = static_cast<std::uint16_t>(rng() % 200);
      for (int i = 0; i < list.size() && i < 8; ++i)
        s.policy.push_back({static_cast<std::uint16_t>(nn::policy_index(list[i])), 1.0f / std::min(8, list.size())});
      samples.push_back(std::move(s));
      pos.make(list[static_cast<int>(rng() % list.size())]);
    }
  }
  data::ShardHeader header;
  header.rules = kDefaultRules;
  const std::string shard = dir.path + "/bench.shard";
  data::write_shard(shard, header, samples);
  training::SampleStore store;
  store.add_shards({shard});
  if (const auto launch = nn::LaunchEnvironment::read(); launch && launch->world_size > 1)
    return bench_train_rank(o, *launch, store);

  nn::TrainerOptions options;
  options.device.device = o.net.device;
  options.device.threads = o.net.threads;
  options.precision = o.precision;
  auto trainer = nn::Trainer::create(o.net.architecture(), {}, 1, options);
  training::BatchSampler sampler(1, o.batch_size);
  training::BatchData data;
  auto as_batch = [](const training::BatchData& d) { return d.view(); };
  sampler.fill(store, 0, store.total(), 0, data);
  trainer->queue_step(as_batch(data), 0.001f);  // warm-up
  trainer->report();
  std::printf("bench train: net %s, batch %d, %s on %s, %d steps each, %d samples in the window\n",
              o.net.architecture().text().c_str(), o.batch_size, o.precision.c_str(), o.net.device.c_str(), o.steps,
              o.samples);

  auto start = Clock::now();
  for (int i = 0; i < o.steps; ++i) trainer->queue_step(as_batch(data), 0.001f);
  trainer->report();
  const double raw = o.steps * o.batch_size / since(start);

  start = Clock::now();
  double fill_seconds = 0;
  for (int i = 0; i < o.steps; ++i) {
    const auto f = Clock::now();
    sampler.fill(store, 0, store.total(), static_cast<std::uint64_t>(i + 1), data);
    fill_seconds += since(f);
    trainer->queue_step(as_batch(data), 0.001f);
  }
  trainer->report();
  const double piped = o.steps * o.batch_size / since(start);

  // As the trainer runs: the next batch made on a second thread meanwhile.
  start = Clock::now();
  {
    training::BatchPrefetcher batches(sampler, store, 0, store.total());
    for (int i = 0; i < o.steps; ++i)
      trainer->queue_step(as_batch(batches.take(static_cast<std::uint64_t>(i + 1), i + 1 < o.steps)), 0.001f);
  }
  trainer->report();
  const double ahead = o.steps * o.batch_size / since(start);
  std::printf("raw training steps (one batch made ahead): %.0f samples/s\n", raw);
  std::printf("training fed by the sample window:        %.0f samples/s = %.0f%% of raw (batch making %.0f samples/s "
              "on its own)\n",
              piped, 100 * piped / raw, o.steps * o.batch_size / fill_seconds);
  std::printf("the same, next batch made meanwhile:      %.0f samples/s = %.0f%% of raw (as the trainer runs)\n", ahead,
              100 * ahead / raw);
  if (o.nproc > 1) {
    std::printf("data-parallel: 1 rank %.0f samples/s (raw steps above); now %d ranks on this machine\n", raw, o.nproc);
    std::fflush(stdout);
    trainer.reset();
    launch_ranks(o.nproc, {{"ULTIMA_BENCH_ONE_RANK", std::to_string(raw)}});
  }
}

}  // namespace

void add_bench_train_command(CLI::App& bench) {
  CLI::App* cmd;
  auto tr = std::make_shared<BenchTrainOptions>();
  cmd = bench.add_subcommand("train", "training throughput from the sample window beside raw training steps");
  add_net_options(cmd, tr->net);
  cmd->add_option("--batch-size", tr->batch_size, "samples per step (default 256)")->check(CLI::Range(1, 65536));
  cmd->add_option("--steps", tr->steps, "steps per measurement (default 20)")->check(CLI::Range(1, 100000));
  cmd->add_option("--samples", tr->samples, "samples in the window (default 4096)")->check(CLI::Range(1, 10000000));
  cmd->add_option("--precision", tr->precision, "training arithmetic: fp32 (default), bf16, fp16 (CUDA)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  cmd->add_option("--nproc", tr->nproc,
                  "then data-parallel in N processes here, --batch-size each: samples/s and scaling efficiency "
                  "against one rank")
      ->check(CLI::Range(1, 1024));
  cmd->callback([tr] { bench_train(*tr); });
}

}  // namespace ultima::cli
