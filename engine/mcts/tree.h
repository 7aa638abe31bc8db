// The MCTS tree: nodes with their edges (move, prior) and statistics, and
// the game results proven inside the tree. The search (mcts.cpp) owns the
// locking; nothing here is thread-safe on its own.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/rules/movegen.h"
#include "engine/rules/types.h"

namespace ultima::mcts {

// A game result known exactly inside the tree (a finished game at the node,
// or forced by its children), from the view of the side that made the move
// into the node, like every statistic of a node.
enum class Proof : std::uint8_t { kNone, kWin, kDraw, kLoss };

// A move with its prior, in 16 bytes rather than Move's 16 plus the prior:
// an Ultima position often has 100+ moves and each expanded node keeps all.
struct Edge {
  Bitboard captures = 0;
  std::uint16_t code = 0;
  float prior = 0;  // what selection uses; Dirichlet noise included at the root

  Edge() = default;
  Edge(const Move& m, float p) : captures(m.captures), code(m.code), prior(p) {}
  Move move() const { return Move{code, captures}; }
};
static_assert(sizeof(Edge) == 16);

struct Node {
  enum class State : std::uint8_t {
    kFresh,     // created by selection, waiting for its evaluation
    kExpanded,  // has edges
    kTerminal,  // the game is over here
  };

  Node* parent = nullptr;
  int edge_index = -1;  // this node's edge in parent->edges
  State state = State::kFresh;
  Proof proof = Proof::kNone;
  // With a proof: plies from this node's position to the end of the game
  // under best play (0 for a finished game), for "mate in N".
  std::uint16_t end_plies = 0;

  // Statistics from the view of the side that moved into this node, so a
  // parent picks the child with the highest Q without a sign flip.
  std::uint32_t visits = 0;
  std::uint32_t in_flight = 0;  // selected, not yet backed up (virtual loss)
  double value_sum = 0;         // sum of win - loss
  double draw_sum = 0;
  // The evaluator's own value at expansion (win - loss, same view): the
  // Gumbel root's value estimate for unvisited moves.
  float eval_value = 0;

  std::vector<Edge> edges;
  // The children that exist, sorted by edge_index. Most edges of an Ultima
  // position (often 100+ moves) are never visited, so a child is made only
  // when selection first takes its edge.
  std::vector<std::unique_ptr<Node>> children;

  bool proven() const { return proof != Proof::kNone; }
  // Average win - loss; 0 before any visit.
  double q() const { return visits ? value_sum / visits : 0.0; }
  double draw() const { return visits ? draw_sum / visits : 0.0; }
  Node* child(int edge) const;
  // Makes the child of an edge that has none yet.
  Node* add_child(int edge);
};

// +1 won, 0 drawn, -1 lost for the side to move of a finished game.
int result_for_side_to_move(const Position& pos, const GameStatus& status);

// +1, 0 or -1 for a proof (0 without one).
double proof_value(Proof p);
// The proof of a finished game from the view of the side that moved into
// it: `side_to_move_result` is +1 won, 0 drawn, -1 lost for the side to move.
Proof proof_of_result(int side_to_move_result);

// Tries to prove `node` from its children's proofs, then its ancestors in
// turn, while that changes something. A child that wins for the side to
// move proves a loss for the mover into the node; when every edge has a
// proven child, the best of them decides. Returns the highest node proven
// (nullptr if none).
Node* propagate_proofs(Node* node);

// Preference between two children of one node, from the view of the side to
// move there: proven wins first (the quickest), then by visits, then by Q;
// proven losses last (the slowest). The order of best moves, PVs and
// MultiPV.
bool better_child(const Node& a, const Node& b);
// The child better_child ranks first; nullptr when there is none.
Node* best_child(const Node& node);

// Number of nodes in the subtree (the node included).
std::size_t count_nodes(const Node& node);

}  // namespace ultima::mcts
