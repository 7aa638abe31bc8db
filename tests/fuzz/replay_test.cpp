// Every kept fuzz input (tests/fuzz/corpus/<target>/: the inputs that once
// crashed a target, and a few seeds) through the same target functions as
// the fuzzers, without libFuzzer, so any compiler replays them in ctest.
// A target aborts or a sanitizer reports on a regression.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_targets.h"

namespace ultima::fuzz {
namespace {

namespace fs = std::filesystem;

class FuzzCorpus : public ::testing::TestWithParam<NamedTarget> {};

TEST_P(FuzzCorpus, EveryKeptInputIsHandled) {
  const fs::path dir = fs::path(ULTIMA_FUZZ_CORPUS) / GetParam().name;
  ASSERT_TRUE(fs::is_directory(dir)) << dir << ": each target keeps a corpus, seeds at least";
  int inputs = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    SCOPED_TRACE(entry.path().string());
    EXPECT_EQ(GetParam().run(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), 0);
    ++inputs;
  }
  EXPECT_GT(inputs, 0);
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzCorpus, ::testing::ValuesIn(all_targets()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ultima::fuzz
