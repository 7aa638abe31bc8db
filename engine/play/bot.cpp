#include "engine/play/bot.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "engine/base/paths.h"
#include "engine/play/player_spec.h"
#include "engine/play/yaml_map.h"
#include "engine/base/file_io.h"

namespace ultima {
namespace {

using json = nlohmann::json;

using detail::read_as;

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
}

// A YAML scalar for text: quoted when plain YAML would read it otherwise.
std::string yaml_text(const std::string& s) {
  YAML::Emitter out;
  out << YAML::DoubleQuoted << s;
  return out.c_str();
}

std::string number_text(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

}  // namespace

Bot Bot::parse(const std::string& yaml_text_in, const std::string& origin) {
  const YAML::Node root = detail::load_yaml_map(yaml_text_in, origin);
  Bot bot;
  bot.origin = origin;
  bool low = false, high = false;
  for (const auto& item : root) {
    const std::string key = item.first.as<std::string>();
    const YAML::Node& v = item.second;
    if (!v.IsScalar()) throw std::invalid_argument(origin + ": '" + key + "' must be a single value");
    if (key == "name") {
      bot.name = read_as<std::string>(v, key, origin, "text");
      if (!valid_name(bot.name))
        throw std::invalid_argument(origin + ": 'name' must be 1 to 64 letters, digits, '-', '_' or '.'");
    } else if (key == "description") {
      bot.description = read_as<std::string>(v, key, origin, "text");
    } else if (key == "style") {
      bot.style = read_as<std::string>(v, key, origin, "text");
    } else if (key == "spec") {
      bot.spec = read_as<std::string>(v, key, origin, "text");
    } else if (key == "order") {
      bot.order = read_as<double>(v, key, origin, "a number");
      if (!std::isfinite(bot.order)) throw std::invalid_argument(origin + ": 'order' must be a finite number");
    } else if (key == "elo") {
      bot.elo = read_as<int>(v, key, origin, "an integer");
      bot.has_elo = true;
    } else if (key == "elo_low") {
      bot.elo_low = read_as<int>(v, key, origin, "an integer");
      low = true;
    } else if (key == "elo_high") {
      bot.elo_high = read_as<int>(v, key, origin, "an integer");
      high = true;
    } else {
      throw std::invalid_argument(origin + ": unknown bot key '" + key +
                                  "' (keys: name, description, style, spec, order, elo, elo_low, elo_high)");
    }
  }
  for (const auto& [key, value] : {std::pair<const char*, const std::string*>{"name", &bot.name},
                                   {"description", &bot.description},
                                   {"style", &bot.style},
                                   {"spec", &bot.spec}})
    if (value->empty()) throw std::invalid_argument(origin + ": '" + key + "' is missing");
  if (bot.name == "random") throw std::invalid_argument(origin + ": the name 'random' is the random mover's");
  if (low != high) throw std::invalid_argument(origin + ": 'elo_low' and 'elo_high' come together");
  if (low && !bot.has_elo) throw std::invalid_argument(origin + ": 'elo_low' and 'elo_high' need 'elo'");
  if (low && !(bot.elo_low <= bot.elo && bot.elo <= bot.elo_high))
    throw std::invalid_argument(origin + ": 'elo' must lie from 'elo_low' to 'elo_high'");
  bot.has_interval = low;
  return bot;
}

std::string Bot::network_file() const {
  const std::string played = playable_spec();
  if (played.rfind("mcts:", 0) != 0) return "";
  for (std::size_t at = played.find("weights="); at != std::string::npos; at = played.find("weights=", at + 1)) {
    if (played[at - 1] != ':' && played[at - 1] != ',') continue;
    const std::size_t begin = at + 8;
    const std::string file = played.substr(begin, std::min(played.find(',', begin), played.size()) - begin);
    return file == "random" ? "" : file;
  }
  return "";
}

std::optional<std::string> shipped_network(const std::string& name) {
  const std::vector<Bot> catalogue = load_catalogue();
  const Bot* chosen = nullptr;
  for (const Bot& b : catalogue) {
    if (b.network_file().empty()) continue;
    if (name == "best" ? b.has_elo && (!chosen || b.elo > chosen->elo) : b.name == name) chosen = &b;
  }
  if (!chosen) return std::nullopt;
  return chosen->network_file();
}

std::string Bot::playable_spec() const {
  if (origin.empty() || is_level) return spec;
  std::string out = spec;
  for (std::size_t at = out.find("weights="); at != std::string::npos; at = out.find("weights=", at + 1)) {
    // A key at the start of a spec's settings: after ':' or ','.
    if (at > 0 && out[at - 1] != ':' && out[at - 1] != ',') continue;
    const std::size_t begin = at + 8;
    const std::size_t end = std::min(out.find(',', begin), out.size());
    const std::string file = out.substr(begin, end - begin);
    if (file.empty() || file == "random" || std::filesystem::path(file).is_absolute()) continue;
    const std::string resolved =
        (std::filesystem::path(origin).parent_path() / file).lexically_normal().string();
    out.replace(begin, end - begin, resolved);
    at = begin + resolved.size() - 1;
  }
  return out;
}

Bot Bot::load(const std::string& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception&) {
    throw std::invalid_argument("cannot read bot file '" + path + "'");
  }
  return parse(text, path);
}

std::string Bot::to_yaml() const {
  std::string out;
  out += "name: " + name + "\n";
  out += "description: " + yaml_text(description) + "\n";
  out += "style: " + yaml_text(style) + "\n";
  out += "spec: " + yaml_text(spec) + "\n";
  out += "order: " + number_text(order) + "\n";
  if (has_elo) out += "elo: " + std::to_string(elo) + "\n";
  if (has_interval) {
    out += "elo_low: " + std::to_string(elo_low) + "\n";
    out += "elo_high: " + std::to_string(elo_high) + "\n";
  }
  return out;
}

std::string bots_directory() {
  if (const char* env = std::getenv("ULTIMA_BOTS"); env && *env) return env;
  return data_path("configs/bots");
}

std::vector<Bot> load_catalogue() {
  namespace fs = std::filesystem;
  std::vector<Bot> bots;
  for (const Level& l : load_levels()) {
    Bot b;
    b.name = l.name;
    b.description = l.description;
    b.style = l.style;
    b.spec = l.name;
    b.order = l.order;
    b.elo = l.elo;
    b.has_elo = l.has_elo;
    b.is_level = true;
    b.origin = levels_directory() + "/" + l.name + ".yaml";
    bots.push_back(b);
  }
  const std::string dir = bots_directory();
  if (fs::is_directory(dir)) {
    std::vector<fs::path> files;
    for (const fs::directory_entry& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".yaml") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      Bot b = Bot::load(file.string());
      if (file.stem().string() != b.name)
        throw std::invalid_argument(file.string() + ": the bot named '" + b.name + "' must be in " + b.name + ".yaml");
      bots.push_back(b);
    }
  }
  std::map<std::string, std::string> seen;
  for (const Bot& b : bots) {
    const auto [it, fresh] = seen.emplace(b.name, b.origin);
    if (!fresh) throw std::invalid_argument("two bots named '" + b.name + "': " + it->second + " and " + b.origin);
  }
  std::stable_sort(bots.begin(), bots.end(), [](const Bot& a, const Bot& b) {
    return a.order != b.order ? a.order < b.order : a.name < b.name;
  });
  return bots;
}

std::vector<std::string> bot_names() {
  std::vector<std::string> names;
  for (const Bot& b : load_catalogue()) names.push_back(b.name);
  return names;
}

std::optional<Bot> find_bot(const std::string& name) {
  for (const Bot& b : load_catalogue())
    if (b.name == name) return b;
  return std::nullopt;
}

const Bot* nearest_bot(const std::vector<Bot>& catalogue, int elo) {
  const Bot* best = nullptr;
  for (const Bot& b : catalogue) {
    if (!b.has_elo) continue;
    const int d = std::abs(b.elo - elo);
    if (!best || d < std::abs(best->elo - elo) || (d == std::abs(best->elo - elo) && b.elo < best->elo)) best = &b;
  }
  return best;
}

std::string set_yaml_keys(const std::string& text, const std::vector<std::pair<std::string, std::string>>& keys) {
  std::vector<bool> done(keys.size(), false);
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    bool replaced = false;
    for (std::size_t i = 0; i < keys.size() && !replaced; ++i) {
      if (line.rfind(keys[i].first + ":", 0) != 0) continue;
      // A trailing comment stays.
      const std::size_t hash = line.find(" #");
      out += keys[i].first + ": " + keys[i].second + (hash == std::string::npos ? "" : "   " + line.substr(hash + 1)) +
             "\n";
      done[i] = replaced = true;
    }
    if (!replaced) out += line + "\n";
  }
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (!done[i]) out += keys[i].first + ": " + keys[i].second + "\n";
  return out;
}

namespace {

json stats_json(const StyleStats& s) {
  return json{{"games", s.games},
              {"wins", s.wins},
              {"draws", s.draws},
              {"losses", s.losses},
              {"checkmate_wins", s.checkmate_wins},
              {"game_plies", s.game_plies},
              {"moves", s.moves},
              {"capturing_moves", s.capturing_moves},
              {"pieces_captured", s.pieces_captured},
              {"pieces_lost", s.pieces_lost},
              {"checks", s.checks},
              {"king_pressure", s.king_pressure},
              {"enemy_frozen", s.enemy_frozen},
              // Derived, for people and plots; read back from the counts.
              {"capture_rate", s.capture_rate()},
              {"average_length", s.average_length()},
              {"checkmate_share", s.checkmate_share()},
              {"lost_per_game", s.lost_per_game()},
              {"checks_per_100", s.checks_per_100()},
              {"king_zone_per_100", s.pressure_per_100()},
              {"frozen_per_move", s.frozen_per_move()}};
}

template <class T>
T field(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw std::invalid_argument(where + ": '" + key + "' is missing");
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument(where + ": '" + key + "' has the wrong type");
  }
}

// Elo figures: JSON has no infinities (a bot that never lost to its
// neighbour), so they are written as null and read back as such.
json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

double number_field(const json& j, const char* key, const std::string& where) {
  if (j.is_object() && j.contains(key) && j.at(key).is_null())
    return std::string(key) == "elo_low" ? -std::numeric_limits<double>::infinity()
                                         : std::numeric_limits<double>::infinity();
  return field<double>(j, key, where);
}

StyleStats stats_from(const json& j, const std::string& where) {
  StyleStats s;
  s.games = field<int>(j, "games", where);
  s.wins = field<int>(j, "wins", where);
  s.draws = field<int>(j, "draws", where);
  s.losses = field<int>(j, "losses", where);
  s.checkmate_wins = field<int>(j, "checkmate_wins", where);
  s.game_plies = field<long long>(j, "game_plies", where);
  s.moves = field<long long>(j, "moves", where);
  s.capturing_moves = field<long long>(j, "capturing_moves", where);
  s.pieces_captured = field<long long>(j, "pieces_captured", where);
  s.pieces_lost = field<long long>(j, "pieces_lost", where);
  s.checks = field<long long>(j, "checks", where);
  s.king_pressure = field<long long>(j, "king_pressure", where);
  s.enemy_frozen = field<long long>(j, "enemy_frozen", where);
  return s;
}

}  // namespace

std::string bots_report_json(const BotsReport& r) {
  json bots = json::array();
  for (const BotRating& b : r.bots)
    bots.push_back(json{{"name", b.name},
                        {"description", b.description},
                        {"style", b.style},
                        {"spec", b.spec},
                        {"elo", number_or_null(b.elo)},
                        {"elo_low", number_or_null(b.elo_low)},
                        {"elo_high", number_or_null(b.elo_high)},
                        {"games", b.games},
                        {"vs", b.vs},
                        {"style_stats", stats_json(b.stats)}});
  const json root{{"version", r.version}, {"anchor", r.anchor}, {"rules", r.rules},
                  {"games_per_pair", r.games_per_pair}, {"seed", r.seed}, {"date", r.date}, {"bots", bots}};
  return root.dump(2) + "\n";
}

BotsReport read_bots_report(const std::string& text, const std::string& origin) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    throw std::invalid_argument(origin + ": not valid JSON: " + e.what());
  }
  BotsReport r;
  r.version = field<int>(root, "version", origin);
  if (r.version != BotsReport::kVersion)
    throw std::invalid_argument(origin + ": version " + std::to_string(r.version) + " is not known (this program reads " +
                                std::to_string(BotsReport::kVersion) + ")");
  r.anchor = field<std::string>(root, "anchor", origin);
  r.rules = field<std::string>(root, "rules", origin);
  r.games_per_pair = field<int>(root, "games_per_pair", origin);
  r.seed = field<std::uint64_t>(root, "seed", origin);
  r.date = field<std::string>(root, "date", origin);
  const json bots = field<json>(root, "bots", origin);
  if (!bots.is_array()) throw std::invalid_argument(origin + ": 'bots' must be a list");
  for (std::size_t i = 0; i < bots.size(); ++i) {
    const std::string where = origin + ": bots[" + std::to_string(i) + "]";
    const json& j = bots[i];
    BotRating b;
    b.name = field<std::string>(j, "name", where);
    b.description = field<std::string>(j, "description", where);
    b.style = field<std::string>(j, "style", where);
    b.spec = field<std::string>(j, "spec", where);
    b.elo = number_field(j, "elo", where);
    b.elo_low = number_field(j, "elo_low", where);
    b.elo_high = number_field(j, "elo_high", where);
    b.games = field<int>(j, "games", where);
    b.vs = field<std::string>(j, "vs", where);
    b.stats = stats_from(field<json>(j, "style_stats", where), where + ".style_stats");
    r.bots.push_back(b);
  }
  return r;
}

void write_bots_report(const std::string& path, const BotsReport& report) {
  write_file_atomically(path, bots_report_json(report));
}

BotsReport load_bots_report(const std::string& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    throw std::invalid_argument(e.what());
  }
  return read_bots_report(text, path);
}

}  // namespace ultima
