// The project's networks on the CPU without LibTorch: inference with Eigen
// from the same model files, for bots, UCI and tools that want to start in
// milliseconds and play at small batches. Batch norm is folded into the
// convolutions at load; a 3x3 convolution is Winograd's F(2x2, 3x3), 16
// matrix products over the batch. Outputs match the LibTorch module's within float
// rounding (nn_tests compares them). fp32, one thread per forward pass;
// several passes may run at once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/backend.h"
#include "nn/model_file.h"

namespace ultima::nn {

class EigenNetwork final : public NetworkBackend {
 public:
  // From a model file (read_model_file's checks), or from a payload of the
  // given architecture. Throws ModelFileError / std::runtime_error naming a
  // missing, misshapen or unexpected tensor.
  static std::unique_ptr<EigenNetwork> load(const std::string& path);
  static std::unique_ptr<EigenNetwork> from_payload(const NetArchitecture& architecture,
                                                    const std::vector<char>& payload);
  ~EigenNetwork() override;

  void forward(const ForwardBatch& batch, const ForwardOutput& out) override;
  std::string describe() const override;
  int input_planes() const override { return architecture_.input_planes; }
  const NetArchitecture& architecture() const { return architecture_; }

  struct Weights;

 private:
  EigenNetwork(const NetArchitecture& architecture, std::unique_ptr<Weights> weights);
  NetArchitecture architecture_;
  std::unique_ptr<Weights> weights_;
};

}  // namespace ultima::nn
