// ultima loop: the self-play / training / evaluation loop in a run
// directory (training/loop/loop.h), from a config file or the built-in config.
#include <spdlog/spdlog.h>

#include <memory>
#include <string>

#include "commands.h"
#include "common.h"
#include "nn/data/run_lock.h"
#include "training/loop/loop.h"

namespace ultima::cli {

using namespace ultima::loop;
namespace {

struct LoopOptions {
  std::string config;
  std::string run_dir = "runs/main";
  int generations = 0;
  double max_minutes = -1;
  bool print_config = false;
  bool run_dir_given = false;
};

void run_loop_command(const LoopOptions& o) {
  if (o.print_config) {
    // With --run-dir, that run's config (checked against --config when
    // both are given); else the file's, whatever runs/main holds, or the
    // built-in one.
    const RunConfig config = o.run_dir_given        ? resolve_run_config(o.run_dir, o.config)
                             : !o.config.empty()    ? RunConfig::load(o.config)
                                                    : RunConfig::parse(builtin_config_text(), "(built-in)");
    std::fputs(config.to_yaml().c_str(), stdout);
    return;
  }
  RunConfig config = resolve_run_config(o.run_dir, o.config);
  {
    // Only a refused start removes the directory it made: once the run is
    // set up, an error in a generation leaves what the loop wrote, to
    // resume from.
    const NewDirectoryGuard guard(o.run_dir);
    init_run(o.run_dir, o.config);
  }
  data::RunDir run(o.run_dir);
  // The loop trains: no separate trainer may work on the same run.
  std::string warning;
  data::RoleLock role(run, "trainer", &warning);
  setup_logging(run, "loop");
  if (!warning.empty()) spdlog::warn("loop: {}", warning);
  if (o.generations > 0) config.loop.generations = o.generations;
  if (o.max_minutes >= 0) config.loop.max_minutes = o.max_minutes;
  install_stop_handlers();
  spdlog::info("loop: run directory {}, config {} ({}), {} generations{}", run.root(), config.source, config.name,
               config.loop.generations,
               config.loop.max_minutes > 0 ? fmt::format(", at most {:g} min", config.loop.max_minutes) : "");
  const int done = run_loop(run, config);
  if (stop_requested()) spdlog::info("loop: stopped on request; run it again to go on");
  spdlog::info("loop: {} generations done; table {}, plots {} and {}", done, run.path("generations.csv"),
               run.path("elo.svg"), run.path("loss.svg"));
  // The last line: what the run made, and how to play it.
  const GenerationLog log(run, {});
  const std::uint64_t best = run.best_model().value_or(0);
  spdlog::info("loop: best model {} (the last generation's ladder Elo {}); play it as the player spec mcts:run={}",
               run.model_path(best),
               format_rating({log.last("elo"), log.last("elo_low"), log.last("elo_high"), 0}), run.root());
}

}  // namespace

void add_loop_command(CLI::App& app) {
  auto o = std::make_shared<LoopOptions>();
  CLI::App* cmd = app.add_subcommand("loop", "self-play, training and evaluation, generation after generation");
  cmd->add_option("--config", o->config,
                  "run config (configs/*.yaml); default: the run directory's config.yaml, else the built-in cpu config");
  cmd->add_option("--run-dir", o->run_dir, "run directory (default runs/main); a killed run resumes from it");
  cmd->add_option("--generations", o->generations, "override loop.generations")->check(CLI::Range(1, 1000000));
  cmd->add_option("--max-minutes", o->max_minutes, "override loop.max_minutes (0: no limit)")
      ->check(CLI::Range(0.0, 1e7));
  cmd->add_flag("--print-config", o->print_config,
                "print the resolved config (every key) and exit: the run directory's with --run-dir");
  cmd->callback([o, cmd] {
    o->run_dir_given = cmd->count("--run-dir") > 0;
    run_loop_command(*o);
  });
}

}  // namespace ultima::cli
