// ultima puzzles extract|rate|check|show: puzzles found in games
// (docs/puzzles.md); extract is in cmd_puzzles_extract.cpp.
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
    if (const std::string problem = rating_problem(p); !problem.empty()) {
      std::printf("%s: %s\n", p.id.c_str(), problem.c_str());
      ++failures;
    }
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

struct RateOptions {
  std::string in, out;
  int runs = kPuzzleRatingRuns;
};

// Rates every puzzle of a file again; ids, positions and solutions stay.
void run_rate(const RateOptions& o) {
  if (o.runs < 1 || o.runs > 99) throw std::invalid_argument("--rating-seeds must be 1 to 99");
  std::vector<Puzzle> puzzles = read_puzzle_file(o.in);
  const std::vector<Level> levels = load_levels();
  const auto start = Clock::now();
  auto last_report = start;
  for (std::size_t i = 0; i < puzzles.size(); ++i) {
    rate_puzzle(puzzles[i], levels, o.runs);
    if (seconds_since(last_report) >= 10) {
      last_report = Clock::now();
      const double rate = (i + 1) / seconds_since(start);
      spdlog::info("puzzles rate: {}/{} ({:.1f}/s), ETA {:.0f} s", i + 1, puzzles.size(), rate,
                   (puzzles.size() - i - 1) / rate);
    }
  }
  write_puzzle_file(o.out, puzzles);
  std::printf("%zu puzzles rated in %.1f s (%d runs a level), written to %s\n", puzzles.size(), seconds_since(start),
              o.runs, o.out.c_str());
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
    std::printf("tags     %s\nrating   %s (Elo %d)\n", tags.c_str(), p.rating.c_str(), p.rating_elo);
    if (!p.solves.empty()) {
      std::printf("solves  ");
      for (const LevelSolves& s : p.solves) std::printf(" %s %.4g", s.level.c_str(), s.solve);
      std::printf("\n");
    }
    std::printf("source   %s\n", p.source.c_str());
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
  CLI::App* cmd = app.add_subcommand("puzzles", "find puzzles in games, rate or check a puzzle file, show a puzzle");
  cmd->require_subcommand(1);

  add_puzzles_extract_command(cmd);

  auto r = std::make_shared<RateOptions>();
  CLI::App* rate = cmd->add_subcommand(
      "rate", "rate every puzzle of a file again (ids, positions and solutions unchanged), written atomically");
  rate->add_option("--in", r->in, "puzzle file to read (JSON lines)")->required()->check(CLI::ExistingFile);
  rate->add_option("--out", r->out, "puzzle file to write (may be --in)")->required();
  rate->add_option("--rating-seeds", r->runs, "runs per level")->capture_default_str();
  rate->callback([r] { run_rate(*r); });

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
