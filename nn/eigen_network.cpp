#include "nn/eigen_network.h"

#include <Eigen/Dense>

#include <algorithm>

#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>

#include "nn/payload_format.h"

namespace ultima::nn {
namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXf;

constexpr float kBatchNormEps = 1e-5f;  // LibTorch's BatchNorm2d default, as the module's net uses

// A convolution (k = 3 or 1, padding k / 2) with its batch norm folded in:
// weights out x (in * k * k) in LibTorch's [out, in, kh, kw] order.
struct Conv {
  Matrix w;
  Vector b;
  int in = 0, out = 0, k = 1;
};

struct Dense {
  Matrix w;  // out x in
  Vector b;
};

// The payload's tensors by name, each taken once.
class Tensors {
 public:
  Tensors(const std::vector<char>& payload) : data_(payload) {
    for (payload::Record& r : payload::read_records(payload.data(), payload.size())) {
      const std::string name(r.name);
      if (!records_.emplace(name, std::move(r)).second) throw std::runtime_error("tensor '" + name + "' appears twice");
    }
  }
  // The floats of tensor `name`, which must have `shape`.
  std::vector<float> take(const std::string& name, const std::vector<std::int64_t>& shape) {
    const auto it = records_.find(name);
    if (it == records_.end()) throw std::runtime_error("the weights lack tensor '" + name + "' (another architecture?)");
    const payload::Record& r = it->second;
    if (r.sizes != shape) {
      std::string want, have;
      for (const auto s : shape) want += (want.empty() ? "" : ", ") + std::to_string(s);
      for (const auto s : r.sizes) have += (have.empty() ? "" : ", ") + std::to_string(s);
      throw std::runtime_error("tensor '" + name + "' has shape [" + have + "], the architecture needs [" + want + "]");
    }
    if (r.type != payload::kFloat32) throw std::runtime_error("tensor '" + name + "' is not fp32");
    std::vector<float> out(r.data_bytes / sizeof(float));
    std::memcpy(out.data(), data_.data() + r.data_at, r.data_bytes);
    records_.erase(it);
    return out;
  }
  // A batch norm's step counter is not needed for inference.
  void skip(const std::string& name) { records_.erase(name); }
  void check_all_taken() const {
    if (!records_.empty())
      throw std::runtime_error("the weights hold tensor '" + records_.begin()->first +
                               "', which this architecture lacks (another architecture?)");
  }

 private:
  const std::vector<char>& data_;
  std::map<std::string, payload::Record> records_;
};

Conv folded_conv(Tensors& t, const std::string& conv, const std::string& bn, int in, int out, int k,
                 bool conv_bias = false) {
  Conv c;
  c.in = in;
  c.out = out;
  c.k = k;
  const std::vector<float> w = t.take(conv + ".weight", {out, in, k, k});
  c.w = Eigen::Map<const Matrix>(w.data(), out, in * k * k);
  c.b = conv_bias ? Vector(Eigen::Map<const Vector>(t.take(conv + ".bias", {out}).data(), out)) : Vector::Zero(out);
  if (bn.empty()) return c;
  const std::vector<float> gamma = t.take(bn + ".weight", {out}), beta = t.take(bn + ".bias", {out}),
                           mean = t.take(bn + ".running_mean", {out}), var = t.take(bn + ".running_var", {out});
  t.skip(bn + ".num_batches_tracked");
  for (int o = 0; o < out; ++o) {
    const float scale = gamma[o] / std::sqrt(var[o] + kBatchNormEps);
    c.w.row(o) *= scale;
    c.b[o] = (c.b[o] - mean[o]) * scale + beta[o];
  }
  return c;
}

Dense dense(Tensors& t, const std::string& name, int in, int out) {
  Dense d;
  const std::vector<float> w = t.take(name + ".weight", {out, in});
  d.w = Eigen::Map<const Matrix>(w.data(), out, in);
  d.b = Eigen::Map<const Vector>(t.take(name + ".bias", {out}).data(), out);
  return d;
}

// Activations: channels x (64 * batch), column b * 64 + square.
Matrix apply(const Conv& c, const Matrix& x, int batch) {
  Matrix y;
  if (c.k == 1) {
    y.noalias() = c.w * x;
  } else {
    // im2col: row (channel * 9 + kh * 3 + kw), the input square shifted by
    // (kh - 1, kw - 1), zero off the board.
    Matrix columns = Matrix::Zero(static_cast<Eigen::Index>(c.in) * 9, 64 * batch);
    for (int ch = 0; ch < c.in; ++ch) {
      const float* source = x.row(ch).data();
      for (int kh = 0; kh < 3; ++kh)
        for (int kw = 0; kw < 3; ++kw) {
          float* row = columns.row(ch * 9 + kh * 3 + kw).data();
          // Squares w whose source w + kw - 1 is on the board: one run per rank.
          const int first = kw == 0 ? 1 : 0, last = kw == 2 ? 7 : 8, shift = kw - 1;
          for (int b = 0; b < batch; ++b)
            for (int h = std::max(0, 1 - kh); h < std::min(8, 9 - kh); ++h) {
              const float* from = source + b * 64 + (h + kh - 1) * 8 + first + shift;
              std::copy(from, from + (last - first), row + b * 64 + h * 8 + first);
            }
        }
    }
    y.noalias() = c.w * columns;
  }
  y.colwise() += c.b;
  return y;
}

Matrix relu(Matrix x) { return x.cwiseMax(0.0f); }

// Per position, the c x 64 activations as one column of c * 64 (LibTorch's
// flatten(1) of [B, C, 8, 8]).
Matrix flatten(const Matrix& x, int batch) {
  Matrix out(x.rows() * 64, batch);
  for (int b = 0; b < batch; ++b)
    for (Eigen::Index c = 0; c < x.rows(); ++c) out.block(c * 64, b, 64, 1) = x.block(c, b * 64, 1, 64).transpose();
  return out;
}

Matrix dense_forward(const Dense& d, const Matrix& x) {
  Matrix y;
  y.noalias() = d.w * x;
  y.colwise() += d.b;
  return y;
}

}  // namespace

struct EigenNetwork::Weights {
  Conv input;
  struct Block {
    Conv conv1, conv2;
    bool se = false;
    Dense squeeze, excite;
  };
  std::vector<Block> tower;
  Conv policy_conv, policy_out, value_conv, moves_left_conv;
  Dense value_fc, value_out, moves_left_fc, moves_left_out;
  bool moves_left = false;
};

std::unique_ptr<EigenNetwork> EigenNetwork::load(const std::string& path) {
  const ModelFile file = read_model_file(path);
  try {
    return from_payload(file.header.architecture, file.payload);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

std::unique_ptr<EigenNetwork> EigenNetwork::from_payload(const NetArchitecture& architecture,
                                                         const std::vector<char>& payload) {
  const NetArchitecture a = architecture.completed();
  a.validate();
  Tensors t(payload);
  auto w = std::make_unique<Weights>();
  const int c = a.channels;
  w->input = folded_conv(t, "input_conv", "input_bn", a.input_planes, c, 3);
  for (int i = 0; i < a.blocks; ++i) {
    const std::string p = "tower." + std::to_string(i) + ".";
    Weights::Block b;
    b.conv1 = folded_conv(t, p + "conv1", p + "bn1", c, c, 3);
    b.conv2 = folded_conv(t, p + "conv2", p + "bn2", c, c, 3);
    b.se = a.se_channels > 0;
    if (b.se) {
      b.squeeze = dense(t, p + "se_squeeze", c, a.se_channels);
      b.excite = dense(t, p + "se_excite", a.se_channels, 2 * c);
    }
    w->tower.push_back(std::move(b));
  }
  w->policy_conv = folded_conv(t, "policy_conv", "policy_bn", c, c, 3);
  w->policy_out = folded_conv(t, "policy_out", "", c, a.policy_planes, 1, /*conv_bias=*/true);
  w->value_conv = folded_conv(t, "value_conv", "value_bn", c, a.value_channels, 1);
  w->value_fc = dense(t, "value_fc", a.value_channels * 64, a.value_hidden);
  w->value_out = dense(t, "value_out", a.value_hidden, 3);
  w->moves_left = a.moves_left_channels > 0;
  if (w->moves_left) {
    w->moves_left_conv = folded_conv(t, "moves_left_conv", "moves_left_bn", c, a.moves_left_channels, 1);
    w->moves_left_fc = dense(t, "moves_left_fc", a.moves_left_channels * 64, a.moves_left_hidden);
    w->moves_left_out = dense(t, "moves_left_out", a.moves_left_hidden, 1);
  }
  t.check_all_taken();
  return std::unique_ptr<EigenNetwork>(new EigenNetwork(a, std::move(w)));
}

EigenNetwork::EigenNetwork(const NetArchitecture& architecture, std::unique_ptr<Weights> weights)
    : architecture_(architecture), weights_(std::move(weights)) {}

EigenNetwork::~EigenNetwork() = default;

std::string EigenNetwork::describe() const { return "net " + architecture_.text() + ", cpu fp32 (Eigen)"; }

void EigenNetwork::forward(const ForwardBatch& batch, const ForwardOutput& out) {
  const int n = batch.size;
  if (n <= 0) return;
  if (!batch.planes || !batch.move_offsets || !out.policy_logits || !out.wdl_logits || !out.moves_left)
    throw std::invalid_argument("a forward batch lacks an array");
  const Weights& w = *weights_;
  const int planes = architecture_.input_planes;
  Matrix x(planes, 64 * n);
  for (int b = 0; b < n; ++b)
    for (int p = 0; p < planes; ++p)
      x.block(p, b * 64, 1, 64) =
          Eigen::Map<const Eigen::RowVectorXf>(batch.planes + (static_cast<std::size_t>(b) * planes + p) * 64, 64);
  x = relu(apply(w.input, x, n));
  for (const Weights::Block& block : w.tower) {
    Matrix y = relu(apply(block.conv1, x, n));
    y = apply(block.conv2, y, n);
    if (block.se) {
      const Eigen::Index c = y.rows();
      Matrix pooled(c, n);
      for (int b = 0; b < n; ++b) pooled.col(b) = y.block(0, b * 64, c, 64).rowwise().mean();
      const Matrix s = dense_forward(block.excite, relu(dense_forward(block.squeeze, pooled)));
      for (int b = 0; b < n; ++b) {
        const Vector scale = (1.0f / (1.0f + (-s.block(0, b, c, 1).array()).exp())).matrix();
        const Vector shift = s.block(c, b, c, 1);
        auto part = y.block(0, b * 64, c, 64);
        part = (part.array().colwise() * scale.array()).colwise() + shift.array();
      }
    }
    x = relu(y + x);
  }
  // Policy: only the legal moves' slots (plane * 64 + square).
  const Matrix logits = apply(w.policy_out, relu(apply(w.policy_conv, x, n)), n);
  for (int b = 0; b < n; ++b)
    for (std::int32_t m = batch.move_offsets[b]; m < batch.move_offsets[b + 1]; ++m) {
      const std::int32_t slot = batch.move_slots[m];
      if (slot < 0 || slot >= logits.rows() * 64)
        throw std::invalid_argument("policy slot " + std::to_string(slot) + " is out of range");
      out.policy_logits[m] = logits(slot / 64, b * 64 + slot % 64);
    }
  const Matrix value = dense_forward(
      w.value_out, relu(dense_forward(w.value_fc, flatten(relu(apply(w.value_conv, x, n)), n))));
  for (int b = 0; b < n; ++b)
    for (int k = 0; k < 3; ++k) out.wdl_logits[3 * b + k] = value(k, b);
  if (w.moves_left) {
    const Matrix m = dense_forward(
        w.moves_left_out,
        relu(dense_forward(w.moves_left_fc, flatten(relu(apply(w.moves_left_conv, x, n)), n))));
    for (int b = 0; b < n; ++b) out.moves_left[b] = std::max(m(0, b), 0.0f);
  } else {
    for (int b = 0; b < n; ++b) out.moves_left[b] = -1.0f;
  }
}

}  // namespace ultima::nn
