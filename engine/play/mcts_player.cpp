#include "engine/play/mcts_player.h"

#include <stdexcept>

namespace ultima {

MctsPlayer::MctsPlayer(std::shared_ptr<Evaluator> evaluator, MctsConfig config, MctsLimits limits,
                       double temperature)
    : mcts_(std::move(evaluator), config), config_(config), limits_(limits), temperature_(temperature) {}

std::string MctsPlayer::name() const {
  std::string text = "mcts(" + mcts_.evaluator().name();
  if (limits_.playouts) text += ", " + std::to_string(limits_.playouts) + " playouts";
  if (limits_.visits) text += ", " + std::to_string(limits_.visits) + " visits";
  if (limits_.movetime_ms) text += ", " + std::to_string(limits_.movetime_ms) + " ms";
  return text + (config_.gumbel ? ", gumbel)" : ")");
}

MoveChoice MctsPlayer::choose(Position& pos, std::uint64_t seed) {
  MctsConfig config = config_;
  config.seed = seed;
  mcts_.set_config(config);
  mcts_.set_position(pos);
  last_ = mcts_.search(limits_);
  if (last_.best.is_null()) throw std::logic_error("MctsPlayer asked to move in a finished game");
  MoveChoice choice;
  choice.move = pick_move(last_, temperature_, seed ^ 0x9e3779b97f4a7c15ULL);
  choice.score_cp = last_.mate ? (last_.mate > 0 ? 20000 : -20000) : q_to_centipawns(last_.q);
  choice.depth = last_.depth;
  choice.nodes = last_.playouts;
  return choice;
}

}  // namespace ultima
