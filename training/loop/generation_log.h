// The loop's record of its generations: generations.csv, one row per
// finished generation (the table a resumed loop goes on from), and the
// charts drawn from it and from the trainer's metrics.csv.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "nn/data/run_dir.h"

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
  // The cell as a number; NaN when missing, empty or not a number.
  static double number(const Row& row, const std::string& column);
};

// `v` with `digits` decimals; empty for NaN and infinities.
std::string fixed(double v, int digits);

class GenerationLog {
 public:
  // Reads DIR/generations.csv when it exists; a new log gets one score
  // column per level named in the config.
  GenerationLog(const selfplay::RunDir& run, const std::vector<std::string>& levels);

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

// DIR/elo.svg (each generation's Elo with the levels it plays as reference
// lines) and DIR/loss.svg (the training losses of DIR/metrics.csv).
void write_plots(const selfplay::RunDir& run, const RunConfig& config, const GenerationLog& log);

}  // namespace ultima::loop
