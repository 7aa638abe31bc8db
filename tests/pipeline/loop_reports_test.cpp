// What the loop reports: ratings against the ladder of levels, with their
// interval (engine/play/elo.h), and the SVG charts (training/loop/plot.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/play/elo.h"
#include "training/loop/plot.h"

namespace ultima {
namespace {

// ---------------------------------------------------------------------------
// rating_from_results

TEST(RatingFromResults, EvenScoreGivesTheOpponentsRating) {
  EXPECT_NEAR(rating_from_results({{1500, 10, 20}}), 1500, 0.01);
  EXPECT_NEAR(rating_from_results({{1500, 0.5, 1}}), 1500, 0.01);
  // Half the points against 1000 and against 2000: the middle.
  EXPECT_NEAR(rating_from_results({{1000, 50, 100}, {2000, 50, 100}}), 1500, 0.01);
}

TEST(RatingFromResults, SeventyFivePercentIsAbout191Above) {
  // -400 log10(1/0.75 - 1) = 190.85; the virtual draw hardly moves it over
  // 4000 games.
  EXPECT_NEAR(rating_from_results({{1000, 3000, 4000}}), 1000 + 190.85, 0.5);
  EXPECT_NEAR(rating_from_results({{1000, 750, 1000}, {1000, 750, 1000}}), 1000 + 190.85, 0.5);
  // And the mirror.
  EXPECT_NEAR(rating_from_results({{1000, 1000, 4000}}), 1000 - 190.85, 0.5);
}

TEST(RatingFromResults, CleanSweepIsFiniteAndAbove) {
  const double r = rating_from_results({{1200, 10, 10}});
  EXPECT_TRUE(std::isfinite(r));
  EXPECT_GT(r, 1200 + 190);
  // 10.5 of 11 with the virtual draw.
  EXPECT_NEAR(r, 1200 + elo_from_score(10.5 / 11), 0.5);
  const double whitewash = rating_from_results({{1200, 0, 10}});
  EXPECT_TRUE(std::isfinite(whitewash));
  EXPECT_LT(whitewash, 1200);
  // More wins, higher rating.
  EXPECT_GT(rating_from_results({{1200, 20, 20}}), r);
}

TEST(RateOnLadder, IntervalFromTheLikelihoodsCurvature) {
  // 10 of 20 against 1000 (with the virtual draw 10.5 of 21): 1000, and
  // the curvature (ln 10 / 400)^2 * 21 * 0.25 gives a half-width of
  // 1.96 * 400 / ln 10 / sqrt(5.25) = 148.6.
  const LadderRating even = rate_on_ladder({{1000, 10, 20}});
  EXPECT_NEAR(even.elo, 1000, 0.01);
  EXPECT_NEAR(even.lower, 1000 - 148.6, 0.1);
  EXPECT_NEAR(even.upper, 1000 + 148.6, 0.1);
  EXPECT_EQ(even.games, 20);
  // Half the points against 1000 and 2000: 1500, each opponent 500 away
  // (expected score p = 0.9468): 1.96 * 173.72 / sqrt(2 * 101 * p (1 - p)) = 106.7.
  const LadderRating split = rate_on_ladder({{1000, 50, 100}, {2000, 50, 100}});
  EXPECT_NEAR(split.elo, 1500, 0.01);
  EXPECT_NEAR(split.upper - split.elo, 106.7, 0.1);
  EXPECT_NEAR(split.elo - split.lower, 106.7, 0.1);
  // Four times the games, half the width; a sweep stays finite.
  const LadderRating more = rate_on_ladder({{1000, 40, 80}});
  EXPECT_NEAR(more.upper - more.elo, 148.6 * std::sqrt(21.0 / 81.0), 0.1);
  const LadderRating sweep = rate_on_ladder({{1000, 10, 10}});
  EXPECT_TRUE(std::isfinite(sweep.lower) && std::isfinite(sweep.upper));
  EXPECT_GT(sweep.lower, 1000);
  // Even scores against levels 200 below and above: 64 games reach +-100
  // (the default of 32 a level, two levels a generation), 48 do not.
  EXPECT_LT(rate_on_ladder({{800, 16, 32}, {1200, 16, 32}}).upper - 1000, 100);
  EXPECT_GT(rate_on_ladder({{800, 12, 24}, {1200, 12, 24}}).upper - 1000, 100);
  const LadderRating none = rate_on_ladder({{1000, 0, 0}});
  EXPECT_TRUE(std::isnan(none.elo) && std::isnan(none.lower) && std::isnan(none.upper));
  EXPECT_EQ(none.games, 0);
}

TEST(RatingFromResults, NaNWithoutGames) {
  EXPECT_TRUE(std::isnan(rating_from_results({})));
  EXPECT_TRUE(std::isnan(rating_from_results({{1000, 0, 0}})));
}

// ---------------------------------------------------------------------------
// svg_line_chart

TEST(SvgLineChart, OnePolylinePerSeriesAndEscapedLabels) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<loop::PlotSeries> series = {
      {"net <a&b>", "#c00", {0, 1, 2, 3}, {0, 50, nan, 120}, {}, {}},
      {"other", "#00c", {0, 1, 2, 3}, {10, 20, 30, 40}, {}, {}},
      {"empty", "#0c0", {}, {}, {}, {}},
  };
  const std::string svg =
      loop::svg_line_chart("Elo <by generation>", "generation", "elo", series, {{"novice <1>", 400}});
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  std::string end = svg;
  while (!end.empty() && std::isspace(static_cast<unsigned char>(end.back()))) end.pop_back();
  EXPECT_TRUE(end.ends_with("</svg>"));
  std::size_t polylines = 0;
  for (std::size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++polylines;
  EXPECT_EQ(polylines, series.size());
  EXPECT_NE(svg.find("net &lt;a&amp;b&gt;"), std::string::npos);
  EXPECT_NE(svg.find("Elo &lt;by generation&gt;"), std::string::npos);
  EXPECT_NE(svg.find("novice &lt;1&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("<a&b>"), std::string::npos);
  EXPECT_EQ(svg.find("<by"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  // Every tag that opens is closed or self-closing: count < and >.
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '<'), std::count(svg.begin(), svg.end(), '>'));
}

TEST(SvgLineChart, NoDataStillGivesAChart) {
  const std::string svg = loop::svg_line_chart("empty", "x", "y", {}, {});
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(svg.find("<polyline"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(SvgChart, PanelsHaveTheirOwnScaleErrorBarsAndLabelledLines) {
  loop::PlotPanel big, small;
  big.y_label = "policy";
  big.series.push_back({"policy loss", "#c00", {0, 1, 2}, {5.0, 4.5, 4.0}, {}, {}});
  small.y_label = "value";
  small.series.push_back({"value loss", "#00c", {0, 1, 2}, {0.70, 0.69, 0.68}, {0.6, std::nan(""), 0.5}, {0.8, 0.7, 0.9}});
  small.lines.push_back({"level <x>", 0.65});
  const std::string svg = loop::svg_chart("t", "step", {big, small});
  // Two error bars (the NaN low end has none), the line with its label.
  std::size_t bars = 0;
  for (std::size_t at = svg.find("class=\"errorbar\""); at != std::string::npos;
       at = svg.find("class=\"errorbar\"", at + 1))
    ++bars;
  EXPECT_EQ(bars, 2u);
  EXPECT_NE(svg.find("class=\"reference\""), std::string::npos);
  EXPECT_NE(svg.find("level &lt;x&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  // Each panel spans its own values: ticks of 0.2 from 4 to 5 above, of
  // 0.1 from 0.5 to 0.9 below; one shared axis from 0.5 to 5 would tick
  // 1, 2, 3, ... and show neither loss moving.
  EXPECT_NE(svg.find(">0.7<"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">4.2<"), std::string::npos) << svg;
}

}  // namespace
}  // namespace ultima
