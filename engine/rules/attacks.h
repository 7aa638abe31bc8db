// Freezing and check, read from a placement (RULES.md sections 6 and 7).
#pragma once

#include "engine/rules/bitboard.h"
#include "engine/rules/position.h"
#include "engine/rules/rule_set.h"

namespace ultima {

// Immobilizers of colour `by` that freeze their neighbours: all of them,
// except under "frozen immobilizer neutralized" those next to an enemy
// immobilizer or enemy chameleon.
inline Bitboard active_immobilizers(const BoardBits& b, Color by, const Rules& rules) {
  Bitboard imm = b.kind[by][kImmobilizer];
  if (rules.frozen_immobilizer == FrozenImmobilizerRule::kNeutralized)
    imm &= ~neighbours(b.kind[~by][kImmobilizer] | b.kind[~by][kChameleon]);
  return imm;
}

// Pieces of colour c that cannot move: next to an (active) enemy
// immobilizer, or an immobilizer next to an enemy chameleon.
inline Bitboard frozen_pieces(const BoardBits& b, Color c, const Rules& rules) {
  const Color enemy = ~c;
  return (neighbours(active_immobilizers(b, enemy, rules)) & b.color[c]) |
         (b.kind[c][kImmobilizer] & neighbours(b.kind[enemy][kChameleon]));
}

// Is c's king capturable by some unfrozen enemy piece's next move? False when
// c has no king. The attacker's own king safety is ignored, as in chess.
bool king_attacked(const BoardBits& b, Color c, const Rules& rules);
// How many enemy pieces could capture c's king next move, counted once per
// piece and capture mode (0 when c has no king).
int king_capture_routes(const BoardBits& b, Color c, const Rules& rules);

}  // namespace ultima
