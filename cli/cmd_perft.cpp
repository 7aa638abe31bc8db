// ultima perft --depth N [--fen FEN] [--rules PRESET] [--divide]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "common.h"
#include "engine/rules/notation.h"
#include "engine/rules/perft.h"

namespace ultima::cli {

void add_perft_command(CLI::App& app) {
  struct Options {
    PositionOptions position;
    int depth = 0;
    bool divide = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("perft", "count the leaf nodes of the legal move tree");
  cmd->add_option("--depth", opts->depth, "plies to search")->required()->check(CLI::Range(0, 30));
  cmd->add_option("--fen", opts->position.fen, "position in FEN, or startpos");
  add_rules_option(cmd, opts->position.rules);
  cmd->add_flag("--divide", opts->divide, "one line per legal move: '<move>: <count>'");
  cmd->callback([opts] {
    Position pos = make_position(opts->position);
    const auto start = std::chrono::steady_clock::now();
    std::uint64_t total = 0;
    if (opts->divide && opts->depth > 0) {
      std::vector<DivideEntry> entries = perft_divide(pos, opts->depth);
      std::vector<std::pair<std::string, std::uint64_t>> lines;
      for (const DivideEntry& e : entries) lines.emplace_back(to_coordinate(e.move), e.nodes);
      std::sort(lines.begin(), lines.end());
      for (const auto& [text, nodes] : lines) {
        std::printf("%s: %llu\n", text.c_str(), static_cast<unsigned long long>(nodes));
        total += nodes;
      }
    } else {
      total = perft(pos, opts->depth);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("nodes %llu\n", static_cast<unsigned long long>(total));
    std::fprintf(stderr, "time %.3f s, %.0f nodes/s\n", seconds, seconds > 0 ? total / seconds : 0.0);
  });
}

}  // namespace ultima::cli
