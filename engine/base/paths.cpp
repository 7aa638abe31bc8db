#include "engine/base/paths.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace ultima {

namespace fs = std::filesystem;

std::string program_directory() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return ".";
  return exe.parent_path().string();
}

namespace {

// True for a program inside the build folder it was compiled in.
bool run_from_build_folder() {
#if defined(ULTIMA_BUILD_DIR)
  const std::string build = fs::weakly_canonical(ULTIMA_BUILD_DIR).string();
  const std::string program = fs::weakly_canonical(program_directory()).string();
  return program == build || program.rfind(build + "/", 0) == 0;
#else
  return false;
#endif
}

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

}  // namespace

std::string data_path(const std::string& relative) {
  if (const char* root = std::getenv("ULTIMA_DATA"); root && *root) {
    if (const std::string path = std::string(root) + "/" + relative; exists(path)) return path;
  }
  if (const std::string installed = program_directory() + "/../share/ultima/" + relative; exists(installed))
    return fs::weakly_canonical(installed).string();
#if defined(ULTIMA_SOURCE_DIR)
  if (run_from_build_folder()) {
    if (const std::string source = std::string(ULTIMA_SOURCE_DIR) + "/" + relative; exists(source)) return source;
  }
#endif
  return relative;
}

}  // namespace ultima
