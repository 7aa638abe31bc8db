#include "engine/rules/replay.h"

#include "engine/rules/movegen.h"
#include "engine/rules/notation.h"

namespace ultima {
namespace {

std::string replay_message(const std::string& list, std::size_t index, const std::string& text,
                           const std::string& problem) {
  constexpr std::size_t kShown = 40;
  const std::string shown = text.size() > kShown ? text.substr(0, kShown) + "..." : text;
  return list + "[" + std::to_string(index) + "] '" + shown + "': " + problem;
}

}  // namespace

ReplayError::ReplayError(const std::string& list, std::size_t index_, const std::string& text_,
                         const std::string& problem_)
    : std::invalid_argument(replay_message(list, index_, text_, problem_)),
      index(index_),
      text(text_),
      problem(problem_) {}

Position start_position(const std::string& fen, const Rules& rules) {
  return fen.empty() || fen == "startpos" ? Position::start(rules) : Position::from_fen(fen, rules);
}

ReplayedGame replay_game(const Position& start, const std::vector<std::string>& moves, const std::string& list) {
  ReplayedGame game;
  game.positions.reserve(moves.size() + 1);
  game.positions.push_back(start);
  for (std::size_t i = 0; i < moves.size(); ++i) {
    Position pos = game.positions.back();
    const GameStatus status = game_status(pos);
    if (status.over())
      throw ReplayError(list, i, moves[i],
                        std::string("the game has already ended (") + termination_name(status.termination) + ")");
    Move m;
    try {
      m = parse_coordinate(pos, moves[i]);
    } catch (const std::invalid_argument& e) {
      throw ReplayError(list, i, moves[i], e.what());
    }
    pos.make(m);
    game.moves.push_back(m);
    game.positions.push_back(pos);
  }
  return game;
}

}  // namespace ultima
