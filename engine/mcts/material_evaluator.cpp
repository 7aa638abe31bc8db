#include "engine/mcts/material_evaluator.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ultima {

void MaterialEvaluator::value_of(int cp, EvalOutput& out) const {
  const double p = 1 / (1 + std::exp(-cp / config_.value_scale_cp));
  // 4p(1-p) is 1 at an even score and tends to 0 as one side takes over.
  const double draw = config_.draw_share * 4 * p * (1 - p);
  out.win = static_cast<float>(p * (1 - draw));
  out.loss = static_cast<float>((1 - p) * (1 - draw));
  out.draw = static_cast<float>(draw);
}

void MaterialEvaluator::evaluate(std::span<const EvalInput> inputs, std::span<EvalOutput> outputs) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Position& pos = *inputs[i].position;
    const MoveList& moves = *inputs[i].moves;
    EvalOutput& out = outputs[i];
    value_of(ultima::evaluate(pos, config_.weights), out);

    // Stateless and reading only its inputs: safe from several threads.
    Position after;
    if (config_.check_bonus_cp != 0) after = pos;
    const Color them = ~pos.side_to_move();
    thread_local std::vector<double> logits;
    logits.resize(moves.size());
    for (int m = 0; m < moves.size(); ++m) {
      double gain = 0;
      for (Bitboard c = moves[m].captures; c;) {
        const Kind k = kind_of(pos.piece_on(pop_lsb(c)));
        gain += k == kKing ? config_.king_value_cp : config_.weights.value[k];
      }
      if (moves[m].is_removal()) gain -= config_.weights.value[kind_of(pos.piece_on(moves[m].from()))];
      if (config_.check_bonus_cp != 0) {
        after.make(moves[m]);
        if (after.in_check(them)) gain += config_.check_bonus_cp;
        after.unmake();
      }
      logits[m] = gain / config_.prior_temperature_cp;
    }
    out.policy.resize(moves.size());
    if (moves.empty()) continue;
    const double top = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (int m = 0; m < moves.size(); ++m) sum += logits[m] = std::exp(logits[m] - top);
    for (int m = 0; m < moves.size(); ++m) out.policy[m] = static_cast<float>(logits[m] / sum);
  }
}

}  // namespace ultima
