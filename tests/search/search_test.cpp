// The classical search: forced mates of every capture
// kind, legality of whatever the search answers, the rules' draws inside the
// tree, search limits and stop().
//
// Every mate position below was checked offline by brute force over the
// rules core (no shorter mate exists, and the first move given is the only
// one that forces the mate in the stated number of moves); the tests check
// the forcing part again with a small solver where that stays cheap.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/rules/rules.h"
#include "engine/search/search.h"
#include "test_util.h"

namespace ultima {
namespace {

using test::all_presets;
using test::random_game_position;
using test::random_placement;

using test::fen_position;
using test::is_legal;

SearchResult search_to_depth(Position& pos, int depth, int multipv = 1) {
  Searcher searcher(1);
  SearchLimits limits;
  limits.depth = depth;
  limits.multipv = multipv;
  return searcher.search(pos, limits);
}

// Did the move just made end the game in favour of the side that made it?
bool mover_has_won(const Position& pos) {
  const GameStatus status = game_status(pos);
  return status.outcome == (pos.side_to_move() == kBlack ? Outcome::kWhiteWins : Outcome::kBlackWins);
}

// Can the side to move force a win within n of its own moves? (Brute force
// over the legal move tree, with the rules' end tests at every node.)
bool forced_win(Position& pos, int n) {
  MoveList list;
  generate_legal(pos, list);
  for (const Move& m : list) {
    pos.make(m);
    bool wins = mover_has_won(pos);
    if (!wins && n > 1 && !game_status(pos).over()) {
      wins = true;
      MoveList replies;
      generate_legal(pos, replies);
      for (const Move& r : replies) {
        pos.make(r);
        const bool still = !game_status(pos).over() && forced_win(pos, n - 1);
        pos.unmake();
        if (!still) {
          wins = false;
          break;
        }
      }
    }
    pos.unmake();
    if (wins) return true;
  }
  return false;
}

int mate_in(int moves) { return kMateScore - (2 * moves - 1); }

// ---------------------------------------------------------------------------
// Forced mates

struct MateCase {
  const char* name;
  const char* fen;
  int moves;          // mate in this many moves of the side to move
  int depth;          // plies searched
  const char* best;   // the only move that mates that fast
  Termination end;    // how the final position ends (mate in 1 only)
};

// Mates in one, one per kind of check, and a win by leaving the opponent
// without a legal move while not in check (abbott1963: no stalemate draw).
const MateCase kMatesInOne[] = {
    // RULES.md 10.1: the black king is frozen by If4, so the white king may
    // step next to it; Kc4-d4 would be illegal (Wd3 withdraws from d4), and
    // the black pawn keeps Kxd3 from being a no-move win.
    {"king_step", "p7/8/8/4k3/2K2I2/3w4/8/8 w 0 1", 1, 1, "c4d5", Termination::kCheckmate},
    // Frozen Ke5 with Ie4 as the anvil: Pc6 threatens c6-e6, pinching e5.
    {"pawn_pinch", "p7/8/8/4k3/4I3/8/8/2P4K w 0 1", 1, 1, "c1c6", Termination::kCheckmate},
    // Wd4-g7 withdraws from c3 (capturing it) and threatens g7-f6, taking h8;
    // Kxg7 walks next to Kf7, and no black pawn can pinch g7.
    {"withdrawal", "6pk/5K1p/8/8/3W4/2p5/8/8 w 0 1", 1, 1, "d4g7", Termination::kCheckmate},
    // La1-a8 leaps a4 and threatens to leap e8 (landing f8) from a8; d8 and
    // f8 are covered by the same leaper, d7-f7 are frozen by Ie6.
    {"long_leap", "4k3/3ppp2/4I3/8/p2K4/8/8/L7 w 0 1", 1, 1, "a1a8", Termination::kCheckmate},
    // Ca1-e5: with the king on rank 8, a coordinator landing on h5 or h2
    // takes h8; one black move cannot cover both.
    {"coordination", "K5pk/6pp/8/8/7p/8/8/CP6 w 0 1", 1, 1, "a1e5", Termination::kCheckmate},
    // Xe5-g7 withdraws from the black withdrawer on d4 (capturing it) and
    // lands next to Kh8: a chameleon checks by a king step. Kf8 guards g7.
    {"chameleon", "5Kpk/7p/8/4X3/3w4/8/8/8 w 0 1", 1, 1, "e5g7", Termination::kCheckmate},
    // Id5-b7 freezes the lone black king; the black pawn h1 is boxed in by
    // Pg1 and Ph2 (not frozen, so it cannot be removed either). Searched one
    // ply deeper: see NoMoveLossIsSeenAtTheHorizon for depth 1.
    {"no_legal_move", "k7/8/8/3I4/8/8/7P/4K1Pp w 0 1", 1, 2, "d5b7", Termination::kNoLegalMove},
};

TEST(SearchMate, MateInOneOfEveryKindUnderAllSymmetries) {
  for (const MateCase& c : kMatesInOne) {
    const Position base = fen_position(c.fen);
    const Move expected = parse_coordinate(base, c.best);
    for (int s = 0; s < kSymmetryCount; ++s) {
      for (bool flip : {false, true}) {
        SCOPED_TRACE(std::string(c.name) + " " + symmetry_name(Symmetry(s)) + (flip ? " colour-flipped" : ""));
        Position pos = transform(base, Symmetry(s), flip);
        const SearchResult r = search_to_depth(pos, c.depth);
        EXPECT_EQ(to_coordinate(r.best), to_coordinate(transform(expected, Symmetry(s))));
        EXPECT_GE(r.score, kMateBound);
        EXPECT_EQ(kMateScore - r.score, 1);
        ASSERT_TRUE(is_legal(pos, r.best));
        pos.make(r.best);
        const GameStatus status = game_status(pos);
        EXPECT_TRUE(mover_has_won(pos));
        EXPECT_STREQ(termination_name(status.termination), termination_name(c.end));
      }
    }
  }
}

// Mates in two and three with different kinds of check, for both colours.
const MateCase kLongerMates[] = {
    // Xe6-e2 leaps the black leaper on e4 (a chameleon leaping a leaper);
    // then Xe2-c2 or similar mates by a chameleon's king step.
    {"m2_chameleon_leap", "8/8/4X2x/6P1/4l3/1K6/8/2k5 w 0 1", 2, 3, "e6e2", Termination::kNone},
    // Black: Xe4-d3+ (chameleon check), then a coordinator mate on h2.
    {"m2_coordinator", "8/4P3/8/1x6/4x3/4P2P/8/kp1K3c b 0 1", 2, 3, "e4d3", Termination::kNone},
    // Black: Le7-e3+ (leaper check) Kf5, Le3-e5#.
    {"m2_leaper", "4k1l1/4l3/P7/8/5Kc1/P7/1pW5/8 b 0 1", 2, 3, "e7e3", Termination::kNone},
    // Wb4-b2+ Xb6-b3, Pc4-b4 pinches the chameleon on b3 with mate.
    {"m2_pawn", "3K2P1/8/1xlw4/5P2/1WP5/8/5L2/1k6 w 0 1", 2, 3, "b4b2", Termination::kNone},
    // We8-g8 withdraws from d8 with check, Kh7, Wg8-g7#.
    {"m2_withdrawer", "3xW2k/2LC4/8/1p1L4/4x3/1P6/6Kp/8 w 0 1", 2, 3, "e8g8", Termination::kNone},
    // Lb3-d1+ Kf1, Kg3-f2# (a king gives mate next to a frozen king).
    {"m2_king", "2P2W2/8/5P2/8/3P4/1L4K1/3p3p/4k1I1 w 0 1", 2, 3, "b3d1", Termination::kNone},
    // Kd4xe4, then Id5-c4 or so leaves Black without a legal move. A no-move
    // loss is only seen by a full-width node, hence one ply more.
    {"m2_king_then_no_move", "8/8/1k6/3IP3/3Kl3/8/3P4/8 w 0 1", 2, 4, "d4e4", Termination::kNone},
    // The leaper captures d6 with check, then the immobilizer ends it.
    {"m2_leaper_then_no_move", "8/8/1k1w4/8/8/8/1K5L/5I2 w 0 1", 2, 4, "h2b8", Termination::kNone},
};

void check_forced_mate(const MateCase& c, Position pos) {
  const SearchResult r = search_to_depth(pos, c.depth);
  EXPECT_GE(r.score, kMateBound);
  EXPECT_EQ(kMateScore - r.score, 2 * c.moves - 1) << "reported " << score_text(r.score);
  ASSERT_TRUE(is_legal(pos, r.best));
  // After the move the engine chose, every reply still allows the mate.
  pos.make(r.best);
  EXPECT_FALSE(game_status(pos).over());
  MoveList replies;
  generate_legal(pos, replies);
  ASSERT_FALSE(replies.empty());
  for (const Move& reply : replies) {
    pos.make(reply);
    EXPECT_TRUE(forced_win(pos, c.moves - 1)) << "no mate after " << to_coordinate(reply);
    pos.unmake();
  }
  pos.unmake();
}

TEST(SearchMate, MatesInTwo) {
  for (const MateCase& c : kLongerMates) {
    SCOPED_TRACE(c.name);
    Position pos = fen_position(c.fen);
    ASSERT_FALSE(forced_win(pos, c.moves - 1)) << "test position has a shorter mate";
    const SearchResult r = search_to_depth(pos, c.depth);
    EXPECT_EQ(to_coordinate(r.best), c.best);
    check_forced_mate(c, pos);
    // The same through a symmetry and the colour flip.
    const Symmetry sym = Symmetry((&c - kLongerMates) % kSymmetryCount);
    Position mirrored = transform(pos, sym, true);
    const SearchResult rm = search_to_depth(mirrored, c.depth);
    EXPECT_EQ(to_coordinate(rm.best), to_coordinate(transform(parse_coordinate(pos, c.best), sym)));
    EXPECT_EQ(rm.score, r.score);
  }
}

// The defender sees the mate coming too: after the first move of a mate in
// two, every move loses to a mate in one.
TEST(SearchMate, DefenderSeesMateAgainstIt) {
  for (const MateCase& c : kLongerMates) {
    if (c.depth != 3) continue;
    SCOPED_TRACE(c.name);
    Position pos = fen_position(c.fen);
    pos.make(parse_coordinate(pos, c.best));
    const SearchResult r = search_to_depth(pos, 2);
    EXPECT_EQ(r.score, -kMateScore + 2) << score_text(r.score);
    EXPECT_TRUE(is_legal(pos, r.best));
  }
}

// Searched at 6 plies, one more than 2*3-1: at exactly 5 plies late move
// reductions (quiet checks are reduced too, and the quiescence search has no
// quiet moves) and null-move pruning can hide such mates; e.g. m3_leaper is
// not found at depth 5.
const MateCase kMatesInThree[] = {
    // Wa5-c3 (quiet), Ka3, Xf2-b2+ Ka4, Xb2-b4#: a chameleon mate.
    {"m3_chameleon", "5p2/8/8/W7/8/8/k4X2/6K1 w 0 1", 3, 6, "a5c3", Termination::kNone},
    // Black: Id7-d3 freezes, then the black king steps to mate.
    {"m3_king", "1c6/3i4/8/4I3/8/8/3K4/k7 b 0 1", 3, 6, "d7d3", Termination::kNone},
    // Ke6-f7 (quiet), then We5-g7+ and a coordinator capture gives mate.
    {"m3_coordinator", "c6k/2X5/4K3/4W3/8/8/3C4/8 w 0 1", 3, 6, "e6f7", Termination::kNone},
    // Checks all the way: Xf4-g5+ (chameleon), Cb4-e4+ (coordinator), Xg5-g7#.
    {"m3_checks", "8/4K1k1/8/8/1C3X2/2P2p2/8/8 w 0 1", 3, 6, "f4g5", Termination::kNone},
    // La7-a6+ Kb8, Wb6-b7+ Kc8, La6-a8#: a long leaper's mate.
    {"m3_leaper", "8/LkXiP3/1W6/1P6/8/8/3p4/2KP2p1 w 0 1", 3, 6, "a7a6", Termination::kNone},
};

TEST(SearchMate, MatesInThree) {
  for (const MateCase& c : kMatesInThree) {
    SCOPED_TRACE(c.name);
    Position pos = fen_position(c.fen);
    const SearchResult r = search_to_depth(pos, c.depth);
    EXPECT_EQ(to_coordinate(r.best), c.best);
    check_forced_mate(c, pos);
  }
}

// A side without a legal move loses even when not in check, and that holds
// at the search's horizon too: a depth-1 search must see that Id5-b7 leaves
// Black without a move, and a mate in two whose last move immobilizes must
// not be reported as a longer mate.
TEST(SearchMate, NoMoveLossIsSeenAtTheHorizon) {
  {
    Position pos = fen_position("k7/8/8/3I4/8/8/7P/4K1Pp w 0 1");
    const SearchResult r = search_to_depth(pos, 1);
    EXPECT_EQ(to_coordinate(r.best), "d5b7");
    EXPECT_EQ(r.score, mate_in(1)) << score_text(r.score);
  }
  {
    // Ib1-c2 freezes the black king; whatever Black replies, White has a
    // move that leaves Black without a legal move (brute force below). The
    // search must find this win in two at depth 4, and a deeper search must
    // not stop at a longer mate either.
    Position pos = fen_position("4L3/8/2W5/6l1/6C1/3k4/7K/1I6 w 0 1");
    ASSERT_TRUE(forced_win(pos, 2));
    const SearchResult r = search_to_depth(pos, 4);
    EXPECT_EQ(to_coordinate(r.best), "b1c2");
    EXPECT_EQ(r.score, mate_in(2)) << score_text(r.score);
    const SearchResult deeper = search_to_depth(pos, 8);
    EXPECT_EQ(deeper.score, mate_in(2)) << score_text(deeper.score);
  }
}

// Under boardspace a side without a move draws: freezing the lone king is no
// win there.
TEST(SearchMate, StalemateIsNoWinUnderBoardspace) {
  Position pos = fen_position("k7/8/8/3I4/8/8/7P/4K1Pp w 0 1", "boardspace");
  const SearchResult r = search_to_depth(pos, 2);
  EXPECT_NE(to_coordinate(r.best), "d5b7");
  EXPECT_LT(r.score, kMateBound);
}

TEST(SearchMate, NoMoveInAFinishedGame) {
  Position pos = fen_position("p7/8/8/4k3/2K2I2/3w4/8/8 w 0 1");
  pos.make(parse_coordinate(pos, "c4d5"));
  ASSERT_EQ(game_status(pos).termination, Termination::kCheckmate);
  const SearchResult r = search_to_depth(pos, 3);
  EXPECT_TRUE(r.best.is_null());
  EXPECT_TRUE(r.lines.empty());
}

// ---------------------------------------------------------------------------
// Whatever the limits, the answer is a legal move.

TEST(SearchLegality, NeverAnIllegalBestMove) {
  Searcher searcher(1);
  int searched = 0;
  for (const Rules& rules : all_presets()) {
    std::mt19937_64 rng(0x5EA2C4 + searched);
    for (int i = 0; i < 300; ++i) {
      SCOPED_TRACE(rules.name() + " #" + std::to_string(i));
      Position pos = (i % 4 == 3) ? random_placement(rules, rng, 10)
                                  : random_game_position(rules, rng, std::uniform_int_distribution<int>(0, 160)(rng));
      const std::string fen_before = pos.fen();
      const std::uint64_t key_before = pos.key();
      SearchLimits limits;
      if (i % 2) limits.depth = 2;
      else limits.nodes = 300;
      const SearchResult r = searcher.search(pos, limits);
      ++searched;
      MoveList legal;
      generate_legal(pos, legal);
      if (legal.empty()) {
        EXPECT_TRUE(r.best.is_null()) << pos.fen();
      } else {
        EXPECT_TRUE(is_legal(pos, r.best)) << pos.fen() << " best " << to_coordinate(r.best);
      }
      // The search plays on its own copy.
      EXPECT_EQ(pos.fen(), fen_before);
      EXPECT_EQ(pos.key(), key_before);
    }
  }
  EXPECT_EQ(searched, 300 * static_cast<int>(all_presets().size()));
}

TEST(SearchLegality, MultiPvLinesAreLegalDistinctAndSorted) {
  Searcher searcher(1);
  for (const Rules& rules : all_presets()) {
    std::mt19937_64 rng(0x3A11 + rules.name().size());
    for (int i = 0; i < 40; ++i) {
      SCOPED_TRACE(rules.name() + " #" + std::to_string(i));
      Position pos = random_game_position(rules, rng, std::uniform_int_distribution<int>(0, 120)(rng));
      MoveList legal;
      generate_legal(pos, legal);
      if (legal.empty()) continue;
      SearchLimits limits;
      limits.depth = 2;
      limits.multipv = 3;
      const SearchResult r = searcher.search(pos, limits);
      ASSERT_EQ(static_cast<int>(r.lines.size()), std::min(3, legal.size())) << pos.fen();
      std::set<std::uint16_t> firsts;
      for (std::size_t k = 0; k < r.lines.size(); ++k) {
        const SearchInfo& line = r.lines[k];
        ASSERT_FALSE(line.pv.empty());
        EXPECT_TRUE(is_legal(pos, line.pv[0])) << pos.fen();
        firsts.insert(line.pv[0].code);
        EXPECT_EQ(line.multipv, static_cast<int>(k) + 1);
        if (k) {
          EXPECT_GE(r.lines[k - 1].score, line.score) << pos.fen();
        }
        // The whole line is playable.
        Position walk = pos;
        for (const Move& m : line.pv) {
          if (game_status(walk).over()) break;
          ASSERT_TRUE(is_legal(walk, m)) << pos.fen() << " pv move " << to_coordinate(m);
          walk.make(m);
        }
      }
      EXPECT_EQ(firsts.size(), r.lines.size()) << pos.fen();
      EXPECT_EQ(r.best, r.lines[0].pv[0]);
      EXPECT_EQ(r.score, r.lines[0].score);
    }
  }
}

TEST(SearchLegality, MultiPvUnderANodeLimitStaysLegalAndDistinct) {
  Searcher searcher(1);
  std::mt19937_64 rng(77);
  for (int i = 0; i < 100; ++i) {
    const Rules rules = all_presets()[i % all_presets().size()];
    Position pos = random_game_position(rules, rng, std::uniform_int_distribution<int>(0, 120)(rng));
    if (game_status(pos).over() || !has_legal_move(pos)) continue;
    SearchLimits limits;
    limits.nodes = 400;
    limits.multipv = 3;
    const SearchResult r = searcher.search(pos, limits);
    EXPECT_TRUE(is_legal(pos, r.best)) << pos.fen();
    std::set<std::uint16_t> firsts;
    for (const SearchInfo& line : r.lines) {
      ASSERT_FALSE(line.pv.empty());
      EXPECT_TRUE(is_legal(pos, line.pv[0])) << pos.fen();
      firsts.insert(line.pv[0].code);
    }
    EXPECT_EQ(firsts.size(), r.lines.size()) << pos.fen();
  }
}

// A search cut short by its node limit (or time, or stop()) reports what it
// has: real scores (never the internal "minus infinity" of a move that was
// only known to be worse), lines sorted best first.
TEST(SearchLimits, InterruptedSearchReportsRealScores) {
  Searcher searcher(1);
  std::mt19937_64 rng(1234);
  for (int i = 0; i < 150; ++i) {
    const Rules rules = all_presets()[i % all_presets().size()];
    Position pos = random_game_position(rules, rng, std::uniform_int_distribution<int>(0, 120)(rng));
    if (!has_legal_move(pos)) continue;
    SearchLimits limits;
    limits.nodes = 300 + rng() % 3000;
    limits.multipv = 1 + i % 3;
    const SearchResult r = searcher.search(pos, limits);
    SCOPED_TRACE(pos.fen() + " nodes " + std::to_string(limits.nodes) + " multipv " + std::to_string(limits.multipv));
    EXPECT_TRUE(is_legal(pos, r.best));
    EXPECT_LE(std::abs(r.score), kMateScore);
    for (std::size_t k = 0; k < r.lines.size(); ++k) {
      EXPECT_LE(std::abs(r.lines[k].score), kMateScore) << "line " << k + 1;
      if (k) {
        EXPECT_GE(r.lines[k - 1].score, r.lines[k].score) << "line " << k + 1;
      }
    }
    if (::testing::Test::HasFailure()) break;  // one position is enough to show it
  }
}

TEST(SearchLegality, ThreadsStillAnswerLegalMoves) {
  Searcher searcher(4);
  searcher.set_threads(2);
  std::mt19937_64 rng(99);
  for (int i = 0; i < 20; ++i) {
    Position pos = random_game_position(Rules{}, rng, std::uniform_int_distribution<int>(0, 80)(rng));
    if (!has_legal_move(pos)) continue;
    SearchLimits limits;
    limits.depth = 3;
    const SearchResult r = searcher.search(pos, limits);
    EXPECT_TRUE(is_legal(pos, r.best)) << pos.fen();
  }
}

// Lazy SMP: helpers skip depths by their own patterns and the main thread
// skips none, so a depth-limited search with several threads still ends
// at that depth, and the shared table (one generation per search) leads
// every thread to the same forced mates as one thread finds.
TEST(SearchThreads, SeveralThreadsFindTheMatesOneThreadFinds) {
  for (const MateCase& c : kLongerMates) {
    for (int threads : {2, 3, 5}) {
      SCOPED_TRACE(std::string(c.name) + " threads " + std::to_string(threads));
      Position pos = fen_position(c.fen);
      Searcher searcher(4);
      searcher.set_threads(threads);
      SearchLimits limits;
      limits.depth = c.depth + 1;
      const SearchResult r = searcher.search(pos, limits);
      EXPECT_EQ(r.depth, c.depth + 1);
      EXPECT_EQ(to_coordinate(r.best), c.best);
      EXPECT_EQ(kMateScore - r.score, 2 * c.moves - 1);
    }
  }
}

// ---------------------------------------------------------------------------
// Draws

// White has a bare king against king and pawn: taking the pawn leaves the
// two kings alone, a draw, and anything else keeps White a pawn down.
TEST(SearchDraw, BareKingsDrawIsTaken) {
  Position pos = fen_position("7k/8/8/3p4/3K4/8/8/8 w 0 1");
  const SearchResult r = search_to_depth(pos, 4);
  EXPECT_EQ(to_coordinate(r.best), "d4d5");
  EXPECT_EQ(r.score, 0);
  pos.make(r.best);
  EXPECT_EQ(game_status(pos).termination, Termination::kBareKings);
}

// Black has a bare king against three pieces; the position after Kf8-e8
// would occur for the third time, a draw, which is the best Black can get.
TEST(SearchDraw, RepetitionIsTakenWhenBehind) {
  Position pos = fen_position("4k3/8/8/8/1L4L1/2W5/8/4K3 w 0 1");
  for (const char* m : {"e1d1", "e8f8", "d1e1", "f8e8", "e1d1", "e8f8", "d1e1"})
    pos.make(parse_coordinate(pos, m));
  ASSERT_EQ(pos.repetition_count(), 2);
  const std::string fen_now = pos.fen();
  const SearchResult r = search_to_depth(pos, 4);
  EXPECT_EQ(to_coordinate(r.best), "f8e8");
  EXPECT_EQ(r.score, 0);
  pos.make(r.best);
  EXPECT_EQ(game_status(pos).termination, Termination::kRepetition);

  // Without the history the same placement is simply lost for Black.
  Position fresh = fen_position(fen_now);
  EXPECT_LT(search_to_depth(fresh, 4).score, -500);
}

// 99 plies without capture: every quiet move ends the game drawn, so a huge
// material lead is worth nothing, unless a capture resets the count or a
// mate comes first (a mate given on the 100th ply is a mate).
TEST(SearchDraw, HundredPlyRule) {
  {
    Position pos = fen_position("7k/8/8/8/8/8/8/K2LWC2 w 99 80");
    ASSERT_FALSE(forced_win(pos, 1));
    const SearchResult r = search_to_depth(pos, 3);
    EXPECT_EQ(r.score, 0);
    EXPECT_TRUE(is_legal(pos, r.best));
    // The same placement with a fresh count is a big plus.
    Position fresh = fen_position("7k/8/8/8/8/8/8/K2LWC2 w 0 80");
    EXPECT_GT(search_to_depth(fresh, 3).score, 500);
  }
  {
    Position pos = fen_position("7k/8/8/8/3p4/8/8/K2LWC2 w 99 80");
    const SearchResult r = search_to_depth(pos, 3);
    EXPECT_NE(r.best.captures, 0u) << to_coordinate(r.best);
    EXPECT_GT(r.score, 500);
  }
  {
    Position pos = fen_position("K5pk/6pp/8/8/7p/8/8/CP6 w 99 80");
    const SearchResult r = search_to_depth(pos, 3);
    EXPECT_EQ(to_coordinate(r.best), "a1e5");
    EXPECT_EQ(r.score, mate_in(1));
    pos.make(r.best);
    EXPECT_EQ(game_status(pos).termination, Termination::kCheckmate);
  }
}

// ---------------------------------------------------------------------------
// Limits and stop()

TEST(SearchLimits, NodeLimitIsRespected) {
  std::mt19937_64 rng(5);
  for (int threads : {1, 2}) {
    for (std::uint64_t limit : {2000u, 10000u, 30000u}) {
      SCOPED_TRACE("threads " + std::to_string(threads) + " nodes " + std::to_string(limit));
      Searcher searcher(4);
      searcher.set_threads(threads);
      Position pos = random_game_position(Rules{}, rng, 10);
      SearchLimits limits;
      limits.nodes = limit;
      const SearchResult r = searcher.search(pos, limits);
      // Each thread looks at the limit every 1024 of its nodes (fewer for
      // small limits), and a thread goes on to its next look after another
      // has stopped the search: up to two intervals past the limit per thread.
      EXPECT_LE(r.nodes, limit + 2048u * threads);
      EXPECT_GE(r.nodes, limit);  // a middlegame is not exhausted this fast
      EXPECT_TRUE(is_legal(pos, r.best));
    }
  }
}

// A small node budget is looked at more often than every 1,024 nodes: the
// search stops within a quarter of it (two looks per thread past it, each
// look at most an eighth of the budget shared by the threads apart).
TEST(SearchLimits, SmallNodeLimitIsNotOvershotByAnInterval) {
  std::mt19937_64 rng(9);
  for (int threads : {1, 2}) {
    for (std::uint64_t limit : {1u, 40u, 100u, 700u}) {
      SCOPED_TRACE("threads " + std::to_string(threads) + " nodes " + std::to_string(limit));
      Searcher searcher(1);
      searcher.set_threads(threads);
      Position pos = random_game_position(Rules{}, rng, 10);
      SearchLimits limits;
      limits.nodes = limit;
      const SearchResult r = searcher.search(pos, limits);
      EXPECT_LE(r.nodes, limit + limit / 4 + 2u * threads);
      EXPECT_GE(r.nodes, limit);
      EXPECT_TRUE(is_legal(pos, r.best));
    }
  }
}

TEST(SearchLimits, MovetimeIsRespected) {
  Searcher searcher(4);
  Position pos = Position::start();
  SearchLimits limits;
  limits.movetime_ms = 60;
  const auto start = std::chrono::steady_clock::now();
  const SearchResult r = searcher.search(pos, limits);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  // Stopped by the clock, on any machine: not before the time was up (less
  // the 5 ms kept for answering), and short of the depth cap, which no
  // machine reaches from the start position in 60 ms. A search that ignored
  // the clock would run on until ctest's timeout.
  EXPECT_GE(ms, limits.movetime_ms - 5);
  EXPECT_GT(r.depth, 0);
  EXPECT_LT(r.depth, kMaxPly);
  EXPECT_TRUE(is_legal(pos, r.best));
}

TEST(SearchLimits, StopEndsAnInfiniteSearch) {
  Searcher searcher(4);
  Position pos = Position::start();
  SearchLimits limits;
  limits.infinite = true;
  std::atomic<int> infos{0};
  SearchResult result;
  std::thread worker([&] { result = searcher.search(pos, limits, [&](const SearchInfo&) { ++infos; }); });
  // Wait until the search has surely begun (stop() before search() would be
  // forgotten: search() clears the flag when it starts).
  // No time bound here: a search that never reports, or that stop() does not
  // end, hangs until ctest's timeout and fails there.
  while (infos.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  searcher.stop();
  worker.join();
  EXPECT_TRUE(is_legal(pos, result.best));
  EXPECT_GT(result.depth, 0);
  EXPECT_LT(result.depth, kMaxPly);  // ended by stop(), not by running out of depth
  EXPECT_EQ(pos.fen(), Position::start().fen());
}

TEST(SearchScore, ScoreText) {
  EXPECT_EQ(score_text(35), "cp 35");
  EXPECT_EQ(score_text(-120), "cp -120");
  EXPECT_EQ(score_text(mate_in(1)), "mate 1");
  EXPECT_EQ(score_text(mate_in(3)), "mate 3");
  EXPECT_EQ(score_text(-kMateScore + 2), "mate -1");
  EXPECT_EQ(score_text(-kMateScore + 4), "mate -2");
}

// ---------------------------------------------------------------------------
// Root moves (searchmoves) and the mate search

TEST(SearchRootMoves, OnlyTheGivenMovesAreSearched) {
  Position pos = Position::start();
  SearchLimits limits;
  limits.depth = 3;
  limits.multipv = 5;
  limits.root_moves = {parse_coordinate(pos, "a2a3"), parse_coordinate(pos, "h2h4")};
  Searcher searcher;
  const SearchResult r = searcher.search(pos, limits);
  ASSERT_EQ(r.lines.size(), 2u);
  std::set<std::string> shown;
  for (const SearchInfo& line : r.lines) shown.insert(to_coordinate(line.pv[0]));
  EXPECT_EQ(shown, (std::set<std::string>{"a2a3", "h2h4"}));
  EXPECT_TRUE(shown.count(to_coordinate(r.best)));
}

TEST(SearchMate, MateSearchFindsAMateWithinItsBoundOrNone) {
  // A mate in two (e6e2 first), with no mate in one.
  Position pos = fen_position("8/8/4X2x/6P1/4l3/1K6/8/2k5 w 0 1");
  Searcher searcher;
  SearchLimits two;
  two.mate = 2;
  const SearchResult r = searcher.search(pos, two);
  EXPECT_EQ(to_coordinate(r.best), "e6e2");
  EXPECT_EQ(r.score, mate_in(2));
  EXPECT_LE(r.depth, 3) << "searched past the bound";
  SearchLimits one;
  one.mate = 1;
  const SearchResult none = searcher.search(pos, one);
  EXPECT_EQ(none.depth, 1);
  EXPECT_LT(none.score, kMateBound);
}

// ---------------------------------------------------------------------------
}  // namespace
}  // namespace ultima
