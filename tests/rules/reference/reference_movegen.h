#pragma once
// A deliberately plain, independent Ultima move generator.
//
// Tests use it to cross-check the engine's fast bitboard generator, so it shares
// no code with the engine and is written straight from RULES.md: a 64-square
// array, loops over the eight directions, and check found by trying every enemy
// move. Slow but easy to check by eye.
#include <array>
#include <string>
#include <vector>

namespace refgen {

struct Rules {
  bool leaper_single = false;     // "leaper single" switch
  bool chameleon_shape = false;   // "chameleon shape" switch
  bool removal_allowed = true;    // "removal forbidden" when false
  bool neutralized = false;       // "frozen immobilizer neutralized"
  bool king_capture = false;      // objective king-capture: no legality filter
};

// board[sq], sq = file + 8*rank, a1 = 0, b1 = 1, ..., h1 = 7, a2 = 8, ..., h8 = 63.
// '.' empty; "KPWLCIX" white king/pawn/withdrawer/long leaper/coordinator/immobilizer/chameleon;
// lowercase black.
using Board = std::array<char, 64>;

// All legal moves of the side to move, each as one line "<coord> <captures>":
// coord is from+to squares like "d2d8" or a removal "xc5"; captures are the captured
// squares sorted by name (string compare, e.g. "c6" < "f2"), comma-separated, or "-" if none.
// Examples: "d4f6 c6,f2", "xc5 -", "e2e4 -". The returned vector is sorted (std::sort on the strings).
std::vector<std::string> legal_moves(const Board& board, bool white_to_move, const Rules& rules);

// Is the king of the given colour in check (section 7)? False if that king is absent.
bool in_check(const Board& board, bool white_king, const Rules& rules);

// Board after playing the move given by its coord text (one of legal_moves' coords); captures applied.
// Throws std::invalid_argument if the coord is not a pseudo-legal move or removal of that side.
Board play(const Board& board, bool white_to_move, const std::string& coord, const Rules& rules);

}  // namespace refgen
