// Bitboard geometry: directions, rays, sliding attacks, neighbourhoods.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#if defined(__BMI2__)
#include <immintrin.h>
#endif

#include "engine/rules/types.h"

namespace ultima {

// The 8 directions, clockwise from north. Even indices are orthogonal.
enum Direction : int { kN = 0, kNE, kE, kSE, kS, kSW, kW, kNW };
constexpr int kDirectionCount = 8;
constexpr std::array<int, 8> kDirectionDelta = {8, 9, 1, -7, -8, -9, -1, 7};
constexpr int opposite(int dir) { return (dir + 4) & 7; }
constexpr bool is_orthogonal(int dir) { return (dir & 1) == 0; }
// Directions whose square index grows: the nearest blocker is the lowest bit.
constexpr bool is_increasing(int dir) { return kDirectionDelta[dir] > 0; }

constexpr Bitboard kFileA = 0x0101010101010101ULL;
constexpr Bitboard kFileH = kFileA << 7;
constexpr Bitboard kRank1 = 0xFFULL;

constexpr Bitboard shift(Bitboard b, int dir) {
  switch (dir) {
    case kN: return b << 8;
    case kNE: return (b & ~kFileH) << 9;
    case kE: return (b & ~kFileH) << 1;
    case kSE: return (b & ~kFileH) >> 7;
    case kS: return b >> 8;
    case kSW: return (b & ~kFileA) >> 9;
    case kW: return (b & ~kFileA) >> 1;
    default: return (b & ~kFileA) << 7;  // kNW
  }
}

// Every square next to some square of b (which may include squares of b).
constexpr Bitboard neighbours(Bitboard b) {
  Bitboard row = b | shift(b, kE) | shift(b, kW);
  return shift(b, kE) | shift(b, kW) | (row << 8) | (row >> 8);
}

struct Geometry {
  // Squares from s in direction d, s excluded, up to the edge.
  std::array<std::array<Bitboard, 64>, 8> ray{};
  // Next square from s in direction d, or kNoSquare past the edge.
  std::array<std::array<std::uint8_t, 64>, 8> step{};
  std::array<Bitboard, 64> king_zone{};  // the 8 neighbours
  std::array<Bitboard, 64> lines{};      // all 8 rays together
  std::array<Bitboard, 8> file{};
  std::array<Bitboard, 8> rank{};
};

constexpr Geometry make_geometry() {
  Geometry g{};
  for (int f = 0; f < 8; ++f) {
    for (int r = 0; r < 8; ++r) {
      g.file[f] |= square_bb(make_square(f, r));
      g.rank[r] |= square_bb(make_square(f, r));
    }
  }
  constexpr int df[8] = {0, 1, 1, 1, 0, -1, -1, -1};
  constexpr int dr[8] = {1, 1, 0, -1, -1, -1, 0, 1};
  for (Square s = 0; s < 64; ++s) {
    for (int d = 0; d < 8; ++d) {
      int f = file_of(s) + df[d], r = rank_of(s) + dr[d];
      g.step[d][s] = (f >= 0 && f < 8 && r >= 0 && r < 8) ? make_square(f, r) : kNoSquare;
      while (f >= 0 && f < 8 && r >= 0 && r < 8) {
        g.ray[d][s] |= square_bb(make_square(f, r));
        f += df[d];
        r += dr[d];
      }
      g.lines[s] |= g.ray[d][s];
    }
    g.king_zone[s] = neighbours(square_bb(s));
  }
  return g;
}

inline constexpr Geometry kGeo = make_geometry();

// Squares a slider on s reaches in direction d, up to and including the first
// occupied square.
inline Bitboard ray_attacks(Square s, int dir, Bitboard occupied) {
  const Bitboard ray = kGeo.ray[dir][s];
  const Bitboard blockers = ray & occupied;
  if (!blockers) return ray;
  const Square b = is_increasing(dir) ? lsb(blockers) : msb(blockers);
  return ray ^ kGeo.ray[dir][b];
}

#if defined(__BMI2__)
// Sliding attacks by table lookup: the occupancy of a piece's lines,
// compressed with PEXT, indexes that square's slice of one table.
struct SliderTables {
  std::array<Bitboard, 64> rook_mask{}, bishop_mask{};
  std::array<std::uint32_t, 64> rook_offset{}, bishop_offset{};
  std::vector<Bitboard> attacks;
};
const SliderTables& slider_tables();
extern const SliderTables& kSliders;

inline Bitboard rook_attacks(Square s, Bitboard occupied) {
  return kSliders.attacks[kSliders.rook_offset[s] + _pext_u64(occupied, kSliders.rook_mask[s])];
}
inline Bitboard bishop_attacks(Square s, Bitboard occupied) {
  return kSliders.attacks[kSliders.bishop_offset[s] + _pext_u64(occupied, kSliders.bishop_mask[s])];
}
#else
inline Bitboard rook_attacks(Square s, Bitboard occupied) {
  return ray_attacks(s, kN, occupied) | ray_attacks(s, kE, occupied) |
         ray_attacks(s, kS, occupied) | ray_attacks(s, kW, occupied);
}
inline Bitboard bishop_attacks(Square s, Bitboard occupied) {
  return ray_attacks(s, kNE, occupied) | ray_attacks(s, kSE, occupied) |
         ray_attacks(s, kSW, occupied) | ray_attacks(s, kNW, occupied);
}
#endif

inline Bitboard queen_attacks(Square s, Bitboard occupied) {
  return rook_attacks(s, occupied) | bishop_attacks(s, occupied);
}

// Direction from a to b when they share a line, else -1.
inline int direction_between(Square a, Square b) {
  for (int d = 0; d < kDirectionCount; ++d)
    if (kGeo.ray[d][a] & square_bb(b)) return d;
  return -1;
}

}  // namespace ultima
