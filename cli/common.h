// Options and helpers shared by the subcommands.
#pragma once

#include <string>

#include "engine/rules/position.h"
#include "engine/rules/rule_set.h"

namespace ultima::cli {

// --fen and --rules as the subcommands take them: "startpos" (the default)
// means the rule set's own start position.
struct PositionOptions {
  std::string fen = "startpos";
  std::string rules = "abbott1963";
};

// Throws std::invalid_argument (FenError included) naming the problem.
Position make_position(const PositionOptions& options);

}  // namespace ultima::cli
