// Classical search: iterative deepening, negamax alpha-beta with principal
// variation search, transposition table, quiescence over captures, mate
// scores with distance to mate, the rules' draws inside the tree, time
// management, MultiPV and Lazy SMP threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/nnue/nnue.h"
#include "engine/rules/position.h"
#include "engine/search/static_eval.h"
#include "engine/search/tt.h"

namespace ultima {

constexpr int kMaxPly = 128;
constexpr int kMateScore = 32000;
// Scores beyond this are mates: kMateScore - plies to mate.
constexpr int kMateBound = kMateScore - 1000;

struct SearchLimits {
  int depth = 0;               // 0: no depth limit
  std::uint64_t nodes = 0;     // 0: no node limit
  std::int64_t movetime_ms = 0;
  std::int64_t time_ms[2] = {0, 0};  // remaining clock per colour
  std::int64_t inc_ms[2] = {0, 0};
  int movestogo = 0;
  bool infinite = false;       // only stop() ends the search
  int multipv = 1;
  // Only these root moves are searched (UCI's searchmoves); empty: every
  // legal move. Moves that are not legal here are ignored.
  std::vector<Move> root_moves;
  // A mate search: a mate in at most `mate` moves, or none. The search runs
  // to depth 2 * mate - 1 without null moves or reductions, so a mate that
  // exists within it is found; it ends as soon as one is proven.
  int mate = 0;
};

struct SearchInfo {
  int depth = 0;
  int seldepth = 0;
  int multipv = 1;
  int score = 0;  // centipawns for the side to move, or a mate score
  std::uint64_t nodes = 0;
  std::int64_t time_ms = 0;
  int hashfull = 0;
  std::vector<Move> pv;
};

struct SearchResult {
  Move best;
  int score = 0;
  int depth = 0;
  std::uint64_t nodes = 0;
  std::vector<SearchInfo> lines;  // one per MultiPV line, best first
};

// "cp 35", "mate 3", "mate -2" (UCI's score text).
std::string score_text(int score);

struct ThreadTables;  // a search thread's move-ordering and PV tables

// The transposition table's size when none is given, in MB: the default of
// every searcher, level, UCI's Hash and the analysis engines' --hash.
constexpr std::size_t kDefaultHashMb = 16;

class Searcher {
 public:
  explicit Searcher(std::size_t hash_mb = kDefaultHashMb);
  ~Searcher();

  void set_hash_mb(std::size_t mb) { tt_.resize(mb); }
  void set_threads(int threads) { threads_ = threads < 1 ? 1 : threads; }
  void set_weights(const EvalWeights& w) { weights_ = w; }
  const EvalWeights& weights() const { return weights_; }
  // Evaluates with a learned network (engine/nnue) instead of the weights;
  // null goes back to the weights. The weights still order captures and
  // bound the quiescence search's delta pruning.
  // Changing it forgets the transposition table, whose entries hold the
  // other evaluation's scores.
  void set_network(std::shared_ptr<const nnue::Network> net) {
    if (net != network_) tt_.clear();
    network_ = std::move(net);
  }
  const std::shared_ptr<const nnue::Network>& network() const { return network_; }
  // Adds a pseudo-random offset in [-cp, cp] to every evaluation, fixed per
  // position and seed (weaker levels); 0 turns it off.
  void set_eval_noise(int cp, std::uint64_t seed) {
    noise_cp_ = cp;
    noise_seed_ = seed;
  }
  void clear();  // forget the transposition table and move-ordering history

  // Searches pos (its history counts for repetitions) and returns the best
  // move; on_info is called after each completed depth and MultiPV line.
  SearchResult search(Position& pos, const SearchLimits& limits,
                      const std::function<void(const SearchInfo&)>& on_info = {});
  // Ends a running search soon (from any thread); its result is the best so far.
  void stop() { stop_.store(true, std::memory_order_relaxed); }

 private:
  friend class SearchThread;
  TranspositionTable tt_;
  EvalWeights weights_;
  std::shared_ptr<const nnue::Network> network_;
  int threads_ = 1;
  int noise_cp_ = 0;
  std::uint64_t noise_seed_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> shared_nodes_{0};
  // One per thread, kept from search to search so that a short search does
  // not pay for making them (each search starts them empty).
  std::vector<std::unique_ptr<ThreadTables>> tables_;
};

}  // namespace ultima
