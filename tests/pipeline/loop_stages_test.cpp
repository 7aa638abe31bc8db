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
#include "engine/play/player_spec.h"
#include "engine/base/file_io.h"
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
  const data::RunDir run(dir.path());
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

TEST(LoopSelfPlayStage, WarmStartGenerationsPlayTheTeacherThenSelfPlayTakesOver) {
  const TempDir dir("stage-warm");
  const data::RunDir run(dir.path());
  const RunConfig config = small_config(
      "warm_start:\n  generations: 1\n  games_per_generation: 2\n  depth: 1\n  multipv: 3\n  sample_plies: 4\n");
  EXPECT_EQ(config.warm_start.generations, 1);
  EXPECT_EQ(config.warm_start.teacher.multipv, 3);
  Models models;
  SelfPlayStage stage(run, config, models.function());
  const SelfPlayOutcome warm = stage.run(1, 0);
  EXPECT_EQ(warm.stats.games, 2);
  EXPECT_TRUE(models.asked.empty()) << "the warm start asked for a network";
  EXPECT_EQ(read_pgn_file(run.games_path("gen0001", 0)).front().event, "ultima warm start");
  const SelfPlayOutcome after = stage.run(2, 0);
  EXPECT_EQ(after.stats.games, 4);
  EXPECT_EQ(models.asked, std::set<std::uint64_t>{0});
  EXPECT_EQ(read_pgn_file(run.games_path("gen0002", 0)).front().event, "ultima selfplay");
  // The section round-trips, and a bad value is named.
  EXPECT_TRUE(RunConfig::parse(config.to_yaml(), "again").differing_keys(config).empty());
  try {
    small_config("warm_start:\n  multipv: 0\n");
    FAIL() << "multipv 0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("multipv"), std::string::npos) << e.what();
  }
  try {
    small_config("warm_start:\n  generation: 2\n");
    FAIL() << "an unknown key accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("warm_start.generation"), std::string::npos) << e.what();
  }
}

TEST(LoopSelfPlayStage, LaterGenerationsAddTheTeachersGamesAndResumeThem) {
  const TempDir dir("stage-later");
  const data::RunDir run(dir.path());
  const RunConfig config = small_config(
      "warm_start:\n  generations: 1\n  games_per_generation: 2\n  later_games: 2\n  depth: 1\n  multipv: 3\n"
      "  sample_plies: 4\n");
  EXPECT_EQ(config.warm_start.later_games, 2);
  Models models;
  SelfPlayStage stage(run, config, models.function());
  const SelfPlayOutcome warm = stage.run(1, 0);
  EXPECT_EQ(warm.stats.games, 2);
  EXPECT_TRUE(run.shard_sequences("gen0001-teacher").empty()) << "the warm start itself is the teacher's";
  const SelfPlayOutcome later = stage.run(2, 0);
  EXPECT_EQ(later.stats.games, 4);  // the self-play job's
  ASSERT_EQ(run.shard_sequences("gen0002-teacher").size(), 1u);  // 2 games, 2 a shard
  EXPECT_EQ(read_pgn_file(run.games_path("gen0002-teacher", 0)).front().event, "ultima warm start");
  std::uint64_t teacher = data::read_shard_header(run.shard_path("gen0002-teacher", 0)).samples;
  EXPECT_GT(teacher, 0u);
  EXPECT_EQ(later.new_samples, later.stats.samples + teacher);
  // A restarted generation plays nothing again and counts the same.
  const SelfPlayOutcome again = stage.run(2, 0);
  EXPECT_EQ(again.stats.games, 0);
  EXPECT_EQ(again.new_samples, later.new_samples);
  EXPECT_EQ(run.shard_sequences("gen0002-teacher").size(), 1u);
  // A teacher shard lost (killed before it was written) is played again, alone.
  std::filesystem::remove(run.shard_path("gen0002-teacher", 0));
  const SelfPlayOutcome resumed = stage.run(2, 0);
  EXPECT_EQ(resumed.stats.games, 0) << "the self-play games were played again";
  EXPECT_EQ(resumed.new_samples, later.new_samples) << "the same seed, the same teacher games";
  try {
    small_config("warm_start:\n  later_games: -1\n");
    FAIL() << "later_games -1 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("later_games"), std::string::npos) << e.what();
  }
}

TEST(LoopSelfPlayStage, TacticsAddProvenMatesToTheGenerationsSamples) {
  const TempDir dir("stage-tactics");
  const data::RunDir run(dir.path());
  const RunConfig config = small_config("tactics:\n  positions: 3\n  max_moves: 1\n");
  Models models;
  SelfPlayStage stage(run, config, models.function());
  const SelfPlayOutcome first = stage.run(1, 0);
  EXPECT_EQ(first.stats.games, 4);  // the self-play job's
  EXPECT_EQ(run.shard_sequences("gen0001").size(), 2u);
  // games_per_shard 2: two shards of mates, tagged apart from self-play's.
  ASSERT_EQ(run.shard_sequences("gen0001-mates"), (std::vector<int>{0, 1}));
  std::uint64_t mates = 0;
  for (int s : {0, 1}) {
    const std::vector<data::Sample> samples = data::read_shard(run.shard_path("gen0001-mates", s));
    for (const data::Sample& sample : samples) {
      EXPECT_EQ(sample.result, 1);
      EXPECT_EQ(sample.plies_to_end, 1);
    }
    mates += samples.size();
  }
  EXPECT_EQ(mates, 3u);
  EXPECT_EQ(first.new_samples, first.stats.samples + mates);
  EXPECT_EQ(read_pgn_file(run.games_path("gen0001-mates", 0)).front().event, "ultima tactics");
  // Run again: nothing is made twice, the count stays.
  EXPECT_EQ(stage.run(1, 0).new_samples, first.new_samples);
  // The section round-trips, and a bad value is named.
  EXPECT_TRUE(RunConfig::parse(config.to_yaml(), "again").differing_keys(config).empty());
  EXPECT_EQ(small_config().tactics.positions, 0);
  EXPECT_EQ(small_config("tactics:\n  longest_share: 0.75\n").tactics.mates.longest_share, 0.75);
  const RunConfig thin = small_config("tactics:\n  sparse_share: 0.5\n  sparse_pieces: 14\n");
  EXPECT_EQ(thin.tactics.mates.sparse_share, 0.5);
  EXPECT_EQ(thin.tactics.mates.sparse_pieces, 14);
  const std::pair<const char*, const char*> bad_values[] = {
      {"tactics:\n  max_moves: 4\n", "tactics: max_moves"},
      {"tactics:\n  positions: -1\n", "tactics.positions"},
      {"tactics:\n  longest_share: 1.5\n", "tactics: longest_share"},
      {"tactics:\n  sparse_share: 2\n", "tactics: sparse_share"},
      {"tactics:\n  sparse_pieces: 1\n", "tactics: sparse_pieces"},
  };
  for (const auto& [bad, named] : bad_values) {
    try {
      small_config(bad);
      FAIL() << bad << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
  }
}

TEST(LoopEvaluationStage, PlaysEachMatchAndGatesOnTheScore) {
  const TempDir dir("stage-eval");
  const data::RunDir run(dir.path());
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
  const data::RunDir run(dir.path());
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
  const data::RunDir run(dir.path());
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
  const data::RunDir run(dir.path());
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

// The default ladder: novice 275, beginner 570, casual 871, intermediate
// 1258, advanced 1682, expert 2272, club 2861, master 3130, grandmaster
// 3547 (configs/levels/).
TEST(LoopAdaptiveEvaluation, ChoosesTheLevelsAroundTheCurrentElo) {
  const std::vector<LadderLevel> ladder = evaluation_ladder(RunConfig::parse("name: x\n", "test").eval);
  ASSERT_EQ(ladder.size(), 9u);
  EXPECT_EQ(ladder.front().name, "novice");
  EXPECT_EQ(ladder.back().name, "grandmaster");
  using Names = std::vector<std::string>;
  // No rating yet: as at the weakest level.
  EXPECT_EQ(choose_levels(ladder, std::nan(""), 2), (Names{"novice", "beginner"}));
  EXPECT_EQ(choose_levels(ladder, 100, 2), (Names{"novice", "beginner"}));
  // Bracketed: the one at or below and the one above.
  EXPECT_EQ(choose_levels(ladder, 275, 2), (Names{"novice", "beginner"}));
  EXPECT_EQ(choose_levels(ladder, 1000, 2), (Names{"casual", "intermediate"}));
  EXPECT_EQ(choose_levels(ladder, 1682, 2), (Names{"advanced", "expert"}));
  EXPECT_EQ(choose_levels(ladder, 2861, 2), (Names{"club", "master"}));
  EXPECT_EQ(choose_levels(ladder, 100000, 2), (Names{"master", "grandmaster"}));
  // One level: the nearer; three: the bracket and the nearer neighbour.
  EXPECT_EQ(choose_levels(ladder, 1000, 1), (Names{"casual"}));
  EXPECT_EQ(choose_levels(ladder, 1100, 1), (Names{"intermediate"}));
  EXPECT_EQ(choose_levels(ladder, 1000, 3), (Names{"beginner", "casual", "intermediate"}));
  EXPECT_EQ(choose_levels(ladder, 1200, 3), (Names{"casual", "intermediate", "advanced"}));
  EXPECT_EQ(choose_levels(ladder, 100, 3), (Names{"novice", "beginner", "casual"}));
  // 0 (or more than there are): every level.
  EXPECT_EQ(choose_levels(ladder, 1000, 0).size(), 9u);
  EXPECT_EQ(choose_levels(ladder, 1000, 12).size(), 9u);
  EXPECT_TRUE(choose_levels({}, 1000, 2).empty());
}

TEST(LoopAdaptiveEvaluation, PlansFromTheEarlierGenerations) {
  const EvalConfig eval = RunConfig::parse("name: x\n", "test").eval;
  CsvTable table;
  EvaluationPlan first = plan_evaluation(eval, table);
  EXPECT_TRUE(std::isnan(first.elo_before));
  EXPECT_EQ(first.levels, (std::vector<std::string>{"novice", "beginner"}));
  EXPECT_TRUE(first.vs_initial);
  // The last finite rating counts (a generation without one is skipped);
  // one score of 95% against model 0 ends those games for good.
  table.rows = {{{"elo", "500"}, {"score_vs_initial", "0.97"}},
                {{"elo", "1000.5"}, {"score_vs_initial", "0.90"}},
                {{"elo", ""}, {"score_vs_initial", ""}}};
  const EvaluationPlan later = plan_evaluation(eval, table);
  EXPECT_DOUBLE_EQ(later.elo_before, 1000.5);
  EXPECT_EQ(later.levels, (std::vector<std::string>{"casual", "intermediate"}));
  EXPECT_FALSE(later.vs_initial);
  // Below the threshold, or with it at 1 and no perfect score, they go on.
  table.rows[0]["score_vs_initial"] = "0.94";
  EXPECT_TRUE(plan_evaluation(eval, table).vs_initial);
  EvalConfig none = eval;
  none.games_vs_initial = 0;
  EXPECT_FALSE(plan_evaluation(none, CsvTable{}).vs_initial);
}

TEST(LoopAdaptiveEvaluation, PlaysThePlannedLevelsAndRatesWithAnInterval) {
  const TempDir dir("stage-eval-plan");
  const data::RunDir run(dir.path());
  const RunConfig config = small_config("  levels_per_generation: 1\n");
  Models models;
  EvaluationStage stage(run, config, models.function());
  EvaluationPlan plan;
  plan.levels = {"beginner"};
  plan.vs_initial = false;
  const EvaluationOutcome out = stage.run(3, 3, 2, plan);
  EXPECT_EQ(out.levels, (std::vector<std::string>{"beginner"}));
  ASSERT_EQ(out.vs_levels.size(), 1u);
  EXPECT_EQ(out.vs_levels[0].wdl.games(), 2);
  EXPECT_EQ(out.vs_initial.wdl.games(), 0);
  EXPECT_EQ(models.asked.count(0), 0u);  // model 0 not even loaded
  EXPECT_EQ(out.rating.games, 2);
  EXPECT_LT(out.rating.lower, out.elo);
  EXPECT_GT(out.rating.upper, out.elo);
  EXPECT_TRUE(std::filesystem::exists(run.path("games/eval-gen0003-vs-beginner.pgn")));
  EXPECT_FALSE(std::filesystem::exists(run.path("games/eval-gen0003-vs-novice.pgn")));

  // Its row names the levels and carries the interval.
  const CsvTable::Row row = generation_row(config, 3, 60, 3, SelfPlayOutcome{}, TrainSummary{}, out);
  EXPECT_EQ(row.at("eval_levels"), "beginner");
  EXPECT_EQ(row.at("rated_games"), "2");
  EXPECT_EQ(row.at("elo_low"), fixed(out.rating.lower, 1));
  EXPECT_EQ(row.at("elo_high"), fixed(out.rating.upper, 1));
  EXPECT_EQ(row.at("score_vs_beginner"), fixed(out.vs_levels[0].score, 3));
}

TEST(LoopGenerationLog, AnOlderTableGainsTheNewColumnsOnResume) {
  const TempDir dir("generation-log-old");
  const data::RunDir run(dir.path());
  // A table written before the interval and the adaptive levels.
  ultima::write_file_atomically(run.path("generations.csv"),
                                "generation,train_step,score_vs_initial,score_vs_novice,elo\n1,100,0.6,0.5,280.0\n");
  GenerationLog log(run, {"novice", "beginner"});
  ASSERT_EQ(log.generations(), 1);
  EXPECT_EQ(log.last("elo"), 280);
  log.append({{"generation", "2"}, {"train_step", "200"}, {"elo", "600.0"}, {"elo_low", "500.0"},
              {"elo_high", "700.0"}, {"score_vs_beginner", "0.625"}, {"eval_levels", "novice+beginner"}});
  GenerationLog again(run, {});
  ASSERT_EQ(again.generations(), 2);
  const CsvTable& t = again.table();
  EXPECT_EQ(t.rows[0].at("elo"), "280.0");
  EXPECT_EQ(t.rows[0].at("elo_low"), "");
  EXPECT_EQ(t.rows[1].at("elo_low"), "500.0");
  EXPECT_EQ(t.rows[1].at("score_vs_beginner"), "0.625");
  EXPECT_EQ(t.rows[1].at("score_vs_initial"), "");
  EXPECT_EQ(t.columns.front(), "generation");  // the old columns keep their places
  EXPECT_EQ(t.columns[4], "elo");
  // The plan of generation 3 goes on from generation 2's rating.
  EXPECT_EQ(plan_evaluation(RunConfig::parse("name: x\n", "test").eval, t).levels,
            (std::vector<std::string>{"beginner", "casual"}));
}

TEST(LoopCharts, EloChartHasIntervalsLevelsAndTheUntrainedScore) {
  CsvTable t;
  t.rows = {{{"generation", "1"}, {"elo", "300"}, {"elo_low", "150"}, {"elo_high", "450"}, {"score_vs_initial", "0.7"}},
            {{"generation", "2"}, {"elo", "650"}, {"elo_low", "560"}, {"elo_high", "740"}, {"score_vs_initial", ""}},
            {{"generation", "3"}, {"elo", ""}, {"elo_low", ""}, {"elo_high", ""}}};
  const std::vector<PlotLine> ladder = {{"novice (275)", 275}, {"beginner (570)", 570}, {"casual (871)", 871},
                                        {"intermediate (1258)", 1258}, {"club (2861)", 2861}};
  const std::string svg = elo_chart("t", t, ladder, 0.95);
  std::size_t bars = 0;
  for (std::size_t at = svg.find("class=\"errorbar\""); at != std::string::npos;
       at = svg.find("class=\"errorbar\"", at + 1))
    ++bars;
  EXPECT_EQ(bars, 2u);
  // The levels near the data and the next one up are drawn; club is not.
  for (const char* label : {"novice (275)", "beginner (570)", "casual (871)", "intermediate (1258)"})
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  EXPECT_EQ(svg.find("club"), std::string::npos);
  EXPECT_NE(svg.find("score vs untrained"), std::string::npos);
  EXPECT_NE(svg.find("95%: no more games"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  // A table from before the interval: points without bars, no NaN.
  CsvTable old;
  old.rows = {{{"generation", "1"}, {"elo", "300"}}};
  const std::string plain = elo_chart("t", old, ladder, 0.95);
  EXPECT_EQ(plain.find("errorbar"), std::string::npos);
  EXPECT_EQ(plain.find("nan"), std::string::npos);
  EXPECT_EQ(plain.find("score vs untrained"), std::string::npos);
}

TEST(LoopCharts, EachLossHasItsOwnPanel) {
  CsvTable m;
  for (int i = 1; i <= 5; ++i)
    m.rows.push_back({{"step", std::to_string(50 * i)}, {"loss_policy", std::to_string(5.0 - 0.2 * i)},
                      {"loss_value", std::to_string(0.70 - 0.01 * i)}, {"loss_moves_left", "0.03"}});
  const std::string svg = loss_chart("t", m);
  for (const char* label : {"policy loss", "value loss", "moves-left loss"})
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  std::size_t panels = 0;
  for (std::size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++panels;
  EXPECT_EQ(panels, 3u);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  // Without a moves-left column (a net without the head), two panels.
  for (auto& row : m.rows) row.erase("loss_moves_left");
  const std::string two = loss_chart("t", m);
  EXPECT_EQ(two.find("moves-left"), std::string::npos);
}

TEST(LoopProgress, EtaCountsTheTimeLimit) {
  // The case: 97 generations left at 3 minutes each, 6 minutes in,
  // 110 minutes allowed: 104 minutes are left, so 35 more start (the last
  // at 108 minutes) and end at 111, not after 97 x 3.
  EXPECT_DOUBLE_EQ(loop_eta_seconds(97, 180, 360, 110), 35 * 180.0);
  EXPECT_DOUBLE_EQ(loop_eta_seconds(97, 180, 360, 0), 97 * 180.0);  // no limit
  // Fewer generations left than the limit allows: those.
  EXPECT_DOUBLE_EQ(loop_eta_seconds(3, 60, 600, 110), 180.0);
  // Past the limit, or nothing left: done.
  EXPECT_DOUBLE_EQ(loop_eta_seconds(10, 60, 110 * 60 + 1, 110), 0.0);
  EXPECT_DOUBLE_EQ(loop_eta_seconds(0, 60, 60, 0), 0.0);
  EXPECT_TRUE(std::isnan(loop_eta_seconds(5, 0, 0, 0)));
  EXPECT_EQ(format_duration(loop_eta_seconds(97, 180, 360, 110)), "1h45m");
}

TEST(LoopProgress, RatingText) {
  EXPECT_EQ(format_rating({612.4, 540.2, 689.6, 48}), "612 [540, 690]");
  EXPECT_EQ(format_rating(LadderRating{}), "-");
}

TEST(LoopRunDirectory, PlayerSpecsFindTheRunsBestModelFile) {
  const TempDir dir("run-best-model");
  const data::RunDir run(dir.path());
  ultima::write_file_atomically(run.model_path(7), "x");
  run.set_best_model(7);
  // The engine reads the layout on its own: it must agree with RunDir's.
  EXPECT_EQ(run_best_model(dir.path()), run.model_path(7));
}

}  // namespace
}  // namespace ultima::loop
