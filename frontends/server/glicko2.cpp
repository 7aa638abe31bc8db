// Glicko-2 (glicko2.h), step by step as in Glickman's description.
#include "frontends/server/glicko2.h"

#include <cmath>
#include <numbers>

namespace ultima {
namespace {

constexpr double kScale = 173.7178;  // Glicko-2's scale: 400 / ln(10)
constexpr double kEpsilon = 1e-6;    // the volatility iteration's tolerance

double g(double phi) { return 1 / std::sqrt(1 + 3 * phi * phi / (std::numbers::pi * std::numbers::pi)); }

double expected(double mu, double mu_j, double phi_j) { return 1 / (1 + std::exp(-g(phi_j) * (mu - mu_j))); }

}  // namespace

double glicko2_expected(const Glicko& a, const Glicko& b) {
  return expected((a.rating - 1500) / kScale, (b.rating - 1500) / kScale, b.rd / kScale);
}

Glicko glicko2_update(const Glicko& player, const std::vector<GlickoGame>& games, double tau) {
  const double mu = (player.rating - 1500) / kScale;
  const double phi = player.rd / kScale;
  const double sigma = player.vol;
  if (games.empty()) return {player.rating, kScale * std::sqrt(phi * phi + sigma * sigma), sigma};

  // The estimated variance v and improvement delta from the games.
  double v_inverse = 0, sum = 0;
  for (const GlickoGame& game : games) {
    const double mu_j = (game.opponent.rating - 1500) / kScale;
    const double phi_j = game.opponent.rd / kScale;
    const double e = expected(mu, mu_j, phi_j);
    v_inverse += g(phi_j) * g(phi_j) * e * (1 - e);
    sum += g(phi_j) * (game.score - e);
  }
  const double v = 1 / v_inverse;
  const double delta = v * sum;

  // The new volatility: the root of f by the Illinois algorithm.
  const double a = std::log(sigma * sigma);
  auto f = [&](double x) {
    const double ex = std::exp(x);
    const double d = phi * phi + v + ex;
    return ex * (delta * delta - phi * phi - v - ex) / (2 * d * d) - (x - a) / (tau * tau);
  };
  double A = a, B;
  if (delta * delta > phi * phi + v) {
    B = std::log(delta * delta - phi * phi - v);
  } else {
    int k = 1;
    while (f(a - k * tau) < 0) ++k;
    B = a - k * tau;
  }
  double fA = f(A), fB = f(B);
  while (std::abs(B - A) > kEpsilon) {
    const double C = A + (A - B) * fA / (fB - fA);
    const double fC = f(C);
    if (fC * fB <= 0) {
      A = B;
      fA = fB;
    } else {
      fA /= 2;
    }
    B = C;
    fB = fC;
  }
  const double new_sigma = std::exp(A / 2);

  const double phi_star = std::sqrt(phi * phi + new_sigma * new_sigma);
  const double new_phi = 1 / std::sqrt(1 / (phi_star * phi_star) + 1 / v);
  const double new_mu = mu + new_phi * new_phi * sum;
  return {kScale * new_mu + 1500, kScale * new_phi, new_sigma};
}

}  // namespace ultima
