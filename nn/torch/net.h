// The policy/value network in LibTorch: a residual tower with
// squeeze-excitation, a convolutional policy head (57 x 8 x 8 logits, the
// slots of policy_index.h), a WDL value head and a moves-left head. LibTorch
// headers stay in nn/torch/ (they define CHECK and LOG macros); nothing
// outside it includes this file.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <functional>
#include <string>
#include <vector>

#include "nn/architecture.h"

namespace ultima::nn {

// How the net applies a batch norm layer: by default the layer's own
// forward; a data-parallel trainer puts in one that takes the batch
// statistics of every rank (nn/torch/distributed.h).
using BatchNormFunction = std::function<torch::Tensor(torch::nn::BatchNorm2dImpl&, const torch::Tensor&)>;

// conv3x3 - BN - ReLU - conv3x3 - BN - SE - add the input - ReLU.
class ResidualBlockImpl : public torch::nn::Module {
 public:
  ResidualBlockImpl(int channels, int se_channels);
  torch::Tensor forward(const torch::Tensor& x);
  void set_batch_norm(BatchNormFunction norm) { norm_ = std::move(norm); }

 private:
  torch::Tensor norm(torch::nn::BatchNorm2d& bn, const torch::Tensor& x) { return norm_ ? norm_(*bn, x) : bn(x); }
  BatchNormFunction norm_;
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr};
  // Squeeze-excitation: global average pool -> dense -> ReLU -> dense to a
  // scale (sigmoid) and a bias per channel, so each block sees the whole board.
  torch::nn::Linear se_squeeze_{nullptr}, se_excite_{nullptr};
  int channels_;
};
TORCH_MODULE(ResidualBlock);

struct NetOutput {
  torch::Tensor policy;      // [B, 3648] logits, slot order of policy_index.h
  torch::Tensor wdl;         // [B, 3] logits: win, draw, loss for the side to move
  torch::Tensor moves_left;  // [B] plies left (undefined without the head)
};

class UltimaNetImpl : public torch::nn::Module {
 public:
  explicit UltimaNetImpl(const NetArchitecture& architecture);
  // planes: [B, input_planes, 8, 8].
  NetOutput forward(const torch::Tensor& planes);
  const NetArchitecture& architecture() const { return architecture_; }
  // Every batch norm layer through `norm` from now on (empty: their own).
  void set_batch_norm(const BatchNormFunction& norm);

 private:
  torch::Tensor norm(torch::nn::BatchNorm2d& bn, const torch::Tensor& x) { return norm_ ? norm_(*bn, x) : bn(x); }
  NetArchitecture architecture_;
  BatchNormFunction norm_;
  torch::nn::Conv2d input_conv_{nullptr};
  torch::nn::BatchNorm2d input_bn_{nullptr};
  torch::nn::ModuleList tower_{nullptr};
  torch::nn::Conv2d policy_conv_{nullptr}, policy_out_{nullptr};
  torch::nn::BatchNorm2d policy_bn_{nullptr};
  torch::nn::Conv2d value_conv_{nullptr};
  torch::nn::BatchNorm2d value_bn_{nullptr};
  torch::nn::Linear value_fc_{nullptr}, value_out_{nullptr};
  torch::nn::Conv2d moves_left_conv_{nullptr};
  torch::nn::BatchNorm2d moves_left_bn_{nullptr};
  torch::nn::Linear moves_left_fc_{nullptr}, moves_left_out_{nullptr};
};
TORCH_MODULE(UltimaNet);

// The weights as a model file payload: every parameter and buffer, in the
// module's order, as raw little-endian tensors (format in nn/README.md).
// fp32 whatever the net's device and dtype, so files move between LibTorch
// versions and devices.
std::vector<char> save_payload(UltimaNetImpl& net);
// Fills the net from a payload; throws std::runtime_error naming a missing,
// unexpected or misshapen tensor, or a truncated payload.
void load_payload(UltimaNetImpl& net, const char* data, std::size_t size);

}  // namespace ultima::nn
