// The network's torch-free parts: input planes, policy slots and their
// symmetries, model file headers, config keys, and the batching evaluator
// (with a stand-in network). These run in rules_tests: no LibTorch.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "nn/batching_evaluator.h"
#include "nn/payload_format.h"
#include "nn/config.h"
#include "nn/data/sample.h"
#include "nn/encoding.h"
#include "nn/model_file.h"
#include "nn/policy_index.h"
#include "engine/rules/hash.h"
#include "engine/rules/movegen.h"
#include "test_util.h"

namespace ultima {
namespace {

using namespace ultima::nn;

constexpr Symmetry kAll[] = {Symmetry::kIdentity,    Symmetry::kRotate90,    Symmetry::kRotate180,
                             Symmetry::kRotate270,   Symmetry::kMirrorFiles, Symmetry::kMirrorRanks,
                             Symmetry::kTranspose,   Symmetry::kAntiTranspose};

float plane_value(const std::vector<float>& planes, int plane, Square s) { return planes[plane * 64 + s]; }
float plane_sum(const std::vector<float>& planes, int plane) {
  float sum = 0;
  for (Square s = 0; s < 64; ++s) sum += plane_value(planes, plane, s);
  return sum;
}

// A mix of game positions and random placements under every rule set.
std::vector<Position> sample_positions(int per_preset, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Position> out;
  for (const Rules& rules : test::all_presets())
    for (int i = 0; i < per_preset; ++i)
      out.push_back(i % 3 == 2 ? test::random_placement(rules, rng, 20)
                               : test::random_game_position(rules, rng, 1 + (i * 7) % 80));
  return out;
}

// ---- encoding

TEST(NnEncoding, StartPositionFromEachSidesPointOfView) {
  Position pos = Position::start();
  std::vector<float> planes = encode_position(pos);
  ASSERT_EQ(planes.size(), static_cast<size_t>(kInputSize));
  EXPECT_EQ(plane_sum(planes, kOwnPieces + kind_plane(kPawn)), 8);
  EXPECT_EQ(plane_value(planes, kOwnPieces + kind_plane(kPawn), parse_square("a2")), 1);
  EXPECT_EQ(plane_value(planes, kEnemyPieces + kind_plane(kPawn), parse_square("a7")), 1);
  EXPECT_EQ(plane_value(planes, kOwnPieces + kind_plane(kImmobilizer), parse_square("a1")), 1);
  EXPECT_EQ(plane_sum(planes, kOnes), 64);
  EXPECT_EQ(plane_sum(planes, kRepeated), 0);
  EXPECT_EQ(plane_sum(planes, kHalfmoveClock), 0);
  for (int p = kRuleLeaperSingle; p <= kRuleKingCapture; ++p) EXPECT_EQ(plane_sum(planes, p), 0) << plane_name(p);

  // Black to move: Black's pieces are now "own", on their real squares.
  pos.make(parse_move(pos, "a2a3"));
  planes = encode_position(pos);
  EXPECT_EQ(plane_value(planes, kOwnPieces + kind_plane(kPawn), parse_square("a7")), 1);
  EXPECT_EQ(plane_value(planes, kEnemyPieces + kind_plane(kPawn), parse_square("a3")), 1);
  EXPECT_EQ(plane_value(planes, kEnemyPieces + kind_plane(kPawn), parse_square("a2")), 0);
  EXPECT_FLOAT_EQ(plane_value(planes, kHalfmoveClock, 0), 0.01f);
}

TEST(NnEncoding, FrozenPiecesAndEveryPieceOnItsPlane) {
  for (const Position& pos : sample_positions(40, 11)) {
    const std::vector<float> planes = encode_position(pos);
    const Color us = pos.side_to_move();
    for (Square s = 0; s < 64; ++s) {
      const Piece p = pos.piece_on(s);
      for (int k = kKing; k <= kChameleon; ++k) {
        EXPECT_EQ(plane_value(planes, kOwnPieces + kind_plane(Kind(k)), s),
                  p != kEmpty && color_of(p) == us && kind_of(p) == k);
        EXPECT_EQ(plane_value(planes, kEnemyPieces + kind_plane(Kind(k)), s),
                  p != kEmpty && color_of(p) != us && kind_of(p) == k);
      }
      EXPECT_EQ(plane_value(planes, kOwnFrozen, s), (pos.frozen(us) >> s) & 1);
      EXPECT_EQ(plane_value(planes, kEnemyFrozen, s), (pos.frozen(~us) >> s) & 1);
    }
  }
}

TEST(NnEncoding, RuleSwitchPlanes) {
  struct Case {
    const char* rules;
    int plane;
  } cases[] = {{"abbott1963,leaper=single", kRuleLeaperSingle},
               {"abbott1963,chameleon=shape", kRuleChameleonShape},
               {"abbott1963,removal=forbidden", kRuleRemovalForbidden},
               {"abbott1963,frozen-immobilizer=neutralized", kRuleImmobilizerNeutralized},
               {"boardspace", kRuleStalemateDraw},
               {"zillions", kRuleKingCapture}};
  for (const Case& c : cases) {
    const std::vector<float> planes = encode_position(Position::start(Rules::parse(c.rules)));
    for (int p = kRuleLeaperSingle; p <= kRuleKingCapture; ++p)
      EXPECT_EQ(plane_sum(planes, p), p == c.plane ? 64 : 0) << c.rules << " " << plane_name(p);
  }
  // The setup switch only decides the start; the planes do not show it.
  const Position a = Position::from_fen("4k3/8/8/8/8/8/8/4K3 w 0 1", Rules::parse("abbott1962,leaper=multi"));
  const Position b = Position::from_fen("4k3/8/8/8/8/8/8/4K3 w 0 1", Rules::parse("abbott1963"));
  EXPECT_EQ(encode_position(a), encode_position(b));
}

TEST(NnEncoding, RepetitionAndHundredPlyPlanes) {
  Position pos = Position::start();
  for (const char* m : {"a2a3", "a7a6", "a3a2", "a6a7"}) pos.make(parse_move(pos, m));
  ASSERT_EQ(pos.repetition_count(), 2);
  std::vector<float> planes = encode_position(pos);
  EXPECT_EQ(plane_sum(planes, kRepeated), 64);
  EXPECT_FLOAT_EQ(plane_value(planes, kHalfmoveClock, 10), 0.04f);
  const Position late = Position::from_fen("4k3/8/8/8/8/8/8/4K2P w 73 90");
  EXPECT_FLOAT_EQ(plane_value(encode_position(late), kHalfmoveClock, 5), 0.73f);
}

TEST(NnEncoding, ColourFlipGivesTheSamePlanes) {
  // Own/enemy instead of White/Black, real squares: the colour flip (side to
  // move and colours swap, squares stay) is invisible to the network.
  for (const Position& pos : sample_positions(30, 12)) {
    const Position plain = transform(pos, Symmetry::kIdentity);  // without history
    EXPECT_EQ(encode_position(transform(pos, Symmetry::kIdentity, true)), encode_position(plain)) << pos.fen();
  }
}

TEST(NnEncoding, PlanesCommuteWithTheEightSymmetries) {
  for (const Position& pos : sample_positions(60, 13)) {
    const Position plain = transform(pos, Symmetry::kIdentity);  // transform() drops the history
    const std::vector<float> planes = encode_position(plain);
    for (Symmetry sym : kAll) {
      ASSERT_EQ(encode_position(transform(plain, sym)), transform_planes(planes, sym))
          << pos.fen() << " " << symmetry_name(sym);
      EXPECT_EQ(transform_planes(transform_planes(planes, sym), inverse(sym)), planes);
    }
  }
}

// The tactics planes found again the slow way: every pseudo-legal move
// (removals aside) played on the Position and the kings' check tested there.
std::vector<float> tactics_by_making(const Position& start) {
  std::vector<float> out(kInputSize, 0.0f);
  auto mark = [&](int plane, Square s) { out[plane * 64 + s] = 1.0f; };
  for (const bool enemy : {false, true}) {
    Position pos = start;
    if (enemy) pos.make_null();
    const Color mover = pos.side_to_move();
    MoveList list;
    generate_pseudo_legal(pos, list);
    for (const Move& m : list) {
      if (m.is_removal()) continue;
      for (Bitboard c = m.captures; c;) mark(enemy ? kEnemyCaptures : kOwnCaptures, pop_lsb(c));
      const bool king = kind_of(pos.piece_on(m.from())) == kKing;
      pos.make(m);
      if (pos.in_check(~mover)) {
        mark(enemy ? kEnemyCheckTo : kOwnCheckTo, m.to());
        if (!enemy) mark(kOwnCheckFrom, m.from());
      }
      if (king && !pos.in_check(mover)) mark(enemy ? kEnemyKingSafe : kOwnKingSafe, m.to());
      pos.unmake();
    }
  }
  if (start.in_check()) std::fill_n(out.begin() + kInCheck * 64, 64, 1.0f);
  return out;
}

TEST(NnEncoding, TacticsPlanesMatchMovesPlayedOnTheBoard) {
  int checks = 0, safe = 0, captures = 0;
  for (const Position& pos : sample_positions(40, 14)) {
    const std::vector<float> planes = encode_position(pos);
    const std::vector<float> expected = tactics_by_making(pos);
    for (int p = kOwnCaptures; p <= kInCheck; ++p)
      for (Square s = 0; s < 64; ++s)
        ASSERT_EQ(plane_value(planes, p, s), plane_value(expected, p, s)) << pos.fen() << " " << plane_name(p) << " " << s;
    checks += plane_sum(planes, kOwnCheckTo) > 0;
    safe += plane_sum(planes, kOwnKingSafe) > 0;
    captures += plane_sum(planes, kOwnCaptures) > 0;
  }
  // The sample has positions of each kind, so the comparison saw them.
  EXPECT_GT(checks, 10);
  EXPECT_GT(safe, 10);
  EXPECT_GT(captures, 10);
}

TEST(NnEncoding, EachEncodingIsTheFirstPlanesAndLeavesTheRestZero) {
  const Position start = Position::start();
  const std::vector<float> full = encode_position(start);
  // Nothing can be captured, checked or stepped to at the start.
  for (int p = kOwnCaptures; p <= kInCheck; ++p) EXPECT_EQ(plane_sum(full, p), 0.0f) << plane_name(p);
  for (const Position& pos : sample_positions(10, 15)) {
    const std::vector<float> all = encode_position(pos);
    for (const PlaneSet& set : kPlaneSets) {
      const int planes = set.end_plane();
      const std::vector<float> part = encode_position(pos, planes);
      ASSERT_TRUE(std::equal(part.begin(), part.begin() + planes * 64, all.begin())) << pos.fen() << " " << set.name;
      ASSERT_TRUE(std::all_of(part.begin() + planes * 64, part.end(), [](float f) { return f == 0.0f; }))
          << pos.fen() << " " << set.name;
    }
  }
  EXPECT_STREQ(plane_name(kInCheck), "in-check");
}

TEST(NnEncoding, PlaneSetsDeclareTheEncodingsAndTheirChecks) {
  // The table: contiguous sets from plane 0 to kInputPlanes, encodings rising.
  EXPECT_TRUE(plane_sets_consistent());
  ASSERT_GE(kPlaneSetCount, 2);
  EXPECT_EQ(kPlaneSets[0].first_plane, 0);
  EXPECT_EQ(kPlaneSets[kPlaneSetCount - 1].end_plane(), kInputPlanes);
  for (int i = 1; i < kPlaneSetCount; ++i) {
    EXPECT_EQ(kPlaneSets[i].first_plane, kPlaneSets[i - 1].end_plane()) << kPlaneSets[i].name;
    EXPECT_GT(kPlaneSets[i].encoding, kPlaneSets[i - 1].encoding) << kPlaneSets[i].name;
  }
  // What existing model files and run configs say: encoding 1 reads 25
  // planes, encoding 2 reads 33.
  EXPECT_EQ(planes_for_encoding(1), 25);
  EXPECT_EQ(planes_for_encoding(2), 33);
  EXPECT_EQ(encoding_for_planes(25), 1);
  EXPECT_EQ(encoding_for_planes(33), 2);
  EXPECT_STREQ(kPlaneSets[0].name, "pieces-and-rules");
  EXPECT_STREQ(kPlaneSets[1].name, "tactics");
  EXPECT_EQ(kPlaneSets[1].first_plane, kOwnCaptures);

  // The counts, the versions and the checks follow from the table.
  const std::string choices = input_plane_choices(), encodings = encoding_choices();
  for (int i = 0; i < kPlaneSetCount; ++i) {
    const PlaneSet& set = kPlaneSets[i];
    EXPECT_EQ(planes_for_encoding(set.encoding), set.end_plane()) << set.name;
    EXPECT_EQ(encoding_for_planes(set.end_plane()), set.encoding) << set.name;
    EXPECT_EQ(plane_sets_read(set.end_plane()).size(), std::size_t(i) + 1) << set.name;
    EXPECT_EQ(plane_sets_read(set.first_plane).size(), std::size_t(i)) << set.name;
    EXPECT_NO_THROW(check_input_planes(set.end_plane(), "a test"));
    EXPECT_NE(choices.find(std::to_string(set.end_plane()) + " (" + set.summary + ")"), std::string::npos) << choices;
    EXPECT_NE(encodings.find("version " + std::to_string(set.encoding) + " with " + std::to_string(set.end_plane()) +
                             " planes"),
              std::string::npos)
        << encodings;
  }
  EXPECT_EQ(choices.rfind("25 (the pieces and rules)", 0), 0u) << choices;
  EXPECT_EQ(planes_for_encoding(0), 0);
  EXPECT_EQ(planes_for_encoding(kPlaneSets[kPlaneSetCount - 1].encoding + 1), 0);
  for (int planes = -1; planes <= kInputPlanes + 1; ++planes) {
    if (encoding_for_planes(planes) != 0) continue;
    try {
      check_input_planes(planes, "a test network");
      ADD_FAILURE() << planes << " planes were accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()),
                "a test network reads " + std::to_string(planes) + " input planes; this build encodes " + choices);
    }
  }

  // Each set's fill writes its own planes and no others, and every plane
  // has a name of its own.
  for (const Position& pos : sample_positions(4, 17)) {
    for (const PlaneSet& set : kPlaneSets) {
      ASSERT_NE(set.fill, nullptr) << set.name << " has no fill function";
      std::vector<float> planes(kInputSize, 0.0f);
      set.fill(pos, std::span<float, kInputSize>(planes.data(), kInputSize));
      for (int p = 0; p < kInputPlanes; ++p)
        if (p < set.first_plane || p >= set.end_plane())
          ASSERT_EQ(plane_sum(planes, p), 0.0f) << set.name << " wrote " << plane_name(p) << ", " << pos.fen();
    }
  }
  std::set<std::string> names;
  for (int p = 0; p < kInputPlanes; ++p) EXPECT_TRUE(names.insert(plane_name(p)).second) << p;
  EXPECT_FALSE(names.count("?"));
}

// Positions whose planes are pinned by checksum: a start, a repetition, a
// mate puzzle (captures and checks), Black to move under other rules, in
// check. Fixed FENs and moves, not random games, so a change to the move
// generator's order leaves them alone.
std::vector<Position> pinned_positions() {
  std::vector<Position> out;
  out.push_back(Position::start());
  Position repeated = Position::start();
  for (const char* m : {"a2a3", "a7a6", "a3a2", "a6a7"}) repeated.make(parse_move(repeated, m));
  out.push_back(repeated);
  Position mate = Position::from_fen("x2k1x2/3p1p1i/pX3Plp/8/P2P3P/I7/1P1P2P1/1LXKW2C w 6 25");
  out.push_back(mate);
  mate.make(parse_move(mate, "a3e7"));
  out.push_back(mate);
  out.push_back(Position::from_fen("c3k3/p1p2p2/8/8/w6p/3i4/2Pl4/6K1 b 9 33", Rules::parse("zillions")));
  out.push_back(Position::from_fen("3wkp2/l1p4p/1p6/p1p5/Ixp3lP/2P1p3/2PXi1c1/3K3C b 2 25",
                                   Rules::parse("abbott1963,leaper=single,chameleon=shape")));
  out.push_back(Position::from_fen("4k3/4W3/8/1p6/8/8/p2L4/4K3 b 3 40"));  // the withdrawer checks
  return out;
}

std::uint64_t checksum(const std::vector<float>& planes) {
  return fnv1a64(reinterpret_cast<const char*>(planes.data()), planes.size() * sizeof(float));
}

TEST(NnEncoding, PinnedPositionsEncodeAsBefore) {
  // FNV-1a 64 of the kInputSize floats for each encoding's plane count (25,
  // then 33), computed with the encoder before the plane sets were a table:
  // encode_position and a packed sample's unpack_planes give these bytes.
  const std::uint64_t expected[][2] = {
      {0x2ca214337a0f5ea5ull, 0x2ca214337a0f5ea5ull},  // nothing to capture or check at the start
      {0x1d17166a41887e25ull, 0x1d17166a41887e25ull},
      {0xc3ab982b06122f28ull, 0xc1eb0a7960740095ull},
      {0xac7fd9c9fbb398b5ull, 0x7bc8b3af48455b25ull},
      {0x985c121d0d9ab2a5ull, 0x888c99343313a435ull},
      {0x0cb74be537245685ull, 0xe6eb5e9d2e4f0648ull},
      {0xeb9822ada58eb145ull, 0x2c5dc4b928508e88ull},
  };
  const std::vector<Position> positions = pinned_positions();
  ASSERT_EQ(positions.size(), std::size(expected));
  ASSERT_TRUE(positions.back().in_check());
  for (std::size_t i = 0; i < positions.size(); ++i) {
    data::Sample sample;
    data::pack_position(positions[i], sample);
    for (const int encoding : {1, 2}) {
      const int planes = planes_for_encoding(encoding);
      const std::uint64_t pinned = expected[i][encoding - 1];
      EXPECT_EQ(checksum(encode_position(positions[i], planes)), pinned) << "position " << i << ", " << planes;
      std::vector<float> unpacked(kInputSize);
      data::unpack_planes(sample, std::span<float, kInputSize>(unpacked.data(), kInputSize), planes);
      EXPECT_EQ(checksum(unpacked), pinned) << "position " << i << ", " << planes << " planes from a sample";
    }
  }
}

// ---- policy slots

TEST(NnPolicyIndex, LayoutAndKnownSlots) {
  EXPECT_EQ(kPolicySize, 3648);
  // a2a3: north, distance 1, from a2.
  EXPECT_EQ(policy_index(Move::step(parse_square("a2"), parse_square("a3"), 0)), 0 * 64 + parse_square("a2"));
  // d2d8: north, distance 6.
  EXPECT_EQ(policy_index(Move::step(parse_square("d2"), parse_square("d8"), 0)), 5 * 64 + parse_square("d2"));
  // h8a1: south-west (direction 5), distance 7.
  EXPECT_EQ(policy_index(Move::step(parse_square("h8"), parse_square("a1"), 0)), (5 * 7 + 6) * 64 + 63);
  EXPECT_EQ(policy_index(Move::removal(parse_square("c5"))), kRemovalPlane * 64 + parse_square("c5"));
  EXPECT_EQ(policy_index(Move::step(parse_square("a1"), parse_square("b3"), 0)), -1);  // no queen line
  EXPECT_EQ(policy_index(Move{}), -1);
  const PolicySlot off = policy_slot(0 * 64 + parse_square("a8"));  // north from a8
  EXPECT_FALSE(off.on_board());
  int on_board = 0;
  for (int i = 0; i < kPolicySize; ++i) on_board += policy_slot(i).on_board();
  EXPECT_EQ(on_board, 1456 + 64);  // the queen moves of an empty board, and the removals
}

TEST(NnPolicyIndex, EveryLegalMoveRoundTripsWithoutCollisions) {
  std::size_t moves = 0;
  for (const Position& pos : sample_positions(400, 14)) {
    MoveList list;
    generate_legal(pos, list);
    std::set<int> seen;
    for (const Move& m : list) {
      const int index = policy_index(m);
      ASSERT_GE(index, 0) << pos.fen() << " " << to_coordinate(m);
      ASSERT_LT(index, kPolicySize);
      const PolicySlot slot = policy_slot(index);
      EXPECT_EQ(slot.from, m.from());
      EXPECT_EQ(slot.to, m.to());
      EXPECT_EQ(slot.removal, m.is_removal());
      EXPECT_TRUE(seen.insert(index).second) << "collision: " << pos.fen() << " " << to_coordinate(m);
      EXPECT_EQ(find_move(list, index), m);
      ++moves;
    }
  }
  EXPECT_GT(moves, 100000u);
}

TEST(NnPolicyIndex, RemovalsHaveTheirOwnPlane) {
  // The white pawn on b2 is frozen by the black immobilizer: it may be removed.
  const Position pos = Position::from_fen("k7/8/8/8/8/8/1P6/2i4K w 0 1");
  MoveList list;
  generate_legal(pos, list);
  const int index = policy_index(Move::removal(parse_square("b2")));
  ASSERT_FALSE(find_move(list, index).is_null());
  EXPECT_TRUE(find_move(list, index).is_removal());
}

TEST(NnPolicyIndex, SlotSymmetriesArePermutationsThatMatchMoves) {
  for (Symmetry sym : kAll) {
    std::set<int> image;
    for (int i = 0; i < kPolicySize; ++i) {
      const int j = transform_policy_index(i, sym);
      image.insert(j);
      EXPECT_EQ(transform_policy_index(j, inverse(sym)), i);
      EXPECT_EQ(policy_slot(i).on_board(), policy_slot(j).on_board());
    }
    EXPECT_EQ(image.size(), static_cast<size_t>(kPolicySize)) << symmetry_name(sym);
  }
  for (const Position& pos : sample_positions(80, 15)) {
    MoveList list;
    generate_legal(pos, list);
    for (Symmetry sym : kAll) {
      const Position image = transform(pos, sym);
      MoveList image_list;
      generate_legal(image, image_list);
      std::set<int> image_slots;
      for (const Move& m : image_list) image_slots.insert(policy_index(m));
      std::set<int> mapped;
      for (const Move& m : list) {
        ASSERT_EQ(policy_index(transform(m, sym)), transform_policy_index(policy_index(m), sym))
            << to_coordinate(m) << " " << symmetry_name(sym);
        mapped.insert(transform_policy_index(policy_index(m), sym));
      }
      EXPECT_EQ(mapped, image_slots) << pos.fen() << " " << symmetry_name(sym);
    }
  }
}

// ---- model files

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("ultima_nn_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string load_error(const std::string& path) {
  try {
    read_model_file(path);
  } catch (const ModelFileError& e) {
    return e.what();
  }
  return "no error";
}

ModelHeader sample_header() {
  ModelHeader h;
  h.architecture.blocks = 3;
  h.architecture.channels = 24;
  h.rules = "cambridge";
  h.training_step = 1234567;
  return h;
}

TEST(NnModelFile, RoundTripAndReadableHeader) {
  const std::string path = temp_path("roundtrip.unn");
  std::vector<char> payload(10000);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 7);
  write_model_file(path, sample_header(), payload);
  const ModelFile file = read_model_file(path);
  EXPECT_EQ(file.payload, payload);
  EXPECT_EQ(file.header.architecture, sample_header().architecture.completed());
  EXPECT_EQ(file.header.rules, "cambridge");
  EXPECT_EQ(file.header.training_step, 1234567u);
  EXPECT_EQ(file.header.format_version, kModelFormatVersion);
  EXPECT_EQ(read_model_header(path).architecture.blocks, 3);
  const std::string text = slurp(path);
  EXPECT_EQ(text.rfind("ULTIMA-NN\nformat 1\n", 0), 0u);
  EXPECT_NE(text.find("\nblocks 3\nchannels 24\n"), std::string::npos);
  EXPECT_NE(text.find("\nencoding 1\n"), std::string::npos);
  EXPECT_NE(text.find("\ninput_planes 25\n"), std::string::npos);
  // A network that reads the tactics planes records encoding 2.
  ModelHeader tactics = sample_header();
  tactics.architecture.input_planes = kInputPlanes;
  write_model_file(path, tactics, payload);
  EXPECT_EQ(read_model_header(path).architecture.input_planes, kInputPlanes);
  EXPECT_NE(slurp(path).find("\nencoding 2\n"), std::string::npos);
  std::string mismatched = slurp(path);
  mismatched.replace(mismatched.find("encoding 2"), 10, "encoding 1");
  spit(path, mismatched);
  EXPECT_NE(load_error(path).find("reads input encoding 1 with 33 planes"), std::string::npos) << load_error(path);
  tactics.architecture.input_planes = 30;
  EXPECT_THROW(write_model_file(path, tactics, payload), ModelFileError);
  // No temporary file is left behind.
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    EXPECT_EQ(entry.path().string().find(path + ".tmp"), std::string::npos);
  std::remove(path.c_str());
}

TEST(NnModelFile, DamagedFilesAreRejectedByName) {
  const std::string path = temp_path("damaged.unn");
  const std::vector<char> payload(5000, 'w');
  write_model_file(path, sample_header(), payload);
  const std::string good = slurp(path);
  const std::size_t payload_at = good.size() - payload.size();

  auto expect = [&](const std::string& bytes, const std::string& part) {
    spit(path, bytes);
    const std::string error = load_error(path);
    EXPECT_NE(error.find(part), std::string::npos) << "got: " << error;
    EXPECT_NE(error.find(path), std::string::npos) << "the message names the file: " << error;
  };
  expect("", "is empty");
  expect("PK\x03\x04 something else entirely\n", "not an Ultima network file");
  expect("ULTIMA", "truncated inside the header");
  expect(good.substr(0, 40), "truncated inside the header");
  expect(good.substr(0, good.size() - 1), "truncated");
  expect(good.substr(0, payload_at + 10), "truncated: the weights have 10 of 5000 bytes");
  expect(good + "xyz", "3 bytes of unexpected data");
  std::string flipped = good;
  flipped[payload_at + 2500] ^= 1;
  expect(flipped, "checksum");
  std::string version = good;
  version.replace(version.find("format 1"), 8, "format 9");
  expect(version, "format version 9 is not supported");
  std::string field = good;
  field.replace(field.find("blocks 3"), 8, "blockz 3");
  expect(field, "lacks the field 'blocks'");
  std::string encoding = good;
  encoding.replace(encoding.find("input_planes 25"), 15, "input_planes 24");
  expect(encoding, "this build encodes version 1 with 25 planes");
  std::string number = good;
  number.replace(number.find("channels 24"), 11, "channels 2x");
  expect(number, "'channels' has a bad value");
  std::remove(path.c_str());
  EXPECT_NE(load_error(path).find("cannot be opened"), std::string::npos);
}

TEST(NnModelFile, ArchitectureCheckListsTheDifferences) {
  NetArchitecture file, expected;
  file.blocks = 6;
  expected.blocks = 10;
  expected.channels = 128;
  try {
    check_architecture("net.unn", file, expected);
    FAIL() << "no error";
  } catch (const ModelFileError& e) {
    EXPECT_NE(std::string(e.what()).find("blocks 6 (expected 10), channels 64 (expected 128)"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(check_architecture("net.unn", file, file));
}

// A payload in the model files' tensor format (nn/README.md): a float32
// tensor "w" of shape [2, 2] and an int64 scalar "n".
std::vector<char> tiny_payload(const float (&w)[4], std::int64_t n, const std::string& name = "w") {
  std::string b = "UNT1";
  auto put = [&](const void* p, std::size_t size) { b.append(static_cast<const char*>(p), size); };
  const std::uint32_t count = 2;
  put(&count, 4);
  const std::uint16_t w_name = static_cast<std::uint16_t>(name.size());
  put(&w_name, 2);
  b += name;
  b += '\0';  // float32
  b += '\2';  // two dimensions
  const std::int64_t two = 2;
  put(&two, 8);
  put(&two, 8);
  put(w, sizeof w);
  const std::uint16_t n_name = 1;
  put(&n_name, 2);
  b += "n";
  b += '\1';  // int64
  b += '\0';  // a scalar
  put(&n, 8);
  return std::vector<char>(b.begin(), b.end());
}

// One float tensor named "w" with the given sizes and no data at all.
std::vector<char> payload_claiming(const std::vector<std::int64_t>& sizes) {
  std::string b = "UNT1";
  auto put = [&](const void* p, std::size_t size) { b.append(static_cast<const char*>(p), size); };
  const std::uint32_t count = 1;
  put(&count, 4);
  const std::uint16_t name = 1;
  put(&name, 2);
  b += "w";
  b += '\0';  // float32
  b += static_cast<char>(sizes.size());
  for (const std::int64_t s : sizes) put(&s, 8);
  return std::vector<char>(b.begin(), b.end());
}

std::string records_error(const std::vector<char>& bytes) {
  try {
    payload::read_records(bytes.data(), bytes.size());
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(NnPayload, ElementCountsThatWouldWrapAreRefused) {
  // 2^32 * 2^32 elements wrap a 64-bit count round to 0, so such a tensor
  // once passed as holding no data at all, and the network module then
  // copied 2^64 elements out of nothing.
  const std::int64_t big = std::int64_t{1} << 32;
  for (const auto& sizes : std::vector<std::vector<std::int64_t>>{
           {big, big}, {big / 2, big / 2, 4}, {big, 1, big}, {1 << 20, 1 << 20, 1 << 20, 1 << 4}}) {
    const std::string error = records_error(payload_claiming(sizes));
    EXPECT_NE(error.find("tensor 'w' has more elements than the"), std::string::npos) << error;
  }
  EXPECT_NE(records_error(payload_claiming({-1, 4})).find("negative size -1"), std::string::npos);
  // An empty tensor is well formed, and a plain short one is a truncation.
  EXPECT_EQ(records_error(payload_claiming({0, big})), "no error");
  EXPECT_EQ(payload::read_records(payload_claiming({0, big}).data(), payload_claiming({0, big}).size())[0].data_bytes,
            0u);
  EXPECT_NE(records_error(payload_claiming({2})).find("truncated"), std::string::npos);
  std::vector<char> one = payload_claiming({1});
  one.resize(one.size() + 3);
  EXPECT_NE(records_error(one).find("truncated"), std::string::npos);
  one.resize(one.size() + 1);
  EXPECT_EQ(records_error(one), "no error");
  // The program reads payloads too (the weights' moving average): the same
  // refusal, as a model file error.
  std::vector<char> average = payload_claiming({big, big});
  EXPECT_THROW(blend_payloads(average, payload_claiming({big, big}), 0.5), ModelFileError);
}

TEST(NnModelFile, BlendingMovesFloatTensorsAndCopiesCounters) {
  const float a[4] = {1, 2, -4, 8}, c[4] = {3, 2, 4, 0};
  std::vector<char> average = tiny_payload(a, 7);
  blend_payloads(average, tiny_payload(c, 9), 0.75);
  const float want[4] = {1.5f, 2.0f, -2.0f, 6.0f};
  EXPECT_EQ(average, tiny_payload(want, 9));
  // keep 1 leaves the floats alone, keep 0 copies the current weights.
  std::vector<char> kept = tiny_payload(a, 7);
  blend_payloads(kept, tiny_payload(c, 9), 1.0);
  EXPECT_EQ(kept, tiny_payload(a, 9));
  blend_payloads(kept, tiny_payload(c, 9), 0.0);
  EXPECT_EQ(kept, tiny_payload(c, 9));

  auto error = [&](std::vector<char> current) {
    std::vector<char> avg = tiny_payload(a, 7);
    try {
      blend_payloads(avg, current, 0.5);
    } catch (const ModelFileError& e) {
      EXPECT_EQ(avg, tiny_payload(a, 7)) << "a refused payload leaves the average alone";
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error(tiny_payload(c, 9, "v")).find("differs in name, type or shape"), std::string::npos);
  std::vector<char> cut = tiny_payload(c, 9);
  cut.resize(cut.size() - 1);
  EXPECT_NE(error(cut).find("differ in size"), std::string::npos);
  std::vector<char> junk = tiny_payload(c, 9);
  junk[0] = 'X';
  EXPECT_NE(error(junk).find("not a weights payload"), std::string::npos);
  // A tensor count beyond the data is found after two tensors were blended;
  // the average is still left as it was.
  std::vector<char> more = tiny_payload(c, 9);
  more[4] = 3;
  std::vector<char> avg_more = tiny_payload(a, 7);
  avg_more[4] = 3;
  const std::vector<char> before = avg_more;
  try {
    blend_payloads(avg_more, more, 0.5);
    ADD_FAILURE() << "no error";
  } catch (const ModelFileError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  EXPECT_EQ(avg_more, before);
}

// ---- config

TEST(NnConfig, KeysAndErrors) {
  const NnConfig c = NnConfig::parse("device=cuda:1,precision=bf16,max_batch=256,blocks=10,cache_entries=0");
  EXPECT_EQ(c.device, "cuda:1");
  EXPECT_EQ(c.precision, "bf16");
  EXPECT_EQ(c.batching.max_batch, 256);
  EXPECT_EQ(c.batching.cache_entries, 0u);
  EXPECT_EQ(c.architecture.blocks, 10);
  EXPECT_TRUE(c.given.blocks);
  EXPECT_FALSE(c.given.channels);
  auto error = [](const char* text) -> std::string {
    try {
      NnConfig::parse(text);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(error("colour=blue").find("unknown network option 'colour'"), std::string::npos);
  EXPECT_NE(error("max_batch=0").find("max_batch"), std::string::npos);
  EXPECT_NE(error("device=tpu").find("not cpu, cuda or cuda:N"), std::string::npos);
  EXPECT_NE(error("threads").find("not key=value"), std::string::npos);
}

// ---- batching evaluator, with a stand-in network

// Deterministic logits from the planes and slots alone, so each answer
// shows whose position it was computed from.
class FakeNetwork : public NetworkBackend {
 public:
  void forward(const ForwardBatch& batch, const ForwardOutput& out) override {
    if (fail) throw std::runtime_error("fake failure");
    {
      // A closed gate holds the pass until the test opens it.
      std::unique_lock lock(gate_mutex);
      gate_cv.wait(lock, [&] { return gate_open; });
    }
    ++passes;
    largest_batch = std::max(largest_batch.load(), batch.size);
    for (int i = 0; i < batch.size; ++i) {
      const float* planes = batch.planes + static_cast<std::size_t>(i) * kInputSize;
      for (int m = batch.move_offsets[i]; m < batch.move_offsets[i + 1]; ++m) {
        const int slot = batch.move_slots[m];
        float logit = 0.01f * static_cast<float>(slot % 97);
        for (int p = 0; p < kInputPlanes; ++p) logit += planes[p * 64 + slot % 64] * static_cast<float>(p % 5 - 2);
        out.policy_logits[m] = logit;
      }
      float material = 0;
      for (int p = 0; p < 7; ++p)
        for (Square s = 0; s < 64; ++s) material += planes[(kOwnPieces + p) * 64 + s] - planes[(kEnemyPieces + p) * 64 + s];
      out.wdl_logits[3 * i] = material;
      out.wdl_logits[3 * i + 1] = 0;
      out.wdl_logits[3 * i + 2] = -material + planes[kHalfmoveClock * 64];
      out.moves_left[i] = static_cast<float>(batch.move_offsets[i + 1] - batch.move_offsets[i]);
    }
  }
  std::string describe() const override { return "fake"; }
  void set_gate(bool open) {
    {
      std::lock_guard lock(gate_mutex);
      gate_open = open;
    }
    gate_cv.notify_all();
  }
  std::atomic<int> passes{0}, largest_batch{0};
  std::atomic<bool> fail{false};

 private:
  std::mutex gate_mutex;
  std::condition_variable gate_cv;
  bool gate_open = true;
};

// Keeps the planes of every position it is asked about.
class RecordingNetwork : public NetworkBackend {
 public:
  explicit RecordingNetwork(int planes) : planes_(planes) {}
  void forward(const ForwardBatch& batch, const ForwardOutput& out) override {
    seen.insert(seen.end(), batch.planes, batch.planes + static_cast<std::size_t>(batch.size) * planes_ * 64);
    std::fill_n(out.policy_logits, batch.move_offsets[batch.size], 0.0f);
    std::fill_n(out.wdl_logits, 3 * batch.size, 0.0f);
    std::fill_n(out.moves_left, batch.size, 0.0f);
  }
  std::string describe() const override { return "recording"; }
  int input_planes() const override { return planes_; }
  std::vector<float> seen;

 private:
  int planes_;
};

TEST(NnBatchingEvaluator, SendsEachPositionWithTheNetworksPlanesOnly) {
  const std::vector<Position> positions = sample_positions(3, 16);
  std::vector<MoveList> lists(positions.size());
  std::vector<EvalInput> inputs;
  for (std::size_t i = 0; i < positions.size(); ++i) {
    generate_legal(positions[i], lists[i]);
    inputs.push_back(EvalInput{&positions[i], &lists[i]});
  }
  for (const PlaneSet& set : kPlaneSets) {
    const int planes = set.end_plane();
    auto net = std::make_shared<RecordingNetwork>(planes);
    BatchingOptions options;
    options.max_batch = 64;
    BatchingEvaluator evaluator(net, options);
    std::vector<EvalOutput> outputs(inputs.size());
    evaluator.evaluate(inputs, outputs);
    ASSERT_EQ(net->seen.size(), positions.size() * planes * 64) << planes;
    for (std::size_t i = 0; i < positions.size(); ++i) {
      const std::vector<float> expected = encode_position(positions[i]);
      ASSERT_TRUE(std::equal(expected.begin(), expected.begin() + planes * 64, net->seen.begin() + i * planes * 64))
          << planes << " planes, position " << i;
    }
  }
}

void expect_same(const EvalOutput& a, const EvalOutput& b) {
  ASSERT_EQ(a.policy.size(), b.policy.size());
  for (std::size_t i = 0; i < a.policy.size(); ++i) EXPECT_FLOAT_EQ(a.policy[i], b.policy[i]);
  EXPECT_FLOAT_EQ(a.win, b.win);
  EXPECT_FLOAT_EQ(a.draw, b.draw);
  EXPECT_FLOAT_EQ(a.loss, b.loss);
  EXPECT_FLOAT_EQ(a.moves_left, b.moves_left);
}

TEST(NnBatchingEvaluator, ConcurrentCallersEachGetTheirOwnAnswer) {
  const std::vector<Position> positions = sample_positions(60, 16);
  std::vector<MoveList> lists(positions.size());
  for (std::size_t i = 0; i < positions.size(); ++i) generate_legal(positions[i], lists[i]);
  // No cache, a tiny one (entries replaced all the time), a roomy one.
  for (const std::size_t cache_entries : {0, 7, 4096}) {
    auto net = std::make_shared<FakeNetwork>();
    BatchingOptions options;
    options.max_batch = 16;
    options.max_wait_us = 2000;
    options.cache_entries = cache_entries;
    BatchingEvaluator evaluator(net, options);
    std::vector<EvalOutput> expected(positions.size());
    for (std::size_t i = 0; i < positions.size(); ++i) {
      const EvalInput in{&positions[i], &lists[i]};
      evaluator.evaluate_direct(std::span(&in, 1), std::span(&expected[i], 1));
    }
    constexpr int kThreads = 8, kCalls = 50;
    std::vector<std::thread> threads;
    std::atomic<int> mismatches{0};
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int c = 0; c < kCalls; ++c) {
          const std::size_t i = (static_cast<std::size_t>(t) * 131 + c * 17) % positions.size();
          const EvalInput in{&positions[i], &lists[i]};
          EvalOutput out;
          evaluator.evaluate(std::span(&in, 1), std::span(&out, 1));
          if (out.policy != expected[i].policy || out.win != expected[i].win || out.loss != expected[i].loss ||
              out.moves_left != expected[i].moves_left)
            ++mismatches;
        }
      });
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(mismatches.load(), 0) << "cache " << cache_entries;
    const BatchingStats stats = evaluator.stats();
    EXPECT_EQ(stats.positions, static_cast<std::uint64_t>(kThreads * kCalls));
    EXPECT_EQ(stats.evaluated + stats.cache_hits, stats.positions);
    if (cache_entries == 0) {
      EXPECT_GT(stats.mean_batch(), 1.0) << "concurrent calls share forward passes";
    }
    if (cache_entries == 4096) {
      EXPECT_GT(stats.cache_hits, 0u);
    }
    EXPECT_LE(net->largest_batch.load(), 16);
  }
}

// One search thread's calls: the first kLoneBatches wait max_wait_us for
// company, every later one is sent at once.
TEST(NnBatchingEvaluator, ALoneCallerStopsWaitingForCompany) {
  auto net = std::make_shared<FakeNetwork>();
  BatchingOptions options;
  options.max_wait_us = 20000;
  options.cache_entries = 0;
  BatchingEvaluator evaluator(net, options);
  const std::vector<Position> positions = sample_positions(8, 23);
  std::vector<MoveList> lists(positions.size());
  std::vector<EvalInput> inputs;
  for (std::size_t i = 0; i < positions.size(); ++i) {
    generate_legal(positions[i], lists[i]);
    inputs.push_back(EvalInput{&positions[i], &lists[i]});
  }
  std::vector<EvalOutput> outputs(inputs.size());
  constexpr int kCalls = BatchingEvaluator::kLoneBatches + 30;
  for (int c = 0; c < kCalls; ++c) evaluator.evaluate(inputs, outputs);
  const BatchingStats stats = evaluator.stats();
  EXPECT_EQ(stats.batches, static_cast<std::uint64_t>(kCalls)) << "each call is its own batch";
  EXPECT_EQ(stats.unwaited, 30u);
  EXPECT_EQ(stats.evaluated, static_cast<std::uint64_t>(kCalls) * inputs.size());
}

// Two calls queued at once show that the caller is no longer alone: the
// evaluator waits for company again.
TEST(NnBatchingEvaluator, ASecondCallerBringsTheWaitBack) {
  auto net = std::make_shared<FakeNetwork>();
  BatchingOptions options;
  options.max_wait_us = 20000;
  options.cache_entries = 0;
  BatchingEvaluator evaluator(net, options);
  const std::vector<Position> positions = sample_positions(3, 29);
  std::vector<MoveList> lists(positions.size());
  for (std::size_t i = 0; i < positions.size(); ++i) generate_legal(positions[i], lists[i]);
  auto call = [&](std::size_t i) {
    const EvalInput in{&positions[i], &lists[i]};
    EvalOutput out;
    evaluator.evaluate(std::span(&in, 1), std::span(&out, 1));
  };
  for (int c = 0; c < BatchingEvaluator::kLoneBatches; ++c) call(0);
  ASSERT_EQ(evaluator.stats().unwaited, 0u);
  // The next call goes at once and holds the network while two more queue.
  net->set_gate(false);
  std::thread first([&] { call(0); });
  while (evaluator.stats().unwaited == 0) std::this_thread::yield();
  std::thread second([&] { call(1); }), third([&] { call(2); });
  while (evaluator.queued() < 2) std::this_thread::yield();  // both queued behind the held pass
  net->set_gate(true);
  for (std::thread* t : {&first, &second, &third}) t->join();
  BatchingStats stats = evaluator.stats();
  EXPECT_EQ(stats.unwaited, 1u);
  EXPECT_EQ(stats.batches, BatchingEvaluator::kLoneBatches + 2u) << "the two queued calls shared a pass";
  call(0);  // alone again, but it waits: the run of lone batches starts over
  stats = evaluator.stats();
  EXPECT_EQ(stats.unwaited, 1u);
  EXPECT_EQ(stats.batches, BatchingEvaluator::kLoneBatches + 3u);
}

TEST(NnBatchingEvaluator, PoliciesCoverTheLegalMovesOnly) {
  auto net = std::make_shared<FakeNetwork>();
  BatchingEvaluator evaluator(net, BatchingOptions{});
  const std::vector<Position> positions = sample_positions(10, 17);
  std::vector<MoveList> lists(positions.size());
  std::vector<EvalInput> inputs;
  for (std::size_t i = 0; i < positions.size(); ++i) {
    generate_legal(positions[i], lists[i]);
    inputs.push_back(EvalInput{&positions[i], &lists[i]});
  }
  std::vector<EvalOutput> outputs(inputs.size());
  evaluator.evaluate(inputs, outputs);  // more than one batch's worth at once is fine too
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_EQ(outputs[i].policy.size(), static_cast<std::size_t>(lists[i].size()));
    double sum = 0;
    for (float p : outputs[i].policy) {
      EXPECT_GE(p, 0);
      sum += p;
    }
    if (lists[i].size() > 0) {
      EXPECT_NEAR(sum, 1.0, 1e-5);
    }
    EXPECT_NEAR(outputs[i].win + outputs[i].draw + outputs[i].loss, 1.0, 1e-5);
  }
}

TEST(NnBatchingEvaluator, CacheAnswersRepeatsAndMovesInAnyOrder) {
  auto net = std::make_shared<FakeNetwork>();
  BatchingOptions options;
  options.max_wait_us = 0;
  BatchingEvaluator evaluator(net, options);
  std::mt19937_64 rng(5);
  const Position pos = test::random_game_position(Rules{}, rng, 12);
  MoveList list;
  generate_legal(pos, list);
  EvalInput in{&pos, &list};
  EvalOutput first, second, reversed;
  evaluator.evaluate(std::span(&in, 1), std::span(&first, 1));
  evaluator.evaluate(std::span(&in, 1), std::span(&second, 1));
  EXPECT_EQ(net->passes.load(), 1);
  EXPECT_EQ(evaluator.stats().cache_hits, 1u);
  expect_same(first, second);
  MoveList backwards;
  for (int i = list.size() - 1; i >= 0; --i) backwards.push(list[i]);
  in.moves = &backwards;
  evaluator.evaluate(std::span(&in, 1), std::span(&reversed, 1));
  EXPECT_EQ(net->passes.load(), 1);
  for (int i = 0; i < list.size(); ++i) EXPECT_EQ(reversed.policy[list.size() - 1 - i], first.policy[i]);
  // Another 100-ply count is another input: not a cache hit.
  const std::string fen = pos.fen();
  const std::string placement_and_side = fen.substr(0, fen.find(' ', fen.find(' ') + 1));
  const Position later = Position::from_fen(placement_and_side + " 57 40");
  in = EvalInput{&later, &list};
  evaluator.evaluate(std::span(&in, 1), std::span(&second, 1));
  EXPECT_EQ(net->passes.load(), 2);
  EXPECT_NE(evaluation_key(later), evaluation_key(pos));
}

TEST(NnBatchingEvaluator, NetworkFailuresReachTheCaller) {
  auto net = std::make_shared<FakeNetwork>();
  net->fail = true;
  BatchingEvaluator evaluator(net, BatchingOptions{});
  const Position pos = Position::start();
  MoveList list;
  generate_legal(pos, list);
  const EvalInput in{&pos, &list};
  EvalOutput out;
  EXPECT_THROW(evaluator.evaluate(std::span(&in, 1), std::span(&out, 1)), std::runtime_error);
}

}  // namespace
}  // namespace ultima
