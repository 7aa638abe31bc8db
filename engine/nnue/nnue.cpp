#include "engine/nnue/nnue.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <mutex>

#include "engine/base/file_io.h"
#include "engine/rules/hash.h"

namespace ultima::nnue {
namespace {

static_assert(std::endian::native == std::endian::little, "network files are read as little-endian");

constexpr char kMagic[8] = {'U', 'N', 'N', 'U', 'E', 0, 0, 0};
constexpr std::uint32_t kMaxDescription = 1 << 16;

template <typename T>
void put(std::string& out, const T* values, std::size_t count) {
  out.append(reinterpret_cast<const char*>(values), sizeof(T) * count);
}
template <typename T>
void put(std::string& out, T value) {
  put(out, &value, 1);
}

// Reads fields in order; every read is bounds-checked against the bytes.
class Reader {
 public:
  Reader(const std::string& bytes, std::size_t end, const std::string& origin)
      : bytes_(bytes), end_(end), origin_(origin) {}
  template <typename T>
  void read(T* values, std::size_t count, const char* what) {
    const std::size_t size = sizeof(T) * count;
    if (end_ - pos_ < size)
      throw FileError(origin_ + ": truncated network file (it ends inside the " + what + ")");
    std::memcpy(values, bytes_.data() + pos_, size);
    pos_ += size;
  }
  template <typename T>
  T read(const char* what) {
    T v;
    read(&v, 1, what);
    return v;
  }
  std::size_t position() const { return pos_; }

 private:
  const std::string& bytes_;
  std::size_t end_;
  const std::string& origin_;
  std::size_t pos_ = 0;
};

template <std::size_t N>
inline void add_row(std::array<std::int16_t, N>& acc, const std::int16_t* row) {
  for (std::size_t i = 0; i < N; ++i) acc[i] = static_cast<std::int16_t>(acc[i] + row[i]);
}
template <std::size_t N>
inline void sub_row(std::array<std::int16_t, N>& acc, const std::int16_t* row) {
  for (std::size_t i = 0; i < N; ++i) acc[i] = static_cast<std::int16_t>(acc[i] - row[i]);
}

// The second layer: int16 activations times int16 weights in int32 (the
// loop the compiler vectorises), kept unshifted at scale kQA * kQB.
inline void second_layer(const std::int16_t* in, const std::int16_t* w, const std::int32_t* b, std::int32_t* out) {
  for (int j = 0; j < kL2; ++j) {
    const std::int16_t* row = w + j * 2 * kHalf;
    std::int32_t sum = 0;
    for (int i = 0; i < 2 * kHalf; ++i) sum += static_cast<std::int32_t>(in[i]) * row[i];
    out[j] = std::clamp(sum + b[j], 0, kQA * kQB);
  }
}

}  // namespace

const char* feature_set_name(FeatureSet set) {
  switch (set) {
    case FeatureSet::kPieces: return "pieces";
    case FeatureSet::kPiecesFrozen: return "pieces-frozen";
  }
  return "unknown";
}

FeatureSet parse_feature_set(const std::string& name) {
  if (name == "pieces") return FeatureSet::kPieces;
  if (name == "pieces-frozen") return FeatureSet::kPiecesFrozen;
  throw std::invalid_argument("unknown NNUE feature set '" + name + "' (pieces, pieces-frozen)");
}

BoardState board_state(const Position& pos) {
  BoardState board;
  const Bitboard frozen = pos.frozen(kWhite) | pos.frozen(kBlack);
  for (Square s = 0; s < 64; ++s)
    board[s] = static_cast<SquareState>(pos.piece_on(s) | ((frozen >> s & 1) ? kFrozenBit : 0));
  return board;
}

BoardState transform(const BoardState& board, Symmetry sym) {
  BoardState out;
  for (Square s = 0; s < 64; ++s) out[ultima::transform(s, sym)] = board[s];
  return out;
}

int feature_index(FeatureSet set, Color perspective, Square s, SquareState state) {
  const Piece p = state & 15;
  if (p == kEmpty) return -1;
  const int enemy = color_of(p) != perspective;
  const int frozen = set == FeatureSet::kPiecesFrozen && (state & kFrozenBit);
  const Square oriented = perspective == kWhite ? s : (s ^ 56);
  return (((enemy * kKinds + (kind_of(p) - 1)) * 2 + frozen) * 64) + oriented;
}

std::vector<int> active_features(FeatureSet set, const BoardState& board, Color perspective) {
  std::vector<int> out;
  for (Square s = 0; s < 64; ++s) {
    const int f = feature_index(set, perspective, s, board[s]);
    if (f >= 0) out.push_back(f);
  }
  return out;
}

Network::Network()
    : w1(static_cast<std::size_t>(kFeatures) * kHalf), w2(static_cast<std::size_t>(kL2) * 2 * kHalf),
      w3(static_cast<std::size_t>(kL3) * kL2) {}

std::string serialize(const Network& net) {
  std::string out(kMagic, sizeof kMagic);
  put<std::uint32_t>(out, kFileVersion);
  put<std::uint32_t>(out, static_cast<std::uint32_t>(net.features));
  for (std::uint32_t v : {std::uint32_t(kFeatures), std::uint32_t(kHalf), std::uint32_t(kL2), std::uint32_t(kL3),
                          std::uint32_t(kQA), std::uint32_t(kQB), std::uint32_t(kQO), std::uint32_t(kScoreScale)})
    put(out, v);
  const std::uint32_t desc = static_cast<std::uint32_t>(std::min<std::size_t>(net.description.size(), kMaxDescription));
  put(out, desc);
  out.append(net.description.data(), desc);
  put(out, net.w1.data(), net.w1.size());
  put(out, net.b1.data(), net.b1.size());
  put(out, net.w2.data(), net.w2.size());
  put(out, net.b2.data(), net.b2.size());
  put(out, net.w3.data(), net.w3.size());
  put(out, net.b3.data(), net.b3.size());
  put(out, net.wo.data(), net.wo.size());
  put(out, net.bo);
  put<std::uint64_t>(out, fnv1a64(out.data(), out.size()));
  return out;
}

Network deserialize(const std::string& bytes, const std::string& origin) {
  if (bytes.size() < sizeof kMagic + 4 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw FileError(origin + ": not an NNUE network file (no UNNUE magic)");
  if (bytes.size() < sizeof kMagic + 8)
    throw FileError(origin + ": truncated network file (it ends inside the header)");
  Reader r(bytes, bytes.size() - 8 >= sizeof kMagic ? bytes.size() - 8 : bytes.size(), origin);
  char magic[8];
  r.read(magic, 8, "magic");
  const auto version = r.read<std::uint32_t>("version");
  if (version != kFileVersion)
    throw FileError(origin + ": network file version " + std::to_string(version) + ", this program reads version " +
                    std::to_string(kFileVersion));
  Network net;
  const auto set = r.read<std::uint32_t>("feature set");
  if (set != static_cast<std::uint32_t>(FeatureSet::kPieces) && set != static_cast<std::uint32_t>(FeatureSet::kPiecesFrozen))
    throw FileError(origin + ": unknown feature set " + std::to_string(set));
  net.features = static_cast<FeatureSet>(set);
  const char* names[] = {"features", "first layer", "second layer", "third layer", "kQA", "kQB", "kQO", "score scale"};
  const std::uint32_t expected[] = {kFeatures, kHalf, kL2, kL3, kQA, kQB, kQO, kScoreScale};
  for (int i = 0; i < 8; ++i) {
    const auto v = r.read<std::uint32_t>("header");
    if (v != expected[i])
      throw FileError(origin + ": network file has " + names[i] + " " + std::to_string(v) + ", this program reads " +
                      std::to_string(expected[i]));
  }
  const auto desc = r.read<std::uint32_t>("description length");
  if (desc > kMaxDescription) throw FileError(origin + ": network file's description is too long (corrupt header)");
  net.description.resize(desc);
  r.read(net.description.data(), desc, "description");
  r.read(net.w1.data(), net.w1.size(), "first layer's weights");
  r.read(net.b1.data(), net.b1.size(), "first layer's biases");
  r.read(net.w2.data(), net.w2.size(), "second layer's weights");
  r.read(net.b2.data(), net.b2.size(), "second layer's biases");
  r.read(net.w3.data(), net.w3.size(), "third layer's weights");
  r.read(net.b3.data(), net.b3.size(), "third layer's biases");
  r.read(net.wo.data(), net.wo.size(), "output weights");
  net.bo = r.read<std::int32_t>("output bias");
  if (r.position() + 8 != bytes.size()) {
    if (r.position() + 8 > bytes.size()) throw FileError(origin + ": truncated network file (no checksum)");
    throw FileError(origin + ": network file has " + std::to_string(bytes.size() - r.position() - 8) +
                    " bytes after its weights (corrupt or other sizes)");
  }
  std::uint64_t stored;
  std::memcpy(&stored, bytes.data() + r.position(), 8);
  if (stored != fnv1a64(bytes.data(), r.position()))
    throw FileError(origin + ": network file checksum mismatch (corrupt file)");
  return net;
}

void save(const std::string& path, const Network& net) { write_file_atomically(path, serialize(net)); }

std::shared_ptr<const Network> load(const std::string& path) {
  std::string bytes;
  try {
    bytes = read_file(path);
  } catch (const std::exception& e) {
    throw FileError(std::string("cannot read NNUE network: ") + e.what());
  }
  return std::make_shared<const Network>(deserialize(bytes, path));
}

std::shared_ptr<const Network> load_cached(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Network>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  auto net = load(path);
  cache.emplace(path, net);
  return net;
}

void refresh(const Network& net, const BoardState& board, Accumulator& acc) {
  for (int p = 0; p < 2; ++p) {
    std::copy(net.b1.begin(), net.b1.end(), acc.v[p].begin());
    for (Square s = 0; s < 64; ++s) {
      const int f = feature_index(net.features, Color(p), s, board[s]);
      if (f >= 0) add_row(acc.v[p], &net.w1[static_cast<std::size_t>(f) * kHalf]);
    }
  }
}

int output(const Network& net, const Accumulator& acc, Color side_to_move) {
  alignas(64) std::int16_t a[2 * kHalf];
  const auto& us = acc.v[side_to_move];
  const auto& them = acc.v[~side_to_move];
  for (int i = 0; i < kHalf; ++i) {
    a[i] = std::clamp<std::int16_t>(us[i], 0, kQA);
    a[kHalf + i] = std::clamp<std::int16_t>(them[i], 0, kQA);
  }
  // The small layers after it keep their sums whole (int64), with no
  // rounding between layers: the output weights would magnify it.
  alignas(64) std::int32_t h2[kL2];
  second_layer(a, net.w2.data(), net.b2.data(), h2);
  constexpr std::int64_t kTop3 = std::int64_t{kQA} * kQB * kQB;
  std::int64_t out = std::int64_t{net.bo} * kQB * kQB;
  for (int j = 0; j < kL3; ++j) {
    const std::int16_t* row = &net.w3[static_cast<std::size_t>(j) * kL2];
    std::int64_t sum = std::int64_t{net.b3[j]} * kQB;
    for (int i = 0; i < kL2; ++i) sum += std::int64_t{h2[i]} * row[i];
    out += std::clamp<std::int64_t>(sum, 0, kTop3) * net.wo[j];
  }
  return static_cast<int>(out * kScoreScale / (kTop3 * kQO));
}

int evaluate_full(const Network& net, const Position& pos) {
  Accumulator acc;
  refresh(net, board_state(pos), acc);
  return output(net, acc, pos.side_to_move());
}

Evaluator::Evaluator(std::shared_ptr<const Network> net) : net_(std::move(net)), slots_(kSlots) {
  if (!net_) throw std::invalid_argument("NNUE evaluator without a network");
}

void Evaluator::reset() {
  for (Slot& s : slots_) s.valid = false;
}

int Evaluator::evaluate(const Position& pos, int ply) {
  ply = std::clamp(ply, 0, kSlots - 1);
  ++counts_.evaluations;
  const Network& net = *net_;
  const BoardState board = board_state(pos);
  // The start with the fewest changed squares.
  int best_slot = -1, best_changes = 65;
  for (int candidate = ply; candidate >= std::max(0, ply - 2); --candidate) {
    const Slot& s = slots_[candidate];
    if (!s.valid) continue;
    int changes = 0;
    for (int i = 0; i < 64; ++i) changes += s.board[i] != board[i];
    if (changes < best_changes) {
      best_changes = changes;
      best_slot = candidate;
    }
  }
  Slot& slot = slots_[ply];
  // A refresh costs one row per piece and perspective; an update two per
  // changed square (out and in). Past about half the pieces, refresh.
  constexpr int kMaxChanges = 12;
  if (best_slot < 0 || best_changes > kMaxChanges) {
    refresh(net, board, slot.acc);
    ++counts_.refreshes;
  } else {
    const Slot& from = slots_[best_slot];
    if (best_slot != ply) slot.acc = from.acc;
    const BoardState old = from.board;  // a copy: `from` may be `slot`
    for (Square s = 0; s < 64; ++s) {
      if (old[s] == board[s]) continue;
      ++counts_.squares_updated;
      for (int p = 0; p < 2; ++p) {
        const int out = feature_index(net.features, Color(p), s, old[s]);
        const int in = feature_index(net.features, Color(p), s, board[s]);
        if (out == in) continue;  // a frozen flag the feature set ignores
        if (out >= 0) sub_row(slot.acc.v[p], &net.w1[static_cast<std::size_t>(out) * kHalf]);
        if (in >= 0) add_row(slot.acc.v[p], &net.w1[static_cast<std::size_t>(in) * kHalf]);
      }
    }
  }
  slot.board = board;
  slot.valid = true;
  return output(net, slot.acc, pos.side_to_move());
}

}  // namespace ultima::nnue
