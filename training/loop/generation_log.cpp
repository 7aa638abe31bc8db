#include "engine/base/text.h"
#include "training/loop/generation_log.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <tuple>
#include <sstream>
#include <stdexcept>

#include "engine/play/level.h"
#include "engine/play/player_spec.h"
#include "engine/base/file_io.h"
#include "training/loop/plot.h"
#include "training/loop/run_config.h"

namespace ultima::loop {

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

void CsvTable::add_row(Row row) {
  for (const auto& [column, cell] : row)
    if (std::find(columns.begin(), columns.end(), column) == columns.end()) columns.push_back(column);
  rows.push_back(std::move(row));
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

GenerationLog::GenerationLog(const data::RunDir& run, const std::vector<std::string>& levels)
    : path_(run.path("generations.csv")), table_(CsvTable::read(path_)) {
  if (!table_.columns.empty()) return;
  table_.columns = {"generation", "elapsed_min", "model", "best", "promoted", "train_step", "total_samples",
                    "window", "games", "samples", "decisive_share", "adjudicated_share", "selfplay_moves_per_s",
                    "train_samples_per_s", "loss_policy", "loss_value", "resigned_share", "false_resign_rate",
                    "score_vs_best", "score_vs_initial"};
  for (const std::string& level : levels) table_.columns.push_back("score_vs_" + level);
  for (const char* column : {"elo", "elo_low", "elo_high", "rated_games", "eval_levels"}) table_.columns.push_back(column);
}

double GenerationLog::last(const std::string& column) const {
  return table_.rows.empty() ? std::nan("") : CsvTable::number(table_.rows.back(), column);
}

void GenerationLog::append(CsvTable::Row row) {
  table_.add_row(std::move(row));
  table_.write(path_);
}

std::string elo_chart(const std::string& name, const CsvTable& generations, const std::vector<PlotLine>& levels,
                      double initial_until_score) {
  PlotPanel elo_panel, initial_panel;
  elo_panel.y_label = "Elo (bot ladder: random mover = 0)";
  elo_panel.height = 320;
  PlotSeries elo{"ladder Elo of each generation's model, 95% interval", "#1f77b4", {}, {}, {}, {}};
  PlotSeries initial{"score against the untrained network (model 0)", "#2ca02c", {}, {}, {}, {}};
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& row : generations.rows) {
    const double g = CsvTable::number(row, "generation");
    elo.x.push_back(g);
    elo.y.push_back(CsvTable::number(row, "elo"));
    elo.low.push_back(CsvTable::number(row, "elo_low"));
    elo.high.push_back(CsvTable::number(row, "elo_high"));
    if (std::isfinite(elo.y.back()))
      for (const double v : {elo.y.back(), elo.low.back(), elo.high.back()})
        if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    initial.x.push_back(g);
    initial.y.push_back(100 * CsvTable::number(row, "score_vs_initial"));
  }
  elo_panel.series.push_back(elo);
  // The levels within reach of the data, and the nearest one beyond each
  // end: what the model has passed and what it goes for next.
  if (std::isfinite(lo)) {
    const double margin = std::max(150.0, 0.15 * (hi - lo));
    const PlotLine* below = nullptr;
    const PlotLine* above = nullptr;
    for (const PlotLine& l : levels) {
      if (l.y >= lo - margin && l.y <= hi + margin) elo_panel.lines.push_back(l);
      else if (l.y < lo && (!below || l.y > below->y)) below = &l;
      else if (l.y > hi && (!above || l.y < above->y)) above = &l;
    }
    if (below) elo_panel.lines.push_back(*below);
    if (above) elo_panel.lines.push_back(*above);
  } else {
    elo_panel.lines = levels;
  }
  std::vector<PlotPanel> panels{elo_panel};
  if (std::any_of(initial.y.begin(), initial.y.end(), [](double v) { return std::isfinite(v); })) {
    initial_panel.y_label = "score vs untrained (%)";
    initial_panel.height = 140;
    initial_panel.y_min = 0;
    initial_panel.y_max = 100;
    initial_panel.series.push_back(initial);
    initial_panel.lines.push_back({"50%", 50});
    if (initial_until_score < 1)
      initial_panel.lines.push_back({fixed(100 * initial_until_score, 0) + "%: no more games", 100 * initial_until_score});
    panels.push_back(initial_panel);
  }
  return svg_chart("Strength by generation: " + name, "generation", panels);
}

std::string loss_chart(const std::string& name, const CsvTable& metrics) {
  std::vector<PlotPanel> panels;
  for (const auto& [column, label, colour] :
       {std::tuple{"loss_policy", "policy loss (cross-entropy, nats)", "#d62728"},
        std::tuple{"loss_value", "value loss (WDL cross-entropy, nats)", "#9467bd"},
        std::tuple{"loss_moves_left", "moves-left loss (Huber)", "#8c564b"}}) {
    PlotSeries s{label, colour, {}, {}, {}, {}};
    bool any = false;
    for (const auto& row : metrics.rows) {
      s.x.push_back(CsvTable::number(row, "step"));
      s.y.push_back(CsvTable::number(row, column));
      any = any || std::isfinite(s.y.back());
    }
    if (!any) continue;
    PlotPanel panel;
    panel.y_label = std::string(column).substr(5);
    panel.height = 150;
    panel.series.push_back(std::move(s));
    panels.push_back(std::move(panel));
  }
  return svg_chart("Training losses: " + name + " (each on its own scale)", "training step", panels);
}

void write_plots(const data::RunDir& run, const RunConfig& config, const GenerationLog& log) {
  std::vector<PlotLine> levels;
  for (const std::string& name : config.eval.levels) {
    const Level level = find_level(name);
    levels.push_back({level.name + " (" + std::to_string(level.elo) + ")", static_cast<double>(level.elo)});
  }
  ultima::write_file_atomically(run.path("elo.svg"),
                                elo_chart(config.name, log.table(), levels, config.eval.initial_until_score));
  ultima::write_file_atomically(run.path("loss.svg"), loss_chart(config.name, CsvTable::read(run.path("metrics.csv"))));
}

}  // namespace ultima::loop
