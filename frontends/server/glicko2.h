// Glicko-2 ratings (Mark Glickman, "Example of the Glicko-2 system", 2012):
// a rating, its deviation (how uncertain it is) and a volatility (how much
// it moves), updated after a rating period of games. The puzzle trainer
// rates players and puzzles with it, each attempt a game between the two.
#pragma once

#include <vector>

namespace ultima {

struct Glicko {
  double rating = 1500;
  double rd = 350;     // rating deviation
  double vol = 0.06;   // volatility
};

struct GlickoGame {
  Glicko opponent;
  double score = 0;    // 1 a win, 0.5 a draw, 0 a loss
};

// The rating after one rating period with these games (none: only the
// deviation grows). `tau` bounds how fast the volatility changes.
Glicko glicko2_update(const Glicko& player, const std::vector<GlickoGame>& games, double tau = 0.5);

// The expected score of `a` against `b`.
double glicko2_expected(const Glicko& a, const Glicko& b);

}  // namespace ultima
