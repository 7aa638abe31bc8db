// Training samples and the shard files that hold them. A sample is one
// self-play position as the network sees it (nn/encoding.h's planes, packed
// to bits), the search's visit distribution as a sparse policy target, the
// game's final result and the plies left to its end. Shards are zstd frames
// of many samples behind a small header with a checksum, written through a
// temporary file and a rename, so a reader sees a whole shard or none.
// No LibTorch here. The byte layout is in selfplay/README.md.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/rules/position.h"
#include "engine/rules/symmetry.h"
#include "nn/encoding.h"

namespace ultima::data {

// Bumped whenever the sample or shard layout changes; readers reject others.
constexpr std::uint32_t kShardFormatVersion = 2;

struct PolicyTarget {
  std::uint16_t slot = 0;  // nn/policy_index.h
  float probability = 0;

  friend bool operator==(const PolicyTarget&, const PolicyTarget&) = default;
};

constexpr std::uint8_t kNoResult = 0x80;

struct Sample {
  // nn planes 0..15 (pieces and frozen pieces), one bitboard each: bit s is
  // square s (a1 = 0).
  std::array<std::uint64_t, 16> planes{};
  // Bit i: constant plane 16 + i is 1 (the six rule planes, then "repeated").
  // Bit 7 (kNoResult): the game was cut at the length limit, so it has no
  // result: `result` is 0 and `plies_to_end` counts to the cut, and the
  // trainer leaves both out of the value and moves-left losses.
  std::uint8_t flags = 0;
  std::uint8_t halfmove_clock = 0;  // plane 23 times 100
  std::uint8_t white_to_move = 1;   // not an input (planes are side-relative); for statistics
  std::int8_t result = 0;           // the game's result for the side to move: +1, 0, -1
  std::uint16_t plies_to_end = 0;   // plies from this position to the game's end
  std::uint16_t ply = 0;            // plies played before this position in its game
  std::uint32_t game = 0;           // the game's number within its shard
  float root_q = 0;                 // the search's value (win - loss, side to move)
  std::vector<PolicyTarget> policy; // sums to 1; slots distinct

  friend bool operator==(const Sample&, const Sample&) = default;
};

// The planes of a position, packed. The other fields are left as they are.
void pack_position(const Position& pos, Sample& sample);
// The float planes (nn::kInputSize) of a sample: encode_position's output
// with `planes` planes for the position it was packed from. A sample stores
// the first plane set (nn/encoding.h); the later ones, such as the tactics
// planes, are found again from the pieces (a sample stores no moves).
void unpack_planes(const Sample& sample, std::span<float, nn::kInputSize> out, int planes = nn::kInputPlanes);
// The position a sample was packed from, as far as its planes tell: "own"
// pieces as White to move (the rules treat both colours alike), the rule
// switches from the flags. Its history is not known. Throws
// std::runtime_error when the pieces are not a position.
Position sample_position(const Sample& sample);
// The sample seen through a symmetry: planes and policy slots moved alike.
Sample transform_sample(const Sample& sample, Symmetry sym);

struct ShardHeader {
  std::uint32_t format_version = kShardFormatVersion;
  std::uint32_t samples = 0;
  std::uint32_t games = 0;
  std::uint64_t model_version = 0;   // the model that played the games
  std::string rules;                 // the rule set's name (Rules::name())
  std::uint64_t raw_bytes = 0;       // the samples before compression
  std::uint64_t checksum = 0;        // FNV-1a 64 of those bytes
};

// A shard that cannot be read; the message names the file and the problem
// (truncated, checksum mismatch, unknown version, not a shard).
class ShardError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes the shard atomically (temporary file, fsync, rename); fills in the
// header's sample count, sizes and checksum. Throws std::runtime_error
// naming the file when it cannot be written.
void write_shard(const std::string& path, ShardHeader header, const std::vector<Sample>& samples);
// Reads and checks a whole shard. Throws ShardError.
std::vector<Sample> read_shard(const std::string& path, ShardHeader* header = nullptr);
// The header alone, checked for magic and version (not the checksum).
ShardHeader read_shard_header(const std::string& path);

}  // namespace ultima::data
