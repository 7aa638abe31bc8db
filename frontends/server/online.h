// Games between two browsers (docs/web.md, "Play a friend"). One player
// creates a game with a time control and a colour and shares its link; the
// other seat is claimed by the first who opens it. Each seat is held by a
// secret token that its browser keeps; without one, a page watches. The
// server keeps the moves and runs the clocks: every change is written to
// the database (store.h) before it is answered, so a reload or a restart
// loses nothing acknowledged, and a page learns of changes by long polling
// (`wait`).
//
// The clock: a side's time runs while it is to move, from the moment both
// sides have made a move (before that either may abort). A side whose time
// is up loses; the game ends by time when any request finds it so, or when
// the running time runs out while a page waits.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "frontends/server/api_reply.h"
#include "frontends/server/store.h"

namespace ultima {

struct OnlineOptions {
  int max_open_games_per_client = 10;  // waiting or playing games one address may have made
  int max_waiters = 64;                // long polls held at once; more get 503
  int wait_ms = 25000;                 // the longest a long poll is held
};

class OnlineGames {
 public:
  // Unix time in milliseconds; tests pass their own.
  using Clock = std::function<std::int64_t()>;

  OnlineGames(Store& store, OnlineOptions options = {}, Clock now = {});
  ~OnlineGames();

  // POST /api/games/new {rules, fen, minutes, increment, colour}: the game,
  // its id, the seat taken and that seat's token. `client` is the sender's
  // address (the open-games limit).
  ApiReply create(const std::string& body, const std::string& client);
  // POST /api/games/join {id}: the free seat and its token; 409 when both
  // are taken.
  ApiReply join(const std::string& body);
  // POST /api/games/state {id, token}: the game as a seat (with its token)
  // or a spectator sees it.
  ApiReply state(const std::string& body);
  // POST /api/games/act {id, token, action, move, ply}: move (the move in
  // coordinate form at ply `ply`), resign, abort, offer-draw, accept-draw,
  // decline-draw, offer-takeback, accept-takeback, decline-takeback.
  ApiReply act(const std::string& body);
  // POST /api/games/wait {id, version, token}: the game once its version
  // differs from `version`, or as it is after at most wait_ms.
  ApiReply wait(const std::string& body);
  // GET /api/games/ID.pgn: the game's record, or nothing for an unknown id.
  std::optional<std::string> pgn(const std::string& id);

  // Ends every long poll (the server stops).
  void shutdown();

 private:
  StoredGame& load(const std::string& id);   // 404 when unknown; mutex_ held
  void save(StoredGame& game, StoredGame changed);  // persists, then replaces; mutex_ held
  bool settle(StoredGame& game);             // ends a game whose running time is up; mutex_ held

  Store& store_;
  OnlineOptions options_;
  Clock now_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, StoredGame> games_;  // read from the store on first use
  int waiters_ = 0;
  bool stopping_ = false;
};

}  // namespace ultima
