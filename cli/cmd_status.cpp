// ultima status: the run directory at a glance (models, samples, the
// trainer's progress against the data, workers and their heartbeats).
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "training/loop/loop.h"
#include "training/loop/status.h"

namespace ultima::cli {

void add_status_command(CLI::App& app) {
  auto run_dir = std::make_shared<std::string>("runs/main");
  CLI::App* cmd = app.add_subcommand("status", "show a run: models, samples, trainer, workers");
  cmd->add_option("--run-dir", *run_dir, "run directory (default runs/main)");
  cmd->callback([run_dir] {
    loop::require_run(*run_dir);
    std::fputs(loop::run_status_text(data::RunDir(*run_dir)).c_str(), stdout);
  });
}

}  // namespace ultima::cli
