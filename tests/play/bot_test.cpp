// The bot catalogue and what goes with it: bot files and bots.json round
// trips, bad files refused naming the file and key, bots by name as player
// specs, UCI_Elo and the Bot option, skill limiting, and the style figures
// counted on a scripted game.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/play/bot.h"
#include "engine/play/level.h"
#include "engine/play/match.h"
#include "engine/play/player_spec.h"
#include "engine/play/style.h"
#include "engine/rules/rules.h"
#include "test_util.h"

namespace ultima {
namespace {

namespace fs = std::filesystem;

// A bots folder of the test's own, named by $ULTIMA_BOTS while it lives.
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Bot files

// A network bot's network is the file its spec plays (relative to the bot
// file); a shipped network is found by the bot's name or, as "best", by the
// highest Elo among rated network bots.
TEST(BotFile, ShippedNetworksAreFoundByNameAndTheBestByElo) {
  test::BotsFolder folder;
  folder.write("weak-net", "name: weak-net\ndescription: d\nstyle: network\n"
                           "spec: \"mcts:weights=nets/weak.unn,playouts=8\"\norder: 3\nelo: 900\n");
  folder.write("strong-net", "name: strong-net\ndescription: d\nstyle: network\n"
                             "spec: \"mcts:playouts=400,weights=nets/strong.unn\"\norder: 5\nelo: 2100\n");
  folder.write("unrated-net", "name: unrated-net\ndescription: d\nstyle: network\n"
                              "spec: \"mcts:weights=/abs/unrated.unn\"\norder: 6\n");
  folder.write("searcher", "name: searcher\ndescription: d\nstyle: s\nspec: \"search:depth=2\"\norder: 7\nelo: 3000\n");
  const std::string nets = (fs::path(folder.dir()) / "nets").string();
  EXPECT_EQ(shipped_network("weak-net"), nets + "/weak.unn");
  EXPECT_EQ(shipped_network("strong-net"), nets + "/strong.unn");
  EXPECT_EQ(shipped_network("unrated-net"), "/abs/unrated.unn");
  EXPECT_EQ(shipped_network("best"), nets + "/strong.unn") << "the searcher is rated higher but has no network";
  EXPECT_EQ(shipped_network("searcher"), std::nullopt);
  EXPECT_EQ(shipped_network("no-such-bot"), std::nullopt);
  EXPECT_EQ(shipped_network("expert"), std::nullopt) << "a level has no network";
}

TEST(BotFile, RoundTrips) {
  Bot bot;
  bot.name = "attacker-2";
  bot.description = "presses the king: weights: high # not a comment";
  bot.style = "attacker";
  bot.spec = "search:depth=2,noise=40";
  bot.order = 5.25;
  bot.elo = 1700;
  bot.has_elo = true;
  bot.elo_low = 1650;
  bot.elo_high = 1760;
  bot.has_interval = true;
  const Bot back = Bot::parse(bot.to_yaml(), "test.yaml");
  EXPECT_EQ(back.name, bot.name);
  EXPECT_EQ(back.description, bot.description);
  EXPECT_EQ(back.style, bot.style);
  EXPECT_EQ(back.spec, bot.spec);
  EXPECT_EQ(back.order, bot.order);
  EXPECT_EQ(back.elo, bot.elo);
  EXPECT_EQ(back.elo_low, bot.elo_low);
  EXPECT_EQ(back.elo_high, bot.elo_high);
  EXPECT_TRUE(back.has_elo);
  EXPECT_TRUE(back.has_interval);
  EXPECT_EQ(back.to_yaml(), bot.to_yaml());

  Bot unrated = bot;
  unrated.has_elo = unrated.has_interval = false;
  const Bot back2 = Bot::parse(unrated.to_yaml(), "test.yaml");
  EXPECT_FALSE(back2.has_elo);
  EXPECT_FALSE(back2.has_interval);
}

TEST(BotFile, RelativeNetworksAreFoundFromTheBotFilesFolder) {
  Bot bot;
  bot.origin = "/srv/bots/early.yaml";
  bot.spec = "mcts:weights=nets/early.unn,playouts=8,backend=eigen";
  EXPECT_EQ(bot.playable_spec(), "mcts:weights=/srv/bots/nets/early.unn,playouts=8,backend=eigen");
  bot.spec = "mcts:playouts=8,weights=../models/m.unn";
  EXPECT_EQ(bot.playable_spec(), "mcts:playouts=8,weights=/srv/models/m.unn");
  // Absolute paths, random weights, other keys and other kinds stay as written.
  for (const std::string spec : {"mcts:weights=/abs/m.unn,playouts=8", "mcts:weights=random", "mcts:playouts=8",
                                 "search:depth=2,skill=5", "novice"}) {
    bot.spec = spec;
    EXPECT_EQ(bot.playable_spec(), spec);
  }
  bot.name = "a";
  bot.description = "a network";
  bot.style = "network";
  bot.spec = "mcts:weights=nets/a.unn";
  EXPECT_EQ(Bot::parse(bot.to_yaml(), "/x/y/a.yaml").playable_spec(), "mcts:weights=/x/y/nets/a.unn");
}

TEST(BotFile, MalformedFilesNameTheFileAndKey) {
  const std::string good = "name: a\ndescription: d\nstyle: s\nspec: random\n";
  struct Case {
    std::string text, expected;
  };
  const std::vector<Case> cases = {
      {good + "colour: red\n", "bad.yaml: unknown bot key 'colour'"},
      {"name: a\ndescription: d\nstyle: s\n", "bad.yaml: 'spec' is missing"},
      {"name: a\nstyle: s\nspec: random\n", "bad.yaml: 'description' is missing"},
      {good + "elo: strong\n", "bad.yaml: 'elo' must be an integer"},
      {good + "order: [1, 2]\n", "bad.yaml: 'order' must be a single value"},
      {good + "elo: 100\nelo_low: 50\n", "bad.yaml: 'elo_low' and 'elo_high' come together"},
      {good + "elo: 100\nelo_low: 150\nelo_high: 200\n", "bad.yaml: 'elo' must lie from 'elo_low' to 'elo_high'"},
      {"name: has space\ndescription: d\nstyle: s\nspec: random\n", "bad.yaml: 'name' must be"},
      {"name: random\ndescription: d\nstyle: s\nspec: random\n", "bad.yaml: the name 'random'"},
      {"- just\n- a list\n", "bad.yaml: expected key: value pairs"},
      {"name: [unclosed\n", "bad.yaml: not valid YAML"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string m = message_of([&] { Bot::parse(c.text, "bad.yaml"); });
    EXPECT_NE(m.find(c.expected), std::string::npos) << m;
  }
}

TEST(BotFile, KeysAreSetKeepingComments) {
  const std::string text = "# a comment\nname: a\nelo: 12   # measured\n";
  const std::string out = set_yaml_keys(text, {{"elo", "345"}, {"elo_low", "300"}});
  EXPECT_EQ(out, "# a comment\nname: a\nelo: 345   # measured\nelo_low: 300\n");
}

// The catalogue

TEST(BotCatalogue, LevelsThenBotFilesByOrder) {
  test::BotsFolder folder;
  folder.write("mid", "name: mid\ndescription: between\nstyle: test\nspec: random\norder: 3.5\nelo: 900\n");
  folder.write("top", "name: top\ndescription: above all\nstyle: test\nspec: search:depth=1\norder: 100\n");
  const std::vector<Bot> bots = load_catalogue();
  const std::vector<Level> levels = load_levels();
  ASSERT_EQ(bots.size(), levels.size() + 2);
  for (std::size_t i = 1; i < bots.size(); ++i) EXPECT_LE(bots[i - 1].order, bots[i].order);
  EXPECT_EQ(bots.back().name, "top");
  int level_count = 0;
  for (const Bot& b : bots) {
    if (!b.is_level) continue;
    ++level_count;
    EXPECT_EQ(b.spec, b.name);
    EXPECT_EQ(find_level(b.name).elo, b.elo);
  }
  EXPECT_EQ(level_count, static_cast<int>(levels.size()));
  ASSERT_TRUE(find_bot("mid"));
  EXPECT_EQ(find_bot("mid")->elo, 900);
  EXPECT_FALSE(find_bot("nobody"));
}

TEST(BotCatalogue, EveryShippedBotFileLoadsAndMakesAPlayer) {
  const std::vector<Bot> bots = load_catalogue();
  Position pos = Position::start();
  for (const Bot& b : bots) {
    SCOPED_TRACE(b.name);
    EXPECT_FALSE(b.description.empty());
    EXPECT_FALSE(b.style.empty());
    if (b.spec.rfind("mcts:", 0) == 0 && b.spec.find("weights=") != std::string::npos) continue;  // needs a network
    auto player = make_player(b.name);
    EXPECT_EQ(player->name(), b.name);
    if (b.is_level && find_level(b.name).nodes > 50000) continue;  // the top levels: club's search, longer
    EXPECT_TRUE(test::is_legal(pos, player->choose(pos, 7).move));
  }
}

TEST(BotCatalogue, DuplicateNamesAndMisnamedFilesAreRefused) {
  {
    test::BotsFolder folder;
    const std::string level = load_levels().front().name;
    folder.write(level, "name: " + level + "\ndescription: d\nstyle: s\nspec: random\n");
    const std::string m = message_of([] { load_catalogue(); });
    EXPECT_NE(m.find("two bots named '" + level + "'"), std::string::npos) << m;
    // The level itself still plays: levels are looked up first.
    EXPECT_EQ(make_player(level)->name(), level);
  }
  {
    test::BotsFolder folder;
    folder.write("file-name", "name: other\ndescription: d\nstyle: s\nspec: random\n");
    const std::string m = message_of([] { load_catalogue(); });
    EXPECT_NE(m.find("must be in other.yaml"), std::string::npos) << m;
  }
}

TEST(BotCatalogue, BotsAreSpecs) {
  test::BotsFolder folder;
  folder.write("mover", "name: mover\ndescription: d\nstyle: s\nspec: random\n");
  folder.write("chained", "name: chained\ndescription: d\nstyle: s\nspec: mover\n");
  folder.write("broken", "name: broken\ndescription: d\nstyle: s\nspec: search:depht=2\n");
  Position pos = Position::start();
  auto mover = make_player("mover");
  auto prefixed = make_player("bot:mover");
  EXPECT_EQ(mover->name(), "mover");
  EXPECT_EQ(prefixed->name(), "mover");
  // It plays as its spec: the random mover with the same seed.
  RandomPlayer random;
  for (std::uint64_t seed = 1; seed < 20; ++seed) EXPECT_EQ(mover->choose(pos, seed).move, random.choose(pos, seed).move);
  std::string m = message_of([] { make_player("chained"); });
  EXPECT_NE(m.find("chained.yaml: 'spec' names the bot 'mover'"), std::string::npos) << m;
  m = message_of([] { make_player("broken"); });
  EXPECT_NE(m.find("broken.yaml: 'spec'"), std::string::npos) << m;
  EXPECT_NE(m.find("depht"), std::string::npos) << m;
  m = message_of([] { make_player("movr"); });
  EXPECT_NE(m.find("unknown player spec or bot 'movr' (did you mean 'mover'?)"), std::string::npos) << m;
}

TEST(BotCatalogue, NearestBotByElo) {
  std::vector<Bot> bots(4);
  const int elos[] = {100, 500, 900, 0};
  for (int i = 0; i < 4; ++i) {
    bots[i].name = "b" + std::to_string(i);
    bots[i].elo = elos[i];
    bots[i].has_elo = i < 3;
  }
  EXPECT_EQ(nearest_bot(bots, -50)->name, "b0");
  EXPECT_EQ(nearest_bot(bots, 290)->name, "b0");
  EXPECT_EQ(nearest_bot(bots, 300)->name, "b0");  // a tie: the weaker
  EXPECT_EQ(nearest_bot(bots, 310)->name, "b1");
  EXPECT_EQ(nearest_bot(bots, 5000)->name, "b2");
  EXPECT_EQ(nearest_bot({}, 100), nullptr);
  bots.resize(1);
  bots[0].has_elo = false;
  EXPECT_EQ(nearest_bot(bots, 100), nullptr);
}

// bots.json

BotsReport sample_report() {
  BotsReport r;
  r.rules = "abbott1963";
  r.games_per_pair = 40;
  r.seed = 12345678901234ull;
  r.date = "2026-12-01T18:00:00Z";
  BotRating a;
  a.name = "novice";
  a.description = "mostly random";
  a.style = "graded";
  a.spec = "novice";
  a.elo = 271.25;
  a.elo_low = 200.5;
  a.elo_high = 340.125;
  a.games = 80;
  a.vs = "random";
  a.stats.games = 80;
  a.stats.wins = 50;
  a.stats.draws = 20;
  a.stats.losses = 10;
  a.stats.checkmate_wins = 7;
  a.stats.game_plies = 9000;
  a.stats.moves = 4500;
  a.stats.capturing_moves = 300;
  a.stats.pieces_captured = 320;
  a.stats.pieces_lost = 200;
  a.stats.checks = 40;
  a.stats.king_pressure = 90;
  a.stats.enemy_frozen = 1234;
  BotRating b = a;
  b.name = "attacker";
  b.spec = "search:depth=2";
  b.vs = "novice";
  b.elo = 1700;
  r.bots = {a, b};
  return r;
}

TEST(BotsReport, RoundTrips) {
  const BotsReport r = sample_report();
  const std::string text = bots_report_json(r);
  EXPECT_EQ(read_bots_report(text, "bots.json"), r);
  const std::string path = (fs::temp_directory_path() / ("ultima-bots-" + std::to_string(getpid()) + ".json")).string();
  write_bots_report(path, r);
  EXPECT_EQ(load_bots_report(path), r);
  fs::remove(path);
}

TEST(BotsReport, UnboundedElosAreNull) {
  BotsReport r = sample_report();
  r.bots[1].elo = r.bots[1].elo_high = std::numeric_limits<double>::infinity();
  r.bots[1].elo_low = -std::numeric_limits<double>::infinity();
  const BotsReport back = read_bots_report(bots_report_json(r), "bots.json");
  EXPECT_EQ(back, r);
}

TEST(BotsReport, BadFilesNameTheField) {
  const std::string text = bots_report_json(sample_report());
  std::string m = message_of([&] {
    std::string t = text;
    t.replace(t.find("\"version\": 1"), 12, "\"version\": 99");
    read_bots_report(t, "b.json");
  });
  EXPECT_NE(m.find("b.json: version 99 is not known"), std::string::npos) << m;
  m = message_of([&] {
    std::string t = text;
    t.replace(t.find("\"vs\""), 4, "\"xx\"");
    read_bots_report(t, "b.json");
  });
  EXPECT_NE(m.find("b.json: bots[0]: 'vs' is missing"), std::string::npos) << m;
  m = message_of([&] {
    std::string t = text;
    t.replace(t.find("\"games\": 80"), 11, "\"games\": \"x\"");
    read_bots_report(t, "b.json");
  });
  EXPECT_NE(m.find("b.json: bots[0]: 'games' has the wrong type"), std::string::npos) << m;
  m = message_of([&] { read_bots_report("{", "b.json"); });
  EXPECT_NE(m.find("b.json: not valid JSON"), std::string::npos) << m;
}

// Skill limiting

std::vector<Position> skill_positions() {
  std::vector<Position> positions;
  std::mt19937_64 rng(2024);
  while (positions.size() < 24) {
    // Openings: many moves of about equal worth, where the choice shows.
    Position pos = test::random_game_position(Rules{}, rng, 2 + static_cast<int>(positions.size() % 6));
    if (!game_status(pos).over()) positions.push_back(pos);
  }
  return positions;
}

int agreement_with_full_strength(int skill, std::uint64_t seed) {
  Level full = Level::from_pairs("depth=2");
  Level weak = Level::from_pairs("depth=2,skill=" + std::to_string(skill));
  int same = 0;
  std::uint64_t move_seed = seed;
  for (Position& pos : skill_positions()) {
    Searcher a, b;
    ++move_seed;  // as in a game: each move its own seed
    const Move best = play_level_move(a, full, pos, move_seed).move;
    const Move chosen = play_level_move(b, weak, pos, move_seed).move;
    EXPECT_TRUE(test::is_legal(pos, chosen));
    same += best == chosen;
  }
  return same;
}

TEST(Skill, LowerSkillPicksTheBestMoveLessOften) {
  const int top = agreement_with_full_strength(20, 5);
  const int middle = agreement_with_full_strength(12, 5);
  const int bottom = agreement_with_full_strength(0, 5);
  EXPECT_EQ(top, 24);
  EXPECT_LT(middle, top);
  EXPECT_LT(bottom, middle);
}

TEST(Skill, DeterministicPerSeed) {
  Level weak = Level::from_pairs("depth=2,skill=3");
  int differ = 0;
  for (Position& pos : skill_positions()) {
    Searcher a, b, c;
    const Move first = play_level_move(a, weak, pos, 11).move;
    EXPECT_EQ(play_level_move(b, weak, pos, 11).move, first);
    differ += play_level_move(c, weak, pos, 12).move != first;
  }
  EXPECT_GT(differ, 0) << "another seed should change some choices";
}

TEST(Skill, PickStaysNearTheBestLine) {
  std::vector<SearchInfo> lines(4);
  const int scores[] = {100, 90, 40, -500};
  for (int i = 0; i < 4; ++i) lines[i].score = scores[i];
  std::vector<int> picked(4, 0);
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    EXPECT_EQ(skill_pick(20, lines, seed), 0);
    ++picked[skill_pick(10, lines, seed)];  // weakness 120: the -500 line is out of reach
  }
  EXPECT_GT(picked[0], 0);
  EXPECT_GT(picked[1], 0);
  EXPECT_GT(picked[2], 0);
  EXPECT_EQ(picked[3], 0);
  EXPECT_GT(picked[0], picked[2]);
  EXPECT_EQ(skill_lines(20), 1);
  EXPECT_GT(skill_lines(0), skill_lines(19));
  const std::string m = message_of([] { Level::from_pairs("depth=1,skill=21"); });
  EXPECT_NE(m.find("'skill' must be from 0 to 20"), std::string::npos) << m;
}

// Style figures

GameRecord scripted_game() {
  // White pincers the c4 pawn between a4->b4 and d4; the black king steps
  // up, the d-pawn comes next to it, and the king takes it.
  GameRecord record;
  record.fen = "4k3/8/8/8/P1pP4/8/8/K7 w 0 1";
  Position pos = first_position(record);
  for (const char* text : {"a4b4", "e8e7", "d4d6", "e7d6"}) {
    const Move m = parse_move(pos, text);
    pos.make(m);
    record.moves.push_back(m);
  }
  record.result = Outcome::kDraw;
  record.termination = kMaxPliesTermination;
  return record;
}

TEST(Style, CountedOnAScriptedGame) {
  const GameRecord record = scripted_game();
  {
    Position pos = first_position(record);
    ASSERT_EQ(popcount(parse_move(pos, "a4b4").captures), 1);
  }
  const StyleStats white = game_style(record, true);
  EXPECT_EQ(white.games, 1);
  EXPECT_EQ(white.draws, 1);
  EXPECT_EQ(white.game_plies, 4);
  EXPECT_EQ(white.moves, 2);
  EXPECT_EQ(white.capturing_moves, 1);
  EXPECT_EQ(white.pieces_captured, 1);
  EXPECT_EQ(white.pieces_lost, 1);
  EXPECT_EQ(white.king_pressure, 1);  // d4d6 ends next to the king on e7
  EXPECT_EQ(white.checkmate_wins, 0);
  EXPECT_DOUBLE_EQ(white.capture_rate(), 0.5);
  EXPECT_DOUBLE_EQ(white.lost_per_game(), 1.0);
  const StyleStats black = game_style(record, false);
  EXPECT_EQ(black.moves, 2);
  EXPECT_EQ(black.capturing_moves, 1);
  EXPECT_EQ(black.pieces_captured, 1);
  EXPECT_EQ(black.pieces_lost, 1);
  EXPECT_EQ(black.king_pressure, 0);  // nothing of its ends next to the white king on a1
  // The opening's plies are replayed, not counted.
  GameRecord opened = record;
  opened.opening_plies = 1;
  const StyleStats w2 = game_style(opened, true);
  EXPECT_EQ(w2.moves, 1);
  EXPECT_EQ(w2.capturing_moves, 0);
  EXPECT_EQ(w2.game_plies, 3);
  // A win by checkmate counts as such, for the winner only.
  GameRecord mated = record;
  mated.result = Outcome::kWhiteWins;
  mated.termination = "checkmate";
  EXPECT_EQ(game_style(mated, true).checkmate_wins, 1);
  EXPECT_EQ(game_style(mated, true).wins, 1);
  EXPECT_EQ(game_style(mated, false).losses, 1);
  EXPECT_EQ(game_style(mated, false).checkmate_wins, 0);
  StyleStats sum = white;
  sum.add(game_style(mated, true));
  EXPECT_EQ(sum.games, 2);
  EXPECT_DOUBLE_EQ(sum.checkmate_share(), 1.0);
}

}  // namespace
}  // namespace ultima
