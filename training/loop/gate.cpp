#include "training/loop/gate.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "training/loop/generation_log.h"

namespace ultima::loop {
namespace {

const std::vector<std::string> kColumns = {"version", "best",          "score_vs_best",
                                           "score_vs_initial", "elo", "promoted", "elo_low", "elo_high"};

}  // namespace

Gatekeeper::Gatekeeper(const data::RunDir& run, const RunConfig& config, ModelEvaluators models)
    : run_(run), config_(config), evaluation_(run, config, std::move(models)) {}

std::vector<std::uint64_t> Gatekeeper::pending() const {
  std::uint64_t judged = run_.best_model().value_or(0);
  const CsvTable table = CsvTable::read(run_.path("gate.csv"));
  for (const auto& row : table.rows) {
    const double v = CsvTable::number(row, "version");
    if (v == v) judged = std::max(judged, static_cast<std::uint64_t>(v));
  }
  std::vector<std::uint64_t> out;
  for (std::uint64_t v : run_.model_versions())
    if (v > judged) out.push_back(v);
  return out;
}

EvaluationOutcome Gatekeeper::judge(std::uint64_t candidate) {
  const std::uint64_t best = run_.best_model().value_or(0);
  spdlog::info("gate: model {} against the best, model {}", candidate, best);
  CsvTable table = CsvTable::read(run_.path("gate.csv"));
  const EvaluationOutcome out =
      evaluation_.run(static_cast<int>(candidate), candidate, best, plan_evaluation(config_.eval, table));
  if (out.promoted) run_.set_best_model(candidate);
  if (table.columns.empty()) table.columns = kColumns;
  // A gate.csv from before the interval gains its columns at the end.
  for (const char* column : {"elo_low", "elo_high"})
    if (std::find(table.columns.begin(), table.columns.end(), column) == table.columns.end())
      table.columns.push_back(column);
  const auto score = [](const MatchOutcome& r) { return r.wdl.games() ? fixed(r.score, 3) : std::string(); };
  table.add_row({{"version", std::to_string(candidate)},
                        {"best", std::to_string(best)},
                        {"score_vs_best", score(out.vs_best)},
                        {"score_vs_initial", score(out.vs_initial)},
                        {"elo", fixed(out.elo, 1)},
                        {"elo_low", fixed(out.rating.lower, 1)},
                        {"elo_high", fixed(out.rating.upper, 1)},
                        {"promoted", out.promoted ? "1" : "0"}});
  table.write(run_.path("gate.csv"));
  spdlog::info("gate: model {} {} (vs best {}), Elo {}", candidate, out.promoted ? "promoted" : "not promoted",
               out.vs_best.wdl.games() ? fixed(100 * out.vs_best.score, 1) + "%" : std::string("-"),
               fixed(out.elo, 0));
  return out;
}

}  // namespace ultima::loop
