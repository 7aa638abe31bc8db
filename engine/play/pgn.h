// Game records in a PGN-style text: chess's tag pairs, plus `Variant` and
// `Rules`, and the moves in coordinate form with move numbers:
//
//   [Event "ultima match"]
//   ...
//   [Variant "ultima"]
//   [Rules "abbott1963"]
//   [Result "1-0"]
//
//   1. a2a3 a7a6 2. d2d5 xe7 ... 1-0
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/rules/movegen.h"
#include "engine/rules/position.h"

namespace ultima {

// Thrown for a record that cannot be read; the message names the game and,
// for a bad move, the ply and the move text.
class PgnError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct GameRecord {
  std::string event = "?";
  std::string site = "?";
  std::string date = "????.??.??";
  std::string round = "?";
  std::string white = "?";
  std::string black = "?";
  Rules rules;
  // The game's first position; empty means the rule set's start position.
  std::string fen;
  // How many of the first moves were the opening, not the players' choice.
  int opening_plies = 0;
  std::vector<Move> moves;
  Outcome result = Outcome::kOngoing;
  // Why the game ended: a termination_name(), "max plies", ...; may be empty.
  std::string termination;
  // Tags of a read record that have no field here, in file order.
  std::vector<std::pair<std::string, std::string>> other_tags;
};

// The record's first position and the position after all its moves.
Position first_position(const GameRecord& record);
Position final_position(const GameRecord& record);

// One game's text, ending with an empty line.
std::string write_pgn(const GameRecord& record);

// Every game in the text, each replayed move by move: a move that is not
// legal, moves after the game's end, a result token that contradicts the
// Result tag, unknown rules or a bad FEN each throw PgnError.
std::vector<GameRecord> read_pgn(std::string_view text);

// Writes the records to `path` through a temporary file beside it and a
// rename, so the file is either the old one or complete. Throws
// std::runtime_error naming the file.
void write_pgn_file(const std::string& path, const std::vector<GameRecord>& records);
// Throws std::runtime_error when the file cannot be read.
std::vector<GameRecord> read_pgn_file(const std::string& path);

}  // namespace ultima
