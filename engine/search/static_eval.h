// The static evaluation: material (frozen pieces at a discount), mobility
// and king danger. All weights live in EvalWeights, loadable from a file so
// that they can be tuned.
#pragma once

#include <array>
#include <string>

#include "engine/rules/position.h"

namespace ultima {

struct EvalWeights {
  // Centipawns by kind (index Kind; the king's is unused: it cannot be lost
  // without losing the game). Fitted by `ultima tune values` to 3,000 games
  // of the casual level (79,771 positions; standard errors 3-11 cp).
  std::array<int, kKindCount> value = {0, 0, 100, 324, 605, 460, 997, 319};
  // A frozen piece counts this share of its value, in percent (fitted the
  // same way, over the pieces other than pawns).
  int frozen_percent = 42;
  // Per empty square an unfrozen piece could move to, in centipawns.
  int mobility = 3;
  // Per way the side to move's king could be captured next move if it
  // ignored the threat (more ways are harder to meet).
  int king_routes = 40;
  // Per unfrozen enemy piece within two squares of the king.
  int king_proximity = 12;
  // For having the move.
  int tempo = 12;

  // Reads "key: value" pairs (YAML) from a file; keys left out keep their
  // defaults. Throws std::invalid_argument naming the file, key or value.
  static EvalWeights load(const std::string& path);
  // Applies the pairs of a YAML mapping given as text (for level files).
  void apply_yaml(const std::string& yaml_text, const std::string& origin);
  std::string to_yaml() const;
  // Writes to_yaml() to a file atomically (temporary file, then rename).
  static void save(const std::string& path, const EvalWeights& w);
};

// Score of the position for the side to move, in centipawns.
int evaluate(const Position& pos, const EvalWeights& w);

// The value of c's pieces, kings not counted, frozen ones at full value.
int material(const Position& pos, Color c, const EvalWeights& w);

}  // namespace ultima
