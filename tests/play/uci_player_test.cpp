// Another program as a player (uci:COMMAND), against small shell scripts
// that speak just enough UCI: the handshake, options, the game sent as a
// start FEN and moves, the limit, the answer read back with its score; and
// every way such an engine can fail, each an error naming the command.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "engine/play/player_spec.h"
#include "engine/play/uci_player.h"
#include "engine/rules/rules.h"

namespace ultima {
namespace {

namespace fs = std::filesystem;

class UciPlayerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ultima_uci_player_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A script answering "go" with `go_answer` (lines), logging what it reads.
  std::string engine(const std::string& go_answer) {
    const fs::path script = dir_ / "engine.sh";
    std::ofstream(script) << "log=\"$1\"\n"
                             "while IFS= read -r line; do\n"
                             "  echo \"$line\" >> \"$log\"\n"
                             "  case \"$line\" in\n"
                             "    uci) echo 'id name Fake Engine'; echo 'option name UCI_Variant type combo default "
                             "abbott1963 var abbott1963 var cambridge'; echo uciok;;\n"
                             "    isready) echo readyok;;\n"
                             "    go*) " + go_answer + ";;\n"
                             "    quit) exit 0;;\n"
                             "  esac\n"
                             "done\n";
    return "sh " + script.string() + " " + (dir_ / "log").string();
  }

  std::string log() const {
    std::ifstream in(dir_ / "log");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST_F(UciPlayerTest, PlaysTheEnginesMoveAndTellsItTheWholeGame) {
  const std::string command = engine("echo 'info depth 3 score cp 42 nodes 99 pv a2a3'; echo 'bestmove a2a3'");
  std::unique_ptr<Player> player = make_player("uci:depth=3,option.Hash=8:" + command);
  EXPECT_EQ(player->name(), "Fake Engine");
  player->new_game();
  Position pos = Position::start();
  const MoveChoice c = player->choose(pos, 1);
  EXPECT_EQ(to_coordinate(c.move), "a2a3");
  EXPECT_EQ(c.score_cp, 42);
  EXPECT_EQ(c.depth, 3);
  EXPECT_EQ(c.nodes, 99u);
  // Later in the game the engine gets the start and every move; a2a3 is
  // then no longer legal, and saying it is an error.
  pos.make(parse_coordinate(pos, "a2a3"));
  pos.make(parse_coordinate(pos, "a7a6"));
  const std::string e = error_of([&] { player->choose(pos, 2); });
  EXPECT_TRUE(contains(e, "'bestmove a2a3', not a legal move")) << e;
  EXPECT_TRUE(contains(e, command)) << e;
  const std::string sent = log();
  for (const std::string& line :
       {std::string("uci\n"), std::string("setoption name Hash value 8\n"), std::string("ucinewgame\n"),
        std::string("setoption name UCI_Variant value abbott1963\n"),
        "position fen " + Position::start().fen() + "\n", std::string("go depth 3\n"),
        "position fen " + Position::start().fen() + " moves a2a3 a7a6\n"})
    EXPECT_TRUE(contains(sent, line)) << line << " not in:\n" << sent;
}

TEST_F(UciPlayerTest, AnEngineThatExitsMidGameIsAnError) {
  std::unique_ptr<Player> player = make_player("uci:" + engine("exit 3"));
  Position pos = Position::start();
  const std::string e = error_of([&] { player->choose(pos, 1); });
  EXPECT_TRUE(contains(e, "exited with status 3 while waiting for 'bestmove'")) << e;
}

TEST_F(UciPlayerTest, AnEngineThatCannotStartOrStaysSilentIsAnError) {
  const std::string missing = error_of([] { make_player("uci:/nonexistent/engine --uci"); });
  EXPECT_TRUE(contains(missing, "uci engine '/nonexistent/engine --uci'")) << missing;
  EXPECT_TRUE(contains(missing, "command not found")) << missing;
  const std::string silent = error_of([] { make_player("uci:timeout_ms=200:cat > /dev/null"); });
  EXPECT_TRUE(contains(silent, "no 'uciok' within 200 ms")) << silent;
}

TEST(UciPlayerSpec, BadSpecsAreErrors) {
  EXPECT_TRUE(contains(error_of([] { UciEngineSettings::parse(""); }), "no command"));
  EXPECT_TRUE(contains(error_of([] { UciEngineSettings::parse("depth=x:engine"); }), "depth must be a positive integer"));
  EXPECT_TRUE(contains(error_of([] { UciEngineSettings::parse("depth=3"); }), "':COMMAND'"));
  EXPECT_TRUE(contains(error_of([] { UciEngineSettings::parse("depth=3,speed=2:engine"); }), "unknown key 'speed'"));
  const UciEngineSettings plain = UciEngineSettings::parse("./engine --flag");
  EXPECT_EQ(plain.command, "./engine --flag");
  EXPECT_EQ(plain.movetime_ms, 100);
  const UciEngineSettings keyed = UciEngineSettings::parse("nodes=500,option.Threads=2:./engine");
  EXPECT_EQ(keyed.command, "./engine");
  EXPECT_EQ(keyed.nodes, 500u);
  EXPECT_EQ(keyed.movetime_ms, 0);
  EXPECT_EQ(keyed.options.at("Threads"), "2");
}

}  // namespace
}  // namespace ultima
