// The loop's stages as objects, with the material evaluator standing in for
// the network: self-play keeps what an earlier try wrote, evaluation plays
// the matches its counts ask for and gates as configured, and the
// generation table survives a restart and names a damaged file. (Training
// needs the network module: the tiny loop's end-to-end test covers it.)
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>

#include "engine/mcts/material_evaluator.h"
#include "engine/play/pgn.h"
#include "engine/rules/file_io.h"
#include "test_util.h"
#include "training/loop/loop.h"

namespace ultima::loop {
namespace {

using test::TempDir;

// Uniform priors and an even value: plays almost at random.
class UniformEvaluator : public Evaluator {
 public:
  void evaluate(std::span<const EvalInput> inputs, std::span<EvalOutput> outputs) override {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::size_t n = inputs[i].moves->size();
      outputs[i].policy.assign(n, n ? 1.0f / static_cast<float>(n) : 0.0f);
      outputs[i].win = outputs[i].loss = 0.25f;
      outputs[i].draw = 0.5f;
    }
  }
  std::string name() const override { return "uniform"; }
};

RunConfig small_config(const std::string& extra = "") {
  return RunConfig::parse(
      "name: stages\nseed: 3\n"
      "selfplay:\n  games_per_generation: 4\n  parallel_games: 2\n  games_per_shard: 2\n  full_playouts: 8\n"
      "  cheap_playouts: 4\n  batch: 4\n  max_plies: 40\n"
      "evaluation:\n  playouts: 8\n  batch: 4\n  games_vs_best: 4\n  games_vs_initial: 2\n"
      "  levels: [novice]\n  games_per_level: 2\n  concurrency: 1\n  max_plies: 40\n" +
          extra,
      "test");
}

// Every version asked for is recorded; `weak` gets the uniform evaluator.
struct Models {
  std::uint64_t weak = ~0ull;
  std::set<std::uint64_t> asked;
  std::mutex mutex;
  ModelEvaluators function() {
    return [this](std::uint64_t version) -> std::shared_ptr<Evaluator> {
      std::lock_guard<std::mutex> lock(mutex);
      asked.insert(version);
      if (version == weak) return std::make_shared<UniformEvaluator>();
      return std::make_shared<MaterialEvaluator>();
    };
  }
};

TEST(LoopSelfPlayStage, PlaysTheGenerationOnceAndCountsItsSamples) {
  const TempDir dir("stage-selfplay");
  const selfplay::RunDir run(dir.path());
  const RunConfig config = small_config();
  Models models;
  SelfPlayStage stage(run, config, models.function());
  const SelfPlayOutcome first = stage.run(1, 0);
  EXPECT_EQ(first.stats.games, 4);
  EXPECT_EQ(run.shard_sequences("gen0001").size(), 2u);
  EXPECT_GT(first.new_samples, 0u);
  EXPECT_EQ(first.new_samples, first.stats.samples);
  EXPECT_EQ(models.asked, std::set<std::uint64_t>{0});
  // Run again (a restarted loop): nothing is played twice, the count stays.
  const SelfPlayOutcome again = stage.run(1, 0);
  EXPECT_EQ(again.stats.games, 0);
  EXPECT_EQ(again.stats.games_skipped, 4);
  EXPECT_EQ(again.new_samples, first.new_samples);
}

TEST(LoopEvaluationStage, PlaysEachMatchAndGatesOnTheScore) {
  const TempDir dir("stage-eval");
  const selfplay::RunDir run(dir.path());
  // The candidate (model 2) plays almost at random: it cannot reach a gate
  // of 1.0 against the material evaluator.
  const RunConfig config = small_config("  gate_score: 1.0\n  promotion: gating\n");
  Models models;
  models.weak = 2;
  EvaluationStage stage(run, config, models.function());
  const EvaluationOutcome out = stage.run(2, 2, 1);
  EXPECT_EQ(out.vs_best.wdl.games(), 4);
  EXPECT_EQ(out.vs_initial.wdl.games(), 2);
  ASSERT_EQ(out.vs_levels.size(), 1u);
  EXPECT_EQ(out.vs_levels[0].wdl.games(), 2);
  EXPECT_TRUE(std::isfinite(out.elo));
  EXPECT_LT(out.vs_best.score, 1.0);
  EXPECT_FALSE(out.promoted);
  EXPECT_EQ(models.asked, (std::set<std::uint64_t>{0, 1, 2}));
  // Each match's games are kept.
  EXPECT_EQ(read_pgn_file(run.path("games/eval-gen0002-vs-best.pgn")).size(), 4u);
  EXPECT_EQ(read_pgn_file(run.path("games/eval-gen0002-vs-novice.pgn")).size(), 2u);
}

// The material evaluator, setting `stop` at its N-th call.
class StoppingEvaluator : public MaterialEvaluator {
 public:
  StoppingEvaluator(std::atomic<int>& calls, int stop_at, std::atomic<bool>& stop)
      : calls_(calls), stop_at_(stop_at), stop_(stop) {}
  void evaluate(std::span<const EvalInput> inputs, std::span<EvalOutput> outputs) override {
    if (++calls_ == stop_at_) stop_ = true;
    MaterialEvaluator::evaluate(inputs, outputs);
  }

 private:
  std::atomic<int>& calls_;
  int stop_at_;
  std::atomic<bool>& stop_;
};

TEST(LoopEvaluationStage, AStopEndsItDuringAMatch) {
  // The stop comes in the first match (vs best): that match ends at the
  // next move, and neither model 0 nor a level is played.
  const TempDir dir("stage-eval-stop");
  const selfplay::RunDir run(dir.path());
  const RunConfig config = small_config("  promotion: continuous\n");
  std::atomic<bool> stop{false};
  std::atomic<int> calls{0};
  std::set<std::uint64_t> asked;
  std::mutex mutex;
  EvaluationStage stage(run, config,
                        [&](std::uint64_t version) -> std::shared_ptr<Evaluator> {
                          std::lock_guard<std::mutex> lock(mutex);
                          asked.insert(version);
                          return std::make_shared<StoppingEvaluator>(calls, 20, stop);
                        },
                        &stop);
  const EvaluationOutcome out = stage.run(2, 2, 1);
  EXPECT_TRUE(stop.load());
  EXPECT_TRUE(out.stopped);
  EXPECT_FALSE(out.promoted);  // even under continuous promotion
  EXPECT_LT(out.vs_best.wdl.games(), 4);
  EXPECT_EQ(out.vs_initial.wdl.games(), 0);
  for (const MatchOutcome& level : out.vs_levels) EXPECT_EQ(level.wdl.games(), 0);
  EXPECT_EQ(asked, (std::set<std::uint64_t>{1, 2}));
  EXPECT_FALSE(std::filesystem::exists(run.path("games/eval-gen0002-vs-novice.pgn")));

  // The same stage with the flag never set plays everything (the control).
  std::atomic<bool> never{false};
  EvaluationStage whole(run, config, [&](std::uint64_t) { return std::make_shared<MaterialEvaluator>(); }, &never);
  const EvaluationOutcome done = whole.run(2, 2, 1);
  EXPECT_FALSE(done.stopped);
  EXPECT_TRUE(done.promoted);
  EXPECT_EQ(done.vs_best.wdl.games(), 4);
  EXPECT_EQ(done.vs_levels.at(0).wdl.games(), 2);
}

TEST(LoopEvaluationStage, ContinuousPromotesAndEmptyMatchesAreSkipped) {
  const TempDir dir("stage-eval-continuous");
  const selfplay::RunDir run(dir.path());
  const RunConfig config =
      RunConfig::parse("evaluation:\n  promotion: continuous\n  games_vs_best: 0\n  games_vs_initial: 0\n"
                       "  levels: []\n",
                       "test");
  Models models;
  EvaluationStage stage(run, config, models.function());
  const EvaluationOutcome out = stage.run(1, 1, 0);
  EXPECT_TRUE(out.promoted);
  EXPECT_EQ(out.vs_best.wdl.games(), 0);
  EXPECT_TRUE(std::isnan(out.vs_best.score));
  EXPECT_TRUE(out.vs_levels.empty());
  EXPECT_TRUE(std::isnan(out.elo));
  // The best model (0 here) and model 0 are loaded only for games against them.
  EXPECT_EQ(models.asked.count(0), 0u);
}

TEST(LoopGenerationLog, RowsSurviveARestartAndEmptyCellsStayEmpty) {
  const TempDir dir("generation-log");
  const selfplay::RunDir run(dir.path());
  const RunConfig config = small_config();
  SelfPlayOutcome played;
  played.stats.games = 4;
  played.stats.white_wins = 3;
  played.new_samples = 120;
  TrainSummary trained;
  trained.step = 40;
  EvaluationOutcome judged;
  judged.vs_best.wdl.wins = 3;
  judged.vs_best.wdl.losses = 1;
  judged.vs_best.score = 0.75;
  judged.vs_levels.resize(1);  // no games: an empty cell
  judged.promoted = true;
  {
    GenerationLog log(run, config.eval.levels);
    EXPECT_EQ(log.generations(), 0);
    EXPECT_TRUE(std::isnan(log.last("train_step")));
    log.append(generation_row(config, 1, 90, 1, played, trained, judged));
  }
  GenerationLog again(run, {"some", "other", "levels"});  // the file's columns win
  ASSERT_EQ(again.generations(), 1);
  EXPECT_EQ(again.last("train_step"), 40);
  EXPECT_EQ(again.last("elapsed_min"), 1.5);
  const CsvTable::Row& row = again.table().rows[0];
  EXPECT_EQ(row.at("score_vs_best"), "0.750");
  EXPECT_EQ(row.at("decisive_share"), "0.750");
  EXPECT_EQ(row.at("score_vs_novice"), "");
  EXPECT_EQ(row.at("score_vs_initial"), "");
  EXPECT_EQ(row.at("loss_policy"), "");  // no training step reported
  EXPECT_EQ(row.at("promoted"), "1");

  // A damaged table is named, not silently dropped.
  ultima::write_file_atomically(run.path("generations.csv"), "generation,elo\n1,2,3\n");
  try {
    GenerationLog broken(run, config.eval.levels);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("generations.csv"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ultima::loop
