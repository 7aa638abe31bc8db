// Plain reference move generator for Ultima (Baroque chess), written from
// RULES.md alone. See reference_movegen.h for why it exists. Everything here
// is a direct transcription of the rule text. The one concession to speed:
// the check test stops at the first enemy move that takes the king.
#include "reference_movegen.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace refgen {
namespace {

constexpr char kEmpty = '.';

// ---------------------------------------------------------------------------
// Squares and directions

int file_of(int sq) { return sq % 8; }
int rank_of(int sq) { return sq / 8; }
int square(int file, int rank) { return file + 8 * rank; }
bool on_board(int file, int rank) { return file >= 0 && file < 8 && rank >= 0 && rank < 8; }

struct Dir {
  int df, dr;
  bool orthogonal() const { return df == 0 || dr == 0; }
};

// The first four are orthogonal (rank/file), the last four diagonal.
constexpr std::array<Dir, 8> kAllDirs = {{{1, 0}, {-1, 0}, {0, 1}, {0, -1},
                                          {1, 1}, {1, -1}, {-1, 1}, {-1, -1}}};
constexpr std::array<Dir, 4> kOrthoDirs = {{{1, 0}, {-1, 0}, {0, 1}, {0, -1}}};

// Square `n` steps from sq in direction d, or -1 when that falls off the board.
int step(int sq, Dir d, int n = 1) {
  int f = file_of(sq) + d.df * n, r = rank_of(sq) + d.dr * n;
  return on_board(f, r) ? square(f, r) : -1;
}

std::string square_name(int sq) {
  return std::string{char('a' + file_of(sq)), char('1' + rank_of(sq))};
}

int parse_square(const std::string& text, size_t at) {
  if (at + 2 > text.size()) return -1;
  int f = text[at] - 'a', r = text[at + 1] - '1';
  return on_board(f, r) ? square(f, r) : -1;
}

// ---------------------------------------------------------------------------
// Pieces

bool is_empty(char c) { return c == kEmpty; }
bool is_white(char c) { return c >= 'A' && c <= 'Z'; }
bool is_black(char c) { return c >= 'a' && c <= 'z'; }
bool is_friend(char c, bool white) { return white ? is_white(c) : is_black(c); }
bool is_enemy(char c, bool white) { return white ? is_black(c) : is_white(c); }
// Piece kind in upper case ('K', 'P', 'W', 'L', 'C', 'I', 'X'), whatever its colour.
char kind_of(char c) { return is_black(c) ? char(c - 'a' + 'A') : c; }

bool is_enemy_of_kind(char c, bool white, char kind) { return is_enemy(c, white) && kind_of(c) == kind; }

// Square of the king of the given colour, or -1 when it is not on the board.
int find_king(const Board& b, bool white) {
  for (int sq = 0; sq < 64; ++sq)
    if (is_friend(b[sq], white) && kind_of(b[sq]) == 'K') return sq;
  return -1;
}

// ---------------------------------------------------------------------------
// Freezing (section 6 and the `neutralized` switch of section 9)

// Does the immobilizer standing on `sq` freeze its neighbours? Always, except
// under `neutralized`, where one next to an enemy immobilizer or an enemy
// chameleon freezes nothing. Adjacency alone decides: whether that neighbour
// is itself frozen does not matter.
bool immobilizer_freezes(const Board& b, int sq, const Rules& rules) {
  if (!rules.neutralized) return true;
  bool white = is_white(b[sq]);
  for (Dir d : kAllDirs) {
    int n = step(sq, d);
    if (n < 0) continue;
    if (is_enemy_of_kind(b[n], white, 'I') || is_enemy_of_kind(b[n], white, 'X')) return false;
  }
  return true;
}

// Is the piece on `sq` frozen? Read from this position only (a piece that
// merely passes by an immobilizer during a move is unaffected).
bool is_frozen(const Board& b, int sq, const Rules& rules) {
  char piece = b[sq];
  if (is_empty(piece)) return false;
  bool white = is_white(piece);
  for (Dir d : kAllDirs) {
    int n = step(sq, d);
    if (n < 0) continue;
    // An enemy immobilizer freezes every kind of piece, immobilizers and
    // chameleons included (two enemy immobilizers freeze each other).
    if (is_enemy_of_kind(b[n], white, 'I') && immobilizer_freezes(b, n, rules)) return true;
    // A chameleon imitates the immobilizer towards an enemy immobilizer only;
    // this still holds under `neutralized`.
    if (kind_of(piece) == 'I' && is_enemy_of_kind(b[n], white, 'X')) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// Moves

struct Move {
  int from = -1;              // -1 for a removal
  int to = -1;                // destination, or the removed square for a removal
  std::vector<int> captures;  // squares whose pieces this move captures
};

// Pinch (custodian capture): the piece that landed on `to` takes each
// orthogonal neighbour that is an enemy with a friendly piece (any kind, frozen
// or not) directly behind it. `after` is the board with the mover already
// moved. A chameleon pinches enemy pawns only (`only_pawns`).
void add_pinches(const Board& after, int to, bool white, bool only_pawns, std::vector<int>& caps) {
  for (Dir d : kOrthoDirs) {
    int victim = step(to, d);
    if (victim < 0 || !is_enemy(after[victim], white)) continue;
    int anvil = step(victim, d);
    if (anvil < 0 || !is_friend(after[anvil], white)) continue;
    if (only_pawns && kind_of(after[victim]) != 'P') continue;
    caps.push_back(victim);
  }
}

// Coordination: the mover on `to` and its own king on `king` span a rectangle;
// enemy pieces on its two other corners are captured. With no own king on the
// board nothing happens. A chameleon coordinates enemy coordinators only.
void add_coordination(const Board& after, int to, int king, bool white, bool only_coordinators,
                      std::vector<int>& caps) {
  if (king < 0) return;
  for (int corner : {square(file_of(to), rank_of(king)), square(file_of(king), rank_of(to))}) {
    // When `to` shares a rank or file with the king the corners are `to`
    // (the mover) and the king themselves: never enemies, so nothing falls.
    if (!is_enemy(after[corner], white)) continue;
    if (only_coordinators && kind_of(after[corner]) != 'C') continue;
    caps.push_back(corner);
  }
}

// Withdrawal: leaving `from` in direction d takes the enemy on the square just
// behind `from` (opposite to d). A chameleon withdraws from withdrawers only.
void add_withdrawal(const Board& b, int from, Dir d, bool white, bool only_withdrawers,
                    std::vector<int>& caps) {
  int behind = step(from, Dir{-d.df, -d.dr});
  if (behind < 0 || !is_enemy(b[behind], white)) return;
  if (only_withdrawers && kind_of(b[behind]) != 'W') return;
  caps.push_back(behind);
}

// Generates every move of the side `white` that obeys movement, freezing and
// capture rules, but not the check rule (pseudo-legal). No removals.
// Either collects the moves, or (for the check test) only asks whether some
// move captures a piece standing on one of the `targets` squares, stopping at
// the first such move.
class Generator {
 public:
  Generator(const Board& b, bool white, const Rules& rules)
      : b_(b), white_(white), rules_(rules), own_king_(find_king(b, white)) {}

  std::vector<Move> moves() {
    out_.reserve(128);
    run();
    return std::move(out_);
  }

  bool captures_any_of(const std::vector<int>& targets) {
    targets_ = &targets;
    run();
    return hit_;
  }

 private:
  void run() {
    for (int sq = 0; sq < 64 && !hit_; ++sq) {
      if (!is_friend(b_[sq], white_) || is_frozen(b_, sq, rules_)) continue;
      // Captures are read with the mover gone from its origin square, so the
      // origin is never an anvil.
      vacated_ = b_;
      vacated_[sq] = kEmpty;
      switch (kind_of(b_[sq])) {
        case 'K': king(sq); break;
        case 'P': slider(sq, /*orthogonal_only=*/true); break;
        case 'L': long_leaper(sq); break;
        case 'X': chameleon(sq); break;
        default: slider(sq, /*orthogonal_only=*/false); break;  // W, C, I
      }
    }
  }

  // The board as it looks after the piece on `from` has landed on `to`
  // (whatever stood on `to` is replaced; only king steps land on a piece).
  Board landed(int from, int to) const {
    Board after = vacated_;
    after[to] = b_[from];
    return after;
  }

  void add(int from, int to, std::vector<int> caps) {
    if (targets_) {
      for (int sq : caps)
        if (std::find(targets_->begin(), targets_->end(), sq) != targets_->end()) hit_ = true;
      return;
    }
    std::sort(caps.begin(), caps.end());
    caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
    out_.push_back(Move{from, to, std::move(caps)});
  }

  // King: one step; stepping onto an enemy piece captures it.
  void king(int from) {
    for (Dir d : kAllDirs) {
      int to = step(from, d);
      if (to < 0) continue;
      if (is_empty(b_[to])) add(from, to, {});
      else if (is_enemy(b_[to], white_)) add(from, to, {to});
    }
  }

  // Pawn (rook lines), withdrawer, coordinator, immobilizer (queen lines):
  // slide over empty squares; the capture depends on the kind.
  void slider(int from, bool orthogonal_only) {
    char kind = kind_of(b_[from]);
    for (Dir d : kAllDirs) {
      if (orthogonal_only && !d.orthogonal()) continue;
      for (int to = step(from, d); to >= 0 && is_empty(b_[to]); to = step(to, d)) {
        std::vector<int> caps;
        if (kind == 'P') add_pinches(landed(from, to), to, white_, false, caps);
        if (kind == 'W') add_withdrawal(b_, from, d, white_, false, caps);
        if (kind == 'C') add_coordination(landed(from, to), to, own_king_, white_, false, caps);
        // The immobilizer never captures.
        add(from, to, std::move(caps));
      }
    }
  }

  // Walks one line from `from` for a leaping piece: empty squares are landing
  // squares; an enemy that `can_leap` accepts may be leapt if the square right
  // behind it is empty; anything else ends the line. `land` is called for each
  // landing square with the pieces leapt on the way.
  template <class CanLeap, class Land>
  void leap_line(int from, Dir d, CanLeap can_leap, Land land) {
    std::vector<int> leapt;
    int sq = step(from, d);
    while (sq >= 0) {
      if (is_empty(b_[sq])) {
        // `leaper single`: after one leap the piece must land directly behind it.
        if (rules_.leaper_single && !leapt.empty() && sq != step(leapt.back(), d)) return;
        land(sq, leapt);
        sq = step(sq, d);
        continue;
      }
      if (!is_enemy(b_[sq], white_) || !can_leap(b_[sq])) return;  // friendly or unleapable: blocked
      int behind = step(sq, d);
      if (behind < 0 || !is_empty(b_[behind])) return;  // no room to land behind it
      if (rules_.leaper_single && !leapt.empty()) return;  // at most one piece per move
      leapt.push_back(sq);
      sq = behind;
    }
  }

  // Long leaper: queen lines, leaping any enemy pieces, capturing all it leaps.
  void long_leaper(int from) {
    for (Dir d : kAllDirs) {
      leap_line(
          from, d, [](char) { return true; },
          [&](int to, const std::vector<int>& leapt) { add(from, to, leapt); });
    }
  }

  // Chameleon: moves like a queen, may leap enemy long leapers only, may step
  // onto the enemy king, and captures each enemy piece the way that piece
  // captures (never chameleons or immobilizers).
  void chameleon(int from) {
    for (Dir d : kAllDirs) {
      // The king step: the only time a chameleon enters an occupied square.
      // It also makes the other captures the same step makes.
      int next = step(from, d);
      if (next >= 0 && is_enemy_of_kind(b_[next], white_, 'K')) {
        std::vector<int> caps = {next};
        add_imitations(from, next, d, caps);
        add(from, next, std::move(caps));
        continue;  // the king blocks the rest of the line
      }
      leap_line(
          from, d, [](char c) { return kind_of(c) == 'L'; },
          [&](int to, const std::vector<int>& leapt) {
            std::vector<int> caps = leapt;
            // `chameleon shape`: a move that leaps long leapers takes only them.
            if (!(rules_.chameleon_shape && !leapt.empty())) add_imitations(from, to, d, caps);
            add(from, to, std::move(caps));
          });
    }
  }

  // The chameleon's non-leaping imitations for a move from `from` to `to` in
  // direction d: withdraw from a withdrawer, pinch pawns (rank/file moves
  // only), coordinate coordinators with its own king.
  void add_imitations(int from, int to, Dir d, std::vector<int>& caps) {
    Board after = landed(from, to);
    add_withdrawal(b_, from, d, white_, true, caps);
    if (d.orthogonal()) add_pinches(after, to, white_, true, caps);
    add_coordination(after, to, own_king_, white_, true, caps);
  }

  const Board& b_;
  bool white_;
  const Rules& rules_;
  int own_king_;
  Board vacated_{};
  std::vector<Move> out_;
  const std::vector<int>* targets_ = nullptr;  // set in check-test mode
  bool hit_ = false;
};

std::vector<Move> pseudo_moves(const Board& b, bool white, const Rules& rules) {
  return Generator(b, white, rules).moves();
}

Board apply(const Board& b, const Move& m) {
  Board after = b;
  if (m.from < 0) {  // removal
    after[m.to] = kEmpty;
    return after;
  }
  for (int sq : m.captures) after[sq] = kEmpty;
  after[m.to] = b[m.from];
  after[m.from] = kEmpty;
  return after;
}

std::string move_text(const Move& m) {
  std::string text = m.from < 0 ? "x" + square_name(m.to) : square_name(m.from) + square_name(m.to);
  std::vector<std::string> names;
  for (int sq : m.captures) names.push_back(square_name(sq));
  std::sort(names.begin(), names.end());
  text += ' ';
  if (names.empty()) return text + '-';
  for (size_t i = 0; i < names.size(); ++i) text += (i ? "," : "") + names[i];
  return text;
}

}  // namespace

bool in_check(const Board& board, bool white_king, const Rules& rules) {
  // Straight from section 7: is there an enemy move (pseudo-legal; frozen
  // pieces have none) that captures a king of ours?
  std::vector<int> kings;
  for (int sq = 0; sq < 64; ++sq)
    if (is_friend(board[sq], white_king) && kind_of(board[sq]) == 'K') kings.push_back(sq);
  if (kings.empty()) return false;
  return Generator(board, !white_king, rules).captures_any_of(kings);
}

std::vector<std::string> legal_moves(const Board& board, bool white_to_move, const Rules& rules) {
  // Under king capture a king gone is the end of the game: no moves follow.
  if (rules.king_capture && (find_king(board, true) < 0 || find_king(board, false) < 0)) return {};
  std::vector<Move> candidates = pseudo_moves(board, white_to_move, rules);
  if (rules.removal_allowed) {
    for (int sq = 0; sq < 64; ++sq)
      if (is_friend(board[sq], white_to_move) && kind_of(board[sq]) != 'K' &&
          is_frozen(board, sq, rules))
        candidates.push_back(Move{-1, sq, {}});
  }
  // Without a king there is nothing to protect: every pseudo-legal move stands.
  bool filter = !rules.king_capture && find_king(board, white_to_move) >= 0;
  std::vector<std::string> result;
  for (const Move& m : candidates) {
    if (filter && in_check(apply(board, m), white_to_move, rules)) continue;
    result.push_back(move_text(m));
  }
  std::sort(result.begin(), result.end());
  return result;
}

Board play(const Board& board, bool white_to_move, const std::string& coord, const Rules& rules) {
  if (coord.size() == 3 && coord[0] == 'x') {
    int sq = parse_square(coord, 1);
    if (!rules.removal_allowed || sq < 0 || !is_friend(board[sq], white_to_move) ||
        kind_of(board[sq]) == 'K' || !is_frozen(board, sq, rules))
      throw std::invalid_argument("refgen::play: no such removal " + coord);
    return apply(board, Move{-1, sq, {}});
  }
  int from = parse_square(coord, 0), to = parse_square(coord, 2);
  if (coord.size() != 4 || from < 0 || to < 0)
    throw std::invalid_argument("refgen::play: bad coord " + coord);
  // The captures follow from the from/to squares: regenerate and look it up.
  for (const Move& m : pseudo_moves(board, white_to_move, rules))
    if (m.from == from && m.to == to) return apply(board, m);
  throw std::invalid_argument("refgen::play: no such move " + coord);
}

}  // namespace refgen
