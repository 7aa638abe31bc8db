// Puzzles: the extractor against a brute-force count of mating moves, tags
// of known captures, the file format and its errors, and every puzzle of the
// shipped file replayed and confirmed by the search.
#include "engine/play/puzzle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/play/player_spec.h"
#include "engine/rules/movegen.h"
#include "engine/rules/notation.h"
#include "engine/rules/rules.h"
#include "engine/search/search.h"
#include "test_util.h"

namespace ultima {
namespace {

bool has_tag(const std::vector<std::string>& tags, const std::string& tag) {
  return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

Move move_of(const Position& pos, const std::string& text) { return parse_coordinate(pos, text); }

// The moves that win at once, counted by trying each.
std::vector<Move> winning_moves(Position& pos) {
  MoveList list;
  generate_legal(pos, list);
  std::vector<Move> wins;
  for (const Move& m : list)
    if (wins_at_once(pos, m)) wins.push_back(m);
  return wins;
}

// A mate in one is a puzzle exactly when one move mates, and then that move
// is its solution. Positions come from seeded random placements, the
// number of mating moves from trying every move.
TEST(Puzzle, MateInOneIsAPuzzleOnlyWhenTheMateIsUnique) {
  std::mt19937_64 rng(7);
  Searcher searcher(4);
  PuzzleSettings settings;
  int unique_seen = 0, several_seen = 0;
  for (int tries = 0; tries < 20000 && (unique_seen < 4 || several_seen < 4); ++tries) {
    Position pos = test::random_placement(Rules{}, rng, 12);
    if (game_status(pos).over()) continue;
    const std::vector<Move> wins = winning_moves(pos);
    if (wins.empty()) continue;
    if (wins.size() == 1 && unique_seen >= 4) continue;
    if (wins.size() > 1 && several_seen >= 4) continue;
    SCOPED_TRACE(pos.fen());
    const std::optional<Puzzle> puzzle = find_puzzle(pos, settings, searcher);
    if (wins.size() == 1) {
      ++unique_seen;
      ASSERT_TRUE(puzzle.has_value()) << "a unique mate in one must be a puzzle";
      EXPECT_EQ(puzzle->kind, PuzzleKind::kMate);
      EXPECT_EQ(puzzle->mate_in, 1);
      ASSERT_EQ(puzzle->solution.size(), 1u);
      EXPECT_EQ(puzzle->solution[0], wins[0]);
      EXPECT_EQ(replay_problem(*puzzle), "");
      EXPECT_EQ(confirm_problem(*puzzle, searcher), "");
    } else {
      ++several_seen;
      EXPECT_FALSE(puzzle.has_value()) << wins.size() << " mating moves, yet a puzzle";
    }
  }
  EXPECT_GE(unique_seen, 4);
  EXPECT_GE(several_seen, 4);
}

// One pawn move pinches the black leaper against the d5 pawn; anything else
// loses material. With a second pawn that can pinch it too, the win no
// longer rests on one move.
TEST(Puzzle, DecisiveGainIsAPuzzleOnlyWhenOneMoveWinsIt) {
  Searcher searcher(4);
  const Position unique = Position::from_fen("7k/8/8/P1lP4/8/8/8/2P4K w 0 1");
  const std::optional<Puzzle> puzzle = find_puzzle(unique, PuzzleSettings{}, searcher);
  ASSERT_TRUE(puzzle.has_value());
  EXPECT_EQ(puzzle->kind, PuzzleKind::kGain);
  ASSERT_FALSE(puzzle->solution.empty());
  EXPECT_EQ(puzzle->solution[0], move_of(unique, "a5b5"));
  EXPECT_TRUE(has_tag(puzzle->tags, "pinch"));
  EXPECT_GE(puzzle->material_cp, PuzzleSettings{}.material_cp);
  EXPECT_EQ(puzzle->depth, PuzzleSettings{}.screen_depth + 2);
  EXPECT_EQ(replay_problem(*puzzle), "");
  EXPECT_EQ(confirm_problem(*puzzle, searcher), "");

  const Position two_ways = Position::from_fen("7k/8/8/P1lP4/8/8/8/1PP4K w 0 1");
  EXPECT_FALSE(find_puzzle(two_ways, PuzzleSettings{}, searcher).has_value());
}

TEST(Puzzle, PositionWithoutATacticIsNoPuzzle) {
  Searcher searcher(4);
  EXPECT_FALSE(find_puzzle(Position::start(), PuzzleSettings{}, searcher).has_value());
}

TEST(Puzzle, TagsNameTheCaptureModes) {
  struct Case {
    const char* fen;
    const char* move;
    const char* tag;
  };
  const Case cases[] = {
      {"7k/8/8/P1pP4/8/8/8/7K w 0 1", "a5b5", "pinch"},
      {"7k/8/8/3p4/3W4/8/8/7K w 0 1", "d4d2", "withdrawal"},
      {"7k/8/8/8/8/p7/8/L6K w 0 1", "a1a5", "leap"},
      {"7k/8/8/4p3/8/2C5/8/4K3 w 0 1", "c3c5", "coordination"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.fen);
    const Position pos = Position::from_fen(c.fen);
    const std::vector<std::string> tags = puzzle_tags(pos, {move_of(pos, c.move)});
    EXPECT_EQ(tags, std::vector<std::string>{c.tag});
  }
  // A chameleon withdrawing from a withdrawer: both the piece and the mode.
  const Position chameleon = Position::from_fen("7k/8/8/3w4/3X4/8/8/7K w 0 1");
  EXPECT_EQ(puzzle_tags(chameleon, {move_of(chameleon, "d4d2")}),
            (std::vector<std::string>{"chameleon", "withdrawal"}));
  // A quiet move tags nothing.
  const Position pos = Position::from_fen("7k/8/8/3p4/3W4/8/8/7K w 0 1");
  EXPECT_TRUE(puzzle_tags(pos, {move_of(pos, "h1g1")}).empty());
}

TEST(Puzzle, ImmobilizerFreezingIsTagged) {
  // The immobilizer steps next to the black withdrawer, which was free.
  const Position pos = Position::from_fen("7k/8/8/3w4/8/8/I7/7K w 0 1");
  const std::vector<std::string> tags = puzzle_tags(pos, {move_of(pos, "a2c4")});
  EXPECT_TRUE(has_tag(tags, "immobilization"));
}

// A mate in three that the depth-3 screen cannot see (from the games of
// the shipped file): found only with the mate probe, then proven as every
// mate is, with the unique move at each of the solver's turns.
TEST(Puzzle, TheMateProbeFindsAMateInThreeTheScreenCannotSee) {
  Searcher searcher(PuzzleSettings{}.hash_mb);
  const Position pos = Position::from_fen("p3P1p1/2k5/6P1/2W4P/8/8/8/L6K w 19 112");
  const std::optional<Puzzle> unprobed = find_puzzle(pos, PuzzleSettings{}, searcher);
  EXPECT_FALSE(unprobed && unprobed->kind == PuzzleKind::kMate) << "the screen sees the mate";
  PuzzleSettings probing;
  probing.deep_mate = true;
  probing.deep_mate_cp = 1000;
  const std::optional<Puzzle> puzzle = find_puzzle(pos, probing, searcher);
  ASSERT_TRUE(puzzle.has_value());
  EXPECT_EQ(puzzle->kind, PuzzleKind::kMate);
  EXPECT_EQ(puzzle->mate_in, 3);
  std::vector<std::string> line;
  for (const Move& m : puzzle->solution) line.push_back(to_coordinate(m));
  EXPECT_EQ(line, (std::vector<std::string>{"a1g7", "c7b8", "c5c7", "b8a7", "c7b7"}));
  EXPECT_EQ(puzzle->tags, std::vector<std::string>{"mate"});
  EXPECT_EQ(confirm_problem(*puzzle, searcher), "");
  // A position scoring below the probe's threshold is not probed.
  probing.deep_mate_cp = kMateBound;
  const std::optional<Puzzle> below = find_puzzle(pos, probing, searcher);
  EXPECT_FALSE(below && below->kind == PuzzleKind::kMate);
}

// A legal move with the theme looked for, found without search.
TEST(Puzzle, HasTaggedMoveSeesAThemeOnTheBoard) {
  const Position withdrawer = Position::from_fen("7k/8/8/3p4/3W4/8/8/7K w 0 1");
  EXPECT_TRUE(has_tagged_move(withdrawer, {"withdrawal"}));
  EXPECT_TRUE(has_tagged_move(withdrawer, {"removal", "withdrawal"}));
  EXPECT_FALSE(has_tagged_move(withdrawer, {"coordination", "leap"}));
  EXPECT_FALSE(has_tagged_move(withdrawer, {}));
  const Position freezer = Position::from_fen("7k/8/8/3w4/8/8/I7/7K w 0 1");
  EXPECT_TRUE(has_tagged_move(freezer, {"immobilization"}));
  EXPECT_FALSE(has_tagged_move(freezer, {"withdrawal"}));
  // Nothing can be captured from the start position.
  EXPECT_FALSE(has_tagged_move(Position::start(), {"pinch", "withdrawal", "leap", "coordination", "king"}));
}

LevelSolves solves(const std::string& level, int elo, double solve, int runs = 10) {
  LevelSolves s;
  s.level = level;
  s.elo = elo;
  s.solve = solve;
  s.runs = runs;
  return s;
}

// The rating is where the solve probability crosses one half, linearly
// interpolated in Elo between the last level below it and the first at or
// above it.
TEST(PuzzleRating, InterpolatesWhereTheSolveProbabilityCrossesOneHalf) {
  // 871 + (0.5 - 0.4) / (0.8 - 0.4) * (1258 - 871) = 967.75.
  InterpolatedRating r = interpolated_rating(
      {solves("novice", 275, 0.1), solves("beginner", 570, 0.2), solves("casual", 871, 0.4),
       solves("intermediate", 1258, 0.8)});
  EXPECT_EQ(r.level, "intermediate");
  EXPECT_EQ(r.elo, 968);
  // 1682 + (0.5 - 0.0017) / (0.8479 - 0.0017) * (2272 - 1682) = 2029.43.
  r = interpolated_rating({solves("advanced", 1682, 0.0017), solves("expert", 2272, 0.8479)});
  EXPECT_EQ(r.level, "expert");
  EXPECT_EQ(r.elo, 2029);
  // Exactly one half is reached at the level itself.
  r = interpolated_rating({solves("casual", 871, 0.3), solves("intermediate", 1258, 0.5)});
  EXPECT_EQ(r.level, "intermediate");
  EXPECT_EQ(r.elo, 1258);
  // Just over one half below: the rating stays just above the level below.
  r = interpolated_rating({solves("casual", 871, 0.49), solves("intermediate", 1258, 0.99)});
  EXPECT_EQ(r.elo, 879);  // 871 + 0.02 * 387 = 878.74
  // The weakest level already at one half: its own Elo, nothing below it.
  r = interpolated_rating({solves("novice", 275, 0.7), solves("beginner", 570, 0.9)});
  EXPECT_EQ(r.level, "novice");
  EXPECT_EQ(r.elo, 275);
  // The first level at one half decides, whatever comes after.
  r = interpolated_rating({solves("a", 100, 0.0), solves("b", 300, 0.6), solves("c", 500, 0.1)});
  EXPECT_EQ(r.level, "b");
  EXPECT_EQ(r.elo, 267);  // 100 + 0.5 / 0.6 * 200 = 266.67
  // After a level without an Elo: the level's own.
  r = interpolated_rating({solves("unrated", 0, 0.2), solves("club", 2861, 1.0, 1)});
  EXPECT_EQ(r.level, "club");
  EXPECT_EQ(r.elo, 2861);
  // No level at one half: none.
  r = interpolated_rating({solves("novice", 275, 0.1), solves("grandmaster", 3547, 0.0, 1)});
  EXPECT_EQ(r.level, "none");
  EXPECT_EQ(r.elo, 0);
  EXPECT_EQ(interpolated_rating({}).level, "none");
}

// A level that plays every move at random solves a mate in one with the
// chance of picking it among the legal moves, counted exactly; a search
// without noise always does (one run stands for all); a level half random
// half searching, half of that plus half the random chance.
TEST(PuzzleRating, RatePuzzleCountsRandomMovesExactlyAndIsReproducible) {
  Searcher searcher(4);
  const Position pos = Position::from_fen("7k/8/8/P1lP4/8/8/8/2P4K w 0 1");
  const std::optional<Puzzle> found = find_puzzle(pos, PuzzleSettings{}, searcher);
  ASSERT_TRUE(found.has_value());
  Puzzle puzzle = *found;
  ASSERT_EQ(puzzle.solution.size(), 1u);
  const double legal = count_legal(pos);
  auto level = [](const std::string& name, int elo, double blunder_rate) {
    Level l;
    l.name = name;
    l.depth = 1;
    l.blunder_rate = blunder_rate;
    l.elo = elo;
    l.has_elo = true;
    return l;
  };
  const std::vector<Level> levels = {level("random", 100, 1.0), level("half", 500, 0.5), level("full", 900, 0)};
  rate_puzzle(puzzle, levels, 6);
  const double random_chance = std::round(1 / legal * 10000) / 10000;
  const double half_chance = std::round((0.5 + 0.5 / legal) * 10000) / 10000;
  ASSERT_EQ(puzzle.solves.size(), 2u) << "the levels stop at the first at one half";
  EXPECT_EQ(puzzle.solves[0], solves("random", 100, random_chance, 6));
  EXPECT_EQ(puzzle.solves[1], solves("half", 500, half_chance, 6));
  EXPECT_EQ(puzzle.rating, "half");
  EXPECT_EQ(puzzle.rating_elo,
            std::lround(100 + (0.5 - random_chance) / (half_chance - random_chance) * 400));
  EXPECT_EQ(rating_problem(puzzle), "");

  // A search without noise or random moves runs once, and solves it.
  rate_puzzle(puzzle, {level("full", 900, 0)}, 6);
  EXPECT_EQ(puzzle.solves, std::vector<LevelSolves>{solves("full", 900, 1.0, 1)});
  EXPECT_EQ(puzzle.rating, "full");
  EXPECT_EQ(puzzle.rating_elo, 900);

  // The ladder's levels: the same puzzle, rated twice, the same; only the
  // rating's fields change.
  const std::vector<Level> ladder = load_levels();
  Puzzle once = *found, twice = *found;
  rate_puzzle(once, ladder);
  rate_puzzle(twice, ladder);
  EXPECT_EQ(puzzle_to_json(once), puzzle_to_json(twice));
  EXPECT_EQ(once.solution, found->solution);
  EXPECT_EQ(once.fen, found->fen);
  EXPECT_EQ(static_cast<int>(once.solves[0].runs), kPuzzleRatingRuns);
  EXPECT_EQ(rating_problem(once), "");
  EXPECT_GT(once.rating_elo, 0);
}

// A rating that its solves do not give is caught.
TEST(PuzzleRating, RatingProblemCatchesARatingItsSolvesDoNotGive) {
  Puzzle p;
  p.rating = "intermediate";
  p.rating_elo = 968;
  EXPECT_EQ(rating_problem(p), "") << "no solves: nothing to check";
  p.solves = {solves("casual", 871, 0.4), solves("intermediate", 1258, 0.8)};
  EXPECT_EQ(rating_problem(p), "");
  p.rating_elo = 1258;
  EXPECT_NE(rating_problem(p).find("intermediate (Elo 968)"), std::string::npos) << rating_problem(p);
  p.rating_elo = 968;
  p.rating = "casual";
  EXPECT_NE(rating_problem(p), "");
  p.rating = "intermediate";
  p.solves = {solves("casual", 871, 0.6), solves("intermediate", 1258, 0.8)};
  p.rating = "casual";
  p.rating_elo = 871;
  EXPECT_NE(rating_problem(p).find("go on after casual"), std::string::npos) << rating_problem(p);
}

Puzzle sample_puzzle() {
  Puzzle p;
  p.id = "T1";
  p.fen = "7k/8/8/P1pP4/8/8/8/7K w 0 1";
  p.kind = PuzzleKind::kGain;
  p.depth = 5;
  p.score_cp = 420;
  p.second_cp = 10;
  const Position pos = Position::from_fen(p.fen);
  p.solution = {move_of(pos, "a5b5")};
  p.material_cp = 100;
  p.tags = {"pinch"};
  p.rating = "advanced";
  p.rating_elo = 1682;
  p.solves = {solves("intermediate", 1258, 0.4998), solves("advanced", 1682, 0.5, 1)};
  p.source = "hand-made";
  return p;
}

TEST(PuzzleFile, RoundTripsThroughJson) {
  const Puzzle p = sample_puzzle();
  const Puzzle q = puzzle_from_json(puzzle_to_json(p), "test");
  EXPECT_EQ(puzzle_to_json(q), puzzle_to_json(p));
  EXPECT_EQ(q.solution, p.solution);
  EXPECT_EQ(q.solves, p.solves);
  EXPECT_EQ(replay_problem(q), "");
  EXPECT_EQ(rating_problem(q), "");
  // A file made before the solves were kept reads without them.
  std::string old = puzzle_to_json(p);
  const auto from = old.find(",\"solves\":");
  old.erase(from, old.find("],", from) + 1 - from);
  const Puzzle r = puzzle_from_json(old, "test");
  EXPECT_TRUE(r.solves.empty());
  EXPECT_EQ(r.rating_elo, 1682);
}

TEST(PuzzleFile, ReplayFindsAWrongMaterialClaim) {
  Puzzle p = sample_puzzle();
  p.material_cp = 300;
  EXPECT_NE(replay_problem(p).find("material"), std::string::npos) << replay_problem(p);
}

TEST(PuzzleFile, MalformedLinesAreRefusedWithTheLineNamed) {
  const std::string good = puzzle_to_json(sample_puzzle());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  const std::map<std::string, std::string> bad = {
      {"{not json", "not JSON"},
      {"[1,2]", "not a JSON object"},
      {with("\"kind\":\"gain\"", "\"kind\":\"puzzle\""), "kind"},
      {with("\"a5b5\"", "\"a5b6\""), "solution[0] 'a5b6'"},
      {with("\"pinch\"", "\"fork\""), "unknown tag"},
      {with("\"fen\":\"7k", "\"fen\":\"9k"), "bad FEN"},
      {with("\"rules\":\"abbott1963\"", "\"rules\":\"nosuch\""), "bad rules"},
      {with("\"rating_elo\":1682", "\"rating_elo\":\"high\""), "rating_elo"},
      {with("\"depth\":5,", ""), "depth"},
      {with("\"solve\":0.4998", "\"solve\":1.5"), "solves[0]: 'solve' is not a probability"},
      {with("\"runs\":1,\"solve\":0.5}", "\"runs\":0,\"solve\":0.5}"), "solves[1]: 'runs'"},
      {with("{\"elo\":1258,", "{"), "solves[0] has no 'elo'"},
      {with("\"level\":\"advanced\"", "\"level\":7"), "solves[1]: 'level'"},
      {with("\"solves\":[", "\"solves\":5,\"x\":["), "field 'solves' is not a list"},
  };
  for (const auto& [line, problem] : bad) {
    SCOPED_TRACE(line);
    const std::string text = good + "\n\n" + line + "\n" + good + "\n";
    try {
      read_puzzles(text, "f.jsonl");
      ADD_FAILURE() << "accepted";
    } catch (const PuzzleError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("f.jsonl line 3"), std::string::npos) << what;
      EXPECT_NE(what.find(problem), std::string::npos) << what;
    }
  }
  EXPECT_EQ(read_puzzles(good + "\n" + good + "\n", "f.jsonl").size(), 2u);
}

// Sanitizer builds run the search several times slower: there the search
// confirms a seeded sample of the shipped puzzles, elsewhere all of them.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// What the shipped file holds at least (docs/puzzles.md, "What is in it").
constexpr std::size_t kShippedPuzzles = 1669;
constexpr int kShippedMatesInTwo = 575;
constexpr int kShippedMatesInThree = 56;
constexpr int kShippedWithdrawals = 56;
constexpr int kShippedCoordinations = 108;
constexpr int kShippedRemovals = 4;

const std::vector<Puzzle>& shipped_puzzles() {
  static const std::vector<Puzzle> puzzles = read_puzzle_file(default_puzzle_file());
  return puzzles;
}

// The median rating_elo of the mates in `moves` moves.
int median_mate_elo(const std::vector<Puzzle>& puzzles, int moves) {
  std::vector<int> elos;
  for (const Puzzle& p : puzzles)
    if (p.kind == PuzzleKind::kMate && p.mate_in == moves) elos.push_back(p.rating_elo);
  if (elos.empty()) return 0;
  std::nth_element(elos.begin(), elos.begin() + static_cast<std::ptrdiff_t>(elos.size() / 2), elos.end());
  return elos[elos.size() / 2];
}

// The shipped file: every puzzle replays legally and ends in mate or with
// the material it states, its tags are those of its line, its rating a
// level (or none) that its solves give, no two come from one position, and
// the kinds, tags and ratings are varied.
TEST(ShippedPuzzles, EveryPuzzleReplaysAndWins) {
  const std::vector<Puzzle>& puzzles = shipped_puzzles();
  ASSERT_GE(puzzles.size(), kShippedPuzzles);
  std::map<std::string, int> elo_of = {{"none", 0}};
  for (const Level& l : load_levels()) elo_of[l.name] = l.has_elo ? l.elo : 0;
  std::set<std::string> ids, keys, tags, ratings;
  std::set<PuzzleKind> kinds;
  std::map<int, int> mates;  // moves: puzzles
  std::map<std::string, int> tag_count;
  std::map<int, int> elo_count;
  for (const Puzzle& p : puzzles) {
    SCOPED_TRACE(p.id);
    EXPECT_TRUE(ids.insert(p.id).second) << "id used twice";
    EXPECT_TRUE(keys.insert(puzzle_position_key(p.fen)).second) << "a second puzzle from one position";
    EXPECT_EQ(replay_problem(p), "");
    EXPECT_EQ(p.tags, puzzle_tags(Position::from_fen(p.fen, p.rules), p.solution));
    // The Elo is the level's when the file was made; a ladder run may since
    // have measured it again.
    ASSERT_TRUE(elo_of.count(p.rating)) << "rating '" << p.rating << "' is not a level";
    EXPECT_EQ(p.rating_elo == 0, elo_of[p.rating] == 0);
    // The rating is the one its levels' solve probabilities give, and the
    // Elo lies between the level below the rating's and the rating's.
    ASSERT_FALSE(p.solves.empty());
    EXPECT_EQ(rating_problem(p), "");
    if (p.rating != "none") {
      EXPECT_EQ(p.solves.back().level, p.rating);
      EXPECT_LE(p.rating_elo, p.solves.back().elo);
      if (p.solves.size() > 1) {
        EXPECT_GT(p.rating_elo, p.solves[p.solves.size() - 2].elo);
      }
    }
    EXPECT_EQ(p.rules, Rules{});
    tags.insert(p.tags.begin(), p.tags.end());
    ratings.insert(p.rating);
    kinds.insert(p.kind);
    if (p.kind == PuzzleKind::kMate) ++mates[p.mate_in];
    for (const std::string& t : p.tags) ++tag_count[t];
    ++elo_count[p.rating_elo];
  }
  EXPECT_EQ(kinds.size(), 2u);
  EXPECT_GE(tags.size(), 8u);
  EXPECT_GE(ratings.size(), 4u);
  // Mates of every length and the rare themes (docs/puzzles.md's tables).
  EXPECT_GE(mates[2], kShippedMatesInTwo);
  EXPECT_GE(mates[3], kShippedMatesInThree);
  EXPECT_GE(tag_count["withdrawal"], kShippedWithdrawals);
  EXPECT_GE(tag_count["coordination"], kShippedCoordinations);
  EXPECT_GE(tag_count["removal"], kShippedRemovals);
  // The starting ratings are spread: many values, none held by more than
  // an eighth of the puzzles, and the longer the mate, the higher its
  // median rating.
  EXPECT_GE(elo_count.size(), 120u);
  for (const auto& [elo, count] : elo_count) EXPECT_LE(count * 8, static_cast<int>(puzzles.size())) << "Elo " << elo;
  EXPECT_LT(median_mate_elo(puzzles, 1) + 500, median_mate_elo(puzzles, 2));
  EXPECT_LT(median_mate_elo(puzzles, 2) + 500, median_mate_elo(puzzles, 3));
}

// The puzzles of the first release keep their ids, positions and
// solutions (players' attempts are stored by id): a checksum (FNV-1a) of
// "id fen moves" lines of the first 1,290.
TEST(ShippedPuzzles, TheFirstPuzzlesKeepTheirIdsPositionsAndSolutions) {
  const std::vector<Puzzle>& puzzles = shipped_puzzles();
  ASSERT_GE(puzzles.size(), 1290u);
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < 1290; ++i) {
    const Puzzle& p = puzzles[i];
    char id[32];
    std::snprintf(id, sizeof id, "P%05zu", i + 1);
    ASSERT_EQ(p.id, id);
    std::string line = p.id + " " + p.fen;
    for (std::size_t k = 0; k < p.solution.size(); ++k) {
      line += ' ';
      line += to_coordinate(p.solution[k]);
    }
    for (const char c : line + "\n") {
      hash ^= static_cast<unsigned char>(c);
      hash *= 0x100000001b3ull;
    }
  }
  EXPECT_EQ(hash, 0xe09b263f32a793b5ull);
  // New puzzles follow with the next ids, in order.
  for (std::size_t i = 1290; i < puzzles.size(); ++i) {
    char id[32];
    std::snprintf(id, sizeof id, "P%05zu", i + 1);
    EXPECT_EQ(puzzles[i].id, id);
  }
}

// The search confirms every puzzle (`confirm_problem`: the exact mate
// search at every solver turn, the gain's depth for its first move).
TEST(ShippedPuzzles, TheSearchConfirmsEveryPuzzle) {
  const std::vector<Puzzle>& puzzles = shipped_puzzles();
  std::vector<std::size_t> order(puzzles.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (kSanitized) {
    std::mt19937_64 rng(2026);
    std::shuffle(order.begin(), order.end(), rng);
    order.resize(std::min<std::size_t>(order.size(), 150));
  }
  // The table size of the extraction: a search's answer near a margin can
  // depend on it.
  Searcher searcher(PuzzleSettings{}.hash_mb);
  for (std::size_t i : order) EXPECT_EQ(confirm_problem(puzzles[i], searcher), "") << puzzles[i].id;
}

// After `move`, does every reply leave a mate in one (or lose at once)?
bool mates_in_two_by_trying(Position& pos, const Move& move) {
  const Outcome win = pos.side_to_move() == kWhite ? Outcome::kWhiteWins : Outcome::kBlackWins;
  pos.make(move);
  bool forced = !game_status(pos).over();
  MoveList replies;
  if (forced) generate_legal(pos, replies);
  for (const Move& r : replies) {
    if (!forced) break;
    pos.make(r);
    const GameStatus status = game_status(pos);
    forced = status.over() ? status.outcome == win : !test::mates_in_one_by_trying(pos).empty();
    pos.unmake();
  }
  pos.unmake();
  return forced;
}

TEST(RandomMate, TheSeedGivesTheGameAndTheMatingMovesAreCheckedByTryingEveryMove) {
  Searcher searcher(4);
  int seen[3] = {0, 0, 0};
  for (std::uint64_t seed = 1; seed < 400 && (seen[1] < 2 || seen[2] < 2); ++seed) {
    std::mt19937_64 rng(seed);
    const std::optional<RandomMate> mate = random_game_mate(rng, Rules{}, 2, searcher);
    if (!mate) continue;
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + mate->pos.fen());
    ASSERT_TRUE(mate->moves == 1 || mate->moves == 2);
    if (seen[mate->moves] >= 2) continue;
    ++seen[mate->moves];
    // The line from the start reaches the position, at a probed ply.
    Position replay = Position::start();
    for (const Move& m : mate->line) replay.make(m);
    EXPECT_EQ(replay.fen(), mate->pos.fen());
    EXPECT_GE(mate->line.size(), 20u);
    EXPECT_EQ(mate->line.size() % 3, 0u);
    std::mt19937_64 again(seed);
    EXPECT_EQ(random_game_mate(again, Rules{}, 2, searcher)->line, mate->line);

    Position pos = mate->pos;
    const std::vector<Move> in_one = test::mates_in_one_by_trying(pos);
    const std::vector<Move> mating = mating_moves(pos, mate->moves, searcher);
    ASSERT_FALSE(mating.empty());
    std::set<std::uint16_t> codes;
    for (const Move& m : mating) codes.insert(m.code);
    EXPECT_EQ(codes.size(), mating.size()) << "a move listed twice";
    if (mate->moves == 1) {
      // Every mating move, up to the limit of 8.
      EXPECT_EQ(mating.size(), std::min<std::size_t>(8, in_one.size()));
      for (const Move& m : mating)
        EXPECT_NE(std::find(in_one.begin(), in_one.end(), m), in_one.end()) << to_coordinate(m) << " does not mate";
    } else {
      EXPECT_TRUE(in_one.empty()) << "a mate in two with a mate in one";
      // Each listed key move forces mate (the first two: trying is slow).
      for (std::size_t i = 0; i < std::min<std::size_t>(2, mating.size()); ++i)
        EXPECT_TRUE(mates_in_two_by_trying(pos, mating[i])) << to_coordinate(mating[i]) << " does not force mate";
    }
  }
  EXPECT_EQ(seen[1], 2);
  EXPECT_EQ(seen[2], 2);
  // No mate: nothing listed.
  EXPECT_TRUE(mating_moves(Position::start(), 1, searcher).empty());
  EXPECT_TRUE(mating_moves(Position::start(), 2, searcher).empty());
}

// Sparse boards: the line reaches a position of at most the pieces asked
// for, the seed replays it, and its mate is one that trying every move
// confirms (a mate in one) or that the exact search's key move forces.
TEST(RandomMate, SparseBoardsHoldAtMostTheirPiecesAndAProvenMate) {
  Searcher searcher(4);
  int found = 0;
  for (std::uint64_t seed = 1; seed < 200 && found < 4; ++seed) {
    std::mt19937_64 rng(seed);
    const std::optional<RandomMate> mate = random_sparse_mate(rng, Rules{}, 2, searcher, 10);
    if (!mate) continue;
    ++found;
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + mate->pos.fen());
    EXPECT_LE(popcount(mate->pos.occupied()), 10);
    Position replay = Position::start();
    for (const Move& m : mate->line) replay.make(m);
    EXPECT_EQ(replay.fen(), mate->pos.fen());
    std::mt19937_64 again(seed);
    EXPECT_EQ(random_sparse_mate(again, Rules{}, 2, searcher, 10)->line, mate->line);
    Position pos = mate->pos;
    const std::vector<Move> in_one = test::mates_in_one_by_trying(pos);
    const std::vector<Move> mating = mating_moves(pos, mate->moves, searcher);
    ASSERT_FALSE(mating.empty());
    if (mate->moves == 1) {
      EXPECT_FALSE(in_one.empty());
    } else {
      ASSERT_EQ(mate->moves, 2);
      EXPECT_TRUE(in_one.empty()) << "a mate in two with a mate in one";
      EXPECT_TRUE(mates_in_two_by_trying(pos, mating[0])) << to_coordinate(mating[0]) << " does not force mate";
    }
  }
  EXPECT_EQ(found, 4);
}

}  // namespace
}  // namespace ultima
