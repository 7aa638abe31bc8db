// Focused rule cases (RULES.md sections 3-9): each capture mode, freezing,
// check by each piece kind, removals, the end of the game, and each switch
// and preset. Positions are written as piece lists ("Ka1 Pd4 kh8 pd5":
// upper case White, lower case Black); unless a test needs otherwise the
// kings stand in the corners a1 and h8, where no pinch or leap can reach them.
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

Rules rules_of(std::string_view text) { return Rules::parse(text); }


Square sq(std::string_view name) { return parse_square(name); }




// The legal moves whose coordinate text starts with `prefix` ("d4", "x").
std::vector<std::string> moves_starting(const Position& pos, std::string_view prefix) {
  std::vector<std::string> out;
  for (const std::string& m : test::move_lines(pos))
    if (m.compare(0, prefix.size(), prefix) == 0) out.push_back(m);
  return out;
}

std::vector<std::string> removals(const Position& pos) { return moves_starting(pos, "x"); }

Position after(Position pos, std::string_view move) {
  pos.make(parse_move(pos, move));
  return pos;
}

// ===========================================================================
// King: captures by stepping onto the enemy piece.

TEST(RulesCasesKing, CapturesByDisplacementOnly) {
  // Kd4 next to a black pawn on d5 and its own pawn on c4.
  const Position pos = make_pos("Kd4 Pc4 kh8 pd5");
  EXPECT_EQ(captures_of(pos, "d4d5"), "d5");
  EXPECT_EQ(captures_of(pos, "d4e4"), "-");
  EXPECT_EQ(captures_of(pos, "d4e5"), "-");
  EXPECT_FALSE(is_legal(pos, "d4c4"));  // never onto a friendly piece
}

TEST(RulesCasesKing, CapturesEveryKindItCanReach) {
  // Any black piece on d5 falls to Kd4-d5, except an immobilizer, which
  // freezes the king first.
  for (const char* kind : {"p", "w", "l", "c", "x"}) {
    const Position pos = make_pos(std::string("Kd4 kh8 ") + kind + "d5");
    EXPECT_EQ(captures_of(pos, "d4d5"), "d5") << kind;
  }
  const Position pos = make_pos("Kd4 kh8 id5");
  EXPECT_EQ(pos.frozen(kWhite), squares("d4"));
  EXPECT_FALSE(is_legal(pos, "d4d5"));
}

// ===========================================================================
// Pawn: custodian pinch along ranks and files.

TEST(RulesCasesPawn, PinchesThreePiecesAtOnce) {
  // Pe1-e5 lands between d5, f5, e6, each with a white piece behind it.
  const Position pos = make_pos("Ka1 Pe1 Pc5 Pg5 Pe7 kh8 pd5 lf5 ce6");
  EXPECT_EQ(captures_of(pos, "e1e5"), "d5,e6,f5");
  EXPECT_EQ(captures_of(pos, "e1e4"), "-");
}

TEST(RulesCasesPawn, AnvilMayBeAnyFriendlyPiece) {
  // Pd1-d4 pinches d5 against a white piece of each kind on d6.
  for (const char* anvil : {"P", "W", "L", "C", "I", "X", "K"}) {
    std::string pieces = std::string("Pd1 kh8 pd5 ") + anvil + "d6";
    if (std::string(anvil) != "K") pieces += " Ka1";
    const Position pos = make_pos(pieces);
    EXPECT_EQ(captures_of(pos, "d1d4"), "d5") << "anvil " << anvil;
  }
}

TEST(RulesCasesPawn, FrozenAnvilStillPinches) {
  // The anvil Pd6 is frozen by the black immobilizer on c7.
  const Position pos = make_pos("Ka1 Pd1 Pd6 kh8 pd5 ic7");
  EXPECT_EQ(pos.frozen(kWhite), squares("d6"));
  EXPECT_EQ(captures_of(pos, "d1d4"), "d5");
}

TEST(RulesCasesPawn, PinchesImmobilizerAndChameleon) {
  // Pe1-e4 takes the immobilizer e5 (against Pe6) and chameleon f4 (against Pg4).
  const Position pos = make_pos("Ka1 Pe1 Pe6 Pg4 kh8 ie5 xf4");
  EXPECT_EQ(captures_of(pos, "e1e4"), "e5,f4");
}

TEST(RulesCasesPawn, NeverPinchesDiagonally) {
  // Pa4-d4: black pawn e5 with a white pawn f6 behind it on the diagonal.
  const Position pos = make_pos("Ka1 Pa4 Pf6 kh8 pe5");
  EXPECT_EQ(captures_of(pos, "a4d4"), "-");
  // Lined up orthogonally (Pa4-e4, pe5, Pe6) the pawn is pinched.
  const Position ortho = make_pos("Ka1 Pa4 Pe6 kh8 pe5");
  EXPECT_EQ(captures_of(ortho, "a4e4"), "e5");
}

TEST(RulesCasesPawn, MovingBetweenTwoEnemyPawnsIsSafe) {
  // The black pawn e7-e4 lands between Pd4 and Pf4 (and in front of Pe3).
  Position pos = make_pos("Ka1 Pd4 Pf4 Pe3 kh8 pe7", 'b');
  EXPECT_EQ(captures_of(pos, "e7e4"), "-");
  pos.make(parse_move(pos, "e7e4"));
  EXPECT_EQ(pos.piece_on(sq("e4")), make_piece(kBlack, kPawn));
  EXPECT_EQ(pos.pieces(kWhite, kPawn), squares("d4,f4,e3"));
  // Sitting between them is no capture; no white move here takes it either
  // (no white pawn can reach e5 to pinch it against Pe3).
  for (const std::string& m : test::move_lines(pos)) EXPECT_EQ(m.find("e4", 5), std::string::npos) << m;
}

TEST(RulesCasesPawn, OnlyTheLandingSquareCounts) {
  // The black pawn e5 already sits between Pe4 and Pe6: nothing happens when
  // either of them moves away (the square it leaves is never an anvil, and a
  // pinch is made only around the landing square).
  const Position pos = make_pos("Ka1 Pe4 Pe6 kh8 pe5");
  EXPECT_EQ(captures_of(pos, "e4a4"), "-");
  EXPECT_EQ(captures_of(pos, "e4e1"), "-");
  EXPECT_EQ(captures_of(pos, "e6a6"), "-");
  EXPECT_EQ(captures_of(pos, "e6e8"), "-");
}

// ===========================================================================
// Withdrawer: captures the piece it moves directly away from.

TEST(RulesCasesWithdrawer, WithdrawsOrthogonallyAndDiagonally) {
  // Wd4 with black pawns on d5 (north), e5 (north-east), c4 (west).
  const Position pos = make_pos("Kh1 Wd4 ka8 pd5 pe5 pc4");
  for (const char* to : {"d3", "d2", "d1"}) EXPECT_EQ(captures_of(pos, std::string("d4") + to), "d5");
  for (const char* to : {"c3", "b2", "a1"}) EXPECT_EQ(captures_of(pos, std::string("d4") + to), "e5");
  for (const char* to : {"e4", "f4", "g4", "h4"})
    EXPECT_EQ(captures_of(pos, std::string("d4") + to), "c4");
  for (const char* to : {"c5", "b6", "a7", "e3", "f2", "g1"})
    EXPECT_EQ(captures_of(pos, std::string("d4") + to), "-");
  EXPECT_EQ(moves_starting(pos, "d4").size(), 16u);
}

TEST(RulesCasesWithdrawer, MovingTowardsOrFromAfarCapturesNothing) {
  // The black pawn d6 is two squares away from Wd4.
  const Position pos = make_pos("Kh1 Wd4 ka8 pd6");
  EXPECT_EQ(captures_of(pos, "d4d5"), "-");
  EXPECT_EQ(captures_of(pos, "d4d1"), "-");
  EXPECT_FALSE(is_legal(pos, "d4d6"));
}

// ===========================================================================
// Long leaper.

TEST(RulesCasesLeaper, LeapsSeveralPiecesInOneMove) {
  // La4 along rank 4 over c4, e4, g4 (b4, d4, f4, h4 empty).
  const Position pos = make_pos("Ka1 La4 kh8 pc4 we4 cg4");
  EXPECT_EQ(captures_of(pos, "a4b4"), "-");
  EXPECT_EQ(captures_of(pos, "a4d4"), "c4");
  EXPECT_EQ(captures_of(pos, "a4f4"), "c4,e4");
  EXPECT_EQ(captures_of(pos, "a4h4"), "c4,e4,g4");
  EXPECT_FALSE(is_legal(pos, "a4c4"));  // never onto an occupied square
}

TEST(RulesCasesLeaper, AdjacentPairCannotBeLeapt) {
  const Position pos = make_pos("Ka1 La4 kh8 pd4 pe4");
  EXPECT_EQ(captures_of(pos, "a4c4"), "-");
  for (const char* to : {"f4", "g4", "h4"}) EXPECT_FALSE(is_legal(pos, std::string("a4") + to)) << to;
}

TEST(RulesCasesLeaper, FriendlyPieceBlocks) {
  const Position pos = make_pos("Ka1 La4 Pc4 kh8 pe4");
  EXPECT_EQ(captures_of(pos, "a4b4"), "-");
  for (const char* to : {"d4", "f4", "h4"}) EXPECT_FALSE(is_legal(pos, std::string("a4") + to)) << to;
}

TEST(RulesCasesLeaper, SingleLandsOnlyRightBehindItsOneVictim) {
  const Rules single = rules_of("abbott1963,leaper=single");
  // One victim with empty squares behind it.
  const Position multi1 = make_pos("Ka1 La4 kh8 pc4");
  EXPECT_EQ(captures_of(multi1, "a4e4"), "c4");
  EXPECT_EQ(captures_of(multi1, "a4h4"), "c4");
  const Position single1 = make_pos("Ka1 La4 kh8 pc4", 'w', single);
  EXPECT_EQ(captures_of(single1, "a4b4"), "-");
  EXPECT_EQ(captures_of(single1, "a4d4"), "c4");
  for (const char* to : {"e4", "f4", "g4", "h4"})
    EXPECT_FALSE(is_legal(single1, std::string("a4") + to)) << to;
  // Several victims: only the first one, landing right behind it.
  const Position single3 = make_pos("Ka1 La4 kh8 pc4 we4 cg4", 'w', single);
  EXPECT_EQ(captures_of(single3, "a4d4"), "c4");
  EXPECT_FALSE(is_legal(single3, "a4f4"));
  EXPECT_FALSE(is_legal(single3, "a4h4"));
  // abbott1962 has leaper=single too.
  const Position p1962 = make_pos("Ka1 La4 kh8 pc4 we4 cg4", 'w', rules_of("abbott1962"));
  EXPECT_EQ(captures_of(p1962, "a4d4"), "c4");
  EXPECT_FALSE(is_legal(p1962, "a4f4"));
}

// ===========================================================================
// Coordinator: captures on the two crossings of its square with its king's.

TEST(RulesCasesCoordinator, CapturesOnBothCrossings) {
  // King b2; Cf4-f6 crosses at f2 and b6.
  const Position pos = make_pos("Kb2 Cf4 kh8 wf2 ib6");
  EXPECT_EQ(captures_of(pos, "f4f6"), "b6,f2");
  EXPECT_EQ(captures_of(pos, "f4f5"), "f2");   // f2 and b5
  EXPECT_EQ(captures_of(pos, "f4d6"), "b6");   // d2 and b6
  EXPECT_EQ(captures_of(pos, "f4g5"), "-");    // g2 and b5
}

TEST(RulesCasesCoordinator, NoEffectOnOwnPieces) {
  const Position pos = make_pos("Kb2 Cf4 Pf2 kh8 pb6");
  EXPECT_EQ(captures_of(pos, "f4f6"), "b6");
  const Position own = make_pos("Kb2 Cf4 Pf2 Pb6 kh8");
  EXPECT_EQ(captures_of(own, "f4f6"), "-");
}

TEST(RulesCasesCoordinator, SameRankOrFileAsKingCapturesNothing) {
  // Cf4-f2 lands on the king's rank, Cf4-b4 on its file: the crossings are
  // the coordinator's and the king's own squares.
  const Position pos = make_pos("Kb2 Cf4 kh8 pd2 pb5 pb6 pg2");
  EXPECT_EQ(captures_of(pos, "f4f2"), "-");
  EXPECT_EQ(captures_of(pos, "f4b4"), "-");
}

TEST(RulesCasesCoordinator, WithoutItsKingCapturesNothing) {
  // zillions: with its king on d5, Black's Ca8-a7 takes Pa5 (crossing a5).
  const Rules zillions = rules_of("zillions");
  const Position with_king = make_pos("Kh1 Pa5 kd5 ca8", 'b', zillions);
  EXPECT_EQ(captures_of(with_king, "a8a7"), "a5");
  // Once White's king has taken the black king, the coordinator takes nothing.
  const Position pos = make_pos("Kd4 Pa5 kd5 ca8", 'w', zillions);
  const Position kingless = after(pos, "d4d5");
  EXPECT_EQ(kingless.king_square(kBlack), kNoSquare);
  for (const std::string& m : moves_starting(kingless, "a8")) EXPECT_EQ(m.substr(5), "-") << m;
}

// ===========================================================================
// Immobilizer: never captures.

TEST(RulesCasesImmobilizer, NeverCaptures) {
  // Ie4 could "withdraw" from e5, "pinch" g5 against Pg6 on g4, or
  // "coordinate" h1 with Ka1 on h4: it does none of these.
  const Position pos = make_pos("Ka1 Ie4 Pg6 kh8 pe5 pd5 pg5 ph1");
  const std::vector<std::string> moves = moves_starting(pos, "e4");
  EXPECT_FALSE(moves.empty());
  for (const std::string& m : moves) EXPECT_EQ(m.substr(5), "-") << m;
  EXPECT_TRUE(is_legal(pos, "e4e1"));
  EXPECT_TRUE(is_legal(pos, "e4g4"));
  EXPECT_TRUE(is_legal(pos, "e4h4"));
}

// ===========================================================================
// Chameleon: captures each kind the way that kind captures.

TEST(RulesCasesChameleon, PinchesPawnsOnlyOnOrthogonalMoves) {
  // Xa4-d4 (along the rank) pinches the pawn d5 against Pd6, but not the
  // withdrawer d3 against Pd2; Xa1-d4 (diagonal) pinches nothing.
  const Position pos = make_pos("Kh1 Xa4 Xa1 Pd6 Pd2 kh8 pd5 wd3");
  EXPECT_EQ(captures_of(pos, "a4d4"), "d5");
  EXPECT_EQ(captures_of(pos, "a1d4"), "-");
}

TEST(RulesCasesChameleon, WithdrawsOnlyFromWithdrawers) {
  // Xe4 between a black withdrawer e5 and a black pawn d4.
  const Position pos = make_pos("Ka1 Xe4 kh8 we5 pd4");
  EXPECT_EQ(captures_of(pos, "e4e1"), "e5");
  EXPECT_EQ(captures_of(pos, "e4h4"), "-");
}

TEST(RulesCasesChameleon, LeapsOnlyLeapersSeveralAtOnce) {
  // Xa4 along rank 4: leapers c4 and e4, then a pawn on g4.
  const Position pos = make_pos("Ka1 Xa4 kh8 lc4 le4 pg4");
  EXPECT_EQ(captures_of(pos, "a4b4"), "-");
  EXPECT_EQ(captures_of(pos, "a4d4"), "c4");
  EXPECT_EQ(captures_of(pos, "a4f4"), "c4,e4");
  EXPECT_FALSE(is_legal(pos, "a4h4"));  // the pawn is not leapable
}

TEST(RulesCasesChameleon, CoordinatesOnlyCoordinators) {
  // Kb2; Xf4-f6 crosses at f2 (a coordinator) and b6 (a pawn).
  const Position pos = make_pos("Kb2 Xf4 kh8 cf2 pb6");
  EXPECT_EQ(captures_of(pos, "f4f6"), "f2");
}

TEST(RulesCasesChameleon, NeverCapturesChameleonsOrImmobilizers) {
  // Xd4 next to a black chameleon d5; a black immobilizer b5 in front of
  // Pb6; a black chameleon g5 in front of Pg6.
  const Position pos = make_pos("Ka1 Xd4 Pb6 Pg6 kh8 xd5 ib5 xg5");
  EXPECT_EQ(pos.frozen(kWhite), squares("b6"));
  EXPECT_EQ(captures_of(pos, "d4d1"), "-");  // withdraws from the chameleon
  EXPECT_EQ(captures_of(pos, "d4b4"), "-");  // "pinches" the immobilizer
  EXPECT_EQ(captures_of(pos, "d4g4"), "-");  // "pinches" the chameleon
  EXPECT_FALSE(is_legal(pos, "d4d6"));       // cannot leap the chameleon
}

TEST(RulesCasesChameleon, KingStepMakesItsOtherCapturesToo) {
  // zillions (so the king may be taken): Xe4-e5 steps onto the black king,
  // pinches d5 (Pc5) and f5 (Pg5), withdraws from e3 and coordinates with
  // Ka1 at a5.
  const std::string_view pieces = "Ka1 Xe4 Pc5 Pg5 ke5 pd5 pf5 we3 ca5";
  const Position pos = make_pos(pieces, 'w', rules_of("zillions"));
  EXPECT_TRUE(pos.in_check(kBlack));
  EXPECT_EQ(captures_of(pos, "e4e5"), "a5,d5,e3,e5,f5");
  const Position done = after(pos, "e4e5");
  EXPECT_EQ(game_status(done).termination, Termination::kKingCaptured);
  EXPECT_EQ(game_status(done).outcome, Outcome::kWhiteWins);
  // The king step leaps nothing, so chameleon=shape keeps its other captures.
  const Position shape = make_pos(pieces, 'w', rules_of("zillions,chameleon=shape"));
  EXPECT_EQ(captures_of(shape, "e4e5"), "a5,d5,e3,e5,f5");
  // Under the checkmate objective this position cannot arise.
  EXPECT_THROW(make_pos(pieces), FenError);
}

TEST(RulesCasesChameleon, ChecksOnlyByKingStep) {
  EXPECT_TRUE(make_pos("Ke4 kh8 xe5").in_check(kWhite));
  EXPECT_FALSE(make_pos("Ke4 kh8 xe6").in_check(kWhite));
  // Would pinch like a pawn (d8-d4 against f4): not a pawn, no check.
  EXPECT_FALSE(make_pos("Ke4 kh8 xd8 pf4").in_check(kWhite));
  // Would leap like a leaper down the e-file: no check.
  EXPECT_FALSE(make_pos("Ke4 kh8 xe8").in_check(kWhite));
  // Would coordinate like a coordinator (kh4 on the king's rank): no check.
  EXPECT_FALSE(make_pos("Ke4 kh4 xa8").in_check(kWhite));
}

// ===========================================================================
// Freezing.

TEST(RulesCasesFreezing, FrozenPiecesCannotMove) {
  // Id4 freezes the black pawn d5, withdrawer e5 and leaper c3; h5 is free.
  const Position pos = make_pos("Ka1 Id4 kh8 pd5 we5 lc3 ph5", 'b');
  EXPECT_EQ(pos.frozen(kBlack), squares("c3,d5,e5"));
  for (const char* from : {"c3", "d5", "e5"}) EXPECT_TRUE(moves_starting(pos, from).empty()) << from;
  EXPECT_FALSE(moves_starting(pos, "h5").empty());
  EXPECT_FALSE(is_legal(pos, "e5f6"));
}

TEST(RulesCasesFreezing, EnemyImmobilizersSideBySideFreezeEachOtherAndTheirNeighbours) {
  const Position pos = make_pos("Ka1 Id4 Pc4 kh8 id5 pe5");
  EXPECT_EQ(pos.frozen(kWhite), squares("c4,d4"));
  EXPECT_EQ(pos.frozen(kBlack), squares("d5,e5"));
  EXPECT_TRUE(moves_starting(pos, "d4").empty());
  EXPECT_TRUE(moves_starting(pos, "c4").empty());
}

TEST(RulesCasesFreezing, ChameleonAndImmobilizerFreezeEachOther) {
  // Xd4 and id5: mutual. The chameleon freezes neither pawn next to it; the
  // immobilizer still freezes Pc6.
  const Position pos = make_pos("Ka1 Xd4 Pc6 kh8 id5 pe5 pe3");
  EXPECT_EQ(pos.frozen(kWhite), squares("c6,d4"));
  EXPECT_EQ(pos.frozen(kBlack), squares("d5"));
  EXPECT_TRUE(moves_starting(pos, "d4").empty());
}

TEST(RulesCasesFreezing, FrozenPieceGivesNoCheck) {
  EXPECT_TRUE(make_pos("Ke4 kh8 we5").in_check(kWhite));
  EXPECT_FALSE(make_pos("Ke4 Id6 kh8 we5").in_check(kWhite));
  EXPECT_TRUE(make_pos("Ke4 kh8 xe5").in_check(kWhite));
  EXPECT_FALSE(make_pos("Ke4 If6 kh8 xe5").in_check(kWhite));
  EXPECT_TRUE(make_pos("Ke4 kh8 pd8 pf4").in_check(kWhite));
  EXPECT_FALSE(make_pos("Ke4 Ic7 kh8 pd8 pf4").in_check(kWhite));
  EXPECT_TRUE(make_pos("Ke4 kh8 le8").in_check(kWhite));
  EXPECT_FALSE(make_pos("Ke4 Id7 kh8 le8").in_check(kWhite));
  EXPECT_TRUE(make_pos("Ke4 kh4 ca8").in_check(kWhite));
  EXPECT_FALSE(make_pos("Ke4 Ib7 kh4 ca8").in_check(kWhite));
}

TEST(RulesCasesFreezing, PassingByDoesNotFreeze) {
  // Black's pawn h6 may pass d6, c6 (next to Id5) and land on a6; or land on
  // e6 next to the immobilizer and still pinch Pe7 against pe8.
  const Position pos = make_pos("Ka1 Id5 Pe7 kh8 ph6 pe8", 'b');
  EXPECT_EQ(captures_of(pos, "h6a6"), "-");
  EXPECT_EQ(after(pos, "h6a6").frozen(kBlack), Bitboard{0});
  EXPECT_EQ(captures_of(pos, "h6e6"), "e7");
  EXPECT_EQ(after(pos, "h6e6").frozen(kBlack), squares("e6"));
}

// Under frozen-immobilizer=neutralized.
TEST(RulesCasesFreezing, NeutralizedImmobilizersSideBySideBothMove) {
  const Position pos = make_pos("Ka1 Id4 Pc4 kh8 id5 pe5", 'w',
                                rules_of("abbott1963,frozen-immobilizer=neutralized"));
  EXPECT_EQ(pos.frozen(kWhite), Bitboard{0});
  EXPECT_EQ(pos.frozen(kBlack), Bitboard{0});
  EXPECT_FALSE(moves_starting(pos, "d4").empty());
  EXPECT_FALSE(moves_starting(pos, "c4").empty());
  const Position black = make_pos("Ka1 Id4 Pc4 kh8 id5 pe5", 'b',
                                  rules_of("abbott1963,frozen-immobilizer=neutralized"));
  EXPECT_FALSE(moves_starting(black, "d5").empty());
  EXPECT_FALSE(moves_starting(black, "e5").empty());
}

TEST(RulesCasesFreezing, NeutralizedImmobilizerCanBeTakenByKingAndWithdrawer) {
  const Rules neutral = rules_of("abbott1963,frozen-immobilizer=neutralized");
  // Ke4 next to the black immobilizer e5, which Id5 neutralizes.
  const Position king = make_pos("Ke4 Id5 kh8 ie5", 'w', neutral);
  EXPECT_EQ(captures_of(king, "e4e5"), "e5");
  const Position king_old = make_pos("Ke4 Id5 kh8 ie5");
  EXPECT_EQ(king_old.frozen(kWhite), squares("d5,e4"));
  EXPECT_FALSE(is_legal(king_old, "e4e5"));
  // We4 withdraws from it.
  const Position withdrawer = make_pos("Ka1 We4 Id5 kh8 ie5", 'w', neutral);
  EXPECT_EQ(captures_of(withdrawer, "e4e3"), "e5");
  EXPECT_EQ(captures_of(withdrawer, "e4e1"), "e5");
  const Position withdrawer_old = make_pos("Ka1 We4 Id5 kh8 ie5");
  EXPECT_FALSE(is_legal(withdrawer_old, "e4e3"));
}

TEST(RulesCasesFreezing, NeutralizedChameleonStillFreezesImmobilizerAndStaysFree) {
  const Position pos = make_pos("Ka1 Xd4 Pc6 kh8 id5", 'w',
                                rules_of("abbott1963,frozen-immobilizer=neutralized"));
  EXPECT_EQ(pos.frozen(kBlack), squares("d5"));
  EXPECT_EQ(pos.frozen(kWhite), Bitboard{0});
  EXPECT_FALSE(moves_starting(pos, "d4").empty());
  EXPECT_FALSE(moves_starting(pos, "c6").empty());
  const Position black = make_pos("Ka1 Xd4 Pc6 kh8 id5", 'b',
                                  rules_of("abbott1963,frozen-immobilizer=neutralized"));
  EXPECT_TRUE(moves_starting(black, "d5").empty());
  EXPECT_EQ(removals(black), std::vector<std::string>{"xd5 -"});
}

// ===========================================================================
// Check by each kind, in place and as illegal king moves.

TEST(RulesCasesCheck, ByPawnPinch) {
  // pd8-d4 pinches Ke4 against pf4.
  EXPECT_TRUE(make_pos("Ke4 kh8 pd8 pf4").in_check(kWhite));
  EXPECT_FALSE(make_pos("Ke4 kh8 pd8").in_check(kWhite));      // no anvil
  EXPECT_FALSE(make_pos("Ke4 Pd6 kh8 pd8 pf4").in_check(kWhite));  // path blocked
  // The anvil f4 frozen by Ig5 still serves (its role is passive).
  const Position frozen_anvil = make_pos("Ke4 Ig5 kh8 pd8 pf4");
  EXPECT_EQ(frozen_anvil.frozen(kBlack), squares("f4"));
  EXPECT_TRUE(frozen_anvil.in_check(kWhite));
  const Position pos = make_pos("Ke3 kh8 pd8 pf4");
  EXPECT_FALSE(pos.in_check(kWhite));
  EXPECT_FALSE(is_legal(pos, "e3e4"));
  EXPECT_TRUE(is_legal(pos, "e3e2"));
}

TEST(RulesCasesCheck, ByWithdrawal) {
  EXPECT_TRUE(make_pos("Ke4 kh8 we5").in_check(kWhite));
  EXPECT_FALSE(make_pos("Ke4 Pe6 kh8 we5").in_check(kWhite));  // no room to withdraw
  EXPECT_TRUE(make_pos("Ke4 kh8 wf5").in_check(kWhite));       // diagonal
  const Position pos = make_pos("Ke3 kh8 wf5");
  EXPECT_FALSE(pos.in_check(kWhite));
  EXPECT_FALSE(is_legal(pos, "e3e4"));
  EXPECT_FALSE(is_legal(pos, "e3f4"));
  EXPECT_TRUE(is_legal(pos, "e3d3"));
}

TEST(RulesCasesCheck, ByLeap) {
  EXPECT_TRUE(make_pos("Ke4 kh8 le8").in_check(kWhite));
  EXPECT_FALSE(make_pos("Ke4 Pe3 kh8 le8").in_check(kWhite));  // nowhere to land
  EXPECT_TRUE(make_pos("Ke4 Pe6 kh8 le8").in_check(kWhite));   // over e6 and the king
  EXPECT_FALSE(make_pos("Ke4 Pe6 kh8 le8", 'w', rules_of("abbott1963,leaper=single"))
                   .in_check(kWhite));
  EXPECT_FALSE(make_pos("Ke4 kh8 le8 pe6").in_check(kWhite));  // own piece blocks
  const Position pos = make_pos("Kd3 ka8 lh8");
  EXPECT_FALSE(pos.in_check(kWhite));
  EXPECT_FALSE(is_legal(pos, "d3d4"));  // on the h8-a1 diagonal, c3 empty behind
  EXPECT_FALSE(is_legal(pos, "d3c3"));
  EXPECT_TRUE(is_legal(pos, "d3e3"));
}

TEST(RulesCasesCheck, ByCoordination) {
  // kh4 shares the white king's rank: the coordinator a8 reaches e8.
  EXPECT_TRUE(make_pos("Ke4 kh4 ca8").in_check(kWhite));
  EXPECT_FALSE(make_pos("Ke4 kh5 ca8").in_check(kWhite));
  // The coordinating king may itself be frozen (Ih3): still check.
  EXPECT_TRUE(make_pos("Ke4 Ih3 kh4 ca8").in_check(kWhite));
  const Position pos = make_pos("Kd3 kh4 ca8");
  EXPECT_FALSE(pos.in_check(kWhite));
  EXPECT_FALSE(is_legal(pos, "d3d4"));
  EXPECT_FALSE(is_legal(pos, "d3c4"));
  EXPECT_TRUE(is_legal(pos, "d3d2"));
  EXPECT_TRUE(is_legal(pos, "d3e3"));
}

TEST(RulesCasesCheck, ByChameleonStep) {
  EXPECT_TRUE(make_pos("Ke4 kh8 xe5").in_check(kWhite));
  const Position pos = make_pos("Ke3 kh8 xe5");
  EXPECT_FALSE(pos.in_check(kWhite));
  EXPECT_FALSE(is_legal(pos, "e3e4"));
  EXPECT_FALSE(is_legal(pos, "e3f4"));
  EXPECT_TRUE(is_legal(pos, "e3d3"));
}

TEST(RulesCasesCheck, ByKingStep) {
  // Kd4 is frozen by ic3, so the black king e5 may stand next to it: Black
  // gives check, White does not.
  const Position pos = make_pos("Kd4 ke5 ic3");
  EXPECT_TRUE(pos.in_check(kWhite));
  EXPECT_FALSE(pos.in_check(kBlack));
  const Position kings = make_pos("Ke3 ke5");
  for (const char* to : {"d4", "e4", "f4"}) EXPECT_FALSE(is_legal(kings, std::string("e3") + to)) << to;
  EXPECT_TRUE(is_legal(kings, "e3e2"));
  // Kings side by side, both free: a FEN with the side not to move in check.
  EXPECT_THROW(make_pos("Ke4 ke5"), FenError);
}

TEST(RulesCasesCheck, AttackerExposingItsOwnKingStillGivesCheck) {
  // wd5 checks Ke4 (it can withdraw to c6), though leaving d5 would let
  // Pd1-d5 pinch the black king c5 against Pb5.
  const Position pos = make_pos("Ke4 Pd1 Pb5 kc5 wd5");
  EXPECT_TRUE(pos.in_check(kWhite));
  EXPECT_FALSE(pos.in_check(kBlack));
}

// ===========================================================================
// Removal of one's own frozen pieces.

TEST(RulesCasesRemoval, OfferedExactlyForOwnFrozenNonKingPieces) {
  // Id4 freezes the black king c5, pawn d5 and withdrawer e5; ph6 is free.
  const Position pos = make_pos("Ka1 Id4 kc5 pd5 we5 ph6", 'b');
  EXPECT_EQ(pos.frozen(kBlack), squares("c5,d5,e5"));
  EXPECT_EQ(removals(pos), (std::vector<std::string>{"xd5 -", "xe5 -"}));
  EXPECT_THROW(parse_move(pos, "xc5"), MoveError);  // never the king
  EXPECT_THROW(parse_move(pos, "xh6"), MoveError);  // not frozen
  const Move m = parse_move(pos, "xd5");
  EXPECT_TRUE(m.is_removal());
  EXPECT_EQ(to_coordinate(m), "xd5");
  const Position done = after(pos, "xd5");
  EXPECT_EQ(done.piece_on(sq("d5")), kEmpty);
  EXPECT_EQ(done.side_to_move(), kWhite);
  // White has nothing frozen, so nothing to remove.
  EXPECT_TRUE(removals(make_pos("Ka1 Id4 kc5 pd5 we5 ph6")).empty());
}

TEST(RulesCasesRemoval, RemovalExposingTheKingIsIllegal) {
  // The frozen pawn e6 is all that stops Le1 from leaping ke5 (landing e6).
  const Position pos = make_pos("Ka1 Le1 Id7 ke5 pe6", 'b');
  EXPECT_FALSE(pos.in_check(kBlack));
  EXPECT_EQ(pos.frozen(kBlack), squares("e6"));
  EXPECT_TRUE(removals(pos).empty());
  EXPECT_THROW(parse_move(pos, "xe6"), MoveError);
  MoveList pseudo;
  generate_pseudo_legal(pos, pseudo);
  bool offered = false;
  for (const Move& m : pseudo) offered |= m.is_removal();
  EXPECT_TRUE(offered);  // pseudo-legal, but not legal
}

TEST(RulesCasesRemoval, RemovalResetsTheHundredPlyCounter) {
  const Position pos = make_pos("Ka1 Id4 kc5 pd5 we5 ph6", 'b', Rules{}, 37);
  EXPECT_EQ(after(pos, "xd5").halfmove_clock(), 0);
  EXPECT_EQ(after(pos, "h6h7").halfmove_clock(), 38);
}

TEST(RulesCasesRemoval, RemovalsAreMovesForTheNoLegalMoveTest) {
  // Ig7 freezes the black king h8 and pawn h7: Black's only move is xh7.
  const Position pos = make_pos("Ka1 Ig7 kh8 ph7", 'b');
  EXPECT_EQ(test::move_lines(pos), std::vector<std::string>{"xh7 -"});
  EXPECT_EQ(game_status(pos).termination, Termination::kNone);
  const Position forbidden = make_pos("Ka1 Ig7 kh8 ph7", 'b', rules_of("abbott1963,removal=forbidden"));
  EXPECT_TRUE(test::move_lines(forbidden).empty());
  EXPECT_EQ(game_status(forbidden).termination, Termination::kNoLegalMove);
}

TEST(RulesCasesRemoval, ForbiddenSwitchAndCambridgeHaveNoRemovals) {
  for (const char* name : {"abbott1963,removal=forbidden", "cambridge"}) {
    const Position pos = make_pos("Ka1 Id4 kc5 pd5 we5 ph6", 'b', rules_of(name));
    EXPECT_EQ(pos.frozen(kBlack), squares("c5,d5,e5")) << name;
    EXPECT_TRUE(removals(pos).empty()) << name;
    EXPECT_THROW(parse_move(pos, "xd5"), MoveError) << name;
  }
}

// ===========================================================================
// The end of the game.

TEST(RulesCasesEnd, ThreefoldRepetitionByMovingBackAndForth) {
  Position pos = make_pos("Ka1 Pc3 kh8 pf6");
  EXPECT_EQ(pos.repetition_count(), 1);
  const char* cycle[] = {"a1b1", "h8g8", "b1a1", "g8h8"};
  for (const char* m : cycle) {
    EXPECT_EQ(game_status(pos).termination, Termination::kNone);
    pos.make(parse_move(pos, m));
  }
  EXPECT_EQ(pos.repetition_count(), 2);
  EXPECT_EQ(game_status(pos).termination, Termination::kNone);
  for (const char* m : cycle) pos.make(parse_move(pos, m));
  EXPECT_EQ(pos.repetition_count(), 3);
  EXPECT_EQ(game_status(pos).termination, Termination::kRepetition);
  EXPECT_EQ(game_status(pos).outcome, Outcome::kDraw);
  pos.unmake();
  EXPECT_EQ(game_status(pos).termination, Termination::kNone);
}

TEST(RulesCasesEnd, HundredPliesWithoutCaptureOrRemoval) {
  // Pc3-c4 is quiet; Pc3-f3 pinches f4 against Pf5.
  const Position pos = make_pos("Ka1 Pc3 Pf5 kh8 pf4", 'w', Rules{}, 99);
  EXPECT_EQ(game_status(pos).termination, Termination::kNone);
  const Position quiet = after(pos, "c3c4");
  EXPECT_EQ(quiet.halfmove_clock(), 100);
  EXPECT_EQ(game_status(quiet).termination, Termination::kHundredPlies);
  EXPECT_EQ(game_status(quiet).outcome, Outcome::kDraw);
  const Position capture = after(pos, "c3f3");
  EXPECT_EQ(capture.halfmove_clock(), 0);
  EXPECT_EQ(game_status(capture).termination, Termination::kNone);
}

TEST(RulesCasesEnd, MateOnTheHundredthPlyIsMate) {
  // Worked example 1 (Kc4-d5 mates, no capture) with 99 quiet plies behind it.
  const Position pos = make_pos("Kc4 If4 Pe2 ke5 wd3", 'w', Rules{}, 99);
  const Position mated = after(pos, "c4d5");
  EXPECT_EQ(mated.halfmove_clock(), 100);
  EXPECT_EQ(game_status(mated).termination, Termination::kCheckmate);
  EXPECT_EQ(game_status(mated).outcome, Outcome::kWhiteWins);
}

TEST(RulesCasesEnd, BareKingsDraw) {
  EXPECT_EQ(game_status(make_pos("Ka1 kh8")).termination, Termination::kBareKings);
  const Position last = after(make_pos("Kd4 kh8 pd5"), "d4d5");
  EXPECT_EQ(game_status(last).termination, Termination::kBareKings);
  EXPECT_EQ(game_status(last).outcome, Outcome::kDraw);
}

TEST(RulesCasesEnd, NoLegalMoveLosesUnlessStalemateIsADraw) {
  // Ig7 freezes the lone black king h8; Black is not in check.
  const Position loss = make_pos("Ka1 Ig7 kh8", 'b');
  EXPECT_FALSE(loss.in_check(kBlack));
  EXPECT_EQ(game_status(loss).termination, Termination::kNoLegalMove);
  EXPECT_EQ(game_status(loss).outcome, Outcome::kWhiteWins);
  for (const char* name : {"boardspace", "abbott1963,stalemate=draw"}) {
    const Position draw = make_pos("Ka1 Ig7 kh8", 'b', rules_of(name));
    EXPECT_EQ(game_status(draw).termination, Termination::kStalemate) << name;
    EXPECT_EQ(game_status(draw).outcome, Outcome::kDraw) << name;
  }
}

TEST(RulesCasesEnd, KingCaptureObjective) {
  const Rules zillions = rules_of("zillions");
  // Kd4 may step next to kd6 (it stays in check); Black then takes the king.
  const Position pos = make_pos("Kd4 Pa2 kd6 ph7", 'w', zillions);
  EXPECT_TRUE(is_legal(pos, "d4d5"));
  EXPECT_TRUE(is_legal(pos, "d4c5"));
  EXPECT_FALSE(is_legal(make_pos("Kd4 Pa2 kd6 ph7"), "d4d5"));
  MoveList pseudo, legal;
  generate_pseudo_legal(pos, pseudo);
  generate_legal(pos, legal);
  EXPECT_EQ(legal.size(), pseudo.size());  // no legality filter
  EXPECT_EQ(count_legal(pos), pseudo.size());
  EXPECT_LT(count_legal(make_pos("Kd4 Pa2 kd6 ph7")), pseudo.size());
  const Position stepped = after(pos, "d4d5");
  EXPECT_EQ(game_status(stepped).termination, Termination::kNone);
  EXPECT_EQ(captures_of(stepped, "d6d5"), "d5");
  const Position taken = after(stepped, "d6d5");
  EXPECT_EQ(taken.king_square(kWhite), kNoSquare);
  EXPECT_EQ(game_status(taken).termination, Termination::kKingCaptured);
  EXPECT_EQ(game_status(taken).outcome, Outcome::kBlackWins);
  // A side may even leave its king en prise while in check, and a position
  // with the side not to move in check is accepted.
  const Position in_check = make_pos("Kd5 Pa2 kd6 ph7", 'w', zillions);
  EXPECT_TRUE(is_legal(in_check, "a2a3"));
  const Position other = make_pos("Kd5 Pa2 kd6 ph7", 'b', zillions);
  EXPECT_TRUE(other.in_check(kWhite));
  EXPECT_THROW(make_pos("Kd5 Pa2 kd6 ph7", 'b'), FenError);
}

TEST(RulesCasesEnd, TakenKingEndsTheGameWithNoMoves) {
  // zillions: Black's king steps onto the white king on d5. White keeps a
  // pawn with moves, yet the game is over: nothing is listed or counted.
  const Rules zillions = rules_of("zillions");
  const Position stepped = after(make_pos("Kd4 Pa2 kd6 ph7", 'w', zillions), "d4d5");
  ASSERT_TRUE(is_legal(stepped, "d6d5"));
  const Position taken = after(stepped, "d6d5");
  ASSERT_TRUE(game_status(taken).over());
  MoveList pseudo, legal;
  generate_pseudo_legal(taken, pseudo);
  generate_legal(taken, legal);
  EXPECT_TRUE(pseudo.empty());
  EXPECT_TRUE(legal.empty());
  EXPECT_EQ(count_legal(taken), 0);
  EXPECT_FALSE(has_legal_move(taken));
  EXPECT_FALSE(is_legal(taken, "a2a5"));
  // The same placement read from its FEN is as final.
  const Position read = Position::from_fen(taken.fen(), zillions);
  EXPECT_TRUE(test::move_lines(read).empty());
  EXPECT_EQ(game_status(read).outcome, Outcome::kBlackWins);
  // With both kings on the board the pawn moves as usual.
  EXPECT_TRUE(is_legal(make_pos("Kd1 Pa2 kd6 ph7", 'w', zillions), "a2a5"));
}

TEST(RulesCasesEnd, KinglessSideNotToMoveIsRefused) {
  // A king is taken by the side that moves, so no game reaches a position
  // where the side to move still has its king and the other has none.
  const Rules zillions = rules_of("zillions");
  try {
    Position::from_fen("8/8/8/8/8/8/P7/3K4 w 0 1", zillions);
    FAIL() << "accepted White to move with Black's king gone";
  } catch (const FenError& e) {
    EXPECT_NE(std::string(e.what()).find("Black has no king yet White is to move"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(Position::from_fen("8/8/8/8/8/8/P7/3K4 b 0 1", zillions));
}

// ===========================================================================
// Switches and presets.

TEST(RulesCasesSwitches, PresetStartPositions) {
  const std::string rotated = "clxwkxli/pppppppp/8/8/8/8/PPPPPPPP/ILXKWXLC w 0 1";
  const std::string chess_kings = "clxwkxli/pppppppp/8/8/8/8/PPPPPPPP/ILXWKXLC w 0 1";
  const std::string mirror = "ilxkwxlc/pppppppp/8/8/8/8/PPPPPPPP/ILXKWXLC w 0 1";
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"abbott1963", rotated}, {"abbott1962", chess_kings}, {"cambridge", mirror},
      {"boardspace", rotated}, {"zillions", rotated}};
  EXPECT_EQ(preset_names(),
            (std::vector<std::string>{"abbott1963", "abbott1962", "cambridge", "boardspace", "zillions"}));
  for (const auto& [name, fen] : expected) {
    const Rules rules = Rules::parse(name);
    EXPECT_EQ(rules.start_fen(), fen) << name;
    EXPECT_EQ(Position::start(rules).fen(), fen) << name;
    EXPECT_EQ(rules.name(), name);
  }
  EXPECT_EQ(Position::start().king_square(kWhite), sq("d1"));
  EXPECT_EQ(Position::start().king_square(kBlack), sq("e8"));
  EXPECT_EQ(Position::start(rules_of("abbott1962")).king_square(kWhite), sq("e1"));
  EXPECT_EQ(Position::start(rules_of("abbott1962")).piece_on(sq("d1")), make_piece(kWhite, kWithdrawer));
  EXPECT_EQ(Position::start(rules_of("cambridge")).king_square(kBlack), sq("d8"));
  EXPECT_EQ(rules_of("abbott1963,setup=mirror").start_fen(), mirror);
  EXPECT_EQ(rules_of("abbott1963,setup=chess-kings").start_fen(), chess_kings);
  EXPECT_EQ(rules_of("cambridge,setup=rotated").start_fen(), rotated);
}

TEST(RulesCasesSwitches, PresetsAreTheirSwitches) {
  EXPECT_EQ(Rules::parse("abbott1963"), Rules{});
  Rules r1962;
  r1962.setup = Setup::kChessKings;
  r1962.leaper = LeaperRule::kSingle;
  EXPECT_EQ(Rules::parse("abbott1962"), r1962);
  Rules cambridge;
  cambridge.setup = Setup::kMirror;
  cambridge.chameleon = ChameleonRule::kShape;
  cambridge.removal = RemovalRule::kForbidden;
  cambridge.frozen_immobilizer = FrozenImmobilizerRule::kNeutralized;
  EXPECT_EQ(Rules::parse("cambridge"), cambridge);
  Rules boardspace;
  boardspace.stalemate = StalemateRule::kDraw;
  EXPECT_EQ(Rules::parse("boardspace"), boardspace);
  Rules zillions;
  zillions.objective = Objective::kKingCapture;
  EXPECT_EQ(Rules::parse("zillions"), zillions);
  EXPECT_EQ(Rules::parse("abbott1963,stalemate=draw"), boardspace);
  EXPECT_EQ(Rules::parse("abbott1963,objective=king-capture"), zillions);
  EXPECT_EQ(Rules::parse("abbott1963,setup=chess-kings,leaper=single"), r1962);
  Rules both = Rules{};
  both.leaper = LeaperRule::kSingle;
  both.stalemate = StalemateRule::kDraw;
  EXPECT_EQ(Rules::parse("abbott1963,leaper=single,stalemate=draw"), both);
  EXPECT_EQ(Rules::parse("cambridge,removal=allowed").removal, RemovalRule::kAllowed);
}

TEST(RulesCasesSwitches, ParseRejectsUnknownNames) {
  EXPECT_THROW(Rules::parse("abbott1964"), std::invalid_argument);
  EXPECT_THROW(Rules::parse(""), std::invalid_argument);
  EXPECT_THROW(Rules::parse("abbott1963,speed=fast"), std::invalid_argument);
  EXPECT_THROW(Rules::parse("abbott1963,leaper=double"), std::invalid_argument);
  EXPECT_THROW(Rules::parse("abbott1963,leaper"), std::invalid_argument);
  EXPECT_THROW(Rules::parse("abbott1963,stalemate=win"), std::invalid_argument);
  EXPECT_THROW(Rules::preset("nope"), std::invalid_argument);
}

TEST(RulesCasesSwitches, ChameleonShapeLeapCapturesOnlyLeapers) {
  // Xa4-d4 leaps the leaper c4 and lands next to pd5 (anvil Pd6);
  // Xa4-b4 leaps nothing and pinches pb5 (anvil Pb6).
  const std::string_view pieces = "Ka1 Xa4 Pb6 Pd6 kh8 lc4 pb5 pd5";
  const Position combined = make_pos(pieces);
  EXPECT_EQ(captures_of(combined, "a4d4"), "c4,d5");
  EXPECT_EQ(captures_of(combined, "a4b4"), "b5");
  for (const char* name : {"abbott1963,chameleon=shape", "cambridge"}) {
    const Position shape = make_pos(pieces, 'w', rules_of(name));
    EXPECT_EQ(captures_of(shape, "a4d4"), "c4") << name;
    EXPECT_EQ(captures_of(shape, "a4b4"), "b5") << name;
  }
}

TEST(RulesCasesSwitches, LeaperSingleLimitsChameleonLeaps) {
  const Rules single = rules_of("abbott1963,leaper=single");
  const Position two = make_pos("Ka1 Xa4 kh8 lc4 le4", 'w', single);
  EXPECT_EQ(captures_of(two, "a4d4"), "c4");
  EXPECT_FALSE(is_legal(two, "a4f4"));
  const Position one = make_pos("Ka1 Xa4 kh8 lc4", 'w', single);
  EXPECT_EQ(captures_of(one, "a4d4"), "c4");
  EXPECT_FALSE(is_legal(one, "a4e4"));
  EXPECT_EQ(captures_of(make_pos("Ka1 Xa4 kh8 lc4"), "a4e4"), "c4");
}

}  // namespace
}  // namespace ultima
