// The web server's JSON API called without a socket (ServerApi,
// frontends/server/handlers.h): each handler's answer, and its errors with
// their status and the field at fault: bad JSON, unknown fields, a bad FEN
// or rule set, an illegal move named by its index, an unknown bot or
// puzzle, an analysis id in use, the busy limit, a PGN error's line. The
// same API over HTTP is tests/cli/serve_test.py.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "engine/play/puzzle.h"
#include "engine/rules/notation.h"
#include "frontends/server/handlers.h"
#include "test_util.h"

namespace ultima {
namespace {

using json = nlohmann::json;

const char* kMateInOne = "6pk/5K1p/8/8/3W4/2p5/8/8 w 0 1";  // d4g7 mates

ServerOptions small_options(int max_searches = 2, int max_queue = 1) {
  ServerOptions o;
  o.max_searches = max_searches;
  o.max_queue = max_queue;
  o.version = "test";
  return o;
}

json parsed(const ApiReply& reply) { return json::parse(reply.body); }

// An error answer: the status, a message, and the field at fault (none
// when `field` is empty).
::testing::AssertionResult is_error(const ApiReply& reply, int status, const std::string& field = "") {
  json body;
  try {
    body = json::parse(reply.body);
  } catch (const json::parse_error&) {
    return ::testing::AssertionFailure() << "the answer is not JSON: " << reply.body;
  }
  if (reply.status != status)
    return ::testing::AssertionFailure() << "status " << reply.status << ", expected " << status << ": " << reply.body;
  if (!body.contains("error") || !body["error"].is_string() || body["error"].get<std::string>().empty())
    return ::testing::AssertionFailure() << "no error message: " << reply.body;
  if (field.empty() ? body.contains("field") : body.value("field", std::string()) != field)
    return ::testing::AssertionFailure() << "field " << body.value("field", std::string("(none)")) << ", expected "
                                         << (field.empty() ? "none" : field) << ": " << reply.body;
  return ::testing::AssertionSuccess();
}

std::string error_of(const ApiReply& reply) { return parsed(reply).value("error", std::string()); }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// An environment variable set for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_.empty()) unsetenv(name_);
    else setenv(name_, old_.c_str(), 1);
  }

 private:
  const char* name_;
  std::string old_;
};

// An analysis taken: waits for its first answer, or for its last and
// returns them all, as the route would write them out.
void wait_for_an_answer(const AnalysisStart& query) {
  std::unique_lock lock(query.stream->mutex);
  query.stream->cv.wait(lock, [&] { return !query.stream->lines.empty() || query.stream->done; });
}

std::vector<json> answers_to_the_end(const AnalysisStart& query) {
  std::unique_lock lock(query.stream->mutex);
  query.stream->cv.wait(lock, [&] { return query.stream->done; });
  std::vector<json> out;
  for (const std::string& line : query.stream->lines) out.push_back(json::parse(line));
  return out;
}

// A search that runs until it is stopped (ten minutes of time), reporting
// as it goes.
const char* kLongQuery = R"({"id": "long", "max_time_ms": 600000, "report_every_ms": 20})";

// ---------------------------------------------------------------------------
// GET /api/info

TEST(ServerInfo, ListsThePresetsTheBotsAndTheLimits) {
  ServerApi api(small_options(), {});
  const ApiReply reply = api.info();
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json info = parsed(reply);
  EXPECT_EQ(info["version"], "test");
  EXPECT_EQ(info["default_rules"], "abbott1963");
  const std::vector<std::string> presets = info["presets"];
  EXPECT_NE(std::find(presets.begin(), presets.end(), "abbott1963"), presets.end());
  std::vector<std::string> names;
  for (const json& b : info["bots"]) {
    names.push_back(b["name"].get<std::string>());
    EXPECT_TRUE(b.contains("elo") && b.contains("description") && b.contains("style") && b.contains("kind")) << b;
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "novice"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), info["default_bot"].get<std::string>()), names.end());
  EXPECT_FALSE(info.contains("bots_error"));
  EXPECT_EQ(info["backends"], json({"alphabeta", "mcts"}));
  EXPECT_EQ(info["nnue"], "default");
  EXPECT_EQ(info["limits"], json({{"max_searches", 2}, {"max_queue", 1}, {"threads", 1}}));
}

TEST(ServerInfo, ShowsTheLimitsResolved) {
  ServerOptions o = small_options(0, -3);
  o.threads = 0;
  ServerApi api(o, {});
  const json limits = parsed(api.info())["limits"];
  EXPECT_GE(limits["max_searches"].get<int>(), 1);  // the machine's cores
  EXPECT_EQ(limits["max_queue"], 0);
  EXPECT_EQ(limits["threads"], 1);
  EXPECT_EQ(api.options().max_searches, limits["max_searches"].get<int>());
}

TEST(ServerInfo, ACatalogueThatCannotBeReadIsReportedNotThrown) {
  test::BotsFolder folder;
  folder.write("misnamed", "name: other\nspec: novice\n");
  ServerApi api(small_options(), {});
  const ApiReply reply = api.info();
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_TRUE(has(parsed(reply).value("bots_error", std::string()), "misnamed")) << reply.body;
}

// ---------------------------------------------------------------------------
// POST /api/position

TEST(ServerPosition, TheStartWithItsBoardAndLegalMoves) {
  ServerApi api(small_options(), {});
  const ApiReply reply = api.position(R"({"rules": "abbott1963", "moves": []})");
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json start = parsed(reply);
  EXPECT_EQ(start["side"], "white");
  EXPECT_EQ(start["status"], "playing");
  EXPECT_TRUE(start["result"].is_null() && start["reason"].is_null());
  EXPECT_EQ(start["in_check"], false);
  ASSERT_EQ(start["board"].size(), 64u);
  EXPECT_EQ(start["board"][0]["color"], "black");  // a8 first
  EXPECT_EQ(start["board"][63]["color"], "white");
  EXPECT_TRUE(start["board"][32].is_null());
  EXPECT_EQ(start["history"], json::array());
  EXPECT_TRUE(start["last_move"].is_null());
  ASSERT_FALSE(start["legal"].empty());
  for (const json& m : start["legal"])
    EXPECT_TRUE(m.contains("move") && m.contains("from") && m.contains("to") && m.contains("captures") &&
                m.contains("notation"))
        << m;
  // The same without a body's fields: the default rules' start.
  EXPECT_EQ(parsed(api.position("{}"))["fen"], start["fen"]);
}

TEST(ServerPosition, AMovePlayedIsInTheHistoryWithWhatItCaptured) {
  ServerApi api(small_options(), {});
  const json before = parsed(api.position(json({{"fen", kMateInOne}}).dump()));
  const auto mate =
      std::find_if(before["legal"].begin(), before["legal"].end(), [](const json& m) { return m["move"] == "d4g7"; });
  ASSERT_NE(mate, before["legal"].end());
  ASSERT_FALSE((*mate)["captures"].empty());
  const ApiReply reply = api.position(json({{"fen", kMateInOne}, {"moves", {"d4g7"}}}).dump());
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json after = parsed(reply);
  ASSERT_EQ(after["history"].size(), 1u);
  const json& last = after["last_move"];
  EXPECT_EQ(last, after["history"][0]);
  EXPECT_EQ(last["move"], "d4g7");
  EXPECT_EQ(last["notation"], (*mate)["notation"]);
  std::vector<std::string> captured;
  for (const json& c : last["captured"]) {
    const std::string square = c["square"];
    captured.push_back(square);
    const int index = (8 - (square[1] - '0')) * 8 + (square[0] - 'a');
    EXPECT_TRUE(after["board"][index].is_null()) << square << " empty afterwards";
  }
  EXPECT_EQ(json(captured), (*mate)["captures"]);
  EXPECT_EQ(last["fen_after"], after["fen"]);
  // The game is over: its result and reason, and no legal moves.
  EXPECT_EQ(after["status"], "checkmate");
  EXPECT_EQ(after["result"], "1-0");
  EXPECT_TRUE(after["reason"].is_string());
  EXPECT_TRUE(after["legal"].empty());
}

TEST(ServerPosition, MalformedRequestsNameTheirFault) {
  ServerApi api(small_options(), {});
  EXPECT_TRUE(is_error(api.position("{not json"), 400));
  EXPECT_TRUE(has(error_of(api.position("{not json")), "not valid JSON")) << error_of(api.position("{not json"));
  EXPECT_TRUE(is_error(api.position("[1, 2]"), 400));
  EXPECT_TRUE(is_error(api.position("5e750"), 400)) << api.position("5e750").body;  // out of range, not a syntax error
  EXPECT_TRUE(is_error(api.position(R"({"moves": [], "colour": "red"})"), 400, "colour"));
  EXPECT_TRUE(has(error_of(api.position(R"({"colour": "red"})")), "fields: rules, fen, moves"));
  EXPECT_TRUE(is_error(api.position(R"({"moves": "a2a3"})"), 400, "moves"));
  EXPECT_TRUE(is_error(api.position(R"({"moves": [1]})"), 400, "moves"));
  EXPECT_TRUE(is_error(api.position(R"({"fen": "8/8/8 w"})"), 400, "fen"));
  EXPECT_TRUE(is_error(api.position(R"({"fen": 7})"), 400, "fen"));
  EXPECT_TRUE(is_error(api.position(R"({"rules": "nonesuch"})"), 400, "rules"));
}

TEST(ServerPosition, AnIllegalMoveIsNamedByItsIndex) {
  ServerApi api(small_options(), {});
  const ApiReply reply = api.position(R"({"moves": ["a2a3", "a2a3"]})");
  EXPECT_TRUE(is_error(reply, 400, "moves"));
  EXPECT_TRUE(has(error_of(reply), "moves[1] 'a2a3'")) << error_of(reply);
  const ApiReply unreadable = api.position(R"({"moves": ["e2e9"]})");
  EXPECT_TRUE(is_error(unreadable, 400, "moves"));
  EXPECT_TRUE(has(error_of(unreadable), "moves[0] 'e2e9'")) << error_of(unreadable);
}

// ---------------------------------------------------------------------------
// POST /api/bot-move

TEST(ServerBotMove, TheBotPlaysALegalMoveWithItsScore) {
  ServerApi api(small_options(), {});
  const json start = parsed(api.position(R"({"moves": ["a2a3"]})"));
  std::vector<std::string> legal;
  for (const json& m : start["legal"]) legal.push_back(m["move"].get<std::string>());
  const json info = parsed(api.info());
  json novice;
  for (const json& b : info["bots"])
    if (b["name"] == "novice") novice = b;
  ASSERT_TRUE(novice.is_object()) << info;
  const ApiReply reply = api.bot_move(R"({"moves": ["a2a3"], "bot": "novice", "seed": 3})");
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json bot = parsed(reply);
  EXPECT_EQ(bot["bot"], "novice");
  EXPECT_EQ(bot["elo"], novice["elo"]);
  EXPECT_NE(std::find(legal.begin(), legal.end(), bot["move"].get<std::string>()), legal.end()) << bot;
  EXPECT_TRUE(bot["notation"].is_string() && bot["captures"].is_array());
  EXPECT_TRUE(bot["score"].contains("cp")) << bot;
  EXPECT_EQ(bot["score"]["wdl"].size(), 3u);
  // On a clock instead of a fixed time.
  const ApiReply timed =
      api.bot_move(R"({"moves": ["a2a3"], "bot": "novice", "wtime": 60000, "btime": 60000, "winc": 1000, "binc": 1000})");
  ASSERT_EQ(timed.status, 200) << timed.body;
  EXPECT_NE(std::find(legal.begin(), legal.end(), parsed(timed)["move"].get<std::string>()), legal.end());
}

// A game against a bot of the catalogue: the server plays its seat, and the
// same seed replays the same game (the bot's own node budget ends its
// search long before the time given).
TEST(ServerBotGame, TheServerPlaysTheBotsSeatAndTheSeedReplaysIt) {
  auto play = [](std::uint64_t seed) {
    ServerApi api(small_options(), {});
    const json made = parsed(api.online().create(
        json{{"bot", "novice"}, {"colour", "black"}, {"movetime_ms", 5000}, {"seed", seed}}.dump(), "10.0.0.1"));
    const std::string id = made.at("id"), token = made.at("token");
    std::vector<std::string> moves;
    for (int ply = 0; ply < 6; ply += 2) {
      // Wait for the bot's move (a long poll wakes when the game changes).
      json state = parsed(api.online().state(json{{"id", id}, {"token", token}}.dump()));
      for (int i = 0; i < 100 && state["moves"].size() == static_cast<std::size_t>(ply); ++i)
        state = parsed(api.online().wait(json{{"id", id}, {"token", token}, {"version", state["version"]}}.dump()));
      EXPECT_EQ(state["moves"].size(), static_cast<std::size_t>(ply + 1)) << state;
      if (state["moves"].size() != static_cast<std::size_t>(ply + 1)) break;
      const json position = parsed(api.position(json{{"moves", state["moves"]}}.dump()));
      const std::string reply = position["legal"][0]["move"];
      const ApiReply moved = api.online().act(
          json{{"id", id}, {"token", token}, {"action", "move"}, {"move", reply}, {"ply", ply + 1}}.dump());
      EXPECT_EQ(moved.status, 200) << moved.body;
      moves = parsed(moved)["moves"].get<std::vector<std::string>>();
    }
    return moves;
  };
  const std::vector<std::string> first = play(5);
  ASSERT_EQ(first.size(), 6u);
  EXPECT_EQ(play(5), first) << "the same seed, the same bot moves";
}

TEST(ServerBotMove, AnUnknownOrMissingBotAndBadLimitsAreRefused) {
  ServerApi api(small_options(), {});
  EXPECT_TRUE(is_error(api.bot_move(R"({"bot": "nobody"})"), 404, "bot"));
  EXPECT_TRUE(is_error(api.bot_move(R"({"moves": []})"), 400, "bot"));
  EXPECT_TRUE(is_error(api.bot_move(R"({"bot": 3})"), 400, "bot"));
  EXPECT_TRUE(is_error(api.bot_move(R"({"bot": "novice", "movetime_ms": "fast"})"), 400, "movetime_ms"));
  EXPECT_TRUE(is_error(api.bot_move(R"({"bot": "novice", "movetime_ms": 0})"), 400, "movetime_ms"));
  EXPECT_TRUE(is_error(api.bot_move(R"({"bot": "novice", "wtime": -1})"), 400, "wtime"));
  EXPECT_TRUE(is_error(api.bot_move(R"({"bot": "novice", "seed": -1})"), 400, "seed"));
  EXPECT_TRUE(is_error(api.bot_move(R"({"bot": "novice", "level": 3})"), 400, "level"));
  EXPECT_TRUE(is_error(api.bot_move(R"({"bot": "novice", "moves": ["a2a3", "a2a3"]})"), 400, "moves"));
  EXPECT_TRUE(is_error(api.bot_move("{"), 400));
  // A game that is over has no move to play.
  const ApiReply over = api.bot_move(json({{"fen", kMateInOne}, {"moves", {"d4g7"}}, {"bot", "novice"}}).dump());
  EXPECT_TRUE(is_error(over, 400, "moves"));
  EXPECT_TRUE(has(error_of(over), "the game is over")) << error_of(over);
}

// ---------------------------------------------------------------------------
// POST /api/analyze and /api/analyze/stop

TEST(ServerAnalyze, AStreamOfAnswersEndsWithTheFinalOne) {
  ServerApi api(small_options(), {});
  const AnalysisStart query = api.analyze(json({{"id", "mate"}, {"fen", kMateInOne}, {"max_depth", 4}, {"multi_pv", 2}}).dump());
  ASSERT_TRUE(query.stream) << query.error.body;
  EXPECT_EQ(query.error.status, 200);
  EXPECT_EQ(query.id, "mate");
  const std::vector<json> answers = answers_to_the_end(query);
  api.end_analysis(query);
  ASSERT_FALSE(answers.empty());
  for (std::size_t i = 0; i + 1 < answers.size(); ++i) EXPECT_FALSE(answers[i]["final"].get<bool>());
  const json& last = answers.back();
  EXPECT_TRUE(last["final"].get<bool>());
  EXPECT_EQ(last["id"], "mate");
  ASSERT_EQ(last["moves"].size(), 2u);
  EXPECT_EQ(last["moves"][0]["move"], "d4g7");
  EXPECT_EQ(last["moves"][0]["mate"], 1);
  // Its id is free again; one made up where the query has none.
  const AnalysisStart again = api.analyze(R"({"id": "mate", "max_depth": 1})");
  ASSERT_TRUE(again.stream) << again.error.body;
  answers_to_the_end(again);
  api.end_analysis(again);
  const AnalysisStart unnamed = api.analyze(R"({"backend": "mcts", "max_visits": 20, "moves": ["a2a3"]})");
  ASSERT_TRUE(unnamed.stream) << unnamed.error.body;
  EXPECT_EQ(unnamed.id.rfind("q", 0), 0u) << unnamed.id;
  EXPECT_EQ(answers_to_the_end(unnamed).back()["id"], unnamed.id);
  api.end_analysis(unnamed);
}

TEST(ServerAnalyze, MalformedQueriesNameTheirFault) {
  ServerApi api(small_options(), {});
  auto error = [&](const std::string& body) {
    const AnalysisStart query = api.analyze(body);
    EXPECT_FALSE(query.stream) << body;
    return query.error;
  };
  EXPECT_TRUE(is_error(error("{"), 400));
  EXPECT_TRUE(is_error(error("[]"), 400));
  EXPECT_TRUE(is_error(error(R"({"action": "stop"})"), 400, "action"));
  EXPECT_TRUE(is_error(error(R"({"analyze_turns": [0]})"), 400, "analyze_turns"));
  EXPECT_TRUE(is_error(error(R"({"backend": "mcts", "weights": "/etc/passwd"})"), 400, "weights"));
  EXPECT_TRUE(has(error_of(error(R"({"weights": "/etc/passwd"})")), "start it with --weights"));
  EXPECT_TRUE(is_error(error(R"({"weights": 1})"), 400, "weights"));
  EXPECT_TRUE(is_error(error(R"({"nnue": "/etc/passwd"})"), 400, "nnue"));
  EXPECT_TRUE(is_error(error(R"({"id": 5})"), 400, "id"));
  // The analysis engine's own checks, with its field.
  EXPECT_TRUE(is_error(error(R"({"max_depth": 0})"), 400, "max_depth"));
  EXPECT_TRUE(is_error(error(R"({"depth": 3})"), 400, "depth"));
  EXPECT_TRUE(is_error(error(R"({"moves": ["e2e9"]})"), 400, "moves"));
  EXPECT_TRUE(is_error(error(R"({"fen": "8/8/8 w"})"), 400, "fen"));
}

TEST(ServerAnalyze, AnIdInUseIsRefusedAndStopEndsTheSearch) {
  ServerApi api(small_options(), {});
  const AnalysisStart query = api.analyze(kLongQuery);
  ASSERT_TRUE(query.stream) << query.error.body;
  wait_for_an_answer(query);
  const AnalysisStart taken = api.analyze(R"({"id": "long", "max_depth": 1})");
  EXPECT_FALSE(taken.stream);
  EXPECT_TRUE(is_error(taken.error, 400, "id"));
  EXPECT_TRUE(has(error_of(taken.error), "in use")) << taken.error.body;
  const ApiReply stopped = api.analyze_stop(R"({"id": "long"})");
  ASSERT_EQ(stopped.status, 200) << stopped.body;
  EXPECT_EQ(parsed(stopped), json({{"stopped", true}}));
  const std::vector<json> answers = answers_to_the_end(query);
  api.end_analysis(query);
  EXPECT_TRUE(answers.back()["final"].get<bool>());
  EXPECT_TRUE(answers.back().value("terminated", false));
  EXPECT_FALSE(answers.back()["moves"].empty());
  // Nothing left to stop.
  EXPECT_EQ(parsed(api.analyze_stop(R"({"id": "long"})")), json({{"stopped", false}}));
  EXPECT_EQ(parsed(api.analyze_stop(R"({"id": "never"})")), json({{"stopped", false}}));
}

TEST(ServerAnalyze, AStreamNoLongerReadStopsItsSearch) {
  ServerApi api(small_options(), {});
  const AnalysisStart query = api.analyze(kLongQuery);
  ASSERT_TRUE(query.stream) << query.error.body;
  wait_for_an_answer(query);
  api.end_analysis(query);  // the client went away
  const std::vector<json> answers = answers_to_the_end(query);
  EXPECT_TRUE(answers.back().value("terminated", false)) << answers.back();
  // Its id is free at once.
  const AnalysisStart again = api.analyze(R"({"id": "long", "max_depth": 1})");
  ASSERT_TRUE(again.stream) << again.error.body;
  answers_to_the_end(again);
  api.end_analysis(again);
}

TEST(ServerAnalyzeStop, MalformedRequestsNameTheirFault) {
  ServerApi api(small_options(), {});
  EXPECT_TRUE(is_error(api.analyze_stop(R"({"id": 5})"), 400, "id"));
  EXPECT_TRUE(is_error(api.analyze_stop("{}"), 400, "id"));
  EXPECT_TRUE(is_error(api.analyze_stop(R"({"id": "x", "all": true})"), 400, "all"));
  EXPECT_TRUE(is_error(api.analyze_stop("nonsense"), 400));
}

TEST(ServerBusy, BeyondTheRunningAndQueuedSearchesAnalysesAndBotMovesGet503) {
  ServerApi api(small_options(1, 0), {});
  const AnalysisStart query = api.analyze(kLongQuery);
  ASSERT_TRUE(query.stream) << query.error.body;
  const AnalysisStart extra = api.analyze(R"({"id": "extra", "max_depth": 1})");
  EXPECT_FALSE(extra.stream);
  EXPECT_TRUE(is_error(extra.error, 503));
  EXPECT_TRUE(has(error_of(extra.error), "busy")) << extra.error.body;
  EXPECT_TRUE(is_error(api.bot_move(R"({"bot": "novice"})"), 503));
  // The refused query's id was never taken.
  EXPECT_EQ(parsed(api.analyze_stop(R"({"id": "extra"})")), json({{"stopped", false}}));
  EXPECT_EQ(parsed(api.analyze_stop(R"({"id": "long"})")), json({{"stopped", true}}));
  answers_to_the_end(query);
  api.end_analysis(query);
  // Work is taken again once the search has left its place (a moment after
  // its last answer; a refusal in between is the same busy one).
  ApiReply after = api.bot_move(R"({"bot": "novice"})");
  for (int tries = 0; after.status == 503 && tries < 2000; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    after = api.bot_move(R"({"bot": "novice"})");
  }
  EXPECT_EQ(after.status, 200) << after.body;
}

// ---------------------------------------------------------------------------
// GET /api/puzzles and POST /api/puzzles/check

// A shipped puzzle whose solution has a reply and a move after it.
Puzzle long_puzzle() {
  for (const Puzzle& p : read_puzzle_file(default_puzzle_file()))
    if (p.solution.size() >= 3) return p;
  throw std::logic_error("no shipped puzzle of three moves");
}

std::vector<std::string> coordinates(const std::vector<Move>& moves) {
  std::vector<std::string> out;
  for (const Move& m : moves) out.push_back(to_coordinate(m));
  return out;
}

TEST(ServerPuzzles, EveryShippedPuzzleIsListedWithoutItsSolution) {
  ServerApi api(small_options(), {});
  const ApiReply reply = api.puzzles();
  ASSERT_EQ(reply.status, 200) << reply.body.substr(0, 200);
  const json list = parsed(reply)["puzzles"];
  const std::vector<Puzzle> shipped = read_puzzle_file(default_puzzle_file());
  ASSERT_EQ(list.size(), shipped.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& p = list[i];
    EXPECT_FALSE(p.contains("solution"));
    for (const char* key : {"id", "rules", "fen", "side", "kind", "rating", "rating_elo", "tags", "moves_to_find"})
      EXPECT_TRUE(p.contains(key)) << key << " in " << p;
    EXPECT_EQ(p["id"], shipped[i].id);
    EXPECT_EQ(p["moves_to_find"], (shipped[i].solution.size() + 1) / 2);
  }
}

TEST(ServerPuzzles, AnUnreadablePuzzleFileIsA500) {
  const test::TempDir dir("server-puzzles");
  const ScopedEnv puzzles("ULTIMA_PUZZLES", dir.path() + "/missing.jsonl");
  ServerApi api(small_options(), {});
  const ApiReply reply = api.puzzles();
  EXPECT_TRUE(is_error(reply, 500));
  EXPECT_TRUE(has(error_of(reply), "the puzzle file cannot be read")) << reply.body;
}

TEST(ServerPuzzleCheck, RightMovesGetTheReplyUntilSolved) {
  ServerApi api(small_options(), {});
  const Puzzle p = long_puzzle();
  const std::vector<std::string> solution = coordinates(p.solution);
  json request = {{"id", p.id}, {"moves", {solution[0]}}};
  json verdict = parsed(api.puzzle_check(request.dump()));
  EXPECT_TRUE(verdict["correct"].get<bool>()) << verdict;
  EXPECT_FALSE(verdict["solved"].get<bool>());
  EXPECT_EQ(verdict["reply"], solution[1]);
  request["moves"] = solution;
  verdict = parsed(api.puzzle_check(request.dump()));
  EXPECT_TRUE(verdict["correct"].get<bool>() && verdict["solved"].get<bool>()) << verdict;
  EXPECT_TRUE(verdict["reply"].is_null());
  // No moves yet: correct so far, nothing to reply.
  verdict = parsed(api.puzzle_check(json({{"id", p.id}}).dump()));
  EXPECT_TRUE(verdict["correct"].get<bool>() && !verdict["solved"].get<bool>() && verdict["reply"].is_null());
}

TEST(ServerPuzzleCheck, AWrongMoveGetsTheExpectedOne) {
  ServerApi api(small_options(), {});
  const Puzzle p = long_puzzle();
  // A legal move other than the solution's that does not end the game.
  Position pos = Position::from_fen(p.fen, p.rules);
  MoveList legal;
  generate_legal(pos, legal);
  std::string wrong;
  for (const Move& m : legal) {
    if (m == p.solution[0]) continue;
    Position after = pos;
    after.make(m);
    if (!game_status(after).over()) {
      wrong = to_coordinate(m);
      break;
    }
  }
  ASSERT_FALSE(wrong.empty());
  const ApiReply reply = api.puzzle_check(json({{"id", p.id}, {"moves", {wrong}}}).dump());
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json verdict = parsed(reply);
  EXPECT_FALSE(verdict["correct"].get<bool>());
  EXPECT_FALSE(verdict["solved"].get<bool>());
  EXPECT_EQ(verdict["expected"], to_coordinate(p.solution[0]));
}

TEST(ServerPuzzleCheck, BadRequestsNameTheirFault) {
  ServerApi api(small_options(), {});
  const Puzzle p = long_puzzle();
  const std::vector<std::string> solution = coordinates(p.solution);
  EXPECT_TRUE(is_error(api.puzzle_check(R"({"id": "P99999999", "moves": []})"), 404, "id"));
  EXPECT_TRUE(is_error(api.puzzle_check(R"({"moves": []})"), 400, "id"));
  EXPECT_TRUE(is_error(api.puzzle_check(json({{"id", p.id}, {"moves", {"zz"}}}).dump()), 400, "moves"));
  EXPECT_TRUE(is_error(api.puzzle_check(json({{"id", p.id}, {"hint", true}}).dump()), 400, "hint"));
  // More moves than the solution has.
  std::vector<std::string> longer = solution;
  longer.push_back(solution.back());
  const ApiReply too_many = api.puzzle_check(json({{"id", p.id}, {"moves", longer}}).dump());
  EXPECT_TRUE(is_error(too_many, 400, "moves"));
  EXPECT_TRUE(has(error_of(too_many), "the solution has only")) << too_many.body;
  // The puzzle's reply is not the solver's to choose: another one is named
  // by its index.
  Position after_first = Position::from_fen(p.fen, p.rules);
  after_first.make(p.solution[0]);
  MoveList replies;
  generate_legal(after_first, replies);
  const auto other = std::find_if(replies.begin(), replies.end(), [&](const Move& m) { return !(m == p.solution[1]); });
  ASSERT_NE(other, replies.end());
  const ApiReply wrong_reply =
      api.puzzle_check(json({{"id", p.id}, {"moves", {solution[0], to_coordinate(*other)}}}).dump());
  EXPECT_TRUE(is_error(wrong_reply, 400, "moves"));
  EXPECT_TRUE(has(error_of(wrong_reply), "moves[1]")) << wrong_reply.body;
  EXPECT_TRUE(has(error_of(wrong_reply), "the reply in this puzzle is " + solution[1])) << wrong_reply.body;
}

// ---------------------------------------------------------------------------
// POST /api/pgn/write and /api/pgn/parse

TEST(ServerPgn, AWrittenGameParsesBackWithItsTagsAndMoves) {
  ServerApi api(small_options(), {});
  const json game = {{"tags", {{"White", "Ann"}, {"Black", "novice"}, {"Event", "web"}, {"Opening", "quiet"}}},
                     {"rules", "abbott1963"},
                     {"moves", {"a2a3", "a7a6"}},
                     {"result", "*"}};
  const ApiReply written = api.pgn_write(game.dump());
  ASSERT_EQ(written.status, 200) << written.body;
  const std::string pgn = parsed(written)["pgn"];
  EXPECT_TRUE(has(pgn, "[White \"Ann\"]") && has(pgn, "[Opening \"quiet\"]")) << pgn;
  const ApiReply reply = api.pgn_parse(json({{"pgn", pgn}}).dump());
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json games = parsed(reply)["games"];
  ASSERT_EQ(games.size(), 1u);
  EXPECT_EQ(games[0]["moves"], json({"a2a3", "a7a6"}));
  EXPECT_EQ(games[0]["tags"]["White"], "Ann");
  EXPECT_EQ(games[0]["tags"]["Event"], "web");
  EXPECT_EQ(games[0]["tags"]["Opening"], "quiet");
  EXPECT_EQ(games[0]["rules"], "abbott1963");
  EXPECT_EQ(games[0]["result"], "*");
  EXPECT_EQ(games[0]["fen"], parsed(api.position("{}"))["fen"]);
}

TEST(ServerPgn, AGameFromAPositionKeepsItsFenAndResult) {
  ServerApi api(small_options(), {});
  const ApiReply written = api.pgn_write(json({{"fen", kMateInOne}, {"moves", {"d4g7"}}, {"result", "1-0"}}).dump());
  ASSERT_EQ(written.status, 200) << written.body;
  const std::string pgn = parsed(written)["pgn"];
  EXPECT_TRUE(has(pgn, "[FEN \"" + std::string(kMateInOne) + "\"]")) << pgn;
  const json g = parsed(api.pgn_parse(json({{"pgn", pgn}}).dump()))["games"][0];
  EXPECT_EQ(g["fen"], kMateInOne);
  EXPECT_EQ(g["moves"], json({"d4g7"}));
  EXPECT_EQ(g["result"], "1-0");
}

TEST(ServerPgn, BadGamesToWriteNameTheirFault) {
  ServerApi api(small_options(), {});
  EXPECT_TRUE(is_error(api.pgn_write(R"({"moves": [], "result": "2-0"})"), 400, "result"));
  EXPECT_TRUE(is_error(api.pgn_write(R"({"tags": ["White"]})"), 400, "tags"));
  EXPECT_TRUE(is_error(api.pgn_write(R"({"tags": {"White": 3}})"), 400, "tags"));
  EXPECT_TRUE(is_error(api.pgn_write(R"({"tags": {"Bad Name": "x"}})"), 400, "tags"));
  EXPECT_TRUE(is_error(api.pgn_write(R"({"tags": {"White": "a\nb"}})"), 400, "tags"));
  EXPECT_TRUE(is_error(api.pgn_write(R"({"moves": ["a2a3", "a2a3"]})"), 400, "moves"));
  EXPECT_TRUE(is_error(api.pgn_write(R"({"fen": "8/8/8 w"})"), 400, "fen"));
  EXPECT_TRUE(is_error(api.pgn_write(R"({"rules": "nonesuch"})"), 400, "rules"));
  EXPECT_TRUE(is_error(api.pgn_write(R"({"white": "Ann"})"), 400, "white"));
}

TEST(ServerPgn, AParseErrorNamesTheLineAndTheGame) {
  ServerApi api(small_options(), {});
  EXPECT_TRUE(is_error(api.pgn_parse(R"({"pgn": "1. a2a9 *"})"), 400, "pgn"));
  EXPECT_TRUE(is_error(api.pgn_parse("{}"), 400, "pgn"));
  EXPECT_TRUE(is_error(api.pgn_parse(R"({"pgn": 1})"), 400, "pgn"));
  EXPECT_TRUE(is_error(api.pgn_parse(R"({"pgn": "", "strict": true})"), 400, "strict"));
  // Two games, the second with a move that cannot be read: the error names
  // that move's line in the whole text and the second game.
  const std::string good = parsed(api.pgn_write(R"({"moves": ["a2a3", "a7a6"]})"))["pgn"];
  std::string bad = good;
  bad.replace(bad.find("a7a6"), 4, "h9h9");
  const std::string text = "\n" + good + "\n" + bad;
  const auto at = text.begin() + static_cast<std::ptrdiff_t>(text.find("h9h9"));
  const int bad_line = 1 + static_cast<int>(std::count(text.begin(), at, '\n'));  // 1-based, in the whole text
  const ApiReply reply = api.pgn_parse(json({{"pgn", text}}).dump());
  EXPECT_TRUE(is_error(reply, 400, "pgn"));
  EXPECT_TRUE(has(error_of(reply), "line " + std::to_string(bad_line) + ", game 2")) << reply.body;
}

// ---------------------------------------------------------------------------
// The server's own errors

TEST(ServerErrors, LookLikeTheHandlersErrors) {
  const ApiReply reply = api_error(413, "the body is over 10 bytes");
  EXPECT_TRUE(is_error(reply, 413));
  EXPECT_EQ(parsed(reply), json({{"error", "the body is over 10 bytes"}}));
  EXPECT_EQ(parsed(api_error(400, "x must be a string", "x")), json({{"error", "x must be a string"}, {"field", "x"}}));
}

}  // namespace
}  // namespace ultima
