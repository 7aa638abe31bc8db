#include "training/train.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "engine/base/file_io.h"
#include "engine/rules/hash.h"
#include "nn/model_file.h"

namespace fs = std::filesystem;

namespace ultima::training {
namespace {

constexpr const char* kCheckpointMagic = "ULTIMA-CKPT";
constexpr const char* kMetricsHeader =
    "unix_time,step,lr,loss_total,loss_policy,loss_value,loss_moves_left,samples_per_s,window,total_samples";

std::string arch_fields(const nn::NetArchitecture& a) {
  std::ostringstream out;
  out << a.input_planes << ' ' << a.policy_planes << ' ' << a.blocks << ' ' << a.channels << ' ' << a.se_channels
      << ' ' << a.value_channels << ' ' << a.value_hidden << ' ' << a.moves_left_channels << ' '
      << a.moves_left_hidden;
  return out.str();
}

}  // namespace

Checkpoint parse_checkpoint(std::string_view bytes, const std::string& path, const nn::NetArchitecture& arch) {
  const std::size_t end = bytes.find("\n\n");
  if (end == std::string::npos) throw std::runtime_error(path + ": not a checkpoint (no header)");
  std::istringstream header(std::string(bytes.substr(0, end)));
  std::string magic, line;
  int version = 0;
  header >> magic >> version;
  if (magic != kCheckpointMagic) throw std::runtime_error(path + ": not a checkpoint");
  if (version != 1) throw std::runtime_error(path + ": checkpoint version " + std::to_string(version) + " is unknown");
  Checkpoint c;
  std::uint64_t size = 0, average_size = 0, checksum = 0;
  std::string arch_text;
  std::string key;
  while (header >> key) {
    if (key == "step") header >> c.step;
    else if (key == "bytes") header >> size;
    else if (key == "average_bytes") header >> average_size;
    else if (key == "checksum") header >> checksum;
    else if (key == "architecture") { std::getline(header, arch_text); }
    else throw std::runtime_error(path + ": unknown checkpoint field '" + key + "'");
  }
  if (arch_text.size() && arch_text[0] == ' ') arch_text.erase(0, 1);
  if (arch_text != arch_fields(arch))
    throw std::runtime_error(path + ": the checkpoint is of another architecture (" + arch_text + ")");
  const std::uint64_t have = bytes.size() - end - 2;
  if (size > have || average_size != have - size)
    throw std::runtime_error(path + ": truncated checkpoint (" + std::to_string(have) + " of " +
                             std::to_string(size + average_size) + " bytes)");
  if (fnv1a64(bytes.data() + end + 2, have) != checksum)
    throw std::runtime_error(path + ": checkpoint checksum mismatch (corrupt file)");
  const auto first = bytes.begin() + static_cast<std::ptrdiff_t>(end + 2);
  c.state.assign(first, first + static_cast<std::ptrdiff_t>(size));
  c.average.assign(first + static_cast<std::ptrdiff_t>(size), bytes.end());
  return c;
}

namespace {

Checkpoint read_checkpoint(const std::string& path, const nn::NetArchitecture& arch) {
  return parse_checkpoint(ultima::read_file(path), path, arch);
}

std::vector<std::pair<std::uint64_t, std::string>> list_checkpoints(const data::RunDir& run) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  for (const auto& entry : fs::directory_iterator(run.path("checkpoints"))) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("step-", 0) != 0 || name.size() < 11 || name.substr(name.size() - 5) != ".ckpt") continue;
    const std::string digits = name.substr(5, name.size() - 10);
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit)) continue;
    out.emplace_back(std::stoull(digits), entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

void TrainConfig::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("training: " + what); };
  if (batch_size < 1) fail("batch_size must be at least 1");
  if (optimizer != "sgd" && optimizer != "adamw") fail("optimizer must be sgd or adamw, not '" + optimizer + "'");
  if (!(lr > 0)) fail("lr must be positive");
  if (momentum < 0 || momentum >= 1) fail("momentum must be in [0, 1)");
  if (weight_decay < 0) fail("weight_decay must not be negative");
  if (warmup_steps < 0) fail("warmup_steps must not be negative");
  if (lr_schedule != "constant" && lr_schedule != "step" && lr_schedule != "cosine")
    fail("lr_schedule must be constant, step or cosine, not '" + lr_schedule + "'");
  if (lr_decay_steps < 1) fail("lr_decay_steps must be at least 1");
  if (!(lr_decay_factor > 0 && lr_decay_factor <= 1)) fail("lr_decay_factor must be in (0, 1]");
  if (lr_min < 0) fail("lr_min must not be negative");
  if (value_weight < 0 || moves_left_weight < 0) fail("loss weights must not be negative");
  if (precision != "fp32" && precision != "bf16" && precision != "fp16")
    fail("precision must be fp32, bf16 or fp16, not '" + precision + "'");
  if (!(q_ratio >= 0 && q_ratio <= 1)) fail("q_ratio must be in [0, 1]");
  if (!(tactics_share >= 0 && tactics_share <= 0.9f)) fail("tactics_share must be in [0, 0.9]");
  if (window.min_samples < 1) fail("window_min_samples must be at least 1");
  if (window.alpha < 0 || window.beta < 0) fail("window_alpha and window_beta must not be negative");
  if (ema_halflife < 0) fail("ema_halflife must not be negative");
  if (checkpoint_every < 1) fail("checkpoint_every must be at least 1");
  if (keep_checkpoints < 1) fail("keep_checkpoints must be at least 1");
  if (log_every < 1) fail("log_every must be at least 1");
}

float TrainConfig::lr_at(std::uint64_t step) const {
  if (warmup_steps > 0 && step < static_cast<std::uint64_t>(warmup_steps))
    return lr * static_cast<float>(step + 1) / static_cast<float>(warmup_steps);
  const double after = static_cast<double>(step - static_cast<std::uint64_t>(warmup_steps));
  if (lr_schedule == "step") return lr * std::pow(lr_decay_factor, std::floor(after / lr_decay_steps));
  if (lr_schedule == "cosine") {
    if (after >= lr_decay_steps) return lr_min;
    return lr_min + 0.5f * (lr - lr_min) * static_cast<float>(1 + std::cos(M_PI * after / lr_decay_steps));
  }
  return lr;
}

std::string checkpoint_path(const data::RunDir& run, std::uint64_t step) {
  char name[64];
  std::snprintf(name, sizeof name, "checkpoints/step-%09llu.ckpt", static_cast<unsigned long long>(step));
  return run.path(name);
}

TrainingRun::TrainingRun(const data::RunDir& run, TrainConfig config, nn::DeviceOptions device,
                         nn::ProcessGroup* group)
    : run_(run),
      config_(std::move(config)),
      group_(group),
      sampler_(config_.seed, config_.batch_size, config_.symmetries, config_.q_ratio) {
  config_.validate();
  if (group_) sampler_.set_share(group_->rank(), group_->world_size());
  const std::string first = run_.model_path(0);
  const nn::ModelFile model = nn::read_model_file(first);
  architecture_ = model.header.architecture;
  sampler_.set_input_planes(architecture_.input_planes);
  nn::TrainerOptions options;
  options.optimizer = config_.optimizer;
  options.momentum = config_.momentum;
  options.weight_decay = config_.weight_decay;
  options.value_weight = config_.value_weight;
  options.moves_left_weight = config_.moves_left_weight;
  options.device = device;
  options.precision = config_.precision;
  trainer_ = nn::Trainer::create(architecture_, model.payload, config_.seed, options);
  if (group_) trainer_->join(*group_);
  load_latest_checkpoint();
  // The average starts from the weights where there is none yet (a new run,
  // or ema_halflife set on a run trained without it).
  if (config_.ema_halflife == 0) average_.clear();
  else if (average_.empty()) average_ = trainer_->payload();
}

TrainingRun::~TrainingRun() = default;

void TrainingRun::load_latest_checkpoint() {
  // Rank 0 finds the newest checkpoint that reads; the others take that one.
  std::string chosen;
  std::optional<Checkpoint> loaded;
  if (writer()) {
    auto checkpoints = list_checkpoints(run_);
    for (auto it = checkpoints.rbegin(); it != checkpoints.rend() && !loaded; ++it) {
      try {
        loaded = read_checkpoint(it->second, architecture_);
        chosen = it->second;
      } catch (const std::exception& e) {
        spdlog::warn("train: skipping checkpoint: {}", e.what());
      }
    }
  }
  if (group_) {
    chosen = group_->broadcast(chosen);
    if (!writer() && !chosen.empty()) loaded = read_checkpoint(chosen, architecture_);
  }
  if (loaded) {
    trainer_->restore(loaded->state);
    step_ = loaded->step;
    average_ = std::move(loaded->average);
    if (writer()) spdlog::info("train: resumed from {} (step {})", chosen, step_);
  }
  if (!writer()) return;
  // Rows past the resumed step were made by steps that are done again.
  const std::string metrics = run_.path("metrics.csv");
  if (fs::exists(metrics)) {
    std::istringstream in(ultima::read_file(metrics));
    std::string line, kept;
    bool changed = false;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      if (line.rfind("unix_time", 0) != 0) {
        const std::size_t comma = line.find(',');
        std::uint64_t step = 0;
        try {
          step = std::stoull(line.substr(comma + 1));
        } catch (const std::exception&) {
          changed = true;
          continue;
        }
        if (step > step_) {
          changed = true;
          continue;
        }
      }
      kept += line + "\n";
    }
    if (changed) ultima::write_file_atomically(metrics, kept);
  }
}

void TrainingRun::refresh_samples(const std::vector<std::string>& paths) {
  std::vector<std::string> shards = paths.empty() ? run_.shard_paths() : paths;
  if (group_) {
    // Rank 0's list, so that every rank has the same samples in the same order.
    std::string list;
    for (const std::string& s : shards) list += s + "\n";
    list = group_->broadcast(list);
    shards.clear();
    std::istringstream in(list);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) shards.push_back(line);
  }
  store_.add_shards(shards);
}

void TrainingRun::save_checkpoint() {
  std::vector<char> blob = trainer_->state();
  if (!writer()) return;
  const std::size_t state_size = blob.size();
  blob.insert(blob.end(), average_.begin(), average_.end());
  std::ostringstream header;
  header << kCheckpointMagic << " 1\nstep " << step_ << "\nbytes " << state_size;
  if (!average_.empty()) header << "\naverage_bytes " << average_.size();
  header << "\nchecksum " << fnv1a64(blob.data(), blob.size()) << "\narchitecture "
         << arch_fields(architecture_) << "\n\n";
  std::string bytes = header.str();
  bytes.append(blob.begin(), blob.end());
  ultima::write_file_atomically(checkpoint_path(run_, step_), bytes);
  auto checkpoints = list_checkpoints(run_);
  const int extra = static_cast<int>(checkpoints.size()) - config_.keep_checkpoints;
  for (int i = 0; i < extra; ++i)
    if (checkpoints[i].first != step_) fs::remove(checkpoints[i].second);
}

void TrainingRun::append_metrics(const TrainProgress& p) {
  if (!writer()) return;
  const std::string path = run_.path("metrics.csv");
  const bool fresh = !fs::exists(path);
  std::ofstream out(path, std::ios::app);
  if (!out) throw std::runtime_error("cannot write " + path);
  if (fresh) out << kMetricsHeader << "\n";
  const auto now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  char line[512];
  std::snprintf(line, sizeof line, "%.0f,%llu,%.6g,%.5f,%.5f,%.5f,%.5f,%.1f,%llu,%llu\n", now,
                static_cast<unsigned long long>(p.step), p.lr, p.losses.total, p.losses.policy, p.losses.value,
                p.losses.moves_left, p.samples_per_second, static_cast<unsigned long long>(p.window),
                static_cast<unsigned long long>(p.total_samples));
  out << line;
}

bool TrainingRun::train_until(std::uint64_t target, const std::function<void(const TrainProgress&)>& progress,
                              const std::atomic<bool>* stop) {
  if (step_ >= target) return true;
  if (store_.total() == 0) throw std::runtime_error("train: no samples in " + run_.path("selfplay"));
  const std::uint64_t total = store_.total();
  const std::uint64_t window = window_size(total, config_.window);
  const std::uint64_t begin = total - window;
  store_.hold_from(begin);  // samples behind the window leave memory
  if (config_.tactics_share > 0) {
    std::vector<std::uint64_t> tactics = store_.indices_named(begin, total, std::string(kTacticsTagSuffix) + "-");
    if (writer())
      spdlog::info("train: {} tactics samples in the window fill {:.0f}% of each batch", tactics.size(),
                   tactics.empty() ? 0.0 : 100.0 * config_.tactics_share);
    sampler_.set_focus(std::move(tactics), config_.tactics_share);
  }
  BatchPrefetcher batches(sampler_, store_, begin, total);
  TrainProgress p;
  p.target = target;
  p.window = window;
  p.total_samples = total;
  const auto start = std::chrono::steady_clock::now();
  auto last = start;
  int steps_since = 0;
  // The device runs behind: losses are read only every log_every steps.
  trainer_->report();
  while (step_ < target) {
    const bool stopping = stop && stop->load();
    if (group_ ? group_->any(stopping) : stopping) {
      save_checkpoint();
      return false;
    }
    const BatchData& batch = batches.take(step_, step_ + 1 < target);
    const float lr = config_.lr_at(step_);
    trainer_->queue_step(batch.view(), lr);
    ++step_;
    update_average();
    ++steps_since;
    if (step_ % config_.log_every == 0 || step_ == target) {
      const nn::TrainReport r = trainer_->report();
      if (r.nonfinite > 0)
        throw std::runtime_error("train: the loss was not finite at " + std::to_string(r.nonfinite) + " of steps " +
                                 std::to_string(step_ - steps_since + 1) + ".." + std::to_string(step_) +
                                 " (those steps changed nothing; lower lr?)");
      const auto now = std::chrono::steady_clock::now();
      const double dt = std::chrono::duration<double>(now - last).count();
      last = now;
      p.step = step_;
      p.lr = lr;
      p.losses = r.mean;
      p.overflow_steps = r.overflow;
      p.samples_per_second = dt > 0 ? steps_since * config_.batch_size / dt : 0;
      p.seconds = std::chrono::duration<double>(now - start).count();
      append_metrics(p);
      if (progress && writer()) progress(p);
      steps_since = 0;
    }
    if (step_ % config_.checkpoint_every == 0) save_checkpoint();
  }
  save_checkpoint();
  return true;
}

void TrainingRun::update_average() {
  if (config_.ema_halflife == 0) return;
  // Every `every` steps rather than every step: each update copies all the
  // weights out of the module (off the GPU, with a CUDA trainer).
  const int every = std::max(1, config_.ema_halflife / 50);
  if (step_ % static_cast<std::uint64_t>(every) != 0) return;
  const double n = static_cast<double>(step_);
  const double keep = std::min(std::pow(0.5, static_cast<double>(every) / config_.ema_halflife),
                               std::pow((1.0 + n) / (10.0 + n), every));
  nn::blend_payloads(average_, trainer_->payload(), keep);
}

std::string TrainingRun::export_model(std::uint64_t version, const std::string& rules) const {
  nn::ModelHeader header;
  header.architecture = architecture_;
  header.rules = rules;
  header.training_step = step_;
  const std::string path = run_.model_path(version);
  const std::vector<char> payload = average_.empty() ? trainer_->payload() : average_;
  if (writer()) nn::write_model_file(path, header, payload);
  return path;
}

}  // namespace ultima::training
