// ultima init: creates a run directory (its resolved config, model 0 and the
// best-model pointer), so that workers and trainers started on any machine
// join a run that exists instead of making one as a side effect.
#include <spdlog/spdlog.h>

#include <memory>
#include <string>

#include "commands.h"
#include "common.h"
#include "training/loop/loop.h"

namespace ultima::cli {

void add_init_command(CLI::App& app) {
  struct Options {
    std::string config;
    std::string run_dir = "runs/main";
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("init", "create a run directory for selfplay workers and trainers");
  cmd->add_option("--config", o->config, "run config (default: the built-in cpu config)");
  cmd->add_option("--run-dir", o->run_dir, "run directory to create (default runs/main)");
  cmd->callback([o] {
    const NewDirectoryGuard guard(o->run_dir);
    const loop::RunConfig config = loop::init_run(o->run_dir, o->config);
    std::printf("run %s: config %s (%s), model 0 ready\n", o->run_dir.c_str(), config.source.c_str(),
                config.name.c_str());
  });
}

}  // namespace ultima::cli
