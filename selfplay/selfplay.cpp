#include "selfplay/selfplay.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <stdexcept>
#include <thread>

#include "engine/play/level.h"
#include "engine/play/match.h"
#include "engine/play/puzzle.h"
#include "engine/rules/hash.h"
#include "engine/rules/movegen.h"
#include "engine/play/value_fit.h"
#include "engine/search/search.h"
#include "engine/search/static_eval.h"
#include "nn/policy_index.h"

namespace ultima::selfplay {
namespace {

double temperature_at(const SelfPlayConfig& c, int ply) {
  if (c.temperature <= 0) return 0;
  if (c.temperature_halflife <= 0) return c.temperature;
  return c.temperature_end + (c.temperature - c.temperature_end) * std::pow(0.5, ply / c.temperature_halflife);
}

// Ends the game at `ply` when the rules end it or it reached max_plies
// (adjudicated on material, or cut without a result): true, with the
// outcome and the record's termination set.
bool game_ended(const SelfPlayConfig& config, const Position& pos, int ply, SelfPlayGame& game, Outcome& outcome) {
  const GameStatus status = game_status(pos);
  if (status.over()) {
    outcome = status.outcome;
    game.record.termination = termination_name(status.termination);
    return true;
  }
  if (ply < config.max_plies) return false;
  const int lead = material_lead(pos);
  if (config.adjudicate_cp > 0 && std::abs(lead) >= config.adjudicate_cp) {
    outcome = lead > 0 ? Outcome::kWhiteWins : Outcome::kBlackWins;
    game.record.termination = kMaterialAdjudication;
    game.adjudicated = true;
  } else {
    outcome = Outcome::kDraw;
    game.record.termination = kMaxPliesTermination;
    game.cut = true;
  }
  return true;
}

// The game's result and length, written into its samples.
void label_samples(SelfPlayGame& game, Outcome outcome) {
  game.record.result = outcome;
  const int length = static_cast<int>(game.record.moves.size());
  for (data::Sample& s : game.samples) {
    const bool white = s.white_to_move != 0;
    s.result = outcome == Outcome::kDraw       ? 0
               : (outcome == Outcome::kWhiteWins) == white ? 1
                                                           : -1;
    s.plies_to_end = static_cast<std::uint16_t>(length - s.ply);
    if (game.cut) s.flags |= data::kNoResult;
  }
}

}  // namespace

void TeacherConfig::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("warm_start: " + what); };
  if (depth < 1 || depth > 20) fail("depth must be in 1..20");
  if (multipv < 1 || multipv > 64) fail("multipv must be in 1..64");
  if (!(temperature_cp > 0)) fail("temperature_cp must be above 0");
  if (sample_plies < 0) fail("sample_plies must not be negative");
  try {
    load_nnue(nnue);  // read once per path; a missing or damaged file is named here
  } catch (const std::exception& e) {
    fail(std::string("nnue: ") + e.what());
  }
}

void TacticsConfig::validate() const {
  if (max_moves < 1 || max_moves > 3) throw std::invalid_argument("tactics: max_moves must be in 1..3");
  if (!(longest_share >= 0 && longest_share <= 1))
    throw std::invalid_argument("tactics: longest_share must be in [0, 1]");
  if (!(sparse_share >= 0 && sparse_share <= 1))
    throw std::invalid_argument("tactics: sparse_share must be in [0, 1]");
  if (sparse_pieces < 3 || sparse_pieces > 32) throw std::invalid_argument("tactics: sparse_pieces must be in 3..32");
}

MctsConfig selfplay_mcts_defaults() {
  MctsConfig c;
  c.gumbel = true;
  c.gumbel_rescale_q = false;
  c.gumbel_c_scale = 1.0f;
  c.noise_epsilon = 0.25f;
  c.mate_scan_root = false;
  c.policy_temperature = 1;
  c.threads = 1;
  c.info_interval_ms = 1 << 30;
  return c;
}

void SelfPlayConfig::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("selfplay: " + what); };
  if (parallel_games < 1) fail("parallel_games must be at least 1");
  if (games_per_shard < 1) fail("games_per_shard must be at least 1");
  if (full_playouts < 1) fail("full_playouts must be at least 1");
  if (cheap_playouts < 1) fail("cheap_playouts must be at least 1");
  if (!(full_search_share > 0 && full_search_share <= 1)) fail("full_search_share must be in (0, 1]");
  if (mcts.batch_size < 1) fail("batch must be at least 1");
  if (!(mcts.noise_epsilon >= 0 && mcts.noise_epsilon <= 1)) fail("noise_epsilon must be in [0, 1]");
  if (!(mcts.noise_alpha > 0)) fail("noise_alpha must be positive");
  if (temperature < 0 || temperature_end < 0 || temperature_halflife < 0) fail("temperatures must not be negative");
  if (policy_target != "visits" && policy_target != "gumbel")
    fail("policy_target must be visits or gumbel, not '" + policy_target + "'");
  if (policy_target == "gumbel" && !mcts.gumbel) fail("policy_target gumbel needs gumbel: true");
  if (resign_threshold < 0 || resign_threshold > 1) fail("resign_threshold must be in [0, 1]");
  if (resign_consecutive < 1) fail("resign_consecutive must be at least 1");
  if (no_resign_share < 0 || no_resign_share > 1) fail("no_resign_share must be in [0, 1]");
  if (max_plies < 1 || max_plies > 65535) fail("max_plies must be in 1..65535");
  if (!(mcts.gumbel_c_scale > 0)) fail("gumbel_c_scale must be above 0");
  if (adjudicate_cp < 0) fail("adjudicate_cp must not be negative");
  if (value_nodes > 100000000) fail("value_nodes must be at most 100000000");
  if (value_nodes > 0) {
    try {
      load_nnue(value_nnue);  // a missing or damaged file is named before any game
    } catch (const std::exception& e) {
      fail(std::string("value_nnue: ") + e.what());
    }
  }
}

std::uint64_t game_seed(std::uint64_t job_seed, const std::string& tag, int game) {
  std::uint64_t h = mix64(job_seed);
  for (const char c : tag) h = mix64(h ^ static_cast<unsigned char>(c));
  return mix64(h ^ static_cast<std::uint64_t>(game));
}

int material_lead(const Position& pos) {
  static const EvalWeights weights;
  return material(pos, kWhite, weights) - material(pos, kBlack, weights);
}

double SelfPlayStats::eta_seconds(int games_total, int max_plies) const {
  const double rate = moves_per_second();
  if (rate <= 0) return -1;
  const double running_moves = std::max(0.0, double(moves) - double(finished_moves));
  double mean_length = games > 0 ? double(finished_moves) / games : max_plies;
  if (in_progress > 0) mean_length = std::max(mean_length, running_moves / in_progress);
  const double left = std::max(0.0, (games_total - games_skipped - games) * mean_length - running_moves);
  return left / rate;
}

SelfPlayGame play_selfplay_game(const SelfPlayConfig& config, std::shared_ptr<Evaluator> evaluator,
                                std::uint64_t seed, std::uint32_t index,
                                std::atomic<std::uint64_t>* moves_played) {
  MctsConfig mcts_config = config.mcts;
  mcts_config.threads = 1;  // one game per thread
  Mcts mcts(std::move(evaluator), mcts_config);
  std::optional<Searcher> labeller;
  if (config.value_nodes > 0) {
    labeller.emplace(1);
    labeller->set_network(load_nnue(config.value_nnue));
  }

  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0, 1);
  SelfPlayGame game;
  game.no_resign = config.resign_threshold > 0 && uniform(rng) < config.no_resign_share;
  Position pos = Position::start(config.rules);
  game.record.rules = config.rules;
  int low_streak[2] = {0, 0};
  int would_resign_colour = -1;  // 0 White, 1 Black
  Outcome outcome = Outcome::kOngoing;

  for (int ply = 0;; ++ply) {
    if (game_ended(config, pos, ply, game, outcome)) break;
    const bool full = uniform(rng) < config.full_search_share;
    MctsConfig c = mcts_config;
    c.noise_epsilon = full ? config.mcts.noise_epsilon : 0;
    c.seed = rng();
    c.gumbel_planned_playouts = full ? config.full_playouts : config.cheap_playouts;
    mcts.set_config(c);
    mcts.set_position(pos);
    MctsLimits limits;
    limits.playouts = full ? config.full_playouts : config.cheap_playouts;
    const MctsResult result = mcts.search(limits);
    game.playouts += result.playouts;
    const int colour = pos.side_to_move() == kWhite ? 0 : 1;
    // A proven win is played (its quickest line) whatever the sampling.
    const bool proven_win = result.mate > 0;

    if (full) {
      data::Sample sample;
      data::pack_position(pos, sample);
      sample.ply = static_cast<std::uint16_t>(ply);
      sample.game = index;
      sample.root_q = labeller ? value_by_search(pos, config.value_nodes, *labeller) : result.q;
      if (proven_win) {
        // The quickest win is the whole target: a win proven by the mate
        // scan has no visits, and the improved policy leaves it near its
        // prior.
        const int slot = nn::policy_index(result.best);
        if (slot >= 0) sample.policy.push_back({static_cast<std::uint16_t>(slot), 1.0f});
      } else {
        auto weight_of = [&](const MctsRootMove& m) {
          return config.policy_target == "gumbel" ? m.improved_policy : static_cast<double>(m.visits);
        };
        double total = 0;
        for (const MctsRootMove& m : result.moves) total += weight_of(m);
        for (const MctsRootMove& m : result.moves) {
          const double weight = weight_of(m);
          const int slot = nn::policy_index(m.move);
          if (weight <= 0 || total <= 0 || slot < 0) continue;
          sample.policy.push_back({static_cast<std::uint16_t>(slot), static_cast<float>(weight / total)});
        }
      }
      if (!sample.policy.empty()) game.samples.push_back(std::move(sample));
    }

    if (config.resign_threshold > 0) {
      low_streak[colour] = result.q < -config.resign_threshold ? low_streak[colour] + 1 : 0;
      if (low_streak[colour] >= config.resign_consecutive) {
        if (!game.no_resign) {
          outcome = colour == 0 ? Outcome::kBlackWins : Outcome::kWhiteWins;
          game.record.termination = "resignation";
          game.resigned = true;
          break;
        }
        if (would_resign_colour < 0) would_resign_colour = colour;
      }
    }
    // A Gumbel root's choice is already a sample (Gumbel-top-k over the
    // policy, then sequential halving on the values); otherwise sample the
    // visits with the temperature.
    const Move move = proven_win ? result.best
                      : config.mcts.gumbel && !result.gumbel_choice.is_null()
                          ? result.gumbel_choice
                          : pick_move(result, temperature_at(config, ply), rng());
    game.record.moves.push_back(move);
    pos.make(move);
    if (moves_played) moves_played->fetch_add(1, std::memory_order_relaxed);
  }

  label_samples(game, outcome);
  if (would_resign_colour >= 0) {
    game.would_resign = true;
    const Outcome loss = would_resign_colour == 0 ? Outcome::kBlackWins : Outcome::kWhiteWins;
    game.false_resign = outcome != loss;
  }
  return game;
}

float value_by_search(const Position& pos, std::uint64_t nodes, Searcher& searcher) {
  searcher.clear();
  SearchLimits limits;
  limits.nodes = nodes;
  Position searched = pos;
  const SearchResult result = searcher.search(searched, limits);
  const WdlPermille wdl = score_to_wdl(result.score);
  return static_cast<float>(wdl.win - wdl.loss) / 1000.0f;
}

TeacherLabel label_by_teacher(const Position& pos, const TeacherConfig& teacher, Searcher& searcher) {
  teacher.validate();
  SearchLimits limits;
  limits.depth = teacher.depth;
  limits.multipv = teacher.multipv;
  Position searched = pos;
  const SearchResult result = searcher.search(searched, limits);
  TeacherLabel label;
  label.nodes = result.nodes;
  // The lines' softmax; a forced mate is the whole target, as a proven win
  // is in self-play.
  const int best_score = result.lines.empty() ? result.score : result.lines.front().score;
  for (const SearchInfo& line : result.lines) {
    if (line.pv.empty()) continue;
    const bool forced = best_score >= kMateBound && !label.moves.empty();
    label.moves.push_back(line.pv.front());
    label.weights.push_back(forced ? 0.0 : std::exp((line.score - best_score) / teacher.temperature_cp));
  }
  if (label.moves.empty()) label.moves.push_back(result.best), label.weights.push_back(1.0);
  const double total = std::accumulate(label.weights.begin(), label.weights.end(), 0.0);

  data::Sample& sample = label.sample;
  data::pack_position(pos, sample);
  const WdlPermille wdl = score_to_wdl(best_score);
  sample.root_q = static_cast<float>(wdl.win - wdl.loss) / 1000.0f;
  for (std::size_t i = 0; i < label.moves.size(); ++i) {
    const int slot = nn::policy_index(label.moves[i]);
    if (slot >= 0 && label.weights[i] > 0)
      sample.policy.push_back({static_cast<std::uint16_t>(slot), static_cast<float>(label.weights[i] / total)});
  }
  return label;
}

SelfPlayGame play_teacher_game(const SelfPlayConfig& config, const TeacherConfig& teacher, std::uint64_t seed,
                               std::uint32_t index, std::atomic<std::uint64_t>* moves_played) {
  teacher.validate();
  Searcher searcher(4);
  searcher.set_network(load_nnue(teacher.nnue));
  std::mt19937_64 rng(seed);
  SelfPlayGame game;
  Position pos = Position::start(config.rules);
  game.record.rules = config.rules;
  Outcome outcome = Outcome::kOngoing;

  for (int ply = 0;; ++ply) {
    if (game_ended(config, pos, ply, game, outcome)) break;
    TeacherLabel label = label_by_teacher(pos, teacher, searcher);
    game.playouts += label.nodes;
    if (!label.sample.policy.empty()) {
      label.sample.ply = static_cast<std::uint16_t>(ply);
      label.sample.game = index;
      game.samples.push_back(std::move(label.sample));
    }
    std::size_t chosen = 0;
    if (ply < teacher.sample_plies) {
      std::discrete_distribution<std::size_t> pick(label.weights.begin(), label.weights.end());
      chosen = pick(rng);
    }
    game.record.moves.push_back(label.moves[chosen]);
    pos.make(label.moves[chosen]);
    if (moves_played) moves_played->fetch_add(1, std::memory_order_relaxed);
  }
  label_samples(game, outcome);
  return game;
}

SelfPlayGame play_tactics_game(const SelfPlayConfig& config, const TacticsConfig& tactics, std::uint64_t seed,
                               std::uint32_t index, std::atomic<std::uint64_t>* moves_played) {
  tactics.validate();
  Searcher searcher(4);
  std::mt19937_64 rng(seed);
  SelfPlayGame game;
  game.record.rules = config.rules;
  // Drawn only when asked for, so that a seed gives the samples it gave
  // before the share existed.
  const bool longest =
      tactics.longest_share > 0 && std::uniform_real_distribution<double>(0, 1)(rng) < tactics.longest_share;
  const int least = longest ? tactics.max_moves : 1;
  const bool sparse =
      tactics.sparse_share > 0 && std::uniform_real_distribution<double>(0, 1)(rng) < tactics.sparse_share;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const std::optional<RandomMate> mate =
        sparse ? random_sparse_mate(rng, config.rules, tactics.max_moves, searcher, tactics.sparse_pieces, least)
               : random_game_mate(rng, config.rules, tactics.max_moves, searcher, least);
    if (!mate) continue;
    const std::vector<Move> mating = mating_moves(mate->pos, mate->moves, searcher);
    if (mating.empty()) continue;  // cannot happen: the search proved one
    data::Sample sample;
    data::pack_position(mate->pos, sample);
    for (const Move& m : mating) {
      const int slot = nn::policy_index(m);
      if (slot >= 0) sample.policy.push_back({static_cast<std::uint16_t>(slot), 0});
    }
    for (data::PolicyTarget& t : sample.policy) t.probability = 1.0f / static_cast<float>(sample.policy.size());
    sample.result = tactics.value ? 1 : 0;
    sample.root_q = tactics.value ? 1 : 0;
    if (!tactics.value) sample.flags |= data::kNoResult;
    sample.plies_to_end = static_cast<std::uint16_t>(2 * mate->moves - 1);
    sample.ply = static_cast<std::uint16_t>(mate->line.size());
    sample.game = index;
    game.samples.push_back(std::move(sample));
    game.record.moves = mate->line;
    game.record.opening_plies = static_cast<int>(mate->line.size());
    game.record.termination = "mate in " + std::to_string(mate->moves) + " to play";
    if (moves_played) moves_played->fetch_add(mate->line.size(), std::memory_order_relaxed);
    break;
  }
  return game;
}

SelfPlayStats run_selfplay(const data::RunDir& run, const SelfPlayConfig& config, const SelfPlayJob& job,
                           const SelfPlayProgress& progress, const std::atomic<bool>* stop) {
  config.validate();
  if (!job.evaluator && !job.teacher && !job.tactics) throw std::invalid_argument("selfplay: no evaluator");
  if (job.teacher) job.teacher->validate();
  if (job.tactics) job.tactics->validate();
  if (job.games < 0) throw std::invalid_argument("selfplay: a negative number of games");
  const auto start = std::chrono::steady_clock::now();
  const int per_shard = config.games_per_shard;
  const int shard_count = (job.games + per_shard - 1) / per_shard;

  // The games of the shards still missing, in order.
  std::vector<int> existing = run.shard_sequences(job.tag);
  std::vector<int> todo;
  SelfPlayStats stats;
  for (int s = 0; s < shard_count; ++s) {
    const int first = s * per_shard, last = std::min(job.games, first + per_shard);
    if (std::binary_search(existing.begin(), existing.end(), s)) {
      stats.games_skipped += last - first;
      continue;
    }
    for (int g = first; g < last; ++g) todo.push_back(g);
  }

  std::mutex mutex;
  std::size_t next = 0;
  std::map<int, std::vector<SelfPlayGame>> pending;  // shard -> games done so far
  std::exception_ptr failure;
  std::atomic<std::uint64_t> moves_played{0};
  int running = 0;
  std::condition_variable finished;
  auto stopped = [&] { return (stop && stop->load()) || failure; };

  auto write = [&](int shard, std::vector<SelfPlayGame>& games) {
    std::sort(games.begin(), games.end(), [](const SelfPlayGame& a, const SelfPlayGame& b) {
      return std::stoi(a.record.round) < std::stoi(b.record.round);  // rounds are game numbers: "10" after "9"
    });
    std::vector<data::Sample> samples;
    std::vector<GameRecord> records;
    for (SelfPlayGame& g : games) {
      samples.insert(samples.end(), g.samples.begin(), g.samples.end());
      records.push_back(g.record);
    }
    write_pgn_file(run.games_path(job.tag, shard), records);
    data::ShardHeader header;
    header.games = static_cast<std::uint32_t>(games.size());
    header.model_version = job.model_version;
    header.rules = config.rules.name();
    data::write_shard(run.shard_path(job.tag, shard), header, samples);
  };

  auto worker = [&] {
    try {
      for (;;) {
        int game_index;
        {
          std::lock_guard lock(mutex);
          if (stopped() || next >= todo.size()) return;
          game_index = todo[next++];
          stats.in_progress++;
        }
        const int shard = game_index / per_shard;
        const std::uint64_t seed = game_seed(job.seed, job.tag, game_index);
        const auto index = static_cast<std::uint32_t>(game_index % per_shard);
        SelfPlayGame game = job.teacher   ? play_teacher_game(config, *job.teacher, seed, index, &moves_played)
                            : job.tactics ? play_tactics_game(config, *job.tactics, seed, index, &moves_played)
                                          : play_selfplay_game(config, job.evaluator, seed, index, &moves_played);
        game.record.event = job.teacher ? "ultima warm start" : job.tactics ? "ultima tactics" : "ultima selfplay";
        game.record.round = std::to_string(game_index + 1);
        game.record.white = game.record.black = job.player_name;
        std::unique_lock lock(mutex);
        stats.in_progress--;
        if (stopped()) return;
        stats.games++;
        stats.finished_moves += game.record.moves.size();
        stats.moves = moves_played.load();
        stats.samples += game.samples.size();
        stats.playouts += game.playouts;
        stats.white_wins += game.record.result == Outcome::kWhiteWins;
        stats.black_wins += game.record.result == Outcome::kBlackWins;
        stats.draws += game.record.result == Outcome::kDraw;
        stats.resigned += game.resigned;
        stats.max_plies += game.cut;
        stats.adjudicated += game.adjudicated;
        stats.no_resign_games += game.no_resign;
        stats.would_resign += game.would_resign;
        stats.false_resign += game.false_resign;
        auto& games = pending[shard];
        games.push_back(std::move(game));
        const int first = shard * per_shard, size = std::min(job.games, first + per_shard) - first;
        if (static_cast<int>(games.size()) == size) {
          std::vector<SelfPlayGame> done = std::move(games);
          pending.erase(shard);
          write(shard, done);  // under the lock: shards are small, and writes stay ordered
          stats.shards++;
        }
        stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (progress) progress(stats, job.games);
      }
    } catch (...) {
      std::lock_guard lock(mutex);
      if (!failure) failure = std::current_exception();
    }
  };

  std::vector<std::thread> threads;
  // Teacher games and tactics are searches that never wait for an
  // evaluator: no more of them at once than there are cores.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const bool searches = job.teacher || job.tactics;
  const int parallel = searches ? std::min(config.parallel_games, cores) : config.parallel_games;
  const int count = std::max(1, std::min<int>(parallel, static_cast<int>(todo.size())));
  running = count;
  for (int i = 0; i < count; ++i)
    threads.emplace_back([&] {
      worker();
      std::lock_guard lock(mutex);
      --running;
      finished.notify_all();
    });
  // Progress between finished games: the moves played so far.
  {
    std::unique_lock lock(mutex);
    while (running > 0) {
      finished.wait_for(lock, std::chrono::seconds(1));
      if (running == 0 || !progress) continue;
      stats.moves = moves_played.load();
      stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      progress(stats, job.games);
    }
  }
  for (auto& t : threads) t.join();
  stats.moves = moves_played.load();
  if (failure) std::rethrow_exception(failure);
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace ultima::selfplay
