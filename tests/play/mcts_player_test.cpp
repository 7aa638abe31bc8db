// The MCTS as a player: settings by name and a match against the random
// mover, with the network-free material evaluator.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "engine/mcts/material_evaluator.h"
#include "engine/mcts/settings.h"
#include "engine/play/match.h"
#include "engine/play/mcts_player.h"
#include "engine/play/player_spec.h"

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

}  // namespace
}  // namespace ultima
