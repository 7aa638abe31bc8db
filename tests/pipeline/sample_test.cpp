// Training samples and their shard files (nn/data/sample.h): packed planes
// against nn::encode_position, symmetries, the shard round trip, and damaged
// shards that must give a ShardError (never a crash). No LibTorch.
#include <gtest/gtest.h>

#include <unistd.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "engine/rules/hash.h"
#include "nn/data/sample.h"
#include "nn/encoding.h"
#include "nn/model_file.h"
#include "nn/policy_index.h"
#include "test_util.h"

namespace ultima {
namespace {

using namespace ultima::data;
namespace fs = std::filesystem;

constexpr Symmetry kAll[] = {Symmetry::kIdentity,    Symmetry::kRotate90,    Symmetry::kRotate180,
                             Symmetry::kRotate270,   Symmetry::kMirrorFiles, Symmetry::kMirrorRanks,
                             Symmetry::kTranspose,   Symmetry::kAntiTranspose};

const char* const kRuleSets[] = {"abbott1963",
                                 "cambridge",
                                 "abbott1963,leaper=single",
                                 "abbott1963,chameleon=shape,removal=forbidden",
                                 "abbott1963,frozen-immobilizer=neutralized",
                                 "boardspace",
                                 "zillions"};

Sample packed(const Position& pos) {
  Sample s;
  pack_position(pos, s);
  return s;
}

std::vector<float> unpacked(const Sample& s) {
  std::vector<float> out(nn::kInputSize, -7.0f);  // garbage: unpack must write every float
  unpack_planes(s, std::span<float, nn::kInputSize>(out.data(), nn::kInputSize));
  return out;
}

// Positions along random games (every few plies, so the halfmove clock and
// frozen pieces vary) under the rule set.
std::vector<Position> game_positions(const Rules& rules, std::mt19937_64& rng, int games) {
  std::vector<Position> out;
  for (int g = 0; g < games; ++g) {
    Position pos = Position::start(rules);
    for (int ply = 0; ply < 120 && !game_status(pos).over(); ++ply) {
      if (ply % 7 == 0) out.push_back(pos);
      MoveList list;
      generate_legal(pos, list);
      pos.make(list[std::uniform_int_distribution<int>(0, list.size() - 1)(rng)]);
    }
    out.push_back(pos);
  }
  return out;
}

// A sample with every field set to something not default.
Sample varied_sample(std::mt19937_64& rng, std::uint32_t game) {
  Sample s = packed(test::random_game_position(Rules::parse("cambridge"), rng, 10 + rng() % 40));
  s.result = static_cast<std::int8_t>(static_cast<int>(rng() % 3) - 1);
  s.plies_to_end = static_cast<std::uint16_t>(rng() % 400);
  s.ply = static_cast<std::uint16_t>(rng() % 300);
  s.game = game;
  s.root_q = std::uniform_real_distribution<float>(-1, 1)(rng);
  std::set<std::uint16_t> slots;
  const int n = 1 + static_cast<int>(rng() % 40);
  while (static_cast<int>(slots.size()) < n) slots.insert(static_cast<std::uint16_t>(rng() % nn::kPolicySize));
  for (std::uint16_t slot : slots) s.policy.push_back({slot, 1.0f / n});
  return s;
}

class ShardFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ultima-shard-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  static std::string bytes_of(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static void put_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  // The message of the ShardError that reading `path` throws ("" when it
  // reads fine; the test then fails).
  static std::string read_error(const std::string& path) {
    try {
      read_shard(path);
    } catch (const ShardError& e) {
      return e.what();
    }
    ADD_FAILURE() << path << " was read without error";
    return "";
  }

  std::vector<Sample> some_samples(int n, std::uint64_t seed = 5) {
    std::mt19937_64 rng(seed);
    std::vector<Sample> out;
    for (int i = 0; i < n; ++i) out.push_back(varied_sample(rng, static_cast<std::uint32_t>(i / 3)));
    return out;
  }
  std::string write_some(const std::string& name, int n = 12) {
    const std::string path = file(name);
    ShardHeader h;
    h.games = 4;
    h.model_version = 17;
    h.rules = "cambridge";
    write_shard(path, h, some_samples(n));
    return path;
  }
  // Where the compressed frame starts in a shard written by write_some.
  static std::size_t frame_offset(const std::string& path) {
    return 8 + 4 + 4 + 4 + 8 + 2 + read_shard_header(path).rules.size() + 8 + 8 + 8;
  }

  fs::path dir_;
};

TEST(SelfplaySample, PackedPlanesUnpackToTheEncodingUnderEveryRuleSet) {
  std::mt19937_64 rng(2024);
  int positions = 0, with_clock = 0;
  for (const char* name : kRuleSets) {
    const Rules rules = Rules::parse(name);
    std::vector<Position> list = game_positions(rules, rng, 4);
    for (int i = 0; i < 10; ++i) list.push_back(test::random_placement(rules, rng, 12));
    for (const Position& pos : list) {
      const Sample s = packed(pos);
      ASSERT_EQ(unpacked(s), nn::encode_position(pos)) << name << " " << pos.fen();
      EXPECT_EQ(s.white_to_move, pos.side_to_move() == kWhite ? 1 : 0);
      EXPECT_EQ(s.halfmove_clock, std::min(pos.halfmove_clock(), 100));
      ++positions;
      with_clock += pos.halfmove_clock() > 0;
    }
  }
  EXPECT_GT(positions, 200);
  EXPECT_GT(with_clock, 20);  // the clock plane was really exercised
}

TEST(SelfplaySample, RepetitionAndHalfmoveClockSurviveThePacking) {
  Position pos = Position::start(Rules::parse("abbott1963,leaper=single"));
  for (const char* m : {"a2a3", "a7a6", "a3a2", "a6a7"}) pos.make(parse_move(pos, m));
  ASSERT_EQ(pos.repetition_count(), 2);
  ASSERT_GT(pos.halfmove_clock(), 0);
  const Sample s = packed(pos);
  EXPECT_TRUE(s.flags & (1u << (nn::kRepeated - nn::kRuleLeaperSingle)));
  EXPECT_TRUE(s.flags & (1u << (nn::kRuleLeaperSingle - nn::kRuleLeaperSingle)));
  EXPECT_EQ(s.halfmove_clock, pos.halfmove_clock());
  EXPECT_EQ(unpacked(s), nn::encode_position(pos));

  // A clock at and past the 100-ply mark (the plane saturates at 1).
  for (int clock : {1, 29, 57, 99, 100}) {
    const Position late = test::make_pos("Ke1 ke8 Ph1", 'w', Rules::parse("cambridge"), clock);
    const Sample t = packed(late);
    EXPECT_EQ(t.halfmove_clock, clock);
    EXPECT_EQ(unpacked(t), nn::encode_position(late)) << clock;
  }
}

TEST(SelfplaySample, TransformMatchesPackingTheTransformedPosition) {
  std::mt19937_64 rng(77);
  int moves_checked = 0;
  for (const char* name : {"abbott1963", "cambridge", "abbott1963,leaper=single", "zillions"}) {
    const Rules rules = Rules::parse(name);
    for (int i = 0; i < 6; ++i) {
      const Position pos = test::random_game_position(rules, rng, 5 + 9 * i);
      if (pos.repetition_count() >= 2) continue;  // the transformed position has no history
      MoveList list;
      generate_legal(pos, list);
      Sample s = packed(pos);
      for (const Move& m : list) s.policy.push_back({static_cast<std::uint16_t>(nn::policy_index(m)), 1.0f});
      for (Symmetry sym : kAll) {
        const Position image = transform(pos, sym);
        const Sample t = transform_sample(s, sym);
        const Sample expected = packed(image);
        EXPECT_EQ(t.planes, expected.planes) << name << " " << symmetry_name(sym) << " " << pos.fen();
        EXPECT_EQ(t.flags, expected.flags);
        EXPECT_EQ(t.halfmove_clock, expected.halfmove_clock);
        EXPECT_EQ(t.white_to_move, expected.white_to_move);
        EXPECT_EQ(unpacked(t), nn::encode_position(image));
        MoveList image_moves;
        generate_legal(image, image_moves);
        ASSERT_EQ(t.policy.size(), list.size());
        for (int k = 0; k < list.size(); ++k) {
          const Move moved = transform(list[k], sym);
          EXPECT_EQ(t.policy[k].slot, nn::policy_index(moved)) << symmetry_name(sym);
          EXPECT_EQ(nn::find_move(image_moves, t.policy[k].slot), moved) << symmetry_name(sym);
          ++moves_checked;
        }
      }
      // The inverse symmetry brings the sample back.
      for (Symmetry sym : kAll) EXPECT_EQ(transform_sample(transform_sample(s, sym), inverse(sym)), s);
    }
  }
  EXPECT_GT(moves_checked, 1000);
}

TEST_F(ShardFiles, RoundTripKeepsEverySampleAndTheHeader) {
  const std::vector<Sample> samples = some_samples(40);
  ShardHeader h;
  h.games = 14;
  h.model_version = 0x0123456789ABCDEFULL;
  h.rules = "abbott1963,leaper=single";
  h.samples = 999;  // filled in by write_shard
  const std::string path = file("a.shard");
  write_shard(path, h, samples);

  ShardHeader back;
  EXPECT_EQ(read_shard(path, &back), samples);
  EXPECT_EQ(back.format_version, kShardFormatVersion);
  EXPECT_EQ(back.samples, 40u);
  EXPECT_EQ(back.games, 14u);
  EXPECT_EQ(back.model_version, 0x0123456789ABCDEFULL);
  EXPECT_EQ(back.rules, "abbott1963,leaper=single");
  EXPECT_GT(back.raw_bytes, 40u * 146u);
  const ShardHeader alone = read_shard_header(path);
  EXPECT_EQ(alone.samples, back.samples);
  EXPECT_EQ(alone.checksum, back.checksum);
  EXPECT_EQ(alone.raw_bytes, back.raw_bytes);
  EXPECT_EQ(alone.rules, back.rules);

  // Extremes of every field, and an empty shard.
  Sample edge;
  edge.planes.fill(~std::uint64_t{0});
  edge.flags = 0x7F;
  edge.halfmove_clock = 100;
  edge.white_to_move = 0;
  edge.result = -1;
  edge.plies_to_end = 0xFFFF;
  edge.ply = 0xFFFF;
  edge.game = 0xFFFFFFFFu;
  edge.root_q = -0.0f;
  edge.policy = {{0, 0.25f}, {nn::kPolicySize - 1, 0.75f}};
  write_shard(path, h, {edge, Sample{}});
  EXPECT_EQ(read_shard(path), (std::vector<Sample>{edge, Sample{}}));
  write_shard(path, h, {});
  EXPECT_TRUE(read_shard(path).empty());
}

TEST_F(ShardFiles, WritingLeavesNoTemporaryFileAndReplacesAnOldShardWhole) {
  const std::string path = write_some("b.shard", 30);
  const std::vector<Sample> two = some_samples(2, 99);
  ShardHeader h;
  h.rules = "zillions";
  write_shard(path, h, two);
  ShardHeader back;
  EXPECT_EQ(read_shard(path, &back), two);
  EXPECT_EQ(back.rules, "zillions");
  EXPECT_EQ(back.games, 0u);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"b.shard"});
}

TEST_F(ShardFiles, WriteToAMissingDirectoryNamesTheFile) {
  const std::string path = file("no-such-dir/c.shard");
  try {
    write_shard(path, ShardHeader{}, some_samples(1));
    FAIL() << "wrote into a missing directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST_F(ShardFiles, WriteRefusesSamplesItCouldNotReadBack) {
  std::vector<Sample> bad = some_samples(2);
  bad[1].policy.push_back({nn::kPolicySize, 0.5f});
  EXPECT_THROW(write_shard(file("d.shard"), ShardHeader{}, bad), std::runtime_error);
  bad = some_samples(2);
  bad[0].result = 2;
  EXPECT_THROW(write_shard(file("d.shard"), ShardHeader{}, bad), std::runtime_error);
  EXPECT_FALSE(fs::exists(file("d.shard")));
}

TEST_F(ShardFiles, MissingFileIsAShardErrorNamingIt) {
  const std::string path = file("missing.shard");
  const std::string message = read_error(path);
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_THROW(read_shard_header(path), ShardError);
}

TEST_F(ShardFiles, FlippedCompressedByteIsCaught) {
  const std::string path = write_some("e.shard");
  const std::string good = bytes_of(path);
  const std::size_t start = frame_offset(path);
  ASSERT_LT(start, good.size());
  // Every byte of the frame, one at a time: zstd or the checksum notices.
  for (std::size_t at = start; at < good.size(); ++at) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x5A);
    put_bytes(path, bad);
    const std::string message = read_error(path);
    EXPECT_TRUE(message.find("checksum") != std::string::npos || message.find("zstd") != std::string::npos ||
                message.find("truncated") != std::string::npos || message.find("extra") != std::string::npos ||
                message.find("raw bytes") != std::string::npos)
        << "byte " << at << ": " << message;
    EXPECT_NE(message.find(path), std::string::npos) << message;
  }
  // One flip in the middle of the data: the message says what went wrong.
  std::string bad = good;
  bad[(start + good.size()) / 2] ^= 0x01;
  put_bytes(path, bad);
  const std::string message = read_error(path);
  EXPECT_TRUE(message.find("checksum") != std::string::npos || message.find("zstd") != std::string::npos) << message;
}

TEST_F(ShardFiles, TruncatedShardIsAShardErrorAtEveryCut) {
  const std::string path = write_some("f.shard");
  const std::string good = bytes_of(path);
  const std::string cut_path = file("cut.shard");
  std::set<std::size_t> cuts;
  for (std::size_t i = 0; i < 50; ++i) cuts.insert(i * good.size() / 50);
  for (std::size_t i = 0; i < 70; ++i) cuts.insert(i);  // every header byte
  cuts.insert(good.size() - 1);
  for (std::size_t cut : cuts) {
    put_bytes(cut_path, good.substr(0, cut));
    const std::string message = read_error(cut_path);
    EXPECT_NE(message.find(cut_path), std::string::npos) << "cut " << cut << ": " << message;
  }
  // Bytes appended after the frame.
  put_bytes(cut_path, good + "x");
  EXPECT_NE(read_error(cut_path).find("extra"), std::string::npos);
}

TEST_F(ShardFiles, BadMagicAndUnknownVersionAreNamed) {
  const std::string path = write_some("g.shard");
  const std::string good = bytes_of(path);
  std::string bad = good;
  bad[0] = 'X';
  put_bytes(path, bad);
  EXPECT_NE(read_error(path).find("not a shard"), std::string::npos);
  put_bytes(path, "hello, this is a text file and certainly not a shard of samples\n");
  EXPECT_NE(read_error(path).find("not a shard"), std::string::npos);
  EXPECT_THROW(read_shard_header(path), ShardError);

  bad = good;
  bad[8] = static_cast<char>(kShardFormatVersion + 1);
  put_bytes(path, bad);
  EXPECT_NE(read_error(path).find("unknown format version"), std::string::npos);
  EXPECT_THROW(read_shard_header(path), ShardError);
}

// A sample count that does not match the sample bytes, and a raw size past
// the limit.
TEST_F(ShardFiles, HeaderCountsThatDisagreeWithTheBytesAreCaught) {
  const std::string path = write_some("h.shard", 12);
  const std::string good = bytes_of(path);
  const std::size_t raw_at = frame_offset(path) - 24;  // raw_bytes, checksum, compressed bytes end the header
  const std::size_t samples_at = 12;
  auto with_count = [&](std::uint32_t n) {
    std::string bad = good;
    for (int i = 0; i < 4; ++i) bad[samples_at + i] = static_cast<char>((n >> (8 * i)) & 0xFF);
    put_bytes(path, bad);
    return read_error(path);
  };
  EXPECT_NE(with_count(11).find("left over"), std::string::npos);
  EXPECT_NE(with_count(13).find("end in sample"), std::string::npos);
  EXPECT_NE(with_count(0xFFFFFFFFu).find("cannot fit"), std::string::npos);

  // raw_bytes claimed far beyond the limit: refused before any allocation.
  std::string bad = good;
  for (int i = 0; i < 8; ++i) bad[raw_at + i] = static_cast<char>(0x7F);
  put_bytes(path, bad);
  EXPECT_NE(read_error(path).find("limit"), std::string::npos);
}

// A shard forged with a correct checksum around samples that the writer
// would refuse: the reader checks each sample too.
void forge_shard(const std::string& path, const std::string& raw, std::uint32_t samples) {
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), 3));
  std::string head = "ULTSHARD";
  auto put = [&](std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) head.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  };
  put(kShardFormatVersion, 4);
  put(samples, 4);
  put(1, 4);             // games
  put(0, 8);             // model version
  put(0, 2);             // rules name: empty
  put(raw.size(), 8);
  put(fnv1a64(raw.data(), raw.size()), 8);
  put(out.size(), 8);
  std::ofstream(path, std::ios::binary) << head << out;
}

std::string raw_sample(int result, int slot) {
  std::string raw(16 * 8, '\0');  // empty planes
  raw += std::string{'\0', '\0', '\1', static_cast<char>(static_cast<std::int8_t>(result))};
  raw += std::string(2 + 2 + 4 + 4, '\0');  // plies_to_end, ply, game, root_q
  raw += std::string{'\1', '\0'};           // one policy entry
  raw += std::string{static_cast<char>(slot & 0xFF), static_cast<char>(slot >> 8)};
  raw += std::string{'\0', '\0', '\x80', '\x3f'};  // 1.0f
  return raw;
}

TEST_F(ShardFiles, ForgedSamplesWithABadSlotOrResultAreRefused) {
  const std::string path = file("forged.shard");
  forge_shard(path, raw_sample(1, nn::kPolicySize - 1) + raw_sample(-1, 0), 2);
  const std::vector<Sample> fine = read_shard(path);
  ASSERT_EQ(fine.size(), 2u);
  EXPECT_EQ(fine[0].result, 1);
  EXPECT_EQ(fine[0].policy, (std::vector<PolicyTarget>{{nn::kPolicySize - 1, 1.0f}}));
  EXPECT_EQ(fine[1].result, -1);

  forge_shard(path, raw_sample(0, 0) + raw_sample(0, nn::kPolicySize), 2);
  EXPECT_NE(read_error(path).find("policy slot"), std::string::npos);
  forge_shard(path, raw_sample(2, 0), 1);
  EXPECT_NE(read_error(path).find("outside -1..1"), std::string::npos);
  forge_shard(path, raw_sample(-2, 0), 1);
  EXPECT_NE(read_error(path).find("outside -1..1"), std::string::npos);
}

// Garbage after a valid magic and version, many seeds: always a ShardError.
TEST_F(ShardFiles, RandomGarbageAfterTheMagicNeverCrashes) {
  const std::string path = file("garbage.shard");
  const std::string good = bytes_of(write_some("i.shard"));
  std::mt19937_64 rng(3);
  for (int round = 0; round < 300; ++round) {
    std::string bad = good.substr(0, 12);
    const std::size_t n = rng() % 300;
    for (std::size_t i = 0; i < n; ++i) bad.push_back(static_cast<char>(rng()));
    if (round % 2) bad = good.substr(0, 12 + rng() % (good.size() - 12)) + bad.substr(12);
    put_bytes(path, bad);
    EXPECT_THROW(read_shard(path), ShardError) << round;
  }
}

}  // namespace
}  // namespace ultima
