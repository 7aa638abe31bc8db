// ultima moves [--fen FEN] [--rules PRESET]: the legal moves, or the end of
// the game when it is over.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "common.h"
#include "engine/rules/movegen.h"
#include "engine/rules/notation.h"

namespace ultima::cli {

void add_moves_command(CLI::App& app) {
  auto opts = std::make_shared<PositionOptions>();
  CLI::App* cmd = app.add_subcommand("moves", "list the legal moves with what each captures");
  cmd->add_option("--fen", opts->fen, "position in FEN, or startpos");
  add_rules_option(cmd, opts->rules);
  cmd->callback([opts] {
    const Position pos = make_position(*opts);
    // A finished game has no moves left to play, whatever could move.
    const GameStatus status = game_status(pos);
    if (status.over()) {
      std::printf("game over: %s %s\n", termination_name(status.termination), outcome_text(status.outcome));
      return;
    }
    MoveList list;
    generate_legal(pos, list);
    std::vector<std::string> lines;
    for (const Move& m : list) lines.push_back(to_coordinate(m) + " " + captures_text(m));
    std::sort(lines.begin(), lines.end());
    for (const std::string& line : lines) std::printf("%s\n", line.c_str());
  });
}

}  // namespace ultima::cli
