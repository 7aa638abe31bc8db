#include "policy_index.h"

#include <cstdlib>

namespace ultima::nn {
namespace {

int direction_of(int file_step, int rank_step) {
  for (int d = 0; d < kDirections; ++d)
    if (kDirectionFile[d] == file_step && kDirectionRank[d] == rank_step) return d;
  return -1;
}

int sign(int x) { return (x > 0) - (x < 0); }

// Where each symmetry sends each plane: the direction turns with the board
// (read off the symmetry's own square map, so the two cannot disagree); the
// distance and the removal plane stay.
struct PlaneMap {
  std::array<std::array<int, kPolicyPlanes>, kSymmetryCount> to{};
  PlaneMap() {
    for (int s = 0; s < kSymmetryCount; ++s) {
      const Symmetry sym = Symmetry(s);
      const Square centre = transform(make_square(3, 3), sym);
      for (int d = 0; d < kDirections; ++d) {
        const Square next = transform(make_square(3 + kDirectionFile[d], 3 + kDirectionRank[d]), sym);
        const int d2 = direction_of(file_of(next) - file_of(centre), rank_of(next) - rank_of(centre));
        for (int dist = 0; dist < kMaxDistance; ++dist) to[s][d * kMaxDistance + dist] = d2 * kMaxDistance + dist;
      }
      to[s][kRemovalPlane] = kRemovalPlane;
    }
  }
};

const PlaneMap& plane_map() {
  static const PlaneMap map;
  return map;
}

}  // namespace

int policy_index(const Move& move) {
  if (move.is_null()) return -1;
  const Square from = move.from();
  if (move.is_removal()) return kRemovalPlane * 64 + from;
  const int df = file_of(move.to()) - file_of(from);
  const int dr = rank_of(move.to()) - rank_of(from);
  if ((df != 0 && dr != 0 && std::abs(df) != std::abs(dr)) || (df == 0 && dr == 0)) return -1;
  const int distance = std::max(std::abs(df), std::abs(dr));
  return (direction_of(sign(df), sign(dr)) * kMaxDistance + distance - 1) * 64 + from;
}

PolicySlot policy_slot(int index) {
  PolicySlot slot;
  if (index < 0 || index >= kPolicySize) return slot;
  const int plane = index / 64;
  slot.from = index % 64;
  if (plane == kRemovalPlane) {
    slot.removal = true;
    slot.to = slot.from;
    return slot;
  }
  const int d = plane / kMaxDistance, distance = plane % kMaxDistance + 1;
  const int file = file_of(slot.from) + kDirectionFile[d] * distance;
  const int rank = rank_of(slot.from) + kDirectionRank[d] * distance;
  if (file >= 0 && file < 8 && rank >= 0 && rank < 8) slot.to = make_square(file, rank);
  return slot;
}

int transform_policy_index(int index, Symmetry sym) {
  const int plane = index / 64;
  return plane_map().to[static_cast<int>(sym)][plane] * 64 + transform(Square(index % 64), sym);
}

Move find_move(const MoveList& list, int index) {
  for (const Move& m : list)
    if (policy_index(m) == index) return m;
  return Move{};
}

}  // namespace ultima::nn
