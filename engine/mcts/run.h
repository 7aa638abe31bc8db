// The state of one MCTS search shared by its threads, and by the result
// code (result.cpp). Internal to the search.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <random>
#include <vector>

#include "engine/mcts/gumbel.h"
#include "engine/mcts/mcts.h"

namespace ultima {

// The state of one search() shared by its threads (guarded by tree_mutex_).
struct Mcts::Run {
  MctsLimits limits;
  std::chrono::steady_clock::time_point start;
  std::chrono::steady_clock::time_point deadline;
  bool has_deadline = false;
  std::uint64_t root_visits_at_start = 0;
  std::uint64_t started = 0;    // playouts handed out
  std::uint64_t completed = 0;  // playouts backed up
  std::uint64_t evaluations = 0, batches = 0, collisions = 0;
  std::uint64_t depth_sum = 0;
  int seldepth = 0;
  std::exception_ptr error;
  std::mt19937_64 rng;
  // Gumbel root.
  bool gumbel = false;
  std::vector<double> gumbel_noise;  // per root edge
  // Every root edge by g + logit, best first: the first gumbel_actions are
  // the plan's; the rest, from next_candidate on, stand in for moves of the
  // plan proven lost.
  std::vector<int> gumbel_order;
  std::size_t next_candidate = 0;
  gumbel::SequentialHalving halving;
};

}  // namespace ultima
