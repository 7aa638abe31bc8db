// ultima uci: the UCI engine on standard input and output.
#include <iostream>
#include <memory>

#include "commands.h"
#include "common.h"
#include "frontends/uci/uci.h"

namespace ultima::cli {

void add_uci_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("uci", "speak UCI on standard input/output (alpha-beta engine)");
  auto list_options = std::make_shared<bool>(false);
  cmd->add_flag("--options", *list_options, "print every UCI option with its default, range and help, and exit");
  cmd->callback([list_options] {
    if (*list_options) {
      std::cout << uci_option_help();
      return;
    }
    std::ios::sync_with_stdio(false);
    run_uci(std::cin, std::cout, network_factory());
  });
}

}  // namespace ultima::cli
