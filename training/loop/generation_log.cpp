#include "training/loop/generation_log.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "engine/play/level.h"
#include "engine/play/player_spec.h"
#include "engine/rules/file_io.h"
#include "training/loop/plot.h"
#include "training/loop/run_config.h"

namespace ultima::loop {
namespace {

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, sep)) out.push_back(field);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}

}  // namespace

CsvTable CsvTable::read(const std::string& path) {
  CsvTable t;
  if (!std::filesystem::exists(path)) return t;
  std::istringstream in(ultima::read_file(path));
  std::string line;
  if (std::getline(in, line)) t.columns = split(line, ',');
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto fields = split(line, ',');
    if (fields.size() != t.columns.size())
      throw std::runtime_error(path + ": a row has " + std::to_string(fields.size()) + " fields, the header " +
                               std::to_string(t.columns.size()));
    Row row;
    for (std::size_t i = 0; i < fields.size(); ++i) row[t.columns[i]] = fields[i];
    t.rows.push_back(std::move(row));
  }
  return t;
}

void CsvTable::write(const std::string& path) const {
  std::string text;
  for (std::size_t i = 0; i < columns.size(); ++i) text += (i ? "," : "") + columns[i];
  text += "\n";
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const auto it = row.find(columns[i]);
      text += (i ? "," : "") + (it == row.end() ? std::string() : it->second);
    }
    text += "\n";
  }
  ultima::write_file_atomically(path, text);
}

double CsvTable::number(const Row& row, const std::string& column) {
  const auto it = row.find(column);
  if (it == row.end() || it->second.empty()) return std::nan("");
  try {
    return std::stod(it->second);
  } catch (const std::exception&) {
    return std::nan("");
  }
}

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
  return buffer;
}

GenerationLog::GenerationLog(const selfplay::RunDir& run, const std::vector<std::string>& levels)
    : path_(run.path("generations.csv")), table_(CsvTable::read(path_)) {
  if (!table_.columns.empty()) return;
  table_.columns = {"generation", "elapsed_min", "model", "best", "promoted", "train_step", "total_samples",
                    "window", "games", "samples", "decisive_share", "adjudicated_share", "selfplay_moves_per_s",
                    "train_samples_per_s", "loss_policy", "loss_value", "resigned_share", "false_resign_rate",
                    "score_vs_best", "score_vs_initial"};
  for (const std::string& level : levels) table_.columns.push_back("score_vs_" + level);
  table_.columns.push_back("elo");
}

double GenerationLog::last(const std::string& column) const {
  return table_.rows.empty() ? std::nan("") : CsvTable::number(table_.rows.back(), column);
}

void GenerationLog::append(CsvTable::Row row) {
  table_.rows.push_back(std::move(row));
  table_.write(path_);
}

void write_plots(const selfplay::RunDir& run, const RunConfig& config, const GenerationLog& log) {
  PlotSeries elo{"Elo of each generation's model", "#1f77b4", {}, {}};
  for (const auto& row : log.table().rows) {
    elo.x.push_back(CsvTable::number(row, "generation"));
    elo.y.push_back(CsvTable::number(row, "elo"));
  }
  std::vector<PlotLine> lines;
  for (const std::string& name : config.eval.levels) {
    const Level level = find_level(name);
    lines.push_back({level.name + " (" + std::to_string(level.elo) + ")", static_cast<double>(level.elo)});
  }
  const std::string svg = svg_line_chart("Elo by generation: " + config.name, "generation",
                                         "Elo (bot ladder: random mover = 0)", {elo}, lines);
  ultima::write_file_atomically(run.path("elo.svg"), svg);

  const CsvTable metrics = CsvTable::read(run.path("metrics.csv"));
  PlotSeries policy{"policy loss", "#d62728", {}, {}}, value{"value loss", "#9467bd", {}, {}};
  for (const auto& row : metrics.rows) {
    policy.x.push_back(CsvTable::number(row, "step"));
    policy.y.push_back(CsvTable::number(row, "loss_policy"));
    value.x.push_back(CsvTable::number(row, "step"));
    value.y.push_back(CsvTable::number(row, "loss_value"));
  }
  ultima::write_file_atomically(
      run.path("loss.svg"), svg_line_chart("Training loss: " + config.name, "step", "loss (nats)", {policy, value}, {}));
}

}  // namespace ultima::loop
