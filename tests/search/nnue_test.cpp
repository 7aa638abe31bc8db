// The learned evaluation's engine side: features, incremental accumulators
// against a full recomputation under every rule preset, the network file's
// reader, and the search with a network.
#include <gtest/gtest.h>

#include <random>

#include "engine/nnue/nnue.h"
#include "engine/rules/attacks.h"
#include "engine/rules/movegen.h"
#include "engine/search/search.h"

namespace ultima {
namespace {

// Weights in the ranges training gives (sums well inside int16).
std::shared_ptr<const nnue::Network> random_network(std::uint64_t seed, nnue::FeatureSet set) {
  auto net = std::make_shared<nnue::Network>();
  net->features = set;
  net->description = "random test network";
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> w1(-60, 60), w(-300, 300), b(-20000, 20000);
  for (auto& x : net->w1) x = static_cast<std::int16_t>(w1(rng));
  for (auto& x : net->b1) x = static_cast<std::int16_t>(w1(rng) + 60);
  for (auto& x : net->w2) x = static_cast<std::int16_t>(w(rng));
  for (auto& x : net->b2) x = b(rng);
  for (auto& x : net->w3) x = static_cast<std::int16_t>(w(rng));
  for (auto& x : net->b3) x = b(rng);
  for (auto& x : net->wo) x = static_cast<std::int16_t>(w(rng));
  net->bo = b(rng);
  return net;
}

void expect_same(const nnue::Accumulator& a, const nnue::Accumulator& b, const std::string& where) {
  for (int p = 0; p < 2; ++p)
    for (int i = 0; i < nnue::kHalf; ++i)
      ASSERT_EQ(a.v[p][i], b.v[p][i]) << where << " perspective " << p << " index " << i;
}

TEST(NnueFeatures, PerspectivesMirrorEachOther) {
  const Position pos = Position::start();
  const nnue::BoardState board = nnue::board_state(pos);
  const auto white = nnue::active_features(nnue::FeatureSet::kPiecesFrozen, board, kWhite);
  const auto black = nnue::active_features(nnue::FeatureSet::kPiecesFrozen, board, kBlack);
  EXPECT_EQ(white.size(), 32u);
  EXPECT_EQ(black.size(), 32u);
  // A white king on e1 seen by White is an own king on e1; seen by Black an
  // enemy king on e8's mirror square.
  const Square e1 = parse_square("e1");
  const nnue::SquareState king = make_piece(kWhite, kKing);
  EXPECT_EQ(nnue::feature_index(nnue::FeatureSet::kPiecesFrozen, kWhite, e1, king), 0 * 64 + e1);
  EXPECT_EQ(nnue::feature_index(nnue::FeatureSet::kPiecesFrozen, kBlack, e1, king),
            (nnue::kKinds * 2) * 64 + (e1 ^ 56));
  // Frozen pieces have rows of their own only in the frozen feature set.
  const nnue::SquareState frozen_king = king | nnue::kFrozenBit;
  EXPECT_NE(nnue::feature_index(nnue::FeatureSet::kPiecesFrozen, kWhite, e1, frozen_king),
            nnue::feature_index(nnue::FeatureSet::kPiecesFrozen, kWhite, e1, king));
  EXPECT_EQ(nnue::feature_index(nnue::FeatureSet::kPieces, kWhite, e1, frozen_king),
            nnue::feature_index(nnue::FeatureSet::kPieces, kWhite, e1, king));
  EXPECT_EQ(nnue::feature_index(nnue::FeatureSet::kPieces, kWhite, e1, 0), -1);
}

TEST(NnueFeatures, FrozenStateFollowsTheRules) {
  // A white immobilizer next to a black pawn freezes it.
  const Position pos = Position::from_fen("4k3/8/8/3p4/3I4/8/8/4K3 w 0 1");
  const nnue::BoardState board = nnue::board_state(pos);
  EXPECT_TRUE(board[parse_square("d5")] & nnue::kFrozenBit);
  EXPECT_FALSE(board[parse_square("d4")] & nnue::kFrozenBit);
  EXPECT_EQ(board[parse_square("d5")] & 15, make_piece(kBlack, kPawn));
}

TEST(NnueFeatures, TheBoardOfAPositionsImageIsTheImageOfItsBoard) {
  // The trainer's augmentation rests on this: for every symmetry, the board
  // states (pieces and frozen bits) of a position seen through it are its
  // board's states moved square by square. Along random games under every
  // preset, with pieces frozen in many of the positions.
  for (const std::string& name : preset_names()) {
    SCOPED_TRACE(name);
    std::mt19937_64 rng(17);
    Position pos = Position::start(Rules::preset(name));
    int frozen_positions = 0;
    for (int ply = 0; ply < 120 && !game_status(pos).over(); ++ply) {
      const nnue::BoardState board = nnue::board_state(pos);
      frozen_positions += (pos.frozen(kWhite) | pos.frozen(kBlack)) != 0;
      for (int k = 0; k < kSymmetryCount; ++k) {
        const Symmetry sym = Symmetry(k);
        ASSERT_EQ(nnue::board_state(transform(pos, sym)), nnue::transform(board, sym))
            << symmetry_name(sym) << " at ply " << ply << ": " << pos.fen();
      }
      MoveList list;
      generate_legal(pos, list);
      pos.make(list[std::uniform_int_distribution<int>(0, list.size() - 1)(rng)]);
    }
    EXPECT_GT(frozen_positions, 0);
  }
  // The identity leaves a board alone; a quarter turn moves a1 to a8.
  const nnue::BoardState start = nnue::board_state(Position::start());
  EXPECT_EQ(nnue::transform(start, Symmetry::kIdentity), start);
  EXPECT_EQ(nnue::transform(start, Symmetry::kRotate90)[parse_square("a8")], start[parse_square("a1")]);
}

// What a random game must have passed through for the comparison to cover
// Ultima's changes of many squares at once.
struct Coverage {
  int multi_captures = 0, removals = 0, freeze_changes = 0, chameleon_captures = 0, moves = 0;
};

// Plays random games; after every move, and along random side lines made
// and unmade from each position, the incremental sums equal a full sum.
void check_incremental(const Rules& rules, std::uint64_t seed, nnue::FeatureSet set, Coverage& cov) {
  const auto net = random_network(seed, set);
  nnue::Evaluator eval(net);
  std::mt19937_64 rng(seed);
  Position pos = Position::start(rules);
  nnue::Accumulator full;
  for (int ply = 0; ply < 160; ++ply) {
    if (game_status(pos).over()) break;
    // A side line of up to four plies, made and unmade, at plies beyond.
    int line = 0;
    for (; line < 4; ++line) {
      MoveList list;
      generate_legal(pos, list);
      if (list.empty()) break;
      pos.make(list[std::uniform_int_distribution<int>(0, list.size() - 1)(rng)]);
      const int score = eval.evaluate(pos, 1 + line);
      nnue::refresh(*net, nnue::board_state(pos), full);
      expect_same(eval.accumulator(1 + line), full, "side line ply " + std::to_string(line + 1));
      ASSERT_EQ(score, nnue::evaluate_full(*net, pos));
    }
    for (; line > 0; --line) pos.unmake();

    MoveList list;
    generate_legal(pos, list);
    ASSERT_FALSE(list.empty());
    const Move m = list[std::uniform_int_distribution<int>(0, list.size() - 1)(rng)];
    const Bitboard frozen_before = pos.frozen(kWhite) | pos.frozen(kBlack);
    const bool chameleon = kind_of(pos.piece_on(m.from())) == kChameleon;
    pos.make(m);
    ++cov.moves;
    cov.multi_captures += popcount(m.captures) >= 2;
    cov.removals += m.is_removal();
    cov.chameleon_captures += chameleon && m.captures != 0;
    cov.freeze_changes += (pos.frozen(kWhite) | pos.frozen(kBlack)) != frozen_before;
    const int score = eval.evaluate(pos, 0);
    nnue::refresh(*net, nnue::board_state(pos), full);
    expect_same(eval.accumulator(0), full, "game ply " + std::to_string(ply));
    ASSERT_EQ(score, nnue::evaluate_full(*net, pos));
  }
}

TEST(NnueIncremental, EqualsFullRecomputationUnderEveryPreset) {
  for (const std::string& name : preset_names()) {
    SCOPED_TRACE(name);
    Coverage cov;
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      check_incremental(Rules::preset(name), seed * 7919, seed % 2 ? nnue::FeatureSet::kPiecesFrozen
                                                                      : nnue::FeatureSet::kPieces, cov);
      if (HasFatalFailure()) return;
    }
    EXPECT_GT(cov.moves, 500);
    EXPECT_GT(cov.freeze_changes, 0);
    EXPECT_GT(cov.chameleon_captures, 0);
    if (Rules::preset(name).removal == RemovalRule::kAllowed) EXPECT_GT(cov.removals, 0);
  }
}

TEST(NnueIncremental, SeveralPiecesTakenAtOnce) {
  // A long leaper on a1 leaps the pawns on a3 and a5 in one move.
  Position pos = Position::from_fen("4k3/8/8/p7/8/p7/8/L3K3 w 0 1");
  const auto net = random_network(3, nnue::FeatureSet::kPiecesFrozen);
  nnue::Evaluator eval(net);
  eval.evaluate(pos, 0);
  MoveList list;
  generate_legal(pos, list);
  bool found = false;
  for (const Move& m : list) {
    if (popcount(m.captures) < 2) continue;
    found = true;
    pos.make(m);
    EXPECT_EQ(eval.evaluate(pos, 1), nnue::evaluate_full(*net, pos));
    nnue::Accumulator full;
    nnue::refresh(*net, nnue::board_state(pos), full);
    expect_same(eval.accumulator(1), full, "double leap");
    pos.unmake();
  }
  EXPECT_TRUE(found);
}

TEST(NnueFile, RoundTripsAndRefusesDamage) {
  const auto net = random_network(11, nnue::FeatureSet::kPieces);
  const std::string bytes = nnue::serialize(*net);
  const nnue::Network back = nnue::deserialize(bytes, "test");
  EXPECT_EQ(back.features, net->features);
  EXPECT_EQ(back.description, net->description);
  EXPECT_EQ(back.w1, net->w1);
  EXPECT_EQ(back.w2, net->w2);
  EXPECT_EQ(back.bo, net->bo);
  const Position pos = Position::start();
  EXPECT_EQ(nnue::evaluate_full(back, pos), nnue::evaluate_full(*net, pos));

  const auto refused = [&](const std::string& b, const std::string& words) {
    try {
      nnue::deserialize(b, "net.unnue");
      ADD_FAILURE() << "accepted a file that should say: " << words;
    } catch (const nnue::FileError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("net.unnue"), std::string::npos) << e.what();
    }
  };
  refused("", "not an NNUE network file");
  refused("hello world, not a network", "not an NNUE network file");
  refused(bytes.substr(0, bytes.size() / 2), "truncated");
  refused(bytes.substr(0, 40), "truncated");
  refused(bytes + "xx", "after its weights");
  std::string corrupt = bytes;
  corrupt[bytes.size() / 2] ^= 0x5a;
  refused(corrupt, "checksum");
  std::string version = bytes;
  version[8] = 99;
  refused(version, "version 99");
  std::string sizes = bytes;
  sizes[20] = 7;  // the first layer's size
  refused(sizes, "first layer");
}

TEST(NnueSearch, SameResultRunToRunAtFixedNodes) {
  const auto net = random_network(5, nnue::FeatureSet::kPiecesFrozen);
  const auto run = [&] {
    Searcher s(4);
    s.set_network(net);
    Position pos = Position::start();
    SearchLimits limits;
    limits.nodes = 20000;
    std::vector<std::pair<std::uint16_t, int>> out;
    for (int i = 0; i < 6; ++i) {
      const SearchResult r = s.search(pos, limits);
      out.emplace_back(r.best.code, r.score);
      pos.make(r.best);
    }
    return out;
  };
  EXPECT_EQ(run(), run());
}

TEST(NnueSearch, NetworkChangesTheEvaluationTheSearchUses) {
  // Two different networks, same position and budget: the scores differ,
  // and without a network the hand-written evaluation answers again.
  Position pos = Position::start();
  SearchLimits limits;
  limits.depth = 2;
  Searcher s(4);
  const int hand = s.search(pos, limits).score;
  s.set_network(random_network(1, nnue::FeatureSet::kPiecesFrozen));
  const int a = s.search(pos, limits).score;
  s.set_network(random_network(2, nnue::FeatureSet::kPiecesFrozen));
  const int b = s.search(pos, limits).score;
  s.set_network(nullptr);
  EXPECT_EQ(s.search(pos, limits).score, hand);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace ultima
