// The learned evaluation's trainer: the float network, its gradient by
// hand (the first layer sparse, the rest small and dense), Adam, and the
// rounding to the integer layers the search reads.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

#include "training/nnue/nnue_train.h"

namespace ultima::nnue {
namespace {

constexpr int kIn2 = 2 * kHalf;
// What the integer layers can hold, in float units: the first layer's sums
// must stay inside int16 for every board (about 40 active rows).
constexpr float kMaxW1 = 2.0f;
constexpr float kMaxHidden = 32.0f;
constexpr float kMaxOut = 32767.0f / kQO;

inline float sigmoid(double x) { return static_cast<float>(1.0 / (1.0 + std::exp(-x))); }
inline float clip01(float x) { return std::min(1.0f, std::max(0.0f, x)); }

// One position's forward pass, kept for the backward pass.
struct Pass {
  std::vector<int> features[2];  // [perspective]
  float acc[2][kHalf];
  float a[kIn2];       // clipped, side to move first
  float z2[kL2], h2[kL2];
  float z3[kL3], h3[kL3];
  float y = 0;
  Color side = kWhite;
};

void forward(const FloatNetwork& net, const BoardState& board, Color side, Pass& p) {
  p.side = side;
  for (int c = 0; c < 2; ++c) {
    p.features[c] = active_features(net.features, board, Color(c));
    float* acc = p.acc[c];
    std::copy(net.b1.begin(), net.b1.end(), acc);
    for (int f : p.features[c]) {
      const float* row = &net.w1[static_cast<std::size_t>(f) * kHalf];
      for (int i = 0; i < kHalf; ++i) acc[i] += row[i];
    }
  }
  for (int i = 0; i < kHalf; ++i) {
    p.a[i] = clip01(p.acc[side][i]);
    p.a[kHalf + i] = clip01(p.acc[~side][i]);
  }
  for (int j = 0; j < kL2; ++j) {
    const float* row = &net.w2[static_cast<std::size_t>(j) * kIn2];
    float s = net.b2[j];
    for (int i = 0; i < kIn2; ++i) s += row[i] * p.a[i];
    p.z2[j] = s;
    p.h2[j] = clip01(s);
  }
  for (int j = 0; j < kL3; ++j) {
    const float* row = &net.w3[static_cast<std::size_t>(j) * kL2];
    float s = net.b3[j];
    for (int i = 0; i < kL2; ++i) s += row[i] * p.h2[i];
    p.z3[j] = s;
    p.h3[j] = clip01(s);
  }
  float y = net.bo;
  for (int i = 0; i < kL3; ++i) y += net.wo[i] * p.h3[i];
  p.y = y;
}

inline bool inside(float z) { return z > 0.0f && z < 1.0f; }

// Adds dloss/dy's consequences to the gradient.
void backward(const FloatNetwork& net, const Pass& p, float dy, FloatNetwork& g) {
  float d3[kL3], d2[kL2], da[kIn2];
  g.bo += dy;
  for (int i = 0; i < kL3; ++i) {
    g.wo[i] += dy * p.h3[i];
    d3[i] = inside(p.z3[i]) ? dy * net.wo[i] : 0.0f;
  }
  std::fill(std::begin(d2), std::end(d2), 0.0f);
  for (int j = 0; j < kL3; ++j) {
    if (d3[j] == 0.0f) continue;
    const float* row = &net.w3[static_cast<std::size_t>(j) * kL2];
    float* grow = &g.w3[static_cast<std::size_t>(j) * kL2];
    g.b3[j] += d3[j];
    for (int i = 0; i < kL2; ++i) {
      grow[i] += d3[j] * p.h2[i];
      d2[i] += d3[j] * row[i];
    }
  }
  for (int i = 0; i < kL2; ++i)
    if (!inside(p.z2[i])) d2[i] = 0.0f;
  std::fill(std::begin(da), std::end(da), 0.0f);
  for (int j = 0; j < kL2; ++j) {
    if (d2[j] == 0.0f) continue;
    const float* row = &net.w2[static_cast<std::size_t>(j) * kIn2];
    float* grow = &g.w2[static_cast<std::size_t>(j) * kIn2];
    g.b2[j] += d2[j];
    for (int i = 0; i < kIn2; ++i) {
      grow[i] += d2[j] * p.a[i];
      da[i] += d2[j] * row[i];
    }
  }
  // The first layer: side to move's half, then the other's.
  for (int half = 0; half < 2; ++half) {
    const Color c = half == 0 ? p.side : ~p.side;
    float d1[kHalf];
    for (int i = 0; i < kHalf; ++i) d1[i] = inside(p.acc[c][i]) ? da[half * kHalf + i] : 0.0f;
    for (int i = 0; i < kHalf; ++i) g.b1[i] += d1[i];
    for (int f : p.features[c]) {
      float* grow = &g.w1[static_cast<std::size_t>(f) * kHalf];
      for (int i = 0; i < kHalf; ++i) grow[i] += d1[i];
    }
  }
}

// Adam over every parameter vector, with a clip to what the integer
// layers hold.
class Adam {
 public:
  explicit Adam(const FloatNetwork& like) : m_(zeros(like)), v_(zeros(like)) {}

  void step(FloatNetwork& net, const FloatNetwork& g, double lr, float scale) {
    ++t_;
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
    const double c1 = 1 - std::pow(b1, t_), c2 = 1 - std::pow(b2, t_);
    const auto update = [&](std::vector<float>& w, const std::vector<float>& gw, std::vector<float>& m,
                            std::vector<float>& v, float limit) {
      for (std::size_t i = 0; i < w.size(); ++i) {
        const float grad = gw[i] * scale;
        m[i] = static_cast<float>(b1 * m[i] + (1 - b1) * grad);
        v[i] = static_cast<float>(b2 * v[i] + (1 - b2) * grad * grad);
        const double step = lr * (m[i] / c1) / (std::sqrt(v[i] / c2) + eps);
        w[i] = std::clamp(static_cast<float>(w[i] - step), -limit, limit);
      }
    };
    update(net.w1, g.w1, m_.w1, v_.w1, kMaxW1);
    update(net.b1, g.b1, m_.b1, v_.b1, kMaxW1);
    update(net.w2, g.w2, m_.w2, v_.w2, kMaxHidden);
    update(net.b2, g.b2, m_.b2, v_.b2, kMaxHidden);
    update(net.w3, g.w3, m_.w3, v_.w3, kMaxHidden);
    update(net.b3, g.b3, m_.b3, v_.b3, kMaxHidden);
    update(net.wo, g.wo, m_.wo, v_.wo, kMaxOut);
    std::vector<float> bo{net.bo}, gbo{g.bo};
    update(bo, gbo, mbo_, vbo_, kMaxOut);
    net.bo = bo[0];
  }

 private:
  static FloatNetwork zeros(const FloatNetwork& like) {
    FloatNetwork z;
    z.features = like.features;
    return z;
  }
  FloatNetwork m_, v_;
  std::vector<float> mbo_{0.0f}, vbo_{0.0f};
  int t_ = 0;
};

void zero(FloatNetwork& g) {
  for (auto* v : {&g.w1, &g.b1, &g.w2, &g.b2, &g.w3, &g.b3, &g.wo}) std::fill(v->begin(), v->end(), 0.0f);
  g.bo = 0;
}

template <typename T>
T round_to(float x, float lo, float hi) {
  return static_cast<T>(std::lround(std::clamp(x, lo, hi)));
}

}  // namespace

FloatNetwork::FloatNetwork()
    : w1(static_cast<std::size_t>(kFeatures) * kHalf, 0.0f), b1(kHalf, 0.0f),
      w2(static_cast<std::size_t>(kL2) * kIn2, 0.0f), b2(kL2, 0.0f), w3(static_cast<std::size_t>(kL3) * kL2, 0.0f),
      b3(kL3, 0.0f), wo(kL3, 0.0f) {}

FloatNetwork FloatNetwork::random(FeatureSet features, std::uint64_t seed) {
  FloatNetwork net;
  net.features = features;
  std::mt19937_64 rng(seed);
  const auto fill = [&](std::vector<float>& w, double bound) {
    std::uniform_real_distribution<float> u(static_cast<float>(-bound), static_cast<float>(bound));
    for (float& x : w) x = u(rng);
  };
  // About 30 rows are active in each half: sums of order 0.5 to start.
  fill(net.w1, 0.1);
  std::fill(net.b1.begin(), net.b1.end(), 0.5f);
  fill(net.w2, 1.0 / std::sqrt(kIn2));
  std::fill(net.b2.begin(), net.b2.end(), 0.5f);
  fill(net.w3, 1.0 / std::sqrt(kL2));
  std::fill(net.b3.begin(), net.b3.end(), 0.5f);
  fill(net.wo, 1.0 / std::sqrt(kL3));
  return net;
}

float float_output(const FloatNetwork& net, const BoardState& board, Color side) {
  Pass p;
  forward(net, board, side, p);
  return p.y * kScoreScale;
}

Network quantise(const FloatNetwork& f, const std::string& description) {
  Network q;
  q.features = f.features;
  q.description = description;
  const float a = kQA, ab = static_cast<float>(kQA) * kQB, ao = static_cast<float>(kQA) * kQO;
  for (std::size_t i = 0; i < f.w1.size(); ++i) q.w1[i] = round_to<std::int16_t>(f.w1[i] * a, -32767, 32767);
  for (int i = 0; i < kHalf; ++i) q.b1[i] = round_to<std::int16_t>(f.b1[i] * a, -32767, 32767);
  for (std::size_t i = 0; i < f.w2.size(); ++i) q.w2[i] = round_to<std::int16_t>(f.w2[i] * kQB, -32767, 32767);
  for (int i = 0; i < kL2; ++i) q.b2[i] = round_to<std::int32_t>(f.b2[i] * ab, -2e9f, 2e9f);
  for (std::size_t i = 0; i < f.w3.size(); ++i) q.w3[i] = round_to<std::int16_t>(f.w3[i] * kQB, -32767, 32767);
  for (int i = 0; i < kL3; ++i) q.b3[i] = round_to<std::int32_t>(f.b3[i] * ab, -2e9f, 2e9f);
  for (int i = 0; i < kL3; ++i) q.wo[i] = round_to<std::int16_t>(f.wo[i] * kQO, -32767, 32767);
  q.bo = round_to<std::int32_t>(f.bo * ao, -2e9f, 2e9f);
  return q;
}

double target_of(const Record& r, double lambda) {
  const double from_score = sigmoid(static_cast<double>(r.score) / kScoreScale);
  const double from_result = (r.result + 1) / 2.0;
  return lambda * from_score + (1 - lambda) * from_result;
}

double mean_loss(const FloatNetwork& net, const std::vector<Record>& records, double lambda) {
  if (records.empty()) return 0;
  double total = 0;
  Pass p;
  for (const Record& r : records) {
    forward(net, r.board, Color(r.side), p);
    const double d = sigmoid(p.y) - target_of(r, lambda);
    total += d * d;
  }
  return total / records.size();
}

void quantisation_error(const FloatNetwork& fnet, const Network& qnet, const std::vector<Record>& records,
                        double& mean_cp, double& max_cp) {
  mean_cp = max_cp = 0;
  if (records.empty()) return;
  Accumulator acc;
  for (const Record& r : records) {
    refresh(qnet, r.board, acc);
    const double err = std::abs(output(qnet, acc, Color(r.side)) - float_output(fnet, r.board, Color(r.side)));
    mean_cp += err;
    max_cp = std::max(max_cp, err);
  }
  mean_cp /= records.size();
}

const char* augment_name(Augment a) {
  switch (a) {
    case Augment::kNone: return "none";
    case Augment::kMirror: return "mirror";
    case Augment::kAll: return "all";
  }
  return "?";
}

Augment parse_augment(const std::string& name) {
  for (Augment a : {Augment::kNone, Augment::kMirror, Augment::kAll})
    if (name == augment_name(a)) return a;
  throw std::invalid_argument("unknown symmetry choice '" + name + "' (none, mirror or all)");
}

FloatNetwork train(const std::vector<Record>& records, const TrainOptions& options, TrainReport& report,
                   const std::function<void(const EpochReport&)>& on_epoch) {
  if (records.size() < 2) throw std::invalid_argument("nnue train: fewer than two positions to train on");
  if (options.batch < 1 || options.epochs < 0) throw std::invalid_argument("nnue train: batch and epochs must be positive");
  const auto start = std::chrono::steady_clock::now();
  std::mt19937_64 rng(options.seed);
  // A seeded split: validation positions are never trained on.
  std::vector<std::size_t> order(records.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const std::size_t n_val = std::clamp<std::size_t>(
      static_cast<std::size_t>(std::llround(records.size() * options.validation_share)), 1, records.size() - 1);
  std::vector<Record> validation;
  for (std::size_t i = 0; i < n_val; ++i) validation.push_back(records[order[i]]);
  std::vector<std::size_t> train_idx(order.begin() + n_val, order.end());
  report.train_positions = train_idx.size();
  report.validation_positions = validation.size();

  FloatNetwork net = FloatNetwork::random(options.features, rng());
  FloatNetwork grad;
  grad.features = options.features;
  Adam adam(net);
  double lr = options.learning_rate;
  std::uniform_int_distribution<int> pick_symmetry(0, kSymmetryCount - 1);
  const auto image = [&]() {
    switch (options.symmetries) {
      case Augment::kNone: return Symmetry::kIdentity;
      case Augment::kMirror: return (rng() & 1) ? Symmetry::kMirrorFiles : Symmetry::kIdentity;
      case Augment::kAll: return Symmetry(pick_symmetry(rng));
    }
    return Symmetry::kIdentity;
  };
  Pass p;
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    const auto epoch_start = std::chrono::steady_clock::now();
    std::shuffle(train_idx.begin(), train_idx.end(), rng);
    double total = 0;
    for (std::size_t b = 0; b < train_idx.size(); b += options.batch) {
      const std::size_t end = std::min(train_idx.size(), b + options.batch);
      zero(grad);
      for (std::size_t k = b; k < end; ++k) {
        const Record& r = records[train_idx[k]];
        const Symmetry sym = image();
        forward(net, sym == Symmetry::kIdentity ? r.board : transform(r.board, sym), Color(r.side), p);
        const float out = sigmoid(p.y);
        const float d = out - static_cast<float>(target_of(r, options.lambda));
        total += static_cast<double>(d) * d;
        backward(net, p, 2.0f * d * out * (1.0f - out), grad);
      }
      adam.step(net, grad, lr, 1.0f / static_cast<float>(end - b));
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start).count();
    EpochReport e;
    e.epoch = epoch;
    e.train_loss = total / train_idx.size();
    e.validation_loss = mean_loss(net, validation, options.lambda);
    e.samples_per_second = train_idx.size() / std::max(secs, 1e-9);
    report.epochs.push_back(e);
    if (on_epoch) on_epoch(e);
    lr *= options.lr_decay;
  }
  const Network q = quantise(net, "");
  quantisation_error(net, q, validation, report.quantisation_mean_cp, report.quantisation_max_cp);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return net;
}

}  // namespace ultima::nnue
