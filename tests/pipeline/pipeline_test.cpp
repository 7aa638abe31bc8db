// The torch-free self-play / training pipeline: the sample window, the
// sample store and its damaged shards, batches (reproducible, every sample
// once per pass, symmetries), self-play games with the material evaluator,
// run_selfplay's exactly-once shards across a stop and a restart, the run
// directory, the learning-rate schedule, ratings against a ladder, run
// configs and the SVG chart.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/mcts/material_evaluator.h"
#include "engine/play/elo.h"
#include "engine/play/match.h"
#include "engine/play/pgn.h"
#include "engine/play/puzzle.h"
#include "engine/play/value_fit.h"
#include "engine/rules/file_io.h"
#include "engine/rules/notation.h"
#include "engine/search/search.h"
#include "nn/data/run_dir.h"
#include "nn/data/sample.h"
#include "nn/policy_index.h"
#include "selfplay/selfplay.h"
#include "test_util.h"
#include "training/dataset.h"
#include "training/loop/plot.h"
#include "training/loop/run_config.h"
#include "training/train.h"

namespace ultima {
namespace {

using namespace ultima::data;
using namespace ultima::selfplay;
using namespace ultima::training;
namespace fs = std::filesystem;

constexpr Symmetry kAllSymmetries[] = {Symmetry::kIdentity,  Symmetry::kRotate90,    Symmetry::kRotate180,
                                       Symmetry::kRotate270, Symmetry::kMirrorFiles, Symmetry::kMirrorRanks,
                                       Symmetry::kTranspose, Symmetry::kAntiTranspose};

using test::TempDir;

std::vector<std::string> file_names(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) out.push_back(entry.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// A sample of a real position with a policy over some of its legal moves;
// `id` goes to plies_to_end so that batches can say which sample a row is.
Sample position_sample(std::mt19937_64& rng, std::uint16_t id) {
  Position pos = test::random_game_position(Rules::parse("abbott1963"), rng, 4 + rng() % 30);
  while (game_status(pos).over()) pos = test::random_game_position(Rules::parse("abbott1963"), rng, 4 + rng() % 30);
  Sample s;
  pack_position(pos, s);
  s.result = static_cast<std::int8_t>(static_cast<int>(rng() % 3) - 1);
  s.plies_to_end = id;
  s.ply = static_cast<std::uint16_t>(rng() % 200);
  s.root_q = std::uniform_real_distribution<float>(-1, 1)(rng);
  MoveList list;
  generate_legal(pos, list);
  std::set<int> slots;
  for (const Move& m : list)
    if (const int slot = nn::policy_index(m); slot >= 0 && slots.size() < 5) slots.insert(slot);
  const float share = 1.0f / static_cast<float>(slots.size());
  for (int slot : slots) s.policy.push_back({static_cast<std::uint16_t>(slot), share});
  return s;
}

// ---------------------------------------------------------------------------
// window_size

TEST(WindowSize, AllSamplesUpToMinSamples) {
  WindowConfig c;
  c.min_samples = 1000;
  EXPECT_EQ(window_size(0, c), 0u);
  EXPECT_EQ(window_size(1, c), 1u);
  EXPECT_EQ(window_size(999, c), 999u);
  EXPECT_EQ(window_size(1000, c), 1000u);
}

TEST(WindowSize, KataGoFormulaAboveMinSamples) {
  WindowConfig c;
  c.min_samples = 1000;
  c.alpha = 0.75;
  c.beta = 0.4;
  // 16000 / 1000 = 16, 16^0.75 = 8: 1000 * (1 + 0.4 * (8 - 1) / 0.75) = 4733.3
  EXPECT_EQ(window_size(16000, c), 4733u);
  // 81000 / 1000 = 81, 81^0.75 = 27: 1000 * (1 + 0.4 * 26 / 0.75) = 14866.7
  EXPECT_EQ(window_size(81000, c), 14866u);
}

TEST(WindowSize, MaxSamplesCapsIt) {
  WindowConfig c;
  c.min_samples = 1000;
  c.max_samples = 3000;
  EXPECT_EQ(window_size(16000, c), 3000u);
  EXPECT_EQ(window_size(1000000, c), 3000u);
  EXPECT_EQ(window_size(2000, c), window_size(2000, WindowConfig{1000, 0.75, 0.4, 0}));
}

TEST(WindowSize, NeverMoreThanTotal) {
  // alpha 1, beta 2: the formula gives 2 total - min, more than total.
  const WindowConfig c{1000, 1.0, 2.0, 0};
  EXPECT_EQ(window_size(5000, c), 5000u);
}

TEST(WindowSize, MonotoneInTotal) {
  for (const WindowConfig& c : {WindowConfig{1000, 0.75, 0.4, 0}, WindowConfig{500, 0.5, 1.0, 20000},
                                WindowConfig{250000, 0.75, 0.4, 0}}) {
    std::uint64_t previous = 0;
    for (std::uint64_t total = 0; total < 600000; total += 97) {
      const std::uint64_t w = window_size(total, c);
      ASSERT_GE(w, previous) << "total " << total << " min_samples " << c.min_samples;
      ASSERT_LE(w, total);
      previous = w;
    }
  }
}

// ---------------------------------------------------------------------------
// SampleStore

// Samples tagged by ply (999 marks the ones of damaged shards) and game.
std::vector<Sample> tagged_samples(std::mt19937_64& rng, int count, std::uint16_t ply, std::uint32_t game) {
  std::vector<Sample> out;
  for (int i = 0; i < count; ++i) {
    Sample s = position_sample(rng, static_cast<std::uint16_t>(i));
    s.ply = ply;
    s.game = game;
    out.push_back(s);
  }
  return out;
}

void write_shard_of(const std::string& path, std::uint64_t model_version, const std::vector<Sample>& samples) {
  ShardHeader h;
  h.model_version = model_version;
  h.rules = "abbott1963";
  h.games = 1;
  write_shard(path, h, samples);
}

TEST(SampleStore, SkipsCorruptAndTruncatedShardsWithAWarningNamingThem) {
  TempDir dir("store-bad");
  RunDir run(dir.path());
  std::mt19937_64 rng(11);
  write_shard_of(run.shard_path("sp", 0), 0, tagged_samples(rng, 20, 1, 0));
  write_shard_of(run.shard_path("sp", 1), 0, tagged_samples(rng, 20, 999, 1));
  write_shard_of(run.shard_path("sp", 2), 0, tagged_samples(rng, 20, 999, 2));
  write_shard_of(run.shard_path("sp", 3), 0, tagged_samples(rng, 20, 1, 3));

  const std::string corrupt = run.shard_path("sp", 1), truncated = run.shard_path("sp", 2);
  {
    std::fstream f(corrupt, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f);
    const auto size = static_cast<std::streamoff>(fs::file_size(corrupt));
    f.seekg(size * 3 / 4);
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x5a);
    f.seekp(size * 3 / 4);
    f.write(&c, 1);
  }
  fs::resize_file(truncated, fs::file_size(truncated) / 2);

  std::vector<std::string> warnings;
  SampleStore store([&](const std::string& text) { warnings.push_back(text); });
  store.add_shards(run.shard_paths());
  EXPECT_EQ(store.shard_count(), 2);
  EXPECT_EQ(store.skipped(), 2);
  EXPECT_EQ(store.total(), 40u);
  ASSERT_EQ(warnings.size(), 2u);
  const bool corrupt_named = std::any_of(warnings.begin(), warnings.end(), [&](const std::string& w) {
    return w.find(corrupt) != std::string::npos;
  });
  const bool truncated_named = std::any_of(warnings.begin(), warnings.end(), [&](const std::string& w) {
    return w.find(truncated) != std::string::npos;
  });
  EXPECT_TRUE(corrupt_named) << warnings[0] << " | " << warnings[1];
  EXPECT_TRUE(truncated_named) << warnings[0] << " | " << warnings[1];
  for (std::uint64_t i = 0; i < store.total(); ++i) {
    EXPECT_NE(store.at(i).ply, 999) << "sample " << i << " comes from a damaged shard";
    EXPECT_TRUE(store.at(i).game == 0 || store.at(i).game == 3);
  }
  EXPECT_THROW(store.at(store.total()), std::out_of_range);

  // A damaged shard is never tried again.
  store.add_shards(run.shard_paths());
  EXPECT_EQ(warnings.size(), 2u);
  EXPECT_EQ(store.skipped(), 2);
  EXPECT_EQ(store.total(), 40u);
}

TEST(SampleStore, OrdersByModelVersionThenPathAndNeverDuplicates) {
  TempDir dir("store-order");
  RunDir run(dir.path());
  std::mt19937_64 rng(12);
  // game = the shard's place in the expected order.
  write_shard_of(run.shard_path("a", 0), 2, tagged_samples(rng, 3, 0, 3));
  write_shard_of(run.shard_path("a", 1), 1, tagged_samples(rng, 4, 0, 1));
  write_shard_of(run.shard_path("b", 0), 1, tagged_samples(rng, 5, 0, 2));
  write_shard_of(run.shard_path("c", 0), 0, tagged_samples(rng, 2, 0, 0));
  write_shard_of(run.shard_path("a", 2), 3, tagged_samples(rng, 6, 0, 4));

  std::vector<std::string> warnings;
  SampleStore store([&](const std::string& text) { warnings.push_back(text); });
  // Added in two calls, out of order, the second repeating the first.
  store.add_shards({run.shard_path("b", 0), run.shard_path("a", 0)});
  EXPECT_EQ(store.total(), 8u);
  store.add_shards(run.shard_paths());
  store.add_shards(run.shard_paths());
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(store.shard_count(), 5);
  ASSERT_EQ(store.total(), 20u);

  const std::vector<std::uint32_t> expected_games = {0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4, 4, 4};
  for (std::uint64_t i = 0; i < store.total(); ++i) EXPECT_EQ(store.at(i).game, expected_games[i]) << "sample " << i;
  // Within a shard the samples keep their order.
  EXPECT_EQ(store.at(2).plies_to_end, 0);
  EXPECT_EQ(store.at(5).plies_to_end, 3);
  EXPECT_EQ(store.at(store.total() - 1).plies_to_end, 5);
}

TEST(SampleStore, ShardsBehindTheWindowLeaveMemoryAndComeBackWhenNeeded) {
  TempDir dir("store-hold");
  RunDir run(dir.path());
  std::mt19937_64 rng(13);
  // game = the shard's model version.
  for (int v = 1; v <= 4; ++v) write_shard_of(run.shard_path("sp", v), v, tagged_samples(rng, 10, 0, v));
  SampleStore store([](const std::string& w) { ADD_FAILURE() << w; });
  store.add_shards(run.shard_paths());
  ASSERT_EQ(store.total(), 40u);
  EXPECT_EQ(store.resident(), 40u);

  // A window from sample 25: the shards of versions 1 and 2 end before it.
  store.hold_from(25);
  EXPECT_EQ(store.resident(), 20u);
  EXPECT_EQ(store.total(), 40u);  // released shards keep their place
  EXPECT_THROW(store.at(5), std::logic_error);
  EXPECT_THROW(store.at(19), std::logic_error);
  for (std::uint64_t i = 20; i < 40; ++i) EXPECT_EQ(store.at(i).game, 3 + (i - 20) / 10) << "sample " << i;

  // A late shard of version 0 goes first and pushes every other one up by
  // 10: the window from 15 now reaches version 2 again, read back from disk.
  write_shard_of(run.shard_path("late", 0), 0, tagged_samples(rng, 10, 0, 0));
  store.add_shards(run.shard_paths());
  ASSERT_EQ(store.total(), 50u);
  store.hold_from(25);
  EXPECT_EQ(store.resident(), 30u);
  for (std::uint64_t i = 20; i < 50; ++i) EXPECT_EQ(store.at(i).game, 2 + (i - 20) / 10) << "sample " << i;
  EXPECT_THROW(store.at(0), std::logic_error);  // the late shard is behind the window too

  // A released shard that has gone from the disk is named when needed again.
  fs::remove(run.shard_path("late", 0));
  EXPECT_THROW(store.hold_from(0), std::runtime_error);
}

// ---------------------------------------------------------------------------
// BatchSampler

class BatchSamplerTest : public ::testing::Test {
 protected:
  static constexpr int kSamples = 48;
  void SetUp() override {
    run_ = std::make_unique<RunDir>(dir_.path());
    std::mt19937_64 rng(13);
    for (int shard = 0; shard < 3; ++shard) {
      std::vector<Sample> samples;
      for (int i = 0; i < kSamples / 3; ++i)
        samples.push_back(position_sample(rng, static_cast<std::uint16_t>(shard * (kSamples / 3) + i)));
      write_shard_of(run_->shard_path("sp", shard), 0, samples);
    }
    store_.add_shards(run_->shard_paths());
    ASSERT_EQ(store_.total(), static_cast<std::uint64_t>(kSamples));
    for (std::uint64_t i = 0; i < store_.total(); ++i) ASSERT_EQ(store_.at(i).plies_to_end, i);
  }
  TempDir dir_{"batches"};
  std::unique_ptr<RunDir> run_;
  SampleStore store_{[](const std::string&) {}};
};

bool same_batch(const BatchData& a, const BatchData& b) {
  return a.size == b.size && a.planes == b.planes && a.policy_offsets == b.policy_offsets &&
         a.policy_slots == b.policy_slots && a.policy_weights == b.policy_weights && a.wdl == b.wdl &&
         a.moves_left == b.moves_left;
}

TEST_F(BatchSamplerTest, SameSeedAndBatchNumberGiveTheSameBatch) {
  BatchSampler forward(77, 8), backward(77, 8), other_seed(78, 8);
  std::vector<BatchData> batches(12);
  for (int k = 0; k < 12; ++k) forward.fill(store_, 4, kSamples, k, batches[k]);
  for (int k = 11; k >= 0; --k) {
    BatchData b;
    backward.fill(store_, 4, kSamples, k, b);
    EXPECT_TRUE(same_batch(b, batches[k])) << "batch " << k << " drawn in another order";
  }
  // The same sampler asked again, after other passes.
  BatchData again;
  forward.fill(store_, 4, kSamples, 0, again);
  EXPECT_TRUE(same_batch(again, batches[0]));
  BatchData different;
  other_seed.fill(store_, 4, kSamples, 0, different);
  EXPECT_FALSE(same_batch(different, batches[0]));
}

TEST_F(BatchSamplerTest, APassUsesEverySampleOfTheWindowOnce) {
  const std::uint64_t begin = 8, end = kSamples;  // 40 samples
  const int batch = 10;
  BatchSampler sampler(5, batch, /*symmetries=*/false);
  for (int pass = 0; pass < 3; ++pass) {
    std::vector<int> seen(kSamples, 0);
    std::vector<float> order;
    for (int k = 0; k < 4; ++k) {
      BatchData b;
      sampler.fill(store_, begin, end, pass * 4 + k, b);
      ASSERT_EQ(b.size, batch);
      ASSERT_EQ(b.moves_left.size(), static_cast<std::size_t>(batch));
      for (float id : b.moves_left) {
        ASSERT_GE(id, static_cast<float>(begin));
        ASSERT_LT(id, static_cast<float>(end));
        seen[static_cast<int>(id)]++;
        order.push_back(id);
      }
    }
    for (std::uint64_t i = begin; i < end; ++i) EXPECT_EQ(seen[i], 1) << "pass " << pass << " sample " << i;
    EXPECT_FALSE(std::is_sorted(order.begin(), order.end())) << "pass " << pass << " is not shuffled";
  }
}

TEST_F(BatchSamplerTest, RowsWithoutSymmetriesAreTheSamplesAsWritten) {
  BatchSampler sampler(9, 16, /*symmetries=*/false);
  BatchData b;
  sampler.fill(store_, 0, kSamples, 1, b);
  for (int row = 0; row < b.size; ++row) {
    const Sample& s = store_.at(static_cast<std::uint64_t>(b.moves_left[row]));
    BatchData expected;
    expected.reset(1);
    write_sample(s, expected, 0);
    EXPECT_TRUE(std::equal(expected.planes.begin(), expected.planes.end(), b.planes.begin() + row * nn::kInputSize));
    EXPECT_EQ(expected.dense_policy(0), b.dense_policy(row));
  }
}

TEST_F(BatchSamplerTest, RowsAreSamplesThroughSomeSymmetry) {
  BatchSampler sampler(21, 16, /*symmetries=*/true);
  std::set<int> used;
  BatchData single;
  for (int k = 0; k < 6; ++k) {
    BatchData b;
    sampler.fill(store_, 0, kSamples, k, b);
    for (int row = 0; row < b.size; ++row) {
      const Sample& s = store_.at(static_cast<std::uint64_t>(b.moves_left[row]));
      const float* planes = b.planes.data() + std::size_t(row) * nn::kInputSize;
      const std::vector<float> policy = b.dense_policy(row);
      int match = -1;
      for (const Symmetry sym : kAllSymmetries) {
        single.reset(1);
        write_sample(transform_sample(s, sym), single, 0);
        if (std::equal(single.planes.begin(), single.planes.end(), planes) && single.dense_policy(0) == policy) {
          match = static_cast<int>(sym);
          break;
        }
      }
      ASSERT_GE(match, 0) << "batch " << k << " row " << row << " is no symmetry of sample " << b.moves_left[row];
      used.insert(match);
    }
  }
  EXPECT_GT(used.size(), 1u);
}

TEST_F(BatchSamplerTest, WdlIsOneHotFromTheResultAndPolicyRowsSumToOne) {
  BatchSampler sampler(3, 24);
  for (int k = 0; k < 4; ++k) {
    BatchData b;
    sampler.fill(store_, 0, kSamples, k, b);
    for (int row = 0; row < b.size; ++row) {
      const Sample& s = store_.at(static_cast<std::uint64_t>(b.moves_left[row]));
      const float* wdl = b.wdl.data() + row * 3;
      EXPECT_EQ(wdl[0], s.result > 0 ? 1.0f : 0.0f);
      EXPECT_EQ(wdl[1], s.result == 0 ? 1.0f : 0.0f);
      EXPECT_EQ(wdl[2], s.result < 0 ? 1.0f : 0.0f);
      const std::vector<float> policy = b.dense_policy(row);
      double sum = 0;
      for (int i = 0; i < nn::kPolicySize; ++i) {
        ASSERT_GE(policy[i], 0.0f);
        sum += policy[i];
      }
      EXPECT_NEAR(sum, 1.0, 1e-5);
    }
  }
}

// Focus rows: samples 1, 3, 5 and 7, outside the window [8, 48), so a row
// with one of them came from the focus and every other row from the window.
TEST_F(BatchSamplerTest, AFocusShareFillsThatManyRowsOfEveryBatchFromItsSamples) {
  const std::vector<std::uint64_t> focus = {1, 3, 5, 7};
  const std::uint64_t begin = 8, end = kSamples;  // 40 samples
  BatchSampler sampler(31, 16, /*symmetries=*/false);
  sampler.set_focus(focus, 0.25);  // 4 rows of 16
  std::vector<int> seen(kSamples, 0);
  std::vector<BatchData> batches(10);
  for (int k = 0; k < 10; ++k) {
    sampler.fill(store_, begin, end, k, batches[k]);
    std::vector<int> focus_rows;
    for (int row = 0; row < batches[k].size; ++row) {
      const int id = static_cast<int>(batches[k].moves_left[row]);
      ++seen[id];
      if (id < static_cast<int>(begin)) focus_rows.push_back(row);
    }
    // Spread over the batch, not bunched at its start.
    EXPECT_EQ(focus_rows, (std::vector<int>{3, 7, 11, 15})) << "batch " << k;
  }
  // 40 focus rows: each focus sample 10 times; 120 window rows: each 3 times.
  for (std::uint64_t i : focus) EXPECT_EQ(seen[i], 10) << "focus sample " << i;
  for (std::uint64_t i = begin; i < end; ++i) EXPECT_EQ(seen[i], 3) << "window sample " << i;

  // The same batches from a fresh sampler asked in another order, and the
  // two data-parallel halves together make each one.
  BatchSampler again(31, 16, false), half0(31, 16, false), half1(31, 16, false);
  again.set_focus(focus, 0.25);
  half0.set_focus(focus, 0.25);
  half1.set_focus(focus, 0.25);
  half0.set_share(0, 2);
  half1.set_share(1, 2);
  for (int k = 9; k >= 0; --k) {
    BatchData b, h0, h1;
    again.fill(store_, begin, end, k, b);
    EXPECT_TRUE(same_batch(b, batches[k])) << "batch " << k;
    half0.fill(store_, begin, end, k, h0);
    half1.fill(store_, begin, end, k, h1);
    std::vector<float> joined = h0.moves_left;
    joined.insert(joined.end(), h1.moves_left.begin(), h1.moves_left.end());
    EXPECT_EQ(joined, batches[k].moves_left) << "batch " << k;
  }
}

TEST_F(BatchSamplerTest, NoFocusOrAZeroShareLeavesTheBatchesAsTheyWere) {
  BatchSampler plain(44, 12), empty(44, 12), zero(44, 12);
  empty.set_focus({}, 0.5);
  zero.set_focus({1, 2, 3}, 0.0);
  for (int k = 0; k < 6; ++k) {
    BatchData a, b, c;
    plain.fill(store_, 0, kSamples, k, a);
    empty.fill(store_, 0, kSamples, k, b);
    zero.fill(store_, 0, kSamples, k, c);
    EXPECT_TRUE(same_batch(a, b)) << "batch " << k;
    EXPECT_TRUE(same_batch(a, c)) << "batch " << k;
  }
  EXPECT_THROW(plain.set_focus({1}, 1.0), std::invalid_argument);
  EXPECT_THROW(plain.set_focus({1}, -0.25), std::invalid_argument);
}

TEST(SampleStore, IndicesNamedAreTheSamplesOfShardsWhoseNameHoldsThePart) {
  TempDir dir("store-named");
  RunDir run(dir.path());
  std::mt19937_64 rng(14);
  // In the store's order: gen0001 [0, 5), gen0001-mates [5, 8), gen0002 [8, 12).
  write_shard_of(run.shard_path("gen0001", 0), 1, tagged_samples(rng, 5, 0, 0));
  write_shard_of(run.shard_path(std::string("gen0001") + training::kTacticsTagSuffix, 0), 1,
                 tagged_samples(rng, 3, 0, 1));
  write_shard_of(run.shard_path("gen0002", 0), 2, tagged_samples(rng, 4, 0, 2));
  SampleStore store([](const std::string& w) { ADD_FAILURE() << w; });
  store.add_shards(run.shard_paths());
  ASSERT_EQ(store.total(), 12u);
  const std::string mates = std::string(training::kTacticsTagSuffix) + "-";
  EXPECT_EQ(store.indices_named(0, 12, mates), (std::vector<std::uint64_t>{5, 6, 7}));
  for (std::uint64_t i : store.indices_named(0, 12, mates)) EXPECT_EQ(store.at(i).game, 1u);
  EXPECT_EQ(store.indices_named(6, 12, mates), (std::vector<std::uint64_t>{6, 7}));
  EXPECT_TRUE(store.indices_named(8, 12, mates).empty());
  EXPECT_TRUE(store.indices_named(0, 12, "-nothing-").empty());
}

TEST(WriteSample, AGameWithoutResultGivesNoValueOrMovesLeftTarget) {
  Sample s;
  pack_position(Position::start(), s);
  s.policy = {{7, 1.0f}};
  s.plies_to_end = 33;
  BatchData out;
  out.reset(1);
  write_sample(s, out, 0);
  EXPECT_EQ(out.wdl, (std::vector<float>{0, 1, 0}));
  EXPECT_EQ(out.moves_left[0], 33.0f);
  s.flags |= kNoResult;
  out.reset(1);
  write_sample(s, out, 0);
  EXPECT_EQ(out.wdl, (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(out.moves_left[0], -1.0f);
  EXPECT_EQ(out.dense_policy(0)[7], 1.0f);  // the policy target stays
  // Rows go in order: row 0 again without a reset is refused.
  EXPECT_THROW(write_sample(s, out, 0), std::logic_error);
  // Such a sample with a result is refused by the shard writer.
  s.result = 1;
  const std::string path = ::testing::TempDir() + "/no_result.shard";
  EXPECT_THROW(write_shard(path, ShardHeader{}, {s}), std::runtime_error);
}

TEST(WriteSample, QRatioBlendsTheResultWithTheSearchValue) {
  Sample s;
  pack_position(Position::start(), s);
  s.policy = {{7, 1.0f}};
  s.result = 1;
  s.root_q = -0.4f;
  BatchData out;
  auto expect_wdl = [&](float w, float d, float l) {
    EXPECT_NEAR(out.wdl[0], w, 1e-6);
    EXPECT_NEAR(out.wdl[1], d, 1e-6);
    EXPECT_NEAR(out.wdl[2], l, 1e-6);
  };
  out.reset(1);
  write_sample(s, out, 0, 0.0f);
  expect_wdl(1, 0, 0);
  // Half from q = -0.4, as the WDL (0, 0.6, 0.4).
  out.reset(1);
  write_sample(s, out, 0, 0.5f);
  expect_wdl(0.5f, 0.3f, 0.2f);
  out.reset(1);
  write_sample(s, out, 0, 1.0f);
  expect_wdl(0, 0.6f, 0.4f);
  s.result = 0;
  s.root_q = 0.25f;
  out.reset(1);
  write_sample(s, out, 0, 0.5f);
  expect_wdl(0.125f, 0.875f, 0);
  // No result: no value target, whatever the ratio.
  s.flags |= kNoResult;
  out.reset(1);
  write_sample(s, out, 0, 0.5f);
  expect_wdl(0, 0, 0);
  EXPECT_THROW(BatchSampler(1, 4, true, 1.5f), std::invalid_argument);
}

TEST_F(BatchSamplerTest, RejectsAnEmptyOrOutOfRangeWindow) {
  BatchSampler sampler(3, 4);
  BatchData b;
  EXPECT_THROW(sampler.fill(store_, 10, 10, 0, b), std::invalid_argument);
  EXPECT_THROW(sampler.fill(store_, 0, kSamples + 1, 0, b), std::invalid_argument);
  EXPECT_THROW(BatchSampler(1, 0), std::invalid_argument);
}

// ---------------------------------------------------------------------------
// Self-play games with the material evaluator

SelfPlayConfig tiny_selfplay() {
  SelfPlayConfig c;
  c.rules = Rules::parse("abbott1963");
  c.full_playouts = 8;
  c.cheap_playouts = 4;
  c.full_search_share = 0.5;
  c.mcts_batch = 4;
  c.max_plies = 60;
  c.parallel_games = 2;
  c.games_per_shard = 2;
  // The PUCT path with visit targets, resignation on and no adjudication
  // (the recipe's Gumbel root has tests of its own, which set it).
  c.policy_target = "visits";
  c.gumbel = false;
  c.gumbel_rescale_q = true;
  c.gumbel_c_scale = 0.1f;
  c.mate_scan = false;
  c.temperature_end = 0.1;
  c.temperature_halflife = 20;
  c.resign_threshold = 0.9;
  c.adjudicate_cp = 0;
  return c;
}

std::shared_ptr<Evaluator> material() { return std::make_shared<MaterialEvaluator>(); }

// Checks a game against its record: lengths, results, legal policy slots.
void check_game(const SelfPlayGame& game, const SelfPlayConfig& config) {
  const GameRecord& r = game.record;
  const int length = static_cast<int>(r.moves.size());
  ASSERT_NE(r.result, Outcome::kOngoing);
  ASSERT_LE(length, config.max_plies);
  if (game.cut) {
    EXPECT_EQ(length, config.max_plies);
    EXPECT_EQ(r.result, Outcome::kDraw);
    EXPECT_EQ(r.termination, kMaxPliesTermination);
    if (config.adjudicate_cp > 0) {
      EXPECT_LT(std::abs(material_lead(final_position(r))), config.adjudicate_cp);
    }
  } else if (game.adjudicated) {
    EXPECT_EQ(length, config.max_plies);
    EXPECT_EQ(r.termination, kMaterialAdjudication);
    const int lead = material_lead(final_position(r));
    EXPECT_GE(std::abs(lead), config.adjudicate_cp);
    EXPECT_GT(config.adjudicate_cp, 0);
    EXPECT_EQ(r.result, lead > 0 ? Outcome::kWhiteWins : Outcome::kBlackWins);
  } else if (!game.resigned) {
    const GameStatus status = game_status(final_position(r));
    EXPECT_TRUE(status.over());
    EXPECT_EQ(status.outcome, r.result);
  } else {
    EXPECT_EQ(r.termination, "resignation");
    EXPECT_NE(r.result, Outcome::kDraw);
  }
  Position pos = Position::start(config.rules);
  int ply = 0;
  for (const Sample& s : game.samples) {
    // The last sample may be the position where a side resigned.
    ASSERT_LE(s.ply, length) << "a sample after the game's end";
    if (s.ply == length) {
      EXPECT_TRUE(game.resigned) << "a sample of the final position";
    }
    EXPECT_EQ(s.ply + s.plies_to_end, length);
    while (ply < s.ply) pos.make(r.moves[ply++]);
    Sample expected;
    pack_position(pos, expected);
    EXPECT_EQ(expected.planes, s.planes) << "ply " << s.ply;
    EXPECT_EQ(s.white_to_move, pos.side_to_move() == kWhite ? 1 : 0);
    const int want = r.result == Outcome::kDraw ? 0 : ((r.result == Outcome::kWhiteWins) == (s.white_to_move == 1) ? 1 : -1);
    EXPECT_EQ(s.result, want) << "ply " << s.ply;
    // Only a game cut at the length limit lacks a result.
    EXPECT_EQ((s.flags & kNoResult) != 0, game.cut) << "ply " << s.ply;
    MoveList list;
    generate_legal(pos, list);
    std::set<int> legal;
    for (const Move& m : list) legal.insert(nn::policy_index(m));
    double sum = 0;
    std::set<int> slots;
    for (const PolicyTarget& t : s.policy) {
      EXPECT_TRUE(legal.count(t.slot)) << "ply " << s.ply << ": slot " << t.slot << " is no legal move";
      EXPECT_TRUE(slots.insert(t.slot).second) << "slot " << t.slot << " twice";
      EXPECT_GT(t.probability, 0.0f);
      sum += t.probability;
    }
    EXPECT_NEAR(sum, 1.0, 1e-4) << "ply " << s.ply;
  }
}

TEST(SelfPlayGame, AGameCutAtTheLimitMarksItsSamplesWithoutResult) {
  SelfPlayConfig config = tiny_selfplay();
  config.max_plies = 6;
  config.resign_threshold = 0;
  const SelfPlayGame game = play_selfplay_game(config, material(), 5, 0);
  ASSERT_TRUE(game.cut);
  ASSERT_FALSE(game.samples.empty());
  for (const Sample& s : game.samples) {
    EXPECT_TRUE(s.flags & kNoResult);
    EXPECT_EQ(s.result, 0);
  }
}

TEST(SelfPlayStats, EtaCountsTheGamesUnderWayAtTheirLengthSoFar) {
  SelfPlayStats s;
  s.seconds = 10;
  // Nothing finished: every game is expected to last max_plies.
  s.moves = 400;
  s.in_progress = 4;
  EXPECT_DOUBLE_EQ(s.eta_seconds(10, 300), (10 * 300 - 400) / 40.0);
  // Two short games finished (20 plies each) while four others are at 100
  // plies: the games under way set the expected length, not the short ones.
  s.games = 2;
  s.finished_moves = 40;
  s.moves = 440;
  EXPECT_DOUBLE_EQ(s.eta_seconds(10, 300), (8 * 100 - 400) / 44.0);
  // Finished games longer than the ones under way set it.
  s.finished_moves = 2 * 250;
  s.moves = 900;
  EXPECT_DOUBLE_EQ(s.eta_seconds(10, 300), (8 * 250 - 400) / 90.0);
  // Shards already there are not played again.
  s.games_skipped = 4;
  EXPECT_DOUBLE_EQ(s.eta_seconds(10, 300), (4 * 250 - 400) / 90.0);
}

TEST(SelfPlayGame, MaterialLeadCountsPieceValuesWithoutKings) {
  const Rules rules = Rules::parse("abbott1963");
  EXPECT_EQ(material_lead(Position::start(rules)), 0);
  // White: king, immobilizer, two pawns; Black: king, long leaper.
  const Position pos = Position::from_fen("4k3/8/8/2l5/8/8/PP6/I3K3 w 0 1", rules);
  EXPECT_EQ(material_lead(pos), 997 + 2 * 100 - 605);
}

TEST(SelfPlayGame, GamesAtTheLimitAreAdjudicatedOnMaterialOrCut) {
  SelfPlayConfig config = tiny_selfplay();
  config.max_plies = 24;
  config.resign_threshold = 0;
  int adjudicated = 0, cut = 0;
  for (int threshold : {150, 1500}) {
    config.adjudicate_cp = threshold;
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      SCOPED_TRACE(testing::Message() << "threshold " << threshold << ", seed " << seed);
      const SelfPlayGame game = play_selfplay_game(config, material(), seed, 0);
      check_game(game, config);  // the result follows the final material
      adjudicated += game.adjudicated;
      cut += game.cut;
      if (game.adjudicated) {
        // Adjudicated samples train the value: no no-result flag.
        for (const Sample& s : game.samples) EXPECT_NE(s.result, 0);
      }
    }
  }
  EXPECT_GT(adjudicated, 0);
  EXPECT_GT(cut, 0);
  config.adjudicate_cp = -1;
  EXPECT_THROW(config.validate(), std::invalid_argument);
}

TEST(SelfPlayGame, AGumbelRootPlaysItsChoiceAndTargetsTheImprovedPolicy) {
  SelfPlayConfig config = tiny_selfplay();
  config.gumbel = true;
  config.policy_target = "gumbel";
  config.full_playouts = 16;
  const SelfPlayGame a = play_selfplay_game(config, material(), 9, 0);
  check_game(a, config);  // legal slots, targets summing to 1, results
  ASSERT_FALSE(a.samples.empty());
  // Improved-policy targets cover every legal move (visit targets only the
  // visited ones).
  bool wider = false;
  for (const Sample& s : a.samples) wider = wider || s.policy.size() > 16;
  EXPECT_TRUE(wider);
  const SelfPlayGame b = play_selfplay_game(config, material(), 9, 0);
  EXPECT_EQ(a.record.moves, b.record.moves);
  EXPECT_EQ(a.samples, b.samples);
  config.gumbel = false;  // the improved policy needs a Gumbel root
  EXPECT_THROW(config.validate(), std::invalid_argument);
}

// Uniform priors and a drawn value everywhere: only the rules say anything.
class UniformEvaluator : public Evaluator {
 public:
  void evaluate(std::span<const EvalInput> inputs, std::span<EvalOutput> outputs) override {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      outputs[i].policy.assign(inputs[i].moves->size(), 1.0f);
      outputs[i].win = outputs[i].loss = 0;
      outputs[i].draw = 1;
    }
  }
  std::string name() const override { return "uniform"; }
};

// With the mate scan every mate in one is proven where it stands; self-play
// then plays it, even when the Gumbel plan never sampled it, and makes it
// the whole policy target.
TEST(SelfPlayGame, AProvenWinIsPlayedAndIsTheWholeTarget) {
  SelfPlayConfig config = tiny_selfplay();
  config.gumbel = true;
  config.policy_target = "gumbel";
  config.mate_scan = true;
  config.full_search_share = 1;  // a sample at every ply
  config.max_plies = 200;
  int mates = 0;
  for (const bool uniform : {false, true})
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      SCOPED_TRACE((uniform ? "uniform, seed " : "material, seed ") + std::to_string(seed));
      const SelfPlayGame game = play_selfplay_game(
          config, uniform ? std::shared_ptr<Evaluator>(std::make_shared<UniformEvaluator>()) : material(), seed, 0);
      check_game(game, config);
      Position pos = Position::start(config.rules);
      std::size_t next_sample = 0;
      for (std::size_t ply = 0; ply < game.record.moves.size(); ++ply) {
        while (next_sample < game.samples.size() && game.samples[next_sample].ply < ply) ++next_sample;
        const Move played = game.record.moves[ply];
        MoveList list;
        generate_legal(pos, list);
        const bool mate_available =
            std::any_of(list.begin(), list.end(), [&](const Move& m) { return wins_at_once(pos, m); });
        if (mate_available) {
          ++mates;
          EXPECT_TRUE(wins_at_once(pos, played)) << "ply " << ply << ": a mate in one was not played";
          ASSERT_LT(next_sample, game.samples.size());
          const Sample& s = game.samples[next_sample];
          EXPECT_EQ(s.ply, ply);
          ASSERT_EQ(s.policy.size(), 1u);
          EXPECT_EQ(s.policy[0].slot, nn::policy_index(played));
        }
        pos.make(played);
      }
    }
  EXPECT_GT(mates, 0);
}

TEST(SelfPlayGame, SamplesAgreeWithTheGameRecord) {
  const SelfPlayConfig config = tiny_selfplay();
  int samples = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const SelfPlayGame game = play_selfplay_game(config, material(), seed, 3);
    SCOPED_TRACE("seed " + std::to_string(seed));
    check_game(game, config);
    for (const Sample& s : game.samples) EXPECT_EQ(s.game, 3u);
    samples += static_cast<int>(game.samples.size());
    EXPECT_GT(game.playouts, 0u);
  }
  EXPECT_GT(samples, 0);
}

TEST(SelfPlayGame, SameSeedSameGame) {
  const SelfPlayConfig config = tiny_selfplay();
  const SelfPlayGame a = play_selfplay_game(config, material(), 42, 0);
  const SelfPlayGame b = play_selfplay_game(config, material(), 42, 0);
  EXPECT_EQ(a.record.moves, b.record.moves);
  EXPECT_EQ(a.record.result, b.record.result);
  EXPECT_EQ(a.samples, b.samples);
  const SelfPlayGame c = play_selfplay_game(config, material(), 43, 0);
  EXPECT_NE(a.record.moves, c.record.moves);
}

// Teacher games (the warm start): the alpha-beta searcher's games, every
// position a sample labelled by its MultiPV lines.
TeacherConfig small_teacher() {
  TeacherConfig t;
  t.depth = 1;
  t.multipv = 4;
  t.temperature_cp = 50;
  t.sample_plies = 8;
  return t;
}

TEST(TeacherGame, EveryPositionIsASampleOverTheSearchedLines) {
  SelfPlayConfig config = tiny_selfplay();
  config.max_plies = 40;
  config.adjudicate_cp = 100;
  const TeacherConfig teacher = small_teacher();
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const SelfPlayGame game = play_teacher_game(config, teacher, seed, 5);
    check_game(game, config);  // legal slots summing to 1, results, plies to the end
    ASSERT_EQ(game.samples.size(), game.record.moves.size());
    Position pos = Position::start(config.rules);
    for (std::size_t ply = 0; ply < game.samples.size(); ++ply) {
      const Sample& s = game.samples[ply];
      EXPECT_EQ(s.ply, ply);
      EXPECT_EQ(s.game, 5u);
      EXPECT_LE(s.policy.size(), static_cast<std::size_t>(teacher.multipv));
      EXPECT_GE(s.root_q, -1.0f);
      EXPECT_LE(s.root_q, 1.0f);
      // Past the sampled opening the teacher plays its best line: the
      // target's most likely move.
      const Move played = game.record.moves[ply];
      if (static_cast<int>(ply) >= teacher.sample_plies) {
        const auto top = std::max_element(s.policy.begin(), s.policy.end(), [](const auto& a, const auto& b) {
          return a.probability < b.probability;
        });
        EXPECT_EQ(top->slot, nn::policy_index(played)) << "ply " << ply;
      }
      pos.make(played);
    }
    EXPECT_GT(game.playouts, 0u);  // the searches' nodes
  }
}

// A warm-start label is the searcher's own MultiPV result on the position:
// each line's first move at its softmax weight, the best score through the
// fitted logistic as root_q, the planes of the position searched.
TEST(TeacherLabel, TargetsAreTheSearchedLinesOnFixedPositions) {
  TeacherConfig teacher = small_teacher();
  teacher.depth = 2;
  // The start, and two endgames (mates in three, beyond depth 2), one for each side.
  for (const Position& pos : {Position::start(), Position::from_fen("c6k/2X5/4K3/4W3/8/8/3C4/8 w 0 1"),
                              Position::from_fen("1c6/3i4/8/4I3/8/8/3K4/k7 b 0 1")}) {
    SCOPED_TRACE(pos.fen());
    Searcher labeller(4), reference(4);
    const TeacherLabel label = label_by_teacher(pos, teacher, labeller);
    SearchLimits limits;
    limits.depth = teacher.depth;
    limits.multipv = teacher.multipv;
    Position searched = pos;
    const SearchResult result = reference.search(searched, limits);
    ASSERT_FALSE(result.lines.empty());
    const int best = result.lines.front().score;
    ASSERT_LT(std::abs(best), kMateBound) << "a position without a forced mate";
    double total = 0;
    for (const SearchInfo& line : result.lines) total += std::exp((line.score - best) / teacher.temperature_cp);
    ASSERT_EQ(label.sample.policy.size(), result.lines.size());
    ASSERT_EQ(label.moves.size(), result.lines.size());
    for (std::size_t i = 0; i < result.lines.size(); ++i) {
      const SearchInfo& line = result.lines[i];
      EXPECT_EQ(label.moves[i], line.pv.front());
      EXPECT_EQ(label.sample.policy[i].slot, nn::policy_index(line.pv.front()));
      EXPECT_NEAR(label.sample.policy[i].probability,
                  std::exp((line.score - best) / teacher.temperature_cp) / total, 1e-6);
    }
    const WdlPermille wdl = score_to_wdl(best);
    EXPECT_FLOAT_EQ(label.sample.root_q, static_cast<float>(wdl.win - wdl.loss) / 1000.0f);
    Sample packed;
    pack_position(pos, packed);
    EXPECT_EQ(label.sample.planes, packed.planes);
    EXPECT_EQ(label.sample.white_to_move, packed.white_to_move);
    EXPECT_GT(label.nodes, 0u);
  }
  // A mate in one: the mating move is the whole target, and the value a win.
  const Position mate = Position::from_fen("6pk/5K1p/8/8/3W4/2p5/8/8 w 0 1");
  Searcher searcher(4);
  const TeacherLabel label = label_by_teacher(mate, teacher, searcher);
  ASSERT_EQ(label.sample.policy.size(), 1u);
  EXPECT_EQ(label.sample.policy[0].slot, nn::policy_index(parse_move(mate, "d4g7")));
  EXPECT_FLOAT_EQ(label.sample.policy[0].probability, 1.0f);
  EXPECT_GT(label.sample.root_q, 0.9f);
  EXPECT_GT(label.moves.size(), 1u);  // the other lines stay, at weight 0, for the game to skip
  EXPECT_EQ(label.weights[0], 1.0);
}

// A tactics sample: the position the record's random moves reach, where
// the side to move mates in N; the policy target spread evenly over moves
// that mate that fast (those of a mate in one checked by trying each legal
// move with the rules' end test); a win in 2N - 1 plies.
void check_tactics_game(const SelfPlayGame& game, const SelfPlayConfig& config, bool value = true) {
  const GameRecord& r = game.record;
  EXPECT_EQ(r.result, Outcome::kOngoing);
  EXPECT_EQ(r.opening_plies, static_cast<int>(r.moves.size()));
  ASSERT_EQ(game.samples.size(), 1u);
  const Sample& s = game.samples.front();
  Position pos = Position::start(config.rules);
  for (const Move& m : r.moves) pos.make(m);
  EXPECT_FALSE(game_status(pos).over());
  Sample expected;
  pack_position(pos, expected);
  EXPECT_EQ(s.planes, expected.planes);
  EXPECT_EQ(s.white_to_move, expected.white_to_move);
  EXPECT_EQ(s.ply, r.moves.size());
  // Without the value target: the policy alone, as a game cut without result.
  EXPECT_EQ(s.result, value ? 1 : 0);
  EXPECT_EQ(s.root_q, value ? 1.0f : 0.0f);
  EXPECT_EQ((s.flags & kNoResult) != 0, !value);
  const int moves = (s.plies_to_end + 1) / 2;
  ASSERT_TRUE(s.plies_to_end == 1 || s.plies_to_end == 3) << s.plies_to_end;
  EXPECT_EQ(r.termination, "mate in " + std::to_string(moves) + " to play");
  Searcher searcher(4);
  std::set<int> mating;
  for (const Move& m : mating_moves(pos, moves, searcher)) mating.insert(nn::policy_index(m));
  std::set<int> mate_in_one;
  for (const Move& m : test::mates_in_one_by_trying(pos)) mate_in_one.insert(nn::policy_index(m));
  EXPECT_EQ(mate_in_one.empty(), moves == 2) << "the mate's length";
  std::set<int> slots;
  for (const PolicyTarget& t : s.policy) {
    EXPECT_TRUE(slots.insert(t.slot).second) << "slot " << t.slot << " twice";
    EXPECT_FLOAT_EQ(t.probability, 1.0f / static_cast<float>(s.policy.size()));
    if (moves == 1) EXPECT_TRUE(mate_in_one.count(t.slot)) << "slot " << t.slot << " does not mate";
  }
  EXPECT_EQ(slots, mating);
  EXPECT_FALSE(slots.empty());
}

TEST(TacticsGame, TheSampleIsAProvenMateOverItsMatingMoves) {
  SelfPlayConfig config = tiny_selfplay();
  TacticsConfig tactics;
  int lengths[3] = {0, 0, 0};
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const SelfPlayGame game = play_tactics_game(config, tactics, seed, 5);
    SCOPED_TRACE("seed " + std::to_string(seed));
    check_tactics_game(game, config);
    ASSERT_EQ(game.samples.size(), 1u);
    EXPECT_EQ(game.samples[0].game, 5u);
    ++lengths[(game.samples[0].plies_to_end + 1) / 2];
    // The seed gives the same sample.
    EXPECT_EQ(play_tactics_game(config, tactics, seed, 5).samples, game.samples);
  }
  EXPECT_GT(lengths[1], 0);
  EXPECT_GT(lengths[2], 0);
  // max_moves 1: mates in one only; value false: the policy target alone.
  tactics.max_moves = 1;
  tactics.value = false;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const SelfPlayGame game = play_tactics_game(config, tactics, seed, 0);
    check_tactics_game(game, config, false);
    EXPECT_EQ(game.samples.at(0).plies_to_end, 1);
  }
  tactics.max_moves = 4;
  EXPECT_THROW(play_tactics_game(config, tactics, 1, 0), std::invalid_argument);
}

TEST(TacticsGame, TheLongestShareDrawsMatesOfTheLongestLength) {
  SelfPlayConfig config = tiny_selfplay();
  TacticsConfig tactics;
  // The seeds that give a mate in one with the first mate found.
  std::vector<std::uint64_t> quick;
  for (std::uint64_t seed = 1; seed <= 8; ++seed)
    if (play_tactics_game(config, tactics, seed, 0).samples.at(0).plies_to_end == 1) quick.push_back(seed);
  ASSERT_FALSE(quick.empty());
  // Share 1: every position is a proven mate in exactly two (the check
  // tries every move for a mate in one and finds none).
  tactics.longest_share = 1;
  for (std::uint64_t seed : quick) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const SelfPlayGame game = play_tactics_game(config, tactics, seed, 0);
    check_tactics_game(game, config);
    EXPECT_EQ(game.samples.at(0).plies_to_end, 3);
    EXPECT_EQ(play_tactics_game(config, tactics, seed, 0).samples, game.samples);
  }
  // A share between draws both lengths over the seeds.
  tactics.longest_share = 0.5;
  int lengths[3] = {0, 0, 0};
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const SelfPlayGame game = play_tactics_game(config, tactics, seed, 0);
    check_tactics_game(game, config);
    ++lengths[(game.samples.at(0).plies_to_end + 1) / 2];
  }
  EXPECT_GT(lengths[1], 0);
  EXPECT_GT(lengths[2], 0);
  for (double bad : {-0.1, 1.5, std::nan("")}) {
    tactics.longest_share = bad;
    EXPECT_THROW(play_tactics_game(config, tactics, 1, 0), std::invalid_argument) << bad;
  }
}

TEST(TeacherGame, TheSeedPicksTheOpeningAndNothingElse) {
  SelfPlayConfig config = tiny_selfplay();
  config.max_plies = 30;
  TeacherConfig teacher = small_teacher();
  const SelfPlayGame a = play_teacher_game(config, teacher, 11, 0);
  const SelfPlayGame b = play_teacher_game(config, teacher, 11, 0);
  EXPECT_EQ(a.record.moves, b.record.moves);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_NE(play_teacher_game(config, teacher, 12, 0).record.moves, a.record.moves);
  // Without sampled plies the searcher's best line is the whole game,
  // whatever the seed.
  teacher.sample_plies = 0;
  EXPECT_EQ(play_teacher_game(config, teacher, 11, 0).record.moves,
            play_teacher_game(config, teacher, 12, 0).record.moves);
}

TEST(TeacherGame, ASharperTemperatureConcentratesTheTarget) {
  SelfPlayConfig config = tiny_selfplay();
  config.max_plies = 16;
  TeacherConfig teacher = small_teacher();
  teacher.sample_plies = 0;
  auto mean_top = [&](double temperature) {
    teacher.temperature_cp = temperature;
    const SelfPlayGame game = play_teacher_game(config, teacher, 3, 0);
    double sum = 0;
    for (const Sample& s : game.samples) {
      float top = 0;
      for (const PolicyTarget& t : s.policy) top = std::max(top, t.probability);
      sum += top;
    }
    return sum / static_cast<double>(game.samples.size());
  };
  const double sharp = mean_top(5), flat = mean_top(5000);
  EXPECT_GT(sharp, flat);
  EXPECT_LT(flat, 0.5);  // four lines at almost equal weight
}

TEST(TeacherGame, BadSettingsAreRefusedNamingTheKey) {
  for (auto change : std::vector<std::function<void(TeacherConfig&)>>{
           [](TeacherConfig& t) { t.depth = 0; }, [](TeacherConfig& t) { t.multipv = 0; },
           [](TeacherConfig& t) { t.temperature_cp = 0; }, [](TeacherConfig& t) { t.sample_plies = -1; }}) {
    TeacherConfig t = small_teacher();
    change(t);
    EXPECT_THROW(t.validate(), std::invalid_argument);
  }
}

// Games where resignation comes easily: a low threshold, one move below it.
SelfPlayConfig resigning_selfplay() {
  SelfPlayConfig c = tiny_selfplay();
  c.resign_threshold = 0.05;
  c.resign_consecutive = 1;
  c.no_resign_share = 0;
  return c;
}

TEST(SelfPlayGame, ResignsWhenTheValueStaysLow) {
  // The control for the two tests below: these settings do resign.
  const SelfPlayConfig config = resigning_selfplay();
  int resigned = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const SelfPlayGame game = play_selfplay_game(config, material(), seed, 0);
    check_game(game, config);
    EXPECT_FALSE(game.no_resign);
    resigned += game.resigned;
  }
  EXPECT_GT(resigned, 0);
}

TEST(SelfPlayGame, NoResignGamesNeverEndByResignation) {
  SelfPlayConfig config = resigning_selfplay();
  config.no_resign_share = 1;
  int would = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const SelfPlayGame game = play_selfplay_game(config, material(), seed, 0);
    check_game(game, config);
    EXPECT_TRUE(game.no_resign);
    EXPECT_FALSE(game.resigned);
    EXPECT_NE(game.record.termination, "resignation");
    would += game.would_resign;
    if (!game.would_resign) {
      EXPECT_FALSE(game.false_resign);
    }
  }
  EXPECT_GT(would, 0);
}

TEST(SelfPlayGame, ThresholdZeroNeverResigns) {
  SelfPlayConfig config = resigning_selfplay();
  config.resign_threshold = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const SelfPlayGame game = play_selfplay_game(config, material(), seed, 0);
    check_game(game, config);
    EXPECT_FALSE(game.resigned);
    EXPECT_FALSE(game.no_resign);
    EXPECT_FALSE(game.would_resign);
  }
}

// ---------------------------------------------------------------------------
// run_selfplay: every shard exactly once

struct ShardContents {
  std::string name;
  ShardHeader header;
  std::vector<Sample> samples;
};

std::vector<ShardContents> read_all_shards(const RunDir& run) {
  std::vector<ShardContents> out;
  for (const std::string& path : run.shard_paths()) {
    ShardContents c;
    c.name = fs::path(path).filename().string();
    c.samples = read_shard(path, &c.header);
    out.push_back(std::move(c));
  }
  return out;
}

SelfPlayJob job_of(int games) {
  SelfPlayJob job;
  job.tag = "sp";
  job.games = games;
  job.model_version = 4;
  job.seed = 99;
  job.evaluator = material();
  return job;
}

// An evaluator sure that one colour is lost: uniform priors, and a value of
// a near-certain loss whenever that colour is to move (a near-certain win
// for the other), so only that colour's searches fall below the threshold.
class OneSideLostEvaluator : public Evaluator {
 public:
  explicit OneSideLostEvaluator(Color loser) : loser_(loser) {}
  void evaluate(std::span<const EvalInput> inputs, std::span<EvalOutput> outputs) override {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const int n = inputs[i].moves->size();
      outputs[i].policy.assign(static_cast<std::size_t>(n), n ? 1.0f / n : 0.0f);
      const bool losing = inputs[i].position->side_to_move() == loser_;
      outputs[i].win = losing ? 0.0f : 0.99f;
      outputs[i].draw = 0.01f;
      outputs[i].loss = losing ? 0.99f : 0.0f;
    }
  }
  std::string name() const override { return "one side lost"; }

 private:
  Color loser_;
};

TEST(SelfPlayGame, TheSideThatSeesItselfLostResigns) {
  SelfPlayConfig config = resigning_selfplay();
  config.resign_consecutive = 2;
  for (const Color loser : {kWhite, kBlack}) {
    SCOPED_TRACE(loser == kWhite ? "White lost" : "Black lost");
    const SelfPlayGame game = play_selfplay_game(config, std::make_shared<OneSideLostEvaluator>(loser), 5, 0);
    check_game(game, config);
    ASSERT_TRUE(game.resigned);
    EXPECT_EQ(game.record.termination, "resignation");
    EXPECT_EQ(game.record.result, loser == kWhite ? Outcome::kBlackWins : Outcome::kWhiteWins);
    // It resigns on its second move, instead of playing it: White after
    // one move each (2 plies), Black after two of White's and one of its own.
    EXPECT_EQ(game.record.moves.size(), loser == kWhite ? 2u : 3u);
    EXPECT_EQ(final_position(game.record).side_to_move(), loser);
    for (const Sample& s : game.samples)
      EXPECT_EQ(s.result, (s.white_to_move == 1) == (loser == kWhite) ? -1 : 1) << "ply " << s.ply;
  }
}

TEST(SelfPlayGame, AFalseResignationIsCountedAsOne) {
  // White would resign, but in a no-resign game it plays on and the game
  // is cut without a result (no adjudication): White did not lose.
  SelfPlayConfig config = resigning_selfplay();
  config.no_resign_share = 1;
  config.max_plies = 8;
  config.adjudicate_cp = 0;
  const SelfPlayGame game = play_selfplay_game(config, std::make_shared<OneSideLostEvaluator>(kWhite), 5, 0);
  check_game(game, config);
  EXPECT_TRUE(game.no_resign);
  EXPECT_FALSE(game.resigned);
  EXPECT_TRUE(game.cut);
  EXPECT_TRUE(game.would_resign);
  EXPECT_TRUE(game.false_resign);

  // The same through a worker: every game counts in the statistics and
  // the false-resign rate.
  TempDir dir("sp-false-resign");
  const RunDir run(dir.path());
  SelfPlayJob job = job_of(4);
  job.evaluator = std::make_shared<OneSideLostEvaluator>(kWhite);
  const SelfPlayStats stats = run_selfplay(run, config, job);
  EXPECT_EQ(stats.games, 4);
  EXPECT_EQ(stats.no_resign_games, 4);
  EXPECT_EQ(stats.would_resign, 4);
  EXPECT_EQ(stats.false_resign, 4);
  EXPECT_DOUBLE_EQ(stats.false_resign_rate(), 1.0);
  EXPECT_EQ(stats.resigned, 0);

  // With resignation allowed the same games end at once, all won by Black,
  // and none is counted as a false resignation.
  config.no_resign_share = 0;
  TempDir dir2("sp-true-resign");
  const SelfPlayStats resigning = run_selfplay(RunDir(dir2.path()), config, job);
  EXPECT_EQ(resigning.resigned, 4);
  EXPECT_EQ(resigning.black_wins, 4);
  EXPECT_EQ(resigning.would_resign, 0);
  EXPECT_EQ(resigning.false_resign, 0);
}

// A job stopped after its first shard and run again: the same shards,
// samples and games as one uninterrupted run, none lost and none twice.
void expect_stopped_and_resumed_equal_whole(const SelfPlayConfig& config, const SelfPlayJob& job) {

  TempDir whole_dir("sp-whole");
  const RunDir whole(whole_dir.path());
  const SelfPlayStats all = run_selfplay(whole, config, job);
  EXPECT_EQ(all.games, 8);
  EXPECT_EQ(all.games_skipped, 0);
  EXPECT_EQ(all.shards, 4);
  EXPECT_EQ(whole.shard_sequences("sp"), (std::vector<int>{0, 1, 2, 3}));

  TempDir parts_dir("sp-parts");
  const RunDir parts(parts_dir.path());
  std::atomic<bool> stop{false};
  const SelfPlayStats first = run_selfplay(
      parts, config, job, [&](const SelfPlayStats& s, int) { if (s.shards >= 1) stop = true; }, &stop);
  EXPECT_EQ(first.shards, 1);
  EXPECT_EQ(parts.shard_sequences("sp"), (std::vector<int>{0}));
  // Whole files only: no temporary file left behind, one PGN for the shard.
  EXPECT_EQ(file_names(parts.path("selfplay")), (std::vector<std::string>{"sp-000000.shard"}));
  EXPECT_EQ(file_names(parts.path("games")), (std::vector<std::string>{"sp-000000.pgn"}));

  stop = false;
  const SelfPlayStats second = run_selfplay(parts, config, job, {}, &stop);
  EXPECT_EQ(second.games_skipped, 2);
  EXPECT_EQ(second.games, 6);
  EXPECT_EQ(second.shards, 3);
  // A third run has nothing left to do.
  const SelfPlayStats third = run_selfplay(parts, config, job);
  EXPECT_EQ(third.games_skipped, 8);
  EXPECT_EQ(third.games, 0);
  EXPECT_EQ(third.shards, 0);

  const auto expected = read_all_shards(whole), got = read_all_shards(parts);
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(got[i].name);
    EXPECT_EQ(got[i].name, expected[i].name);
    EXPECT_EQ(got[i].header.games, 2u);
    EXPECT_EQ(got[i].header.model_version, 4u);
    EXPECT_EQ(got[i].header.rules, config.rules.name());
    EXPECT_EQ(got[i].header.samples, got[i].samples.size());
    EXPECT_EQ(got[i].samples, expected[i].samples);
  }
  EXPECT_EQ(file_names(parts.path("selfplay")), file_names(whole.path("selfplay")));

  // The games of each shard, in order, and the samples agree with them.
  for (int shard = 0; shard < 4; ++shard) {
    const std::vector<GameRecord> games = read_pgn_file(parts.games_path("sp", shard));
    ASSERT_EQ(games.size(), 2u) << "shard " << shard;
    const std::vector<GameRecord> same = read_pgn_file(whole.games_path("sp", shard));
    ASSERT_EQ(same.size(), 2u);
    for (int g = 0; g < 2; ++g) {
      EXPECT_EQ(games[g].round, std::to_string(shard * 2 + g + 1));
      EXPECT_EQ(games[g].moves, same[g].moves);
      EXPECT_EQ(games[g].result, same[g].result);
      SelfPlayGame as_played;
      as_played.record = games[g];
      as_played.resigned = games[g].termination == "resignation";
      as_played.cut = games[g].termination == kMaxPliesTermination;
      for (const Sample& s : got[shard].samples)
        if (s.game == static_cast<std::uint32_t>(g)) as_played.samples.push_back(s);
      SCOPED_TRACE("shard " + std::to_string(shard) + " game " + std::to_string(g));
      if (job.tactics)
        check_tactics_game(as_played, config);
      else
        check_game(as_played, config);
    }
  }
}

TEST(RunSelfPlay, StoppedThenResumedEqualsAnUninterruptedRun) {
  SelfPlayConfig config = tiny_selfplay();
  config.parallel_games = 1;
  expect_stopped_and_resumed_equal_whole(config, job_of(8));
}

// The warm start's games resume the same way, in the middle of a generation.
TEST(RunSelfPlay, AStoppedWarmStartResumesWithoutLossOrDuplicates) {
  SelfPlayConfig config = tiny_selfplay();
  config.parallel_games = 1;
  config.max_plies = 20;
  SelfPlayJob job = job_of(8);
  job.evaluator = nullptr;
  job.teacher = small_teacher();
  expect_stopped_and_resumed_equal_whole(config, job);
}

// And a tactics job's mates.
TEST(RunSelfPlay, AStoppedTacticsJobResumesWithoutLossOrDuplicates) {
  SelfPlayConfig config = tiny_selfplay();
  config.parallel_games = 1;
  SelfPlayJob job = job_of(8);
  job.evaluator = nullptr;
  job.tactics = TacticsConfig{};
  job.tactics->max_moves = 1;
  expect_stopped_and_resumed_equal_whole(config, job);
}

TEST(RunSelfPlay, ShardsDoNotDependOnThreadsOrJobSize) {
  // Game g's seed comes from the job's seed and g alone.
  SelfPlayConfig one = tiny_selfplay();
  one.parallel_games = 1;
  SelfPlayConfig two = tiny_selfplay();
  two.parallel_games = 2;
  TempDir a_dir("sp-threads-a"), b_dir("sp-threads-b");
  const RunDir a(a_dir.path()), b(b_dir.path());
  run_selfplay(a, one, job_of(4));
  run_selfplay(b, two, job_of(5));  // a third, partial shard
  const auto sa = read_all_shards(a), sb = read_all_shards(b);
  ASSERT_EQ(sa.size(), 2u);
  ASSERT_EQ(sb.size(), 3u);
  EXPECT_EQ(sb[2].header.games, 1u);
  for (std::size_t i = 0; i < sa.size(); ++i) EXPECT_EQ(sa[i].samples, sb[i].samples) << sa[i].name;
}

TEST(RunSelfPlay, ShardKeepsItsGamesInOrder) {
  // More than nine games in one shard: game 10 must come after game 2.
  SelfPlayConfig config = tiny_selfplay();
  config.max_plies = 6;
  config.full_search_share = 1;
  config.games_per_shard = 11;
  TempDir dir("sp-order");
  const RunDir run(dir.path());
  run_selfplay(run, config, job_of(11));
  const std::vector<GameRecord> games = read_pgn_file(run.games_path("sp", 0));
  ASSERT_EQ(games.size(), 11u);
  for (int g = 0; g < 11; ++g) EXPECT_EQ(games[g].round, std::to_string(g + 1)) << "game " << g << " of the file";
  const std::vector<Sample> samples = read_shard(run.shard_path("sp", 0));
  ASSERT_FALSE(samples.empty());
  for (std::size_t i = 1; i < samples.size(); ++i)
    EXPECT_LE(samples[i - 1].game, samples[i].game) << "sample " << i;
}

TEST(RunSelfPlay, ATeacherJobNeedsNoEvaluatorAndWritesReadableShards) {
  SelfPlayConfig config = tiny_selfplay();
  config.max_plies = 20;
  SelfPlayJob job = job_of(4);
  job.evaluator = nullptr;
  job.teacher = small_teacher();
  TempDir dir("sp-teacher");
  const RunDir run(dir.path());
  const SelfPlayStats stats = run_selfplay(run, config, job);
  EXPECT_EQ(stats.games, 4);
  const auto shards = read_all_shards(run);
  ASSERT_EQ(shards.size(), 2u);
  std::uint64_t samples = 0;
  for (const auto& shard : shards) samples += shard.samples.size();
  EXPECT_EQ(samples, stats.samples);
  EXPECT_EQ(stats.samples, stats.finished_moves);  // every position of every game
  const std::vector<GameRecord> games = read_pgn_file(run.games_path("sp", 0));
  ASSERT_EQ(games.size(), 2u);
  EXPECT_EQ(games[0].event, "ultima warm start");
  // The same games as played one by one from the job's seeds.
  const SelfPlayGame first = play_teacher_game(config, *job.teacher, game_seed(job.seed, job.tag, 0), 0);
  EXPECT_EQ(games[0].moves, first.record.moves);
  job.teacher->depth = 0;
  EXPECT_THROW(run_selfplay(run, config, job), std::invalid_argument);
}

TEST(RunSelfPlay, RejectsABadConfigOrNoEvaluator) {
  TempDir dir("sp-bad");
  const RunDir run(dir.path());
  SelfPlayConfig config = tiny_selfplay();
  SelfPlayJob job = job_of(2);
  job.evaluator = nullptr;
  EXPECT_THROW(run_selfplay(run, config, job), std::invalid_argument);
  config.games_per_shard = 0;
  EXPECT_THROW(run_selfplay(run, config, job_of(2)), std::invalid_argument);
}

// ---------------------------------------------------------------------------
// RunDir

void touch(const std::string& path) { std::ofstream(path) << "x"; }

TEST(RunDir, ModelVersionsIgnoreOtherAndTemporaryFiles) {
  TempDir dir("rundir-models");
  const RunDir run(dir.path() + "/run/");
  EXPECT_EQ(run.root(), dir.path() + "/run");
  EXPECT_TRUE(run.model_versions().empty());
  EXPECT_FALSE(run.latest_model().has_value());
  EXPECT_FALSE(run.best_model().has_value());
  for (const char* name : {"model-000003.unn", "model-000001.unn", "model-000002.unn.tmp-12-34", "model-abc.unn",
                           "model-000004.unnx", "notes.txt", "best.tmp-1-2", "xmodel-000009.unn"})
    touch(run.path(std::string("models/") + name));
  EXPECT_EQ(run.model_path(3), run.path("models/model-000003.unn"));
  EXPECT_EQ(run.model_versions(), (std::vector<std::uint64_t>{1, 3}));
  EXPECT_EQ(run.latest_model(), 3u);
}

TEST(RunDir, BestModelFallsBackToTheLatest) {
  TempDir dir("rundir-best");
  const RunDir run(dir.path());
  touch(run.model_path(1));
  touch(run.model_path(2));
  EXPECT_EQ(run.best_model(), 2u);
  run.set_best_model(1);
  EXPECT_EQ(run.best_model(), 1u);
  run.set_best_model(2);
  EXPECT_EQ(run.best_model(), 2u);
  run.set_best_model(1);
  // Another process reads the same directory.
  EXPECT_EQ(RunDir(dir.path()).best_model(), 1u);
  // A best version whose file is gone: the latest.
  run.set_best_model(7);
  EXPECT_EQ(run.best_model(), 2u);
  EXPECT_EQ(file_names(run.path("models")),
            (std::vector<std::string>{"best", "model-000001.unn", "model-000002.unn"}));
}

TEST(RunDir, ShardSequencesPerTag) {
  TempDir dir("rundir-shards");
  const RunDir run(dir.path());
  for (const auto& [tag, seq] : std::vector<std::pair<std::string, int>>{{"a", 2}, {"a", 0}, {"b", 1}, {"ab", 5}})
    touch(run.shard_path(tag, seq));
  touch(run.shard_path("a", 3) + ".tmp-1-2");
  touch(run.path("selfplay/a-x-000004.shard"));
  touch(run.path("selfplay/readme.txt"));
  EXPECT_EQ(run.shard_path("a", 2), run.path("selfplay/a-000002.shard"));
  EXPECT_EQ(run.games_path("a", 2), run.path("games/a-000002.pgn"));
  EXPECT_EQ(run.shard_sequences("a"), (std::vector<int>{0, 2}));
  EXPECT_EQ(run.shard_sequences("b"), (std::vector<int>{1}));
  EXPECT_EQ(run.shard_sequences("ab"), (std::vector<int>{5}));
  EXPECT_TRUE(run.shard_sequences("c").empty());
  const std::vector<std::string> paths = run.shard_paths();
  EXPECT_EQ(paths, (std::vector<std::string>{run.shard_path("a", 0), run.shard_path("a", 2),
                                             run.path("selfplay/a-x-000004.shard"), run.shard_path("ab", 5),
                                             run.shard_path("b", 1)}));
}

TEST(RunDir, WriteFileAtomicallyLeavesNoTemporaryFile) {
  TempDir dir("rundir-atomic");
  const std::string path = dir.path() + "/file.txt";
  write_file_atomically(path, "first\n");
  write_file_atomically(path, "second, longer\n");
  EXPECT_EQ(read_file(path), "second, longer\n");
  EXPECT_EQ(file_names(dir.path()), (std::vector<std::string>{"file.txt"}));
  try {
    write_file_atomically(dir.path() + "/missing/file.txt", "x");
    FAIL() << "no error for a missing folder";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing/file.txt"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_file(dir.path() + "/nothing"), std::runtime_error);
  EXPECT_EQ(file_names(dir.path()), (std::vector<std::string>{"file.txt"}));
}

// ---------------------------------------------------------------------------
// TrainConfig

TEST(TrainConfig, WarmupRisesLinearly) {
  TrainConfig c;
  c.lr = 0.1f;
  c.warmup_steps = 10;
  c.lr_schedule = "constant";
  for (int step = 0; step < 10; ++step) EXPECT_NEAR(c.lr_at(step), 0.1 * (step + 1) / 10, 1e-6) << step;
  EXPECT_FLOAT_EQ(c.lr_at(10), 0.1f);
  EXPECT_FLOAT_EQ(c.lr_at(100000), 0.1f);
  c.warmup_steps = 0;
  EXPECT_FLOAT_EQ(c.lr_at(0), 0.1f);
}

TEST(TrainConfig, StepSchedule) {
  TrainConfig c;
  c.lr = 0.1f;
  c.warmup_steps = 10;
  c.lr_schedule = "step";
  c.lr_decay_steps = 100;
  c.lr_decay_factor = 0.5f;
  EXPECT_NEAR(c.lr_at(10), 0.1, 1e-7);
  EXPECT_NEAR(c.lr_at(109), 0.1, 1e-7);
  EXPECT_NEAR(c.lr_at(110), 0.05, 1e-7);
  EXPECT_NEAR(c.lr_at(209), 0.05, 1e-7);
  EXPECT_NEAR(c.lr_at(210), 0.025, 1e-7);
  EXPECT_NEAR(c.lr_at(1010), 0.1 * std::pow(0.5, 10), 1e-9);
}

TEST(TrainConfig, CosineReachesLrMin) {
  TrainConfig c;
  c.lr = 0.1f;
  c.lr_min = 0.001f;
  c.warmup_steps = 10;
  c.lr_schedule = "cosine";
  c.lr_decay_steps = 1000;
  EXPECT_NEAR(c.lr_at(10), 0.1, 1e-6);
  EXPECT_NEAR(c.lr_at(510), (0.1 + 0.001) / 2, 1e-6);
  EXPECT_NEAR(c.lr_at(1010), 0.001, 1e-7);
  EXPECT_NEAR(c.lr_at(50000), 0.001, 1e-7);
  float previous = c.lr_at(10);
  for (std::uint64_t step = 11; step < 1100; ++step) {
    ASSERT_LE(c.lr_at(step), previous + 1e-7f) << step;
    ASSERT_GE(c.lr_at(step), 0.001f - 1e-7f) << step;
    previous = c.lr_at(step);
  }
}

void expect_invalid_naming(const TrainConfig& c, const std::string& key) {
  try {
    c.validate();
    ADD_FAILURE() << "no error for a bad " << key;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
  }
}

TEST(TrainConfig, ValidateNamesTheBadKey) {
  TrainConfig good;
  EXPECT_NO_THROW(good.validate());
  for (const char* schedule : {"constant", "step", "cosine"}) {
    TrainConfig c;
    c.lr_schedule = schedule;
    EXPECT_NO_THROW(c.validate()) << schedule;
  }
  TrainConfig c = good;
  c.optimizer = "adam";
  expect_invalid_naming(c, "optimizer");
  c = good;
  c.lr_schedule = "linear";
  expect_invalid_naming(c, "lr_schedule");
  c = good;
  c.batch_size = 0;
  expect_invalid_naming(c, "batch_size");
  c = good;
  c.lr = 0;
  expect_invalid_naming(c, "lr");
}

// ---------------------------------------------------------------------------
// rating_from_results

TEST(RatingFromResults, EvenScoreGivesTheOpponentsRating) {
  EXPECT_NEAR(rating_from_results({{1500, 10, 20}}), 1500, 0.01);
  EXPECT_NEAR(rating_from_results({{1500, 0.5, 1}}), 1500, 0.01);
  // Half the points against 1000 and against 2000: the middle.
  EXPECT_NEAR(rating_from_results({{1000, 50, 100}, {2000, 50, 100}}), 1500, 0.01);
}

TEST(RatingFromResults, SeventyFivePercentIsAbout191Above) {
  // -400 log10(1/0.75 - 1) = 190.85; the virtual draw hardly moves it over
  // 4000 games.
  EXPECT_NEAR(rating_from_results({{1000, 3000, 4000}}), 1000 + 190.85, 0.5);
  EXPECT_NEAR(rating_from_results({{1000, 750, 1000}, {1000, 750, 1000}}), 1000 + 190.85, 0.5);
  // And the mirror.
  EXPECT_NEAR(rating_from_results({{1000, 1000, 4000}}), 1000 - 190.85, 0.5);
}

TEST(RatingFromResults, CleanSweepIsFiniteAndAbove) {
  const double r = rating_from_results({{1200, 10, 10}});
  EXPECT_TRUE(std::isfinite(r));
  EXPECT_GT(r, 1200 + 190);
  // 10.5 of 11 with the virtual draw.
  EXPECT_NEAR(r, 1200 + elo_from_score(10.5 / 11), 0.5);
  const double whitewash = rating_from_results({{1200, 0, 10}});
  EXPECT_TRUE(std::isfinite(whitewash));
  EXPECT_LT(whitewash, 1200);
  // More wins, higher rating.
  EXPECT_GT(rating_from_results({{1200, 20, 20}}), r);
}

TEST(RateOnLadder, IntervalFromTheLikelihoodsCurvature) {
  // 10 of 20 against 1000 (with the virtual draw 10.5 of 21): 1000, and
  // the curvature (ln 10 / 400)^2 * 21 * 0.25 gives a half-width of
  // 1.96 * 400 / ln 10 / sqrt(5.25) = 148.6.
  const LadderRating even = rate_on_ladder({{1000, 10, 20}});
  EXPECT_NEAR(even.elo, 1000, 0.01);
  EXPECT_NEAR(even.lower, 1000 - 148.6, 0.1);
  EXPECT_NEAR(even.upper, 1000 + 148.6, 0.1);
  EXPECT_EQ(even.games, 20);
  // Half the points against 1000 and 2000: 1500, each opponent 500 away
  // (expected score p = 0.9468): 1.96 * 173.72 / sqrt(2 * 101 * p (1 - p)) = 106.7.
  const LadderRating split = rate_on_ladder({{1000, 50, 100}, {2000, 50, 100}});
  EXPECT_NEAR(split.elo, 1500, 0.01);
  EXPECT_NEAR(split.upper - split.elo, 106.7, 0.1);
  EXPECT_NEAR(split.elo - split.lower, 106.7, 0.1);
  // Four times the games, half the width; a sweep stays finite.
  const LadderRating more = rate_on_ladder({{1000, 40, 80}});
  EXPECT_NEAR(more.upper - more.elo, 148.6 * std::sqrt(21.0 / 81.0), 0.1);
  const LadderRating sweep = rate_on_ladder({{1000, 10, 10}});
  EXPECT_TRUE(std::isfinite(sweep.lower) && std::isfinite(sweep.upper));
  EXPECT_GT(sweep.lower, 1000);
  // Even scores against levels 200 below and above: 64 games reach +-100
  // (the default of 32 a level, two levels a generation), 48 do not.
  EXPECT_LT(rate_on_ladder({{800, 16, 32}, {1200, 16, 32}}).upper - 1000, 100);
  EXPECT_GT(rate_on_ladder({{800, 12, 24}, {1200, 12, 24}}).upper - 1000, 100);
  const LadderRating none = rate_on_ladder({{1000, 0, 0}});
  EXPECT_TRUE(std::isnan(none.elo) && std::isnan(none.lower) && std::isnan(none.upper));
  EXPECT_EQ(none.games, 0);
}

TEST(RatingFromResults, NaNWithoutGames) {
  EXPECT_TRUE(std::isnan(rating_from_results({})));
  EXPECT_TRUE(std::isnan(rating_from_results({{1000, 0, 0}})));
}

// ---------------------------------------------------------------------------
// RunConfig

std::string source_file(const std::string& relative) {
  return std::string(ULTIMA_SOURCE_DIR) + "/" + relative;
}

TEST(RunConfig, ShippedConfigsParseAndRoundTrip) {
  // Every run config shipped in configs/ and its overlays in
  // configs/experiments/, the three the README names among them.
  std::set<std::string> names;
  for (const char* folder : {"configs", "configs/experiments"})
    for (const auto& entry : fs::directory_iterator(source_file(folder)))
      if (entry.path().extension() == ".yaml") names.insert(folder + ("/" + entry.path().filename().string()));
  for (const char* expected : {"configs/tiny.yaml", "configs/cpu.yaml", "configs/gpu.yaml",
                               "configs/experiments/cpu-mate.yaml"})
    EXPECT_TRUE(names.count(expected)) << expected;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    loop::RunConfig c;
    ASSERT_NO_THROW(c = loop::RunConfig::load(source_file(name)));
    const std::string yaml = c.to_yaml();
    loop::RunConfig again;
    ASSERT_NO_THROW(again = loop::RunConfig::parse(yaml, "resolved"));
    EXPECT_EQ(again.to_yaml(), yaml);
  }
  const loop::RunConfig tiny = loop::RunConfig::load(source_file("configs/tiny.yaml"));
  EXPECT_EQ(tiny.name, "tiny");
  EXPECT_EQ(tiny.seed, 7u);
  EXPECT_EQ(tiny.selfplay.games_per_shard, 4);
  EXPECT_EQ(tiny.selfplay.max_plies, 150);
  EXPECT_EQ(tiny.training.seed, 7u);
  EXPECT_EQ(tiny.training.window.min_samples, 1000u);
  EXPECT_EQ(tiny.selfplay.rules.name(), tiny.rules.name());
}

// Each config in configs/experiments/ keeps the config of the run it
// documents: its resolved text, what `ultima loop --config FILE
// --print-config` prints, is recorded in configs/experiments/resolved/
// under the same name. A change to a base config or to a default of the
// code that reaches an old run's config fails here, instead of changing
// that run's config unnoticed.
TEST(RunConfig, ExperimentConfigsResolveToTheirRecordedCopies) {
  const std::string folder = "configs/experiments";
  auto yaml_files = [](const std::string& dir) {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(source_file(dir)))
      if (entry.is_regular_file() && entry.path().extension() == ".yaml")
        names.insert(entry.path().filename().string());
    return names;
  };
  const std::set<std::string> configs = yaml_files(folder), recorded = yaml_files(folder + "/resolved");
  EXPECT_TRUE(configs.count("cpu-gumbel.yaml"));
  for (const std::string& name : configs) {
    const std::string config_path = folder + "/" + name, copy_path = folder + "/resolved/" + name;
    const std::string record = "ultima loop --config " + config_path + " --print-config > " + copy_path;
    if (!recorded.count(name)) {
      ADD_FAILURE() << config_path << " has no recorded copy " << copy_path << "; record it with: " << record;
      continue;
    }
    std::string resolved;
    loop::RunConfig c;
    try {
      c = loop::RunConfig::load(source_file(config_path));
      resolved = c.to_yaml();
    } catch (const std::exception& e) {
      ADD_FAILURE() << config_path << " does not load: " << e.what();
      continue;
    }
    const std::string copy = read_file(source_file(copy_path));
    if (resolved == copy) continue;
    // Name the keys whose values differ (where the copy still reads), and
    // the first line that differs.
    std::string keys;
    try {
      for (const std::string& key : c.differing_keys(loop::RunConfig::parse(copy, copy_path))) keys += " " + key;
      if (keys.empty())
        keys = " none by value; the text differs (a key the program gained, or a number printed differently)";
    } catch (const std::exception& e) {
      keys = std::string(" unknown, as the copy no longer reads: ") + e.what();
    }
    std::istringstream now(resolved), then(copy);
    std::string line_now, line_then;
    int line = 0;
    while (true) {
      ++line;
      const bool more_now = static_cast<bool>(std::getline(now, line_now));
      const bool more_then = static_cast<bool>(std::getline(then, line_then));
      if (!more_now) line_now = "(end)";
      if (!more_then) line_then = "(end)";
      if (line_now != line_then || (!more_now && !more_then)) break;
    }
    ADD_FAILURE() << config_path << " no longer resolves to its recorded copy " << copy_path
                  << ": a change to a base config or to a default of the code changed the config of the run it "
                  << "documents. Keys that differ:" << keys << ". First differing line, " << line << ": now '"
                  << line_now << "', recorded '" << line_then << "'. State the run's value in the config (or in the "
                  << "frozen config it is based on); only where the config is meant to follow the change, record it "
                  << "again: " << record;
  }
  for (const std::string& name : recorded)
    EXPECT_TRUE(configs.count(name)) << folder << "/resolved/" << name << " is a recorded copy without its config "
                                     << folder << "/" << name << "; remove it with the config";
}

TEST(RunConfig, BuiltinConfigParses) {
  loop::RunConfig c;
  ASSERT_NO_THROW(c = loop::RunConfig::parse(loop::builtin_config_text(), "(built-in)"));
  EXPECT_EQ(c.to_yaml(), loop::RunConfig::load(source_file("configs/cpu.yaml")).to_yaml());
}

// A folder of config files for the overlay tests.
struct ConfigFolder {
  fs::path dir = fs::temp_directory_path() / ("ultima-overlay-" + std::to_string(::getpid()));
  ConfigFolder() {
    fs::remove_all(dir);
    fs::create_directories(dir / "sub");
  }
  ~ConfigFolder() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    ultima::write_file_atomically((dir / name).string(), text);
    return (dir / name).string();
  }
};

TEST(RunConfig, AnOverlayLaysItsKeysOverItsBase) {
  const ConfigFolder folder;
  folder.write("base.yaml", "name: base\nseed: 3\nselfplay:\n  max_plies: 90\n  parallel_games: 4\n"
                            "evaluation:\n  levels: [novice, beginner]\n");
  // Relative to the overlay's own folder; a list replaces the base's whole.
  const std::string path =
      folder.write("sub/over.yaml", "base: ../base.yaml\nname: over\nselfplay:\n  max_plies: 60\n"
                                    "evaluation:\n  levels: [novice]\n");
  const loop::RunConfig c = loop::RunConfig::load(path);
  EXPECT_EQ(c.name, "over");
  EXPECT_EQ(c.seed, 3u);
  EXPECT_EQ(c.selfplay.max_plies, 60);
  EXPECT_EQ(c.selfplay.parallel_games, 4);
  EXPECT_EQ(c.eval.levels, std::vector<std::string>{"novice"});
  const loop::RunConfig base = loop::RunConfig::load((folder.dir / "base.yaml").string());
  EXPECT_EQ(c.differing_keys(base), (std::vector<std::string>{"evaluation.levels", "name", "selfplay.max_plies"}));
  EXPECT_TRUE(c.differing_keys(c).empty());
}

TEST(RunConfig, BadOverlaysAreErrorsNamingTheFiles) {
  const ConfigFolder folder;
  auto expect_error = [](const std::string& path, const std::string& words) {
    try {
      loop::RunConfig::load(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_error(folder.write("a.yaml", "base: missing.yaml\n"), "missing.yaml");
  folder.write("loop1.yaml", "base: loop2.yaml\n");
  expect_error(folder.write("loop2.yaml", "base: loop1.yaml\n"), "loop");
  expect_error(folder.write("b.yaml", "base: [x]\n"), "base must be a file name");
  // A bad key of the base is named, with both files.
  folder.write("badbase.yaml", "selfplay:\n  max_plys: 3\n");
  expect_error(folder.write("c.yaml", "base: badbase.yaml\n"), "selfplay.max_plys");
  expect_error((folder.dir / "c.yaml").string(), "badbase.yaml");
  // Text without a file has no folder to find a base in.
  EXPECT_THROW(loop::RunConfig::parse("base: cpu.yaml\n", "text"), std::invalid_argument);
}

void expect_config_error(const std::string& yaml, const std::string& key) {
  try {
    loop::RunConfig::parse(yaml, "test.yaml");
    ADD_FAILURE() << "no error for:\n" << yaml;
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(key), std::string::npos) << what;
    EXPECT_NE(what.find("test.yaml"), std::string::npos) << what;
  }
}

TEST(RunConfig, AdaptiveEvaluationKeys) {
  const loop::RunConfig defaults = loop::RunConfig::parse("name: x\n", "test.yaml");
  EXPECT_EQ(defaults.eval.levels_per_generation, 2);
  EXPECT_EQ(defaults.eval.levels.size(), 9u);
  EXPECT_DOUBLE_EQ(defaults.eval.initial_until_score, 0.95);
  const loop::RunConfig c = loop::RunConfig::parse(
      "evaluation:\n  levels_per_generation: 0\n  initial_until_score: 1\n  levels: [casual]\n", "test.yaml");
  EXPECT_EQ(c.eval.levels_per_generation, 0);
  EXPECT_DOUBLE_EQ(c.eval.initial_until_score, 1.0);
  // The resolved text reads back the same.
  EXPECT_TRUE(loop::RunConfig::parse(c.to_yaml(), "again").differing_keys(c).empty());
  expect_config_error("evaluation:\n  levels_per_generation: -1\n", "evaluation.levels_per_generation");
  expect_config_error("evaluation:\n  initial_until_score: 1.5\n", "evaluation.initial_until_score");
  expect_config_error("evaluation:\n  levels: [novice, casual, novice]\n", "names level 'novice' twice");
}

TEST(RunConfig, QRatioAndEvaluationNoiseAreRead) {
  const loop::RunConfig c =
      loop::RunConfig::parse("training:\n  q_ratio: 0.25\nevaluation:\n  gumbel_noise: 0\n", "test.yaml");
  EXPECT_EQ(c.training.q_ratio, 0.25f);
  EXPECT_EQ(c.eval.gumbel_noise, 0.0f);
}

TEST(RunConfig, TheTacticsShareIsReadAndKeptInRange) {
  EXPECT_EQ(loop::RunConfig::parse("name: x\n", "test.yaml").training.tactics_share, 0.0f);
  const loop::RunConfig c = loop::RunConfig::parse("training:\n  tactics_share: 0.25\n", "test.yaml");
  EXPECT_EQ(c.training.tactics_share, 0.25f);
  EXPECT_TRUE(loop::RunConfig::parse(c.to_yaml(), "again").differing_keys(c).empty());
  const loop::RunConfig share = loop::RunConfig::load(source_file("configs/experiments/cpu-tactics-share.yaml"));
  EXPECT_EQ(share.training.tactics_share, 0.25f);
  EXPECT_EQ(share.tactics.positions, 192);
  expect_config_error("training:\n  tactics_share: 0.95\n", "tactics_share");
  expect_config_error("training:\n  tactics_share: -0.1\n", "tactics_share");
  expect_config_error("training:\n  tactics_share: .nan\n", "tactics_share");
}

// The defaults are the recipe of the main config (docs/experiments.md), so
// a config stating only sizes, as gpu.yaml does, gets it.
TEST(RunConfig, TheDefaultsAreTheRecipe) {
  const loop::RunConfig plain = loop::RunConfig::parse("name: x\n", "test.yaml");
  EXPECT_TRUE(plain.selfplay.gumbel);
  EXPECT_EQ(plain.selfplay.policy_target, "gumbel");
  EXPECT_FALSE(plain.selfplay.gumbel_rescale_q);
  EXPECT_EQ(plain.selfplay.gumbel_c_scale, 1.0f);
  EXPECT_TRUE(plain.selfplay.mate_scan);
  EXPECT_EQ(plain.selfplay.resign_threshold, 0.0);
  EXPECT_EQ(plain.selfplay.adjudicate_cp, 100);
  EXPECT_EQ(plain.training.q_ratio, 0.5f);
  EXPECT_EQ(plain.training.ema_halflife, 400);
  EXPECT_TRUE(plain.eval.gumbel);
  EXPECT_TRUE(plain.eval.mate_scan);
  EXPECT_EQ(plain.eval.gumbel_noise, 1.0f);
  EXPECT_EQ(plain.eval.promotion, "continuous");
  const loop::RunConfig gpu = loop::RunConfig::load(source_file("configs/gpu.yaml"));
  EXPECT_TRUE(gpu.selfplay.gumbel);
  EXPECT_EQ(gpu.selfplay.policy_target, "gumbel");
  EXPECT_EQ(gpu.selfplay.resign_threshold, 0.0);
}

TEST(RunConfig, RenamedKeysOfOldRunDirectoriesAreStillRead) {
  const loop::RunConfig old = loop::RunConfig::parse(
      "selfplay:\n  mcts_batch: 3\n  fpu_reduction: 0.2\nevaluation:\n  mcts_batch: 5\n", "test.yaml");
  EXPECT_EQ(old.selfplay.mcts_batch, 3);
  EXPECT_FLOAT_EQ(old.selfplay.fpu_reduction, 0.2f);
  EXPECT_EQ(old.eval.mcts_batch, 5);
  EXPECT_EQ(old.to_yaml().find("mcts_batch"), std::string::npos);
  expect_config_error("selfplay:\n  mcts_batch: 3\n  batch: 4\n", "selfplay.mcts_batch is the old name");
}

TEST(RunConfig, BadKeysAndValuesAreErrorsNamingTheKey) {
  EXPECT_NO_THROW(loop::RunConfig::parse("name: x\n", "test.yaml"));
  expect_config_error("name: x\nbogus_key: 3\n", "bogus_key");
  expect_config_error("selfplay:\n  batch: 4\n  batch: 5\n", "selfplay.batch is given twice");
  expect_config_error("selfplay:\n  parallel_games: 2\n  bogus_inner: 1\n", "selfplay.bogus_inner");
  expect_config_error("selfplay:\n  parallel_games: many\n", "selfplay.parallel_games");
  expect_config_error("evaluation:\n  promotion: sometimes\n", "evaluation.promotion");
  expect_config_error("training:\n  optimizer: adam\n", "optimizer");
  expect_config_error("selfplay:\n  max_plies: 0\n", "max_plies");
  expect_config_error("selfplay:\n  adjudicate_cp: -100\n", "adjudicate_cp");
  expect_config_error("selfplay:\n  gumbel_c_scale: 0\n", "gumbel_c_scale");
  expect_config_error("evaluation:\n  gumbel_c_scale: -1\n", "evaluation.gumbel_c_scale");
  expect_config_error("evaluation:\n  adjudicate_cp: 300\n", "evaluation.adjudicate_cp");
  expect_config_error("training:\n  q_ratio: 1.5\n", "q_ratio");
  expect_config_error("training:\n  ema_halflife: -1\n", "ema_halflife");
  expect_config_error("evaluation:\n  gumbel_noise: -1\n", "evaluation.gumbel_noise");
  expect_config_error("network: 3\n", "network");
  expect_config_error("network:\n  input_planes: 30\n", "network.input_planes must be 25 (the pieces and rules) or 33");
  EXPECT_EQ(loop::RunConfig::parse("network:\n  input_planes: 33\n", "test.yaml").network.input_planes, 33);
  EXPECT_EQ(loop::RunConfig::parse("name: x\n", "test.yaml").network.input_planes, 25);
}

// ---------------------------------------------------------------------------
// svg_line_chart

TEST(SvgLineChart, OnePolylinePerSeriesAndEscapedLabels) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<loop::PlotSeries> series = {
      {"net <a&b>", "#c00", {0, 1, 2, 3}, {0, 50, nan, 120}},
      {"other", "#00c", {0, 1, 2, 3}, {10, 20, 30, 40}},
      {"empty", "#0c0", {}, {}},
  };
  const std::string svg =
      loop::svg_line_chart("Elo <by generation>", "generation", "elo", series, {{"novice <1>", 400}});
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  std::string end = svg;
  while (!end.empty() && std::isspace(static_cast<unsigned char>(end.back()))) end.pop_back();
  EXPECT_TRUE(end.ends_with("</svg>"));
  std::size_t polylines = 0;
  for (std::size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++polylines;
  EXPECT_EQ(polylines, series.size());
  EXPECT_NE(svg.find("net &lt;a&amp;b&gt;"), std::string::npos);
  EXPECT_NE(svg.find("Elo &lt;by generation&gt;"), std::string::npos);
  EXPECT_NE(svg.find("novice &lt;1&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("<a&b>"), std::string::npos);
  EXPECT_EQ(svg.find("<by"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  // Every tag that opens is closed or self-closing: count < and >.
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '<'), std::count(svg.begin(), svg.end(), '>'));
}

TEST(SvgLineChart, NoDataStillGivesAChart) {
  const std::string svg = loop::svg_line_chart("empty", "x", "y", {}, {});
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(svg.find("<polyline"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(SvgChart, PanelsHaveTheirOwnScaleErrorBarsAndLabelledLines) {
  loop::PlotPanel big, small;
  big.y_label = "policy";
  big.series.push_back({"policy loss", "#c00", {0, 1, 2}, {5.0, 4.5, 4.0}, {}, {}});
  small.y_label = "value";
  small.series.push_back({"value loss", "#00c", {0, 1, 2}, {0.70, 0.69, 0.68}, {0.6, std::nan(""), 0.5}, {0.8, 0.7, 0.9}});
  small.lines.push_back({"level <x>", 0.65});
  const std::string svg = loop::svg_chart("t", "step", {big, small});
  // Two error bars (the NaN low end has none), the line with its label.
  std::size_t bars = 0;
  for (std::size_t at = svg.find("class=\"errorbar\""); at != std::string::npos;
       at = svg.find("class=\"errorbar\"", at + 1))
    ++bars;
  EXPECT_EQ(bars, 2u);
  EXPECT_NE(svg.find("class=\"reference\""), std::string::npos);
  EXPECT_NE(svg.find("level &lt;x&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  // Each panel spans its own values: ticks of 0.2 from 4 to 5 above, of
  // 0.1 from 0.5 to 0.9 below; one shared axis from 0.5 to 5 would tick
  // 1, 2, 3, ... and show neither loss moving.
  EXPECT_NE(svg.find(">0.7<"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">4.2<"), std::string::npos) << svg;
}

}  // namespace
}  // namespace ultima
