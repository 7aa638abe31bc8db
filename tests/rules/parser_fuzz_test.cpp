// Thousands of random and mutated strings through the FEN and move parsers:
// each is either accepted or rejected with FenError / MoveError, never a
// crash (CI also runs this under AddressSanitizer and UBSan).
#include <gtest/gtest.h>

#include "test_util.h"

namespace ultima {
namespace {

const std::string kAlphabet = "KPWLCIXkpwlcixQqNn12345678909/ -wbx+#rm\t\n\x01\xff";

std::string mutate(std::string s, std::mt19937_64& rng) {
  const int edits = 1 + rng() % 4;
  for (int e = 0; e < edits; ++e) {
    const size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 4) {
      case 0:  // insert
        s.insert(s.begin() + pos, kAlphabet[rng() % kAlphabet.size()]);
        break;
      case 1:  // delete
        if (!s.empty() && pos < s.size()) s.erase(pos, 1 + rng() % 3);
        break;
      case 2:  // replace
        if (pos < s.size()) s[pos] = kAlphabet[rng() % kAlphabet.size()];
        break;
      default:  // duplicate a slice
        if (!s.empty() && pos < s.size()) s.insert(pos, s.substr(pos, 1 + rng() % 8));
    }
  }
  return s;
}

std::string random_string(std::mt19937_64& rng) {
  std::string s;
  const int n = rng() % 80;
  for (int i = 0; i < n; ++i) s += kAlphabet[rng() % kAlphabet.size()];
  return s;
}

TEST(ParserFuzz, FenParserAcceptsOrRejectsCleanly) {
  std::mt19937_64 rng(2024);
  std::vector<std::string> seeds;
  for (const Rules& rules : test::all_presets()) {
    seeds.push_back(rules.start_fen());
    for (int i = 0; i < 10; ++i) seeds.push_back(test::random_game_position(rules, rng, 5 * i).fen());
  }
  int accepted = 0, rejected = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string text = i % 5 == 0 ? random_string(rng) : mutate(seeds[rng() % seeds.size()], rng);
    const Rules rules = test::all_presets()[rng() % 5];
    try {
      const Position pos = Position::from_fen(text, rules);
      ++accepted;
      // Whatever is accepted is a consistent position.
      EXPECT_EQ(Position::from_fen(pos.fen(), rules).fen(), pos.fen()) << text;
      MoveList list;
      generate_legal(pos, list);
    } catch (const FenError& e) {
      ++rejected;
      EXPECT_GT(std::string(e.what()).size(), 10u);
    }
  }
  EXPECT_GT(accepted, 100);
  EXPECT_GT(rejected, 10000);
}

TEST(ParserFuzz, MoveParserAcceptsOrRejectsCleanly) {
  std::mt19937_64 rng(77);
  int accepted = 0, rejected = 0;
  for (int i = 0; i < 400; ++i) {
    const Rules rules = test::all_presets()[i % 5];
    const Position pos = test::random_game_position(rules, rng, i % 60);
    MoveList list;
    generate_legal(pos, list);
    for (int j = 0; j < 30; ++j) {
      std::string text;
      if (j % 6 == 0 || list.empty()) {
        text = random_string(rng);
      } else {
        const Move& m = list[rng() % list.size()];
        text = mutate(j % 2 ? to_coordinate(m) : to_readable(pos, m), rng);
      }
      try {
        const Move m = parse_move(pos, text);
        ++accepted;
        EXPECT_TRUE(std::find(list.begin(), list.end(), m) != list.end()) << text;
      } catch (const MoveError& e) {
        ++rejected;
        EXPECT_GT(std::string(e.what()).size(), 10u);
      }
    }
  }
  EXPECT_GT(accepted, 50);
  EXPECT_GT(rejected, 5000);
}

}  // namespace
}  // namespace ultima
