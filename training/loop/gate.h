// The gatekeeper outside the loop (`ultima gate`): each candidate a trainer
// exported (a model version above the best and above every one judged) is
// played by the loop's own evaluation stage against the best model, the
// untrained one and the levels, and promoted when it passes (or always,
// under promotion: continuous). Decisions go to DIR/gate.csv, one row per
// candidate, so a restarted gatekeeper judges each candidate once.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "nn/data/run_dir.h"
#include "training/loop/run_config.h"
#include "training/loop/stages.h"

namespace ultima::loop {

class Gatekeeper {
 public:
  Gatekeeper(const data::RunDir& run, const RunConfig& config, ModelEvaluators models);
  // The candidates not judged yet, ascending.
  std::vector<std::uint64_t> pending() const;
  // Judges one candidate: plays its matches, promotes it when it passes,
  // records the decision. Returns the outcome.
  EvaluationOutcome judge(std::uint64_t candidate);

 private:
  const data::RunDir& run_;
  const RunConfig& config_;
  EvaluationStage evaluation_;
};

}  // namespace ultima::loop
