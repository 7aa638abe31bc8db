#include "common.h"

namespace ultima::cli {

Position make_position(const PositionOptions& options) {
  const Rules rules = Rules::parse(options.rules);
  if (options.fen == "startpos") return Position::start(rules);
  return Position::from_fen(options.fen, rules);
}

}  // namespace ultima::cli
