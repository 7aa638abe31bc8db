#include "nn/distributed.h"

#include <netdb.h>
#include <sys/socket.h>

#include <charconv>
#include <cstdlib>
#include <stdexcept>

#include "nn/module_api.h"
#include "nn/module_client.h"
#include "nn/network.h"

namespace ultima::nn {
namespace {

using detail::ErrorBuffer;

int number(const std::function<const char*(const char*)>& get, const char* name, int low, int high) {
  const char* text = get(name);
  if (!text || !*text) throw std::invalid_argument(std::string(name) + " is not set");
  const std::string s(text);
  int value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size())
    throw std::invalid_argument(std::string(name) + "='" + s + "' is not a whole number");
  if (value < low || value > high)
    throw std::invalid_argument(std::string(name) + "=" + s + " is outside " + std::to_string(low) + ".." +
                                std::to_string(high));
  return value;
}

}  // namespace

std::optional<LaunchEnvironment> LaunchEnvironment::read(const std::function<const char*(const char*)>& getter) {
  const auto get = getter ? getter : [](const char* name) -> const char* { return std::getenv(name); };
  const auto set = [&](const char* name) {
    const char* v = get(name);
    return v && *v;
  };
  LaunchEnvironment e;
  if (set("WORLD_SIZE")) {
    e.source = "WORLD_SIZE";
    e.world_size = number(get, "WORLD_SIZE", 1, 1 << 20);
    e.rank = number(get, "RANK", 0, e.world_size - 1);
    e.local_rank = set("LOCAL_RANK") ? number(get, "LOCAL_RANK", 0, 1 << 20) : 0;
  } else if (set("SLURM_STEP_NUM_TASKS")) {
    e.source = "Slurm";
    e.world_size = number(get, set("SLURM_NTASKS") ? "SLURM_NTASKS" : "SLURM_STEP_NUM_TASKS", 1, 1 << 20);
    e.rank = number(get, "SLURM_PROCID", 0, e.world_size - 1);
    e.local_rank = set("SLURM_LOCALID") ? number(get, "SLURM_LOCALID", 0, 1 << 20) : 0;
  } else {
    return std::nullopt;
  }
  if (set("ULTIMA_DIST_TIMEOUT")) e.timeout_seconds = number(get, "ULTIMA_DIST_TIMEOUT", 1, 7 * 24 * 3600);
  if (e.world_size > 1) {
    if (!set("MASTER_ADDR"))
      throw std::invalid_argument("MASTER_ADDR is not set (the host of rank 0, where the ranks meet)");
    e.master_addr = get("MASTER_ADDR");
    if (set("MASTER_PORT")) e.master_port = number(get, "MASTER_PORT", 1, 65535);
  }
  return e;
}

GroupOptions GroupOptions::launched(const LaunchEnvironment& launch, const std::string& device) {
  GroupOptions g;
  g.rank = launch.rank;
  g.world_size = launch.world_size;
  g.master_addr = launch.master_addr;
  g.master_port = launch.master_port;
  g.device = device == "cuda" ? "cuda:" + std::to_string(launch.local_rank) : device;
  g.timeout_seconds = launch.timeout_seconds;
  return g;
}

namespace {

// A rendezvous address that does not resolve can never succeed: c10d would
// retry it, with a warning a second, until the timeout. Said at once
// instead, naming the variable that gave it.
void check_rendezvous_address(const GroupOptions& o) {
  if (!o.store_path.empty() || o.world_size < 2 || o.master_addr.empty()) return;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int status = ::getaddrinfo(o.master_addr.c_str(), nullptr, &hints, &found);
  if (found) ::freeaddrinfo(found);
  if (status != 0)
    throw std::runtime_error("rank " + std::to_string(o.rank) + " of " + std::to_string(o.world_size) +
                             " cannot join the process group: MASTER_ADDR '" + o.master_addr +
                             "' does not resolve to an address (" + ::gai_strerror(status) +
                             "); set MASTER_ADDR to an address of rank 0's host (under Slurm, its NodeAddr)");
}

}  // namespace

std::unique_ptr<ProcessGroup> ProcessGroup::create(const GroupOptions& o) {
  check_rendezvous_address(o);
  const UltimaNnApi& api = nn_module();
  const UltimaNnGroupOptions c{o.rank,
                               o.world_size,
                               o.master_addr.c_str(),
                               o.master_port,
                               o.store_path.empty() ? nullptr : o.store_path.c_str(),
                               o.device.c_str(),
                               o.timeout_seconds};
  ErrorBuffer error;
  UltimaNnGroup* group = api.group_create(&c, error.text, sizeof error.text);
  if (!group)
    error.raise("rank " + std::to_string(o.rank) + " of " + std::to_string(o.world_size) +
                " cannot join the process group");
  return std::unique_ptr<ProcessGroup>(new ProcessGroup(group, o.rank, o.world_size));
}

ProcessGroup::ProcessGroup(UltimaNnGroup* group, int rank, int world_size)
    : group_(group), rank_(rank), world_size_(world_size) {}

ProcessGroup::~ProcessGroup() { nn_module().group_destroy(group_); }

std::string ProcessGroup::broadcast(const std::string& data, int root) {
  char* buffer = const_cast<char*>(data.data());
  std::uint64_t bytes = data.size();
  ErrorBuffer error;
  if (nn_module().group_broadcast(group_, root, &buffer, &bytes, error.text, sizeof error.text) != 0)
    error.raise("a broadcast between training ranks failed");
  if (rank_ == root) return data;
  const std::vector<char> copy = detail::take_buffer(buffer, bytes);
  return std::string(copy.begin(), copy.end());
}

void ProcessGroup::sum(std::vector<double>& values) {
  ErrorBuffer error;
  if (nn_module().group_sum(group_, values.data(), static_cast<std::int32_t>(values.size()), error.text,
                            sizeof error.text) != 0)
    error.raise("a sum over training ranks failed");
}

std::uint64_t ProcessGroup::agree(std::uint64_t value) {
  const std::string text = broadcast(std::to_string(value));
  return std::stoull(text);
}

bool ProcessGroup::any(bool flag) {
  std::vector<double> v{flag ? 1.0 : 0.0};
  sum(v);
  return v[0] > 0;
}

}  // namespace ultima::nn
