// The web server's JSON API apart from HTTP: each handler takes a request's
// body (its text, as it came) and gives the status and the JSON body to
// answer with. server.cpp's routes only move bytes between httplib and
// these; tests call them without a socket. An analysis is the one answer
// that streams: its handler gives the stream its answers come on, which the
// route writes out as they come.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/play/bot.h"
#include "engine/play/puzzle.h"
#include "frontends/analysis/analysis.h"
#include "frontends/server/api_reply.h"
#include "frontends/server/course.h"
#include "frontends/server/online.h"
#include "frontends/server/puzzle_trainer.h"
#include "frontends/server/server.h"
#include "frontends/server/store.h"

namespace ultima {

// The answers of an accepted analysis, from the engine's threads to the
// connection's: one JSON line each, newline included.
struct AnalysisStream {
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::string> lines;
  bool done = false;  // the query's last answer is in `lines`
};

// What POST /api/analyze gives: an error, or the query taken with its id
// and the stream of its answers.
struct AnalysisStart {
  ApiReply error;                          // status 200 when the query was taken
  std::string id;                          // the query's id (the request's, or "q<n>")
  std::string client;                      // the sender's key in the analysis service
  std::string address;                     // the sender's address, holding a search slot
  std::shared_ptr<AnalysisStream> stream;  // null unless taken
};

class ServerApi {
 public:
  // Resolves the options' limits (max_searches 0: the machine's cores),
  // starts the analysis service, and reads the bot catalogue and the puzzle
  // file; one that cannot be read is reported by /api/info's bots_error or
  // /api/puzzles's error, not thrown. A --weights network that cannot be
  // read throws std::invalid_argument naming the file, a database that
  // cannot be opened StoreError.
  ServerApi(ServerOptions options, NetworkFactory networks);
  ~ServerApi();
  ServerApi(const ServerApi&) = delete;
  ServerApi& operator=(const ServerApi&) = delete;

  // The options with their limits resolved.
  const ServerOptions& options() const { return options_; }
  // Games between browsers, kept in the database of options().db.
  OnlineGames& online() { return *online_; }

  ApiReply info() const;                                // GET /api/info
  ApiReply puzzles() const;                             // GET /api/puzzles
  ApiReply position(const std::string& body) const;     // POST /api/position
  // A search's `address` is the sender's: one address runs at most
  // options().max_searches_per_address at once (429 beyond); empty: no limit.
  ApiReply bot_move(const std::string& body, const std::string& address = "");  // POST /api/bot-move
  AnalysisStart analyze(const std::string& body, const std::string& address = "");  // POST /api/analyze
  ApiReply analyze_stop(const std::string& body);       // POST /api/analyze/stop
  ApiReply puzzle_check(const std::string& body);       // POST /api/puzzles/check
  ApiReply puzzle_next(const std::string& body);        // POST /api/puzzles/next
  ApiReply course() const;                              // GET /api/course
  ApiReply course_check(const std::string& body) const;  // POST /api/course/check
  ApiReply player_new(const std::string& body);         // POST /api/players/new
  ApiReply player_state(const std::string& body);       // POST /api/players/state
  ApiReply pgn_parse(const std::string& body) const;    // POST /api/pgn/parse
  ApiReply pgn_write(const std::string& body) const;    // POST /api/pgn/write

  // An analysis's id is free again: called once its last answer is taken
  // from the stream, before the end reaches the client (who may reuse the
  // id at once).
  void forget(const std::string& id);
  // The analysis's stream is no longer read (its end was sent, the client
  // went away, the server stops): a search still running stops too, and
  // its id is free again.
  void end_analysis(const AnalysisStart& query);
  // After the server stopped: the searches still queued are answered into
  // sinks nobody reads.
  void finish();

 private:
  [[noreturn]] void busy() const;
  void drive_bots();                              // the bot driver's thread
  void play_bot_turn(const BotTurn& turn);        // on a search worker
  void take_search(const std::string& address);   // 429 when the address has its searches running
  void release_search(const std::string& address);

  ServerOptions options_;
  NetworkFactory networks_;
  NetworkFactory bot_networks_;
  std::unique_ptr<AnalysisService> service_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<OnlineGames> online_;
  std::unique_ptr<PuzzleTrainer> trainer_;  // over puzzles_
  std::vector<CourseLesson> course_;
  std::string course_error_;
  std::vector<Bot> catalogue_;
  std::string catalogue_error_;
  std::vector<Puzzle> puzzles_;
  std::string puzzles_error_;
  std::atomic<std::uint64_t> serial_{0};
  std::mutex ids_mutex_;
  std::map<std::string, std::string> running_ids_;  // analysis id -> its client key
  std::mutex addresses_mutex_;
  std::map<std::string, int> searches_of_;          // address -> searches running or queued
  // Bots' turns in games against them, waiting for a search worker.
  std::mutex bots_mutex_;
  std::condition_variable bots_cv_;
  std::deque<BotTurn> bot_turns_;
  bool bots_stopping_ = false;
  std::thread bot_driver_;
};

}  // namespace ultima
