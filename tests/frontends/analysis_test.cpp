// The JSON analysis engine through run_analysis: mates found with mate
// scores by both backends, MultiPV order, search_moves and avoid_moves, a
// batch of queries and turns answered once each, every malformed query
// answered with its error while later ones still succeed, terminate and
// query_version, finished games, the policy, reports during the search, and
// one evaluator shared per network.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/mcts/material_evaluator.h"
#include "frontends/analysis/analysis.h"
#include "engine/play/level.h"
#include "engine/rules/notation.h"
#include "engine/search/search.h"
#include "engine/rules/rules.h"
#include "test_util.h"

namespace ultima {
namespace {

using json = nlohmann::json;

std::vector<json> analyse(const std::string& input, const NetworkFactory& networks = {}, AnalysisOptions options = {}) {
  std::istringstream in(input);
  std::ostringstream out;
  run_analysis(in, out, networks, options);
  std::vector<json> answers;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) {
    json a = json::parse(line, nullptr, false);
    EXPECT_FALSE(a.is_discarded()) << "not JSON: " << line;
    if (!a.is_discarded()) answers.push_back(a);
  }
  return answers;
}

std::string lines(std::initializer_list<json> queries) {
  std::string s;
  for (const json& q : queries) s += q.dump() + "\n";
  return s;
}

// The final answer for (id, turn); fails the test unless there is exactly one.
json final_answer(const std::vector<json>& answers, const std::string& id, int turn = -1) {
  json found;
  int count = 0;
  for (const json& a : answers)
    if (a.value("id", json()) == id && a.value("final", false) && (turn < 0 || a.value("turn", -1) == turn)) {
      found = a;
      ++count;
    }
  EXPECT_EQ(count, 1) << "final answers for " << id << " turn " << turn;
  return found;
}

const char* kMateInOne = "6pk/5K1p/8/8/3W4/2p5/8/8 w 0 1";      // d4g7 mates
const char* kMateInTwo = "8/8/4X2x/6P1/4l3/1K6/8/2k5 w 0 1";    // e6e2, then mate

std::string move_of(const json& answer, int index = 0) { return answer["moves"][index]["move"].get<std::string>(); }

TEST(AnalysisMate, MateInOneThroughBothBackends) {
  const auto answers = analyse(lines({
      {{"id", "ab"}, {"fen", kMateInOne}, {"max_depth", 3}},
      {{"id", "mc"}, {"fen", kMateInOne}, {"backend", "mcts"}, {"max_visits", 3000}},
  }));
  for (const char* id : {"ab", "mc"}) {
    SCOPED_TRACE(id);
    const json a = final_answer(answers, id, 0);
    ASSERT_TRUE(a.contains("moves")) << a.dump();
    EXPECT_EQ(move_of(a), "d4g7");
    EXPECT_EQ(a["moves"][0]["mate"], 1);
    EXPECT_EQ(a["root"]["mate"], 1);
    EXPECT_EQ(a["moves"][0]["wdl"], json::array({1000, 0, 0}));
    EXPECT_EQ(a["moves"][0]["pv"][0], "d4g7");
  }
  // Only the tree search has a network value to report.
  EXPECT_TRUE(final_answer(answers, "mc")["root"].contains("raw_wdl"));
  EXPECT_FALSE(final_answer(answers, "ab")["root"].contains("raw_wdl"));
}

TEST(AnalysisEval, TheShippedLearnedEvaluationUnlessNoneIsAsked) {
  // Alpha-beta queries search with the shipped network unless the query
  // (nnue: none) or the engine (AnalysisOptions::nnue) says otherwise: each
  // answer scores as the search with that evaluation does.
  auto reference = [](std::shared_ptr<const nnue::Network> net) {
    Searcher searcher(16);
    searcher.set_network(std::move(net));
    Position pos = Position::start();
    for (const char* m : {"a2a3", "a7a6"}) pos.make(parse_coordinate(pos, m));
    SearchLimits limits;
    limits.depth = 4;
    const SearchResult r = searcher.search(pos, limits);
    return std::make_pair(to_coordinate(r.best), r.score);
  };
  const auto learned = reference(load_nnue("default"));
  const auto hand = reference(nullptr);
  ASSERT_NE(learned.second, hand.second);
  const json moves = json::array({"a2a3", "a7a6"});
  const std::string input = lines({
      {{"id", "plain"}, {"moves", moves}, {"max_depth", 4}},
      {{"id", "none"}, {"moves", moves}, {"max_depth", 4}, {"nnue", "none"}},
      {{"id", "default"}, {"moves", moves}, {"max_depth", 4}, {"nnue", "default"}},
  });
  auto expect = [](const json& a, const std::pair<std::string, int>& want) {
    ASSERT_TRUE(a.contains("moves")) << a.dump();
    EXPECT_EQ(move_of(a), want.first);
    EXPECT_EQ(a["root"]["cp"], want.second);
  };
  const auto answers = analyse(input);
  expect(final_answer(answers, "plain"), learned);
  expect(final_answer(answers, "none"), hand);
  expect(final_answer(answers, "default"), learned);
  AnalysisOptions hand_written;
  hand_written.nnue = "none";
  const auto answers2 = analyse(input, {}, hand_written);
  expect(final_answer(answers2, "plain"), hand);
  expect(final_answer(answers2, "default"), learned);
  // An engine whose evaluation cannot be read does not start.
  AnalysisOptions missing;
  missing.nnue = "/nonexistent/net.unnue";
  EXPECT_THROW(AnalysisService({}, missing), nnue::FileError);
}

TEST(AnalysisMate, MateInTwoThroughBothBackends) {
  const auto answers = analyse(lines({
      {{"id", "ab"}, {"fen", kMateInTwo}, {"mate", 2}},
      {{"id", "mc"}, {"fen", kMateInTwo}, {"backend", "mcts"}, {"max_visits", 20000}},
  }));
  for (const char* id : {"ab", "mc"}) {
    SCOPED_TRACE(id);
    const json a = final_answer(answers, id);
    EXPECT_EQ(move_of(a), "e6e2");
    EXPECT_EQ(a["moves"][0]["mate"], 2);
    EXPECT_GE(a["moves"][0]["pv"].size(), 3u);
  }
  EXPECT_EQ(final_answer(answers, "ab")["mate_search"], json({{"bound", 2}, {"found", true}}));
}

TEST(AnalysisMate, MateSearchSaysWhenThereIsNone) {
  // The mate in two has no mate in one.
  const json a = final_answer(analyse(lines({{{"id", "m1"}, {"fen", kMateInTwo}, {"mate", 1}}})), "m1");
  EXPECT_EQ(a["mate_search"], json({{"bound", 1}, {"found", false}}));
  EXPECT_FALSE(a["moves"][0].contains("mate")) << a.dump();
}

TEST(AnalysisLines, MultiPvOrderedByScore) {
  const json a = final_answer(
      analyse(lines({{{"id", "q"}, {"fen", "startpos"}, {"moves", {"d2d5"}}, {"max_depth", 3}, {"multi_pv", 4}}})),
      "q", 1);
  ASSERT_EQ(a["moves"].size(), 4u) << a.dump();
  std::set<std::string> seen;
  for (std::size_t i = 0; i < 4; ++i) {
    const json& m = a["moves"][i];
    EXPECT_EQ(m["rank"], i + 1);
    EXPECT_EQ(m["depth"], 3);
    seen.insert(m["move"].get<std::string>());
    if (i > 0) {
      EXPECT_LE(m["cp"].get<int>(), a["moves"][i - 1]["cp"].get<int>());
    }
  }
  EXPECT_EQ(seen.size(), 4u);
  EXPECT_EQ(a["root"]["cp"], a["moves"][0]["cp"]);
  // W/D/L through the fitted logistic: per mille, summing to 1000.
  const json& w = a["root"]["wdl"];
  EXPECT_EQ(w[0].get<int>() + w[1].get<int>() + w[2].get<int>(), 1000);
}

TEST(AnalysisLines, SearchMovesAndAvoidMovesAreHonoured) {
  const json only = {"a2a3", "b2b3"};
  const auto answers = analyse(lines({
      {{"id", "ab-only"}, {"max_depth", 3}, {"multi_pv", 5}, {"search_moves", only}},
      {{"id", "mc-only"}, {"backend", "mcts"}, {"max_visits", 200}, {"multi_pv", 5}, {"search_moves", only}},
      {{"id", "ab-avoid"}, {"fen", kMateInOne}, {"max_depth", 3}, {"avoid_moves", {"d4g7"}}, {"multi_pv", 3}},
      {{"id", "mc-avoid"}, {"fen", kMateInOne}, {"backend", "mcts"}, {"max_visits", 500}, {"avoid_moves", {"d4g7"}},
       {"multi_pv", 3}},
  }));
  for (const char* id : {"ab-only", "mc-only"}) {
    SCOPED_TRACE(id);
    const json a = final_answer(answers, id);
    ASSERT_EQ(a["moves"].size(), 2u) << a.dump();
    std::set<std::string> moves = {move_of(a, 0), move_of(a, 1)};
    EXPECT_EQ(moves, (std::set<std::string>{"a2a3", "b2b3"}));
  }
  for (const char* id : {"ab-avoid", "mc-avoid"}) {
    SCOPED_TRACE(id);
    const json a = final_answer(answers, id);
    ASSERT_EQ(a["moves"].size(), 3u) << a.dump();
    for (const json& m : a["moves"]) EXPECT_NE(m["move"], "d4g7");
    EXPECT_FALSE(a["root"].contains("mate") && a["root"]["mate"].get<int>() == 1) << a.dump();
  }
}

TEST(AnalysisBatch, EveryQueryAndTurnAnsweredOnceWithItsId) {
  const std::vector<std::string> game = {"d2d5", "e7e4", "a2a3"};
  std::string input;
  for (int i = 0; i < 6; ++i) {
    json q = {{"id", "g" + std::to_string(i)}, {"moves", game}, {"analyze_turns", {0, 1, 2, 3}}};
    if (i % 2) {
      q["backend"] = "mcts";
      q["max_visits"] = 50;
    } else {
      q["max_depth"] = 2;
    }
    input += q.dump() + "\n";
  }
  AnalysisOptions options;
  options.parallel = 3;
  const auto answers = analyse(input, {}, options);
  std::map<std::pair<std::string, int>, int> finals;
  for (const json& a : answers) {
    ASSERT_FALSE(a.contains("error")) << a.dump();
    if (!a.value("final", false)) continue;
    const std::string id = a["id"];
    const int turn = a["turn"];
    ++finals[{id, turn}];
    // The answer is about that turn's position: its best move is legal there.
    Position pos = Position::start(Rules{});
    for (int t = 0; t < turn; ++t) pos.make(parse_coordinate(pos, game[t]));
    EXPECT_NO_THROW(parse_coordinate(pos, move_of(a))) << a.dump();
  }
  EXPECT_EQ(finals.size(), 24u);
  for (const auto& [key, count] : finals) EXPECT_EQ(count, 1) << key.first << " turn " << key.second;
}

TEST(AnalysisErrors, EveryMalformedQueryIsAnsweredAndTheEngineGoesOn) {
  struct Case {
    std::string line;
    json id;
    json field;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"{\"id\": \"a\", \"fen\": ", nullptr, nullptr, "not valid JSON"},
      {"5e750", nullptr, nullptr, "not valid JSON"},  // a number out of range, not a syntax error
      {"[1, 2]", nullptr, nullptr, "JSON object"},
      {R"({"fen": "startpos"})", nullptr, "id", "missing"},
      {R"({"id": 7})", nullptr, "id", "string"},
      {R"({"id": "b", "fenn": "startpos"})", "b", "fenn", "did you mean 'fen'"},
      {R"({"id": "c", "moves": ["d2d5", "a1a1"]})", "c", "moves", "moves[1] 'a1a1'"},
      {R"({"id": "d", "fen": "8/8/8/8 w 0 1"})", "d", "fen", ""},
      {R"({"id": "e", "rules": "nope"})", "e", "rules", "nope"},
      {R"({"id": "f", "max_depth": "7"})", "f", "max_depth", "integer"},
      {R"({"id": "g", "multi_pv": 0})", "g", "multi_pv", "from 1 to 256"},
      {R"({"id": "h", "backend": "mcts", "max_depth": 3})", "h", "max_depth", "alphabeta"},
      {R"({"id": "i", "include_policy": true})", "i", "include_policy", "mcts"},
      {R"({"id": "j", "search_moves": ["d2d9"]})", "j", "search_moves", "d2d9"},
      {R"({"id": "k", "avoid_moves": ["d2d5"], "search_moves": ["d2d5"]})", "k", "avoid_moves", "no move"},
      {R"({"id": "l", "analyze_turns": [2]})", "l", "analyze_turns", "0 to 0"},
      {R"({"id": "m", "backend": "minimax"})", "m", "backend", "alphabeta or mcts"},
      {R"({"id": "n", "backend": "mcts", "mcts": "playout=3"})", "n", "mcts", "did you mean 'playouts'"},
      {R"({"id": "o", "action": "pause"})", "o", "action", "unknown action"},
      {R"({"id": "p", "backend": "mcts", "weights": "net.unn"})", "p", "weights", "no neural-network support"},
      {R"({"id": "q", "terminate_id": "x"})", "q", "terminate_id", "terminate action"},
      {R"({"id": "r", "nnue": "/nonexistent/net.unnue"})", "r", "nnue", "/nonexistent/net.unnue"},
      {R"({"id": "s", "backend": "mcts", "nnue": "none"})", "s", "nnue", "alphabeta"},
  };
  std::string input;
  for (const Case& c : cases) input += c.line + "\n";
  input += lines({{{"id", "good"}, {"max_depth", 2}}});
  const auto answers = analyse(input);
  int errors = 0;
  for (const json& a : answers) errors += a.contains("error");
  EXPECT_EQ(errors, static_cast<int>(cases.size()));
  // Errors are answered in the order read (before any search answer here).
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].line);
    ASSERT_LT(i, answers.size());
    const json& a = answers[i];
    ASSERT_TRUE(a.contains("error")) << a.dump();
    EXPECT_EQ(a["id"], cases[i].id);
    EXPECT_EQ(a["field"], cases[i].field);
    EXPECT_NE(a["error"].get<std::string>().find(cases[i].says), std::string::npos) << a.dump();
  }
  const json good = final_answer(answers, "good");
  EXPECT_EQ(good["moves"].size(), 1u);
}

TEST(AnalysisActions, TerminateOneOrAllAndQueryVersion) {
  AnalysisOptions options;
  options.parallel = 1;
  options.version = "9.8.7";
  // Searches that would not end on their own (depth 100): only terminate ends them.
  const auto answers = analyse(lines({
                                   {{"id", "v"}, {"action", "query_version"}},
                                   {{"id", "long1"}, {"max_depth", 100}},
                                   {{"id", "long2"}, {"max_depth", 100}},
                                   {{"id", "long3"}, {"max_depth", 100}},
                                   {{"id", "t1"}, {"action", "terminate"}, {"terminate_id", "long2"}},
                                   {{"id", "t2"}, {"action", "terminate"}},
                                   {{"id", "after"}, {"max_depth", 1}},
                               }),
                               {}, options);
  EXPECT_EQ(answers[0], json({{"id", "v"}, {"action", "query_version"}, {"version", "9.8.7"}}));
  for (const char* id : {"long1", "long2", "long3"}) {
    SCOPED_TRACE(id);
    EXPECT_EQ(final_answer(answers, id)["terminated"], true);
  }
  int acknowledged = 0;
  for (const json& a : answers)
    if (a.value("action", "") == "terminate") {
      ++acknowledged;
      if (a["id"] == "t1") {
        EXPECT_EQ(a["terminated_turns"], 1);
      } else {
        EXPECT_EQ(a["terminated_turns"], 2);
      }
    }
  EXPECT_EQ(acknowledged, 2);
  // A query after the terminate runs as usual.
  const json after = final_answer(answers, "after");
  EXPECT_FALSE(after.contains("terminated"));
  EXPECT_EQ(after["moves"].size(), 1u);
}

TEST(AnalysisTurns, FinishedGameIsSaidAsSuch) {
  const json a = final_answer(
      analyse(lines({{{"id", "over"}, {"fen", kMateInOne}, {"moves", {"d4g7"}}, {"analyze_turns", {1}}}})), "over", 1);
  EXPECT_EQ(a["game_over"], json({{"result", "1-0"}, {"termination", "checkmate"}}));
  EXPECT_FALSE(a.contains("moves"));
}

TEST(AnalysisMcts, PolicyAndReportsDuringTheSearch) {
  const auto answers = analyse(lines({{{"id", "p"},
                                       {"backend", "mcts"},
                                       {"max_visits", 10000},
                                       {"include_policy", true},
                                       {"report_every_ms", 1},
                                       {"multi_pv", 3}}}));
  const json a = final_answer(answers, "p");
  MoveList legal;
  generate_legal(Position::start(Rules{}), legal);
  ASSERT_EQ(a["policy"].size(), static_cast<std::size_t>(legal.size()));
  double sum = 0;
  for (std::size_t i = 0; i < a["policy"].size(); ++i) {
    sum += a["policy"][i]["prior"].get<double>();
    if (i > 0) {
      EXPECT_LE(a["policy"][i]["prior"].get<double>(), a["policy"][i - 1]["prior"].get<double>());
    }
  }
  EXPECT_NEAR(sum, 1.0, 0.01);
  ASSERT_EQ(a["moves"].size(), 3u);
  EXPECT_GE(a["moves"][0]["visits"].get<int>(), a["moves"][1]["visits"].get<int>());
  // Reports before the final one, each marked as such and for the same turn.
  int partial = 0;
  for (const json& r : answers) {
    if (r.value("final", true)) continue;
    ++partial;
    EXPECT_EQ(r["id"], "p");
    EXPECT_EQ(r["turn"], 0);
  }
  EXPECT_GE(partial, 1);
  EXPECT_EQ(answers.back()["final"], true);
}

TEST(AnalysisMcts, OneEvaluatorPerNetworkSharedByEveryQuery) {
  std::atomic<int> made{0};
  NetworkFactory factory = [&](const std::string& settings) -> std::shared_ptr<Evaluator> {
    ++made;
    EXPECT_NE(settings.find("weights=a.unn"), std::string::npos) << settings;
    return std::make_shared<MaterialEvaluator>();
  };
  // Ids n0..n4 (built with append: GCC 12 warns falsely on "n" + to_string).
  std::vector<std::string> ids;
  std::string input;
  for (int i = 0; i < 5; ++i) {
    std::string id = "n";
    id += std::to_string(i);
    ids.push_back(id);
    input += json({{"id", id}, {"backend", "mcts"}, {"weights", "a.unn"}, {"max_visits", 30}}).dump() + "\n";
  }
  const auto answers = analyse(input, factory);
  for (const std::string& id : ids) EXPECT_EQ(final_answer(answers, id)["moves"].size(), 1u);
  EXPECT_EQ(made.load(), 1);
}

// A shipped network bot's name, or "best", stands for that bot's network.
TEST(AnalysisMcts, AShippedNetworkBotsNameOrBestPlaysItsNetwork) {
  test::BotsFolder folder;
  folder.write("t-net", "name: t-net\ndescription: d\nstyle: network\n"
                        "spec: \"mcts:weights=nets/t.unn,playouts=8\"\norder: 3\nelo: 900\n");
  std::vector<std::string> asked;
  NetworkFactory factory = [&](const std::string& settings) -> std::shared_ptr<Evaluator> {
    asked.push_back(settings);
    return std::make_shared<MaterialEvaluator>();
  };
  const std::string input = json({{"id", "a"}, {"backend", "mcts"}, {"weights", "t-net"}, {"max_visits", 10}}).dump() +
                            "\n" +
                            json({{"id", "b"}, {"backend", "mcts"}, {"weights", "best"}, {"max_visits", 10}}).dump() +
                            "\n";
  const auto answers = analyse(input, factory);
  EXPECT_EQ(final_answer(answers, "a")["moves"].size(), 1u);
  EXPECT_EQ(final_answer(answers, "b")["moves"].size(), 1u);
  ASSERT_EQ(asked.size(), 2u);
  for (const std::string& settings : asked)
    EXPECT_NE(settings.find("weights=" + folder.dir() + "/nets/t.unn,"), std::string::npos) << settings;
}

}  // namespace
}  // namespace ultima
