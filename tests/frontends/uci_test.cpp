// The UCI protocol through run_uci: handshake, options, positions, every
// kind of "go", MultiPV, variants, levels, errors that must not stop the
// engine, and "go infinite" + "stop" over a live input.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <chrono>
#include <condition_variable>
#include <istream>
#include <mutex>
#include <ostream>
#include <set>
#include <sstream>
#include <streambuf>
#include <string>
#include <thread>
#include <vector>

#include "engine/play/level.h"
#include "engine/play/player.h"
#include "engine/play/player_spec.h"
#include "engine/rules/rules.h"
#include "engine/search/search.h"
#include "frontends/uci/uci.h"
#include "play/fake_network.h"
#include "test_util.h"

namespace ultima {
namespace {


// Runs a whole scripted session: the input is read to its end (or "quit").
std::string session(const std::string& input, const NetworkFactory& networks = {}) {
  std::istringstream in(input);
  std::ostringstream out;
  run_uci(in, out, networks);
  return out.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  for (const std::string& l : lines_of(text))
    if (starts_with(l, prefix)) out.push_back(l);
  return out;
}

std::vector<std::string> tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> t;
  for (std::string w; in >> w;) t.push_back(w);
  return t;
}

// The move of the last "bestmove" line; fails the test if there is none.
std::string bestmove(const std::string& output) {
  const std::vector<std::string> b = lines_starting(output, "bestmove ");
  if (b.empty()) {
    ADD_FAILURE() << "no bestmove in:\n" << output;
    return "";
  }
  return tokens(b.back())[1];
}

bool legal_text(const Position& pos, const std::string& text) {
  try {
    parse_coordinate(pos, text);
    return true;
  } catch (const MoveError&) {
    return false;
  }
}

Position after(const std::string& fen, std::initializer_list<const char*> moves, const Rules& rules = Rules{}) {
  Position pos = fen == "startpos" ? Position::start(rules) : Position::from_fen(fen, rules);
  for (const char* m : moves) pos.make(parse_coordinate(pos, m));
  return pos;
}

std::string fen_line(const std::string& output) {
  const std::vector<std::string> f = lines_starting(output, "Fen: ");
  return f.empty() ? "" : f.back().substr(5);
}

// ---------------------------------------------------------------------------

TEST(UciHandshake, IdOptionsAndUciok) {
  const std::string out = session("uci\nisready\n");
  const std::vector<std::string> lines = lines_of(out);
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(starts_with(lines[0], "id name ")) << out;
  EXPECT_FALSE(lines_starting(out, "id author ").empty());
  for (const char* option : {"option name Hash type spin", "option name Threads type spin",
                             "option name MultiPV type spin", "option name UCI_Variant type combo",
                             "option name UCI_LimitStrength type check", "option name UCI_Elo type spin",
                             "option name Level type combo"})
    EXPECT_EQ(lines_starting(out, option).size(), 1u) << option << "\n" << out;
  const std::string variants = lines_starting(out, "option name UCI_Variant")[0];
  EXPECT_TRUE(contains(variants, "default abbott1963"));
  for (const std::string& preset : preset_names()) {
    const std::vector<std::string> t = tokens(variants);
    bool listed = false;
    for (std::size_t i = 0; i + 1 < t.size(); ++i) listed |= t[i] == "var" && t[i + 1] == preset;
    EXPECT_TRUE(listed) << preset << " missing from " << variants;
  }
  const std::string levels = lines_starting(out, "option name Level")[0];
  for (const std::string& name : level_names()) EXPECT_TRUE(contains(levels, " var " + name)) << levels;
  // uciok ends the handshake: after every option, before readyok.
  const auto uciok = std::find(lines.begin(), lines.end(), "uciok");
  ASSERT_NE(uciok, lines.end());
  for (auto it = uciok; it != lines.end(); ++it) EXPECT_FALSE(starts_with(*it, "option ")) << *it;
  EXPECT_EQ(lines.back(), "readyok");
}

// Each option is declared once: the handshake and `ultima uci --options`
// list the same options, each with its help, and setoption knows them all.
TEST(UciHandshake, OptionsAndTheirHelpComeFromOneDeclaration) {
  const std::vector<std::string> announced = lines_starting(session("uci\n"), "option name ");
  const std::string help = uci_option_help();
  ASSERT_GE(announced.size(), 15u);
  for (const std::string& line : announced) {
    const std::string name = tokens(line)[2];
    EXPECT_TRUE(contains(help, "\n" + name + " (") || starts_with(help, name + " (")) << name << "\n" << help;
    const std::string unknown = session("setoption name " + name + " value @@\nisready\n");
    EXPECT_FALSE(contains(unknown, "unknown option")) << name << ": " << unknown;
  }
  // Every option's help line is there, and the two lists have one entry per option.
  std::size_t entries = 0;
  for (const std::string& line : lines_of(help)) entries += !line.empty() && line[0] != ' ';
  EXPECT_EQ(entries, announced.size()) << help;
  // Device takes what the network takes: cuda:N needs its N.
  for (const char* device : {"cuda:", "cuda:x", "gpu"})
    EXPECT_TRUE(contains(session(std::string("setoption name Device value ") + device + "\n"),
                         "info string error Device must be cpu, cuda or cuda:N"))
        << device;
  EXPECT_TRUE(lines_starting(session("setoption name Device value cuda:1\n"), "info string error").empty());
}

TEST(UciHandshake, IsreadyAndCarriageReturns) {
  EXPECT_EQ(session("isready\n"), "readyok\n");
  EXPECT_EQ(session("isready\r\n\r\n   \nisready"), "readyok\nreadyok\n");
  EXPECT_EQ(session(""), "");
  // Nothing after quit is read.
  EXPECT_EQ(session("isready\nquit\nisready\n"), "readyok\n");
}

TEST(UciGo, DepthGivesInfoLinesAndALegalBestmove) {
  const std::string out = session("position startpos moves a2a3 a7a6\ngo depth 3\n");
  const Position pos = after("startpos", {"a2a3", "a7a6"});
  const std::vector<std::string> infos = lines_starting(out, "info depth ");
  ASSERT_GE(infos.size(), 3u) << out;
  std::set<int> depths;
  for (const std::string& info : infos) {
    SCOPED_TRACE(info);
    const std::vector<std::string> t = tokens(info);
    depths.insert(std::stoi(t[2]));
    for (const char* key : {"seldepth", "multipv", "score", "nodes", "nps", "time", "pv"})
      EXPECT_NE(std::find(t.begin(), t.end(), key), t.end()) << key;
    const auto score = std::find(t.begin(), t.end(), "score");
    ASSERT_LT(score + 2, t.end());
    EXPECT_TRUE(score[1] == "cp" || score[1] == "mate");
    EXPECT_NO_THROW(std::stoi(score[2]));
    // The principal variation is playable from the position.
    Position walk = pos;
    for (auto it = std::find(t.begin(), t.end(), "pv") + 1; it != t.end(); ++it) {
      ASSERT_TRUE(legal_text(walk, *it)) << *it;
      walk.make(parse_coordinate(walk, *it));
      if (game_status(walk).over()) break;
    }
  }
  EXPECT_EQ(depths, (std::set<int>{1, 2, 3}));
  ASSERT_EQ(lines_starting(out, "bestmove ").size(), 1u);
  EXPECT_TRUE(starts_with(lines_of(out).back(), "bestmove "));
  const std::vector<std::string> b = tokens(lines_starting(out, "bestmove ")[0]);
  EXPECT_TRUE(legal_text(pos, b[1])) << b[1];
  if (b.size() > 2) {  // "bestmove X ponder Y": Y is a legal reply
    ASSERT_EQ(b.size(), 4u);
    EXPECT_EQ(b[2], "ponder");
    Position next = pos;
    next.make(parse_coordinate(next, b[1]));
    EXPECT_TRUE(legal_text(next, b[3])) << b[3];
  }
}

TEST(UciGo, EveryKindOfLimitEndsWithALegalBestmove) {
  const Position pos = after("startpos", {"e2e4"});
  for (const char* go : {"go nodes 500", "go movetime 50", "go wtime 1000 btime 1000 winc 0 binc 0",
                         "go wtime 300 btime 200 winc 10 binc 10 movestogo 5", "go depth 1", "go mate 1",
                         "go depth 2 searchmoves a7a6 b7b6"}) {
    SCOPED_TRACE(go);
    const std::string out = session(std::string("position startpos moves e2e4\n") + go + "\n");
    EXPECT_EQ(lines_starting(out, "bestmove ").size(), 1u) << out;
    EXPECT_TRUE(legal_text(pos, bestmove(out))) << out;
    if (contains(go, "searchmoves")) {
      EXPECT_TRUE(bestmove(out) == "a7a6" || bestmove(out) == "b7b6") << out;
    }
  }
}

TEST(UciGo, MultiPvGivesDistinctLines) {
  const std::string out = session("setoption name MultiPV value 3\nposition startpos\ngo depth 2\n");
  const Position pos = Position::start();
  std::set<std::string> firsts;
  for (int k = 1; k <= 3; ++k) {
    std::string line;
    for (const std::string& l : lines_starting(out, "info depth 2 "))
      if (contains(l, " multipv " + std::to_string(k) + " ")) line = l;
    ASSERT_FALSE(line.empty()) << "no multipv " << k << " line at depth 2:\n" << out;
    const std::vector<std::string> t = tokens(line);
    const auto pv = std::find(t.begin(), t.end(), "pv");
    ASSERT_LT(pv + 1, t.end());
    EXPECT_TRUE(legal_text(pos, pv[1]));
    firsts.insert(pv[1]);
  }
  EXPECT_EQ(firsts.size(), 3u);
  for (const std::string& l : lines_starting(out, "info ")) EXPECT_FALSE(contains(l, " multipv 4 ")) << l;
  EXPECT_TRUE(legal_text(pos, bestmove(out)));
}

TEST(UciPosition, VariantsChangeTheStartPosition) {
  for (const std::string& preset : preset_names()) {
    SCOPED_TRACE(preset);
    const Rules rules = Rules::preset(preset);
    const std::string out =
        session("setoption name UCI_Variant value " + preset + "\nposition startpos\nd\ngo depth 2\n");
    EXPECT_EQ(fen_line(out), rules.start_fen()) << out;
    EXPECT_TRUE(contains(out, "Rules: " + preset)) << out;
    EXPECT_TRUE(legal_text(Position::start(rules), bestmove(out)));
  }
  // The cambridge start really differs from the default one.
  EXPECT_NE(Rules::preset("cambridge").start_fen(), Rules{}.start_fen());
  // Moves after startpos are played under the variant's rules.
  const std::string out = session(
      "setoption name UCI_Variant value cambridge\nposition startpos moves a2a3 a7a6\nd\n");
  EXPECT_EQ(fen_line(out), after("startpos", {"a2a3", "a7a6"}, Rules::preset("cambridge")).fen());
}

TEST(UciPosition, FenWithMoves) {
  const std::string fen = "4k3/3ppp2/4I3/8/p2K4/8/8/L7 w 0 1";
  const std::string out = session("position fen " + fen + " moves d4c4 a4b4\nd\n");
  EXPECT_EQ(fen_line(out), after(fen, {"d4c4", "a4b4"}).fen());
  // A FEN without counters, and "position fen" followed by go.
  const std::string out2 = session("position fen 4k3/3ppp2/4I3/8/p2K4/8/8/L7 w\ngo depth 1\n");
  EXPECT_EQ(bestmove(out2), "a1a8");
}

TEST(UciErrors, GarbageIsReportedAndTheEngineKeepsWorking) {
  const char* garbage[] = {
      "hello",
      "position fen garbage",
      "position startpos moves e2e9",
      "position startpos moves a7a6",  // Black's move on White's turn
      "position startpos moves a2a3 a2a4",
      "position",
      "position startpos moves",  // allowed: no moves
      "setoption name Foo value 1",
      "setoption name Hash value -5",
      "setoption name Threads value many",
      "setoption name MultiPV value 0",
      "setoption name UCI_Variant value chess",
      "setoption name UCI_LimitStrength value maybe",
      "setoption name UCI_Elo value high",
      "setoption name Level value world-champion",
      "setoption",
  };
  for (const char* g : garbage) {
    SCOPED_TRACE(g);
    const bool valid = std::string(g) == "position startpos moves";
    const std::string out = session(std::string("position startpos moves b2b3\n") + g + "\nisready\nd\n");
    const std::vector<std::string> errors = lines_starting(out, "info string error ");
    EXPECT_EQ(errors.size(), valid ? 0u : 1u) << out;
    EXPECT_FALSE(lines_starting(out, "readyok").empty()) << out;
    // A bad "position" leaves the previous position in place.
    if (starts_with(g, "position") && !valid) {
      EXPECT_EQ(fen_line(out), after("startpos", {"b2b3"}).fen());
    }
  }
  // All of them in one session, then real work.
  std::string input;
  for (const char* g : garbage) input += std::string(g) + "\n";
  input += "isready\nposition startpos moves a2a3\ngo depth 2\n";
  const std::string out = session(input);
  EXPECT_EQ(lines_starting(out, "info string error ").size(), std::size(garbage) - 1) << out;
  EXPECT_FALSE(lines_starting(out, "readyok").empty());
  EXPECT_TRUE(legal_text(after("startpos", {"a2a3"}), bestmove(out))) << out;
}

TEST(UciErrors, MalformedGoSearchesNothing) {
  // A go with a bad parameter is reported and does nothing: no search starts
  // (which, without its limit, would never end), and the engine reads on.
  for (const char* go : {"go depth 1O", "go depth x", "go depth -3 nodes 300", "go depth 2 sideways 3", "go nodes",
                         "go mate 0", "go depth 2 searchmoves a2a3 e2e9", "go searchmoves"}) {
    SCOPED_TRACE(go);
    const std::string out = session(std::string("position startpos\n") + go + "\nisready\n");
    const std::vector<std::string> errors = lines_starting(out, "info string error ");
    ASSERT_EQ(errors.size(), 1u) << out;
    EXPECT_TRUE(contains(errors[0], "not searching")) << errors[0];
    EXPECT_TRUE(lines_starting(out, "info depth").empty()) << out;
    EXPECT_TRUE(lines_starting(out, "bestmove").empty()) << out;
    EXPECT_FALSE(lines_starting(out, "readyok").empty());
  }
  const std::string out = session("position startpos\ngo depth 1O\ngo depth 1\n");
  EXPECT_TRUE(contains(lines_starting(out, "info string error ")[0], "'depth' needs a non-negative number, got '1O'"))
      << out;
  EXPECT_EQ(lines_starting(out, "bestmove ").size(), 1u) << out;
}

TEST(UciErrors, GoInAFinishedGame) {
  // Checkmate (Kc4-d5# of RULES.md 10.1), bare kings, and a move after the end.
  const Position mated = after("p7/8/8/4k3/2K2I2/3w4/8/8 w 0 1", {"c4d5"});
  ASSERT_TRUE(game_status(mated).over());
  for (const std::string& fen : {mated.fen(), std::string("3k4/8/8/8/8/8/8/3K4 w 0 1")}) {
    SCOPED_TRACE(fen);
    const std::string out = session("position fen " + fen + "\ngo depth 3\nisready\n");
    EXPECT_EQ(lines_starting(out, "bestmove ").size(), 1u);
    EXPECT_EQ(lines_starting(out, "bestmove ")[0], "bestmove (none)") << out;
    EXPECT_FALSE(lines_starting(out, "readyok").empty());
  }
  const std::string out =
      session("position fen p7/8/8/4k3/2K2I2/3w4/8/8 w 0 1 moves c4d5 a8a7\nd\n");
  EXPECT_EQ(lines_starting(out, "info string error ").size(), 1u) << out;
}

TEST(UciGo, MateScores) {
  const std::string out = session("position fen K5pk/6pp/8/8/7p/8/8/CP6 w 0 1\ngo depth 3\n");
  EXPECT_FALSE(lines_starting(out, "info depth").empty());
  EXPECT_TRUE(contains(lines_starting(out, "info depth").back(), " score mate 1 ")) << out;
  EXPECT_EQ(bestmove(out), "a1e5");
  // The side about to be mated sees "mate -1".
  const std::string out2 = session("position fen 8/8/4X2x/6P1/4l3/1K6/8/2k5 w 0 1 moves e6e2\ngo depth 2\n");
  EXPECT_TRUE(contains(lines_starting(out2, "info depth").back(), " score mate -1 ")) << out2;
  // "go mate 1" searches deep enough for a mate in one.
  const std::string out3 = session("position fen K5pk/6pp/8/8/7p/8/8/CP6 w 0 1\ngo mate 1\n");
  EXPECT_EQ(bestmove(out3), "a1e5");
}

TEST(UciLevels, LevelOptionPlaysAsTheLevel) {
  const std::vector<std::string> names = level_names();
  ASSERT_NE(std::find(names.begin(), names.end(), "novice"), names.end());
  const std::string out =
      session("setoption name Level value novice\nposition startpos moves a2a3\ngo depth 3\nisready\n");
  EXPECT_TRUE(contains(out, "info string playing as level novice")) << out;
  EXPECT_TRUE(lines_starting(out, "info string error").empty()) << out;
  EXPECT_TRUE(legal_text(after("startpos", {"a2a3"}), bestmove(out)));
  // Back to full strength.
  const std::string out2 = session("setoption name Level value novice\nsetoption name Level value none\n"
                                   "position fen K5pk/6pp/8/8/7p/8/8/CP6 w 0 1\ngo depth 2\n");
  EXPECT_EQ(bestmove(out2), "a1e5");
  // Every level works through the option (a small movetime keeps it short).
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const std::string o = session("setoption name Level value " + name + "\nposition startpos\ngo movetime 100\n");
    EXPECT_TRUE(contains(o, "playing as level " + name)) << o;
    EXPECT_TRUE(legal_text(Position::start(), bestmove(o)));
  }
}

// Players take limits: a level plays within go's limits and its own budget
// (master's 160,000 nodes stop at depth 1 here), with info lines.
TEST(UciLevels, ALevelPlaysWithinGosLimits) {
  const std::vector<std::string> names = level_names();
  ASSERT_NE(std::find(names.begin(), names.end(), "master"), names.end());
  const std::string out = session("setoption name Level value master\nposition startpos\ngo depth 1\n");
  EXPECT_FALSE(lines_starting(out, "info depth 1 ").empty()) << out;
  EXPECT_TRUE(lines_starting(out, "info depth 2 ").empty()) << out;
  EXPECT_TRUE(legal_text(Position::start(), bestmove(out)));
  // "stop" ends a level's long search at once with a legal move.
  std::string stopped;
  {
    std::ostringstream sink;
    std::istringstream in("setoption name Level value master\nposition startpos\ngo infinite\nstop\n");
    run_uci(in, sink);
    stopped = sink.str();
  }
  EXPECT_EQ(lines_starting(stopped, "bestmove ").size(), 1u) << stopped;
  EXPECT_TRUE(legal_text(Position::start(), bestmove(stopped))) << stopped;
}

// The score text ("cp 35", "mate 2") of the last info line with a score.
std::string last_score(const std::string& output) {
  std::string score;
  for (const std::string& l : lines_starting(output, "info ")) {
    const std::vector<std::string> t = tokens(l);
    for (std::size_t i = 0; i + 2 < t.size(); ++i)
      if (t[i] == "score") score = t[i + 1] + " " + t[i + 2];
  }
  return score;
}

TEST(UciEvalFile, TheShippedLearnedEvaluationIsTheDefault) {
  // The engine's search scores as the search with the shipped network
  // does, EvalFile none as the hand-written evaluation does, and after a
  // level's move the engine's own evaluation is back.
  auto reference = [&](std::shared_ptr<const nnue::Network> net) {
    Searcher searcher(16);
    searcher.set_network(std::move(net));
    Position pos = after("startpos", {"a2a3", "a7a6"});
    SearchLimits limits;
    limits.depth = 4;
    const SearchResult r = searcher.search(pos, limits);
    return std::make_pair(to_coordinate(r.best), score_text(r.score));
  };
  const auto learned = reference(load_nnue("default"));
  const auto hand = reference(nullptr);
  ASSERT_NE(learned.second, hand.second);  // the position tells them apart
  const std::string go = "position startpos moves a2a3 a7a6\ngo depth 4\n";
  const std::string uci = session("uci\n" + go);
  EXPECT_TRUE(contains(uci, "option name EvalFile type string default default")) << uci;
  EXPECT_EQ(last_score(uci), learned.second) << uci;
  EXPECT_EQ(bestmove(uci), learned.first);
  const std::string none = session("setoption name EvalFile value none\n" + go);
  EXPECT_TRUE(contains(none, "info string EvalFile none")) << none;
  EXPECT_EQ(last_score(none), hand.second) << none;
  EXPECT_EQ(bestmove(none), hand.first);
  const std::string back = session("setoption name EvalFile value none\nsetoption name EvalFile value default\n" + go);
  EXPECT_EQ(last_score(back), learned.second) << back;
  // A file that cannot be read is an error, and the evaluation before stays.
  const std::string bad =
      session("setoption name EvalFile value none\nsetoption name EvalFile value /nonexistent/x.unnue\n" + go);
  EXPECT_TRUE(contains(bad, "info string error EvalFile")) << bad;
  EXPECT_TRUE(contains(bad, "/nonexistent/x.unnue")) << bad;
  EXPECT_EQ(last_score(bad), hand.second) << bad;
  const std::string after_level =
      session("setoption name Level value novice\nposition startpos\ngo depth 2\nsetoption name Level value none\n"
              "ucinewgame\n" + go);
  EXPECT_EQ(last_score(after_level), learned.second) << after_level;
}

TEST(UciLevels, LimitStrengthPicksALevelWhenElosAreKnown) {
  bool any_elo = false;
  for (const Level& l : load_levels()) any_elo |= l.has_elo;
  for (const char* elo : {"0", "800", "1500", "3000"}) {
    SCOPED_TRACE(elo);
    const std::string out = session(std::string("setoption name UCI_LimitStrength value true\n") +
                                    "setoption name UCI_Elo value " + elo + "\nposition startpos\ngo depth 2\n");
    EXPECT_TRUE(lines_starting(out, "info string error").empty()) << out;
    EXPECT_EQ(contains(out, "info string playing as level "), any_elo) << out;
    EXPECT_TRUE(legal_text(Position::start(), bestmove(out)));
  }
  // Switched off again: no level.
  const std::string out = session(
      "setoption name UCI_LimitStrength value true\nsetoption name UCI_LimitStrength value false\n"
      "position fen K5pk/6pp/8/8/7p/8/8/CP6 w 0 1\ngo depth 2\n");
  EXPECT_EQ(bestmove(out), "a1e5");
}

// UCI_Elo picks among the bots the program can play: without network
// support a network bot nearest the Elo is passed over for the next one.
TEST(UciLevels, LimitStrengthPassesOverNetworkBotsWithoutNetworkSupport) {
  test::BotsFolder folder;
  folder.write("t-net", "name: t-net\ndescription: d\nstyle: network\n"
                        "spec: \"mcts:weights=nets/t.unn,playouts=2\"\norder: 4.5\nelo: 1500\n");
  const std::string input =
      "setoption name UCI_LimitStrength value true\nsetoption name UCI_Elo value 1500\nposition startpos\ngo depth 1\n";
  const std::string without = session(input);
  EXPECT_TRUE(lines_starting(without, "info string error").empty()) << without;
  EXPECT_FALSE(contains(without, "bot t-net")) << without;
  EXPECT_TRUE(legal_text(Position::start(), bestmove(without))) << without;
  std::vector<std::string> asked;
  const std::string with = session(input, test::fake_networks(asked));
  EXPECT_TRUE(contains(with, "info string playing as bot t-net (Elo 1500)")) << with;
}

TEST(UciOptions, HashThreadsAndNewGame) {
  const std::string out = session(
      "setoption name Hash value 2\nsetoption name Threads value 2\nucinewgame\nisready\n"
      "position startpos moves a2a3\ngo depth 3\n");
  EXPECT_TRUE(lines_starting(out, "info string error").empty()) << out;
  EXPECT_TRUE(legal_text(after("startpos", {"a2a3"}), bestmove(out)));
  // Option names are case-insensitive in UCI.
  const std::string out2 = session("setoption name multipv value 2\nposition startpos\ngo depth 1\n");
  EXPECT_TRUE(lines_starting(out2, "info string error").empty()) << out2;
  EXPECT_FALSE(lines_starting(out2, "info depth 1 seldepth").empty());
  bool second = false;
  for (const std::string& l : lines_starting(out2, "info depth 1 ")) second |= contains(l, " multipv 2 ");
  EXPECT_TRUE(second) << out2;
}

// No machine finishes a depth-60 search, nor an infinite one: a session
// that ignored quit or the end of its input would hang until ctest's
// timeout, so these need no clock.
TEST(UciStop, QuitEndsALongSearch) {
  const std::string out = session("position startpos\ngo depth 60\nquit\n");
  EXPECT_LE(lines_starting(out, "bestmove ").size(), 1u);
  EXPECT_TRUE(lines_starting(out, "info depth 60 ").empty()) << out;
}

TEST(UciStop, InfiniteSearchIsStoppedAtEndOfInput) {
  const std::string out = session("position startpos\ngo infinite\n");
  EXPECT_TRUE(legal_text(Position::start(), bestmove(out)));
}

TEST(UciStop, StopWhenIdleSaysNothing) {
  EXPECT_EQ(session("stop\nponderhit\nisready\n"), "readyok\n");
}

// A live input: lines arrive while the engine runs, as from a GUI's pipe.
class LiveInput : public std::streambuf {
 public:
  void feed(const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex_);
    data_ += text;
    ready_.notify_all();
  }
  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    ready_.notify_all();
  }

 protected:
  int_type underflow() override { return next(false); }
  int_type uflow() override { return next(true); }

 private:
  int_type next(bool advance) {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return pos_ < data_.size() || closed_; });
    if (pos_ >= data_.size()) return traits_type::eof();
    const char c = data_[pos_];
    if (advance) ++pos_;
    return traits_type::to_int_type(c);
  }
  std::mutex mutex_;
  std::condition_variable ready_;
  std::string data_;
  std::size_t pos_ = 0;
  bool closed_ = false;
};

// Output that can be read while the engine writes.
class SharedOutput : public std::streambuf {
 public:
  std::string text() {
    std::lock_guard<std::mutex> lock(mutex_);
    return text_;
  }
  // Waits until `part` shows up `count` times. No time bound: an engine that
  // never writes it hangs the test until ctest's timeout, which fails it.
  void wait_for(const std::string& part, std::size_t count = 1) {
    while (occurrences(text(), part) < count) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  static std::size_t occurrences(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
  }

 protected:
  int_type overflow(int_type c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    std::lock_guard<std::mutex> lock(mutex_);
    text_ += traits_type::to_char_type(c);
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    std::lock_guard<std::mutex> lock(mutex_);
    text_.append(s, static_cast<std::size_t>(n));
    return n;
  }

 private:
  std::mutex mutex_;
  std::string text_;
};

TEST(UciStop, GoInfiniteWaitsForStop) {
  LiveInput input_buf;
  SharedOutput output_buf;
  std::istream in(&input_buf);
  std::ostream out(&output_buf);
  std::thread engine([&] { run_uci(in, out); });

  input_buf.feed("uci\n");
  output_buf.wait_for("uciok");
  input_buf.feed("position startpos moves a2a3\ngo infinite\n");
  output_buf.wait_for("info depth 3 ");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  // An infinite search answers only after "stop", even at a mate or at
  // the depth cap; and "isready" is answered meanwhile.
  EXPECT_FALSE(contains(output_buf.text(), "bestmove")) << output_buf.text();
  input_buf.feed("isready\n");
  output_buf.wait_for("readyok");
  EXPECT_FALSE(contains(output_buf.text(), "bestmove"));
  input_buf.feed("stop\n");
  output_buf.wait_for("bestmove ");

  // The engine goes on: another search, then quit.
  input_buf.feed("go depth 2\n");
  output_buf.wait_for("bestmove ", 2);
  EXPECT_EQ(lines_starting(output_buf.text(), "bestmove ").size(), 2u) << output_buf.text();
  input_buf.feed("quit\n");
  engine.join();
  input_buf.close();

  const Position pos = after("startpos", {"a2a3"});
  for (const std::string& b : lines_starting(output_buf.text(), "bestmove "))
    EXPECT_TRUE(legal_text(pos, tokens(b)[1])) << b;
}

// Closing the pipe during an infinite search stops it (no hang).
TEST(UciStop, ClosedInputStopsAnInfiniteSearch) {
  LiveInput input_buf;
  SharedOutput output_buf;
  std::istream in(&input_buf);
  std::ostream out(&output_buf);
  std::thread engine([&] { run_uci(in, out); });
  input_buf.feed("position startpos\ngo infinite\n");
  output_buf.wait_for("info depth 2 ");
  input_buf.close();
  engine.join();  // an infinite search that ignored the closed pipe never returns
  EXPECT_TRUE(legal_text(Position::start(), bestmove(output_buf.text())));
}

}  // namespace
}  // namespace ultima

namespace ultima {
namespace {

TEST(UciMcts, BackendMctsSearchesWithTheMaterialEvaluator) {
  const std::string out = session(
      "uci\nsetoption name Backend value mcts\nsetoption name MultiPV value 2\nsetoption name UCI_ShowWDL value true\n"
      "position startpos moves a2a3\ngo nodes 300\n");
  EXPECT_TRUE(contains(out, "option name Backend type combo default alphabeta var alphabeta var mcts"));
  EXPECT_TRUE(contains(out, "info string mcts backend: material"));
  const std::vector<std::string> infos = lines_starting(out, "info depth");
  ASSERT_FALSE(infos.empty());
  EXPECT_TRUE(contains(infos.back(), " wdl ")) << infos.back();
  EXPECT_TRUE(contains(infos.back(), " multipv 2 ")) << infos.back();
  const std::vector<std::string> best = lines_starting(out, "bestmove ");
  ASSERT_EQ(best.size(), 1u);
  Position pos = Position::start();
  pos.make(parse_move(pos, "a2a3"));
  EXPECT_NO_THROW(parse_move(pos, tokens(best[0])[1])) << best[0];
}

TEST(UciMcts, AOneNodeSearchReportsTheRootsValue) {
  // White is a long leaper and more ahead: the root's own estimate favours
  // it, and the one-node search (no move visited) reports that estimate
  // rather than an unvisited move's empty statistics.
  const std::string out = session(
      "uci\nsetoption name Backend value mcts\nsetoption name UCI_ShowWDL value true\n"
      "position fen 4k3/8/8/8/8/8/PPPPPPPP/ILXKWXLC w 0 1\ngo nodes 1\n");
  const std::vector<std::string> infos = lines_starting(out, "info depth");
  ASSERT_FALSE(infos.empty()) << out;
  const std::vector<std::string> t = tokens(infos.back());
  const auto wdl = std::find(t.begin(), t.end(), "wdl");
  ASSERT_TRUE(t.end() - wdl > 3) << infos.back();
  EXPECT_GT(std::stoi(wdl[1]), std::stoi(wdl[3])) << infos.back();
  EXPECT_LT(std::stoi(wdl[2]), 1000) << infos.back();
  const auto cp = std::find(t.begin(), t.end(), "cp");
  ASSERT_NE(cp, t.end()) << infos.back();
  EXPECT_GT(std::stoi(cp[1]), 0) << infos.back();
}

// MateScan: the root's own evaluation proves a mate in one, so one node is
// enough; without it one node proves nothing.
TEST(UciMcts, MateScanFindsAMateInOneAtTheFirstNode) {
  const std::string setup = "uci\nsetoption name Backend value mcts\n";
  const std::string go = "position fen K5pk/6pp/8/8/7p/8/8/CP6 w 0 1\ngo nodes 1\n";
  const std::string on = session(setup + go);  // on by default
  EXPECT_TRUE(contains(on, "option name MateScan type check default true")) << on;
  ASSERT_FALSE(lines_starting(on, "info depth").empty()) << on;
  EXPECT_TRUE(contains(lines_starting(on, "info depth").back(), " score mate 1 ")) << on;
  EXPECT_EQ(bestmove(on), "a1e5");
  const std::string off = session(setup + "setoption name MateScan value false\n" + go);
  ASSERT_FALSE(lines_starting(off, "info depth").empty()) << off;
  EXPECT_FALSE(contains(lines_starting(off, "info depth").back(), " score mate ")) << off;
  const std::string bad = session("setoption name MateScan value maybe\nisready\n");
  EXPECT_TRUE(contains(bad, "info string error MateScan: expected true or false, got 'maybe'")) << bad;
  EXPECT_TRUE(contains(bad, "readyok"));
}

TEST(UciMcts, WeightsFileAsksTheNetworkFactoryPassedIn) {
  std::vector<std::string> asked;
  const NetworkFactory networks = test::fake_networks(asked);
  const std::string out = session(
      "setoption name Backend value mcts\nsetoption name WeightsFile value nets/b.unn\n"
      "setoption name Device value cuda:2\nposition startpos\ngo nodes 20\n",
      networks);
  ASSERT_EQ(asked.size(), 1u) << out;
  EXPECT_EQ(asked[0].rfind("weights=nets/b.unn,device=cuda:2,max_batch=", 0), 0u) << asked[0];
  EXPECT_TRUE(contains(out, "info string mcts backend: fake network (weights=nets/b.unn,device=cuda:2,")) << out;
  EXPECT_TRUE(contains(session("setoption name Device value gpu\n"), "info string error Device must be")) << out;
  EXPECT_FALSE(bestmove(out).empty()) << out;
}

TEST(UciMcts, RunDirPlaysTheRunsBestModel) {
  const test::TempDir dir("uci-rundir");
  std::filesystem::create_directories(dir.path() + "/models");
  { std::ofstream(dir.path() + "/models/best") << "3\n"; }
  { std::ofstream(dir.path() + "/models/model-000003.unn") << "x"; }
  std::vector<std::string> asked;
  const NetworkFactory networks = test::fake_networks(asked);
  const std::string out = session("setoption name Backend value mcts\nsetoption name RunDir value " + dir.path() +
                                      "\nposition startpos\ngo nodes 20\n",
                                  networks);
  ASSERT_EQ(asked.size(), 1u) << out;
  EXPECT_EQ(asked[0].rfind("weights=" + dir.path() + "/models/model-000003.unn,", 0), 0u) << asked[0];
  EXPECT_TRUE(contains(session("uci\n"), "option name RunDir type string"));
  EXPECT_FALSE(bestmove(out).empty()) << out;
  // A missing run is named, and the engine goes on.
  const std::string bad = session("setoption name RunDir value " + dir.path() + "/nope\nisready\n", networks);
  EXPECT_TRUE(contains(bad, "info string error run directory '" + dir.path() + "/nope' does not exist")) << bad;
  EXPECT_TRUE(contains(bad, "readyok"));
}

TEST(UciMcts, BadBackendAndMissingNetworkAreErrorsNotCrashes) {
  // No network factory passed in: asking for weights must fail cleanly, and
  // the engine must go on answering.
  const std::string out = session(
      "setoption name Backend value neural\nsetoption name Backend value mcts\n"
      "setoption name WeightsFile value /nonexistent/net.bin\nposition startpos\ngo nodes 50\nisready\n");
  EXPECT_TRUE(contains(out, "info string error Backend must be alphabeta or mcts"));
  EXPECT_TRUE(contains(out, "info string error cannot start the mcts backend"));
  EXPECT_TRUE(contains(out, "readyok"));
}

TEST(UciMcts, MctsPlayerSpecPlaysLegalMoves) {
  auto player = make_player("mcts:playouts=60");
  Position pos = Position::start();
  for (int i = 0; i < 4; ++i) {
    const MoveChoice c = player->choose(pos, 100 + i);
    MoveList list;
    generate_legal(pos, list);
    ASSERT_TRUE(std::find(list.begin(), list.end(), c.move) != list.end());
    pos.make(c.move);
  }
  EXPECT_THROW(make_player("mcts:playouts=60,weights=/nonexistent.bin"), std::runtime_error);
  EXPECT_THROW(make_player("mcts:bogus=1"), std::invalid_argument);
}

}  // namespace
}  // namespace ultima

namespace ultima {
namespace {

// The "info depth" lines before the first bestmove.
std::vector<std::string> first_search_infos(const std::string& out) {
  std::vector<std::string> infos;
  for (const std::string& l : lines_of(out)) {
    if (starts_with(l, "bestmove")) break;
    if (starts_with(l, "info depth")) infos.push_back(l);
  }
  return infos;
}

int info_value(const std::string& line, const std::string& key) {
  const std::vector<std::string> t = tokens(line);
  for (std::size_t i = 0; i + 1 < t.size(); ++i)
    if (t[i] == key) return std::stoi(t[i + 1]);
  ADD_FAILURE() << "no " << key << " in " << line;
  return -1;
}

TEST(UciScripts, BoundedSearchIsNotCutShortByLaterCommands) {
  // Scripts send their next commands at once: a bounded search still runs
  // to its limit and answers before they take effect.
  for (const char* next : {"position startpos moves a2a3\ngo depth 2\n", "setoption name MultiPV value 2\n",
                           "ucinewgame\n", "go depth 1\n"}) {
    SCOPED_TRACE(next);
    const std::string out = session(std::string("position startpos\ngo depth 5\n") + next);
    const std::vector<std::string> infos = first_search_infos(out);
    ASSERT_FALSE(infos.empty()) << out;
    EXPECT_EQ(info_value(infos.back(), "depth"), 5) << out;
    EXPECT_TRUE(legal_text(Position::start(), tokens(lines_starting(out, "bestmove ")[0])[1]));
  }
}

TEST(UciGo, SearchmovesThroughBothBackends) {
  const std::set<std::string> allowed = {"a2a3", "h2h4"};
  for (const char* setup : {"", "setoption name Backend value mcts\n"}) {
    SCOPED_TRACE(setup);
    const std::string go = *setup ? "go nodes 300 searchmoves a2a3 h2h4\n" : "go depth 4 searchmoves a2a3 h2h4\n";
    const std::string out = session(std::string(setup) + "setoption name MultiPV value 3\nposition startpos\n" + go);
    EXPECT_TRUE(lines_starting(out, "info string error").empty()) << out;
    EXPECT_TRUE(allowed.count(bestmove(out))) << out;
    std::set<std::string> shown;
    for (const std::string& l : lines_starting(out, "info depth")) {
      const std::vector<std::string> t = tokens(l);
      const auto pv = std::find(t.begin(), t.end(), "pv");
      ASSERT_NE(pv + 1, t.end()) << l;
      shown.insert(pv[1]);
      EXPECT_LE(info_value(l, "multipv"), 2) << "only two moves to show: " << l;
    }
    EXPECT_EQ(shown, allowed) << out;
  }
}

TEST(UciGo, MateSearchFindsAMateInTwoOrSaysThereIsNone) {
  const std::string mate_in_two = "position fen 8/8/4X2x/6P1/4l3/1K6/8/2k5 w 0 1\n";
  for (const char* setup : {"", "setoption name Backend value mcts\n"}) {
    SCOPED_TRACE(setup);
    const std::string out = session(std::string(setup) + mate_in_two + "go mate 2\n");
    EXPECT_TRUE(contains(lines_starting(out, "info depth").back(), " score mate 2 ")) << out;
    EXPECT_EQ(lines_starting(out, "info string mate in 2 found").size(), 1u) << out;
    EXPECT_EQ(bestmove(out), "e6e2");
    // There is no mate in one here, and the search says so.
    const std::string none = session(std::string(setup) + mate_in_two + "go mate 1\n");
    EXPECT_EQ(lines_starting(none, "info string no mate in 1").size(), 1u) << none;
    EXPECT_FALSE(contains(none, "score mate 1 ")) << none;
    EXPECT_EQ(lines_starting(none, "bestmove ").size(), 1u);
  }
}

TEST(UciMcts, MateInTwoFoundByTheTreeSearch) {
  const std::string out = session(
      "setoption name Backend value mcts\nposition fen 8/8/4X2x/6P1/4l3/1K6/8/2k5 w 0 1\ngo nodes 20000\n");
  EXPECT_TRUE(contains(lines_starting(out, "info depth").back(), " score mate 2 ")) << out;
  EXPECT_EQ(bestmove(out), "e6e2");
}

TEST(UciOptions, ShowWdlForAlphaBeta) {
  const std::string off = session("position startpos\ngo depth 2\n");
  for (const std::string& l : lines_starting(off, "info depth")) EXPECT_FALSE(contains(l, " wdl ")) << l;
  const std::string on = session("uci\nsetoption name UCI_ShowWDL value true\nposition startpos\ngo depth 2\n");
  EXPECT_EQ(lines_starting(on, "option name UCI_ShowWDL type check default false").size(), 1u);
  const std::vector<std::string> infos = lines_starting(on, "info depth");
  ASSERT_FALSE(infos.empty());
  for (const std::string& l : infos) {
    const int w = info_value(l, "wdl");
    const std::vector<std::string> t = tokens(l);
    const auto at = std::find(t.begin(), t.end(), "wdl");
    EXPECT_EQ(w + std::stoi(at[2]) + std::stoi(at[3]), 1000) << l;
  }
  // A mate is a sure win.
  const std::string mate =
      session("setoption name UCI_ShowWDL value true\nposition fen K5pk/6pp/8/8/7p/8/8/CP6 w 0 1\ngo depth 3\n");
  EXPECT_TRUE(contains(lines_starting(mate, "info depth").back(), " score mate 1 wdl 1000 0 0 ")) << mate;
  EXPECT_EQ(lines_starting(session("setoption name UCI_ShowWDL value maybe\n"), "info string error").size(), 1u);
}

// The tree search's W/D/L are its own statistics: the root move's
// averages, or the exact result where proven. Shown only when asked for,
// as UCI has it, and summing to 1000 whatever the rounding.
TEST(UciOptions, ShowWdlForMcts) {
  const std::string off = session("setoption name Backend value mcts\nposition startpos\ngo nodes 200\n");
  const std::vector<std::string> plain = lines_starting(off, "info depth");
  ASSERT_FALSE(plain.empty()) << off;
  for (const std::string& l : plain) EXPECT_FALSE(contains(l, " wdl ")) << l;

  const std::string on = session(
      "setoption name Backend value mcts\nsetoption name UCI_ShowWDL value true\nsetoption name MultiPV value 3\n"
      "position startpos\ngo nodes 200\n");
  const std::vector<std::string> infos = lines_starting(on, "info depth");
  ASSERT_FALSE(infos.empty()) << on;
  for (const std::string& l : infos) {
    const std::vector<std::string> t = tokens(l);
    const auto at = std::find(t.begin(), t.end(), "wdl");
    ASSERT_TRUE(t.end() - at > 3) << l;
    const int w = std::stoi(at[1]), d = std::stoi(at[2]), lo = std::stoi(at[3]);
    EXPECT_TRUE(w >= 0 && d >= 0 && lo >= 0) << l;
    EXPECT_EQ(w + d + lo, 1000) << l;
    // The order of UCI: wdl comes after the score, before nodes.
    EXPECT_LT(std::find(t.begin(), t.end(), "score") - t.begin(), at - t.begin()) << l;
    EXPECT_LT(at - t.begin(), std::find(t.begin(), t.end(), "nodes") - t.begin()) << l;
  }
  // A proven mate is a sure win for the mover, and a sure loss for the side mated.
  const std::string mate = session(
      "setoption name Backend value mcts\nsetoption name UCI_ShowWDL value true\n"
      "position fen K5pk/6pp/8/8/7p/8/8/CP6 w 0 1\ngo nodes 400\n");
  EXPECT_TRUE(contains(lines_starting(mate, "info depth").back(), " score mate 1 wdl 1000 0 0 ")) << mate;
  const std::string mated = session(
      "setoption name Backend value mcts\nsetoption name UCI_ShowWDL value true\n"
      "position fen 4k1l1/4l3/P7/8/5Kc1/P7/1pW5/8 b 0 1 moves e7e3\ngo nodes 20000\n");
  EXPECT_TRUE(contains(lines_starting(mated, "info depth").back(), " score mate -1 wdl 0 0 1000 ")) << mated;
}

TEST(UciPonder, PonderhitSearchesOnTheRealLimitsAndAnswersOnce) {
  const std::string out = session("uci\nsetoption name Ponder value true\nposition startpos\ngo ponder depth 3\nponderhit\n");
  EXPECT_EQ(lines_starting(out, "option name Ponder type check").size(), 1u);
  const std::vector<std::string> best = lines_starting(out, "bestmove ");
  ASSERT_EQ(best.size(), 1u) << out;
  EXPECT_TRUE(legal_text(Position::start(), tokens(best[0])[1]));
  // The answer comes from the search after ponderhit, limited to depth 3.
  EXPECT_EQ(info_value(lines_starting(out, "info depth").back(), "depth"), 3) << out;
  // "stop" while pondering answers at once, as UCI asks.
  const std::string stopped = session("position startpos\ngo ponder depth 3\nstop\nisready\n");
  EXPECT_EQ(lines_starting(stopped, "bestmove ").size(), 1u) << stopped;
  // The same with the tree search.
  const std::string mcts =
      session("setoption name Backend value mcts\nposition startpos\ngo ponder nodes 200\nponderhit\n");
  ASSERT_EQ(lines_starting(mcts, "bestmove ").size(), 1u) << mcts;
  // Pondering grew the tree that the real search goes on with.
  EXPECT_GE(info_value(lines_starting(mcts, "info depth").back(), "nodes"), 200) << mcts;
}

TEST(UciPonder, PonderhitWithoutPonderingIsIgnored) {
  EXPECT_EQ(session("position startpos\nponderhit\nisready\n"), "readyok\n");
}

TEST(MctsClock, TheSearchReportsATimeWithinTheClock) {
  // The time the search reports in its last info line, for clocks where the
  // old share (a 30th plus the increment, uncapped) would lose on time.
  for (const char* go : {"go wtime 400 btime 400 winc 100000 binc 100000", "go winc 300 binc 300",
                         "go wtime 600 btime 600 movestogo 1"}) {
    SCOPED_TRACE(go);
    const std::string out = session(std::string("setoption name Backend value mcts\nposition startpos\n") + go + "\n");
    ASSERT_EQ(lines_starting(out, "bestmove ").size(), 1u) << out;
    const std::vector<std::string> infos = lines_starting(out, "info depth");
    ASSERT_FALSE(infos.empty()) << out;
    const std::int64_t clock = contains(go, "wtime 400") ? 400 : contains(go, "wtime 600") ? 600 : 300;
    EXPECT_LT(info_value(infos.back(), "time"), clock) << infos.back();
  }
}

// The UCI options Bot and UCI_Elo over a bot catalogue of its own.

TEST(BotUci, UciEloPicksTheNearestBot) {
  test::BotsFolder folder;
  const std::vector<Level> levels = load_levels();
  ASSERT_GE(levels.size(), 2u);
  const int a = levels[0].elo, b = levels[1].elo;
  const int middle = (a + b) / 2;
  folder.write("between", "name: between\ndescription: d\nstyle: s\nspec: random\norder: 1.5\nelo: " +
                              std::to_string(middle) + "\n");
  const auto playing_as = [](int elo) {
    const std::string out = session("setoption name UCI_LimitStrength value true\nsetoption name UCI_Elo value " +
                                        std::to_string(elo) + "\n");
    const std::size_t at = out.rfind("playing as ");
    if (at == std::string::npos) return std::string();
    std::istringstream in(out.substr(at + 11));
    std::string kind, name;
    in >> kind >> name;  // "level NAME" or "bot NAME"
    return name;
  };
  EXPECT_EQ(playing_as(middle), "between");
  EXPECT_EQ(playing_as(middle + 1), "between");
  EXPECT_EQ(playing_as(a - 1000), levels[0].name);
  EXPECT_EQ(playing_as(b + (b - middle) / 2 + 1), levels[1].name);
  const Level& strongest = *std::max_element(levels.begin(), levels.end(),
                                             [](const Level& x, const Level& y) { return x.elo < y.elo; });
  EXPECT_EQ(playing_as(1000000), strongest.name);
  // The handshake lists the bot and the Elo range covers the catalogue.
  const std::string hello = session("uci\n");
  EXPECT_NE(hello.find("option name Bot type combo default none var none"), std::string::npos);
  EXPECT_NE(hello.find(" var between"), std::string::npos);
}

TEST(BotUci, BotOptionPlaysAsThatBot) {
  test::BotsFolder folder;
  folder.write("mover", "name: mover\ndescription: d\nstyle: s\nspec: random\n");
  folder.write("shallow", "name: shallow\ndescription: d\nstyle: s\nspec: search:depth=1,skill=0\n");
  Position pos = Position::start();
  pos.make(parse_move(pos, "a2a3"));
  const std::string expected = to_coordinate(RandomPlayer().choose(pos, pos.key() ^ 0x1EE7).move);
  const std::string out = session("setoption name Bot value mover\nposition startpos moves a2a3\ngo depth 5\n");
  EXPECT_NE(out.find("info string playing as bot mover"), std::string::npos) << out;
  EXPECT_EQ(bestmove(out), expected) << out;
  // A searching bot plays within its own budget, reporting its search.
  const std::string searched = session("setoption name Bot value shallow\nposition startpos\ngo depth 6\n");
  EXPECT_NE(searched.find("info depth 1 "), std::string::npos) << searched;
  EXPECT_EQ(searched.find("info depth 2 "), std::string::npos) << searched;
  EXPECT_TRUE(test::is_legal(Position::start(), parse_move(Position::start(), bestmove(searched))));
  // "none" goes back to full strength; unknown names are errors.
  const std::string off = session("setoption name Bot value mover\nsetoption name Bot value none\ngo depth 2\n");
  EXPECT_NE(off.find("info depth 2 "), std::string::npos) << off;
  // A bot that cannot start (a network bot in a program without networks)
  // is reported, and the engine's search still answers with a legal move.
  folder.write("netbot", "name: netbot\ndescription: d\nstyle: s\nspec: mcts:weights=model.unn\n");
  const std::string failed = session("setoption name Bot value netbot\nposition startpos\ngo\n");
  EXPECT_NE(failed.find("info string error cannot start bot netbot"), std::string::npos) << failed;
  EXPECT_TRUE(test::is_legal(Position::start(), parse_move(Position::start(), bestmove(failed)))) << failed;
  const std::string bad = session("setoption name Bot value nobody\n");
  EXPECT_NE(bad.find("info string error unknown bot 'nobody'"), std::string::npos) << bad;
}

}  // namespace
}  // namespace ultima
