#include "cli/run_config.h"

#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "engine/players.h"
#include "selfplay/run_dir.h"

namespace ultima::cli {
namespace {

// One mapping of the file: keys are read by name, and finish() rejects the
// ones nobody asked for.
class Section {
 public:
  Section(const YAML::Node& node, std::string path, const std::string& source)
      : node_(node), path_(std::move(path)), source_(source) {
    if (node_ && !node_.IsMap()) fail(path_.empty() ? "the file is not a mapping" : "is not a mapping");
  }
  template <typename T>
  void get(const char* key, T& value) {
    used_.insert(key);
    if (!node_ || !node_[key]) return;
    try {
      value = node_[key].template as<T>();
    } catch (const YAML::Exception&) {
      fail_key(key, "has a value of the wrong type");
    }
  }
  void get_list(const char* key, std::vector<std::string>& value) {
    used_.insert(key);
    if (!node_ || !node_[key]) return;
    if (!node_[key].IsSequence()) fail_key(key, "must be a list");
    value.clear();
    for (const auto& item : node_[key]) value.push_back(item.as<std::string>());
  }
  Section sub(const char* key) {
    used_.insert(key);
    return Section(node_ ? node_[key] : YAML::Node(), path_.empty() ? key : path_ + "." + key, source_);
  }
  void finish() const {
    if (!node_) return;
    for (const auto& item : node_) {
      const std::string key = item.first.as<std::string>();
      if (!used_.count(key)) fail_key(key.c_str(), "is not a known key (see configs/README.md)");
    }
  }
  [[noreturn]] void fail_key(const char* key, const std::string& problem) const {
    throw std::invalid_argument("config " + source_ + ": " + (path_.empty() ? "" : path_ + ".") + key + " " + problem);
  }
  [[noreturn]] void fail(const std::string& problem) const {
    throw std::invalid_argument("config " + source_ + ": " + path_ + " " + problem);
  }

 private:
  YAML::Node node_;
  std::string path_;
  const std::string& source_;
  std::set<std::string> used_;
};

}  // namespace

RunConfig RunConfig::parse(const std::string& text, const std::string& source) {
  RunConfig c;
  c.source = source;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument("config " + source + ": not valid YAML: " + e.what());
  }
  if (!root || root.IsNull()) throw std::invalid_argument("config " + source + ": empty");
  auto wrap = [&](const std::function<void()>& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      throw std::invalid_argument(what.rfind("config ", 0) == 0 ? what : "config " + source + ": " + what);
    }
  };
  Section top(root, "", c.source);
  top.get("name", c.name);
  std::string rules = c.rules.name();
  top.get("rules", rules);
  wrap([&] { c.rules = Rules::parse(rules); });
  top.get("seed", c.seed);

  Section net = top.sub("network");
  net.get("blocks", c.network.blocks);
  net.get("channels", c.network.channels);
  net.get("se_channels", c.network.se_channels);
  net.get("value_channels", c.network.value_channels);
  net.get("value_hidden", c.network.value_hidden);
  net.get("moves_left_channels", c.network.moves_left_channels);
  net.get("moves_left_hidden", c.network.moves_left_hidden);
  net.finish();
  c.network = c.network.completed();
  wrap([&] { c.network.validate(); });

  Section inf = top.sub("inference");
  inf.get("device", c.inference.device);
  inf.get("precision", c.inference.precision);
  inf.get("threads", c.inference.threads);
  inf.get("max_batch", c.inference.max_batch);
  inf.get("max_wait_us", c.inference.max_wait_us);
  inf.get("cache_entries", c.inference.cache_entries);
  inf.finish();
  if (c.inference.threads < 0) inf.fail_key("threads", "must not be negative");
  if (c.inference.max_batch < 1) inf.fail_key("max_batch", "must be at least 1");
  if (c.inference.max_wait_us < 0) inf.fail_key("max_wait_us", "must not be negative");

  Section sp = top.sub("selfplay");
  auto& s = c.selfplay;
  sp.get("games_per_generation", c.games_per_generation);
  sp.get("parallel_games", s.parallel_games);
  sp.get("games_per_shard", s.games_per_shard);
  sp.get("full_playouts", s.full_playouts);
  sp.get("cheap_playouts", s.cheap_playouts);
  sp.get("full_search_share", s.full_search_share);
  sp.get("mcts_batch", s.mcts_batch);
  sp.get("cpuct", s.cpuct);
  sp.get("fpu_reduction", s.fpu_reduction);
  sp.get("noise_alpha", s.noise_alpha);
  sp.get("noise_epsilon", s.noise_epsilon);
  sp.get("temperature", s.temperature);
  sp.get("temperature_end", s.temperature_end);
  sp.get("temperature_halflife", s.temperature_halflife);
  sp.get("policy_target", s.policy_target);
  sp.get("gumbel", s.gumbel);
  sp.get("resign_threshold", s.resign_threshold);
  sp.get("resign_consecutive", s.resign_consecutive);
  sp.get("no_resign_share", s.no_resign_share);
  sp.get("max_plies", s.max_plies);
  sp.finish();
  s.rules = c.rules;
  if (c.games_per_generation < 1) sp.fail_key("games_per_generation", "must be at least 1");
  wrap([&] { s.validate(); });

  Section tr = top.sub("training");
  auto& t = c.training;
  tr.get("batch_size", t.batch_size);
  tr.get("optimizer", t.optimizer);
  tr.get("lr", t.lr);
  tr.get("momentum", t.momentum);
  tr.get("weight_decay", t.weight_decay);
  tr.get("warmup_steps", t.warmup_steps);
  tr.get("lr_schedule", t.lr_schedule);
  tr.get("lr_decay_steps", t.lr_decay_steps);
  tr.get("lr_decay_factor", t.lr_decay_factor);
  tr.get("lr_min", t.lr_min);
  tr.get("value_weight", t.value_weight);
  tr.get("moves_left_weight", t.moves_left_weight);
  tr.get("symmetries", t.symmetries);
  tr.get("window_min_samples", t.window.min_samples);
  tr.get("window_alpha", t.window.alpha);
  tr.get("window_beta", t.window.beta);
  tr.get("window_max_samples", t.window.max_samples);
  tr.get("checkpoint_every", t.checkpoint_every);
  tr.get("keep_checkpoints", t.keep_checkpoints);
  tr.get("log_every", t.log_every);
  tr.get("train_ratio", c.train_stage.train_ratio);
  tr.get("min_steps", c.train_stage.min_steps);
  tr.get("max_steps", c.train_stage.max_steps);
  tr.get("device", c.train_stage.device);
  tr.get("threads", c.train_stage.threads);
  tr.finish();
  t.seed = c.seed;
  wrap([&] { t.validate(); });
  if (!(c.train_stage.train_ratio > 0)) tr.fail_key("train_ratio", "must be positive");
  if (c.train_stage.max_steps < c.train_stage.min_steps) tr.fail_key("max_steps", "must be at least min_steps");
  if (c.train_stage.threads < 0) tr.fail_key("threads", "must not be negative");

  Section ev = top.sub("evaluation");
  auto& e = c.eval;
  ev.get("playouts", e.playouts);
  ev.get("mcts_batch", e.mcts_batch);
  ev.get("promotion", e.promotion);
  ev.get("games_vs_best", e.games_vs_best);
  ev.get("gate_score", e.gate_score);
  ev.get_list("levels", e.levels);
  ev.get("games_per_level", e.games_per_level);
  ev.get("games_vs_initial", e.games_vs_initial);
  ev.get("concurrency", e.concurrency);
  ev.get("max_plies", e.max_plies);
  ev.get("opening_min_plies", e.opening_min_plies);
  ev.get("opening_max_plies", e.opening_max_plies);
  ev.finish();
  if (e.playouts < 1) ev.fail_key("playouts", "must be at least 1");
  if (e.mcts_batch < 1) ev.fail_key("mcts_batch", "must be at least 1");
  if (e.promotion != "gating" && e.promotion != "continuous")
    ev.fail_key("promotion", "must be gating or continuous, not '" + e.promotion + "'");
  if (e.games_vs_best < 0 || e.games_per_level < 0 || e.games_vs_initial < 0)
    ev.fail_key("games_vs_best", "and the other game counts must not be negative");
  if (e.promotion == "gating" && e.games_vs_best < 2) ev.fail_key("games_vs_best", "must be at least 2 for gating");
  if (!(e.gate_score >= 0 && e.gate_score <= 1)) ev.fail_key("gate_score", "must be in [0, 1]");
  if (e.concurrency < 1) ev.fail_key("concurrency", "must be at least 1");
  if (e.max_plies < 1) ev.fail_key("max_plies", "must be at least 1");
  if (e.opening_min_plies < 0 || e.opening_max_plies < e.opening_min_plies)
    ev.fail_key("opening_max_plies", "must be at least opening_min_plies (both not negative)");
  for (const std::string& level : e.levels) {
    Level l;
    wrap([&] { l = find_level(level); });
    if (!l.has_elo) ev.fail_key("levels", "names level '" + level + "', which has no measured elo");
  }

  Section lp = top.sub("loop");
  lp.get("generations", c.loop.generations);
  lp.get("max_minutes", c.loop.max_minutes);
  lp.finish();
  if (c.loop.generations < 1) lp.fail_key("generations", "must be at least 1");
  if (c.loop.max_minutes < 0) lp.fail_key("max_minutes", "must not be negative");
  top.finish();
  return c;
}

RunConfig RunConfig::load(const std::string& path) {
  std::string text;
  try {
    text = selfplay::read_file(path);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("config: ") + e.what());
  }
  return parse(text, path);
}

std::string RunConfig::to_yaml() const {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << name;
  out << YAML::Key << "rules" << YAML::Value << rules.name();
  out << YAML::Key << "seed" << YAML::Value << seed;
  out << YAML::Key << "network" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "blocks" << YAML::Value << network.blocks;
  out << YAML::Key << "channels" << YAML::Value << network.channels;
  out << YAML::Key << "se_channels" << YAML::Value << network.se_channels;
  out << YAML::Key << "value_channels" << YAML::Value << network.value_channels;
  out << YAML::Key << "value_hidden" << YAML::Value << network.value_hidden;
  out << YAML::Key << "moves_left_channels" << YAML::Value << network.moves_left_channels;
  out << YAML::Key << "moves_left_hidden" << YAML::Value << network.moves_left_hidden;
  out << YAML::EndMap;
  out << YAML::Key << "inference" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "device" << YAML::Value << inference.device;
  out << YAML::Key << "precision" << YAML::Value << inference.precision;
  out << YAML::Key << "threads" << YAML::Value << inference.threads;
  out << YAML::Key << "max_batch" << YAML::Value << inference.max_batch;
  out << YAML::Key << "max_wait_us" << YAML::Value << inference.max_wait_us;
  out << YAML::Key << "cache_entries" << YAML::Value << inference.cache_entries;
  out << YAML::EndMap;
  const auto& s = selfplay;
  out << YAML::Key << "selfplay" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "games_per_generation" << YAML::Value << games_per_generation;
  out << YAML::Key << "parallel_games" << YAML::Value << s.parallel_games;
  out << YAML::Key << "games_per_shard" << YAML::Value << s.games_per_shard;
  out << YAML::Key << "full_playouts" << YAML::Value << s.full_playouts;
  out << YAML::Key << "cheap_playouts" << YAML::Value << s.cheap_playouts;
  out << YAML::Key << "full_search_share" << YAML::Value << s.full_search_share;
  out << YAML::Key << "mcts_batch" << YAML::Value << s.mcts_batch;
  out << YAML::Key << "cpuct" << YAML::Value << s.cpuct;
  out << YAML::Key << "fpu_reduction" << YAML::Value << s.fpu_reduction;
  out << YAML::Key << "noise_alpha" << YAML::Value << s.noise_alpha;
  out << YAML::Key << "noise_epsilon" << YAML::Value << s.noise_epsilon;
  out << YAML::Key << "temperature" << YAML::Value << s.temperature;
  out << YAML::Key << "temperature_end" << YAML::Value << s.temperature_end;
  out << YAML::Key << "temperature_halflife" << YAML::Value << s.temperature_halflife;
  out << YAML::Key << "policy_target" << YAML::Value << s.policy_target;
  out << YAML::Key << "gumbel" << YAML::Value << s.gumbel;
  out << YAML::Key << "resign_threshold" << YAML::Value << s.resign_threshold;
  out << YAML::Key << "resign_consecutive" << YAML::Value << s.resign_consecutive;
  out << YAML::Key << "no_resign_share" << YAML::Value << s.no_resign_share;
  out << YAML::Key << "max_plies" << YAML::Value << s.max_plies;
  out << YAML::EndMap;
  const auto& t = training;
  out << YAML::Key << "training" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "batch_size" << YAML::Value << t.batch_size;
  out << YAML::Key << "optimizer" << YAML::Value << t.optimizer;
  out << YAML::Key << "lr" << YAML::Value << t.lr;
  out << YAML::Key << "momentum" << YAML::Value << t.momentum;
  out << YAML::Key << "weight_decay" << YAML::Value << t.weight_decay;
  out << YAML::Key << "warmup_steps" << YAML::Value << t.warmup_steps;
  out << YAML::Key << "lr_schedule" << YAML::Value << t.lr_schedule;
  out << YAML::Key << "lr_decay_steps" << YAML::Value << t.lr_decay_steps;
  out << YAML::Key << "lr_decay_factor" << YAML::Value << t.lr_decay_factor;
  out << YAML::Key << "lr_min" << YAML::Value << t.lr_min;
  out << YAML::Key << "value_weight" << YAML::Value << t.value_weight;
  out << YAML::Key << "moves_left_weight" << YAML::Value << t.moves_left_weight;
  out << YAML::Key << "symmetries" << YAML::Value << t.symmetries;
  out << YAML::Key << "window_min_samples" << YAML::Value << t.window.min_samples;
  out << YAML::Key << "window_alpha" << YAML::Value << t.window.alpha;
  out << YAML::Key << "window_beta" << YAML::Value << t.window.beta;
  out << YAML::Key << "window_max_samples" << YAML::Value << t.window.max_samples;
  out << YAML::Key << "checkpoint_every" << YAML::Value << t.checkpoint_every;
  out << YAML::Key << "keep_checkpoints" << YAML::Value << t.keep_checkpoints;
  out << YAML::Key << "log_every" << YAML::Value << t.log_every;
  out << YAML::Key << "train_ratio" << YAML::Value << train_stage.train_ratio;
  out << YAML::Key << "min_steps" << YAML::Value << train_stage.min_steps;
  out << YAML::Key << "max_steps" << YAML::Value << train_stage.max_steps;
  out << YAML::Key << "device" << YAML::Value << train_stage.device;
  out << YAML::Key << "threads" << YAML::Value << train_stage.threads;
  out << YAML::EndMap;
  out << YAML::Key << "evaluation" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "playouts" << YAML::Value << eval.playouts;
  out << YAML::Key << "mcts_batch" << YAML::Value << eval.mcts_batch;
  out << YAML::Key << "promotion" << YAML::Value << eval.promotion;
  out << YAML::Key << "games_vs_best" << YAML::Value << eval.games_vs_best;
  out << YAML::Key << "gate_score" << YAML::Value << eval.gate_score;
  out << YAML::Key << "levels" << YAML::Value << YAML::Flow << eval.levels;
  out << YAML::Key << "games_per_level" << YAML::Value << eval.games_per_level;
  out << YAML::Key << "games_vs_initial" << YAML::Value << eval.games_vs_initial;
  out << YAML::Key << "concurrency" << YAML::Value << eval.concurrency;
  out << YAML::Key << "max_plies" << YAML::Value << eval.max_plies;
  out << YAML::Key << "opening_min_plies" << YAML::Value << eval.opening_min_plies;
  out << YAML::Key << "opening_max_plies" << YAML::Value << eval.opening_max_plies;
  out << YAML::EndMap;
  out << YAML::Key << "loop" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "generations" << YAML::Value << loop.generations;
  out << YAML::Key << "max_minutes" << YAML::Value << loop.max_minutes;
  out << YAML::EndMap;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

nn::NnConfig RunConfig::nn_config(const std::string& weights) const {
  nn::NnConfig n;
  n.weights = weights;
  n.architecture = network;
  n.seed = seed;
  n.device = inference.device;
  n.precision = inference.precision;
  n.threads = inference.threads;
  n.interop_threads = 1;
  n.batching.max_batch = inference.max_batch;
  n.batching.max_wait_us = inference.max_wait_us;
  n.batching.cache_entries = inference.cache_entries;
  n.batching.workers = 1;
  return n;
}

}  // namespace ultima::cli
