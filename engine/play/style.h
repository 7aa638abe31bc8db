// How a player plays, counted from its games: how often it captures, how
// long its games last, how it wins, what it gives up, and how much it
// presses the enemy king and freezes enemy pieces. Counted on the game
// records alone, so any player (alpha-beta, MCTS, another program) gets
// the same figures from the same games.
#pragma once

#include <string>

#include "engine/play/pgn.h"

namespace ultima {

struct StyleStats {
  int games = 0;
  int wins = 0, draws = 0, losses = 0;
  int checkmate_wins = 0;  // wins by checkmate or by capturing the king
  long long game_plies = 0;  // the players' plies of these games (opening not counted)
  long long moves = 0;       // the player's own moves
  long long capturing_moves = 0;
  long long pieces_captured = 0;  // enemy pieces it took
  long long pieces_lost = 0;      // own pieces taken by the opponent or removed by itself
  long long checks = 0;           // its moves after which the enemy king is in check
  long long king_pressure = 0;    // its moves that end next to the enemy king or capture there
  long long enemy_frozen = 0;     // enemy pieces frozen after its moves, summed over them

  void add(const StyleStats& other);
  friend bool operator==(const StyleStats&, const StyleStats&) = default;

  // The table's figures; 0 when there is nothing to divide by.
  double capture_rate() const;        // share of its moves that capture
  double average_length() const;      // plies per game
  double checkmate_share() const;     // share of its wins that were by checkmate
  double lost_per_game() const;       // pieces given up per game
  double checks_per_100() const;      // checks per 100 of its moves
  double pressure_per_100() const;    // king-zone moves per 100 of its moves
  double frozen_per_move() const;     // enemy pieces frozen, on average after its moves
};

// The figures of the side that played `player_white ? White : Black` in
// the record (the opening's plies are replayed, not counted).
StyleStats game_style(const GameRecord& record, bool player_white);

// One line of the style columns, and their header, for tables.
std::string style_header();
std::string style_row(const StyleStats& s);

}  // namespace ultima
