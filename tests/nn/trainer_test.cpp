// Training through the module (nn/trainer.h -> libultima_nn.so): a tiny net
// fits a small fixed dataset with SGD and with AdamW, a restored state
// continues byte-identically, the trained weights load as a Network that
// computes the same losses, and bad input is refused by name.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>

#include "nn/encoding.h"
#include "nn/network.h"
#include "nn/policy_index.h"
#include "nn/trainer.h"
#include "nn_test_util.h"
#include "test_util.h"

namespace ultima {
namespace {

using namespace ultima::nn;

NetArchitecture tiny_architecture() {
  NetArchitecture a = test::narrow_architecture(1);
  a.value_channels = 8;
  a.value_hidden = 32;
  a.moves_left_channels = 4;
  a.moves_left_hidden = 16;
  return a.completed();
}

TrainerOptions options(const std::string& optimizer) {
  TrainerOptions o;
  o.optimizer = optimizer;
  o.device.threads = 1;
  return o;
}

// Positions of random games (every preset), each with one legal move as
// its policy target, a random result and a random game length (some
// unknown: -1).
struct Dataset {
  int size = 0;
  std::vector<float> planes, policy, wdl, moves_left;  // policy: dense, for checks here
  std::vector<std::int32_t> policy_offsets{0}, policy_slots;  // the trainer's sparse form of it
  std::vector<float> policy_weights;

  explicit Dataset(int count, std::uint64_t seed = 11) : size(count) {
    std::mt19937_64 rng(seed);
    const std::vector<Rules> presets = test::all_presets();
    policy.assign(static_cast<std::size_t>(count) * kPolicySize, 0.0f);
    wdl.assign(static_cast<std::size_t>(count) * 3, 0.0f);
    for (int i = 0; i < count;) {
      const Position pos =
          test::random_game_position(presets[i % presets.size()], rng, static_cast<int>(rng() % 60));
      MoveList list;
      generate_legal(pos, list);
      if (game_status(pos).over() || list.size() == 0) continue;
      const std::vector<float> p = encode_position(pos);
      planes.insert(planes.end(), p.begin(), p.end());
      const int slot = policy_index(list[static_cast<int>(rng() % list.size())]);
      policy[static_cast<std::size_t>(i) * kPolicySize + slot] = 1;
      policy_slots.push_back(slot);
      policy_weights.push_back(1.0f);
      policy_offsets.push_back(static_cast<std::int32_t>(policy_slots.size()));
      wdl[3 * i + rng() % 3] = 1;
      moves_left.push_back(rng() % 5 == 0 ? -1.0f : static_cast<float>(rng() % 120));
      ++i;
    }
  }
  TrainBatch all() const { return slice(0, size); }
  TrainBatch slice(int first, int count) const {
    return TrainBatch{count,
                      planes.data() + static_cast<std::size_t>(first) * kInputSize,
                      policy_offsets.data() + first,
                      policy_slots.data(),
                      policy_weights.data(),
                      wdl.data() + 3 * first,
                      moves_left.data() + first};
  }
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const NnModuleError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not an NnModuleError: ") + e.what();
  }
  return "no error";
}

std::string temp_path(const std::string& name) { return test::temp_path("ultima_trainer_", name); }

void expect_fits(const std::string& optimizer, float lr, int steps) {
  const Dataset data(64);
  auto trainer = Trainer::create(tiny_architecture(), {}, 5, options(optimizer));
  // Train-mode statistics first, so the eval-mode measures compare alike.
  trainer->step(data.all(), 0.0f);
  const TrainLosses before = trainer->measure(data.all());
  for (int i = 0; i < steps; ++i) {
    const TrainLosses l = trainer->step(data.all(), lr);
    ASSERT_TRUE(std::isfinite(l.total)) << "step " << i;
  }
  const TrainLosses after = trainer->measure(data.all());
  EXPECT_LT(after.total, before.total / 2) << optimizer << ": " << before.total << " -> " << after.total;
  EXPECT_LT(after.policy, before.policy) << optimizer;
  EXPECT_LT(after.value, before.value) << optimizer;
  EXPECT_NEAR(after.total, after.policy + after.value + 0.05 * after.moves_left, 1e-4);
}

TEST(NnTrainer, SgdFitsASmallDataset) { expect_fits("sgd", 0.05f, 150); }

TEST(NnTrainer, AdamWFitsASmallDataset) { expect_fits("adamw", 3e-3f, 150); }

TEST(NnTrainer, FirstLossesAreThoseOfUntrainedNet) {
  // Near-uniform outputs: the policy loss is about ln(3648), the value's ln(3).
  const Dataset data(32);
  auto trainer = Trainer::create(tiny_architecture(), {}, 5, options("sgd"));
  const TrainLosses l = trainer->step(data.all(), 0.01f);
  EXPECT_NEAR(l.policy, std::log(3648.0), 1.5);
  EXPECT_NEAR(l.value, std::log(3.0), 0.5);
  EXPECT_GE(l.moves_left, 0);
}

void expect_exact_resume(const std::string& optimizer) {
  const Dataset data(48);
  constexpr int kSteps = 6, kRestoreAfter = 3;
  auto batch = [&](int i) { return data.slice((i * 16) % 48, 16); };
  auto a = Trainer::create(tiny_architecture(), {}, 21, options(optimizer));
  std::vector<char> saved;
  for (int i = 0; i < kSteps; ++i) {
    if (i == kRestoreAfter) saved = a->state();
    a->step(batch(i), 0.02f);
  }
  // Another seed: everything must come from the state.
  auto b = Trainer::create(tiny_architecture(), {}, 22, options(optimizer));
  b->restore(saved);
  for (int i = kRestoreAfter; i < kSteps; ++i) b->step(batch(i), 0.02f);
  EXPECT_EQ(a->payload(), b->payload()) << optimizer;
  // (The states' bytes are not compared: LibTorch's optimizer archive keys
  // its entries by addresses, whose text differs between trainers.)

  // Without the optimizer's state (momentum) the result differs.
  auto c = Trainer::create(tiny_architecture(), a->payload(), 0, options(optimizer));
  auto d = Trainer::create(tiny_architecture(), a->payload(), 0, options(optimizer));
  d->restore(a->state());
  c->step(batch(0), 0.02f);
  d->step(batch(0), 0.02f);
  EXPECT_NE(c->payload(), d->payload()) << optimizer;
}

TEST(NnTrainer, SgdStateResumesByteIdentically) { expect_exact_resume("sgd"); }

TEST(NnTrainer, AdamWStateResumesByteIdentically) { expect_exact_resume("adamw"); }

// Cross-entropy of logits against a target distribution, in doubles.
double cross_entropy(const float* logits, const float* target, int n) {
  double top = logits[0];
  for (int i = 1; i < n; ++i) top = std::max(top, static_cast<double>(logits[i]));
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += std::exp(logits[i] - top);
  const double log_sum = top + std::log(sum);
  double loss = 0;
  for (int i = 0; i < n; ++i) loss -= target[i] * (logits[i] - log_sum);
  return loss;
}

double huber(double x) { return std::abs(x) < 1 ? 0.5 * x * x : std::abs(x) - 0.5; }

TEST(NnTrainer, PayloadLoadsAsNetworkWithTheSameLosses) {
  const Dataset data(32);
  auto trainer = Trainer::create(tiny_architecture(), {}, 3, options("sgd"));
  const std::vector<char> initial = trainer->payload();
  for (int i = 0; i < 20; ++i) trainer->step(data.all(), 0.05f);
  const TrainLosses measured = trainer->measure(data.all());
  const std::vector<char> trained = trainer->payload();
  EXPECT_NE(initial, trained);

  const std::string path = temp_path("trained.unn");
  ModelHeader header;
  header.architecture = trainer->architecture();
  header.rules = "abbott1963";
  header.training_step = 20;
  write_model_file(path, header, trained);
  auto net = Network::load(path, DeviceOptions{});
  std::filesystem::remove(path);
  EXPECT_EQ(net->header().training_step, 20u);
  EXPECT_EQ(net->payload(), trained);

  // Every slot's logit, so the policy loss can be computed here.
  std::vector<std::int32_t> offsets{0}, slots;
  for (int i = 0; i < data.size; ++i) {
    for (int s = 0; s < kPolicySize; ++s) slots.push_back(s);
    offsets.push_back(static_cast<std::int32_t>(slots.size()));
  }
  std::vector<float> policy(slots.size()), wdl(3 * data.size), moves_left(data.size);
  net->forward(ForwardBatch{data.size, data.planes.data(), offsets.data(), slots.data()},
               ForwardOutput{policy.data(), wdl.data(), moves_left.data()});
  double policy_loss = 0, value_loss = 0, moves_left_loss = 0;
  int known = 0;
  for (int i = 0; i < data.size; ++i) {
    policy_loss += cross_entropy(&policy[static_cast<std::size_t>(i) * kPolicySize],
                                 &data.policy[static_cast<std::size_t>(i) * kPolicySize], kPolicySize);
    value_loss += cross_entropy(&wdl[3 * i], &data.wdl[3 * i], 3);
    ASSERT_TRUE(std::isfinite(moves_left[i]));
    if (data.moves_left[i] >= 0) {
      moves_left_loss += huber((moves_left[i] - data.moves_left[i]) / 20.0);
      ++known;
    }
  }
  EXPECT_NEAR(policy_loss / data.size, measured.policy, 1e-3);
  EXPECT_NEAR(value_loss / data.size, measured.value, 1e-4);
  EXPECT_NEAR(moves_left_loss / known, measured.moves_left, 1e-4);
}

TEST(NnTrainer, PayloadStartsATrainerFromTheSameWeights) {
  const Dataset data(16);
  auto a = Trainer::create(tiny_architecture(), {}, 4, options("sgd"));
  a->step(data.all(), 0.05f);
  auto b = Trainer::create(tiny_architecture(), a->payload(), 99, options("adamw"));
  EXPECT_EQ(a->payload(), b->payload());
  EXPECT_DOUBLE_EQ(a->measure(data.all()).total, b->measure(data.all()).total);
}

TEST(NnTrainer, BadInputIsRefusedByName) {
  const Dataset data(8);
  EXPECT_NE(error_of([] { Trainer::create(tiny_architecture(), {}, 1, options("rmsprop")); })
                .find("unknown optimizer 'rmsprop' (sgd, adamw)"),
            std::string::npos);
  TrainerOptions bad_momentum = options("sgd");
  bad_momentum.momentum = 1.5f;
  EXPECT_NE(error_of([&] { Trainer::create(tiny_architecture(), {}, 1, bad_momentum); }).find("momentum"),
            std::string::npos);

  auto trainer = Trainer::create(tiny_architecture(), {}, 1, options("sgd"));
  const std::vector<char> before = trainer->payload();
  const std::string garbage = error_of([&] { trainer->restore(std::vector<char>(1000, 'x')); });
  EXPECT_NE(garbage.find("cannot restore the trainer's state: the trainer state is not a LibTorch archive"),
            std::string::npos)
      << garbage;
  EXPECT_NE(error_of([&] { trainer->restore({}); }).find("cannot restore"), std::string::npos);

  NetArchitecture wider = tiny_architecture();
  wider.channels = 24;
  auto other = Trainer::create(wider, {}, 1, options("sgd"));
  const std::string other_payload =
      error_of([&] { Trainer::create(tiny_architecture(), other->payload(), 1, options("sgd")); });
  EXPECT_NE(other_payload.find("tensor 'input_conv.weight' has shape [24, 33, 3, 3]"), std::string::npos)
      << other_payload;
  const std::string other_state = error_of([&] { trainer->restore(other->state()); });
  EXPECT_NE(other_state.find("the trainer state is of a 1x24 se4 network with sgd, this trainer a 1x16 se4"),
            std::string::npos)
      << other_state;
  auto adamw = Trainer::create(tiny_architecture(), {}, 1, options("adamw"));
  EXPECT_NE(error_of([&] { trainer->restore(adamw->state()); })
                .find("with adamw, this trainer a 1x16 se4 network with sgd"),
            std::string::npos);

  EXPECT_NE(error_of([&] { trainer->step(TrainBatch{}, 0.1f); }).find("at least one position"), std::string::npos);
  std::vector<float> nan_planes = data.planes;
  nan_planes[5] = std::nanf("");
  TrainBatch poisoned = data.all();
  poisoned.planes = nan_planes.data();
  EXPECT_NE(error_of([&] { trainer->step(poisoned, 0.1f); }).find("the loss is not finite"), std::string::npos);

  // None of it touched the weights, and the trainer still trains.
  EXPECT_EQ(trainer->payload(), before);
  EXPECT_TRUE(std::isfinite(trainer->step(data.all(), 0.05f).total));
  EXPECT_NE(trainer->payload(), before);

  // A CUDA device this machine does not have: one past the last (or any,
  // without CUDA).
  const std::string library = nn_library_version();
  const std::size_t at = library.find("available (");
  const int devices = at == std::string::npos ? 0 : std::stoi(library.substr(at + 11));
  TrainerOptions gpu = options("sgd");
  gpu.device.device = "cuda:" + std::to_string(devices);
  const std::string device = error_of([&] { Trainer::create(tiny_architecture(), {}, 1, gpu); });
  EXPECT_NE(device.find("cannot create a trainer"), std::string::npos) << device;
}

TEST(NnTrainer, AStepWithANonFiniteLossIsUndoneOnTheDevice) {
  const Dataset data(16);
  std::vector<float> nan_planes = data.planes;
  nan_planes[3] = std::nanf("");
  TrainBatch poisoned = data.all();
  poisoned.planes = nan_planes.data();
  // good, poisoned, good, queued without reading back; against good, good.
  auto queued = Trainer::create(tiny_architecture(), {}, 5, options("sgd"));
  queued->queue_step(data.slice(0, 8), 0.05f);
  queued->queue_step(poisoned, 0.05f);
  queued->queue_step(data.slice(8, 8), 0.05f);
  const TrainReport r = queued->report();
  EXPECT_EQ(r.steps, 3);
  EXPECT_EQ(r.nonfinite, 1);
  EXPECT_EQ(r.overflow, 0);
  EXPECT_TRUE(std::isfinite(r.mean.total));
  auto clean = Trainer::create(tiny_architecture(), {}, 5, options("sgd"));
  const TrainLosses first = clean->step(data.slice(0, 8), 0.05f);
  const TrainLosses second = clean->step(data.slice(8, 8), 0.05f);
  // Weights, batch norm statistics and momentum as if the poisoned step had
  // never been queued.
  EXPECT_EQ(queued->payload(), clean->payload());
  EXPECT_NEAR(r.mean.total, (first.total + second.total) / 2, 1e-5);
  // The momentum too: one more step keeps them equal.
  queued->step(data.all(), 0.05f);
  clean->step(data.all(), 0.05f);
  EXPECT_EQ(queued->payload(), clean->payload());
  // A report starts over.
  const TrainReport empty = queued->report();
  EXPECT_EQ(empty.steps, 0);
}

TEST(NnTrainer, SparsePolicyTargetsAreCheckedAndSummed) {
  const Dataset data(4);
  auto trainer = Trainer::create(tiny_architecture(), {}, 3, options("sgd"));
  // Each row's one slot given as two halves: the same target.
  std::vector<std::int32_t> offsets{0}, slots;
  std::vector<float> weights;
  for (int i = 0; i < data.size; ++i) {
    slots.insert(slots.end(), 2, data.policy_slots[i]);
    weights.insert(weights.end(), {0.5f, 0.5f});
    offsets.push_back(static_cast<std::int32_t>(slots.size()));
  }
  TrainBatch halves = data.all();
  halves.policy_offsets = offsets.data();
  halves.policy_slots = slots.data();
  halves.policy_weights = weights.data();
  EXPECT_NEAR(trainer->measure(halves).policy, trainer->measure(data.all()).policy, 1e-5);
  slots[1] = kPolicySize;
  EXPECT_NE(error_of([&] { trainer->measure(halves); })
                .find("policy slot " + std::to_string(kPolicySize) + " of row 0 is outside 0.." +
                      std::to_string(kPolicySize - 1)),
            std::string::npos);
  offsets[2] = 1;  // row 1 ends before it starts
  slots[1] = 0;
  EXPECT_NE(error_of([&] { trainer->measure(halves); }).find("policy offsets are malformed"), std::string::npos);
}

TEST(NnTrainer, Bf16AutocastTrainsOnTheCpu) {
  const Dataset data(32);
  TrainerOptions bf16 = options("sgd");
  bf16.precision = "bf16";
  auto half = Trainer::create(tiny_architecture(), {}, 9, bf16);
  auto full = Trainer::create(tiny_architecture(), {}, 9, options("sgd"));
  // The same function to bf16's precision (8 bits of mantissa)...
  const TrainLosses h = half->measure(data.all()), f = full->measure(data.all());
  EXPECT_NEAR(h.total, f.total, 0.02 * f.total);
  EXPECT_NE(h.total, f.total);  // ...but computed in bf16
  // ...that learns: the loss falls.
  for (int i = 0; i < 60; ++i) half->queue_step(data.all(), 0.05f);
  const TrainReport r = half->report();
  EXPECT_EQ(r.nonfinite, 0);
  EXPECT_LT(half->measure(data.all()).total, 0.8 * h.total);
  // fp16 needs a GPU's loss scaling; an unknown precision is refused.
  TrainerOptions fp16 = options("sgd");
  fp16.precision = "fp16";
  EXPECT_NE(error_of([&] { Trainer::create(tiny_architecture(), {}, 1, fp16); }).find("fp16 training needs a CUDA"),
            std::string::npos);
  TrainerOptions fp8 = options("sgd");
  fp8.precision = "fp8";
  EXPECT_NE(error_of([&] { Trainer::create(tiny_architecture(), {}, 1, fp8); }).find("unknown training precision 'fp8'"),
            std::string::npos);
}

// On a CUDA device when LibTorch sees one (skipped, and said so, without):
// fp32 steps agree with the CPU's, bf16 and fp16 steps train, and a queue
// of steps reads back once.
TEST(NnTrainerCuda, StepsOnTheGpuAgreeWithTheCpuAndTrainInEveryPrecision) {
  const std::string library = nn_library_version();
  if (library.find("available (") == std::string::npos) GTEST_SKIP() << "no CUDA device: " << library;
  const Dataset data(64);
  TrainerOptions gpu = options("sgd");
  gpu.device.device = "cuda";
  auto on_gpu = Trainer::create(tiny_architecture(), {}, 2, gpu);
  auto on_cpu = Trainer::create(tiny_architecture(), {}, 2, options("sgd"));
  for (int i = 0; i < 3; ++i) {
    const TrainLosses g = on_gpu->step(data.all(), 0.05f), c = on_cpu->step(data.all(), 0.05f);
    EXPECT_NEAR(g.total, c.total, 1e-3 * c.total) << "step " << i;
  }
  for (const char* precision : {"fp32", "bf16", "fp16"}) {
    TrainerOptions o = gpu;
    o.precision = precision;
    auto t = Trainer::create(tiny_architecture(), {}, 2, o);
    const double before = t->measure(data.all()).total;
    for (int i = 0; i < 60; ++i) t->queue_step(data.all(), 0.05f);
    const TrainReport r = t->report();
    EXPECT_EQ(r.steps, 60) << precision;
    EXPECT_EQ(r.nonfinite, 0) << precision;
    EXPECT_LT(r.overflow, 10) << precision;
    EXPECT_LT(t->measure(data.all()).total, 0.8 * before) << precision;
  }
}

// The speed of a training step of the default 6x64 net, printed (run with
// --gtest_also_run_disabled_tests; ULTIMA_TRAIN_BENCH_THREADS, default 1).
TEST(NnTrainer, DISABLED_StepTimeOf6x64AtBatch256) {
  NetArchitecture architecture;
  architecture = architecture.completed();
  const int batch = 256, steps = 5;
  const Dataset data(batch);
  TrainerOptions o = options("sgd");
  if (const char* t = std::getenv("ULTIMA_TRAIN_BENCH_THREADS")) o.device.threads = std::atoi(t);
  auto trainer = Trainer::create(architecture, {}, 1, o);
  trainer->step(data.all(), 0.01f);  // warm-up
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) trainer->step(data.all(), 0.01f);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("train step %s, batch %d, %d thread(s): %.0f ms/step, %.0f positions/s\n", architecture.text().c_str(),
              batch, o.device.threads, 1000 * seconds / steps, batch * steps / seconds);
}

}  // namespace
}  // namespace ultima
