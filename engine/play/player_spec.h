// Players by name: the random mover, the graded levels, and searchers with
// explicit settings. One spec string names a player everywhere (match,
// ladder, UCI Level option).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/play/level.h"
#include "engine/play/player.h"

namespace ultima {

// Specs:
//   random                      uniformly random legal moves
//   LEVEL or level:LEVEL        a graded level from the levels folder
//                               (configs/levels/LEVEL.yaml)
//   search:KEY=VALUE,...        alpha-beta with explicit settings, keys as in
//                               a level file (depth, nodes, movetime, noise,
//                               blunder, ...)
//   mcts[:KEY=VALUE,...]        MCTS; weights=FILE uses that network (through
//                               network_hook.h), else the network-free
//                               material evaluator; other keys are those of
//                               engine/mcts/settings.h (playouts, threads,
//                               gumbel, ...)
// Throws std::invalid_argument naming the problem for a bad spec.
std::unique_ptr<Player> make_player(const std::string& spec);

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
  MoveChoice choose(Position& pos, std::uint64_t seed) override;
};

}  // namespace ultima
