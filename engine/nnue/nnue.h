// The learned evaluation of the alpha-beta search (NNUE): sparse features
// of the position (which piece, of which side, stands where, frozen or not,
// seen from each side) into a first layer whose sums (the accumulators) are
// kept per search ply and brought up to date from a nearby ply's sums by
// the squares that changed; then three small integer layers. Plain C++
// integer arithmetic, vectorised by the compiler; no LibTorch. The file
// format, the quantisation and the decisions behind them: docs/nnue.md.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/rules/position.h"
#include "engine/rules/symmetry.h"

namespace ultima::nnue {

// The layer sizes are fixed at compile time, so that the loops vectorise;
// a file of other sizes is refused.
constexpr int kHalf = 128;             // first layer outputs per perspective
constexpr int kL2 = 32;                // second layer
constexpr int kL3 = 32;                // third layer
constexpr int kKinds = 7;              // king .. chameleon
constexpr int kFeatures = 2 * kKinds * 2 * 64;  // own/enemy x kind x frozen x square

// Quantisation: the first layer's weights and sums are float x kQA (int16),
// its activations 0..kQA; the hidden layers' weights float x kQB (int16),
// their biases float x kQA x kQB (int32), their sums kept whole (the second
// layer's in int32 at kQA x kQB, the third's in int64 at kQA x kQB x kQB);
// the output weights float x kQO, the output bias float x kQA x kQO. The
// output is read as (sum / (kQA kQB kQB kQO)) x kScoreScale centipawns.
constexpr int kQA = 255;
constexpr int kQB = 512;
constexpr int kQO = 2048;
constexpr int kScoreScale = 400;       // centipawns per unit of the output (the loss's sigmoid scale)

// Feature sets: which facts of a square are inputs. kPiecesFrozen keeps
// frozen pieces apart from free ones (twice the rows); kPieces does not.
enum class FeatureSet : std::uint32_t { kPieces = 1, kPiecesFrozen = 2 };
const char* feature_set_name(FeatureSet set);
// "pieces" or "pieces-frozen"; throws std::invalid_argument otherwise.
FeatureSet parse_feature_set(const std::string& name);

// One square as the features see it: the piece (0 for empty) and, in bit 4,
// whether it is frozen.
using SquareState = std::uint8_t;
constexpr SquareState kFrozenBit = 0x10;
using BoardState = std::array<SquareState, 64>;
BoardState board_state(const Position& pos);

// The board seen through one of the 8 symmetries of the square: each
// square's state moved to its image. Ultima's rules are invariant under all
// of them (engine/rules/symmetry.h) and freezing is adjacency, so the image
// of a position's board is the board of the position's image: the trainer
// uses them as further positions with the same label.
BoardState transform(const BoardState& board, Symmetry sym);

// The feature of a square's state seen from `perspective`: its row of the
// first layer, or -1 for an empty square.
int feature_index(FeatureSet set, Color perspective, Square s, SquareState state);
// Every active feature of a board from one perspective.
std::vector<int> active_features(FeatureSet set, const BoardState& board, Color perspective);

// The network as the search reads it: quantised weights, immutable once
// made, shared by every search thread.
struct Network {
  FeatureSet features = FeatureSet::kPiecesFrozen;
  std::string description;  // how it was made (training data, steps, losses)
  std::vector<std::int16_t> w1;      // [kFeatures][kHalf]
  std::array<std::int16_t, kHalf> b1{};
  std::vector<std::int16_t> w2;      // [kL2][2 * kHalf]
  std::array<std::int32_t, kL2> b2{};
  std::vector<std::int16_t> w3;      // [kL3][kL2]
  std::array<std::int32_t, kL3> b3{};
  std::array<std::int16_t, kL3> wo{};
  std::int32_t bo = 0;

  Network();  // all zero, of the right sizes
};

// The network's file: "UNNUE" magic, format version, feature set, layer
// sizes, description, little-endian weights, FNV-1a 64 checksum of
// everything before it. Bumped when the layout changes; readers refuse
// other versions.
constexpr std::uint32_t kFileVersion = 1;
class FileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
std::string serialize(const Network& net);
// Throws FileError naming `origin` and the problem (too short, not a
// network file, other version, other sizes, unknown feature set, checksum
// mismatch, trailing bytes).
Network deserialize(const std::string& bytes, const std::string& origin);
void save(const std::string& path, const Network& net);  // atomically
std::shared_ptr<const Network> load(const std::string& path);  // throws FileError
// One shared copy per path for the program's life (the files are immutable).
std::shared_ptr<const Network> load_cached(const std::string& path);

// The first layer's sums of one board from both perspectives.
struct Accumulator {
  alignas(64) std::array<std::array<std::int16_t, kHalf>, 2> v;  // [perspective]
};
void refresh(const Network& net, const BoardState& board, Accumulator& acc);
// The output from the side to move's view, in centipawns (not clamped).
int output(const Network& net, const Accumulator& acc, Color side_to_move);
// The evaluation computed from nothing: the reference for the incremental one.
int evaluate_full(const Network& net, const Position& pos);

// A search thread's accumulators, one slot per ply. evaluate(pos, ply)
// brings slot `ply` up to date from whichever of the slots ply, ply - 1 and
// ply - 2 differs from pos in the fewest squares, subtracting the features
// of the squares that changed and adding their new ones; with too many
// changes it sums the board anew. Any slot is a valid start (a slot holds
// the sums of the board stored with it), so the result never depends on
// which was chosen.
class Evaluator {
 public:
  static constexpr int kSlots = 130;
  explicit Evaluator(std::shared_ptr<const Network> net);

  int evaluate(const Position& pos, int ply);
  const Accumulator& accumulator(int ply) const { return slots_[ply].acc; }
  void reset();  // forget every slot (a new search)

  struct Counts {
    std::uint64_t evaluations = 0, refreshes = 0, squares_updated = 0;
  };
  const Counts& counts() const { return counts_; }
  const Network& network() const { return *net_; }

 private:
  struct Slot {
    BoardState board{};
    bool valid = false;
    Accumulator acc;
  };
  std::shared_ptr<const Network> net_;
  std::vector<Slot> slots_;
  Counts counts_;
};

}  // namespace ultima::nnue
