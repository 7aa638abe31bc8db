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
  int rating_seeds = kPuzzleRatingRuns;
  PuzzleSettings settings;
  // Puzzles to keep and continue: their positions are not looked at again,
  // new ids follow theirs.
  std::string existing;
  // Keep only mates of at least this many moves and puzzles with one of
  // these tags (neither given: keep every puzzle).
  int only_mate_in = 0;
  std::vector<std::string> only_tags;
  // Search only positions where a legal move has an --only-tag tag.
  bool tagged_moves_only = false;
};

bool wanted(const Puzzle& p, const ExtractOptions& o) {
  if (o.only_mate_in == 0 && o.only_tags.empty()) return true;
  if (o.only_mate_in > 0 && p.kind == PuzzleKind::kMate && p.mate_in >= o.only_mate_in) return true;
  for (const std::string& t : o.only_tags)
    if (std::find(p.tags.begin(), p.tags.end(), t) != p.tags.end()) return true;
  return false;
}

// The number after `prefix` in `id` (P01290: 1290), or 0 when it is not the
// prefix and digits.
std::size_t id_number(const std::string& id, const std::string& prefix) {
  if (id.size() <= prefix.size() || id.compare(0, prefix.size(), prefix) != 0) return 0;
  std::size_t n = 0;
  for (std::size_t i = prefix.size(); i < id.size(); ++i) {
    if (id[i] < '0' || id[i] > '9' || n > 100000000) return 0;
    n = 10 * n + static_cast<std::size_t>(id[i] - '0');
  }
  return n;
}

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
  if (o.only_mate_in < 0 || o.only_mate_in > o.settings.mate_moves)
    throw std::invalid_argument("--only-mate-in must be 1 to --mate-moves");
  if (o.tagged_moves_only && o.only_tags.empty())
    throw std::invalid_argument("--tagged-moves-only needs --only-tag (the tags looked for)");
  for (const std::string& t : o.only_tags) {
    if (known_puzzle_tags().count(t) == 0) throw std::invalid_argument("--only-tag: unknown tag '" + t + "'");
  }
  Rules::parse(o.rules);
  const std::vector<Level> levels = load_levels();

  // The puzzles kept from --existing, unchanged; their positions are seen.
  std::vector<Puzzle> puzzles;
  std::unordered_set<std::string> seen;
  std::size_t next_id = 1;
  if (!o.existing.empty()) {
    puzzles = read_puzzle_file(o.existing);
    for (const Puzzle& p : puzzles) {
      seen.insert(puzzle_position_key(p.fen));
      next_id = std::max(next_id, id_number(p.id, o.id_prefix) + 1);
    }
    spdlog::info("puzzles: {} puzzles kept from {}; new ids from {}{:05}", puzzles.size(), o.existing, o.id_prefix,
                 next_id);
  }
  const std::size_t kept = puzzles.size();

  const std::vector<GameRecord> games = collect_games(o);
  std::size_t total_positions = 0;
  for (const GameRecord& g : games) total_positions += g.moves.size() + 1;

  Searcher searcher(o.settings.hash_mb);
  std::size_t positions_done = 0, distinct = 0, analysed = 0, found = 0;
  auto found_new = [&] { return puzzles.size() - kept; };
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
      ++distinct;
      if (o.tagged_moves_only && !has_tagged_move(pos, o.only_tags)) continue;
      ++analysed;
      std::optional<Puzzle> puzzle = find_puzzle(pos, o.settings, searcher);
      if (puzzle) ++found;
      if (puzzle && wanted(*puzzle, o)) {
        rate_puzzle(*puzzle, levels, o.rating_seeds);
        char id[32];
        std::snprintf(id, sizeof id, "%s%05zu", o.id_prefix.c_str(), next_id++);
        puzzle->id = id;
        puzzle->source =
            game.white + " vs " + game.black + ", game " + std::to_string(gi + 1) + ", ply " + std::to_string(ply + 1);
        puzzles.push_back(std::move(*puzzle));
        if (found_new() % 50 == 0) save();
      }
      if (seconds_since(last_report) >= 10) {
        last_report = Clock::now();
        const double elapsed = seconds_since(start);
        const double rate = positions_done / elapsed;
        spdlog::info("puzzles: game {}/{}, {}/{} positions ({:.1f}/s, {} searched), {} puzzles, ETA {:.0f} s", gi + 1,
                     games.size(), positions_done, total_positions, rate, analysed, found_new(),
                     (total_positions - positions_done) / rate);
      }
      if (o.limit > 0 && static_cast<int>(found_new()) >= o.limit) break;
    }
    if (o.limit > 0 && static_cast<int>(found_new()) >= o.limit) break;
  }
  save();
  int mates = 0;
  for (std::size_t i = kept; i < puzzles.size(); ++i) mates += puzzles[i].kind == PuzzleKind::kMate;
  spdlog::info(
      "puzzles: {} new puzzles ({} mates, {} gains; {} found, the rest not wanted) from {} positions ({} distinct, {} "
      "searched) in {:.1f} s, {} in all written to {}",
      found_new(), mates, found_new() - mates, found, positions_done, distinct, analysed, seconds_since(start),
      puzzles.size(), o.out);
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
  extract->add_option("--limit", e->limit, "stop after this many new puzzles (0: none)")->capture_default_str();
  extract->add_option("--rating-seeds", e->rating_seeds, "runs per level when rating")->capture_default_str();
  extract->add_option("--existing", e->existing,
                      "puzzle file to continue: its puzzles come first, unchanged, their positions are skipped and "
                      "new ids follow theirs")
      ->check(CLI::ExistingFile);
  extract->add_option("--only-mate-in", e->only_mate_in,
                      "keep only mates of at least this many moves (and puzzles with an --only-tag)");
  extract->add_option("--only-tag", e->only_tags, "keep only puzzles with this tag (repeat; and --only-mate-in mates)");
  extract->add_flag("--tagged-moves-only", e->tagged_moves_only,
                    "search only positions where a legal move, played alone, has an --only-tag tag");
  CLI::Option* deep = extract->add_option(
      "--deep-mate-cp", e->settings.deep_mate_cp,
      "search every position whose screen scores at least this (cp) but shows no mate again, to depth 2 x "
      "--mate-moves - 1, for the mates the screen cannot see (off when not given)");
  extract->add_option("--mate-moves", e->settings.mate_moves, "longest mate looked for, in moves")
      ->capture_default_str();
  extract->add_option("--depth", e->settings.screen_depth, "screening depth (gains confirmed 2 plies deeper)")
      ->capture_default_str();
  extract->add_option("--win-cp", e->settings.win_cp, "a gain's best move scores at least this")->capture_default_str();
  extract->add_option("--margin-cp", e->settings.margin_cp, "and the second best at least this much less")
      ->capture_default_str();
  extract->add_option("--material-cp", e->settings.material_cp, "material a gain line must win")->capture_default_str();
  extract->callback([e, deep] {
    e->settings.deep_mate = deep->count() > 0;
    run_extract(*e);
  });
}

}  // namespace ultima::cli
