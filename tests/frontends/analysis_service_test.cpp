// The analysis engine as a shared service (AnalysisService): clients with
// their own sinks and their own ids at once, terminate reaching only the
// sender's queries, the limit on turns running and queued, jobs under the
// same limit, and the cap on an MCTS search's threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "frontends/analysis/analysis.h"

namespace ultima {
namespace {

using json = nlohmann::json;

// Collects one client's answers; wait() returns once the query's last
// answer came.
class Collector {
 public:
  AnalysisSink sink() {
    return [this](const std::string& text, bool last) {
      std::lock_guard lock(mutex_);
      answers_.push_back(json::parse(text));
      lasts_ += last ? 1 : 0;
      cv_.notify_all();
    };
  }
  std::vector<json> wait(int lasts = 1) {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return lasts_ >= lasts; });
    return answers_;
  }
  int lasts() {
    std::lock_guard lock(mutex_);
    return lasts_;
  }
  // Waits for any answer (a report) of a running query.
  void wait_for_any() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return !answers_.empty(); });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<json> answers_;
  int lasts_ = 0;
};

const char* kMateInOne = "6pk/5K1p/8/8/3W4/2p5/8/8 w 0 1";  // d4g7 mates

// A search that runs until terminated (a day of time), reporting as it goes.
std::string long_query(const std::string& id) {
  return json{{"id", id}, {"max_time_ms", 86'400'000}, {"report_every_ms", 1}}.dump();
}

TEST(AnalysisService, ClientsAtOnceGetTheirOwnAnswersUnderTheSameId) {
  AnalysisService service({}, AnalysisOptions{.parallel = 2});
  Collector mate, start;
  // Both clients call their query "a"; each sink sees only its own.
  EXPECT_EQ(service.submit(json{{"id", "a"}, {"fen", kMateInOne}, {"max_depth", 3}}.dump(), mate.sink(), "one"),
            AnalysisService::Admission::kQueued);
  EXPECT_EQ(service.submit(json{{"id", "a"}, {"moves", {"a2a3"}}, {"max_depth", 2}}.dump(), start.sink(), "two"),
            AnalysisService::Admission::kQueued);
  const std::vector<json> m = mate.wait(), s = start.wait();
  ASSERT_EQ(m.size(), 1u);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(m[0]["id"], "a");
  EXPECT_EQ(s[0]["id"], "a");
  EXPECT_EQ(m[0]["moves"][0]["move"], "d4g7");
  EXPECT_EQ(m[0]["moves"][0]["mate"], 1);
  EXPECT_EQ(s[0]["root"]["depth"], 2);
  EXPECT_FALSE(s[0]["moves"][0].contains("mate"));
}

TEST(AnalysisService, EveryTurnAnsweredAndOnlyTheLastAnswerIsLast) {
  AnalysisService service;
  Collector c;
  service.submit(json{{"id", "g"}, {"moves", {"a2a3", "h7h6"}}, {"analyze_turns", {0, 1, 2}}, {"max_depth", 2}}.dump(),
                 c.sink());
  const std::vector<json> answers = c.wait();
  ASSERT_EQ(answers.size(), 3u);
  std::vector<int> turns;
  for (const json& a : answers) turns.push_back(a["turn"].get<int>());
  std::sort(turns.begin(), turns.end());
  EXPECT_EQ(turns, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(c.lasts(), 1);
}

TEST(AnalysisService, ErrorsAndActionsAreAnsweredAtOnce) {
  AnalysisService service;
  Collector bad, unknown, version;
  EXPECT_EQ(service.submit("{not json", bad.sink()), AnalysisService::Admission::kAnswered);
  EXPECT_EQ(service.submit(json{{"id", "x"}, {"depth", 3}}.dump(), unknown.sink()),
            AnalysisService::Admission::kAnswered);
  EXPECT_EQ(service.submit(json{{"id", "v"}, {"action", "query_version"}}.dump(), version.sink()),
            AnalysisService::Admission::kAnswered);
  EXPECT_TRUE(bad.wait()[0].contains("error"));
  EXPECT_EQ(unknown.wait()[0]["field"], "depth");
  EXPECT_TRUE(version.wait()[0].contains("version"));
}

TEST(AnalysisService, TerminateStopsOnlyTheSendersQuery) {
  AnalysisService service({}, AnalysisOptions{.parallel = 2});
  Collector mine, theirs;
  ASSERT_EQ(service.submit(long_query("a"), mine.sink(), "mine"), AnalysisService::Admission::kQueued);
  ASSERT_EQ(service.submit(long_query("a"), theirs.sink(), "theirs"), AnalysisService::Admission::kQueued);
  mine.wait_for_any();
  theirs.wait_for_any();
  // Another client's terminate action, for the same id, reaches nothing of theirs.
  Collector action;
  service.submit(json{{"id", "t"}, {"action", "terminate"}, {"terminate_id", "a"}}.dump(), action.sink(), "other");
  EXPECT_EQ(action.wait()[0]["terminated_turns"], 0);
  EXPECT_EQ(service.terminate("other", "a"), 0);

  EXPECT_EQ(service.terminate("mine", "a"), 1);
  const std::vector<json> answers = mine.wait();
  EXPECT_EQ(answers.back()["final"], true);
  EXPECT_EQ(answers.back()["terminated"], true);
  EXPECT_FALSE(answers.back()["moves"].empty());
  EXPECT_EQ(theirs.lasts(), 0);  // still searching
  EXPECT_EQ(service.terminate("theirs", "a"), 1);
  EXPECT_EQ(theirs.wait().back()["terminated"], true);
  EXPECT_EQ(service.terminate("theirs", "a"), 0);  // gone
}

TEST(AnalysisService, TheLimitRefusesBeyondItAndTakesWorkAgainWhenThereIsRoom) {
  AnalysisService service({}, AnalysisOptions{.parallel = 1, .max_pending = 2});
  Collector running, queued, refused;
  ASSERT_EQ(service.submit(long_query("r"), running.sink(), "c1"), AnalysisService::Admission::kQueued);
  ASSERT_EQ(service.submit(long_query("q"), queued.sink(), "c2"), AnalysisService::Admission::kQueued);
  EXPECT_EQ(service.pending(), 2);
  EXPECT_EQ(service.submit(json{{"id", "x"}, {"max_depth", 1}}.dump(), refused.sink(), "c3"),
            AnalysisService::Admission::kBusy);
  const std::vector<json> busy = refused.wait();
  ASSERT_EQ(busy.size(), 1u);
  EXPECT_EQ(busy[0]["id"], "x");
  EXPECT_NE(busy[0]["error"].get<std::string>().find("busy"), std::string::npos);
  std::atomic<bool> ran{false};
  EXPECT_EQ(service.submit_job([&] { ran = true; }), AnalysisService::Admission::kBusy);
  // A query of two turns does not fit where one would not.
  service.terminate("c1", "r");
  running.wait();
  // Its last answer is sent just before its worker lets it go.
  while (service.pending() > 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Collector two;
  EXPECT_EQ(service.submit(json{{"id", "two"}, {"moves", {"a2a3"}}, {"analyze_turns", {0, 1}}}.dump(), two.sink()),
            AnalysisService::Admission::kBusy);
  // One job fits: it runs after the queued query ends.
  EXPECT_EQ(service.submit_job([&] { ran = true; }), AnalysisService::Admission::kQueued);
  service.terminate("c2", "q");
  queued.wait();
  service.finish();
  EXPECT_TRUE(ran);
  EXPECT_EQ(service.pending(), 0);
}

TEST(AnalysisService, AnMctsSearchMayNotUseMoreThreadsThanAllowed) {
  AnalysisService service({}, AnalysisOptions{.max_threads = 1});
  Collector over, within;
  EXPECT_EQ(service.submit(json{{"id", "m"}, {"backend", "mcts"}, {"mcts", "threads=4"}}.dump(), over.sink()),
            AnalysisService::Admission::kAnswered);
  EXPECT_EQ(over.wait()[0]["field"], "mcts");
  EXPECT_EQ(service.submit(json{{"id", "m"}, {"backend", "mcts"}, {"max_visits", 20}}.dump(), within.sink()),
            AnalysisService::Admission::kQueued);
  EXPECT_GE(within.wait()[0]["root"]["visits"].get<int>(), 20);
}

TEST(AnalysisService, FinishAnswersWhatIsQueuedAndRefusesLaterWork) {
  AnalysisService service({}, AnalysisOptions{.parallel = 1});
  Collector a, b, late;
  service.submit(json{{"id", "a"}, {"max_depth", 2}}.dump(), a.sink());
  service.submit(json{{"id", "b"}, {"max_depth", 2}}.dump(), b.sink());
  service.finish();
  EXPECT_EQ(a.lasts(), 1);
  EXPECT_EQ(b.lasts(), 1);
  EXPECT_EQ(service.submit(json{{"id", "c"}, {"max_depth", 2}}.dump(), late.sink()),
            AnalysisService::Admission::kBusy);
  EXPECT_EQ(service.submit_job([] {}), AnalysisService::Admission::kBusy);
}

}  // namespace
}  // namespace ultima
