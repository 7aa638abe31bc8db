// Match statistics (Elo, interval, LOS, SPRT), the match runner and game
// records.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>

#include "engine/play/elo.h"
#include "engine/play/match.h"
#include "engine/play/pgn.h"
#include "engine/play/player_spec.h"
#include "test_util.h"

namespace ultima {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- Elo arithmetic, against values worked out by hand ----

TEST(Elo, ScoreMapsToLogisticElo) {
  EXPECT_NEAR(elo_from_score(0.75), 190.8485, 1e-3);  // -400 log10(1/3)
  EXPECT_NEAR(elo_from_score(0.25), -190.8485, 1e-3);
  EXPECT_EQ(elo_from_score(0.5), 0.0);
  EXPECT_EQ(elo_from_score(1.0), kInf);
  EXPECT_EQ(elo_from_score(0.0), -kInf);
  for (double elo : {-600.0, -35.5, 0.0, 12.0, 400.0}) EXPECT_NEAR(elo_from_score(score_from_elo(elo)), elo, 1e-9);
  EXPECT_NEAR(score_from_elo(400), 10.0 / 11.0, 1e-12);
}

TEST(Elo, EachKindOfFigureHasOneText) {
  EXPECT_EQ(format_elo(190.84), "+190.8");
  EXPECT_EQ(format_elo(-0.01), "+0.0");
  EXPECT_EQ(format_elo(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(format_rating(2861.4), "2861");
  EXPECT_EQ(format_rating(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(format_rating(2861.4, 2790.2, 2932.6), "2861 [2790, 2933]");
  EXPECT_EQ(format_rating(2861, std::nan(""), 2900), "2861");
}

TEST(Elo, AChainAddsDifferencesAndItsHalfWidthsInQuadrature) {
  EloEstimate a;
  a.elo = 100;
  a.lower = 70;
  a.upper = 130;  // half-width 30
  EloEstimate b;
  b.elo = -20;
  b.lower = -60;
  b.upper = 20;  // half-width 40
  EloChain chain(1000);
  chain.add(a);
  EXPECT_DOUBLE_EQ(chain.elo(), 1100);
  EXPECT_DOUBLE_EQ(chain.half_width(), 30);
  chain.add(b);
  EXPECT_DOUBLE_EQ(chain.elo(), 1080);
  EXPECT_DOUBLE_EQ(chain.half_width(), 50);  // sqrt(30^2 + 40^2)
  EXPECT_DOUBLE_EQ(chain.low(), 1030);
  EXPECT_DOUBLE_EQ(chain.high(), 1130);
  chain.reset();
  EXPECT_DOUBLE_EQ(chain.elo(), 1000);
  EXPECT_DOUBLE_EQ(chain.half_width(), 0);
  // An infinite link makes the rest of the chain unbounded, not NaN.
  EloEstimate sweep;
  sweep.elo = 400;
  sweep.lower = 200;
  sweep.upper = std::numeric_limits<double>::infinity();
  chain.add(sweep);
  EXPECT_TRUE(std::isinf(chain.half_width()));
}

TEST(Elo, ScoreCountsDrawsAsHalf) {
  const Wdl r{60, 20, 20};
  EXPECT_EQ(r.games(), 100);
  EXPECT_DOUBLE_EQ(r.score(), 0.7);
  EXPECT_DOUBLE_EQ(Wdl{}.score(), 0.5);
}

TEST(Elo, IntervalComesFromTheTrinomialVariance) {
  // +60 =20 -20: score 0.7, per-game variance (60*0.09 + 20*0.04 + 20*0.49)/100
  // = 0.16, standard error 0.04, score interval 0.7 -+ 1.96*0.04.
  const EloEstimate e = estimate_elo(Wdl{60, 20, 20});
  EXPECT_NEAR(e.score, 0.7, 1e-12);
  EXPECT_NEAR(e.elo, 147.1907, 1e-3);
  EXPECT_NEAR(e.lower, 86.2250, 1e-3);
  EXPECT_NEAR(e.upper, 218.2518, 1e-3);
}

// Equal, or within 1e-9 when finite.
void expect_same(double a, double b) {
  if (std::isinf(a) || std::isinf(b)) EXPECT_EQ(a, b);
  else EXPECT_NEAR(a, b, 1e-9);
}

TEST(Elo, MirroredResultsGiveMirroredIntervals) {
  for (const Wdl& r : {Wdl{60, 20, 20}, Wdl{3, 10, 1}, Wdl{7, 0, 2}}) {
    const EloEstimate a = estimate_elo(r);
    const EloEstimate b = estimate_elo(Wdl{r.losses, r.draws, r.wins});
    expect_same(a.elo, -b.elo);
    expect_same(a.lower, -b.upper);
    expect_same(a.upper, -b.lower);
    EXPECT_NEAR(a.los, 1 - b.los, 1e-12);
    EXPECT_LT(a.lower, a.elo);
    EXPECT_GT(a.upper, a.elo);
  }
}

TEST(Elo, EvenScoreIsZeroWithASymmetricInterval) {
  const EloEstimate e = estimate_elo(Wdl{10, 5, 10});
  EXPECT_EQ(e.elo, 0.0);
  EXPECT_NEAR(e.lower, -e.upper, 1e-9);
  EXPECT_GT(e.upper, 0);
  EXPECT_DOUBLE_EQ(e.los, 0.5);
}

TEST(Elo, ExtremeScoresHaveOneInfiniteEnd) {
  // Ten straight wins: the score p with p^10 = 0.025 is 0.6915, +140.2 Elo.
  const EloEstimate wins = estimate_elo(Wdl{10, 0, 0});
  EXPECT_EQ(wins.elo, kInf);
  EXPECT_EQ(wins.upper, kInf);
  EXPECT_NEAR(wins.lower, 140.2172, 1e-3);
  const EloEstimate losses = estimate_elo(Wdl{0, 0, 10});
  EXPECT_EQ(losses.elo, -kInf);
  EXPECT_EQ(losses.lower, -kInf);
  EXPECT_NEAR(losses.upper, -140.2172, 1e-3);
  PairCounts five_sweeps;
  five_sweeps.counts[4] = 5;
  EXPECT_NEAR(estimate_elo(five_sweeps).lower, 140.2172, 1e-3);  // ten games
  // Near 100%, the normal interval's upper end passes score 1.
  EXPECT_EQ(estimate_elo(Wdl{9, 0, 1}).upper, kInf);
}

TEST(Elo, NoGamesOrAllDrawsStayFinite) {
  const EloEstimate none = estimate_elo(Wdl{});
  EXPECT_EQ(none.elo, 0.0);
  EXPECT_EQ(none.lower, -kInf);
  EXPECT_EQ(none.upper, kInf);
  // Ten draws: variance floor 1/40, standard error 0.05.
  const EloEstimate draws = estimate_elo(Wdl{0, 10, 0});
  EXPECT_EQ(draws.elo, 0.0);
  EXPECT_NEAR(draws.upper, 68.9888, 1e-3);
  EXPECT_NEAR(draws.lower, -68.9888, 1e-3);
}

TEST(Elo, LikelihoodOfSuperiorityUsesWinsAndLosses) {
  // 1/2 (1 + erf(20 / sqrt(200))).
  EXPECT_NEAR(likelihood_of_superiority(Wdl{60, 500, 40}), 0.977250, 1e-6);
  EXPECT_DOUBLE_EQ(likelihood_of_superiority(Wdl{5, 3, 5}), 0.5);
  EXPECT_DOUBLE_EQ(likelihood_of_superiority(Wdl{0, 7, 0}), 0.5);
}

TEST(Elo, PairsScoreLikeTheirGames) {
  PairCounts p;
  p.add(2);
  p.add(1.5);
  p.add(1);
  p.add(1);
  EXPECT_EQ(p.pairs(), 4);
  EXPECT_EQ(p.counts[4], 1);
  EXPECT_EQ(p.counts[3], 1);
  EXPECT_EQ(p.counts[2], 2);
  EXPECT_DOUBLE_EQ(p.score(), 5.5 / 8);
  const EloEstimate e = estimate_elo(p);
  EXPECT_NEAR(e.elo, elo_from_score(5.5 / 8), 1e-9);
  EXPECT_LT(e.lower, e.elo);
  EXPECT_GT(e.upper, e.elo);
}

TEST(Sprt, DecidesOnCraftedCounts) {
  const SprtConfig c{0, 10, 0.05, 0.05};
  const SprtState h1 = sprt(Wdl{600, 200, 200}, c);
  EXPECT_NEAR(h1.lower_bound, -2.944439, 1e-6);  // log(0.05 / 0.95)
  EXPECT_NEAR(h1.upper_bound, 2.944439, 1e-6);
  EXPECT_NEAR(h1.llr, 17.3371, 1e-3);
  EXPECT_EQ(h1.verdict, SprtVerdict::kAcceptH1);

  const SprtState undecided = sprt(Wdl{300, 400, 300}, c);
  EXPECT_NEAR(undecided.llr, -0.68997, 1e-4);
  EXPECT_EQ(undecided.verdict, SprtVerdict::kContinue);

  const SprtState h0 = sprt(Wdl{3000, 4000, 3000}, c);
  EXPECT_NEAR(h0.llr, -6.8997, 1e-3);
  EXPECT_EQ(h0.verdict, SprtVerdict::kAcceptH0);

  EXPECT_NEAR(sprt(Wdl{120, 100, 80}, c).llr, 1.58237, 1e-4);
  // Only draws: variance 1/(4n), LLR = 2 n^2 (s1 - s0)(1 - s0 - s1).
  EXPECT_NEAR(sprt(Wdl{0, 50, 0}, c).llr, -1.03496, 1e-4);
  EXPECT_EQ(sprt(Wdl{0, 200, 0}, c).verdict, SprtVerdict::kAcceptH0);
  // Only wins: a stronger player still stops the test.
  EXPECT_EQ(sprt(Wdl{14, 0, 0}, SprtConfig{0, 5}).verdict, SprtVerdict::kContinue);
  EXPECT_EQ(sprt(Wdl{15, 0, 0}, SprtConfig{0, 5}).verdict, SprtVerdict::kAcceptH1);
  EXPECT_EQ(sprt(Wdl{}, c).llr, 0.0);
}

TEST(Sprt, ParsesItsOption) {
  const SprtConfig a = parse_sprt("0,5");
  EXPECT_EQ(a.elo0, 0);
  EXPECT_EQ(a.elo1, 5);
  EXPECT_EQ(a.alpha, 0.05);
  EXPECT_EQ(a.beta, 0.05);
  const SprtConfig b = parse_sprt("-3,2.5,0.1,0.2");
  EXPECT_EQ(b.elo0, -3);
  EXPECT_EQ(b.elo1, 2.5);
  EXPECT_EQ(b.alpha, 0.1);
  EXPECT_EQ(b.beta, 0.2);
  for (const char* bad : {"5", "5,0", "a,b", "0,5,0.6,0.1", "0,5,0.1", "0,5x"})
    EXPECT_THROW(parse_sprt(bad), std::invalid_argument) << bad;
}

// ---- The match runner ----

PlayerFactory random_players() {
  return [] { return std::make_unique<RandomPlayer>(); };
}

MatchConfig small_match() {
  MatchConfig c;
  c.games = 10;
  c.seed = 7;
  c.max_plies = 200;
  return c;
}

std::string all_records(const MatchResult& r) {
  std::string text;
  for (const MatchGame& g : r.games) text += write_pgn(g.record);
  return text;
}

TEST(Match, IsReproducibleFromTheSeedWhateverTheConcurrency) {
  MatchConfig c = small_match();
  const MatchResult a = play_match(random_players(), random_players(), c);
  const MatchResult b = play_match(random_players(), random_players(), c);
  c.concurrency = 3;
  const MatchResult threaded = play_match(random_players(), random_players(), c);
  ASSERT_EQ(a.games.size(), 10u);
  EXPECT_EQ(all_records(a), all_records(b));
  EXPECT_EQ(all_records(a), all_records(threaded));
  EXPECT_EQ(a.results.wins, threaded.results.wins);
  EXPECT_EQ(a.results.draws, threaded.results.draws);
  c.seed = 8;
  EXPECT_NE(all_records(a), all_records(play_match(random_players(), random_players(), c)));
}

TEST(Match, ColoursAlternateAndEachOpeningIsPlayedWithBoth) {
  MatchConfig c = small_match();
  c.opening_min_plies = 3;
  c.opening_max_plies = 5;
  const MatchResult r = play_match(random_players(), random_players(), c);
  EXPECT_EQ(r.player1, "random (1)");
  EXPECT_EQ(r.player2, "random (2)");
  ASSERT_EQ(r.games.size(), 10u);
  std::vector<std::string> openings;
  for (int i = 0; i < 10; ++i) {
    const MatchGame& g = r.games[i];
    EXPECT_EQ(g.index, i);
    EXPECT_EQ(g.opening, i / 2);
    EXPECT_EQ(g.player1_white, i % 2 == 0);
    EXPECT_EQ(g.record.white, g.player1_white ? "random (1)" : "random (2)");
    EXPECT_EQ(g.record.round, std::to_string(i + 1));
    EXPECT_GE(g.record.opening_plies, 3);
    EXPECT_LE(g.record.opening_plies, 5);
    std::string opening;
    for (int p = 0; p < g.record.opening_plies; ++p) opening += to_coordinate(g.record.moves[p]) + " ";
    if (i % 2) EXPECT_EQ(opening, openings.back()) << "game " << i + 1;
    else openings.push_back(opening);
  }
  // The five openings differ.
  std::sort(openings.begin(), openings.end());
  EXPECT_EQ(std::unique(openings.begin(), openings.end()), openings.end());
  // W/D/L and pairs add up from player 1's side.
  Wdl counted;
  for (const MatchGame& g : r.games) counted.add(g.player1_points());
  EXPECT_EQ(counted.wins, r.results.wins);
  EXPECT_EQ(counted.losses, r.results.losses);
  EXPECT_EQ(r.pairs.pairs(), 5);
}

TEST(Match, MaxPliesEndsGamesAsDraws) {
  MatchConfig c = small_match();
  c.max_plies = 6;
  const MatchResult r = play_match(random_players(), random_players(), c);
  EXPECT_EQ(r.results.draws, 10);
  for (const MatchGame& g : r.games) {
    EXPECT_EQ(g.record.result, Outcome::kDraw);
    EXPECT_EQ(g.record.termination, "max plies");
    EXPECT_EQ(static_cast<int>(g.record.moves.size()), g.record.opening_plies + 6);
  }
}

TEST(Match, GamesEndByTheRules) {
  MatchConfig c = small_match();
  c.games = 6;
  c.max_plies = 2000;
  const MatchResult r = play_match(random_players(), random_players(), c);
  for (const MatchGame& g : r.games) {
    const Position end = final_position(g.record);
    const GameStatus status = game_status(end);
    ASSERT_TRUE(status.over()) << "game " << g.index + 1;
    EXPECT_EQ(g.record.result, status.outcome);
    EXPECT_EQ(g.record.termination, termination_name(status.termination));
  }
}

TEST(Match, OpeningsFromFensAreUsedInTurn) {
  MatchConfig c = small_match();
  c.games = 4;
  const std::string other = "k7/8/8/8/8/8/PPPPPPPP/ILXKWXLC b 0 12";
  c.opening_fens = {Rules{}.start_fen(), other};
  c.opening_min_plies = c.opening_max_plies = 0;
  const MatchResult r = play_match(random_players(), random_players(), c);
  ASSERT_EQ(r.games.size(), 4u);
  EXPECT_EQ(r.games[0].record.opening_plies, 0);
  EXPECT_EQ(write_pgn(r.games[0].record).find("[FEN"), std::string::npos);
  EXPECT_EQ(r.games[2].record.fen, other);
  EXPECT_NE(write_pgn(r.games[3].record).find("[FEN \"" + other + "\"]"), std::string::npos);
  EXPECT_NE(write_pgn(r.games[3].record).find("\n12... "), std::string::npos);

  c.opening_fens = {"k7/8/8/8/8/8/8/K7 w 0 1"};  // bare kings: already drawn
  EXPECT_THROW(play_match(random_players(), random_players(), c), std::invalid_argument);
  c.opening_fens = {"not a fen"};
  EXPECT_THROW(play_match(random_players(), random_players(), c), std::invalid_argument);
}

TEST(Match, ReportsProgressOncePerGame) {
  MatchConfig c = small_match();
  c.concurrency = 2;
  std::vector<int> done;
  play_match(random_players(), random_players(), c, [&](const MatchProgress& p) {
    done.push_back(p.games_done);
    EXPECT_EQ(p.results.games(), p.games_done);
    EXPECT_EQ(p.games_total, 10);
  });
  ASSERT_EQ(done.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(done[i], i + 1);
}

// A random mover that sets `stop` on its N-th move of the match (counting
// both players' moves together through `calls`).
class StoppingPlayer : public Player {
 public:
  StoppingPlayer(std::atomic<int>& calls, int stop_at, std::atomic<bool>& stop)
      : calls_(calls), stop_at_(stop_at), stop_(stop) {}
  std::string name() const override { return "stopper"; }
  MoveChoice choose(Position& pos, std::uint64_t seed, const MoveLimits& = {}) override {
    if (++calls_ == stop_at_) stop_ = true;
    return random_.choose(pos, seed);
  }

 private:
  std::atomic<int>& calls_;
  int stop_at_;
  std::atomic<bool>& stop_;
  RandomPlayer random_;
};

TEST(Match, AnOutsideStopEndsItBeforeTheNextMove) {
  for (const int stop_at : {0, 1, 25, 150}) {
    SCOPED_TRACE("stop at move " + std::to_string(stop_at));
    std::atomic<bool> stop{stop_at == 0};
    std::atomic<int> calls{0};
    const PlayerFactory players = [&] { return std::make_unique<StoppingPlayer>(calls, stop_at, stop); };
    MatchConfig c = small_match();
    c.stop = &stop;
    const MatchResult r = play_match(players, players, c);
    EXPECT_TRUE(r.stopped);
    // No move is asked for after the stop, and the game it fell in is
    // dropped: only whole games count.
    EXPECT_EQ(calls.load(), stop_at);
    EXPECT_LT(r.games.size(), 10u);
    EXPECT_EQ(r.results.games(), static_cast<int>(r.games.size()));
    int moves = 0;
    for (const MatchGame& g : r.games) {
      EXPECT_NE(g.record.result, Outcome::kOngoing);
      moves += static_cast<int>(g.record.moves.size()) - g.record.opening_plies;
    }
    EXPECT_LE(moves, stop_at);
  }
  // The control: a flag never set changes nothing.
  std::atomic<bool> never{false};
  MatchConfig c = small_match();
  c.stop = &never;
  c.concurrency = 2;
  const MatchResult whole = play_match(random_players(), random_players(), c);
  EXPECT_FALSE(whole.stopped);
  EXPECT_EQ(whole.games.size(), 10u);
}

TEST(Match, AnOutsideStopEndsEveryWorker) {
  std::atomic<bool> stop{false};
  std::atomic<int> calls{0};
  const PlayerFactory players = [&] { return std::make_unique<StoppingPlayer>(calls, 40, stop); };
  MatchConfig c = small_match();
  c.concurrency = 3;
  c.stop = &stop;
  const MatchResult r = play_match(players, players, c);
  EXPECT_TRUE(r.stopped);
  // Each of the other two workers may have been past its check already.
  EXPECT_GE(calls.load(), 40);
  EXPECT_LE(calls.load(), 42);
  EXPECT_LT(r.games.size(), 10u);
}

// Takes the king when it can, else the move capturing most, else a random
// move: far stronger than the random mover under the king-capture objective.
class KingHunter : public Player {
 public:
  std::string name() const override { return "hunter"; }
  MoveChoice choose(Position& pos, std::uint64_t seed, const MoveLimits& = {}) override {
    MoveList list;
    generate_legal(pos, list);
    const Bitboard king = pos.pieces(~pos.side_to_move(), kKing);
    std::mt19937_64 rng(seed);
    int best = -1;
    Move choice = list[static_cast<int>(rng() % list.size())];
    for (const Move& m : list) {
      const int value = (m.captures & king ? 100 : 0) + popcount(m.captures);
      if (value > best && value > 0) {
        best = value;
        choice = m;
      }
    }
    return {choice};
  }
};

// Up to 200 games of the king hunter against random moves under an SPRT.
MatchConfig hunter_sprt_match(double elo1) {
  MatchConfig c = small_match();
  c.rules = Rules::preset("zillions");
  c.games = 200;
  c.sprt = SprtConfig{0, elo1, 0.05, 0.05};
  return c;
}

TEST(Match, SprtStopsAtTheSameGameWhateverTheConcurrency) {
  MatchConfig c = hunter_sprt_match(100);
  const PlayerFactory hunter = [] { return std::make_unique<KingHunter>(); };
  const MatchResult a = play_match(hunter, random_players(), c);
  ASSERT_TRUE(a.stopped_by_sprt);
  ASSERT_TRUE(a.sprt);
  EXPECT_EQ(a.sprt->verdict, SprtVerdict::kAcceptH1);
  EXPECT_LT(a.results.games(), 200);
  EXPECT_EQ(static_cast<int>(a.games.size()), a.results.games());
  EXPECT_GT(a.results.score(), 0.75);
  c.concurrency = 3;
  const MatchResult b = play_match(hunter, random_players(), c);
  EXPECT_EQ(a.results.games(), b.results.games());
  EXPECT_EQ(all_records(a), all_records(b));
}

std::vector<GameRecord> records_of(const MatchResult& r, std::initializer_list<int> indices) {
  std::vector<GameRecord> out;
  for (int i : indices) out.push_back(r.games.at(i).record);
  return out;
}

TEST(Match, AResumedMatchPlaysOnlyTheMissingRoundsAndEndsAsTheWholeOne) {
  MatchConfig c = small_match();
  const MatchResult whole = play_match(random_players(), random_players(), c);
  ASSERT_EQ(whole.games.size(), 10u);
  // Rounds 1, 2, 4 and 7 from an earlier run; with two workers, as a run
  // stopped with games in flight leaves them.
  c.resumed = records_of(whole, {0, 1, 3, 6});
  c.concurrency = 2;
  int reports = 0;
  MatchProgress last;
  const MatchResult resumed = play_match(random_players(), random_players(), c, [&](const MatchProgress& p) {
    ++reports;
    last = p;
  });
  EXPECT_EQ(reports, 6);  // only the games played now
  EXPECT_EQ(last.games_done, 10);
  EXPECT_EQ(last.games_resumed, 4);
  EXPECT_EQ(all_records(resumed), all_records(whole));
  EXPECT_EQ(resumed.results.wins, whole.results.wins);
  EXPECT_EQ(resumed.results.draws, whole.results.draws);
  EXPECT_EQ(resumed.pairs.pairs(), 5);
  // A longer match goes on from a shorter one's games.
  MatchConfig longer = small_match();
  longer.games = 14;
  const MatchResult grown = play_match(random_players(), random_players(), longer);
  longer.resumed = records_of(whole, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  reports = 0;
  EXPECT_EQ(all_records(play_match(random_players(), random_players(), longer,
                                   [&](const MatchProgress&) { ++reports; })),
            all_records(grown));
  EXPECT_EQ(reports, 4);
}

TEST(Match, AResumedSprtStopsWhereTheWholeOneDid) {
  MatchConfig c = hunter_sprt_match(5);
  const PlayerFactory hunter = [] { return std::make_unique<KingHunter>(); };
  const MatchResult whole = play_match(hunter, random_players(), c);
  ASSERT_TRUE(whole.stopped_by_sprt);
  ASSERT_GT(whole.games.size(), 8u);
  for (const std::size_t kept : {std::size_t{3}, std::size_t{8}, whole.games.size()}) {
    SCOPED_TRACE("resumed games " + std::to_string(kept));
    c.resumed.clear();
    for (std::size_t i = 0; i < kept; ++i) c.resumed.push_back(whole.games[i].record);
    const MatchResult resumed = play_match(hunter, random_players(), c);
    EXPECT_TRUE(resumed.stopped_by_sprt);
    EXPECT_EQ(resumed.results.games(), whole.results.games());
    EXPECT_EQ(all_records(resumed), all_records(whole));
  }
}

TEST(Match, ResumedGamesFromAnotherMatchAreRefusedByName) {
  MatchConfig c = small_match();
  const MatchResult whole = play_match(random_players(), random_players(), c);
  const auto refusal = [&](std::vector<GameRecord> resumed, MatchConfig config) -> std::string {
    config.resumed = std::move(resumed);
    try {
      play_match(random_players(), random_players(), config);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "accepted";
  };
  auto edited = [&](int index, const std::function<void(GameRecord&)>& edit) {
    GameRecord r = whole.games.at(index).record;
    edit(r);
    return std::vector<GameRecord>{r};
  };
  MatchConfig other_seed = c;
  other_seed.seed = c.seed + 1;
  EXPECT_NE(refusal(records_of(whole, {2}), other_seed).find("Round \"3\"): not this match's opening"),
            std::string::npos);
  MatchConfig other_rules = c;
  other_rules.rules = Rules::preset("cambridge");
  EXPECT_NE(refusal(records_of(whole, {0}), other_rules).find("played under the rules"), std::string::npos);
  MatchConfig shorter = c;
  shorter.games = 4;
  EXPECT_NE(refusal(records_of(whole, {5}), shorter).find("a number from 1 to the match's 4 games"),
            std::string::npos);
  EXPECT_NE(refusal(records_of(whole, {1, 1}), c).find("the round appears twice"), std::string::npos);
  EXPECT_NE(refusal(edited(0, [](GameRecord& r) { r.round = "x1"; }), c).find("Round \"x1\")"),
            std::string::npos);
  EXPECT_NE(refusal(edited(0, [](GameRecord& r) { r.result = Outcome::kOngoing; }), c).find("has no result"),
            std::string::npos);
  // Player 2 was White in round 2: the names must be in those colours.
  EXPECT_NE(refusal(edited(1, [](GameRecord& r) { std::swap(r.white, r.black); }), c)
                .find("played by 'random (1)' (White) and 'random (2)' (Black), but this match's players are "
                      "'random (2)' and 'random (1)'"),
            std::string::npos);
  EXPECT_EQ(refusal(records_of(whole, {1}), c), "accepted");
}

// Plays randomly, then throws (or returns nonsense) at its n-th move.
class FaultyPlayer : public Player {
 public:
  FaultyPlayer(int fail_at, bool illegal) : fail_at_(fail_at), illegal_(illegal) {}
  std::string name() const override { return "faulty"; }
  void new_game() override { moves_ = 0; }
  MoveChoice choose(Position& pos, std::uint64_t seed, const MoveLimits& = {}) override {
    if (++moves_ == fail_at_) {
      if (!illegal_) throw std::runtime_error("out of cheese");
      return {Move::step(0, 63, 0)};
    }
    return RandomPlayer().choose(pos, seed);
  }

 private:
  int fail_at_;
  bool illegal_;
  int moves_ = 0;
};

std::string match_error(const PlayerFactory& p2, int concurrency) {
  MatchConfig c = small_match();
  c.concurrency = concurrency;
  try {
    play_match(random_players(), p2, c);
  } catch (const MatchError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Match, AFailingPlayerGivesAClearError) {
  const std::string thrown = match_error([] { return std::make_unique<FaultyPlayer>(3, false); }, 2);
  EXPECT_NE(thrown.find("player 2 'faulty'"), std::string::npos) << thrown;
  EXPECT_NE(thrown.find("out of cheese"), std::string::npos) << thrown;
  EXPECT_NE(thrown.find("in game "), std::string::npos) << thrown;
  EXPECT_NE(thrown.find(", ply "), std::string::npos) << thrown;

  const std::string illegal = match_error([] { return std::make_unique<FaultyPlayer>(2, true); }, 1);
  EXPECT_NE(illegal.find("illegal move 'a1h8'"), std::string::npos) << illegal;
  EXPECT_NE(illegal.find("in game 1, ply "), std::string::npos) << illegal;

  const std::string factory =
      match_error([]() -> std::unique_ptr<Player> { throw std::invalid_argument("no such level"); }, 2);
  EXPECT_NE(factory.find("cannot create player 2: no such level"), std::string::npos) << factory;
}

// ---- Game records ----

std::filesystem::path temporary_folder() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ultima_match_test_" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(Pgn, WritesTheTagsAndNumberedCoordinateMoves) {
  GameRecord r;
  r.event = "test";
  r.round = "3";
  r.white = "a \"quoted\" name";
  r.black = "b";
  Position pos = Position::start(r.rules);
  for (const char* text : {"a2a3", "a7a6", "h2h4"}) {
    r.moves.push_back(parse_move(pos, text));
    pos.make(r.moves.back());
  }
  r.opening_plies = 2;
  r.result = Outcome::kDraw;
  r.termination = "max plies";
  const std::string text = write_pgn(r);
  EXPECT_EQ(text,
            "[Event \"test\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"3\"]\n"
            "[White \"a \\\"quoted\\\" name\"]\n[Black \"b\"]\n[Result \"1/2-1/2\"]\n[Variant \"ultima\"]\n"
            "[Rules \"abbott1963\"]\n[OpeningPlies \"2\"]\n[Termination \"max plies\"]\n[PlyCount \"3\"]\n\n"
            "1. a2a3 a7a6 2. h2h4 1/2-1/2\n\n");
  const std::vector<GameRecord> back = read_pgn(text);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].white, "a \"quoted\" name");
  EXPECT_EQ(write_pgn(back[0]), text);
}

TEST(Pgn, MatchRecordsRoundTripThroughAFile) {
  MatchConfig c = small_match();
  c.games = 6;
  c.rules = Rules::parse("cambridge,stalemate=draw");
  c.opening_fens = {Rules::parse("cambridge").start_fen(), "k7/8/8/8/8/8/PPPPPPPP/ILXKWXLC b 0 12"};
  const auto dir = temporary_folder();
  c.record_path = (dir / "games.pgn").string();
  c.record_every = 2;
  const MatchResult r = play_match(random_players(), random_players(), c);
  EXPECT_EQ(r.games[0].record.fen, "");  // the start position given as a FEN
  const std::vector<GameRecord> back = read_pgn_file(c.record_path);
  EXPECT_FALSE(std::filesystem::exists(c.record_path + ".tmp"));
  ASSERT_EQ(back.size(), r.games.size());
  for (std::size_t i = 0; i < back.size(); ++i) {
    const GameRecord& a = r.games[i].record;
    const GameRecord& b = back[i];
    EXPECT_EQ(b.rules, a.rules);
    EXPECT_EQ(b.fen, a.fen);
    EXPECT_EQ(b.white, a.white);
    EXPECT_EQ(b.round, a.round);
    EXPECT_EQ(b.result, a.result);
    EXPECT_EQ(b.termination, a.termination);
    EXPECT_EQ(b.opening_plies, a.opening_plies);
    ASSERT_EQ(b.moves.size(), a.moves.size());
    for (std::size_t m = 0; m < a.moves.size(); ++m) {
      EXPECT_EQ(b.moves[m], a.moves[m]);
      EXPECT_EQ(b.moves[m].captures, a.moves[m].captures);
    }
    EXPECT_EQ(write_pgn(b), write_pgn(a));
  }
  std::filesystem::remove_all(dir);
}

TEST(Pgn, AnUnwritableRecordFileFailsBeforeTheMatch) {
  MatchConfig c = small_match();
  c.record_path = "/nonexistent-folder/games.pgn";
  int games = 0;
  EXPECT_THROW(play_match(random_players(), random_players(), c, [&](const MatchProgress&) { ++games; }),
               std::invalid_argument);
  EXPECT_EQ(games, 0);
}

std::string read_error(const std::string& text) {
  try {
    read_pgn(text);
  } catch (const PgnError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Pgn, ABadMoveIsNamedWithItsPly) {
  const std::string illegal = read_error("[Round \"4\"]\n\n1. a2a3 a7a6 2. h1h2 h7h6 *\n");
  EXPECT_NE(illegal.find("game 1 (round 4), ply 3 (2. h1h2): illegal move 'h1h2'"), std::string::npos) << illegal;
  const std::string malformed = read_error("1. a2a3 a7a6 2. a3a9 *\n");
  EXPECT_NE(malformed.find("ply 3 (2. a3a9): malformed move 'a3a9'"), std::string::npos) << malformed;
  const std::string black = read_error("[FEN \"k7/8/8/8/8/8/PPPPPPPP/ILXKWXLC b 0 12\"]\n12... a8a7 h2h3 a7a9 *");
  EXPECT_NE(black.find("ply 3 (13... a7a9)"), std::string::npos) << black;
}

TEST(Pgn, RejectsRecordsThatContradictThemselves) {
  EXPECT_NE(read_error("[Result \"1-0\"]\n1. a2a3 0-1\n").find("Result tag says 1-0"), std::string::npos);
  EXPECT_NE(read_error("[Variant \"chess\"]\n1. e2e4 *\n").find("not 'ultima'"), std::string::npos);
  EXPECT_NE(read_error("[Rules \"nope\"]\n*\n").find("unknown rule preset 'nope'"), std::string::npos);
  EXPECT_NE(read_error("[FEN \"8/8 w\"]\n*\n").find("FEN tag"), std::string::npos);
  EXPECT_NE(read_error("[PlyCount \"3\"]\n1. a2a3 *\n").find("PlyCount is 3"), std::string::npos);
  EXPECT_NE(read_error("1. a2a3\n").find("ends before the game's result"), std::string::npos);
  EXPECT_NE(read_error("1. a2a3 (1. b2b3) *\n").find("variations"), std::string::npos);
  EXPECT_NE(read_error("[Event \"x\n").find("malformed tag"), std::string::npos);
  // Moves after the end: bare kings is a draw at once.
  const std::string over = read_error("[FEN \"k7/8/8/8/8/8/p7/K7 w 0 1\"]\n1. a1a2 a8b8 *\n");
  EXPECT_NE(over.find("ply 2 (1... a8b8): the game was already over (bare kings)"), std::string::npos) << over;
}

TEST(Pgn, ReadsCommentsAndSeveralGames) {
  const std::vector<GameRecord> games = read_pgn(
      "; a file comment\n[Event \"one\"]\n[Result \"*\"]\n\n1.a2a3 {a comment} a7a6 $1 2. h2h4! *\n\n"
      "[Event \"two\"]\n[Opening \"kept\"]\n1. a2a3 *");
  ASSERT_EQ(games.size(), 2u);
  EXPECT_EQ(games[0].moves.size(), 3u);
  EXPECT_EQ(games[1].event, "two");
  ASSERT_EQ(games[1].other_tags.size(), 1u);
  EXPECT_EQ(games[1].other_tags[0].second, "kept");
  EXPECT_TRUE(read_pgn("").empty());
}

}  // namespace
}  // namespace ultima
