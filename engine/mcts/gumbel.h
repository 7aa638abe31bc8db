// The Gumbel root of Danihelka et al. 2022, "Policy improvement by planning
// with Gumbel": sample k root moves without replacement (Gumbel-top-k on the
// policy's logits), share the playouts among them by sequential halving, and
// pick argmax(g + logits + sigma(q)). Its policy target for training is
// softmax(logits + sigma(completed Q)), where moves never visited get a
// value mixed from the network's value and the visited moves' Q.
//
// Everything here works on plain per-move vectors (index = root edge), so it
// knows nothing of the tree or of threads: the search (Mcts) decides when a
// planned move is proven lost and hands its place to another with
// SequentialHalving::replace.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace ultima::gumbel {

// sigma(q) = (c_visit + max visits) * c_scale * q01, where q01 is Q taken
// to [0, 1]: min-max normalized over the root's completed Qs (the paper
// normalizes Q to [0, 1] by the values seen), or (q + 1) / 2 without
// rescaling. Min-max makes the transform insensitive to where the values
// sit: with one side far ahead every Q is near 1 and only the
// differences matter. c_visit 50 is the paper's; c_scale 0.1 goes with
// min-max (with 1 the improved policy would be nearly one-hot on the best Q).
struct Scale {
  float c_visit = 50;
  float c_scale = 0.1f;
  bool rescale = true;
};

// log(prior), with a floor so that a zero prior ranks last but stays finite.
double logit(float prior);

// Standard Gumbel samples, one per move, times `scale` (0: no noise, the
// plain top-k of the policy).
std::vector<double> sample_gumbel(int moves, double scale, std::mt19937_64& rng);

// The `k` moves with the highest g + logit, best first (ties: lower index).
std::vector<int> top_k(const std::vector<double>& gumbel, const std::vector<float>& priors, int k);

// sigma of each completed Q (win - loss in [-1, 1]).
std::vector<double> sigma(const std::vector<double>& completed, std::uint32_t max_visits, const Scale& scale);

// Q of every move, the unvisited ones completed by the mixed value
//   v_mix = (v + sum_b N(b) / sum_{visited b} pi(b) * sum_{visited b} pi(b) q(b)) / (1 + sum_b N(b)),
// with v the network's value of the root (all from the side to move's view).
std::vector<double> completed_q(const std::vector<float>& priors, const std::vector<std::uint32_t>& visits,
                                const std::vector<double>& q, double root_value);

// softmax(logits + sigma(completed Q)): the improved policy, summing to 1.
std::vector<double> improved_policy(const std::vector<float>& priors, const std::vector<std::uint32_t>& visits,
                                    const std::vector<double>& q, double root_value, const Scale& scale);

// Sequential halving over the considered moves: phases in which each
// remaining move gets max(1, floor(n / (ceil(log2 m) * remaining))) more
// visits, after which the better half (by g + logit + sigma(q)) stays, down
// to two. When the planned n is spent the last two keep taking turns.
class SequentialHalving {
 public:
  // `considered`: the sampled moves (m of them); `planned`: the playouts n.
  void start(std::vector<int> considered, std::uint64_t planned);
  bool started() const { return !remaining_.empty(); }
  bool phase_done() const { return next_ >= schedule_.size(); }
  // The move for the next playout of this phase; -1 when the phase has
  // handed out all its visits (halve() starts the next one).
  int next();
  // Keeps the better half by score (indexed by move), at least two.
  void halve(const std::vector<double>& score);
  // `fresh` takes the place of `lost` among the remaining moves, with the
  // visits of this phase still due to `lost` and as many again as `lost`
  // has had in it. Nothing happens when `lost` is not among them.
  void replace(int lost, int fresh);
  const std::vector<int>& remaining() const { return remaining_; }
  void clear() { remaining_.clear(); schedule_.clear(); }

 private:
  void plan_phase();

  std::vector<int> remaining_;
  std::vector<int> schedule_;  // the phase's visits, round robin over remaining_
  std::size_t next_ = 0;
  std::uint64_t planned_ = 0;
  int log2_m_ = 1;
};

}  // namespace ultima::gumbel
