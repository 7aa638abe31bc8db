#include "training/loop/stages.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "engine/play/match.h"
#include "engine/play/mcts_player.h"
#include "engine/play/player_spec.h"
#include "training/dataset.h"

namespace ultima::loop {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

PlayerFactory mcts_factory(std::shared_ptr<Evaluator> evaluator, const EvalConfig& eval) {
  return [evaluator, eval]() -> std::unique_ptr<Player> {
    MctsConfig config = eval.mcts;
    config.gumbel_planned_playouts = eval.playouts;
    MctsLimits limits;
    limits.playouts = eval.playouts;
    return std::make_unique<MctsPlayer>(evaluator, config, limits, 0.0);
  };
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  char buffer[32];
  if (s >= 3600) std::snprintf(buffer, sizeof buffer, "%ldh%02ldm", s / 3600, (s / 60) % 60);
  else if (s >= 60) std::snprintf(buffer, sizeof buffer, "%ldm%02lds", s / 60, s % 60);
  else std::snprintf(buffer, sizeof buffer, "%lds", s);
  return buffer;
}

std::string generation_tag(int generation) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "gen%04d", generation);
  return buffer;
}

// --- self-play

namespace {

// The teacher as a record's player name, and its evaluation in words.
bool learned_teacher(const WarmStartConfig& warm) { return !warm.teacher.nnue.empty() && warm.teacher.nnue != "none"; }
std::string teacher_name(const WarmStartConfig& warm) {
  return "alpha-beta depth " + std::to_string(warm.teacher.depth) +
         (learned_teacher(warm) ? " nnue " + warm.teacher.nnue : std::string());
}
std::string teacher_evaluation(const WarmStartConfig& warm) {
  return learned_teacher(warm) ? "learned evaluation " + warm.teacher.nnue : std::string("hand-written evaluation");
}

// The samples of a tag's shards, those of an earlier try included.
std::uint64_t tag_samples(const data::RunDir& run, const std::string& tag) {
  std::uint64_t samples = 0;
  for (int s : run.shard_sequences(tag)) samples += data::read_shard_header(run.shard_path(tag, s)).samples;
  return samples;
}

// Plays `job`, logging "gen G LABEL: done/total games, rate, samples, ETA"
// every 10 s.
selfplay::SelfPlayStats play_logged(const data::RunDir& run, const RunConfig& config, const selfplay::SelfPlayJob& job,
                                    int generation, const char* label, const std::atomic<bool>* stop) {
  auto last_report = Clock::now();
  const int max_plies = config.selfplay.max_plies;
  return selfplay::run_selfplay(
      run, config.selfplay, job,
      [&](const selfplay::SelfPlayStats& s, int total) {
        if (since(last_report) < 10 && s.games + s.games_skipped < total) return;
        last_report = Clock::now();
        spdlog::info("gen {} {}: {}/{} games, {:.0f} moves/s, {} samples, ETA {}", generation, label,
                     s.games + s.games_skipped, total, s.moves_per_second(), s.samples,
                     format_duration(s.eta_seconds(total, max_plies)));
      },
      stop);
}

}  // namespace

SelfPlayStage::SelfPlayStage(const data::RunDir& run, const RunConfig& config, ModelEvaluators models,
                             const std::atomic<bool>* stop)
    : run_(run), config_(config), models_(std::move(models)), stop_(stop) {}

SelfPlayOutcome SelfPlayStage::run(int generation, std::uint64_t best) {
  SelfPlayOutcome out;
  selfplay::SelfPlayJob job;
  job.tag = generation_tag(generation);
  job.games = config_.games_per_generation;
  job.model_version = best;
  job.seed = config_.seed * 7919 + static_cast<std::uint64_t>(generation);
  const WarmStartConfig& warm = config_.warm_start;
  if (generation <= warm.generations) {
    job.teacher = warm.teacher;
    if (warm.games_per_generation > 0) job.games = warm.games_per_generation;
    job.player_name = teacher_name(warm);
    spdlog::info("gen {} selfplay begins: {} warm-start games of the alpha-beta searcher (depth {}, {} lines, {})",
                 generation, job.games, warm.teacher.depth, warm.teacher.multipv, teacher_evaluation(warm));
  } else {
    job.evaluator = models_(best);
    job.player_name = "ultima model " + std::to_string(best);
    spdlog::info("gen {} selfplay begins: {} games with model {}", generation, job.games, best);
  }
  out.stats = play_logged(run_, config_, job, generation, "selfplay", stop_);
  job.evaluator.reset();
  if (stop_ && *stop_) return out;
  const selfplay::SelfPlayStats& sp = out.stats;
  if (sp.games)
    spdlog::info("gen {} selfplay done: {} games in {} ({:.0f} moves/s), W/D/L {}/{}/{}, {} cut at max plies, "
                 "{} adjudicated, {} resigned, false resignations {}/{}",
                 generation, sp.games, format_duration(sp.seconds), sp.moves_per_second(), sp.white_wins, sp.draws,
                 sp.black_wins, sp.max_plies, sp.adjudicated, sp.resigned, sp.false_resign, sp.would_resign);
  out.new_samples += tag_samples(run_, job.tag);
  if (generation > warm.generations && warm.later_games > 0) {
    const std::uint64_t teacher_samples = run_teacher(generation);
    if (stop_ && *stop_) return out;
    out.new_samples += teacher_samples;
  }
  if (config_.tactics.positions > 0) {
    const std::uint64_t tactics_samples = run_tactics(generation, best);
    if (stop_ && *stop_) return out;
    out.new_samples += tactics_samples;
  }
  return out;
}

// Expert Iteration throughout: after the warm start, every generation
// also learns from `later_games` games of the teacher, tagged apart
// (genNNNN-teacher) so that a restarted generation resumes them alone.
std::uint64_t SelfPlayStage::run_teacher(int generation) {
  const WarmStartConfig& warm = config_.warm_start;
  selfplay::SelfPlayJob job;
  job.tag = generation_tag(generation) + kTeacherTagSuffix;
  job.games = warm.later_games;
  job.seed = config_.seed * 7919 + static_cast<std::uint64_t>(generation) + 0x5eed7eac;
  job.teacher = warm.teacher;
  job.player_name = teacher_name(warm);
  spdlog::info("gen {} teacher games begin: {} games of the alpha-beta searcher (depth {}, {})", generation, job.games,
               warm.teacher.depth, teacher_evaluation(warm));
  const selfplay::SelfPlayStats stats = play_logged(run_, config_, job, generation, "teacher", stop_);
  const std::uint64_t samples = tag_samples(run_, job.tag);
  if (stats.games && !(stop_ && *stop_))
    spdlog::info("gen {} teacher done: {} games, {} samples in {}", generation, stats.games, samples,
                 format_duration(stats.seconds));
  return samples;
}

selfplay::SelfPlayStats run_tactics_job(const data::RunDir& run, const RunConfig& config, const std::string& tag,
                                        int games, std::uint64_t model_version, std::uint64_t seed,
                                        const std::string& label,
                                        const std::function<void(const std::string&)>& heartbeat,
                                        const std::atomic<bool>* stop) {
  selfplay::SelfPlayJob job;
  job.tag = tag;
  job.games = games;
  job.model_version = model_version;
  job.seed = seed;
  job.tactics = config.tactics.mates;
  job.player_name = "random play";
  auto last_report = Clock::now();
  return selfplay::run_selfplay(
      run, config.selfplay, job,
      [&](const selfplay::SelfPlayStats& s, int total) {
        const int done = s.games + s.games_skipped;
        if (since(last_report) < 10 && done < total) return;
        last_report = Clock::now();
        const double rate = s.seconds > 0 ? s.games / s.seconds : 0;
        if (heartbeat) heartbeat(std::to_string(done) + "/" + std::to_string(total));
        spdlog::info("{}: {}/{} mates, {:.1f}/s, ETA {}", label, done, total, rate,
                     format_duration(rate > 0 ? (total - done) / rate : NAN));
      },
      stop);
}

std::uint64_t SelfPlayStage::run_tactics(int generation, std::uint64_t best) {
  const std::string tag = generation_tag(generation) + training::kTacticsTagSuffix;
  const selfplay::SelfPlayStats stats =
      run_tactics_job(run_, config_, tag, config_.tactics.positions, best,
                      config_.seed * 7919 + static_cast<std::uint64_t>(generation),
                      "gen " + std::to_string(generation) + " tactics", {}, stop_);
  const std::uint64_t samples = tag_samples(run_, tag);
  if (stats.games && !(stop_ && *stop_))
    spdlog::info("gen {} tactics done: {} proven mates (up to mate in {}) in {}", generation, stats.samples,
                 config_.tactics.mates.max_moves, format_duration(stats.seconds));
  return samples;
}

// --- training

namespace {
nn::DeviceOptions train_device(const RunConfig& config) {
  nn::DeviceOptions device;
  device.device = config.train_stage.device;
  device.threads = config.train_stage.threads;
  return device;
}
}  // namespace

TrainStage::TrainStage(const data::RunDir& run, const RunConfig& config, std::uint64_t step,
                       const std::atomic<bool>* stop)
    : config_(config), trainer_(run, config.training, train_device(config)), step_(step), stop_(stop) {}

bool TrainStage::run(int generation, std::uint64_t new_samples, std::uint64_t candidate) {
  trainer_.refresh_samples();
  const std::uint64_t steps = std::clamp<std::uint64_t>(
      static_cast<std::uint64_t>(new_samples * config_.train_stage.train_ratio / config_.training.batch_size),
      config_.train_stage.min_steps, config_.train_stage.max_steps);
  const std::uint64_t target = step_ + steps;
  const int batch_size = config_.training.batch_size;
  const bool trained = trainer_.train_until(
      target,
      [&](const training::TrainProgress& p) {
        last_progress_ = p;
        spdlog::info("gen {} train: step {}/{}, loss {:.3f} (policy {:.3f}, value {:.3f}), lr {:.4g}, {:.0f} "
                     "samples/s, window {}/{}, ETA {}",
                     generation, p.step, p.target, p.losses.total, p.losses.policy, p.losses.value, p.lr,
                     p.samples_per_second, p.window, p.total_samples,
                     format_duration(p.samples_per_second > 0 ? (p.target - p.step) * batch_size / p.samples_per_second
                                                              : NAN));
      },
      stop_);
  if (!trained) return false;
  step_ = target;
  trainer_.export_model(candidate, config_.rules.name());
  return true;
}

TrainSummary TrainStage::summary() {
  TrainSummary out;
  out.step = step_;
  out.total_samples = trainer_.store().total();
  out.window = training::window_size(out.total_samples, config_.training.window);
  out.last = last_progress_;
  return out;
}

// --- evaluation

EvaluationStage::EvaluationStage(const data::RunDir& run, const RunConfig& config, ModelEvaluators models,
                                 const std::atomic<bool>* stop)
    : run_(run), config_(config), models_(std::move(models)), stop_(stop) {}

MatchOutcome EvaluationStage::play(int generation, const std::string& opponent_name, const PlayerFactory& candidate,
                                   const PlayerFactory& opponent, int games, bool& stopped) const {
  MatchOutcome out;
  if (games <= 0 || stopped) return out;
  if (stop_ && *stop_) {
    stopped = true;
    return out;
  }
  MatchConfig m;
  m.games = games;
  m.concurrency = config_.eval.concurrency;
  m.seed = config_.seed * 1000003 + static_cast<std::uint64_t>(generation);
  m.rules = config_.rules;
  m.opening_min_plies = config_.eval.opening_min_plies;
  m.opening_max_plies = config_.eval.opening_max_plies;
  m.max_plies = config_.eval.max_plies;
  m.record_path = run_.path("games/eval-" + generation_tag(generation) + "-vs-" + opponent_name + ".pgn");
  m.event = "ultima loop evaluation, generation " + std::to_string(generation);
  m.stop = stop_;
  spdlog::info("gen {} eval: vs {} begins, {} games", generation, opponent_name, games);
  const auto start = Clock::now();
  const MatchResult r = play_match(candidate, opponent, m);
  if (r.stopped) {
    spdlog::info("gen {} eval: vs {} stopped after {} of {} games", generation, opponent_name, r.games.size(), games);
    stopped = true;
    return out;
  }
  out.wdl = r.results;
  out.score = r.results.score();
  spdlog::info("gen {} eval: vs {:<12} +{} ={} -{}  score {:.1f}%  ({})", generation, opponent_name, r.results.wins,
               r.results.draws, r.results.losses, 100 * out.score, format_duration(since(start)));
  return out;
}

std::vector<LadderLevel> evaluation_ladder(const EvalConfig& eval) {
  std::vector<LadderLevel> ladder;
  for (const std::string& name : eval.levels) ladder.push_back({name, static_cast<double>(find_level(name).elo)});
  std::stable_sort(ladder.begin(), ladder.end(), [](const LadderLevel& a, const LadderLevel& b) { return a.elo < b.elo; });
  return ladder;
}

std::vector<std::string> choose_levels(const std::vector<LadderLevel>& ladder, double elo, int count) {
  const int n = static_cast<int>(ladder.size());
  std::vector<std::string> out;
  if (n == 0) return out;
  int lo = 0, hi = n;  // the chosen levels: [lo, hi)
  if (count > 0 && count < n) {
    if (!std::isfinite(elo)) elo = ladder.front().elo;
    int above = 0;  // the weakest level above elo
    while (above < n && ladder[above].elo <= elo) ++above;
    if (above == 0) lo = 0, hi = 1;
    else if (above == n) lo = n - 1, hi = n;
    else if (count == 1) lo = elo - ladder[above - 1].elo <= ladder[above].elo - elo ? above - 1 : above, hi = lo + 1;
    else lo = above - 1, hi = above + 1;
    while (hi - lo < count) {
      if (lo == 0) ++hi;
      else if (hi == n) --lo;
      else if (elo - ladder[lo - 1].elo <= ladder[hi].elo - elo) --lo;
      else ++hi;
    }
  }
  for (int i = lo; i < hi; ++i) out.push_back(ladder[i].name);
  return out;
}

EvaluationPlan plan_evaluation(const EvalConfig& eval, const CsvTable& earlier) {
  EvaluationPlan plan;
  for (const CsvTable::Row& row : earlier.rows) {
    const double elo = CsvTable::number(row, "elo");
    if (std::isfinite(elo)) plan.elo_before = elo;
    if (CsvTable::number(row, "score_vs_initial") >= eval.initial_until_score) plan.vs_initial = false;
  }
  plan.vs_initial = plan.vs_initial && eval.games_vs_initial > 0;
  plan.levels = choose_levels(evaluation_ladder(eval), plan.elo_before, eval.levels_per_generation);
  return plan;
}

EvaluationOutcome EvaluationStage::run(int generation, std::uint64_t candidate, std::uint64_t best) {
  return run(generation, candidate, best, plan_evaluation(config_.eval, CsvTable{}));
}

EvaluationOutcome EvaluationStage::run(int generation, std::uint64_t candidate, std::uint64_t best,
                                       const EvaluationPlan& plan) {
  EvaluationOutcome out;
  const EvalConfig& eval = config_.eval;
  const PlayerFactory candidate_player = mcts_factory(models_(candidate), eval);
  bool& stopped = out.stopped;
  if (eval.games_vs_best > 0)
    out.vs_best = play(generation, "best", candidate_player, mcts_factory(models_(best), eval), eval.games_vs_best,
                       stopped);
  const int initial_games = plan.vs_initial ? eval.games_vs_initial : 0;
  if (initial_games > 0 && !initial_ && !stopped) initial_ = models_(0);
  out.vs_initial = play(generation, "initial", candidate_player,
                        initial_ ? mcts_factory(initial_, eval) : PlayerFactory(), initial_games, stopped);
  std::vector<RatedResult> rated;
  for (const std::string& name : plan.levels) {
    const Level level = find_level(name);
    const MatchOutcome r =
        play(generation, name, candidate_player, [name] { return make_player(name); }, eval.games_per_level, stopped);
    out.levels.push_back(name);
    out.vs_levels.push_back(r);
    rated.push_back({static_cast<double>(level.elo), r.wdl.wins + 0.5 * r.wdl.draws, r.wdl.games()});
  }
  if (stopped) return out;
  out.rating = rate_on_ladder(rated);
  out.elo = out.rating.elo;
  out.promoted = eval.promotion == "continuous" || out.vs_best.score >= eval.gate_score;
  return out;
}

}  // namespace ultima::loop
