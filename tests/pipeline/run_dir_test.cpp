// The run directory (nn/data/run_dir.h): model versions and the best
// model, shard sequences per tag, and files written atomically.
#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/file_io.h"
#include "nn/data/run_dir.h"
#include "test_util.h"

namespace ultima {
namespace {

using namespace ultima::data;

using test::TempDir;
using test::file_names;

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

}  // namespace
}  // namespace ultima
