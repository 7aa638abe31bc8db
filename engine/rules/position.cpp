#include "engine/rules/position.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "engine/rules/attacks.h"

namespace ultima {
namespace {

constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

struct ZobristTable {
  std::array<std::array<std::uint64_t, 64>, 16> piece{};
  std::uint64_t black_to_move = 0;
};

constexpr ZobristTable make_zobrist() {
  ZobristTable t{};
  std::uint64_t state = 0x5EEDB4B0C0FFEE01ULL;
  for (auto& row : t.piece)
    for (auto& key : row) key = splitmix64(state);
  t.black_to_move = splitmix64(state);
  return t;
}

constexpr ZobristTable kZobrist = make_zobrist();
constexpr std::string_view kPieceLetters = ".KPWLCIX";

std::vector<std::string_view> split_whitespace(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t j = i;
    while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
    if (j > i) out.push_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

int parse_counter(std::string_view text, const char* what, int min_value) {
  int value = 0;
  const bool digits_only =
      !text.empty() && text.size() <= 6 &&
      std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  if (!digits_only || std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc())
    throw FenError("FEN " + std::string(what) + " '" + std::string(text) +
                   "' is not a number from " + std::to_string(min_value) + " to 999999");
  if (value < min_value)
    throw FenError("FEN " + std::string(what) + " must be at least " + std::to_string(min_value));
  return value;
}

}  // namespace

std::uint64_t zobrist_piece(Piece p, Square s) { return kZobrist.piece[p][s]; }
std::uint64_t zobrist_black_to_move() { return kZobrist.black_to_move; }

char piece_char(Piece p) {
  if (p == kEmpty) return '.';
  const char c = kPieceLetters[kind_of(p)];
  return color_of(p) == kWhite ? c : static_cast<char>(c - 'A' + 'a');
}

Piece piece_from_char(char c) {
  const bool black = c >= 'a' && c <= 'z';
  const char upper = black ? static_cast<char>(c - 'a' + 'A') : c;
  const size_t k = kPieceLetters.find(upper);
  if (k == std::string_view::npos || k == 0) return kEmpty;
  return make_piece(black ? kBlack : kWhite, Kind(k));
}

std::string square_name(Square s) {
  if (s < 0 || s >= 64) return "--";
  return {static_cast<char>('a' + file_of(s)), static_cast<char>('1' + rank_of(s))};
}

Square parse_square(std::string_view text) {
  if (text.size() != 2 || text[0] < 'a' || text[0] > 'h' || text[1] < '1' || text[1] > '8')
    return kNoSquare;
  return make_square(text[0] - 'a', text[1] - '1');
}

void Position::put_piece(Piece p, Square s) {
  board_[s] = p;
  bits_.put(color_of(p), kind_of(p), s);
  key_ ^= kZobrist.piece[p][s];
}

void Position::remove_piece(Square s) {
  const Piece p = board_[s];
  board_[s] = kEmpty;
  bits_.remove(color_of(p), kind_of(p), s);
  key_ ^= kZobrist.piece[p][s];
}

Position Position::start(const Rules& rules) { return from_fen(rules.start_fen(), rules); }

Position Position::from_fen(std::string_view fen, const Rules& rules) {
  const std::vector<std::string_view> fields = split_whitespace(fen);
  if (fields.empty()) throw FenError("FEN is empty");
  if (fields.size() == 1) throw FenError("FEN has no side to move (expected 'w' or 'b')");
  if (fields.size() == 3 || fields.size() == 5 || fields.size() > 6)
    throw FenError("FEN has " + std::to_string(fields.size()) +
                   " fields; expected PLACEMENT SIDE HALFMOVES MOVENUMBER");

  Position pos;
  pos.rules_ = rules;
  int rank = 7, file = 0;
  int ranks_seen = 1;
  for (char ch : fields[0]) {
    if (ch == '/') {
      if (file != 8)
        throw FenError("FEN rank " + std::to_string(rank + 1) + " has " + std::to_string(file) +
                       " squares, not 8");
      if (++ranks_seen > 8) throw FenError("FEN placement has more than 8 ranks");
      --rank;
      file = 0;
    } else if (ch >= '1' && ch <= '8') {
      file += ch - '0';
      if (file > 8)
        throw FenError("FEN rank " + std::to_string(rank + 1) + " has more than 8 squares");
    } else {
      const Piece p = piece_from_char(ch);
      if (p == kEmpty)
        throw FenError(std::string("FEN placement has an unknown piece letter '") + ch +
                       "' (pieces are K P W L C I X, lower case for Black)");
      if (file >= 8)
        throw FenError("FEN rank " + std::to_string(rank + 1) + " has more than 8 squares");
      pos.put_piece(p, make_square(file, rank));
      ++file;
    }
  }
  if (file != 8)
    throw FenError("FEN rank " + std::to_string(rank + 1) + " has " + std::to_string(file) +
                   " squares, not 8");
  if (ranks_seen != 8)
    throw FenError("FEN placement has " + std::to_string(ranks_seen) + " ranks, not 8");
  // Under the king-capture objective the game ends with a king gone, and
  // that final position is still a position.
  const bool king_may_be_gone = rules.objective == Objective::kKingCapture;
  for (Color c : {kWhite, kBlack}) {
    const int kings = popcount(pos.bits_.kind[c][kKing]);
    const char* name = c == kWhite ? "White" : "Black";
    if (kings == 0 && !king_may_be_gone) throw FenError(std::string("FEN has no ") + name + " king");
    if (kings > 1)
      throw FenError(std::string("FEN has ") + std::to_string(kings) + " " + name + " kings");
  }

  if (!pos.bits_.kind[kWhite][kKing] && !pos.bits_.kind[kBlack][kKing])
    throw FenError("FEN has no king of either side");

  if (fields[1] == "w") {
    pos.side_ = kWhite;
  } else if (fields[1] == "b") {
    pos.side_ = kBlack;
    pos.key_ ^= kZobrist.black_to_move;
  } else {
    throw FenError("FEN side to move '" + std::string(fields[1]) + "' is not 'w' or 'b'");
  }

  size_t counters = 2;
  if (fields.size() == 6) {
    if (fields[2] != "-" || fields[3] != "-")
      throw FenError("FEN castling and en-passant fields must be '-' in Ultima");
    counters = 4;
  }
  if (fields.size() >= 4) {
    pos.halfmove_clock_ = parse_counter(fields[counters], "halfmove counter", 0);
    pos.fullmove_number_ = parse_counter(fields[counters + 1], "move number", 1);
  }

  // A king is taken by the side that moves, so in a game's final position the
  // kingless side is the one to move.
  if (pos.king_square(~pos.side_) == kNoSquare)
    throw FenError(std::string("FEN position is illegal: ") +
                   (pos.side_ == kWhite ? "Black has no king yet White" : "White has no king yet Black") +
                   " is to move (the side whose king was taken moves next)");
  if (rules.objective == Objective::kCheckmate && pos.in_check(~pos.side_))
    throw FenError(std::string("FEN position is illegal: the side not to move (") +
                   (pos.side_ == kWhite ? "Black" : "White") + ") is in check");
  return pos;
}

std::string fen_placement(const std::array<Piece, 64>& board) {
  std::string out;
  for (int rank = 7; rank >= 0; --rank) {
    int empty = 0;
    for (int file = 0; file < 8; ++file) {
      const Piece p = board[make_square(file, rank)];
      if (p == kEmpty) {
        ++empty;
        continue;
      }
      if (empty) out += static_cast<char>('0' + empty);
      empty = 0;
      out += piece_char(p);
    }
    if (empty) out += static_cast<char>('0' + empty);
    if (rank) out += '/';
  }
  return out;
}

std::string Position::fen() const {
  std::string out = fen_placement(board_);
  out += side_ == kWhite ? " w " : " b ";
  out += std::to_string(halfmove_clock_) + " " + std::to_string(fullmove_number_);
  return out;
}

Bitboard Position::frozen(Color c) const { return frozen_pieces(bits_, c, rules_); }

bool Position::in_check(Color c) const { return king_attacked(bits_, c, rules_); }

void Position::make(const Move& move) {
  Undo& undo = history_.emplace_back();
  undo.move = move;
  undo.key = key_;
  undo.halfmove_clock = halfmove_clock_;
  undo.plies_since_null = plies_since_null_++;
  key_history_.push_back(key_);

  const Square from = move.from();
  undo.moved = board_[from];
  if (move.is_removal()) {
    remove_piece(from);
    halfmove_clock_ = 0;
  } else {
    Bitboard captures = move.captures;
    halfmove_clock_ = captures ? 0 : halfmove_clock_ + 1;
    for (int i = 0; captures; ++i) {
      const Square s = pop_lsb(captures);
      undo.captured[i] = board_[s];
      remove_piece(s);
    }
    remove_piece(from);
    put_piece(undo.moved, move.to());
  }
  if (side_ == kBlack) ++fullmove_number_;
  side_ = ~side_;
  key_ ^= kZobrist.black_to_move;
}

void Position::make_null() {
  Undo& undo = history_.emplace_back();
  undo.move = Move{};
  undo.key = key_;
  undo.halfmove_clock = halfmove_clock_;
  undo.plies_since_null = plies_since_null_;
  plies_since_null_ = 0;
  key_history_.push_back(key_);
  ++halfmove_clock_;
  if (side_ == kBlack) ++fullmove_number_;
  side_ = ~side_;
  key_ ^= kZobrist.black_to_move;
}

void Position::unmake() {
  const Undo& undo = history_.back();
  const Move& move = undo.move;
  side_ = ~side_;
  if (side_ == kBlack) --fullmove_number_;
  if (move.is_null()) {
    // a pass: nothing moved
  } else if (move.is_removal()) {
    put_piece(undo.moved, move.from());
  } else {
    remove_piece(move.to());
    put_piece(undo.moved, move.from());
    Bitboard captures = move.captures;
    for (int i = 0; captures; ++i) put_piece(undo.captured[i], pop_lsb(captures));
  }
  halfmove_clock_ = undo.halfmove_clock;
  plies_since_null_ = undo.plies_since_null;
  key_ = undo.key;
  key_history_.pop_back();
  history_.pop_back();
}

int Position::repetition_count() const {
  int count = 1;
  const int n = static_cast<int>(key_history_.size());
  const int window = std::min({n, halfmove_clock_, plies_since_null_});
  for (int back = 2; back <= window; back += 2)
    if (key_history_[n - back] == key_) ++count;
  return count;
}

}  // namespace ultima
