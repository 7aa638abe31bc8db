#include "engine/mcts/settings.h"

#include <charconv>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <type_traits>

namespace ultima {
namespace {

template <class T>
T parse_number(const std::string& key, const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty())
    throw std::invalid_argument("MCTS setting '" + key + "': '" + text + "' is not a valid number");
  return value;
}

bool parse_bool(const std::string& key, const std::string& text) {
  if (text == "true" || text == "1" || text == "on") return true;
  if (text == "false" || text == "0" || text == "off") return false;
  throw std::invalid_argument("MCTS setting '" + key + "': '" + text + "' is not true or false");
}

struct Setting {
  const char* name;
  const char* help;
  std::function<void(MctsSettings&, const std::string& key, const std::string& value)> set;
};

// A setter for a member of MctsConfig or MctsLimits, parsed as its own type.
template <class Owner, class T>
auto member(T Owner::*field) {
  return [field](MctsSettings& s, const std::string& key, const std::string& value) {
    Owner* owner;
    if constexpr (std::is_same_v<Owner, MctsConfig>) owner = &s.config;
    else owner = &s.limits;
    if constexpr (std::is_same_v<T, bool>) owner->*field = parse_bool(key, value);
    else owner->*field = parse_number<T>(key, value);
  };
}

const std::vector<Setting>& settings() {
  static const std::vector<Setting> table = {
      {"threads", "search threads (1)", member(&MctsConfig::threads)},
      {"batch", "leaves per evaluator call per thread (1)", member(&MctsConfig::batch_size)},
      {"max_collisions", "collisions per batch before it goes out short (0: batch)",
       member(&MctsConfig::max_collisions)},
      {"cpuct", "PUCT exploration constant (1.745)", member(&MctsConfig::cpuct)},
      {"cpuct_base", "visits scale of cpuct's growth (38739)", member(&MctsConfig::cpuct_base)},
      {"cpuct_factor", "cpuct's log growth, 0 for a constant (3.894)", member(&MctsConfig::cpuct_factor)},
      {"fpu", "first-play urgency reduction (0.33)", member(&MctsConfig::fpu_reduction)},
      {"fpu_root", "first-play urgency reduction at the root (0.33)", member(&MctsConfig::fpu_reduction_root)},
      {"policy_temperature", "priors to the power 1/T (1)", member(&MctsConfig::policy_temperature)},
      {"virtual_loss", "lost visits per playout in flight (1)", member(&MctsConfig::virtual_loss)},
      {"noise_alpha", "Dirichlet noise alpha (0.15)", member(&MctsConfig::noise_alpha)},
      {"noise_epsilon", "Dirichlet noise share of the root priors, 0 for none (0)",
       member(&MctsConfig::noise_epsilon)},
      {"seed", "seed of noise and sampling (0; players use their per-move seed)", member(&MctsConfig::seed)},
      {"stop_when_proven", "stop once the root's result is proven (true)", member(&MctsConfig::stop_when_proven)},
      {"mate_scan", "look for a move that wins at once in every expanded position (false)",
       member(&MctsConfig::mate_scan)},
      {"gumbel", "Gumbel root with sequential halving (false)", member(&MctsConfig::gumbel)},
      {"gumbel_actions", "moves sampled at a Gumbel root (16)", member(&MctsConfig::gumbel_actions)},
      {"gumbel_c_visit", "sigma's c_visit (50)", member(&MctsConfig::gumbel_c_visit)},
      {"gumbel_c_scale", "sigma's c_scale (0.1)", member(&MctsConfig::gumbel_c_scale)},
      {"gumbel_rescale_q", "min-max normalize Q at the Gumbel root (true)", member(&MctsConfig::gumbel_rescale_q)},
      {"gumbel_noise", "scale of the Gumbel noise, 0 for none (1)", member(&MctsConfig::gumbel_noise_scale)},
      {"gumbel_planned", "playouts a Gumbel root plans for without a playout limit (800)",
       member(&MctsConfig::gumbel_planned_playouts)},
      {"multipv", "root moves reported with a line (1)", member(&MctsConfig::multipv)},
      {"info_ms", "milliseconds between progress reports (1000)", member(&MctsConfig::info_interval_ms)},
      {"info_playouts", "playouts between progress reports, 0 for none (0)",
       member(&MctsConfig::info_interval_playouts)},
      {"playouts", "new playouts per search (0: none)", member(&MctsLimits::playouts)},
      {"visits", "root visits per search, reused ones included (0: none)", member(&MctsLimits::visits)},
      {"movetime", "milliseconds per search (0: none)", member(&MctsLimits::movetime_ms)},
      {"max_tree_nodes", "nodes the tree may hold (0: no bound)", member(&MctsLimits::max_tree_nodes)},
      {"temperature", "move choice by visits^(1/T), 0 for the best move (0)",
       [](MctsSettings& s, const std::string& key, const std::string& value) {
         s.temperature = parse_number<double>(key, value);
       }},
  };
  return table;
}

}  // namespace

std::vector<MctsSettingInfo> mcts_setting_list() {
  std::vector<MctsSettingInfo> out;
  for (const Setting& s : settings()) out.push_back({s.name, s.help});
  return out;
}

void set_mcts_setting(MctsSettings& target, const std::string& key, const std::string& value) {
  for (const Setting& s : settings())
    if (key == s.name) return s.set(target, key, value);
  throw std::invalid_argument("unknown MCTS setting '" + key + "'");
}

MctsSettings parse_mcts_settings(const std::string& pairs) {
  MctsSettings out;
  std::stringstream in(pairs);
  std::string pair;
  while (std::getline(in, pair, ',')) {
    const std::size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("MCTS settings: '" + pair + "' is not key=value");
    set_mcts_setting(out, pair.substr(0, eq), pair.substr(eq + 1));
  }
  return out;
}

}  // namespace ultima
