// ultima selfcheck: perft from each preset's start position against the
// values that independent implementations agree on.
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "commands.h"
#include "engine/rules/perft.h"

namespace ultima::cli {
namespace {

struct KnownPerft {
  const char* rules;
  int depth;
  std::uint64_t nodes;
};

// boardspace differs from abbott1963 only in how a game without moves ends,
// which perft does not see, so it shares abbott1963's values.
const KnownPerft kKnown[] = {
    {"abbott1963", 1, 32},      {"abbott1963", 2, 944},     {"abbott1963", 3, 42762},
    {"abbott1963", 4, 1850161}, {"abbott1963", 5, 94577885}, {"abbott1962", 3, 42738},
    {"zillions", 4, 1850197},   {"boardspace", 4, 1850161},
};

void selfcheck() {
  int failures = 0;
  for (const KnownPerft& k : kKnown) {
    Position pos = Position::start(Rules::parse(k.rules));
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t nodes = perft(pos, k.depth);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool ok = nodes == k.nodes;
    failures += !ok;
    std::printf("%-4s %-10s perft %d = %llu (expected %llu, %.2f s)\n", ok ? "ok" : "FAIL", k.rules, k.depth,
                static_cast<unsigned long long>(nodes), static_cast<unsigned long long>(k.nodes), seconds);
  }
  if (failures) throw std::runtime_error(std::to_string(failures) + " perft value(s) differ from the known ones");
  std::printf("selfcheck: all %zu perft values agree\n", std::size(kKnown));
}

}  // namespace

void add_selfcheck_command(CLI::App& app) {
  app.add_subcommand("selfcheck", "perft from the start positions against known values")->callback(selfcheck);
}

}  // namespace ultima::cli
