#include "training/dataset.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>
#include <stdexcept>

#include "engine/rules/hash.h"

namespace ultima::training {

namespace fs = std::filesystem;

std::uint64_t window_size(std::uint64_t total, const WindowConfig& c) {
  double size = static_cast<double>(total);
  if (c.min_samples > 0 && total > c.min_samples) {
    const double m = static_cast<double>(c.min_samples);
    size = c.alpha > 0 ? m * (1 + c.beta * (std::pow(total / m, c.alpha) - 1) / c.alpha) : m;
  }
  std::uint64_t out = static_cast<std::uint64_t>(size);
  if (c.max_samples > 0) out = std::min(out, c.max_samples);
  return std::min(out, total);
}

SampleStore::SampleStore(WarningSink warn) : warn_(std::move(warn)) {
  if (!warn_) warn_ = [](const std::string& text) { spdlog::warn("{}", text); };
}

void SampleStore::add_shards(const std::vector<std::string>& paths) {
  bool added = false;
  for (const std::string& path : paths) {
    if (seen_.count(path)) continue;
    seen_[path] = true;
    try {
      data::ShardHeader header;
      std::vector<data::Sample> samples = data::read_shard(path, &header);
      const std::uint64_t count = samples.size();
      shards_.push_back({header.model_version, path, std::move(samples), count, false});
      added = true;
    } catch (const std::exception& e) {
      bad_.push_back(path);
      warn_(std::string("skipping shard: ") + e.what());
    }
  }
  if (added) reindex();
}

void SampleStore::reindex() {
  std::stable_sort(shards_.begin(), shards_.end(), [](const Shard& a, const Shard& b) {
    return a.model_version != b.model_version ? a.model_version < b.model_version : a.path < b.path;
  });
  starts_.clear();
  total_ = 0;
  for (const Shard& s : shards_) {
    starts_.push_back(total_);
    total_ += s.count;
  }
}

void SampleStore::hold_from(std::uint64_t begin) {
  for (std::size_t k = 0; k < shards_.size(); ++k) {
    Shard& s = shards_[k];
    const bool needed = starts_[k] + s.count > begin;
    if (!needed && !s.released) {
      std::vector<data::Sample>().swap(s.samples);
      s.released = true;
    } else if (needed && s.released) {
      std::vector<data::Sample> samples;
      try {
        samples = data::read_shard(s.path);
      } catch (const std::exception& e) {
        throw std::runtime_error(std::string("train: cannot read back a shard the window needs again: ") + e.what());
      }
      if (samples.size() != s.count)
        throw std::runtime_error("train: shard " + s.path + " changed on disk (" + std::to_string(samples.size()) +
                                 " samples, was " + std::to_string(s.count) + ")");
      s.samples = std::move(samples);
      s.released = false;
    }
  }
}

std::uint64_t SampleStore::resident() const {
  std::uint64_t n = 0;
  for (const Shard& s : shards_) n += s.samples.size();
  return n;
}

std::vector<std::uint64_t> SampleStore::indices_named(std::uint64_t begin, std::uint64_t end,
                                                      const std::string& part) const {
  std::vector<std::uint64_t> out;
  for (std::size_t k = 0; k < shards_.size(); ++k) {
    if (fs::path(shards_[k].path).filename().string().find(part) == std::string::npos) continue;
    const std::uint64_t from = std::max(begin, starts_[k]), to = std::min(end, starts_[k] + shards_[k].count);
    for (std::uint64_t i = from; i < to; ++i) out.push_back(i);
  }
  return out;
}

const data::Sample& SampleStore::at(std::uint64_t i) const {
  if (i >= total_) throw std::out_of_range("sample index out of range");
  const auto it = std::upper_bound(starts_.begin(), starts_.end(), i);
  const std::size_t shard = static_cast<std::size_t>(it - starts_.begin()) - 1;
  if (shards_[shard].released)
    throw std::logic_error("sample " + std::to_string(i) + " is in released shard " + shards_[shard].path);
  return shards_[shard].samples[i - starts_[shard]];
}

BatchSampler::BatchSampler(std::uint64_t seed, int batch_size, bool symmetries, float q_ratio)
    : seed_(seed), batch_size_(batch_size), symmetries_(symmetries), q_ratio_(q_ratio) {
  if (batch_size < 1) throw std::invalid_argument("batch size must be at least 1");
  if (!(q_ratio >= 0 && q_ratio <= 1)) throw std::invalid_argument("q_ratio must be in [0, 1]");
}

void BatchData::reset(int rows, int planes_per_row) {
  nn::check_input_planes(planes_per_row, "a batch row");
  size = rows;
  input_planes = planes_per_row;
  // Room for a whole encoding after the last row: rows are unpacked in full
  // and then overlap, each keeping its first input_planes planes.
  planes.resize(rows > 0 ? std::size_t(rows - 1) * input_planes * nn::kPlaneSize + nn::kInputSize : 0);
  policy_offsets.assign(1, 0);
  policy_offsets.reserve(std::size_t(rows) + 1);
  policy_slots.clear();
  policy_weights.clear();
  wdl.resize(std::size_t(rows) * 3);
  moves_left.resize(rows);
}

std::vector<float> BatchData::dense_policy(int row) const {
  std::vector<float> out(nn::kPolicySize, 0.0f);
  for (std::int32_t e = policy_offsets.at(row); e < policy_offsets.at(row + 1); ++e)
    out[policy_slots[e]] += policy_weights[e];
  return out;
}

nn::TrainBatch BatchData::view() const {
  if (policy_offsets.size() != std::size_t(size) + 1)
    throw std::logic_error("a batch of " + std::to_string(size) + " rows has " +
                           std::to_string(policy_offsets.size() - 1) + " written");
  return nn::TrainBatch{size, planes.data(), policy_offsets.data(), policy_slots.data(), policy_weights.data(),
                        wdl.data(), moves_left.data()};
}

void write_sample(const data::Sample& sample, BatchData& out, int row, float q_ratio) {
  if (row < 0 || row >= out.size || out.policy_offsets.size() != std::size_t(row) + 1)
    throw std::logic_error("batch rows are written in order: row " + std::to_string(row) + " after " +
                           std::to_string(out.policy_offsets.size() - 1) + " of " + std::to_string(out.size));
  data::unpack_planes(sample,
                          std::span<float, nn::kInputSize>(
                              out.planes.data() + std::size_t(row) * out.input_planes * nn::kPlaneSize, nn::kInputSize),
                          out.input_planes);
  for (const data::PolicyTarget& t : sample.policy) {
    out.policy_slots.push_back(t.slot);
    out.policy_weights.push_back(t.probability);
  }
  out.policy_offsets.push_back(static_cast<std::int32_t>(out.policy_slots.size()));
  float* wdl = out.wdl.data() + std::size_t(row) * 3;
  // A game cut at the length limit has no result: no value or moves-left
  // target (a zero WDL row adds nothing to the cross-entropy).
  const bool known = !(sample.flags & data::kNoResult);
  const float z = known ? 1.0f - q_ratio : 0.0f;
  const float r = known ? q_ratio : 0.0f;
  const float q = std::clamp(sample.root_q, -1.0f, 1.0f);
  wdl[0] = z * (sample.result > 0) + r * std::max(q, 0.0f);
  wdl[1] = z * (sample.result == 0) + r * (1.0f - std::abs(q));
  wdl[2] = z * (sample.result < 0) + r * std::max(-q, 0.0f);
  out.moves_left[row] = known ? static_cast<float>(sample.plies_to_end) : -1.0f;
}

void BatchSampler::set_share(int rank, int ranks) {
  if (ranks < 1 || rank < 0 || rank >= ranks) throw std::invalid_argument("rank " + std::to_string(rank) + " of " +
                                                                         std::to_string(ranks));
  if (batch_size_ % ranks != 0)
    throw std::invalid_argument("training: batch_size " + std::to_string(batch_size_) + " does not split into " +
                                std::to_string(ranks) + " equal shares");
  rank_ = rank;
  ranks_ = ranks;
}

namespace {

// 0 .. size - 1 in the order a generator seeded with `seed` shuffles them to.
void shuffle_indices(std::vector<std::uint32_t>& out, std::uint64_t size, std::uint64_t seed) {
  out.resize(size);
  std::iota(out.begin(), out.end(), 0u);
  std::mt19937_64 rng(seed);
  std::shuffle(out.begin(), out.end(), rng);
}

}  // namespace

void BatchSampler::set_input_planes(int planes) {
  nn::check_input_planes(planes, "the network");
  input_planes_ = planes;
}

void BatchSampler::set_focus(std::vector<std::uint64_t> indices, double share) {
  if (!(share >= 0 && share < 1)) throw std::invalid_argument("the focus share must be in [0, 1)");
  focus_ = std::move(indices);
  focus_rows_ = focus_.empty() ? 0 : static_cast<int>(std::lround(share * batch_size_));
  focus_pass_ = ~0ULL;
}

void BatchSampler::fill(const SampleStore& store, std::uint64_t begin, std::uint64_t end,
                        std::uint64_t batch_number, BatchData& out) {
  if (end > store.total() || begin >= end) throw std::invalid_argument("the training window is empty");
  const std::uint64_t size = end - begin;
  const int share = batch_size_ / ranks_, first = rank_ * share;
  out.reset(share, input_planes_);
  // Row r is a focus row when floor((r + 1) * f / b) passes floor(r * f / b):
  // f of the b rows, spread evenly, each rank's share the same whatever it is.
  const std::uint64_t b = batch_size_, f = focus_rows_;
  for (int row = first; row < first + share; ++row) {
    const std::uint64_t r = static_cast<std::uint64_t>(row), focus_before = r * f / b;
    const bool focus = (r + 1) * f / b > focus_before;
    std::uint64_t index, position;
    if (focus) {
      position = batch_number * f + focus_before;
      const std::uint64_t pass = position / focus_.size();
      if (pass != focus_pass_) {
        shuffle_indices(focus_perm_, focus_.size(), mix64(seed_ ^ mix64(pass + 1) ^ 0xF0C05ULL) ^ mix64(focus_.size()));
        focus_pass_ = pass;
      }
      index = focus_[focus_perm_[position % focus_.size()]];
      position = ~position;  // its symmetry is drawn apart from the window's rows
    } else {
      position = batch_number * (b - f) + (r - focus_before);
      const std::uint64_t pass = position / size;
      if (pass != perm_pass_ || begin != perm_begin_ || end != perm_end_) {
        shuffle_indices(perm_, size, mix64(seed_ ^ mix64(pass + 1)) ^ mix64(begin) ^ mix64(mix64(end)));
        perm_pass_ = pass;
        perm_begin_ = begin;
        perm_end_ = end;
      }
      index = begin + perm_[position % size];
    }
    const data::Sample& sample = store.at(index);
    if (symmetries_) {
      const auto sym = static_cast<Symmetry>(mix64(seed_ ^ mix64(position + 0x5151)) % kSymmetryCount);
      write_sample(sym == Symmetry::kIdentity ? sample : data::transform_sample(sample, sym), out, row - first,
                   q_ratio_);
    } else {
      write_sample(sample, out, row - first, q_ratio_);
    }
  }
}

BatchPrefetcher::BatchPrefetcher(BatchSampler& sampler, const SampleStore& store, std::uint64_t begin,
                                 std::uint64_t end)
    : sampler_(sampler), store_(store), begin_(begin), end_(end) {}

BatchPrefetcher::~BatchPrefetcher() {
  if (ahead_.valid()) ahead_.wait();
}

const BatchData& BatchPrefetcher::take(std::uint64_t number, bool make_next) {
  const bool ready = ahead_.valid() && ahead_number_ == number;
  if (ahead_.valid()) {
    ahead_.get();  // rethrows what making it threw
    if (ready) current_ ^= 1;
  }
  if (!ready) sampler_.fill(store_, begin_, end_, number, buffers_[current_]);
  if (make_next) {
    ahead_number_ = number + 1;
    BatchData& next = buffers_[current_ ^ 1];
    ahead_ = std::async(std::launch::async, [this, &next] { sampler_.fill(store_, begin_, end_, ahead_number_, next); });
  }
  return buffers_[current_];
}

}  // namespace ultima::training
