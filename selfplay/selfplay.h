// Self-play: games of a network against itself, many at once in one
// process, all sharing one evaluator (a batching network evaluator gathers
// their positions into large forward passes). Each game thread runs its own
// MCTS; moves come from the search's visits with a temperature that decays
// over the game, Dirichlet noise is added at the root of full searches, and
// playout cap randomization searches most moves cheaply (those moves are
// played but not kept as samples). A side resigns when its search value stays
// below a threshold, except in a share of games that never resign: there
// the would-be resignations are checked against the real result, which gives
// the false-resign rate. The samples go to shards in the run directory; the
// games to PGN files beside them.
//
// A job is "games 0..N-1 under tag T": game g belongs to shard g /
// games_per_shard, and its seed comes from the job's seed and g alone. A
// shard is written once all its games are done, so a killed job loses only
// unfinished shards, and run again it plays exactly the missing ones.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/mcts/evaluator.h"
#include "engine/mcts/mcts.h"
#include "engine/play/pgn.h"
#include "engine/rules/position.h"
#include "engine/rules/rule_set.h"
#include "nn/data/run_dir.h"
#include "nn/data/sample.h"

namespace ultima {
class Searcher;
}

namespace ultima::selfplay {

// The termination of a game adjudicated on material.
inline constexpr const char* kMaterialAdjudication = "material adjudication";

// White's material minus Black's in centipawns (the evaluation's default
// piece values, kings not counted, frozen pieces at full value).
int material_lead(const Position& pos);

// Self-play's search settings: the registry's defaults with self-play's own
// overrides, stated here once (and printed by `ultima loop --print-config`):
//   gumbel true, gumbel_rescale_q false, gumbel_c_scale 1: a Gumbel root
//     whose move played is its choice (a sample from the policy sharpened
//     by the search's values; the temperature keys are then not used), Q
//     mapped from [-1, 1] so a near-flat value head cannot swing the choice
//     on noise, and sigma's c_scale at 1 so the values count;
//   noise_epsilon 0.25: Dirichlet noise at the root of full searches;
//   mate_scan_root false: the root's check of every move for a mate in two
//     costs more than a search of a few dozen playouts; the tree finds such
//     mates;
//   policy_temperature 1: the network's priors as they are (the players'
//     flatter default was measured for play, not for training);
//   threads 1 (one game per thread) and no progress reports.
MctsConfig selfplay_mcts_defaults();

struct SelfPlayConfig {
  Rules rules;
  int parallel_games = 16;  // games played at once (one thread each)
  int games_per_shard = 8;
  // Playout cap randomization: a move gets a full search with probability
  // full_search_share (its position becomes a sample), else a cheap one.
  std::uint64_t full_playouts = 200;
  std::uint64_t cheap_playouts = 40;
  double full_search_share = 0.25;
  // The search: every key of the registry (engine/mcts/settings.h) that a
  // run config's selfplay section takes, from selfplay_mcts_defaults().
  // Self-play sets the seed, the playout budgets and the noise (on full
  // searches only) itself, move by move.
  MctsConfig mcts = selfplay_mcts_defaults();
  // Move choice: visits^(1/T), T from `temperature` at ply 0 decaying
  // towards `temperature_end` with this half-life in plies (0: best move).
  double temperature = 1.0;
  double temperature_end = 1.0;
  double temperature_halflife = 0;
  // "visits" (the full search's visit shares) or "gumbel" (the improved
  // policy of a Gumbel root; needs mcts.gumbel).
  std::string policy_target = "gumbel";
  // Resignation: when the side to move's search value (win - loss) stays
  // below -resign_threshold for resign_consecutive of its own moves
  // (0 threshold: never). A share of games never resigns.
  double resign_threshold = 0;
  int resign_consecutive = 3;
  double no_resign_share = 0.2;
  int max_plies = 120;  // then the game is cut ("max plies"): no result unless adjudicated
  // Adjudication at max_plies (0: off): a side whose material (the
  // evaluation's piece values, kings not counted) leads by at least this
  // many centipawns is scored the winner ("material adjudication"), as
  // match managers adjudicate long engine games; below it the game is cut
  // and its samples carry no result.
  int adjudicate_cp = 100;
  // Value labels from the alpha-beta search: with value_nodes above 0,
  // each sample's root_q (the share q_ratio of its value target) is the
  // alpha-beta searcher's score after that many nodes, through the fitted
  // logistic (value_by_search), instead of the MCTS root's value; the
  // searcher's evaluation is value_nnue, named as warm_start.nnue is.
  std::uint64_t value_nodes = 0;
  std::string value_nnue;

  // Throws std::invalid_argument naming the first bad value.
  void validate() const;
};

// A warm start (Expert Iteration's first stage, KataGo-style bootstrapping):
// games of the alpha-beta searcher instead of the network's, labelled by
// its search, so the first networks learn from a player that already knows
// the pieces. Each position of a teacher game becomes a sample: the policy
// target is a softmax of the MultiPV lines' scores (temperature_cp
// centipawns per factor e), the value target the game's result and, as
// root_q, the best line's score through the fitted logistic
// (score_to_wdl: win - loss). The first sample_plies plies are played by
// sampling that policy (varied openings and middlegames), the rest by the
// best line.
struct TeacherConfig {
  int depth = 2;            // plies of the alpha-beta search per move
  int multipv = 6;          // lines searched: the moves the policy target spreads over
  double temperature_cp = 80;
  int sample_plies = 24;
  // The searcher's evaluation: empty or "none" the hand-written one,
  // "default" the shipped learned network, else a network file
  // (engine/play/level.h's load_nnue).
  std::string nnue;

  // Throws std::invalid_argument naming the first bad value.
  void validate() const;
};

// Tactics samples: positions where the side to move mates in 1 to
// max_moves moves, reached by random play and proven by the exact mate
// search (engine/play/puzzle.h's random_game_mate). Each position is one
// sample whose policy target is spread evenly over the moves that mate that
// fast (up to 8 of them) and whose value target is a win (result and root_q
// +1) in 2 * moves - 1 plies, unless `value` is false. Self-play's games, mostly adjudicated on
// material, reach few mates; these show the network what ends a game.
struct TacticsConfig {
  int max_moves = 2;
  // false: the samples train the policy only (no value or moves-left
  // target, as a game cut without a result), so positions of random play
  // do not teach the value head that the side to move is winning.
  bool value = true;
  // Share of the positions drawn to be mates in exactly max_moves (the
  // game's random play passes over quicker mates); the others take the
  // first mate found. 0: the first mate found always, which makes mates
  // in one the larger part.
  double longest_share = 0;
  // Share of the positions drawn (per position, from its seed) from thin
  // boards far from the opening (random_sparse_mate: random play that
  // prefers captures, probed once at most sparse_pieces pieces stand,
  // kings counted) instead of ordinary random play. 0: none.
  double sparse_share = 0;
  int sparse_pieces = 12;

  // Throws std::invalid_argument naming the first bad value.
  void validate() const;
};

struct SelfPlayJob {
  std::string tag = "sp";  // shard names: TAG-NNNNNN.shard
  int games = 0;           // games 0..games-1 of this tag
  std::uint64_t model_version = 0;
  std::uint64_t seed = 1;
  std::shared_ptr<Evaluator> evaluator;
  std::string player_name = "ultima";  // in the game records
  // Set: teacher games (play_teacher_game) instead of the network's; no
  // evaluator is needed.
  std::optional<TeacherConfig> teacher;
  // Set (and no teacher): each "game" is one tactics sample
  // (play_tactics_game); no evaluator is needed.
  std::optional<TacticsConfig> tactics;
};

struct SelfPlayStats {
  int games = 0;            // played by this call (shards already there not counted)
  int games_skipped = 0;    // already in the run directory
  int shards = 0;           // written by this call
  std::uint64_t moves = 0;  // plies played, games under way included
  std::uint64_t finished_moves = 0;  // plies of the finished games
  int in_progress = 0;               // games being played now
  std::uint64_t samples = 0;
  std::uint64_t playouts = 0;
  int white_wins = 0, black_wins = 0, draws = 0;
  int resigned = 0;         // games ended by resignation
  int max_plies = 0;        // games cut at max_plies without a result
  int adjudicated = 0;      // games at max_plies given to the side ahead in material
  int no_resign_games = 0;
  int would_resign = 0;     // no-resign games where a side reached the threshold
  int false_resign = 0;     // ... and then did not lose
  double seconds = 0;
  double false_resign_rate() const { return would_resign ? double(false_resign) / would_resign : 0; }
  double moves_per_second() const { return seconds > 0 ? moves / seconds : 0; }
  // Seconds left for `games_total` games, from the move rate and an
  // expected game length: the mean length of the finished games (max_plies
  // before any has finished), or the plies the games under way have
  // already reached, whichever is more (the first games to end are the
  // short ones).
  double eta_seconds(int games_total, int max_plies) const;
};

// One finished game: its samples (full searches only) and its record.
struct SelfPlayGame {
  std::vector<data::Sample> samples;
  GameRecord record;
  std::uint64_t playouts = 0;
  bool resigned = false;
  bool cut = false;              // max plies, no result
  bool adjudicated = false;      // max plies, won on material
  bool no_resign = false;
  bool would_resign = false;     // in a no-resign game: some side reached the threshold
  bool false_resign = false;     // ... and did not lose
};

// Plays one game. `index` numbers it within its shard (Sample::game).
// `moves_played` (may be null) counts the plies as they are played.
SelfPlayGame play_selfplay_game(const SelfPlayConfig& config, std::shared_ptr<Evaluator> evaluator,
                                std::uint64_t seed, std::uint32_t index,
                                std::atomic<std::uint64_t>* moves_played = nullptr);

// The warm start's label of one position: the alpha-beta searcher's
// MultiPV lines at teacher.depth. `sample` holds the position, the policy
// target (the lines' softmax; a forced mate is the whole target) and root_q
// (the best line's score through score_to_wdl); its ply, game and result
// are the game's to set. `moves` and `weights` are the lines' first moves
// and unnormalised weights, from which a teacher game picks its move.
struct TeacherLabel {
  data::Sample sample;
  std::vector<Move> moves;
  std::vector<double> weights;
  std::uint64_t nodes = 0;
};
TeacherLabel label_by_teacher(const Position& pos, const TeacherConfig& teacher, Searcher& searcher);

// The value label of one position (SelfPlayConfig::value_nodes): the
// searcher, its table and history cleared, searches `nodes` nodes from
// `pos` (its history counts for repetitions); its score through
// score_to_wdl gives win - loss for the side to move. The same position
// and history give the same label on any thread.
float value_by_search(const Position& pos, std::uint64_t nodes, Searcher& searcher);

// One teacher game (the end rules, adjudication and sample numbering as in
// play_selfplay_game).
SelfPlayGame play_teacher_game(const SelfPlayConfig& config, const TeacherConfig& teacher, std::uint64_t seed,
                               std::uint32_t index, std::atomic<std::uint64_t>* moves_played = nullptr);

// One tactics sample: games of random moves (from `seed`) until one
// reaches a forced mate. The record is that game up to the position, every
// move counted as opening and no result, with the termination "mate in N
// to play"; after 1000 games without one, no sample.
SelfPlayGame play_tactics_game(const SelfPlayConfig& config, const TacticsConfig& tactics, std::uint64_t seed,
                               std::uint32_t index, std::atomic<std::uint64_t>* moves_played = nullptr);

// The seed of game `game` of a job.
std::uint64_t game_seed(std::uint64_t job_seed, const std::string& tag, int game);

// Called after every finished game and about once a second in between
// (one call at a time).
using SelfPlayProgress = std::function<void(const SelfPlayStats& stats, int games_total)>;

// Plays the job's missing shards. `stop` (may be null) ends it early: games
// under way are dropped, shards written stay. Throws what the evaluator
// throws, or std::runtime_error when a file cannot be written.
SelfPlayStats run_selfplay(const data::RunDir& run, const SelfPlayConfig& config, const SelfPlayJob& job,
                           const SelfPlayProgress& progress = {}, const std::atomic<bool>* stop = nullptr);

}  // namespace ultima::selfplay
