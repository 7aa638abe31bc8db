// ultima match --player1 SPEC --player2 SPEC [--games N] [--concurrency N] ...
// Plays a match, shows a live progress line on standard error and prints
// the final table on standard output.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "common.h"
#include "match_report.h"
#include "engine/base/stop.h"
#include "engine/base/text.h"
#include "engine/play/elo.h"
#include "engine/play/match.h"
#include "engine/play/player_spec.h"
#include "engine/play/pgn.h"

namespace ultima::cli {
namespace {

struct Options {
  std::string player1;
  std::string player2;
  int games = 100;
  int concurrency = 1;
  std::uint64_t seed = 1;
  std::string opening_plies;  // "MIN-MAX" or "N"; default 4-8, or 0 with --openings
  std::string openings_file;
  int max_plies = kMatchMaxPlies;
  std::string rules = kDefaultRules;
  std::string pgn;
  int pgn_every = 100;
  std::string sprt;
  bool resume = false;
};

int parse_count(const std::string& text, const std::string& what) {
  std::size_t used = 0;
  int n = -1;
  try {
    n = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || n < 0) throw std::invalid_argument("bad " + what + " '" + text + "'");
  return n;
}

// "4-8" or "6".
void parse_opening_plies(const std::string& text, MatchConfig& config) {
  const std::size_t dash = text.find('-');
  const std::string what = "--opening-plies (expected MIN-MAX or N)";
  if (dash == std::string::npos) {
    config.opening_min_plies = config.opening_max_plies = parse_count(text, what);
  } else {
    config.opening_min_plies = parse_count(text.substr(0, dash), what);
    config.opening_max_plies = parse_count(text.substr(dash + 1), what);
  }
  if (config.opening_min_plies > config.opening_max_plies)
    throw std::invalid_argument("bad --opening-plies '" + text + "': MIN is above MAX");
}

// One FEN per line; '#' starts a comment; blank lines are skipped.
std::vector<std::string> read_openings(const std::string& path, const Rules& rules) {
  std::ifstream file(path);
  if (!file) throw std::invalid_argument("cannot read openings file '" + path + "'");
  std::vector<std::string> fens;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    line = line.substr(0, line.find('#'));
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    const std::string where = "openings file '" + path + "', line " + std::to_string(number) + ": ";
    Position pos;
    try {
      pos = Position::from_fen(line, rules);
    } catch (const FenError& e) {
      throw std::invalid_argument(where + e.what());
    }
    const GameStatus status = game_status(pos);
    if (status.over())
      throw std::invalid_argument(where + "the game is already over (" + termination_name(status.termination) + ")");
    fens.push_back(line);
  }
  if (fens.empty()) throw std::invalid_argument("openings file '" + path + "' has no positions");
  return fens;
}

void run(const Options& o) {
  for (const std::string* spec : {&o.player1, &o.player2})
    if (*spec == "help" || (spec->size() > 5 && spec->compare(spec->size() - 5, 5, ":help") == 0)) {
      std::fputs(player_spec_help().c_str(), stdout);
      return;
    }
  MatchConfig config;
  config.rules = Rules::parse(o.rules);
  config.games = o.games;
  config.concurrency = o.concurrency;
  config.seed = o.seed;
  config.max_plies = o.max_plies;
  config.record_path = o.pgn;
  config.record_every = o.pgn_every;
  config.date = local_time_text("%Y.%m.%d");
  if (o.games < 1) throw std::invalid_argument("--games must be at least 1");
  if (o.concurrency < 1 || o.concurrency > 1024) throw std::invalid_argument("--concurrency must be 1 to 1024");
  if (o.max_plies < 1) throw std::invalid_argument("--max-plies must be at least 1");
  if (o.pgn_every < 0) throw std::invalid_argument("--pgn-every must not be negative");
  if (!o.openings_file.empty()) {
    config.opening_fens = read_openings(o.openings_file, config.rules);
    config.opening_min_plies = config.opening_max_plies = 0;
  }
  if (!o.opening_plies.empty()) parse_opening_plies(o.opening_plies, config);
  if (!o.sprt.empty()) config.sprt = parse_sprt(o.sprt);
  if (o.resume) {
    if (o.pgn.empty()) throw std::invalid_argument("--resume needs --pgn: the record file of the match to continue");
    if (std::filesystem::exists(o.pgn)) {
      try {
        config.resumed = read_pgn_file(o.pgn);
      } catch (const std::exception& e) {
        throw std::invalid_argument("--resume: cannot read '" + o.pgn + "': " + e.what());
      }
      std::fprintf(stderr, "resuming: the %zu games of %s count as played\n", config.resumed.size(), o.pgn.c_str());
    } else {
      std::fprintf(stderr, "resuming: no %s yet, so the match starts from its first game\n", o.pgn.c_str());
    }
  }
  // SIGINT/SIGTERM end the match before the next move of every game; the
  // finished games are written and counted, and --resume goes on from them.
  install_stop_handlers();
  config.stop = &stop_requested();

  // A bad spec is a one-line error now, not a failure in every worker.
  for (const auto& [option, spec] : {std::pair{"--player1", &o.player1}, std::pair{"--player2", &o.player2}}) {
    try {
      make_player(*spec, network_factory());
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string(option) + " '" + *spec + "': " + e.what());
    }
  }
  // One batching evaluator per network for all the games at once.
  const NetworkFactory networks = shared_network_factory();
  const PlayerFactory player1 = [spec = o.player1, networks] { return make_player(spec, networks); };
  const PlayerFactory player2 = [spec = o.player2, networks] { return make_player(spec, networks); };

  std::string openings = std::to_string((config.games + 1) / 2) + " openings of ";
  if (!config.opening_fens.empty()) openings += "'" + o.openings_file + "'";
  else openings += "the start position";
  if (config.opening_max_plies > 0)
    openings += config.opening_min_plies == config.opening_max_plies
                    ? " + " + std::to_string(config.opening_min_plies) + " random plies"
                    : " + " + std::to_string(config.opening_min_plies) + "-" +
                          std::to_string(config.opening_max_plies) + " random plies";

  ProgressLine progress;
  MatchResult result;
  try {
    result = play_match(player1, player2, config, [&](const MatchProgress& p) { progress.show(p); });
  } catch (...) {
    progress.finish();
    throw;
  }
  progress.finish();
  print_match_table(result, config, openings);
  if (result.stopped)
    std::fprintf(stderr, "stopped by a signal: %d of %d games counted%s\n", result.results.games(), config.games,
                 config.record_path.empty() ? "" : "; --resume with the same options goes on from them");
  // The rate counts the games played now, not the resumed ones.
  const int played = std::max(0, result.results.games() - static_cast<int>(config.resumed.size()));
  std::fprintf(stderr, "%d games in %.1f s (%.2f games/s)%s%s\n", played, result.seconds,
               result.seconds > 0 ? played / result.seconds : 0.0,
               config.resumed.empty() ? "" : (", " + std::to_string(result.results.games()) + " counted").c_str(),
               config.record_path.empty() ? "" : ("; records in " + config.record_path).c_str());
}

}  // namespace

void add_match_command(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("match", "play a match between two players and report the Elo difference");
  cmd->add_option("--player1,--white", opts->player1,
                  "player 1 (White in odd rounds): a player spec (below; 'help' or 'mcts:help' prints it)")
      ->required();
  cmd->add_option("--player2,--black", opts->player2, "player 2 (White in even rounds)")->required();
  cmd->add_option("--games", opts->games, "games to play; each opening is played twice, colours swapped")
      ->capture_default_str();
  cmd->add_option("--concurrency", opts->concurrency, "games played at once")->capture_default_str();
  add_seed_option(cmd, opts->seed, "the openings and the players' randomness");
  cmd->add_option("--opening-plies", opts->opening_plies,
                  "random legal plies before the players take over: MIN-MAX or N (default 4-8, 0 with --openings)");
  cmd->add_option("--openings", opts->openings_file, "file of opening FENs, one per line, '#' comments, used in turn");
  cmd->add_option("--max-plies", opts->max_plies, "plies of the players after which a game is a draw")
      ->capture_default_str();
  add_rules_option(cmd, opts->rules);
  cmd->add_option("--pgn", opts->pgn, "write the game records to this file");
  cmd->add_option("--pgn-every", opts->pgn_every,
                  "also rewrite the record file after every N games (0: at the end only)")
      ->capture_default_str();
  cmd->add_option("--sprt", opts->sprt, "stop early: elo0,elo1[,alpha,beta] (alpha and beta default to 0.05)");
  cmd->add_flag("--resume", opts->resume,
                "continue the match whose games are in --pgn (same players, seed, rules, openings): they count "
                "as played, and only the other rounds are played; --games may grow");
  // The spec list reads the level files: only when help is asked for.
  cmd->footer([] { return "\n" + player_spec_help(); });
  cmd->callback([opts] { run(*opts); });
}

}  // namespace ultima::cli
