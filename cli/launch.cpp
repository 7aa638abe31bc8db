// Launching data-parallel ranks on this machine (launch.h).
#include "launch.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>

#include "engine/base/stop.h"

namespace ultima::cli {
namespace {


// A TCP port free on the loopback now, for the ranks' rendezvous.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("no socket for the rendezvous: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t size = sizeof address;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot find a free port for the rendezvous");
  return ntohs(address.sin_port);
}

// This process's own command line without --nproc: what each rank runs.
std::vector<std::string> rank_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (std::size_t at = 0; at < all.size();) {
    const std::size_t end = all.find('\0', at);
    args.push_back(all.substr(at, end - at));
    at = end == std::string::npos ? all.size() : end + 1;
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--nproc") {
      ++i;
      continue;
    }
    if (args[i].rfind("--nproc=", 0) == 0) continue;
    out.push_back(args[i]);
  }
  return out;
}

std::string exit_text(int status) {
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

void launch_ranks(int nproc, const std::vector<std::pair<std::string, std::string>>& environment) {
  if (const char* world = std::getenv("WORLD_SIZE"); world && *world)
    throw std::runtime_error("--nproc inside a launched rank (WORLD_SIZE is set)");
  const std::vector<std::string> args = rank_command_line();
  if (args.empty()) throw std::runtime_error("cannot read this process's command line");
  const int port = free_port();
  install_stop_handlers();
  std::vector<pid_t> pids;
  for (int rank = 0; rank < nproc; ++rank) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      const std::string why = std::strerror(errno);
      for (const pid_t started : pids) ::kill(started, SIGKILL);
      for (const pid_t started : pids) ::waitpid(started, nullptr, 0);
      throw std::runtime_error("cannot start rank " + std::to_string(rank) + ": fork failed: " + why);
    }
    if (pid == 0) {
      ::setenv("WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      ::setenv("RANK", std::to_string(rank).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      for (const auto& [name, value] : environment) ::setenv(name.c_str(), value.c_str(), 1);
      std::vector<char*> argv;
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv("/proc/self/exe", argv.data());
      std::fprintf(stderr, "cannot start rank %d: %s\n", rank, std::strerror(errno));
      ::_exit(127);
    }
    pids.push_back(pid);
  }
  spdlog::info("started {} ranks (rendezvous 127.0.0.1:{})", nproc, port);
  std::vector<bool> running(pids.size(), true);
  std::string failure;
  bool terminated = false, forwarded = false;
  auto stop_all = [&](int signal) {
    for (std::size_t i = 0; i < pids.size(); ++i)
      if (running[i]) ::kill(pids[i], signal);
  };
  auto deadline = std::chrono::steady_clock::time_point::max();
  for (int left = nproc; left > 0;) {
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, WNOHANG);
    if (done > 0) {
      const auto it = std::find(pids.begin(), pids.end(), done);
      if (it == pids.end()) continue;
      const auto rank = static_cast<std::size_t>(it - pids.begin());
      running[rank] = false;
      --left;
      const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!ok && failure.empty() && !forwarded) {
        failure = "rank " + std::to_string(rank) + " " + exit_text(status);
        spdlog::error("{}; stopping the other ranks", failure);
      }
      if (!ok && !terminated) {
        terminated = true;
        stop_all(SIGTERM);
        deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
      }
      continue;
    }
    if (stop_requested() && !forwarded) {
      forwarded = true;
      stop_all(SIGTERM);
      deadline = std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(60));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      stop_all(SIGKILL);
      deadline = std::chrono::steady_clock::time_point::max();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!failure.empty()) throw std::runtime_error("" + failure + " (run again to resume from the last checkpoint)");
}

}  // namespace ultima::cli
