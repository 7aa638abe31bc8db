// The learned evaluation's recipe file and its run-directory pipeline.
#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "engine/play/yaml_map.h"
#include "engine/base/file_io.h"
#include "training/loop/plot.h"
#include "training/nnue/nnue_train.h"

namespace ultima::nnue {
namespace {

using detail::read_as;

template <class T>
T at_least(T v, T lo, const std::string& key, const std::string& origin) {
  if (v < lo) throw std::invalid_argument(origin + ": '" + key + "' must be at least " + std::to_string(lo));
  return v;
}

void check_map(const YAML::Node& node, const std::string& key, const std::string& origin) {
  if (!node.IsMap()) throw std::invalid_argument(origin + ": '" + key + "' must be a mapping of key: value");
}

}  // namespace

Recipe Recipe::parse(const std::string& yaml_text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(origin + ": not valid YAML: " + e.msg);
  }
  Recipe r;
  if (root.IsNull()) return r;
  check_map(root, "the file", origin);
  for (const auto& section : root) {
    const std::string name = section.first.as<std::string>();
    if (name != "data" && name != "train")
      throw std::invalid_argument(origin + ": unknown section '" + name + "' (data, train)");
    check_map(section.second, name, origin);
    for (const auto& item : section.second) {
      const std::string key = item.first.as<std::string>();
      const YAML::Node& v = item.second;
      const std::string full = name + "." + key;
      if (name == "data") {
        if (key == "games") r.games.games = at_least(read_as<int>(v, full, origin, "an integer"), 0, full, origin);
        else if (key == "nodes") r.games.nodes = at_least(read_as<long long>(v, full, origin, "an integer"), 1LL, full, origin);
        else if (key == "random_plies") r.games.random_plies = at_least(read_as<int>(v, full, origin, "an integer"), 0, full, origin);
        else if (key == "max_plies") r.games.max_plies = at_least(read_as<int>(v, full, origin, "an integer"), 1, full, origin);
        else if (key == "seed") r.games.seed = read_as<unsigned long long>(v, full, origin, "a non-negative integer");
        else if (key == "rules") {
          try {
            r.games.rules = Rules::parse(read_as<std::string>(v, full, origin, "a rule set"));
          } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(origin + ": '" + full + "': " + e.what());
          }
        } else if (key == "chunk_games") r.chunk_games = at_least(read_as<int>(v, full, origin, "an integer"), 1, full, origin);
        else if (key == "run_positions") r.run_positions = at_least(read_as<long long>(v, full, origin, "an integer"), 0LL, full, origin);
        else if (key == "run_nodes") r.run_nodes = at_least(read_as<long long>(v, full, origin, "an integer"), 1LL, full, origin);
        else throw std::invalid_argument(origin + ": unknown key '" + full + "'");
      } else {
        TrainOptions& t = r.train;
        if (key == "features") {
          try {
            t.features = parse_feature_set(read_as<std::string>(v, full, origin, "a feature set"));
          } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(origin + ": '" + full + "': " + e.what());
          }
        } else if (key == "epochs") t.epochs = at_least(read_as<int>(v, full, origin, "an integer"), 1, full, origin);
        else if (key == "batch") t.batch = at_least(read_as<int>(v, full, origin, "an integer"), 1, full, origin);
        else if (key == "learning_rate") t.learning_rate = at_least(read_as<double>(v, full, origin, "a number"), 0.0, full, origin);
        else if (key == "lr_decay") t.lr_decay = at_least(read_as<double>(v, full, origin, "a number"), 0.0, full, origin);
        else if (key == "lambda") {
          t.lambda = read_as<double>(v, full, origin, "a number");
          if (t.lambda < 0 || t.lambda > 1) throw std::invalid_argument(origin + ": '" + full + "' must be from 0 to 1");
        } else if (key == "validation_share") {
          t.validation_share = read_as<double>(v, full, origin, "a number");
          if (t.validation_share <= 0 || t.validation_share >= 1)
            throw std::invalid_argument(origin + ": '" + full + "' must be between 0 and 1");
        } else if (key == "symmetries") {
          try {
            t.symmetries = parse_augment(read_as<std::string>(v, full, origin, "none, mirror or all"));
          } catch (const std::invalid_argument& e) {
            if (std::string(e.what()).rfind(origin, 0) == 0) throw;
            throw std::invalid_argument(origin + ": '" + full + "': " + e.what());
          }
        } else if (key == "seed") t.seed = read_as<unsigned long long>(v, full, origin, "a non-negative integer");
        else throw std::invalid_argument(origin + ": unknown key '" + full + "'");
      }
    }
  }
  return r;
}

Recipe Recipe::load(const std::string& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("cannot read NNUE recipe: ") + e.what());
  }
  return parse(text, path);
}

std::string train_from_run(const Recipe& recipe, const std::string& run_dir, int concurrency) {
  namespace fs = std::filesystem;
  const std::string dir = run_dir + "/nnue";
  const std::string data_dir = dir + "/data";
  fs::create_directories(data_dir);
  std::vector<Record> records;
  // Games in chunks: a chunk's file exists whole or not at all, so a run
  // stopped in the middle makes only the chunks still missing.
  const int chunks = (recipe.games.games + recipe.chunk_games - 1) / recipe.chunk_games;
  for (int c = 0; c < chunks; ++c) {
    char name[64];
    std::snprintf(name, sizeof name, "/games-%04d.data", c);
    const std::string path = data_dir + name;
    if (!fs::exists(path)) {
      GameDataOptions g = recipe.games;
      g.concurrency = concurrency;
      const int first = c * recipe.chunk_games;
      const int count = std::min(recipe.chunk_games, recipe.games.games - first);
      spdlog::info("nnue: chunk {}/{}: games {}-{}", c + 1, chunks, first, first + count - 1);
      write_records(path, play_data_games(g, first, count));
    }
    const std::vector<Record> chunk = read_records(path);
    records.insert(records.end(), chunk.begin(), chunk.end());
  }
  if (recipe.run_positions > 0) {
    const std::string path = data_dir + "/run-positions.data";
    if (!fs::exists(path)) {
      RunDataOptions o;
      o.run_dir = run_dir;
      o.nodes = recipe.run_nodes;
      o.max_positions = recipe.run_positions;
      o.seed = recipe.games.seed;
      o.concurrency = concurrency;
      write_records(path, label_run_positions(o));
    }
    const std::vector<Record> more = read_records(path);
    records.insert(records.end(), more.begin(), more.end());
  }
  spdlog::info("nnue: training on {} positions", records.size());
  TrainReport report;
  std::string csv = "epoch,train_loss,validation_loss,samples_per_second\n";
  const FloatNetwork net = train(records, recipe.train, report, [&](const EpochReport& e) {
    spdlog::info("nnue: epoch {}/{}: loss {:.5f} train, {:.5f} validation, {:.0f} positions/s", e.epoch,
                 recipe.train.epochs, e.train_loss, e.validation_loss, e.samples_per_second);
    char line[128];
    std::snprintf(line, sizeof line, "%d,%.6f,%.6f,%.0f\n", e.epoch, e.train_loss, e.validation_loss,
                  e.samples_per_second);
    csv += line;
    write_file_atomically(dir + "/train.csv", csv);
  });
  std::ostringstream desc;
  desc << "features " << feature_set_name(recipe.train.features) << "; " << report.train_positions
       << " training positions from " << recipe.games.games << " games at " << recipe.games.nodes << " nodes";
  if (recipe.run_positions) desc << " and " << recipe.run_positions << " run positions";
  desc << "; " << recipe.train.epochs << " epochs" << (recipe.train.symmetries == Augment::kNone ? "" : recipe.train.symmetries == Augment::kMirror ? " with mirrored images" : " with the 8 symmetries")
       << ", lambda " << recipe.train.lambda << "; validation loss "
       << (report.epochs.empty() ? 0.0 : report.epochs.back().validation_loss) << "; quantisation error mean "
       << report.quantisation_mean_cp << " cp, max " << report.quantisation_max_cp << " cp";
  const std::string out = dir + "/nnue.unnue";
  save(out, quantise(net, desc.str()));
  loop::PlotSeries train_s{"train", "#1f77b4", {}, {}, {}, {}}, val_s{"validation", "#d62728", {}, {}, {}, {}};
  for (const EpochReport& e : report.epochs) {
    train_s.x.push_back(e.epoch);
    train_s.y.push_back(e.train_loss);
    val_s.x.push_back(e.epoch);
    val_s.y.push_back(e.validation_loss);
  }
  write_file_atomically(dir + "/train.svg",
                        loop::svg_line_chart("NNUE training loss", "epoch", "loss", {train_s, val_s}, {}));
  spdlog::info("nnue: wrote {} ({}; {:.0f} s)", out, desc.str(), report.seconds);
  return out;
}

}  // namespace ultima::nnue
