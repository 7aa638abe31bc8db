// A player that moves by MCTS with a given evaluator (a network, or
// MaterialEvaluator), for matches against the alpha-beta levels and for
// self-play evaluation.
#pragma once

#include <memory>
#include <string>

#include "engine/mcts/mcts.h"
#include "engine/mcts/settings.h"
#include "engine/play/player.h"

namespace ultima {

class MctsPlayer : public Player {
 public:
  // `temperature` > 0 samples moves by visits^(1/T) (self-play openings);
  // 0 plays the search's best move. The per-move seed seeds the search's
  // noise and the sampling, so games are reproducible with one thread.
  MctsPlayer(std::shared_ptr<Evaluator> evaluator, MctsConfig config, MctsLimits limits, double temperature = 0);
  // From named settings, e.g. parse_mcts_settings("playouts=400,gumbel=true").
  MctsPlayer(std::shared_ptr<Evaluator> evaluator, const MctsSettings& settings)
      : MctsPlayer(std::move(evaluator), settings.config, settings.limits, settings.temperature) {}

  std::string name() const override;
  // Drops the tree: a new game shares nothing with the last one.
  void new_game() override { mcts_.clear(); }
  // Keeps the subtree of the moves played since its last move. The caller's
  // limits cap the player's own: a fixed time, or a share of the clock
  // (mcts_move_time_ms), and a node cap as root visits.
  MoveChoice choose(Position& pos, std::uint64_t seed, const MoveLimits& limits = {}) override;
  void stop() override { mcts_.stop(); }
  const MctsResult& last_result() const { return last_; }

 private:
  Mcts mcts_;
  MctsConfig config_;
  MctsLimits limits_;
  double temperature_;
  MctsResult last_;
};

}  // namespace ultima
