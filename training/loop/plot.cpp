#include "training/loop/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace ultima::loop {
namespace {

std::string escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

std::string num(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", v);
  return buffer;
}

// A "nice" tick step giving about `count` ticks over `span`.
double tick_step(double span, int count) {
  const double raw = span / count;
  const double power = std::pow(10, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * power) return m * power;
  return 10 * power;
}

}  // namespace

std::string svg_line_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                           const std::vector<PlotSeries>& series, const std::vector<PlotLine>& lines) {
  const double width = 720, height = 420, left = 70, right = 150, top = 40, bottom = 50;
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  for (const PlotSeries& s : series)
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.y[i])) continue;
      x0 = std::min(x0, s.x[i]);
      x1 = std::max(x1, s.x[i]);
      y0 = std::min(y0, s.y[i]);
      y1 = std::max(y1, s.y[i]);
    }
  for (const PlotLine& l : lines) {
    y0 = std::min(y0, l.y);
    y1 = std::max(y1, l.y);
  }
  if (!std::isfinite(x0)) x0 = 0, x1 = 1;
  if (!std::isfinite(y0)) y0 = 0, y1 = 1;
  if (x1 - x0 < 1) x1 = x0 + 1;
  if (y1 - y0 < 1e-9) y0 -= 1, y1 += 1;
  const double pad = 0.05 * (y1 - y0);
  y0 -= pad;
  y1 += pad;
  const double pw = width - left - right, ph = height - top - bottom;
  auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * pw; };
  auto py = [&](double y) { return top + (1 - (y - y0) / (y1 - y0)) * ph; };

  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" + num(height) +
                    "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"" + num(width / 2) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" + escape(title) + "</text>\n";
  // Axes and ticks.
  svg += "<rect x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" + num(pw) + "\" height=\"" + num(ph) +
         "\" fill=\"none\" stroke=\"#444\"/>\n";
  const double ys = tick_step(y1 - y0, 6);
  for (double y = std::ceil(y0 / ys) * ys; y <= y1; y += ys) {
    svg += "<line x1=\"" + num(left) + "\" x2=\"" + num(left + pw) + "\" y1=\"" + num(py(y)) + "\" y2=\"" + num(py(y)) +
           "\" stroke=\"#ddd\"/>\n";
    char label[32];
    std::snprintf(label, sizeof label, "%g", y);
    svg += "<text x=\"" + num(left - 6) + "\" y=\"" + num(py(y) + 4) + "\" text-anchor=\"end\">" + label + "</text>\n";
  }
  const double xs = std::max(1.0, tick_step(x1 - x0, 8));
  for (double x = std::ceil(x0 / xs) * xs; x <= x1; x += xs) {
    char label[32];
    std::snprintf(label, sizeof label, "%g", x);
    svg += "<text x=\"" + num(px(x)) + "\" y=\"" + num(top + ph + 18) + "\" text-anchor=\"middle\">" + label + "</text>\n";
  }
  svg += "<text x=\"" + num(left + pw / 2) + "\" y=\"" + num(height - 10) + "\" text-anchor=\"middle\">" +
         escape(x_label) + "</text>\n";
  svg += "<text transform=\"translate(16," + num(top + ph / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
         escape(y_label) + "</text>\n";
  for (const PlotLine& l : lines) {
    svg += "<line x1=\"" + num(left) + "\" x2=\"" + num(left + pw) + "\" y1=\"" + num(py(l.y)) + "\" y2=\"" +
           num(py(l.y)) + "\" stroke=\"#999\" stroke-dasharray=\"6,4\"/>\n";
    svg += "<text x=\"" + num(left + pw + 6) + "\" y=\"" + num(py(l.y) + 4) + "\" fill=\"#666\">" + escape(l.label) +
           "</text>\n";
  }
  int legend = 0;
  for (const PlotSeries& s : series) {
    std::string points;
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.y[i])) continue;
      points += num(px(s.x[i])) + "," + num(py(s.y[i])) + " ";
      svg += "<circle cx=\"" + num(px(s.x[i])) + "\" cy=\"" + num(py(s.y[i])) + "\" r=\"3\" fill=\"" + s.colour + "\"/>\n";
    }
    svg += "<polyline fill=\"none\" stroke=\"" + s.colour + "\" stroke-width=\"2\" points=\"" + points + "\"/>\n";
    svg += "<text x=\"" + num(left + 8) + "\" y=\"" + num(top + 16 + 16 * legend++) + "\" fill=\"" + s.colour + "\">" +
           escape(s.label) + "</text>\n";
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace ultima::loop
