// ultima analyze: the JSON analysis engine on standard input and output, or
// (with --fen) one position analysed from the shell.
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "commands.h"
#include "common.h"
#include "frontends/analysis/analysis.h"

namespace ultima::cli {
namespace {

using json = nlohmann::json;

struct AnalyzeOptions {
  AnalysisOptions engine;
  std::string fen, rules = kDefaultRules, moves, backend = "alphabeta", weights;
  int depth = 0, multipv = 1;
  long long nodes = 0, visits = 0, movetime_ms = 0;
  bool json_out = false;
};

std::string list_text(const json& a) {
  std::string s;
  for (const json& m : a) s += (s.empty() ? "" : " ") + m.get<std::string>();
  return s;
}

std::string score_text(const json& v) {
  std::string s = v.contains("mate") ? "mate " + std::to_string(v["mate"].get<int>())
                                     : "cp " + std::to_string(v["cp"].get<int>());
  const json& w = v["wdl"];
  return s + "  wdl " + std::to_string(w[0].get<int>()) + " " + std::to_string(w[1].get<int>()) + " " +
         std::to_string(w[2].get<int>());
}

// One query through the engine; its final answer printed as text or JSON.
void analyze_one(const AnalyzeOptions& o) {
  json q;
  q["id"] = "shell";
  q["fen"] = o.fen;
  q["rules"] = o.rules;
  json moves = json::array();
  std::istringstream words(o.moves);
  for (std::string w; words >> w;) moves.push_back(w);
  q["moves"] = moves;
  q["backend"] = o.backend;
  q["multi_pv"] = o.multipv;
  if (!o.weights.empty()) q["weights"] = o.weights;
  if (o.depth) q["max_depth"] = o.depth;
  if (o.nodes) q["max_nodes"] = o.nodes;
  if (o.visits) q["max_visits"] = o.visits;
  if (o.movetime_ms) q["max_time_ms"] = o.movetime_ms;
  std::istringstream in(q.dump() + "\n");
  std::ostringstream out;
  AnalysisOptions engine = o.engine;
  engine.parallel = 1;
  run_analysis(in, out, network_factory(), engine);

  json answer;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) {
    const json a = json::parse(line);
    if (a.contains("error")) {
      // Named by the command-line option behind the query's field.
      static const std::map<std::string, std::string> kOption = {
          {"fen", "--fen"},         {"rules", "--rules"},     {"moves", "--moves"},
          {"backend", "--backend"}, {"weights", "--weights"}, {"max_depth", "--depth"},
          {"max_nodes", "--nodes"}, {"max_visits", "--visits"}, {"max_time_ms", "--movetime"},
          {"multi_pv", "--multipv"}};
      const std::string field = a["field"].is_string() ? a["field"].get<std::string>() : "";
      const auto it = kOption.find(field);
      const std::string name = it != kOption.end() ? it->second : field;
      throw std::invalid_argument((name.empty() ? "" : name + ": ") + a["error"].get<std::string>());
    }
    if (a.value("final", false)) answer = a;
  }
  if (o.json_out) {
    std::printf("%s\n", answer.dump().c_str());
    return;
  }
  if (answer.contains("game_over")) {
    std::printf("game over: %s %s\n", answer["game_over"]["termination"].get<std::string>().c_str(),
                answer["game_over"]["result"].get<std::string>().c_str());
    return;
  }
  const json& root = answer["root"];
  std::printf("root  %s", score_text(root).c_str());
  if (root.contains("depth")) std::printf("  depth %d", root["depth"].get<int>());
  if (root.contains("visits")) std::printf("  visits %llu", root["visits"].get<unsigned long long>());
  if (root.contains("nodes")) std::printf("  nodes %llu", root["nodes"].get<unsigned long long>());
  std::printf("\n");
  for (const json& m : answer["moves"]) {
    std::printf("%d. %s  %s", m["rank"].get<int>(), m["move"].get<std::string>().c_str(), score_text(m).c_str());
    if (m.contains("visits")) std::printf("  visits %u", m["visits"].get<unsigned>());
    if (m.contains("prior")) std::printf("  prior %.3f", m["prior"].get<double>());
    std::printf("  pv %s\n", list_text(m["pv"]).c_str());
  }
}

}  // namespace

void add_analyze_command(CLI::App& app) {
  auto o = std::make_shared<AnalyzeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "JSON analysis engine: one query per line on standard input, answers as JSON lines (docs/analysis.md); "
      "with --fen, one position from the shell");
  cmd->add_option("--parallel", o->engine.parallel, "turns searched at once")->check(CLI::Range(1, 256));
  add_hash_option(cmd, o->engine.hash_mb, "alpha-beta transposition table per search, MB");
  add_nnue_option(cmd, o->engine.nnue, "the alpha-beta queries that name none");
  CLI::Option* fen = cmd->add_option("--fen", o->fen, "analyse this position (FEN or startpos) and exit");
  add_rules_option(cmd, o->rules)->needs(fen);
  cmd->add_option("--moves", o->moves, "moves played from the position, space-separated")->needs(fen);
  cmd->add_option("--backend", o->backend, "alphabeta or mcts")->needs(fen);
  cmd->add_option("--weights", o->weights,
                  "network for mcts: a file, a shipped network bot's name (net-m15) or best; none: the material "
                  "evaluator")
      ->needs(fen);
  cmd->add_option("--depth", o->depth, "alpha-beta depth")->check(CLI::Range(1, 126))->needs(fen);
  cmd->add_option("--nodes", o->nodes, "alpha-beta nodes")->check(CLI::PositiveNumber)->needs(fen);
  cmd->add_option("--visits", o->visits, "mcts root visits")->check(CLI::PositiveNumber)->needs(fen);
  cmd->add_option("--movetime", o->movetime_ms, "milliseconds")->check(CLI::PositiveNumber)->needs(fen);
  cmd->add_option("--multipv", o->multipv, "lines shown")->check(CLI::Range(1, 256))->needs(fen);
  cmd->add_flag("--json", o->json_out, "print the answer as one JSON line")->needs(fen);
  cmd->callback([o] {
    o->engine.version = ULTIMA_VERSION;
    check_nnue_option(o->engine.nnue);  // a bad one is named before any query
    if (!o->fen.empty()) return analyze_one(*o);
    std::ios::sync_with_stdio(false);
    run_analysis(std::cin, std::cout, network_factory(), o->engine);
  });
}

}  // namespace ultima::cli
