// ultima ladder: measures the levels' Elo, or with --catalogue every bot's.
// Neighbours on the ladder play each other (the random mover below the
// weakest, or the bot named by --from), and the Elo differences add up from
// the random mover, anchored at 0. The catalogue's rating, with each bot's
// interval and style figures, is written to bots.json.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "common.h"
#include "engine/base/file_io.h"
#include "engine/base/text.h"
#include "engine/play/bot.h"
#include "engine/play/elo.h"
#include "engine/play/match.h"
#include "engine/play/player_spec.h"

namespace ultima::cli {
namespace {

struct LadderOptions {
  int games = 200;
  int concurrency = 2;
  std::uint64_t seed = 1;
  int max_plies = kLadderMaxPlies;
  std::string rules = kDefaultRules;
  std::string baseline;
  std::string pgn_dir;
  bool write_elo = false;
  bool catalogue = false;
  std::string only;          // comma-separated bot names; empty: all
  std::string from = "random";
  std::string out = "bots.json";
  bool star = false;
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
    std::string file = a + "-vs-" + b + ".pgn";
    for (char& c : file)
      if (c == '/' || c == ':' || c == ',' || c == '=') c = '_';  // specs as file names
    config.record_path = o.pgn_dir + "/" + file;
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

// The whole catalogue (or the bots --only names) on one scale: a chain from
// the anchor up through the bots by order, each bot against the one below.
void catalogue_ladder(const LadderOptions& o) {
  const std::vector<Bot> catalogue = load_catalogue();
  std::vector<Bot> chain;
  std::vector<std::string> only = split(o.only, ',');
  std::erase(only, std::string());
  for (const std::string& name : only)
    if (std::none_of(catalogue.begin(), catalogue.end(), [&](const Bot& b) { return b.name == name; }))
      throw std::invalid_argument("--only: unknown bot '" + name + "'");
  for (const Bot& b : catalogue)
    if (b.name != o.from && (only.empty() || std::find(only.begin(), only.end(), b.name) != only.end()))
      chain.push_back(b);
  if (chain.empty()) throw std::invalid_argument("no bots to rate");
  double anchor_elo = 0;
  if (o.from != "random") {
    auto it = std::find_if(catalogue.begin(), catalogue.end(), [&](const Bot& b) { return b.name == o.from; });
    if (it == catalogue.end()) throw std::invalid_argument("--from: unknown bot '" + o.from + "'");
    if (!it->has_elo) throw std::invalid_argument("--from: bot '" + o.from + "' has no Elo to start from");
    anchor_elo = it->elo;
  }
  // Every spec is made once before any game, so a bad bot fails at once.
  for (const Bot& b : chain) make_player(b.name, network_factory());

  BotsReport report;
  report.anchor = o.from;
  report.rules = o.rules;
  report.games_per_pair = o.games;
  report.seed = o.seed;
  report.date = utc_time_text("%Y-%m-%dT%H:%M:%SZ");
  std::string below = o.from;
  EloChain chain_elo(anchor_elo);
  if (o.star && o.from == "random") throw std::invalid_argument("--star needs --from BOT");
  std::vector<std::string> vs_below;  // each bot's W/D/L against the one it was measured against
  for (std::size_t i = 0; i < chain.size(); ++i) {
    const Bot& b = chain[i];
    const MatchResult r = run_pair(b.name, below, o, static_cast<int>(i) + 1);
    chain_elo.add(estimate_elo(r.results));
    BotRating rating;
    rating.name = b.name;
    rating.description = b.description;
    rating.style = b.style;
    rating.spec = b.spec;
    rating.elo = chain_elo.elo();
    rating.elo_low = chain_elo.low();
    rating.elo_high = chain_elo.high();
    rating.games = r.results.games();
    rating.vs = below;
    rating.stats = r.style1;
    if (!report.bots.empty() && !o.star) {
      report.bots.back().stats.add(r.style2);
      report.bots.back().games += r.results.games();
    }
    report.bots.push_back(rating);
    vs_below.push_back("+" + std::to_string(r.results.wins) + " =" + std::to_string(r.results.draws) + " -" +
                       std::to_string(r.results.losses));
    if (o.star) {
      // Every bot against the same one: each its own difference from it.
      chain_elo.reset();
    } else {
      below = b.name;
    }
  }

  std::printf("%-16s %-12s %-22s %-14s   %s\n", "bot", "style", "Elo [95%]", "vs", "W/D/L against it");
  std::printf("%-16s %-12s %-22s\n", o.from.c_str(), "anchor", format_rating(anchor_elo).c_str());
  for (const BotRating& b : report.bots)
    std::printf("%-16s %-12s %-22s %-14s   %s\n", b.name.c_str(), b.style.c_str(),
                format_rating(b.elo, b.elo_low, b.elo_high).c_str(), b.vs.c_str(),
                vs_below[&b - report.bots.data()].c_str());
  std::printf("\nStyle over each bot's games (%s):\n%-16s %s\n", o.star ? ("all against " + o.from).c_str() : "both neighbours",
              "bot", style_header().c_str());
  for (const BotRating& b : report.bots) std::printf("%-16s %s\n", b.name.c_str(), style_row(b.stats).c_str());
  if (!o.out.empty()) {
    write_bots_report(o.out, report);
    std::printf("wrote %s\n", o.out.c_str());
  }
  if (o.write_elo) {
    int written = 0;
    for (const BotRating& r : report.bots) {
      const Bot& b = *std::find_if(catalogue.begin(), catalogue.end(), [&](const Bot& x) { return x.name == r.name; });
      if (!std::isfinite(r.elo)) {
        std::fprintf(stderr, "bot %s has no finite Elo; not written\n", r.name.c_str());
        continue;
      }
      const std::string elo_text = std::to_string(std::lround(r.elo));
      std::vector<std::pair<std::string, std::string>> keys{{"elo", elo_text}};
      if (!b.is_level && std::isfinite(r.elo_low) && std::isfinite(r.elo_high)) {
        keys.push_back({"elo_low", std::to_string(std::lround(r.elo_low))});
        keys.push_back({"elo_high", std::to_string(std::lround(r.elo_high))});
      }
      write_file_atomically(b.origin, set_yaml_keys(read_file(b.origin), keys));
      ++written;
    }
    std::printf("wrote the Elo of %d bots into their files\n", written);
  }
}

void ladder(const LadderOptions& o) {
  if (o.catalogue) return catalogue_ladder(o);
  if (!o.only.empty() || o.from != "random")
    throw std::invalid_argument("--only and --from need --catalogue");
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
  EloChain chain;  // from the random mover's 0
  for (std::size_t i = 1; i < names.size(); ++i) {
    const MatchResult r = run_pair(names[i], names[i - 1], o, static_cast<int>(i));
    chain.add(estimate_elo(r.results));
    rows.push_back({names[i], chain.elo(), chain.half_width(), r.results});
  }

  std::printf("%-14s %8s %8s   %s\n", "level", "Elo", "95%", "vs the level below: W/D/L, score");
  for (const Row& row : rows) {
    if (row.name == "random") {
      std::printf("%-14s %8s %8s   anchor\n", "random", "0", "-");
      continue;
    }
    std::printf("%-14s %8s %8s   +%d =%d -%d, %.1f%%\n", row.name.c_str(), format_rating(row.elo).c_str(),
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
      const std::string path = levels_directory() + "/" + rows[i].name + ".yaml";
      write_file_atomically(path, set_yaml_keys(read_file(path), {{"elo", std::to_string(std::lround(rows[i].elo))}}));
    }
    std::printf("wrote the Elo of %zu levels to %s\n", rows.size() - 1, levels_directory().c_str());
  }
}

}  // namespace

void add_ladder_command(CLI::App& app) {
  auto o = std::make_shared<LadderOptions>();
  CLI::App* cmd = app.add_subcommand(
      "ladder", "measure the levels' Elo (random mover = 0) by neighbour matches; --catalogue: every bot's, to bots.json");
  cmd->add_option("--games", o->games, "games per pair of neighbours")->check(CLI::Range(2, 1000000));
  cmd->add_option("--concurrency", o->concurrency, "games at once")->check(CLI::Range(1, 256));
  add_seed_option(cmd, o->seed, "the openings and the players");
  cmd->add_option("--max-plies", o->max_plies, "plies before a game is called a draw")->check(CLI::Range(10, 10000));
  add_rules_option(cmd, o->rules);
  cmd->add_option("--baseline", o->baseline, "also play the top level against this player spec");
  cmd->add_option("--pgn-dir", o->pgn_dir, "save each match's games here");
  cmd->add_flag("--write-elo", o->write_elo, "write the measured Elo into the level (and bot) files");
  cmd->add_flag("--catalogue", o->catalogue, "rate the bot catalogue (levels and bot files) and write --out");
  cmd->add_option("--only", o->only, "with --catalogue: rate only these bots (comma-separated), in catalogue order");
  cmd->add_option("--from", o->from,
                  "with --catalogue: the chain starts at this rated bot (its Elo as known) instead of random");
  cmd->add_flag("--star", o->star,
                "with --catalogue and --from: every bot plays the --from bot (same opponent, comparable styles)");
  cmd->add_option("--out", o->out, "with --catalogue: the rating's JSON file (empty: none)");
  cmd->callback([o] { ladder(*o); });
}

}  // namespace ultima::cli
