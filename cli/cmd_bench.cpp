// ultima bench perft: a fixed suite of perft positions, for speed.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "engine/perft.h"

namespace ultima::cli {
namespace {

struct BenchPosition {
  const char* rules;
  const char* fen;  // "startpos" for the rule set's start
  int depth;
};

const BenchPosition kPerftSuite[] = {
    {"abbott1963", "startpos", 4},
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

}  // namespace

void add_bench_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("bench", "benchmarks");
  cmd->require_subcommand(1);
  cmd->add_subcommand("perft", "perft over a fixed suite of positions: nodes, seconds, nodes/s")
      ->callback(bench_perft);
}

}  // namespace ultima::cli
