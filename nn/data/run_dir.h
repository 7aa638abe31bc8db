// The run directory: the only place where the processes of a run meet.
//
//   DIR/config.yaml            the resolved config of the run
//   DIR/models/model-NNNNNN.unn   model versions (0: the random first net),
//                              each published whole (temporary file + rename)
//   DIR/models/best            the version self-play uses (text, one number)
//   DIR/selfplay/TAG-NNNNNN.shard  sample shards (nn/data/sample.h)
//   DIR/games/TAG-NNNNNN.pgn   the games of each shard
//   DIR/checkpoints/           trainer state (training/)
//   DIR/logs/                  log files
//   DIR/locks/ROLE.lock        who holds a role: worker-TAG, trainer, gate
//                              (nn/data/run_lock.h)
//   DIR/metrics.csv            training curve; generations.csv, elo.svg: the loop
//
// Every file is written through a temporary name and a rename, so a reader
// (or a restarted writer) sees whole files only. A shard is named by its
// writer's tag and a sequence number and is never rewritten once it exists:
// a restarted writer makes the shards still missing and nothing else.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ultima::data {

class RunDir {
 public:
  // Creates the folders when missing. Throws std::runtime_error naming the
  // path when it cannot.
  explicit RunDir(std::string root);
  const std::string& root() const { return root_; }

  std::string path(const std::string& relative) const { return root_ + "/" + relative; }
  std::string model_path(std::uint64_t version) const;
  // The versions present, ascending (files that are not model-N.unn ignored).
  std::vector<std::uint64_t> model_versions() const;
  std::optional<std::uint64_t> latest_model() const;
  // The version in models/best, else the latest; nullopt when no model exists.
  std::optional<std::uint64_t> best_model() const;
  void set_best_model(std::uint64_t version) const;

  std::string shard_path(const std::string& tag, int sequence) const;
  std::string games_path(const std::string& tag, int sequence) const;
  // Every complete shard file (temporary files ignored), sorted by name.
  std::vector<std::string> shard_paths() const;
  // The sequence numbers of this tag's shards that exist.
  std::vector<int> shard_sequences(const std::string& tag) const;

 private:
  std::string root_;
};


}  // namespace ultima::data
