// How engine code (players, the UCI engine) gets a neural-network evaluator
// without depending on nn/: the program registers a factory at start-up
// (cli/main.cpp, backed by the dlopen()ed LibTorch module), and LibTorch is
// loaded only when something asks for a network.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "engine/mcts/evaluator.h"

namespace ultima {

// spec: the network settings, "weights=FILE[,device=cuda,...]" (nn/README.md).
using NetworkEvaluatorFactory = std::function<std::shared_ptr<Evaluator>(const std::string& spec)>;

void set_network_evaluator_factory(NetworkEvaluatorFactory factory);
// Throws std::runtime_error when no factory is registered (a program built
// without the network module), or what the factory throws.
std::shared_ptr<Evaluator> make_network_evaluator(const std::string& spec);

}  // namespace ultima
