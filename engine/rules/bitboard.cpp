#include "engine/rules/bitboard.h"

namespace ultima {

#if defined(__BMI2__)
namespace {

// The squares of a line whose occupancy matters: all but the last one
// before the edge (a piece there cannot block anything further).
Bitboard relevant(Square s, int dir) {
  Bitboard ray = kGeo.ray[dir][s];
  if (!ray) return 0;
  const Square last = is_increasing(dir) ? msb(ray) : lsb(ray);
  return ray & ~square_bb(last);
}

Bitboard slow_attacks(Square s, Bitboard occupied, const int (&dirs)[4]) {
  Bitboard out = 0;
  for (int d : dirs) out |= ray_attacks(s, d, occupied);
  return out;
}

SliderTables build() {
  SliderTables t;
  constexpr int kRookDirs[4] = {kN, kE, kS, kW};
  constexpr int kBishopDirs[4] = {kNE, kSE, kSW, kNW};
  auto fill = [&](const int (&dirs)[4], std::array<Bitboard, 64>& masks, std::array<std::uint32_t, 64>& offsets) {
    for (Square s = 0; s < 64; ++s) {
      Bitboard mask = 0;
      for (int d : dirs) mask |= relevant(s, d);
      masks[s] = mask;
      offsets[s] = static_cast<std::uint32_t>(t.attacks.size());
      const std::size_t count = std::size_t{1} << popcount(mask);
      t.attacks.resize(t.attacks.size() + count);
      // Every subset of the mask, in PEXT order (Carry-Rippler enumeration).
      Bitboard subset = 0;
      do {
        t.attacks[offsets[s] + _pext_u64(subset, mask)] = slow_attacks(s, subset, dirs);
        subset = (subset - mask) & mask;
      } while (subset);
    }
  };
  fill(kRookDirs, t.rook_mask, t.rook_offset);
  fill(kBishopDirs, t.bishop_mask, t.bishop_offset);
  return t;
}

}  // namespace

const SliderTables& slider_tables() {
  static const SliderTables tables = build();
  return tables;
}
const SliderTables& kSliders = slider_tables();
#endif

}  // namespace ultima
