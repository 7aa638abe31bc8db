// ultima: one program, one subcommand per job.
#include <cstdio>
#include <exception>
#include <string>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"ultima: an engine for Ultima (Baroque chess)"};
  app.set_version_flag("--version", std::string("ultima ") + ULTIMA_VERSION);
  app.require_subcommand(1);
  ultima::cli::add_perft_command(app);
  ultima::cli::add_moves_command(app);
  ultima::cli::add_bench_command(app);
  ultima::cli::add_selfcheck_command(app);
  ultima::cli::add_match_command(app);
  ultima::cli::add_play_command(app);
  ultima::cli::add_uci_command(app);
  ultima::cli::add_analyze_command(app);
  ultima::cli::add_serve_command(app);
  ultima::cli::add_eval_command(app);
  ultima::cli::add_tune_command(app);
  ultima::cli::add_ladder_command(app);
  ultima::cli::add_bots_command(app);
  ultima::cli::add_selfplay_command(app);
  ultima::cli::add_train_command(app);
  ultima::cli::add_loop_command(app);
  ultima::cli::add_init_command(app);
  ultima::cli::add_status_command(app);
  ultima::cli::add_gate_command(app);
  ultima::cli::add_puzzles_command(app);
  ultima::cli::add_nnue_command(app);
  // CLI11 would call an unknown command a missing one; name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "error: unknown command '%s' (commands: %s)\n", argv[1], names.c_str());
      return 1;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
