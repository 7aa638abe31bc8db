// The MCTS as a player: settings by name and a match against the random
// mover, with the network-free material evaluator.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/mcts/material_evaluator.h"
#include "engine/mcts/settings.h"
#include "engine/play/match.h"
#include "engine/play/mcts_player.h"
#include "engine/play/player_spec.h"
#include "fake_network.h"
#include "test_util.h"

namespace ultima {
namespace {

std::shared_ptr<Evaluator> material() { return std::make_shared<MaterialEvaluator>(); }

MctsLimits playouts(std::uint64_t n) {
  MctsLimits limits;
  limits.playouts = n;
  return limits;
}

TEST(MctsPlayer, SettingsByName) {
  const MctsSettings s = parse_mcts_settings("playouts=300,gumbel=true,cpuct=2.5,threads=2,temperature=0.5");
  EXPECT_EQ(s.limits.playouts, 300u);
  EXPECT_TRUE(s.config.gumbel);
  EXPECT_FLOAT_EQ(s.config.cpuct, 2.5f);
  EXPECT_EQ(s.config.threads, 2);
  EXPECT_DOUBLE_EQ(s.temperature, 0.5);
  EXPECT_EQ(parse_mcts_settings("").config.threads, 1);
  EXPECT_THROW(parse_mcts_settings("playout=3"), std::invalid_argument);
  EXPECT_THROW(parse_mcts_settings("playouts=3x"), std::invalid_argument);
  EXPECT_THROW(parse_mcts_settings("gumbel=maybe"), std::invalid_argument);
  EXPECT_THROW(parse_mcts_settings("playouts"), std::invalid_argument);
  for (const MctsSettingInfo& info : mcts_setting_list()) EXPECT_FALSE(info.help.empty()) << info.name;
  MctsPlayer player(material(), s);
  EXPECT_NE(player.name().find("300 playouts"), std::string::npos);
}

TEST(MctsPlayer, NetworksComeFromTheFactoryPassedIn) {
  std::vector<std::string> asked;
  const NetworkFactory networks = test::fake_networks(asked);
  auto player = make_player("mcts:weights=nets/a.unn,playouts=16", networks);
  EXPECT_NE(player->name().find("fake network (weights=nets/a.unn)"), std::string::npos) << player->name();
  make_player("mcts:weights=random", networks);
  // Keys that are not the search's go to the network, which checks them.
  make_player("mcts:playouts=8,weights=b.unn,device=cuda:1,precision=fp16", networks);
  EXPECT_EQ(asked,
            (std::vector<std::string>{"weights=nets/a.unn", "", "weights=b.unn,device=cuda:1,precision=fp16"}));
  // Without weights, the material evaluator: the factory is not asked, and
  // a key that is not the search's is an error.
  make_player("mcts:playouts=8", networks);
  EXPECT_EQ(asked.size(), 3u);
  EXPECT_THROW(make_player("mcts:device=cuda", networks), std::invalid_argument);
  // The move it plays is legal.
  Position pos = Position::start();
  const Move m = player->choose(pos, 1).move;
  MoveList legal;
  generate_legal(pos, legal);
  EXPECT_NE(std::find(legal.begin(), legal.end(), m), legal.end());
}

TEST(MctsPlayer, RunNamesTheBestModelOfARunDirectory) {
  const test::TempDir dir("spec-run");
  const std::string run = dir.path() + "/runs/main";
  std::filesystem::create_directories(run + "/models");
  std::vector<std::string> asked;
  const NetworkFactory networks = test::fake_networks(asked);
  // The directory exists but no generation has been made best yet.
  try {
    make_player("mcts:run=" + run, networks);
    ADD_FAILURE() << "no error without models/best";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(run + "/models/best"), std::string::npos) << e.what();
  }
  // models/best names model 12, whose file is missing.
  { std::ofstream(run + "/models/best") << "12\n"; }
  try {
    run_best_model(run);
    ADD_FAILURE() << "no error for a missing model file";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("model-000012.unn"), std::string::npos) << e.what();
  }
  { std::ofstream(run + "/models/model-000012.unn") << "x"; }
  EXPECT_EQ(run_best_model(run), run + "/models/model-000012.unn");
  // The spec loads that file, with the other keys as with weights=.
  make_player("mcts:playouts=8,run=" + run + ",device=cuda", networks);
  EXPECT_EQ(asked, (std::vector<std::string>{"weights=" + run + "/models/model-000012.unn,device=cuda"}));
  // A missing run is named; weights= and run= together are refused.
  try {
    make_player("mcts:run=" + dir.path() + "/runs/nope", networks);
    ADD_FAILURE() << "no error for a missing run";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("runs/nope' does not exist"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_player("mcts:weights=a.unn,run=" + run, networks), std::invalid_argument);
  EXPECT_THROW(make_player("mcts:run=", networks), std::invalid_argument);
  EXPECT_NE(player_spec_help().find("run=DIR"), std::string::npos);
}

TEST(MctsPlayer, SharedNetworksMakeOneEvaluatorPerNetwork) {
  std::vector<std::string> asked;
  const NetworkFactory networks = shared_networks(test::fake_networks(asked));
  auto a = make_player("mcts:weights=x.unn,playouts=4", networks);
  auto b = make_player("mcts:weights=x.unn,playouts=9", networks);
  auto c = make_player("mcts:weights=y.unn", networks);
  EXPECT_EQ(asked, (std::vector<std::string>{"weights=x.unn", "weights=y.unn"}));
  EXPECT_EQ(networks("weights=x.unn"), networks("weights=x.unn"));
  EXPECT_NE(networks("weights=x.unn"), networks("weights=y.unn"));
}

TEST(MctsPlayer, ANetworkSpecWithoutAFactoryIsAClearError) {
  try {
    make_player("mcts:weights=a.unn");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no neural-network support"), std::string::npos) << e.what();
  }
}

TEST(MctsPlayer, BeatsTheRandomMover) {
  MatchConfig config;
  config.games = 10;
  config.concurrency = 2;
  config.seed = 5;
  config.max_plies = 160;
  const auto evaluator = material();
  const MatchResult result = play_match(
      [&] { return std::make_unique<MctsPlayer>(evaluator, MctsConfig{}, playouts(300)); },
      [] { return std::make_unique<RandomPlayer>(); }, config);
  EXPECT_EQ(result.results.games(), 10);
  EXPECT_GE(result.results.score(), 0.8) << result.results.wins << " wins, " << result.results.draws << " draws";
}

// Players take limits: the caller's node cap and clock bound a budget far
// larger than any test could wait for, and stop() ends a move at once.
TEST(MctsPlayer, TheCallersLimitsCapItsOwnBudget) {
  constexpr std::uint64_t kHuge = 1'000'000'000;
  MctsPlayer player(material(), MctsConfig{}, playouts(kHuge));
  Position pos = Position::start();
  MoveLimits nodes;
  nodes.nodes = 40;
  const MoveChoice capped = player.choose(pos, 1, nodes);
  EXPECT_LE(player.last_result().visits, 40u + 16u);  // a batch in flight may overshoot
  EXPECT_TRUE(test::is_legal(pos, capped.move));
  player.new_game();
  MoveLimits clock;
  clock.time_ms[kWhite] = clock.time_ms[kBlack] = 300;  // a few ms for this move
  const MoveChoice timed = player.choose(pos, 1, clock);
  EXPECT_LT(timed.nodes, kHuge);
  EXPECT_TRUE(test::is_legal(pos, timed.move));
}

TEST(MctsPlayer, StopEndsAMoveWithTheBestSoFar) {
  MctsPlayer player(material(), MctsConfig{}, playouts(1'000'000'000));
  Position pos = Position::start();
  MoveChoice choice;
  std::atomic<bool> done{false};
  std::thread worker([&] {
    Position copy = pos;
    choice = player.choose(copy, 1);
    done = true;
  });
  while (!done) {
    player.stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  worker.join();
  EXPECT_LT(choice.nodes, 1'000'000'000u);
  EXPECT_TRUE(test::is_legal(pos, choice.move));
}

}  // namespace
}  // namespace ultima
