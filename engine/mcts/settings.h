// Every MCTS setting by name, declared once: player specs
// ("mcts:playouts=400,gumbel=true"), UCI options and command-line flags can
// all go through this one table.
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

struct MctsSettingInfo {
  std::string name;
  std::string help;  // one line, with the default
};

// The settings, in the order of MctsConfig and MctsLimits.
std::vector<MctsSettingInfo> mcts_setting_list();

// Sets one setting from text. Throws std::invalid_argument naming the
// unknown key or the bad value.
void set_mcts_setting(MctsSettings& settings, const std::string& key, const std::string& value);

// "key=value,key=value,..." (an empty text gives the defaults).
MctsSettings parse_mcts_settings(const std::string& pairs);

}  // namespace ultima
