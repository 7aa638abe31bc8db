// ultima uci: the UCI engine on standard input and output.
#include <iostream>

#include "commands.h"
#include "common.h"
#include "frontends/uci/uci.h"

namespace ultima::cli {

void add_uci_command(CLI::App& app) {
  app.add_subcommand("uci", "speak UCI on standard input/output (alpha-beta engine)")->callback([] {
    std::ios::sync_with_stdio(false);
    run_uci(std::cin, std::cout, network_factory());
  });
}

}  // namespace ultima::cli
