#include "engine/mcts/settings.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <variant>

namespace ultima {
namespace {

// A pointer to the member a setting sets: of MctsConfig, MctsLimits or
// MctsSettings itself.
using Field = std::variant<int MctsConfig::*, float MctsConfig::*, bool MctsConfig::*, std::uint64_t MctsConfig::*,
                           std::uint64_t MctsLimits::*, std::int64_t MctsLimits::*, double MctsSettings::*>;
static_assert(std::is_same_v<std::size_t, std::uint64_t>, "max_tree_nodes is set through its uint64_t field");

struct Declaration {
  const char* name;
  const char* uci_name;
  Field field;
  double min, max;
  const char* help;
};

constexpr double kHuge = 1e15;  // "no upper bound" for counts and times

const std::vector<Declaration>& declarations() {
  static const std::vector<Declaration> table = {
      {"threads", "MctsThreads", &MctsConfig::threads, 1, 256, "search threads"},
      {"batch", "MctsBatch", &MctsConfig::batch_size, 1, 1024, "leaves gathered per evaluator call, per thread"},
      {"max_collisions", "", &MctsConfig::max_collisions, 0, 1 << 20,
       "collisions per batch before it goes out short (0: the batch size)"},
      {"cpuct", "", &MctsConfig::cpuct, 0, 100, "PUCT exploration constant"},
      {"cpuct_base", "", &MctsConfig::cpuct_base, 1, 1e9, "visits scale of cpuct's growth"},
      {"cpuct_factor", "", &MctsConfig::cpuct_factor, 0, 100, "cpuct's log growth (0: a constant cpuct)"},
      {"fpu", "", &MctsConfig::fpu_reduction, -2, 2, "first-play urgency: value reduction of unvisited moves"},
      {"fpu_root", "", &MctsConfig::fpu_reduction_root, -2, 2, "first-play urgency reduction at the root"},
      {"policy_temperature", "", &MctsConfig::policy_temperature, 0.01, 100, "priors to the power 1/T"},
      {"virtual_loss", "", &MctsConfig::virtual_loss, 0, 100, "lost visits counted per playout in flight"},
      {"noise_alpha", "", &MctsConfig::noise_alpha, 0.001, 100, "Dirichlet noise alpha"},
      {"noise_epsilon", "", &MctsConfig::noise_epsilon, 0, 1, "Dirichlet noise share of the root priors (0: none)"},
      {"seed", "", &MctsConfig::seed, 0, kHuge, "seed of noise and sampling (players use their per-move seed)"},
      {"stop_when_proven", "", &MctsConfig::stop_when_proven, 0, 1, "stop once the root's result is proven"},
      {"mate_scan", "MateScan", &MctsConfig::mate_scan, 0, 1,
       "prove mates in one and two with the move generator: a move that wins at once in every expanded position, "
       "a position whose every move allows one, a mate in two at the root"},
      {"mate_scan_root", "", &MctsConfig::mate_scan_root, 0, 1,
       "with mate_scan: check every root move for a mate in two (false: the tree alone finds one)"},
      {"gumbel", "", &MctsConfig::gumbel, 0, 1, "Gumbel root with sequential halving in place of PUCT"},
      {"gumbel_actions", "", &MctsConfig::gumbel_actions, 1, 1024, "moves sampled at a Gumbel root"},
      {"gumbel_c_visit", "", &MctsConfig::gumbel_c_visit, 0, 1e6, "sigma's c_visit"},
      {"gumbel_c_scale", "", &MctsConfig::gumbel_c_scale, 1e-6, 1e6, "sigma's c_scale: how far Q moves the logits"},
      {"gumbel_rescale_q", "", &MctsConfig::gumbel_rescale_q, 0, 1,
       "min-max normalize Q at the Gumbel root (false: Q from [-1, 1])"},
      {"gumbel_noise", "", &MctsConfig::gumbel_noise_scale, 0, 100,
       "scale of the Gumbel root's noise (0: the strongest moves, deterministic)"},
      {"gumbel_planned", "", &MctsConfig::gumbel_planned_playouts, 1, kHuge,
       "playouts a Gumbel root plans for when no playout limit is set"},
      {"multipv", "", &MctsConfig::multipv, 1, 256, "root moves reported with a line"},
      {"info_ms", "", &MctsConfig::info_interval_ms, 1, 1 << 30, "milliseconds between progress reports"},
      {"info_playouts", "", &MctsConfig::info_interval_playouts, 0, kHuge,
       "playouts between progress reports (0: none)"},
      {"playouts", "", &MctsLimits::playouts, 0, kHuge, "new playouts per search (0: no limit)"},
      {"visits", "", &MctsLimits::visits, 0, kHuge, "root visits per search, reused ones included (0: no limit)"},
      {"movetime", "", &MctsLimits::movetime_ms, 0, kHuge, "milliseconds per search (0: no limit)"},
      {"max_tree_nodes", "", &MctsLimits::max_tree_nodes, 0, kHuge, "nodes the tree may hold (0: no bound)"},
      {"temperature", "", &MctsSettings::temperature, 0, 100,
       "move choice by visits^(1/T) (0: the most visited move)"},
  };
  return table;
}

template <class T>
constexpr SettingType type_of() {
  if constexpr (std::is_same_v<T, bool>) return SettingType::kBool;
  else if constexpr (std::is_integral_v<T>) return SettingType::kInteger;
  else return SettingType::kNumber;
}

// The member `field` points to, in `s`.
template <class F>
auto& member_of(MctsSettings& s, F field) {
  using Owner = typename decltype([]<class O, class T>(T O::*) { return std::type_identity<O>{}; }(field))::type;
  if constexpr (std::is_same_v<Owner, MctsConfig>) return s.config.*field;
  else if constexpr (std::is_same_v<Owner, MctsLimits>) return s.limits.*field;
  else return s.*field;
}

template <class T>
std::string text_of(T value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(value);
  } else {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", static_cast<double>(value));
    return buffer;
  }
}

// The name errors show: the setting's, or the UCI option's when set through it.
thread_local std::string shown;

[[noreturn]] void bad_value(const Declaration& d, const std::string& value, const std::string& problem) {
  throw std::invalid_argument((shown.empty() ? "MCTS setting '" + std::string(d.name) + "'" : shown) + ": " +
                              problem + ", got '" + value + "'");
}

template <class T>
T parse_as(const Declaration& d, const std::string& text) {
  if constexpr (std::is_same_v<T, bool>) {
    if (text == "true" || text == "1" || text == "on") return true;
    if (text == "false" || text == "0" || text == "off") return false;
    bad_value(d, text, "expected true or false");
  } else {
    double value = 0;
    if constexpr (std::is_integral_v<T>) {
      const auto range = [&] {
        return "expected an integer from " + text_of(static_cast<long long>(d.min)) + " to " +
               (d.max >= kHuge ? std::string("any") : text_of(static_cast<long long>(d.max)));
      };
      if (!text.empty() && text[0] == '-' && std::is_unsigned_v<T>) bad_value(d, text, range());
      T whole{};
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), whole);
      if (ec != std::errc() || ptr != text.data() + text.size() || text.empty())
        bad_value(d, text, "expected an integer");
      value = static_cast<double>(whole);
      if (value < d.min || (d.max < kHuge && value > d.max)) bad_value(d, text, range());
      return whole;
    } else {
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc() || ptr != text.data() + text.size() || text.empty() || !std::isfinite(value))
        bad_value(d, text, "expected a number");
      if (value < d.min || value > d.max)
        bad_value(d, text, "expected a number from " + text_of(d.min) + " to " + text_of(d.max));
      return static_cast<T>(value);
    }
  }
}

const Declaration& find(const std::string& key) {
  for (const Declaration& d : declarations())
    if (key == d.name) return d;
  std::vector<std::string> names;
  for (const Declaration& d : declarations()) names.push_back(d.name);
  const std::string near = nearest_name(key, names);
  throw std::invalid_argument("unknown MCTS setting '" + key + "'" +
                              (near.empty() ? " (see mcts:help)" : " (did you mean '" + near + "'?)"));
}

}  // namespace

const char* setting_type_name(SettingType type) {
  switch (type) {
    case SettingType::kBool: return "true or false";
    case SettingType::kInteger: return "integer";
    case SettingType::kNumber: return "number";
  }
  return "?";
}

const std::vector<MctsSettingInfo>& mcts_setting_list() {
  static const std::vector<MctsSettingInfo> list = [] {
    std::vector<MctsSettingInfo> out;
    MctsSettings defaults;
    for (const Declaration& d : declarations()) {
      std::visit(
          [&](auto field) {
            using T = std::remove_reference_t<decltype(member_of(defaults, field))>;
            out.push_back({d.name, d.uci_name, type_of<T>(), text_of(member_of(defaults, field)), d.min, d.max,
                           d.help});
          },
          d.field);
    }
    return out;
  }();
  return list;
}

void set_mcts_setting(MctsSettings& settings, const std::string& key, const std::string& value,
                      const std::string& shown_name) {
  const Declaration& d = find(key);
  shown = shown_name;
  std::visit(
      [&](auto field) {
        auto& target = member_of(settings, field);
        target = parse_as<std::remove_reference_t<decltype(target)>>(d, value);
      },
      d.field);
}

std::string get_mcts_setting(const MctsSettings& settings, const std::string& key) {
  const Declaration& d = find(key);
  MctsSettings copy = settings;
  return std::visit([&](auto field) { return text_of(member_of(copy, field)); }, d.field);
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

std::string mcts_settings_help() {
  std::string out;
  for (const MctsSettingInfo& s : mcts_setting_list()) {
    char line[256];
    std::string range;
    const auto bound = [&](double v) {
      return s.type == SettingType::kInteger ? text_of(static_cast<long long>(v)) : text_of(v);
    };
    if (s.type != SettingType::kBool) range = ", " + bound(s.min) + ".." + (s.max >= kHuge ? "" : bound(s.max));
    std::snprintf(line, sizeof line, "    %-20s %s (%s, default %s%s)\n", s.name.c_str(), s.help.c_str(),
                  setting_type_name(s.type), s.default_text.c_str(), range.c_str());
    out += line;
  }
  return out;
}

std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const std::string& c : candidates) {
    // Levenshtein distance, one row at a time.
    std::vector<std::size_t> row(c.size() + 1);
    for (std::size_t j = 0; j <= c.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= word.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= c.size(); ++j) {
        const std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (word[i - 1] == c[j - 1] ? 0 : 1)});
        diagonal = up;
      }
    }
    if (row[c.size()] < best_distance) {
      best_distance = row[c.size()];
      best = c;
    }
  }
  // A typo, not another word: at most a third of the letters wrong.
  return best_distance <= std::max<std::size_t>(1, word.size() / 3) ? best : "";
}

}  // namespace ultima
