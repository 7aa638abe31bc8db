// The network's input: a position as float planes [kInputPlanes][8][8], seen
// from the side to move ("own" and "enemy" pieces rather than White and
// Black). Ultima's rules are the same for both colours, so no board flip is
// needed: squares keep their names and the policy index (policy_index.h)
// uses the real squares. A network reads the first 25 planes (encoding 1,
// the pieces and the rules) or all 33 (encoding 2, which adds eight planes
// of what the next move can do: captures, checks and the kings' safe
// squares, found by the move generator as KataGo's inputs give its network
// liberties and ladders). Plain C++, no LibTorch: the search, the tests and
// the trainer share it. The plane list is in nn/README.md.
#pragma once

#include <array>
#include <span>
#include <string>
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
  kPlainPlanes = 25,   // encoding 1 ends here
  // Encoding 2's tactics planes, from every pseudo-legal move of each side
  // (the enemy's as if it were to move); removals are left out.
  kOwnCaptures = 25,   // enemy pieces one of our moves captures
  kEnemyCaptures = 26, // own pieces one of the enemy's moves would capture
  kOwnCheckTo = 27,    // where our moves that give check end
  kOwnCheckFrom = 28,  // where they start
  kEnemyCheckTo = 29,  // where the enemy's moves that would give check end
  kOwnKingSafe = 30,   // squares our king can step to and not be in check
  kEnemyKingSafe = 31, // the same for the enemy king
  kInCheck = 32,       // constant 1: the side to move is in check
  kInputPlanes = 33,   // the most a network reads; buffers hold this many
};
constexpr int kPlaneSize = 64;
constexpr int kInputSize = kInputPlanes * kPlaneSize;
// Model files record the encoding: 1 for kPlainPlanes planes, 2 for
// kInputPlanes. The version of a plane count, 0 for any other count.
constexpr int encoding_version(int planes) {
  return planes == kPlainPlanes ? 1 : planes == kInputPlanes ? 2 : 0;
}

// Throws std::invalid_argument unless 1 <= planes <= kInputPlanes, naming
// `reader` (what was to read that many planes).
void check_input_planes(int planes, const std::string& reader);

// The plane of a piece kind (kKing..kChameleon) within the own/enemy group.
constexpr int kind_plane(Kind k) { return static_cast<int>(k) - 1; }

// Writes every one of the kInputSize floats of `out`: the first `planes`
// planes (kPlainPlanes or kInputPlanes) as encoded, the rest 0, so the
// tactics planes cost nothing to a network that does not read them.
void encode_position(const Position& pos, std::span<float, kInputSize> out, int planes = kInputPlanes);
std::vector<float> encode_position(const Position& pos, int planes = kInputPlanes);
// Writes the tactics planes (kPlainPlanes..kInputPlanes) of `out`.
void encode_tactics(const Position& pos, std::span<float, kInputSize> out);

// The planes of the position seen through a symmetry: out[p][transform(s)] =
// in[p][s]. encode_position(transform(pos, sym)) == transform_planes(
// encode_position(pos), sym) for history-free positions.
void transform_planes(std::span<const float, kInputSize> in, std::span<float, kInputSize> out, Symmetry sym);
std::vector<float> transform_planes(const std::vector<float>& in, Symmetry sym);

// Short names of the planes ("own-king", "rule-leaper-single", ...), for
// documentation and debugging output.
const char* plane_name(int plane);

}  // namespace ultima::nn
