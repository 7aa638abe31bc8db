// The base layer's text helpers, on the inputs the protocols and files give.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/base/text.h"

namespace ultima {
namespace {

using Words = std::vector<std::string>;

TEST(Text, SplitWordsSkipsEveryKindOfBlank) {
  EXPECT_EQ(split_words("go  depth\t5\r\n"), (Words{"go", "depth", "5"}));
  EXPECT_EQ(split_words("   "), Words{});
  EXPECT_EQ(split_words(""), Words{});
  EXPECT_EQ(split_words("one"), Words{"one"});
}

TEST(Text, SplitKeepsEmptyFields) {
  EXPECT_EQ(split("a,,b", ','), (Words{"a", "", "b"}));
  EXPECT_EQ(split("", ','), Words{""});
  EXPECT_EQ(split("a,b,", ','), (Words{"a", "b", ""}));
}

TEST(Text, TrimAndLower) {
  EXPECT_EQ(trim(" \tkey: value \t\r\n"), "key: value");
  EXPECT_EQ(trim("   "), "");
  EXPECT_EQ(to_lower("UCI_ShowWDL"), "uci_showwdl");
}

TEST(Text, ParseIntegerTakesTheWholeTextOnly) {
  long long n = 7;
  EXPECT_TRUE(parse_integer("-42", n));
  EXPECT_EQ(n, -42);
  for (const char* bad : {"", "4x", " 4", "4 ", "1e3", "99999999999999999999", "-"}) {
    n = 7;
    EXPECT_FALSE(parse_integer(bad, n)) << bad;
    EXPECT_EQ(n, 7) << bad;  // left alone
  }
}

}  // namespace
}  // namespace ultima
