// `--nproc N`: N ranks of this same command on this machine, each with the
// launch environment of nn/distributed.h (WORLD_SIZE, RANK, LOCAL_RANK,
// MASTER_ADDR=127.0.0.1 and a free MASTER_PORT) plus `environment`. Waits
// for them; when one fails, the others are stopped (SIGTERM, then SIGKILL
// after a grace period: a rank waiting in a collective for a dead one may
// not see SIGTERM), and std::runtime_error names the rank and how it
// ended. SIGINT and SIGTERM are passed on to the ranks.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ultima::cli {

void launch_ranks(int nproc, const std::vector<std::pair<std::string, std::string>>& environment = {});

}  // namespace ultima::cli
