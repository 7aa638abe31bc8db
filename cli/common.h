// Options and helpers shared by the subcommands.
#pragma once

#include <string>

#include "engine/play/player_spec.h"
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

// Removes a run directory that this command made, when the command ends
// with an error: a refused command leaves no half-made run directory behind
// (one that existed before is never touched).
class NewDirectoryGuard {
 public:
  explicit NewDirectoryGuard(std::string dir);
  ~NewDirectoryGuard();
  NewDirectoryGuard(const NewDirectoryGuard&) = delete;
  NewDirectoryGuard& operator=(const NewDirectoryGuard&) = delete;

 private:
  std::string dir_;
  bool existed_;
  int exceptions_;
};

// Networks for players and UCI: the LibTorch module (nn/network.h), loaded
// the first time one is asked for. Each call gives a new evaluator.
NetworkFactory network_factory();
// The same, but one evaluator per settings text for the factory's life: the
// games of a match that use one network share its batching evaluator, so
// their positions go through it in common batches.
NetworkFactory shared_network_factory();

}  // namespace ultima::cli
