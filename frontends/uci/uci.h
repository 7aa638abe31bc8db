// The UCI protocol, with Fairy-Stockfish's conventions for variants
// (UCI_Variant carries the rule preset). Garbage never stops the engine: it
// answers "info string error ..." and reads on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>

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

// Every UCI option, one declaration each: its type, default, range or
// choices, and a line of help (what `ultima uci --options` prints).
std::string uci_option_help();

}  // namespace ultima
