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
//
// A game against a bot is the same game with the second seat held by a bot
// of the catalogue: the server plays its moves (through a BotHost), on the
// same clock, seeded by the game's seed, and keeps them like any other.
// The bot grants every takeback at once and plays on when offered a draw.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "frontends/server/api_reply.h"
#include "frontends/server/store.h"

namespace ultima {

struct OnlineOptions {
  int max_open_games_per_client = 10;  // waiting or playing games one address may have made
  int max_waiters = 64;                // long polls held at once; more get 503
  int wait_ms = 25000;                 // the longest a long poll is held
};

// A bot's turn: what its move is chosen from. The answer is for exactly
// these moves; one that comes after the game changed is dropped.
struct BotTurn {
  std::string game;                 // the game's id
  std::string bot;                  // the bot's catalogue name
  std::string rules, fen;           // the game's start (fen empty: the rule set's own)
  std::vector<std::string> moves;   // the moves played, coordinate form
  std::uint64_t seed = 0;           // the game's seed
  std::int64_t movetime_ms = 0;     // an untimed game: the bot's time a move
  std::int64_t white_ms = 0, black_ms = 0, increment_ms = 0;  // a timed game: the clocks now
};

// Who plays the bots: `known` says whether a name can play, `start` begins
// a turn's search and must return at once (it is called with the games'
// lock held); its answer comes back through OnlineGames::bot_moved or
// bot_failed.
struct BotHost {
  std::function<bool(const std::string&)> known;
  std::function<void(const BotTurn&)> start;
};

class OnlineGames {
 public:
  // Unix time in milliseconds; tests pass their own.
  using Clock = std::function<std::int64_t()>;

  OnlineGames(Store& store, OnlineOptions options = {}, Clock now = {});
  ~OnlineGames();

  // Lets games against bots be made; without it they are refused. Games
  // left with the bot to move (a restart) resume when first opened.
  void set_bots(BotHost host);

  // POST /api/games/new {rules, fen, minutes, increment, colour, bot,
  // movetime_ms, seed}: the game, its id, the seat taken and that seat's
  // token. With `bot` the other seat is the bot's and the game starts at
  // once (movetime_ms: its time a move when there is no clock; seed: the
  // game's seed, to replay a game, else a new one). `client` is the
  // sender's address (the open-games limit).
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

  // A bot's move for `turn` (coordinate form), played unless the game moved
  // on meanwhile; or the reason it has none (the error is shown, and the
  // turn is tried again when the game is next asked for).
  void bot_moved(const BotTurn& turn, const std::string& move);
  void bot_failed(const BotTurn& turn, const std::string& why);

  // Ends every long poll (the server stops).
  void shutdown();

 private:
  StoredGame& load(const std::string& id);   // 404 when unknown; mutex_ held
  ApiReply reply(const StoredGame& game, const std::string& token);  // the game as `token` sees it; mutex_ held
  void save(StoredGame& game, StoredGame changed);  // persists, then replaces; mutex_ held
  bool settle(StoredGame& game);             // ends a game whose running time is up; mutex_ held
  void ensure_bot(const StoredGame& game);   // starts the bot's turn when it is due; mutex_ held

  Store& store_;
  OnlineOptions options_;
  Clock now_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, StoredGame> games_;  // read from the store on first use
  BotHost bots_;
  std::set<std::string> bot_thinking_;              // games whose bot's turn has started
  std::map<std::string, std::string> bot_errors_;   // game -> why its bot's last turn failed
  int waiters_ = 0;
  bool stopping_ = false;
};

}  // namespace ultima
