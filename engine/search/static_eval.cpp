#include "engine/search/static_eval.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "engine/rules/attacks.h"
#include "engine/rules/bitboard.h"
#include "engine/base/file_io.h"

namespace ultima {
namespace {

// The names of the weights in files, with their fields.
struct NamedWeight {
  const char* name;
  int EvalWeights::*field;
};
constexpr NamedWeight kScalars[] = {
    {"frozen_percent", &EvalWeights::frozen_percent}, {"mobility", &EvalWeights::mobility},
    {"king_routes", &EvalWeights::king_routes},       {"king_proximity", &EvalWeights::king_proximity},
    {"tempo", &EvalWeights::tempo},
};
constexpr const char* kValueNames[kKindCount] = {nullptr,         nullptr,       "pawn",        "withdrawer",
                                                 "long_leaper",   "coordinator", "immobilizer", "chameleon"};

int read_int(const YAML::Node& node, const std::string& key, const std::string& origin) {
  try {
    return node.as<int>();
  } catch (const YAML::Exception&) {
    throw std::invalid_argument(origin + ": '" + key + "' must be an integer");
  }
}

// Empty squares each unfrozen piece of c could reach, summed.
int mobility_of(const BoardBits& b, Color c, Bitboard frozen) {
  const Bitboard empty = ~b.occupied;
  int squares = 0;
  Bitboard pawns = b.kind[c][kPawn] & ~frozen;
  while (pawns) squares += popcount(rook_attacks(pop_lsb(pawns), b.occupied) & empty);
  Bitboard sliders = (b.color[c] & ~b.kind[c][kPawn] & ~b.kind[c][kKing]) & ~frozen;
  while (sliders) squares += popcount(queen_attacks(pop_lsb(sliders), b.occupied) & empty);
  return squares;
}

int material_of(const BoardBits& b, Color c, Bitboard frozen, const EvalWeights& w) {
  int total = 0;
  for (int k = kPawn; k < kKindCount; ++k) {
    const Bitboard pieces = b.kind[c][k];
    const int free_count = popcount(pieces & ~frozen);
    const int frozen_count = popcount(pieces & frozen);
    total += w.value[k] * free_count + w.value[k] * frozen_count * w.frozen_percent / 100;
  }
  return total;
}

int proximity_of(const BoardBits& b, Color c, Bitboard enemy_mobile) {
  const Bitboard king = b.kind[c][kKing];
  if (!king) return 0;
  const Bitboard near = neighbours(neighbours(king));
  return popcount(near & enemy_mobile);
}

}  // namespace

void EvalWeights::apply_yaml(const std::string& yaml_text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(origin + ": not valid YAML: " + e.msg);
  }
  if (root.IsNull()) return;
  if (!root.IsMap()) throw std::invalid_argument(origin + ": expected key: value pairs");
  for (const auto& item : root) {
    const std::string key = item.first.as<std::string>();
    bool known = false;
    for (const NamedWeight& nw : kScalars) {
      if (key == nw.name) {
        this->*nw.field = read_int(item.second, key, origin);
        known = true;
      }
    }
    for (int k = kPawn; k < kKindCount; ++k) {
      if (key == kValueNames[k]) {
        value[k] = read_int(item.second, key, origin);
        known = true;
      }
    }
    if (!known) throw std::invalid_argument(origin + ": unknown evaluation weight '" + key + "'");
  }
  if (frozen_percent < 0 || frozen_percent > 100)
    throw std::invalid_argument(origin + ": frozen_percent must be from 0 to 100");
}

EvalWeights EvalWeights::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read evaluation weights file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  EvalWeights w;
  w.apply_yaml(text.str(), path);
  return w;
}

std::string EvalWeights::to_yaml() const {
  std::ostringstream out;
  for (int k = kPawn; k < kKindCount; ++k) out << kValueNames[k] << ": " << value[k] << "\n";
  for (const NamedWeight& nw : kScalars) out << nw.name << ": " << this->*nw.field << "\n";
  return out.str();
}

void EvalWeights::save(const std::string& path, const EvalWeights& w) {
  write_file_atomically(path, w.to_yaml());
}

int evaluate(const Position& pos, const EvalWeights& w) {
  const BoardBits& b = pos.bits();
  const Rules& rules = pos.rules();
  const Color us = pos.side_to_move(), them = ~us;
  const Bitboard frozen_us = frozen_pieces(b, us, rules);
  const Bitboard frozen_them = frozen_pieces(b, them, rules);

  int score = material_of(b, us, frozen_us, w) - material_of(b, them, frozen_them, w);
  score += w.mobility * (mobility_of(b, us, frozen_us) - mobility_of(b, them, frozen_them));
  score -= w.king_routes * king_capture_routes(b, us, rules);
  score -= w.king_proximity * proximity_of(b, us, b.color[them] & ~frozen_them);
  score += w.king_proximity * proximity_of(b, them, b.color[us] & ~frozen_us);
  return score + w.tempo;
}

int material(const Position& pos, Color c, const EvalWeights& w) { return material_of(pos.bits(), c, 0, w); }

}  // namespace ultima
