// ultima serve [--port P] [--host H] [--weights FILE] [--nnue FILE] [--db FILE] [--max-searches N]
// [--max-queue M] [--threads T]: the web board (frontends/server/server.h) on a
// local HTTP port, until SIGINT or SIGTERM.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "commands.h"
#include "common.h"
#include "frontends/server/server.h"

namespace ultima::cli {
namespace {

void run(ServerOptions options) {
  options.version = ULTIMA_VERSION;
  check_nnue_option(options.nnue);  // a bad one is named before the server starts
  // SIGINT and SIGTERM go to one thread that stops the server; every other
  // thread (made after this) has them blocked. A write to a client that has
  // gone must not end the program: SIGPIPE is ignored.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  WebServer server(options, network_factory());
  const int port = server.bind();
  const std::string host = options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  const ServerOptions& o = server.options();
  std::printf("ultima serve: http://%s:%d/ (%d searches at once, %d queued; Ctrl-C stops)\n", host.c_str(), port,
              o.max_searches, o.max_queue);
  std::fflush(stdout);

  // Every signal asks the server to stop (one that comes before it has
  // begun serving is not lost: the next one stops it).
  std::atomic<bool> served{false};
  std::thread waiter([&server, &served, stop_signals] {
    for (;;) {
      int signal_number = 0;
      sigwait(&stop_signals, &signal_number);
      if (served) return;
      server.stop();
    }
  });
  server.run();
  served = true;
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  std::printf("ultima serve: stopped\n");
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto o = std::make_shared<ServerOptions>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "the web board: play the bots, analyse, solve puzzles in a browser (docs/web.md)");
  cmd->add_option("--port", o->port, "TCP port; 0 picks a free one (printed)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--host", o->host,
                  "address to listen on; the default serves this machine only (docs/web.md on exposing it)")
      ->capture_default_str();
  cmd->add_option("--weights", o->weights, "network of the MCTS analyses (default: the material evaluator)");
  add_nnue_option(cmd, o->nnue, "the alpha-beta analyses");
  o->db = "ultima-web.sqlite";
  cmd->add_option("--db", o->db,
                  "the database of games between browsers (SQLite; made when missing); :memory: keeps them only "
                  "while the server runs")
      ->capture_default_str();
  cmd->add_option("--max-open-games", o->max_open_games, "games waiting or under way that one address may make")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--max-searches-per-address", o->max_searches_per_address,
                  "analyses and bot moves one address may run or queue at once")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--max-requests-per-minute", o->max_requests_per_minute,
                  "requests one address may send a minute on average (a quarter of it at once); more get 429")
      ->check(CLI::Range(10, 10000000))
      ->capture_default_str();
  cmd->add_option("--max-searches", o->max_searches, "searches (analyses and bot moves) at once; 0: the cores")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cmd->add_option("--max-queue", o->max_queue, "searches waiting beyond those; more are refused with 503")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  add_threads_option(cmd, o->threads, "the most threads one search may use (an MCTS analysis's threads=)");
  add_hash_option(cmd, o->hash_mb, "alpha-beta transposition table per analysis, MB");
  cmd->callback([o] { run(*o); });
}

}  // namespace ultima::cli
