#include "engine/base/text.h"
#include "engine/play/uci_player.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/rules/notation.h"
#include "engine/search/search.h"

namespace ultima {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

UciEngineSettings UciEngineSettings::parse(const std::string& text) {
  UciEngineSettings s;
  // Keys come first, up to a ':', when the text starts with one.
  static const char* kKeys[] = {"movetime=", "depth=", "nodes=", "timeout_ms=", "option."};
  std::string rest = text;
  const bool has_keys = std::any_of(std::begin(kKeys), std::end(kKeys),
                                    [&](const char* k) { return text.rfind(k, 0) == 0; });
  if (has_keys) {
    const std::size_t colon = text.find(':');
    if (colon == std::string::npos) throw std::invalid_argument("uci: the keys need ':COMMAND' after them");
    rest = text.substr(colon + 1);
    std::stringstream pairs(text.substr(0, colon));
    for (std::string pair; std::getline(pairs, pair, ',');) {
      const std::size_t eq = pair.find('=');
      if (eq == std::string::npos) throw std::invalid_argument("uci: '" + pair + "' is not KEY=VALUE");
      const std::string key = pair.substr(0, eq), value = pair.substr(eq + 1);
      if (key.rfind("option.", 0) == 0 && key.size() > 7) {
        s.options[key.substr(7)] = value;
        continue;
      }
      long long n = 0;
      if (!parse_integer(value, n) || n < 1)
        throw std::invalid_argument("uci: " + key + " must be a positive integer, not '" + value + "'");
      if (key == "movetime") s.movetime_ms = n;
      else if (key == "depth") s.depth = static_cast<int>(std::min<long long>(n, kMaxPly - 2));
      else if (key == "nodes") s.nodes = static_cast<std::uint64_t>(n);
      else if (key == "timeout_ms") s.timeout_ms = n;
      else throw std::invalid_argument("uci: unknown key '" + key + "' (keys: movetime, depth, nodes, timeout_ms, option.NAME)");
    }
  }
  s.command = rest;
  if (s.command.find_first_not_of(' ') == std::string::npos) throw std::invalid_argument("uci: no command given");
  if (!s.movetime_ms && !s.depth && !s.nodes) s.movetime_ms = 100;
  return s;
}

UciEnginePlayer::UciEnginePlayer(UciEngineSettings settings) : settings_(std::move(settings)) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw std::runtime_error("uci engine '" + settings_.command + "': " + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw std::runtime_error("uci engine '" + settings_.command + "': cannot start: " + std::strerror(errno));
  }
  if (pid == 0) {
    // The child: only async-signal-safe calls until exec. Its own process
    // group: a Ctrl-C or a `timeout` sent to the match's group stops the
    // match, which then ends its engines itself, instead of killing them
    // under a move.
    setpgid(0, 0);
    dup2(fds[1], STDIN_FILENO);
    dup2(fds[1], STDOUT_FILENO);
    execl("/bin/sh", "sh", "-c", settings_.command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  pid_ = pid;
  fd_ = fds[0];
  try {
    send("uci");
    const std::int64_t deadline = settings_.timeout_ms;
    const auto start = Clock::now();
    for (;;) {
      const std::int64_t spent =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
      const std::string line = read_line(std::max<std::int64_t>(1, deadline - spent), "uciok");
      const std::vector<std::string> w = split_words(line);
      if (w.empty()) continue;
      if (w[0] == "uciok") break;
      if (w.size() >= 3 && w[0] == "id" && w[1] == "name") id_name_ = line.substr(line.find("name") + 5);
      if (w.size() >= 3 && w[0] == "option" && w[1] == "name" && w[2] == "UCI_Variant") has_variant_option_ = true;
    }
    for (const auto& [name, value] : settings_.options) send("setoption name " + name + " value " + value);
    wait_for("readyok", settings_.timeout_ms);
  } catch (...) {
    shut_down();  // the destructor does not run for a constructor that throws
    throw;
  }
}

UciEnginePlayer::~UciEnginePlayer() { shut_down(); }

void UciEnginePlayer::shut_down() {
  if (pid_ > 0) {
    if (fd_ >= 0) ::send(fd_, "quit\n", 5, MSG_NOSIGNAL);
    // A second to quit, then it is ended.
    bool exited = false;
    for (int i = 0; i < 100 && !exited; ++i) {
      exited = waitpid(pid_, nullptr, WNOHANG) == pid_;
      if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!exited) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    pid_ = -1;
  }
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

std::string UciEnginePlayer::name() const { return id_name_.empty() ? "uci:" + settings_.command : id_name_; }

void UciEnginePlayer::fail(const std::string& what) {
  throw std::runtime_error("uci engine '" + settings_.command + "': " + what);
}

std::string UciEnginePlayer::exit_description() {
  // Its end of the socket is closed: the engine has exited, or is about to.
  std::string how = "it exited";
  int status = 0;
  if (pid_ > 0 && waitpid(pid_, &status, 0) == pid_) {
    pid_ = -1;
    if (WIFEXITED(status)) how += " with status " + std::to_string(WEXITSTATUS(status));
    else if (WIFSIGNALED(status)) how += " on signal " + std::to_string(WTERMSIG(status));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) how += " (command not found?)";
  }
  return how;
}

void UciEnginePlayer::send(const std::string& line) {
  const std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    // MSG_NOSIGNAL: an engine that has exited is an error here, not a SIGPIPE.
    const ssize_t n = ::send(fd_, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(exit_description() + " before reading '" + line + "'");
    done += static_cast<std::size_t>(n);
  }
}

std::string UciEnginePlayer::read_line(std::int64_t timeout_ms, const char* waiting_for) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const std::size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return line;
    }
    const std::int64_t left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) fail(std::string("no '") + waiting_for + "' within " + std::to_string(timeout_ms) + " ms");
    pollfd p{fd_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left, 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char chunk[4096];
    const ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(exit_description() + " while waiting for '" + waiting_for + "'");
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

void UciEnginePlayer::wait_for(const std::string& answer, std::int64_t timeout_ms) {
  send("isready");
  const auto start = Clock::now();
  for (;;) {
    const std::int64_t spent = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    if (split_words(read_line(std::max<std::int64_t>(1, timeout_ms - spent), answer.c_str())) ==
        std::vector<std::string>{answer})
      return;
  }
}

void UciEnginePlayer::new_game() {
  send("ucinewgame");
  wait_for("readyok", settings_.timeout_ms);
}

MoveChoice UciEnginePlayer::choose(Position& pos, std::uint64_t, const MoveLimits& limits) {
  // The game from its start: the engine sees the whole history (repetitions).
  Position start = pos;
  std::vector<Move> moves;
  while (start.game_ply() > 0) {
    moves.push_back(start.last_move());
    start.unmake();
  }
  std::reverse(moves.begin(), moves.end());
  const std::string variant = pos.rules().name();
  if (has_variant_option_ && variant != variant_sent_) {
    send("setoption name UCI_Variant value " + variant);
    variant_sent_ = variant;
    wait_for("readyok", settings_.timeout_ms);
  }
  std::string position = "position fen " + start.fen();
  if (!moves.empty()) {
    position += " moves";
    for (const Move& m : moves) {
      position += ' ';
      position += to_coordinate(m);  // appended apart: GCC 12 warns falsely on " " + string
    }
  }
  send(position);
  // The engine's own limits and the caller's, whichever is tighter; the
  // clocks go as they are.
  auto tighter = [](auto a, auto b) { return a == 0 ? b : b == 0 ? a : std::min(a, b); };
  const std::int64_t movetime = tighter(settings_.movetime_ms, limits.movetime_ms);
  const int depth = tighter(settings_.depth, limits.depth);
  const std::uint64_t nodes = tighter(settings_.nodes, limits.nodes);
  std::string go = "go";
  if (movetime) go += " movetime " + std::to_string(movetime);
  if (depth) go += " depth " + std::to_string(depth);
  if (nodes) go += " nodes " + std::to_string(nodes);
  const char* clock_names[2][2] = {{" wtime ", " winc "}, {" btime ", " binc "}};
  for (int c = 0; c < 2; ++c) {
    if (limits.time_ms[c]) go += clock_names[c][0] + std::to_string(limits.time_ms[c]);
    if (limits.inc_ms[c]) go += clock_names[c][1] + std::to_string(limits.inc_ms[c]);
  }
  if (limits.movestogo) go += " movestogo " + std::to_string(limits.movestogo);
  send(go);

  MoveChoice choice;
  const std::int64_t timeout =
      std::max(movetime, limits.time_ms[pos.side_to_move()] + limits.inc_ms[pos.side_to_move()]) +
      settings_.timeout_ms;
  const auto began = Clock::now();
  for (;;) {
    const std::int64_t spent = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - began).count();
    const std::string line = read_line(std::max<std::int64_t>(1, timeout - spent), "bestmove");
    const std::vector<std::string> w = split_words(line);
    if (w.empty()) continue;
    if (w[0] == "info") {
      for (std::size_t i = 1; i + 1 < w.size(); ++i) {
        long long n = 0;
        if (w[i] == "depth" && parse_integer(w[i + 1], n)) choice.depth = static_cast<int>(n);
        if (w[i] == "nodes" && parse_integer(w[i + 1], n)) choice.nodes = static_cast<std::uint64_t>(n);
        if (w[i] == "score" && i + 2 < w.size() && parse_integer(w[i + 2], n)) {
          if (w[i + 1] == "cp") choice.score_cp = static_cast<int>(n);
          if (w[i + 1] == "mate") choice.score_cp = n > 0 ? 20000 : -20000;
        }
      }
      continue;
    }
    if (w[0] != "bestmove") continue;
    if (w.size() < 2) fail("answered 'bestmove' without a move");
    try {
      choice.move = parse_coordinate(pos, w[1]);
    } catch (const std::exception& e) {
      fail("answered 'bestmove " + w[1] + "', not a legal move in " + pos.fen() + ": " + e.what());
    }
    return choice;
  }
}

}  // namespace ultima
