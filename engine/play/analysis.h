// The analysis engine: JSON lines in, JSON lines out, for tools that want
// many positions evaluated at once (in the manner of KataGo's analysis
// engine). Each query names a game (rules, start position, moves), the turns
// to analyse and a budget; the turns of all queries are searched several at
// a time, the MCTS ones sharing one evaluator per network, and answered as
// they finish, so answers may come out of order. The formats are in
// docs/analysis.md.
#pragma once

#include <iosfwd>
#include <string>

#include "engine/play/player_spec.h"

namespace ultima {

struct AnalysisOptions {
  int parallel = 4;           // turns searched at once
  int hash_mb = 16;           // transposition table of each alpha-beta search
  std::string version = "?";  // what query_version answers
};

// Reads queries, one JSON object per line, until the end of `in`, answering
// on `out`, one JSON object per line. At the end of the input every query
// still queued or running is finished and answered before it returns. A bad
// query gets an error answer and the engine reads on. Networks (queries with
// "weights") come from `networks`, each file loaded once and shared.
void run_analysis(std::istream& in, std::ostream& out, const NetworkFactory& networks = {},
                  const AnalysisOptions& options = {});

}  // namespace ultima
