#include "batching_evaluator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "nn/encoding.h"
#include "nn/policy_index.h"

namespace ultima::nn {
namespace {

std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t rules_code(const Rules& r) {
  return static_cast<std::uint64_t>(r.leaper) | static_cast<std::uint64_t>(r.chameleon) << 1 |
         static_cast<std::uint64_t>(r.removal) << 2 | static_cast<std::uint64_t>(r.stalemate) << 3 |
         static_cast<std::uint64_t>(r.objective) << 4 | static_cast<std::uint64_t>(r.frozen_immobilizer) << 5;
}

// Encodes the inputs and lists their legal moves' slots (the shape a forward
// pass takes).
struct EncodedBatch {
  int input_planes = kInputPlanes;  // the network's: each position's planes * 64 floats
  std::vector<float> planes;
  std::vector<std::int32_t> offsets{0};
  std::vector<std::int32_t> slots;

  // The input's legal moves' slots; returns where they start.
  std::size_t add_moves(const EvalInput& in) {
    if (!in.position || !in.moves) throw std::invalid_argument("evaluate: an input lacks its position or moves");
    const std::size_t first = slots.size();
    for (const Move& m : *in.moves) {
      const int slot = policy_index(m);
      if (slot < 0) throw std::invalid_argument("evaluate: a move has no policy slot");
      slots.push_back(slot);
    }
    offsets.push_back(static_cast<std::int32_t>(slots.size()));
    return first;
  }
  void drop_last_moves(std::size_t first) {
    slots.resize(first);
    offsets.pop_back();
  }
  void add_planes(const Position& pos) {
    const std::size_t at = planes.size();
    planes.resize(at + kInputSize);
    encode_position(pos, std::span<float, kInputSize>(planes.data() + at, kInputSize), input_planes);
    planes.resize(at + static_cast<std::size_t>(input_planes) * kPlaneSize);  // the network reads the first ones
  }
  void add(const EvalInput& in) {
    add_moves(in);
    add_planes(*in.position);
  }
  int size() const { return static_cast<int>(offsets.size()) - 1; }
};

void finish_output(const float* logits, int count, const float* wdl_logits, float moves_left, EvalOutput& out) {
  out.policy.resize(static_cast<std::size_t>(count));
  softmax(logits, count, out.policy.data());
  float wdl[3];
  softmax(wdl_logits, 3, wdl);
  out.win = wdl[0];
  out.draw = wdl[1];
  out.loss = wdl[2];
  out.moves_left = moves_left;
}

}  // namespace

void softmax(const float* logits, int count, float* out) {
  if (count <= 0) return;
  const float top = *std::max_element(logits, logits + count);
  float sum = 0;
  for (int i = 0; i < count; ++i) sum += out[i] = std::exp(logits[i] - top);
  for (int i = 0; i < count; ++i) out[i] /= sum;
}

std::uint64_t evaluation_key(const Position& pos) {
  const std::uint64_t extra = rules_code(pos.rules()) | static_cast<std::uint64_t>(pos.halfmove_clock()) << 8 |
                              static_cast<std::uint64_t>(pos.repetition_count() >= 2) << 20;
  return mix64(pos.key() ^ mix64(extra + 0x9E3779B97F4A7C15ULL));
}

// ---- cache

EvalCache::EvalCache(std::size_t entries) : entries_(entries) {}

bool EvalCache::lookup(std::uint64_t key, const std::int32_t* slots, int count, EvalOutput& out) const {
  if (entries_.empty()) return false;
  const std::size_t i = key % entries_.size();
  std::lock_guard lock(locks_[i % kStripes]);
  const Entry& e = entries_[i];
  if (!e.used || e.key != key || e.slots.size() != static_cast<std::size_t>(count)) return false;
  out.policy.resize(static_cast<std::size_t>(count));
  if (count > 0 && std::memcmp(e.slots.data(), slots, sizeof(std::int32_t) * count) == 0) {
    std::copy(e.priors.begin(), e.priors.end(), out.policy.begin());
  } else {
    // The same moves in another order: find each one.
    for (int m = 0; m < count; ++m) {
      const auto it = std::find(e.slots.begin(), e.slots.end(), slots[m]);
      if (it == e.slots.end()) return false;
      out.policy[m] = e.priors[it - e.slots.begin()];
    }
  }
  out.win = e.win;
  out.draw = e.draw;
  out.loss = e.loss;
  out.moves_left = e.moves_left;
  return true;
}

void EvalCache::store(std::uint64_t key, const std::int32_t* slots, int count, const EvalOutput& out) {
  if (entries_.empty()) return;
  const std::size_t i = key % entries_.size();
  std::lock_guard lock(locks_[i % kStripes]);
  Entry& e = entries_[i];
  e.key = key;
  e.used = true;
  e.win = out.win;
  e.draw = out.draw;
  e.loss = out.loss;
  e.moves_left = out.moves_left;
  e.slots.assign(slots, slots + count);
  e.priors.assign(out.policy.begin(), out.policy.end());
}

void EvalCache::clear() {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    std::lock_guard lock(locks_[i % kStripes]);
    entries_[i] = Entry{};
  }
}

// ---- batching

// One evaluate() call: its encoded inputs, where the answers go, and how
// many are still out.
struct BatchingEvaluator::Call {
  EncodedBatch encoded;
  std::vector<float> logits;       // per move
  std::vector<float> wdl_logits;   // per input x 3
  std::vector<float> moves_left;   // per input
  std::mutex mutex;
  std::condition_variable done_cv;
  int remaining = 0;
  std::string error;
};

BatchingEvaluator::BatchingEvaluator(std::shared_ptr<NetworkBackend> backend, BatchingOptions options)
    : backend_(std::move(backend)), options_(options) {
  if (!backend_) throw std::invalid_argument("BatchingEvaluator: no network");
  input_planes_ = backend_->input_planes();
  check_input_planes(input_planes_, "BatchingEvaluator: the network");
  if (options_.max_batch < 1) throw std::invalid_argument("max_batch must be at least 1");
  if (options_.max_wait_us < 0) throw std::invalid_argument("max_wait_us must not be negative");
  if (options_.workers < 1) throw std::invalid_argument("workers must be at least 1");
  if (options_.cache_entries > 0) cache_ = std::make_unique<EvalCache>(options_.cache_entries);
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { worker_loop(); });
}

BatchingEvaluator::~BatchingEvaluator() {
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

std::string BatchingEvaluator::name() const { return backend_->describe(); }

BatchingStats BatchingEvaluator::stats() const {
  BatchingStats s;
  s.positions = positions_.load();
  s.cache_hits = cache_hits_.load();
  s.batches = batches_.load();
  s.evaluated = evaluated_.load();
  s.unwaited = unwaited_.load();
  return s;
}

std::size_t BatchingEvaluator::queued() {
  std::lock_guard lock(queue_mutex_);
  return queue_.size();
}

void BatchingEvaluator::clear_cache() {
  if (cache_) cache_->clear();
}

void BatchingEvaluator::evaluate(std::span<const EvalInput> inputs, std::span<EvalOutput> outputs) {
  if (outputs.size() < inputs.size()) throw std::invalid_argument("evaluate: fewer outputs than inputs");
  positions_ += inputs.size();
  Call call;
  call.encoded.input_planes = input_planes_;
  std::vector<int> asked;  // input index of each queued position
  std::vector<std::uint64_t> keys;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::size_t first_slot = call.encoded.add_moves(inputs[i]);
    const std::uint64_t key = cache_ ? evaluation_key(*inputs[i].position) : 0;
    const int count = static_cast<int>(call.encoded.slots.size() - first_slot);
    if (cache_ && cache_->lookup(key, call.encoded.slots.data() + first_slot, count, outputs[i])) {
      ++cache_hits_;
      call.encoded.drop_last_moves(first_slot);  // only misses travel
      continue;
    }
    call.encoded.add_planes(*inputs[i].position);
    asked.push_back(static_cast<int>(i));
    keys.push_back(key);
  }
  const int n = call.encoded.size();
  if (n == 0) return;
  call.logits.resize(call.encoded.slots.size());
  call.wdl_logits.resize(static_cast<std::size_t>(n) * 3);
  call.moves_left.resize(static_cast<std::size_t>(n));
  call.remaining = n;
  {
    std::lock_guard lock(queue_mutex_);
    const auto now = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) queue_.push_back(Item{&call, i, now});
  }
  queue_cv_.notify_all();
  {
    std::unique_lock lock(call.mutex);
    call.done_cv.wait(lock, [&] { return call.remaining == 0; });
  }
  if (!call.error.empty()) throw std::runtime_error(call.error);
  // The softmaxes and cache stores run here, in the callers' threads, to
  // keep the worker feeding the network.
  for (int k = 0; k < n; ++k) {
    const int begin = call.encoded.offsets[k], count = call.encoded.offsets[k + 1] - begin;
    EvalOutput& out = outputs[asked[k]];
    finish_output(call.logits.data() + begin, count, call.wdl_logits.data() + 3 * k, call.moves_left[k], out);
    if (cache_) cache_->store(keys[k], call.encoded.slots.data() + begin, count, out);
  }
}

void BatchingEvaluator::evaluate_direct(std::span<const EvalInput> inputs, std::span<EvalOutput> outputs) {
  EncodedBatch batch;
  batch.input_planes = input_planes_;
  for (const EvalInput& in : inputs) batch.add(in);
  const int n = batch.size();
  if (n == 0) return;
  std::vector<float> logits(batch.slots.size()), wdl(static_cast<std::size_t>(n) * 3), moves_left(n);
  backend_->forward(ForwardBatch{n, batch.planes.data(), batch.offsets.data(), batch.slots.data()},
                    ForwardOutput{logits.data(), wdl.data(), moves_left.data()});
  for (int k = 0; k < n; ++k) {
    const int begin = batch.offsets[k];
    finish_output(logits.data() + begin, batch.offsets[k + 1] - begin, wdl.data() + 3 * k, moves_left[k],
                  outputs[k]);
  }
}

void BatchingEvaluator::worker_loop() {
  std::vector<Item> items;
  for (;;) {
    {
      std::unique_lock lock(queue_mutex_);
      queue_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      // A call's positions are queued together, so one call is queued when
      // the first and last positions share it.
      const bool lone = lone_batches_ >= kLoneBatches && queue_.front().call == queue_.back().call;
      if (lone) {
        ++unwaited_;
      } else {
        // Wait for a full batch, but not past the oldest position's deadline.
        const auto deadline = queue_.front().queued + std::chrono::microseconds(options_.max_wait_us);
        queue_cv_.wait_until(lock, deadline, [&] {
          return stopping_ || queue_.empty() || static_cast<int>(queue_.size()) >= options_.max_batch;
        });
        if (queue_.empty()) continue;  // another worker took them
      }
      const std::size_t take = std::min<std::size_t>(queue_.size(), static_cast<std::size_t>(options_.max_batch));
      items.assign(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(take));
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(take));
      // One caller this time: the batch holds one call and no other waits.
      const bool one_call = items.front().call == items.back().call &&
                            (queue_.empty() || queue_.back().call == items.front().call);
      lone_batches_ = one_call ? std::min(lone_batches_ + 1, kLoneBatches) : 0;
    }
    run_batch(items);
  }
}

void BatchingEvaluator::run_batch(std::vector<Item>& items) {
  const int n = static_cast<int>(items.size());
  const std::size_t stride = static_cast<std::size_t>(input_planes_) * kPlaneSize;
  std::vector<float> planes(static_cast<std::size_t>(n) * stride);
  std::vector<std::int32_t> offsets{0}, slots;
  for (int k = 0; k < n; ++k) {
    const EncodedBatch& e = items[k].call->encoded;
    const int i = items[k].index;
    std::memcpy(planes.data() + static_cast<std::size_t>(k) * stride, e.planes.data() + static_cast<std::size_t>(i) * stride,
                sizeof(float) * stride);
    slots.insert(slots.end(), e.slots.begin() + e.offsets[i], e.slots.begin() + e.offsets[i + 1]);
    offsets.push_back(static_cast<std::int32_t>(slots.size()));
  }
  std::vector<float> logits(slots.size()), wdl(static_cast<std::size_t>(n) * 3), moves_left(n);
  std::string error;
  try {
    backend_->forward(ForwardBatch{n, planes.data(), offsets.data(), slots.data()},
                      ForwardOutput{logits.data(), wdl.data(), moves_left.data()});
  } catch (const std::exception& e) {
    error = e.what();
  }
  ++batches_;
  evaluated_ += static_cast<std::uint64_t>(n);
  for (int k = 0; k < n; ++k) {
    Call& call = *items[k].call;
    const int i = items[k].index;
    if (error.empty()) {
      std::copy(logits.begin() + offsets[k], logits.begin() + offsets[k + 1],
                call.logits.begin() + call.encoded.offsets[i]);
      std::copy_n(wdl.begin() + 3 * k, 3, call.wdl_logits.begin() + 3 * i);
      call.moves_left[i] = moves_left[k];
    }
    std::lock_guard lock(call.mutex);
    if (!error.empty() && call.error.empty()) call.error = error;
    if (--call.remaining == 0) call.done_cv.notify_all();
  }
}

}  // namespace ultima::nn
