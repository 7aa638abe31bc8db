#include "match_report.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "engine/play/elo.h"
#include "engine/play/style.h"

namespace ultima::cli {
namespace {

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

std::string percent(double x) {
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * x);
  return text;
}

}  // namespace

ProgressLine::ProgressLine() : terminal_(isatty(fileno(stderr)) != 0) {}

void ProgressLine::show(const MatchProgress& p) {
  last_ = p;
  shown_ = false;
  const auto now = std::chrono::steady_clock::now();
  const auto interval = terminal_ ? std::chrono::milliseconds(200) : std::chrono::milliseconds(5000);
  if (p.games_done < p.games_total && now - last_print_ < interval) return;
  last_print_ = now;
  print();
}

void ProgressLine::finish() {
  if (last_ && !shown_) print();
  if (terminal_ && last_) std::fputc('\n', stderr);
  std::fflush(stderr);
}

void ProgressLine::print() {
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

void print_match_table(const MatchResult& result, const MatchConfig& config, const std::string& openings) {
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

}  // namespace ultima::cli
