// A small SVG chart: panels stacked over a common x axis, each with its own
// y scale, series (optionally with error bars), horizontal reference lines
// labelled in the right margin, and a legend in a strip above the panel's
// plot area, so it never covers the data.
#pragma once

#include <limits>
#include <string>
#include <vector>

namespace ultima::loop {

struct PlotSeries {
  std::string label;
  std::string colour;        // CSS colour
  std::vector<double> x, y;  // NaN y values are gaps
  // Error bars: when given, one per point (NaN or infinite ends: no bar).
  std::vector<double> low, high;
};

struct PlotLine {
  std::string label;
  double y = 0;
};

struct PlotPanel {
  std::string y_label;
  std::vector<PlotSeries> series;
  std::vector<PlotLine> lines;
  // A fixed y range when both are finite; else from the data and lines.
  double y_min = std::numeric_limits<double>::quiet_NaN();
  double y_max = std::numeric_limits<double>::quiet_NaN();
  double height = 300;  // pixels of the plot area
};

std::string svg_chart(const std::string& title, const std::string& x_label, const std::vector<PlotPanel>& panels);

// One panel.
std::string svg_line_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                           const std::vector<PlotSeries>& series, const std::vector<PlotLine>& lines);

}  // namespace ultima::loop
