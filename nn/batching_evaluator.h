// The Evaluator (engine/mcts/evaluator.h) that serves many search threads with
// one network: callers' positions queue up, a worker thread runs one forward
// pass per batch (full at max_batch, or sent when the oldest position has
// waited max_wait_us), and each caller gets the priors of its own legal
// moves (softmax over them only) and the WDL softmax. A lone caller (the
// last kLoneBatches batches each held one call, and one call is queued now)
// is served at once: no other caller has shown up to fill the batch, and
// waiting for one would only idle the network (one search thread, or the
// last game of a self-play stage). Answers are cached by
// position (placement, side, rules, 100-ply counter, repetition). No
// LibTorch here: the network is behind NetworkBackend.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/mcts/evaluator.h"
#include "nn/backend.h"

namespace ultima::nn {

struct BatchingOptions {
  int max_batch = 64;        // positions per forward pass at most
  int max_wait_us = 500;     // how long the oldest queued position waits for the batch to fill
  std::size_t cache_entries = 65536;  // positions kept (0: no cache)
  int workers = 1;           // threads running forward passes
};

struct BatchingStats {
  std::uint64_t positions = 0;   // asked for
  std::uint64_t cache_hits = 0;
  std::uint64_t batches = 0;     // forward passes
  std::uint64_t evaluated = 0;   // positions that went through the network
  std::uint64_t unwaited = 0;    // batches sent at once for a lone caller (no max_wait_us)
  double mean_batch() const { return batches ? double(evaluated) / batches : 0; }
};

// The key of a position's evaluation: everything the encoding reads.
std::uint64_t evaluation_key(const Position& pos);

// A fixed-size table of evaluations; a new entry replaces the old one in
// its place. Thread-safe (striped locks).
class EvalCache {
 public:
  explicit EvalCache(std::size_t entries);
  // False unless the entry holds this key and a prior for every slot given.
  bool lookup(std::uint64_t key, const std::int32_t* slots, int count, EvalOutput& out) const;
  void store(std::uint64_t key, const std::int32_t* slots, int count, const EvalOutput& out);
  void clear();
  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::uint64_t key = 0;
    bool used = false;
    float win = 0, draw = 0, loss = 0, moves_left = -1;
    std::vector<std::int32_t> slots;  // in the order stored
    std::vector<float> priors;
  };
  static constexpr int kStripes = 64;
  std::vector<Entry> entries_;
  mutable std::array<std::mutex, kStripes> locks_;
};

class BatchingEvaluator final : public Evaluator {
 public:
  // Single-call batches in a row after which a lone caller is no longer
  // made to wait (the first ones wait, so concurrent callers can meet).
  static constexpr int kLoneBatches = 16;

  BatchingEvaluator(std::shared_ptr<NetworkBackend> backend, BatchingOptions options);
  ~BatchingEvaluator() override;
  BatchingEvaluator(const BatchingEvaluator&) = delete;
  BatchingEvaluator& operator=(const BatchingEvaluator&) = delete;

  // Blocks until every input is answered. Throws std::runtime_error when the
  // network fails.
  void evaluate(std::span<const EvalInput> inputs, std::span<EvalOutput> outputs) override;
  std::string name() const override;

  // One forward pass of exactly these inputs in the calling thread, no queue
  // and no cache: the reference the tests compare against.
  void evaluate_direct(std::span<const EvalInput> inputs, std::span<EvalOutput> outputs);

  BatchingStats stats() const;
  // Positions queued now, waiting for a forward pass.
  std::size_t queued();
  void clear_cache();
  const BatchingOptions& options() const { return options_; }
  NetworkBackend& backend() { return *backend_; }

 private:
  struct Call;
  struct Item {
    Call* call;
    int index;  // within the call
    std::chrono::steady_clock::time_point queued;
  };
  void worker_loop();
  void run_batch(std::vector<Item>& items);

  std::shared_ptr<NetworkBackend> backend_;
  int input_planes_ = 0;  // the backend's
  BatchingOptions options_;
  std::unique_ptr<EvalCache> cache_;

  std::mutex queue_mutex_;
  std::condition_variable queue_cv_;
  std::deque<Item> queue_;
  bool stopping_ = false;
  int lone_batches_ = 0;  // batches in a row that held one call (under queue_mutex_)
  std::vector<std::thread> workers_;

  std::atomic<std::uint64_t> positions_{0}, cache_hits_{0}, batches_{0}, evaluated_{0}, unwaited_{0};
};

// Softmax of `count` logits into `out` (float, max-subtracted).
void softmax(const float* logits, int count, float* out);

}  // namespace ultima::nn
