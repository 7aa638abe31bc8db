// ultima bench analyze: the analysis engine's queries per second, one at a
// time against many at once, on the same queries and the same evaluator.
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "common.h"
#include "frontends/analysis/analysis.h"
#include "engine/rules/movegen.h"
#include "nn/batching_evaluator.h"

namespace ultima::cli {
namespace {

using json = nlohmann::json;

struct BenchAnalyze {
  std::string backend = "mcts";
  std::string net;  // network settings; empty: random 6x64
  bool material = false;
  int queries = 16, parallel = 8, visits = 200, depth = 6;
};

// Positions from seeded random play, 10 to 39 plies from the start.
std::vector<std::string> bench_fens(int count) {
  std::mt19937_64 rng(7);
  std::vector<std::string> fens;
  while (static_cast<int>(fens.size()) < count) {
    Position pos = Position::start();
    const int plies = 10 + static_cast<int>(fens.size() * 7 % 30);
    for (int ply = 0; ply < plies && !game_status(pos).over(); ++ply) {
      MoveList l;
      generate_legal(pos, l);
      pos.make(l[rng() % l.size()]);
    }
    if (!game_status(pos).over()) fens.push_back(pos.fen());
  }
  return fens;
}

void bench_analyze(const BenchAnalyze& o) {
  const bool mcts = o.backend == "mcts";
  if (!mcts && o.backend != "alphabeta") throw std::invalid_argument("--backend must be mcts or alphabeta");
  // One evaluator made before the clock starts and served to both runs; its
  // cache is off, so the second run gains nothing from the first.
  std::shared_ptr<Evaluator> evaluator;
  std::string what;
  if (!mcts) {
    what = "alpha-beta, depth " + std::to_string(o.depth);
  } else if (o.material) {
    what = "mcts with the material evaluator, " + std::to_string(o.visits) + " visits";
  } else {
    const std::string spec = o.net + (o.net.empty() ? "" : ",") + "cache_entries=0,max_batch=" +
                             std::to_string(std::max(1, o.parallel) * 16);
    evaluator = network_factory()(spec);
    what = "mcts with " + evaluator->name() + ", " + std::to_string(o.visits) + " visits";
  }
  NetworkFactory shared = [evaluator](const std::string&) { return evaluator; };
  auto* batching = dynamic_cast<nn::BatchingEvaluator*>(evaluator.get());

  std::string input;
  int i = 0;
  for (const std::string& fen : bench_fens(o.queries)) {
    std::string id = "b";
    id += std::to_string(i++);
    json q = {{"id", id}, {"fen", fen}, {"backend", o.backend}};
    if (!mcts) q["max_depth"] = o.depth;
    else q["max_visits"] = o.visits;
    if (evaluator) q["weights"] = "bench";
    input += q.dump() + "\n";
  }
  std::printf("bench analyze: %d queries, %s\n", o.queries, what.c_str());
  double one_rate = 0;
  for (int parallel : {1, o.parallel}) {
    AnalysisOptions options;
    options.parallel = parallel;
    std::istringstream in(input);
    std::ostringstream out;
    const nn::BatchingStats before = batching ? batching->stats() : nn::BatchingStats{};
    const auto start = std::chrono::steady_clock::now();
    run_analysis(in, out, shared, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    int answered = 0;
    std::istringstream lines(out.str());
    for (std::string line; std::getline(lines, line);) {
      const json a = json::parse(line);
      if (a.contains("error")) throw std::runtime_error("query failed: " + line);
      answered += a.value("final", false);
    }
    const double rate = answered / seconds;
    if (parallel == 1) one_rate = rate;
    std::printf("%3d at once  %4d answered  %8.3f s  %8.2f queries/s", parallel, answered, seconds, rate);
    if (parallel != 1) std::printf("  (x%.2f)", rate / one_rate);
    if (batching) {
      const nn::BatchingStats after = batching->stats();
      const std::uint64_t batches = after.batches - before.batches;
      std::printf("  mean batch %.1f", batches ? double(after.evaluated - before.evaluated) / batches : 0.0);
    }
    std::printf("\n");
  }
}

}  // namespace

void add_bench_analyze_command(CLI::App& bench) {
  auto o = std::make_shared<BenchAnalyze>();
  CLI::App* cmd = bench.add_subcommand(
      "analyze", "analysis engine queries/s, one at a time against many at once (same queries, same evaluator)");
  cmd->add_option("--backend", o->backend, "mcts or alphabeta");
  cmd->add_option("--net", o->net, "network settings, e.g. weights=FILE (default: random 6x64)");
  cmd->add_flag("--material", o->material, "mcts with the material evaluator instead of a network");
  cmd->add_option("--queries", o->queries, "queries (positions from seeded random play)")->check(CLI::Range(1, 100000));
  cmd->add_option("--parallel", o->parallel, "queries searched at once in the second run")->check(CLI::Range(1, 256));
  cmd->add_option("--visits", o->visits, "mcts visits per query")->check(CLI::Range(1, 10000000));
  cmd->add_option("--depth", o->depth, "alpha-beta depth per query")->check(CLI::Range(1, 30));
  cmd->callback([o] { bench_analyze(*o); });
}

}  // namespace ultima::cli
