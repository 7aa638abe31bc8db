#include "engine/mcts/gumbel.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ultima::gumbel {

double logit(float prior) { return std::log(std::max<double>(prior, 1e-20)); }

std::vector<double> sample_gumbel(int moves, double scale, std::mt19937_64& rng) {
  std::vector<double> g(moves, 0.0);
  if (scale == 0) return g;
  // u in (0, 1): the open interval keeps both logarithms finite.
  std::uniform_real_distribution<double> uniform(std::nextafter(0.0, 1.0), 1.0);
  for (double& x : g) x = -scale * std::log(-std::log(uniform(rng)));
  return g;
}

std::vector<int> top_k(const std::vector<double>& gumbel, const std::vector<float>& priors, int k) {
  std::vector<int> order(priors.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return gumbel[a] + logit(priors[a]) > gumbel[b] + logit(priors[b]); });
  order.resize(std::min<std::size_t>(order.size(), std::max(k, 1)));
  return order;
}

std::vector<double> sigma(const std::vector<double>& completed, std::uint32_t max_visits, const Scale& scale) {
  std::vector<double> out(completed.size());
  if (completed.empty()) return out;
  double low = -1, span = 2;
  if (scale.rescale) {
    const auto [min, max] = std::minmax_element(completed.begin(), completed.end());
    low = *min;
    span = *max - *min;
  }
  const double factor = (scale.c_visit + max_visits) * scale.c_scale;
  // All equal: no move is better than another, sigma adds nothing.
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = span > 1e-9 ? factor * (completed[i] - low) / span : 0.0;
  return out;
}

std::vector<double> completed_q(const std::vector<float>& priors, const std::vector<std::uint32_t>& visits,
                                const std::vector<double>& q, double root_value) {
  double total_visits = 0, visited_prior = 0, weighted_q = 0;
  for (std::size_t i = 0; i < priors.size(); ++i) {
    if (!visits[i]) continue;
    total_visits += visits[i];
    visited_prior += priors[i];
    weighted_q += priors[i] * q[i];
  }
  double mixed = root_value;
  if (total_visits > 0 && visited_prior > 0)
    mixed = (root_value + total_visits / visited_prior * weighted_q) / (1 + total_visits);
  std::vector<double> out(priors.size());
  for (std::size_t i = 0; i < priors.size(); ++i) out[i] = visits[i] ? q[i] : mixed;
  return out;
}

std::vector<double> improved_policy(const std::vector<float>& priors, const std::vector<std::uint32_t>& visits,
                                    const std::vector<double>& q, double root_value, const Scale& scale) {
  if (priors.empty()) return {};
  const std::vector<double> transformed =
      sigma(completed_q(priors, visits, q, root_value), *std::max_element(visits.begin(), visits.end()), scale);
  std::vector<double> out(priors.size());
  for (std::size_t i = 0; i < priors.size(); ++i) out[i] = logit(priors[i]) + transformed[i];
  const double top = *std::max_element(out.begin(), out.end());
  double sum = 0;
  for (double& x : out) sum += x = std::exp(x - top);
  for (double& x : out) x /= sum;
  return out;
}

void SequentialHalving::start(std::vector<int> considered, std::uint64_t planned) {
  remaining_ = std::move(considered);
  planned_ = std::max<std::uint64_t>(planned, 1);
  const std::size_t m = remaining_.size();
  log2_m_ = 1;
  while ((std::size_t{1} << log2_m_) < m) ++log2_m_;
  plan_phase();
}

void SequentialHalving::plan_phase() {
  schedule_.clear();
  next_ = 0;
  if (remaining_.empty()) return;
  const std::uint64_t per_move = std::max<std::uint64_t>(1, planned_ / (log2_m_ * remaining_.size()));
  // Round robin, so a batch of leaves spreads over the moves.
  for (std::uint64_t v = 0; v < per_move; ++v) schedule_.insert(schedule_.end(), remaining_.begin(), remaining_.end());
}

int SequentialHalving::next() { return next_ < schedule_.size() ? schedule_[next_++] : -1; }

void SequentialHalving::halve(const std::vector<double>& score) {
  std::stable_sort(remaining_.begin(), remaining_.end(), [&](int a, int b) { return score[a] > score[b]; });
  const std::size_t keep = std::max<std::size_t>(std::min<std::size_t>(2, remaining_.size()), remaining_.size() / 2);
  remaining_.resize(keep);
  plan_phase();
}

void SequentialHalving::replace(int lost, int fresh) {
  const auto it = std::find(remaining_.begin(), remaining_.end(), lost);
  if (it == remaining_.end()) return;
  *it = fresh;
  std::size_t spent = 0;
  for (std::size_t i = 0; i < schedule_.size(); ++i) {
    if (schedule_[i] != lost) continue;
    if (i < next_)
      ++spent;
    else
      schedule_[i] = fresh;
  }
  schedule_.insert(schedule_.end(), spent, fresh);
}

}  // namespace ultima::gumbel
