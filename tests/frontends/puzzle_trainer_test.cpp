// The puzzle trainer (frontends/server/puzzle_trainer.h) and its Glicko-2
// ratings (glicko2.h): Glickman's worked example, ratings that move up
// with a streak and down with a failure, only first attempts rated, the
// next puzzle drawn near the player's rating, ratings kept in the
// database; and the database's step from schema 1 to 2 keeping every game.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "frontends/server/glicko2.h"
#include "frontends/server/puzzle_trainer.h"
#include "frontends/server/store.h"
#include "test_util.h"

namespace ultima {
namespace {

using test::TempDir;

// The example of Glickman's "Example of the Glicko-2 system": a 1500
// player (deviation 200, volatility 0.06) beats a 1400 (30), loses to a
// 1550 (100) and to a 1700 (300); tau 0.5. His figures: 1464.06, 151.52,
// 0.05999.
TEST(Glicko2, GlickmansWorkedExample) {
  const Glicko after = glicko2_update({1500, 200, 0.06}, {{{1400, 30, 0.06}, 1}, {{1550, 100, 0.06}, 0},
                                                          {{1700, 300, 0.06}, 0}});
  EXPECT_NEAR(after.rating, 1464.06, 0.05);
  EXPECT_NEAR(after.rd, 151.52, 0.05);
  EXPECT_NEAR(after.vol, 0.05999, 0.00001);
  // No games: only the deviation grows.
  const Glicko idle = glicko2_update({1500, 200, 0.06}, {});
  EXPECT_EQ(idle.rating, 1500);
  EXPECT_NEAR(idle.rd, std::sqrt(200.0 * 200 + std::pow(0.06 * 173.7178, 2)), 1e-6);
  EXPECT_NEAR(glicko2_expected({1500, 50, 0.06}, {1500, 50, 0.06}), 0.5, 1e-12);
  EXPECT_GT(glicko2_expected({1700, 50, 0.06}, {1500, 50, 0.06}), 0.7);
}

// Puzzles with ratings spread over the scale, tags alternating.
std::vector<Puzzle> ladder_of_puzzles() {
  std::vector<Puzzle> out;
  for (int i = 0; i < 40; ++i) {
    Puzzle p;
    p.id = std::string("T").append(std::to_string(100 + i));
    p.rating_elo = 300 + 75 * i;  // 300 .. 3225
    p.tags = {i % 2 ? "mate" : "pinch"};
    out.push_back(p);
  }
  return out;
}

TEST(PuzzleTrainer, AStreakRaisesTheRatingAFailureLowersIt) {
  const TempDir dir("trainer");
  const std::vector<Puzzle> puzzles = ladder_of_puzzles();
  std::int64_t now = 1000;
  Store store(dir.path() + "/t.sqlite");
  PuzzleTrainer trainer(store, puzzles, [&] { return now; }, 3);
  const StoredPlayer p = trainer.new_player();
  EXPECT_EQ(p.rating, 1500);
  double rating = p.rating;
  const Puzzle* first = nullptr;
  for (int i = 0; i < 3; ++i) {
    const Puzzle* next = trainer.next(*trainer.player(p.token), "");
    ASSERT_NE(next, nullptr);
    if (!first) first = next;
    const double before = trainer.rating_of(*next).rating;
    const PuzzleTrainer::Outcome o = trainer.attempt(p.token, *next, true);
    EXPECT_TRUE(o.rated);
    EXPECT_GT(o.player.rating, rating) << "solved " << next->id;
    EXPECT_LT(o.puzzle.rating, before) << "a solved puzzle looks easier";
    EXPECT_EQ(o.player.streak, i + 1);
    rating = o.player.rating;
  }
  // A second attempt at the same puzzle is not rated.
  const PuzzleTrainer::Outcome again = trainer.attempt(p.token, *first, false);
  EXPECT_FALSE(again.rated);
  EXPECT_EQ(trainer.player(p.token)->rating, rating);
  EXPECT_EQ(trainer.player(p.token)->streak, 3);
  // A failure lowers it and ends the streak, which stays the best.
  const Puzzle* hard = trainer.next(*trainer.player(p.token), "");
  const PuzzleTrainer::Outcome failed = trainer.attempt(p.token, *hard, false);
  EXPECT_TRUE(failed.rated);
  EXPECT_LT(failed.player.rating, rating);
  EXPECT_EQ(failed.player.streak, 0);
  EXPECT_EQ(failed.player.best_streak, 3);
  EXPECT_EQ(failed.player.attempts, 4);
  EXPECT_EQ(failed.player.solved, 3);
  EXPECT_THROW(trainer.attempt("no-such-token", *hard, true), std::invalid_argument);
  // A trainer over the same database (a restarted server) knows it all.
  PuzzleTrainer later(store, puzzles, [&] { return now; });
  EXPECT_EQ(later.player(p.token)->rating, failed.player.rating);
  EXPECT_EQ(later.rating_of(*hard).rating, failed.puzzle.rating);
  EXPECT_EQ(later.rating_of(*hard).attempts, 1);
}

TEST(PuzzleTrainer, TheNextPuzzleIsNearThePlayersRatingAndNew) {
  const std::vector<Puzzle> puzzles = ladder_of_puzzles();
  Store store(":memory:");
  PuzzleTrainer trainer(store, puzzles, {}, 7);
  StoredPlayer p = trainer.new_player();
  std::set<std::string> seen;
  for (int i = 0; i < 20; ++i) {
    const Puzzle* next = trainer.next(p, "", 4);
    ASSERT_NE(next, nullptr);
    // Among the four nearest of those left: within 150 of 1500 at first,
    // as the ladder's steps are 75.
    if (i == 0) {
      EXPECT_LE(std::abs(trainer.rating_of(*next).rating - p.rating), 150) << next->id;
    }
    EXPECT_TRUE(seen.insert(next->id).second) << next->id << " drawn twice";
    trainer.attempt(p.token, *next, false);
    p = *trainer.player(p.token);
  }
  // Failures brought the player down; with a pool of one the next puzzle
  // is the untried one nearest the player's rating.
  EXPECT_LT(p.rating, 1500);
  const Puzzle* low = trainer.next(p, "", 1);
  ASSERT_NE(low, nullptr);
  double nearest = 1e9;
  for (const Puzzle& q : puzzles)
    if (!seen.count(q.id)) nearest = std::min(nearest, std::abs(trainer.rating_of(q).rating - p.rating));
  EXPECT_EQ(std::abs(trainer.rating_of(*low).rating - p.rating), nearest) << low->id;
  // A tag narrows the choice; when every puzzle is tried, none is left.
  for (int i = 0; i < 30; ++i) {
    const Puzzle* next = trainer.next(p, "mate");
    if (!next) break;
    EXPECT_EQ(next->tags, std::vector<std::string>{"mate"});
    trainer.attempt(p.token, *next, true);
  }
  EXPECT_EQ(trainer.next(p, "mate"), nullptr);
  EXPECT_NE(trainer.next(p, ""), nullptr);
}

// A database written by the previous schema (games only) gains the
// trainer's tables and keeps every game and move.
TEST(Store, MigratingFromTheFirstSchemaKeepsEveryGame) {
  const TempDir dir("store-migrate");
  const std::string file = dir.path() + "/old.sqlite";
  std::vector<StoredGame> games;
  {
    Store old(file, 1);
    EXPECT_EQ(old.schema_version(), 1);
    for (int i = 0; i < 5; ++i) {
      StoredGame g;
      g.id = "g" + std::to_string(i);
      g.rules = "abbott1963";
      g.status = i % 2 ? "over" : "playing";
      g.created_ms = g.updated_ms = 100 + i;
      g.moves.assign(static_cast<std::size_t>(i), "d2d5");
      old.put_game(g);
      games.push_back(g);
    }
    EXPECT_THROW(old.player("x"), StoreError) << "schema 1 has no players";
  }
  Store now(file);
  EXPECT_EQ(now.schema_version(), Store::kSchemaVersion);
  for (const StoredGame& g : games) {
    const std::optional<StoredGame> read = now.game(g.id);
    ASSERT_TRUE(read) << g.id;
    EXPECT_EQ(read->moves, g.moves);
    EXPECT_EQ(read->status, g.status);
    EXPECT_EQ(read->bot, "");
  }
  // Step 3's columns: a game against a bot.
  StoredGame bot_game = games[0];
  bot_game.bot = "novice";
  bot_game.bot_movetime_ms = 700;
  now.put_game(bot_game);
  EXPECT_EQ(now.game(bot_game.id)->bot, "novice");
  EXPECT_EQ(now.game(bot_game.id)->bot_movetime_ms, 700);
  StoredPlayer p;
  p.token = "t";
  now.put_player(p);
  EXPECT_TRUE(now.player("t"));
}

}  // namespace
}  // namespace ultima
