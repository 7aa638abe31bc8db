// The shape of the network: one of the three headers both sides of the
// module boundary share (with module_api.h, the C interface, and
// payload_format.h, the weights' records). The program's side defines the
// methods (model_file.cpp); the LibTorch module reads the fields only.
#pragma once

#include <string>

namespace ultima::nn {

// The shape of the residual network (nn/torch/net.h builds it).
struct NetArchitecture {
  int input_planes = 0;         // the end of a plane set (encoding.h's kPlaneSets); encoding 1's when left 0
  int policy_planes = 0;        // filled in from policy_index.h when left 0
  int blocks = 6;               // residual blocks
  int channels = 64;            // filters per convolution in the tower
  int se_channels = 16;         // squeeze-excitation width (0: no SE)
  int value_channels = 32;      // 1x1 convolution of the WDL head
  int value_hidden = 128;       // dense layer of the WDL head
  int moves_left_channels = 8;  // 1x1 convolution of the moves-left head (0: no head)
  int moves_left_hidden = 64;

  friend bool operator==(const NetArchitecture&, const NetArchitecture&) = default;
  // "6x64 se16" style short text.
  std::string text() const;
  // Throws std::invalid_argument naming the first out-of-range field.
  void validate() const;
  // This build's input planes and policy planes put in where left 0.
  NetArchitecture completed() const;
};

}  // namespace ultima::nn
