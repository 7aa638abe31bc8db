// ultima play [--bot SPEC] [--as white|black] [--fen FEN] [--rules PRESET]
// [--seed N] [--pgn FILE] [--hint SPEC]: a game against a bot at the
// terminal (frontends/terminal/terminal_game.h), saved as PGN.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "common.h"
#include "engine/base/text.h"
#include "engine/play/player_spec.h"
#include "frontends/terminal/terminal_game.h"
#include "engine/rules/movegen.h"

namespace ultima::cli {
namespace {

struct Options {
  std::string bot = "intermediate";
  std::string side = "white";
  PositionOptions position;
  std::uint64_t seed = 0;
  bool seed_given = false;  // else each game draws its own (written to its record)
  std::string pgn;
  std::string hint = "search:nodes=200000";
  std::string colour = "auto";
};

std::unique_ptr<Player> make_named_player(const std::string& option, const std::string& spec) {
  try {
    return make_player(spec, network_factory());
  } catch (const std::exception& e) {
    throw std::invalid_argument(option + " '" + spec + "': " + e.what());
  }
}

void run(const Options& o) {
  for (const std::string* spec : {&o.bot, &o.hint}) {
    if (*spec == "help" || (spec->size() > 5 && spec->compare(spec->size() - 5, 5, ":help") == 0)) {
      std::fputs(player_spec_help().c_str(), stdout);
      return;
    }
  }
  TerminalGameConfig config;
  config.human = o.side == "white" ? kWhite : kBlack;
  config.rules = Rules::parse(o.position.rules);
  const Position first = make_position(o.position);
  if (o.position.fen != "startpos") config.fen = o.position.fen;
  const GameStatus status = game_status(first);
  if (status.over())
    throw std::invalid_argument(std::string("the game of --fen is already over (") +
                                termination_name(status.termination) + ")");
  config.seed = o.seed_given ? o.seed : draw_seed();
  config.bot_name = o.bot;
  config.hint_name = o.hint;
  config.date = local_time_text("%Y.%m.%d");
  // auto: colours only on a terminal, and not when NO_COLOR is set or the
  // terminal says it is dumb.
  const char* term = std::getenv("TERM");
  config.colour = o.colour == "always" ||
                  (o.colour == "auto" && isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR") &&
                   !(term && std::string(term) == "dumb"));
  config.pgn_path = o.pgn.empty() ? "ultima-" + local_time_text("%Y%m%d-%H%M%S") + ".pgn" : o.pgn;
  const std::unique_ptr<Player> bot = make_named_player("--bot", o.bot);
  const std::unique_ptr<Player> hint = o.hint == "none" ? nullptr : make_named_player("--hint", o.hint);
  play_terminal_game(*bot, hint.get(), config, std::cin, std::cout);
}

}  // namespace

void add_play_command(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("play", "play a game against a bot in the terminal");
  cmd->add_option("--bot", opts->bot,
                  "the opponent: a level name or any player spec (below; 'help' prints the list)")
      ->capture_default_str();
  cmd->add_option("--as", opts->side, "the side you play; with black the bot moves first")
      ->check(CLI::IsMember({"white", "black"}))
      ->capture_default_str();
  cmd->add_option("--fen", opts->position.fen, "the first position in FEN, or startpos")->capture_default_str();
  add_rules_option(cmd, opts->position.rules);
  CLI::Option* seed = cmd->add_option(
      "--seed", opts->seed,
      "seed of the bot's and the hint's randomness (same seed, same replies); default: a new one each game, "
      "shown at the start and kept in the record's Seed tag");
  cmd->add_option("--pgn", opts->pgn,
                  "save the game here, rewritten after every move (default: ultima-YYYYMMDD-HHMMSS.pgn in the "
                  "current folder)");
  cmd->add_option("--hint", opts->hint, "the player spec that answers 'hint'; 'none' for no hints")
      ->capture_default_str();
  cmd->add_option("--colour,--color", opts->colour,
                  "colour the board: auto (on a terminal, unless NO_COLOR is set), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  cmd->footer([] {
    return "\nAt the prompt, type a move (d2d5, Pd2-d5, or a line of 'moves') or one of the commands\n"
           "moves, hint, undo, board, help, resign, quit. The board shows pieces by their FEN letters\n"
           "(upper case White); a piece in parentheses is frozen. The end of input saves and exits.\n\n" +
           player_spec_help();
  });
  cmd->callback([opts, seed] {
    opts->seed_given = seed->count() > 0;
    run(*opts);
  });
}

}  // namespace ultima::cli
