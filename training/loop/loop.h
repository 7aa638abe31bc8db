// The improvement loop (`ultima loop`): generations of self-play with the
// best model, training on the window of samples, and evaluation of the new
// model against the best one, the untrained one and the alpha-beta levels,
// which puts every generation on the levels' Elo ladder. The stages are in
// stages.h, the generation table and charts in generation_log.h. Every
// stage resumes from what the run directory holds, so a killed loop started
// again goes on where it was. Also the pieces that `ultima selfplay` and
// `ultima train` share with it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/base/stop.h"
#include "engine/mcts/evaluator.h"
#include "nn/data/run_dir.h"
#include "training/loop/generation_log.h"
#include "training/loop/run_config.h"
#include "training/loop/stages.h"

namespace ultima::loop {

// Logging to the terminal and to DIR/logs/NAME.log.
void setup_logging(const data::RunDir& run, const std::string& name);

// The config of a run directory: `config_path` when given (it must agree
// with DIR/config.yaml when that exists, the loop section and name aside;
// an error names the keys that differ), else DIR/config.yaml, else the
// built-in one. Creates nothing, so a command whose config is refused
// leaves no directory behind.
RunConfig resolve_run_config(const std::string& run_root, const std::string& config_path);
// Writes the resolved config to DIR/config.yaml.
void store_run_config(const data::RunDir& run, const RunConfig& config);

// Creates a run (`ultima init`, and the loop on a new directory): the
// resolved config, model 0 and models/best. Run again on the same directory
// with an agreeing config it changes nothing. Returns the config.
RunConfig init_run(const std::string& run_root, const std::string& config_path);
// Workers and trainers join runs that exist, never make one: throws
// std::runtime_error naming the directory and how to create it when
// DIR/config.yaml is missing.
void require_run(const std::string& run_root);

// Model 0 (random weights from the config's seed) when the run has none.
void ensure_first_model(const data::RunDir& run, const RunConfig& config);

// A batching network evaluator on a model version of the run.
std::shared_ptr<Evaluator> model_evaluator(const data::RunDir& run, const RunConfig& config,
                                           std::uint64_t version);

// Runs generations until config.loop.generations are done (or the time
// limit, or a stop request). Returns the number of generations done. The
// networks are the run's models, or what `models` gives for a version.
int run_loop(const data::RunDir& run, const RunConfig& config);
int run_loop(const data::RunDir& run, const RunConfig& config, const ModelEvaluators& models);

// Seconds until the loop ends, for its progress line: the generations that
// will still run times the mean generation time. They are all `remaining`
// without a time limit (max_minutes 0); with one, only those that start
// before it, ceil(time left / mean), since no generation starts after the
// limit and one that started runs to its end. 0 when nothing will run;
// NaN when the mean is not positive and finite.
double loop_eta_seconds(int remaining, double mean_generation_seconds, double elapsed_seconds, double max_minutes);

// "612 [540, 690]": a ladder rating with its 95% interval; "-" without one.
std::string format_rating(const LadderRating& rating);

// A finished generation's row of generations.csv (empty cells for what
// was not measured: no games played, no training step reported).
CsvTable::Row generation_row(const RunConfig& config, int generation, double elapsed_seconds, std::uint64_t best,
                             const SelfPlayOutcome& played, const TrainSummary& trained,
                             const EvaluationOutcome& judged);

}  // namespace ultima::loop
