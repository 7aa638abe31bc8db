#include "engine/play/elo.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace ultima {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Two-sided 95% quantile of the normal distribution.
constexpr double kZ95 = 1.959963984540054;

// Results as units (games or pairs) scoring values in [0, 1]: the mean
// score and the per-unit variance.
struct ScoreSample {
  int units = 0;
  double mean = 0.5;
  double variance = 0;
  double step = 0.5;  // the smallest change of one unit's score
  int games_per_unit = 1;
};

ScoreSample sample_of(const std::vector<std::pair<double, int>>& value_counts, double step) {
  ScoreSample s;
  s.step = step;
  double sum = 0;
  for (const auto& [value, count] : value_counts) {
    s.units += count;
    sum += value * count;
  }
  if (s.units == 0) return s;
  s.mean = sum / s.units;
  double squares = 0;
  for (const auto& [value, count] : value_counts) squares += count * (value - s.mean) * (value - s.mean);
  s.variance = squares / s.units;
  return s;
}

ScoreSample sample_of(const Wdl& r) { return sample_of({{1.0, r.wins}, {0.5, r.draws}, {0.0, r.losses}}, 0.5); }

ScoreSample sample_of(const PairCounts& p) {
  std::vector<std::pair<double, int>> values;
  for (int i = 0; i < 5; ++i) values.emplace_back(i / 4.0, p.counts[i]);
  ScoreSample s = sample_of(values, 0.25);
  s.games_per_unit = 2;
  return s;
}

// While every result is the same the sample variance is zero, which would
// make the interval a point and the SPRT divide by zero: take the variance
// as if one unit had gone one step (half a point in one game) either way.
double variance_of(const ScoreSample& s) { return s.variance > 0 ? s.variance : s.step * s.step / s.units; }

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

EloEstimate estimate(const ScoreSample& s) {
  EloEstimate e;
  e.score = s.mean;
  e.elo = elo_from_score(s.mean);
  if (s.units == 0) {
    e.lower = -kInf;
    e.upper = kInf;
    return e;
  }
  const double n = s.units;
  const double variance = variance_of(s);
  // The exact bound counts games: n pairs won 2-0 are 2n straight wins.
  const double games = n * s.games_per_unit;
  if (s.mean >= 1.0) {
    e.lower = elo_from_score(std::pow(0.025, 1.0 / games));
    e.upper = kInf;
    e.los = 1.0;
    return e;
  }
  if (s.mean <= 0.0) {
    e.lower = -kInf;
    e.upper = elo_from_score(1.0 - std::pow(0.025, 1.0 / games));
    e.los = 0.0;
    return e;
  }
  const double standard_error = std::sqrt(variance / n);
  // Bounds outside (0, 1) map to infinite Elo.
  e.lower = elo_from_score(s.mean - kZ95 * standard_error);
  e.upper = elo_from_score(s.mean + kZ95 * standard_error);
  e.los = normal_cdf((s.mean - 0.5) / standard_error);
  return e;
}

SprtState test(const ScoreSample& s, const SprtConfig& c) {
  SprtState state;
  state.lower_bound = std::log(c.beta / (1 - c.alpha));
  state.upper_bound = std::log((1 - c.beta) / c.alpha);
  if (s.units == 0) return state;
  const double s0 = score_from_elo(c.elo0);
  const double s1 = score_from_elo(c.elo1);
  state.llr = s.units * (s1 - s0) * (2 * s.mean - s0 - s1) / (2 * variance_of(s));
  if (state.llr >= state.upper_bound) state.verdict = SprtVerdict::kAcceptH1;
  else if (state.llr <= state.lower_bound) state.verdict = SprtVerdict::kAcceptH0;
  return state;
}

double parse_number(const std::string& field, const char* what) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(field, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != field.size() || !std::isfinite(value))
    throw std::invalid_argument(std::string("bad SPRT ") + what + " '" + field + "'");
  return value;
}

}  // namespace

double Wdl::score() const {
  const int n = games();
  return n == 0 ? 0.5 : (wins + 0.5 * draws) / n;
}

void Wdl::add(double player1_points) {
  if (player1_points > 0.75) ++wins;
  else if (player1_points > 0.25) ++draws;
  else ++losses;
}

int PairCounts::pairs() const {
  int n = 0;
  for (int c : counts) n += c;
  return n;
}

double PairCounts::score() const { return sample_of(*this).mean; }

void PairCounts::add(double player1_points_in_pair) {
  const int i = static_cast<int>(std::lround(player1_points_in_pair * 2));
  ++counts[i < 0 ? 0 : i > 4 ? 4 : i];
}

double elo_from_score(double score) {
  if (score >= 1.0) return kInf;
  if (score <= 0.0) return -kInf;
  return -400.0 * std::log10(1.0 / score - 1.0);
}

double score_from_elo(double elo) { return 1.0 / (1.0 + std::pow(10.0, -elo / 400.0)); }

EloEstimate estimate_elo(const Wdl& results) {
  EloEstimate e = estimate(sample_of(results));
  e.los = likelihood_of_superiority(results);
  return e;
}

EloEstimate estimate_elo(const PairCounts& pairs) { return estimate(sample_of(pairs)); }

double likelihood_of_superiority(const Wdl& r) {
  if (r.wins + r.losses == 0) return 0.5;
  return 0.5 * (1.0 + std::erf((r.wins - r.losses) / std::sqrt(2.0 * (r.wins + r.losses))));
}

SprtConfig parse_sprt(std::string_view text) {
  std::vector<std::string> fields;
  std::string field;
  for (char c : text) {
    if (c == ',') {
      fields.push_back(field);
      field.clear();
    } else {
      field += c;
    }
  }
  fields.push_back(field);
  if (fields.size() != 2 && fields.size() != 4)
    throw std::invalid_argument("bad SPRT '" + std::string(text) + "': expected elo0,elo1 or elo0,elo1,alpha,beta");
  SprtConfig c;
  c.elo0 = parse_number(fields[0], "elo0");
  c.elo1 = parse_number(fields[1], "elo1");
  if (fields.size() == 4) {
    c.alpha = parse_number(fields[2], "alpha");
    c.beta = parse_number(fields[3], "beta");
  }
  if (!(c.elo0 < c.elo1)) throw std::invalid_argument("bad SPRT '" + std::string(text) + "': elo0 must be below elo1");
  if (!(c.alpha > 0 && c.alpha < 0.5 && c.beta > 0 && c.beta < 0.5))
    throw std::invalid_argument("bad SPRT '" + std::string(text) + "': alpha and beta must lie between 0 and 0.5");
  return c;
}

const char* sprt_verdict_name(SprtVerdict verdict) {
  switch (verdict) {
    case SprtVerdict::kContinue: return "continue";
    case SprtVerdict::kAcceptH0: return "H0 accepted";
    case SprtVerdict::kAcceptH1: return "H1 accepted";
  }
  return "?";
}

SprtState sprt(const Wdl& results, const SprtConfig& config) { return test(sample_of(results), config); }
SprtState sprt(const PairCounts& pairs, const SprtConfig& config) { return test(sample_of(pairs), config); }

std::string format_elo(double elo) {
  if (std::isinf(elo)) return elo > 0 ? "+inf" : "-inf";
  char text[32];
  // Keep "-0.0" from showing up for a tiny negative difference.
  std::snprintf(text, sizeof text, "%+.1f", std::fabs(elo) < 0.05 ? 0.0 : elo);
  return text;
}

std::string format_rating(double elo) {
  if (std::isinf(elo)) return elo > 0 ? "inf" : "-inf";
  if (std::isnan(elo)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", elo);
  return text;
}

std::string format_rating(double elo, double low, double high) {
  if (std::isnan(low) || std::isnan(high)) return format_rating(elo);
  return format_rating(elo) + " [" + format_rating(low) + ", " + format_rating(high) + "]";
}

void EloChain::add(const EloEstimate& link) {
  elo_ += link.elo;
  const double half = (link.upper - link.lower) / 2;
  variance_ += half * half;
}

double EloChain::half_width() const { return std::sqrt(variance_); }

double rating_from_results(const std::vector<RatedResult>& results) {
  int games = 0;
  for (const RatedResult& r : results) games += r.games;
  if (games == 0) return std::numeric_limits<double>::quiet_NaN();
  // d/dR of the log-likelihood is proportional to sum(points - games * E),
  // decreasing in R: bisect for its zero.
  auto slope = [&](double rating) {
    double sum = 0;
    for (const RatedResult& r : results) {
      if (r.games == 0) continue;
      const double expected = score_from_elo(rating - r.opponent_elo);
      sum += (r.points + 0.5) - (r.games + 1) * expected;
    }
    return sum;
  };
  double low = -4000, high = 8000;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (low + high);
    (slope(mid) > 0 ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

LadderRating rate_on_ladder(const std::vector<RatedResult>& results) {
  LadderRating out;
  for (const RatedResult& r : results) out.games += r.games;
  if (out.games == 0) return out;
  out.elo = rating_from_results(results);
  const double per_elo = std::log(10.0) / 400.0;  // d(logit)/d(Elo)
  double information = 0;
  for (const RatedResult& r : results) {
    if (r.games == 0) continue;
    const double p = score_from_elo(out.elo - r.opponent_elo);
    information += (r.games + 1) * p * (1 - p);
  }
  const double half = 1.96 / (per_elo * std::sqrt(information));
  out.lower = out.elo - half;
  out.upper = out.elo + half;
  return out;
}

}  // namespace ultima
