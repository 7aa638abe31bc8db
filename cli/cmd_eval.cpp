// ultima eval [--fen FEN] [--rules RULES] [--weights FILE]: the static
// evaluation of a position (or the end of the game when it is over), and
// the weights it used (a template for files).
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "common.h"
#include "engine/rules/movegen.h"
#include "engine/search/static_eval.h"

namespace ultima::cli {

void add_eval_command(CLI::App& app) {
  struct Options {
    PositionOptions position;
    std::string weights;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("eval", "static evaluation of a position, and the weights used");
  cmd->add_option("--fen", opts->position.fen, "position in FEN, or startpos");
  add_rules_option(cmd, opts->position.rules);
  cmd->add_option("--weights", opts->weights, "YAML file of evaluation weights (default: built in)");
  cmd->callback([opts] {
    const Position pos = make_position(opts->position);
    const EvalWeights w = opts->weights.empty() ? EvalWeights{} : EvalWeights::load(opts->weights);
    std::printf("# weights\n%s", w.to_yaml().c_str());
    // A finished game has a result, not an evaluation.
    const GameStatus status = game_status(pos);
    if (status.over()) {
      std::printf("game over: %s %s\n", termination_name(status.termination), outcome_text(status.outcome));
      return;
    }
    std::printf("eval %d  (centipawns, side to move: %s)\n", evaluate(pos, w),
                pos.side_to_move() == kWhite ? "white" : "black");
  });
}

}  // namespace ultima::cli
