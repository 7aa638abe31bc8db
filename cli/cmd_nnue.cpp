// ultima nnue {train,data,label,eval}: the learned evaluation of the
// alpha-beta search (docs/nnue.md).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "common.h"
#include "engine/play/level.h"
#include "engine/rules/movegen.h"
#include "engine/search/static_eval.h"
#include "training/nnue/nnue_train.h"

namespace ultima::cli {
namespace {

void add_train(CLI::App& nnue) {
  struct Options {
    std::string config, run_dir, out;
    std::vector<std::string> data;
    int concurrency = 1;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = nnue.add_subcommand("train", "train a network: from a run directory (--run-dir) or record files (--data)");
  cmd->add_option("--config", o->config, "recipe file (configs/nnue/default.yaml; default: its built-in values)");
  cmd->add_option("--run-dir", o->run_dir, "run directory: data made and kept under DIR/nnue, network DIR/nnue/nnue.unnue");
  cmd->add_option("--data", o->data, "record files (ultima nnue data/label) to train on instead");
  cmd->add_option("--out", o->out, "network file to write with --data");
  cmd->add_option("--concurrency", o->concurrency, "games or searches at once")->check(CLI::Range(1, 256));
  cmd->callback([o] {
    const nnue::Recipe recipe = o->config.empty() ? nnue::Recipe{} : nnue::Recipe::load(o->config);
    if (!o->run_dir.empty()) {
      if (!o->data.empty()) throw std::invalid_argument("give --run-dir or --data, not both");
      std::printf("%s\n", nnue::train_from_run(recipe, o->run_dir, o->concurrency).c_str());
      return;
    }
    if (o->data.empty() || o->out.empty()) throw std::invalid_argument("give --run-dir, or --data and --out");
    std::vector<nnue::Record> records;
    for (const std::string& path : o->data) {
      const auto more = nnue::read_records(path);
      records.insert(records.end(), more.begin(), more.end());
    }
    nnue::TrainReport report;
    const nnue::FloatNetwork net = nnue::train(records, recipe.train, report, [&](const nnue::EpochReport& e) {
      std::printf("epoch %d: loss %.5f train, %.5f validation (%.0f positions/s)\n", e.epoch, e.train_loss,
                  e.validation_loss, e.samples_per_second);
      std::fflush(stdout);
    });
    char desc[256];
    std::snprintf(desc, sizeof desc, "features %s; %zu training positions; %d epochs%s, lambda %g; quantisation error mean %.2f cp, max %.2f cp",
                  nnue::feature_set_name(recipe.train.features), report.train_positions, recipe.train.epochs,
                  recipe.train.symmetries == nnue::Augment::kNone     ? ""
                  : recipe.train.symmetries == nnue::Augment::kMirror ? " with mirrored images"
                                                                      : " with the 8 symmetries", recipe.train.lambda, report.quantisation_mean_cp, report.quantisation_max_cp);
    nnue::save(o->out, nnue::quantise(net, desc));
    std::printf("wrote %s (%s; %.0f s)\n", o->out.c_str(), desc, report.seconds);
  });
}

void add_data(CLI::App& nnue) {
  struct Options {
    nnue::GameDataOptions games;
    std::string rules = kDefaultRules, network, out;
    int first = 0;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = nnue.add_subcommand("data", "labelled positions from alpha-beta games, to a record file");
  cmd->add_option("--out", o->out, "record file to write")->required();
  cmd->add_option("--games", o->games.games, "games to play")->check(CLI::Range(1, 10000000));
  cmd->add_option("--first-game", o->first, "number of the first game (its seed), to make more of a set")->check(CLI::NonNegativeNumber);
  cmd->add_option("--nodes", o->games.nodes, "search nodes a move")->check(CLI::Range(1, 1000000000));
  cmd->add_option("--random-plies", o->games.random_plies, "random moves opening each game")->check(CLI::Range(0, 200));
  cmd->add_option("--max-plies", o->games.max_plies, "plies after which a game counts as drawn")->check(CLI::Range(1, 10000));
  add_seed_option(cmd, o->games.seed, "the random openings");
  add_rules_option(cmd, o->rules);
  cmd->add_option("--nnue", o->network, "a network to search with instead of the hand-written evaluation (default: the shipped one, or a file)");
  cmd->add_option("--concurrency", o->games.concurrency, "games at once")->check(CLI::Range(1, 256));
  cmd->callback([o] {
    nnue::GameDataOptions g = o->games;
    g.rules = Rules::parse(o->rules);
    if (!o->network.empty()) g.network = load_nnue(o->network);
    const auto records = nnue::play_data_games(g, o->first, g.games);
    nnue::write_records(o->out, records);
    std::printf("wrote %s: %zu positions from %d games\n", o->out.c_str(), records.size(), g.games);
  });
}

void add_label(CLI::App& nnue) {
  struct Options {
    nnue::RunDataOptions run;
    std::string out;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = nnue.add_subcommand("label", "a run directory's sample positions scored by the alpha-beta search");
  cmd->add_option("--run-dir", o->run.run_dir, "run directory of `ultima loop`")->required();
  cmd->add_option("--out", o->out, "record file to write")->required();
  cmd->add_option("--nodes", o->run.nodes, "search nodes a position")->check(CLI::Range(1, 1000000000));
  cmd->add_option("--max-positions", o->run.max_positions, "at most this many (a seeded choice; 0: all)");
  add_seed_option(cmd, o->run.seed, "the choice");
  cmd->add_option("--concurrency", o->run.concurrency, "searches at once")->check(CLI::Range(1, 256));
  cmd->callback([o] {
    const auto records = nnue::label_run_positions(o->run);
    nnue::write_records(o->out, records);
    std::printf("wrote %s: %zu positions\n", o->out.c_str(), records.size());
  });
}

void add_eval(CLI::App& nnue) {
  struct Options {
    PositionOptions position;
    std::string network;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = nnue.add_subcommand("eval", "a network's evaluation of a position beside the hand-written one");
  cmd->add_option("--net", o->network, "network file")->required();
  cmd->add_option("--fen", o->position.fen, "position in FEN, or startpos");
  add_rules_option(cmd, o->position.rules);
  cmd->callback([o] {
    const Position pos = make_position(o->position);
    const auto net = load_nnue(o->network);
    std::printf("network: %s\nfeatures: %s\n", net->description.c_str(), nnue::feature_set_name(net->features));
    std::printf("nnue %d  hand-written %d  (centipawns, side to move: %s)\n", nnue::evaluate_full(*net, pos),
                evaluate(pos, EvalWeights{}), pos.side_to_move() == kWhite ? "white" : "black");
  });
}

}  // namespace

void add_nnue_command(CLI::App& app) {
  CLI::App* nnue = app.add_subcommand("nnue", "the learned evaluation of the alpha-beta search: data, training, eval");
  nnue->require_subcommand(1);
  add_train(*nnue);
  add_data(*nnue);
  add_label(*nnue);
  add_eval(*nnue);
}

}  // namespace ultima::cli
