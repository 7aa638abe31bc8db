#include "engine/mcts/tree.h"

#include <algorithm>

namespace ultima::mcts {

Node* Node::child(int edge) const {
  const auto it = std::lower_bound(children.begin(), children.end(), edge,
                                   [](const std::unique_ptr<Node>& c, int e) { return c->edge_index < e; });
  return it != children.end() && (*it)->edge_index == edge ? it->get() : nullptr;
}

Node* Node::add_child(int edge) {
  const auto it = std::lower_bound(children.begin(), children.end(), edge,
                                   [](const std::unique_ptr<Node>& c, int e) { return c->edge_index < e; });
  auto node = std::make_unique<Node>();
  node->parent = this;
  node->edge_index = edge;
  return children.insert(it, std::move(node))->get();
}

int result_for_side_to_move(const Position& pos, const GameStatus& status) {
  if (status.outcome == Outcome::kDraw) return 0;
  const Outcome we_win = pos.side_to_move() == kWhite ? Outcome::kWhiteWins : Outcome::kBlackWins;
  return status.outcome == we_win ? 1 : -1;
}

double proof_value(Proof p) {
  switch (p) {
    case Proof::kWin: return 1;
    case Proof::kLoss: return -1;
    default: return 0;
  }
}

Proof proof_of_result(int side_to_move_result) {
  if (side_to_move_result > 0) return Proof::kLoss;
  if (side_to_move_result < 0) return Proof::kWin;
  return Proof::kDraw;
}

namespace {

// Proves `node` from its children alone; false when they do not decide it.
bool prove_from_children(Node& node) {
  if (node.state != Node::State::kExpanded || node.proven()) return false;
  // Children's proofs are from the view of the side to move at `node`.
  int quickest_win = -1, slowest_loss = -1;
  bool draw = false, all_proven = node.children.size() == node.edges.size();
  for (const auto& c : node.children) {
    switch (c->proof) {
      case Proof::kWin:
        if (quickest_win < 0 || c->end_plies < quickest_win) quickest_win = c->end_plies;
        break;
      case Proof::kDraw: draw = true; break;
      case Proof::kLoss: slowest_loss = std::max<int>(slowest_loss, c->end_plies); break;
      case Proof::kNone: all_proven = false; break;
    }
  }
  if (quickest_win >= 0) {
    node.proof = Proof::kLoss;
    node.end_plies = static_cast<std::uint16_t>(quickest_win + 1);
    return true;
  }
  if (!all_proven) return false;
  if (draw) {
    node.proof = Proof::kDraw;
    node.end_plies = 0;
  } else {
    node.proof = Proof::kWin;
    node.end_plies = static_cast<std::uint16_t>(slowest_loss + 1);
  }
  return true;
}

int proof_rank(Proof p) { return p == Proof::kWin ? 0 : p == Proof::kLoss ? 2 : 1; }

}  // namespace

Node* propagate_proofs(Node* node) {
  Node* highest = nullptr;
  for (; node && prove_from_children(*node); node = node->parent) highest = node;
  return highest;
}

bool better_child(const Node& a, const Node& b) {
  const int ra = proof_rank(a.proof), rb = proof_rank(b.proof);
  if (ra != rb) return ra < rb;
  if (a.proof == Proof::kWin && a.end_plies != b.end_plies) return a.end_plies < b.end_plies;
  if (a.proof == Proof::kLoss && a.end_plies != b.end_plies) return a.end_plies > b.end_plies;
  if (a.visits != b.visits) return a.visits > b.visits;
  if (a.q() != b.q()) return a.q() > b.q();
  return a.edge_index < b.edge_index;
}

Node* best_child(const Node& node) {
  Node* best = nullptr;
  for (const auto& c : node.children)
    if (c->visits > 0 || c->proven())
      if (!best || better_child(*c, *best)) best = c.get();
  return best;
}

std::size_t count_nodes(const Node& node) {
  std::size_t n = 1;
  for (const auto& c : node.children) n += count_nodes(*c);
  return n;
}

}  // namespace ultima::mcts
