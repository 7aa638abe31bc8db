#include "training/loop/loop.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "engine/base/file_io.h"
#include "nn/network.h"

namespace fs = std::filesystem;

namespace ultima::loop {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

void setup_logging(const data::RunDir& run, const std::string& name) {
  auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(run.path("logs/" + name + ".log"));
  auto logger = std::make_shared<spdlog::logger>(name, spdlog::sinks_init_list{console, file});
  logger->set_pattern("[%Y-%m-%d %H:%M:%S] [%^%l%$] %v");
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

RunConfig resolve_run_config(const std::string& run_root, const std::string& config_path) {
  const std::string stored = run_root + "/config.yaml";
  RunConfig config;
  if (!config_path.empty()) {
    config = RunConfig::load(config_path);
    if (fs::exists(stored)) {
      RunConfig old = RunConfig::load(stored);
      old.loop = config.loop;
      old.name = config.name;
      const std::vector<std::string> keys = old.differing_keys(config);
      if (!keys.empty()) {
        std::string list;
        for (const std::string& key : keys) {
          if (list.size() > 300) {
            list += ", ...";
            break;
          }
          list += (list.empty() ? "" : ", ") + key;
        }
        throw std::invalid_argument("the run directory " + run_root + " was started with another config (" +
                                    stored + "); these keys differ: " + list +
                                    "; only the loop section and name may change: use a new directory");
      }
    }
  } else if (fs::exists(stored)) {
    config = RunConfig::load(stored);
  } else {
    config = RunConfig::parse(builtin_config_text(), "(built-in: configs/cpu.yaml)");
  }
  return config;
}

void store_run_config(const data::RunDir& run, const RunConfig& config) {
  ultima::write_file_atomically(run.path("config.yaml"),
                                "# The resolved config of this run (keys: configs/README.md).\n" + config.to_yaml());
}

RunConfig init_run(const std::string& run_root, const std::string& config_path) {
  const RunConfig config = resolve_run_config(run_root, config_path);
  const data::RunDir run(run_root);
  store_run_config(run, config);
  ensure_first_model(run, config);
  if (!fs::exists(run.path("models/best"))) run.set_best_model(0);
  return config;
}

void require_run(const std::string& run_root) {
  if (!fs::exists(run_root + "/config.yaml"))
    throw std::runtime_error("the run directory " + run_root +
                             " was never created: create it with ultima init --run-dir " + run_root +
                             " [--config FILE], or ultima loop");
}

void ensure_first_model(const data::RunDir& run, const RunConfig& config) {
  if (fs::exists(run.model_path(0))) return;
  nn::DeviceOptions device;
  auto net = nn::Network::random(config.network, config.seed, device);
  net->save(run.model_path(0), config.rules.name(), 0);
  spdlog::info("model 0: random weights, {} (seed {})", config.network.text(), config.seed);
}

std::shared_ptr<Evaluator> model_evaluator(const data::RunDir& run, const RunConfig& config,
                                           std::uint64_t version) {
  std::shared_ptr<nn::BatchingEvaluator> evaluator = nn::make_nn_evaluator(config.nn_config(run.model_path(version)));
  return evaluator;
}

int run_loop(const data::RunDir& run, const RunConfig& config) {
  return run_loop(run, config, [&](std::uint64_t version) { return model_evaluator(run, config, version); });
}

int run_loop(const data::RunDir& run, const RunConfig& config, const ModelEvaluators& models) {
  ensure_first_model(run, config);
  if (!fs::exists(run.path("models/best"))) run.set_best_model(0);

  GenerationLog log(run, config.eval.levels);
  int done = log.generations();
  const double elapsed_before = done ? log.last("elapsed_min") * 60 : 0;
  const std::uint64_t step = done ? static_cast<std::uint64_t>(log.last("train_step")) : 0;
  if (done) spdlog::info("loop: resuming after generation {} ({} min so far)", done, fixed(elapsed_before / 60, 1));

  const std::atomic<bool>* stop = &stop_requested();
  SelfPlayStage selfplay_stage(run, config, models, stop);
  TrainStage train_stage(run, config, step, stop);
  EvaluationStage evaluation_stage(run, config, models, stop);

  const auto session_start = Clock::now();
  const auto elapsed = [&] { return elapsed_before + since(session_start); };
  for (int generation = done + 1; generation <= config.loop.generations; ++generation) {
    if (config.loop.max_minutes > 0 && elapsed() >= config.loop.max_minutes * 60) {
      spdlog::info("loop: time limit of {} min reached after generation {}", config.loop.max_minutes, generation - 1);
      break;
    }
    if (*stop) break;
    const auto gen_start = Clock::now();
    const std::uint64_t best = run.best_model().value_or(0);

    const SelfPlayOutcome played = selfplay_stage.run(generation, best);
    if (*stop) break;
    const std::uint64_t candidate = static_cast<std::uint64_t>(generation);
    if (!train_stage.run(generation, played.new_samples, candidate)) break;
    const EvaluationPlan plan = plan_evaluation(config.eval, log.table());
    std::string plan_levels;
    for (const std::string& level : plan.levels) plan_levels += (plan_levels.empty() ? "" : ", ") + level;
    spdlog::info("gen {} eval plan: Elo so far {}: levels {}; untrained network {}", generation,
                 std::isfinite(plan.elo_before) ? fixed(plan.elo_before, 0) : std::string("none yet"),
                 plan_levels.empty() ? std::string("none") : plan_levels,
                 plan.vs_initial ? std::to_string(config.eval.games_vs_initial) + " games"
                 : config.eval.games_vs_initial > 0
                     ? "no longer (a generation scored " + fixed(100 * config.eval.initial_until_score, 0) + "%)"
                     : std::string("not played"));
    const EvaluationOutcome judged = evaluation_stage.run(generation, candidate, best, plan);
    if (judged.stopped || *stop) break;
    if (judged.promoted) run.set_best_model(candidate);

    log.append(generation_row(config, generation, elapsed(), run.best_model().value_or(0), played,
                              train_stage.summary(), judged));
    write_plots(run, config, log);

    const int remaining = config.loop.generations - generation;
    const double eta = loop_eta_seconds(remaining, elapsed() / generation, elapsed(), config.loop.max_minutes);
    const auto score_text = [](const MatchOutcome& r) {
      return r.wdl.games() ? fixed(100 * r.score, 1) + "%" : std::string("-");
    };
    std::string against;
    for (std::size_t i = 0; i < judged.levels.size(); ++i)
      against += (i ? ", " : "") + judged.levels[i] + " " + score_text(judged.vs_levels[i]);
    spdlog::info("gen {} done in {}: model {} {}, ladder Elo {} (95%; {}), vs best {}, vs initial {}, step {}; "
                 "{} generations left, ETA {}{}",
                 generation, format_duration(since(gen_start)), candidate,
                 judged.promoted ? "promoted" : "not promoted", format_rating(judged.rating),
                 against.empty() ? std::string("no levels") : against, score_text(judged.vs_best),
                 score_text(judged.vs_initial), train_stage.step(), remaining, format_duration(eta),
                 config.loop.max_minutes > 0 && eta < remaining * elapsed() / generation ? " (time limit)" : "");
    ++done;
  }
  return done;
}

double loop_eta_seconds(int remaining, double mean_generation_seconds, double elapsed_seconds, double max_minutes) {
  if (remaining <= 0) return 0;
  if (!(mean_generation_seconds > 0) || !std::isfinite(mean_generation_seconds)) return std::nan("");
  double runs = remaining;
  if (max_minutes > 0) {
    const double left = max_minutes * 60 - elapsed_seconds;
    runs = left <= 0 ? 0 : std::min(runs, std::ceil(left / mean_generation_seconds));
  }
  return runs * mean_generation_seconds;
}

std::string format_rating(const LadderRating& rating) {
  if (!std::isfinite(rating.elo)) return "-";
  return fixed(rating.elo, 0) + " [" + fixed(rating.lower, 0) + ", " + fixed(rating.upper, 0) + "]";
}

CsvTable::Row generation_row(const RunConfig& config, int generation, double elapsed_seconds, std::uint64_t best,
                             const SelfPlayOutcome& played, const TrainSummary& trained,
                             const EvaluationOutcome& judged) {
  const selfplay::SelfPlayStats& sp = played.stats;
  const training::TrainProgress& progress = trained.last;
  // An empty cell where no games were played.
  const auto score_cell = [](const MatchOutcome& r) { return r.wdl.games() ? fixed(r.score, 3) : std::string(); };
  CsvTable::Row row;
  std::string levels;
  for (std::size_t i = 0; i < judged.levels.size() && i < judged.vs_levels.size(); ++i) {
    row["score_vs_" + judged.levels[i]] = score_cell(judged.vs_levels[i]);
    levels += (levels.empty() ? "" : "+") + judged.levels[i];
  }
  row["eval_levels"] = levels;
  row["rated_games"] = std::to_string(judged.rating.games);
  row["elo_low"] = fixed(judged.rating.lower, 1);
  row["elo_high"] = fixed(judged.rating.upper, 1);
  row["generation"] = std::to_string(generation);
  row["elapsed_min"] = fixed(elapsed_seconds / 60, 2);
  row["model"] = std::to_string(generation);
  row["best"] = std::to_string(best);
  row["promoted"] = judged.promoted ? "1" : "0";
  row["train_step"] = std::to_string(trained.step);
  row["total_samples"] = std::to_string(trained.total_samples);
  row["window"] = std::to_string(trained.window);
  row["games"] = std::to_string(config.games_per_generation);
  row["samples"] = std::to_string(played.new_samples);
  row["decisive_share"] = sp.games ? fixed(double(sp.white_wins + sp.black_wins) / sp.games, 3) : "";
  row["adjudicated_share"] = sp.games ? fixed(double(sp.adjudicated) / sp.games, 3) : "";
  row["selfplay_moves_per_s"] = sp.games ? fixed(sp.moves_per_second(), 1) : "";
  row["train_samples_per_s"] = fixed(progress.samples_per_second, 1);
  row["loss_policy"] = progress.step ? fixed(progress.losses.policy, 4) : "";
  row["loss_value"] = progress.step ? fixed(progress.losses.value, 4) : "";
  row["resigned_share"] = sp.games ? fixed(double(sp.resigned) / sp.games, 3) : "";
  row["false_resign_rate"] = sp.would_resign ? fixed(sp.false_resign_rate(), 3) : "";
  row["score_vs_best"] = score_cell(judged.vs_best);
  row["score_vs_initial"] = score_cell(judged.vs_initial);
  row["elo"] = fixed(judged.elo, 1);
  return row;
}

}  // namespace ultima::loop
