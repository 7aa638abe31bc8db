#include "engine/play/mcts_player.h"

#include <algorithm>
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

namespace {

// The tighter of two budgets, where 0 means none.
template <class T>
T tighter(T a, T b) {
  return a == 0 ? b : b == 0 ? a : std::min(a, b);
}

}  // namespace

MoveChoice MctsPlayer::choose(Position& pos, std::uint64_t seed, const MoveLimits& limits) {
  MctsConfig config = config_;
  config.seed = seed;
  mcts_.set_config(config);
  mcts_.set_position(pos);
  MctsLimits budget = limits_;
  const Color us = pos.side_to_move();
  std::int64_t movetime = limits.movetime_ms;
  if (!movetime) movetime = mcts_move_time_ms(limits.time_ms[us], limits.inc_ms[us], limits.movestogo);
  budget.movetime_ms = tighter(budget.movetime_ms, movetime);
  budget.visits = tighter(budget.visits, limits.nodes);
  last_ = mcts_.search(budget);
  if (last_.best.is_null()) throw std::logic_error("MctsPlayer asked to move in a finished game");
  MoveChoice choice;
  choice.move = pick_move(last_, temperature_, seed ^ 0x9e3779b97f4a7c15ULL);
  choice.score_cp = last_.mate ? (last_.mate > 0 ? 20000 : -20000) : q_to_centipawns(last_.q);
  choice.depth = last_.depth;
  choice.nodes = last_.playouts;
  return choice;
}

}  // namespace ultima
