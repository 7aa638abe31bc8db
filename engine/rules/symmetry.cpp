#include "engine/rules/symmetry.h"

namespace ultima {

const char* symmetry_name(Symmetry s) {
  static const char* const names[] = {"identity",      "rotate90",     "rotate180", "rotate270",
                                      "mirror-files",  "mirror-ranks", "transpose", "anti-transpose"};
  return names[static_cast<int>(s)];
}

Symmetry inverse(Symmetry s) {
  if (s == Symmetry::kRotate90) return Symmetry::kRotate270;
  if (s == Symmetry::kRotate270) return Symmetry::kRotate90;
  return s;  // the others are their own inverses
}

Square transform(Square s, Symmetry sym) {
  const int f = file_of(s), r = rank_of(s);
  switch (sym) {
    case Symmetry::kIdentity: return s;
    case Symmetry::kRotate90: return make_square(r, 7 - f);
    case Symmetry::kRotate180: return make_square(7 - f, 7 - r);
    case Symmetry::kRotate270: return make_square(7 - r, f);
    case Symmetry::kMirrorFiles: return make_square(7 - f, r);
    case Symmetry::kMirrorRanks: return make_square(f, 7 - r);
    case Symmetry::kTranspose: return make_square(r, f);
    case Symmetry::kAntiTranspose: return make_square(7 - r, 7 - f);
  }
  return s;
}

Bitboard transform(Bitboard b, Symmetry sym) {
  Bitboard out = 0;
  while (b) out |= square_bb(transform(pop_lsb(b), sym));
  return out;
}

Move transform(const Move& m, Symmetry sym) {
  if (m.is_removal()) return Move::removal(transform(m.from(), sym));
  return Move::step(transform(m.from(), sym), transform(m.to(), sym), transform(m.captures, sym));
}

Position transform(const Position& pos, Symmetry sym, bool colour_flip) {
  std::array<Piece, 64> board{};
  for (Square s = 0; s < 64; ++s) {
    Piece p = pos.piece_on(s);
    if (p != kEmpty && colour_flip) p = make_piece(~color_of(p), kind_of(p));
    board[transform(s, sym)] = p;
  }
  const Color side = colour_flip ? ~pos.side_to_move() : pos.side_to_move();
  return Position::from_fen(fen_placement(board) + (side == kWhite ? " w " : " b ") +
                                std::to_string(pos.halfmove_clock()) + " " +
                                std::to_string(pos.fullmove_number()),
                            pos.rules());
}

}  // namespace ultima
