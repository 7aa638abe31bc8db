// ultima match --player1 SPEC --player2 SPEC [--games N] [--concurrency N] ...
// Plays a match, shows a live progress line on standard error and prints
// the final table on standard output.
#include <unistd.h>

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
#include "engine/base/stop.h"
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
  int max_plies = 400;
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

std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[16];
  std::strftime(text, sizeof text, "%Y.%m.%d", &local);
  return text;
}

std::string clock_text(double seconds) {
  const long s = std::lround(seconds);
  char text[32];
  if (s >= 3600) std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
  return text;
}

// "+12.3 +/- 45.6": Elo and half the interval's width.
std::string elo_with_margin(const EloEstimate& e) {
  if (std::isinf(e.elo)) return format_elo(e.elo);
  if (std::isinf(e.lower) || std::isinf(e.upper)) return format_elo(e.elo) + " +/- inf";
  char margin[32];
  std::snprintf(margin, sizeof margin, " +/- %.1f", (e.upper - e.lower) / 2);
  return format_elo(e.elo) + margin;
}

std::string sprt_text(const SprtState& s) {
  char text[96];
  std::snprintf(text, sizeof text, "LLR %.2f [%.2f, %.2f]", s.llr, s.lower_bound, s.upper_bound);
  return text;
}

// The live line: rewritten in place on a terminal (at most five times a
// second), else one line every five seconds so logs stay short.
class ProgressLine {
 public:
  ProgressLine() : terminal_(isatty(fileno(stderr)) != 0) {}

  void show(const MatchProgress& p) {
    last_ = p;
    shown_ = false;
    const auto now = std::chrono::steady_clock::now();
    const auto interval = terminal_ ? std::chrono::milliseconds(200) : std::chrono::milliseconds(5000);
    if (p.games_done < p.games_total && now - last_print_ < interval) return;
    last_print_ = now;
    print();
  }

  // The last state, if not yet shown; ends the terminal's line.
  void finish() {
    if (last_ && !shown_) print();
    if (terminal_ && last_) std::fputc('\n', stderr);
    std::fflush(stderr);
  }

 private:
  void print() {
    const MatchProgress& p = *last_;
    const Wdl& r = p.results;
    // Games played now: resumed games took no time here.
    const double rate = p.seconds > 0 ? (p.games_done - p.games_resumed) / p.seconds : 0;
    std::string line = "games " + std::to_string(p.games_done) + "/" + std::to_string(p.games_total) + "  +" +
                       std::to_string(r.wins) + " =" + std::to_string(r.draws) + " -" + std::to_string(r.losses);
    char numbers[128];
    std::snprintf(numbers, sizeof numbers, "  score %.1f%%  Elo ", 100 * r.score());
    line += numbers + elo_with_margin(estimate_elo(r));
    std::snprintf(numbers, sizeof numbers, "  %.2f games/s", rate);
    line += numbers;
    if (rate > 0 && p.games_done < p.games_total) line += "  ETA " + clock_text((p.games_total - p.games_done) / rate);
    if (p.sprt) line += "  " + sprt_text(*p.sprt);
    if (terminal_) {
      const std::size_t width = line.size();
      if (line.size() < width_) line.append(width_ - line.size(), ' ');
      width_ = width;
      std::fprintf(stderr, "\r%s", line.c_str());
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
    shown_ = true;
  }

  bool terminal_;
  std::optional<MatchProgress> last_;
  bool shown_ = false;
  std::size_t width_ = 0;
  std::chrono::steady_clock::time_point last_print_{};
};

std::string percent(double x) {
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * x);
  return text;
}

void print_table(const MatchResult& result, const MatchConfig& config, const std::string& openings) {
  const Wdl& r = result.results;
  const Wdl mirrored{r.losses, r.draws, r.wins};
  const EloEstimate e1 = estimate_elo(r);
  const EloEstimate e2 = estimate_elo(mirrored);
  std::printf("match %s vs %s: rules %s, %s, max %d plies, seed %llu\n", result.player1.c_str(),
              result.player2.c_str(), config.rules.name().c_str(), openings.c_str(), config.max_plies,
              static_cast<unsigned long long>(config.seed));
  const int width = static_cast<int>(std::max({result.player1.size(), result.player2.size(), std::size_t{6}}));
  std::printf("\n%-*s %6s %6s %6s %6s %7s %8s  %s\n", width, "player", "games", "wins", "draws", "losses", "score",
              "Elo", "95% interval");
  const auto row = [&](const std::string& name, const Wdl& w, const EloEstimate& e) {
    std::printf("%-*s %6d %6d %6d %6d %7s %8s  [%s, %s]\n", width, name.c_str(), w.games(), w.wins, w.draws,
                w.losses, percent(w.score()).c_str(), format_elo(e.elo).c_str(), format_elo(e.lower).c_str(),
                format_elo(e.upper).c_str());
  };
  row(result.player1, r, e1);
  row(result.player2, mirrored, e2);
  std::printf("\n");

  Wdl as_white, as_black;
  std::map<std::string, int> endings;
  for (const MatchGame& g : result.games) {
    (g.player1_white ? as_white : as_black).add(g.player1_points());
    ++endings[g.record.termination];
  }
  std::printf("%s as White +%d =%d -%d, as Black +%d =%d -%d; likelihood of superiority %s\n",
              result.player1.c_str(), as_white.wins, as_white.draws, as_white.losses, as_black.wins, as_black.draws,
              as_black.losses, percent(e1.los).c_str());
  if (result.pairs.pairs() > 0) {
    const EloEstimate ep = estimate_elo(result.pairs);
    const auto& c = result.pairs.counts;
    std::printf("pairs (player 1's points 0/0.5/1/1.5/2): %d %d %d %d %d; Elo from pairs %s [%s, %s]\n", c[0],
                c[1], c[2], c[3], c[4], format_elo(ep.elo).c_str(), format_elo(ep.lower).c_str(),
                format_elo(ep.upper).c_str());
  }
  std::vector<std::pair<std::string, int>> sorted(endings.begin(), endings.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string ended;
  for (const auto& [name, count] : sorted) ended += (ended.empty() ? "" : ", ") + name + " " + std::to_string(count);
  std::printf("ended by: %s\n", ended.c_str());
  std::printf("style (style.h; docs/bots.md):\n%-24s %s\n", "player", style_header().c_str());
  std::printf("%-24s %s\n", result.player1.c_str(), style_row(result.style1).c_str());
  std::printf("%-24s %s\n", result.player2.c_str(), style_row(result.style2).c_str());
  if (config.sprt && result.sprt) {
    const SprtConfig& s = *config.sprt;
    std::printf("SPRT elo0 %g elo1 %g alpha %g beta %g: %s: %s%s\n", s.elo0, s.elo1, s.alpha, s.beta,
                sprt_text(*result.sprt).c_str(), sprt_verdict_name(result.sprt->verdict),
                result.stopped_by_sprt ? (" after " + std::to_string(r.games()) + " games").c_str() : "");
  }
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
  config.date = today();
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
  print_table(result, config, openings);
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
  cmd->add_option("--seed", opts->seed, "seed of the openings and of the players' randomness")
      ->capture_default_str();
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
