// ultima bench perft|search: fixed suites for speed and regressions.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "engine/notation.h"
#include "engine/perft.h"
#include "engine/search.h"

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

void bench_perft() {
  std::uint64_t total = 0;
  double total_seconds = 0;
  for (const BenchPosition& b : kPerftSuite) {
    const Rules rules = Rules::parse(b.rules);
    Position pos = std::string(b.fen) == "startpos" ? Position::start(rules) : Position::from_fen(b.fen, rules);
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
void bench_search(int depth) {
  std::uint64_t total = 0;
  double total_seconds = 0;
  for (const BenchPosition& b : kPerftSuite) {
    const Rules rules = Rules::parse(b.rules);
    Position pos = std::string(b.fen) == "startpos" ? Position::start(rules) : Position::from_fen(b.fen, rules);
    Searcher searcher(16);
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

}  // namespace

void add_bench_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("bench", "benchmarks");
  cmd->require_subcommand(1);
  cmd->add_subcommand("perft", "perft over a fixed suite of positions: nodes, seconds, nodes/s")
      ->callback(bench_perft);
  auto depth = std::make_shared<int>(7);
  CLI::App* search = cmd->add_subcommand("search", "fixed-depth search over the suite: node signature and nodes/s");
  search->add_option("--depth", *depth, "plies per position")->check(CLI::Range(1, 30));
  search->callback([depth] { bench_search(*depth); });
}

}  // namespace ultima::cli
