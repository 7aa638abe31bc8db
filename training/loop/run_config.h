// The config of a self-play/training run (configs/*.yaml): one YAML file
// with the sections rules/seed, network, inference, selfplay, warm_start,
// tactics, training, evaluation and loop. Every key is documented in
// configs/README.md; an unknown key, a value of the wrong type or out of range is an error that
// names the file and the key. The resolved config (every key, defaults
// filled in) is written to the run directory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/mcts/mcts.h"
#include "engine/play/match.h"
#include "engine/rules/rule_set.h"
#include "nn/config.h"
#include "nn/model_file.h"
#include "selfplay/selfplay.h"
#include "training/train.h"

namespace YAML {
class Node;
}

namespace ultima::loop {

struct InferenceConfig {
  std::string device = "cpu";
  std::string precision = "auto";
  int threads = 1;
  int max_batch = 64;
  int max_wait_us = 500;
  std::size_t cache_entries = 65536;
};

struct TrainStageConfig {
  // Steps per generation: new samples * train_ratio / batch_size, within
  // [min_steps, max_steps].
  double train_ratio = 4.0;
  std::uint64_t min_steps = 50;
  std::uint64_t max_steps = 2000;
  std::string device = "cpu";
  int threads = 1;
};

// The evaluation games' search settings: the registry's defaults with the
// loop's own overrides, stated here once (and printed by --print-config):
// a Gumbel root as in self-play (gumbel true, gumbel_rescale_q false,
// gumbel_c_scale 1) whose noise (gumbel_noise 1) samples the root's
// candidates so that a deterministic pair cannot repeat one draw game after
// game (0 plays the strongest move); no root mate-in-two check
// (mate_scan_root false), as in self-play; the network's priors as they
// are (policy_temperature 1), as in self-play; no progress reports.
MctsConfig eval_mcts_defaults();

// The MCTS registry's keys that the selfplay and evaluation sections take
// (the rest the loop sets itself: threads, seed, budgets, reports).
const std::vector<std::string>& run_mcts_keys();

struct EvalConfig {
  std::uint64_t playouts = 64;  // MCTS playouts per move for every network player
  // The network players' search: the registry's keys (engine/mcts/settings.h)
  // from eval_mcts_defaults().
  MctsConfig mcts = eval_mcts_defaults();
  std::string promotion = "continuous";  // gating or continuous
  int games_vs_best = 0;
  double gate_score = 0.55;          // gating: promoted when it scores at least this
  // The ladder the candidate is rated on: levels with a measured Elo.
  std::vector<std::string> levels = {"novice", "beginner", "casual", "intermediate", "advanced", "expert", "club",
                                     "master", "grandmaster"};
  // Of them, each generation plays the ones nearest the run's current Elo
  // (bracketing it); 0: every level of the list each generation.
  int levels_per_generation = 2;
  int games_per_level = 32;
  int games_vs_initial = 20;         // against model 0, the untrained net (0: none) ...
  double initial_until_score = 0.95;  // ... until a generation has scored at least this against it
  int concurrency = 2;
  int max_plies = kLadderMaxPlies;
  int opening_min_plies = 2;
  int opening_max_plies = 6;
};

// The loop's optional first stage: its first `generations` generations
// play teacher games (selfplay.h's TeacherConfig: the alpha-beta searcher's
// games, labelled by its search) instead of self-play; training and
// evaluation go on as in any generation, and self-play with the network
// takes over after them.
struct WarmStartConfig {
  int generations = 0;           // 0: no warm start
  int games_per_generation = 0;  // 0: the self-play section's games_per_generation
  int later_games = 0;           // teacher games added to every later generation (0: none)
  selfplay::TeacherConfig teacher;
};

// Tactics samples (selfplay.h's TacticsConfig): every generation adds
// `positions` proven mates from random play to its samples.
struct TacticsStageConfig {
  int positions = 0;  // 0: none
  selfplay::TacticsConfig mates;
};

struct LoopLimits {
  int generations = 10;
  double max_minutes = 0;  // 0: no time limit; else no generation starts after it
};

struct RunConfig {
  std::string source = "(built-in)";
  std::string name = "run";
  Rules rules;
  std::uint64_t seed = 1;
  nn::NetArchitecture network;
  InferenceConfig inference;
  selfplay::SelfPlayConfig selfplay;
  int games_per_generation = 64;
  WarmStartConfig warm_start;
  TacticsStageConfig tactics;
  training::TrainConfig training;
  TrainStageConfig train_stage;
  EvalConfig eval;
  LoopLimits loop;

  // Throws std::invalid_argument naming the source and the key.
  static RunConfig parse(const std::string& yaml_text, const std::string& source);
  // A config file; one whose top level has `base: FILE` (a path relative to
  // its own folder) is an overlay: the base's keys with this file's laid
  // over them, section by section. Bases may have bases of their own.
  static RunConfig load(const std::string& path);
  // Every key with its value, in the file's layout.
  std::string to_yaml() const;
  // The keys ("section.key") whose values differ between the two configs.
  std::vector<std::string> differing_keys(const RunConfig& other) const;
  // The network settings for self-play / evaluation with these weights.
  nn::NnConfig nn_config(const std::string& weights) const;

 private:
  static RunConfig from_yaml(const YAML::Node& root, const std::string& source);
};

// The config compiled into the program (configs/cpu.yaml at build time).
const char* builtin_config_text();

}  // namespace ultima::loop
