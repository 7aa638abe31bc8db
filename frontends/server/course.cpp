// The rules course (course.h).
#include "frontends/server/course.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/base/paths.h"
#include "engine/rules/movegen.h"
#include "engine/rules/notation.h"
#include "engine/rules/replay.h"

namespace ultima {
namespace {

using json = nlohmann::json;

bool valid_square(const std::string& s) {
  return s.size() == 2 && s[0] >= 'a' && s[0] <= 'h' && s[1] >= '1' && s[1] <= '8';
}

Square square_of(const std::string& s) { return make_square(s[0] - 'a', s[1] - '1'); }

std::vector<std::string> squares(const json& v, const std::string& where) {
  std::vector<std::string> out;
  if (v.is_null()) return out;
  if (!v.is_array()) throw CourseError(where + " must be a list of squares");
  for (const json& s : v) {
    if (!s.is_string() || !valid_square(s.get<std::string>())) throw CourseError(where + ": '" + s.dump() + "' is not a square");
    out.push_back(s.get<std::string>());
  }
  return out;
}

std::string text(const json& o, const char* key, const std::string& where, bool required = true) {
  if (!o.contains(key) || o[key].is_null()) {
    if (required) throw CourseError(where + ": '" + key + "' is missing");
    return "";
  }
  if (!o[key].is_string()) throw CourseError(where + ": '" + key + "' must be text");
  return o[key].get<std::string>();
}

}  // namespace

std::string default_course_file() {
  if (const char* env = std::getenv("ULTIMA_COURSE"); env && *env) return env;
  return data_path("configs/course/course.json");
}

std::vector<CourseLesson> read_course(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CourseError("course '" + path + "': cannot be read");
  std::stringstream buffer;
  buffer << in.rdbuf();
  json doc;
  try {
    doc = json::parse(buffer.str());
  } catch (const json::exception& e) {
    throw CourseError("course '" + path + "': not JSON: " + e.what());
  }
  if (!doc.is_object() || !doc.contains("lessons") || !doc["lessons"].is_array())
    throw CourseError("course '" + path + "': an object with a list 'lessons' is expected");
  std::vector<CourseLesson> lessons;
  for (std::size_t l = 0; l < doc["lessons"].size(); ++l) {
    const json& lj = doc["lessons"][l];
    const std::string lw = "course '" + path + "', lesson " + std::to_string(l + 1);
    if (!lj.is_object()) throw CourseError(lw + ": an object is expected");
    CourseLesson lesson;
    lesson.id = text(lj, "id", lw);
    lesson.title = text(lj, "title", lw);
    lesson.text = text(lj, "text", lw);
    if (!lj.contains("exercises") || !lj["exercises"].is_array() || lj["exercises"].empty())
      throw CourseError(lw + ": 'exercises' must be a list of at least one");
    for (std::size_t e = 0; e < lj["exercises"].size(); ++e) {
      const json& ej = lj["exercises"][e];
      const std::string ew = lw + " ('" + lesson.id + "'), exercise " + std::to_string(e + 1);
      if (!ej.is_object()) throw CourseError(ew + ": an object is expected");
      CourseExercise x;
      x.fen = text(ej, "fen", ew);
      try {
        x.rules = Rules::parse(text(ej, "rules", ew, false).empty() ? kDefaultRules : text(ej, "rules", ew));
        const Position start = start_position(x.fen, x.rules);
        if (game_status(start).over()) throw CourseError("the game is over in this position");
      } catch (const CourseError& err) {
        throw CourseError(ew + ": " + err.what());
      } catch (const std::exception& err) {
        throw CourseError(ew + ": " + err.what());
      }
      x.task = text(ej, "task", ew);
      x.hint = text(ej, "hint", ew, false);
      x.hint_square = text(ej, "hint_square", ew, false);
      if (!x.hint_square.empty() && !valid_square(x.hint_square)) throw CourseError(ew + ": 'hint_square' is not a square");
      x.solution = text(ej, "solution", ew);
      const json goal = ej.contains("goal") ? ej["goal"] : json();
      if (!goal.is_object()) throw CourseError(ew + ": 'goal' must be an object");
      for (auto it = goal.begin(); it != goal.end(); ++it)
        if (it.key() != "captures" && it.key() != "frozen" && it.key() != "removal" && it.key() != "mate" &&
            it.key() != "draw")
          throw CourseError(ew + ": unknown goal '" + it.key() + "' (captures, frozen, removal, mate, draw)");
      x.captures = squares(goal.value("captures", json()), ew + ": goal.captures");
      x.frozen = squares(goal.value("frozen", json()), ew + ": goal.frozen");
      x.removal = goal.value("removal", false);
      x.mate = goal.value("mate", false);
      x.draw = goal.value("draw", false);
      if (x.captures.empty() && x.frozen.empty() && !x.removal && !x.mate && !x.draw)
        throw CourseError(ew + ": the goal asks for nothing");
      lesson.exercises.push_back(std::move(x));
    }
    lessons.push_back(std::move(lesson));
  }
  return lessons;
}

CourseCheck check_exercise(const CourseExercise& x, const std::string& move) {
  const Position start = start_position(x.fen, x.rules);
  const ReplayedGame played = replay_game(start, {move});
  const Move& m = played.moves[0];
  const Position& after = played.last();
  const Color mover = start.side_to_move();
  CourseCheck check;
  for (const std::string& s : x.captures) {
    const bool taken = m.is_removal() ? false : (m.captures & square_bb(square_of(s))) != 0;
    if (!taken) {
      check.why = "that move does not capture the piece on " + s;
      return check;
    }
  }
  if (!x.frozen.empty()) {
    const Bitboard frozen = after.frozen(~mover);
    for (const std::string& s : x.frozen)
      if (!(frozen & square_bb(square_of(s)))) {
        check.why = "the piece on " + s + " is not frozen after that move";
        return check;
      }
  }
  if (x.removal && !m.is_removal()) {
    check.why = "that is a move, not a removal";
    return check;
  }
  const GameStatus status = game_status(after);
  if (x.mate && status.termination != Termination::kCheckmate) {
    check.why = "that move does not checkmate";
    return check;
  }
  if (x.draw && status.outcome != Outcome::kDraw) {
    check.why = "the game is not drawn after that move";
    return check;
  }
  check.done = true;
  return check;
}

}  // namespace ultima
