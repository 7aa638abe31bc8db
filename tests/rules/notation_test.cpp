// Coordinate and readable move text, both directions.
#include <gtest/gtest.h>

#include "test_util.h"

namespace ultima {
namespace {

TEST(Notation, EveryLegalMoveRoundTripsInBothForms) {
  std::mt19937_64 rng(9);
  for (const Rules& rules : test::all_presets()) {
    for (int i = 0; i < 150; ++i) {
      const Position pos = i % 3 ? test::random_game_position(rules, rng, i % 90)
                                 : test::random_placement(rules, rng, 16);
      MoveList list;
      generate_legal(pos, list);
      for (const Move& m : list) {
        const std::string coord = to_coordinate(m);
        ASSERT_EQ(parse_coordinate(pos, coord), m) << pos.fen() << " " << coord;
        EXPECT_EQ(parse_move(pos, coord).captures, m.captures);
        const std::string readable = to_readable(pos, m);
        ASSERT_EQ(parse_readable(pos, readable), m) << pos.fen() << " " << readable;
        EXPECT_EQ(parse_move(pos, readable), m);
      }
    }
  }
}

TEST(Notation, ReadableFormListsPieceSquaresAndCaptures) {
  // The long leaper example of RULES.md: Ld2-d8 over d3, d5, d7.
  const Position pos = Position::from_fen("k7/3p4/8/3p4/8/3p4/3L4/K7 w 0 1");
  const Move m = parse_move(pos, "d2d8");
  EXPECT_EQ(to_readable(pos, m), "Ld2-d8 xd3 xd5 xd7");
  EXPECT_EQ(parse_move(pos, "Ld2-d8 xd3 xd5 xd7"), m);
  EXPECT_EQ(parse_move(pos, "Ld2-d8"), m);  // the capture list may be left out
  EXPECT_THROW(parse_move(pos, "Ld2-d8 xd3"), MoveError);  // but must match when given
  EXPECT_THROW(parse_move(pos, "Wd2-d8"), MoveError);      // wrong piece letter
  EXPECT_EQ(to_coordinate(m), "d2d8");
  EXPECT_EQ(captures_text(m), "d3,d5,d7");
}

TEST(Notation, RemovalForms) {
  // The white pawn on b2 stands next to the black immobilizer on c3: frozen.
  const Position pos = Position::from_fen("k7/8/8/8/8/2i5/1P6/7K w 0 1");
  const Move m = parse_move(pos, "xb2");
  EXPECT_TRUE(m.is_removal());
  EXPECT_EQ(to_coordinate(m), "xb2");
  EXPECT_EQ(captures_text(m), "-");
  EXPECT_EQ(to_readable(pos, m), "Pb2 rm");
  EXPECT_EQ(parse_move(pos, "Pb2 rm"), m);
}

TEST(Notation, CheckAndMateMarks) {
  // Wc6-b7 stands next to the black king on a8 with c6 empty behind it: it
  // threatens to withdraw, so the move gives check.
  const Position check = Position::from_fen("k7/8/2W5/8/8/8/8/7K w 0 1");
  EXPECT_EQ(to_readable(check, parse_move(check, "c6b7")), "Wc6-b7+");
  EXPECT_EQ(to_readable(check, parse_move(check, "c6c5")), "Wc6-c5");
  // The black king is frozen by the immobilizer on b7; Wa4-a7 checks it and
  // Black has no legal move left: mate.
  const Position mate = Position::from_fen("k7/1I6/8/8/W7/8/8/7K w 0 1");
  EXPECT_EQ(to_readable(mate, parse_move(mate, "a4a7")), "Wa4-a7#");
  EXPECT_EQ(parse_move(mate, "Wa4-a7#"), parse_move(mate, "a4a7"));
}

TEST(Notation, GarbledAndIllegalMovesAreRejectedWithReasons) {
  const Position pos = Position::start();
  struct Case {
    const char* text;
    const char* message_part;
  };
  const Case cases[] = {
      {"", "malformed"},
      {"e2", "malformed"},
      {"e2e9", "squares are a-h"},
      {"i2i4", "squares are a-h"},
      {"e2e2", "same"},
      {"e3e4", "no piece on e3"},
      {"e7e5", "side not to move"},
      {"e2f3", "cannot move to f3"},
      {"xe2", "not frozen"},
      {"xd1", "king cannot be removed"},
      {"xz9", "bad square"},
      {"Pe2", "expected a piece letter"},
      {"Qe2-e4", "piece letter"},
      {"Pe2-e4 e5", "not like xd3"},
      {"Ke2-e4", "is not a K"},
      {"e2e4e6", "malformed"},
  };
  for (const Case& c : cases) {
    try {
      parse_move(pos, c.text);
      ADD_FAILURE() << "accepted: '" << c.text << "'";
    } catch (const MoveError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message_part), std::string::npos)
          << c.text << " -> " << e.what();
    }
  }
}

TEST(Notation, MoveIntoCheckIsIllegalWithReason) {
  // Black's withdrawer on d3 could withdraw from d4: Kc4-d4 is illegal
  // (RULES.md example 1).
  const Position pos = Position::from_fen("8/8/8/4k3/2K2I2/3w4/8/8 w 0 1");
  try {
    parse_move(pos, "c4d4");
    ADD_FAILURE() << "accepted c4d4";
  } catch (const MoveError& e) {
    EXPECT_NE(std::string(e.what()).find("leaves the king in check"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ultima
