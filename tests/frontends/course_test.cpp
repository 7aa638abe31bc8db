// The rules course (frontends/server/course.h, configs/course/course.json):
// every shipped exercise is sound (its solution does what it asks, checked
// by the rules core, and some legal move does not), the course covers
// every piece, freezing, removal, check, mate and the draws, and a damaged
// course file is refused naming the place.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include "engine/rules/movegen.h"
#include "engine/rules/notation.h"
#include "engine/rules/replay.h"
#include "frontends/server/course.h"
#include "test_util.h"

namespace ultima {
namespace {

TEST(Course, EveryShippedExerciseIsSolvedByItsSolutionAndNotByAnyMove) {
  const std::vector<CourseLesson> course = read_course(default_course_file());
  ASSERT_FALSE(course.empty());
  std::set<std::string> ids;
  int exercises = 0;
  for (const CourseLesson& lesson : course) {
    EXPECT_TRUE(ids.insert(lesson.id).second) << "two lessons named " << lesson.id;
    for (std::size_t i = 0; i < lesson.exercises.size(); ++i) {
      const CourseExercise& x = lesson.exercises[i];
      SCOPED_TRACE(lesson.id + " exercise " + std::to_string(i + 1));
      const CourseCheck solved = check_exercise(x, x.solution);
      EXPECT_TRUE(solved.done) << x.solution << ": " << solved.why;
      // The goal is not met by every legal move.
      const Position start = start_position(x.fen, x.rules);
      MoveList moves;
      generate_legal(start, moves);
      int failing = 0;
      for (const Move& m : moves) failing += !check_exercise(x, to_coordinate(m)).done;
      EXPECT_GT(failing, 0) << "every move solves it";
      if (!x.hint_square.empty()) {
        EXPECT_EQ(x.solution.substr(x.solution[0] == 'x' ? 1 : 0, 2), x.hint_square) << "the hint marks another piece";
      }
      ++exercises;
    }
  }
  EXPECT_GE(exercises, 12);
  // The lessons the course promises.
  for (const char* id : {"pawn", "leaper", "withdrawer", "coordinator", "immobilizer", "chameleon", "king", "removal",
                         "draws"})
    EXPECT_TRUE(ids.count(id)) << "no lesson " << id;
}

TEST(Course, AMoveIsCheckedByTheRulesCore) {
  const std::vector<CourseLesson> course = read_course(default_course_file());
  const CourseExercise& pinch = course.front().exercises.front();  // c1c5 pinches d5
  EXPECT_TRUE(check_exercise(pinch, "c1c5").done);
  const CourseCheck short_move = check_exercise(pinch, "c1c4");
  EXPECT_FALSE(short_move.done);
  EXPECT_NE(short_move.why.find("d5"), std::string::npos) << short_move.why;
  EXPECT_THROW(check_exercise(pinch, "c1d2"), ReplayError);
}

TEST(Course, ADamagedFileIsRefusedNamingThePlace) {
  const test::TempDir dir("course");
  auto refused = [&](const std::string& text, const std::string& part) {
    const std::string path = dir.path() + "/c.json";
    std::ofstream(path) << text;
    try {
      read_course(path);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const CourseError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  refused("not json", "not JSON");
  refused(R"({"lessons": [{"id": "a", "title": "t", "text": "x", "exercises": []}]})", "at least one");
  refused(R"({"lessons": [{"id": "a", "title": "t", "text": "x", "exercises": [{"fen": "8/8 w", "task": "t",
          "solution": "a1a2", "goal": {"mate": true}}]}]})", "exercise 1");
  refused(R"({"lessons": [{"id": "a", "title": "t", "text": "x", "exercises": [{"fen": "k7/8/8/8/8/8/P7/7K w 0 1",
          "task": "t", "solution": "h1h2", "goal": {"win": true}}]}]})", "unknown goal 'win'");
  refused(R"({"lessons": [{"id": "a", "title": "t", "text": "x", "exercises": [{"fen": "k7/8/8/8/8/8/P7/7K w 0 1",
          "task": "t", "solution": "h1h2", "goal": {"captures": ["z9"]}}]}]})", "not a square");
  EXPECT_THROW(read_course(dir.path() + "/missing.json"), CourseError);
}

}  // namespace
}  // namespace ultima
