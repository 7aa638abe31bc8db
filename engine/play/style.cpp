#include "engine/play/style.h"

#include <cstdio>

#include "engine/rules/bitboard.h"
#include "engine/rules/movegen.h"

namespace ultima {
namespace {

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

}  // namespace

void StyleStats::add(const StyleStats& o) {
  games += o.games;
  wins += o.wins;
  draws += o.draws;
  losses += o.losses;
  checkmate_wins += o.checkmate_wins;
  game_plies += o.game_plies;
  moves += o.moves;
  capturing_moves += o.capturing_moves;
  pieces_captured += o.pieces_captured;
  pieces_lost += o.pieces_lost;
  checks += o.checks;
  king_pressure += o.king_pressure;
  enemy_frozen += o.enemy_frozen;
}

double StyleStats::capture_rate() const { return ratio(capturing_moves, moves); }
double StyleStats::average_length() const { return ratio(game_plies, games); }
double StyleStats::checkmate_share() const { return ratio(checkmate_wins, wins); }
double StyleStats::lost_per_game() const { return ratio(pieces_lost, games); }
double StyleStats::checks_per_100() const { return 100 * ratio(checks, moves); }
double StyleStats::pressure_per_100() const { return 100 * ratio(king_pressure, moves); }
double StyleStats::frozen_per_move() const { return ratio(enemy_frozen, moves); }

StyleStats game_style(const GameRecord& record, bool player_white) {
  const Color us = player_white ? kWhite : kBlack;
  const Color them = ~us;
  StyleStats s;
  s.games = 1;
  const bool won = record.result == (us == kWhite ? Outcome::kWhiteWins : Outcome::kBlackWins);
  const bool lost = record.result == (us == kWhite ? Outcome::kBlackWins : Outcome::kWhiteWins);
  s.wins = won;
  s.losses = lost;
  s.draws = !won && !lost;
  s.checkmate_wins = won && (record.termination == termination_name(Termination::kCheckmate) ||
                             record.termination == termination_name(Termination::kKingCaptured));
  Position pos = first_position(record);
  for (std::size_t i = 0; i < record.moves.size(); ++i) {
    const Move& m = record.moves[i];
    const bool counted = static_cast<int>(i) >= record.opening_plies;
    const bool ours = pos.side_to_move() == us;
    if (counted) ++s.game_plies;
    const Square enemy_king = pos.king_square(ours ? them : us);
    const Bitboard zone = enemy_king == kNoSquare ? 0 : neighbours(square_bb(enemy_king));
    const int taken = popcount(m.captures);
    pos.make(m);
    if (!counted) continue;
    if (ours) {
      ++s.moves;
      s.capturing_moves += taken > 0;
      s.pieces_captured += taken;
      if (m.is_removal()) ++s.pieces_lost;  // a piece of its own, given up
      if (pos.king_square(them) != kNoSquare && pos.in_check(them)) ++s.checks;
      if (!m.is_removal() && ((square_bb(m.to()) & zone) || (m.captures & zone))) ++s.king_pressure;
      s.enemy_frozen += popcount(pos.frozen(them));
    } else {
      s.pieces_lost += taken;
    }
  }
  return s;
}

std::string style_header() {
  return "games   W/D/L          capture%  length  mate-wins%  lost/game  checks/100  king-zone/100  frozen/move";
}

std::string style_row(const StyleStats& s) {
  char line[256];
  char wdl[32];
  std::snprintf(wdl, sizeof wdl, "%d/%d/%d", s.wins, s.draws, s.losses);
  std::snprintf(line, sizeof line, "%5d   %-13s  %8.1f  %6.1f  %10.1f  %9.2f  %10.1f  %13.1f  %11.2f", s.games, wdl,
                100 * s.capture_rate(), s.average_length(), 100 * s.checkmate_share(), s.lost_per_game(),
                s.checks_per_100(), s.pressure_per_100(), s.frozen_per_move());
  return line;
}

}  // namespace ultima
