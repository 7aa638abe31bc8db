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
  // For k = 3: Winograd's F(2x2, 3x3) form, the weights transformed to 16
  // out x in matrices, one per point of a 4x4 tile (see winograd()).
  std::vector<Matrix> tile_weights;
};

// U = G g G^T for each (out, in) pair's 3x3 kernel g, with G the 4x3 matrix
// [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1].
void make_tile_weights(Conv& c) {
  c.tile_weights.assign(16, Matrix(c.out, c.in));
  for (int o = 0; o < c.out; ++o)
    for (int i = 0; i < c.in; ++i) {
      const float* g = c.w.row(o).data() + i * 9;
      float gt[4][3];  // G g
      for (int col = 0; col < 3; ++col) {
        const float a = g[col], b = g[3 + col], d = g[6 + col];
        gt[0][col] = a;
        gt[1][col] = 0.5f * (a + b + d);
        gt[2][col] = 0.5f * (a - b + d);
        gt[3][col] = d;
      }
      for (int r = 0; r < 4; ++r) {
        const float a = gt[r][0], b = gt[r][1], d = gt[r][2];
        const float u[4] = {a, 0.5f * (a + b + d), 0.5f * (a - b + d), d};
        for (int col = 0; col < 4; ++col) c.tile_weights[r * 4 + col](o, i) = u[col];
      }
    }
}

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
  if (bn.empty()) {
    if (k == 3) make_tile_weights(c);
    return c;
  }
  const std::vector<float> gamma = t.take(bn + ".weight", {out}), beta = t.take(bn + ".bias", {out}),
                           mean = t.take(bn + ".running_mean", {out}), var = t.take(bn + ".running_var", {out});
  t.skip(bn + ".num_batches_tracked");
  for (int o = 0; o < out; ++o) {
    const float scale = gamma[o] / std::sqrt(var[o] + kBatchNormEps);
    c.w.row(o) *= scale;
    c.b[o] = (c.b[o] - mean[o]) * scale + beta[o];
  }
  if (k == 3) make_tile_weights(c);
  return c;
}

Dense dense(Tensors& t, const std::string& name, int in, int out) {
  Dense d;
  const std::vector<float> w = t.take(name + ".weight", {out, in});
  d.w = Eigen::Map<const Matrix>(w.data(), out, in);
  d.b = Eigen::Map<const Vector>(t.take(name + ".bias", {out}).data(), out);
  return d;
}

// A 3x3 convolution by Winograd's F(2x2, 3x3): the board in 16 tiles of
// 2x2 outputs, each computed from a 4x4 input patch (zero off the board) as
// A^T [U (.) (B^T d B)] A, so the work is 16 products of out x in by in x
// tiles matrices: 2.25 times fewer multiplications than im2col's.
Matrix winograd(const Conv& c, const Matrix& x, int batch) {
  const int tiles = 16 * batch;
  std::vector<Matrix> v(16, Matrix(c.in, tiles));
  for (int ch = 0; ch < c.in; ++ch) {
    const float* source = x.row(ch).data();
    for (int b = 0; b < batch; ++b)
      for (int ty = 0; ty < 4; ++ty)
        for (int tx = 0; tx < 4; ++tx) {
          float d[4][4];
          for (int r = 0; r < 4; ++r) {
            const int h = 2 * ty - 1 + r;
            for (int col = 0; col < 4; ++col) {
              const int w = 2 * tx - 1 + col;
              d[r][col] = h < 0 || h > 7 || w < 0 || w > 7 ? 0.0f : source[b * 64 + h * 8 + w];
            }
          }
          // B^T d B with B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
          float t[4][4];
          for (int col = 0; col < 4; ++col) {
            t[0][col] = d[0][col] - d[2][col];
            t[1][col] = d[1][col] + d[2][col];
            t[2][col] = d[2][col] - d[1][col];
            t[3][col] = d[1][col] - d[3][col];
          }
          const int tile = b * 16 + ty * 4 + tx;
          for (int r = 0; r < 4; ++r) {
            v[r * 4 + 0](ch, tile) = t[r][0] - t[r][2];
            v[r * 4 + 1](ch, tile) = t[r][1] + t[r][2];
            v[r * 4 + 2](ch, tile) = t[r][2] - t[r][1];
            v[r * 4 + 3](ch, tile) = t[r][1] - t[r][3];
          }
        }
  }
  std::vector<Matrix> m(16);
  for (int p = 0; p < 16; ++p) m[p].noalias() = c.tile_weights[p] * v[p];
  Matrix y(c.out, 64 * batch);
  for (int o = 0; o < c.out; ++o) {
    float* out = y.row(o).data();
    for (int tile = 0; tile < tiles; ++tile) {
      float mm[4][4];
      for (int p = 0; p < 16; ++p) mm[p / 4][p % 4] = m[p](o, tile);
      // A^T mm A with A^T = [1 1 1 0; 0 1 -1 -1].
      float r[2][4];
      for (int col = 0; col < 4; ++col) {
        r[0][col] = mm[0][col] + mm[1][col] + mm[2][col];
        r[1][col] = mm[1][col] - mm[2][col] - mm[3][col];
      }
      const int b = tile / 16, ty = (tile % 16) / 4, tx = tile % 4;
      for (int dy = 0; dy < 2; ++dy) {
        float* row = out + b * 64 + (2 * ty + dy) * 8 + 2 * tx;
        row[0] = r[dy][0] + r[dy][1] + r[dy][2] + c.b[o];
        row[1] = r[dy][1] - r[dy][2] - r[dy][3] + c.b[o];
      }
    }
  }
  return y;
}

// Activations: channels x (64 * batch), column b * 64 + square.
Matrix apply(const Conv& c, const Matrix& x, int batch) {
  if (c.k == 3) return winograd(c, x, batch);
  Matrix y;
  y.noalias() = c.w * x;
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
