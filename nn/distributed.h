// Data-parallel training across processes: the launch environment's
// contract and a process group (the module's c10d group, see
// module_api.h). No LibTorch here.
//
// The contract is PyTorch's: WORLD_SIZE, RANK, LOCAL_RANK, MASTER_ADDR,
// MASTER_PORT (torchrun, a Kubernetes indexed Job, `ultima train --nproc`).
// Inside a Slurm job step (srun sets SLURM_STEP_NUM_TASKS) Slurm's own
// SLURM_NTASKS, SLURM_PROCID and SLURM_LOCALID stand for the first three
// where WORLD_SIZE is unset; MASTER_ADDR must still be set (the batch
// script names the job's first node). ULTIMA_DIST_TIMEOUT (seconds, default
// 600) bounds the rendezvous and every collective.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct UltimaNnGroup;

namespace ultima::nn {

struct LaunchEnvironment {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr;
  int master_port = 29500;
  int timeout_seconds = 600;
  std::string source;  // "WORLD_SIZE" or "Slurm": where rank and world size came from

  // From the environment through `get` (getenv by default). nullopt where
  // no launcher set a world size. Throws std::invalid_argument naming the
  // variable that is malformed, out of range or missing.
  static std::optional<LaunchEnvironment> read(
      const std::function<const char*(const char*)>& get = {});
};

struct GroupOptions {
  int rank = 0;
  int world_size = 1;
  std::string master_addr;   // rank 0 listens on master_addr:master_port
  int master_port = 29500;
  std::string store_path;    // a shared file instead of the TCP rendezvous (tests)
  std::string device = "cpu";  // the trainer's device: NCCL for CUDA where built with it, else Gloo
  int timeout_seconds = 600;

  // A launched rank's options: a bare "cuda" device becomes the rank's own
  // GPU, cuda:LOCAL_RANK.
  static GroupOptions launched(const LaunchEnvironment& launch, const std::string& device);
};

// Every call is a collective: each rank makes it, in the same order.
class ProcessGroup {
 public:
  // Meets the other ranks; throws NnModuleError naming the problem (a
  // rendezvous that failed or timed out).
  static std::unique_ptr<ProcessGroup> create(const GroupOptions& options);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  // Rank `root`'s data, on every rank.
  std::string broadcast(const std::string& data, int root = 0);
  // Each element summed over ranks, in place.
  void sum(std::vector<double>& values);
  // Rank 0's value, on every rank.
  std::uint64_t agree(std::uint64_t value);
  // Whether any rank's flag is set.
  bool any(bool flag);
  UltimaNnGroup* handle() { return group_; }

 private:
  ProcessGroup(UltimaNnGroup* group, int rank, int world_size);
  UltimaNnGroup* group_;
  int rank_, world_size_;
};

}  // namespace ultima::nn
