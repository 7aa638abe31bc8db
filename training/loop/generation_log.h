// The loop's record of its generations: generations.csv, one row per
// finished generation (the table a resumed loop goes on from), and the
// charts drawn from it and from the trainer's metrics.csv.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "nn/data/run_dir.h"
#include "training/loop/plot.h"

namespace ultima::loop {

struct RunConfig;

// A CSV file with a header line; cells by column name.
struct CsvTable {
  using Row = std::map<std::string, std::string>;
  std::vector<std::string> columns;
  std::vector<Row> rows;

  // An empty table when the file does not exist; a row whose field count is
  // not the header's is an error naming the file.
  static CsvTable read(const std::string& path);
  // Atomically; a cell missing from a row is left empty.
  void write(const std::string& path) const;
  // Appends a row; a cell whose column the table lacks adds that column at
  // the end (earlier rows leave it empty), so a file written before a
  // column existed keeps its rows and gains the column.
  void add_row(Row row);
  // The cell as a number; NaN when missing, empty or not a number.
  static double number(const Row& row, const std::string& column);
};

// `v` with `digits` decimals; empty for NaN and infinities.
std::string fixed(double v, int digits);

class GenerationLog {
 public:
  // Reads DIR/generations.csv when it exists; a new log gets one score
  // column per level named in the config.
  GenerationLog(const data::RunDir& run, const std::vector<std::string>& levels);

  int generations() const { return static_cast<int>(table_.rows.size()); }
  // The last row's value of a column; NaN before the first generation.
  double last(const std::string& column) const;
  const CsvTable& table() const { return table_; }
  // Adds a generation's row and rewrites the file.
  void append(CsvTable::Row row);

 private:
  std::string path_;
  CsvTable table_;
};

// DIR/elo.svg: above, each generation's ladder Elo with its 95% interval
// as an error bar and the levels near it as labelled reference lines;
// below, the score against the untrained network. DIR/loss.svg: the policy,
// value and moves-left losses of DIR/metrics.csv, each on its own panel and
// scale.
void write_plots(const data::RunDir& run, const RunConfig& config, const GenerationLog& log);
// `levels`: the ladder (name, Elo); the chart draws those near the data.
std::string elo_chart(const std::string& name, const CsvTable& generations, const std::vector<PlotLine>& levels,
                      double initial_until_score);
std::string loss_chart(const std::string& name, const CsvTable& metrics);

}  // namespace ultima::loop
