// Internal to the network module: data-parallel training on c10d. A group
// (module_api.h's UltimaNnGroup) holds a Gloo process group for control
// messages and one for tensors on the trainer's device (NCCL on CUDA where
// the module was built with it, else Gloo); the trainer (trainer.cpp) uses
// the collectives below. Includes LibTorch.
#pragma once

#include <torch/nn/modules/batchnorm.h>
#include <torch/types.h>

#include <vector>

#include "nn/module_api.h"

namespace ultima::nn::dist {

int rank(const UltimaNnGroup& group);
int world_size(const UltimaNnGroup& group);

// Sums a tensor over ranks, as a differentiable operation: its backward
// pass sums the gradients over ranks in turn.
torch::Tensor sum_over_ranks(UltimaNnGroup& group, const torch::Tensor& x);

// Replaces each tensor by its mean over ranks; the tensors travel in flat
// buckets of at most `bucket_bytes`, all sent before any is awaited.
void average_over_ranks(UltimaNnGroup& group, const std::vector<torch::Tensor>& tensors,
                        std::size_t bucket_bytes = std::size_t(16) << 20);

// Rank 0's values of the tensors to every rank, in place.
void broadcast_from_first(UltimaNnGroup& group, const std::vector<torch::Tensor>& tensors);

// A batch norm layer in training mode over the batch that all ranks hold
// together: mean and variance of the whole batch, running statistics
// updated from them (identical on every rank). In eval mode, the layer's
// own forward. The output is fp32.
torch::Tensor synced_batch_norm(UltimaNnGroup& group, torch::nn::BatchNorm2dImpl& bn, const torch::Tensor& input);

void add_group_api(UltimaNnApi& api);

}  // namespace ultima::nn::dist
