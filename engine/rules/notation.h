// Move text: the coordinate form ("d2d8", removal "xc5") and the readable
// form ("Ld2-d8 xd3 xd5 xd7", removal "Xc5 rm", "+" check, "#" mate).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/rules/position.h"

namespace ultima {

// Thrown for move text that is malformed or not a legal move here; the
// message names the problem.
class MoveError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

std::string to_coordinate(const Move& move);
// Captured squares sorted by name and comma-separated, or "-" if none.
std::string captures_text(const Move& move);
// pos is the position before the move.
std::string to_readable(const Position& pos, const Move& move);

// Each returns the legal move the text names, or throws MoveError.
Move parse_coordinate(const Position& pos, std::string_view text);
// The capture list may be left out; when given it must match the move's.
Move parse_readable(const Position& pos, std::string_view text);
// Either form.
Move parse_move(const Position& pos, std::string_view text);

}  // namespace ultima
