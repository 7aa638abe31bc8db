#include "training/loop/run_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "engine/mcts/settings.h"
#include "engine/play/player_spec.h"
#include "engine/base/file_io.h"
#include "nn/data/run_dir.h"
#include "nn/encoding.h"

namespace ultima::loop {
namespace {

template <typename T>
const char* type_name() {
  if constexpr (std::is_same_v<T, bool>) return "true or false";
  else if constexpr (std::is_integral_v<T>) return "an integer";
  else if constexpr (std::is_floating_point_v<T>) return "a number";
  else return "text";
}

// The registry's keys (engine/mcts/settings.h) that the selfplay and
// evaluation sections take, in the order --print-config writes them. Left
// out: what the loop sets itself (threads, seed, the budgets, progress
// reports, multipv) and the player's move temperature (self-play has its
// own temperature keys).
constexpr const char* kRunMctsKeys[] = {
    "batch",          "cpuct",        "fpu",          "noise_alpha",    "noise_epsilon",    "gumbel",
    "gumbel_rescale_q", "gumbel_c_scale", "gumbel_noise", "mate_scan",    "mate_scan_root",   "max_collisions",
    "cpuct_base",     "cpuct_factor", "fpu_root",     "policy_temperature", "virtual_loss", "stop_when_proven",
    "gumbel_actions", "gumbel_c_visit"};

bool is_mcts_setting(const std::string& key) {
  for (const MctsSettingInfo& s : mcts_setting_list())
    if (s.name == key) return true;
  return false;
}

SettingType setting_type(const std::string& key) {
  for (const MctsSettingInfo& s : mcts_setting_list())
    if (s.name == key) return s.type;
  throw std::logic_error("no MCTS setting '" + key + "'");
}

// One mapping of the file: keys are read by name, and finish() rejects the
// ones nobody asked for.
class Section {
 public:
  Section(const YAML::Node& node, std::string path, const std::string& source)
      : node_(node), path_(std::move(path)), source_(source) {
    if (node_ && !node_.IsMap()) fail(path_.empty() ? "the file is not a mapping" : "is not a mapping");
    // YAML keeps one of two equal keys without a word: refuse them instead.
    std::set<std::string> seen;
    if (node_)
      for (const auto& item : node_)
        if (!seen.insert(item.first.as<std::string>()).second)
          fail_key(item.first.as<std::string>().c_str(), "is given twice");
  }
  template <typename T>
  void get(const char* key, T& value) {
    used_.insert(key);
    if (!node_ || !node_[key]) return;
    const YAML::Node item = node_[key];
    if (!item.IsScalar()) fail_key(key, std::string("must be ") + type_name<T>() + ", not a list or mapping");
    // The tree search's settings take their type and range from their one
    // declaration (engine/mcts/settings.h).
    if ((path_ == "selfplay" || path_ == "evaluation") && is_mcts_setting(key)) {
      try {
        MctsSettings scratch;
        set_mcts_setting(scratch, key, item.Scalar(), "-");
      } catch (const std::invalid_argument& e) {
        fail_key(key, "has a bad value: " + std::string(e.what()).substr(3));  // past "-: "
      }
    }
    try {
      value = item.template as<T>();
    } catch (const YAML::Exception&) {
      fail_key(key, std::string("must be ") + type_name<T>() + ", not '" + item.Scalar() + "'");
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
      if (used_.count(key)) continue;
      const std::string near = nearest_name(key, std::vector<std::string>(used_.begin(), used_.end()));
      fail_key(key.c_str(),
               "is not a known key (" + (near.empty() ? "" : "did you mean '" + near + "'? ") + "see configs/README.md)");
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

// Every key of the file, in the file's order: v.key(name, member) for a
// key, v.section(name, body) around the keys of a section. `c` is a RunConfig
// to fill (parse) or a const one to write (to_yaml), so a key is named once.
template <typename Config, typename Visitor>
void visit_keys(Config& c, Visitor& v) {
  v.key("name", c.name);
  v.key("rules", c.rules);
  v.key("seed", c.seed);
  v.section("network", [&] {
    auto& n = c.network;
    v.key("input_planes", n.input_planes);
    v.key("blocks", n.blocks);
    v.key("channels", n.channels);
    v.key("se_channels", n.se_channels);
    v.key("value_channels", n.value_channels);
    v.key("value_hidden", n.value_hidden);
    v.key("moves_left_channels", n.moves_left_channels);
    v.key("moves_left_hidden", n.moves_left_hidden);
  });
  v.section("inference", [&] {
    auto& i = c.inference;
    v.key("device", i.device);
    v.key("precision", i.precision);
    v.key("threads", i.threads);
    v.key("max_batch", i.max_batch);
    v.key("max_wait_us", i.max_wait_us);
    v.key("cache_entries", i.cache_entries);
  });
  v.section("selfplay", [&] {
    auto& s = c.selfplay;
    v.key("games_per_generation", c.games_per_generation);
    v.key("parallel_games", s.parallel_games);
    v.key("games_per_shard", s.games_per_shard);
    v.key("full_playouts", s.full_playouts);
    v.key("cheap_playouts", s.cheap_playouts);
    v.key("full_search_share", s.full_search_share);
    for (const char* key : kRunMctsKeys) v.mcts_key(key, s.mcts);
    v.key("temperature", s.temperature);
    v.key("temperature_end", s.temperature_end);
    v.key("temperature_halflife", s.temperature_halflife);
    v.key("policy_target", s.policy_target);
    v.key("resign_threshold", s.resign_threshold);
    v.key("resign_consecutive", s.resign_consecutive);
    v.key("no_resign_share", s.no_resign_share);
    v.key("max_plies", s.max_plies);
    v.key("adjudicate_cp", s.adjudicate_cp);
    v.key("value_nodes", s.value_nodes);
    v.key("value_nnue", s.value_nnue);
  });
  v.section("warm_start", [&] {
    auto& w = c.warm_start;
    v.key("generations", w.generations);
    v.key("games_per_generation", w.games_per_generation);
    v.key("later_games", w.later_games);
    v.key("depth", w.teacher.depth);
    v.key("multipv", w.teacher.multipv);
    v.key("temperature_cp", w.teacher.temperature_cp);
    v.key("sample_plies", w.teacher.sample_plies);
    v.key("nnue", w.teacher.nnue);
  });
  v.section("tactics", [&] {
    v.key("positions", c.tactics.positions);
    v.key("max_moves", c.tactics.mates.max_moves);
    v.key("value", c.tactics.mates.value);
    v.key("longest_share", c.tactics.mates.longest_share);
    v.key("sparse_share", c.tactics.mates.sparse_share);
    v.key("sparse_pieces", c.tactics.mates.sparse_pieces);
  });
  v.section("training", [&] {
    auto& t = c.training;
    v.key("batch_size", t.batch_size);
    v.key("optimizer", t.optimizer);
    v.key("precision", t.precision);
    v.key("lr", t.lr);
    v.key("momentum", t.momentum);
    v.key("weight_decay", t.weight_decay);
    v.key("warmup_steps", t.warmup_steps);
    v.key("lr_schedule", t.lr_schedule);
    v.key("lr_decay_steps", t.lr_decay_steps);
    v.key("lr_decay_factor", t.lr_decay_factor);
    v.key("lr_min", t.lr_min);
    v.key("value_weight", t.value_weight);
    v.key("q_ratio", t.q_ratio);
    v.key("moves_left_weight", t.moves_left_weight);
    v.key("tactics_share", t.tactics_share);
    v.key("symmetries", t.symmetries);
    v.key("window_min_samples", t.window.min_samples);
    v.key("window_alpha", t.window.alpha);
    v.key("window_beta", t.window.beta);
    v.key("window_max_samples", t.window.max_samples);
    v.key("ema_halflife", t.ema_halflife);
    v.key("checkpoint_every", t.checkpoint_every);
    v.key("keep_checkpoints", t.keep_checkpoints);
    v.key("log_every", t.log_every);
    v.key("train_ratio", c.train_stage.train_ratio);
    v.key("min_steps", c.train_stage.min_steps);
    v.key("max_steps", c.train_stage.max_steps);
    v.key("device", c.train_stage.device);
    v.key("threads", c.train_stage.threads);
  });
  v.section("evaluation", [&] {
    auto& e = c.eval;
    v.key("playouts", e.playouts);
    for (const char* key : kRunMctsKeys) v.mcts_key(key, e.mcts);
    v.key("promotion", e.promotion);
    v.key("games_vs_best", e.games_vs_best);
    v.key("gate_score", e.gate_score);
    v.key("levels", e.levels);
    v.key("levels_per_generation", e.levels_per_generation);
    v.key("games_per_level", e.games_per_level);
    v.key("games_vs_initial", e.games_vs_initial);
    v.key("initial_until_score", e.initial_until_score);
    v.key("concurrency", e.concurrency);
    v.key("max_plies", e.max_plies);
    v.key("opening_min_plies", e.opening_min_plies);
    v.key("opening_max_plies", e.opening_max_plies);
  });
  v.section("loop", [&] {
    v.key("generations", c.loop.generations);
    v.key("max_minutes", c.loop.max_minutes);
  });
}

// Reads the keys visit_keys names; after each section's keys, finish()
// rejects unknown ones and `check(name, section)` validates the section.
template <typename Check>
class Reader {
 public:
  Reader(Section& top, Check& check, const std::function<void(const std::function<void()>&)>& wrap)
      : current_(&top), check_(check), wrap_(wrap) {}
  template <typename T>
  void key(const char* key, T& value) {
    current_->get(key, value);
  }
  void key(const char* key, std::vector<std::string>& value) { current_->get_list(key, value); }
  // A search setting, by its registry name (type and range checked there).
  void mcts_key(const char* key, MctsConfig& config) {
    std::string text;
    current_->get(key, text);
    if (text.empty()) return;
    MctsSettings settings;
    settings.config = config;
    wrap_([&] { set_mcts_setting(settings, key, text); });
    config = settings.config;
  }
  void key(const char* key, Rules& rules) {
    std::string name = rules.name();
    current_->get(key, name);
    wrap_([&] { rules = Rules::parse(name); });
  }
  template <typename Body>
  void section(const char* name, Body&& body) {
    Section sub = current_->sub(name);
    Section* outer = current_;
    current_ = &sub;
    body();
    current_ = outer;
    sub.finish();
    check_(std::string_view(name), sub);
  }

 private:
  Section* current_;
  Check& check_;
  const std::function<void(const std::function<void()>&)>& wrap_;
};

// Writes the keys visit_keys names, in the same layout.
class Writer {
 public:
  explicit Writer(YAML::Emitter& out) : out_(out) {}
  template <typename T>
  void key(const char* key, const T& value) {
    out_ << YAML::Key << key << YAML::Value << value;
  }
  void key(const char* key, const std::vector<std::string>& value) {
    out_ << YAML::Key << key << YAML::Value << YAML::Flow << value;
  }
  void key(const char* key, const Rules& rules) { out_ << YAML::Key << key << YAML::Value << rules.name(); }
  // A search setting, written with its registry type (a number, a count or
  // true/false), as the fields it replaced were.
  void mcts_key(const char* key, const MctsConfig& config) {
    MctsSettings settings;
    settings.config = config;
    const std::string text = get_mcts_setting(settings, key);
    out_ << YAML::Key << key << YAML::Value;
    switch (setting_type(key)) {
      case SettingType::kBool: out_ << (text == "true"); break;
      case SettingType::kInteger: out_ << std::stoull(text); break;
      case SettingType::kNumber: out_ << std::stof(text); break;
    }
  }
  template <typename Body>
  void section(const char* name, Body&& body) {
    out_ << YAML::Key << name << YAML::Value << YAML::BeginMap;
    body();
    out_ << YAML::EndMap;
  }

 private:
  YAML::Emitter& out_;
};

YAML::Node load_yaml(const std::string& text, const std::string& source) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument("config " + source + ": not valid YAML: " + e.what());
  }
}

// The overlay's keys over its base's: mappings merge key by key, any other
// value (a number, a list) replaces the base's.
YAML::Node merged(const YAML::Node& base, const YAML::Node& overlay) {
  if (!base || !base.IsMap() || !overlay.IsMap()) return YAML::Clone(overlay);
  YAML::Node out = YAML::Clone(base);
  for (const auto& item : overlay) {
    const std::string key = item.first.as<std::string>();
    out[key] = merged(out[key], item.second);
  }
  return out;
}

// A config file, with `base: FILE` (relative to the file's folder) read
// first and this file's keys laid over it. `chain` collects the files read,
// this one first, so a loop of bases is caught.
YAML::Node load_with_bases(const std::string& path, std::vector<std::string>& chain) {
  if (std::find(chain.begin(), chain.end(), path) != chain.end())
    throw std::invalid_argument("config " + chain.front() + ": base files form a loop at " + path);
  if (chain.size() >= 8) throw std::invalid_argument("config " + chain.front() + ": more than 8 base files in a chain");
  chain.push_back(path);
  std::string text;
  try {
    text = ultima::read_file(path);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("config: ") + e.what());
  }
  YAML::Node root = load_yaml(text, path);
  if (!root.IsMap() || !root["base"]) return root;
  std::string base;
  try {
    base = root["base"].as<std::string>();
  } catch (const YAML::Exception&) {
    throw std::invalid_argument("config " + path + ": base must be a file name");
  }
  if (base.empty()) throw std::invalid_argument("config " + path + ": base must be a file name");
  const std::size_t slash = path.find_last_of('/');
  const std::string folder = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string base_path = base.front() == '/' ? base : folder + base;
  root.remove("base");
  return merged(load_with_bases(base_path, chain), root);
}

}  // namespace

RunConfig RunConfig::parse(const std::string& text, const std::string& source) {
  const YAML::Node root = load_yaml(text, source);
  if (root.IsMap() && root["base"])
    throw std::invalid_argument("config " + source + ": base: names a file, so it works only in a config file");
  return from_yaml(root, source);
}

RunConfig RunConfig::from_yaml(const YAML::Node& file, const std::string& source) {
  RunConfig c;
  c.source = source;
  if (!file || file.IsNull()) throw std::invalid_argument("config " + source + ": empty");
  YAML::Node root = YAML::Clone(file);
  // Keys renamed to the tree search's own names: run directories started
  // before keep their config.yaml readable.
  for (const auto& [section, old_name, new_name] :
       {std::tuple{"selfplay", "mcts_batch", "batch"}, std::tuple{"selfplay", "fpu_reduction", "fpu"},
        std::tuple{"evaluation", "mcts_batch", "batch"}}) {
    if (!root.IsMap() || !root[section] || !root[section].IsMap() || !root[section][old_name]) continue;
    if (root[section][new_name])
      throw std::invalid_argument("config " + source + ": " + section + "." + old_name + " is the old name of " +
                                  section + "." + new_name + "; give only " + new_name);
    YAML::Node sub = root[section];
    sub[new_name] = sub[old_name];
    sub.remove(old_name);
  }
  const std::function<void(const std::function<void()>&)> wrap = [&](const std::function<void()>& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      throw std::invalid_argument(what.rfind("config ", 0) == 0 ? what : "config " + source + ": " + what);
    }
  };
  // The checks of a section, once its keys are read.
  auto check = [&](std::string_view section, Section& sec) {
    if (section == "network") {
      c.network = c.network.completed();
      if (nn::encoding_for_planes(c.network.input_planes) == 0)
        sec.fail_key("input_planes", "must be " + nn::input_plane_choices() + ", not " +
                                         std::to_string(c.network.input_planes));
      wrap([&] { c.network.validate(); });
    } else if (section == "inference") {
      if (!nn::valid_device(c.inference.device))
        sec.fail_key("device", "must be cpu, cuda or cuda:N, not '" + c.inference.device + "'");
      const std::string& p = c.inference.precision;
      if (!nn::valid_precision(p))
        sec.fail_key("precision", "must be auto, fp32, fp16 or bf16, not '" + p + "'");
      if (c.inference.threads < 0) sec.fail_key("threads", "must not be negative");
      if (c.inference.max_batch < 1) sec.fail_key("max_batch", "must be at least 1");
      if (c.inference.max_wait_us < 0) sec.fail_key("max_wait_us", "must not be negative");
    } else if (section == "selfplay") {
      auto& s = c.selfplay;
      s.rules = c.rules;
      if (c.games_per_generation < 1) sec.fail_key("games_per_generation", "must be at least 1");
      wrap([&] { s.validate(); });
    } else if (section == "warm_start") {
      if (c.warm_start.generations < 0) sec.fail_key("generations", "must not be negative");
      if (c.warm_start.games_per_generation < 0) sec.fail_key("games_per_generation", "must not be negative");
      if (c.warm_start.later_games < 0) sec.fail_key("later_games", "must not be negative");
      wrap([&] { c.warm_start.teacher.validate(); });
    } else if (section == "tactics") {
      if (c.tactics.positions < 0) sec.fail_key("positions", "must not be negative");
      wrap([&] { c.tactics.mates.validate(); });
    } else if (section == "training") {
      auto& t = c.training;
      t.seed = c.seed;
      wrap([&] { t.validate(); });
      if (!(c.train_stage.train_ratio > 0)) sec.fail_key("train_ratio", "must be positive");
      if (c.train_stage.max_steps < c.train_stage.min_steps) sec.fail_key("max_steps", "must be at least min_steps");
      if (c.train_stage.threads < 0) sec.fail_key("threads", "must not be negative");
      if (!nn::valid_device(c.train_stage.device))
        sec.fail_key("device", "must be cpu, cuda or cuda:N, not '" + c.train_stage.device + "'");
      if (t.precision == "fp16" && c.train_stage.device.rfind("cuda", 0) != 0)
        sec.fail_key("precision", "fp16 needs a cuda device (its loss scaling is for GPUs); use bf16 or fp32 on " +
                                      c.train_stage.device);
    } else if (section == "evaluation") {
      auto& e = c.eval;
      if (e.playouts < 1) sec.fail_key("playouts", "must be at least 1");
      if (e.promotion != "gating" && e.promotion != "continuous")
        sec.fail_key("promotion", "must be gating or continuous, not '" + e.promotion + "'");
      if (e.games_vs_best < 0 || e.games_per_level < 0 || e.games_vs_initial < 0)
        sec.fail_key("games_vs_best", "and the other game counts must not be negative");
      if (e.promotion == "gating" && e.games_vs_best < 2)
        sec.fail_key("games_vs_best", "must be at least 2 for gating");
      if (!(e.gate_score >= 0 && e.gate_score <= 1)) sec.fail_key("gate_score", "must be in [0, 1]");
      if (e.levels_per_generation < 0) sec.fail_key("levels_per_generation", "must not be negative");
      if (!(e.initial_until_score >= 0 && e.initial_until_score <= 1))
        sec.fail_key("initial_until_score", "must be in [0, 1]");
      if (e.concurrency < 1) sec.fail_key("concurrency", "must be at least 1");
      if (e.max_plies < 1) sec.fail_key("max_plies", "must be at least 1");
      if (e.opening_min_plies < 0 || e.opening_max_plies < e.opening_min_plies)
        sec.fail_key("opening_max_plies", "must be at least opening_min_plies (both not negative)");
      for (std::size_t i = 0; i < e.levels.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
          if (e.levels[i] == e.levels[j]) sec.fail_key("levels", "names level '" + e.levels[i] + "' twice");
      // The levels folder is read once, not once per name.
      std::vector<Level> known;
      if (!e.levels.empty()) wrap([&] { known = load_levels(); });
      for (const std::string& level : e.levels) {
        Level l;
        const auto found = std::find_if(known.begin(), known.end(), [&](const Level& k) { return k.name == level; });
        if (found != known.end()) l = *found;
        else wrap([&] { l = find_level(level); });  // throws, naming the levels there are
        if (!l.has_elo) sec.fail_key("levels", "names level '" + level + "', which has no measured elo");
      }
    } else if (section == "loop") {
      if (c.loop.generations < 1) sec.fail_key("generations", "must be at least 1");
      if (c.loop.max_minutes < 0) sec.fail_key("max_minutes", "must not be negative");
    }
  };
  Section top(root, "", c.source);
  Reader<decltype(check)> reader(top, check, wrap);
  visit_keys(c, reader);
  top.finish();
  return c;
}

namespace {
void flatten(const YAML::Node& node, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (node.IsMap()) {
    for (const auto& item : node) flatten(item.second, prefix + item.first.as<std::string>() + ".", out);
    return;
  }
  YAML::Emitter text;
  text << YAML::Flow << node;
  out[prefix.substr(0, prefix.size() - 1)] = text.c_str();
}
}  // namespace

std::vector<std::string> RunConfig::differing_keys(const RunConfig& other) const {
  std::map<std::string, std::string> mine, theirs;
  flatten(YAML::Load(to_yaml()), "", mine);
  flatten(YAML::Load(other.to_yaml()), "", theirs);
  std::vector<std::string> keys;
  for (const auto& [key, value] : mine) {
    const auto it = theirs.find(key);
    if (it == theirs.end() || it->second != value) keys.push_back(key);
  }
  for (const auto& [key, value] : theirs)
    if (!mine.count(key)) keys.push_back(key);
  return keys;
}

RunConfig RunConfig::load(const std::string& path) {
  std::vector<std::string> chain;
  const YAML::Node root = load_with_bases(path, chain);
  std::string source = path;
  for (std::size_t i = 1; i < chain.size(); ++i) source += (i == 1 ? " (on " : ", on ") + chain[i];
  if (chain.size() > 1) source += ")";
  return from_yaml(root, source);
}

std::string RunConfig::to_yaml() const {
  YAML::Emitter out;
  out << YAML::BeginMap;
  Writer writer(out);
  visit_keys(*this, writer);
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

const std::vector<std::string>& run_mcts_keys() {
  static const std::vector<std::string> keys(std::begin(kRunMctsKeys), std::end(kRunMctsKeys));
  return keys;
}

MctsConfig eval_mcts_defaults() {
  MctsConfig c;
  c.gumbel = true;
  c.gumbel_rescale_q = false;
  c.gumbel_c_scale = 1.0f;
  c.gumbel_noise_scale = 1.0f;
  c.mate_scan_root = false;
  c.policy_temperature = 1;
  c.info_interval_ms = 1 << 30;
  return c;
}

}  // namespace ultima::loop
