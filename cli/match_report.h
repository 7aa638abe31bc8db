// What `ultima match` shows: a live progress line on standard error while
// the match runs, and the final table on standard output.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "engine/play/match.h"

namespace ultima::cli {

// The live line: rewritten in place on a terminal (at most five times a
// second), else one line every five seconds so logs stay short.
class ProgressLine {
 public:
  ProgressLine();
  void show(const MatchProgress& p);
  // The last state, if not yet shown; ends the terminal's line.
  void finish();

 private:
  void print();

  bool terminal_;
  std::optional<MatchProgress> last_;
  bool shown_ = false;
  std::size_t width_ = 0;
  std::chrono::steady_clock::time_point last_print_{};
};

// The final table: each player's games, score and Elo with its interval,
// colours, pairs, endings, style and the SPRT's verdict. `openings` says
// how the games began.
void print_match_table(const MatchResult& result, const MatchConfig& config, const std::string& openings);

}  // namespace ultima::cli
