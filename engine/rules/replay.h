// A game from its start and its moves in coordinate form, checked move by
// move: the one replay behind every front end (UCI's position command, the
// analysis engine's queries, the web server's requests) and the puzzles.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/rules/position.h"
#include "engine/rules/rule_set.h"
#include "engine/rules/types.h"

namespace ultima {

// One move that cannot be played: the list it came from, its index there
// (from 0), its text as given and the problem. what() is the one format
// every caller shows: "moves[3] 'd2d9': <problem>" (a text of more than 40
// characters is cut there).
class ReplayError : public std::invalid_argument {
 public:
  ReplayError(const std::string& list, std::size_t index, const std::string& text, const std::string& problem);
  std::size_t index;
  std::string text;
  std::string problem;
};

struct ReplayedGame {
  std::vector<Position> positions;  // positions[t]: after the first t moves; positions[0] the start
  std::vector<Move> moves;          // moves[t] leads from positions[t] to positions[t + 1]
  const Position& last() const { return positions.back(); }
};

// The start position of a game: "startpos" (or empty) for the rule set's
// own, else a FEN. Throws FenError for a bad one.
Position start_position(const std::string& fen, const Rules& rules);

// Plays `moves` from `start`; throws ReplayError, naming `list` (the field
// or option the moves came from) and the move at fault, for a move that is
// not legal there, cannot be read, or comes after the game has ended.
ReplayedGame replay_game(const Position& start, const std::vector<std::string>& moves,
                         const std::string& list = "moves");

}  // namespace ultima
