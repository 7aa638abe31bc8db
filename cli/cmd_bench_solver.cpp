// ultima bench solver: how many forced mates the tree search proves within
// a time per position. The mates come from seeded random play, each
// checked by the exact alpha-beta mate search (a mate in two has no mate in
// one), so the suite is the same on every machine.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "common.h"
#include "engine/mcts/material_evaluator.h"
#include "engine/mcts/mcts.h"
#include "engine/mcts/settings.h"
#include "engine/play/level.h"
#include "engine/play/pgn.h"
#include "engine/play/puzzle.h"
#include "engine/rules/notation.h"
#include "engine/search/search.h"

namespace ultima::cli {
namespace {

struct BenchSolver {
  int positions = 40;  // of each length
  std::int64_t movetime_ms = 300;
  // Playouts per position instead of a time (0: the time): the same
  // searches on any machine and under any load.
  std::uint64_t playouts = 0;
  bool mate_scan = false;
  // MctsConfig::mate_scan_root off: the tree has to find the key move of a
  // mate in two (and the move of a mate in one).
  bool tree_only = false;
  std::string net;  // network settings; empty: the material evaluator
  // Seed of the random play the mates come from (11: the suite of
  // docs/experiments.md); the loop's tactics samples use other seeds.
  std::uint64_t seed = 11;
  // Above 0: sparse boards far from the opening instead, from random play
  // that prefers captures, probed once at most this many pieces stand
  // (engine/play/puzzle.h's random_sparse_mate).
  int sparse = 0;
  // Print each mate not proven: its FEN and where its mating moves stood
  // among the root's moves (by prior) and how many playouts they drew.
  bool show_missed = false;
  // Tree-search settings as in a player spec ("policy_temperature=1.4");
  // --mate-scan and --tree-only decide the scan whatever these say.
  std::string mcts;
  // PGN files whose games' final positions make the suite instead of random
  // play (a run's games/genNNNN-mates-*.pgn: the mates it trained on). Each
  // is sorted by the exact mate search; the other positions are skipped.
  std::vector<std::string> pgn;
  // The alpha-beta search instead of the tree search (mates in one to
  // three), with the hand-written evaluation and, beside it, this learned
  // network.
  bool alphabeta = false;
  std::string nnue;
  // With --alphabeta: nodes per position instead of --movetime (the
  // hand-written column), and for the learned column (0: the same): fixed
  // budgets calibrated to a time, for a machine that cannot be kept idle.
  std::uint64_t nodes = 0;
  std::uint64_t nnue_nodes = 0;
};

// Mates in exactly 1, 2 and 3 from seeded random play, each proven by the
// exact mate search; the alpha-beta search (with its usual settings, not
// the mate search) is given the time per position, and a mate counts as
// found when its score is a mate.
void bench_solver_alphabeta(const BenchSolver& o) {
  std::vector<std::vector<Position>> suites(3);
  std::mt19937_64 rng(o.seed);
  Searcher finder(4);
  for (int games = 0; games < 200000; ++games) {
    bool full = true;
    for (const auto& s : suites) full = full && static_cast<int>(s.size()) >= o.positions;
    if (full) break;
    const std::optional<RandomMate> mate = o.sparse > 0 ? random_sparse_mate(rng, Rules{}, 3, finder, o.sparse)
                                                        : random_game_mate(rng, Rules{}, 3, finder);
    if (!mate) continue;
    std::vector<Position>& suite = suites[mate->moves - 1];
    if (static_cast<int>(suite.size()) < o.positions) suite.push_back(mate->pos);
  }
  // With a network, each position is searched with both evaluations in
  // turn, so that the two columns share the machine's conditions.
  std::vector<std::shared_ptr<const nnue::Network>> evaluations = {nullptr};
  if (!o.nnue.empty()) evaluations.push_back(load_nnue(o.nnue));
  const std::uint64_t learned_nodes = o.nnue_nodes ? o.nnue_nodes : o.nodes;
  const std::string budget = o.nodes ? std::to_string(o.nodes) + " nodes (learned: " + std::to_string(learned_nodes) +
                                           ")"
                                     : std::to_string(o.movetime_ms) + " ms";
  std::printf("bench solver --alphabeta: %zu mates in one, %zu in two, %zu in three%s; %s each\n", suites[0].size(),
              suites[1].size(), suites[2].size(),
              o.sparse > 0 ? (" on boards of at most " + std::to_string(o.sparse) + " pieces").c_str() : "",
              budget.c_str());
  std::printf("            %-14s%s\n", "hand-written", evaluations.size() > 1 ? "learned" : "");
  for (int moves = 1; moves <= 3; ++moves) {
    std::vector<int> found(evaluations.size(), 0);
    for (const Position& p : suites[moves - 1]) {
      for (std::size_t e = 0; e < evaluations.size(); ++e) {
        Position pos = p;
        Searcher searcher(16);
        searcher.set_network(evaluations[e]);
        SearchLimits limits;
        if (o.nodes)
          limits.nodes = e == 0 ? o.nodes : learned_nodes;
        else
          limits.movetime_ms = o.movetime_ms;
        const SearchResult r = searcher.search(pos, limits);
        if (r.score >= kMateBound) ++found[e];
      }
    }
    std::printf("mate in %d ", moves);
    for (int f : found) std::printf("  %3d/%-9zu", f, suites[moves - 1].size());
    std::printf("\n");
  }
}

// One line per mate the search did not prove: the position, then each
// mating move with its prior, the rank of that prior among the root's
// moves and the move's visits, so a miss the policy caused (a key move far
// down the priors, few visits) reads apart from one the budget caused.
void print_missed(const Position& pos, int moves, const MctsResult& r, Searcher& searcher) {
  std::vector<MctsRootMove> by_prior = r.moves;
  std::stable_sort(by_prior.begin(), by_prior.end(),
                   [](const MctsRootMove& a, const MctsRootMove& b) { return a.prior > b.prior; });
  std::printf("  missed mate in %d: %s (%zu moves, %llu playouts)\n", moves, pos.fen().c_str(), by_prior.size(),
              static_cast<unsigned long long>(r.playouts));
  for (const Move& m : mating_moves(pos, moves, searcher)) {
    const auto at = std::find_if(by_prior.begin(), by_prior.end(), [&](const MctsRootMove& rm) { return rm.move == m; });
    if (at == by_prior.end()) continue;
    std::printf("    %-10s prior %.4f (rank %td of %zu), %u visits\n", to_coordinate(m).c_str(), at->prior,
                at - by_prior.begin() + 1, by_prior.size(), at->visits);
  }
}

void bench_solver(const BenchSolver& o) {
  const MctsSettings settings = parse_mcts_settings(o.mcts);  // a bad key fails before the suite is made
  std::vector<Position> in_one, in_two;
  const auto found_at = std::chrono::steady_clock::now();
  std::string source = "random play";
  if (o.pgn.empty()) {
    random_mate_suite(o.positions, o.seed, in_one, in_two, o.sparse);
    if (o.sparse > 0) source = "capture-heavy random play, at most " + std::to_string(o.sparse) + " pieces";
  } else {
    const std::size_t skipped = mate_suite_from_pgn(o.pgn, o.positions, in_one, in_two);
    source = std::to_string(o.pgn.size()) + " PGN file" + (o.pgn.size() == 1 ? "" : "s") + ", " +
             std::to_string(skipped) + " final position" + (skipped == 1 ? "" : "s") +
             " without a mate in two skipped";
  }
  const double finding = std::chrono::duration<double>(std::chrono::steady_clock::now() - found_at).count();
  std::shared_ptr<Evaluator> evaluator =
      o.net.empty() ? std::shared_ptr<Evaluator>(std::make_shared<MaterialEvaluator>()) : network_factory()(o.net);
  const std::string budget = o.playouts ? std::to_string(o.playouts) + " playouts"
                                         : std::to_string(o.movetime_ms) + " ms";
  std::printf("bench solver: %zu mates in one, %zu in two from %s (%.1f s to find); mcts with %s, %s "
              "each, mate scan %s%s\n",
              in_one.size(), in_two.size(), source.c_str(), finding, evaluator->name().c_str(), budget.c_str(),
              o.mate_scan ? "on" : "off", o.tree_only ? ", no root check for a mate in two" : "");
  Searcher searcher(4);
  int moves = 1;
  for (const std::vector<Position>* suite : {&in_one, &in_two}) {
    int proven = 0, exact = 0;
    double proof_seconds = 0, proof_playouts = 0, proof_evaluations = 0;
    for (const Position& pos : *suite) {
      MctsConfig config = settings.config;
      config.mate_scan = o.mate_scan;
      config.mate_scan_root = !o.tree_only;
      Mcts mcts(evaluator, config);
      mcts.set_position(pos);
      MctsLimits limits;
      if (o.playouts)
        limits.playouts = o.playouts;
      else
        limits.movetime_ms = o.movetime_ms;
      const MctsResult r = mcts.search(limits);
      // Proven a win (the search stops at its first proof, which may be a
      // slower mate than the one there is), and proven as fast as it is.
      if (r.mate > 0) {
        ++proven;
        exact += r.mate == moves;
        proof_seconds += r.seconds;
        proof_playouts += static_cast<double>(r.playouts);
        proof_evaluations += static_cast<double>(r.evaluations);
      } else if (o.show_missed) {
        print_missed(pos, moves, r, searcher);
      }
    }
    const double n = proven ? proven : 1;
    std::printf("mate in %d  %3d/%zu proven wins (%.1f%%), %d of them mate in %d  mean to proof: %.1f ms, %.0f "
                "playouts, %.0f evaluations\n",
                moves, proven, suite->size(), suite->empty() ? 0.0 : 100.0 * proven / suite->size(), exact, moves,
                1000 * proof_seconds / n, proof_playouts / n, proof_evaluations / n);
    ++moves;
  }
}

}  // namespace

void add_bench_solver_command(CLI::App& bench) {
  auto o = std::make_shared<BenchSolver>();
  CLI::App* cmd = bench.add_subcommand(
      "solver", "forced mates in one and two (from seeded random play) that the tree search proves in a set time");
  cmd->add_option("--positions", o->positions, "mates of each length")->check(CLI::Range(1, 10000));
  cmd->add_option("--movetime", o->movetime_ms, "milliseconds per position")->check(CLI::Range(1, 3600000));
  cmd->add_option("--playouts", o->playouts, "playouts per position instead of --movetime (the same on any machine)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  cmd->add_flag("--mate-scan", o->mate_scan, "check every expanded position for a win at once");
  cmd->add_flag("--tree-only", o->tree_only,
                "with --mate-scan: no check of every root move for a mate in two (mate_scan_root=false); the tree "
                "has to find it");
  add_seed_option(cmd, o->seed, "the random play the mates come from (another suite per seed)");
  cmd->add_option("--sparse", o->sparse,
                  "sparse boards far from the opening: random play that captures three times in four where it can, "
                  "probed once at most this many pieces (kings counted) stand; 0: the usual random play")
      ->check(CLI::Range(3, 32));
  cmd->add_flag("--show-missed", o->show_missed,
                "print each mate not proven: its FEN, and each mating move's prior, prior rank and visits");
  cmd->add_option("--mcts", o->mcts,
                 "tree-search settings as in a player spec (key=value,...; the mcts keys of `ultima match --help`); "
                 "--mate-scan and --tree-only decide the scan");
  cmd->add_option("--pgn", o->pgn,
                  "PGN files whose games' final positions with a mate in one or two make the suite, instead of random "
                  "play (e.g. a run's games/gen*-mates-*.pgn: the mates it trained on)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--net", o->net, "network settings (weights=FILE); default: the material evaluator");
  cmd->add_flag("--alphabeta", o->alphabeta, "the alpha-beta search instead (mates in one to three, --movetime each)");
  cmd->add_option("--nnue", o->nnue,
                  "with --alphabeta: also search every position with this learned network, a second column beside the "
                  "hand-written evaluation's");
  cmd->add_option("--nodes", o->nodes,
                  "with --alphabeta: nodes per position instead of --movetime (the same on any machine and under any "
                  "load)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  cmd->add_option("--nnue-nodes", o->nnue_nodes,
                  "with --alphabeta --nodes: the learned column's nodes (its nodes cost more; default: --nodes)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  cmd->callback([o] {
    if ((o->nodes || o->nnue_nodes) && !o->alphabeta)
      throw std::invalid_argument("--nodes and --nnue-nodes need --alphabeta");
    if (o->nnue_nodes && !o->nodes) throw std::invalid_argument("--nnue-nodes needs --nodes");
    if (o->sparse > 0 && !o->pgn.empty())
      throw std::invalid_argument("--sparse and --pgn are two sources for the suite: give one");
    if (o->alphabeta)
      bench_solver_alphabeta(*o);
    else
      bench_solver(*o);
  });
}

}  // namespace ultima::cli
