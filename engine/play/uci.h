// The UCI protocol, with Fairy-Stockfish's conventions for variants
// (UCI_Variant carries the rule preset). Garbage never stops the engine: it
// answers "info string error ..." and reads on.
#pragma once

#include <iosfwd>

#include "engine/play/player_spec.h"

namespace ultima {

// Reads commands from `in` until "quit" or end of input, answering on `out`.
// The MCTS backend's WeightsFile and network players of the Level option
// get their networks from `networks` (none when empty).
void run_uci(std::istream& in, std::ostream& out, const NetworkFactory& networks = {});

}  // namespace ultima
