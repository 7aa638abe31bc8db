// Roles in a shared run directory: one holder each, released on exit, a
// dead holder's role taken over with a warning, a live one's refused, and a
// replaced holder told at its next heartbeat.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "engine/base/file_io.h"
#include "nn/data/run_lock.h"
#include "test_util.h"

namespace ultima::data {
namespace {

using test::TempDir;

std::int64_t now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A role file as another process would have left it.
void plant(const RunDir& run, const std::string& role, const std::string& host, long pid, std::int64_t heartbeat) {
  std::filesystem::create_directories(run.path("locks"));
  write_file_atomically(run.path("locks/" + role + ".lock"),
                        "role " + role + "\nhost " + host + "\npid " + std::to_string(pid) + "\nstarted 1\nheartbeat " +
                            std::to_string(heartbeat) + "\ntoken other\n");
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(RunRoles, OneHolderAtATimeAndReleasedOnExit) {
  const TempDir dir("roles-one");
  const RunDir run(dir.path());
  {
    RoleLock first(run, "trainer");
    const std::string second = error_of([&] { RoleLock again(run, "trainer"); });
    EXPECT_NE(second.find("the role trainer"), std::string::npos) << second;
    EXPECT_NE(second.find("is held by pid"), std::string::npos) << second;
    RoleLock other(run, "worker-a");  // another role is free
    first.heartbeat({{"step", "12"}});
    const auto holders = read_role_holders(run);
    ASSERT_EQ(holders.size(), 2u);
    EXPECT_EQ(holders[0].role, "trainer");
    EXPECT_TRUE(holders[0].alive);
    EXPECT_EQ(holders[0].host, host_name());
    EXPECT_EQ(holders[0].status.at("step"), "12");
  }
  EXPECT_TRUE(read_role_holders(run).empty());
  RoleLock later(run, "trainer");  // free again
}

TEST(RunRoles, StaleHoldersAreTakenOverWithAWarning) {
  const TempDir dir("roles-stale");
  const RunDir run(dir.path());
  // On this host, a pid that no longer runs.
  plant(run, "worker-a", host_name(), 0x7ffffff0, now());
  std::string warning;
  { RoleLock taken(run, "worker-a", &warning); }
  EXPECT_NE(warning.find("took over the stale role worker-a"), std::string::npos) << warning;
  // On another host, a heartbeat older than the stale time.
  plant(run, "worker-b", "elsewhere", 1234, now() - 3600);
  warning.clear();
  { RoleLock taken(run, "worker-b", &warning, 600); }
  EXPECT_NE(warning.find("pid 1234 on elsewhere"), std::string::npos) << warning;
  // On another host with a fresh heartbeat: alive, refused.
  plant(run, "worker-c", "elsewhere", 1234, now());
  EXPECT_NE(error_of([&] { RoleLock refused(run, "worker-c", nullptr, 600); }).find("held by pid 1234 on elsewhere"),
            std::string::npos);
}

TEST(RunRoles, AReplacedHolderLearnsItAtItsNextHeartbeat) {
  const TempDir dir("roles-replaced");
  const RunDir run(dir.path());
  RoleLock mine(run, "gate");
  plant(run, "gate", "elsewhere", 99, now());  // what a takeover elsewhere leaves
  EXPECT_NE(error_of([&] { mine.heartbeat(); }).find("lost the role gate"), std::string::npos);
}

}  // namespace
}  // namespace ultima::data
