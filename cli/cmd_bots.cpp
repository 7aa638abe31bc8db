// ultima bots: the bot catalogue. `list` shows every bot with its Elo and
// style, `show` one bot's file, `add --from-run` makes bots of a run's
// network snapshots at the Elos wanted.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "common.h"
#include "engine/play/bot.h"
#include "engine/play/player_spec.h"
#include "engine/base/file_io.h"
#include "engine/play/elo.h"
#include "nn/data/run_dir.h"
#include "training/loop/generation_log.h"
#include "training/loop/run_config.h"

namespace ultima::cli {
namespace {

std::string elo_text(const Bot& b) {
  if (!b.has_elo) return "-";
  return b.has_interval ? format_rating(b.elo, b.elo_low, b.elo_high) : format_rating(b.elo);
}

void list_bots() {
  const std::vector<Bot> bots = load_catalogue();
  std::printf("%-18s %-20s %-12s %s\n", "bot", "Elo [95%]", "style", "description");
  for (const Bot& b : bots)
    std::printf("%-18s %-20s %-12s %s\n", b.name.c_str(), elo_text(b).c_str(), b.style.c_str(), b.description.c_str());
  std::printf("(%zu bots: levels from %s, bot files from %s)\n", bots.size(), levels_directory().c_str(),
              bots_directory().c_str());
}

void show_bot(const std::string& name) {
  const std::optional<Bot> b = find_bot(name);
  if (!b) {
    std::string known;
    for (const std::string& n : bot_names()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown bot '" + name + "' (bots: " + known + ")");
  }
  std::printf("name:        %s\n", b->name.c_str());
  std::printf("description: %s\n", b->description.c_str());
  std::printf("style:       %s\n", b->style.c_str());
  std::printf("spec:        %s\n", b->spec.c_str());
  std::printf("order:       %g\n", b->order);
  std::printf("elo:         %s\n", elo_text(*b).c_str());
  std::printf("file:        %s%s\n", b->origin.c_str(), b->is_level ? " (a level)" : "");
}

struct AddOptions {
  std::string run_dir;
  std::string elos;
  std::string prefix;
  std::string dir;
  int playouts = 200;
  double temperature = 0;
  std::string backend = "eigen";
  bool force = false;
  bool copy = false;
};

// The catalogue order an Elo falls at: between the rated bots around it,
// in proportion, so a new bot's place on the ladder follows its Elo.
double order_for_elo(const std::vector<Bot>& catalogue, double elo) {
  const Bot* lower = nullptr;
  const Bot* upper = nullptr;
  for (const Bot& b : catalogue) {
    if (!b.has_elo) continue;
    if (b.elo <= elo && (!lower || b.elo > lower->elo)) lower = &b;
    if (b.elo > elo && (!upper || b.elo < upper->elo)) upper = &b;
  }
  if (lower && upper)
    return lower->order + (upper->order - lower->order) * (elo - lower->elo) / double(upper->elo - lower->elo);
  if (lower) return lower->order + 0.5;
  if (upper) return upper->order - 0.5;
  return 0;
}

void add_bots(const AddOptions& o) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(o.run_dir)) throw std::invalid_argument("run directory '" + o.run_dir + "' does not exist");
  const std::string table_path = o.run_dir + "/generations.csv";
  if (!fs::exists(table_path))
    throw std::invalid_argument("run directory '" + o.run_dir + "' has no generations.csv (has its loop finished a generation?)");
  const loop::CsvTable table = loop::CsvTable::read(table_path);
  for (const char* column : {"model", "elo"})
    if (std::find(table.columns.begin(), table.columns.end(), column) == table.columns.end())
      throw std::invalid_argument(table_path + " has no column '" + std::string(column) + "'");
  // The mate scan as the loop's evaluation games had it (they leave the
  // root's mate-in-two check off), so the bot plays as it was rated.
  bool mate_scan = loop::EvalConfig{}.mcts.mate_scan;
  if (fs::exists(o.run_dir + "/config.yaml")) mate_scan = loop::RunConfig::load(o.run_dir + "/config.yaml").eval.mcts.mate_scan;
  const std::string scan = std::string(",mate_scan=") + (mate_scan ? "true" : "false") + ",mate_scan_root=false";
  std::vector<double> wanted;
  {
    std::stringstream in(o.elos);
    for (std::string item; std::getline(in, item, ',');) {
      char* end = nullptr;
      const double v = std::strtod(item.c_str(), &end);
      if (item.empty() || *end || !std::isfinite(v)) throw std::invalid_argument("--elo: '" + item + "' is not a number");
      wanted.push_back(v);
    }
  }
  if (wanted.empty()) throw std::invalid_argument("--elo names no Elo");
  const data::RunDir run(o.run_dir);
  const std::string prefix = o.prefix.empty() ? fs::path(o.run_dir).lexically_normal().filename().string() : o.prefix;
  const std::string dir = o.dir.empty() ? bots_directory() : o.dir;
  fs::create_directories(dir);
  const std::vector<Bot> catalogue = load_catalogue();
  std::set<std::string> made;
  for (const double target : wanted) {
    // The rated generation whose Elo is nearest; the earlier on a tie.
    const loop::CsvTable::Row* best = nullptr;
    for (const loop::CsvTable::Row& row : table.rows) {
      const double elo = loop::CsvTable::number(row, "elo");
      if (!std::isfinite(elo) || !std::isfinite(loop::CsvTable::number(row, "model"))) continue;
      if (!best || std::abs(elo - target) < std::abs(loop::CsvTable::number(*best, "elo") - target)) best = &row;
    }
    if (!best) throw std::invalid_argument(table_path + " has no generation with a measured Elo");
    const auto model = static_cast<std::uint64_t>(loop::CsvTable::number(*best, "model"));
    const std::string model_file = fs::absolute(run.model_path(model)).lexically_normal().string();
    if (!fs::exists(model_file)) throw std::invalid_argument("model " + std::to_string(model) + " of " + table_path + " has no file " + model_file);
    Bot bot;
    bot.name = prefix + "-m" + std::to_string(model);
    if (!made.insert(bot.name).second) {
      std::printf("Elo %g: model %llu again (already added as %s)\n", target, static_cast<unsigned long long>(model),
                  bot.name.c_str());
      continue;
    }
    const double elo = loop::CsvTable::number(*best, "elo");
    const double low = loop::CsvTable::number(*best, "elo_low"), high = loop::CsvTable::number(*best, "elo_high");
    bot.description = "network of model " + std::to_string(model) + " of run " + prefix + ", MCTS with " +
                      std::to_string(o.playouts) + " playouts";
    bot.style = "network";
    for (const Bot& b : catalogue)
      if (b.name == bot.name && (b.is_level || !o.force))
        throw std::invalid_argument("a bot named '" + bot.name + "' exists (" + b.origin + ")" +
                                    (b.is_level ? "" : "; --force replaces it"));
    std::string weights = model_file;
    if (o.copy) {
      // The network goes beside the bot file, named by the bot, and the spec
      // names it from there (Bot::playable_spec), so the folder can move.
      fs::create_directories(dir + "/nets");
      const std::string target = dir + "/nets/" + bot.name + ".unn";
      std::ifstream in(model_file, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (!in.good() && !in.eof()) throw std::runtime_error("cannot read " + model_file);
      write_file_atomically(target, bytes);
      weights = "nets/" + bot.name + ".unn";
    }
    bot.spec = "mcts:weights=" + weights + ",playouts=" + std::to_string(o.playouts) + scan;
    if (o.temperature > 0) {
      std::ostringstream t;
      t << o.temperature;
      bot.spec += ",temperature=" + t.str();
    }
    if (o.backend != "libtorch") bot.spec += ",backend=" + o.backend;
    bot.elo = static_cast<int>(std::lround(elo));
    bot.has_elo = true;
    if (std::isfinite(low) && std::isfinite(high) && low <= elo && elo <= high) {
      bot.elo_low = static_cast<int>(std::floor(low));
      bot.elo_high = static_cast<int>(std::ceil(high));
      bot.has_interval = true;
    }
    bot.order = order_for_elo(catalogue, elo);
    const std::string path = dir + "/" + bot.name + ".yaml";
    Bot::parse(bot.to_yaml(), path);  // what is written reads back
    write_file_atomically(path, "# Made by ultima bots add --from-run " + o.run_dir + " (Elo as the loop measured it;\n"
                                "# ultima ladder --catalogue --write-elo measures it again).\n" + bot.to_yaml());
    std::printf("Elo %g: model %llu (Elo %s) -> %s\n", target, static_cast<unsigned long long>(model),
                elo_text(bot).c_str(), path.c_str());
  }
}

}  // namespace

void add_bots_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("bots", "the bot catalogue: list, show, add a run's snapshots");
  cmd->require_subcommand(1);
  cmd->add_subcommand("list", "every bot, weakest first, with its Elo and style")->callback([] { list_bots(); });
  auto name = std::make_shared<std::string>();
  CLI::App* show = cmd->add_subcommand("show", "one bot's settings and file");
  show->add_option("name", *name, "the bot")->required();
  show->callback([name] { show_bot(*name); });
  auto o = std::make_shared<AddOptions>();
  CLI::App* add = cmd->add_subcommand("add", "bot files of a run's models nearest the Elos wanted (its generations.csv)");
  add->add_option("--from-run", o->run_dir, "the run directory")->required();
  add->add_option("--elo", o->elos, "the Elos wanted, comma-separated, e.g. 300,600,900")->required();
  add->add_option("--prefix", o->prefix, "bot names are PREFIX-mN (default: the run directory's name)");
  add->add_option("--dir", o->dir, "where the bot files go (default: the bots folder)");
  add->add_option("--playouts", o->playouts, "MCTS playouts per move")->check(CLI::Range(1, 10000000));
  add->add_option("--temperature", o->temperature, "move choice by visits^(1/T); 0: the most visited")
      ->check(CLI::Range(0.0, 100.0));
  add->add_option("--backend", o->backend, "eigen (no LibTorch) or libtorch")->check(CLI::IsMember({"eigen", "libtorch"}));
  add->add_flag("--force", o->force, "replace bot files of the same name");
  add->add_flag("--copy", o->copy,
                "copy each network into DIR/nets/ and name it relative to the bot file (a catalogue to ship or move)");
  add->callback([o] { add_bots(*o); });
}

}  // namespace ultima::cli
