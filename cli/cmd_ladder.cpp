// ultima ladder: measures the levels' Elo. Neighbours on the ladder play
// each other (the random mover below the weakest), and the Elo differences
// add up from the random mover, anchored at 0.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "common.h"
#include "engine/play/match.h"
#include "engine/play/player_spec.h"
#include "engine/rules/file_io.h"

namespace ultima::cli {
namespace {

struct LadderOptions {
  int games = 200;
  int concurrency = 2;
  std::uint64_t seed = 1;
  int max_plies = 300;
  std::string rules = "abbott1963";
  std::string baseline;
  std::string pgn_dir;
  bool write_elo = false;
};

MatchResult run_pair(const std::string& a, const std::string& b, const LadderOptions& o, int index) {
  MatchConfig config;
  config.games = o.games;
  config.concurrency = o.concurrency;
  config.seed = o.seed + 1000003ULL * index;
  config.rules = Rules::parse(o.rules);
  config.opening_min_plies = 2;
  config.opening_max_plies = 8;
  config.max_plies = o.max_plies;
  config.event = "ultima ladder";
  if (!o.pgn_dir.empty()) {
    std::filesystem::create_directories(o.pgn_dir);
    config.record_path = o.pgn_dir + "/" + a + "-vs-" + b + ".pgn";
  }
  std::fprintf(stderr, "%s vs %s: %d games\n", a.c_str(), b.c_str(), o.games);
  const NetworkFactory networks = shared_network_factory();
  return play_match([a, networks] { return make_player(a, networks); },
                    [b, networks] { return make_player(b, networks); }, config,
                    [](const MatchProgress& p) {
                      if (p.games_done % 20 && p.games_done != p.games_total) return;
                      std::fprintf(stderr, "  %d/%d  +%d =%d -%d  %.1f s\n", p.games_done, p.games_total,
                                   p.results.wins, p.results.draws, p.results.losses, p.seconds);
                    });
}

// Sets (or adds) the "elo:" line of a level file, atomically.
void write_elo(const std::string& path, int elo) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string line, out;
  bool found = false;
  const std::string elo_line = "elo: " + std::to_string(elo) + "              # measured by ultima ladder";
  while (std::getline(text, line)) {
    if (line.rfind("elo:", 0) == 0) {
      out += elo_line + "\n";
      found = true;
    } else {
      out += line + "\n";
    }
  }
  if (!found) out += elo_line + "\n";
  write_file_atomically(path, out);
}

void ladder(const LadderOptions& o) {
  const std::vector<Level> levels = load_levels();
  if (levels.empty()) throw std::invalid_argument("no levels found in " + levels_directory());
  std::vector<std::string> names{"random"};
  for (const Level& l : levels) names.push_back(l.name);
  if (!o.baseline.empty()) make_player(o.baseline, network_factory());  // a bad spec fails before any game

  struct Row {
    std::string name;
    double elo = 0, half_width = 0;
    Wdl vs_previous;
  };
  std::vector<Row> rows{{"random", 0, 0, {}}};
  double variance = 0;
  for (std::size_t i = 1; i < names.size(); ++i) {
    const MatchResult r = run_pair(names[i], names[i - 1], o, static_cast<int>(i));
    const EloEstimate e = estimate_elo(r.results);
    Row row;
    row.name = names[i];
    row.vs_previous = r.results;
    row.elo = rows.back().elo + e.elo;
    variance += std::pow((e.upper - e.lower) / 2, 2);
    row.half_width = std::sqrt(variance);
    rows.push_back(row);
  }

  std::printf("%-14s %8s %8s   %s\n", "level", "Elo", "95%", "vs the level below: W/D/L, score");
  for (const Row& row : rows) {
    if (row.name == "random") {
      std::printf("%-14s %8s %8s   anchor\n", "random", "0", "-");
      continue;
    }
    std::printf("%-14s %8s %8s   +%d =%d -%d, %.1f%%\n", row.name.c_str(), format_elo(row.elo).c_str(),
                std::isfinite(row.half_width) ? ("+-" + std::to_string(std::lround(row.half_width))).c_str() : "inf",
                row.vs_previous.wins, row.vs_previous.draws, row.vs_previous.losses, 100 * row.vs_previous.score());
  }
  if (!o.baseline.empty()) {
    const MatchResult r = run_pair(names.back(), o.baseline, o, 999);
    const EloEstimate e = estimate_elo(r.results);
    std::printf("%s vs %s: +%d =%d -%d, score %.1f%%, Elo %s [%s, %s]\n", names.back().c_str(), o.baseline.c_str(),
                r.results.wins, r.results.draws, r.results.losses, 100 * e.score, format_elo(e.elo).c_str(),
                format_elo(e.lower).c_str(), format_elo(e.upper).c_str());
  }
  if (o.write_elo) {
    for (std::size_t i = 1; i < rows.size(); ++i) {
      if (!std::isfinite(rows[i].elo)) throw std::runtime_error("level " + rows[i].name + " has no finite Elo; not written");
      write_elo(levels_directory() + "/" + rows[i].name + ".yaml", static_cast<int>(std::lround(rows[i].elo)));
    }
    std::printf("wrote the Elo of %zu levels to %s\n", rows.size() - 1, levels_directory().c_str());
  }
}

}  // namespace

void add_ladder_command(CLI::App& app) {
  auto o = std::make_shared<LadderOptions>();
  CLI::App* cmd = app.add_subcommand("ladder", "measure the levels' Elo (random mover = 0) by neighbour matches");
  cmd->add_option("--games", o->games, "games per pair of neighbours")->check(CLI::Range(2, 1000000));
  cmd->add_option("--concurrency", o->concurrency, "games at once")->check(CLI::Range(1, 256));
  cmd->add_option("--seed", o->seed, "seed for openings and players");
  cmd->add_option("--max-plies", o->max_plies, "plies before a game is called a draw")->check(CLI::Range(10, 10000));
  cmd->add_option("--rules", o->rules, "rule preset, optionally with switches");
  cmd->add_option("--baseline", o->baseline, "also play the top level against this player spec");
  cmd->add_option("--pgn-dir", o->pgn_dir, "save each match's games here");
  cmd->add_flag("--write-elo", o->write_elo, "write the measured Elo into the level files");
  cmd->callback([o] { ladder(*o); });
}

}  // namespace ultima::cli
