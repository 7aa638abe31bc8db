#include "engine/base/text.h"
#include "engine/rules/rule_set.h"

#include <array>
#include <stdexcept>
#include <type_traits>

namespace ultima {
namespace {

// One switch: its name, its values' names, and access to its field.
struct Switch {
  const char* name;
  std::vector<const char*> values;  // index = enum value
  int (*get)(const Rules&);
  void (*set)(Rules&, int);
};

template <auto Field>
int get_field(const Rules& r) { return static_cast<int>(r.*Field); }
template <auto Field>
void set_field(Rules& r, int v) {
  using E = std::remove_reference_t<decltype(r.*Field)>;
  r.*Field = static_cast<E>(v);
}

const std::vector<Switch>& switches() {
  static const std::vector<Switch> table = {
      {"setup", {"rotated", "chess-kings", "mirror"}, get_field<&Rules::setup>,
       set_field<&Rules::setup>},
      {"leaper", {"multi", "single"}, get_field<&Rules::leaper>, set_field<&Rules::leaper>},
      {"chameleon", {"combined", "shape"}, get_field<&Rules::chameleon>,
       set_field<&Rules::chameleon>},
      {"removal", {"allowed", "forbidden"}, get_field<&Rules::removal>,
       set_field<&Rules::removal>},
      {"stalemate", {"loss", "draw"}, get_field<&Rules::stalemate>,
       set_field<&Rules::stalemate>},
      {"objective", {"checkmate", "king-capture"}, get_field<&Rules::objective>,
       set_field<&Rules::objective>},
      {"frozen-immobilizer", {"still-freezes", "neutralized"},
       get_field<&Rules::frozen_immobilizer>, set_field<&Rules::frozen_immobilizer>},
  };
  return table;
}

struct Preset {
  const char* name;
  Rules rules;
};

const std::vector<Preset>& presets() {
  static const std::vector<Preset> table = [] {
    std::vector<Preset> t;
    t.push_back({kDefaultRules, Rules{}});
    Rules r1962;
    r1962.setup = Setup::kChessKings;
    r1962.leaper = LeaperRule::kSingle;
    t.push_back({"abbott1962", r1962});
    Rules cambridge;
    cambridge.setup = Setup::kMirror;
    cambridge.chameleon = ChameleonRule::kShape;
    cambridge.removal = RemovalRule::kForbidden;
    cambridge.frozen_immobilizer = FrozenImmobilizerRule::kNeutralized;
    t.push_back({"cambridge", cambridge});
    Rules boardspace;
    boardspace.stalemate = StalemateRule::kDraw;
    t.push_back({"boardspace", boardspace});
    Rules zillions;
    zillions.objective = Objective::kKingCapture;
    t.push_back({"zillions", zillions});
    return t;
  }();
  return table;
}

std::string list_names(const std::vector<const char*>& names) {
  std::string out;
  for (const char* n : names) out += (out.empty() ? "" : "|") + std::string(n);
  return out;
}

}  // namespace

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const Preset& p : presets()) n.push_back(p.name);
    return n;
  }();
  return names;
}

std::vector<std::string> switch_descriptions() {
  std::vector<std::string> out;
  for (const Switch& s : switches()) out.push_back(std::string(s.name) + ": " + list_names(s.values));
  return out;
}

Rules Rules::preset(std::string_view name) {
  for (const Preset& p : presets())
    if (name == p.name) return p.rules;
  std::string known;
  for (const std::string& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown rule preset '" + std::string(name) + "' (known: " + known +
                              ")");
}

Rules Rules::parse(std::string_view text) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : text) {
    if (c == ',') {
      parts.push_back(trim(current));
      current.clear();
    } else {
      current += c;
    }
  }
  parts.push_back(trim(current));
  if (parts[0].empty()) throw std::invalid_argument("empty rule set name");
  Rules rules = preset(parts[0]);
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const size_t eq = part.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("rule switch '" + part + "' is not of the form switch=value");
    const std::string key = trim(std::string_view(part).substr(0, eq));
    const std::string value = trim(std::string_view(part).substr(eq + 1));
    const Switch* sw = nullptr;
    for (const Switch& s : switches())
      if (key == s.name) sw = &s;
    if (!sw) {
      std::string known;
      for (const Switch& s : switches()) known += (known.empty() ? "" : ", ") + std::string(s.name);
      throw std::invalid_argument("unknown rule switch '" + key + "' (known: " + known + ")");
    }
    int index = -1;
    for (size_t v = 0; v < sw->values.size(); ++v)
      if (value == sw->values[v]) index = static_cast<int>(v);
    if (index < 0)
      throw std::invalid_argument("unknown value '" + value + "' for rule switch '" + key +
                                  "' (known: " + list_names(sw->values) + ")");
    sw->set(rules, index);
  }
  return rules;
}

std::string Rules::name() const {
  for (const Preset& p : presets())
    if (p.rules == *this) return p.name;
  std::string out = presets()[0].name;
  const Rules base = presets()[0].rules;
  for (const Switch& s : switches())
    if (s.get(*this) != s.get(base)) out += "," + std::string(s.name) + "=" + s.values[s.get(*this)];
  return out;
}

std::string Rules::start_fen() const {
  switch (setup) {
    case Setup::kChessKings: return "clxwkxli/pppppppp/8/8/8/8/PPPPPPPP/ILXWKXLC w 0 1";
    case Setup::kMirror: return "ilxkwxlc/pppppppp/8/8/8/8/PPPPPPPP/ILXKWXLC w 0 1";
    case Setup::kRotated: break;
  }
  return "clxwkxli/pppppppp/8/8/8/8/PPPPPPPP/ILXKWXLC w 0 1";
}

}  // namespace ultima
