// The graded levels and player specs: every level file loads, players by
// name, bad level files and specs rejected naming the problem, and the
// levels' randomness reproducible from a seed.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/play/level.h"
#include "engine/play/player_spec.h"
#include "engine/rules/movegen.h"
#include "engine/rules/rules.h"
#include "test_util.h"

namespace ultima {
namespace {

using test::is_legal;
using test::random_game_position;

// Levels and players

TEST(Level, EveryLevelFileLoads) {
  namespace fs = std::filesystem;
  const std::vector<Level> levels = load_levels();
  int files = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(levels_directory()))
    if (e.path().extension() == ".yaml") ++files;
  ASSERT_EQ(static_cast<int>(levels.size()), files);
  ASSERT_GE(levels.size(), 2u);
  std::set<std::string> names;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const Level& l = levels[i];
    SCOPED_TRACE(l.name);
    EXPECT_TRUE(names.insert(l.name).second) << "duplicate level name";
    if (i) {
      EXPECT_LT(levels[i - 1].order, l.order) << "order must be strictly increasing";
    }
    EXPECT_TRUE(fs::exists(fs::path(levels_directory()) / (l.name + ".yaml"))) << "file name differs from name";
    EXPECT_FALSE(l.description.empty());
    EXPECT_TRUE(l.depth > 0 || l.nodes > 0 || l.movetime_ms > 0);
    EXPECT_GE(l.blunder_rate, 0.0);
    EXPECT_LE(l.blunder_rate, 1.0);
    EXPECT_EQ(find_level(l.name).name, l.name);
  }
  EXPECT_EQ(level_names().size(), levels.size());
}

TEST(Level, PlayersByName) {
  Position pos = Position::start();
  for (const std::string& name : level_names()) {
    SCOPED_TRACE(name);
    auto player = make_player(name);
    ASSERT_TRUE(player);
    EXPECT_EQ(player->name(), name);
    auto again = make_player("level:" + name);
    EXPECT_EQ(again->name(), name);
    const Level level = find_level(name);
    if (level.nodes > 50000 || level.movetime_ms > 500) continue;  // keep the test fast
    player->new_game();
    const MoveChoice c = player->choose(pos, 42);
    EXPECT_TRUE(is_legal(pos, c.move));
  }
  auto random = make_player("random");
  EXPECT_EQ(random->name(), "random");
  EXPECT_TRUE(is_legal(pos, random->choose(pos, 1).move));
  auto custom = make_player("search:depth=2,noise=10");
  ASSERT_TRUE(custom);
  EXPECT_TRUE(is_legal(pos, custom->choose(pos, 7).move));
  auto* sp = dynamic_cast<SearchPlayer*>(custom.get());
  ASSERT_NE(sp, nullptr);
  EXPECT_EQ(sp->level().depth, 2);
  EXPECT_EQ(sp->level().eval_noise_cp, 10);
}

TEST(Level, FromPairs) {
  const Level l = Level::from_pairs("depth=3,nodes=5000,movetime_ms=100,noise=20,blunder=0.25,hash_mb=2");
  EXPECT_EQ(l.depth, 3);
  EXPECT_EQ(l.nodes, 5000u);
  EXPECT_EQ(l.movetime_ms, 100);
  EXPECT_EQ(l.eval_noise_cp, 20);
  EXPECT_DOUBLE_EQ(l.blunder_rate, 0.25);
  EXPECT_EQ(l.hash_mb, 2u);
  EXPECT_EQ(l.threads, 1);
  EXPECT_EQ(Level::from_pairs("nodes=100,threads=2").threads, 2);
}

// The exception's message must contain every one of `words`.
template <class F>
void expect_rejected(F&& f, std::initializer_list<const char*> words) {
  try {
    f();
    ADD_FAILURE() << "accepted, expected std::invalid_argument naming " << *words.begin();
  } catch (const std::invalid_argument& e) {
    for (const char* w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

TEST(Level, BadLevelFilesAreRejected) {
  const std::string ok = "name: t\ndescription: d\norder: 1\ndepth: 2\n";
  EXPECT_NO_THROW(Level::parse(ok, "t.yaml"));
  EXPECT_EQ(Level::parse(ok + "weights: {mobility: 6}\n", "t.yaml").weights.mobility, 6);
  expect_rejected([&] { Level::parse(ok + "speed: 3\n", "t.yaml"); }, {"t.yaml", "speed"});
  expect_rejected([&] { Level::parse("name: t\ndepth: -1\n", "t.yaml"); }, {"t.yaml", "depth"});
  expect_rejected([&] { Level::parse("name: t\ndepth: 500\n", "t.yaml"); }, {"depth"});
  expect_rejected([&] { Level::parse("name: t\ndepth: two\n", "t.yaml"); }, {"depth"});
  expect_rejected([&] { Level::parse("name: t\nnodes: -5\n", "t.yaml"); }, {"nodes"});
  expect_rejected([&] { Level::parse("name: t\ndepth: 1\nblunder_rate: 1.5\n", "t.yaml"); }, {"blunder_rate"});
  expect_rejected([&] { Level::parse("name: t\ndepth: 1\nblunder_rate: -0.1\n", "t.yaml"); }, {"blunder_rate"});
  expect_rejected([&] { Level::parse("name: t\ndepth: 1\neval_noise_cp: -3\n", "t.yaml"); }, {"eval_noise_cp"});
  expect_rejected([&] { Level::parse("name: t\ndescription: no budget\n", "t.yaml"); }, {"t.yaml", "depth"});
  expect_rejected([&] { Level::parse("name: [t\ndepth: 1\n", "t.yaml"); }, {"t.yaml"});
  expect_rejected([&] { Level::parse("just some words", "t.yaml"); }, {"t.yaml"});
  expect_rejected([&] { Level::parse("depth: 2\n", "t.yaml"); }, {"t.yaml", "name"});
  expect_rejected([&] { Level::parse(ok + "weights: {aggression: 6}\n", "t.yaml"); }, {"aggression"});
  expect_rejected([] { Level::load("/nonexistent/level.yaml"); }, {"/nonexistent/level.yaml"});
  expect_rejected([] { Level::from_pairs("nodes=100,threads=0"); }, {"threads"});
  expect_rejected([] { Level::from_pairs("nodes=100,threads=two"); }, {"threads"});
  // A learned evaluation's file is read when the level is: a missing or
  // damaged one is refused before any game, the level and the file named.
  expect_rejected([&] { Level::parse(ok + "nnue: /nonexistent/net.unnue\n", "t.yaml"); },
                  {"t.yaml", "nnue", "/nonexistent/net.unnue"});
  expect_rejected([] { Level::from_pairs("nodes=100,nnue=/nonexistent/net.unnue"); }, {"nnue", "/nonexistent/net.unnue"});
}

TEST(Level, ALearnedEvaluationIsReadFromTheLevelsFolder) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ultima-level-nnue-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  nnue::save((dir / "net.unnue").string(), nnue::Network{});
  {
    std::ofstream out(dir / "learned.yaml");
    out << "name: learned\nnodes: 300\nnnue: net.unnue\n";
  }
  const Level level = Level::load((dir / "learned.yaml").string());
  ASSERT_NE(level.network, nullptr);
  // An all-zero network scores every position 0, and the player still plays legal moves.
  SearchPlayer player(level);
  Position pos = Position::start();
  const MoveChoice c = player.choose(pos, 1);
  EXPECT_TRUE(is_legal(pos, c.move));
  EXPECT_EQ(c.score_cp, 0);
  fs::remove_all(dir);
}

TEST(Level, TheShippedLearnedEvaluationByName) {
  // "default" is the network that ships in configs/nnue/nets/: a valid
  // file whose evaluation is not the hand-written one; "none" and "" are
  // the hand-written evaluation; a missing file is named.
  const std::string file = default_nnue_file();
  EXPECT_NE(file.find(kDefaultNnue), std::string::npos) << file;
  const auto net = load_nnue("default");
  ASSERT_NE(net, nullptr);
  EXPECT_EQ(net, load_nnue(file));  // one copy per file
  EXPECT_FALSE(net->description.empty());
  EXPECT_EQ(load_nnue("none"), nullptr);
  EXPECT_EQ(load_nnue(""), nullptr);
  EXPECT_EQ(Level::from_pairs("nodes=100,nnue=default").network, net);
  EXPECT_EQ(Level::from_pairs("nodes=100,nnue=none").network, nullptr);
  // The network sees more than material: the start position and one with a
  // piece moved score apart, where material alone cannot tell them apart.
  Position start = Position::start();
  Position moved = Position::start();
  MoveList list;
  generate_legal(moved, list);
  moved.make(list[0]);
  EXPECT_NE(nnue::evaluate_full(*net, start), -nnue::evaluate_full(*net, moved));
  auto refused = [](const std::string& name, std::initializer_list<const char*> words) {
    try {
      load_nnue(name);
      ADD_FAILURE() << name << " accepted";
    } catch (const nnue::FileError& e) {
      for (const char* w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
    }
  };
  refused("/nonexistent/net.unnue", {"/nonexistent/net.unnue"});
  // With $ULTIMA_NNUE naming a missing file, "default" says what to do.
  ::setenv("ULTIMA_NNUE", "/nonexistent/shipped.unnue", 1);
  refused("default", {"/nonexistent/shipped.unnue", "ULTIMA_NNUE", "none"});
  ::unsetenv("ULTIMA_NNUE");
}

TEST(Level, BadPlayerSpecsAreRejected) {
  expect_rejected([] { make_player(""); }, {"spec"});
  expect_rejected([] { make_player("world-champion"); }, {"world-champion"});
  expect_rejected([] { make_player("level:world-champion"); }, {"world-champion"});
  expect_rejected([] { make_player("search:"); }, {"depth"});
  expect_rejected([] { make_player("search:depth"); }, {"depth"});
  expect_rejected([] { make_player("search:depth=-2"); }, {"depth"});
  expect_rejected([] { make_player("search:depth=x"); }, {"depth"});
  expect_rejected([] { make_player("search:depth=2,speed=3"); }, {"speed"});
  expect_rejected([] { make_player("search:depth=2,blunder=1.5"); }, {"blunder"});
  expect_rejected([] { make_player("search:depth=2,name=x"); }, {"name"});
  expect_rejected([] { Level::from_pairs("noise=10"); }, {"depth"});
}

TEST(Level, UnknownSpecKeysSuggestTheNearest) {
  expect_rejected([] { make_player("search:depth=2,nodez=5"); }, {"nodez", "did you mean 'nodes'"});
}

TEST(Level, PlayerSpecHelpNamesEveryKindLevelAndKey) {
  const std::string help = player_spec_help();
  for (const char* word : {"random", "level:LEVEL", "search:KEY=VALUE", "mcts[:KEY=VALUE", "weights=FILE",
                           "blunder_rate", "material_only", "gumbel_c_scale", "playouts"})
    EXPECT_NE(help.find(word), std::string::npos) << word;
  for (const std::string& name : level_names()) EXPECT_NE(help.find(name), std::string::npos) << name;
}

TEST(Level, SameSeedSameMove) {
  std::mt19937_64 rng(2024);
  for (const char* spec : {"search:depth=2,noise=80", "search:depth=1,noise=300,blunder=0.5", "novice"}) {
    for (int i = 0; i < 6; ++i) {
      Position pos = random_game_position(Rules{}, rng, 10 + 7 * i);
      if (game_status(pos).over()) continue;
      SCOPED_TRACE(std::string(spec) + " " + pos.fen());
      const std::uint64_t seed = rng();
      auto a = make_player(spec);
      auto b = make_player(spec);
      const Move first = a->choose(pos, seed).move;
      EXPECT_TRUE(is_legal(pos, first));
      EXPECT_EQ(to_coordinate(b->choose(pos, seed).move), to_coordinate(first));
      a->new_game();
      EXPECT_EQ(to_coordinate(a->choose(pos, seed).move), to_coordinate(first));
    }
  }
}

// Noise and blunders do change the choice across seeds (else the weak
// levels would not be weak).
TEST(Level, SeedsVaryTheChoice) {
  Position pos = Position::start();
  auto player = make_player("search:depth=1,blunder=1");
  std::set<std::uint16_t> moves;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const Move m = player->choose(pos, seed).move;
    EXPECT_TRUE(is_legal(pos, m));
    moves.insert(m.code);
  }
  EXPECT_GT(moves.size(), 5u);
}

// Players take limits: a level plays within its own budget and the
// caller's, whichever ends first, and reports its iterations.
TEST(SearchPlayerLimits, TheCallersDepthCapsTheLevelsOwn) {
  SearchPlayer player(Level::from_pairs("depth=12,hash_mb=2"));
  Position pos = Position::start();
  std::vector<int> depths;
  MoveLimits limits;
  limits.depth = 2;
  limits.on_info = [&](const SearchInfo& info) { depths.push_back(info.depth); };
  const MoveChoice capped = player.choose(pos, 1, limits);
  EXPECT_EQ(capped.depth, 2);
  ASSERT_FALSE(depths.empty());
  EXPECT_EQ(*std::max_element(depths.begin(), depths.end()), 2);
  EXPECT_TRUE(test::is_legal(pos, capped.move));
  // And the level's own budget caps the caller's.
  SearchPlayer shallow(Level::from_pairs("depth=1,hash_mb=2"));
  limits.depth = 6;
  EXPECT_EQ(shallow.choose(pos, 1, limits).depth, 1);
}

TEST(SearchPlayerLimits, StopEndsAMoveWithTheBestSoFar) {
  // A level that would search far longer than any test: stop() ends it.
  SearchPlayer player(Level::from_pairs("depth=60,hash_mb=2"));
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
  EXPECT_LT(choice.depth, 60);
  EXPECT_TRUE(test::is_legal(pos, choice.move));
}

}  // namespace
}  // namespace ultima
