// The web board's SQLite database (store.h).
#include "frontends/server/store.h"

#include <sqlite3.h>

#include <utility>

namespace ultima {
namespace {

// The schema's steps: kSteps[v - 1] brings a file from version v - 1 to v.
const char* const kSteps[] = {
    // 1: games between two seats, and their moves.
    R"sql(
CREATE TABLE games (
  id TEXT PRIMARY KEY,
  rules TEXT NOT NULL,
  fen TEXT NOT NULL DEFAULT '',
  initial_ms INTEGER NOT NULL DEFAULT 0,
  increment_ms INTEGER NOT NULL DEFAULT 0,
  white_ms INTEGER NOT NULL DEFAULT 0,
  black_ms INTEGER NOT NULL DEFAULT 0,
  turn_since_ms INTEGER NOT NULL DEFAULT 0,
  white_token TEXT NOT NULL DEFAULT '',
  black_token TEXT NOT NULL DEFAULT '',
  creator TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL,
  result TEXT NOT NULL DEFAULT '',
  termination TEXT NOT NULL DEFAULT '',
  draw_offer TEXT NOT NULL DEFAULT '',
  takeback_offer TEXT NOT NULL DEFAULT '',
  seed INTEGER NOT NULL DEFAULT 0,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  version INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX games_by_creator ON games (creator, status);
CREATE TABLE moves (
  game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
  ply INTEGER NOT NULL,
  move TEXT NOT NULL,
  PRIMARY KEY (game_id, ply)
) WITHOUT ROWID;
)sql",
    // 2: the puzzle trainer: players, puzzle ratings, attempts.
    R"sql(
CREATE TABLE players (
  token TEXT PRIMARY KEY,
  created_ms INTEGER NOT NULL,
  rating REAL NOT NULL,
  rd REAL NOT NULL,
  vol REAL NOT NULL,
  streak INTEGER NOT NULL DEFAULT 0,
  best_streak INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  solved INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE puzzle_ratings (
  puzzle TEXT PRIMARY KEY,
  rating REAL NOT NULL,
  rd REAL NOT NULL,
  vol REAL NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  solved INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE puzzle_attempts (
  player TEXT NOT NULL REFERENCES players (token),
  puzzle TEXT NOT NULL,
  solved INTEGER NOT NULL,
  at_ms INTEGER NOT NULL,
  player_rating REAL NOT NULL,
  puzzle_rating REAL NOT NULL,
  PRIMARY KEY (player, puzzle)
) WITHOUT ROWID;
)sql",
    // 3: games against a bot: the bot holding a seat, and its thinking time.
    R"sql(
ALTER TABLE games ADD COLUMN bot TEXT NOT NULL DEFAULT '';
ALTER TABLE games ADD COLUMN bot_movetime_ms INTEGER NOT NULL DEFAULT 0;
)sql",
};
static_assert(std::size(kSteps) == Store::kSchemaVersion, "one step per schema version");

// A prepared statement, finalized when it goes.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql, const std::string& file) : db_(db), file_(file) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) fail("prepare");
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& text) {
    if (sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT) != SQLITE_OK)
      fail("bind");
    return *this;
  }
  Statement& bind(int i, double x) {
    if (sqlite3_bind_double(stmt_, i, x) != SQLITE_OK) fail("bind");
    return *this;
  }
  Statement& bind(int i, int n) { return bind(i, static_cast<std::int64_t>(n)); }
  Statement& bind(int i, std::int64_t n) {
    if (sqlite3_bind_int64(stmt_, i, n) != SQLITE_OK) fail("bind");
    return *this;
  }
  // A row (true) or the end (false).
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail("step");
  }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string text(int column) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column))) : std::string();
  }
  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }

 private:
  [[noreturn]] void fail(const char* what) {
    throw StoreError("database '" + file_ + "': " + what + ": " + sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string file_;
};

}  // namespace

Store::Store(const std::string& path, int schema_version) : path_(path) {
  if (schema_version < 1 || schema_version > kSchemaVersion)
    throw StoreError("database '" + path + "': no schema version " + std::to_string(schema_version));
  const int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    throw StoreError("database '" + path + "': cannot open: " + why);
  }
  try {
    sqlite3_busy_timeout(db_, 5000);
    // The first read: a file that is not a database fails here.
    exec("PRAGMA journal_mode = WAL");
    exec("PRAGMA synchronous = FULL");
    exec("PRAGMA foreign_keys = ON");
    const int found = read_version();
    if (found > kSchemaVersion)
      throw StoreError("database '" + path + "': schema version " + std::to_string(found) +
                       " is newer than this program's " + std::to_string(kSchemaVersion) +
                       " (a newer ultima wrote it)");
    migrate(schema_version);
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

Store::~Store() { sqlite3_close(db_); }

void Store::exec(const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string why = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    throw StoreError("database '" + path_ + "': " + why);
  }
}

int Store::read_version() {
  Statement version(db_, "PRAGMA user_version", path_);
  return version.step() ? static_cast<int>(version.integer(0)) : 0;
}

int Store::schema_version() {
  std::lock_guard lock(mutex_);
  return read_version();
}

void Store::migrate(int to) {
  std::lock_guard lock(mutex_);
  version_ = read_version();
  for (int v = read_version(); v < to; ++v) {
    exec("BEGIN IMMEDIATE");
    try {
      exec(kSteps[v]);
      exec(("PRAGMA user_version = " + std::to_string(v + 1)).c_str());
      exec("COMMIT");
      version_ = v + 1;
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }
}

void Store::put_game(const StoredGame& g) {
  std::lock_guard lock(mutex_);
  exec("BEGIN IMMEDIATE");
  try {
    // A file kept at an older schema (tests make them) has no bot columns.
    const bool bots = version_ >= 3;
    if (!bots && !g.bot.empty()) throw StoreError("database '" + path_ + "': its schema has no games against bots");
    const std::string sql =
        std::string("INSERT INTO games (id, rules, fen, initial_ms, increment_ms, white_ms, black_ms, turn_since_ms, "
                    "white_token, black_token, creator, status, result, termination, draw_offer, takeback_offer, "
                    "seed, created_ms, updated_ms, version") +
        (bots ? ", bot, bot_movetime_ms" : "") +
        ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20" +
        (bots ? ", ?21, ?22" : "") +
        ") ON CONFLICT (id) DO UPDATE SET rules = ?2, fen = ?3, initial_ms = ?4, increment_ms = ?5, white_ms = ?6, "
        "black_ms = ?7, turn_since_ms = ?8, white_token = ?9, black_token = ?10, creator = ?11, status = ?12, "
        "result = ?13, termination = ?14, draw_offer = ?15, takeback_offer = ?16, seed = ?17, created_ms = ?18, "
        "updated_ms = ?19, version = ?20" +
        (bots ? ", bot = ?21, bot_movetime_ms = ?22" : "");
    Statement row(db_, sql.c_str(), path_);
    row.bind(1, g.id).bind(2, g.rules).bind(3, g.fen).bind(4, g.initial_ms).bind(5, g.increment_ms);
    row.bind(6, g.white_ms).bind(7, g.black_ms).bind(8, g.turn_since_ms).bind(9, g.white_token);
    row.bind(10, g.black_token).bind(11, g.creator).bind(12, g.status).bind(13, g.result);
    row.bind(14, g.termination).bind(15, g.draw_offer).bind(16, g.takeback_offer);
    row.bind(17, static_cast<std::int64_t>(g.seed)).bind(18, g.created_ms).bind(19, g.updated_ms);
    row.bind(20, g.version);
    if (bots) row.bind(21, g.bot).bind(22, g.bot_movetime_ms);
    row.step();
    Statement cut(db_, "DELETE FROM moves WHERE game_id = ?1 AND ply >= ?2", path_);
    cut.bind(1, g.id).bind(2, static_cast<std::int64_t>(g.moves.size()));
    cut.step();
    Statement move(db_, "INSERT OR REPLACE INTO moves (game_id, ply, move) VALUES (?1, ?2, ?3)", path_);
    for (std::size_t ply = 0; ply < g.moves.size(); ++ply) {
      move.reset();
      move.bind(1, g.id).bind(2, static_cast<std::int64_t>(ply)).bind(3, g.moves[ply]);
      move.step();
    }
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::optional<StoredGame> Store::game(const std::string& id) {
  std::lock_guard lock(mutex_);
  const bool bots = version_ >= 3;
  const std::string sql =
      std::string("SELECT id, rules, fen, initial_ms, increment_ms, white_ms, black_ms, turn_since_ms, white_token, "
                  "black_token, creator, status, result, termination, draw_offer, takeback_offer, seed, created_ms, "
                  "updated_ms, version") +
      (bots ? ", bot, bot_movetime_ms" : "") + " FROM games WHERE id = ?1";
  Statement row(db_, sql.c_str(), path_);
  row.bind(1, id);
  if (!row.step()) return std::nullopt;
  StoredGame g;
  g.id = row.text(0);
  g.rules = row.text(1);
  g.fen = row.text(2);
  g.initial_ms = row.integer(3);
  g.increment_ms = row.integer(4);
  g.white_ms = row.integer(5);
  g.black_ms = row.integer(6);
  g.turn_since_ms = row.integer(7);
  g.white_token = row.text(8);
  g.black_token = row.text(9);
  g.creator = row.text(10);
  g.status = row.text(11);
  g.result = row.text(12);
  g.termination = row.text(13);
  g.draw_offer = row.text(14);
  g.takeback_offer = row.text(15);
  g.seed = static_cast<std::uint64_t>(row.integer(16));
  g.created_ms = row.integer(17);
  g.updated_ms = row.integer(18);
  g.version = row.integer(19);
  if (bots) {
    g.bot = row.text(20);
    g.bot_movetime_ms = row.integer(21);
  }
  Statement moves(db_, "SELECT ply, move FROM moves WHERE game_id = ?1 ORDER BY ply", path_);
  moves.bind(1, id);
  while (moves.step()) {
    if (moves.integer(0) != static_cast<std::int64_t>(g.moves.size()))
      throw StoreError("database '" + path_ + "': game " + id + " lacks its move at ply " +
                       std::to_string(g.moves.size()));
    g.moves.push_back(moves.text(1));
  }
  return g;
}

int Store::open_games_of(const std::string& creator) {
  std::lock_guard lock(mutex_);
  Statement count(db_, "SELECT COUNT(*) FROM games WHERE creator = ?1 AND status IN ('waiting', 'playing')", path_);
  count.bind(1, creator);
  return count.step() ? static_cast<int>(count.integer(0)) : 0;
}

namespace {

void write_player(Statement& row, const StoredPlayer& p) {
  row.bind(1, p.token).bind(2, p.created_ms).bind(3, p.rating).bind(4, p.rd).bind(5, p.vol);
  row.bind(6, p.streak).bind(7, p.best_streak).bind(8, p.attempts).bind(9, p.solved);
  row.step();
}

const char* const kPutPlayer =
    "INSERT INTO players (token, created_ms, rating, rd, vol, streak, best_streak, attempts, solved) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (token) DO UPDATE SET rating = ?3, rd = ?4, "
    "vol = ?5, streak = ?6, best_streak = ?7, attempts = ?8, solved = ?9";

}  // namespace

std::optional<StoredPlayer> Store::player(const std::string& token) {
  std::lock_guard lock(mutex_);
  Statement row(db_,
                "SELECT token, created_ms, rating, rd, vol, streak, best_streak, attempts, solved FROM players "
                "WHERE token = ?1",
                path_);
  row.bind(1, token);
  if (!row.step()) return std::nullopt;
  StoredPlayer p;
  p.token = row.text(0);
  p.created_ms = row.integer(1);
  p.rating = row.real(2);
  p.rd = row.real(3);
  p.vol = row.real(4);
  p.streak = static_cast<int>(row.integer(5));
  p.best_streak = static_cast<int>(row.integer(6));
  p.attempts = static_cast<int>(row.integer(7));
  p.solved = static_cast<int>(row.integer(8));
  return p;
}

void Store::put_player(const StoredPlayer& player) {
  std::lock_guard lock(mutex_);
  Statement row(db_, kPutPlayer, path_);
  write_player(row, player);
}

std::vector<PuzzleRating> Store::puzzle_ratings() {
  std::lock_guard lock(mutex_);
  Statement rows(db_, "SELECT puzzle, rating, rd, vol, attempts, solved FROM puzzle_ratings", path_);
  std::vector<PuzzleRating> out;
  while (rows.step()) {
    PuzzleRating r;
    r.puzzle = rows.text(0);
    r.rating = rows.real(1);
    r.rd = rows.real(2);
    r.vol = rows.real(3);
    r.attempts = static_cast<int>(rows.integer(4));
    r.solved = static_cast<int>(rows.integer(5));
    out.push_back(r);
  }
  return out;
}

std::vector<std::string> Store::attempted_by(const std::string& token) {
  std::lock_guard lock(mutex_);
  Statement rows(db_, "SELECT puzzle FROM puzzle_attempts WHERE player = ?1", path_);
  rows.bind(1, token);
  std::vector<std::string> out;
  while (rows.step()) out.push_back(rows.text(0));
  return out;
}

bool Store::record_attempt(const StoredPlayer& player, const PuzzleRating& puzzle, bool solved, std::int64_t at_ms) {
  std::lock_guard lock(mutex_);
  exec("BEGIN IMMEDIATE");
  try {
    Statement seen(db_, "SELECT 1 FROM puzzle_attempts WHERE player = ?1 AND puzzle = ?2", path_);
    seen.bind(1, player.token).bind(2, puzzle.puzzle);
    if (seen.step()) {
      exec("ROLLBACK");
      return false;
    }
    Statement p(db_, kPutPlayer, path_);
    write_player(p, player);
    Statement r(db_,
                "INSERT INTO puzzle_ratings (puzzle, rating, rd, vol, attempts, solved) VALUES (?1, ?2, ?3, ?4, "
                "?5, ?6) ON CONFLICT (puzzle) DO UPDATE SET rating = ?2, rd = ?3, vol = ?4, attempts = ?5, "
                "solved = ?6",
                path_);
    r.bind(1, puzzle.puzzle).bind(2, puzzle.rating).bind(3, puzzle.rd).bind(4, puzzle.vol);
    r.bind(5, puzzle.attempts).bind(6, puzzle.solved);
    r.step();
    Statement a(db_,
                "INSERT INTO puzzle_attempts (player, puzzle, solved, at_ms, player_rating, puzzle_rating) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                path_);
    a.bind(1, player.token).bind(2, puzzle.puzzle).bind(3, solved ? 1 : 0).bind(4, at_ms);
    a.bind(5, player.rating).bind(6, puzzle.rating);
    a.step();
    exec("COMMIT");
    return true;
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::vector<std::string> Store::game_ids(int limit) {
  std::lock_guard lock(mutex_);
  Statement ids(db_, "SELECT id FROM games ORDER BY created_ms DESC, id LIMIT ?1", path_);
  ids.bind(1, static_cast<std::int64_t>(limit));
  std::vector<std::string> out;
  while (ids.step()) out.push_back(ids.text(0));
  return out;
}

}  // namespace ultima
