// Puzzles: positions with one winning move, found in games, proven by the
// search, tagged by what they turn on and rated by the weakest level that
// solves them; their JSON-lines file (docs/puzzles.md).
//
// A puzzle is one of two kinds:
//   mate  the side to move mates in n moves, and at each of its turns along
//         the line exactly one move keeps the mate within the moves left
//         (proven by the exact, full-width mate search of search.h);
//   gain  at the screening depth the best move scores at least `win_cp` and
//         every other move less than that and at least `margin_cp` less
//         than the best; the line follows the
//         search until the material is won (each later move of the solver
//         unique by the same margin), and a search two plies deeper agrees.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/play/level.h"
#include "engine/rules/position.h"
#include "engine/search/search.h"

namespace ultima {

// Thrown for a puzzle file or line that cannot be read; the message names
// the file, the line number and the problem.
class PuzzleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PuzzleSettings {
  // Longest mate looked for, in moves of the side to move.
  int mate_moves = 3;
  // Depth of the screening search (MultiPV 2) run on every position; gains
  // are confirmed at screen_depth + 2.
  int screen_depth = 3;
  // A gain: the best move scores at least win_cp, the second best less than
  // win_cp and at least margin_cp less than the best, and the line wins at
  // least material_cp of material.
  int win_cp = 300;
  int margin_cp = 300;
  int material_cp = 200;
  // Most moves of the solver in a gain line.
  int max_gain_moves = 3;
  // Positions whose 100-ply counter is this high or more are skipped (the
  // draw rule would come into the line).
  int max_halfmove_clock = 80;
  // Transposition table of every search, MB. A score near a margin can
  // depend on it, so checks use the same size.
  std::size_t hash_mb = kDefaultHashMb;
  // The mate probe: a position whose screen shows no mate within
  // mate_moves but scores at least deep_mate_cp for the side to move is
  // searched again to depth 2 mate_moves - 1 (5: the mates in three the
  // depth-3 screen cannot see); a mate within mate_moves there is proven by
  // the exact mate search like any other. Off when deep_mate is false.
  bool deep_mate = false;
  int deep_mate_cp = 300;
};

enum class PuzzleKind { kMate, kGain };
const char* puzzle_kind_name(PuzzleKind kind);

// One level at a puzzle when it was rated: the probability that it plays
// every solver move (rate_puzzle), to 4 decimals, over how many runs, and
// the level's Elo at the time (0: none).
struct LevelSolves {
  std::string level;
  int elo = 0;
  double solve = 0;
  int runs = 0;
  bool operator==(const LevelSolves&) const = default;
};

// Runs per level when rating (`ultima puzzles extract|rate --rating-seeds`).
constexpr int kPuzzleRatingRuns = 10;

struct Puzzle {
  std::string id;
  std::string fen;
  Rules rules;
  PuzzleKind kind = PuzzleKind::kMate;
  // mate: n, the mate's length in moves of the solver.
  int mate_in = 0;
  // gain: the depth it is confirmed at, the best and second-best scores
  // there (centipawns for the solver), and the material won along the line.
  int depth = 0;
  int score_cp = 0;
  int second_cp = 0;
  int material_cp = 0;
  // The solver's moves and the replies, alternating, the solver's first and
  // last.
  std::vector<Move> solution;
  std::vector<std::string> tags;
  // The weakest level whose chance of solving it is at least one half, and
  // the Elo where the levels' chance crosses one half (interpolated_rating);
  // "none" (Elo 0) when no level's does.
  std::string rating = "none";
  int rating_elo = 0;
  // The levels run when rating, weakest first, up to the rating's level
  // (all of them for "none"); empty in files rated before it was kept.
  std::vector<LevelSolves> solves;
  // Where it was found (game and ply), for people.
  std::string source;
};

// The puzzle in pos (searched from the position alone: its history is not
// used, as a puzzle file has none), or nothing. Tags are set; id, rating and
// source are left empty. `searcher` is reused between calls.
std::optional<Puzzle> find_puzzle(const Position& pos, const PuzzleSettings& settings, Searcher& searcher);

// A forced mate reached by random play: the side to move mates in exactly
// `moves` moves. The mates of the solver benchmark and of the loop's
// tactics samples.
struct RandomMate {
  Position pos;
  int moves = 0;            // 1 .. the bound looked for
  std::vector<Move> line;   // the random moves from the start that reached it
};

// Plays one game of uniformly random legal moves from the start position
// under `rules` (each move from `rng`), probing it with the exact mate
// search for a mate within `most` moves at ply 20 and every third ply
// after; the first position found, or nothing when the game ends (or
// reaches 200 plies) first. A position whose quickest mate is shorter than
// `least` moves is passed over and the game goes on.
std::optional<RandomMate> random_game_mate(std::mt19937_64& rng, const Rules& rules, int most, Searcher& searcher,
                                           int least = 1);

// Sparse boards far from the opening: one game of random legal moves in
// which a move that captures, where there is one, is played three times in
// four (so the board empties), probed with the exact mate search at every
// ply once at most `max_pieces` pieces (kings counted) stand; the first
// position with a mate within `most` moves (and not quicker than `least`),
// or nothing when the game ends or reaches 400 plies first.
std::optional<RandomMate> random_sparse_mate(std::mt19937_64& rng, const Rules& rules, int most, Searcher& searcher,
                                             int max_pieces, int least = 1);

// The moves of `pos` that mate in `moves` moves (the exact mate search, one
// search per move found, each excluding the moves found before), at most
// `limit` of them; empty when none mates that fast.
std::vector<Move> mating_moves(const Position& pos, int moves, Searcher& searcher, int limit = 8);

// Suites of short mates for the solvers' benchmarks: positions with a mate
// in exactly 1 and exactly 2, `count` of each. From seeded random play (one
// position per game, so the suite stays varied; the same seed, the same
// suite; `sparse` above 0: from random_sparse_mate's boards of at most
// that many pieces) ...
void random_mate_suite(int count, std::uint64_t seed, std::vector<Position>& in_one, std::vector<Position>& in_two,
                       int sparse = 0);
// ... or the final positions of the games in PGN `files` that have one, in
// file order; returns the number of games whose final position has
// neither. Throws std::runtime_error naming a file that cannot be read.
std::size_t mate_suite_from_pgn(const std::vector<std::string>& files, int count, std::vector<Position>& in_one,
                                std::vector<Position>& in_two);

// The themes of a line from `start`: the capture modes of the solver's
// captures (pinch, withdrawal, leap, coordination, king; chameleon with
// the mode it imitated), immobilization when a solver's move freezes an
// enemy piece that was free, removal when the solver removes a piece, mate
// when the line ends in checkmate. Sorted, each once.
std::vector<std::string> puzzle_tags(const Position& start, const std::vector<Move>& solution);
// Every tag puzzle_tags can give.
const std::set<std::string>& known_puzzle_tags();
// Does a legal move of the side to move, played alone, have one of `tags`
// (puzzle_tags of that move)? A cheap look, without search, for positions
// where a theme is on the board.
bool has_tagged_move(const Position& pos, const std::vector<std::string>& tags);

// The key under which two puzzles count as one position: the FEN's
// placement and side to move.
std::string puzzle_position_key(const std::string& fen);

// Sets solves, rating and rating_elo. Each of `levels`, weakest first, is
// run `runs` times at the puzzle, playing as in a match (play_level_move):
// run s (from 0) searches each solver position i of the solution with the
// seed mix(mix(s + 1) ^ i) and the level's noise, and its chance of playing
// the whole solution is the product over the solver moves of
// (1 - blunder_rate) [the search plays the move] + blunder_rate / (legal
// moves), the level's share of random moves counted exactly rather than
// drawn. A level's solve probability is the mean over its runs (a level
// without noise or random moves runs once). The levels go on until one's
// is at least one half; the rating is interpolated_rating of them.
void rate_puzzle(Puzzle& puzzle, const std::vector<Level>& levels, int runs = kPuzzleRatingRuns);

// The rating from the levels' solve probabilities, weakest first: the first
// level whose probability is at least one half names it ("none", Elo 0,
// when none is). Its Elo is where the probability crosses one half,
// interpolated linearly in Elo between the level before it (probability
// p0 < 1/2, Elo e0) and it (p1, e1): e0 + (1/2 - p0) / (p1 - p0) * (e1 -
// e0), rounded; so it lies above e0 and at most e1. The weakest level, or
// one after a level without an Elo, gives its own Elo.
struct InterpolatedRating {
  std::string level = "none";
  int elo = 0;
};
InterpolatedRating interpolated_rating(const std::vector<LevelSolves>& solves);

// Empty when the puzzle's rating and rating_elo are those its solves give
// (or it has no solves), else the problem.
std::string rating_problem(const Puzzle& puzzle);

// Replays the solution from the FEN: every move legal, the game not over
// before the last, and at the end checkmate (mate) or the stated material
// won (gain). Empty when it holds, else the problem.
std::string replay_problem(const Puzzle& puzzle);
// Confirms the puzzle with the search, after replay_problem. At the first
// solver move, and at every later one when `every_move`: for a mate, the
// exact mate search finds the solution's move with the moves left and no
// other move mates as fast; for a gain, the search at the stated depth
// (first move) or at the screening depth, stated depth - 2 (later moves),
// plays the solution's move with the default settings' win and margin.
// `searcher` should have the extraction's table size
// (PuzzleSettings::hash_mb): a score near a margin can depend on it. Empty
// when confirmed, else the problem.
std::string confirm_problem(const Puzzle& puzzle, Searcher& searcher, bool every_move = true);

// One JSON object per line (docs/puzzles.md lists the fields).
std::string puzzle_to_json(const Puzzle& puzzle);
// Throws PuzzleError naming `origin` and the problem.
Puzzle puzzle_from_json(std::string_view line, const std::string& origin);
// Every puzzle of a JSON-lines text (empty lines skipped); a malformed line
// throws PuzzleError naming `origin` and the line number.
std::vector<Puzzle> read_puzzles(std::string_view text, const std::string& origin);
std::vector<Puzzle> read_puzzle_file(const std::string& path);
// Writes atomically (file_io.h).
void write_puzzle_file(const std::string& path, const std::vector<Puzzle>& puzzles);

// The shipped puzzle file: $ULTIMA_PUZZLES, else
// configs/puzzles/puzzles.jsonl beside the program's source tree, else
// ./configs/puzzles/puzzles.jsonl.
std::string default_puzzle_file();

}  // namespace ultima
