// Matches between two players: games in pairs on one opening with colours
// swapped, several at once, scored from player 1's point of view, with an
// optional SPRT stop and PGN-style records.
//
// Reproducible: the openings come from the match seed and the opening's
// index, each move's player seed from the match seed, the game's index and
// the ply, so a player that is deterministic given new_game() and its seed
// gives the same games and the same records whatever the concurrency.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/play/elo.h"
#include "engine/play/pgn.h"
#include "engine/play/player.h"
#include "engine/play/style.h"

namespace ultima {

// Thrown when a match cannot go on: a player or its factory threw, a player
// returned an illegal move, or the record file cannot be written. The
// message names the player, the game and the ply.
// The message of a caught exception (what() of a std::exception, else "an
// unknown exception"): how a failing player is reported.
std::string describe_exception(const std::exception_ptr& error);

class MatchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Termination text of a game stopped by the match's length limit.
inline constexpr const char* kMaxPliesTermination = "max plies";

// Plies after which a game between players is called a draw ("max plies"):
// the default of `ultima match`, and the ladder's, under which the levels
// and bots are rated; the loop's evaluation games, `ultima tune` and the
// puzzle extractor play under the ladder's too, so their figures compare
// with the ratings. (Self-play cuts its training games shorter: its run
// config's max_plies.)
inline constexpr int kMatchMaxPlies = 400;
inline constexpr int kLadderMaxPlies = 300;

struct MatchConfig {
  int games = 100;
  // Games played at once, each worker with its own two player instances.
  int concurrency = 1;
  std::uint64_t seed = 1;
  Rules rules;
  // Openings: a base position (the FENs in turn, cycling; the rule set's
  // start position when empty), then a random number of random legal plies
  // in [opening_min_plies, opening_max_plies]. Openings whose game is
  // already over are drawn again.
  std::vector<std::string> opening_fens;
  int opening_min_plies = 4;
  int opening_max_plies = 8;
  // A game still going after this many plies of the players (opening plies
  // not counted) is a draw, termination "max plies".
  int max_plies = kMatchMaxPlies;
  std::optional<SprtConfig> sprt;
  // PGN record file; empty: none. Written at the end (also when a player
  // fails) and, when record_every > 0, after every record_every games.
  std::string record_path;
  int record_every = 0;
  std::string event = "ultima match";
  // Set from outside (a signal handler, the loop), it ends the match before
  // the next move of every game; the games not finished are dropped. May be
  // null.
  const std::atomic<bool>* stop = nullptr;
  // Games of an earlier run of this match (same players, seed, rules and
  // openings), read back from its record file: they count as played, in
  // the results and the SPRT, and only the other rounds are played (`ultima
  // match --resume`). Each must be a finished game of a round up to
  // `games`, from that round's opening, with the players' names in the
  // colours the round gives them: play_match throws std::invalid_argument
  // (MatchError for the names, known once the players exist) naming the
  // first game that is not.
  std::vector<GameRecord> resumed;
  std::string site = "?";
  std::string date = "????.??.??";
};

struct Opening {
  std::string fen;  // empty: the rule set's start position
  std::vector<Move> plies;
};

// Opening k of the match: games 2k and 2k+1 start from it, player 1 White in
// the first. Throws MatchError when no opening can be found.
Opening make_opening(const MatchConfig& config, int k);

// The seed a player gets for the ply-th move of the players in game `game`.
std::uint64_t move_seed(std::uint64_t match_seed, int game, int ply);

struct MatchGame {
  int index = 0;  // from 0; Round is index + 1
  int opening = 0;
  bool player1_white = true;
  GameRecord record;

  double player1_points() const;
};

struct MatchProgress {
  int games_done = 0;   // games finished, in any order (resumed ones included)
  int games_resumed = 0;  // of them, from MatchConfig::resumed: not played now
  int games_total = 0;
  Wdl results;          // over the finished games
  double seconds = 0;
  std::optional<SprtState> sprt;  // over the counted prefix, when configured
};

struct MatchResult {
  std::string player1;
  std::string player2;
  // The counted games, by index: all of them, or with an SPRT stop the games
  // 0..k-1 where k is the first count at which the test decided.
  std::vector<MatchGame> games;
  Wdl results;
  PairCounts pairs;  // complete pairs among the counted games
  // Each player's style figures over the counted games (style.h).
  StyleStats style1, style2;
  std::optional<SprtState> sprt;
  bool stopped_by_sprt = false;
  // The outside stop ended it: `games` holds only the games 0..k-1 that
  // finished, and the match is not complete.
  bool stopped = false;
  double seconds = 0;
};

using PlayerFactory = std::function<std::unique_ptr<Player>()>;
// Called once per finished game, one call at a time, from the worker that
// finished it.
using MatchProgressCallback = std::function<void(const MatchProgress&)>;

// Throws std::invalid_argument for a bad configuration, MatchError when a
// player fails.
MatchResult play_match(const PlayerFactory& player1, const PlayerFactory& player2, const MatchConfig& config,
                       const MatchProgressCallback& progress = {});

}  // namespace ultima
