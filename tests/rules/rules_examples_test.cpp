// The worked examples of RULES.md section 10, each built as a full legal
// position (both kings, the side not to move not in check) and checked for
// exactly the captures and legalities the rule text describes.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/rules/movegen.h"
#include "engine/rules/notation.h"
#include "engine/rules/position.h"
#include "engine/rules/rule_set.h"
#include "engine/rules/types.h"
#include "test_util.h"

namespace ultima {
namespace {

using test::fen_of;
using test::make_pos;
using test::squares;
using test::is_legal;
using test::captures_of;

Position after(Position pos, std::string_view move) {
  pos.make(parse_move(pos, move));
  return pos;
}

// ---------------------------------------------------------------------------
// 1. King. The black king on e5 is frozen by the white immobilizer on f4, so
// the kings may stand side by side and Kc4-d5 mates. A white pawn on e2 keeps
// the black withdrawer on d3 from withdrawing off c4 at the start (no check on
// White before the move); it plays no other part.
constexpr std::string_view kKingExample = "Kc4 If4 Pe2 ke5 wd3";

TEST(WorkedExamples, KingStepNextToFrozenKingMates) {
  const Position pos = make_pos(kKingExample);
  EXPECT_FALSE(pos.in_check(kWhite));
  EXPECT_EQ(pos.frozen(kBlack), squares("e5"));
  ASSERT_TRUE(is_legal(pos, "c4d5"));
  EXPECT_EQ(captures_of(pos, "c4d5"), "-");

  const Position mated = after(pos, "c4d5");
  EXPECT_TRUE(mated.in_check(kBlack));    // the free white king can step onto e5
  EXPECT_FALSE(mated.in_check(kWhite));   // the frozen black king gives no check
  const GameStatus status = game_status(mated);
  EXPECT_EQ(status.termination, Termination::kCheckmate);
  EXPECT_EQ(status.outcome, Outcome::kWhiteWins);
  EXPECT_TRUE(test::move_lines(mated).empty());
}

TEST(WorkedExamples, KingMayNotStepWhereWithdrawerCanWithdrawFromIt) {
  const Position pos = make_pos(kKingExample);
  // On d4 the withdrawer on d3 could withdraw to d2 and take the king.
  EXPECT_FALSE(is_legal(pos, "c4d4"));
  for (const std::string& m : test::move_lines(pos)) EXPECT_NE(m.substr(0, 4), "c4d4");
}

TEST(WorkedExamples, KingTakingTheWithdrawerLeavesBlackWithoutMoves) {
  const Position pos = make_pos(kKingExample);
  ASSERT_TRUE(is_legal(pos, "c4d3"));
  EXPECT_EQ(captures_of(pos, "c4d3"), "d3");

  // Black keeps only its frozen king: no move, no removal (never the king),
  // and not in check (Kd3 is not next to e5). abbott1963: Black loses.
  const Position done = after(pos, "c4d3");
  EXPECT_FALSE(done.in_check(kBlack));
  EXPECT_TRUE(test::move_lines(done).empty());
  const GameStatus status = game_status(done);
  EXPECT_EQ(status.termination, Termination::kNoLegalMove);
  EXPECT_EQ(status.outcome, Outcome::kWhiteWins);

  // The same under boardspace (stalemate=draw) is a draw.
  const Position bs = after(make_pos(kKingExample, 'w', Rules::parse("boardspace")), "c4d3");
  EXPECT_EQ(game_status(bs).termination, Termination::kStalemate);
  EXPECT_EQ(game_status(bs).outcome, Outcome::kDraw);
}

// ---------------------------------------------------------------------------
// 2. Pawn. P g4-d4 pinches the black immobilizer d5 against Pd6 (itself
// frozen by that immobilizer) and the black pawn c4 against Pb4. The
// withdrawer on e5 is diagonal, the chameleon on d3 has an empty d2 behind
// it, and the leaper that has just moved h2-g3 between Pf3 and Ph3 stays.
TEST(WorkedExamples, PawnPinchesImmobilizerAndPawnButNotDiagonalWithdrawer) {
  Position pos = make_pos("Ka1 Pg4 Pd6 Pb4 Pf3 Ph3 kh8 id5 pc4 we5 xd3 lh2", 'b');
  EXPECT_EQ(pos.frozen(kWhite), squares("d6"));

  // The leaper moves between two white pawns: nothing happens to it.
  ASSERT_TRUE(is_legal(pos, "h2g3"));
  EXPECT_EQ(captures_of(pos, "h2g3"), "-");
  pos.make(parse_move(pos, "h2g3"));
  EXPECT_EQ(pos.piece_on(parse_square("g3")), make_piece(kBlack, kLeaper));

  ASSERT_TRUE(is_legal(pos, "g4d4"));
  const Move pawn = parse_move(pos, "g4d4");
  EXPECT_EQ(captures_text(pawn), "c4,d5");
  EXPECT_EQ(pawn.captures, squares("c4,d5"));
  pos.make(pawn);
  EXPECT_EQ(pos.piece_on(parse_square("e5")), make_piece(kBlack, kWithdrawer));
  EXPECT_EQ(pos.piece_on(parse_square("d3")), make_piece(kBlack, kChameleon));
  EXPECT_EQ(pos.piece_on(parse_square("g3")), make_piece(kBlack, kLeaper));
  EXPECT_EQ(pos.pieces(kBlack, kImmobilizer), Bitboard{0});
  EXPECT_EQ(pos.pieces(kBlack, kPawn), Bitboard{0});
}

// ---------------------------------------------------------------------------
// 3. Withdrawer. W g6-d3 moves away from h7 along the diagonal and takes it;
// g7 (north) and h6 (east) are next to g6 too but not on the line it leaves.
TEST(WorkedExamples, WithdrawerTakesOnlyThePieceItMovesDirectlyAwayFrom) {
  Position pos = make_pos("Ka1 Wg6 ka8 ph7 pg7 xh6");
  ASSERT_TRUE(is_legal(pos, "g6d3"));
  EXPECT_EQ(captures_of(pos, "g6d3"), "h7");
  pos.make(parse_move(pos, "g6d3"));
  EXPECT_EQ(pos.piece_on(parse_square("g7")), make_piece(kBlack, kPawn));
  EXPECT_EQ(pos.piece_on(parse_square("h6")), make_piece(kBlack, kChameleon));
  EXPECT_EQ(pos.piece_on(parse_square("h7")), kEmpty);
}

// ---------------------------------------------------------------------------
// 4. Long leaper on d2: three pawns on d3, d5, d7 up the file (d4, d6, d8
// empty); a withdrawer on f4 on the diagonal; two black pawns side by side on
// f2, g2; a white pawn on c3 in the way to b4.
constexpr std::string_view kLeaperExample = "Ka1 Ld2 Pc3 kh8 pd3 pd5 pd7 wf4 pf2 pg2";

TEST(WorkedExamples, LeaperTakesThreePiecesUpTheFile) {
  const Position pos = make_pos(kLeaperExample);
  ASSERT_TRUE(is_legal(pos, "d2d8"));
  EXPECT_EQ(captures_of(pos, "d2d8"), "d3,d5,d7");
  EXPECT_EQ(captures_of(pos, "d2d6"), "d3,d5");
  EXPECT_EQ(captures_of(pos, "d2d4"), "d3");
}

TEST(WorkedExamples, LeaperCanTakeTheDiagonalWithdrawerInstead) {
  const Position pos = make_pos(kLeaperExample);
  EXPECT_EQ(captures_of(pos, "d2g5"), "f4");
  EXPECT_EQ(captures_of(pos, "d2h6"), "f4");
  EXPECT_EQ(captures_of(pos, "d2e3"), "-");
}

TEST(WorkedExamples, LeaperCannotLeapAdjacentPairOrFriendlyPiece) {
  const Position pos = make_pos(kLeaperExample);
  EXPECT_EQ(captures_of(pos, "d2e2"), "-");
  EXPECT_FALSE(is_legal(pos, "d2h2"));  // f2 and g2 side by side
  EXPECT_FALSE(is_legal(pos, "d2b4"));  // over the white pawn on c3
  EXPECT_FALSE(is_legal(pos, "d2a5"));
  for (const std::string& m : test::move_lines(pos)) {
    EXPECT_NE(m.substr(0, 4), "d2h2");
    EXPECT_NE(m.substr(0, 4), "d2b4");
  }
}

// ---------------------------------------------------------------------------
// 5. Coordinator with the white king on c2: C d4-f6 crosses at f2 (file f,
// rank 2) and c6 (file c, rank 6); C d4-d6 crosses at d2 and c6 instead.
// The white pawn on c1 stops the black leaper c6 from leaping the king.
constexpr std::string_view kCoordinatorExample = "Kc2 Cd4 Pc1 kh8 lc6 if2 pd2";

TEST(WorkedExamples, CoordinatorTakesLeaperAndImmobilizerOnKingCrossings) {
  const Position pos = make_pos(kCoordinatorExample);
  ASSERT_TRUE(is_legal(pos, "d4f6"));
  EXPECT_EQ(captures_of(pos, "d4f6"), "c6,f2");
}

TEST(WorkedExamples, CoordinatorOnKingsOtherCrossingsTakesOtherPieces) {
  const Position pos = make_pos(kCoordinatorExample);
  ASSERT_TRUE(is_legal(pos, "d4d6"));
  EXPECT_EQ(captures_of(pos, "d4d6"), "c6,d2");
}

// ---------------------------------------------------------------------------
// 6. Immobilizer. On f3 it freezes only the black leaper on g4; on d5 it
// freezes the five black pieces on c4, c6, d6, e5, e6, and g4 is free again.
TEST(WorkedExamples, ImmobilizerMoveFreezesFiveAndReleasesLeaper) {
  Position pos = make_pos("Ka1 If3 kh8 lg4 pc4 pc6 wd6 ce6 pe5");
  EXPECT_EQ(pos.frozen(kBlack), squares("g4"));
  ASSERT_TRUE(is_legal(pos, "f3d5"));
  EXPECT_EQ(captures_of(pos, "f3d5"), "-");
  pos.make(parse_move(pos, "f3d5"));

  EXPECT_EQ(popcount(pos.frozen(kBlack)), 5);
  EXPECT_EQ(pos.frozen(kBlack), squares("c4,c6,d6,e5,e6"));
  EXPECT_EQ(pos.frozen(kBlack) & squares("g4"), Bitboard{0});

  bool leaper_moves = false;
  for (const std::string& m : test::move_lines(pos)) {
    if (m.substr(0, 2) == "g4") leaper_moves = true;
    for (const char* frozen : {"c4", "c6", "d6", "e5", "e6"})
      EXPECT_NE(m.substr(0, 2), frozen) << m;
  }
  EXPECT_TRUE(leaper_moves);
}

// ---------------------------------------------------------------------------
// 7. Chameleon. X g6-c6 along rank 6 leaps the leapers f6 and d6 (passing
// e6), withdraws from the withdrawer h6, pinches the pawns c7, c5, b6 against
// Wc8, Pc4, Pa6, coordinates with Ke3 at c3 (the coordinator) and e6 (empty),
// and lands next to the black king d5.
constexpr std::string_view kChameleonExample =
    "Ke3 Xg6 Pa6 Wc8 Pc4 kd5 pb6 pc7 pc5 ld6 lf6 wh6 cc3";

TEST(WorkedExamples, ChameleonImitatesWithdrawerLeapersPawnsCoordinatorAndChecks) {
  const Position pos = make_pos(kChameleonExample);
  ASSERT_TRUE(is_legal(pos, "g6c6"));
  const Move m = parse_move(pos, "g6c6");
  EXPECT_EQ(captures_text(m), "b6,c3,c5,c7,d6,f6,h6");
  Position next = pos;
  next.make(m);
  EXPECT_TRUE(next.in_check(kBlack));
  EXPECT_FALSE(next.in_check(kWhite));
  // Black is left with the bare king.
  EXPECT_EQ(next.pieces(kBlack), squares("d5"));
}

TEST(WorkedExamples, ChameleonShapeTakesOnlyTheLeapedLeapers) {
  const Position pos = make_pos(kChameleonExample, 'w', Rules::parse("abbott1963,chameleon=shape"));
  ASSERT_TRUE(is_legal(pos, "g6c6"));
  EXPECT_EQ(captures_of(pos, "g6c6"), "d6,f6");
  const Position next = after(pos, "g6c6");
  EXPECT_TRUE(next.in_check(kBlack));  // the king step threat is no leap
  EXPECT_EQ(next.pieces(kBlack), squares("b6,c3,c5,c7,d5,h6"));
}

}  // namespace
}  // namespace ultima
