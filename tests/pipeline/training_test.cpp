// The trainer's torch-free data side (training/dataset.h, train.h): the
// sample window, the sample store and its damaged shards, batches
// (reproducible, every sample once per pass, symmetries, focus rows), the
// rows' targets, and the learning-rate schedule with its settings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "nn/data/run_dir.h"
#include "nn/data/sample.h"
#include "nn/policy_index.h"
#include "test_util.h"
#include "training/dataset.h"
#include "training/train.h"

namespace ultima {
namespace {

using namespace ultima::data;
using namespace ultima::training;
namespace fs = std::filesystem;

constexpr Symmetry kAllSymmetries[] = {Symmetry::kIdentity,  Symmetry::kRotate90,    Symmetry::kRotate180,
                                       Symmetry::kRotate270, Symmetry::kMirrorFiles, Symmetry::kMirrorRanks,
                                       Symmetry::kTranspose, Symmetry::kAntiTranspose};

using test::TempDir;

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

}  // namespace
}  // namespace ultima
