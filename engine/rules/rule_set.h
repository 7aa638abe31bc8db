// Rule sets: the switches of RULES.md section 9 and their named presets.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ultima {

enum class Setup { kRotated, kChessKings, kMirror };
enum class LeaperRule { kMulti, kSingle };
enum class ChameleonRule { kCombined, kShape };
enum class RemovalRule { kAllowed, kForbidden };
enum class StalemateRule { kLoss, kDraw };
enum class Objective { kCheckmate, kKingCapture };
enum class FrozenImmobilizerRule { kStillFreezes, kNeutralized };

// The name of the rules every command, protocol and file assumes when none
// is given: Abbott's 1963 rules, the preset that Rules{} is.
inline constexpr const char* kDefaultRules = "abbott1963";

struct Rules {
  Setup setup = Setup::kRotated;
  LeaperRule leaper = LeaperRule::kMulti;
  ChameleonRule chameleon = ChameleonRule::kCombined;
  RemovalRule removal = RemovalRule::kAllowed;
  StalemateRule stalemate = StalemateRule::kLoss;
  Objective objective = Objective::kCheckmate;
  FrozenImmobilizerRule frozen_immobilizer = FrozenImmobilizerRule::kStillFreezes;

  friend bool operator==(const Rules&, const Rules&) = default;

  // Parses "PRESET" or "PRESET,switch=value,...", e.g. "abbott1963",
  // "cambridge", "abbott1963,leaper=single,stalemate=draw".
  // Throws std::invalid_argument naming the unknown preset, switch or value.
  static Rules parse(std::string_view text);
  static Rules preset(std::string_view name);  // throws on an unknown name

  // The preset's name when these rules are exactly a preset, else the
  // shortest "PRESET,switch=value,..." form (against abbott1963).
  std::string name() const;

  // FEN of this rule set's start position.
  std::string start_fen() const;
};

// Names of the presets, in the order of RULES.md section 9.
const std::vector<std::string>& preset_names();
// "switch: value|value|..." lines, for help texts.
std::vector<std::string> switch_descriptions();

}  // namespace ultima
