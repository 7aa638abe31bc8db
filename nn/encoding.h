// The network's input: a position as float planes [kInputPlanes][8][8], seen
// from the side to move ("own" and "enemy" pieces rather than White and
// Black). Ultima's rules are the same for both colours, so no board flip is
// needed: squares keep their names and the policy index (policy_index.h)
// uses the real squares. The planes come in plane sets (kPlaneSets below),
// and a network reads the first sets: encoding 1 is the pieces and the rules
// (25 planes), encoding 2 adds eight planes of what the next move can do:
// captures, checks and the kings' safe squares, found by the move generator
// as KataGo's inputs give its network liberties and ladders. Plain C++, no
// LibTorch: the search, the tests and the trainer share it. The plane list
// is in nn/README.md.
#pragma once

#include <array>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "engine/rules/position.h"
#include "engine/rules/symmetry.h"

namespace ultima::nn {

// Plane numbers. A plane is 64 floats, square a1 first (index = rank * 8 +
// file), so the tensor [plane][rank][file] is the plain reshape. Each plane
// set of kPlaneSets is a run of them.
enum Plane : int {
  // The pieces and the rules (encoding 1).
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
  // The tactics planes (encoding 2), from every pseudo-legal move of each
  // side (the enemy's as if it were to move); removals are left out.
  kOwnCaptures = 25,   // enemy pieces one of our moves captures
  kEnemyCaptures = 26, // own pieces one of the enemy's moves would capture
  kOwnCheckTo = 27,    // where our moves that give check end
  kOwnCheckFrom = 28,  // where they start
  kEnemyCheckTo = 29,  // where the enemy's moves that would give check end
  kOwnKingSafe = 30,   // squares our king can step to and not be in check
  kEnemyKingSafe = 31, // the same for the enemy king
  kInCheck = 32,       // constant 1: the side to move is in check
  kInputPlanes = 33,   // the end of the last set: the most a network reads; buffers hold this many
};
constexpr int kPlaneSize = 64;
constexpr int kInputSize = kInputPlanes * kPlaneSize;

// The plane sets' fill functions (encode_position calls them; see PlaneSet).
void encode_pieces_and_rules(const Position& pos, std::span<float, kInputSize> out);
void encode_tactics(const Position& pos, std::span<float, kInputSize> out);

// A plane set: planes [first_plane, first_plane + planes) and the function
// that fills them. The input is the sets one after another, and a network
// reads the first few: the encoding a model file records is that of the last
// set it reads, and its input_planes is that set's end. So the encoding
// numbers, the plane counts a network may have and their checks all follow
// from kPlaneSets. A new set is a row at the end (its planes in Plane above,
// kInputPlanes moved to their end), its fill function and its test in
// tests/nn/encoding_test.cpp; the evaluator, the model files, the run
// configs and the trainer take it from here.
struct PlaneSet {
  const char* name;     // "pieces-and-rules", "tactics"
  const char* summary;  // how messages describe the encoding that ends here
  int first_plane;
  int planes;
  int encoding;         // model files' "encoding" for a network that reads up to this set
  // Writes the set's planes of `out`, which are 0 when it is called, and no
  // others. The first set is what a training sample stores (nn/data); every
  // later one must follow from what a sample keeps (the pieces, the rule
  // switches, the halfmove clock; no history), because the trainer finds it
  // again from a sample's position.
  void (*fill)(const Position& pos, std::span<float, kInputSize> out);

  constexpr int end_plane() const { return first_plane + planes; }
};

inline constexpr PlaneSet kPlaneSets[] = {
    {"pieces-and-rules", "the pieces and rules", kOwnPieces, kOnes + 1 - kOwnPieces, 1, encode_pieces_and_rules},
    {"tactics", "with the tactics planes", kOwnCaptures, kInCheck + 1 - kOwnCaptures, 2, encode_tactics},
};
constexpr int kPlaneSetCount = static_cast<int>(std::size(kPlaneSets));

// The planes a network of input encoding `encoding` reads (the end of its
// last set), 0 for an encoding this build does not have.
constexpr int planes_for_encoding(int encoding) {
  for (const PlaneSet& set : kPlaneSets)
    if (set.encoding == encoding) return set.end_plane();
  return 0;
}
// The encoding of a network that reads `planes` planes, 0 for a count that
// does not end a set.
constexpr int encoding_for_planes(int planes) {
  for (const PlaneSet& set : kPlaneSets)
    if (set.end_plane() == planes) return set.encoding;
  return 0;
}
// The sets a network that reads `planes` planes needs: each one that starts
// before `planes`.
constexpr std::span<const PlaneSet> plane_sets_read(int planes) {
  std::size_t n = 0;
  while (n < std::size(kPlaneSets) && kPlaneSets[n].first_plane < planes) ++n;
  return std::span<const PlaneSet>(kPlaneSets, n);
}

// The table's own checks: the sets cover planes 0..kInputPlanes in order
// without gaps, and each set's encoding is above the one before.
constexpr bool plane_sets_consistent() {
  int end = 0, encoding = 0;
  for (const PlaneSet& set : kPlaneSets) {
    if (set.first_plane != end || set.planes < 1 || set.encoding <= encoding) return false;
    end = set.end_plane();
    encoding = set.encoding;
  }
  return end == kInputPlanes;
}
static_assert(plane_sets_consistent(), "kPlaneSets must cover planes 0..kInputPlanes in order, encodings rising");

// The plane counts a network may read, for messages: "25 (the pieces and
// rules) or 33 (with the tactics planes)".
std::string input_plane_choices();
// The same as encodings: "version 1 with 25 planes or version 2 with 33 planes".
std::string encoding_choices();
// Throws std::invalid_argument unless `planes` is one of the counts above,
// naming `reader` (what was to read that many planes) and the counts.
void check_input_planes(int planes, const std::string& reader);

// The plane of a piece kind (kKing..kChameleon) within the own/enemy group.
constexpr int kind_plane(Kind k) { return static_cast<int>(k) - 1; }

// Writes every one of the kInputSize floats of `out`: the sets a network of
// `planes` planes reads (a count check_input_planes allows) as encoded, the
// rest 0, so the later sets cost nothing to a network that does not read them.
void encode_position(const Position& pos, std::span<float, kInputSize> out, int planes = kInputPlanes);
std::vector<float> encode_position(const Position& pos, int planes = kInputPlanes);

// The planes of the position seen through a symmetry: out[p][transform(s)] =
// in[p][s]. encode_position(transform(pos, sym)) == transform_planes(
// encode_position(pos), sym) for history-free positions.
void transform_planes(std::span<const float, kInputSize> in, std::span<float, kInputSize> out, Symmetry sym);
std::vector<float> transform_planes(const std::vector<float>& in, Symmetry sym);

// Short names of the planes ("own-king", "rule-leaper-single", ...), for
// documentation and debugging output.
const char* plane_name(int plane);

}  // namespace ultima::nn
