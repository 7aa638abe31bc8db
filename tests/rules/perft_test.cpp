// perft from the start positions against values two independent outside
// implementations agree on (RULES.md presets).
#include <gtest/gtest.h>

#include "test_util.h"

namespace ultima {
namespace {

std::uint64_t perft_of(const char* rules, int depth) {
  Position pos = Position::start(Rules::parse(rules));
  return perft(pos, depth);
}

TEST(Perft, Abbott1963StartDepths1To4) {
  EXPECT_EQ(perft_of("abbott1963", 1), 32u);
  EXPECT_EQ(perft_of("abbott1963", 2), 944u);
  EXPECT_EQ(perft_of("abbott1963", 3), 42762u);
  EXPECT_EQ(perft_of("abbott1963", 4), 1850161u);
}

TEST(Perft, ZillionsDepth4LetsKingsStepIntoLeaperLines) {
  EXPECT_EQ(perft_of("zillions", 4), 1850197u);
}

TEST(Perft, KingCaptureCountsNothingPastATakenKing) {
  // zillions, Ka1 Ph1 against kb3: after Ka1-a2 Black's king may take it on
  // a2. Below that move perft finds nothing, though White's pawn could still
  // move; below every other Black move it finds White's replies.
  Position pos = Position::from_fen("8/8/8/8/8/1k6/8/K6P w 0 1", Rules::preset("zillions"));
  pos.make(parse_move(pos, "a1a2"));
  bool saw_capture = false;
  for (const DivideEntry& e : perft_divide(pos, 2)) {
    if (to_coordinate(e.move) == "b3a2") {
      saw_capture = true;
      EXPECT_EQ(e.nodes, 0u);
    } else {
      EXPECT_GT(e.nodes, 0u) << to_coordinate(e.move);
    }
  }
  EXPECT_TRUE(saw_capture);
  pos.make(parse_move(pos, "b3a2"));
  for (int depth = 1; depth <= 3; ++depth) EXPECT_EQ(perft(pos, depth), 0u) << depth;
  EXPECT_EQ(perft(pos, 0), 1u);  // the final position itself
}

TEST(Perft, Abbott1962Depth3) { EXPECT_EQ(perft_of("abbott1962", 3), 42738u); }

TEST(Perft, DivideSumsToPerftAndLeavesPositionUnchanged) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20; ++i) {
    Position pos = test::random_game_position(Rules{}, rng, 30);
    const std::string fen = pos.fen();
    const std::uint64_t key = pos.key();
    std::uint64_t sum = 0;
    for (const DivideEntry& e : perft_divide(pos, 2)) sum += e.nodes;
    EXPECT_EQ(sum, perft(pos, 2));
    EXPECT_EQ(pos.fen(), fen);
    EXPECT_EQ(pos.key(), key);
  }
}

TEST(Perft, BulkCountMatchesMakingEveryLeafMove) {
  // count_legal at the last ply must agree with generating and playing.
  std::mt19937_64 rng(11);
  for (const Rules& rules : test::all_presets()) {
    for (int i = 0; i < 30; ++i) {
      Position pos = test::random_game_position(rules, rng, 40);
      MoveList list;
      generate_legal(pos, list);
      EXPECT_EQ(count_legal(pos), list.size()) << pos.fen();
      EXPECT_EQ(has_legal_move(pos), !list.empty()) << pos.fen();
    }
  }
}

}  // namespace
}  // namespace ultima
