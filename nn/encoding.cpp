#include "encoding.h"

#include <algorithm>
#include <stdexcept>

namespace ultima::nn {
namespace {

void fill_plane(std::span<float, kInputSize> out, int plane, float value) {
  std::fill_n(out.begin() + plane * kPlaneSize, kPlaneSize, value);
}

void set_squares(std::span<float, kInputSize> out, int plane, Bitboard squares) {
  float* p = out.data() + plane * kPlaneSize;
  while (squares) p[pop_lsb(squares)] = 1.0f;
}

}  // namespace

void encode_position(const Position& pos, std::span<float, kInputSize> out) {
  std::fill(out.begin(), out.end(), 0.0f);
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

std::vector<float> encode_position(const Position& pos) {
  std::vector<float> out(kInputSize);
  encode_position(pos, std::span<float, kInputSize>(out.data(), kInputSize));
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
  static const char* const names[kInputPlanes] = {
      "own-king",          "own-pawn",          "own-withdrawer",          "own-leaper",
      "own-coordinator",   "own-immobilizer",   "own-chameleon",           "enemy-king",
      "enemy-pawn",        "enemy-withdrawer",  "enemy-leaper",            "enemy-coordinator",
      "enemy-immobilizer", "enemy-chameleon",   "own-frozen",              "enemy-frozen",
      "rule-leaper-single", "rule-chameleon-shape", "rule-removal-forbidden", "rule-immobilizer-neutralized",
      "rule-stalemate-draw", "rule-king-capture", "repeated",                "halfmove-clock",
      "ones"};
  return plane >= 0 && plane < kInputPlanes ? names[plane] : "?";
}

}  // namespace ultima::nn
