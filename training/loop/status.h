// `ultima status`: a run directory at a glance, from its files alone (so it
// works from any machine that sees the directory): models, samples, the
// trainer and how far training stands from the data, and every worker with
// its heartbeat.
#pragma once

#include <string>

#include "nn/data/run_dir.h"

namespace ultima::loop {

// Throws std::runtime_error when the run was never created.
std::string run_status_text(const data::RunDir& run);

}  // namespace ultima::loop
