// Players by name: the random mover, the graded levels, and searchers with
// explicit settings. One spec string names a player everywhere (match,
// ladder, UCI Level option).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/mcts/evaluator.h"
#include "engine/play/level.h"
#include "engine/play/player.h"

namespace ultima {

// Makes a network evaluator from its settings ("weights=FILE,device=cuda",
// "" for random weights; keys in nn/README.md). The engine never reaches a
// network library itself: the program passes one backed by nn/, tests pass
// fakes, and an empty factory means "no networks here". Throws
// std::runtime_error naming the problem.
using NetworkFactory = std::function<std::shared_ptr<Evaluator>(const std::string& settings)>;

// `make` with one evaluator per settings text for the returned factory's
// life: players of many games at once that name the same network share it
// (a batching evaluator then serves their positions in common batches).
// Thread-safe.
NetworkFactory shared_networks(NetworkFactory make);

// Specs:
//   random                      uniformly random legal moves
//   LEVEL or level:LEVEL        a graded level from the levels folder
//                               (configs/levels/LEVEL.yaml)
//   BOT or bot:BOT              a bot of the catalogue (bot.h): its spec,
//                               playing under the bot's name
//   search:KEY=VALUE,...        alpha-beta with explicit settings, keys as in
//                               a level file (depth, nodes, movetime, noise,
//                               blunder, ...)
//   uci:[KEY=VALUE,...:]COMMAND another program speaking UCI (uci_player.h)
//   mcts[:KEY=VALUE,...]        MCTS; weights=FILE uses that network (made
//                               by `networks`; weights=random for random
//                               weights), run=DIR the best model of that
//                               run directory (run_best_model), else the
//                               network-free material evaluator; other keys
//                               are those of engine/mcts/settings.h
//                               (playouts, threads, gumbel, ...)
// Throws std::invalid_argument naming the problem for a bad spec, and
// std::runtime_error for a network spec without a factory.
std::unique_ptr<Player> make_player(const std::string& spec, const NetworkFactory& networks = {});

// The file of a run directory's best model: DIR/models/best holds its
// version N, the file is DIR/models/model-NNNNNN.unn (as nn/data/run_dir.h
// lays a run out). Throws std::invalid_argument naming the directory when
// it is missing, has no models/best, or the file named there is missing.
std::string run_best_model(const std::string& run_dir);

// Every kind of player spec, and every key of search: and mcts: specs with
// its default (what `ultima match --help` and the spec `mcts:help` print).
std::string player_spec_help();

// Where level files are looked for: $ULTIMA_LEVELS, else configs/levels
// beside the program's source tree, else ./configs/levels.
std::string levels_directory();
// The levels found there, weakest first; names alone; one by name.
std::vector<Level> load_levels();
std::vector<std::string> level_names();
Level find_level(const std::string& name);  // throws std::invalid_argument

class RandomPlayer : public Player {
 public:
  std::string name() const override { return "random"; }
  MoveChoice choose(Position& pos, std::uint64_t seed, const MoveLimits& limits = {}) override;
};

}  // namespace ultima
