#include "training/loop/status.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "nn/data/run_lock.h"
#include "nn/data/sample.h"
#include "training/loop/generation_log.h"
#include "training/loop/loop.h"
#include "training/loop/run_config.h"

namespace ultima::loop {

std::string run_status_text(const data::RunDir& run) {
  require_run(run.root());
  const RunConfig config = RunConfig::load(run.path("config.yaml"));
  const auto now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::string out;
  char line[512];

  const auto versions = run.model_versions();
  std::snprintf(line, sizeof line, "run %s (%s): %zu models, latest %s, best %s\n", run.root().c_str(),
                config.name.c_str(), versions.size(),
                versions.empty() ? "-" : std::to_string(versions.back()).c_str(),
                run.best_model() ? std::to_string(*run.best_model()).c_str() : "-");
  out += line;

  std::uint64_t samples = 0;
  int shards = 0, unreadable = 0;
  for (const std::string& path : run.shard_paths()) {
    try {
      samples += data::read_shard_header(path).samples;
      ++shards;
    } catch (const std::exception&) {
      ++unreadable;
    }
  }
  std::snprintf(line, sizeof line, "samples: %llu in %d shards%s\n", static_cast<unsigned long long>(samples),
                shards, unreadable ? (", " + std::to_string(unreadable) + " unreadable").c_str() : "");
  out += line;

  // How much each sample was trained on: steps x batch size / samples.
  const CsvTable metrics = CsvTable::read(run.path("metrics.csv"));
  const double step = metrics.rows.empty() ? 0 : CsvTable::number(metrics.rows.back(), "step");
  if (step > 0 && samples > 0) {
    std::snprintf(line, sizeof line, "training: step %.0f, %.2f samples trained per sample played (target %.2f)\n",
                  step, step * config.training.batch_size / static_cast<double>(samples),
                  config.train_stage.train_ratio);
    out += line;
  } else {
    out += "training: no step yet\n";
  }

  const CsvTable gate = CsvTable::read(run.path("gate.csv"));
  if (!gate.rows.empty()) {
    const auto& last = gate.rows.back();
    std::snprintf(line, sizeof line, "gate: %zu candidates judged, the last model %s %s\n", gate.rows.size(),
                  last.count("version") ? last.at("version").c_str() : "?",
                  last.count("promoted") && last.at("promoted") == "1" ? "promoted" : "not promoted");
    out += line;
  }

  const auto holders = data::read_role_holders(run);
  if (holders.empty()) out += "no trainer, gatekeeper or worker holds a role\n";
  for (const data::RoleHolder& h : holders) {
    std::string status;
    for (const auto& [key, value] : h.status) status += " " + key + "=" + value;
    std::snprintf(line, sizeof line, "%-20s %-6s pid %ld on %s, heartbeat %llds ago%s\n", h.role.c_str(),
                  h.alive ? "alive" : "stale", h.pid, h.host.c_str(),
                  static_cast<long long>(std::max<std::int64_t>(0, now - h.heartbeat)), status.c_str());
    out += line;
  }
  return out;
}

}  // namespace ultima::loop
