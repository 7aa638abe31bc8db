// Monte Carlo tree search in the AlphaZero/lc0 manner, behind the Evaluator
// contract (evaluator.h): PUCT selection with first-play urgency, several
// search threads with virtual loss, each gathering a batch of leaves per
// evaluator call; finished games valued exactly from the rules and proven
// results propagated up the tree ("mate in N"), with an optional mate scan
// that proves a win in one where it is expanded; tree reuse between moves;
// Dirichlet noise and temperature for self-play; and, as an option, the
// Gumbel root of Danihelka et al. 2022 with its improved policy target.
//
// Values are win - loss in [-1, 1]; every figure in the results is from the
// root side to move's point of view.
//
// Threads: one mutex guards the tree. A thread selects its batch under it
// (selection is cheap), builds the leaf positions and calls the evaluator
// outside it (the expensive part), then backs up under it again. Finished
// games and proven nodes are backed up during selection without any
// evaluator call. With one thread the search is deterministic given the
// seed and a playout or visit budget.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "engine/mcts/evaluator.h"
#include "engine/rules/movegen.h"
#include "engine/rules/position.h"

namespace ultima {

namespace mcts {
struct Node;
struct Edge;
}

struct MctsConfig {
  int threads = 1;
  // Leaves each thread gathers (under virtual loss) per evaluator call; a
  // batching network evaluator sees up to threads * batch_size at once
  // (the one default of player specs, UCI, self-play and evaluation).
  int batch_size = 8;
  // Selections that hit a leaf already being evaluated, per batch, before
  // the batch goes out short (0: batch_size).
  int max_collisions = 0;

  // PUCT: cpuct(N) = cpuct + cpuct_factor * ln((N + cpuct_base) / cpuct_base)
  // for a parent of N visits (lc0's growth; cpuct_factor 0: constant).
  float cpuct = 1.745f;
  float cpuct_base = 38739;
  float cpuct_factor = 3.894f;
  // First-play urgency: an unvisited child counts as
  // Q(parent) - reduction * sqrt(sum of the visited children's priors).
  float fpu_reduction = 0.33f;
  float fpu_reduction_root = 0.33f;
  // Priors are taken to the power 1/policy_temperature and renormalized.
  // Above 1 they are flattened. The default is the players' (specs, UCI,
  // analysis): net-m15 plays about 300 Elo stronger with it than with 1
  // at 100 to 1,600 playouts (docs/matches.md). The loop's self-play and
  // evaluation searches keep 1 (selfplay_mcts_defaults, eval_mcts_defaults).
  float policy_temperature = 2;
  // Each playout in flight counts as this many lost visits for the move.
  float virtual_loss = 1;

  // Dirichlet noise on the root priors: prior = (1 - eps) prior + eps noise
  // (noise_epsilon 0: none). Reproducible from `seed`.
  float noise_alpha = 0.3f;
  float noise_epsilon = 0;
  std::uint64_t seed = 0;

  // Stop as soon as the root's result is proven (not under `infinite`).
  bool stop_when_proven = true;
  // Mate scan: every expanded position is searched for a move that ends the
  // game at once in the mover's favour (wins_at_once); one found proves the
  // node a win on the spot, so a move allowing it is proven lost after its
  // first visit. Without one, the node is proven lost in two plies when
  // every move allows the opponent such a win (tried move by move, up to
  // the first that does not); at the root, each move is tried for a mate in
  // two that way. Nodes below the root that the scan proves are not sent
  // to the evaluator. Costs a make/unmake and a check test per legal move,
  // about twice per expanded position, and about two per move and reply
  // at the root (a root kept from the last search is checked again as a
  // root when the search starts). On for players, UCI and analysis; the
  // self-play and evaluation games of the loop set it from the run config.
  bool mate_scan = true;
  // With the mate scan: the root's check for a mate in two (false: only
  // the tree finds one, by visiting the key move).
  bool mate_scan_root = true;

  // Gumbel root: sequential halving over gumbel_actions sampled moves in
  // place of PUCT at the root (PUCT stays below it). Its budget is the
  // search's playouts, or gumbel_planned_playouts under other limits. A
  // sampled move proven lost (as the mate scan proves a move that allows a
  // mate in one) gives its place and its playouts to the next move in the
  // sampled order.
  bool gumbel = false;
  int gumbel_actions = 16;
  // sigma(q) = (c_visit + max visits) * c_scale * q, q min-max normalized
  // over the root's moves (or mapped from [-1, 1] when not rescaled); see
  // gumbel.h for the choice of defaults.
  float gumbel_c_visit = 50;
  float gumbel_c_scale = 0.1f;
  bool gumbel_rescale_q = true;
  float gumbel_noise_scale = 1;  // 0: no Gumbel noise (deterministic top-k)
  std::uint64_t gumbel_planned_playouts = 800;

  // Reporting: root moves given a PV in the result (MultiPV).
  int multipv = 1;
  // The info callback runs every info_interval_ms, and every
  // info_interval_playouts playouts when that is not 0.
  int info_interval_ms = 1000;
  std::uint64_t info_interval_playouts = 0;
};

// Budgets; each 0 means none. With none at all the search runs until stop().
struct MctsLimits {
  std::uint64_t playouts = 0;  // new playouts in this search
  std::uint64_t visits = 0;    // root visits, reused ones included (lc0's "nodes")
  std::int64_t movetime_ms = 0;
  std::size_t max_tree_nodes = 0;  // a memory bound: nodes held by the tree
  bool infinite = false;           // only stop() ends it (and no stop on a proof)
  // Only these root moves are searched and reported (UCI's searchmoves), with
  // their priors renormalized; empty: every legal move. Moves not legal at
  // the root are ignored. Such a search starts a new tree, and the next
  // search after it does too.
  std::vector<Move> root_moves;
};

// MCTS's thinking time for one move under a clock, in ms: a
// share of the time left (1/movestogo, at most 1/40; else 1/30) plus three
// quarters of the increment, but never more than a third of what is left
// after a margin for the protocol, so a large increment cannot lose on
// time. With an increment and no clock, half the increment. 0 when there
// is neither.
std::int64_t mcts_move_time_ms(std::int64_t time_left_ms, std::int64_t increment_ms, int movestogo);

struct MctsRootMove {
  Move move;
  std::uint32_t visits = 0;
  float q = 0;  // win - loss
  float win = 0, draw = 1, loss = 0;
  float prior = 0;            // the evaluator's policy (before noise)
  float improved_policy = 0;  // softmax(logits + sigma(completed Q)), the Gumbel target
  // Proven: +N the side to move mates (wins) in N moves with this move, -N
  // it is mated in N; 0 unknown. `proven_draw` for a proven draw.
  int mate = 0;
  bool proven_draw = false;
  std::vector<Move> pv;  // starts with `move`; filled for the first multipv moves
};

struct MctsResult {
  Move best;  // null when the game is over at the root
  bool game_over = false;
  GameStatus status;  // the root's, when game_over
  // The root's value.
  float q = 0;
  float win = 0, draw = 1, loss = 0;
  int mate = 0;  // as MctsRootMove::mate, for the root
  bool proven_draw = false;
  std::vector<Move> pv;
  // Every legal root move, best first: proven wins (quickest first), then
  // by visits and Q, proven losses last. The first `multipv` carry a PV.
  std::vector<MctsRootMove> moves;
  // Gumbel root: the move sequential halving chose (null otherwise). `best`
  // is this move unless a move is proven to win.
  Move gumbel_choice;

  std::uint64_t visits = 0;    // of the root, reused ones included
  std::uint64_t playouts = 0;  // this search
  std::uint64_t evaluations = 0;  // positions sent to the evaluator
  std::uint64_t batches = 0;      // evaluator calls
  std::uint64_t collisions = 0;
  std::size_t tree_nodes = 0;
  int depth = 0;     // average depth of this search's playouts
  int seldepth = 0;  // deepest playout
  double seconds = 0;
  double playouts_per_second = 0;
  bool final = false;  // false for the periodic info snapshots
};

using MctsInfoCallback = std::function<void(const MctsResult&)>;

// Centipawns for a value q = win - loss, the inverse of the logistic that
// MaterialEvaluator uses (300 cp per unit of log-odds); +-20000 at +-1.
int q_to_centipawns(double q);

// A move from the root's visits for self-play: temperature 0 gives `best`;
// otherwise visits^(1/T) weights, reproducible from `seed`. Gives `best`
// when the root is a proven win or no move has visits.
Move pick_move(const MctsResult& result, double temperature, std::uint64_t seed);

class Mcts {
 public:
  explicit Mcts(std::shared_ptr<Evaluator> evaluator, MctsConfig config = {});
  ~Mcts();
  Mcts(const Mcts&) = delete;
  Mcts& operator=(const Mcts&) = delete;

  // Not during a search.
  void set_config(const MctsConfig& config) { config_ = config; }
  const MctsConfig& config() const { return config_; }
  Evaluator& evaluator() const { return *evaluator_; }

  // The position to search, with its history (repetitions). Keeps the
  // subtree when pos follows from the current root by moves of the tree
  // (same earlier history); starts a new tree otherwise.
  void set_position(const Position& pos);
  // Plays a move at the root, keeping its subtree when it has one. Returns
  // whether something was kept. Throws std::invalid_argument for an illegal move.
  bool advance(const Move& move);
  // Forgets the tree (the position stays).
  void clear();

  // Searches the current position. on_info sees snapshots from the calling
  // thread, then the final result. At least the root is evaluated, whatever
  // the limits, so that there is a move to play. Throws what the evaluator
  // throws (the tree is then dropped), or std::runtime_error when its
  // output does not fit the contract.
  MctsResult search(const MctsLimits& limits, const MctsInfoCallback& on_info = {});
  // Ends a running search soon, from any thread.
  void stop() { stop_.store(true, std::memory_order_relaxed); }

  const Position& position() const { return root_position_; }
  std::uint64_t root_visits() const;
  std::size_t tree_nodes() const { return tree_nodes_; }

 public:
  // The mate scan's finds (mcts.cpp), for its helpers there; not an interface.
  struct Refutation;
  struct Scan;

 private:
  struct Run;
  struct Leaf;
  struct Worker;

  void work(Run& run, bool reports, const MctsInfoCallback& on_info);
  void gather(Run& run, Worker& worker);
  enum class Pick { kLeaf, kTerminal, kCollision, kBlocked };
  Pick select(Run& run, Leaf& leaf);
  int puct_edge(const mcts::Node& node) const;
  void evaluate_batch(Worker& worker);
  void back_up(Run& run, Worker& worker);
  void back_up_value(mcts::Node* leaf, double value, double draw, int depth, Run& run);
  void expand(mcts::Node& node, std::vector<mcts::Edge>& edges, const EvalOutput& out);
  // The mate scan's proofs put into the tree: a move's node with the
  // opponent's win at once below it; the root's mate in two.
  void add_refutation(mcts::Node& node, const Refutation& refutation);
  void add_key(mcts::Node& root, const Scan& scan);
  void apply_scan(mcts::Node& node, const Scan& scan);
  void scan_reused_root();
  void restrict_root(const Run& run);
  void after_root_expanded(Run& run);
  void apply_root_noise(std::mt19937_64& rng);
  void restore_root_priors();
  void step_gumbel(Run& run);
  void replace_lost_moves(Run& run);
  // Per root edge: the evaluator's prior (before noise), visits, and Q
  // (the exact value where proven), from the side to move's view.
  struct RootStats {
    std::vector<float> priors;
    std::vector<std::uint32_t> visits;
    std::vector<double> q;
  };
  RootStats root_stats() const;
  std::vector<double> gumbel_scores(const Run& run) const;
  bool should_stop(const Run& run) const;
  MctsResult snapshot(const Run& run, bool final) const;
  MctsResult game_over_result(const GameStatus& status) const;
  std::vector<Move> pv_from(const mcts::Node& node) const;
  void set_root(std::unique_ptr<mcts::Node> root);

  std::shared_ptr<Evaluator> evaluator_;
  MctsConfig config_;
  Position root_position_;
  // Keys of the game's positions up to the root, oldest first: a new
  // position reuses the tree only if its game passed through the root.
  std::vector<std::uint64_t> root_keys_;
  std::unique_ptr<mcts::Node> root_;
  std::size_t tree_nodes_ = 1;
  // The root's priors before Dirichlet noise (empty when none was applied).
  std::vector<float> root_priors_;
  // The root holds only some of its moves (MctsLimits::root_moves).
  bool root_restricted_ = false;

  std::mutex tree_mutex_;  // guards the tree and the Run's shared state
  std::condition_variable backed_up_;
  std::atomic<bool> stop_{false};
};

}  // namespace ultima
