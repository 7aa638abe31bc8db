// The learned evaluation's trainer: record files, data games, the fit, the
// quantisation's error, the recipe and the run-directory pipeline.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <set>

#include "engine/base/file_io.h"
#include "engine/rules/movegen.h"
#include "engine/search/search.h"
#include "nn/data/run_dir.h"
#include "nn/data/sample.h"
#include "training/nnue/nnue_train.h"

namespace ultima::nnue {
namespace {

namespace fs = std::filesystem;

std::string temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("ultima-nnue-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

GameDataOptions small_games(int games) {
  GameDataOptions g;
  g.games = games;
  g.nodes = 400;
  g.random_plies = 6;
  g.max_plies = 120;
  g.seed = 42;
  return g;
}

// A fixed set of positions, made once for the tests that train.
const std::vector<Record>& fixed_positions() {
  static const std::vector<Record> records = play_data_games(small_games(8), 0, 8);
  return records;
}

TEST(NnueRecords, RoundTripAndRefuseDamage) {
  const std::vector<Record>& records = fixed_positions();
  ASSERT_GT(records.size(), 100u);
  const std::string bytes = serialize_records(records);
  EXPECT_EQ(deserialize_records(bytes, "x"), records);
  const auto refused = [&](const std::string& b, const std::string& words) {
    try {
      deserialize_records(b, "pos.data");
      ADD_FAILURE() << "accepted a file that should say: " << words;
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("pos.data"), std::string::npos) << e.what();
    }
  };
  refused("", "not an NNUE record file");
  refused(bytes.substr(0, 15), "truncated");
  refused(bytes.substr(0, bytes.size() - 100), "truncated");
  std::string corrupt = bytes;
  corrupt[100] ^= 1;
  refused(corrupt, "checksum");
  std::string version = bytes;
  version[8] = 7;
  refused(version, "version 7");
}

TEST(NnueRecords, WriteIsAtomicAndReadable) {
  const std::string dir = temp_dir("records");
  write_records(dir + "/a.data", fixed_positions());
  EXPECT_EQ(read_records(dir + "/a.data"), fixed_positions());
  EXPECT_THROW(read_records(dir + "/missing.data"), DataError);
  fs::remove_all(dir);
}

TEST(NnueData, GamesLabelQuietPositionsWithTheirResult) {
  const std::vector<Record>& records = fixed_positions();
  int wins = 0, losses = 0;
  for (const Record& r : records) {
    EXPECT_LT(std::abs(r.score), 30000);
    wins += r.result == 1;
    losses += r.result == -1;
    // Every record is a position: exactly one king of each side.
    int kings = 0;
    for (SquareState s : r.board) kings += kind_of(s & 15) == kKing && (s & 15) != 0;
    EXPECT_EQ(kings, 2);
  }
  // Decided games give both sides' positions: as many wins as losses, give
  // or take the side that moved last.
  EXPECT_GT(wins + losses, 0);
}

TEST(NnueData, SameRecordsWhateverTheConcurrency) {
  GameDataOptions one = small_games(4), two = small_games(4);
  two.concurrency = 2;
  EXPECT_EQ(play_data_games(one, 10, 4), play_data_games(two, 10, 4));
  // And a game is the same whether played alone or in a set.
  const auto set = play_data_games(one, 10, 2);
  auto alone = play_data_games(one, 10, 1);
  const auto second = play_data_games(one, 11, 1);
  alone.insert(alone.end(), second.begin(), second.end());
  EXPECT_EQ(set, alone);
}

TEST(NnueData, RunPositionsAreLabelledByTheirOwnSearch) {
  // A run directory with one shard of positions from a random game.
  const std::string dir = temp_dir("label");
  const data::RunDir run(dir);
  std::vector<data::Sample> samples;
  std::mt19937_64 rng(5);
  Position pos = Position::start();
  for (int ply = 0; ply < 40 && !game_status(pos).over(); ++ply) {
    data::Sample s;
    data::pack_position(pos, s);
    s.result = static_cast<std::int8_t>(ply % 3 - 1);
    s.policy = {{0, 1.0f}};
    samples.push_back(s);
    MoveList list;
    generate_legal(pos, list);
    pos.make(list[std::uniform_int_distribution<int>(0, list.size() - 1)(rng)]);
  }
  data::write_shard(run.shard_path("w", 0), data::ShardHeader{}, samples);
  RunDataOptions o;
  o.run_dir = dir;
  o.nodes = 700;
  o.concurrency = 2;
  const std::vector<Record> records = label_run_positions(o);
  ASSERT_GT(records.size(), 10u);
  EXPECT_LE(records.size(), samples.size());
  // Each label is what a fresh search of that sample's position says, and
  // the result is the sample's.
  std::size_t matched = 0;
  for (const data::Sample& s : samples) {
    Position p = data::sample_position(s);
    const BoardState board = board_state(p);
    for (const Record& r : records) {
      if (r.board != board) continue;
      Searcher searcher(4);
      SearchLimits limits;
      limits.nodes = 700;
      EXPECT_EQ(r.score, searcher.search(p, limits).score);
      EXPECT_EQ(r.result, s.result);
      EXPECT_EQ(r.side, kWhite);  // samples are seen from the side to move, as White
      ++matched;
      break;
    }
  }
  EXPECT_EQ(matched, records.size());
  fs::remove_all(dir);
}

// A short run on the fixed positions, a tenth held out.
TrainOptions small_run() {
  TrainOptions o;
  o.epochs = 6;
  o.batch = 64;
  o.learning_rate = 3e-3;
  o.validation_share = 0.1;
  return o;
}

TEST(NnueTrain, ASmallRunLowersItsLoss) {
  const std::vector<Record>& records = fixed_positions();
  TrainOptions o = small_run();
  TrainReport report;
  const FloatNetwork net = train(records, o, report);
  ASSERT_EQ(report.epochs.size(), 6u);
  EXPECT_LT(report.epochs.back().train_loss, report.epochs.front().train_loss);
  EXPECT_LT(mean_loss(net, records, o.lambda), mean_loss(FloatNetwork::random(o.features, 1), records, o.lambda));
  EXPECT_EQ(report.train_positions + report.validation_positions, records.size());
}

// The mean over the records of the spread (largest less smallest output)
// of a network's outputs for a board's 8 images, in centipawns.
double symmetry_spread(const FloatNetwork& net, const std::vector<Record>& records) {
  double total = 0;
  for (const Record& r : records) {
    float lo = 1e9f, hi = -1e9f;
    for (int k = 0; k < kSymmetryCount; ++k) {
      const float y = float_output(net, transform(r.board, Symmetry(k)), Color(r.side));
      lo = std::min(lo, y);
      hi = std::max(hi, y);
    }
    total += hi - lo;
  }
  return total / records.size();
}

// The same for a board and its left-right mirror.
double mirror_spread(const FloatNetwork& net, const std::vector<Record>& records) {
  double total = 0;
  for (const Record& r : records)
    total += std::abs(float_output(net, r.board, Color(r.side)) -
                      float_output(net, transform(r.board, Symmetry::kMirrorFiles), Color(r.side)));
  return total / records.size();
}

TEST(NnueTrain, SymmetriesTeachTheImagesOfEachPosition) {
  // Trained on each position through random symmetries, the network scores
  // a board's images closer together than the same run trained on the
  // positions as they are (same seed, data and steps).
  const std::vector<Record>& records = fixed_positions();
  TrainOptions o = small_run();
  TrainReport with_report, without_report;
  o.symmetries = Augment::kMirror;
  const FloatNetwork with = train(records, o, with_report);
  o.symmetries = Augment::kAll;
  TrainReport all_report;
  const FloatNetwork all = train(records, o, all_report);
  o.symmetries = Augment::kNone;
  const FloatNetwork without = train(records, o, without_report);
  const double spread_all = symmetry_spread(all, records), spread_without = symmetry_spread(without, records);
  EXPECT_LT(spread_all, 0.8 * spread_without) << spread_all << " cp against " << spread_without << " cp";
  EXPECT_LT(all_report.epochs.back().train_loss, all_report.epochs.front().train_loss);
  // Mirrored images only: a board and its left-right mirror score closer
  // together than without them.
  const double mirror_with = mirror_spread(with, records), mirror_without = mirror_spread(without, records);
  EXPECT_LT(mirror_with, 0.8 * mirror_without) << mirror_with << " cp against " << mirror_without << " cp";
}

TEST(NnueTrain, QuantisedOutputsStayNearTheFloatOnes) {
  // The stated bound (docs/nnue.md): at most 2 cp on average and 12 cp at
  // worst, for a trained network and for a random one.
  const std::vector<Record>& records = fixed_positions();
  TrainOptions o;
  o.epochs = 3;
  o.batch = 64;
  TrainReport report;
  const FloatNetwork trained = train(records, o, report);
  for (const FloatNetwork* f : {&trained}) {
    const Network q = quantise(*f, "");
    double mean = 0, max = 0;
    quantisation_error(*f, q, records, mean, max);
    EXPECT_LT(mean, 2.0);
    EXPECT_LT(max, 12.0);
  }
  const FloatNetwork random = FloatNetwork::random(FeatureSet::kPieces, 3);
  double mean = 0, max = 0;
  quantisation_error(random, quantise(random, ""), records, mean, max);
  EXPECT_LT(mean, 2.0);
  EXPECT_LT(max, 12.0);
}

TEST(NnueRecipe, ReadsKeysAndRefusesBadOnes) {
  const Recipe r = Recipe::parse("data:\n  games: 7\n  nodes: 900\ntrain:\n  features: pieces\n  epochs: 3\n  lambda: 0.5\n",
                                 "r.yaml");
  EXPECT_EQ(r.games.games, 7);
  EXPECT_EQ(r.games.nodes, 900u);
  EXPECT_EQ(r.train.features, FeatureSet::kPieces);
  EXPECT_EQ(r.train.epochs, 3);
  EXPECT_DOUBLE_EQ(r.train.lambda, 0.5);
  EXPECT_EQ(r.train.symmetries, Augment::kAll);
  EXPECT_EQ(Recipe::parse("train:\n  symmetries: mirror\n", "r.yaml").train.symmetries, Augment::kMirror);
  EXPECT_EQ(Recipe::parse("train:\n  symmetries: none\n", "r.yaml").train.symmetries, Augment::kNone);
  EXPECT_EQ(Recipe::parse("train:\n  symmetries: all\n", "r.yaml").train.symmetries, Augment::kAll);
  const auto refused = [](const std::string& text, const std::string& words) {
    try {
      Recipe::parse(text, "r.yaml");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused("data:\n  gmaes: 3\n", "unknown key 'data.gmaes'");
  refused("model:\n  x: 1\n", "unknown section 'model'");
  refused("train:\n  lambda: 2\n", "'train.lambda' must be from 0 to 1");
  refused("train:\n  features: squares\n", "unknown NNUE feature set 'squares'");
  refused("data:\n  nodes: many\n", "'data.nodes' must be an integer");
  refused("data: [1, 2\n", "not valid YAML");
  refused("train:\n  symmetries: sometimes\n", "'train.symmetries': unknown symmetry choice 'sometimes' (none, mirror or all)");
  refused("train:\n  symmetries: [a]\n", "'train.symmetries' must be none, mirror or all");
}

TEST(NnueRecipe, TheShippedRecipesParse) {
  // Every recipe in configs/nnue/, the default among them; the first
  // network's recipe keeps its positions unaugmented, as it was measured.
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(std::string(ULTIMA_SOURCE_DIR) + "/configs/nnue"))
    if (entry.path().extension() == ".yaml") names.insert(entry.path().filename().string());
  ASSERT_TRUE(names.count("default.yaml"));
  ASSERT_TRUE(names.count("first.yaml"));
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    Recipe r;
    ASSERT_NO_THROW(r = Recipe::load(std::string(ULTIMA_SOURCE_DIR) + "/configs/nnue/" + name));
    EXPECT_GT(r.games.games, 0);
  }
  EXPECT_EQ(Recipe::load(std::string(ULTIMA_SOURCE_DIR) + "/configs/nnue/first.yaml").train.symmetries, Augment::kNone);
}

TEST(NnuePipeline, AStoppedRunResumesMakingOnlyWhatIsMissing) {
  const std::string run = temp_dir("run");
  Recipe r;
  r.games = small_games(4);
  r.chunk_games = 2;
  r.train.epochs = 1;
  r.train.batch = 64;
  const std::string net = train_from_run(r, run, 1);
  EXPECT_NO_THROW(load(net));
  const std::string first = run + "/nnue/data/games-0000.data", second = run + "/nnue/data/games-0001.data";
  ASSERT_TRUE(fs::exists(first));
  ASSERT_TRUE(fs::exists(second));
  EXPECT_TRUE(fs::exists(run + "/nnue/train.csv"));
  EXPECT_TRUE(fs::exists(run + "/nnue/train.svg"));
  const std::string second_bytes = read_file(second);
  const auto first_time = fs::last_write_time(first);
  // As if stopped after the first chunk: the second is made again, the
  // same, and the first is left alone.
  fs::remove(second);
  const std::string net_bytes = read_file(net);
  train_from_run(r, run, 2);
  EXPECT_EQ(read_file(second), second_bytes);
  EXPECT_EQ(fs::last_write_time(first), first_time);
  EXPECT_EQ(read_file(net), net_bytes);  // same data, same seed: the same network
  fs::remove_all(run);
}

}  // namespace
}  // namespace ultima::nnue
