// The loop's run configs (training/loop/run_config.h): the shipped configs
// and their recorded copies, the built-in one, overlays, the defaults,
// renamed keys, and bad keys and values named in the error.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/file_io.h"
#include "engine/mcts/settings.h"
#include "nn/data/run_dir.h"
#include "selfplay/selfplay.h"
#include "training/loop/run_config.h"

namespace ultima {
namespace {

using namespace ultima::data;
namespace fs = std::filesystem;

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

TEST(RunConfig, LongConfigIsTheMainJobWithALongerLoopAndFallingLearningRate) {
  // configs/cpu-long.yaml promises the main job's run for its first 40,000
  // steps: the same keys but the loop's and the schedule's, and a learning
  // rate that equals the main job's until then and falls below it after.
  const loop::RunConfig main_job = loop::RunConfig::load(source_file("configs/cpu.yaml"));
  const loop::RunConfig long_run = loop::RunConfig::load(source_file("configs/cpu-long.yaml"));
  EXPECT_EQ(long_run.name, "cpu-long");
  const std::vector<std::string> keys = main_job.differing_keys(long_run);
  const std::set<std::string> allowed = {"name",
                                         "loop.generations",
                                         "loop.max_minutes",
                                         "training.lr_schedule",
                                         "training.lr_decay_steps",
                                         "training.lr_decay_factor"};
  for (const std::string& key : keys) EXPECT_TRUE(allowed.count(key)) << key;
  EXPECT_GT(long_run.loop.max_minutes, 8 * 60.0);
  EXPECT_GT(long_run.loop.generations, main_job.loop.generations);
  for (const std::uint64_t step : {0, 50, 100, 1000, 22000, 40099})
    EXPECT_FLOAT_EQ(long_run.training.lr_at(step), main_job.training.lr_at(step)) << step;
  EXPECT_LT(long_run.training.lr_at(40100), main_job.training.lr_at(40100));
  EXPECT_LT(long_run.training.lr_at(200000), long_run.training.lr_at(100000));
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
  EXPECT_EQ(c.eval.mcts.gumbel_noise_scale, 0.0f);
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
  EXPECT_TRUE(plain.selfplay.mcts.gumbel);
  EXPECT_EQ(plain.selfplay.policy_target, "gumbel");
  EXPECT_FALSE(plain.selfplay.mcts.gumbel_rescale_q);
  EXPECT_EQ(plain.selfplay.mcts.gumbel_c_scale, 1.0f);
  EXPECT_TRUE(plain.selfplay.mcts.mate_scan);
  EXPECT_EQ(plain.selfplay.resign_threshold, 0.0);
  EXPECT_EQ(plain.selfplay.adjudicate_cp, 100);
  EXPECT_EQ(plain.training.q_ratio, 0.5f);
  EXPECT_EQ(plain.training.ema_halflife, 400);
  EXPECT_TRUE(plain.eval.mcts.gumbel);
  EXPECT_TRUE(plain.eval.mcts.mate_scan);
  EXPECT_EQ(plain.eval.mcts.gumbel_noise_scale, 1.0f);
  EXPECT_EQ(plain.eval.promotion, "continuous");
  const loop::RunConfig gpu = loop::RunConfig::load(source_file("configs/gpu.yaml"));
  EXPECT_TRUE(gpu.selfplay.mcts.gumbel);
  EXPECT_EQ(gpu.selfplay.policy_target, "gumbel");
  EXPECT_EQ(gpu.selfplay.resign_threshold, 0.0);
}

// The self-play and evaluation searches are set by the MCTS registry's keys:
// --print-config writes each with the value the games will search with,
// the registry's default unless the run's stated overrides change it, and
// a key given in a file reaches the search.
TEST(RunConfig, SearchKeysAreTheRegistrysWithTheStatedOverrides) {
  const loop::RunConfig plain = loop::RunConfig::parse("name: x\n", "test.yaml");
  const YAML::Node printed = YAML::Load(plain.to_yaml());
  const std::pair<const char*, MctsConfig> sections[] = {{"selfplay", selfplay::selfplay_mcts_defaults()},
                                                         {"evaluation", loop::eval_mcts_defaults()}};
  int overridden = 0;
  for (const auto& [section, defaults] : sections) {
    SCOPED_TRACE(section);
    MctsSettings stated, registry;
    stated.config = defaults;
    for (const MctsSettingInfo& info : mcts_setting_list()) {
      const std::vector<std::string>& keys = loop::run_mcts_keys();
      if (std::find(keys.begin(), keys.end(), info.name) == keys.end()) continue;
      ASSERT_TRUE(printed[section][info.name]) << info.name << " is not printed";
      const std::string value = printed[section][info.name].as<std::string>();
      const std::string expected = get_mcts_setting(stated, info.name);
      if (info.type == SettingType::kNumber) {
        EXPECT_FLOAT_EQ(std::stof(value), std::stof(expected)) << info.name;
      } else {
        EXPECT_EQ(value, expected) << info.name;
      }
      overridden += expected != get_mcts_setting(registry, info.name);
    }
    // What the code used to force: no root mate-in-two check.
    EXPECT_EQ(printed[section]["mate_scan_root"].as<std::string>(), "false");
    // The network's priors as they are, whatever the players' default: the
    // runs of every recorded config were played so.
    EXPECT_FLOAT_EQ(printed[section]["policy_temperature"].as<float>(), 1.0f);
  }
  EXPECT_GE(overridden, 10);  // gumbel, gumbel_rescale_q, gumbel_c_scale, noise, mate_scan_root, policy_temperature
  const loop::RunConfig set = loop::RunConfig::parse(
      "selfplay:\n  mate_scan_root: true\n  gumbel_actions: 8\nevaluation:\n  cpuct: 2.5\n", "test.yaml");
  EXPECT_TRUE(set.selfplay.mcts.mate_scan_root);
  EXPECT_EQ(set.selfplay.mcts.gumbel_actions, 8);
  EXPECT_FLOAT_EQ(set.eval.mcts.cpuct, 2.5f);
  EXPECT_TRUE(loop::RunConfig::parse(set.to_yaml(), "again").differing_keys(set).empty());
  expect_config_error("selfplay:\n  gumbel_actions: 0\n", "selfplay.gumbel_actions");
  expect_config_error("evaluation:\n  threads: 4\n", "evaluation.threads");  // the loop sets it
}

TEST(RunConfig, RenamedKeysOfOldRunDirectoriesAreStillRead) {
  const loop::RunConfig old = loop::RunConfig::parse(
      "selfplay:\n  mcts_batch: 3\n  fpu_reduction: 0.2\nevaluation:\n  mcts_batch: 5\n", "test.yaml");
  EXPECT_EQ(old.selfplay.mcts.batch_size, 3);
  EXPECT_FLOAT_EQ(old.selfplay.mcts.fpu_reduction, 0.2f);
  EXPECT_EQ(old.eval.mcts.batch_size, 5);
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

}  // namespace
}  // namespace ultima
