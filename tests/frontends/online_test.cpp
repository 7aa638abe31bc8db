// Games between browsers without a socket (frontends/server/online.h) and
// their database (store.h): seats held by tokens, moves checked against the
// rules and the turn, the server's clock on a test clock, resignation,
// abort, draw and takeback offers, long polls, the record, the per-address
// limit, and games that outlive the server (a new store on the same file).
// The same over HTTP, with a killed server: tests/cli/serve_db_test.py.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "engine/play/pgn.h"
#include "frontends/server/online.h"
#include "frontends/server/store.h"
#include "test_util.h"

namespace ultima {
namespace {

using json = nlohmann::json;
using test::TempDir;

// A server's games on a clock the test moves.
struct Games {
  explicit Games(const std::string& db, OnlineOptions options = {}) : store(db) {
    options.wait_ms = options.wait_ms == OnlineOptions{}.wait_ms ? 2000 : options.wait_ms;
    online = std::make_unique<OnlineGames>(store, options, [this] { return now.load(); });
  }
  Store store;
  std::atomic<std::int64_t> now{1'800'000'000'000};
  std::unique_ptr<OnlineGames> online;
};

json ok(const ApiReply& reply) {
  EXPECT_EQ(reply.status, 200) << reply.body;
  return json::parse(reply.body);
}

// The error's status and field, with its message in the failure text.
void refused(const ApiReply& reply, int status, const std::string& field, const std::string& part = "") {
  EXPECT_EQ(reply.status, status) << reply.body;
  const json body = json::parse(reply.body);
  EXPECT_EQ(body.value("field", ""), field) << reply.body;
  EXPECT_NE(body["error"].get<std::string>().find(part), std::string::npos) << reply.body;
}

// A game with both seats taken: its id and the seats' tokens.
struct Seats {
  std::string id, white, black;
};

Seats start_game(OnlineGames& games, const json& options) {
  const json made = ok(games.create(options.dump(), "10.0.0.1"));
  const json joined = ok(games.join(json{{"id", made["id"]}}.dump()));
  Seats s;
  s.id = made["id"];
  (made["seat"] == "white" ? s.white : s.black) = made["token"];
  (joined["seat"] == "white" ? s.white : s.black) = joined["token"];
  EXPECT_NE(made["seat"], joined["seat"]);
  return s;
}

ApiReply move(OnlineGames& games, const Seats& s, const std::string& token, const std::string& m, int ply) {
  return games.act(json{{"id", s.id}, {"token", token}, {"action", "move"}, {"move", m}, {"ply", ply}}.dump());
}

ApiReply action(OnlineGames& games, const Seats& s, const std::string& token, const std::string& what) {
  return games.act(json{{"id", s.id}, {"token", token}, {"action", what}}.dump());
}

TEST(Store, KeepsGamesAcrossReopeningsAndTakebacks) {
  const TempDir dir("store");
  const std::string file = dir.path() + "/games.sqlite";
  StoredGame g;
  g.id = "abc";
  g.rules = "abbott1963";
  g.status = "playing";
  g.white_token = "w";
  g.creator = "10.0.0.1";
  g.initial_ms = g.white_ms = g.black_ms = 60000;
  g.seed = (std::uint64_t{1} << 53) - 1;
  g.created_ms = g.updated_ms = 5;
  g.moves = {"d2d5", "d7d6", "e2e5"};
  {
    Store store(file);
    EXPECT_EQ(store.schema_version(), Store::kSchemaVersion);
    store.put_game(g);
    g.moves.pop_back();  // a takeback
    g.version = 2;
    store.put_game(g);
    EXPECT_EQ(store.open_games_of("10.0.0.1"), 1);
    EXPECT_EQ(store.open_games_of("10.0.0.2"), 0);
  }
  Store again(file);
  const std::optional<StoredGame> read = again.game("abc");
  ASSERT_TRUE(read);
  EXPECT_EQ(read->moves, g.moves);
  EXPECT_EQ(read->seed, g.seed);
  EXPECT_EQ(read->white_token, "w");
  EXPECT_EQ(read->version, 2);
  EXPECT_EQ(read->initial_ms, 60000);
  EXPECT_FALSE(again.game("abd"));
  EXPECT_EQ(again.game_ids(10), std::vector<std::string>{"abc"});
}

TEST(Store, RefusesWhatIsNotItsDatabaseNamingTheFile) {
  const TempDir dir("store-bad");
  const std::string garbage = dir.path() + "/garbage.sqlite";
  std::ofstream(garbage) << "this is not a database, only some text that is long enough to look like a header\n";
  try {
    Store store(garbage);
    FAIL() << "a text file opened as a database";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find(garbage), std::string::npos) << e.what();
  }
  // A file a newer program wrote.
  const std::string newer = dir.path() + "/newer.sqlite";
  { Store store(newer); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(newer.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  try {
    Store store(newer);
    FAIL() << "a newer schema opened";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 99 is newer"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Store(dir.path() + "/no-such-folder/games.sqlite"), StoreError);
}

TEST(OnlineGames, SeatsAreHeldByTokensAndOthersWatch) {
  Games g(":memory:");
  const json made = ok(g.online->create(R"({"minutes": 5, "increment": 3, "colour": "black"})", "10.0.0.1"));
  EXPECT_EQ(made["seat"], "black");
  EXPECT_EQ(made["game"]["status"], "waiting");
  EXPECT_EQ(made["game"]["you"], "black");
  EXPECT_EQ(made["game"]["clock"]["white_ms"], 300000);
  const std::string id = made["id"];
  // Nobody moves before the other seat is taken.
  Seats waiting{id, "", made["token"]};
  refused(move(*g.online, waiting, made["token"], "d7d6", 0), 409, "action", "seat is still free");
  const json joined = ok(g.online->join(json{{"id", id}}.dump()));
  EXPECT_EQ(joined["seat"], "white");
  EXPECT_NE(joined["token"], made["token"]);
  EXPECT_EQ(joined["game"]["status"], "playing");
  refused(g.online->join(json{{"id", id}}.dump()), 409, "id", "both seats");
  // A watcher sees the game but not a seat, and cannot act.
  const json watched = ok(g.online->state(json{{"id", id}}.dump()));
  EXPECT_TRUE(watched["you"].is_null());
  EXPECT_EQ(watched["seats"], json({{"white", true}, {"black", true}}));
  refused(g.online->act(json{{"id", id}, {"token", "guess"}, {"action", "resign"}}.dump()), 403, "token");
  refused(g.online->state(R"({"id": "nosuchgame"})"), 404, "id");
  refused(g.online->create(R"({"colour": "green"})", "10.0.0.1"), 400, "colour");
  refused(g.online->create(R"({"minutes": 999})", "10.0.0.1"), 400, "minutes");
  refused(g.online->create(R"({"fen": "8/8 w"})", "10.0.0.1"), 400, "fen");
}

TEST(OnlineGames, MovesAreCheckedAgainstTheRulesTheTurnAndThePly) {
  Games g(":memory:");
  const Seats s = start_game(*g.online, {{"colour", "white"}});
  refused(move(*g.online, s, s.black, "d7d6", 0), 409, "action", "white's move");
  refused(move(*g.online, s, s.white, "d2d9", 0), 400, "move", "d2d9");
  refused(move(*g.online, s, s.white, "d2d5", 3), 409, "ply", "at ply 0");
  const json after = ok(move(*g.online, s, s.white, "d2d5", 0));
  EXPECT_EQ(after["moves"], json::array({"d2d5"}));
  // The same move sent twice (a page that retries): the second is refused
  // by its ply, and the game holds it once.
  refused(move(*g.online, s, s.white, "d2d5", 0), 409, "ply", "at ply 1");
  ok(move(*g.online, s, s.black, "d7d6", 1));
  // A mate ends the game with its result.
  const Seats mate = start_game(*g.online, {{"fen", "6pk/5K1p/8/8/3W4/2p5/8/8 w 0 1"}, {"colour", "white"}});
  const json over = ok(move(*g.online, mate, mate.white, "d4g7", 0));
  EXPECT_EQ(over["status"], "over");
  EXPECT_EQ(over["result"], "1-0");
  EXPECT_EQ(over["termination"], "checkmate");
  refused(move(*g.online, mate, mate.black, "h8g8", 1), 409, "action", "over");
}

TEST(OnlineGames, TheServerRunsTheClockOfTheSideToMove) {
  Games g(":memory:");
  const Seats s = start_game(*g.online, {{"minutes", 1}, {"increment", 2}, {"colour", "white"}});
  // The first move of each side is not timed.
  g.now += 20000;
  ok(move(*g.online, s, s.white, "d2d5", 0));
  g.now += 20000;
  json state = ok(move(*g.online, s, s.black, "d7d6", 1));
  EXPECT_EQ(state["clock"]["white_ms"], 60000);
  EXPECT_EQ(state["clock"]["black_ms"], 60000);
  EXPECT_EQ(state["clock"]["running"], "white");
  // Now White's runs: 15 s thought, 2 s back.
  g.now += 15000;
  state = ok(g.online->state(json{{"id", s.id}}.dump()));
  EXPECT_EQ(state["clock"]["white_ms"], 45000);
  state = ok(move(*g.online, s, s.white, "e2e5", 2));
  EXPECT_EQ(state["clock"]["white_ms"], 47000);
  EXPECT_EQ(state["clock"]["running"], "black");
  // Black's time runs out without a move: the game is over by time
  // whenever it is next looked at, and a late move is refused.
  g.now += 60001;
  state = ok(g.online->state(json{{"id", s.id}}.dump()));
  EXPECT_EQ(state["status"], "over");
  EXPECT_EQ(state["result"], "1-0");
  EXPECT_EQ(state["termination"], "time");
  EXPECT_EQ(state["clock"]["black_ms"], 0);
  refused(move(*g.online, s, s.black, "e7e6", 3), 409, "action", "over (time)");
}

TEST(OnlineGames, ResignationAbortDrawAndTakeback) {
  Games g(":memory:");
  Seats s = start_game(*g.online, {{"colour", "white"}});
  ok(move(*g.online, s, s.white, "d2d5", 0));
  ok(action(*g.online, s, s.black, "abort"));  // before each side has moved
  refused(move(*g.online, s, s.black, "d7d6", 1), 409, "action", "aborted");

  s = start_game(*g.online, {{"colour", "white"}});
  ok(move(*g.online, s, s.white, "d2d5", 0));
  ok(move(*g.online, s, s.black, "d7d6", 1));
  refused(action(*g.online, s, s.white, "abort"), 409, "action", "only before");
  // A takeback asked by White, who is to move: back two plies, to White's move.
  refused(action(*g.online, s, s.black, "accept-takeback"), 409, "action", "no takeback");
  ok(action(*g.online, s, s.white, "offer-takeback"));
  json state = ok(action(*g.online, s, s.black, "accept-takeback"));
  EXPECT_TRUE(state["moves"].empty());
  // Asked by the side that just moved: back one ply.
  ok(move(*g.online, s, s.white, "e2e5", 0));
  ok(action(*g.online, s, s.white, "offer-takeback"));
  ok(action(*g.online, s, s.black, "decline-takeback"));
  ok(action(*g.online, s, s.white, "offer-takeback"));
  state = ok(action(*g.online, s, s.black, "accept-takeback"));
  EXPECT_TRUE(state["moves"].empty());
  // A draw offer is cleared by a move, then taken.
  ok(action(*g.online, s, s.white, "offer-draw"));
  ok(move(*g.online, s, s.white, "d2d5", 0));
  refused(action(*g.online, s, s.black, "accept-draw"), 409, "action", "no draw");
  ok(action(*g.online, s, s.black, "offer-draw"));
  state = ok(action(*g.online, s, s.white, "accept-draw"));
  EXPECT_EQ(state["result"], "1/2-1/2");
  EXPECT_EQ(state["termination"], "agreement");

  s = start_game(*g.online, {{"colour", "white"}});
  ok(move(*g.online, s, s.white, "d2d5", 0));
  state = ok(action(*g.online, s, s.white, "resign"));
  EXPECT_EQ(state["result"], "0-1");
  EXPECT_EQ(state["termination"], "resignation");
  refused(action(*g.online, s, s.black, "dance"), 409, "action", "over");
}

TEST(OnlineGames, AWaitingPageLearnsOfTheChangeOrTimesOut) {
  OnlineOptions options;
  options.wait_ms = 300;
  Games g(":memory:", options);
  const Seats s = start_game(*g.online, {{"colour", "white"}});
  const std::int64_t version = ok(g.online->state(json{{"id", s.id}}.dump()))["version"];
  // Nothing changes: the poll answers after its time, with the same version.
  EXPECT_EQ(ok(g.online->wait(json{{"id", s.id}, {"version", version}}.dump()))["version"], version);
  // A move from another thread ends the poll with it.
  json seen;
  std::thread watcher([&] { seen = ok(g.online->wait(json{{"id", s.id}, {"version", version}}.dump())); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ok(move(*g.online, s, s.white, "d2d5", 0));
  watcher.join();
  EXPECT_EQ(seen["moves"], json::array({"d2d5"}));
  EXPECT_GT(seen["version"].get<std::int64_t>(), version);
}

TEST(OnlineGames, EveryAcknowledgedMoveOutlivesTheServer) {
  const TempDir dir("online-restart");
  const std::string file = dir.path() + "/games.sqlite";
  Seats s;
  {
    Games g(file);
    s = start_game(*g.online, {{"minutes", 3}, {"colour", "white"}});
    ok(move(*g.online, s, s.white, "d2d5", 0));
    ok(move(*g.online, s, s.black, "d7d6", 1));
  }  // the server goes
  Games again(file);
  json state = ok(again.online->state(json{{"id", s.id}, {"token", s.black}}.dump()));
  EXPECT_EQ(state["moves"], json::array({"d2d5", "d7d6"}));
  EXPECT_EQ(state["you"], "black");
  ok(move(*again.online, s, s.white, "e2e5", 2));  // the seats' tokens still hold
  // The record: the moves, the time control, the game's id.
  const std::optional<std::string> pgn = again.online->pgn(s.id);
  ASSERT_TRUE(pgn);
  const std::vector<GameRecord> records = read_pgn(*pgn);
  ASSERT_EQ(records.size(), 1u);
  ASSERT_EQ(records[0].moves.size(), 3u);
  EXPECT_NE(pgn->find("[TimeControl \"180+0\"]"), std::string::npos) << *pgn;
  EXPECT_NE(pgn->find("[GameId \"" + s.id + "\"]"), std::string::npos) << *pgn;
  EXPECT_FALSE(again.online->pgn("nosuchgame"));
}

TEST(OnlineGames, OneAddressHasAFewOpenGamesAtMost) {
  OnlineOptions options;
  options.max_open_games_per_client = 2;
  Games g(":memory:", options);
  const json first = ok(g.online->create("{}", "10.0.0.1"));
  ok(g.online->create("{}", "10.0.0.1"));
  refused(g.online->create("{}", "10.0.0.1"), 429, "", "at most 2");
  ok(g.online->create("{}", "10.0.0.2"));
  // An aborted game no longer counts.
  ok(g.online->act(json{{"id", first["id"]}, {"token", first["token"]}, {"action", "abort"}}.dump()));
  ok(g.online->create("{}", "10.0.0.1"));
}


// A bot host that only records the turns it is asked to play; the test
// answers them.
struct RecordingBots {
  std::vector<BotTurn> turns;
  BotHost host() {
    BotHost h;
    h.known = [](const std::string& name) { return name == "testbot"; };
    h.start = [this](const BotTurn& t) { turns.push_back(t); };
    return h;
  }
};

TEST(OnlineGamesAgainstABot, TheBotHoldsTheOtherSeatAndItsMovesAreKept) {
  Games g(":memory:");
  RecordingBots bots;
  refused(g.online->create(R"({"bot": "testbot"})", "10.0.0.1"), 400, "bot", "plays no bots");
  g.online->set_bots(bots.host());
  refused(g.online->create(R"({"bot": "nobody"})", "10.0.0.1"), 404, "bot", "no bot named 'nobody'");
  refused(g.online->create(R"({"bot": "testbot", "movetime_ms": 1})", "10.0.0.1"), 400, "movetime_ms");

  // The person plays Black: the game starts at once with the bot's turn.
  const json made = ok(g.online->create(R"({"bot": "testbot", "colour": "black", "movetime_ms": 300, "seed": 77})",
                                        "10.0.0.1"));
  EXPECT_EQ(made["seat"], "black");
  const json& game = made["game"];
  EXPECT_EQ(game["status"], "playing");
  EXPECT_EQ(game["seats"], json({{"white", true}, {"black", true}}));
  EXPECT_EQ(game["bot"]["name"], "testbot");
  EXPECT_EQ(game["bot"]["seat"], "white");
  EXPECT_EQ(game["bot"]["thinking"], true);
  EXPECT_EQ(game["seed"], 77);
  ASSERT_EQ(bots.turns.size(), 1u);
  EXPECT_EQ(bots.turns[0].game, made["id"]);
  EXPECT_TRUE(bots.turns[0].moves.empty());
  EXPECT_EQ(bots.turns[0].movetime_ms, 300);
  EXPECT_EQ(bots.turns[0].seed, 77u);
  // Nobody else can take a seat, and the person cannot move for the bot.
  refused(g.online->join(json{{"id", made["id"]}}.dump()), 409, "id");
  const Seats s{made["id"], "", made["token"]};
  refused(move(*g.online, s, s.black, "d2d5", 0), 409, "action", "white's move");

  g.online->bot_moved(bots.turns[0], "d2d5");
  json state = ok(g.online->state(json{{"id", s.id}, {"token", s.black}}.dump()));
  EXPECT_EQ(state["moves"], json::array({"d2d5"}));
  EXPECT_EQ(state["bot"]["thinking"], false);
  ok(move(*g.online, s, s.black, "d7d6", 1));
  ASSERT_EQ(bots.turns.size(), 2u);
  EXPECT_EQ(bots.turns[1].moves, (std::vector<std::string>{"d2d5", "d7d6"}));

  // A draw offer is refused; a takeback is granted at once, and the bot's
  // answer to the position taken back is dropped.
  refused(action(*g.online, s, s.black, "offer-draw"), 409, "action", "takes no draw");
  state = ok(action(*g.online, s, s.black, "offer-takeback"));
  EXPECT_EQ(state["moves"], json::array({"d2d5"}));
  g.online->bot_moved(bots.turns[1], "e2e5");
  state = ok(g.online->state(json{{"id", s.id}, {"token", s.black}}.dump()));
  EXPECT_EQ(state["moves"], json::array({"d2d5"})) << "a stale answer was played";
  ok(move(*g.online, s, s.black, "e7e6", 1));
  ASSERT_EQ(bots.turns.size(), 3u) << "the new position gets its own turn";
  EXPECT_EQ(bots.turns[2].moves, (std::vector<std::string>{"d2d5", "e7e6"}));
  // A bot move the rules refuse is not played, and shows as the bot's error.
  g.online->bot_moved(bots.turns[2], "a1a1");
  state = ok(g.online->state(json{{"id", s.id}, {"token", s.black}}.dump()));
  EXPECT_EQ(state["moves"].size(), 2u);
  EXPECT_NE(state["bot"].value("error", "").find("a1a1"), std::string::npos) << state.dump();
  ASSERT_EQ(bots.turns.size(), 4u) << "the state request tried the turn again";
  g.online->bot_moved(bots.turns[3], "e2e5");
  state = ok(g.online->state(json{{"id", s.id}, {"token", s.black}}.dump()));
  EXPECT_EQ(state["moves"], json::array({"d2d5", "e7e6", "e2e5"}));
  EXPECT_FALSE(state["bot"].contains("error"));

  // The record names the bot and the seed that replays it.
  const std::optional<std::string> pgn = g.online->pgn(s.id);
  ASSERT_TRUE(pgn);
  EXPECT_NE(pgn->find("[White \"testbot\"]"), std::string::npos) << *pgn;
  EXPECT_NE(pgn->find("[Black \"You\"]"), std::string::npos) << *pgn;
  EXPECT_NE(pgn->find("[Seed \"77\"]"), std::string::npos) << *pgn;
  ok(action(*g.online, s, s.black, "resign"));
  state = ok(g.online->state(json{{"id", s.id}, {"token", s.black}}.dump()));
  EXPECT_EQ(state["result"], "1-0");
  EXPECT_EQ(bots.turns.size(), 4u);
}

TEST(OnlineGamesAgainstABot, TheBotPlaysOnTheClockAndAfterARestart) {
  const TempDir dir("online-bot-restart");
  const std::string file = dir.path() + "/games.sqlite";
  std::string id, token;
  {
    Games g(file);
    RecordingBots bots;
    g.online->set_bots(bots.host());
    const json made = ok(g.online->create(R"({"bot": "testbot", "colour": "white", "minutes": 1, "increment": 2})",
                                          "10.0.0.1"));
    id = made["id"];
    token = made["token"];
    EXPECT_TRUE(bots.turns.empty()) << "White is the person's";
    ok(g.online->act(json{{"id", id}, {"token", token}, {"action", "move"}, {"move", "d2d5"}, {"ply", 0}}.dump()));
    ASSERT_EQ(bots.turns.size(), 1u);
    g.online->bot_moved(bots.turns[0], "d7d6");
    g.now += 5000;
    ok(g.online->act(json{{"id", id}, {"token", token}, {"action", "move"}, {"move", "e2e5"}, {"ply", 2}}.dump()));
    ASSERT_EQ(bots.turns.size(), 2u);
    // The bot's clock runs while it thinks, as a person's does.
    EXPECT_EQ(bots.turns[1].white_ms, 60000 - 5000 + 2000);
    EXPECT_EQ(bots.turns[1].black_ms, 60000);
    EXPECT_EQ(bots.turns[1].increment_ms, 2000);
    EXPECT_EQ(bots.turns[1].movetime_ms, 0);
  }  // the server stops while the bot thinks
  Games again(file);
  RecordingBots bots;
  again.online->set_bots(bots.host());
  json state = ok(again.online->state(json{{"id", id}, {"token", token}}.dump()));
  ASSERT_EQ(bots.turns.size(), 1u) << "the bot's turn resumes when the game is opened";
  EXPECT_EQ(bots.turns[0].moves, (std::vector<std::string>{"d2d5", "d7d6", "e2e5"}));
  again.now = 1'800'000'000'000 + 5000 + 1000;  // a second after the person's move
  again.online->bot_moved(bots.turns[0], "e7e6");
  state = ok(again.online->state(json{{"id", id}, {"token", token}}.dump()));
  EXPECT_EQ(state["moves"].size(), 4u);
  EXPECT_EQ(state["clock"]["black_ms"], 60000 - 1000 + 2000);
  EXPECT_EQ(state["bot"]["name"], "testbot");
}

}  // namespace
}  // namespace ultima
