// Piece values measured from games: a logistic regression of the game's
// result on the material balance of positions from it.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "engine/play/pgn.h"

namespace ultima {

// One position's features (White minus Black) and its game's result.
struct ValueSample {
  // Unfrozen and frozen piece counts by kind (pawn .. chameleon: 6 each).
  std::array<double, 6> free_diff{};
  std::array<double, 6> frozen_diff{};
  double white_to_move = 0;  // +1 White to move, -1 Black
  double result = 0.5;       // 1 White won, 0 Black won, 0.5 draw
};

// Samples every `stride`-th position after the opening and `skip_plies`
// more, from decided and drawn games alike.
std::vector<ValueSample> value_samples(const std::vector<GameRecord>& games, int skip_plies, int stride);

struct ValueFit {
  std::array<double, 6> free_value{};    // logistic coefficients per piece
  std::array<double, 6> frozen_value{};
  std::array<double, 6> free_se{};       // standard errors
  std::array<double, 6> frozen_se{};
  double tempo = 0;
  int samples = 0;
  int iterations = 0;
  double log_loss = 0;
  // Centipawns per unit of the logistic scale, from the pawn's coefficient.
  double centipawns(double coefficient) const { return 100.0 * coefficient / free_value[0]; }
};

// Newton's method on the L2-regularized logistic log-likelihood. Throws
// std::invalid_argument with too few samples.
ValueFit fit_values(const std::vector<ValueSample>& samples, double l2 = 1e-3);

// The pawn's coefficient of the piece-value fit (docs/engine.md, "Piece
// values"): the log-odds of winning that one free pawn more is worth, so a
// score of S centipawns has an expected result of
// 1 / (1 + exp(-S / 100 * kFittedPawnLogit)). Measured with `ultima tune
// values --games 3000 --player casual --seed 7`: 0.128 +- 0.004 (112,044
// positions).
constexpr double kFittedPawnLogit = 0.128;

// Win, draw and loss in per mille, summing to 1000.
struct WdlPermille {
  int win = 0, draw = 1000, loss = 0;
};

// An alpha-beta score (centipawns for the side to move, or a mate score of
// engine/search) as win/draw/loss: the expected result through the fitted
// logistic, with a draw share that is largest at an even score
// (kEvenDrawShare) and falls off as one side takes over, as the material
// evaluator's does; a mate is a sure win or loss.
constexpr double kEvenDrawShare = 0.1;
WdlPermille score_to_wdl(int score);

// Shares of win, draw and loss (as the tree search reports them) in per
// mille: win and loss rounded, the draw the rest, so the three sum to 1000
// whatever the rounding.
WdlPermille shares_to_wdl(double win, double draw, double loss);

}  // namespace ultima
