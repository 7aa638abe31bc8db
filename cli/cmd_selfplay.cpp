// ultima selfplay: a self-play worker on a run directory. Plays games with
// the run's best model and writes sample shards; any number of workers (with
// distinct --tag values, each held by its lock) may share a directory with
// one trainer. The run must exist (ultima init, or ultima loop). With
// --tactics it writes proven mates from random play instead (the config's
// tactics section), which needs no model.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "commands.h"
#include "common.h"
#include "engine/rules/hash.h"
#include "nn/data/run_lock.h"
#include "nn/model_file.h"
#include "training/dataset.h"
#include "training/loop/loop.h"

namespace ultima::cli {

using namespace ultima::loop;
namespace {

struct SelfPlayOptions {
  std::string config;
  std::string run_dir = "runs/main";
  std::string tag = "sp";
  int games = 0;
  std::string model = "best";
  std::uint64_t seed = 1;
  bool watch = false;
  bool tactics = false;
};

std::uint64_t pick_model(const data::RunDir& run, const std::string& which) {
  if (which == "best" || which == "latest") {
    const auto v = which == "best" ? run.best_model() : run.latest_model();
    if (!v) throw std::invalid_argument("the run directory " + run.root() + " has no model yet");
    return *v;
  }
  try {
    std::size_t used = 0;
    const std::uint64_t v = std::stoull(which, &used);
    if (used == which.size()) return v;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("--model: '" + which + "' is not best, latest or a version number");
}

// Proven mates from random play (the tactics section: mates in up to
// max_moves, their mating moves as policy targets), as shards TAG-mates-*,
// which training.tactics_share counts among the tactics samples. The games
// are numbered from 0 under the tag, so a second call with a larger
// --games extends the set and a repeated one adds nothing.
void run_tactics_command(const SelfPlayOptions& o, const RunConfig& config, const data::RunDir& run,
                         data::RoleLock& role) {
  const std::string tag = o.tag + training::kTacticsTagSuffix;
  const int games = o.games > 0 ? o.games : config.tactics.positions;
  if (games <= 0)
    throw std::invalid_argument("selfplay --tactics: give --games, or tactics.positions in the run config");
  spdlog::info("selfplay {}: {} proven mates in up to {} moves from random play", tag, games,
               config.tactics.mates.max_moves);
  const auto stats = loop::run_tactics_job(
      run, config, tag, games, run.best_model().value_or(0), mix64(o.seed ^ fnv1a64(tag.data(), tag.size())),
      "selfplay " + tag, [&](const std::string& done) { role.heartbeat({{"mates", done}}); }, &stop_requested());
  spdlog::info("selfplay {}: {} mates found ({} were there), {} samples, {} shards", tag, stats.games,
               stats.games_skipped, stats.samples, stats.shards);
}

void run_selfplay_command(const SelfPlayOptions& o) {
  require_run(o.run_dir);
  const RunConfig config = resolve_run_config(o.run_dir, o.config);
  data::RunDir run(o.run_dir);
  std::string warning;
  data::RoleLock role(run, "worker-" + o.tag, &warning);
  setup_logging(run, "selfplay-" + o.tag);
  if (!warning.empty()) spdlog::warn("selfplay: {}", warning);
  install_stop_handlers();
  if (o.tactics) return run_tactics_command(o, config, run, role);
  int per_round = o.games > 0 ? o.games : config.games_per_generation;
  // Rounds of whole shards, so that a round's last shard is never cut short
  // and then skipped by the next round's longer job.
  const int per_shard = config.selfplay.games_per_shard;
  if (o.watch) per_round = (per_round + per_shard - 1) / per_shard * per_shard;
  do {
    const std::uint64_t version = pick_model(run, o.model);
    selfplay::SelfPlayJob job;
    // One tag per model version: a worker that keeps going extends its job.
    job.tag = o.tag + "-m" + std::to_string(version);
    const auto sequences = run.shard_sequences(job.tag);
    const int have = sequences.empty() ? 0 : (sequences.back() + 1) * per_shard;
    job.games = o.watch ? have + per_round : per_round;
    job.model_version = version;
    // Workers differ by tag: the same --seed under two tags plays other games.
    job.seed = mix64(o.seed ^ fnv1a64(o.tag.data(), o.tag.size()));
    job.evaluator = model_evaluator(run, config, version);
    job.player_name = "ultima model " + std::to_string(version);
    spdlog::info("selfplay {}: model {}, games {}..{}", job.tag, version, o.watch ? have : 0, job.games - 1);
    role.heartbeat({{"model", std::to_string(version)}, {"games", "0"}});
    auto last = std::chrono::steady_clock::now();
    const auto stats = selfplay::run_selfplay(
        run, config.selfplay, job,
        [&](const selfplay::SelfPlayStats& s, int total) {
          const auto now = std::chrono::steady_clock::now();
          if (now - last < std::chrono::seconds(10) && s.games + s.games_skipped < total) return;
          last = now;
          char rate[32];
          std::snprintf(rate, sizeof rate, "%.1f", s.moves_per_second());
          role.heartbeat({{"model", std::to_string(version)},
                          {"games", std::to_string(s.games + s.games_skipped) + "/" + std::to_string(total)},
                          {"moves_per_s", rate}});
          spdlog::info("selfplay {}: {}/{} games, {:.0f} moves/s, {} samples, {} shards, ETA {}", job.tag,
                       s.games + s.games_skipped, total, s.moves_per_second(), s.samples, s.shards,
                       format_duration(s.eta_seconds(total, config.selfplay.max_plies)));
        },
        &stop_requested());
    spdlog::info("selfplay {}: {} games played ({} were there), {} samples, {} shards, {:.0f} moves/s; "
                 "W/D/L {}/{}/{}, {} cut at max plies, {} adjudicated; resigned {}, false resignations {}/{} ({:.1f}%)",
                 job.tag, stats.games, stats.games_skipped, stats.samples, stats.shards, stats.moves_per_second(),
                 stats.white_wins, stats.draws, stats.black_wins, stats.max_plies, stats.adjudicated, stats.resigned,
                 stats.false_resign, stats.would_resign, 100 * stats.false_resign_rate());
  } while (o.watch && !stop_requested());
}

}  // namespace

void add_selfplay_command(CLI::App& app) {
  auto o = std::make_shared<SelfPlayOptions>();
  CLI::App* cmd = app.add_subcommand("selfplay", "play games with the run's model and write sample shards");
  cmd->add_option("--config", o->config, "run config; default: the run directory's config.yaml, else built-in");
  cmd->add_option("--run-dir", o->run_dir, "run directory (default runs/main)");
  cmd->add_option("--tag", o->tag, "this worker's name in shard files (default sp); one per worker")
      ->check([](const std::string& t) {
        if (t.empty()) return std::string("empty tag");
        for (const char c : t)
          if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
            return std::string("the tag may hold letters, digits and _ only");
        return std::string();
      });
  cmd->add_option("--games", o->games, "games to play (default: selfplay.games_per_generation)")
      ->check(CLI::Range(1, 100000000));
  cmd->add_option("--model", o->model, "best (default), latest or a version number");
  add_seed_option(cmd, o->seed, "the games, mixed with the tag");
  cmd->add_flag("--watch", o->watch, "keep playing rounds of --games, switching to each new best model");
  cmd->add_flag("--tactics", o->tactics,
                "write --games proven mates from random play (the config's tactics section) as TAG-mates "
                "shards instead; needs no model")
      ->excludes("--watch");
  cmd->callback([o] { run_selfplay_command(*o); });
}

}  // namespace ultima::cli
