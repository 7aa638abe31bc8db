// The 8 symmetries of the square and the colour flip map legal moves to
// legal moves, so perft is the same through every one of them.
#include <gtest/gtest.h>

#include <set>

#include "test_util.h"

namespace ultima {
namespace {

constexpr Symmetry kAll[] = {Symmetry::kIdentity,    Symmetry::kRotate90,    Symmetry::kRotate180,
                             Symmetry::kRotate270,   Symmetry::kMirrorFiles, Symmetry::kMirrorRanks,
                             Symmetry::kTranspose,   Symmetry::kAntiTranspose};

TEST(Symmetry, SquareMapsAreBijectionsWithInverses) {
  for (Symmetry sym : kAll) {
    std::set<Square> image;
    for (Square s = 0; s < 64; ++s) {
      image.insert(transform(s, sym));
      EXPECT_EQ(transform(transform(s, sym), inverse(sym)), s) << symmetry_name(sym);
    }
    EXPECT_EQ(image.size(), 64u);
  }
  EXPECT_EQ(transform(parse_square("a1"), Symmetry::kRotate90), parse_square("a8"));
  EXPECT_EQ(transform(parse_square("b1"), Symmetry::kTranspose), parse_square("a2"));
  EXPECT_EQ(transform(parse_square("a1"), Symmetry::kAntiTranspose), parse_square("h8"));
  EXPECT_EQ(transform(parse_square("c2"), Symmetry::kMirrorFiles), parse_square("f2"));
}

TEST(Symmetry, EightSymmetriesAreDistinct) {
  std::set<std::vector<Square>> maps;
  for (Symmetry sym : kAll) {
    std::vector<Square> m;
    for (Square s = 0; s < 64; ++s) m.push_back(transform(s, sym));
    maps.insert(m);
  }
  EXPECT_EQ(maps.size(), 8u);
}

// Legal moves of the transformed position are the transformed legal moves.
TEST(Symmetry, LegalMovesAreEquivariant) {
  std::mt19937_64 rng(21);
  for (const Rules& rules : test::all_presets()) {
    for (int i = 0; i < 60; ++i) {
      const Position pos = i % 2 ? test::random_game_position(rules, rng, 10 + i)
                                 : test::random_placement(rules, rng, 14);
      MoveList list;
      generate_legal(pos, list);
      for (Symmetry sym : kAll) {
        for (bool flip : {false, true}) {
          const Position image = transform(pos, sym, flip);
          std::vector<std::string> expected;
          for (const Move& m : list) {
            const Move t = transform(m, sym);
            expected.push_back(to_coordinate(t) + " " + captures_text(t));
          }
          std::sort(expected.begin(), expected.end());
          ASSERT_EQ(test::move_lines(image), expected)
              << pos.fen() << " through " << symmetry_name(sym) << (flip ? " with colour flip" : "");
        }
      }
    }
  }
}

TEST(Symmetry, PerftIsInvariant) {
  std::mt19937_64 rng(5);
  for (const Rules& rules : test::all_presets()) {
    for (int i = 0; i < 6; ++i) {
      Position pos = test::random_game_position(rules, rng, 20 + 7 * i);
      const std::uint64_t nodes = perft(pos, 3);
      for (Symmetry sym : kAll) {
        for (bool flip : {false, true}) {
          Position image = transform(pos, sym, flip);
          EXPECT_EQ(perft(image, 3), nodes) << pos.fen() << " " << symmetry_name(sym) << " flip " << flip;
        }
      }
    }
  }
}

TEST(Symmetry, ColourFlipSwapsSidesAndTransformTwiceIsIdentity) {
  const Position start = Position::start();
  const Position flipped = transform(start, Symmetry::kRotate180, true);
  // The rotated start position is its own image under a half turn and swapped colours.
  EXPECT_EQ(flipped.fen(), "clxwkxli/pppppppp/8/8/8/8/PPPPPPPP/ILXKWXLC b 0 1");
  EXPECT_EQ(transform(flipped, Symmetry::kRotate180, true).fen(), start.fen());
}

}  // namespace
}  // namespace ultima
