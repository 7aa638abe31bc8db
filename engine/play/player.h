// A player: anything that picks a move in a game. Matches, ladders and
// self-play evaluation talk to players only through this interface.
#pragma once

#include <memory>
#include <string>

#include "engine/rules/movegen.h"
#include "engine/rules/position.h"

namespace ultima {

struct MoveChoice {
  Move move;
  // Score from the mover's point of view in centipawns, when the player has
  // one (for logs and game records); 0 otherwise.
  int score_cp = 0;
  // Searched depth and nodes, when meaningful.
  int depth = 0;
  std::uint64_t nodes = 0;
};

class Player {
 public:
  virtual ~Player() = default;
  virtual std::string name() const = 0;
  // Called before each game.
  virtual void new_game() {}
  // The game's current position with its history (for repetitions); the
  // game is not over, so at least one legal move exists. `seed` makes any
  // randomness of the player reproducible for this move.
  virtual MoveChoice choose(Position& pos, std::uint64_t seed) = 0;
};

}  // namespace ultima
