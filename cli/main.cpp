// ultima: one program, one subcommand per job.
#include <cstdio>
#include <exception>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"ultima: an engine for Ultima (Baroque chess)"};
  app.require_subcommand(1);
  ultima::cli::add_perft_command(app);
  ultima::cli::add_moves_command(app);
  ultima::cli::add_bench_command(app);
  ultima::cli::add_selfcheck_command(app);
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
