// Training the learned evaluation (engine/nnue): labelled positions, the
// files that hold them, the games and run directories they come from, and
// the trainer, a plain C++ float network with Adam, exported quantised.
// No LibTorch. How it works and how to run it: docs/nnue.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/nnue/nnue.h"
#include "engine/rules/rule_set.h"

namespace ultima::nnue {

// One labelled position: the board as the features see it, the side to
// move, the search's score and the game's result, both for the side to move.
struct Record {
  BoardState board{};
  std::uint8_t side = kWhite;
  std::int8_t result = 0;   // +1 win, 0 draw, -1 loss
  std::int16_t score = 0;   // centipawns

  friend bool operator==(const Record&, const Record&) = default;
};

// Record files: "UNNUEDAT" magic, version, count, 68 bytes a record,
// FNV-1a 64 checksum. Written atomically.
constexpr std::uint32_t kDataVersion = 1;
class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
void write_records(const std::string& path, const std::vector<Record>& records);
std::vector<Record> read_records(const std::string& path);  // throws DataError naming the file
std::string serialize_records(const std::vector<Record>& records);
std::vector<Record> deserialize_records(const std::string& bytes, const std::string& origin);

// Positions from alpha-beta games: each game opens with `random_plies`
// uniformly random moves (seeded by seed and game number), then both sides
// search `nodes` nodes a move; every quiet position (not in check, the best
// move no capture, the score no mate) is kept with the search's score, and
// the game's result is filled in at its end. A game past `max_plies` counts
// as drawn. `network` null: the hand-written evaluation searches.
struct GameDataOptions {
  int games = 100;
  std::uint64_t nodes = 5000;
  int random_plies = 8;
  int max_plies = 300;
  std::uint64_t seed = 1;
  Rules rules;
  int concurrency = 1;
  std::shared_ptr<const Network> network;
};
// Games first_game .. first_game + count - 1; the records in game order,
// the same for the same options whatever the concurrency.
std::vector<Record> play_data_games(const GameDataOptions& options, int first_game, int count);

// Positions of a loop's run directory (its self-play and warm-start
// shards), searched `nodes` nodes each for the score; the result is the
// sample's game result. At most `max_positions` (0: all), a seeded choice.
struct RunDataOptions {
  std::string run_dir;
  std::uint64_t nodes = 5000;
  std::size_t max_positions = 0;
  std::uint64_t seed = 1;
  int concurrency = 1;
};
std::vector<Record> label_run_positions(const RunDataOptions& options);

// The float network the trainer fits; the same layers as Network.
struct FloatNetwork {
  FeatureSet features = FeatureSet::kPiecesFrozen;
  std::vector<float> w1, b1, w2, b2, w3, b3, wo;
  float bo = 0;
  FloatNetwork();
  static FloatNetwork random(FeatureSet features, std::uint64_t seed);
};
// The float output for the side to move, in centipawns.
float float_output(const FloatNetwork& net, const BoardState& board, Color side);
// Rounded to the integer layers (weights clipped to what they can hold).
Network quantise(const FloatNetwork& net, const std::string& description);

// Which images of each training position the trainer shows. The features
// see the board from the side's own point of view, mirrored top to bottom
// for Black, so White's and Black's armies already appear in left-right
// mirrored setups (king on d1 for White, on e1 in Black's view): `kMirror`
// adds the left-right mirror of each position, an image of the kind games
// produce. `kAll` adds the other six (quarter turns, diagonal reflections),
// boards no game from the setup reaches. Measured (docs/experiments.md),
// `kAll` plays far the strongest although its validation loss is the
// highest: the images keep the first layer from learning positions by
// heart.
enum class Augment { kNone, kMirror, kAll };
const char* augment_name(Augment a);
Augment parse_augment(const std::string& name);  // throws std::invalid_argument

struct TrainOptions {
  FeatureSet features = FeatureSet::kPiecesFrozen;
  int epochs = 10;
  int batch = 1024;
  double learning_rate = 1e-3;
  double lr_decay = 0.8;       // the learning rate is multiplied by this after each epoch
  double lambda = 0.75;        // the search score's share of the target; the rest is the result
  double validation_share = 0.05;
  // Each training position, each epoch, seen through a seeded random one of
  // these images (the validation positions as they are).
  Augment symmetries = Augment::kAll;
  std::uint64_t seed = 1;
};

struct EpochReport {
  int epoch = 0;
  double train_loss = 0, validation_loss = 0;
  double samples_per_second = 0;
};

struct TrainReport {
  std::vector<EpochReport> epochs;
  std::size_t train_positions = 0, validation_positions = 0;
  double seconds = 0;
  // The quantised network against the float one on the validation positions.
  double quantisation_mean_cp = 0, quantisation_max_cp = 0;
};

// The loss of one position: (sigmoid(out / kScoreScale) - target)^2 with
// target = lambda sigmoid(score / kScoreScale) + (1 - lambda) (result+1)/2.
double target_of(const Record& r, double lambda);
double mean_loss(const FloatNetwork& net, const std::vector<Record>& records, double lambda);

// Fits a network to the records; `on_epoch` sees each epoch's report.
FloatNetwork train(const std::vector<Record>& records, const TrainOptions& options, TrainReport& report,
                   const std::function<void(const EpochReport&)>& on_epoch = {});

// Measures the quantised network's outputs against the float one's.
void quantisation_error(const FloatNetwork& fnet, const Network& qnet, const std::vector<Record>& records,
                        double& mean_cp, double& max_cp);

}  // namespace ultima::nnue

namespace ultima::nnue {

// A recipe (configs/nnue/default.yaml): where the positions come from and how the
// network is fitted. Keys in docs/nnue.md; unknown keys are refused.
struct Recipe {
  GameDataOptions games;         // games.network stays null: the hand-written evaluation teaches
  int chunk_games = 100;         // games per record file (the unit a resumed run skips)
  std::size_t run_positions = 0; // positions relabelled from the run directory's shards (0: none)
  std::uint64_t run_nodes = 5000;
  TrainOptions train;
  static Recipe parse(const std::string& yaml_text, const std::string& origin);
  static Recipe load(const std::string& path);
};

// Trains from a run directory: DIR/nnue/data/games-NNNN.data (chunk_games
// games each, made when missing, so a stopped run resumes where it
// stopped), DIR/nnue/data/run-positions.data (relabelled shards, when
// asked for), then DIR/nnue/nnue.unnue, DIR/nnue/train.csv (loss by epoch)
// and DIR/nnue/train.svg. Returns the network file's path.
std::string train_from_run(const Recipe& recipe, const std::string& run_dir, int concurrency);

}  // namespace ultima::nnue
