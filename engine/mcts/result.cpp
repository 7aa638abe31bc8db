// The search's results: root moves in order of preference, values, proofs
// as "mate in N", PVs, the improved policy; and move choice by temperature.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "engine/mcts/gumbel.h"
#include "engine/mcts/mcts.h"
#include "engine/mcts/run.h"
#include "engine/mcts/tree.h"

namespace ultima {

using mcts::Node;
using mcts::Proof;

namespace {

// "Mate in N" from the view of the side to move whose game ends `plies`
// plies from now: +moves when it wins, -moves when it loses.
int mate_moves(bool side_to_move_wins, int plies) { return side_to_move_wins ? (plies + 1) / 2 : -(plies / 2); }

// Q and draw share of a node: the exact ones where proven, else the averages.
std::pair<double, double> value_of(const Node& node) {
  if (node.proven()) return {mcts::proof_value(node.proof), node.proof == Proof::kDraw ? 1.0 : 0.0};
  return {node.q(), node.draw()};
}

void fill_wdl(double q, double draw, float& win, float& d, float& loss) {
  win = static_cast<float>(std::clamp((1 + q - draw) / 2, 0.0, 1.0));
  loss = static_cast<float>(std::clamp((1 - q - draw) / 2, 0.0, 1.0));
  d = static_cast<float>(std::clamp(draw, 0.0, 1.0));
}

}  // namespace

int q_to_centipawns(double q) {
  if (q >= 1) return 20000;
  if (q <= -1) return -20000;
  return static_cast<int>(std::lround(std::clamp(300 * std::log((1 + q) / (1 - q)), -19999.0, 19999.0)));
}

Move pick_move(const MctsResult& result, double temperature, std::uint64_t seed) {
  // A proven win is played: sampling by visits could pass it by.
  if (temperature <= 0 || result.mate > 0) return result.best;
  std::uint32_t most = 0;
  for (const MctsRootMove& m : result.moves) most = std::max(most, m.visits);
  if (!most) return result.best;
  // visits^(1/T) relative to the most visited move, which cannot overflow.
  std::vector<double> weights;
  for (const MctsRootMove& m : result.moves)
    weights.push_back(m.visits ? std::exp(std::log(double(m.visits) / most) / temperature) : 0.0);
  std::mt19937_64 rng(seed);
  std::discrete_distribution<int> pick(weights.begin(), weights.end());
  return result.moves[pick(rng)].move;
}

Mcts::RootStats Mcts::root_stats() const {
  const std::size_t n = root_->edges.size();
  RootStats s;
  s.priors.resize(n);
  s.visits.assign(n, 0);
  s.q.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) s.priors[i] = root_priors_.size() == n ? root_priors_[i] : root_->edges[i].prior;
  for (const auto& c : root_->children) {
    s.visits[c->edge_index] = c->visits;
    // A proven result is the exact value, whatever the average says.
    s.q[c->edge_index] = c->proven() ? mcts::proof_value(c->proof) : c->q();
  }
  return s;
}

MctsResult Mcts::game_over_result(const GameStatus& status) const {
  MctsResult result;
  result.game_over = true;
  result.status = status;
  const int r = mcts::result_for_side_to_move(root_position_, status);
  result.q = static_cast<float>(r);
  fill_wdl(r, r == 0 ? 1 : 0, result.win, result.draw, result.loss);
  result.proven_draw = r == 0;
  result.final = true;
  return result;
}

std::vector<Move> Mcts::pv_from(const Node& node) const {
  std::vector<Move> pv;
  for (const Node* n = &node; pv.size() < 256;) {
    const Node* next = mcts::best_child(*n);
    if (!next) break;
    pv.push_back(n->edges[next->edge_index].move());
    n = next;
  }
  return pv;
}

MctsResult Mcts::snapshot(const Run& run, bool final) const {
  MctsResult r;
  r.final = final;
  const Node& root = *root_;
  r.visits = root.visits;
  r.playouts = run.completed;
  r.evaluations = run.evaluations;
  r.batches = run.batches;
  r.collisions = run.collisions;
  r.tree_nodes = tree_nodes_;
  r.seldepth = run.seldepth;
  r.depth = run.completed ? static_cast<int>(std::lround(double(run.depth_sum) / run.completed)) : 0;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - run.start).count();
  r.playouts_per_second = r.seconds > 0 ? run.completed / r.seconds : 0;

  // The root's statistics are from its mover's view: flip them.
  const auto [root_q, root_draw] = value_of(root);
  r.q = static_cast<float>(-root_q);
  fill_wdl(-root_q, root_draw, r.win, r.draw, r.loss);
  if (root.proof == Proof::kLoss || root.proof == Proof::kWin)
    r.mate = mate_moves(root.proof == Proof::kLoss, root.end_plies);
  r.proven_draw = root.proof == Proof::kDraw;

  const std::size_t n = root.edges.size();
  const RootStats stats = root_stats();
  const std::vector<float>& priors = stats.priors;
  std::vector<const Node*> child(n, nullptr);
  for (const auto& c : root.children) child[c->edge_index] = c.get();
  const gumbel::Scale scale{config_.gumbel_c_visit, config_.gumbel_c_scale, config_.gumbel_rescale_q};
  const std::vector<double> improved =
      gumbel::improved_policy(priors, stats.visits, stats.q, -root.eval_value, scale);

  std::vector<int> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const bool ka = child[a] && (child[a]->visits || child[a]->proven());
    const bool kb = child[b] && (child[b]->visits || child[b]->proven());
    if (ka && kb) return mcts::better_child(*child[a], *child[b]);
    if (ka != kb) return ka;
    return priors[a] > priors[b];
  });
  for (int e : order) {
    MctsRootMove m;
    m.move = root.edges[e].move();
    m.prior = priors[e];
    m.improved_policy = static_cast<float>(improved[e]);
    if (const Node* c = child[e]) {
      m.visits = c->visits;
      const auto [q, draw] = value_of(*c);
      m.q = static_cast<float>(q);
      fill_wdl(q, draw, m.win, m.draw, m.loss);
      if (c->proof == Proof::kWin || c->proof == Proof::kLoss)
        m.mate = mate_moves(c->proof == Proof::kWin, c->end_plies + 1);
      m.proven_draw = c->proof == Proof::kDraw;
    }
    r.moves.push_back(m);
  }

  auto line_of = [&](std::size_t i) {
    std::vector<Move> pv{r.moves[i].move};
    const int e = order[i];
    if (child[e]) {
      const std::vector<Move> rest = pv_from(*child[e]);
      pv.insert(pv.end(), rest.begin(), rest.end());
    }
    return pv;
  };
  for (std::size_t i = 0; i < r.moves.size() && i < static_cast<std::size_t>(std::max(1, config_.multipv)); ++i)
    r.moves[i].pv = line_of(i);

  if (r.moves.empty()) return r;
  std::size_t best = 0;
  if (run.gumbel && run.halving.started()) {
    const std::vector<double> score = gumbel_scores(run);
    int choice = run.halving.remaining().front();
    for (int e : run.halving.remaining())
      if (score[e] > score[choice]) choice = e;
    r.gumbel_choice = root.edges[choice].move();
    // A proven win outranks the plan.
    if (r.moves[0].mate <= 0)
      best = std::find(order.begin(), order.end(), choice) - order.begin();
  }
  r.best = r.moves[best].move;
  r.pv = r.moves[best].pv.empty() ? line_of(best) : r.moves[best].pv;
  return r;
}

}  // namespace ultima
