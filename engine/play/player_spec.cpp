#include "engine/play/player_spec.h"

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>

#include "engine/base/paths.h"
#include "engine/mcts/material_evaluator.h"
#include "engine/mcts/settings.h"
#include "engine/play/bot.h"
#include "engine/play/level.h"
#include "engine/play/uci_player.h"
#include "engine/play/mcts_player.h"

namespace ultima {

MoveChoice RandomPlayer::choose(Position& pos, std::uint64_t seed, const MoveLimits&) {
  MoveList list;
  generate_legal(pos, list);
  if (list.empty()) throw std::logic_error("RandomPlayer asked to move in a finished game");
  std::mt19937_64 rng(seed);
  MoveChoice choice;
  choice.move = list[std::uniform_int_distribution<int>(0, list.size() - 1)(rng)];
  return choice;
}

namespace {

// A catalogue bot: its spec's player under the bot's name (records,
// ladders and logs show the bot).
class NamedPlayer : public Player {
 public:
  NamedPlayer(std::string name, std::unique_ptr<Player> inner) : name_(std::move(name)), inner_(std::move(inner)) {}
  std::string name() const override { return name_; }
  void new_game() override { inner_->new_game(); }
  MoveChoice choose(Position& pos, std::uint64_t seed, const MoveLimits& limits = {}) override {
    return inner_->choose(pos, seed, limits);
  }
  void stop() override { inner_->stop(); }

 private:
  std::string name_;
  std::unique_ptr<Player> inner_;
};

}  // namespace

std::string levels_directory() {
  if (const char* env = std::getenv("ULTIMA_LEVELS"); env && *env) return env;
  return data_path("configs/levels");
}

std::vector<Level> load_levels() {
  namespace fs = std::filesystem;
  const std::string dir = levels_directory();
  if (!fs::is_directory(dir)) throw std::invalid_argument("levels folder '" + dir + "' not found (set ULTIMA_LEVELS)");
  std::vector<Level> levels;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml") levels.push_back(Level::load(e.path().string()));
  std::sort(levels.begin(), levels.end(), [](const Level& a, const Level& b) { return a.order < b.order; });
  return levels;
}

std::vector<std::string> level_names() {
  std::vector<std::string> names;
  for (const Level& l : load_levels()) names.push_back(l.name);
  return names;
}

Level find_level(const std::string& name) {
  std::string known;
  for (const Level& l : load_levels()) {
    if (l.name == name) return l;
    known += (known.empty() ? "" : ", ") + l.name;
  }
  throw std::invalid_argument("unknown level '" + name + "' (levels: " + known + ")");
}

NetworkFactory shared_networks(NetworkFactory make) {
  struct Cache {
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<Evaluator>> evaluators;
  };
  auto cache = std::make_shared<Cache>();
  return [cache, make = std::move(make)](const std::string& settings) {
    std::lock_guard<std::mutex> lock(cache->mutex);
    std::shared_ptr<Evaluator>& evaluator = cache->evaluators[settings];
    if (!evaluator) evaluator = make(settings);
    return evaluator;
  };
}

std::string run_best_model(const std::string& run_dir) {
  namespace fs = std::filesystem;
  if (run_dir.empty()) throw std::invalid_argument("run= names no run directory");
  if (!fs::is_directory(run_dir)) throw std::invalid_argument("run directory '" + run_dir + "' does not exist");
  const std::string best = run_dir + "/models/best";
  std::ifstream in(best);
  if (!in)
    throw std::invalid_argument("run directory '" + run_dir + "' has no best model (" + best +
                                " is missing: has its loop finished a generation, or ultima init run there?)");
  unsigned long long version = 0;
  if (!(in >> version)) throw std::invalid_argument(best + " does not hold a model number");
  char name[64];
  std::snprintf(name, sizeof name, "/models/model-%06llu.unn", version);
  const std::string path = run_dir + name;
  if (!fs::exists(path))
    throw std::invalid_argument("run directory '" + run_dir + "': its best model, number " + std::to_string(version) +
                                " (" + best + "), has no file " + path);
  return path;
}

std::string player_spec_help() {
  std::string levels;
  for (const std::string& name : level_names()) levels += (levels.empty() ? "" : ", ") + name;
  return "Player specs:\n"
         "  random                 uniformly random legal moves\n"
         "  LEVEL, level:LEVEL     a graded alpha-beta level: " + levels + "\n"
         "  BOT, bot:BOT           a bot of the catalogue (levels and " + bots_directory() + "/*.yaml; ultima bots list)\n"
         "  search:KEY=VALUE,...   alpha-beta with these settings (at least one of depth, nodes, movetime_ms):\n" +
         level_keys_help() +
         "  uci:[KEY=VALUE,...:]COMMAND  another program speaking UCI, run by /bin/sh; keys movetime (ms, default\n"
         "                         100), depth, nodes, timeout_ms (grace beyond the limit, default 10000),\n"
         "                         option.NAME=VALUE (setoption), e.g. uci:depth=6,option.Hash=64:./stockfish\n"
         "  mcts[:KEY=VALUE,...]   the tree search; weights=FILE (or weights=random) for a network, else the\n"
         "                         network-free material evaluator; run=DIR for the best model of a run\n"
         "                         directory (DIR/models/best, e.g. mcts:run=runs/main). With a network, its\n"
         "                         keys (device=cuda,\n"
         "                         precision, max_batch, ...: nn/README.md) may follow. The search's keys:\n" +
         mcts_settings_help();
}

std::unique_ptr<Player> make_player(const std::string& spec, const NetworkFactory& networks) {
  if (spec == "random") return std::make_unique<RandomPlayer>();
  if (spec.rfind("uci:", 0) == 0) return std::make_unique<UciEnginePlayer>(UciEngineSettings::parse(spec.substr(4)));
  if (spec.rfind("search:", 0) == 0) return std::make_unique<SearchPlayer>(Level::from_pairs(spec.substr(7)));
  if (spec.rfind("mcts:", 0) == 0 || spec == "mcts") {
    // "weights=FILE" picks the network; the MCTS settings are the search's,
    // and with a network any other key is the network's (device=cuda,
    // precision=fp16, max_batch=..., nn/README.md), which checks it.
    std::string weights, settings, network_settings;
    std::stringstream in(spec.size() > 5 ? spec.substr(5) : "");
    for (std::string pair; std::getline(in, pair, ',');) {
      const std::string key = pair.substr(0, pair.find('='));
      const bool search_key = std::any_of(mcts_setting_list().begin(), mcts_setting_list().end(),
                                          [&](const MctsSettingInfo& s) { return s.name == key; });
      if (key == "weights" || key == "run") {
        if (!weights.empty())
          throw std::invalid_argument("player spec '" + spec + "' names its network twice (weights= and run= are one "
                                      "choice)");
        const std::string value = pair.size() > key.size() + 1 ? pair.substr(key.size() + 1) : "";
        if (key == "run") {
          try {
            weights = run_best_model(value);
          } catch (const std::invalid_argument& e) {
            throw std::invalid_argument("player spec '" + spec + "': " + e.what());
          }
        } else {
          weights = value;
        }
      }
      else if (search_key || pair.find('=') == std::string::npos)
        settings += (settings.empty() ? "" : ",") + pair;
      else
        network_settings += "," + pair;
    }
    std::shared_ptr<Evaluator> evaluator;
    if (weights.empty()) {
      // No network: they are unknown search keys, and named as such.
      settings += settings.empty() && !network_settings.empty() ? network_settings.substr(1) : network_settings;
      evaluator = std::make_shared<MaterialEvaluator>();
    } else if (!networks) {
      throw std::runtime_error("this program has no neural-network support (player spec '" + spec + "')");
    } else {  // "random": a network with random weights (generation 0)
      const std::string net = (weights == "random" ? "" : "weights=" + weights) + network_settings;
      evaluator = networks(!net.empty() && net[0] == ',' ? net.substr(1) : net);
    }
    return std::make_unique<MctsPlayer>(std::move(evaluator), parse_mcts_settings(settings));
  }
  if (spec.rfind("level:", 0) == 0) return std::make_unique<SearchPlayer>(find_level(spec.substr(6)));
  if (spec.empty()) throw std::invalid_argument("empty player spec");
  const bool bot_prefix = spec.rfind("bot:", 0) == 0;
  const std::string name = bot_prefix ? spec.substr(4) : spec;
  // Levels first: a broken bot file does not stop the levels from playing.
  for (Level& level : load_levels())
    if (level.name == name) return std::make_unique<SearchPlayer>(std::move(level));
  const std::vector<Bot> catalogue = load_catalogue();
  for (const Bot& bot : catalogue) {
    if (bot.name != name) continue;
    if (bot.is_level) return std::make_unique<SearchPlayer>(find_level(name));
    // A bot's spec is a player of another kind or a level, never another
    // bot file (no chains to follow, no loops).
    for (const Bot& other : catalogue)
      if (!other.is_level && (other.name == bot.spec || "bot:" + other.name == bot.spec))
        throw std::invalid_argument(bot.origin + ": 'spec' names the bot '" + other.name +
                                    "'; a bot's spec must be a level or another kind of player");
    try {
      return std::make_unique<NamedPlayer>(bot.name, make_player(bot.playable_spec(), networks));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(bot.origin + ": 'spec': " + e.what());
    }
  }
  std::vector<std::string> names;
  for (const Bot& bot : catalogue) names.push_back(bot.name);
  const std::string near = nearest_name(name, names);
  std::string known;
  for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown " + std::string(bot_prefix ? "bot" : "player spec or bot") + " '" + name +
                              "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)") + " (bots: " + known +
                              "; other specs: ultima match --help)");
}

}  // namespace ultima
