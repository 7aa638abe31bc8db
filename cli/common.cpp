#include "common.h"

#include "nn/network.h"

namespace ultima::cli {

Position make_position(const PositionOptions& options) {
  const Rules rules = Rules::parse(options.rules);
  if (options.fen == "startpos") return Position::start(rules);
  return Position::from_fen(options.fen, rules);
}

NetworkFactory network_factory() {
  return [](const std::string& settings) -> std::shared_ptr<Evaluator> {
    return nn::make_nn_evaluator(nn::NnConfig::parse(settings));
  };
}

}  // namespace ultima::cli
