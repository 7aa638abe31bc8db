// FEN in and out, the incremental Zobrist key, make/unmake.
#include <gtest/gtest.h>

#include "test_util.h"

namespace ultima {
namespace {

TEST(Position, StartFenRoundTripsForEveryPreset) {
  for (const Rules& rules : test::all_presets()) {
    const Position pos = Position::start(rules);
    EXPECT_EQ(pos.fen(), rules.start_fen());
  }
}

TEST(Position, TheDefaultRulesAreThePresetOfRulesDefaults) {
  // kDefaultRules, the name every command assumes, is the preset Rules{} is.
  EXPECT_EQ(Rules::parse(kDefaultRules), Rules{});
  EXPECT_EQ(Rules{}.name(), kDefaultRules);
}

TEST(Position, StartPositionsOfTheSetups) {
  const Position rotated = Position::start(Rules::preset("abbott1963"));
  EXPECT_EQ(rotated.king_square(kWhite), parse_square("d1"));
  EXPECT_EQ(rotated.king_square(kBlack), parse_square("e8"));
  EXPECT_EQ(rotated.piece_on(parse_square("a1")), make_piece(kWhite, kImmobilizer));
  EXPECT_EQ(rotated.piece_on(parse_square("h8")), make_piece(kBlack, kImmobilizer));
  const Position chess_kings = Position::start(Rules::preset("abbott1962"));
  EXPECT_EQ(chess_kings.king_square(kWhite), parse_square("e1"));
  EXPECT_EQ(chess_kings.piece_on(parse_square("d1")), make_piece(kWhite, kWithdrawer));
  EXPECT_EQ(chess_kings.king_square(kBlack), parse_square("e8"));
  const Position mirror = Position::start(Rules::preset("cambridge"));
  EXPECT_EQ(mirror.king_square(kBlack), parse_square("d8"));
  EXPECT_EQ(mirror.piece_on(parse_square("a8")), make_piece(kBlack, kImmobilizer));
  EXPECT_EQ(mirror.piece_on(parse_square("h8")), make_piece(kBlack, kCoordinator));
}

TEST(Position, FenRoundTripsOnRandomPositions) {
  std::mt19937_64 rng(1);
  for (const Rules& rules : test::all_presets()) {
    for (int i = 0; i < 200; ++i) {
      const Position pos = test::random_game_position(rules, rng, 1 + i % 80);
      const Position again = Position::from_fen(pos.fen(), rules);
      EXPECT_EQ(again.fen(), pos.fen());
      EXPECT_EQ(again.key(), pos.key()) << pos.fen();
    }
  }
}

TEST(Position, FenAcceptsShortAndChessStyleForms) {
  const Position full = Position::from_fen("clxwkxli/pppppppp/8/8/8/8/PPPPPPPP/ILXKWXLC w 0 1");
  EXPECT_EQ(Position::from_fen("clxwkxli/pppppppp/8/8/8/8/PPPPPPPP/ILXKWXLC w").fen(), full.fen());
  EXPECT_EQ(Position::from_fen("clxwkxli/pppppppp/8/8/8/8/PPPPPPPP/ILXKWXLC w - - 0 1").fen(), full.fen());
  EXPECT_EQ(Position::from_fen("  4k3/8/8/8/8/8/8/3K4   b 12 40 ").fen(), "4k3/8/8/8/8/8/8/3K4 b 12 40");
}

TEST(Position, MalformedFenNamesTheProblem) {
  struct Case {
    const char* fen;
    const char* message_part;
  };
  const Case cases[] = {
      {"", "empty"},
      {"4k3/8/8/8/8/8/8/3K4", "side to move"},
      {"4k3/8/8/8/8/8/8/3K4 x 0 1", "side to move"},
      {"4k3/8/8/8/8/8/8/3K3 w 0 1", "rank 1 has 7 squares"},
      {"4k3/8/8/8/8/8/8/3K5 w 0 1", "more than 8 squares"},
      {"4k3/8/8/8/8/8/3K4 w 0 1", "7 ranks"},
      {"4k3/8/8/8/8/8/8/8/3K4 w 0 1", "more than 8 ranks"},
      {"4k3/8/8/8/8/8/8/3Q4 w 0 1", "unknown piece letter 'Q'"},
      {"8/8/8/8/8/8/8/3K4 w 0 1", "no Black king"},
      {"4k3/8/8/8/8/8/8/3KK3 w 0 1", "2 White kings"},
      {"4k3/8/8/8/8/8/8/3K4 w -1 1", "halfmove counter"},
      {"4k3/8/8/8/8/8/8/3K4 w 0 0", "move number must be at least 1"},
      {"4k3/8/8/8/8/8/8/3K4 w 0 1 extra", "fields"},
      {"4k3/8/8/8/8/8/8/3K4 w K - 0 1", "castling"},
      {"4k3/8/8/8/8/8/8/3K4 w 99999999999 1", "halfmove counter"},
      // White's king can step onto Black's: Black to move would be in check.
      {"8/8/8/8/8/8/3k4/3K4 w 0 1", "not to move (Black) is in check"},
  };
  for (const Case& c : cases) {
    try {
      Position::from_fen(c.fen);
      ADD_FAILURE() << "accepted: " << c.fen;
    } catch (const FenError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message_part), std::string::npos)
          << c.fen << " -> " << e.what();
    }
  }
}

TEST(Position, KingCaptureObjectiveAcceptsAttackedSideNotToMoveAndAGoneKing) {
  // Under king-capture these arise in games: a king left attacked, and the
  // final position with one king captured.
  const Rules zillions = Rules::preset("zillions");
  EXPECT_NO_THROW(Position::from_fen("8/8/8/8/8/8/3k4/3K4 w 0 1", zillions));
  const Position gone = Position::from_fen("8/8/8/8/8/8/8/3K4 b 0 1", zillions);
  EXPECT_EQ(game_status(gone).termination, Termination::kKingCaptured);
  EXPECT_EQ(game_status(gone).outcome, Outcome::kWhiteWins);
  EXPECT_THROW(Position::from_fen("8/8/8/8/8/8/8/3P4 b 0 1", zillions), FenError);
  EXPECT_THROW(Position::from_fen("8/8/8/8/8/8/8/3K4 b 0 1"), FenError);
}

TEST(Position, IncrementalKeyMatchesFreshKeyAndUnmakeRestores) {
  std::mt19937_64 rng(3);
  for (const Rules& rules : test::all_presets()) {
    for (int game = 0; game < 20; ++game) {
      Position pos = Position::start(rules);
      std::vector<std::string> fens{pos.fen()};
      std::vector<std::uint64_t> keys{pos.key()};
      for (int ply = 0; ply < 120 && !game_status(pos).over(); ++ply) {
        MoveList list;
        generate_legal(pos, list);
        pos.make(list[rng() % list.size()]);
        ASSERT_EQ(pos.key(), Position::from_fen(pos.fen(), rules).key()) << pos.fen();
        fens.push_back(pos.fen());
        keys.push_back(pos.key());
      }
      while (pos.game_ply() > 0) {
        pos.unmake();
        fens.pop_back();
        keys.pop_back();
        ASSERT_EQ(pos.fen(), fens.back());
        ASSERT_EQ(pos.key(), keys.back());
      }
    }
  }
}

TEST(Position, HalfmoveClockCountsQuietPliesAndResetsOnCapture) {
  Position pos = Position::start();
  pos.make(parse_move(pos, "a2a3"));
  EXPECT_EQ(pos.halfmove_clock(), 1);
  EXPECT_EQ(pos.fullmove_number(), 1);
  pos.make(parse_move(pos, "a7a6"));
  EXPECT_EQ(pos.halfmove_clock(), 2);
  EXPECT_EQ(pos.fullmove_number(), 2);
  // A capture: the white withdrawer on d4 moves away from the pawn on d5.
  Position cap = Position::from_fen("4k3/8/8/3p4/3W4/8/8/K7 w 7 9");
  const Move m = parse_move(cap, "d4d2");
  EXPECT_EQ(captures_text(m), "d5");
  cap.make(m);
  EXPECT_EQ(cap.halfmove_clock(), 0);
}

}  // namespace
}  // namespace ultima
