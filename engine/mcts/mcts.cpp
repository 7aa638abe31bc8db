// The search itself: threads, batch gathering under virtual loss, PUCT
// selection, evaluation, back-up with proofs, the root's noise and Gumbel
// plan, and tree reuse. Results are put together in result.cpp.
#include "engine/mcts/mcts.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <stdexcept>
#include <thread>
#include <utility>

#include "engine/mcts/gumbel.h"
#include "engine/mcts/run.h"
#include "engine/mcts/tree.h"
#include "engine/rules/notation.h"

namespace ultima {

using mcts::Node;
using mcts::Proof;
using Clock = std::chrono::steady_clock;

// A node whose value for the side to move is above this looks won (see
// Mcts::puct_edge's first-play urgency).
constexpr double kDecidedValue = 0.9;

// One selected playout: the node to evaluate and the moves that reach it.
struct Mcts::Leaf {
  Node* node = nullptr;
  std::vector<Move> moves;  // from the root
  // Filled outside the lock.
  bool finished = false;  // the game is over at the leaf
  int result = 0;         // then +1 won, 0 drawn, -1 lost for the side to move there
};

// A move of the side to move and the opponent's answer to it that wins at
// once, with every answer (uniform priors) so that the reply's node can
// hold the finished game below it.
struct Mcts::Refutation {
  Move reply;
  std::vector<mcts::Edge> answers;
  int win = -1;  // index in answers
};

// What the mate scan found in a leaf's position (MctsConfig::mate_scan).
struct Mcts::Scan {
  Move win;  // a move that wins at once (null: none)
  // Without one: every move allows the opponent a win at once. The
  // refutations of all moves at the root, of the first elsewhere (the PV).
  bool lost = false;
  std::vector<Refutation> refutations;
  // At the root, neither: a move after which every reply allows a win at
  // once (a mate in two), with the replies and the first one's refutation.
  Move key;
  std::vector<mcts::Edge> key_replies;
  Refutation key_refutation;

  void clear() {
    win = key = Move{};
    lost = false;
    refutations.clear();
    key_replies.clear();
  }
};

// A search thread's batch and its reusable buffers.
struct Mcts::Worker {
  std::vector<Leaf> leaves;  // the first `count` are the batch
  int count = 0;
  // Leaves of selections that collided, holding their virtual loss until the
  // batch is backed up so that the rest of the batch looks elsewhere.
  std::vector<Node*> collisions;
  std::vector<Position> positions;
  std::vector<MoveList> move_lists;
  std::vector<EvalInput> inputs;
  std::vector<EvalOutput> outputs;
  // Per leaf not finished, in batch order: its edges, what the mate scan
  // found, and its index in outputs (-1: the scan proved it, and the
  // evaluator was not asked).
  std::vector<std::vector<mcts::Edge>> edges;
  std::vector<Scan> scans;
  std::vector<int> output_of;

  explicit Worker(int batch) : leaves(batch + 1), positions(batch), move_lists(batch), edges(batch) {}
};

namespace {

// A node's edges from the evaluator's policy, done outside the tree's lock:
// priors tempered and normalized, best first, so that selection looks at
// one unvisited edge only.
void prepare_edges(const MoveList& moves, const EvalOutput& out, float policy_temperature,
                   std::vector<mcts::Edge>& edges) {
  const int n = moves.size();
  edges.resize(n);
  double sum = 0;
  const float temperature = policy_temperature > 0 ? policy_temperature : 1;
  for (int i = 0; i < n; ++i) {
    float p = std::max(0.0f, out.policy[i]);  // also turns NaN into 0
    if (temperature != 1 && p > 0) p = std::pow(p, 1 / temperature);
    edges[i] = mcts::Edge(moves[i], p);
    sum += p;
  }
  for (mcts::Edge& e : edges) e.prior = sum > 0 ? static_cast<float>(e.prior / sum) : 1.0f / n;
  std::stable_sort(edges.begin(), edges.end(), [](const mcts::Edge& a, const mcts::Edge& b) { return a.prior > b.prior; });
}

std::vector<mcts::Edge> uniform_edges(const MoveList& moves) {
  std::vector<mcts::Edge> edges;
  edges.reserve(moves.size());
  for (const Move& m : moves) edges.emplace_back(m, 1.0f / static_cast<float>(moves.size()));
  return edges;
}

// The index of a move that wins at once for the side to move; -1: none.
int winning_move(Position& pos, const MoveList& moves) {
  for (int i = 0; i < moves.size(); ++i)
    if (wins_at_once(pos, moves[i])) return i;
  return -1;
}

// Whether every move of the side to move (which has no win at once) allows
// the opponent a win at once; refutations then gets the first move's
// refutation, or every move's with `all`. Gives up at the first move that
// allows none, which in most positions is the first move tried.
bool every_move_refuted(Position& pos, const MoveList& moves, bool all, std::vector<Mcts::Refutation>& refutations) {
  refutations.clear();
  if (moves.empty()) return false;
  MoveList answers;
  for (int i = 0; i < moves.size(); ++i) {
    pos.make(moves[i]);
    answers.clear();
    // A move that ends the game (no legal answer, the opponent's king taken,
    // bare kings, repetition, the 100-ply rule) is not refuted.
    int win = -1;
    if (pos.king_square(pos.side_to_move()) != kNoSquare && !pos.bare_kings() && pos.repetition_count() < 3 &&
        pos.halfmove_clock() < 100) {
      generate_legal(pos, answers);
      win = winning_move(pos, answers);
    }
    if (win >= 0 && (all || i == 0)) refutations.push_back({moves[i], uniform_edges(answers), win});
    pos.unmake();
    if (win < 0) {
      refutations.clear();
      return false;
    }
  }
  return true;
}

// A root move after which every reply allows a win at once: a mate in two.
// Tries each root move as every_move_refuted tries each reply (a reply that
// wins at once itself is not refuted); without a threat behind it, a move
// costs two move generations and one scan.
void find_key(Position& pos, const MoveList& moves, Mcts::Scan& scan) {
  MoveList replies;
  std::vector<Mcts::Refutation> refutations;
  for (const Move& m : moves) {
    pos.make(m);
    bool found = false;
    if (!pos.bare_kings() && pos.repetition_count() < 3 && pos.halfmove_clock() < 100) {
      replies.clear();
      generate_legal(pos, replies);
      found = every_move_refuted(pos, replies, false, refutations);
    }
    if (found) {
      scan.key = m;
      scan.key_replies = uniform_edges(replies);
      scan.key_refutation = std::move(refutations.front());
    }
    pos.unmake();
    if (found) return;
  }
}

// The mate scan of a position not finished, with its legal moves: a win at
// once, else every move refuted, else (at the root, with `key`) a mate in two.
void scan_position(Position& pos, const MoveList& moves, bool at_root, bool key, Mcts::Scan& scan) {
  scan.clear();
  const int win = winning_move(pos, moves);
  if (win >= 0) {
    scan.win = moves[win];
    return;
  }
  scan.lost = every_move_refuted(pos, moves, at_root, scan.refutations);
  if (at_root && key && !scan.lost) find_key(pos, moves, scan);
}

}  // namespace

Mcts::Mcts(std::shared_ptr<Evaluator> evaluator, MctsConfig config)
    : evaluator_(std::move(evaluator)), config_(config) {
  if (!evaluator_) throw std::invalid_argument("Mcts needs an evaluator");
  set_position(Position::start());
}

Mcts::~Mcts() = default;

std::uint64_t Mcts::root_visits() const { return root_->visits; }

void Mcts::set_root(std::unique_ptr<Node> root) {
  root_ = root ? std::move(root) : std::make_unique<Node>();
  root_->parent = nullptr;
  root_->edge_index = -1;
  tree_nodes_ = mcts::count_nodes(*root_);
  root_priors_.clear();
}

void Mcts::clear() { set_root(nullptr); }

void Mcts::set_position(const Position& pos) {
  // The game's keys and moves, oldest first, by taking the moves back.
  Position back = pos;
  std::vector<std::uint64_t> keys{back.key()};
  std::vector<Move> line;
  bool has_pass = false;
  while (back.game_ply() > 0) {
    line.push_back(back.last_move());
    has_pass |= line.back().is_null();
    back.unmake();
    keys.push_back(back.key());
  }
  std::reverse(keys.begin(), keys.end());
  std::reverse(line.begin(), line.end());

  const bool follows = root_ && !has_pass && pos.rules() == root_position_.rules() &&
                       keys.size() >= root_keys_.size() &&
                       std::equal(root_keys_.begin(), root_keys_.end(), keys.begin());
  if (follows) {
    for (std::size_t i = root_keys_.size() - 1; i < line.size(); ++i) advance(line[i]);
    if (root_position_.key() == pos.key() && root_position_.halfmove_clock() == pos.halfmove_clock() &&
        root_position_.game_ply() == pos.game_ply())
      return;
  }
  root_position_ = pos;
  root_keys_ = std::move(keys);
  set_root(nullptr);
}

bool Mcts::advance(const Move& move) {
  MoveList legal;
  generate_legal(root_position_, legal);
  const Move* played = std::find(legal.begin(), legal.end(), move);
  if (played == legal.end()) throw std::invalid_argument("illegal move " + to_coordinate(move) + " at the MCTS root");
  std::unique_ptr<Node> kept;
  for (std::size_t e = 0; e < root_->edges.size(); ++e) {
    if (!(root_->edges[e].move() == *played)) continue;
    if (Node* child = root_->child(static_cast<int>(e))) {
      auto& slot = *std::find_if(root_->children.begin(), root_->children.end(),
                                 [&](const std::unique_ptr<Node>& c) { return c.get() == child; });
      kept = std::move(slot);
    }
    break;
  }
  root_position_.make(*played);
  root_keys_.push_back(root_position_.key());
  const bool reused = kept != nullptr;
  set_root(std::move(kept));
  return reused;
}

// ---------------------------------------------------------------------------
// The search

MctsResult Mcts::search(const MctsLimits& limits, const MctsInfoCallback& on_info) {
  stop_.store(false);
  Run run;
  run.limits = limits;
  run.start = Clock::now();
  if (limits.movetime_ms > 0) {
    run.has_deadline = true;
    run.deadline = run.start + std::chrono::milliseconds(limits.movetime_ms);
  }
  run.rng.seed(config_.seed);
  run.gumbel = config_.gumbel;

  const GameStatus status = game_status(root_position_);
  if (status.over()) {
    const MctsResult result = game_over_result(status);
    if (on_info) on_info(result);
    return result;
  }

  // A restricted root is made fresh, and is not reused by the next search.
  if (root_restricted_ || !limits.root_moves.empty()) set_root(nullptr);
  root_restricted_ = !limits.root_moves.empty();
  restore_root_priors();
  run.root_visits_at_start = root_->visits;
  // A root kept from the last search was scanned, if at all, as a node
  // below the root: it is checked as a root now.
  if (config_.mate_scan && root_->state == Node::State::kExpanded && !root_->proven()) scan_reused_root();
  if (root_->state == Node::State::kExpanded) after_root_expanded(run);

  std::vector<std::thread> helpers;
  for (int i = 1; i < std::max(1, config_.threads); ++i) helpers.emplace_back([&] { work(run, false, {}); });
  work(run, true, on_info);
  for (std::thread& t : helpers) t.join();
  if (run.error) {
    clear();  // playouts were left in flight: the statistics are not to be trusted
    std::rethrow_exception(run.error);
  }
  MctsResult result = snapshot(run, true);
  if (on_info) on_info(result);
  return result;
}

bool Mcts::should_stop(const Run& run) const {
  if (run.error) return true;
  // The root's own evaluation always happens, so that there is a move to play.
  if (root_->state == Node::State::kFresh && run.started == 0) return false;
  if (stop_.load(std::memory_order_relaxed)) return true;
  const MctsLimits& l = run.limits;
  if (l.max_tree_nodes && tree_nodes_ >= l.max_tree_nodes) return true;
  if (l.infinite) return false;
  if (l.playouts && run.started >= l.playouts) return true;
  if (l.visits && run.root_visits_at_start + run.started >= l.visits) return true;
  if (run.has_deadline && Clock::now() >= run.deadline) return true;
  return config_.stop_when_proven && root_->proven();
}

void Mcts::work(Run& run, bool reports, const MctsInfoCallback& on_info) {
  Worker worker(std::max(1, config_.batch_size));
  auto next_info_time = run.start + std::chrono::milliseconds(std::max(1, config_.info_interval_ms));
  std::uint64_t next_info_playouts = config_.info_interval_playouts;
  try {
    for (;;) {
      {
        std::unique_lock lock(tree_mutex_);
        if (should_stop(run)) break;
        gather(run, worker);
        if (worker.count == 0) {
          for (Node* n : worker.collisions)
            for (; n; n = n->parent) --n->in_flight;
          worker.collisions.clear();
          if (should_stop(run)) break;
          // Everything worth selecting is being evaluated by other threads
          // (or the Gumbel phase waits for them): wait for one to finish.
          if (root_->in_flight > 0) backed_up_.wait_for(lock, std::chrono::milliseconds(2));
          continue;
        }
      }
      evaluate_batch(worker);
      {
        std::lock_guard lock(tree_mutex_);
        back_up(run, worker);
      }
      backed_up_.notify_all();

      if (reports && on_info) {
        const auto now = Clock::now();
        std::unique_lock lock(tree_mutex_);
        const bool due_by_playouts = next_info_playouts && run.completed >= next_info_playouts;
        if (now >= next_info_time || due_by_playouts) {
          next_info_time = now + std::chrono::milliseconds(std::max(1, config_.info_interval_ms));
          if (config_.info_interval_playouts)
            next_info_playouts = run.completed + config_.info_interval_playouts;
          const MctsResult info = snapshot(run, false);
          lock.unlock();
          on_info(info);
        }
      }
    }
  } catch (...) {
    std::lock_guard lock(tree_mutex_);
    if (!run.error) run.error = std::current_exception();
    stop_.store(true);
  }
  backed_up_.notify_all();
}

void Mcts::gather(Run& run, Worker& worker) {
  worker.count = 0;
  worker.collisions.clear();
  const int batch = std::max(1, config_.batch_size);
  const int max_collisions = config_.max_collisions > 0 ? config_.max_collisions : batch;
  // Finished games are backed up at once and count as tries, so the lock is
  // never held for long even when most selections end in one.
  for (int tries = 0; worker.count < batch && tries < batch + max_collisions; ++tries) {
    if (should_stop(run)) break;
    if (run.gumbel) step_gumbel(run);
    Leaf& leaf = worker.leaves[worker.count];
    const Pick pick = select(run, leaf);
    if (pick == Pick::kBlocked) break;
    if (pick == Pick::kCollision) {
      worker.collisions.push_back(leaf.node);
      ++run.collisions;
      if (static_cast<int>(worker.collisions.size()) >= max_collisions) break;
      continue;
    }
    ++run.started;
    if (pick == Pick::kLeaf) {
      ++worker.count;
    } else {
      const Node& known = *leaf.node;
      back_up_value(leaf.node, mcts::proof_value(known.proof), known.proof == Proof::kDraw ? 1 : 0,
                    static_cast<int>(leaf.moves.size()), run);
    }
  }
}

Mcts::Pick Mcts::select(Run& run, Leaf& leaf) {
  Node* node = root_.get();
  leaf.moves.clear();
  for (;;) {
    ++node->in_flight;
    leaf.node = node;
    if (node->state == Node::State::kFresh) return node->in_flight > 1 ? Pick::kCollision : Pick::kLeaf;
    // A proven node needs no search below it, except at the root, which
    // still has to show its moves.
    if (node->state == Node::State::kTerminal || (node->proven() && node != root_.get())) return Pick::kTerminal;
    int edge;
    if (node == root_.get() && run.gumbel && run.halving.started()) {
      edge = run.halving.next();
      if (edge < 0) {
        --node->in_flight;
        return Pick::kBlocked;
      }
    } else {
      edge = puct_edge(*node);
    }
    leaf.moves.push_back(node->edges[edge].move());
    Node* child = node->child(edge);
    if (!child) {
      child = node->add_child(edge);
      ++tree_nodes_;
    }
    node = child;
  }
}

int Mcts::puct_edge(const Node& node) const {
  const bool at_root = &node == root_.get();
  double cpuct = config_.cpuct;
  if (config_.cpuct_factor != 0)
    cpuct += config_.cpuct_factor * std::log((node.visits + config_.cpuct_base) / config_.cpuct_base);
  // The node's own visit and this selection's virtual visit are not its children's.
  const double explore = cpuct * std::sqrt(std::max(1.0, double(node.visits) + node.in_flight - 2));
  double visited_prior = 0;
  for (const auto& c : node.children) visited_prior += node.edges[c->edge_index].prior;
  // The node's value for its side to move.
  const double value = -node.q();
  // Where that side looks won, what is left to find is a proof, and a move
  // not tried yet may end the game at once while the visited ones, all
  // winning, would only be searched deeper: there an unvisited move is worth
  // the node's value, without the reduction.
  const double reduction = value > kDecidedValue ? 0 : at_root ? config_.fpu_reduction_root : config_.fpu_reduction;
  const double fpu = value - reduction * std::sqrt(visited_prior);

  int best = -1;
  double best_score = -std::numeric_limits<double>::infinity();
  auto consider = [&](int edge, double q, double visits) {
    const double score = q + explore * node.edges[edge].prior / (1 + visits);
    if (score > best_score) {
      best_score = score;
      best = edge;
    }
  };
  for (const auto& c : node.children) {
    const double n = double(c->visits) + c->in_flight;
    double q = fpu;
    // A move proven lost teaches nothing more, and would still win
    // selection over unvisited moves whenever the FPU falls below -1 (as
    // it does at a node whose visited moves all lose): it is taken only
    // when nothing else is left (then the node is proven itself).
    if (c->proof == Proof::kLoss) continue;
    if (c->proven())
      q = mcts::proof_value(c->proof);
    else if (n > 0)
      q = (c->value_sum - config_.virtual_loss * c->in_flight) / n;
    consider(c->edge_index, q, n);
  }
  // Edges without a child share the FPU value, so the highest prior among
  // them is the only candidate. Edges are sorted by prior at expansion,
  // making it the first, unless noise has been added at the root.
  const bool sorted = !at_root || root_priors_.empty();
  std::size_t next_child = 0;
  for (int e = 0; e < static_cast<int>(node.edges.size()); ++e) {
    if (next_child < node.children.size() && node.children[next_child]->edge_index == e) {
      ++next_child;
      continue;
    }
    consider(e, fpu, 0);
    if (sorted) break;
  }
  if (best < 0)  // every move is proven lost: the root, searched on
    for (const auto& c : node.children) consider(c->edge_index, -1, double(c->visits) + c->in_flight);
  return best;
}

void Mcts::evaluate_batch(Worker& worker) {
  worker.inputs.clear();
  worker.output_of.clear();
  std::size_t scanned = 0;
  for (int i = 0; i < worker.count; ++i) {
    Leaf& leaf = worker.leaves[i];
    Position& pos = worker.positions[i];
    pos = root_position_;
    for (const Move& m : leaf.moves) pos.make(m);
    const GameStatus status = game_status(pos);
    leaf.finished = status.over();
    if (leaf.finished) {
      // Exact, from the rules: no evaluator call.
      leaf.result = mcts::result_for_side_to_move(pos, status);
      continue;
    }
    MoveList& moves = worker.move_lists[i];
    moves.clear();
    generate_legal(pos, moves);
    if (worker.scans.size() <= scanned) worker.scans.resize(scanned + 1);
    Scan& scan = worker.scans[scanned++];
    scan.clear();
    const bool at_root = leaf.moves.empty();
    if (config_.mate_scan) scan_position(pos, moves, at_root, config_.mate_scan_root, scan);
    // A position below the root that the scan proves is never searched
    // below: its priors would serve nothing, and the evaluator, a network's
    // forward pass, is the search's dearest part. Refuting every defence of
    // a mate in two costs move generation alone.
    if ((!scan.win.is_null() || scan.lost) && !at_root) {
      worker.output_of.push_back(-1);
      continue;
    }
    worker.output_of.push_back(static_cast<int>(worker.inputs.size()));
    worker.inputs.push_back({&pos, &moves});
  }
  for (std::size_t j = 0, i = 0; j < worker.output_of.size(); ++i) {
    if (worker.leaves[i].finished) continue;
    if (worker.output_of[j] < 0) worker.edges[j] = uniform_edges(worker.move_lists[i]);
    ++j;
  }
  if (worker.inputs.empty()) return;
  worker.outputs.resize(worker.inputs.size());
  for (EvalOutput& out : worker.outputs) {
    out.policy.clear();
    out.win = out.loss = 0;
    out.draw = 1;
    out.moves_left = -1;
  }
  evaluator_->evaluate(worker.inputs, worker.outputs);
  for (std::size_t j = 0; j < worker.output_of.size(); ++j) {
    const int i = worker.output_of[j];
    if (i < 0) continue;
    const MoveList& moves = *worker.inputs[i].moves;
    if (worker.outputs[i].policy.size() != static_cast<std::size_t>(moves.size()))
      throw std::runtime_error("evaluator '" + evaluator_->name() + "' gave " +
                               std::to_string(worker.outputs[i].policy.size()) + " priors for " +
                               std::to_string(moves.size()) + " moves");
    prepare_edges(moves, worker.outputs[i], config_.policy_temperature, worker.edges[j]);
  }
}

void Mcts::back_up(Run& run, Worker& worker) {
  std::size_t expanded = 0, evaluated = 0;
  for (int i = 0; i < worker.count; ++i) {
    Leaf& leaf = worker.leaves[i];
    Node& node = *leaf.node;
    const int depth = static_cast<int>(leaf.moves.size());
    if (leaf.finished) {
      node.state = Node::State::kTerminal;
      node.proof = mcts::proof_of_result(leaf.result);
      node.end_plies = 0;
      back_up_value(&node, -leaf.result, leaf.result == 0 ? 1 : 0, depth, run);
      mcts::propagate_proofs(node.parent);
      continue;
    }
    // A position the mate scan proved without the evaluator: won or lost
    // for its side to move.
    static const EvalOutput kScanWon = [] {
      EvalOutput won;
      won.win = 1;
      won.draw = won.loss = 0;
      return won;
    }();
    static const EvalOutput kScanLost = [] {
      EvalOutput lost;
      lost.loss = 1;
      lost.draw = lost.win = 0;
      return lost;
    }();
    const Scan& scan = worker.scans[expanded];
    const int output = worker.output_of[expanded];
    const EvalOutput& out = output >= 0 ? worker.outputs[output] : scan.lost ? kScanLost : kScanWon;
    expand(node, worker.edges[expanded], out);
    if (&node == root_.get()) restrict_root(run);
    ++expanded;
    evaluated += output >= 0;
    apply_scan(node, scan);
    if (node.proven())
      back_up_value(&node, mcts::proof_value(node.proof), node.proof == Proof::kDraw ? 1 : 0, depth, run);
    else
      back_up_value(&node, node.eval_value, out.draw, depth, run);
    if (&node == root_.get()) after_root_expanded(run);
  }
  if (evaluated) {
    run.evaluations += evaluated;
    ++run.batches;
  }
  // Proofs are only made here: the plan loses its lost moves before the next selection.
  if (run.gumbel && run.halving.started()) replace_lost_moves(run);
  for (Node* n : worker.collisions)
    for (; n; n = n->parent) --n->in_flight;
  worker.collisions.clear();
  worker.count = 0;
}

void Mcts::back_up_value(Node* leaf, double value, double draw, int depth, Run& run) {
  // `value` is from the view of the side that moved into the leaf; each
  // level up belongs to the other side.
  for (Node* n = leaf; n; n = n->parent) {
    ++n->visits;
    --n->in_flight;
    n->value_sum += value;
    n->draw_sum += draw;
    value = -value;
  }
  ++run.completed;
  run.depth_sum += depth;
  run.seldepth = std::max(run.seldepth, depth);
}

void Mcts::expand(Node& node, std::vector<mcts::Edge>& edges, const EvalOutput& out) {
  node.edges.swap(edges);
  node.eval_value = -(out.win - out.loss);
  node.state = Node::State::kExpanded;
}

void Mcts::apply_scan(Node& node, const Scan& scan) {
  if (!scan.win.is_null()) {
    // The finished game below, as if searched, and the node proven from it
    // (the side to move there wins in one).
    const auto edge =
        std::find_if(node.edges.begin(), node.edges.end(), [&](const mcts::Edge& e) { return e.move() == scan.win; });
    const int e = static_cast<int>(edge - node.edges.begin());
    if (edge == node.edges.end() || node.child(e)) return;  // a move left out of a restricted root
    Node& won = *node.add_child(e);
    ++tree_nodes_;
    won.state = Node::State::kTerminal;
    won.proof = mcts::proof_of_result(-1);
    won.end_plies = 0;
    mcts::propagate_proofs(&node);
  } else if (scan.lost) {
    // Every move allows a win at once: lost in two plies for the side to
    // move, the refuted moves below it as if searched.
    for (const Refutation& r : scan.refutations) add_refutation(node, r);
    if (!node.proven()) {
      node.proof = Proof::kWin;
      node.end_plies = 2;
    }
    mcts::propagate_proofs(node.parent);
  } else if (!scan.key.is_null()) {
    add_key(node, scan);
  }
}

void Mcts::scan_reused_root() {
  Position pos = root_position_;
  MoveList moves;
  generate_legal(pos, moves);
  Scan scan;
  scan_position(pos, moves, true, config_.mate_scan_root, scan);
  apply_scan(*root_, scan);
}

void Mcts::add_refutation(Node& node, const Refutation& refutation) {
  const auto edge = std::find_if(node.edges.begin(), node.edges.end(),
                                 [&](const mcts::Edge& e) { return e.move() == refutation.reply; });
  const int e = static_cast<int>(edge - node.edges.begin());
  if (edge == node.edges.end() || node.child(e)) return;
  Node& reply = *node.add_child(e);
  reply.edges = refutation.answers;
  reply.state = Node::State::kExpanded;
  reply.eval_value = -1;
  Node& won = *reply.add_child(refutation.win);
  won.state = Node::State::kTerminal;
  won.proof = Proof::kWin;
  won.end_plies = 0;
  tree_nodes_ += 2;
  mcts::propagate_proofs(&reply);
}

void Mcts::add_key(Node& root, const Scan& scan) {
  const auto edge =
      std::find_if(root.edges.begin(), root.edges.end(), [&](const mcts::Edge& e) { return e.move() == scan.key; });
  const int e = static_cast<int>(edge - root.edges.begin());
  if (edge == root.edges.end() || root.child(e)) return;
  Node& key = *root.add_child(e);
  ++tree_nodes_;
  key.edges = scan.key_replies;
  key.state = Node::State::kExpanded;
  key.eval_value = 1;
  add_refutation(key, scan.key_refutation);
  key.proof = Proof::kWin;
  key.end_plies = 2;
  mcts::propagate_proofs(&root);
}

// ---------------------------------------------------------------------------
// The root: Dirichlet noise and the Gumbel plan

void Mcts::restrict_root(const Run& run) {
  const std::vector<Move>& allowed = run.limits.root_moves;
  if (!allowed.empty() && root_->children.empty()) {
    // Fresh from its expansion: no child refers to an edge index yet.
    std::vector<mcts::Edge> kept;
    double sum = 0;
    for (const mcts::Edge& e : root_->edges)
      if (std::find(allowed.begin(), allowed.end(), e.move()) != allowed.end()) {
        kept.push_back(e);
        sum += e.prior;
      }
    if (!kept.empty()) {
      for (mcts::Edge& e : kept) e.prior = sum > 0 ? static_cast<float>(e.prior / sum) : 1.0f / kept.size();
      root_->edges.swap(kept);
    }
  }
}

void Mcts::after_root_expanded(Run& run) {
  if (run.gumbel) {
    std::vector<float> priors;
    for (const mcts::Edge& e : root_->edges) priors.push_back(e.prior);
    run.gumbel_noise = gumbel::sample_gumbel(static_cast<int>(priors.size()), config_.gumbel_noise_scale, run.rng);
    std::uint64_t planned = config_.gumbel_planned_playouts;
    if (run.limits.playouts)
      planned = run.limits.playouts - std::min(run.limits.playouts, run.started);
    else if (run.limits.visits)
      planned = run.limits.visits - std::min<std::uint64_t>(run.limits.visits, root_->visits);
    planned = std::max<std::uint64_t>(planned, 1);
    const int m = static_cast<int>(std::min<std::uint64_t>(std::max(1, config_.gumbel_actions), planned));
    run.gumbel_order = gumbel::top_k(run.gumbel_noise, priors, static_cast<int>(priors.size()));
    run.next_candidate = std::min<std::size_t>(m, run.gumbel_order.size());
    run.halving.start({run.gumbel_order.begin(), run.gumbel_order.begin() + run.next_candidate}, planned);
    replace_lost_moves(run);  // a reused tree may hold moves proven lost already
  } else if (config_.noise_epsilon > 0) {
    apply_root_noise(run.rng);
  }
}

void Mcts::apply_root_noise(std::mt19937_64& rng) {
  // The priors before noise: results report them, and the next search on
  // this root starts from them again instead of adding noise to noise.
  root_priors_.clear();
  for (const mcts::Edge& e : root_->edges) root_priors_.push_back(e.prior);
  std::gamma_distribution<double> gamma(std::max(1e-3f, config_.noise_alpha), 1.0);
  std::vector<double> noise(root_->edges.size());
  double sum = 0;
  for (double& x : noise) sum += x = gamma(rng);
  const double eps = config_.noise_epsilon;
  for (std::size_t i = 0; i < noise.size(); ++i) {
    const double share = sum > 0 ? noise[i] / sum : 1.0 / noise.size();
    root_->edges[i].prior = static_cast<float>((1 - eps) * root_priors_[i] + eps * share);
  }
}

void Mcts::restore_root_priors() {
  if (root_priors_.size() == root_->edges.size())
    for (std::size_t i = 0; i < root_priors_.size(); ++i) root_->edges[i].prior = root_priors_[i];
  root_priors_.clear();
}

std::vector<double> Mcts::gumbel_scores(const Run& run) const {
  const gumbel::Scale scale{config_.gumbel_c_visit, config_.gumbel_c_scale, config_.gumbel_rescale_q};
  const RootStats s = root_stats();
  const std::uint32_t most = s.visits.empty() ? 0 : *std::max_element(s.visits.begin(), s.visits.end());
  const std::vector<double> transformed =
      gumbel::sigma(gumbel::completed_q(s.priors, s.visits, s.q, -root_->eval_value), most, scale);
  std::vector<double> score(s.priors.size());
  for (std::size_t i = 0; i < score.size(); ++i)
    score[i] = run.gumbel_noise[i] + gumbel::logit(s.priors[i]) + transformed[i];
  return score;
}

void Mcts::step_gumbel(Run& run) {
  if (!run.halving.started()) return;
  // A phase ends once all its playouts are back: halving needs their values.
  if (run.halving.phase_done() && root_->in_flight == 0) run.halving.halve(gumbel_scores(run));
}

void Mcts::replace_lost_moves(Run& run) {
  // A planned move proven lost has nothing left to show, and would take the
  // plan's playouts with it: the next move in Gumbel order gets its place,
  // so that with most moves losing at once the search still finds the ones
  // that do not.
  auto lost = [&](int edge) {
    const Node* c = root_->child(edge);
    return c && c->proof == Proof::kLoss;
  };
  // replace() keeps the list's length and order.
  for (std::size_t i = 0; i < run.halving.remaining().size(); ++i) {
    const int edge = run.halving.remaining()[i];
    if (!lost(edge)) continue;
    while (run.next_candidate < run.gumbel_order.size() && lost(run.gumbel_order[run.next_candidate]))
      ++run.next_candidate;
    if (run.next_candidate == run.gumbel_order.size()) return;
    run.halving.replace(edge, run.gumbel_order[run.next_candidate++]);
  }
}

std::int64_t mcts_move_time_ms(std::int64_t time_left_ms, std::int64_t increment_ms, int movestogo) {
  constexpr std::int64_t kMarginMs = 50;  // for the protocol and the last batch
  if (time_left_ms <= 0) return increment_ms > 0 ? std::max<std::int64_t>(1, increment_ms / 2) : 0;
  const int moves = movestogo > 0 ? std::min(movestogo, 40) : 30;
  const std::int64_t wanted = time_left_ms / moves + std::max<std::int64_t>(0, increment_ms) * 3 / 4;
  const std::int64_t cap = std::max<std::int64_t>(1, (time_left_ms - kMarginMs) / 3);
  return std::max<std::int64_t>(1, std::min(wanted, cap));
}

}  // namespace ultima
