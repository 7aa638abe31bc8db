// A game between a person at a text terminal and a bot (`ultima play`):
// the board after every move, moves typed in either notation, and the
// commands moves, hint, undo, board, help, resign and quit. It reads lines
// from a stream and writes to a stream, so the program and the tests drive
// it the same way.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "engine/play/pgn.h"
#include "engine/play/player.h"
#include "engine/rules/position.h"

namespace ultima {

struct TerminalGameConfig {
  Rules rules;
  // The first position; empty means the rule set's start position.
  std::string fen;
  // The side the person plays; the bot moves whenever the other side is to
  // move, so with kBlack and the start position the bot moves first.
  Color human = kWhite;
  // The bot's move seeds and the hint's come from this and the ply; it is
  // written to the record's Seed tag.
  std::uint64_t seed = 1;
  // Names for the record and the messages.
  std::string bot_name = "bot";
  std::string human_name = "human";
  std::string hint_name = "hint";
  // The game record is written here (atomically) before the first move and
  // after every move, so it is never more than a move behind; empty: not
  // saved.
  std::string pgn_path;
  // The record's Date tag ("2026.12.01").
  std::string date = "????.??.??";
  // ANSI colours on the board (for a terminal that shows them).
  bool colour = false;
};

// The board as text, `bottom`'s side nearest the reader: files and ranks
// labelled, FEN letters (upper case White), '.' for an empty square, and a
// piece frozen by an immobilizer (or a chameleon next to an immobilizer) in
// parentheses, as "(k)". With `colour`, ANSI escapes make White's letters
// bold, Black's blue and the parentheses red; the text between them is the
// same.
std::string draw_board(const Position& pos, Color bottom = kWhite, bool colour = false);

// Plays one game: the bot moves when it is its turn, the person's lines are
// read from `in` at the prompt "> ". Bad input gets a message naming the
// problem and the prompt again. Ends at the game's end (the result printed),
// at `resign`, or at `quit` or the end of `in` (the game left unfinished,
// result "*"). `hint` may be null (the command then says there is none).
// Returns the game's record, as saved. Throws std::runtime_error when the
// bot fails or returns an illegal move, and when the record cannot be
// saved before the first move; a later failed save is reported on `out`
// and the game goes on.
GameRecord play_terminal_game(Player& bot, Player* hint, const TerminalGameConfig& config, std::istream& in,
                              std::ostream& out);

}  // namespace ultima
