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
