// ultima tune values: measures piece values by fitting game results to
// material balances (see engine/play/value_fit.h).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "common.h"
#include "engine/play/match.h"
#include "engine/play/player_spec.h"
#include "engine/play/value_fit.h"
#include "engine/search/static_eval.h"

namespace ultima::cli {
namespace {

struct TuneOptions {
  std::string player = "casual";
  std::string pgn_in;
  std::string pgn_out;
  std::string weights_out;
  std::string rules = kDefaultRules;
  int games = 2000;
  int concurrency = 2;
  std::uint64_t seed = 1;
  int skip_plies = 6;
  int stride = 4;
  int max_plies = kLadderMaxPlies;
};

const char* kKindNames[6] = {"pawn", "withdrawer", "long_leaper", "coordinator", "immobilizer", "chameleon"};

void tune_values(const TuneOptions& o) {
  std::vector<GameRecord> games;
  if (!o.pgn_in.empty()) {
    games = read_pgn_file(o.pgn_in);
    std::fprintf(stderr, "read %zu games from %s\n", games.size(), o.pgn_in.c_str());
  } else {
    make_player(o.player, network_factory());  // a bad spec fails here, before any game
    MatchConfig config;
    config.games = o.games;
    config.concurrency = o.concurrency;
    config.seed = o.seed;
    config.rules = Rules::parse(o.rules);
    config.opening_min_plies = 4;
    config.opening_max_plies = 12;
    config.max_plies = o.max_plies;
    config.event = "ultima tune values";
    const std::string spec = o.player;
    const auto factory = [spec, networks = shared_network_factory()] { return make_player(spec, networks); };
    const MatchResult result = play_match(factory, factory, config, [](const MatchProgress& p) {
      if (p.games_done % 50 && p.games_done != p.games_total) return;
      const double rate = p.games_done / std::max(p.seconds, 1e-9);
      std::fprintf(stderr, "games %d/%d  %.1f games/s  ETA %.0f s\n", p.games_done, p.games_total, rate,
                   (p.games_total - p.games_done) / std::max(rate, 1e-9));
    });
    for (const MatchGame& g : result.games) games.push_back(g.record);
    if (!o.pgn_out.empty()) write_pgn_file(o.pgn_out, games);
  }
  const std::vector<ValueSample> samples = value_samples(games, o.skip_plies, o.stride);
  const ValueFit fit = fit_values(samples);
  std::printf("piece values fitted on %d positions from %zu games (log loss %.4f, %d Newton steps)\n",
              fit.samples, games.size(), fit.log_loss, fit.iterations);
  std::printf("%-12s %10s %8s %14s %8s %8s\n", "piece", "logit", "+-", "centipawns", "+-", "frozen%");
  EvalWeights w;
  // One discount for all kinds: the frozen share of the summed values of
  // the pieces. Pawns stay out of it: a frozen pawn still serves as an
  // anvil and a blocker, and measures above 100%.
  double frozen_sum = 0, free_sum = 0;
  for (int k = 0; k < 6; ++k) {
    const double cp = fit.centipawns(fit.free_value[k]);
    const double cp_se = std::abs(fit.centipawns(fit.free_se[k]));
    const double frozen_share = fit.free_value[k] != 0 ? 100.0 * fit.frozen_value[k] / fit.free_value[k] : 0;
    std::printf("%-12s %10.4f %8.4f %14.0f %8.0f %8.0f\n", kKindNames[k], fit.free_value[k], fit.free_se[k], cp,
                cp_se, frozen_share);
    w.value[kPawn + k] = static_cast<int>(std::lround(cp));
    if (k > 0) {
      frozen_sum += fit.frozen_value[k];
      free_sum += fit.free_value[k];
    }
  }
  w.frozen_percent = static_cast<int>(std::lround(std::clamp(100.0 * frozen_sum / free_sum, 0.0, 100.0)));
  std::printf("tempo (White to move) %.4f logit\n", fit.tempo);
  std::printf("suggested: frozen_percent %d\n", w.frozen_percent);
  if (!o.weights_out.empty()) {
    EvalWeights::save(o.weights_out, w);
    std::printf("wrote %s\n", o.weights_out.c_str());
  }
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto o = std::make_shared<TuneOptions>();
  CLI::App* tune = app.add_subcommand("tune", "measure evaluation parameters from games");
  tune->require_subcommand(1);
  CLI::App* values = tune->add_subcommand("values", "fit piece values (and the frozen discount) to game results");
  values->add_option("--player", o->player, "player spec that plays both sides");
  values->add_option("--games", o->games, "games to play")->check(CLI::Range(10, 1000000));
  values->add_option("--concurrency", o->concurrency, "games at once")->check(CLI::Range(1, 256));
  add_seed_option(values, o->seed, "the openings and the players");
  add_rules_option(values, o->rules);
  values->add_option("--max-plies", o->max_plies, "plies before a game is called a draw")->check(CLI::Range(10, 10000));
  values->add_option("--skip-plies", o->skip_plies, "plies after the opening before sampling")->check(CLI::Range(0, 1000));
  values->add_option("--stride", o->stride, "sample every Nth position")->check(CLI::Range(1, 1000));
  values->add_option("--pgn-in", o->pgn_in, "fit on these games instead of playing");
  values->add_option("--pgn-out", o->pgn_out, "save the games played");
  values->add_option("--weights-out", o->weights_out, "write the fitted values as an evaluation weights file");
  values->callback([o] { tune_values(*o); });
}

}  // namespace ultima::cli
