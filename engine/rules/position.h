// A position: board, side to move, counters, Zobrist key, and make/unmake
// with a per-ply undo stack.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/rules/rule_set.h"
#include "engine/rules/types.h"

namespace ultima {

// The placement as bitboards: what move generation and check tests read.
struct BoardBits {
  std::array<std::array<Bitboard, kKindCount>, 2> kind{};  // [colour][kind]
  std::array<Bitboard, 2> color{};
  Bitboard occupied = 0;

  Bitboard of(Color c, Kind k) const { return kind[c][k]; }
  void put(Color c, Kind k, Square s) {
    const Bitboard b = square_bb(s);
    kind[c][k] |= b;
    color[c] |= b;
    occupied |= b;
  }
  void remove(Color c, Kind k, Square s) {
    const Bitboard b = ~square_bb(s);
    kind[c][k] &= b;
    color[c] &= b;
    occupied &= b;
  }
};

// Thrown for malformed FEN text; the message names the problem.
class FenError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The FEN placement field of a board given square by square (a1 first):
// ranks 8 down to 1, runs of empty squares as digits. With a side and
// counters appended it is what Position::from_fen reads.
std::string fen_placement(const std::array<Piece, 64>& board);

class Position {
 public:
  // The most pieces one move can capture is well below this (a chameleon
  // leaping three leapers while pinching and withdrawing makes about nine).
  static constexpr int kMaxCaptures = 16;

  Position() = default;

  // Accepts "PLACEMENT SIDE HALFMOVES MOVENUMBER", also with the counters
  // left out, or with chess's castling and en-passant fields given as "-".
  // Throws FenError. Each side has exactly one king, except that under the
  // king-capture objective one king may be gone (the game's last position).
  // Under the checkmate objective, a position whose side not to move is in
  // check is rejected (it cannot arise in a game).
  static Position from_fen(std::string_view fen, const Rules& rules = Rules{});
  static Position start(const Rules& rules = Rules{});
  std::string fen() const;

  Piece piece_on(Square s) const { return board_[s]; }
  const BoardBits& bits() const { return bits_; }
  Bitboard pieces(Color c) const { return bits_.color[c]; }
  Bitboard pieces(Color c, Kind k) const { return bits_.kind[c][k]; }
  Bitboard occupied() const { return bits_.occupied; }
  Square king_square(Color c) const {
    const Bitboard k = bits_.kind[c][kKing];
    return k ? lsb(k) : kNoSquare;
  }
  Color side_to_move() const { return side_; }
  int halfmove_clock() const { return halfmove_clock_; }
  int fullmove_number() const { return fullmove_number_; }
  int game_ply() const { return static_cast<int>(history_.size()); }
  std::uint64_t key() const { return key_; }
  const Rules& rules() const { return rules_; }

  // Pieces of colour c that are frozen now.
  Bitboard frozen(Color c) const;
  // Is c's king attackable by an unfrozen enemy piece (RULES.md section 7)?
  bool in_check(Color c) const;
  bool in_check() const { return in_check(side_); }

  // Plays a move from the generator (captures included); no validation here.
  void make(const Move& move);
  // Takes back the last move made.
  void unmake();
  const Move& last_move() const { return history_.back().move; }
  // Passes the turn (null-move pruning in search); undone by unmake().
  // Repetitions are not looked for across a pass.
  void make_null();

  // Only the two kings are left (an automatic draw).
  bool bare_kings() const {
    return bits_.occupied == (bits_.kind[kWhite][kKing] | bits_.kind[kBlack][kKing]);
  }

  // How often the current placement with this side to move has occurred,
  // counting the current one (1 = first time).
  int repetition_count() const;

 private:
  struct Undo {
    Move move;
    std::uint64_t key;
    int halfmove_clock;
    int plies_since_null;
    Piece moved;
    std::array<Piece, kMaxCaptures> captured;
  };

  void put_piece(Piece p, Square s);
  void remove_piece(Square s);

  std::array<Piece, 64> board_{};
  BoardBits bits_;
  Color side_ = kWhite;
  int halfmove_clock_ = 0;
  int fullmove_number_ = 1;
  int plies_since_null_ = 1 << 20;
  std::uint64_t key_ = 0;
  Rules rules_;
  std::vector<Undo> history_;
  // key_ of every earlier position of the game (for repetitions), oldest first.
  std::vector<std::uint64_t> key_history_;
};

// Zobrist keys of the placement and of the side to move.
std::uint64_t zobrist_piece(Piece p, Square s);
std::uint64_t zobrist_black_to_move();

char piece_char(Piece p);             // 'K', 'p', ... ; '.' for empty
Piece piece_from_char(char c);        // kEmpty when not a piece letter
std::string square_name(Square s);    // "e4"
Square parse_square(std::string_view text);  // kNoSquare when malformed

}  // namespace ultima
