// A stand-in for a network evaluator in the play tests: plays as the
// material evaluator and tells, through its name, the settings a
// NetworkFactory made it with.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/mcts/material_evaluator.h"
#include "engine/play/player_spec.h"

namespace ultima::test {

class FakeNetwork : public MaterialEvaluator {
 public:
  explicit FakeNetwork(std::string settings) : settings_(std::move(settings)) {}
  std::string name() const override { return "fake network (" + settings_ + ")"; }

 private:
  std::string settings_;
};

// A factory of fake networks that records every settings text it is asked for.
inline NetworkFactory fake_networks(std::vector<std::string>& asked) {
  return [&asked](const std::string& settings) -> std::shared_ptr<Evaluator> {
    asked.push_back(settings);
    return std::make_shared<FakeNetwork>(settings);
  };
}

}  // namespace ultima::test
