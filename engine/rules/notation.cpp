#include "engine/rules/notation.h"

#include <algorithm>
#include <vector>

#include "engine/rules/movegen.h"

namespace ultima {
namespace {

std::vector<std::string> captured_names(Bitboard captures) {
  std::vector<std::string> names;
  while (captures) names.push_back(square_name(pop_lsb(captures)));
  std::sort(names.begin(), names.end());
  return names;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text.substr(0, 40)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  if (text.size() > 40) out += "...";
  return out + "'";
}

// The legal move with these squares, or a MoveError saying why there is none.
Move find_legal(const Position& pos, Square from, Square to, bool removal, std::string_view text) {
  const Piece piece = pos.piece_on(from);
  if (piece == kEmpty) throw MoveError("illegal move " + quoted(text) + ": no piece on " + square_name(from));
  if (color_of(piece) != pos.side_to_move())
    throw MoveError("illegal move " + quoted(text) + ": the piece on " + square_name(from) +
                    " belongs to the side not to move");
  MoveList list;
  generate_pseudo_legal(pos, list);
  for (const Move& m : list) {
    if (m.is_removal() != removal || m.from() != from || (!removal && m.to() != to)) continue;
    if (!leaves_king_safe(pos, m))
      throw MoveError("illegal move " + quoted(text) + ": it leaves the king in check");
    return m;
  }
  if (removal) {
    if (pos.rules().removal == RemovalRule::kForbidden)
      throw MoveError("illegal move " + quoted(text) + ": removals are forbidden by these rules");
    if (kind_of(piece) == kKing) throw MoveError("illegal move " + quoted(text) + ": the king cannot be removed");
    throw MoveError("illegal move " + quoted(text) + ": the piece on " + square_name(from) +
                    " is not frozen, so it cannot be removed");
  }
  if (pos.frozen(pos.side_to_move()) & square_bb(from))
    throw MoveError("illegal move " + quoted(text) + ": the piece on " + square_name(from) + " is frozen");
  throw MoveError("illegal move " + quoted(text) + ": the piece on " + square_name(from) + " cannot move to " +
                  square_name(to));
}

}  // namespace

std::string to_coordinate(const Move& move) {
  if (move.is_removal()) return "x" + square_name(move.from());
  return square_name(move.from()) + square_name(move.to());
}

std::string captures_text(const Move& move) {
  const std::vector<std::string> names = captured_names(move.captures);
  if (names.empty()) return "-";
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

std::string to_readable(const Position& pos, const Move& move) {
  const char letter = piece_char(make_piece(kWhite, kind_of(pos.piece_on(move.from()))));
  std::string out(1, letter);
  if (move.is_removal()) {
    out += square_name(move.from()) + " rm";
  } else {
    out += square_name(move.from()) + "-" + square_name(move.to());
    for (const std::string& n : captured_names(move.captures)) out += " x" + n;
  }
  Position after = pos;
  after.make(move);
  const GameStatus status = game_status(after);
  if (status.termination == Termination::kCheckmate || status.termination == Termination::kKingCaptured)
    out += "#";
  else if (after.in_check())
    out += "+";
  return out;
}

Move parse_coordinate(const Position& pos, std::string_view text) {
  const std::string_view t = trim(text);
  if (t.size() == 3 && t[0] == 'x') {
    const Square s = parse_square(t.substr(1));
    if (s == kNoSquare) throw MoveError("malformed move " + quoted(text) + ": bad square after 'x'");
    return find_legal(pos, s, s, true, t);
  }
  if (t.size() != 4)
    throw MoveError("malformed move " + quoted(text) + ": expected from and to squares like d2d8, or a removal like xc5");
  const Square from = parse_square(t.substr(0, 2));
  const Square to = parse_square(t.substr(2, 2));
  if (from == kNoSquare || to == kNoSquare)
    throw MoveError("malformed move " + quoted(text) + ": squares are a-h followed by 1-8");
  if (from == to) throw MoveError("malformed move " + quoted(text) + ": from and to squares are the same");
  return find_legal(pos, from, to, false, t);
}

Move parse_readable(const Position& pos, std::string_view text) {
  std::string_view t = trim(text);
  while (!t.empty() && (t.back() == '+' || t.back() == '#')) t.remove_suffix(1);
  // Tokens: "Ld2-d8" then "xd3" ... ; or "Xc5" "rm".
  std::vector<std::string_view> tokens;
  for (size_t i = 0; i < t.size();) {
    while (i < t.size() && t[i] == ' ') ++i;
    size_t j = i;
    while (j < t.size() && t[j] != ' ') ++j;
    if (j > i) tokens.push_back(t.substr(i, j - i));
    i = j;
  }
  if (tokens.empty()) throw MoveError("malformed move " + quoted(text) + ": it is empty");
  const std::string_view head = tokens[0];
  const Piece letter_piece = head.empty() ? kEmpty : piece_from_char(head[0]);
  if (letter_piece == kEmpty || color_of(letter_piece) != kWhite)
    throw MoveError("malformed move " + quoted(text) + ": it must start with a piece letter K P W L C I X");
  const Kind kind = kind_of(letter_piece);

  Move move;
  if (tokens.size() == 2 && tokens[1] == "rm") {
    const Square s = head.size() == 3 ? parse_square(head.substr(1)) : kNoSquare;
    if (s == kNoSquare) throw MoveError("malformed move " + quoted(text) + ": bad square in removal");
    move = find_legal(pos, s, s, true, t);
  } else {
    if (head.size() != 6 || head[3] != '-')
      throw MoveError("malformed move " + quoted(text) + ": expected a piece letter, from, '-', to, like Ld2-d8");
    const Square from = parse_square(head.substr(1, 2));
    const Square to = parse_square(head.substr(4, 2));
    if (from == kNoSquare || to == kNoSquare)
      throw MoveError("malformed move " + quoted(text) + ": squares are a-h followed by 1-8");
    if (from == to) throw MoveError("malformed move " + quoted(text) + ": from and to squares are the same");
    move = find_legal(pos, from, to, false, t);
    if (tokens.size() > 1) {
      Bitboard listed = 0;
      for (size_t i = 1; i < tokens.size(); ++i) {
        const std::string_view tok = tokens[i];
        const Square s = (tok.size() == 3 && tok[0] == 'x') ? parse_square(tok.substr(1)) : kNoSquare;
        if (s == kNoSquare)
          throw MoveError("malformed move " + quoted(text) + ": capture " + quoted(tok) + " is not like xd3");
        listed |= square_bb(s);
      }
      if (listed != move.captures)
        throw MoveError("illegal move " + quoted(text) + ": it captures " + captures_text(move) +
                        ", not the squares listed");
    }
  }
  if (kind_of(pos.piece_on(move.from())) != kind)
    throw MoveError("illegal move " + quoted(text) + ": the piece on " + square_name(move.from()) + " is not a " +
                    std::string(1, head[0]));
  return move;
}

Move parse_move(const Position& pos, std::string_view text) {
  const std::string_view t = trim(text);
  if (!t.empty() && std::isupper(static_cast<unsigned char>(t[0]))) return parse_readable(pos, t);
  return parse_coordinate(pos, t);
}

}  // namespace ultima
