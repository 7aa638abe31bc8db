#include "engine/play/level.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "engine/base/paths.h"
#include "engine/mcts/settings.h"
#include "engine/play/yaml_map.h"
#include "engine/rules/movegen.h"

namespace ultima {
namespace {

using detail::read_as;

// Sets one level key; false when the key is unknown.
bool set_key(Level& level, const std::string& key, const YAML::Node& value, const std::string& origin,
             const std::string& base_dir = "") {
  auto non_negative = [&](auto v) {
    if (v < 0) throw std::invalid_argument(origin + ": '" + key + "' must not be negative");
    return v;
  };
  if (key == "name") {
    level.name = read_as<std::string>(value, key, origin, "text");
  } else if (key == "description") {
    level.description = read_as<std::string>(value, key, origin, "text");
  } else if (key == "style") {
    level.style = read_as<std::string>(value, key, origin, "text");
  } else if (key == "order") {
    level.order = read_as<int>(value, key, origin, "an integer");
  } else if (key == "depth") {
    level.depth = non_negative(read_as<int>(value, key, origin, "an integer"));
    if (level.depth > kMaxPly - 2) throw std::invalid_argument(origin + ": 'depth' is above " + std::to_string(kMaxPly - 2));
  } else if (key == "nodes") {
    level.nodes = non_negative(read_as<long long>(value, key, origin, "an integer"));
  } else if (key == "movetime_ms") {
    level.movetime_ms = non_negative(read_as<long long>(value, key, origin, "an integer"));
  } else if (key == "eval_noise_cp" || key == "noise") {
    level.eval_noise_cp = non_negative(read_as<int>(value, key, origin, "an integer"));
  } else if (key == "blunder_rate" || key == "blunder") {
    level.blunder_rate = read_as<double>(value, key, origin, "a number");
    if (level.blunder_rate < 0 || level.blunder_rate > 1)
      throw std::invalid_argument(origin + ": 'blunder_rate' must be from 0 to 1");
  } else if (key == "skill") {
    level.skill = read_as<int>(value, key, origin, "an integer");
    if (level.skill < 0 || level.skill > Level::kMaxSkill)
      throw std::invalid_argument(origin + ": 'skill' must be from 0 to " + std::to_string(Level::kMaxSkill));
  } else if (key == "elo") {
    level.elo = read_as<int>(value, key, origin, "an integer");
    level.has_elo = true;
  } else if (key == "threads") {
    level.threads = read_as<int>(value, key, origin, "an integer");
    if (level.threads < 1 || level.threads > 256)
      throw std::invalid_argument(origin + ": 'threads' must be from 1 to 256");
  } else if (key == "hash_mb") {
    level.hash_mb = non_negative(read_as<int>(value, key, origin, "an integer"));
  } else if (key == "material_only") {
    // The plain material searcher: every weight but the piece values off.
    if (read_as<bool>(value, key, origin, "true or false")) {
      level.weights.mobility = level.weights.king_routes = level.weights.king_proximity = 0;
      level.weights.tempo = 0;
    }
  } else if (key == "weights") {
    level.weights.apply_yaml(YAML::Dump(value), origin + " (weights)");
  } else if (key == "nnue") {
    level.nnue = read_as<std::string>(value, key, origin, "a file name, default or none");
    try {
      level.network = load_nnue(level.nnue, base_dir);
    } catch (const std::exception& e) {
      throw std::invalid_argument(origin + ": 'nnue': " + e.what());
    }
  } else {
    return false;
  }
  return true;
}

struct KeyHelp {
  const char* name;
  const char* help;
};

// The keys a search: spec may set, in the order of the help text.
const std::vector<KeyHelp>& spec_keys() {
  static const std::vector<KeyHelp> keys = {
      {"depth", "plies searched, quiescence on top (0: no depth limit)"},
      {"nodes", "nodes per move (0: no node limit)"},
      {"movetime_ms", "milliseconds per move (0: no time limit)"},
      {"eval_noise_cp", "+- centipawns of noise on every evaluation (also: noise)"},
      {"blunder_rate", "share of moves played at random, 0 to 1 (also: blunder)"},
      {"skill", "0 to 20: below 20, picks among the best lines with a weakness that grows as skill falls"},
      {"hash_mb", "transposition table megabytes"},
      {"threads", "search threads (Lazy SMP), 1 to 256"},
      {"material_only", "true: piece values alone, every other weight off"},
      {"nnue", "a learned evaluation in place of the weights: a network file (ultima nnue train), default (the shipped one) or none"},
      {"elo", "the Elo it is rated at (random mover = 0)"},
      {"weight.NAME", "one evaluation weight, NAME as `ultima eval` prints it (a style), e.g. weight.mobility=6"},
  };
  return keys;
}

void check_budget(const Level& level, const std::string& origin) {
  if (level.depth == 0 && level.nodes == 0 && level.movetime_ms == 0)
    throw std::invalid_argument(origin + ": a level needs a budget: depth, nodes or movetime_ms");
}

}  // namespace

Level Level::parse(const std::string& yaml_text, const std::string& origin, const std::string& base_dir) {
  const YAML::Node root = detail::load_yaml_map(yaml_text, origin);
  Level level;
  for (const auto& item : root) {
    const std::string key = item.first.as<std::string>();
    if (!set_key(level, key, item.second, origin, base_dir))
      throw std::invalid_argument(origin + ": unknown level key '" + key + "'");
  }
  if (level.name.empty()) throw std::invalid_argument(origin + ": 'name' is missing");
  check_budget(level, origin);
  return level;
}

Level Level::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read level file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  const std::size_t slash = path.rfind('/');
  return parse(text.str(), path, slash == std::string::npos ? "." : path.substr(0, slash));
}

std::string level_keys_help() {
  const Level defaults;
  const auto default_of = [&](const std::string& key) -> std::string {
    if (key == "depth") return std::to_string(defaults.depth);
    if (key == "nodes") return std::to_string(defaults.nodes);
    if (key == "movetime_ms") return std::to_string(defaults.movetime_ms);
    if (key == "eval_noise_cp") return std::to_string(defaults.eval_noise_cp);
    if (key == "blunder_rate") {
      char text[32];
      std::snprintf(text, sizeof text, "%g", defaults.blunder_rate);
      return text;
    }
    if (key == "hash_mb") return std::to_string(defaults.hash_mb);
    if (key == "threads") return std::to_string(defaults.threads);
    if (key == "skill") return std::to_string(defaults.skill);
    if (key == "material_only") return "false";
    return "none";
  };
  std::string out;
  for (const KeyHelp& k : spec_keys()) {
    char line[256];
    std::snprintf(line, sizeof line, "    %-20s %s (default %s)\n", k.name, k.help, default_of(k.name).c_str());
    out += line;
  }
  return out;
}

Level Level::from_pairs(const std::string& pairs) {
  Level level;
  level.name = "search:" + pairs;
  const std::string origin = "player spec 'search:" + pairs + "'";
  std::stringstream in(pairs);
  std::string pair;
  while (std::getline(in, pair, ',')) {
    const std::size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument(origin + ": '" + pair + "' is not key=value");
    const std::string key = pair.substr(0, eq);
    if (key == "name" || key == "description" || key == "weights" || key == "order" || key == "style")
      throw std::invalid_argument(origin + ": key '" + key + "' cannot be set here");
    if (key.rfind("weight.", 0) == 0) {
      // One evaluation weight (a style), named as `ultima eval` prints it.
      level.weights.apply_yaml(key.substr(7) + ": " + pair.substr(eq + 1), origin);
      continue;
    }
    if (!set_key(level, key, YAML::Node(pair.substr(eq + 1)), origin)) {
      std::vector<std::string> names;
      for (const KeyHelp& k : spec_keys()) names.push_back(k.name);
      const std::string near = nearest_name(key, names);
      throw std::invalid_argument(origin + ": unknown key '" + key + "'" +
                                  (near.empty() ? "" : " (did you mean '" + near + "'?)"));
    }
  }
  check_budget(level, origin);
  return level;
}

namespace {
// The tighter of two limits where 0 means none.
template <class T>
T tighter(T a, T b) {
  if (a == 0) return b;
  if (b == 0) return a;
  return std::min(a, b);
}
}  // namespace

int skill_lines(int skill) {
  skill = std::clamp(skill, 0, Level::kMaxSkill);
  return skill >= Level::kMaxSkill ? 1 : 2 + (Level::kMaxSkill - 1 - skill) * 6 / (Level::kMaxSkill - 1);
}

int skill_pick(int skill, const std::vector<SearchInfo>& lines, std::uint64_t seed) {
  skill = std::clamp(skill, 0, Level::kMaxSkill);
  if (skill >= Level::kMaxSkill || lines.size() < 2) return 0;
  constexpr int kPerStep = 12;  // centipawns of weakness per skill step below the top
  const int weakness = (Level::kMaxSkill - skill) * kPerStep;
  // Mates count as large, finite scores, far beyond any weakness: a mate
  // found is played at every skill, and a line that gets mated avoided.
  const auto bounded = [](int score) { return std::clamp(score, -3000, 3000); };
  const int best = bounded(lines[0].score);
  std::mt19937_64 rng(seed);
  int chosen = 0;
  double chosen_total = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    // One draw per line, in order, whether or not it is eligible: the pick
    // depends on the seed and the scores alone.
    const double bonus = weakness * static_cast<double>(rng() >> 11) * 0x1.0p-53;
    const int score = bounded(lines[i].score);
    if (best - score > 2 * weakness) continue;
    const double total = score + bonus;
    if (i == 0 || total > chosen_total) {
      chosen = static_cast<int>(i);
      chosen_total = total;
    }
  }
  return chosen;
}

std::string default_nnue_file() {
  if (const char* env = std::getenv("ULTIMA_NNUE"); env && *env) return env;
  return data_path(std::string("configs/nnue/nets/") + kDefaultNnue);
}

std::shared_ptr<const nnue::Network> load_nnue(const std::string& name, const std::string& base_dir) {
  if (name.empty() || name == "none") return nullptr;
  if (name == "default") {
    const std::string file = default_nnue_file();
    if (!std::filesystem::is_regular_file(file))
      throw nnue::FileError("the shipped learned evaluation '" + file +
                            "' is not there (set ULTIMA_NNUE to its file, or use none for the hand-written evaluation)");
    return nnue::load_cached(file);
  }
  return nnue::load_cached(base_dir.empty() || name[0] == '/' ? name : base_dir + "/" + name);
}

MoveChoice play_level_move(Searcher& searcher, const Level& level, Position& pos, std::uint64_t seed,
                           const SearchLimits& limits, const std::function<void(const SearchInfo&)>& on_info) {
  std::mt19937_64 rng(seed);
  MoveChoice choice;
  if (level.blunder_rate > 0 && std::uniform_real_distribution<double>(0, 1)(rng) < level.blunder_rate) {
    MoveList list;
    generate_legal(pos, list);
    if (!list.empty()) {
      choice.move = list[std::uniform_int_distribution<int>(0, list.size() - 1)(rng)];
      return choice;
    }
  }
  searcher.set_weights(level.weights);
  searcher.set_network(level.network);
  searcher.set_eval_noise(level.eval_noise_cp, rng());
  SearchLimits l = limits;
  l.depth = tighter(l.depth, level.depth);
  l.nodes = tighter(l.nodes, level.nodes);
  if (level.movetime_ms > 0) {
    // The level's thinking time replaces the clock, but never exceeds it.
    const std::int64_t clock = l.time_ms[pos.side_to_move()];
    l.movetime_ms = tighter(l.movetime_ms, clock > 0 ? std::min(level.movetime_ms, clock / 10 + 1) : level.movetime_ms);
    l.time_ms[0] = l.time_ms[1] = l.inc_ms[0] = l.inc_ms[1] = 0;
  }
  l.infinite = false;
  if (level.skill < Level::kMaxSkill) l.multipv = std::max(l.multipv, skill_lines(level.skill));
  const SearchResult result = searcher.search(pos, l, on_info);
  const std::uint64_t skill_seed = rng();
  const int pick = level.skill < Level::kMaxSkill && !result.lines.empty()
                       ? skill_pick(level.skill, result.lines, skill_seed)
                       : 0;
  const bool from_line = pick > 0 && !result.lines[pick].pv.empty();
  choice.move = from_line ? result.lines[pick].pv[0] : result.best;
  choice.score_cp = from_line ? result.lines[pick].score : result.score;
  choice.depth = result.depth;
  choice.nodes = result.nodes;
  return choice;
}

SearchPlayer::SearchPlayer(Level level) : level_(std::move(level)), searcher_(level_.hash_mb) {
  searcher_.set_threads(level_.threads);
}

MoveChoice SearchPlayer::choose(Position& pos, std::uint64_t seed, const MoveLimits& limits) {
  return play_level_move(searcher_, level_, pos, seed, search_limits_of(limits), limits.on_info);
}

}  // namespace ultima
