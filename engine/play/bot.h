// The bot catalogue: every bot people can play, each a player spec with a
// name, a one-line description and a style, rated on one Elo scale (the
// random mover = 0).
//
// The catalogue is the levels of the levels folder (each one a bot whose
// spec is the level) followed by the bot files of the bots folder
// (configs/bots/NAME.yaml): network snapshots, skill-limited searchers,
// styles made by evaluation weights. A bot's name is a player spec
// (make_player), like a level's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/play/style.h"

namespace ultima {

struct Bot {
  std::string name;         // as used in specs, the UCI Bot option, ladders
  std::string description;  // one line for people
  std::string style;        // one word or a short phrase
  std::string spec;         // any player spec but another bot's name
  double order = 0;         // place on the ladder, weakest first (levels: 1..7)
  int elo = 0;              // measured (random mover = 0)
  bool has_elo = false;
  int elo_low = 0, elo_high = 0;  // its 95% interval, when measured with one
  bool has_interval = false;
  bool is_level = false;    // listed from the levels folder, not a bot file
  std::string origin;       // the file it was read from

  // Throws std::invalid_argument naming the file (origin) and the key.
  static Bot parse(const std::string& yaml_text, const std::string& origin);
  static Bot load(const std::string& path);
  // A bot file's text; parse(to_yaml()) gives the same bot.
  std::string to_yaml() const;
  // The spec as it is played: a relative `weights=FILE` is a path from the
  // bot file's folder (so a bots folder with its networks in it can be
  // moved or shipped whole); absolute paths and `weights=random` stay.
  std::string playable_spec() const;
  // A network bot's network: the file its `mcts:` spec plays
  // (`weights=FILE` as in playable_spec); empty for any other bot.
  std::string network_file() const;
};

// Where bot files are looked for: $ULTIMA_BOTS, else configs/bots beside the
// program's source tree, else ./configs/bots. A missing folder holds no bots.
std::string bots_directory();

// The levels, then the bot files, weakest first (by order, then name).
// Throws std::invalid_argument for a bad file, and for two bots of one name
// (naming both places).
std::vector<Bot> load_catalogue();
std::vector<std::string> bot_names();
// The bot of that name; nullopt when there is none.
std::optional<Bot> find_bot(const std::string& name);
// The network file of a shipped network bot by name, for tools that take a
// network (the analysis engine's `weights`): the bot `name`, or for "best"
// the rated network bot with the highest Elo. nullopt when `name` names no
// network bot (nor is "best" with one there).
std::optional<std::string> shipped_network(const std::string& name);

// The rated bot whose Elo is nearest `elo` (the weaker on a tie); null when
// none is rated.
const Bot* nearest_bot(const std::vector<Bot>& catalogue, int elo);

// The keys of `key: value` lines set (or added at the end) in a bot or level
// file's text, other lines (comments) kept. Values as YAML scalars.
std::string set_yaml_keys(const std::string& text, const std::vector<std::pair<std::string, std::string>>& keys);

// A rating of the whole catalogue: what `ultima ladder --catalogue` writes
// as bots.json.
struct BotRating {
  std::string name, description, style, spec;
  double elo = 0, elo_low = 0, elo_high = 0;  // the interval: 95%
  int games = 0;        // games it played in the rating
  std::string vs;       // the neighbour it was measured against
  StyleStats stats;     // its style figures over those games

  friend bool operator==(const BotRating&, const BotRating&) = default;
};

struct BotsReport {
  static constexpr int kVersion = 1;
  int version = kVersion;
  std::string anchor = "random";  // the player at Elo 0
  std::string rules;
  int games_per_pair = 0;
  std::uint64_t seed = 0;
  std::string date;  // when it was measured (UTC), for people
  std::vector<BotRating> bots;

  friend bool operator==(const BotsReport&, const BotsReport&) = default;
};

// JSON text of a report, and back; `read` refuses a version it does not
// know, and missing or mistyped fields, naming the origin and the field.
std::string bots_report_json(const BotsReport& report);
BotsReport read_bots_report(const std::string& json_text, const std::string& origin);
// Atomically (file_io.h).
void write_bots_report(const std::string& path, const BotsReport& report);
BotsReport load_bots_report(const std::string& path);

}  // namespace ultima
