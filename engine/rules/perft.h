// perft: leaf counts of the legal move tree, the first test of move generation.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/rules/position.h"

namespace ultima {

// Leaf nodes at `depth` plies; draws are ignored, as chess perft does.
// The last ply is counted without being played (bulk counting).
std::uint64_t perft(Position& pos, int depth);

struct DivideEntry {
  Move move;
  std::uint64_t nodes;
};
// perft below each legal move, in generation order.
std::vector<DivideEntry> perft_divide(Position& pos, int depth);

}  // namespace ultima
