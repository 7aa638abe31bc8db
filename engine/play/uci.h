// The UCI protocol, with Fairy-Stockfish's conventions for variants
// (UCI_Variant carries the rule preset). Garbage never stops the engine: it
// answers "info string error ..." and reads on.
#pragma once

#include <iosfwd>

namespace ultima {

// Reads commands from `in` until "quit" or end of input, answering on `out`.
void run_uci(std::istream& in, std::ostream& out);

}  // namespace ultima
