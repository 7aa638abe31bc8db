// The contract between tree search and whatever judges positions (a neural
// network in nn/, a heuristic in tests): policy priors over the legal moves
// and a win/draw/loss value. Search never knows which device or library
// answers. No LibTorch here.
#pragma once

#include <span>
#include <vector>

#include "engine/rules/movegen.h"
#include "engine/rules/position.h"

namespace ultima {

struct EvalInput {
  const Position* position = nullptr;  // with its history (repetitions)
  const MoveList* moves = nullptr;     // the legal moves, in this order
};

struct EvalOutput {
  // Prior probability per move of EvalInput::moves, same order, summing to 1.
  std::vector<float> policy;
  // From the side to move's point of view; they sum to 1.
  float win = 0, draw = 1, loss = 0;
  // Plies left to the end of the game, when the evaluator predicts it (else -1).
  float moves_left = -1;
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Evaluates every input; outputs[i] answers inputs[i]. May be called from
  // several threads at once: implementations are thread-safe (a batching
  // evaluator gathers concurrent calls into one forward pass).
  virtual void evaluate(std::span<const EvalInput> inputs, std::span<EvalOutput> outputs) = 0;
  // A short description for logs ("material", "net 6x64 cpu", ...).
  virtual std::string name() const = 0;
};

}  // namespace ultima
