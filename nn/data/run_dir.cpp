#include "nn/data/run_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "engine/base/file_io.h"

namespace fs = std::filesystem;

namespace ultima::data {
namespace {

// "PREFIX-NNNNNN.EXT" -> NNNNNN, when the name has exactly that form.
std::optional<std::uint64_t> numbered(const std::string& name, const std::string& prefix, const std::string& ext) {
  if (name.size() <= prefix.size() + ext.size() || name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - ext.size(), ext.size(), ext) != 0)
    return std::nullopt;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - ext.size());
  if (digits.empty() || digits.size() > 12 || !std::all_of(digits.begin(), digits.end(), ::isdigit))
    return std::nullopt;
  return std::stoull(digits);
}

std::string padded(std::uint64_t n) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%06llu", static_cast<unsigned long long>(n));
  return buffer;
}

}  // namespace

RunDir::RunDir(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  if (root_.empty()) throw std::runtime_error("the run directory is empty");
  for (const char* sub : {"", "/models", "/selfplay", "/games", "/checkpoints", "/logs"}) {
    std::error_code ec;
    fs::create_directories(root_ + sub, ec);
    if (ec || !fs::is_directory(root_ + sub))
      throw std::runtime_error("cannot create the run directory " + root_ + sub + ": " + ec.message());
  }
}

std::string RunDir::model_path(std::uint64_t version) const {
  return root_ + "/models/model-" + padded(version) + ".unn";
}

std::vector<std::uint64_t> RunDir::model_versions() const {
  std::vector<std::uint64_t> out;
  for (const auto& entry : fs::directory_iterator(root_ + "/models"))
    if (auto v = numbered(entry.path().filename().string(), "model-", ".unn")) out.push_back(*v);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::uint64_t> RunDir::latest_model() const {
  const auto versions = model_versions();
  if (versions.empty()) return std::nullopt;
  return versions.back();
}

std::optional<std::uint64_t> RunDir::best_model() const {
  const std::string file = root_ + "/models/best";
  if (fs::exists(file)) {
    std::istringstream in(read_file(file));
    std::uint64_t v = 0;
    if (in >> v && fs::exists(model_path(v))) return v;
  }
  return latest_model();
}

void RunDir::set_best_model(std::uint64_t version) const {
  write_file_atomically(root_ + "/models/best", std::to_string(version) + "\n");
}

std::string RunDir::shard_path(const std::string& tag, int sequence) const {
  return root_ + "/selfplay/" + tag + "-" + padded(static_cast<std::uint64_t>(sequence)) + ".shard";
}

std::string RunDir::games_path(const std::string& tag, int sequence) const {
  return root_ + "/games/" + tag + "-" + padded(static_cast<std::uint64_t>(sequence)) + ".pgn";
}

std::vector<std::string> RunDir::shard_paths() const {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(root_ + "/selfplay")) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.size() > 6 && name.compare(name.size() - 6, 6, ".shard") == 0)
      out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> RunDir::shard_sequences(const std::string& tag) const {
  std::vector<int> out;
  for (const auto& entry : fs::directory_iterator(root_ + "/selfplay"))
    if (auto v = numbered(entry.path().filename().string(), tag + "-", ".shard")) out.push_back(static_cast<int>(*v));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ultima::data
