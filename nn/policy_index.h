// The policy's fixed move slots. Every Ultima move runs along a queen line
// (pawns like rooks, the king one step, leaps included) or is a removal, and
// from and to decide the move (captures follow), so a move is a from-square
// and either one of 8 directions x 7 distances or "removal":
//
//   slot = plane * 64 + from,  plane = direction * 7 + (distance - 1), 0..55,
//                              plane 56 = removal of the piece on `from`
//
// 57 planes x 64 squares = 3648 slots, the flat [57][8][8] output of a
// convolutional policy head. Directions, clockwise from north: N, NE, E, SE,
// S, SW, W, NW. Squares are the real ones (no flip for Black; see
// encoding.h). Some slots point off the board; no move maps to them.
#pragma once

#include <array>

#include "engine/rules/movegen.h"
#include "engine/rules/symmetry.h"
#include "engine/rules/types.h"

namespace ultima::nn {

constexpr int kDirections = 8;
constexpr int kMaxDistance = 7;
constexpr int kRemovalPlane = kDirections * kMaxDistance;  // 56
constexpr int kPolicyPlanes = kRemovalPlane + 1;           // 57
constexpr int kPolicySize = kPolicyPlanes * 64;            // 3648
// Model files record the layout, so a changed layout cannot load old nets.
constexpr int kPolicyLayoutVersion = 1;

// File and rank steps of the directions, in slot order.
constexpr std::array<int, kDirections> kDirectionFile = {0, 1, 1, 1, 0, -1, -1, -1};
constexpr std::array<int, kDirections> kDirectionRank = {1, 1, 0, -1, -1, -1, 0, 1};

struct PolicySlot {
  Square from = kNoSquare;
  Square to = kNoSquare;  // kNoSquare for a slot that leaves the board
  bool removal = false;   // then to == from
  bool on_board() const { return to != kNoSquare; }
};

// The slot of a move: a removal, or a step along a queen line (any other
// move, or a null move, gives -1).
int policy_index(const Move& move);
// The squares of a slot (0 <= index < kPolicySize).
PolicySlot policy_slot(int index);
// The slot that a symmetry maps this slot to: policy_index(transform(m,
// sym)) == transform_policy_index(policy_index(m), sym). A permutation of
// all 3648 slots, off-board ones included.
int transform_policy_index(int index, Symmetry sym);
// The move of `list` in this slot, or a null move.
Move find_move(const MoveList& list, int index);

}  // namespace ultima::nn
