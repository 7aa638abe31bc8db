// Options and helpers shared by the subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "engine/play/player_spec.h"
#include "engine/rules/position.h"
#include "engine/rules/rule_set.h"

namespace ultima::cli {

// --fen and --rules as the subcommands take them: "startpos" (the default)
// means the rule set's own start position.
struct PositionOptions {
  std::string fen = "startpos";
  std::string rules = kDefaultRules;
};

// Throws std::invalid_argument (FenError included) naming the problem.
Position make_position(const PositionOptions& options);

// The options several subcommands share, each declared here once.
// --rules: a rule preset, optionally with switches (kDefaultRules unless
// the command's default says otherwise).
CLI::Option* add_rules_option(CLI::App* cmd, std::string& rules,
                              const std::string& help = "rule preset, optionally with switches");
// --nnue: the alpha-beta search's evaluation, "default" (the shipped
// learned one), "none" (the hand-written one) or a network file; `what`
// names what it evaluates. check_nnue_option reads it before the command
// starts and throws std::invalid_argument "--nnue: ..." when it cannot.
CLI::Option* add_nnue_option(CLI::App* cmd, std::string& nnue, const std::string& what);
void check_nnue_option(const std::string& nnue);
// --hash: an alpha-beta transposition table's size in MB, 1 to 65536.
template <class Size>
CLI::Option* add_hash_option(CLI::App* cmd, Size& hash_mb, const std::string& help = "transposition table, MB") {
  return cmd->add_option("--hash", hash_mb, help)->check(CLI::Range(1, 65536))->capture_default_str();
}

// --seed: where the command's randomness (`what`, e.g. "the openings")
// starts; the same seed gives the same result.
template <class Seed>
CLI::Option* add_seed_option(CLI::App* cmd, Seed& seed, const std::string& what) {
  return cmd->add_option("--seed", seed, "seed of " + what)->capture_default_str();
}
// A seed for a game that was given none: drawn from the system's entropy,
// below 2^53 (so that JSON and the web page carry it exactly).
std::uint64_t draw_seed();
// --threads: search threads (alpha-beta's Lazy SMP or MCTS), 1 to 256.
template <class Count>
CLI::Option* add_threads_option(CLI::App* cmd, Count& threads, const std::string& help = "search threads") {
  return cmd->add_option("--threads", threads, help)->check(CLI::Range(1, 256))->capture_default_str();
}

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
