#include "frontends/analysis/analysis.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/mcts/material_evaluator.h"
#include "engine/mcts/mcts.h"
#include "engine/mcts/settings.h"
#include "engine/play/bot.h"
#include "engine/play/level.h"
#include "engine/play/value_fit.h"
#include "engine/rules/movegen.h"
#include "engine/rules/notation.h"
#include "engine/rules/replay.h"
#include "engine/rules/rule_set.h"
#include "engine/search/search.h"

namespace ultima {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// Budgets when a query gives none.
constexpr int kDefaultDepth = 7;
constexpr std::uint64_t kDefaultVisits = 400;

const std::vector<std::string> kQueryFields = {
    "id",        "action",         "terminate_id", "turns",          "rules",       "fen",
    "moves",     "analyze_turns",  "backend",      "weights",        "mcts",        "max_visits",
    "max_depth", "max_nodes",      "max_time_ms",  "mate",           "multi_pv",    "search_moves",
    "avoid_moves", "include_policy", "report_every_ms", "nnue"};

// A query's problem: the field at fault (empty: the query as a whole).
struct QueryError {
  std::string field;
  std::string message;
};

[[noreturn]] void fail(const std::string& field, const std::string& message) { throw QueryError{field, message}; }

struct Query {
  std::string id;
  std::string client;  // whose query: ids are per client
  AnalysisSink sink;
  mutable std::atomic<int> turns_left{0};  // turns not yet answered with a final answer
  bool mcts = false;
  std::shared_ptr<Evaluator> evaluator;  // MCTS: shared by every query on the same network
  MctsSettings mcts_settings;
  std::shared_ptr<const nnue::Network> network;  // alpha-beta: the learned evaluation, null: hand-written
  SearchLimits limits;    // alpha-beta: depth, nodes, movetime, mate, multipv
  MctsLimits mcts_limits;  // visits, movetime
  int multipv = 1;
  std::vector<std::string> search_moves, avoid_moves;
  bool include_policy = false;
  std::int64_t report_every_ms = 0;
};

struct Task {
  std::shared_ptr<const Query> query;  // null for a job
  std::function<void()> job;
  int turn = 0;
  Position pos;
  std::vector<Move> root_moves;  // empty: all
  std::atomic<bool> terminated{false};
  std::mutex stop_mutex;
  std::function<void()> stop;  // set while a search runs
};

// Sets a task's stop for the life of one search object (declared after it,
// so the stop is gone before the object is).
class StopHook {
 public:
  StopHook(Task& task, std::function<void()> stop) : task_(task) {
    std::lock_guard lock(task_.stop_mutex);
    task_.stop = std::move(stop);
  }
  ~StopHook() {
    std::lock_guard lock(task_.stop_mutex);
    task_.stop = nullptr;
  }
  StopHook(const StopHook&) = delete;
  StopHook& operator=(const StopHook&) = delete;

 private:
  Task& task_;
};

json wdl_json(const WdlPermille& w) { return json::array({w.win, w.draw, w.loss}); }
json wdl_json(double win, double draw, double loss) { return wdl_json(shares_to_wdl(win, draw, loss)); }

// Plies to mate as "moves to mate" for the side to move (negative: mated).
int mate_moves(int score) {
  if (score >= kMateBound) return (kMateScore - score + 1) / 2;
  if (score <= -kMateBound) return -((kMateScore + score) / 2);
  return 0;
}

// Centipawns of a search score; mates as the ends of the scale.
int score_cp(int score) {
  if (score >= kMateBound) return q_to_centipawns(1);
  if (score <= -kMateBound) return q_to_centipawns(-1);
  return score;
}

double rounded(double x) { return std::round(x * 10000) / 10000; }

json pv_json(const std::vector<Move>& pv) {
  json a = json::array();
  for (const Move& m : pv) a.push_back(to_coordinate(m));
  return a;
}

}  // namespace

class AnalysisService::Impl {
 public:
  using Admission = AnalysisService::Admission;

  Impl(NetworkFactory networks, AnalysisOptions options)
      : networks_(std::move(networks)), options_(options), default_network_(load_nnue(options_.nnue)) {
    const int n = std::max(1, options_.parallel);
    for (int i = 0; i < n; ++i) workers_.emplace_back([this] { worker_loop(); });
    watcher_ = std::thread([this] { watch_loop(); });
  }

  ~Impl() { finish(); }

  // Answers every query still queued or running, then stops the threads.
  void finish() {
    {
      std::lock_guard lock(mutex_);
      if (closing_) return;
      closing_ = true;
    }
    work_cv_.notify_all();
    for (std::thread& t : workers_) t.join();
    {
      std::lock_guard lock(mutex_);
      watcher_done_ = true;
    }
    watch_cv_.notify_all();
    watcher_.join();
  }

  Admission submit(const std::string& line, const AnalysisSink& sink, const std::string& client) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) return Admission::kAnswered;
    json q;
    try {
      q = json::parse(line);
    } catch (const json::exception& e) {  // a syntax error, or a number out of range ("5e750")
      std::string what = e.what();
      const std::size_t at = what.find("] ");
      emit_error(sink, json(), "", "not valid JSON: " + (at == std::string::npos ? what : what.substr(at + 2)));
      return Admission::kAnswered;
    }
    json id;
    try {
      if (!q.is_object()) fail("", "a query is a JSON object");
      if (!q.contains("id")) fail("id", "missing: every query has an id");
      id = q["id"];
      if (!id.is_string()) {
        id = json();
        fail("id", "must be a string");
      }
      for (auto it = q.begin(); it != q.end(); ++it)
        if (std::find(kQueryFields.begin(), kQueryFields.end(), it.key()) == kQueryFields.end()) {
          const std::string near = nearest_name(it.key(), kQueryFields);
          fail(it.key(), "unknown field '" + it.key() + "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)"));
        }
      if (q.contains("action")) {
        action(q, id.get<std::string>(), sink, client);
        return Admission::kAnswered;
      }
      for (const char* field : {"terminate_id", "turns"})
        if (q.contains(field)) fail(field, std::string("belongs to a terminate action"));
      return enqueue(q, id.get<std::string>(), sink, client);
    } catch (const QueryError& e) {
      emit_error(sink, id, e.field, e.message);
      return Admission::kAnswered;
    }
  }

  Admission submit_job(std::function<void()> job) {
    auto task = std::make_shared<Task>();
    task->job = std::move(job);
    {
      std::lock_guard lock(mutex_);
      if (closing_ || over_limit(1)) return Admission::kBusy;
      queue_.push_back(std::move(task));
    }
    work_cv_.notify_one();
    return Admission::kQueued;
  }

  int terminate(const std::string& client, const std::optional<std::string>& target, const std::vector<int>& turns) {
    int count = 0;
    std::lock_guard lock(mutex_);
    auto matches = [&](const Task& t) {
      if (!t.query || t.query->client != client) return false;
      if (target && t.query->id != *target) return false;
      return turns.empty() || std::find(turns.begin(), turns.end(), t.turn) != turns.end();
    };
    // Queued turns are answered by the workers as they reach them; running
    // ones are stopped by the watcher and answer with what they found.
    for (const auto& t : queue_)
      if (matches(*t) && !t->terminated.exchange(true)) ++count;
    for (const auto& t : running_)
      if (matches(*t) && !t->terminated.exchange(true)) ++count;
    return count;
  }

  int pending() const {
    std::lock_guard lock(mutex_);
    return static_cast<int>(queue_.size() + running_.size());
  }

 private:
  // ---- output

  void emit(const AnalysisSink& sink, const json& answer, bool last) {
    const std::string text = answer.dump(-1, ' ', false, json::error_handler_t::replace);
    std::lock_guard lock(out_mutex_);
    if (sink) sink(text, last);
  }

  // One answer of a turn; a final one ends the turn, and the last turn's
  // final answer is the query's last.
  void emit(const Task& task, const json& answer) {
    const std::string text = answer.dump(-1, ' ', false, json::error_handler_t::replace);
    std::lock_guard lock(out_mutex_);
    const bool last = answer.value("final", false) && task.query->turns_left.fetch_sub(1) == 1;
    if (task.query->sink) task.query->sink(text, last);
  }

  static json error_json(const json& id, const std::string& field, const std::string& message) {
    json e;
    e["id"] = id;
    e["error"] = message;
    e["field"] = field.empty() ? json() : json(field);
    return e;
  }

  void emit_error(const AnalysisSink& sink, const json& id, const std::string& field, const std::string& message) {
    emit(sink, error_json(id, field, message), true);
  }

  bool over_limit(std::size_t more) const {
    return options_.max_pending > 0 &&
           queue_.size() + running_.size() + more > static_cast<std::size_t>(options_.max_pending);
  }

  // ---- reading queries

  static std::string string_field(const json& q, const char* name, const std::string& fallback) {
    if (!q.contains(name)) return fallback;
    if (!q[name].is_string()) fail(name, "must be a string");
    return q[name].get<std::string>();
  }

  static bool bool_field(const json& q, const char* name, bool fallback) {
    if (!q.contains(name)) return fallback;
    if (!q[name].is_boolean()) fail(name, "must be true or false");
    return q[name].get<bool>();
  }

  static std::int64_t int_field(const json& q, const char* name, std::int64_t lo, std::int64_t hi) {
    const json& v = q[name];
    if (!v.is_number_integer()) fail(name, "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    // Large unsigned values do not fit in int64: compare as unsigned first.
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      fail(name, "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    const std::int64_t n = v.get<std::int64_t>();
    if (n < lo || n > hi) fail(name, "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    return n;
  }

  static std::vector<std::string> string_list(const json& q, const char* name) {
    std::vector<std::string> out;
    if (!q.contains(name)) return out;
    if (!q[name].is_array()) fail(name, "must be an array of strings");
    for (const json& v : q[name]) {
      if (!v.is_string()) fail(name, "must be an array of strings");
      out.push_back(v.get<std::string>());
    }
    return out;
  }

  void action(const json& q, const std::string& id, const AnalysisSink& sink, const std::string& client) {
    if (!q["action"].is_string()) fail("action", "must be a string");
    const std::string what = q["action"].get<std::string>();
    json answer;
    answer["id"] = id;
    answer["action"] = what;
    if (what == "query_version") {
      for (auto it = q.begin(); it != q.end(); ++it)
        if (it.key() != "id" && it.key() != "action") fail(it.key(), "query_version takes only id and action");
      answer["version"] = options_.version;
      return emit(sink, answer, true);
    }
    if (what != "terminate") fail("action", "unknown action '" + what + "' (actions: terminate, query_version)");
    for (auto it = q.begin(); it != q.end(); ++it)
      if (it.key() != "id" && it.key() != "action" && it.key() != "terminate_id" && it.key() != "turns")
        fail(it.key(), "terminate takes only id, action, terminate_id and turns");
    std::optional<std::string> target;
    if (q.contains("terminate_id")) target = string_field(q, "terminate_id", "");
    std::vector<int> turns;
    if (q.contains("turns")) {
      if (!target) fail("turns", "needs terminate_id");
      if (!q["turns"].is_array()) fail("turns", "must be an array of turn numbers");
      for (const json& t : q["turns"]) {
        if (!t.is_number_integer()) fail("turns", "must be an array of turn numbers");
        turns.push_back(t.get<int>());
      }
    }
    const int count = terminate(client, target, turns);
    if (target) answer["terminate_id"] = *target;
    answer["terminated_turns"] = count;
    emit(sink, answer, true);
  }

  std::shared_ptr<Evaluator> evaluator_for(const std::string& weights) {
    std::lock_guard lock(evaluators_mutex_);
    auto it = evaluators_.find(weights);
    if (it != evaluators_.end()) return it->second;
    std::shared_ptr<Evaluator> e;
    if (weights.empty()) {
      e = std::make_shared<MaterialEvaluator>();
    } else {
      if (!networks_) fail("weights", "this program has no neural-network support");
      // One batching evaluator per network, sized for every search at once.
      const std::string batch = std::to_string(std::max(1, options_.parallel) * 16);
      // A shipped network bot's name, or "best", plays that bot's network;
      // anything else is a file.
      std::string file = weights;
      if (weights != "random" && weights.find('/') == std::string::npos && !std::filesystem::exists(weights)) {
        try {
          if (const auto shipped = shipped_network(weights)) file = *shipped;
        } catch (const std::exception& ex) {
          fail("weights", ex.what());
        }
      }
      try {
        e = networks_((file == "random" ? std::string() : "weights=" + file + ",") + "max_batch=" + batch);
      } catch (const std::exception& ex) {
        fail("weights", ex.what());
      }
    }
    evaluators_[weights] = e;
    return e;
  }

  Admission enqueue(const json& q, const std::string& id, const AnalysisSink& sink, const std::string& client) {
    auto query = std::make_shared<Query>();
    query->id = id;
    query->client = client;
    query->sink = sink;

    Rules rules;
    try {
      rules = Rules::parse(string_field(q, "rules", "abbott1963"));
    } catch (const QueryError&) {
      throw;
    } catch (const std::exception& e) {
      fail("rules", e.what());
    }
    const std::string fen = string_field(q, "fen", "startpos");
    Position pos;
    try {
      pos = start_position(fen, rules);
    } catch (const std::exception& e) {
      fail("fen", e.what());
    }
    // The position at every turn: turn t follows the first t moves.
    const std::vector<std::string> moves = string_list(q, "moves");
    std::vector<Position> at_turn;
    try {
      at_turn = replay_game(pos, moves).positions;
    } catch (const ReplayError& e) {
      fail("moves", e.what());
    }
    std::vector<int> turns;
    if (q.contains("analyze_turns")) {
      if (!q["analyze_turns"].is_array() || q["analyze_turns"].empty())
        fail("analyze_turns", "must be a non-empty array of turn numbers");
      for (const json& t : q["analyze_turns"]) {
        if (!t.is_number_integer() || t.get<std::int64_t>() < 0 ||
            t.get<std::int64_t>() > static_cast<std::int64_t>(moves.size()))
          fail("analyze_turns", "turns are integers from 0 to " + std::to_string(moves.size()) +
                                    " (the number of moves)");
        turns.push_back(t.get<int>());
      }
    } else {
      turns.push_back(static_cast<int>(moves.size()));
    }

    const std::string backend = string_field(q, "backend", "alphabeta");
    if (backend != "alphabeta" && backend != "mcts") fail("backend", "must be alphabeta or mcts");
    query->mcts = backend == "mcts";
    auto only_for = [&](const char* field, bool allowed, const char* which) {
      if (q.contains(field) && !allowed) fail(field, std::string("is for the ") + which + " backend");
    };
    only_for("weights", query->mcts, "mcts");
    only_for("mcts", query->mcts, "mcts");
    only_for("max_visits", query->mcts, "mcts");
    if (q.contains("include_policy") && !query->mcts)
      fail("include_policy", "needs the mcts backend (alpha-beta has no policy)");
    only_for("max_depth", !query->mcts, "alphabeta");
    only_for("max_nodes", !query->mcts, "alphabeta");
    only_for("mate", !query->mcts, "alphabeta");
    only_for("nnue", !query->mcts, "alphabeta");

    query->multipv = q.contains("multi_pv") ? static_cast<int>(int_field(q, "multi_pv", 1, 256)) : 1;
    const std::int64_t time_ms = q.contains("max_time_ms") ? int_field(q, "max_time_ms", 1, 86'400'000) : 0;
    query->report_every_ms = q.contains("report_every_ms") ? int_field(q, "report_every_ms", 0, 86'400'000) : 0;
    query->include_policy = bool_field(q, "include_policy", false);
    query->search_moves = string_list(q, "search_moves");
    query->avoid_moves = string_list(q, "avoid_moves");
    if (q.contains("search_moves") && query->search_moves.empty()) fail("search_moves", "is empty: no move to search");

    if (query->mcts) {
      if (q.contains("mcts")) {
        try {
          query->mcts_settings = parse_mcts_settings(string_field(q, "mcts", ""));
        } catch (const QueryError&) {
          throw;
        } catch (const std::exception& e) {
          fail("mcts", e.what());
        }
      }
      if (options_.max_threads > 0 && query->mcts_settings.config.threads > options_.max_threads)
        fail("mcts", "threads=" + std::to_string(query->mcts_settings.config.threads) + " is over this engine's limit of " +
                         std::to_string(options_.max_threads) + " per search");
      if (q.contains("max_visits")) query->mcts_limits.visits = int_field(q, "max_visits", 1, 1'000'000'000);
      query->mcts_limits.movetime_ms = time_ms;
      query->mcts_limits.playouts = query->mcts_settings.limits.playouts;
      if (!query->mcts_limits.visits && !query->mcts_limits.playouts && !time_ms)
        query->mcts_limits.visits = kDefaultVisits;
      query->evaluator = evaluator_for(string_field(q, "weights", ""));
    } else {
      SearchLimits& l = query->limits;
      if (q.contains("max_depth")) l.depth = static_cast<int>(int_field(q, "max_depth", 1, kMaxPly - 2));
      if (q.contains("max_nodes")) l.nodes = int_field(q, "max_nodes", 1, std::int64_t{1} << 50);
      if (q.contains("mate")) l.mate = static_cast<int>(int_field(q, "mate", 1, (kMaxPly - 2) / 2));
      l.movetime_ms = time_ms;
      l.multipv = query->multipv;
      if (!l.depth && !l.nodes && !l.movetime_ms && !l.mate) l.depth = kDefaultDepth;
      query->network = default_network_;
      if (q.contains("nnue")) {
        const std::string name = string_field(q, "nnue", "");
        try {
          query->network = load_nnue(name);
        } catch (const std::exception& e) {
          fail("nnue", e.what());
        }
      }
    }

    // Each turn: its position and the root moves left by search_moves and
    // avoid_moves, which must be legal there.
    std::vector<std::shared_ptr<Task>> tasks;
    for (int turn : turns) {
      auto task = std::make_shared<Task>();
      task->query = query;
      task->turn = turn;
      task->pos = at_turn[turn];
      if (!game_status(task->pos).over()) {
        MoveList legal;
        generate_legal(task->pos, legal);
        auto parse_list = [&](const char* field, const std::vector<std::string>& texts) {
          std::vector<Move> out;
          for (const std::string& text : texts) {
            try {
              out.push_back(parse_coordinate(task->pos, text));
            } catch (const std::exception& e) {
              fail(field, "'" + text + "' at turn " + std::to_string(turn) + ": " + e.what());
            }
          }
          return out;
        };
        const std::vector<Move> only = parse_list("search_moves", query->search_moves);
        const std::vector<Move> avoid = parse_list("avoid_moves", query->avoid_moves);
        if (!only.empty() || !avoid.empty()) {
          for (const Move& m : legal) {
            if (!only.empty() && std::find(only.begin(), only.end(), m) == only.end()) continue;
            if (std::find(avoid.begin(), avoid.end(), m) != avoid.end()) continue;
            task->root_moves.push_back(m);
          }
          if (task->root_moves.empty())
            fail(avoid.empty() ? "search_moves" : "avoid_moves", "leaves no move to search at turn " + std::to_string(turn));
        }
      }
      tasks.push_back(std::move(task));
    }
    query->turns_left = static_cast<int>(tasks.size());
    bool closing = false, busy = false;
    {
      std::lock_guard lock(mutex_);
      closing = closing_;
      busy = closing || over_limit(tasks.size());
      if (!busy)
        for (auto& t : tasks) queue_.push_back(std::move(t));
    }
    if (busy) {
      emit_error(sink, id, "",
                 closing ? "busy: the engine is shutting down"
                         : "busy: " + std::to_string(options_.max_pending) +
                               " searches are running or queued already, the most this engine takes; try again later");
      return Admission::kBusy;
    }
    work_cv_.notify_all();
    return Admission::kQueued;
  }

  // ---- searching

  void worker_loop() {
    Searcher searcher(static_cast<std::size_t>(std::max(1, options_.hash_mb)));
    for (;;) {
      std::shared_ptr<Task> task;
      bool skip = false;
      {
        std::unique_lock lock(mutex_);
        work_cv_.wait(lock, [&] { return closing_ || !queue_.empty(); });
        if (queue_.empty()) return;  // closing, and nothing left
        task = std::move(queue_.front());
        queue_.pop_front();
        skip = task->terminated;
        if (!skip) running_.push_back(task);
      }
      if (task->job) {
        try {
          task->job();
        } catch (...) {
          // A job reports through what it captured.
        }
      } else if (skip) {
        emit(*task, header(*task, true, true));
      } else {
        try {
          run(*task, searcher);
        } catch (const std::exception& e) {
          json error = error_json(task->query->id, "", "search failed at turn " + std::to_string(task->turn) + ": " + e.what());
          error["final"] = true;
          error["turn"] = task->turn;
          emit(*task, error);
        }
      }
      if (skip) continue;
      std::lock_guard lock(mutex_);
      running_.erase(std::find(running_.begin(), running_.end(), task));
    }
  }

  // Stops the running searches that were terminated. A stop can land
  // before the search has begun (and be forgotten when it begins), so it is
  // repeated until the search is over.
  void watch_loop() {
    std::unique_lock lock(mutex_);
    while (!watcher_done_) {
      for (const auto& t : running_) {
        std::lock_guard stop_lock(t->stop_mutex);
        if (t->terminated && t->stop) t->stop();
      }
      watch_cv_.wait_for(lock, std::chrono::milliseconds(5));
    }
  }

  json header(const Task& task, bool final, bool terminated) const {
    json a;
    a["id"] = task.query->id;
    a["turn"] = task.turn;
    a["final"] = final;
    if (terminated) a["terminated"] = true;
    return a;
  }

  void run(Task& task, Searcher& searcher) {
    const GameStatus status = game_status(task.pos);
    if (status.over()) {
      json a = header(task, true, false);
      a["game_over"] = {{"result", outcome_text(status.outcome)}, {"termination", termination_name(status.termination)}};
      return emit(task, a);
    }
    if (task.query->mcts) return run_mcts(task);
    run_alphabeta(task, searcher);
  }

  void run_alphabeta(Task& task, Searcher& searcher) {
    const Query& q = *task.query;
    SearchLimits limits = q.limits;
    limits.root_moves = task.root_moves;
    const int legal = task.root_moves.empty() ? count_legal(task.pos) : static_cast<int>(task.root_moves.size());
    const int lines_per_depth = std::min(limits.multipv, legal);
    searcher.set_network(q.network);
    searcher.clear();  // an answer does not depend on the queries before it
    StopHook hook(task, [&searcher] { searcher.stop(); });
    std::vector<SearchInfo> lines;
    auto last_report = Clock::now();
    auto on_info = [&](const SearchInfo& info) {
      if (q.report_every_ms <= 0) return;
      if (info.multipv == 1) lines.clear();
      lines.push_back(info);
      if (info.multipv < lines_per_depth) return;
      const auto now = Clock::now();
      if (now - last_report < std::chrono::milliseconds(q.report_every_ms)) return;
      last_report = now;
      emit(task, alphabeta_answer(task, lines, info.depth, info.nodes, info.time_ms, false));
    };
    Position pos = task.pos;
    const auto start = Clock::now();
    const SearchResult r = searcher.search(pos, limits, on_info);
    const std::int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    json a = alphabeta_answer(task, r.lines, r.depth, r.nodes, ms, true);
    if (q.limits.mate > 0 && !r.lines.empty()) {
      const int m = mate_moves(r.lines[0].score);
      a["mate_search"] = {{"bound", q.limits.mate}, {"found", m > 0 && m <= q.limits.mate}};
    }
    emit(task, a);
  }

  json alphabeta_answer(const Task& task, const std::vector<SearchInfo>& lines, int depth, std::uint64_t nodes,
                        std::int64_t ms, bool final) const {
    json a = header(task, final, final && task.terminated);
    json root;
    root["depth"] = depth;
    root["nodes"] = nodes;
    root["time_ms"] = ms;
    if (!lines.empty()) add_score(root, lines[0].score);
    a["root"] = root;
    json moves = json::array();
    for (const SearchInfo& line : lines) {
      json m;
      m["move"] = line.pv.empty() ? json() : json(to_coordinate(line.pv[0]));
      m["rank"] = line.multipv;
      add_score(m, line.score);
      m["depth"] = line.depth;
      m["seldepth"] = line.seldepth;
      m["pv"] = pv_json(line.pv);
      moves.push_back(m);
    }
    a["moves"] = moves;
    return a;
  }

  static void add_score(json& target, int score) {
    target["cp"] = score_cp(score);
    if (const int m = mate_moves(score)) target["mate"] = m;
    target["wdl"] = wdl_json(score_to_wdl(score));
  }

  void run_mcts(Task& task) {
    const Query& q = *task.query;
    MctsConfig config = q.mcts_settings.config;
    config.multipv = q.multipv;
    config.info_interval_ms = q.report_every_ms > 0 ? static_cast<int>(std::min<std::int64_t>(q.report_every_ms, 1 << 30))
                                                    : 1 << 30;
    // The evaluator's own view of the root: the raw value, and the policy.
    MoveList legal;
    generate_legal(task.pos, legal);
    EvalInput input{&task.pos, &legal};
    EvalOutput raw;
    q.evaluator->evaluate(std::span<const EvalInput>(&input, 1), std::span<EvalOutput>(&raw, 1));

    Mcts mcts(q.evaluator, config);
    mcts.set_position(task.pos);
    MctsLimits limits = q.mcts_limits;
    limits.root_moves = task.root_moves;
    StopHook hook(task, [&mcts] { mcts.stop(); });
    auto on_info = [&](const MctsResult& r) {
      if (!r.final && q.report_every_ms > 0) emit(task, mcts_answer(task, r, raw, legal, false));
    };
    const MctsResult r = mcts.search(limits, on_info);
    emit(task, mcts_answer(task, r, raw, legal, true));
  }

  json mcts_answer(const Task& task, const MctsResult& r, const EvalOutput& raw, const MoveList& legal,
                   bool final) const {
    const Query& q = *task.query;
    json a = header(task, final, final && task.terminated);
    json root;
    root["visits"] = r.visits;
    root["playouts"] = r.playouts;
    root["depth"] = r.depth;
    root["seldepth"] = r.seldepth;
    root["time_ms"] = static_cast<std::int64_t>(r.seconds * 1000);
    root["cp"] = q_to_centipawns(r.q);
    if (r.mate) root["mate"] = r.mate;
    root["wdl"] = wdl_json(r.win, r.draw, r.loss);
    root["raw_cp"] = q_to_centipawns(raw.win - raw.loss);
    root["raw_wdl"] = wdl_json(raw.win, raw.draw, raw.loss);
    a["root"] = root;
    json moves = json::array();
    const int n = std::min<int>(q.multipv, static_cast<int>(r.moves.size()));
    for (int i = 0; i < n; ++i) {
      const MctsRootMove& m = r.moves[i];
      // A move not visited has no value of its own: the root's stands in.
      const bool own = m.visits > 0 || m.mate || m.proven_draw;
      json j;
      j["move"] = to_coordinate(m.move);
      j["rank"] = i + 1;
      j["visits"] = m.visits;
      j["cp"] = m.mate > 0 ? q_to_centipawns(1) : m.mate < 0 ? q_to_centipawns(-1) : q_to_centipawns(own ? m.q : r.q);
      if (m.mate) j["mate"] = m.mate;
      j["wdl"] = own ? wdl_json(m.win, m.draw, m.loss) : wdl_json(r.win, r.draw, r.loss);
      j["prior"] = rounded(prior_of(m.move, raw, legal));
      j["pv"] = pv_json(m.pv.empty() ? std::vector<Move>{m.move} : m.pv);
      moves.push_back(j);
    }
    a["moves"] = moves;
    if (q.include_policy) {
      std::vector<std::pair<float, Move>> policy;
      for (int i = 0; i < legal.size(); ++i) policy.emplace_back(raw.policy[i], legal[i]);
      std::stable_sort(policy.begin(), policy.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
      json p = json::array();
      for (const auto& [prior, move] : policy) p.push_back({{"move", to_coordinate(move)}, {"prior", rounded(prior)}});
      a["policy"] = p;
    }
    return a;
  }

  // The evaluator's prior of a move among all the legal ones (the search's
  // own priors are renormalized over search_moves).
  static double prior_of(const Move& move, const EvalOutput& raw, const MoveList& legal) {
    for (int i = 0; i < legal.size(); ++i)
      if (legal[i] == move && i < static_cast<int>(raw.policy.size())) return raw.policy[i];
    return 0;
  }

  NetworkFactory networks_;
  AnalysisOptions options_;
  std::shared_ptr<const nnue::Network> default_network_;  // of options_.nnue
  std::mutex out_mutex_;

  std::mutex evaluators_mutex_;
  std::map<std::string, std::shared_ptr<Evaluator>> evaluators_;

  mutable std::mutex mutex_;  // the queue, the running list, closing_
  std::condition_variable work_cv_, watch_cv_;
  std::deque<std::shared_ptr<Task>> queue_;
  std::vector<std::shared_ptr<Task>> running_;
  bool closing_ = false;
  bool watcher_done_ = false;
  std::vector<std::thread> workers_;
  std::thread watcher_;
};

AnalysisService::AnalysisService(NetworkFactory networks, AnalysisOptions options)
    : impl_(std::make_unique<Impl>(std::move(networks), std::move(options))) {}

AnalysisService::~AnalysisService() = default;

AnalysisService::Admission AnalysisService::submit(const std::string& line, AnalysisSink sink,
                                                   const std::string& client) {
  return impl_->submit(line, sink, client);
}

AnalysisService::Admission AnalysisService::submit_job(std::function<void()> job) {
  return impl_->submit_job(std::move(job));
}

int AnalysisService::terminate(const std::string& client, const std::string& id) {
  return impl_->terminate(client, id, {});
}

int AnalysisService::pending() const { return impl_->pending(); }

void AnalysisService::finish() { impl_->finish(); }

void run_analysis(std::istream& in, std::ostream& out, const NetworkFactory& networks, const AnalysisOptions& options) {
  AnalysisService service(networks, options);
  const AnalysisSink sink = [&out](const std::string& answer, bool) { out << answer << std::endl; };
  for (std::string line; std::getline(in, line);) service.submit(line, sink);
  service.finish();
}

}  // namespace ultima
