#include "engine/rules/perft.h"

#include "engine/rules/movegen.h"

namespace ultima {

std::uint64_t perft(Position& pos, int depth) {
  if (depth <= 0) return 1;
  if (depth == 1) return static_cast<std::uint64_t>(count_legal(pos));
  MoveList list;
  generate_legal(pos, list);
  std::uint64_t nodes = 0;
  for (const Move& m : list) {
    pos.make(m);
    nodes += perft(pos, depth - 1);
    pos.unmake();
  }
  return nodes;
}

std::vector<DivideEntry> perft_divide(Position& pos, int depth) {
  MoveList list;
  generate_legal(pos, list);
  std::vector<DivideEntry> out;
  out.reserve(list.size());
  for (const Move& m : list) {
    pos.make(m);
    out.push_back({m, perft(pos, depth - 1)});
    pos.unmake();
  }
  return out;
}

}  // namespace ultima
