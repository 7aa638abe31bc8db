// A player that is another program speaking UCI (Fairy-Stockfish, another
// build of this engine, ...): the player spec `uci:COMMAND`, or
// `uci:KEY=VALUE,...:COMMAND` with the keys below. The command runs under
// /bin/sh; the engine gets each game as "position fen START moves ..." and
// one "go" per move.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

#include "engine/play/player.h"

namespace ultima {

struct UciEngineSettings {
  std::string command;
  // One of these limits each move (movetime 100 when none is given).
  std::int64_t movetime_ms = 0;
  int depth = 0;
  std::uint64_t nodes = 0;
  // Options sent with setoption after the handshake ("option.Hash=64").
  std::map<std::string, std::string> options;
  // How long the engine may take to answer beyond its limit, and to start.
  std::int64_t timeout_ms = 10000;

  // The text after "uci:". Throws std::invalid_argument naming the problem.
  static UciEngineSettings parse(const std::string& text);
};

class UciEnginePlayer : public Player {
 public:
  // Starts the engine and does the handshake. Throws std::runtime_error
  // naming the command when it cannot be started or does not answer.
  explicit UciEnginePlayer(UciEngineSettings settings);
  ~UciEnginePlayer() override;
  UciEnginePlayer(const UciEnginePlayer&) = delete;
  UciEnginePlayer& operator=(const UciEnginePlayer&) = delete;

  std::string name() const override;
  void new_game() override;
  // The engine's limits and the caller's (the tighter of each; the clocks
  // as "wtime ... btime ..."). Throws std::runtime_error when the engine
  // exits, goes silent past its limit and the timeout, or answers with a
  // move that is not legal. stop() is not passed on: the move ends at its
  // limit.
  MoveChoice choose(Position& pos, std::uint64_t seed, const MoveLimits& limits = {}) override;

 private:
  void send(const std::string& line);
  // The next line, waiting until `deadline_ms` from now; throws on end or timeout.
  std::string read_line(std::int64_t deadline_ms, const char* waiting_for);
  void wait_for(const std::string& answer, std::int64_t timeout_ms);
  [[noreturn]] void fail(const std::string& what);
  void shut_down();  // quit, or kill after a second; idempotent
  std::string exit_description();  // "it exited with status 3", after its socket closed

  UciEngineSettings settings_;
  pid_t pid_ = -1;
  int fd_ = -1;  // a socket: the engine's standard input and output
  std::string buffer_;
  std::string id_name_;
  bool has_variant_option_ = false;
  std::string variant_sent_;
};

}  // namespace ultima
