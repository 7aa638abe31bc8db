// The fast bitboard generator against the plain one in tests/reference/
// (a 64-square array, no shared code) on thousands of seeded random
// positions under every preset: the same legal moves with the same captures,
// and the same check verdicts.
#include <gtest/gtest.h>

#include "reference/reference_movegen.h"
#include "test_util.h"

namespace ultima {
namespace {

refgen::Board to_reference_board(const Position& pos) {
  refgen::Board board;
  for (Square s = 0; s < 64; ++s) board[s] = piece_char(pos.piece_on(s));
  return board;
}

refgen::Rules to_reference_rules(const Rules& rules) {
  refgen::Rules r;
  r.leaper_single = rules.leaper == LeaperRule::kSingle;
  r.chameleon_shape = rules.chameleon == ChameleonRule::kShape;
  r.removal_allowed = rules.removal == RemovalRule::kAllowed;
  r.neutralized = rules.frozen_immobilizer == FrozenImmobilizerRule::kNeutralized;
  r.king_capture = rules.objective == Objective::kKingCapture;
  return r;
}

void expect_same_as_reference(const Position& pos) {
  const refgen::Board board = to_reference_board(pos);
  const refgen::Rules rules = to_reference_rules(pos.rules());
  const bool white = pos.side_to_move() == kWhite;
  ASSERT_EQ(test::move_lines(pos), refgen::legal_moves(board, white, rules))
      << pos.fen() << " under " << pos.rules().name();
  ASSERT_EQ(pos.in_check(kWhite), refgen::in_check(board, true, rules)) << pos.fen();
  ASSERT_EQ(pos.in_check(kBlack), refgen::in_check(board, false, rules)) << pos.fen();
}

class ReferenceCompare : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceCompare, RandomGamesAgreeAtEveryPly) {
  const Rules rules = Rules::preset(GetParam());
  std::mt19937_64 rng(1000 + std::hash<std::string>{}(GetParam()) % 1000);
  int positions = 0;
  for (int game = 0; game < 40; ++game) {
    Position pos = Position::start(rules);
    for (int ply = 0; ply < 150 && !game_status(pos).over(); ++ply) {
      expect_same_as_reference(pos);
      if (HasFatalFailure()) return;
      ++positions;
      MoveList list;
      generate_legal(pos, list);
      // Prefer captures a third of the time so that games thin out and open up.
      std::vector<Move> captures;
      for (const Move& m : list)
        if (m.captures) captures.push_back(m);
      if (!captures.empty() && rng() % 3 == 0)
        pos.make(captures[rng() % captures.size()]);
      else
        pos.make(list[rng() % list.size()]);
    }
  }
  EXPECT_GT(positions, 2000);
}

TEST_P(ReferenceCompare, RandomPlacementsAgree) {
  // Scattered pieces make the crowded cases that games rarely reach:
  // immobilizers side by side, chameleons next to leapers and kings.
  const Rules rules = Rules::preset(GetParam());
  std::mt19937_64 rng(2000 + std::hash<std::string>{}(GetParam()) % 1000);
  for (int i = 0; i < 2000; ++i) {
    expect_same_as_reference(test::random_placement(rules, rng, 6 + i % 24));
    if (HasFatalFailure()) return;
  }
}

TEST_P(ReferenceCompare, PlayedMovesGiveTheSameBoard) {
  const Rules rules = Rules::preset(GetParam());
  std::mt19937_64 rng(3000 + std::hash<std::string>{}(GetParam()) % 1000);
  for (int i = 0; i < 300; ++i) {
    Position pos = test::random_placement(rules, rng, 20);
    MoveList list;
    generate_legal(pos, list);
    for (const Move& m : list) {
      const refgen::Board expected =
          refgen::play(to_reference_board(pos), pos.side_to_move() == kWhite, to_coordinate(m),
                       to_reference_rules(rules));
      pos.make(m);
      ASSERT_EQ(to_reference_board(pos), expected) << to_coordinate(m);
      pos.unmake();
    }
  }
}

// perft walked with the plain generator alone.
std::uint64_t reference_perft(const refgen::Board& board, bool white, const refgen::Rules& rules,
                              int depth) {
  if (depth == 0) return 1;
  std::uint64_t nodes = 0;
  for (const std::string& line : refgen::legal_moves(board, white, rules)) {
    const std::string coord = line.substr(0, line.find(' '));
    nodes += reference_perft(refgen::play(board, white, coord, rules), !white, rules, depth - 1);
  }
  return nodes;
}

TEST(ReferencePerft, KingCaptureStopsAtATakenKing) {
  // Positions where a king can be taken within the first plies, each side
  // keeping other pieces that could move on if the game went on.
  const Rules zillions = Rules::preset("zillions");
  const char* fens[] = {
      "8/8/8/8/8/1k6/8/K6P w 0 1",                  // Ka1 next to kb3's squares
      "7p/8/3k4/8/3K4/8/P7/8 w 0 1",                // kings two apart on the d-file
      "8/8/8/c1PpkpP1/4X3/4w3/8/K7 w 0 1",          // Xe4-e5 takes the king at once
      "8/8/8/8/7P/8/1l6/Kk6 b 0 1",                 // kb1xa1 at once, Black to move
  };
  for (const char* fen : fens) {
    Position pos = Position::from_fen(fen, zillions);
    const refgen::Board board = to_reference_board(pos);
    const bool white = pos.side_to_move() == kWhite;
    for (int depth = 1; depth <= 3; ++depth)
      EXPECT_EQ(perft(pos, depth), reference_perft(board, white, to_reference_rules(zillions), depth))
          << fen << " depth " << depth;
  }
}

INSTANTIATE_TEST_SUITE_P(Presets, ReferenceCompare,
                         ::testing::Values("abbott1963", "abbott1962", "cambridge", "boardspace",
                                           "zillions"));

}  // namespace
}  // namespace ultima
