// ultima bench perft|search|smp|mcts: fixed suites for speed and regressions.
#include <chrono>
#include <random>
#include <vector>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "common.h"
#include "engine/mcts/material_evaluator.h"
#include "engine/mcts/mcts.h"
#include "engine/play/level.h"
#include "engine/rules/movegen.h"
#include "engine/rules/notation.h"
#include "engine/rules/perft.h"
#include "engine/search/search.h"

namespace ultima::cli {
namespace {

struct BenchPosition {
  const char* rules;
  const char* fen;  // "startpos" for the rule set's start
  int depth;
};

// Start position and middlegames reached by seeded random play, under three
// rule sets. Changing this list changes the node-count signature.
const BenchPosition kPerftSuite[] = {
    {"abbott1963", "startpos", 5},
    {"abbott1963", "clx1kx2/p3pp1l/1Lw3P1/P2p1W2/2Pip1Pp/2X3PP/2P1P3/I1K2XLC w 1 24", 4},
    {"abbott1963", "cl2k2i/2L1p3/1X2px1p/p1x5/w1pp1X2/3P4/PP1PPClP/IL1K3W b 0 27", 4},
    {"abbott1963", "3w2li/2p4p/p1x1kp1P/2Ic3P/3px1X1/3pp1p1/L1P1X1PP/1l1KW1LC w 2 21", 4},
    {"cambridge", "i1xk1l1c/l5pp/2w2x2/3P1WPp/1p1p3P/p5P1/PPK1P3/ILXP1XLC w 1 21", 4},
    {"abbott1962", "c1p1kwli/pXL2p1p/8/3Px3/1Pp1p2l/4p2x/P3P1PP/I1W1KXLC b 23 27", 4},
};

Position position_of(const BenchPosition& b) {
  const Rules rules = Rules::parse(b.rules);
  return std::string(b.fen) == "startpos" ? Position::start(rules) : Position::from_fen(b.fen, rules);
}

void bench_perft() {
  std::uint64_t total = 0;
  double total_seconds = 0;
  for (const BenchPosition& b : kPerftSuite) {
    Position pos = position_of(b);
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t nodes = perft(pos, b.depth);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    total += nodes;
    total_seconds += seconds;
    std::printf("%-10s depth %d  nodes %12llu  %7.3f s  %11.0f nodes/s  %s\n", b.rules, b.depth,
                static_cast<unsigned long long>(nodes), seconds, nodes / seconds, b.fen);
  }
  std::printf("total nodes %llu  seconds %.3f  nodes/s %.0f\n", static_cast<unsigned long long>(total),
              total_seconds, total / total_seconds);
}

// Fixed-depth searches from fresh tables: the node total is a signature of
// the search's behaviour (any change to it shows), the rate a speed figure.
void bench_search(int depth, const std::string& nnue_name) {
  const auto net = load_nnue(nnue_name);
  std::uint64_t total = 0;
  double total_seconds = 0;
  for (const BenchPosition& b : kPerftSuite) {
    Position pos = position_of(b);
    Searcher searcher(16);
    searcher.set_network(net);
    SearchLimits limits;
    limits.depth = depth;
    const auto start = std::chrono::steady_clock::now();
    const SearchResult r = searcher.search(pos, limits);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    total += r.nodes;
    total_seconds += seconds;
    std::printf("%-10s depth %d  nodes %10llu  %7.3f s  %9.0f nodes/s  best %s %s\n", b.rules, depth,
                static_cast<unsigned long long>(r.nodes), seconds, r.nodes / seconds,
                to_coordinate(r.best).c_str(), score_text(r.score).c_str());
  }
  std::printf("signature %llu  seconds %.3f  nodes/s %.0f\n", static_cast<unsigned long long>(total),
              total_seconds, total / total_seconds);
}

// Lazy SMP by thread count: each thread count searches every position of
// the suite for a fixed time from fresh tables (the same hash size for all),
// and the total nodes/s, its speed-up over one thread and the mean depth
// finished are printed. Depth, not nodes/s, is what buys strength; the
// match (scripts/smp-sprt.sh) is what measures strength.
void bench_smp(const std::vector<int>& thread_counts, double seconds_per_position, int hash_mb,
               const std::string& nnue_name) {
  const auto net = load_nnue(nnue_name);
  std::printf("%-8s %14s %10s %11s  (%.1f s a position, %zu positions, Hash %d MB, %s evaluation)\n", "threads",
              "nodes/s", "speed-up", "mean depth", seconds_per_position, std::size(kPerftSuite), hash_mb,
              net ? "learned" : "hand-written");
  double base = 0;
  for (const int threads : thread_counts) {
    std::uint64_t nodes = 0;
    double seconds = 0, depth = 0;
    for (const BenchPosition& b : kPerftSuite) {
      Position pos = position_of(b);
      Searcher searcher(static_cast<std::size_t>(hash_mb));
      searcher.set_threads(threads);
      searcher.set_network(net);
      SearchLimits limits;
      limits.movetime_ms = static_cast<std::int64_t>(seconds_per_position * 1000);
      const auto start = std::chrono::steady_clock::now();
      const SearchResult r = searcher.search(pos, limits);
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      nodes += r.nodes;
      depth += r.depth;
    }
    const double rate = nodes / seconds;
    if (base == 0) base = rate;
    std::printf("%-8d %14.0f %9.2fx %11.2f\n", threads, rate, rate / base, depth / std::size(kPerftSuite));
    std::fflush(stdout);
  }
}

// MCTS playouts per second with a network, beside the raw forward
// throughput of the same network at the same batch size: the difference is
// the search's own overhead. The evaluation cache is off, so every playout
// costs a position in a forward pass.
void bench_mcts(const std::string& net, int threads, int batch, double seconds) {
  const int max_batch = threads * batch;
  const std::string spec = net + (net.empty() ? "" : ",") + "cache_entries=0,max_batch=" + std::to_string(max_batch);
  // "material": the network-free evaluator of an mcts player without weights.
  std::shared_ptr<Evaluator> evaluator =
      net == "material" ? std::make_shared<MaterialEvaluator>() : network_factory()(spec);
  std::printf("%s; mcts threads %d, batch %d per thread\n", evaluator->name().c_str(), threads, batch);

  // Raw throughput: whole batches of distinct positions straight to the evaluator.
  std::mt19937_64 rng(1);
  std::vector<Position> positions;
  std::vector<MoveList> lists(max_batch);
  for (int i = 0; i < max_batch; ++i) {
    Position pos = Position::start();
    for (int ply = 0; ply < 10 + i % 30 && !game_status(pos).over(); ++ply) {
      MoveList l;
      generate_legal(pos, l);
      pos.make(l[rng() % l.size()]);
    }
    positions.push_back(pos);
  }
  std::vector<EvalInput> inputs(max_batch);
  std::vector<EvalOutput> outputs(max_batch);
  for (int i = 0; i < max_batch; ++i) {
    generate_legal(positions[i], lists[i]);
    inputs[i] = {&positions[i], &lists[i]};
  }
  evaluator->evaluate(inputs, outputs);  // warm-up
  int passes = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  while (elapsed < seconds) {
    evaluator->evaluate(inputs, outputs);
    ++passes;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const double raw = passes * max_batch / elapsed;

  MctsConfig config;
  config.threads = threads;
  config.batch_size = batch;
  config.mate_scan = false;  // the tree's own cost over the raw network, as measured before the scan existed
  Mcts mcts(evaluator, config);
  mcts.set_position(Position::start());
  MctsLimits limits;
  limits.movetime_ms = static_cast<std::int64_t>(seconds * 1000);
  const MctsResult r = mcts.search(limits);
  std::printf("raw forward   %10.0f positions/s (batch %d)\n", raw, max_batch);
  std::printf("mcts          %10.0f playouts/s  (%llu playouts, %llu evaluations in %llu batches, avg batch %.1f)\n",
              r.playouts_per_second, static_cast<unsigned long long>(r.playouts),
              static_cast<unsigned long long>(r.evaluations), static_cast<unsigned long long>(r.batches),
              r.batches ? double(r.evaluations) / r.batches : 0.0);
  std::printf("mcts / raw    %10.1f%%\n", 100.0 * r.playouts_per_second / raw);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("bench", "benchmarks");
  cmd->require_subcommand(1);
  cmd->add_subcommand("perft", "perft over a fixed suite of positions: nodes, seconds, nodes/s")
      ->callback(bench_perft);
  auto depth = std::make_shared<int>(7);
  auto nnue_file = std::make_shared<std::string>();
  CLI::App* search = cmd->add_subcommand("search", "fixed-depth search over the suite: node signature and nodes/s");
  search->add_option("--depth", *depth, "plies per position")->check(CLI::Range(1, 30));
  search->add_option("--nnue", *nnue_file,
                     "evaluate with this learned network: default (the shipped one), none, or a file (ultima nnue train)");
  search->callback([depth, nnue_file] { bench_search(*depth, *nnue_file); });
  struct SmpBench {
    std::vector<int> threads{1, 2};
    double seconds = 2;
    int hash_mb = 64;
    std::string nnue;
  };
  auto sb = std::make_shared<SmpBench>();
  CLI::App* smp = cmd->add_subcommand(
      "smp", "alpha-beta nodes/s and depth reached in a fixed time by thread count (Lazy SMP scaling)");
  smp->add_option("--threads", sb->threads, "thread counts to measure, e.g. 1,2,4,8,16")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  smp->add_option("--seconds", sb->seconds, "search time per position")
      ->check(CLI::Range(0.05, 600.0))
      ->capture_default_str();
  add_hash_option(smp, sb->hash_mb, "transposition table MB");
  smp->add_option("--nnue", sb->nnue, "evaluate with this learned network: default (the shipped one), none, or a file");
  smp->callback([sb] { bench_smp(sb->threads, sb->seconds, sb->hash_mb, sb->nnue); });
  struct MctsBench {
    std::string net;
    int threads = 1, batch = 64;
    double seconds = 5;
  };
  auto mb = std::make_shared<MctsBench>();
  CLI::App* mcts = cmd->add_subcommand("mcts", "MCTS playouts/s with a network, beside its raw forward throughput");
  mcts->add_option("--net", mb->net,
                   "network settings, e.g. weights=FILE or blocks=6,channels=64 (default: random 6x64), or material "
                   "(the network-free evaluator)");
  add_threads_option(mcts, mb->threads, "MCTS search threads");
  mcts->add_option("--batch", mb->batch, "leaves each thread gathers per evaluation")->check(CLI::Range(1, 4096));
  mcts->add_option("--seconds", mb->seconds, "seconds for each measurement")->check(CLI::Range(0.1, 3600.0));
  mcts->callback([mb] { bench_mcts(mb->net, mb->threads, mb->batch, mb->seconds); });
  add_bench_nn_command(*cmd);
  add_bench_selfplay_command(*cmd);
  add_bench_train_command(*cmd);
  add_bench_analyze_command(*cmd);
  add_bench_solver_command(*cmd);
}

}  // namespace ultima::cli
