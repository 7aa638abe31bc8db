// Roles in a run directory that many processes, on many machines, share:
// a self-play worker's tag, the trainer, the gatekeeper. A role is held
// through DIR/locks/ROLE.lock, made with an exclusive create, that names the
// holder (host, pid, start time) and carries its heartbeat and status, so
// `ultima status` shows the fleet from the files alone.
//
// A lock whose holder is gone is stale and taken over with a warning: on the
// same host when its pid no longer runs, on another host when its heartbeat
// is older than the stale time (a host cannot see another's processes).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nn/data/run_dir.h"

namespace ultima::data {

struct RoleHolder {
  std::string role;  // "worker-TAG", "trainer", "gate"
  std::string host;
  long pid = 0;
  std::int64_t started = 0;    // Unix seconds
  std::int64_t heartbeat = 0;  // Unix seconds of the last refresh
  std::map<std::string, std::string> status;  // free key/value pairs: games, model, step, ...
  bool alive = false;          // as judged from here (see above)
};

class RoleLock {
 public:
  // Takes the role. Throws std::runtime_error naming the role and its live
  // holder when it is held; a stale holder is replaced and `warning` (when
  // given) says whose lock was taken over.
  RoleLock(const RunDir& run, const std::string& role, std::string* warning = nullptr,
           int stale_after_seconds = kDefaultStaleSeconds);
  ~RoleLock();  // gives the role up (removes the file when it is still ours)
  RoleLock(const RoleLock&) = delete;
  RoleLock& operator=(const RoleLock&) = delete;

  // Refreshes the heartbeat and replaces the status pairs (atomic rewrite).
  void heartbeat(const std::map<std::string, std::string>& status = {});

  static constexpr int kDefaultStaleSeconds = 600;

 private:
  std::string path_;
  std::string token_;  // ours alone: tells our file from a later holder's
  RoleHolder me_;
};

// Every role file of the run (unreadable ones skipped), sorted by role.
std::vector<RoleHolder> read_role_holders(const RunDir& run, int stale_after_seconds = RoleLock::kDefaultStaleSeconds);

// This machine's name, as role files record it.
std::string host_name();

}  // namespace ultima::data
