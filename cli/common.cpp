#include "common.h"

#include <exception>
#include <filesystem>
#include <random>
#include <stdexcept>

#include "engine/play/level.h"
#include "nn/network.h"

namespace ultima::cli {

CLI::Option* add_rules_option(CLI::App* cmd, std::string& rules, const std::string& help) {
  return cmd->add_option("--rules", rules, help)->capture_default_str();
}

CLI::Option* add_nnue_option(CLI::App* cmd, std::string& nnue, const std::string& what) {
  return cmd->add_option("--nnue", nnue,
                         "evaluation of " + what +
                             ": default (the shipped learned one), none (the hand-written one) or a network file")
      ->capture_default_str();
}

void check_nnue_option(const std::string& nnue) {
  try {
    load_nnue(nnue);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("--nnue: ") + e.what());
  }
}

Position make_position(const PositionOptions& options) {
  const Rules rules = Rules::parse(options.rules);
  if (options.fen == "startpos") return Position::start(rules);
  return Position::from_fen(options.fen, rules);
}

NewDirectoryGuard::NewDirectoryGuard(std::string dir)
    : dir_(std::move(dir)), existed_(std::filesystem::exists(dir_)), exceptions_(std::uncaught_exceptions()) {}

NewDirectoryGuard::~NewDirectoryGuard() {
  if (existed_ || std::uncaught_exceptions() == exceptions_) return;
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

NetworkFactory shared_network_factory() { return shared_networks(network_factory()); }

std::uint64_t draw_seed() {
  std::random_device entropy;
  const std::uint64_t high = entropy(), low = entropy();
  return ((high << 32) | low) & ((std::uint64_t{1} << 53) - 1);
}

NetworkFactory network_factory() {
  return [](const std::string& settings) -> std::shared_ptr<Evaluator> {
    return nn::make_nn_evaluator(nn::NnConfig::parse(settings));
  };
}

}  // namespace ultima::cli
