// The 8 symmetries of the square and the colour flip. Ultima's rules are
// invariant under all of them (pawns move like rooks, pinches work in all
// four orthogonal directions, nothing promotes), so they map legal moves to
// legal moves, and later stages use them for data augmentation.
#pragma once

#include <string>

#include "engine/rules/position.h"

namespace ultima {

enum class Symmetry : int {
  kIdentity = 0,
  kRotate90,        // clockwise a quarter turn: a1 -> a8
  kRotate180,
  kRotate270,
  kMirrorFiles,     // a <-> h
  kMirrorRanks,     // 1 <-> 8
  kTranspose,       // across the a1-h8 diagonal: b1 <-> a2
  kAntiTranspose,   // across the a8-h1 diagonal
};
constexpr int kSymmetryCount = 8;
const char* symmetry_name(Symmetry s);
Symmetry inverse(Symmetry s);

Square transform(Square s, Symmetry sym);
Bitboard transform(Bitboard b, Symmetry sym);
Move transform(const Move& m, Symmetry sym);

// The position seen through the symmetry; with colour_flip, White's pieces
// become Black's and the other side is to move. Counters are kept; the game
// history is not.
Position transform(const Position& pos, Symmetry sym, bool colour_flip = false);

}  // namespace ultima
