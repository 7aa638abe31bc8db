#include "nn/data/sample.h"

#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>

#include "engine/base/file_io.h"
#include "engine/rules/hash.h"
#include "nn/model_file.h"
#include "nn/policy_index.h"

namespace ultima::data {
namespace {

constexpr char kMagic[8] = {'U', 'L', 'T', 'S', 'H', 'A', 'R', 'D'};
// magic, version, samples, games, model_version, rules length (the name
// follows), raw_bytes, checksum, compressed bytes.
constexpr std::size_t kFixedHeaderBytes = 8 + 4 + 4 + 4 + 8 + 2 + 8 + 8 + 8;
// A shard holds one chunk of games; anything bigger is not one of ours, and
// the cap keeps a damaged header from asking for absurd memory.
constexpr std::uint64_t kMaxRawBytes = std::uint64_t{1} << 30;
// 16 planes, flags, halfmove, side, result, plies_to_end, ply, game, root_q,
// policy count; each policy entry adds a slot and a probability.
constexpr std::size_t kSampleFixedBytes = 16 * 8 + 1 + 1 + 1 + 1 + 2 + 2 + 4 + 4 + 2;
constexpr std::size_t kPolicyEntryBytes = 2 + 4;
constexpr int kZstdLevel = 3;
constexpr int kFlagPlanes = nn::kHalfmoveClock - nn::kRuleLeaperSingle;  // 16..22
// A sample stores the first plane set, as bits (planes 0-15), flags (16-22)
// and the halfmove clock (23); plane 24 is constant. The later sets are not
// stored: unpack_planes finds them again from the pieces.
constexpr const nn::PlaneSet& kStoredSet = nn::kPlaneSets[0];
static_assert(kStoredSet.first_plane == 0 && kStoredSet.end_plane() == nn::kOnes + 1,
              "the shard format stores exactly the first plane set");

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw ShardError("shard " + path + ": " + problem);
}

// Little-endian writing and reading, independent of the host's byte order.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  template <typename T>
  void put(T value) {
    using U = std::make_unsigned_t<T>;
    const U u = static_cast<U>(value);
    for (std::size_t i = 0; i < sizeof(T); ++i) out_.push_back(static_cast<char>((u >> (8 * i)) & 0xFF));
  }
  void put_float(float f) { put(std::bit_cast<std::uint32_t>(f)); }
  void put_bytes(const std::string& s) { out_ += s; }

 private:
  std::string& out_;
};

class Reader {
 public:
  Reader(const char* data, std::size_t size) : data_(data), size_(size) {}
  std::size_t left() const { return size_ - pos_; }
  std::size_t offset() const { return pos_; }
  bool has(std::size_t n) const { return left() >= n; }
  // The caller checks has() first.
  template <typename T>
  T get() {
    using U = std::make_unsigned_t<T>;
    U u = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      u |= static_cast<U>(static_cast<U>(static_cast<unsigned char>(data_[pos_ + i])) << (8 * i));
    pos_ += sizeof(T);
    return static_cast<T>(u);
  }
  float get_float() { return std::bit_cast<float>(get<std::uint32_t>()); }
  std::string get_bytes(std::size_t n) {
    std::string s(data_ + pos_, n);
    pos_ += n;
    return s;
  }

 private:
  const char* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// What is wrong with a sample, or "" when nothing is. The writer and the
// reader check the same things, so a shard that was written can be read.
std::string sample_problem(const Sample& s) {
  if (s.result < -1 || s.result > 1) return "result " + std::to_string(s.result) + " outside -1..1";
  if ((s.flags & ~kNoResult) >> kFlagPlanes) return "flags " + std::to_string(s.flags) + " set an unknown bit";
  if ((s.flags & kNoResult) && s.result != 0) return "a sample without result has result " + std::to_string(s.result);
  if (s.halfmove_clock > 100) return "halfmove clock " + std::to_string(s.halfmove_clock) + " above 100";
  if (s.white_to_move > 1) return "white_to_move " + std::to_string(s.white_to_move) + " is not 0 or 1";
  if (s.policy.size() > static_cast<std::size_t>(nn::kPolicySize))
    return std::to_string(s.policy.size()) + " policy entries, more than there are slots";
  for (const PolicyTarget& t : s.policy)
    if (t.slot >= nn::kPolicySize)
      return "policy slot " + std::to_string(t.slot) + " >= " + std::to_string(nn::kPolicySize);
  return "";
}

void serialize(const Sample& s, Writer& w) {
  for (std::uint64_t plane : s.planes) w.put(plane);
  w.put(s.flags);
  w.put(s.halfmove_clock);
  w.put(s.white_to_move);
  w.put(s.result);
  w.put(s.plies_to_end);
  w.put(s.ply);
  w.put(s.game);
  w.put_float(s.root_q);
  w.put(static_cast<std::uint16_t>(s.policy.size()));
  for (const PolicyTarget& t : s.policy) {
    w.put(t.slot);
    w.put_float(t.probability);
  }
}

// Reads one sample, or returns false when the bytes end first.
bool deserialize(Reader& r, Sample& s) {
  if (!r.has(kSampleFixedBytes)) return false;
  for (std::uint64_t& plane : s.planes) plane = r.get<std::uint64_t>();
  s.flags = r.get<std::uint8_t>();
  s.halfmove_clock = r.get<std::uint8_t>();
  s.white_to_move = r.get<std::uint8_t>();
  s.result = r.get<std::int8_t>();
  s.plies_to_end = r.get<std::uint16_t>();
  s.ply = r.get<std::uint16_t>();
  s.game = r.get<std::uint32_t>();
  s.root_q = r.get_float();
  const std::size_t count = r.get<std::uint16_t>();
  if (!r.has(count * kPolicyEntryBytes)) return false;
  s.policy.resize(count);
  for (PolicyTarget& t : s.policy) {
    t.slot = r.get<std::uint16_t>();
    t.probability = r.get_float();
  }
  return true;
}

struct ParsedHeader {
  ShardHeader header;
  std::uint64_t compressed_bytes = 0;
  std::size_t size = 0;  // bytes of the header in the file
};

// Parses and checks the header at the start of `bytes` (the file's first
// bytes, or all of them); `file_size` bounds the counts.
ParsedHeader parse_header(const std::string& path, const std::string& bytes, std::uint64_t file_size) {
  if (bytes.empty()) fail(path, "empty file, not a shard");
  const std::size_t magic_seen = std::min(bytes.size(), sizeof kMagic);
  if (bytes.compare(0, magic_seen, kMagic, magic_seen) != 0) fail(path, "not a shard (bad magic)");
  Reader r(bytes.data(), bytes.size());
  auto need = [&](std::size_t n) {
    if (!r.has(n))
      fail(path, "truncated header (" + std::to_string(bytes.size()) + " bytes, needs at least " +
                     std::to_string(r.offset() + n) + ")");
  };
  need(sizeof kMagic + 4);
  r.get_bytes(sizeof kMagic);
  ParsedHeader p;
  ShardHeader& h = p.header;
  h.format_version = r.get<std::uint32_t>();
  if (h.format_version != kShardFormatVersion)
    fail(path, "unknown format version " + std::to_string(h.format_version) + " (this build reads " +
                   std::to_string(kShardFormatVersion) + ")");
  need(4 + 4 + 8 + 2);
  h.samples = r.get<std::uint32_t>();
  h.games = r.get<std::uint32_t>();
  h.model_version = r.get<std::uint64_t>();
  const std::size_t name_length = r.get<std::uint16_t>();
  need(name_length + 8 + 8 + 8);
  h.rules = r.get_bytes(name_length);
  h.raw_bytes = r.get<std::uint64_t>();
  h.checksum = r.get<std::uint64_t>();
  p.compressed_bytes = r.get<std::uint64_t>();
  p.size = r.offset();

  if (h.raw_bytes > kMaxRawBytes)
    fail(path, "raw size " + std::to_string(h.raw_bytes) + " bytes is above the limit of " +
                   std::to_string(kMaxRawBytes));
  if (h.samples > h.raw_bytes / kSampleFixedBytes)
    fail(path, std::to_string(h.samples) + " samples cannot fit in " + std::to_string(h.raw_bytes) + " raw bytes");
  const std::uint64_t body = file_size - p.size;
  if (p.compressed_bytes > body)
    fail(path, "truncated: compressed data has " + std::to_string(body) + " of " +
                   std::to_string(p.compressed_bytes) + " bytes");
  if (p.compressed_bytes < body)
    fail(path, std::to_string(body - p.compressed_bytes) + " extra bytes after the compressed data");
  return p;
}

std::uint64_t file_size_of(const std::string& path, std::ifstream& in) {
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0 || !in) fail(path, "cannot read the file");
  return static_cast<std::uint64_t>(size);
}

std::ifstream open_shard(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open the file (missing?)");
  return in;
}

std::string read_bytes(const std::string& path, std::ifstream& in, std::size_t n) {
  std::string bytes(n, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(n));
  if (static_cast<std::size_t>(in.gcount()) != n) fail(path, "cannot read the file");
  return bytes;
}

// Decompresses the one frame in `compressed` into at most `raw_bytes`
// bytes. Streaming, so the memory grows with what the frame really holds,
// not with what a damaged header claims.
std::string decompress(const std::string& path, const std::string& compressed, std::uint64_t raw_bytes) {
  std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!ctx) fail(path, "zstd: cannot create a decompression context");
  std::string out;
  ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
  char chunk[1 << 16];
  for (;;) {
    ZSTD_outBuffer o{chunk, sizeof chunk, 0};
    const std::size_t ret = ZSTD_decompressStream(ctx.get(), &o, &in);
    if (ZSTD_isError(ret)) fail(path, std::string("zstd error: ") + ZSTD_getErrorName(ret));
    if (out.size() + o.pos > raw_bytes)
      fail(path, "the compressed data holds more than the " + std::to_string(raw_bytes) + " raw bytes of the header");
    out.append(chunk, o.pos);
    if (ret == 0) break;  // the frame is complete
    // All input read and the output not full: the decoder has given all it
    // can and still wants more.
    if (in.pos == in.size && o.pos < o.size) fail(path, "truncated: the zstd frame ends early");
  }
  if (in.pos != in.size)
    fail(path, std::to_string(in.size - in.pos) + " extra bytes after the zstd frame");
  if (out.size() != raw_bytes)
    fail(path, "the zstd frame holds " + std::to_string(out.size()) + " bytes, the header says " +
                   std::to_string(raw_bytes));
  return out;
}

std::string compress(const std::string& path, const std::string& raw) {
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  const std::size_t n = ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), kZstdLevel);
  if (ZSTD_isError(n)) throw std::runtime_error("shard " + path + ": zstd error: " + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

}  // namespace

Position sample_position(const Sample& sample) {
  // Flag bit i is rule plane kRuleLeaperSingle + i.
  const auto on = [&](int plane) { return (sample.flags >> (plane - nn::kRuleLeaperSingle) & 1u) != 0; };
  Rules rules;
  if (on(nn::kRuleLeaperSingle)) rules.leaper = LeaperRule::kSingle;
  if (on(nn::kRuleChameleonShape)) rules.chameleon = ChameleonRule::kShape;
  if (on(nn::kRuleRemovalForbidden)) rules.removal = RemovalRule::kForbidden;
  if (on(nn::kRuleImmobilizerNeutralized)) rules.frozen_immobilizer = FrozenImmobilizerRule::kNeutralized;
  if (on(nn::kRuleStalemateDraw)) rules.stalemate = StalemateRule::kDraw;
  if (on(nn::kRuleKingCapture)) rules.objective = Objective::kKingCapture;
  std::array<Piece, 64> board{};
  for (int k = kKing; k <= kChameleon; ++k) {
    for (Square s = 0; s < 64; ++s) {
      if (sample.planes[nn::kOwnPieces + nn::kind_plane(Kind(k))] >> s & 1) board[s] = make_piece(kWhite, Kind(k));
      if (sample.planes[nn::kEnemyPieces + nn::kind_plane(Kind(k))] >> s & 1) board[s] = make_piece(kBlack, Kind(k));
    }
  }
  try {
    return Position::from_fen(fen_placement(board) + " w " + std::to_string(sample.halfmove_clock) + " 1", rules);
  } catch (const FenError& e) {
    throw std::runtime_error(std::string("a sample's pieces are not a position (") + e.what() + ")");
  }
}

void pack_position(const Position& pos, Sample& sample) {
  std::array<float, nn::kInputSize> planes;
  nn::encode_position(pos, planes, kStoredSet.end_plane());  // the stored planes only
  for (int p = 0; p < 16; ++p) {
    std::uint64_t bits = 0;
    for (int s = 0; s < nn::kPlaneSize; ++s)
      if (planes[p * nn::kPlaneSize + s] != 0.0f) bits |= std::uint64_t{1} << s;
    sample.planes[p] = bits;
  }
  // Constant planes: square a1 stands for the whole plane.
  sample.flags = 0;
  for (int i = 0; i < kFlagPlanes; ++i)
    if (planes[(nn::kRuleLeaperSingle + i) * nn::kPlaneSize] != 0.0f) sample.flags |= std::uint8_t(1u << i);
  sample.halfmove_clock =
      static_cast<std::uint8_t>(std::lround(planes[nn::kHalfmoveClock * nn::kPlaneSize] * 100.0f));
  sample.white_to_move = pos.side_to_move() == kWhite ? 1 : 0;
}

void unpack_planes(const Sample& sample, std::span<float, nn::kInputSize> out, int planes) {
  std::fill(out.begin(), out.end(), 0.0f);
  for (int p = 0; p < 16; ++p) {
    float* plane = out.data() + p * nn::kPlaneSize;
    for (Bitboard b = sample.planes[p]; b;) plane[pop_lsb(b)] = 1.0f;
  }
  auto fill = [&](int plane, float value) { std::fill_n(out.begin() + plane * nn::kPlaneSize, nn::kPlaneSize, value); };
  for (int i = 0; i < kFlagPlanes; ++i)
    if (sample.flags & (1u << i)) fill(nn::kRuleLeaperSingle + i, 1.0f);
  // The same arithmetic as encode_position, so the floats match bit for bit.
  fill(nn::kHalfmoveClock, std::min(static_cast<int>(sample.halfmove_clock), 100) / 100.0f);
  fill(nn::kOnes, 1.0f);
  // Every later set the network reads, found again from the pieces.
  const std::span<const nn::PlaneSet> sets = nn::plane_sets_read(planes);
  if (sets.size() > 1) {
    const Position pos = sample_position(sample);
    for (const nn::PlaneSet& set : sets.subspan(1)) set.fill(pos, out);
  }
}

Sample transform_sample(const Sample& sample, Symmetry sym) {
  Sample out = sample;
  for (int p = 0; p < 16; ++p) out.planes[p] = transform(Bitboard{sample.planes[p]}, sym);
  for (PolicyTarget& t : out.policy)
    t.slot = static_cast<std::uint16_t>(nn::transform_policy_index(t.slot, sym));
  return out;
}

void write_shard(const std::string& path, ShardHeader header, const std::vector<Sample>& samples) {
  auto failure = [&](const std::string& problem) { return std::runtime_error("shard " + path + ": " + problem); };
  if (header.rules.size() > 0xFFFF) throw failure("the rules name is longer than 65535 bytes");
  if (samples.size() > 0xFFFFFFFFu) throw failure("too many samples for one shard");

  std::string raw;
  Writer w(raw);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const std::string problem = sample_problem(samples[i]);
    if (!problem.empty()) throw failure("sample " + std::to_string(i) + ": " + problem);
    serialize(samples[i], w);
  }
  if (raw.size() > kMaxRawBytes) throw failure("the samples exceed the shard limit of " + std::to_string(kMaxRawBytes) + " bytes");
  header.format_version = kShardFormatVersion;
  header.samples = static_cast<std::uint32_t>(samples.size());
  header.raw_bytes = raw.size();
  header.checksum = fnv1a64(raw.data(), raw.size());
  const std::string compressed = compress(path, raw);

  std::string head;
  Writer h(head);
  head.append(kMagic, sizeof kMagic);
  h.put(header.format_version);
  h.put(header.samples);
  h.put(header.games);
  h.put(header.model_version);
  h.put(static_cast<std::uint16_t>(header.rules.size()));
  h.put_bytes(header.rules);
  h.put(header.raw_bytes);
  h.put(header.checksum);
  h.put(static_cast<std::uint64_t>(compressed.size()));

  try {
    write_file_atomically(path, {std::string_view(reinterpret_cast<const char*>(head.data()), head.size()),
                                 std::string_view(reinterpret_cast<const char*>(compressed.data()), compressed.size())});
  } catch (const std::runtime_error& e) {
    throw failure(e.what());
  }
}

ShardHeader read_shard_header(const std::string& path) {
  std::ifstream in = open_shard(path);
  const std::uint64_t size = file_size_of(path, in);
  const std::size_t prefix = static_cast<std::size_t>(std::min<std::uint64_t>(size, kFixedHeaderBytes + 0xFFFF));
  return parse_header(path, read_bytes(path, in, prefix), size).header;
}

std::vector<Sample> read_shard(const std::string& path, ShardHeader* header_out) {
  std::ifstream in = open_shard(path);
  const std::uint64_t size = file_size_of(path, in);
  // The header check made the compressed size the rest of the file; this
  // bound keeps a huge foreign file from being read whole.
  const std::size_t prefix = static_cast<std::size_t>(std::min<std::uint64_t>(size, kFixedHeaderBytes + 0xFFFF));
  const ParsedHeader p = parse_header(path, read_bytes(path, in, prefix), size);
  if (p.compressed_bytes > ZSTD_compressBound(kMaxRawBytes))
    fail(path, "compressed size " + std::to_string(p.compressed_bytes) + " is above the limit");
  in.seekg(static_cast<std::streamoff>(p.size));
  const std::string compressed = read_bytes(path, in, static_cast<std::size_t>(p.compressed_bytes));
  const std::string raw = decompress(path, compressed, p.header.raw_bytes);
  if (fnv1a64(raw.data(), raw.size()) != p.header.checksum) fail(path, "checksum mismatch (damaged data)");

  std::vector<Sample> samples(p.header.samples);
  Reader r(raw.data(), raw.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!deserialize(r, samples[i]))
      fail(path, "the sample bytes end in sample " + std::to_string(i) + " of " + std::to_string(samples.size()));
    const std::string problem = sample_problem(samples[i]);
    if (!problem.empty()) fail(path, "sample " + std::to_string(i) + ": " + problem);
  }
  if (r.left() != 0)
    fail(path, std::to_string(r.left()) + " sample bytes left over after " + std::to_string(samples.size()) +
                   " samples");
  if (header_out) *header_out = p.header;
  return samples;
}

}  // namespace ultima::data
