// An Evaluator without a network: priors from what a move captures (and
// whether it gives check), value from the alpha-beta evaluation squashed to
// win/draw/loss. It stands in for the network in tests and gives MCTS a
// backend where no trained network exists.
#pragma once

#include <string>

#include "engine/mcts/evaluator.h"
#include "engine/search/static_eval.h"

namespace ultima {

struct MaterialEvaluatorConfig {
  EvalWeights weights;
  // Win probability 1 / (1 + exp(-cp / value_scale_cp)), as the log-odds
  // of a centipawn score (q_to_centipawns is its inverse).
  double value_scale_cp = 300;
  // Share of the remaining probability given to a draw at an even score,
  // falling off as the score gets lopsided.
  double draw_share = 0.1;
  // Priors: softmax of (value captured + check bonus) / prior_temperature_cp;
  // a quiet move scores 0, so with no captures the priors are uniform.
  double prior_temperature_cp = 300;
  // A king captured outright (king-capture objective) counts this much.
  double king_value_cp = 5000;
  // For a move that gives check (0: checks are not looked for, which is
  // faster: it saves making every move).
  double check_bonus_cp = 200;
};

class MaterialEvaluator : public Evaluator {
 public:
  explicit MaterialEvaluator(MaterialEvaluatorConfig config = {}) : config_(config) {}
  void evaluate(std::span<const EvalInput> inputs, std::span<EvalOutput> outputs) override;
  std::string name() const override { return "material"; }

  // The value alone: win, draw and loss for a score in centipawns.
  void value_of(int cp, EvalOutput& out) const;

 private:
  MaterialEvaluatorConfig config_;
};

}  // namespace ultima
