// ultima puzzles extract: puzzles found in games read from PGN files or
// played here, rated and written as JSON lines (docs/puzzles.md).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "commands.h"
#include "common.h"
#include "engine/play/match.h"
#include "engine/play/pgn.h"
#include "engine/play/player_spec.h"
#include "engine/play/puzzle.h"
#include "engine/rules/notation.h"

namespace ultima::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct ExtractOptions {
  std::vector<std::string> pgn;
  std::vector<std::string> white, black;
  int games = 10;
  std::uint64_t seed = 1;
  std::string rules = kDefaultRules;
  int max_plies = kLadderMaxPlies;
  std::string out;
  std::string id_prefix = "P";
  int limit = 0;
  int rating_seeds = 5;
  PuzzleSettings settings;
};

// The games to look through: the records of the PGN files, then for each
// pair of --white and --black the seeded games between them.
std::vector<GameRecord> collect_games(const ExtractOptions& o) {
  std::vector<GameRecord> games;
  for (const std::string& path : o.pgn) {
    std::vector<GameRecord> read = read_pgn_file(path);
    spdlog::info("puzzles: {} games from {}", read.size(), path);
    games.insert(games.end(), read.begin(), read.end());
  }
  if (o.white.size() != o.black.size())
    throw std::invalid_argument(
        "--white and --black must be given the same number of times (players pair up in order)");
  for (std::size_t i = 0; i < o.white.size(); ++i) {
    for (const std::string& spec : {o.white[i], o.black[i]}) {
      try {
        make_player(spec);
      } catch (const std::exception& e) {
        throw std::invalid_argument("player '" + spec + "': " + e.what());
      }
    }
    MatchConfig config;
    config.rules = Rules::parse(o.rules);
    config.games = o.games;
    config.seed = o.seed + i;
    config.max_plies = o.max_plies;
    const auto start = Clock::now();
    const MatchResult result = play_match([spec = o.white[i]] { return make_player(spec); },
                                          [spec = o.black[i]] { return make_player(spec); }, config);
    for (const MatchGame& g : result.games) games.push_back(g.record);
    spdlog::info("puzzles: {} games of {} against {} played in {:.1f} s", result.games.size(), o.white[i], o.black[i],
                 seconds_since(start));
  }
  return games;
}

void run_extract(const ExtractOptions& o) {
  if (o.pgn.empty() && o.white.empty()) throw std::invalid_argument("give --pgn files or --white and --black players");
  if (o.out.empty()) throw std::invalid_argument("--out is required");
  if (o.games < 1) throw std::invalid_argument("--games must be at least 1");
  if (o.settings.mate_moves < 1 || o.settings.mate_moves > 5)
    throw std::invalid_argument("--mate-moves must be 1 to 5");
  if (o.settings.screen_depth < 1 || o.settings.screen_depth > 20)
    throw std::invalid_argument("--depth must be 1 to 20");
  if (o.rating_seeds < 1 || o.rating_seeds > 99) throw std::invalid_argument("--rating-seeds must be 1 to 99");
  Rules::parse(o.rules);
  const std::vector<Level> levels = load_levels();
  const std::vector<GameRecord> games = collect_games(o);
  std::size_t total_positions = 0;
  for (const GameRecord& g : games) total_positions += g.moves.size() + 1;

  Searcher searcher(o.settings.hash_mb);
  std::unordered_set<std::string> seen;
  std::vector<Puzzle> puzzles;
  std::size_t positions_done = 0, analysed = 0;
  const auto start = Clock::now();
  auto last_report = start;
  auto save = [&] { write_puzzle_file(o.out, puzzles); };
  for (std::size_t gi = 0; gi < games.size(); ++gi) {
    const GameRecord& game = games[gi];
    Position pos = first_position(game);
    for (std::size_t ply = 0; ply <= game.moves.size(); ++ply) {
      if (ply > 0) pos.make(game.moves[ply - 1]);
      ++positions_done;
      if (game_status(pos).over()) continue;
      // Deduplicated before the search: a position is looked at once.
      if (!seen.insert(puzzle_position_key(pos.fen())).second) continue;
      ++analysed;
      std::optional<Puzzle> puzzle = find_puzzle(pos, o.settings, searcher);
      if (puzzle) {
        rate_puzzle(*puzzle, levels, o.rating_seeds);
        char id[32];
        std::snprintf(id, sizeof id, "%s%05zu", o.id_prefix.c_str(), puzzles.size() + 1);
        puzzle->id = id;
        puzzle->source =
            game.white + " vs " + game.black + ", game " + std::to_string(gi + 1) + ", ply " + std::to_string(ply + 1);
        puzzles.push_back(std::move(*puzzle));
        if (puzzles.size() % 50 == 0) save();
      }
      if (seconds_since(last_report) >= 10) {
        last_report = Clock::now();
        const double elapsed = seconds_since(start);
        const double rate = positions_done / elapsed;
        spdlog::info("puzzles: game {}/{}, {}/{} positions ({:.1f}/s, {} searched), {} puzzles, ETA {:.0f} s", gi + 1,
                     games.size(), positions_done, total_positions, rate, analysed, puzzles.size(),
                     (total_positions - positions_done) / rate);
      }
      if (o.limit > 0 && static_cast<int>(puzzles.size()) >= o.limit) break;
    }
    if (o.limit > 0 && static_cast<int>(puzzles.size()) >= o.limit) break;
  }
  save();
  int mates = 0;
  for (const Puzzle& p : puzzles) mates += p.kind == PuzzleKind::kMate;
  spdlog::info("puzzles: {} puzzles ({} mates, {} gains) from {} positions ({} distinct) in {:.1f} s, written to {}",
               puzzles.size(), mates, puzzles.size() - mates, positions_done, analysed, seconds_since(start), o.out);
}

}  // namespace

void add_puzzles_extract_command(CLI::App* puzzles) {
  auto e = std::make_shared<ExtractOptions>();
  CLI::App* extract = puzzles->add_subcommand("extract", "find puzzles in games read from PGN files or played here");
  extract->add_option("--pgn", e->pgn, "PGN files of games to look through")->check(CLI::ExistingFile);
  extract->add_option("--white", e->white, "player spec of White (repeat, paired in order with --black)");
  extract->add_option("--black", e->black, "player spec of Black (repeat, paired in order with --white)");
  extract->add_option("--games", e->games, "games played per pair")->capture_default_str();
  add_seed_option(extract, e->seed, "the games (pair i plays with seed + i)");
  add_rules_option(extract, e->rules, "rule preset of the played games");
  extract->add_option("--max-plies", e->max_plies, "plies after which a played game is a draw")->capture_default_str();
  extract->add_option("--out", e->out, "JSON-lines file to write (atomically)")->required();
  extract->add_option("--id-prefix", e->id_prefix, "prefix of the puzzle ids")->capture_default_str();
  extract->add_option("--limit", e->limit, "stop after this many puzzles (0: none)")->capture_default_str();
  extract->add_option("--rating-seeds", e->rating_seeds, "runs per level when rating (majority decides)")
      ->capture_default_str();
  extract->add_option("--mate-moves", e->settings.mate_moves, "longest mate looked for, in moves")
      ->capture_default_str();
  extract->add_option("--depth", e->settings.screen_depth, "screening depth (gains confirmed 2 plies deeper)")
      ->capture_default_str();
  extract->add_option("--win-cp", e->settings.win_cp, "a gain's best move scores at least this")->capture_default_str();
  extract->add_option("--margin-cp", e->settings.margin_cp, "and the second best at least this much less")
      ->capture_default_str();
  extract->add_option("--material-cp", e->settings.material_cp, "material a gain line must win")->capture_default_str();
  extract->callback([e] { run_extract(*e); });
}

}  // namespace ultima::cli
