#include "encoding.h"

#include <algorithm>
#include <stdexcept>

#include "engine/rules/attacks.h"
#include "engine/rules/movegen.h"

namespace ultima::nn {
namespace {

void fill_plane(std::span<float, kInputSize> out, int plane, float value) {
  std::fill_n(out.begin() + plane * kPlaneSize, kPlaneSize, value);
}

void set_squares(std::span<float, kInputSize> out, int plane, Bitboard squares) {
  float* p = out.data() + plane * kPlaneSize;
  while (squares) p[pop_lsb(squares)] = 1.0f;
}

// The placement after a pseudo-legal move (not a removal) of `mover`.
BoardBits after(const Position& pos, Color mover, const Move& m) {
  BoardBits b = pos.bits();
  const Kind k = kind_of(pos.piece_on(m.from()));
  b.remove(mover, k, m.from());
  for (int x = kKing; x <= kChameleon; ++x) b.kind[~mover][x] &= ~m.captures;
  b.color[~mover] &= ~m.captures;
  b.occupied = b.color[kWhite] | b.color[kBlack];
  b.put(mover, k, m.to());
  return b;
}

struct SideTactics {
  Bitboard captures = 0, check_to = 0, check_from = 0, king_safe = 0;
};

// What the side to move of `pos` can do with its next move.
SideTactics side_tactics(const Position& pos) {
  const Color mover = pos.side_to_move();
  const Bitboard king = pos.pieces(mover, kKing);
  MoveList list;
  generate_pseudo_legal(pos, list);
  SideTactics t;
  for (const Move& m : list) {
    if (m.is_removal()) continue;
    t.captures |= m.captures;
    const BoardBits b = after(pos, mover, m);
    if (king_attacked(b, ~mover, pos.rules())) {
      t.check_to |= square_bb(m.to());
      t.check_from |= square_bb(m.from());
    }
    if ((king & square_bb(m.from())) && !king_attacked(b, mover, pos.rules())) t.king_safe |= square_bb(m.to());
  }
  return t;
}

// Model files and run configs written so far name these counts: a new set
// goes after the last, never between.
static_assert(planes_for_encoding(1) == 25 && planes_for_encoding(2) == 33);

// "a, b or c" of one phrase per encoding.
std::string join_encodings(std::string (*phrase)(const PlaneSet&)) {
  std::string out;
  for (int i = 0; i < kPlaneSetCount; ++i) {
    if (i > 0) out += i + 1 < kPlaneSetCount ? ", " : " or ";
    out += phrase(kPlaneSets[i]);
  }
  return out;
}

}  // namespace

std::string input_plane_choices() {
  return join_encodings(
      [](const PlaneSet& set) { return std::to_string(set.end_plane()) + " (" + set.summary + ")"; });
}

std::string encoding_choices() {
  return join_encodings([](const PlaneSet& set) {
    return "version " + std::to_string(set.encoding) + " with " + std::to_string(set.end_plane()) + " planes";
  });
}

void check_input_planes(int planes, const std::string& reader) {
  if (encoding_for_planes(planes) == 0)
    throw std::invalid_argument(reader + " reads " + std::to_string(planes) + " input planes; this build encodes " +
                                input_plane_choices());
}

void encode_pieces_and_rules(const Position& pos, std::span<float, kInputSize> out) {
  const Color us = pos.side_to_move();
  const Color them = ~us;
  for (int k = kKing; k <= kChameleon; ++k) {
    set_squares(out, kOwnPieces + kind_plane(Kind(k)), pos.pieces(us, Kind(k)));
    set_squares(out, kEnemyPieces + kind_plane(Kind(k)), pos.pieces(them, Kind(k)));
  }
  set_squares(out, kOwnFrozen, pos.frozen(us));
  set_squares(out, kEnemyFrozen, pos.frozen(them));

  const Rules& rules = pos.rules();
  // The setup switch is left out: it only decides the start position.
  if (rules.leaper == LeaperRule::kSingle) fill_plane(out, kRuleLeaperSingle, 1);
  if (rules.chameleon == ChameleonRule::kShape) fill_plane(out, kRuleChameleonShape, 1);
  if (rules.removal == RemovalRule::kForbidden) fill_plane(out, kRuleRemovalForbidden, 1);
  if (rules.frozen_immobilizer == FrozenImmobilizerRule::kNeutralized)
    fill_plane(out, kRuleImmobilizerNeutralized, 1);
  if (rules.stalemate == StalemateRule::kDraw) fill_plane(out, kRuleStalemateDraw, 1);
  if (rules.objective == Objective::kKingCapture) fill_plane(out, kRuleKingCapture, 1);

  if (pos.repetition_count() >= 2) fill_plane(out, kRepeated, 1);
  fill_plane(out, kHalfmoveClock, std::min(pos.halfmove_clock(), 100) / 100.0f);
  fill_plane(out, kOnes, 1);
}

void encode_tactics(const Position& pos, std::span<float, kInputSize> out) {
  const SideTactics own = side_tactics(pos);
  Position passed = pos;
  passed.make_null();
  const SideTactics enemy = side_tactics(passed);
  set_squares(out, kOwnCaptures, own.captures);
  set_squares(out, kEnemyCaptures, enemy.captures);
  set_squares(out, kOwnCheckTo, own.check_to);
  set_squares(out, kOwnCheckFrom, own.check_from);
  set_squares(out, kEnemyCheckTo, enemy.check_to);
  set_squares(out, kOwnKingSafe, own.king_safe);
  set_squares(out, kEnemyKingSafe, enemy.king_safe);
  fill_plane(out, kInCheck, pos.in_check() ? 1.0f : 0.0f);
}

void encode_position(const Position& pos, std::span<float, kInputSize> out, int planes) {
  std::fill(out.begin(), out.end(), 0.0f);
  for (const PlaneSet& set : plane_sets_read(planes)) set.fill(pos, out);
}

std::vector<float> encode_position(const Position& pos, int planes) {
  std::vector<float> out(kInputSize);
  encode_position(pos, std::span<float, kInputSize>(out.data(), kInputSize), planes);
  return out;
}

void transform_planes(std::span<const float, kInputSize> in, std::span<float, kInputSize> out, Symmetry sym) {
  std::array<Square, 64> to;
  for (Square s = 0; s < 64; ++s) to[s] = transform(s, sym);
  for (int p = 0; p < kInputPlanes; ++p)
    for (Square s = 0; s < 64; ++s) out[p * kPlaneSize + to[s]] = in[p * kPlaneSize + s];
}

std::vector<float> transform_planes(const std::vector<float>& in, Symmetry sym) {
  if (in.size() != static_cast<size_t>(kInputSize))
    throw std::invalid_argument("transform_planes: expected " + std::to_string(kInputSize) + " floats, got " +
                                std::to_string(in.size()));
  std::vector<float> out(kInputSize);
  transform_planes(std::span<const float, kInputSize>(in.data(), kInputSize),
                   std::span<float, kInputSize>(out.data(), kInputSize), sym);
  return out;
}

const char* plane_name(int plane) {
  static constexpr std::array names = {
      "own-king",          "own-pawn",          "own-withdrawer",          "own-leaper",
      "own-coordinator",   "own-immobilizer",   "own-chameleon",           "enemy-king",
      "enemy-pawn",        "enemy-withdrawer",  "enemy-leaper",            "enemy-coordinator",
      "enemy-immobilizer", "enemy-chameleon",   "own-frozen",              "enemy-frozen",
      "rule-leaper-single", "rule-chameleon-shape", "rule-removal-forbidden", "rule-immobilizer-neutralized",
      "rule-stalemate-draw", "rule-king-capture", "repeated",                "halfmove-clock",
      "ones",              "own-captures",      "enemy-captures",          "own-check-to",
      "own-check-from",    "enemy-check-to",    "own-king-safe",           "enemy-king-safe",
      "in-check"};
  static_assert(names.size() == kInputPlanes, "one name per plane");
  return plane >= 0 && plane < kInputPlanes ? names[plane] : "?";
}

}  // namespace ultima::nn
