// A player: anything that picks a move in a game. Matches, ladders, the
// front ends (UCI, the web server, the terminal game) and self-play
// evaluation talk to players only through this interface: each runs any
// player the same way, under its own clock, and never looks inside a spec.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/rules/movegen.h"
#include "engine/rules/position.h"
#include "engine/search/search.h"

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

// What the caller allows one move, on top of the player's own budget (a
// level's nodes or time, a bot's playouts): the player stops at whichever
// ends first. Empty limits (the default) leave the player's own budget
// alone, which is how matches and ladders play.
struct MoveLimits {
  std::int64_t movetime_ms = 0;      // a fixed time for this move (0: none)
  std::int64_t time_ms[2] = {0, 0};  // the clocks, by colour (0: none)
  std::int64_t inc_ms[2] = {0, 0};
  int movestogo = 0;
  int depth = 0;                     // a depth cap (alpha-beta players)
  std::uint64_t nodes = 0;           // a node cap (MCTS: root visits)
  // The alpha-beta players' progress, one call per iteration (UCI's info
  // lines); players without such lines never call it.
  std::function<void(const SearchInfo&)> on_info;

  bool any() const {
    return movetime_ms || time_ms[0] || time_ms[1] || inc_ms[0] || inc_ms[1] || depth || nodes;
  }
};

// The same limits as the alpha-beta search's, and back (UCI's go gives a
// SearchLimits; a level searches with one).
inline MoveLimits move_limits_of(const SearchLimits& s) {
  MoveLimits m;
  m.movetime_ms = s.movetime_ms;
  for (int c = 0; c < 2; ++c) {
    m.time_ms[c] = s.time_ms[c];
    m.inc_ms[c] = s.inc_ms[c];
  }
  m.movestogo = s.movestogo;
  m.depth = s.depth;
  m.nodes = s.nodes;
  return m;
}
inline SearchLimits search_limits_of(const MoveLimits& m) {
  SearchLimits s;
  s.movetime_ms = m.movetime_ms;
  for (int c = 0; c < 2; ++c) {
    s.time_ms[c] = m.time_ms[c];
    s.inc_ms[c] = m.inc_ms[c];
  }
  s.movestogo = m.movestogo;
  s.depth = m.depth;
  s.nodes = m.nodes;
  return s;
}

class Player {
 public:
  virtual ~Player() = default;
  virtual std::string name() const = 0;
  // Called before each game.
  virtual void new_game() {}
  // The game's current position with its history (for repetitions); the
  // game is not over, so at least one legal move exists. `seed` makes any
  // randomness of the player reproducible for this move.
  virtual MoveChoice choose(Position& pos, std::uint64_t seed, const MoveLimits& limits = {}) = 0;
  // Asks a choose() running on another thread to end now with the best
  // move found so far. Thread-safe; a stop that arrives before the search
  // has begun may be missed, so a caller asks until choose() returns.
  virtual void stop() {}
};

}  // namespace ultima
