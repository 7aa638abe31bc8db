// ultima puzzles extract|check|show: puzzles found in games (docs/puzzles.md).
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

struct CheckOptions {
  std::string file;
  int sample = 0;
  std::uint64_t seed = 1;
  bool first_only = false;
};

void run_check(const CheckOptions& o) {
  const std::vector<Puzzle> puzzles = read_puzzle_file(o.file);
  std::vector<std::size_t> order(puzzles.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (o.sample > 0 && static_cast<std::size_t>(o.sample) < order.size()) {
    std::mt19937_64 rng(o.seed);
    std::shuffle(order.begin(), order.end(), rng);
    order.resize(o.sample);
    std::sort(order.begin(), order.end());
  }
  std::unordered_set<std::string> ids, keys;
  int failures = 0;
  for (const Puzzle& p : puzzles) {
    if (!ids.insert(p.id).second) {
      std::printf("%s: id used twice\n", p.id.c_str());
      ++failures;
    }
    if (!keys.insert(puzzle_position_key(p.fen)).second) {
      std::printf("%s: a second puzzle from the same position\n", p.id.c_str());
      ++failures;
    }
  }
  Searcher searcher(PuzzleSettings{}.hash_mb);
  const auto start = Clock::now();
  auto last_report = start;
  std::size_t done = 0;
  for (std::size_t i : order) {
    const std::string problem = confirm_problem(puzzles[i], searcher, !o.first_only);
    if (!problem.empty()) {
      std::printf("%s: %s\n", puzzles[i].id.c_str(), problem.c_str());
      ++failures;
    }
    ++done;
    if (seconds_since(last_report) >= 10) {
      last_report = Clock::now();
      const double rate = done / seconds_since(start);
      spdlog::info("puzzles check: {}/{} ({:.1f}/s), {} problems, ETA {:.0f} s", done, order.size(), rate, failures,
                   (order.size() - done) / rate);
    }
  }
  std::printf("%zu of %zu puzzles checked in %.1f s: %d problem%s\n", done, puzzles.size(), seconds_since(start),
              failures, failures == 1 ? "" : "s");
  if (failures) throw std::runtime_error(o.file + ": " + std::to_string(failures) + " puzzle(s) failed the check");
}

void run_show(const std::string& id, const std::string& file) {
  for (const Puzzle& p : read_puzzle_file(file)) {
    if (p.id != id) continue;
    Position pos = Position::from_fen(p.fen, p.rules);
    std::printf("id       %s\nfen      %s\nrules    %s\n", p.id.c_str(), p.fen.c_str(), p.rules.name().c_str());
    if (p.kind == PuzzleKind::kMate)
      std::printf("kind     mate in %d\n", p.mate_in);
    else
      std::printf("kind     gain: %d cp at depth %d (second best %d cp), %d cp of material won\n", p.score_cp, p.depth,
                  p.second_cp, p.material_cp);
    std::string tags;
    for (const std::string& t : p.tags) tags += (tags.empty() ? "" : ", ") + t;
    std::printf("tags     %s\nrating   %s (Elo %d)\nsource   %s\n", tags.c_str(), p.rating.c_str(), p.rating_elo,
                p.source.c_str());
    // The board, White at the bottom.
    for (int rank = 7; rank >= 0; --rank) {
      std::printf("  %d ", rank + 1);
      for (int file = 0; file < 8; ++file) std::printf(" %c", piece_char(pos.piece_on(make_square(file, rank))));
      std::printf("\n");
    }
    std::printf("     a b c d e f g h\n%s to move\nsolution", pos.side_to_move() == kWhite ? "White" : "Black");
    for (const Move& m : p.solution) {
      std::printf(" %s", to_readable(pos, m).c_str());
      pos.make(m);
    }
    std::printf("\n");
    return;
  }
  throw std::invalid_argument("no puzzle '" + id + "' in " + file);
}

}  // namespace

void add_puzzles_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("puzzles", "find puzzles in games, check a puzzle file, show a puzzle");
  cmd->require_subcommand(1);

  auto e = std::make_shared<ExtractOptions>();
  CLI::App* extract = cmd->add_subcommand("extract", "find puzzles in games read from PGN files or played here");
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

  auto c = std::make_shared<CheckOptions>();
  CLI::App* check = cmd->add_subcommand("check", "replay every puzzle's solution and confirm it with the search");
  check->add_option("file", c->file, "puzzle file (JSON lines)")->required();
  check->add_option("--sample", c->sample, "check only this many, drawn with --seed (0: all)")->capture_default_str();
  add_seed_option(check, c->seed, "the sample");
  check->add_flag("--first-move-only", c->first_only, "confirm only the first move of each solution with the search");
  check->callback([c] { run_check(*c); });

  auto id = std::make_shared<std::string>();
  auto file = std::make_shared<std::string>();
  CLI::App* show = cmd->add_subcommand("show", "print one puzzle with its board and solution");
  show->add_option("id", *id, "puzzle id")->required();
  show->add_option("--file", *file, "puzzle file (default: the shipped configs/puzzles/puzzles.jsonl)");
  show->callback([id, file] { run_show(*id, file->empty() ? default_puzzle_file() : *file); });
}

}  // namespace ultima::cli
