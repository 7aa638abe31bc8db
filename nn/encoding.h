// The network's input: a position as float planes [kInputPlanes][8][8], seen
// from the side to move ("own" and "enemy" pieces rather than White and
// Black). Ultima's rules are the same for both colours, so no board flip is
// needed: squares keep their names and the policy index (policy_index.h)
// uses the real squares. Plain C++, no LibTorch: the search, the tests and
// the trainer share it. The plane list is in nn/README.md.
#pragma once

#include <array>
#include <span>
#include <vector>

#include "engine/rules/position.h"
#include "engine/rules/symmetry.h"

namespace ultima::nn {

// Plane numbers. A plane is 64 floats, square a1 first (index = rank * 8 +
// file), so the tensor [plane][rank][file] is the plain reshape.
enum Plane : int {
  kOwnPieces = 0,      // 7 planes: king, pawn, withdrawer, leaper, coordinator, immobilizer, chameleon
  kEnemyPieces = 7,    // the same 7 kinds for the opponent
  kOwnFrozen = 14,     // own pieces frozen now
  kEnemyFrozen = 15,   // enemy pieces frozen now
  kRuleLeaperSingle = 16,          // constant planes: 1 when the switch is on
  kRuleChameleonShape = 17,
  kRuleRemovalForbidden = 18,
  kRuleImmobilizerNeutralized = 19,
  kRuleStalemateDraw = 20,
  kRuleKingCapture = 21,
  kRepeated = 22,      // constant 1: this position occurred before (once more draws)
  kHalfmoveClock = 23, // constant halfmove clock / 100 (the 100-ply rule)
  kOnes = 24,          // constant 1: lets the convolutions see the board's edge
  kInputPlanes = 25,
};
constexpr int kPlaneSize = 64;
constexpr int kInputSize = kInputPlanes * kPlaneSize;
// Bumped whenever the meaning of the planes changes; model files record it.
constexpr int kEncodingVersion = 1;

// The plane of a piece kind (kKing..kChameleon) within the own/enemy group.
constexpr int kind_plane(Kind k) { return static_cast<int>(k) - 1; }

// Writes every one of the kInputSize floats of `out`.
void encode_position(const Position& pos, std::span<float, kInputSize> out);
std::vector<float> encode_position(const Position& pos);

// The planes of the position seen through a symmetry: out[p][transform(s)] =
// in[p][s]. encode_position(transform(pos, sym)) == transform_planes(
// encode_position(pos), sym) for history-free positions.
void transform_planes(std::span<const float, kInputSize> in, std::span<float, kInputSize> out, Symmetry sym);
std::vector<float> transform_planes(const std::vector<float>& in, Symmetry sym);

// Short names of the planes ("own-king", "rule-leaper-single", ...), for
// documentation and debugging output.
const char* plane_name(int plane);

}  // namespace ultima::nn
