// replay_game: the one replay of a game from its start and its moves that
// every front end and the puzzles use, and its one error format.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/rules/rules.h"

namespace ultima {
namespace {

TEST(Replay, PositionsAndMovesOfEveryTurn) {
  const Position start = start_position("startpos", Rules{});
  EXPECT_EQ(start.fen(), Position::start().fen());
  EXPECT_EQ(start_position("", Rules{}).fen(), Position::start().fen());
  const ReplayedGame g = replay_game(start, {"d2d5", "e7e4", "a2a3"});
  ASSERT_EQ(g.positions.size(), 4u);
  ASSERT_EQ(g.moves.size(), 3u);
  Position pos = Position::start();
  for (std::size_t i = 0; i < g.moves.size(); ++i) {
    EXPECT_EQ(g.positions[i].fen(), pos.fen());
    EXPECT_EQ(g.moves[i], parse_coordinate(pos, to_coordinate(g.moves[i])));
    pos.make(g.moves[i]);
  }
  EXPECT_EQ(g.last().fen(), pos.fen());
  EXPECT_EQ(replay_game(start, {}).positions.size(), 1u);
}

// The message every caller shows, and the parts apart.
void expect_refused(const Position& start, const std::vector<std::string>& moves, const std::string& list,
                    std::size_t index, const std::string& prefix, const std::string& problem_part) {
  try {
    replay_game(start, moves, list);
    ADD_FAILURE() << "accepted";
  } catch (const ReplayError& e) {
    EXPECT_EQ(e.index, index);
    EXPECT_EQ(e.text, moves[index]);
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
    EXPECT_NE(e.problem.find(problem_part), std::string::npos) << e.problem;
    EXPECT_EQ(std::string(e.what()), prefix + e.problem);
  }
}

TEST(Replay, TheMoveAtFaultIsNamedByItsIndexAndText) {
  const Position start = Position::start();
  expect_refused(start, {"d2d5", "e7e4", "a1a1"}, "moves", 2, "moves[2] 'a1a1': ", "");
  expect_refused(start, {"zz"}, "solution", 0, "solution[0] 'zz': ", "");
  // A long text is cut in the message, whole in the error's text.
  const std::string junk(60, 'q');
  expect_refused(start, {junk}, "moves", 0, "moves[0] '" + junk.substr(0, 40) + "...': ", "");
  // A move after the game's end: d4g7 mates.
  const Position mate = start_position("6pk/5K1p/8/8/3W4/2p5/8/8 w 0 1", Rules{});
  EXPECT_TRUE(game_status(replay_game(mate, {"d4g7"}).last()).over());
  expect_refused(mate, {"d4g7", "h7h6"}, "moves", 1, "moves[1] 'h7h6': ", "the game has already ended (checkmate)");
  EXPECT_THROW(start_position("8/8/8/8 w 0 1", Rules{}), FenError);
}

}  // namespace
}  // namespace ultima
