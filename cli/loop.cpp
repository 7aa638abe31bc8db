#include "cli/loop.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "cli/plot.h"
#include "engine/play/elo.h"
#include "engine/play/match.h"
#include "engine/play/mcts_player.h"
#include "engine/play/player_spec.h"
#include "engine/rules/file_io.h"
#include "nn/network.h"
#include "training/train.h"

namespace fs = std::filesystem;

namespace ultima::cli {

std::atomic<bool>& stop_requested() {
  static std::atomic<bool> flag{false};
  return flag;
}

namespace {

extern "C" void on_stop_signal(int) { stop_requested().store(true); }

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// generations.csv: a header line and one row per finished generation.
struct Table {
  std::vector<std::string> columns;
  std::vector<std::map<std::string, std::string>> rows;
};

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, sep)) out.push_back(field);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}

Table read_table(const std::string& path) {
  Table t;
  if (!fs::exists(path)) return t;
  std::istringstream in(ultima::read_file(path));
  std::string line;
  if (std::getline(in, line)) t.columns = split(line, ',');
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto fields = split(line, ',');
    if (fields.size() != t.columns.size())
      throw std::runtime_error(path + ": a row has " + std::to_string(fields.size()) + " fields, the header " +
                               std::to_string(t.columns.size()));
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < fields.size(); ++i) row[t.columns[i]] = fields[i];
    t.rows.push_back(std::move(row));
  }
  return t;
}

void write_table(const std::string& path, const Table& t) {
  std::string text;
  for (std::size_t i = 0; i < t.columns.size(); ++i) text += (i ? "," : "") + t.columns[i];
  text += "\n";
  for (const auto& row : t.rows) {
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      const auto it = row.find(t.columns[i]);
      text += (i ? "," : "") + (it == row.end() ? std::string() : it->second);
    }
    text += "\n";
  }
  ultima::write_file_atomically(path, text);
}

double number(const std::map<std::string, std::string>& row, const std::string& key) {
  const auto it = row.find(key);
  if (it == row.end() || it->second.empty()) return std::nan("");
  try {
    return std::stod(it->second);
  } catch (const std::exception&) {
    return std::nan("");
  }
}

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
  return buffer;
}

std::string tag_of(int generation) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "gen%04d", generation);
  return buffer;
}

PlayerFactory mcts_factory(std::shared_ptr<Evaluator> evaluator, const EvalConfig& eval) {
  return [evaluator, eval]() -> std::unique_ptr<Player> {
    MctsConfig config;
    config.batch_size = eval.mcts_batch;
    config.gumbel = eval.gumbel;
    config.gumbel_rescale_q = eval.gumbel_rescale_q;
    config.gumbel_c_scale = eval.gumbel_c_scale;
    config.mate_scan = eval.mate_scan;
    config.gumbel_noise_scale = eval.gumbel_noise;  // 0: the strongest move, not a sample
    config.gumbel_planned_playouts = eval.playouts;
    config.info_interval_ms = 1 << 30;
    MctsLimits limits;
    limits.playouts = eval.playouts;
    return std::make_unique<MctsPlayer>(evaluator, config, limits, 0.0);
  };
}

struct MatchOutcome {
  double score = std::nan("");
  Wdl wdl;
};

MatchOutcome play(const selfplay::RunDir& run, const RunConfig& config, int generation, const std::string& what,
                  const PlayerFactory& candidate, const PlayerFactory& opponent, int games) {
  MatchOutcome out;
  if (games <= 0) return out;
  MatchConfig m;
  m.games = games;
  m.concurrency = config.eval.concurrency;
  m.seed = config.seed * 1000003 + static_cast<std::uint64_t>(generation);
  m.rules = config.rules;
  m.opening_min_plies = config.eval.opening_min_plies;
  m.opening_max_plies = config.eval.opening_max_plies;
  m.max_plies = config.eval.max_plies;
  m.record_path = run.path("games/eval-" + tag_of(generation) + "-vs-" + what + ".pgn");
  m.event = "ultima loop evaluation, generation " + std::to_string(generation);
  const auto start = Clock::now();
  const MatchResult r = play_match(candidate, opponent, m);
  out.wdl = r.results;
  out.score = r.results.score();
  spdlog::info("gen {} eval: vs {:<12} +{} ={} -{}  score {:.1f}%  ({})", generation, what, r.results.wins,
               r.results.draws, r.results.losses, 100 * out.score, format_duration(since(start)));
  return out;
}

void write_plot(const selfplay::RunDir& run, const RunConfig& config, const Table& table) {
  PlotSeries elo{"Elo of each generation's model", "#1f77b4", {}, {}};
  for (const auto& row : table.rows) {
    elo.x.push_back(number(row, "generation"));
    elo.y.push_back(number(row, "elo"));
  }
  std::vector<PlotLine> lines;
  for (const std::string& name : config.eval.levels) {
    const Level level = find_level(name);
    lines.push_back({level.name + " (" + std::to_string(level.elo) + ")", static_cast<double>(level.elo)});
  }
  const std::string svg = svg_line_chart("Elo by generation: " + config.name, "generation",
                                         "Elo (bot ladder: random mover = 0)", {elo}, lines);
  ultima::write_file_atomically(run.path("elo.svg"), svg);

  // The training curve from metrics.csv.
  const Table metrics = read_table(run.path("metrics.csv"));
  PlotSeries policy{"policy loss", "#d62728", {}, {}}, value{"value loss", "#9467bd", {}, {}};
  for (const auto& row : metrics.rows) {
    policy.x.push_back(number(row, "step"));
    policy.y.push_back(number(row, "loss_policy"));
    value.x.push_back(number(row, "step"));
    value.y.push_back(number(row, "loss_value"));
  }
  ultima::write_file_atomically(
      run.path("loss.svg"), svg_line_chart("Training loss: " + config.name, "step", "loss (nats)", {policy, value}, {}));
}

}  // namespace

void install_stop_handlers() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

void setup_logging(const selfplay::RunDir& run, const std::string& name) {
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

void store_run_config(const selfplay::RunDir& run, const RunConfig& config) {
  ultima::write_file_atomically(run.path("config.yaml"),
                                "# The resolved config of this run (keys: configs/README.md).\n" + config.to_yaml());
}

void ensure_first_model(const selfplay::RunDir& run, const RunConfig& config) {
  if (fs::exists(run.model_path(0))) return;
  nn::DeviceOptions device;
  auto net = nn::Network::random(config.network, config.seed, device);
  net->save(run.model_path(0), config.rules.name(), 0);
  spdlog::info("model 0: random weights, {} (seed {})", config.network.text(), config.seed);
}

std::shared_ptr<Evaluator> model_evaluator(const selfplay::RunDir& run, const RunConfig& config,
                                           std::uint64_t version) {
  std::shared_ptr<nn::BatchingEvaluator> evaluator = nn::make_nn_evaluator(config.nn_config(run.model_path(version)));
  return evaluator;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  char buffer[32];
  if (s >= 3600) std::snprintf(buffer, sizeof buffer, "%ldh%02ldm", s / 3600, (s / 60) % 60);
  else if (s >= 60) std::snprintf(buffer, sizeof buffer, "%ldm%02lds", s / 60, s % 60);
  else std::snprintf(buffer, sizeof buffer, "%lds", s);
  return buffer;
}

int run_loop(const selfplay::RunDir& run, const RunConfig& config) {
  ensure_first_model(run, config);
  if (!fs::exists(run.path("models/best"))) run.set_best_model(0);

  const std::string table_path = run.path("generations.csv");
  Table table = read_table(table_path);
  if (table.columns.empty()) {
    table.columns = {"generation", "elapsed_min", "model", "best", "promoted", "train_step", "total_samples",
                     "window", "games", "samples", "decisive_share", "adjudicated_share", "selfplay_moves_per_s",
                     "train_samples_per_s", "loss_policy", "loss_value", "resigned_share", "false_resign_rate",
                     "score_vs_best", "score_vs_initial"};
    for (const std::string& level : config.eval.levels) table.columns.push_back("score_vs_" + level);
    table.columns.push_back("elo");
  }
  int done = static_cast<int>(table.rows.size());
  double elapsed_before = done ? number(table.rows.back(), "elapsed_min") * 60 : 0;
  std::uint64_t train_step = done ? static_cast<std::uint64_t>(number(table.rows.back(), "train_step")) : 0;
  if (done) spdlog::info("loop: resuming after generation {} ({} min so far)", done, fixed(elapsed_before / 60, 1));

  nn::DeviceOptions train_device;
  train_device.device = config.train_stage.device;
  train_device.threads = config.train_stage.threads;
  training::TrainingRun trainer(run, config.training, train_device);

  const auto session_start = Clock::now();
  std::shared_ptr<Evaluator> initial_evaluator;
  for (int generation = done + 1; generation <= config.loop.generations; ++generation) {
    const double elapsed = elapsed_before + since(session_start);
    if (config.loop.max_minutes > 0 && elapsed >= config.loop.max_minutes * 60) {
      spdlog::info("loop: time limit of {} min reached after generation {}", config.loop.max_minutes, generation - 1);
      break;
    }
    if (stop_requested()) break;
    const auto gen_start = Clock::now();
    const std::uint64_t best = run.best_model().value_or(0);
    const std::string tag = tag_of(generation);

    // Self-play with the best model.
    selfplay::SelfPlayJob job;
    job.tag = tag;
    job.games = config.games_per_generation;
    job.model_version = best;
    job.seed = config.seed * 7919 + static_cast<std::uint64_t>(generation);
    job.evaluator = model_evaluator(run, config, best);
    job.player_name = "ultima model " + std::to_string(best);
    auto last_report = Clock::now();
    const selfplay::SelfPlayStats sp = selfplay::run_selfplay(
        run, config.selfplay, job,
        [&](const selfplay::SelfPlayStats& s, int total) {
          if (since(last_report) < 10 && s.games + s.games_skipped < total) return;
          last_report = Clock::now();
          spdlog::info("gen {} selfplay: {}/{} games, {:.0f} moves/s, {} samples, ETA {}", generation,
                       s.games + s.games_skipped, total, s.moves_per_second(), s.samples,
                       format_duration(s.eta_seconds(total, config.selfplay.max_plies)));
        },
        &stop_requested());
    job.evaluator.reset();
    if (stop_requested()) break;
    if (sp.games)
      spdlog::info("gen {} selfplay done: {} games in {} ({:.0f} moves/s), W/D/L {}/{}/{}, {} cut at max plies, "
                   "{} adjudicated, {} resigned, false resignations {}/{}",
                   generation, sp.games, format_duration(sp.seconds), sp.moves_per_second(), sp.white_wins, sp.draws,
                   sp.black_wins, sp.max_plies, sp.adjudicated, sp.resigned, sp.false_resign, sp.would_resign);

    // Training: steps in proportion to the new samples.
    std::uint64_t new_samples = 0;
    for (int s : run.shard_sequences(tag)) new_samples += selfplay::read_shard_header(run.shard_path(tag, s)).samples;
    trainer.refresh_samples();
    const std::uint64_t steps = std::clamp<std::uint64_t>(
        static_cast<std::uint64_t>(new_samples * config.train_stage.train_ratio / config.training.batch_size),
        config.train_stage.min_steps, config.train_stage.max_steps);
    const std::uint64_t target = train_step + steps;
    training::TrainProgress last_progress;
    const bool trained = trainer.train_until(
        target,
        [&](const training::TrainProgress& p) {
          last_progress = p;
          spdlog::info("gen {} train: step {}/{}, loss {:.3f} (policy {:.3f}, value {:.3f}), lr {:.4g}, {:.0f} "
                       "samples/s, window {}/{}, ETA {}",
                       generation, p.step, p.target, p.losses.total, p.losses.policy, p.losses.value, p.lr,
                       p.samples_per_second, p.window, p.total_samples,
                       format_duration(p.samples_per_second > 0
                                           ? (p.target - p.step) * config.training.batch_size / p.samples_per_second
                                           : NAN));
        },
        &stop_requested());
    if (!trained) break;
    train_step = target;
    const std::uint64_t candidate = static_cast<std::uint64_t>(generation);
    trainer.export_model(candidate, config.rules.name());

    // Evaluation.
    auto candidate_eval = model_evaluator(run, config, candidate);
    const PlayerFactory candidate_player = mcts_factory(candidate_eval, config.eval);
    std::map<std::string, std::string> row;
    const MatchOutcome vs_best =
        play(run, config, generation, "best", candidate_player,
             mcts_factory(model_evaluator(run, config, best), config.eval), config.eval.games_vs_best);
    if (config.eval.games_vs_initial > 0 && !initial_evaluator) initial_evaluator = model_evaluator(run, config, 0);
    const MatchOutcome vs_initial =
        play(run, config, generation, "initial", candidate_player,
             initial_evaluator ? mcts_factory(initial_evaluator, config.eval) : PlayerFactory(),
             config.eval.games_vs_initial);
    // An empty cell (and "-" in the log) where no games were played.
    const auto score_cell = [](const MatchOutcome& r) { return r.wdl.games() ? fixed(r.score, 3) : std::string(); };
    std::vector<RatedResult> rated;
    for (const std::string& name : config.eval.levels) {
      const Level level = find_level(name);
      const MatchOutcome r = play(run, config, generation, name, candidate_player,
                                  [name] { return make_player(name); }, config.eval.games_per_level);
      row["score_vs_" + name] = score_cell(r);
      rated.push_back({static_cast<double>(level.elo), r.wdl.wins + 0.5 * r.wdl.draws, r.wdl.games()});
    }
    if (stop_requested()) break;
    const double elo = rating_from_results(rated);
    const bool promoted = config.eval.promotion == "continuous" || vs_best.score >= config.eval.gate_score;
    if (promoted) run.set_best_model(candidate);

    const double gen_seconds = since(gen_start);
    row["generation"] = std::to_string(generation);
    row["elapsed_min"] = fixed((elapsed_before + since(session_start)) / 60, 2);
    row["model"] = std::to_string(candidate);
    row["best"] = std::to_string(run.best_model().value_or(0));
    row["promoted"] = promoted ? "1" : "0";
    row["train_step"] = std::to_string(train_step);
    row["total_samples"] = std::to_string(trainer.store().total());
    row["window"] = std::to_string(training::window_size(trainer.store().total(), config.training.window));
    row["games"] = std::to_string(config.games_per_generation);
    row["samples"] = std::to_string(new_samples);
    row["decisive_share"] = sp.games ? fixed(double(sp.white_wins + sp.black_wins) / sp.games, 3) : "";
    row["adjudicated_share"] = sp.games ? fixed(double(sp.adjudicated) / sp.games, 3) : "";
    row["selfplay_moves_per_s"] = sp.games ? fixed(sp.moves_per_second(), 1) : "";
    row["train_samples_per_s"] = fixed(last_progress.samples_per_second, 1);
    row["loss_policy"] = last_progress.step ? fixed(last_progress.losses.policy, 4) : "";
    row["loss_value"] = last_progress.step ? fixed(last_progress.losses.value, 4) : "";
    row["resigned_share"] = sp.games ? fixed(double(sp.resigned) / sp.games, 3) : "";
    row["false_resign_rate"] = sp.would_resign ? fixed(sp.false_resign_rate(), 3) : "";
    const auto score_text = [](const MatchOutcome& r) {
      return r.wdl.games() ? fixed(100 * r.score, 1) + "%" : std::string("-");
    };
    row["score_vs_best"] = score_cell(vs_best);
    row["score_vs_initial"] = score_cell(vs_initial);
    row["elo"] = fixed(elo, 1);
    table.rows.push_back(row);
    write_table(table_path, table);
    write_plot(run, config, table);

    const int remaining = config.loop.generations - generation;
    const double mean = (elapsed_before + since(session_start)) / generation;
    double eta = remaining * mean;
    if (config.loop.max_minutes > 0)
      eta = std::min(eta, config.loop.max_minutes * 60 - (elapsed_before + since(session_start)));
    spdlog::info("gen {} done in {}: model {} {} (vs best {}, vs initial {}), Elo {}, step {}; {} "
                 "generations left, ETA {}",
                 generation, format_duration(gen_seconds), candidate, promoted ? "promoted" : "not promoted",
                 score_text(vs_best), score_text(vs_initial), fixed(elo, 0), train_step, remaining,
                 format_duration(std::max(0.0, eta)));
    ++done;
  }
  return done;
}

}  // namespace ultima::cli
