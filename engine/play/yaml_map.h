// The play layer's own reading of a small YAML file of key: value pairs
// (levels and bot files). Not part of the public header play.h.
#pragma once

#include <yaml-cpp/yaml.h>

#include <stdexcept>
#include <string>

namespace ultima::detail {

// The text as a YAML mapping; std::invalid_argument naming `origin` when it
// is not valid YAML or not a mapping.
inline YAML::Node load_yaml_map(const std::string& text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(origin + ": not valid YAML: " + e.msg);
  }
  if (!root.IsMap()) throw std::invalid_argument(origin + ": expected key: value pairs");
  return root;
}

}  // namespace ultima::detail
