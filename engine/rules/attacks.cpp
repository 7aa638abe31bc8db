#include "engine/rules/attacks.h"

namespace ultima {

namespace {

// One walk over every way c's king can be captured next move. With
// kCountAll false it stops at the first (the check test); with true it
// counts them all (king danger for the evaluation).
template <bool kCountAll>
int king_attack_routes(const BoardBits& b, Color c, const Rules& rules) {
  int routes = 0;
  // Records one route; tells the caller to stop when only presence matters.
#define ULTIMA_FOUND_ROUTE(n)      \
  do {                             \
    routes += (n);                 \
    if (!kCountAll) return routes; \
  } while (0)

  const Bitboard king = b.kind[c][kKing];
  if (!king) return 0;
  const Square k = lsb(king);
  const Color enemy = ~c;
  const Bitboard mobile = b.color[enemy] & ~frozen_pieces(b, enemy, rules);
  const Bitboard occupied = b.occupied;
  const Bitboard zone = kGeo.king_zone[k];

  // King step, and the chameleon's king step.
  if (const Bitboard steppers = (b.kind[enemy][kKing] | b.kind[enemy][kChameleon]) & mobile & zone)
    ULTIMA_FOUND_ROUTE(popcount(steppers));

  // Withdrawal: an adjacent withdrawer with an empty square to retreat to.
  Bitboard withdrawers = b.kind[enemy][kWithdrawer] & mobile & zone;
  while (withdrawers) {
    const Square w = pop_lsb(withdrawers);
    const int away = direction_between(k, w);
    const Square retreat = kGeo.step[away][w];
    if (retreat != kNoSquare && !(occupied & square_bb(retreat))) ULTIMA_FOUND_ROUTE(1);
  }

  // Pinch: a pawn lands on an empty orthogonal neighbour of the king while an
  // enemy piece stands on the opposite side.
  const Bitboard pawns = b.kind[enemy][kPawn] & mobile;
  if (pawns) {
    for (int d = kN; d < kDirectionCount; d += 2) {
      const Square landing = kGeo.step[d][k];
      const Square anvil = kGeo.step[opposite(d)][k];
      if (landing == kNoSquare || anvil == kNoSquare) continue;
      if ((occupied & square_bb(landing)) || !(b.color[enemy] & square_bb(anvil))) continue;
      if (const Bitboard pinchers = rook_attacks(landing, occupied) & pawns)
        ULTIMA_FOUND_ROUTE(popcount(pinchers));
    }
  }

  // Leap: a long leaper on a line with the king, with a leapable path to it
  // and an empty square right behind it.
  const Bitboard leapers = b.kind[enemy][kLeaper] & mobile;
  if (leapers & kGeo.lines[k]) {
    const bool single = rules.leaper == LeaperRule::kSingle;
    for (int d = 0; d < kDirectionCount; ++d) {
      // The leaper moves in direction d: it stands on the ray opposite to d.
      const int back = opposite(d);
      if (!(kGeo.ray[back][k] & leapers)) continue;
      const Square behind = kGeo.step[d][k];
      if (behind == kNoSquare || (occupied & square_bb(behind))) continue;
      bool after_empty = false;  // is the square beyond the scanned one empty?
      for (Square s = kGeo.step[back][k]; s != kNoSquare; s = kGeo.step[back][s]) {
        const Bitboard bb = square_bb(s);
        if (!(occupied & bb)) {
          after_empty = true;
          continue;
        }
        if (leapers & bb) {
          ULTIMA_FOUND_ROUTE(1);
          break;
        }
        if ((b.color[c] & bb) && after_empty && !single) {
          after_empty = false;  // a further piece of c, leapt on the way
          continue;
        }
        break;
      }
    }
  }

  // Coordination: the coordinator lands on the king's file while the enemy
  // king shares the king's rank, or on its rank while it shares its file.
  Bitboard coordinators = b.kind[enemy][kCoordinator] & mobile;
  const Bitboard enemy_king = b.kind[enemy][kKing];
  if (coordinators && enemy_king) {
    const Square ek = lsb(enemy_king);
    Bitboard targets = 0;
    if (rank_of(ek) == rank_of(k)) targets |= kGeo.file[file_of(k)];
    if (file_of(ek) == file_of(k)) targets |= kGeo.rank[rank_of(k)];
    targets &= ~occupied;
    while (targets && coordinators) {
      const Square s = pop_lsb(coordinators);
      if (queen_attacks(s, occupied) & targets) ULTIMA_FOUND_ROUTE(1);
    }
  }
#undef ULTIMA_FOUND_ROUTE
  return routes;
}

}  // namespace

bool king_attacked(const BoardBits& b, Color c, const Rules& rules) {
  return king_attack_routes<false>(b, c, rules) != 0;
}

int king_capture_routes(const BoardBits& b, Color c, const Rules& rules) {
  return king_attack_routes<true>(b, c, rules);
}

}  // namespace ultima
