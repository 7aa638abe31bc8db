// Move generation, legality and the end of the game (RULES.md sections 3-7).
#pragma once

#include <array>

#include "engine/rules/position.h"

namespace ultima {

class MoveList {
 public:
  // Far above the largest count seen in real positions (about 300 with every
  // queen-moving piece free on an open board).
  static constexpr int kCapacity = 512;

  // The storage is left uninitialized: lists are made at every search node,
  // and zeroing 8 KB each time cost a fifth of the search's time.
  MoveList() {}

  void push(const Move& m) { moves_[size_++] = m; }
  int size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }
  const Move& operator[](int i) const { return moves_[i]; }
  Move& operator[](int i) { return moves_[i]; }
  const Move* begin() const { return moves_; }
  const Move* end() const { return moves_ + size_; }
  Move* begin() { return moves_; }
  Move* end() { return moves_ + size_; }

 private:
  union {
    Move moves_[kCapacity];
  };
  int size_ = 0;
};

// Every move of the side to move that the movement and capture rules allow,
// removals included, whether or not it leaves its own king in check. A
// position with a king gone (king-capture objective) is the game's end and
// has no moves; so do the legal lists, counts and perft below.
void generate_pseudo_legal(const Position& pos, MoveList& list);
// The legal moves: pseudo-legal ones that leave the mover's king safe
// (all pseudo-legal moves under the king-capture objective).
void generate_legal(const Position& pos, MoveList& list);
// Does this pseudo-legal move leave the mover's own king out of check?
bool leaves_king_safe(const Position& pos, const Move& move);
// The number of legal moves, without building a list.
int count_legal(const Position& pos);
bool has_legal_move(const Position& pos);

enum class Outcome { kOngoing, kWhiteWins, kBlackWins, kDraw };
enum class Termination {
  kNone,
  kKingCaptured,  // king-capture objective: the side to move has lost its king
  kCheckmate,     // no legal move while in check
  kNoLegalMove,   // no legal move, not in check, and the stalemate rule says loss
  kStalemate,     // no legal move, not in check, and the stalemate rule says draw
  kBareKings,
  kRepetition,    // the same position for the third time
  kHundredPlies,  // 100 plies without capture or removal
};

struct GameStatus {
  Outcome outcome = Outcome::kOngoing;
  Termination termination = Termination::kNone;
  bool over() const { return outcome != Outcome::kOngoing; }
};

// Applies the end tests in the order of RULES.md section 7a.
GameStatus game_status(const Position& pos);
// Does the legal move `move` end the game at once in favour of the side
// making it (checkmate, no legal move under a losing stalemate rule, the
// king taken under king capture)? Only positions that could be such an end
// (the opponent in check or kingless, or stalemate losing) get the full
// game_status test. `pos` is restored before returning.
bool wins_at_once(Position& pos, const Move& move);
const char* termination_name(Termination t);
// "1-0", "0-1", "1/2-1/2" or "*".
const char* outcome_text(Outcome o);

}  // namespace ultima
