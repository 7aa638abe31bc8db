// `ultima serve`: the web board's HTTP server. It serves the page (the
// files of frontends/server/web/, built into the program) and the JSON API the
// page talks to: positions with their legal moves and captures, bot moves,
// analyses streamed from the shared analysis engine, puzzles, PGN. The API
// is described in docs/web.md; its handlers, apart from HTTP, are in
// handlers.h.
//
// Every search (an analysis or a bot's move) goes through one
// AnalysisService: at most max_searches run at once, max_queue more wait,
// and beyond that a request is refused with 503, so a busy page cannot
// starve the machine.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "engine/play/player_spec.h"
#include "engine/search/search.h"

namespace ultima {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                 // 0: any free port
  std::string weights;             // the network of MCTS analyses, empty: the material evaluator
  std::string nnue = "default";    // the evaluation of alpha-beta analyses (AnalysisOptions::nnue)
  int max_searches = 0;            // searches at once; 0: the machine's cores
  int max_queue = 8;               // searches waiting beyond those
  int threads = 1;                 // the most threads one search may use (MCTS analyses)
  int hash_mb = kDefaultHashMb;    // each alpha-beta analysis's transposition table
  std::string version = "?";
  std::size_t max_body = 1 << 20;  // larger request bodies get 413
  // The database of games between browsers (store.h); ":memory:" keeps
  // them only while the server runs.
  std::string db = ":memory:";
  int max_open_games = 10;         // waiting or playing games one address may make
  int max_searches_per_address = 4;  // analyses and bot moves one address may run or queue at once
  int max_requests_per_minute = 1200;  // one address's requests, averaged; a burst of a quarter of it passes
  int max_waiters = 64;            // pages waiting on a game's next change at once
};

class WebServer {
 public:
  // `networks` makes the evaluators of networks (MCTS analyses with
  // weights, bots that play a network).
  WebServer(ServerOptions options, NetworkFactory networks);
  ~WebServer();
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  // Binds the address; the port it listens on (the chosen one for port 0).
  // Throws std::runtime_error naming the address when it cannot.
  int bind();
  // Serves until stop(); then ends every stream and finishes the searches.
  void run();
  // From any thread: run() returns soon.
  void stop();

  const ServerOptions& options() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ultima
