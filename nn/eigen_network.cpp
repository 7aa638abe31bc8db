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

// Activations: channels x (64 * batch), column square * batch + position,
// so that one square of every position in the batch is contiguous.

// A 3x3 convolution by Winograd's F(2x2, 3x3): the board in 16 tiles of
// 2x2 outputs, each computed from a 4x4 input patch (zero off the board) as
// A^T [U (.) (B^T d B)] A, so the work is 16 products of out x in by in x
// (16 * batch) matrices: 2.25 times fewer multiplications than a direct
// convolution's. The transforms run over the batch's positions at once.
Matrix winograd(const Conv& c, const Matrix& x, int batch) {
  const int tiles = 16 * batch;  // column tile * batch + position
  std::vector<Matrix> v(16, Matrix(c.in, tiles));
  const std::vector<float> zeros(static_cast<std::size_t>(batch), 0.0f);
  for (int ch = 0; ch < c.in; ++ch) {
    const float* source = x.row(ch).data();
    for (int ty = 0; ty < 4; ++ty)
      for (int tx = 0; tx < 4; ++tx) {
        const float* d[4][4];  // the patch's squares, each a run over the batch
        for (int r = 0; r < 4; ++r) {
          const int h = 2 * ty - 1 + r;
          for (int col = 0; col < 4; ++col) {
            const int w = 2 * tx - 1 + col;
            d[r][col] = h < 0 || h > 7 || w < 0 || w > 7 ? zeros.data() : source + (h * 8 + w) * batch;
          }
        }
        float* out[16];
        for (int p = 0; p < 16; ++p) out[p] = v[p].row(ch).data() + (ty * 4 + tx) * batch;
        for (int b = 0; b < batch; ++b) {
          // B^T d B with B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
          float t[4][4];
          for (int col = 0; col < 4; ++col) {
            t[0][col] = d[0][col][b] - d[2][col][b];
            t[1][col] = d[1][col][b] + d[2][col][b];
            t[2][col] = d[2][col][b] - d[1][col][b];
            t[3][col] = d[1][col][b] - d[3][col][b];
          }
          for (int r = 0; r < 4; ++r) {
            out[r * 4 + 0][b] = t[r][0] - t[r][2];
            out[r * 4 + 1][b] = t[r][1] + t[r][2];
            out[r * 4 + 2][b] = t[r][2] - t[r][1];
            out[r * 4 + 3][b] = t[r][1] - t[r][3];
          }
        }
      }
  }
  std::vector<Matrix> m(16);
  for (int p = 0; p < 16; ++p) m[p].noalias() = c.tile_weights[p] * v[p];
  Matrix y(c.out, 64 * batch);
  for (int o = 0; o < c.out; ++o) {
    float* row = y.row(o).data();
    const float bias = c.b[o];
    for (int ty = 0; ty < 4; ++ty)
      for (int tx = 0; tx < 4; ++tx) {
        const float* mm[16];
        for (int p = 0; p < 16; ++p) mm[p] = m[p].row(o).data() + (ty * 4 + tx) * batch;
        float* y00 = row + ((2 * ty) * 8 + 2 * tx) * batch;
        float* y01 = y00 + batch;
        float* y10 = y00 + 8 * batch;
        float* y11 = y10 + batch;
        for (int b = 0; b < batch; ++b) {
          // A^T mm A with A^T = [1 1 1 0; 0 1 -1 -1].
          float r0[4], r1[4];
          for (int col = 0; col < 4; ++col) {
            r0[col] = mm[col][b] + mm[4 + col][b] + mm[8 + col][b];
            r1[col] = mm[4 + col][b] - mm[8 + col][b] - mm[12 + col][b];
          }
          y00[b] = r0[0] + r0[1] + r0[2] + bias;
          y01[b] = r0[1] - r0[2] - r0[3] + bias;
          y10[b] = r1[0] + r1[1] + r1[2] + bias;
          y11[b] = r1[1] - r1[2] - r1[3] + bias;
        }
      }
  }
  return y;
}

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
  for (Eigen::Index c = 0; c < x.rows(); ++c)
    for (int sq = 0; sq < 64; ++sq)
      for (int b = 0; b < batch; ++b) out(c * 64 + sq, b) = x(c, sq * batch + b);
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
    for (int p = 0; p < planes; ++p) {
      const float* from = batch.planes + (static_cast<std::size_t>(b) * planes + p) * 64;
      float* row = x.row(p).data();
      for (int sq = 0; sq < 64; ++sq) row[sq * n + b] = from[sq];
    }
  x = relu(apply(w.input, x, n));
  for (const Weights::Block& block : w.tower) {
    Matrix y = relu(apply(block.conv1, x, n));
    y = apply(block.conv2, y, n);
    if (block.se) {
      const Eigen::Index c = y.rows();
      Matrix pooled = Matrix::Zero(c, n);
      for (int sq = 0; sq < 64; ++sq) pooled += y.middleCols(sq * n, n);
      pooled /= 64.0f;
      const Matrix s = dense_forward(block.excite, relu(dense_forward(block.squeeze, pooled)));
      const Matrix scale = (1.0f / (1.0f + (-s.topRows(c).array()).exp())).matrix();
      const Matrix shift = s.bottomRows(c);
      for (int sq = 0; sq < 64; ++sq) {
        auto part = y.middleCols(sq * n, n);
        part = (part.array() * scale.array() + shift.array()).matrix();
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
      out.policy_logits[m] = logits(slot / 64, (slot % 64) * n + b);
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
