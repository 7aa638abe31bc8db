// Data-parallel training (nn/distributed.h, nn/torch/distributed.cpp): two
// Gloo ranks, each with half of every batch, take the steps of one trainer
// on the whole batches (up to rounding), and a save and restore in the
// middle changes nothing; rank 1's own starting weights are replaced by rank 0's; the
// launch environment is read as torchrun and Slurm set it, and malformed
// values are refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "nn/distributed.h"
#include "nn/encoding.h"
#include "nn/payload_format.h"
#include "nn/policy_index.h"
#include "nn/trainer.h"
#include "nn_test_util.h"

namespace ultima {
namespace {

using namespace ultima::nn;

NetArchitecture small_architecture() {
  NetArchitecture a = test::narrow_architecture(2);
  a.value_channels = 4;
  a.value_hidden = 16;
  a.moves_left_channels = 4;
  a.moves_left_hidden = 8;
  return a.completed();
}

TrainerOptions sgd() {
  TrainerOptions o;
  o.optimizer = "sgd";
  o.device.threads = 1;
  return o;
}

// Random inputs and targets: a softmax policy over a few slots, a one-hot
// WDL, moves left with some rows unknown (-1), so every loss term counts.
struct Batches {
  int size;
  std::vector<float> planes, policy_weights, wdl, moves_left;
  std::vector<std::int32_t> policy_offsets{0}, policy_slots;
  Batches(int size, int count, std::uint64_t seed) : size(size) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> unit(0, 1);
    const std::size_t rows = static_cast<std::size_t>(size) * count;
    planes.resize(rows * kInputSize);
    for (float& p : planes) p = unit(rng) < 0.2f ? 1.0f : 0.0f;
    wdl.assign(rows * 3, 0);
    for (std::size_t r = 0; r < rows; ++r) {
      for (int k = 0; k < 3; ++k) {
        policy_slots.push_back(static_cast<std::int32_t>(rng() % kPolicySize));
        policy_weights.push_back(1.0f / 3);
      }
      policy_offsets.push_back(static_cast<std::int32_t>(policy_slots.size()));
      wdl[r * 3 + rng() % 3] = 1;
      moves_left.push_back(rng() % 4 == 0 ? -1.0f : static_cast<float>(rng() % 100));
    }
  }
  // Rows [first, first + count) of batch k.
  TrainBatch rows(int k, int first, int count) const {
    const std::size_t at = static_cast<std::size_t>(k) * size + first;
    return TrainBatch{count,
                      planes.data() + at * kInputSize,
                      policy_offsets.data() + at,
                      policy_slots.data(),
                      policy_weights.data(),
                      wdl.data() + at * 3,
                      moves_left.data() + at};
  }
};

std::map<std::string, std::vector<float>> tensors_of(const std::vector<char>& payload) {
  std::map<std::string, std::vector<float>> out;
  for (const payload::Record& r : payload::read_records(payload.data(), payload.size())) {
    if (r.type != payload::kFloat32) continue;
    std::vector<float> values(r.data_bytes / sizeof(float));
    std::memcpy(values.data(), payload.data() + r.data_at, r.data_bytes);
    out.emplace(std::string(r.name), std::move(values));
  }
  return out;
}

// The largest difference between the weights (and batch norm statistics)
// of two payloads, relative to the tensor's scale.
double largest_difference(const std::vector<char>& a, const std::vector<char>& b) {
  const auto ta = tensors_of(a), tb = tensors_of(b);
  EXPECT_EQ(ta.size(), tb.size());
  double worst = 0;
  for (const auto& [name, va] : ta) {
    const std::vector<float>& vb = tb.at(name);
    double scale = 1e-3;
    for (const float v : va) scale = std::max(scale, static_cast<double>(std::fabs(v)));
    for (std::size_t i = 0; i < va.size(); ++i) worst = std::max(worst, std::fabs(va[i] - vb[i]) / scale);
  }
  return worst;
}

// Runs `body(rank)` on `world` threads, each its own rank of one group met
// through a file.
void run_ranks(int world, const std::string& store, const std::function<void(ProcessGroup&)>& body) {
  std::filesystem::remove(store);
  std::vector<std::thread> threads;
  std::vector<std::string> errors(world);
  for (int rank = 0; rank < world; ++rank)
    threads.emplace_back([&, rank] {
      try {
        GroupOptions o;
        o.rank = rank;
        o.world_size = world;
        o.store_path = store;
        o.timeout_seconds = 120;
        std::unique_ptr<ProcessGroup> group = ProcessGroup::create(o);
        body(*group);
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    });
  for (std::thread& t : threads) t.join();
  for (int rank = 0; rank < world; ++rank) EXPECT_EQ(errors[rank], "") << "rank " << rank;
  std::filesystem::remove(store);
}

constexpr int kBatch = 16, kSteps = 6;  // batches of 16, 6 steps
constexpr float kLr = 0.05f;

// Steps of one rank (a group of one, so with the group's batch norm) on
// whole batches, or of each rank on its half of them, with the state saved
// and restored into a new trainer after step `restart_at`. Returns each
// rank's final weights and losses.
struct Trained {
  std::vector<std::vector<char>> weights;
  std::vector<std::vector<TrainLosses>> losses;
};
Trained train_ranks(int world, const Batches& data, int restart_at, const std::string& name) {
  const NetArchitecture arch = small_architecture();
  Trained out{std::vector<std::vector<char>>(world), std::vector<std::vector<TrainLosses>>(world)};
  run_ranks(world, test::temp_path("dp_", name), [&](ProcessGroup& group) {
    const int r = group.rank();
    const int share = data.size / world;
    // Rank 0 starts from seed 7; the others from weights of their own,
    // which joining replaces by rank 0's.
    std::unique_ptr<Trainer> t = Trainer::create(arch, {}, r == 0 ? 7 : 99 + r, sgd());
    t->join(group);
    for (int k = 0; k < kSteps; ++k) {
      if (k == restart_at) {
        const std::vector<char> state = t->state();
        t = Trainer::create(arch, {}, 1234 + r, sgd());  // a restarted process
        t->join(group);
        t->restore(state);
      }
      out.losses[r].push_back(t->step(data.rows(k, r * share, share), kLr));
    }
    out.weights[r] = t->payload();
  });
  return out;
}

TEST(DataParallel, TwoRanksTrainAsOneOnTheWholeBatch) {
  const Batches data(kBatch, kSteps, 3);
  const Trained one = train_ranks(1, data, -1, "one");
  const Trained two = train_ranks(2, data, kSteps / 2, "two");
  const Trained uninterrupted = train_ranks(2, data, -1, "two_uninterrupted");
  ASSERT_FALSE(one.weights[0].empty());
  ASSERT_FALSE(two.weights[0].empty());
  ASSERT_FALSE(two.weights[1].empty());
  EXPECT_EQ(two.weights[0], two.weights[1]) << "the ranks' weights differ";
  // The restart after step 3 changes nothing: the same bytes as two ranks
  // that never stopped.
  EXPECT_EQ(two.weights[0], uninterrupted.weights[0]) << "the restart changed the training";
  // Two halves give the whole batch's step: equal losses while rounding is
  // not yet amplified (the first two steps; the second shows the first
  // step's update). Later steps part by the order of the sums, which these
  // few steps at a high rate amplify by about ten a step, more on some
  // CPUs' kernels than others (see the lone trainer below), so the weights
  // at the end are compared between runs of two ranks only.
  for (int k = 0; k < 2; ++k)
    for (int r = 0; r < 2; ++r) {
      EXPECT_NEAR(two.losses[r][k].policy, one.losses[0][k].policy, 1e-5) << "step " << k;
      EXPECT_NEAR(two.losses[r][k].value, one.losses[0][k].value, 1e-5) << "step " << k;
      EXPECT_NEAR(two.losses[r][k].moves_left, one.losses[0][k].moves_left, 1e-5) << "step " << k;
    }
  for (int k = 0; k < kSteps; ++k)
    for (int r = 0; r < 2; ++r) EXPECT_EQ(two.losses[r][k].total, uninterrupted.losses[r][k].total) << "step " << k;
  // The steps moved the weights.
  const NetArchitecture arch = small_architecture();
  const std::vector<char> untrained = Trainer::create(arch, {}, 7, sgd())->payload();
  EXPECT_GT(largest_difference(untrained, two.weights[0]), 1e-3);
  // A trainer alone (LibTorch's own batch norm) computes the same function
  // and gradients: equal losses at the first steps. Later steps part by
  // rounding, which these few steps at a high rate amplify: the same lone
  // trainer on 2 threads instead of 1 ends about 0.1 away (relative) from
  // itself, so the weights at the end are not compared.
  std::unique_ptr<Trainer> alone = Trainer::create(arch, {}, 7, sgd());
  for (int k = 0; k < 2; ++k) {
    const TrainLosses l = alone->step(data.rows(k, 0, kBatch), kLr);
    EXPECT_NEAR(l.total, one.losses[0][k].total, 1e-6) << "step " << k;
  }
}

TEST(DataParallel, GroupSumsAndBroadcasts) {
  std::vector<std::vector<double>> sums(3);
  std::vector<std::string> received(3);
  run_ranks(3, test::temp_path("dp_", "store3"), [&](ProcessGroup& group) {
    std::vector<double> v{1.0 + group.rank(), 10.0 * group.rank()};
    group.sum(v);
    sums[group.rank()] = v;
    received[group.rank()] = group.broadcast(group.rank() == 2 ? std::string("from two\0x", 10) : "", 2);
    EXPECT_EQ(group.agree(100 + group.rank()), 100u);
    EXPECT_TRUE(group.any(group.rank() == 1));
    EXPECT_FALSE(group.any(false));
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(sums[r], (std::vector<double>{6.0, 30.0}));
    EXPECT_EQ(received[r], std::string("from two\0x", 10));
  }
}

TEST(DataParallel, ARendezvousThatCannotHappenIsAnError) {
  GroupOptions o;
  o.rank = 1;
  o.world_size = 2;
  o.master_addr = "";
  try {
    ProcessGroup::create(o);
    FAIL() << "a group without a rendezvous was made";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("MASTER_ADDR"), std::string::npos) << e.what();
  }
  o.rank = 2;
  o.store_path = test::temp_path("dp_", "never");
  try {
    ProcessGroup::create(o);
    FAIL() << "rank 2 of 2 joined";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("rank 2"), std::string::npos) << e.what();
  }
}

// A host name that does not resolve (.invalid never does) is one error
// naming MASTER_ADDR and the name, at once, not a rendezvous retried until
// its timeout: the timeout here is an hour, so a retry loop would end in
// the test's own time limit instead.
TEST(DataParallel, AnAddressThatDoesNotResolveIsOneClearError) {
  GroupOptions o;
  o.rank = 1;
  o.world_size = 2;
  o.master_addr = "no-such-host.invalid";
  o.master_port = 29999;
  o.timeout_seconds = 3600;
  try {
    ProcessGroup::create(o);
    FAIL() << "a group with an unresolvable rendezvous was made";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("MASTER_ADDR 'no-such-host.invalid' does not resolve"), std::string::npos) << what;
    EXPECT_NE(what.find("rank 1 of 2"), std::string::npos) << what;
  }
}

std::function<const char*(const char*)> environment(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(LaunchEnvironment, ReadsTorchrunAndSlurmVariables) {
  EXPECT_FALSE(LaunchEnvironment::read(environment({})).has_value());
  // srun's batch script environment without a job step is not a launch.
  EXPECT_FALSE(LaunchEnvironment::read(environment({{"SLURM_NTASKS", "4"}, {"SLURM_PROCID", "0"}})).has_value());

  auto e = LaunchEnvironment::read(environment(
      {{"WORLD_SIZE", "4"}, {"RANK", "3"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "node7"}, {"MASTER_PORT", "1234"}}));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->world_size, 4);
  EXPECT_EQ(e->rank, 3);
  EXPECT_EQ(e->local_rank, 1);
  EXPECT_EQ(e->master_addr, "node7");
  EXPECT_EQ(e->master_port, 1234);
  EXPECT_EQ(e->source, "WORLD_SIZE");

  e = LaunchEnvironment::read(environment({{"SLURM_STEP_NUM_TASKS", "8"}, {"SLURM_NTASKS", "8"},
                                           {"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "1"}, {"MASTER_ADDR", "n0"},
                                           {"ULTIMA_DIST_TIMEOUT", "30"}}));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->world_size, 8);
  EXPECT_EQ(e->rank, 5);
  EXPECT_EQ(e->local_rank, 1);
  EXPECT_EQ(e->master_port, 29500);
  EXPECT_EQ(e->timeout_seconds, 30);
  EXPECT_EQ(e->source, "Slurm");
}

TEST(LaunchEnvironment, MalformedValuesAreRefusedByName) {
  auto error = [](const std::map<std::string, std::string>& vars) {
    try {
      LaunchEnvironment::read(environment(vars));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error({{"WORLD_SIZE", "two"}}).find("WORLD_SIZE='two'"), std::string::npos);
  EXPECT_NE(error({{"WORLD_SIZE", "2"}}).find("RANK is not set"), std::string::npos);
  EXPECT_NE(error({{"WORLD_SIZE", "2"}, {"RANK", "2"}}).find("RANK=2 is outside 0..1"), std::string::npos);
  EXPECT_NE(error({{"WORLD_SIZE", "2"}, {"RANK", "0"}}).find("MASTER_ADDR"), std::string::npos);
  EXPECT_NE(error({{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}})
                .find("MASTER_PORT=70000"),
            std::string::npos);
  EXPECT_NE(error({{"SLURM_STEP_NUM_TASKS", "2"}, {"SLURM_NTASKS", "2"}, {"SLURM_PROCID", "x"}}).find("SLURM_PROCID"),
            std::string::npos);
}

}  // namespace
}  // namespace ultima
