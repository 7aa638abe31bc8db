// Match statistics: score, Elo difference with its 95% interval, likelihood
// of superiority, and the sequential probability ratio test (SPRT).
//
// Elo is the logistic model throughout: a score s means a difference of
// -400 * log10(1/s - 1). The interval is the normal one on the mean score
// (per-game variance from the observed results) mapped through that curve,
// so it is not symmetric in Elo away from 50%.
#pragma once

#include <array>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace ultima {

// Game results from player 1's point of view.
struct Wdl {
  int wins = 0;
  int draws = 0;
  int losses = 0;

  int games() const { return wins + draws + losses; }
  // Points per game; 0.5 before any game.
  double score() const;
  void add(double player1_points);  // 1, 0.5 or 0
};

// Games played in pairs on one opening with colours swapped, counted by
// player 1's points in the pair: counts[0] = 0 points, ..., counts[4] = 2.
// Pairs are less noisy than single games: an opening that favours one
// colour favours both players once.
struct PairCounts {
  std::array<int, 5> counts{};

  int pairs() const;
  double score() const;  // points per game; 0.5 before any pair
  void add(double player1_points_in_pair);  // 0, 0.5, ..., 2
};

// Elo difference for an expected score; +infinity at 1, -infinity at 0.
double elo_from_score(double score);
double score_from_elo(double elo);

struct EloEstimate {
  double score = 0.5;
  double elo = 0;
  // The 95% interval; either end may be infinite.
  double lower = 0;
  double upper = 0;
  // Probability that player 1 is the stronger one.
  double los = 0.5;
};

// With no games the interval is (-inf, +inf). When every result is the same
// the normal interval has no variance to work with:
//  - all wins: the lower end is the score p at which n straight wins still
//    have a 2.5% chance (p^n = 0.025, the exact one-sided bound for n wins
//    in n decisive games; n counts games, also for pairs), the upper end
//    +inf; all losses the mirror;
//  - all draws (or all 1-1 pairs): the variance is taken as if one game had
//    gone half a point either way: 1/(4n) per game, 1/(16n) per pair.
EloEstimate estimate_elo(const Wdl& results);
EloEstimate estimate_elo(const PairCounts& pairs);

// The classic formula from wins and losses only (draws carry no
// information on who is stronger): 1/2 (1 + erf((W - L) / sqrt(2 (W + L)))).
double likelihood_of_superiority(const Wdl& results);

// H0: the Elo difference is elo0; H1: it is elo1 (elo0 < elo1). alpha is the
// chance of accepting H1 when H0 holds, beta of accepting H0 when H1 holds.
struct SprtConfig {
  double elo0 = 0;
  double elo1 = 5;
  double alpha = 0.05;
  double beta = 0.05;
};

// Parses "elo0,elo1" or "elo0,elo1,alpha,beta"; throws std::invalid_argument
// naming the problem.
SprtConfig parse_sprt(std::string_view text);

enum class SprtVerdict { kContinue, kAcceptH0, kAcceptH1 };
const char* sprt_verdict_name(SprtVerdict verdict);  // "continue", "H0 accepted", ...

struct SprtState {
  double llr = 0;
  double lower_bound = 0;  // log(beta / (1 - alpha)): at or below, accept H0
  double upper_bound = 0;  // log((1 - beta) / alpha): at or above, accept H1
  SprtVerdict verdict = SprtVerdict::kContinue;
};

// The generalized SPRT with the normal approximation of the mean score: for
// n games (or pairs) with mean score s and per-unit variance v, and s0, s1
// the scores of elo0 and elo1,
//   LLR = n (s1 - s0) (2 s - s0 - s1) / (2 v).
// While every result is the same, v is taken as if one game had gone half a
// point either way (as for the interval), so a run of wins or of draws
// still ends the test: 15 straight wins accept H1 of [0, 5].
SprtState sprt(const Wdl& results, const SprtConfig& config);
SprtState sprt(const PairCounts& pairs, const SprtConfig& config);

// The Elo texts, one for each kind of figure:
// a difference, with its sign and one decimal ("+190.8", "-inf", "+inf");
std::string format_elo(double elo);
// a rating on the ladder's scale, no sign, no decimals ("2861", "inf");
std::string format_rating(double elo);
// a rating with its 95% interval, when it has one ("2861 [2790, 2932]").
std::string format_rating(double elo, double low, double high);

// Ratings measured pair by pair up a ladder: each link (a player against
// the one below) adds its Elo difference to the chain, and the links'
// 95% half-widths add in quadrature, so the interval of a rung is that of
// the whole chain below it. `reset` starts again at the anchor (every
// player against one opponent).
class EloChain {
 public:
  explicit EloChain(double anchor = 0) : anchor_(anchor), elo_(anchor) {}
  void add(const EloEstimate& link);
  void reset() {
    elo_ = anchor_;
    variance_ = 0;
  }
  double elo() const { return elo_; }
  double half_width() const;
  double low() const { return elo_ - half_width(); }
  double high() const { return elo_ + half_width(); }

 private:
  double anchor_;
  double elo_;
  double variance_ = 0;
};

// Results against opponents of known rating (the bot levels' ladder).
struct RatedResult {
  double opponent_elo = 0;
  double points = 0;  // of the rated player
  int games = 0;
};
// The maximum-likelihood rating of a player from such results, with one
// virtual draw added against each opponent so that a clean sweep (or a
// whitewash) still gives a finite rating. NaN when there are no games.
double rating_from_results(const std::vector<RatedResult>& results);

// That rating with its 95% interval: rating +- 1.96 / sqrt(I), where I is the
// curvature (Fisher information) of the same log-likelihood at the rating,
//   I = (ln 10 / 400)^2 * sum over opponents of (games + 1) p (1 - p),
// p the expected score against that opponent (the virtual draws counted as
// in the rating). It treats each game as a win or a loss, so many draws make
// the interval somewhat wider than it need be, never narrower. NaN
// everywhere without games.
struct LadderRating {
  double elo = std::numeric_limits<double>::quiet_NaN();
  double lower = std::numeric_limits<double>::quiet_NaN();
  double upper = std::numeric_limits<double>::quiet_NaN();
  int games = 0;
};
LadderRating rate_on_ladder(const std::vector<RatedResult>& results);

}  // namespace ultima
