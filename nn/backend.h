// What the batching evaluator needs from a network: one forward pass over a
// batch of encoded positions, answering only the policy slots of each
// position's legal moves. nn/network.h's Network (LibTorch, in the module)
// implements it; tests use small stand-ins. No LibTorch here.
#pragma once

#include <cstdint>
#include <string>

#include "nn/encoding.h"

namespace ultima::nn {

struct ForwardBatch {
  int size = 0;
  const float* planes = nullptr;              // size x input_planes() x 64: each position's first planes
  const std::int32_t* move_offsets = nullptr; // size + 1; position i's moves are [offsets[i], offsets[i+1])
  const std::int32_t* move_slots = nullptr;   // policy slots (policy_index.h) of the legal moves
};

struct ForwardOutput {
  float* policy_logits = nullptr;  // move_offsets[size] floats, the slots' logits in order
  float* wdl_logits = nullptr;     // size x 3: win, draw, loss for the side to move
  float* moves_left = nullptr;     // size floats (-1 when the net has no moves-left head)
};

class NetworkBackend {
 public:
  virtual ~NetworkBackend() = default;
  // Thread-safe. Throws std::runtime_error naming the problem.
  virtual void forward(const ForwardBatch& batch, const ForwardOutput& out) = 0;
  // "net 6x64 se16, cpu fp32" and the like.
  virtual std::string describe() const = 0;
  // How many of encoding.h's planes the network reads (the end of one of
  // its plane sets); the evaluator encodes that many per position.
  virtual int input_planes() const { return kInputPlanes; }
};

}  // namespace ultima::nn
