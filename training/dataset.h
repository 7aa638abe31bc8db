// The trainer's view of the samples: every readable shard of the run in
// order, newest last, with those the window reaches held in memory; a
// window over the newest samples whose size grows with the data; and
// batches drawn from it by a reproducible shuffle, each sample seen through
// a random one of the 8 board symmetries. No LibTorch.
#pragma once

#include <cstdint>
#include <future>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nn/data/sample.h"
#include "nn/encoding.h"
#include "nn/policy_index.h"
#include "nn/trainer.h"

namespace ultima::training {

// The window's size for `total` samples (KataGo's form): all of them up to
// min_samples, then min_samples * (1 + beta * ((total / min_samples)^alpha
// - 1) / alpha), at most max_samples (0: no cap), never more than total.
struct WindowConfig {
  std::uint64_t min_samples = 20000;
  double alpha = 0.75;
  double beta = 0.4;
  std::uint64_t max_samples = 0;
};
std::uint64_t window_size(std::uint64_t total, const WindowConfig& config);

// Warnings (a shard skipped) go here; the default logs with spdlog.
using WarningSink = std::function<void(const std::string&)>;

class SampleStore {
 public:
  explicit SampleStore(WarningSink warn = {});
  // Reads the shards it has not read yet. A shard that fails its checks is
  // skipped with a warning naming it and the problem, and never tried again
  // by this store; its samples are never used. Shards are ordered by the
  // model version that played them, then by name.
  void add_shards(const std::vector<std::string>& paths);
  std::uint64_t total() const { return total_; }
  int shard_count() const { return static_cast<int>(shards_.size()); }
  int skipped() const { return static_cast<int>(bad_.size()); }
  // Sample i of the newest-last order (0 <= i < total()). Throws
  // std::logic_error for a sample of a released shard.
  const data::Sample& at(std::uint64_t i) const;

  // Keeps in memory only the shards that reach index `begin` or later (the
  // window): older shards release their samples but keep their place in the
  // order, and a released shard that the window reaches again (a late shard
  // of an older model pushed it up) is read back from its file. Throws
  // std::runtime_error naming a shard that can no longer be read back.
  void hold_from(std::uint64_t begin);
  // Samples held in memory.
  std::uint64_t resident() const;
  // The indices in [begin, end) of the samples of shards whose file name
  // contains `part` (the tactics shards: kTacticsTagSuffix + "-"), in order.
  std::vector<std::uint64_t> indices_named(std::uint64_t begin, std::uint64_t end, const std::string& part) const;

 private:
  struct Shard {
    std::uint64_t model_version;
    std::string path;
    std::vector<data::Sample> samples;
    std::uint64_t count = 0;  // samples.size() unless released
    bool released = false;
  };
  void reindex();
  WarningSink warn_;
  std::vector<Shard> shards_;
  std::map<std::string, bool> seen_;
  std::vector<std::string> bad_;
  std::vector<std::uint64_t> starts_;  // first global index of each shard
  std::uint64_t total_ = 0;
};

// A batch as plain arrays (nn/trainer.h's TrainBatch points into them).
// Rows are written in order (write_sample); the policy target is sparse,
// row i's entries [policy_offsets[i], policy_offsets[i + 1]).
struct BatchData {
  int size = 0;
  int input_planes = nn::kInputPlanes;            // the network's (nn/encoding.h)
  std::vector<float> planes;                      // size x input_planes x 64
  std::vector<std::int32_t> policy_offsets{0};    // rows written + 1
  std::vector<std::int32_t> policy_slots;         // policy_index.h slots
  std::vector<float> policy_weights;              // their probabilities
  std::vector<float> wdl;                         // size x 3
  std::vector<float> moves_left;                  // size

  // Empty rows of `rows` positions of `planes` planes each, to be written
  // from row 0 on.
  void reset(int rows, int planes = nn::kInputPlanes);
  // Row `row`'s policy target as kPolicySize probabilities.
  std::vector<float> dense_policy(int row) const;
  // nn::Trainer's view of it.
  nn::TrainBatch view() const;
};

// The end of the tactics stage's shard tag (genNNNN-mates, so its shards are
// genNNNN-mates-NNNNNN.shard): the trainer can give them a share of each
// batch (TrainConfig::tactics_share).
inline constexpr const char* kTacticsTagSuffix = "-mates";

// Batches over the window [begin, end) of a store: the window's samples in
// a shuffled order (a permutation per pass, from the seed and the pass
// number), batch k taking the next batch_size of them, each through a
// symmetry drawn from the seed and its place. So batch k is a function of
// (store contents, window, seed, k): a resumed trainer draws the same
// batches. `symmetries` false keeps every sample as it is. `q_ratio` is
// write_sample's.
class BatchSampler {
 public:
  BatchSampler(std::uint64_t seed, int batch_size, bool symmetries = true, float q_ratio = 0);
  // Rank `rank` of `ranks` in data-parallel training: fill() makes only its
  // share of each batch, rows [rank * b / ranks, (rank + 1) * b / ranks) of
  // batch_size b (which `ranks` must divide), so the ranks' shares are
  // disjoint and together the one batch.
  void set_share(int rank, int ranks);
  // Rows drawn from `indices` (store indices, e.g. the window's tactics
  // samples): round(share * batch_size) of each batch's rows, spread evenly
  // over it, in a shuffled order of their own (a permutation per pass over
  // `indices`); the other rows draw from the window as before. Share 0 or no
  // indices: every row from the window, the batches of a sampler without it.
  void set_focus(std::vector<std::uint64_t> indices, double share);
  // The planes each row holds: the network's input planes (nn/encoding.h;
  // the tactics planes are computed only for a network that reads them).
  void set_input_planes(int planes);
  void fill(const SampleStore& store, std::uint64_t begin, std::uint64_t end, std::uint64_t batch_number,
            BatchData& out);

 private:
  std::uint64_t seed_;
  int batch_size_;
  bool symmetries_;
  float q_ratio_;
  int rank_ = 0, ranks_ = 1;
  int input_planes_ = nn::kInputPlanes;
  // The permutation of the current pass, for the window it was made for.
  std::uint64_t perm_begin_ = 0, perm_end_ = 0, perm_pass_ = ~0ULL;
  std::vector<std::uint32_t> perm_;
  std::vector<std::uint64_t> focus_;
  int focus_rows_ = 0;
  std::uint64_t focus_pass_ = ~0ULL;
  std::vector<std::uint32_t> focus_perm_;
};

// Makes batch k + 1 on a background thread while batch k trains, so batch
// making overlaps the training step. The batches are the sampler's, in the
// same order: only the timing changes. One taker at a time.
class BatchPrefetcher {
 public:
  BatchPrefetcher(BatchSampler& sampler, const SampleStore& store, std::uint64_t begin, std::uint64_t end);
  ~BatchPrefetcher();  // waits for a batch still being made
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;
  // Batch `number` (made now unless it was made ahead); batch number + 1 is
  // started when `make_next`. Valid until the next call.
  const BatchData& take(std::uint64_t number, bool make_next);

 private:
  BatchSampler& sampler_;
  const SampleStore& store_;
  std::uint64_t begin_, end_;
  BatchData buffers_[2];
  int current_ = 0;
  std::future<void> ahead_;
  std::uint64_t ahead_number_ = 0;
};

// One sample into row `row` of a batch, which must be the next row to write
// (std::logic_error otherwise). The value target is the game's
// result, or with q_ratio > 0 that share of it taken from the search's root
// value q = root_q instead: win max(q, 0), draw 1 - |q|, loss max(-q, 0).
// A sample without a result (kNoResult) has no value target either way.
void write_sample(const data::Sample& sample, BatchData& out, int row, float q_ratio = 0);

}  // namespace ultima::training
