// Basic value types of the rules core: squares, colours, pieces, bitboards, moves.
#pragma once

#include <bit>
#include <cstdint>

namespace ultima {

using Bitboard = std::uint64_t;

// Square index: a1 = 0, b1 = 1, ..., h1 = 7, a2 = 8, ..., h8 = 63.
using Square = int;
constexpr Square kNoSquare = 64;

constexpr int file_of(Square s) { return s & 7; }
constexpr int rank_of(Square s) { return s >> 3; }
constexpr Square make_square(int file, int rank) { return rank * 8 + file; }
constexpr Bitboard square_bb(Square s) { return Bitboard{1} << s; }

inline Square lsb(Bitboard b) { return std::countr_zero(b); }
inline Square msb(Bitboard b) { return 63 - std::countl_zero(b); }
inline int popcount(Bitboard b) { return std::popcount(b); }
inline Square pop_lsb(Bitboard& b) {
  Square s = lsb(b);
  b &= b - 1;
  return s;
}

enum Color : std::uint8_t { kWhite = 0, kBlack = 1 };
constexpr Color operator~(Color c) { return Color(c ^ 1); }

// Piece kinds in Ultima's own words. kNone marks an empty square.
enum Kind : std::uint8_t {
  kNone = 0,
  kKing = 1,
  kPawn = 2,
  kWithdrawer = 3,
  kLeaper = 4,
  kCoordinator = 5,
  kImmobilizer = 6,
  kChameleon = 7,
};
constexpr int kKindCount = 8;  // including kNone, so kinds index arrays directly

// A piece is colour * 8 + kind; 0 is the empty square.
using Piece = std::uint8_t;
constexpr Piece kEmpty = 0;
constexpr Piece make_piece(Color c, Kind k) { return Piece(c * 8 + k); }
constexpr Kind kind_of(Piece p) { return Kind(p & 7); }
constexpr Color color_of(Piece p) { return Color(p >> 3); }

// A move: from and to squares, or a removal of the piece on `from`.
// Captures follow from the squares (no two moves share from and to), but the
// generator already knows them, so a move carries its capture set along.
struct Move {
  std::uint16_t code = 0;
  Bitboard captures = 0;

  static constexpr std::uint16_t kRemovalFlag = 1u << 12;

  static Move step(Square from, Square to, Bitboard captures) {
    return Move{std::uint16_t(from | (to << 6)), captures};
  }
  static Move removal(Square s) {
    return Move{std::uint16_t(s | (s << 6) | kRemovalFlag), 0};
  }

  Square from() const { return code & 63; }
  Square to() const { return (code >> 6) & 63; }
  bool is_removal() const { return code & kRemovalFlag; }
  bool is_null() const { return code == 0; }

  friend bool operator==(const Move& a, const Move& b) { return a.code == b.code; }
};

}  // namespace ultima
