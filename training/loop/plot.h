// A small SVG line chart: one or more series over a common x axis, and
// horizontal reference lines (the bot levels on an Elo chart).
#pragma once

#include <string>
#include <vector>

namespace ultima::loop {

struct PlotSeries {
  std::string label;
  std::string colour;  // CSS colour
  std::vector<double> x, y;  // NaN y values are gaps
};

struct PlotLine {
  std::string label;
  double y = 0;
};

std::string svg_line_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                           const std::vector<PlotSeries>& series, const std::vector<PlotLine>& lines);

}  // namespace ultima::loop
