// The UCI protocol, with Fairy-Stockfish's conventions for variants
// (UCI_Variant carries the rule preset). Garbage never stops the engine: it
// answers "info string error ..." and reads on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>

#include "engine/play/player_spec.h"
#include "engine/search/search.h"

namespace ultima {

// Reads commands from `in` until "quit" or end of input, answering on `out`.
// The MCTS backend's WeightsFile and network players of the Level option
// get their networks from `networks` (none when empty). `hash_mb` is the
// Hash option's default, the table made at the start (the fuzz target
// starts thousands of sessions a second on a small one).
void run_uci(std::istream& in, std::ostream& out, const NetworkFactory& networks = {},
             std::size_t hash_mb = kDefaultHashMb);

// The MCTS backend's thinking time for one move under a clock, in ms: a
// share of the time left (1/movestogo, at most 1/40; else 1/30) plus three
// quarters of the increment, but never more than a third of what is left
// after a margin for the protocol, so a large increment cannot lose on
// time. With an increment and no clock, half the increment. 0 when there
// is neither.
std::int64_t mcts_move_time_ms(std::int64_t time_left_ms, std::int64_t increment_ms, int movestogo);

}  // namespace ultima
