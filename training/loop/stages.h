// The stages of one generation of the loop, each a small object over the
// run directory: self-play with the best model, training in proportion to
// the new samples (and export of the candidate), and evaluation of the
// candidate against the best model, the untrained one and the levels, with
// the gating decision. Networks come from a ModelEvaluators function, so
// tests can evaluate with the material evaluator instead.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/mcts/evaluator.h"
#include "engine/play/elo.h"
#include "engine/play/match.h"
#include "nn/data/run_dir.h"
#include "selfplay/selfplay.h"
#include "training/loop/generation_log.h"
#include "training/loop/run_config.h"
#include "training/train.h"

namespace ultima::loop {

// The evaluator of a model version of the run.
using ModelEvaluators = std::function<std::shared_ptr<Evaluator>(std::uint64_t version)>;

// "1h02m", "45s"; "?" for a negative or unknown time.
std::string format_duration(double seconds);
// "gen0007": the tag of a generation's shards and game records.
std::string generation_tag(int generation);
// The tag of a generation's teacher games after the warm start: "gen0007-teacher".
inline constexpr const char* kTeacherTagSuffix = "-teacher";

// Proven mates from random play, as the config's tactics section makes them,
// written as shards tagged `tag` (ending in training::kTacticsTagSuffix, so
// the tactics share counts them) under `model_version`. Every 10 s and at
// the end a line "LABEL: done/total mates, rate, ETA" is logged, and
// `heartbeat` (when given) gets "done/total". The loop's tactics stage and
// `ultima selfplay --tactics` both run their mates through this.
selfplay::SelfPlayStats run_tactics_job(const data::RunDir& run, const RunConfig& config, const std::string& tag,
                                        int games, std::uint64_t model_version, std::uint64_t seed,
                                        const std::string& label,
                                        const std::function<void(const std::string&)>& heartbeat,
                                        const std::atomic<bool>* stop);

struct SelfPlayOutcome {
  selfplay::SelfPlayStats stats;
  std::uint64_t new_samples = 0;  // in the generation's shards, those of an earlier try included
};

class SelfPlayStage {
 public:
  SelfPlayStage(const data::RunDir& run, const RunConfig& config, ModelEvaluators models,
                const std::atomic<bool>* stop = nullptr);
  // The generation's games with model `best`; shards already written (by a
  // killed earlier try) are kept, not played again.
  // After the warm start, when warm_start.later_games asks for them, the
  // teacher's games (shards tagged TAG-teacher); then, when the config asks
  // for tactics, the generation's proven mates (TAG-mates); both counted in
  // new_samples.
  SelfPlayOutcome run(int generation, std::uint64_t best);

 private:
  std::uint64_t run_teacher(int generation);
  std::uint64_t run_tactics(int generation, std::uint64_t best);

  const data::RunDir& run_;
  const RunConfig& config_;
  ModelEvaluators models_;
  const std::atomic<bool>* stop_;
};

// Where training stands after a generation, for its row of the table.
struct TrainSummary {
  std::uint64_t step = 0;
  std::uint64_t total_samples = 0;  // ever read
  std::uint64_t window = 0;         // samples in the window
  training::TrainProgress last;     // the last progress report (step 0: none this generation)
};

class TrainStage {
 public:
  // `step`: where the trainer stood after the last finished generation.
  TrainStage(const data::RunDir& run, const RunConfig& config, std::uint64_t step,
             const std::atomic<bool>* stop = nullptr);
  // Reads the new shards, trains new_samples * train_ratio / batch_size
  // steps (within [min_steps, max_steps]) and exports model `candidate`.
  // False when stopped first.
  bool run(int generation, std::uint64_t new_samples, std::uint64_t candidate);

  std::uint64_t step() const { return step_; }
  TrainSummary summary();

 private:
  const RunConfig& config_;
  training::TrainingRun trainer_;
  std::uint64_t step_;
  training::TrainProgress last_progress_;
  const std::atomic<bool>* stop_;
};

// A level of the evaluation ladder with its measured Elo.
struct LadderLevel {
  std::string name;
  double elo = 0;
};
// The config's evaluation levels, weakest first.
std::vector<LadderLevel> evaluation_ladder(const EvalConfig& eval);
// The `count` levels of `ladder` (weakest first) to rate a player of about
// `elo` against, weakest first: the two that bracket it (the strongest at or
// below it and the weakest above), then the next nearest, so below the
// ladder the weakest `count` and above it the strongest `count`; one level
// is the nearer of the bracket. NaN: as at the weakest level. count 0 (or
// at least the ladder's size): all of them.
std::vector<std::string> choose_levels(const std::vector<LadderLevel>& ladder, double elo, int count);

// What a generation's evaluation plays, from the generations before it
// (generations.csv, or gate.csv: the columns elo and score_vs_initial).
struct EvaluationPlan {
  double elo_before = std::nan("");  // the last rating of the run; NaN before the first
  std::vector<std::string> levels;   // chosen at elo_before
  bool vs_initial = true;            // false once a generation scored initial_until_score against model 0
};
EvaluationPlan plan_evaluation(const EvalConfig& eval, const CsvTable& earlier);

struct MatchOutcome {
  double score = std::nan("");
  Wdl wdl;
};

struct EvaluationOutcome {
  MatchOutcome vs_best, vs_initial;
  std::vector<std::string> levels;      // the levels played, weakest first
  std::vector<MatchOutcome> vs_levels;  // in the order of `levels`
  LadderRating rating;                  // from the level matches (rate_on_ladder); NaN without them
  double elo = std::nan("");            // rating.elo
  bool promoted = false;                // the candidate becomes the best model
  bool stopped = false;                 // the stop flag cut it short: nothing here counts
};

class EvaluationStage {
 public:
  EvaluationStage(const data::RunDir& run, const RunConfig& config, ModelEvaluators models,
                  const std::atomic<bool>* stop = nullptr);
  // Plays the candidate against model `best`, model 0 and each level (the
  // games each count asks for; a match of 0 games is skipped), writing the
  // games to DIR/games/, and decides the promotion: always under
  // `continuous`, under `gating` when it scores gate_score against the best.
  // The stop flag ends it before the next move of every game (stopped set,
  // no promotion).
  // Which levels, and whether model 0, come from `plan`; without one, from
  // a run with no earlier generation.
  EvaluationOutcome run(int generation, std::uint64_t candidate, std::uint64_t best, const EvaluationPlan& plan);
  EvaluationOutcome run(int generation, std::uint64_t candidate, std::uint64_t best);

 private:
  MatchOutcome play(int generation, const std::string& opponent_name, const PlayerFactory& candidate,
                    const PlayerFactory& opponent, int games, bool& stopped) const;

  const data::RunDir& run_;
  const RunConfig& config_;
  ModelEvaluators models_;
  const std::atomic<bool>* stop_;
  std::shared_ptr<Evaluator> initial_;  // model 0, kept across generations
};

}  // namespace ultima::loop
