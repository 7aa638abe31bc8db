#include "engine/play/value_fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "engine/rules/movegen.h"
#include "engine/search/search.h"

namespace ultima {
namespace {

Eigen::VectorXd logistic(const Eigen::VectorXd& z) { return (1.0 / (1.0 + (-z.array()).exp())).matrix(); }

}  // namespace

std::vector<ValueSample> value_samples(const std::vector<GameRecord>& games, int skip_plies, int stride) {
  std::vector<ValueSample> out;
  for (const GameRecord& g : games) {
    if (g.result == Outcome::kOngoing) continue;
    const double result = g.result == Outcome::kWhiteWins ? 1.0 : g.result == Outcome::kBlackWins ? 0.0 : 0.5;
    Position pos = first_position(g);
    for (std::size_t ply = 0; ply < g.moves.size(); ++ply) {
      pos.make(g.moves[ply]);
      const int played = static_cast<int>(ply) + 1 - g.opening_plies;
      if (played < skip_plies || (played - skip_plies) % stride) continue;
      ValueSample s;
      const Bitboard frozen = pos.frozen(kWhite) | pos.frozen(kBlack);
      for (int k = kPawn; k < kKindCount; ++k) {
        const Bitboard w = pos.pieces(kWhite, Kind(k)), b = pos.pieces(kBlack, Kind(k));
        s.free_diff[k - kPawn] = popcount(w & ~frozen) - popcount(b & ~frozen);
        s.frozen_diff[k - kPawn] = popcount(w & frozen) - popcount(b & frozen);
      }
      s.white_to_move = pos.side_to_move() == kWhite ? 1 : -1;
      s.result = result;
      out.push_back(s);
    }
  }
  return out;
}

ValueFit fit_values(const std::vector<ValueSample>& samples, double l2) {
  constexpr int kFeatures = 13;
  if (samples.size() < 100) throw std::invalid_argument("too few samples to fit piece values (" +
                                                        std::to_string(samples.size()) + ", need 100)");
  const Eigen::Index n = static_cast<Eigen::Index>(samples.size());
  Eigen::MatrixXd x(n, kFeatures);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const ValueSample& s = samples[i];
    for (int k = 0; k < 6; ++k) {
      x(i, k) = s.free_diff[k];
      x(i, 6 + k) = s.frozen_diff[k];
    }
    x(i, 12) = s.white_to_move;
    y(i) = s.result;
  }
  Eigen::VectorXd w = Eigen::VectorXd::Zero(kFeatures);
  Eigen::MatrixXd hessian(kFeatures, kFeatures);
  ValueFit fit;
  for (fit.iterations = 1; fit.iterations <= 50; ++fit.iterations) {
    const Eigen::VectorXd p = logistic(x * w);
    const Eigen::VectorXd gradient = x.transpose() * (p - y) / double(n) + l2 * w;
    const Eigen::VectorXd weight = (p.array() * (1.0 - p.array())).matrix();
    hessian = x.transpose() * weight.asDiagonal() * x / double(n);
    hessian.diagonal().array() += l2;
    const Eigen::VectorXd step = hessian.ldlt().solve(gradient);
    w -= step;
    if (step.norm() < 1e-9) break;
  }
  const Eigen::VectorXd p = logistic(x * w);
  double loss = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const double pi = std::clamp(p(i), 1e-12, 1 - 1e-12);
    loss -= y(i) * std::log(pi) + (1 - y(i)) * std::log(1 - pi);
  }
  fit.log_loss = loss / double(n);
  // Standard errors from the inverse of the (unscaled) Fisher information.
  const Eigen::MatrixXd covariance = (hessian * double(n)).inverse();
  for (int k = 0; k < 6; ++k) {
    fit.free_value[k] = w(k);
    fit.frozen_value[k] = w(6 + k);
    fit.free_se[k] = std::sqrt(std::max(0.0, covariance(k, k)));
    fit.frozen_se[k] = std::sqrt(std::max(0.0, covariance(6 + k, 6 + k)));
  }
  fit.tempo = w(12);
  fit.samples = static_cast<int>(n);
  return fit;
}

WdlPermille score_to_wdl(int score) {
  WdlPermille w;
  if (score >= kMateBound) return {1000, 0, 0};
  if (score <= -kMateBound) return {0, 0, 1000};
  const double expected = 1 / (1 + std::exp(-score / 100.0 * kFittedPawnLogit));
  const double draw = kEvenDrawShare * 4 * expected * (1 - expected);
  // Win + draw / 2 keeps the expected result.
  w.draw = static_cast<int>(std::lround(draw * 1000));
  w.win = static_cast<int>(std::lround((expected - draw / 2) * 1000));
  w.win = std::clamp(w.win, 0, 1000 - w.draw);
  w.loss = 1000 - w.win - w.draw;
  return w;
}

WdlPermille shares_to_wdl(double win, double draw, double loss) {
  const double total = win + draw + loss;
  if (!(total > 0)) return {};
  WdlPermille w;
  w.win = std::clamp(static_cast<int>(std::lround(win / total * 1000)), 0, 1000);
  w.loss = std::clamp(static_cast<int>(std::lround(loss / total * 1000)), 0, 1000 - w.win);
  w.draw = 1000 - w.win - w.loss;
  return w;
}

}  // namespace ultima
