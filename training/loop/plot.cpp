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
    else if (c == '"') out += "&quot;";
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

std::string tick_label(double v, double step) {
  char label[32];
  if (std::fabs(v) < step * 1e-6) v = 0;  // no "-0" or 1e-17
  std::snprintf(label, sizeof label, "%g", v);
  return label;
}

constexpr double kWidth = 760, kLeft = 70, kRight = 160, kTop = 36, kLegend = 22, kGap = 34, kBottom = 48;

}  // namespace

std::string svg_chart(const std::string& title, const std::string& x_label, const std::vector<PlotPanel>& panels) {
  const double inf = std::numeric_limits<double>::infinity();
  double x0 = inf, x1 = -inf;
  for (const PlotPanel& p : panels)
    for (const PlotSeries& s : p.series)
      for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
        if (std::isfinite(s.y[i]) && std::isfinite(s.x[i])) x0 = std::min(x0, s.x[i]), x1 = std::max(x1, s.x[i]);
  if (!std::isfinite(x0)) x0 = 0, x1 = 1;
  if (x1 - x0 < 1) x1 = x0 + 1;
  const double pad_x = 0.03 * (x1 - x0);
  x0 -= pad_x;
  x1 += pad_x;
  const double pw = kWidth - kLeft - kRight;
  auto px = [&](double x) { return kLeft + (x - x0) / (x1 - x0) * pw; };

  double height = kTop + kBottom;
  for (const PlotPanel& p : panels) height += kLegend + p.height + kGap;
  if (panels.empty()) height += 100;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth) + "\" height=\"" + num(height) +
                    "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"" + num(kWidth / 2) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" + escape(title) +
         "</text>\n";

  double top = kTop;
  for (const PlotPanel& panel : panels) {
    // The legend strip: one swatch and label per series, left to right.
    double lx = kLeft;
    for (const PlotSeries& s : panel.series) {
      svg += "<line class=\"legend\" x1=\"" + num(lx) + "\" x2=\"" + num(lx + 18) + "\" y1=\"" + num(top + 8) +
             "\" y2=\"" + num(top + 8) + "\" stroke=\"" + s.colour + "\" stroke-width=\"3\"/>\n";
      svg += "<text x=\"" + num(lx + 24) + "\" y=\"" + num(top + 12) + "\">" + escape(s.label) + "</text>\n";
      lx += 40 + 7 * static_cast<double>(s.label.size());
    }
    const double ptop = top + kLegend, ph = panel.height;

    double y0 = inf, y1 = -inf;
    const auto take = [&](double v) {
      if (std::isfinite(v)) y0 = std::min(y0, v), y1 = std::max(y1, v);
    };
    for (const PlotSeries& s : panel.series)
      for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
        if (!std::isfinite(s.y[i])) continue;
        take(s.y[i]);
        if (i < s.low.size()) take(s.low[i]);
        if (i < s.high.size()) take(s.high[i]);
      }
    for (const PlotLine& l : panel.lines) take(l.y);
    if (std::isfinite(panel.y_min) && std::isfinite(panel.y_max) && panel.y_min < panel.y_max) {
      y0 = panel.y_min, y1 = panel.y_max;
    } else {
      if (!std::isfinite(y0)) y0 = 0, y1 = 1;
      if (y1 - y0 < 1e-9 * std::max(1.0, std::fabs(y0))) y0 -= 0.5 * std::max(1e-3, std::fabs(y0)), y1 = 2 * y1 - y0;
      const double pad = 0.06 * (y1 - y0);
      y0 -= pad;
      y1 += pad;
    }
    auto py = [&](double y) { return ptop + (1 - (std::clamp(y, y0, y1) - y0) / (y1 - y0)) * ph; };

    svg += "<rect x=\"" + num(kLeft) + "\" y=\"" + num(ptop) + "\" width=\"" + num(pw) + "\" height=\"" + num(ph) +
           "\" fill=\"none\" stroke=\"#444\"/>\n";
    const double ys = tick_step(y1 - y0, std::max(3, static_cast<int>(ph / 40)));
    for (double y = std::ceil(y0 / ys) * ys; y <= y1 + 1e-9 * ys; y += ys) {
      svg += "<line x1=\"" + num(kLeft) + "\" x2=\"" + num(kLeft + pw) + "\" y1=\"" + num(py(y)) + "\" y2=\"" +
             num(py(y)) + "\" stroke=\"#e4e4e4\"/>\n";
      svg += "<text x=\"" + num(kLeft - 6) + "\" y=\"" + num(py(y) + 4) + "\" text-anchor=\"end\">" +
             tick_label(y, ys) + "</text>\n";
    }
    const double xs = std::max(1.0, tick_step(x1 - x0, 8));
    for (double x = std::ceil(x0 / xs) * xs; x <= x1; x += xs)
      svg += "<text x=\"" + num(px(x)) + "\" y=\"" + num(ptop + ph + 16) + "\" text-anchor=\"middle\">" +
             tick_label(x, xs) + "</text>\n";
    svg += "<text transform=\"translate(16," + num(ptop + ph / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
           escape(panel.y_label) + "</text>\n";
    for (const PlotLine& l : panel.lines) {
      if (!std::isfinite(l.y) || l.y < y0 || l.y > y1) continue;
      svg += "<line class=\"reference\" x1=\"" + num(kLeft) + "\" x2=\"" + num(kLeft + pw) + "\" y1=\"" +
             num(py(l.y)) + "\" y2=\"" + num(py(l.y)) + "\" stroke=\"#888\" stroke-dasharray=\"6,4\"/>\n";
      svg += "<text x=\"" + num(kLeft + pw + 6) + "\" y=\"" + num(py(l.y) + 4) + "\" fill=\"#555\">" +
             escape(l.label) + "</text>\n";
    }
    for (const PlotSeries& s : panel.series) {
      std::string points;
      std::size_t drawn = 0;
      for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
        if (!std::isfinite(s.y[i]) || !std::isfinite(s.x[i])) continue;
        const double lo = i < s.low.size() ? s.low[i] : NAN, hi = i < s.high.size() ? s.high[i] : NAN;
        if (std::isfinite(lo) && std::isfinite(hi)) {
          const double x = px(s.x[i]);
          svg += "<path class=\"errorbar\" d=\"M" + num(x) + " " + num(py(lo)) + "V" + num(py(hi)) + "M" +
                 num(x - 4) + " " + num(py(lo)) + "h8M" + num(x - 4) + " " + num(py(hi)) + "h8\" stroke=\"" +
                 s.colour + "\" stroke-opacity=\"0.6\" fill=\"none\"/>\n";
        }
        points += num(px(s.x[i])) + "," + num(py(s.y[i])) + " ";
        ++drawn;
      }
      for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
        if (std::isfinite(s.y[i]) && std::isfinite(s.x[i]) && (drawn < 60 || !s.low.empty()))
          svg += "<circle cx=\"" + num(px(s.x[i])) + "\" cy=\"" + num(py(s.y[i])) + "\" r=\"3\" fill=\"" + s.colour +
                 "\"/>\n";
      svg += "<polyline fill=\"none\" stroke=\"" + s.colour + "\" stroke-width=\"2\" points=\"" + points + "\"/>\n";
    }
    top = ptop + ph + kGap;
  }
  svg += "<text x=\"" + num(kLeft + pw / 2) + "\" y=\"" + num(height - 12) + "\" text-anchor=\"middle\">" +
         escape(x_label) + "</text>\n";
  svg += "</svg>\n";
  return svg;
}

std::string svg_line_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                           const std::vector<PlotSeries>& series, const std::vector<PlotLine>& lines) {
  PlotPanel panel;
  panel.y_label = y_label;
  panel.series = series;
  panel.lines = lines;
  return svg_chart(title, x_label, {panel});
}

}  // namespace ultima::loop
