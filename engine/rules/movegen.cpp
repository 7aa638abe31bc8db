#include "engine/rules/movegen.h"

#include "engine/rules/attacks.h"
#include "engine/rules/bitboard.h"

namespace ultima {
namespace {

// What the side to move needs to know to work out captures.
struct CaptureContext {
  Color us;
  Color them;
  Bitboard own;
  Bitboard enemy;
  Bitboard empty;
  Square own_king;  // kNoSquare when it has none
  bool leaper_single;
  bool chameleon_shape;
};

// Enemy pieces among `victims` pinched by a piece landing on t: each one
// orthogonally next to t with a friendly piece (the anvil) behind it.
inline Bitboard pinched(const CaptureContext& ctx, Square t, Bitboard victims) {
  Bitboard captured = 0;
  for (int d = kN; d < kDirectionCount; d += 2) {
    const Square victim = kGeo.step[d][t];
    if (victim == kNoSquare || !(victims & square_bb(victim))) continue;
    const Square anvil = kGeo.step[d][victim];
    if (anvil != kNoSquare && (ctx.own & square_bb(anvil))) captured |= square_bb(victim);
  }
  return captured;
}

// Enemy pieces among `victims` on the two squares that a coordinator on t
// forms with its own king.
inline Bitboard coordinated(const CaptureContext& ctx, Square t, Bitboard victims) {
  if (ctx.own_king == kNoSquare) return 0;
  const Square k = ctx.own_king;
  return victims & (square_bb(make_square(file_of(t), rank_of(k))) |
                    square_bb(make_square(file_of(k), rank_of(t))));
}

// The piece that a move from `from` in direction d withdraws from, if it is
// among `victims`.
inline Bitboard withdrawn_from(Square from, int d, Bitboard victims) {
  const Square behind = kGeo.step[opposite(d)][from];
  return behind != kNoSquare ? victims & square_bb(behind) : 0;
}

template <class Emit>
void pawn_moves(const CaptureContext& ctx, Square from, Bitboard occupied, Emit& emit) {
  // Only landings with an enemy neighbour can pinch; most have none.
  const Bitboard could_pinch = neighbours(ctx.enemy);
  Bitboard targets = rook_attacks(from, occupied) & ctx.empty;
  while (targets) {
    const Square t = pop_lsb(targets);
    emit(from, t, (square_bb(t) & could_pinch) ? pinched(ctx, t, ctx.enemy) : 0);
  }
}

template <class Emit>
void withdrawer_moves(const CaptureContext& ctx, Square from, Bitboard occupied, Emit& emit) {
  for (int d = 0; d < kDirectionCount; ++d) {
    Bitboard targets = ray_attacks(from, d, occupied) & ctx.empty;
    if (!targets) continue;
    const Bitboard captured = withdrawn_from(from, d, ctx.enemy);
    while (targets) emit(from, pop_lsb(targets), captured);
  }
}

// Long leaper: slides, and leaps enemy pieces that have an empty square
// behind them. `leapable` is what may be leapt (any enemy piece for the
// leaper, enemy leapers for the chameleon). Calls land(to, leapt).
template <class Land>
void leaper_paths(const CaptureContext& ctx, Square from, int d, Bitboard leapable, Land&& land) {
  Bitboard leapt = 0;
  for (Square s = kGeo.step[d][from]; s != kNoSquare;) {
    const Bitboard bb = square_bb(s);
    if (ctx.empty & bb) {
      land(s, leapt);
      if (leapt && ctx.leaper_single) return;  // must land right behind its one victim
      s = kGeo.step[d][s];
      continue;
    }
    if (!(leapable & bb) || (leapt && ctx.leaper_single)) return;
    const Square next = kGeo.step[d][s];
    if (next == kNoSquare || !(ctx.empty & square_bb(next))) return;
    leapt |= bb;
    s = next;
  }
}

template <class Emit>
void leaper_moves(const CaptureContext& ctx, Square from, Bitboard occupied, Emit& emit) {
  for (int d = 0; d < kDirectionCount; ++d) {
    if (!(kGeo.ray[d][from] & ctx.enemy)) {
      Bitboard targets = ray_attacks(from, d, occupied) & ctx.empty;
      while (targets) emit(from, pop_lsb(targets), Bitboard{0});
      continue;
    }
    leaper_paths(ctx, from, d, ctx.enemy, [&](Square t, Bitboard leapt) { emit(from, t, leapt); });
  }
}

template <class Emit>
void coordinator_moves(const CaptureContext& ctx, Square from, Bitboard occupied, Emit& emit) {
  Bitboard targets = queen_attacks(from, occupied) & ctx.empty;
  while (targets) {
    const Square t = pop_lsb(targets);
    emit(from, t, coordinated(ctx, t, ctx.enemy));
  }
}

template <class Emit>
void immobilizer_moves(const CaptureContext& ctx, Square from, Bitboard occupied, Emit& emit) {
  Bitboard targets = queen_attacks(from, occupied) & ctx.empty;
  while (targets) emit(from, pop_lsb(targets), Bitboard{0});
}

template <class Emit>
void king_moves(const CaptureContext& ctx, Square from, Emit& emit) {
  Bitboard targets = kGeo.king_zone[from] & ~ctx.own;
  while (targets) {
    const Square t = pop_lsb(targets);
    emit(from, t, ctx.enemy & square_bb(t));
  }
}

template <class Emit>
void chameleon_moves(const CaptureContext& ctx, const BoardBits& b, Square from, Emit& emit) {
  const Color them = ctx.them;
  const Bitboard pawns = b.kind[them][kPawn];
  const Bitboard withdrawers = b.kind[them][kWithdrawer];
  const Bitboard leapers = b.kind[them][kLeaper];
  const Bitboard coordinators = b.kind[them][kCoordinator];
  const Bitboard enemy_king = b.kind[them][kKing];

  for (int d = 0; d < kDirectionCount; ++d) {
    const Bitboard withdrawn = withdrawn_from(from, d, withdrawers);
    const bool orthogonal = is_orthogonal(d);
    // Captures by imitation on landing at t, besides the leapt leapers.
    auto imitate = [&](Square t) {
      Bitboard captured = withdrawn | coordinated(ctx, t, coordinators);
      if (orthogonal && pawns) captured |= pinched(ctx, t, pawns);
      return captured;
    };
    // The king step onto the enemy king, with the step's other captures.
    const Square next = kGeo.step[d][from];
    if (next != kNoSquare && (enemy_king & square_bb(next))) {
      emit(from, next, square_bb(next) | imitate(next));
      continue;
    }
    leaper_paths(ctx, from, d, leapers, [&](Square t, Bitboard leapt) {
      if (leapt && ctx.chameleon_shape) {
        emit(from, t, leapt);
      } else {
        emit(from, t, leapt | imitate(t));
      }
    });
  }
}

// Calls emit(from, to, captures) for every pseudo-legal move that is not a
// removal, then removal(square) for each possible removal.
template <class Emit, class Removal>
void for_each_pseudo_legal(const Position& pos, Emit&& emit, Removal&& removal) {
  const BoardBits& b = pos.bits();
  const Rules& rules = pos.rules();
  CaptureContext ctx;
  ctx.us = pos.side_to_move();
  ctx.them = ~ctx.us;
  ctx.own = b.color[ctx.us];
  ctx.enemy = b.color[ctx.them];
  ctx.empty = ~b.occupied;
  ctx.own_king = pos.king_square(ctx.us);
  ctx.leaper_single = rules.leaper == LeaperRule::kSingle;
  ctx.chameleon_shape = rules.chameleon == ChameleonRule::kShape;

  // A king gone (king-capture objective only) is the game's end: nothing
  // moves after it, so move lists and perft stop there.
  if (!b.kind[kWhite][kKing] || !b.kind[kBlack][kKing]) return;

  const Bitboard frozen = frozen_pieces(b, ctx.us, rules);
  const Bitboard occupied = b.occupied;
  const auto& own = b.kind[ctx.us];
  Bitboard pieces;

  pieces = own[kPawn] & ~frozen;
  while (pieces) pawn_moves(ctx, pop_lsb(pieces), occupied, emit);
  pieces = own[kWithdrawer] & ~frozen;
  while (pieces) withdrawer_moves(ctx, pop_lsb(pieces), occupied, emit);
  pieces = own[kLeaper] & ~frozen;
  while (pieces) leaper_moves(ctx, pop_lsb(pieces), occupied, emit);
  pieces = own[kCoordinator] & ~frozen;
  while (pieces) coordinator_moves(ctx, pop_lsb(pieces), occupied, emit);
  pieces = own[kImmobilizer] & ~frozen;
  while (pieces) immobilizer_moves(ctx, pop_lsb(pieces), occupied, emit);
  pieces = own[kChameleon] & ~frozen;
  while (pieces) chameleon_moves(ctx, b, pop_lsb(pieces), emit);
  pieces = own[kKing] & ~frozen;
  while (pieces) king_moves(ctx, pop_lsb(pieces), emit);

  if (rules.removal == RemovalRule::kAllowed) {
    pieces = frozen & ~own[kKing];
    while (pieces) removal(pop_lsb(pieces));
  }
}

// The placement after a move, as bitboards only (enough for a check test).
BoardBits bits_after(const Position& pos, Square from, Square to, Bitboard captures,
                     bool is_removal) {
  BoardBits b = pos.bits();
  const Piece mover = pos.piece_on(from);
  b.remove(color_of(mover), kind_of(mover), from);
  if (is_removal) return b;
  while (captures) {
    const Square s = pop_lsb(captures);
    const Piece p = pos.piece_on(s);
    b.remove(color_of(p), kind_of(p), s);
  }
  b.put(color_of(mover), kind_of(mover), to);
  return b;
}

bool safe_after(const Position& pos, Square from, Square to, Bitboard captures, bool is_removal) {
  return !king_attacked(bits_after(pos, from, to, captures, is_removal), pos.side_to_move(),
                        pos.rules());
}

}  // namespace

void generate_pseudo_legal(const Position& pos, MoveList& list) {
  list.clear();
  for_each_pseudo_legal(
      pos, [&](Square from, Square to, Bitboard captures) { list.push(Move::step(from, to, captures)); },
      [&](Square s) { list.push(Move::removal(s)); });
}

bool leaves_king_safe(const Position& pos, const Move& move) {
  if (pos.rules().objective == Objective::kKingCapture) return true;
  return safe_after(pos, move.from(), move.to(), move.captures, move.is_removal());
}

void generate_legal(const Position& pos, MoveList& list) {
  list.clear();
  if (pos.rules().objective == Objective::kKingCapture) {
    generate_pseudo_legal(pos, list);
    return;
  }
  for_each_pseudo_legal(
      pos,
      [&](Square from, Square to, Bitboard captures) {
        if (safe_after(pos, from, to, captures, false)) list.push(Move::step(from, to, captures));
      },
      [&](Square s) {
        if (safe_after(pos, s, s, 0, true)) list.push(Move::removal(s));
      });
}

int count_legal(const Position& pos) {
  int count = 0;
  if (pos.rules().objective == Objective::kKingCapture) {
    for_each_pseudo_legal(
        pos, [&](Square, Square, Bitboard) { ++count; }, [&](Square) { ++count; });
    return count;
  }
  for_each_pseudo_legal(
      pos, [&](Square from, Square to, Bitboard captures) { count += safe_after(pos, from, to, captures, false); },
      [&](Square s) { count += safe_after(pos, s, s, 0, true); });
  return count;
}

bool has_legal_move(const Position& pos) {
  // Generation is cheap next to the check tests; stop testing at the first
  // legal move found.
  MoveList list;
  generate_pseudo_legal(pos, list);
  for (const Move& m : list)
    if (leaves_king_safe(pos, m)) return true;
  return false;
}

GameStatus game_status(const Position& pos) {
  const Color us = pos.side_to_move();
  const Outcome we_lose = us == kWhite ? Outcome::kBlackWins : Outcome::kWhiteWins;
  const Outcome we_win = us == kWhite ? Outcome::kWhiteWins : Outcome::kBlackWins;
  if (pos.king_square(us) == kNoSquare) return {we_lose, Termination::kKingCaptured};
  // The mover takes a king, so the kingless side is always the one to move;
  // from_fen refuses the other case, and this keeps the result right anyway.
  if (pos.king_square(~us) == kNoSquare) return {we_win, Termination::kKingCaptured};
  if (!has_legal_move(pos)) {
    if (pos.in_check()) return {we_lose, Termination::kCheckmate};
    if (pos.rules().stalemate == StalemateRule::kDraw) return {Outcome::kDraw, Termination::kStalemate};
    return {we_lose, Termination::kNoLegalMove};
  }
  if (pos.bare_kings())
    return {Outcome::kDraw, Termination::kBareKings};
  if (pos.repetition_count() >= 3) return {Outcome::kDraw, Termination::kRepetition};
  if (pos.halfmove_clock() >= 100) return {Outcome::kDraw, Termination::kHundredPlies};
  return {};
}

bool wins_at_once(Position& pos, const Move& move) {
  pos.make(move);
  const Color them = pos.side_to_move();
  bool won = false;
  if (pos.king_square(them) == kNoSquare || pos.in_check() || pos.rules().stalemate != StalemateRule::kDraw) {
    // game_status declares only the side to move lost, or a draw.
    const GameStatus status = game_status(pos);
    won = status.over() && status.outcome != Outcome::kDraw;
  }
  pos.unmake();
  return won;
}

const char* termination_name(Termination t) {
  switch (t) {
    case Termination::kNone: return "none";
    case Termination::kKingCaptured: return "king captured";
    case Termination::kCheckmate: return "checkmate";
    case Termination::kNoLegalMove: return "no legal move";
    case Termination::kStalemate: return "stalemate";
    case Termination::kBareKings: return "bare kings";
    case Termination::kRepetition: return "threefold repetition";
    case Termination::kHundredPlies: return "100 plies without capture or removal";
  }
  return "?";
}

const char* outcome_text(Outcome o) {
  switch (o) {
    case Outcome::kWhiteWins: return "1-0";
    case Outcome::kBlackWins: return "0-1";
    case Outcome::kDraw: return "1/2-1/2";
    case Outcome::kOngoing: break;
  }
  return "*";
}

}  // namespace ultima
