// Helpers shared by the rules tests: seeded random positions and move lists
// as text.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <random>
#include <string>
#include <vector>

#include "engine/rules/rules.h"

namespace ultima::test {

// The legal moves as "coord captures" lines, sorted: the `ultima moves` form.
inline std::vector<std::string> move_lines(const Position& pos) {
  MoveList list;
  generate_legal(pos, list);
  std::vector<std::string> lines;
  for (const Move& m : list) lines.push_back(to_coordinate(m) + " " + captures_text(m));
  std::sort(lines.begin(), lines.end());
  return lines;
}

// A position reached by `plies` random legal moves from the start (fewer if
// the game ends first).
inline Position random_game_position(const Rules& rules, std::mt19937_64& rng, int plies) {
  Position pos = Position::start(rules);
  for (int i = 0; i < plies; ++i) {
    if (game_status(pos).over()) break;
    MoveList list;
    generate_legal(pos, list);
    pos.make(list[std::uniform_int_distribution<int>(0, list.size() - 1)(rng)]);
  }
  return pos;
}

// A random placement: both kings and up to `extra` other pieces on random
// squares. Retries until the FEN is a legal position for these rules.
inline Position random_placement(const Rules& rules, std::mt19937_64& rng, int extra) {
  static const char kPieces[] = "PWLCIXpwlcix";
  for (;;) {
    std::array<Piece, 64> board{};
    std::vector<int> squares(64);
    for (int i = 0; i < 64; ++i) squares[i] = i;
    std::shuffle(squares.begin(), squares.end(), rng);
    board[squares[0]] = piece_from_char('K');
    board[squares[1]] = piece_from_char('k');
    const int n = std::uniform_int_distribution<int>(0, extra)(rng);
    for (int i = 0; i < n; ++i) board[squares[2 + i]] = piece_from_char(kPieces[rng() % 12]);
    const std::string fen = fen_placement(board) + ((rng() & 1) ? " w 0 1" : " b 0 1");
    try {
      return Position::from_fen(fen, rules);
    } catch (const FenError&) {
      // the side not to move was in check: draw again
    }
  }
}

// Builds a FEN from a list like "Kc4 If4 ke5 wd3" (upper case White, lower
// case Black), so that the positions below read as piece lists.
inline std::string fen_of(std::string_view pieces, char side = 'w', int halfmove = 0) {
  std::array<Piece, 64> board{};
  std::istringstream in{std::string(pieces)};
  std::string token;
  while (in >> token) {
    const Square s = token.size() == 3 ? parse_square(token.substr(1)) : kNoSquare;
    if (s == kNoSquare || piece_from_char(token[0]) == kEmpty)
      throw std::logic_error("bad piece token '" + token + "'");
    if (board[s] != kEmpty) throw std::logic_error("two pieces on " + token.substr(1));
    board[s] = piece_from_char(token[0]);
  }
  return fen_placement(board) + ' ' + side + ' ' + std::to_string(halfmove) + " 1";
}

inline Position make_pos(std::string_view pieces, char side = 'w', const Rules& rules = Rules{},
                  int halfmove = 0) {
  return Position::from_fen(fen_of(pieces, side, halfmove), rules);
}

// "d3,d5" -> the bitboard of those squares.
inline Bitboard squares(std::string_view names) {
  Bitboard b = 0;
  std::string name;
  std::istringstream in{std::string(names)};
  while (std::getline(in, name, ',')) {
    const Square s = parse_square(name);
    if (s == kNoSquare) throw std::logic_error("bad square '" + name + "'");
    b |= square_bb(s);
  }
  return b;
}

inline bool is_legal(const Position& pos, std::string_view move) {
  try {
    parse_move(pos, move);
    return true;
  } catch (const MoveError&) {
    return false;
  }
}

// Captures of a legal move, as captures_text writes them ("d3,d5" or "-").
inline std::string captures_of(const Position& pos, std::string_view move) {
  return captures_text(parse_move(pos, move));
}

inline Position fen_position(const std::string& fen, const std::string& rules = "abbott1963") {
  return Position::from_fen(fen, Rules::parse(rules));
}

inline bool is_legal(const Position& pos, const Move& move) {
  MoveList list;
  generate_legal(pos, list);
  return std::find(list.begin(), list.end(), move) != list.end();
}

// The moves that end the game at once in favour of the side to move, found
// by trying every legal move with the rules' own end test (no search).
inline std::vector<Move> mates_in_one_by_trying(Position& pos) {
  const Outcome win = pos.side_to_move() == kWhite ? Outcome::kWhiteWins : Outcome::kBlackWins;
  MoveList list;
  generate_legal(pos, list);
  std::vector<Move> out;
  for (const Move& m : list) {
    pos.make(m);
    if (game_status(pos).outcome == win) out.push_back(m);
    pos.unmake();
  }
  return out;
}

inline std::vector<Rules> all_presets() {
  std::vector<Rules> out;
  for (const std::string& name : preset_names()) out.push_back(Rules::preset(name));
  return out;
}

// A fresh directory in the temporary folder, removed at the end of the test.
class TempDir {
 public:
  explicit TempDir(const std::string& name) {
    path_ = (std::filesystem::temp_directory_path() / ("ultima-test-" + std::to_string(::getpid()) + "-" + name))
                .string();
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The names of the files in `dir`, sorted: what a test expects a folder to
// hold after writes, renames and stops.
inline std::vector<std::string> file_names(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) out.push_back(entry.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The bot catalogue's folder ($ULTIMA_BOTS) pointed at a fresh temporary
// one for the life of the object, with bot files written into it.
class BotsFolder {
 public:
  BotsFolder() : temp_("bots"), dir_(temp_.path()) {
    const char* old = std::getenv("ULTIMA_BOTS");
    if (old) old_ = old;
    setenv("ULTIMA_BOTS", dir_.c_str(), 1);
  }
  ~BotsFolder() {
    if (old_.empty()) unsetenv("ULTIMA_BOTS");
    else setenv("ULTIMA_BOTS", old_.c_str(), 1);
  }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir_ + "/" + name + ".yaml") << text; }
  const std::string& dir() const { return dir_; }

 private:
  test::TempDir temp_;
  std::string dir_;
  std::string old_;
};

}  // namespace ultima::test
