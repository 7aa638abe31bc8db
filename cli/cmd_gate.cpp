// ultima gate: the gatekeeper of a run whose trainer runs on its own
// (ultima train --watch): judges each new candidate with the loop's
// evaluation and promotes the ones that pass.
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "commands.h"
#include "nn/data/run_lock.h"
#include "training/loop/gate.h"
#include "training/loop/loop.h"

namespace ultima::cli {

using namespace ultima::loop;

void add_gate_command(CLI::App& app) {
  struct Options {
    std::string run_dir = "runs/main";
    bool watch = false;
    double poll_seconds = 10;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("gate", "judge the run's new candidates and promote those that pass");
  cmd->add_option("--run-dir", o->run_dir, "run directory (default runs/main)");
  cmd->add_flag("--watch", o->watch, "keep judging new candidates until SIGINT/SIGTERM");
  cmd->add_option("--poll-seconds", o->poll_seconds, "with --watch: how often to look for candidates (default 10)")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->callback([o] {
    require_run(o->run_dir);
    const RunConfig config = resolve_run_config(o->run_dir, "");
    const data::RunDir run(o->run_dir);
    std::string warning;
    data::RoleLock role(run, "gate", &warning);
    setup_logging(run, "gate");
    if (!warning.empty()) spdlog::warn("gate: {}", warning);
    install_stop_handlers();
    Gatekeeper gate(run, config, [&](std::uint64_t v) { return model_evaluator(run, config, v); });
    int judged = 0;
    do {
      role.heartbeat({{"best", std::to_string(run.best_model().value_or(0))}, {"judged", std::to_string(judged)}});
      for (std::uint64_t candidate : gate.pending()) {
        if (stop_requested()) break;
        gate.judge(candidate);
        ++judged;
      }
      for (int i = 0; o->watch && i < static_cast<int>(o->poll_seconds * 10) && !stop_requested(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } while (o->watch && !stop_requested());
    spdlog::info("gate: {} candidates judged; best model {}", judged, run.best_model().value_or(0));
  });
}

}  // namespace ultima::cli
