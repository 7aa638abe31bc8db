// Every setting of the tree search, declared once: name, type, default (the
// value of a default-constructed MctsSettings), range and one line of help.
// Player specs ("mcts:playouts=400,gumbel=true"), the selfplay and
// evaluation sections of run configs (which use the same names), the UCI
// options that expose a setting, and every --help text are bound to this one
// table, so a name, a default or a range cannot drift between them.
#pragma once

#include <string>
#include <vector>

#include "engine/mcts/mcts.h"

namespace ultima {

struct MctsSettings {
  MctsConfig config;
  MctsLimits limits;
  // Move choice by visits^(1/T) (MctsPlayer); 0 plays the best move.
  double temperature = 0;
};

enum class SettingType { kBool, kInteger, kNumber };

struct MctsSettingInfo {
  std::string name;      // in player specs and config files
  std::string uci_name;  // the UCI option that sets it, or empty
  SettingType type;
  std::string default_text;  // of a default MctsSettings
  double min = 0, max = 0;   // inclusive; booleans: 0 and 1
  std::string help;          // one line
};

// The settings, in the order of MctsConfig and MctsLimits.
const std::vector<MctsSettingInfo>& mcts_setting_list();
// "integer", "number", "true or false".
const char* setting_type_name(SettingType type);

// Sets one setting from text. Throws std::invalid_argument naming the key:
// an unknown key with the nearest known one, a value of the wrong type with
// the type expected and the text given, a value out of range with the range.
// `shown_name` replaces the key in the error (a UCI option's name).
void set_mcts_setting(MctsSettings& settings, const std::string& key, const std::string& value,
                      const std::string& shown_name = "");
// The setting's value as text (as default_text writes it).
std::string get_mcts_setting(const MctsSettings& settings, const std::string& key);

// "key=value,key=value,..." (an empty text gives the defaults).
MctsSettings parse_mcts_settings(const std::string& pairs);

// One line per setting: name, type, default, range, help.
std::string mcts_settings_help();

// The candidate closest to `word` by edit distance, when it is close enough
// to be a likely typo ("" otherwise): for "did you mean" in error messages.
std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace ultima
