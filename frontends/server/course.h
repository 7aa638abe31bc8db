// The rules course (configs/course/course.json, docs/web.md "Learn"):
// lessons of exercises on the board, each a position, a task and a goal
// that the rules core checks when a move is played there: the move
// captures these squares, leaves those enemy pieces frozen, removes a
// frozen piece of one's own, mates, or ends the game drawn.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "engine/rules/rule_set.h"

namespace ultima {

struct CourseExercise {
  std::string fen;
  Rules rules;
  std::string task;                   // what to do, for people
  std::string hint;
  std::string hint_square;            // the piece to move, marked by the hint
  // The goal: every part given must hold after the move.
  std::vector<std::string> captures;  // these squares are captured by it
  std::vector<std::string> frozen;    // these squares hold frozen enemy pieces after it
  bool removal = false;               // it is a removal
  bool mate = false;                  // it checkmates
  bool draw = false;                  // the game is drawn after it
  std::string solution;               // one move that does it (checked by the tests)
};

struct CourseLesson {
  std::string id;
  std::string title;
  std::string text;                   // the lesson's explanation, before its exercises
  std::vector<CourseExercise> exercises;
};

// A course file that cannot be read, or an exercise that is not sound:
// the file and the place named.
class CourseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads and checks a course: every position legal and not over, every
// square a square, at least one goal part per exercise.
std::vector<CourseLesson> read_course(const std::string& path);

// The shipped course: $ULTIMA_COURSE, else configs/course/course.json of
// the data folder (engine/base/paths.h).
std::string default_course_file();

struct CourseCheck {
  bool done = false;
  std::string why;  // when not done: what the move missed
};

// Does `move` (coordinate form, legal in the exercise's position) do what
// the exercise asks? Throws ReplayError for a move that is not legal there.
CourseCheck check_exercise(const CourseExercise& exercise, const std::string& move);

}  // namespace ultima
