// The process-wide stop: set by SIGINT or SIGTERM once the handlers are
// installed. Long jobs (the loop, self-play, training, matches) poll it and
// stop soon after, keeping what they have written.
#pragma once

#include <atomic>

namespace ultima {

std::atomic<bool>& stop_requested();
void install_stop_handlers();

}  // namespace ultima
