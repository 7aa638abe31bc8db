// The web board's database: games between browsers with their moves and
// clocks, kept in one SQLite file so that a page reload, a server restart
// or a killed server loses nothing the server acknowledged.
//
// One connection, in write-ahead-log mode with full syncs: a write returns
// only once it is on disk. Every access goes through one mutex, and every
// write is one transaction (one writer path). The schema carries its
// version (SQLite's user_version); opening a file of an older version
// applies the missing steps in order, each in its own transaction, and a
// file of a newer version is refused.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

struct sqlite3;

namespace ultima {

// A database that cannot be opened, read or written: the file and the
// problem.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One game between two seats, as stored. Times are milliseconds: clocks
// as left after the last move, instants as Unix time.
struct StoredGame {
  std::string id;
  std::string rules;                // a rule set's name (Rules::parse)
  std::string fen;                  // the start; empty: the rule set's own
  std::int64_t initial_ms = 0;      // 0: no clock
  std::int64_t increment_ms = 0;
  std::int64_t white_ms = 0, black_ms = 0;
  std::int64_t turn_since_ms = 0;   // when the running clock started; 0: none runs
  std::string white_token, black_token;  // a seat's secret; empty: the seat is free
  std::string creator;              // the address the game was made from
  std::string status = "waiting";   // waiting (a seat free), playing, over, aborted
  std::string result;               // "1-0", "0-1", "1/2-1/2" once over
  std::string termination;          // why it ended: a rules end, "resignation", "time", "agreement"
  std::string draw_offer;           // the seat offering ("white", "black"), or empty
  std::string takeback_offer;
  std::uint64_t seed = 0;           // the game's seed (its record's Seed tag)
  std::string bot;                  // the bot (a catalogue name) holding the seat without a token, or empty
  std::int64_t bot_movetime_ms = 0; // an untimed game: the bot's time a move
  std::int64_t created_ms = 0, updated_ms = 0;
  std::int64_t version = 0;         // grows with every change
  std::vector<std::string> moves;   // coordinate form
};

// An anonymous player of the puzzle trainer, known by the token its
// browser keeps: a Glicko-2 rating and streaks.
struct StoredPlayer {
  std::string token;
  std::int64_t created_ms = 0;
  double rating = 1500, rd = 350, vol = 0.06;
  int streak = 0, best_streak = 0;  // puzzles solved in a row: now, and the most
  int attempts = 0, solved = 0;
};

// A puzzle's Glicko-2 rating as attempts teach it.
struct PuzzleRating {
  std::string puzzle;
  double rating = 1500, rd = 300, vol = 0.06;
  int attempts = 0, solved = 0;
};

class Store {
 public:
  // The schema this program writes: 1 games between browsers, 2 the puzzle
  // trainer's players, puzzle ratings and attempts, 3 games against a bot.
  static constexpr int kSchemaVersion = 3;

  // Opens (making it when missing) the database at `path` and brings its
  // schema to `schema_version` (tests make older files with a smaller one).
  // Throws StoreError naming the file: not a database, damaged, of a newer
  // schema, or not writable.
  explicit Store(const std::string& path, int schema_version = kSchemaVersion);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return path_; }
  int schema_version();

  // Writes the game's row and its moves (all of them: a takeback shortens
  // the list), in one transaction that is on disk when this returns.
  void put_game(const StoredGame& game);
  // The game with this id, or nothing.
  std::optional<StoredGame> game(const std::string& id);
  // Games not over or aborted that `creator` made.
  int open_games_of(const std::string& creator);
  // The ids of every game, newest first, at most `limit`.
  std::vector<std::string> game_ids(int limit);

  // The player of this token, or nothing.
  std::optional<StoredPlayer> player(const std::string& token);
  // Writes a player's row (a new one, or its new rating).
  void put_player(const StoredPlayer& player);
  // Every puzzle rating learnt so far, by puzzle id.
  std::vector<PuzzleRating> puzzle_ratings();
  // The puzzles this player has attempted.
  std::vector<std::string> attempted_by(const std::string& token);
  // One attempt, the first of this player at this puzzle, with the ratings
  // it led to, in one transaction; false (and nothing written) when the
  // player had attempted it before.
  bool record_attempt(const StoredPlayer& player, const PuzzleRating& puzzle, bool solved, std::int64_t at_ms);

 private:
  void exec(const char* sql);
  int read_version();
  void migrate(int to);

  std::string path_;
  int version_ = 0;  // the schema the file has (tests keep older ones)
  std::mutex mutex_;
  sqlite3* db_ = nullptr;
};

}  // namespace ultima
