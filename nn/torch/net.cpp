#include "nn/torch/net.h"

#include <torch/nn/functional/activation.h>

#include <cstring>
#include <map>
#include <stdexcept>

#include "nn/payload_format.h"

namespace ultima::nn {
namespace {

torch::nn::Conv2d conv(int in, int out, int kernel, bool bias = false) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel).padding(kernel / 2).bias(bias));
}

std::string shape_text(c10::IntArrayRef sizes) {
  std::string s = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

template <typename T>
void put(std::vector<char>& out, T v) {
  const char* p = reinterpret_cast<const char*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}

// model_file.cpp's NetArchitecture::text() is not linked into the module.
std::string architecture_text(const NetArchitecture& a) {
  return std::to_string(a.blocks) + "x" + std::to_string(a.channels);
}

std::vector<std::pair<std::string, torch::Tensor>> named_tensors(UltimaNetImpl& net) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : net.named_parameters()) out.emplace_back(p.key(), p.value());
  for (const auto& b : net.named_buffers()) out.emplace_back(b.key(), b.value());
  return out;
}

// A dense layer whose weights may be in another dtype than its input (fp32
// layers beside a bf16 tower on the CPU, see module.cpp): the input takes
// the weights' dtype, the output the input's.
torch::Tensor dense(torch::nn::Linear& fc, const torch::Tensor& x) {
  const auto dtype = fc->weight.scalar_type();
  if (dtype == x.scalar_type()) return fc->forward(x);
  return fc->forward(x.to(dtype)).to(x.scalar_type());
}

}  // namespace

ResidualBlockImpl::ResidualBlockImpl(int channels, int se_channels) : channels_(channels) {
  conv1_ = register_module("conv1", conv(channels, channels, 3));
  bn1_ = register_module("bn1", torch::nn::BatchNorm2d(channels));
  conv2_ = register_module("conv2", conv(channels, channels, 3));
  bn2_ = register_module("bn2", torch::nn::BatchNorm2d(channels));
  if (se_channels > 0) {
    se_squeeze_ = register_module("se_squeeze", torch::nn::Linear(channels, se_channels));
    se_excite_ = register_module("se_excite", torch::nn::Linear(se_channels, 2 * channels));
  }
}

torch::Tensor ResidualBlockImpl::forward(const torch::Tensor& x) {
  torch::Tensor y = torch::relu(norm(bn1_, conv1_(x)));
  y = norm(bn2_, conv2_(y));
  if (se_squeeze_) {
    torch::Tensor s = dense(se_excite_, torch::relu(dense(se_squeeze_, y.mean({2, 3}))));
    const torch::Tensor scale = s.narrow(1, 0, channels_), bias = s.narrow(1, channels_, channels_);
    y = torch::sigmoid(scale).unsqueeze(-1).unsqueeze(-1) * y + bias.unsqueeze(-1).unsqueeze(-1);
  }
  return torch::relu(y + x);
}

UltimaNetImpl::UltimaNetImpl(const NetArchitecture& a) : architecture_(a) {
  const int c = a.channels;
  input_conv_ = register_module("input_conv", conv(a.input_planes, c, 3));
  input_bn_ = register_module("input_bn", torch::nn::BatchNorm2d(c));
  tower_ = register_module("tower", torch::nn::ModuleList());
  for (int i = 0; i < a.blocks; ++i) tower_->push_back(ResidualBlock(c, a.se_channels));
  policy_conv_ = register_module("policy_conv", conv(c, c, 3));
  policy_bn_ = register_module("policy_bn", torch::nn::BatchNorm2d(c));
  policy_out_ = register_module("policy_out", conv(c, a.policy_planes, 1, true));
  value_conv_ = register_module("value_conv", conv(c, a.value_channels, 1));
  value_bn_ = register_module("value_bn", torch::nn::BatchNorm2d(a.value_channels));
  value_fc_ = register_module("value_fc", torch::nn::Linear(a.value_channels * 64, a.value_hidden));
  value_out_ = register_module("value_out", torch::nn::Linear(a.value_hidden, 3));
  if (a.moves_left_channels > 0) {
    moves_left_conv_ = register_module("moves_left_conv", conv(c, a.moves_left_channels, 1));
    moves_left_bn_ = register_module("moves_left_bn", torch::nn::BatchNorm2d(a.moves_left_channels));
    moves_left_fc_ = register_module("moves_left_fc", torch::nn::Linear(a.moves_left_channels * 64, a.moves_left_hidden));
    moves_left_out_ = register_module("moves_left_out", torch::nn::Linear(a.moves_left_hidden, 1));
  }
}

void UltimaNetImpl::set_batch_norm(const BatchNormFunction& norm) {
  norm_ = norm;
  for (const auto& block : *tower_) block->as<ResidualBlock>()->set_batch_norm(norm);
}

NetOutput UltimaNetImpl::forward(const torch::Tensor& planes) {
  torch::Tensor x = torch::relu(norm(input_bn_, input_conv_(planes)));
  for (const auto& block : *tower_) x = block->as<ResidualBlock>()->forward(x);
  NetOutput out;
  out.policy = policy_out_(torch::relu(norm(policy_bn_, policy_conv_(x)))).flatten(1);
  torch::Tensor v = torch::relu(norm(value_bn_, value_conv_(x))).flatten(1);
  out.wdl = dense(value_out_, torch::relu(dense(value_fc_, v)));
  if (moves_left_conv_) {
    torch::Tensor m = torch::relu(norm(moves_left_bn_, moves_left_conv_(x))).flatten(1);
    out.moves_left = torch::relu(dense(moves_left_out_, torch::relu(dense(moves_left_fc_, m)))).squeeze(1);
  }
  return out;
}

std::vector<char> save_payload(UltimaNetImpl& net) {
  std::vector<char> out(payload::kMagic, payload::kMagic + 4);
  const auto tensors = named_tensors(net);
  put<std::uint32_t>(out, static_cast<std::uint32_t>(tensors.size()));
  for (const auto& [name, tensor] : tensors) {
    const bool integer = tensor.scalar_type() == torch::kLong;
    const torch::Tensor t = tensor.detach().to(torch::kCPU, integer ? torch::kLong : torch::kFloat).contiguous();
    put<std::uint16_t>(out, static_cast<std::uint16_t>(name.size()));
    out.insert(out.end(), name.begin(), name.end());
    put<std::uint8_t>(out, integer ? payload::kInt64 : payload::kFloat32);
    put<std::uint8_t>(out, static_cast<std::uint8_t>(t.dim()));
    for (const std::int64_t s : t.sizes()) put<std::int64_t>(out, s);
    const char* data = static_cast<const char*>(t.data_ptr());
    out.insert(out.end(), data, data + t.numel() * t.element_size());
  }
  return out;
}

void load_payload(UltimaNetImpl& net, const char* data, std::size_t size) {
  std::map<std::string, payload::Record> stored;
  for (payload::Record& r : payload::read_records(data, size)) {
    const std::string name(r.name);
    if (!stored.emplace(name, std::move(r)).second) throw std::runtime_error("tensor '" + name + "' appears twice");
  }

  torch::NoGradGuard no_grad;
  for (auto& [name, tensor] : named_tensors(net)) {
    const auto it = stored.find(name);
    if (it == stored.end())
      throw std::runtime_error("the weights lack tensor '" + name + "' (another architecture?)");
    const payload::Record& t = it->second;
    if (!c10::IntArrayRef(t.sizes).equals(tensor.sizes()))
      throw std::runtime_error("tensor '" + name + "' has shape " + shape_text(t.sizes) + " in the file but " +
                               shape_text(tensor.sizes()) + " in a " + architecture_text(net.architecture()) +
                               " network (the header's architecture does not match the weights)");
    // Copied out first: records follow names of any length, so the data
    // need not be aligned for its type.
    const torch::Tensor source = torch::empty(t.sizes, t.type == payload::kInt64 ? torch::kLong : torch::kFloat);
    std::memcpy(source.data_ptr(), data + t.data_at, t.data_bytes);
    tensor.copy_(source);
    stored.erase(it);
  }
  if (!stored.empty())
    throw std::runtime_error("the weights hold tensor '" + stored.begin()->first +
                             "', which a " + architecture_text(net.architecture()) + " network lacks (another architecture?)");
}

}  // namespace ultima::nn
