// The network through its module (nn/network.h -> libultima_nn.so, LibTorch):
// forward passes, model files that give bit-identical outputs after a
// round trip, damaged or mismatched files rejected by name, device errors,
// and concurrent callers of the batching evaluator.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/mcts/mcts.h"
#include "nn/encoding.h"
#include "nn/module_api.h"
#include "nn/eigen_network.h"
#include "nn/network.h"
#include "nn/trainer.h"
#include "nn/policy_index.h"
#include "nn_test_util.h"
#include "test_util.h"

namespace ultima {
namespace {

using namespace ultima::nn;

NetArchitecture small_architecture() { return test::narrow_architecture(2); }

std::string temp_path(const std::string& name) { return test::temp_path("ultima_nn_", name); }

// Encoded positions with their legal moves' slots.
struct Batch {
  std::vector<Position> positions;
  std::vector<MoveList> lists;
  std::vector<float> planes;
  std::vector<std::int32_t> offsets{0}, slots;

  explicit Batch(int count, std::uint64_t seed = 3) {
    std::mt19937_64 rng(seed);
    const std::vector<Rules> presets = test::all_presets();
    while (static_cast<int>(positions.size()) < count) {
      Position pos = test::random_game_position(presets[positions.size() % presets.size()], rng,
                                                static_cast<int>(rng() % 50));
      if (game_status(pos).over()) continue;
      positions.push_back(pos);
    }
    lists.resize(positions.size());
    for (std::size_t i = 0; i < positions.size(); ++i) {
      const std::vector<float> p = encode_position(positions[i]);
      planes.insert(planes.end(), p.begin(), p.end());
      generate_legal(positions[i], lists[i]);
      for (const Move& m : lists[i]) slots.push_back(policy_index(m));
      offsets.push_back(static_cast<std::int32_t>(slots.size()));
    }
  }
  int size() const { return static_cast<int>(positions.size()); }
};

struct Outputs {
  std::vector<float> policy, wdl, moves_left;
};

Outputs run(NetworkBackend& net, const Batch& b) {
  Outputs o;
  o.policy.resize(b.slots.size());
  o.wdl.resize(3 * b.positions.size());
  o.moves_left.resize(b.positions.size());
  net.forward(ForwardBatch{b.size(), b.planes.data(), b.offsets.data(), b.slots.data()},
              ForwardOutput{o.policy.data(), o.wdl.data(), o.moves_left.data()});
  return o;
}

bool bit_identical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(float) * a.size()) == 0;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(NnNetwork, ModuleLoadsAndNamesLibTorch) {
  EXPECT_NE(nn_library_version().find("LibTorch"), std::string::npos);
  EXPECT_EQ(nn_module().api_version, static_cast<std::uint32_t>(ULTIMA_NN_API_VERSION));
}

TEST(NnNetwork, RandomNetworkForwardIsFiniteAndSeeded) {
  const Batch batch(12);
  auto a = Network::random(small_architecture(), 7, DeviceOptions{});
  auto b = Network::random(small_architecture(), 7, DeviceOptions{});
  auto c = Network::random(small_architecture(), 8, DeviceOptions{});
  const Outputs oa = run(*a, batch), ob = run(*b, batch), oc = run(*c, batch);
  for (float x : oa.policy) ASSERT_TRUE(std::isfinite(x));
  for (float x : oa.wdl) ASSERT_TRUE(std::isfinite(x));
  for (float x : oa.moves_left) ASSERT_GE(x, 0);
  EXPECT_TRUE(bit_identical(oa.policy, ob.policy));
  EXPECT_TRUE(bit_identical(oa.wdl, ob.wdl));
  EXPECT_FALSE(bit_identical(oa.policy, oc.policy));
  EXPECT_NE(a->describe().find("2x16"), std::string::npos) << a->describe();
  EXPECT_NE(a->describe().find("cpu fp32"), std::string::npos) << a->describe();
}

TEST(NnNetwork, BatchedAndSingleForwardPassesAgree) {
  const Batch batch(16);
  auto net = Network::random(small_architecture(), 9, DeviceOptions{});
  const Outputs all = run(*net, batch);
  for (int i = 0; i < batch.size(); ++i) {
    Batch one(0);
    one.planes.assign(batch.planes.begin() + i * kInputSize, batch.planes.begin() + (i + 1) * kInputSize);
    one.slots.assign(batch.slots.begin() + batch.offsets[i], batch.slots.begin() + batch.offsets[i + 1]);
    one.offsets = {0, static_cast<std::int32_t>(one.slots.size())};
    one.positions.push_back(batch.positions[i]);
    const Outputs single = run(*net, one);
    for (std::size_t m = 0; m < single.policy.size(); ++m)
      EXPECT_NEAR(single.policy[m], all.policy[batch.offsets[i] + m], 1e-4);
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(single.wdl[k], all.wdl[3 * i + k], 1e-4);
  }
}

// bf16 on the CPU: the same network at bfloat16's precision (8 bits of
// mantissa), computed in bf16 (not bit-identical), close to fp32.
TEST(NnNetwork, Bf16OnTheCpuIsCloseToFp32) {
  const Batch batch(16);
  DeviceOptions bf16;
  bf16.precision = "bf16";
  auto full = Network::random(small_architecture(), 9, DeviceOptions{});
  auto half = Network::random(small_architecture(), 9, bf16);
  EXPECT_NE(half->describe().find("cpu bf16"), std::string::npos) << half->describe();
  // The dense layers stay fp32 on the CPU (module.cpp says why).
  EXPECT_NE(half->describe().find("dense layers fp32"), std::string::npos) << half->describe();
  const Outputs f = run(*full, batch), h = run(*half, batch);
  ASSERT_EQ(f.policy.size(), h.policy.size());
  EXPECT_FALSE(bit_identical(f.policy, h.policy));
  float largest = 0, worst = 0;
  for (std::size_t i = 0; i < f.policy.size(); ++i) {
    largest = std::max(largest, std::abs(f.policy[i]));
    worst = std::max(worst, std::abs(f.policy[i] - h.policy[i]));
  }
  EXPECT_LT(worst, 0.05f * largest) << "policy logits up to " << largest;
  for (std::size_t i = 0; i < f.wdl.size(); ++i) EXPECT_NEAR(h.wdl[i], f.wdl[i], 0.05f + 0.05f * std::abs(f.wdl[i]));
  for (std::size_t i = 0; i < f.moves_left.size(); ++i)
    EXPECT_NEAR(h.moves_left[i], f.moves_left[i], 0.5f + 0.05f * f.moves_left[i]);
}

TEST(NnNetwork, SavedAndLoadedNetworksGiveBitIdenticalOutputs) {
  const std::string path = temp_path("saved.unn");
  const Batch batch(10);
  auto net = Network::random(small_architecture(), 11, DeviceOptions{});
  net->save(path, "cambridge", 4242);
  auto loaded = Network::load(path, DeviceOptions{});
  EXPECT_EQ(loaded->architecture(), net->architecture());
  EXPECT_EQ(loaded->header().rules, "cambridge");
  EXPECT_EQ(loaded->header().training_step, 4242u);
  const Outputs a = run(*net, batch), b = run(*loaded, batch);
  EXPECT_TRUE(bit_identical(a.policy, b.policy));
  EXPECT_TRUE(bit_identical(a.wdl, b.wdl));
  EXPECT_TRUE(bit_identical(a.moves_left, b.moves_left));
  EXPECT_EQ(loaded->payload(), net->payload());
  std::remove(path.c_str());
}

TEST(NnNetwork, DamagedAndMismatchedFilesAreRejectedByName) {
  const std::string path = temp_path("damaged.unn");
  auto net = Network::random(small_architecture(), 12, DeviceOptions{});
  net->save(path, "abbott1963", 1);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto write = [&](const std::string& b) { std::ofstream(path, std::ios::binary | std::ios::trunc) << b; };
  auto load_error = [&] { return error_of([&] { Network::load(path, DeviceOptions{}); }); };

  write(bytes.substr(0, bytes.size() / 2));
  EXPECT_NE(load_error().find("truncated"), std::string::npos) << load_error();
  std::string flipped = bytes;
  flipped[bytes.size() - 100] ^= 0x40;
  write(flipped);
  EXPECT_NE(load_error().find("checksum"), std::string::npos) << load_error();
  write("ULTIMA-NN\nformat 2\n");
  EXPECT_NE(load_error().find("format version 2"), std::string::npos) << load_error();
  write("GIF89a");
  EXPECT_NE(load_error().find("not an Ultima network file"), std::string::npos) << load_error();

  // A header that lies about the architecture (checksum intact): the module
  // names the first tensor whose shape differs.
  ModelHeader lying;
  lying.architecture = small_architecture();
  lying.architecture.channels = 32;
  lying.rules = "abbott1963";
  write_model_file(path, lying, net->payload());
  const std::string shape_error = load_error();
  EXPECT_NE(shape_error.find("input_conv.weight"), std::string::npos) << shape_error;
  EXPECT_NE(shape_error.find("[16, 33, 3, 3] in the file"), std::string::npos) << shape_error;
  lying.architecture = small_architecture();
  lying.architecture.blocks = 3;
  write_model_file(path, lying, net->payload());
  EXPECT_NE(load_error().find("lack tensor 'tower.2."), std::string::npos) << load_error();
  lying.architecture.blocks = 1;
  write_model_file(path, lying, net->payload());
  EXPECT_NE(load_error().find("hold tensor 'tower.1."), std::string::npos) << load_error();

  // A config that asks for another architecture than the file's.
  net->save(path, "abbott1963", 1);
  NnConfig config = NnConfig::parse("blocks=6,channels=16");
  config.weights = path;
  const std::string config_error = error_of([&] { make_network(config); });
  EXPECT_NE(config_error.find("blocks 2 (expected 6)"), std::string::npos) << config_error;
  std::remove(path.c_str());
}

TEST(NnNetwork, DeviceAndPrecisionErrorsAreClear) {
  DeviceOptions half;
  half.precision = "fp16";
  EXPECT_NE(error_of([&] { Network::random(small_architecture(), 1, half); }).find("needs a CUDA device"),
            std::string::npos);
  DeviceOptions bad;
  bad.device = "quantum";
  EXPECT_NE(error_of([&] { Network::random(small_architecture(), 1, bad); }), "no error");
  if (nn_library_version().find("CUDA not available") != std::string::npos) {
    DeviceOptions cuda;
    cuda.device = "cuda";
    EXPECT_NE(error_of([&] { Network::random(small_architecture(), 1, cuda); }).find("no CUDA"), std::string::npos);
  }
}

TEST(NnNetwork, ConcurrentCallersGetTheirOwnPositionsAnswers) {
  NnConfig config;
  config.architecture = small_architecture();
  config.seed = 21;
  config.batching.max_batch = 16;
  config.batching.max_wait_us = 2000;
  config.batching.cache_entries = 0;
  std::unique_ptr<BatchingEvaluator> evaluator = make_nn_evaluator(config);
  const Batch batch(40, 5);
  std::vector<EvalOutput> expected(batch.size());
  for (int i = 0; i < batch.size(); ++i) {
    const EvalInput in{&batch.positions[i], &batch.lists[i]};
    evaluator->evaluate_direct(std::span(&in, 1), std::span(&expected[i], 1));
  }
  constexpr int kThreads = 8, kCalls = 50;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCalls; ++c) {
        const int i = (t * 13 + c * 7) % batch.size();
        const EvalInput in{&batch.positions[i], &batch.lists[i]};
        EvalOutput out;
        evaluator->evaluate(std::span(&in, 1), std::span(&out, 1));
        bool same = out.policy.size() == expected[i].policy.size() &&
                    std::abs(out.win - expected[i].win) < 1e-4 && std::abs(out.loss - expected[i].loss) < 1e-4;
        for (std::size_t m = 0; same && m < out.policy.size(); ++m)
          same = std::abs(out.policy[m] - expected[i].policy[m]) < 1e-4;
        failures[t] += !same;
      }
    });
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
  const BatchingStats stats = evaluator->stats();
  EXPECT_EQ(stats.evaluated, static_cast<std::uint64_t>(kThreads * kCalls));
  EXPECT_GT(stats.mean_batch(), 1.0);
  EXPECT_NE(evaluator->name().find("net 2x16"), std::string::npos) << evaluator->name();
}

}  // namespace
}  // namespace ultima

namespace ultima {
namespace {

// The whole chain the program uses: a model file, the batching evaluator
// from the module, and MCTS searching with it over several threads.
TEST(NnMcts, MctsSearchesWithASavedNetwork) {
  const std::string path = temp_path("mcts_net.bin");
  auto net = nn::Network::random(small_architecture(), 3, nn::DeviceOptions{});
  net->save(path, "abbott1963", 0);
  std::shared_ptr<Evaluator> evaluator =
      nn::make_nn_evaluator(nn::NnConfig::parse("weights=" + path + ",max_batch=16"));
  MctsConfig config;
  config.threads = 2;
  config.batch_size = 8;
  Mcts mcts(evaluator, config);
  std::mt19937_64 rng(5);
  Position pos = test::random_game_position(Rules{}, rng, 12);
  mcts.set_position(pos);
  MctsLimits limits;
  limits.playouts = 200;
  const MctsResult r = mcts.search(limits);
  MoveList list;
  generate_legal(pos, list);
  EXPECT_TRUE(std::find(list.begin(), list.end(), r.best) != list.end());
  EXPECT_GE(r.playouts, 200u);
  EXPECT_GT(r.evaluations, 0u);
  std::filesystem::remove(path);
}

// The Eigen backend computes the module's function from the same file: a
// net with trained weights and batch-norm statistics (a few training steps
// from random weights, so the folding of batch norm is exercised), every
// preset's positions, all three heads, within float rounding.
TEST(NnEigen, MatchesTheModuleOnTheSameModelFile) {
  for (const int se : {4, 0}) {
    NetArchitecture a = test::narrow_architecture(2);
    a.se_channels = se;
    a = a.completed();
    const Batch data(24, 17);
    TrainerOptions o;
    o.device.threads = 1;
    auto trainer = Trainer::create(a, {}, 5, o);
    std::vector<std::int32_t> offsets{0}, slots;
    std::vector<float> weights, wdl, moves_left;
    for (int i = 0; i < data.size(); ++i) {
      slots.push_back(data.slots[data.offsets[i]]);
      weights.push_back(1.0f);
      offsets.push_back(static_cast<std::int32_t>(slots.size()));
      wdl.insert(wdl.end(), {0.2f, 0.5f, 0.3f});
      moves_left.push_back(static_cast<float>(10 + i));
    }
    const TrainBatch batch{data.size(), data.planes.data(), offsets.data(), slots.data(), weights.data(),
                           wdl.data(), moves_left.data()};
    for (int i = 0; i < 5; ++i) trainer->step(batch, 0.05f);
    const std::string path = test::temp_path("eigen_", std::to_string(se) + ".unn");
    ModelHeader header;
    header.architecture = a;
    header.rules = "abbott1963";
    write_model_file(path, header, trainer->payload());

    auto torch_net = Network::load(path, DeviceOptions{});
    auto eigen_net = EigenNetwork::load(path);
    std::filesystem::remove(path);
    const Outputs t = run(*torch_net, data), e = run(*eigen_net, data);
    ASSERT_EQ(t.policy.size(), e.policy.size());
    double worst = 0, spread = 0;
    for (std::size_t i = 0; i < t.policy.size(); ++i) {
      worst = std::max(worst, static_cast<double>(std::fabs(t.policy[i] - e.policy[i])));
      spread = std::max(spread, static_cast<double>(std::fabs(t.policy[i] - t.policy[0])));
    }
    EXPECT_LT(worst, 1e-3) << "policy logits, se " << se;
    EXPECT_GT(spread, 0.01) << "the logits differ between moves (the comparison is not of constants)";
    for (std::size_t i = 0; i < t.wdl.size(); ++i) EXPECT_NEAR(t.wdl[i], e.wdl[i], 1e-3) << "wdl " << i;
    for (std::size_t i = 0; i < t.moves_left.size(); ++i)
      EXPECT_NEAR(t.moves_left[i], e.moves_left[i], 1e-3 * std::max(1.0f, t.moves_left[i])) << "moves left " << i;
    EXPECT_NE(eigen_net->describe().find("Eigen"), std::string::npos);
  }
}

TEST(NnEigen, ItsErrorsNameTheProblem) {
  const NetArchitecture small = test::narrow_architecture(1).completed();
  NetArchitecture other = small;
  other.channels = 24;
  auto net = Network::random(small, 1, DeviceOptions{});
  const std::string wrong = error_of([&] { EigenNetwork::from_payload(other, net->payload()); });
  EXPECT_NE(wrong.find("tensor 'input_conv.weight' has shape [16, 33, 3, 3], the architecture needs [24, 33, 3, 3]"),
            std::string::npos)
      << wrong;
  NetArchitecture deeper = small;
  deeper.blocks = 2;
  EXPECT_NE(error_of([&] { EigenNetwork::from_payload(deeper, net->payload()); })
                .find("the weights lack tensor 'tower.1.conv1.weight'"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_nn_evaluator(NnConfig::parse("backend=eigen")); }).find("backend=eigen needs weights"),
            std::string::npos);
  EXPECT_NE(error_of([] { NnConfig::parse("backend=onnx"); }).find("'onnx' is not torch or eigen"), std::string::npos);
  // Through the batching evaluator, as players and UCI use it.
  const std::string path = test::temp_path("eigen_", "eval.unn");
  net->save(path, "abbott1963", 0);
  auto evaluator = make_nn_evaluator(NnConfig::parse("backend=eigen,weights=" + path));
  std::filesystem::remove(path);
  EXPECT_NE(evaluator->backend().describe().find("Eigen"), std::string::npos);
}

}  // namespace
}  // namespace ultima
