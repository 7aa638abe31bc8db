#include "nn/data/run_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>
#include <stdexcept>

#include "engine/base/file_io.h"

namespace ultima::data {
namespace {

namespace fs = std::filesystem;

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string text_of(const RoleHolder& h, const std::string& token) {
  std::ostringstream out;
  out << "role " << h.role << "\nhost " << h.host << "\npid " << h.pid << "\nstarted " << h.started
      << "\nheartbeat " << h.heartbeat << "\ntoken " << token << "\n";
  for (const auto& [key, value] : h.status) out << "status." << key << " " << value << "\n";
  return out.str();
}

// Parses a role file; false when it is not one (a half-written file cannot
// be seen: every rewrite is atomic, and the first write fills it at once).
bool parse(const std::string& text, RoleHolder& h, std::string& token) {
  std::istringstream in(text);
  std::string line;
  bool has_pid = false;
  while (std::getline(in, line)) {
    const std::size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    const std::string key = line.substr(0, space), value = line.substr(space + 1);
    try {
      if (key == "role") h.role = value;
      else if (key == "host") h.host = value;
      else if (key == "pid") h.pid = std::stol(value), has_pid = true;
      else if (key == "started") h.started = std::stoll(value);
      else if (key == "heartbeat") h.heartbeat = std::stoll(value);
      else if (key == "token") token = value;
      else if (key.rfind("status.", 0) == 0) h.status[key.substr(7)] = value;
    } catch (const std::exception&) {
      return false;
    }
  }
  return has_pid && !h.host.empty();
}

// The role file at `path` as it is now; false when it is missing or not a
// role file.
bool read_holder(const std::string& path, RoleHolder& h, std::string& token) {
  try {
    return parse(read_file(path), h, token);
  } catch (const std::exception&) {
    return false;
  }
}

bool judged_alive(const RoleHolder& h, int stale_after_seconds) {
  if (h.host == host_name()) return h.pid > 0 && (::kill(static_cast<pid_t>(h.pid), 0) == 0 || errno == EPERM);
  return now_seconds() - h.heartbeat <= stale_after_seconds;
}

std::string describe(const RoleHolder& h) {
  return "pid " + std::to_string(h.pid) + " on " + h.host + ", last heartbeat " +
         std::to_string(std::max<std::int64_t>(0, now_seconds() - h.heartbeat)) + " s ago";
}

}  // namespace

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "unknown-host";
  return name;
}

RoleLock::RoleLock(const RunDir& run, const std::string& role, std::string* warning, int stale_after_seconds) {
  fs::create_directories(run.path("locks"));
  path_ = run.path("locks/" + role + ".lock");
  std::random_device rd;
  token_ = std::to_string(rd()) + std::to_string(rd());
  me_.role = role;
  me_.host = host_name();
  me_.pid = static_cast<long>(::getpid());
  me_.started = me_.heartbeat = now_seconds();
  const std::string text = text_of(me_, token_);

  // The usual case: nobody holds it. The file is filled through a private
  // temporary name and linked into place, so it is never seen empty.
  const std::string temp = path_ + ".new-" + token_;
  write_file_atomically(temp, text);
  const bool made = ::link(temp.c_str(), path_.c_str()) == 0;
  const int link_error = errno;
  ::unlink(temp.c_str());
  if (made) return;
  if (link_error != EEXIST) throw std::runtime_error("cannot take " + path_ + ": " + std::strerror(link_error));

  RoleHolder holder;
  std::string their_token;
  const bool readable = read_holder(path_, holder, their_token);
  if (readable && judged_alive(holder, stale_after_seconds))
    throw std::runtime_error("the role " + role + " of " + run.root() + " is held by " + describe(holder) +
                             " (" + path_ + "); stop that process first" +
                             (holder.host == me_.host ? "" : ", or wait until its heartbeat is " +
                                                                 std::to_string(stale_after_seconds) + " s old"));
  // Stale: take it over, then make sure no one else took it at the same time.
  write_file_atomically(path_, text);
  RoleHolder check;
  std::string check_token;
  if (!read_holder(path_, check, check_token) || check_token != token_)
    throw std::runtime_error("the role " + role + " of " + run.root() + " was taken by another process just now");
  if (warning)
    *warning = "took over the stale role " + role + " (" +
               (readable ? describe(holder) : std::string("an unreadable lock file")) + ")";
}

RoleLock::~RoleLock() {
  RoleHolder h;
  std::string token;
  if (read_holder(path_, h, token) && token == token_) ::unlink(path_.c_str());
}

void RoleLock::heartbeat(const std::map<std::string, std::string>& status) {
  // A holder whose heartbeat lagged past the stale time may have been
  // replaced: then it must stop rather than hold the role twice.
  RoleHolder h;
  std::string token;
  if (!read_holder(path_, h, token) || token != token_)
    throw std::runtime_error("lost the role " + me_.role + ": " + path_ + " now names " +
                             (h.host.empty() ? std::string("no one") : describe(h)));
  me_.heartbeat = now_seconds();
  me_.status = status;
  write_file_atomically(path_, text_of(me_, token_));
}

std::vector<RoleHolder> read_role_holders(const RunDir& run, int stale_after_seconds) {
  std::vector<RoleHolder> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run.path("locks"), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 6 || name.compare(name.size() - 5, 5, ".lock") != 0) continue;
    RoleHolder h;
    std::string token;
    if (!read_holder(entry.path().string(), h, token)) continue;
    h.alive = judged_alive(h, stale_after_seconds);
    out.push_back(std::move(h));
  }
  std::sort(out.begin(), out.end(), [](const RoleHolder& a, const RoleHolder& b) { return a.role < b.role; });
  return out;
}

}  // namespace ultima::data
