// The process-wide stop: SIGINT and SIGTERM set it once the handlers are
// installed, and the process goes on to keep what it has written.
#include <gtest/gtest.h>

#include <csignal>

#include "engine/base/stop.h"

namespace ultima {
namespace {

TEST(Stop, SignalsSetTheFlagInsteadOfEndingTheProcess) {
  install_stop_handlers();
  for (const int signal : {SIGINT, SIGTERM}) {
    stop_requested().store(false);
    ASSERT_EQ(std::raise(signal), 0);
    EXPECT_TRUE(stop_requested().load()) << signal;
  }
  stop_requested().store(false);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

}  // namespace
}  // namespace ultima
