// Reading small YAML files of key: value pairs: levels and bot files here,
// and the learned evaluation's recipe (training/nnue). Not part of the
// public header play.h.
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

// One value as T; std::invalid_argument naming `origin` and `key`, and
// saying what the value must be, when it is not one.
template <class T>
T read_as(const YAML::Node& node, const std::string& key, const std::string& origin, const char* what) {
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    throw std::invalid_argument(origin + ": '" + key + "' must be " + what);
  }
}

}  // namespace ultima::detail
