// The one atomic writer: whole files only, the old file kept on failure, no
// temporary file left behind, concurrent writers never mixing their bytes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/base/file_io.h"

namespace ultima {
namespace {

namespace fs = std::filesystem;

fs::path fresh_folder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("ultima-file-io-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  return names;
}

TEST(FileIo, WritesPartsInOrderAndReplacesTheOldFile) {
  const fs::path dir = fresh_folder("parts");
  const std::string path = (dir / "a.txt").string();
  write_file_atomically(path, "old contents");
  EXPECT_EQ(read_file(path), "old contents");
  const std::string binary("\0\1\2", 3);
  write_file_atomically(path, {"head|", binary, "|tail"});
  EXPECT_EQ(read_file(path), "head|" + binary + "|tail");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"a.txt"});
  fs::remove_all(dir);
}

TEST(FileIo, AFailedWriteNamesThePathAndLeavesNothing) {
  const fs::path dir = fresh_folder("fail");
  const std::string path = (dir / "missing-folder" / "b.txt").string();
  try {
    write_file_atomically(path, "x");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  // A folder in the way of the rename: the write fails and the folder stays.
  const std::string blocked = (dir / "blocked").string();
  fs::create_directories(fs::path(blocked) / "inside");
  EXPECT_THROW(write_file_atomically(blocked, "x"), std::runtime_error);
  EXPECT_TRUE(fs::is_directory(blocked));
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"blocked"});
  fs::remove_all(dir);
}

TEST(FileIo, ConcurrentWritersLeaveOneWholeVersion) {
  const fs::path dir = fresh_folder("race");
  const std::string path = (dir / "c.txt").string();
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t)
    writers.emplace_back([&, t] {
      const std::string text(100000, static_cast<char>('a' + t));
      for (int i = 0; i < 20; ++i) write_file_atomically(path, text);
    });
  for (std::thread& w : writers) w.join();
  const std::string result = read_file(path);
  ASSERT_EQ(result.size(), 100000u);
  EXPECT_EQ(result.find_first_not_of(result[0]), std::string::npos);
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"c.txt"});
  fs::remove_all(dir);
}

TEST(FileIo, ReadingAMissingFileNamesIt) {
  try {
    read_file("/nonexistent/ultima/file");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/ultima/file"), std::string::npos);
  }
}

}  // namespace
}  // namespace ultima
