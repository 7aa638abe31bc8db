// Games between two browsers (online.h).
#include "frontends/server/online.h"

#include <chrono>
#include <random>
#include <utility>

#include "engine/play/pgn.h"
#include "engine/rules/movegen.h"
#include "engine/rules/notation.h"
#include "engine/rules/replay.h"
#include "frontends/server/api_json.h"
#include "frontends/server/ids.h"

namespace ultima {
namespace {

using namespace api_json;
using server_ids::new_token;
using server_ids::random_text;
using server_ids::unix_ms;

const char* other(const std::string& seat) { return seat == "white" ? "black" : "white"; }

std::string seat_of(const StoredGame& g, const std::string& token) {
  if (token.empty()) return "";
  if (token == g.white_token) return "white";
  if (token == g.black_token) return "black";
  return "";
}

bool timed(const StoredGame& g) { return g.initial_ms > 0; }

// The bot's seat ("white", "black"), or "" in a game between people.
std::string bot_seat(const StoredGame& g) {
  if (g.bot.empty()) return "";
  return g.white_token.empty() ? "white" : "black";
}

// The position after the game's moves (they were checked when played).
ReplayedGame replayed(const StoredGame& g) {
  return replay_game(start_position(g.fen, Rules::parse(g.rules)), g.moves);
}

std::string side_to_move(const StoredGame& g) {
  return replayed(g).last().side_to_move() == kWhite ? "white" : "black";
}

// The clock of `side` now: what was left after its last move, less the time
// it has been running.
std::int64_t time_left(const StoredGame& g, const std::string& side, const std::string& running, std::int64_t now) {
  const std::int64_t stored = side == "white" ? g.white_ms : g.black_ms;
  if (side != running || g.turn_since_ms == 0) return stored;
  return stored - (now - g.turn_since_ms);
}

// The side whose time runs now, or "".
std::string running_side(const StoredGame& g) {
  if (!timed(g) || g.status != "playing" || g.turn_since_ms == 0) return "";
  return side_to_move(g);
}

// `thinking`: the bot's turn has started; `bot_error`: why its last failed.
json state_json(const StoredGame& g, const std::string& token, std::int64_t now, bool thinking = false,
                const std::string& bot_error = "") {
  json out;
  out["id"] = g.id;
  out["version"] = g.version;
  out["rules"] = g.rules;
  out["fen"] = g.fen;
  out["moves"] = g.moves;
  out["status"] = g.status;
  out["result"] = g.result.empty() ? json() : json(g.result);
  out["termination"] = g.termination.empty() ? json() : json(g.termination);
  const std::string running = running_side(g);
  json clock;
  clock["initial_ms"] = g.initial_ms;
  clock["increment_ms"] = g.increment_ms;
  clock["white_ms"] = std::max<std::int64_t>(0, time_left(g, "white", running, now));
  clock["black_ms"] = std::max<std::int64_t>(0, time_left(g, "black", running, now));
  clock["running"] = running.empty() ? json() : json(running);
  out["clock"] = timed(g) ? clock : json();
  const std::string bot = bot_seat(g);
  out["seats"] = {{"white", !g.white_token.empty() || bot == "white"},
                  {"black", !g.black_token.empty() || bot == "black"}};
  if (!bot.empty()) {
    out["bot"] = {{"name", g.bot}, {"seat", bot}, {"thinking", thinking},
                  {"movetime_ms", g.bot_movetime_ms}};
    if (!bot_error.empty()) out["bot"]["error"] = bot_error;
  } else {
    out["bot"] = json();
  }
  out["draw_offer"] = g.draw_offer.empty() ? json() : json(g.draw_offer);
  out["takeback_offer"] = g.takeback_offer.empty() ? json() : json(g.takeback_offer);
  const std::string you = seat_of(g, token);
  out["you"] = you.empty() ? json() : json(you);
  out["seed"] = g.seed;
  out["now_ms"] = now;
  return out;
}

// The answer to a seat taken (create, join): the game as that seat sees it.
ApiReply seat_reply(const json& game, const std::string& seat, const std::string& token) {
  json out;
  out["id"] = game["id"];
  out["seat"] = seat;
  out["token"] = token;
  out["game"] = game;
  return reply_json(out);
}

void end_game(StoredGame& g, const std::string& result, const std::string& termination) {
  g.status = "over";
  g.result = result;
  g.termination = termination;
  g.turn_since_ms = 0;
  g.draw_offer.clear();
  g.takeback_offer.clear();
}

std::string win_for(const std::string& seat) { return seat == "white" ? "1-0" : "0-1"; }

// After the moves changed: a rules end, or the clock of the side to move
// started (once both sides have moved).
void after_moves(StoredGame& g, std::int64_t now) {
  const ReplayedGame played = replayed(g);
  const GameStatus status = game_status(played.last());
  g.draw_offer.clear();
  if (status.over()) {
    end_game(g, outcome_text(status.outcome), termination_name(status.termination));
    return;
  }
  g.turn_since_ms = timed(g) && g.moves.size() >= 2 ? now : 0;
}

// `seat` plays `text` in `changed` (a copy of `g`, whose turn was checked):
// the move is checked by the rules core, the mover's clock is charged and
// given its increment.
void apply_move(StoredGame& changed, const StoredGame& g, const std::string& seat, const std::string& text,
                std::int64_t now) {
  const ReplayedGame played = replayed(g);
  try {
    const Move m = parse_move(played.last(), text);
    changed.moves.push_back(to_coordinate(m));
  } catch (const std::exception& e) {
    bad("move", e.what());  // names the move and the problem
  }
  if (timed(g) && g.turn_since_ms != 0) {
    std::int64_t& left = seat == "white" ? changed.white_ms : changed.black_ms;
    left -= now - g.turn_since_ms;
    left += g.increment_ms;
  }
  changed.takeback_offer.clear();
  after_moves(changed, now);
}

// Takes moves back to `seat`'s turn before its last move: one ply when it
// moved last, else two.
void take_back(StoredGame& changed, const StoredGame& g, const std::string& seat, std::int64_t now) {
  const std::size_t back = side_to_move(g) == seat ? 2 : 1;
  changed.moves.resize(g.moves.size() - std::min(back, g.moves.size()));
  changed.takeback_offer.clear();
  after_moves(changed, now);
}

}  // namespace

OnlineGames::OnlineGames(Store& store, OnlineOptions options, Clock now)
    : store_(store), options_(options), now_(now ? std::move(now) : Clock(unix_ms)) {}

OnlineGames::~OnlineGames() { shutdown(); }

void OnlineGames::set_bots(BotHost host) {
  std::lock_guard lock(mutex_);
  bots_ = std::move(host);
}

ApiReply OnlineGames::reply(const StoredGame& g, const std::string& token) {
  const auto error = bot_errors_.find(g.id);
  return reply_json(state_json(g, token, now_(), bot_thinking_.count(g.id) > 0,
                               error == bot_errors_.end() ? "" : error->second));
}

void OnlineGames::bot_moved(const BotTurn& turn, const std::string& move) {
  std::unique_lock lock(mutex_);
  bot_thinking_.erase(turn.game);
  auto it = games_.find(turn.game);
  if (it == games_.end()) return;
  StoredGame& g = it->second;
  try {
    settle(g);
    const std::string seat = bot_seat(g);
    if (g.status != "playing" || g.moves != turn.moves || side_to_move(g) != seat) {
      ensure_bot(g);  // the game moved on (a takeback, a new move): a new turn if one is due
      return;
    }
    StoredGame changed = g;
    apply_move(changed, g, seat, move, now_());
    bot_errors_.erase(g.id);
    save(g, std::move(changed));
  } catch (const HttpError& e) {
    bot_errors_[g.id] = "the bot's move " + move + " was refused: " + e.message;
    changed_.notify_all();
  }
}

void OnlineGames::bot_failed(const BotTurn& turn, const std::string& why) {
  std::unique_lock lock(mutex_);
  bot_thinking_.erase(turn.game);
  bot_errors_[turn.game] = why;
  changed_.notify_all();
}

void OnlineGames::ensure_bot(const StoredGame& g) {
  if (!bots_.start || g.status != "playing" || bot_seat(g).empty() || side_to_move(g) != bot_seat(g)) return;
  if (!bot_thinking_.insert(g.id).second) return;  // its turn is under way
  BotTurn turn;
  turn.game = g.id;
  turn.bot = g.bot;
  turn.rules = g.rules;
  turn.fen = g.fen;
  turn.moves = g.moves;
  turn.seed = g.seed;
  turn.movetime_ms = g.bot_movetime_ms;
  if (timed(g)) {
    const std::string running = running_side(g);
    const std::int64_t now = now_();
    turn.white_ms = std::max<std::int64_t>(1, time_left(g, "white", running, now));
    turn.black_ms = std::max<std::int64_t>(1, time_left(g, "black", running, now));
    turn.increment_ms = g.increment_ms;
  }
  bots_.start(turn);
}

void OnlineGames::shutdown() {
  std::lock_guard lock(mutex_);
  stopping_ = true;
  changed_.notify_all();
}

StoredGame& OnlineGames::load(const std::string& id) {
  auto it = games_.find(id);
  if (it != games_.end()) return it->second;
  std::optional<StoredGame> stored;
  try {
    stored = store_.game(id);
  } catch (const StoreError& e) {
    bad("", e.what(), 500);
  }
  if (!stored) bad("id", "no game '" + id.substr(0, 40) + "'", 404);
  StoredGame& g = games_.emplace(id, std::move(*stored)).first->second;
  ensure_bot(g);  // a bot left to move when the server stopped
  return g;
}

void OnlineGames::save(StoredGame& game, StoredGame changed) {
  changed.version = game.version + 1;
  changed.updated_ms = now_();
  try {
    store_.put_game(changed);
  } catch (const StoreError& e) {
    bad("", std::string("the game could not be saved: ") + e.what(), 500);
  }
  game = std::move(changed);
  changed_.notify_all();
  ensure_bot(game);
}

bool OnlineGames::settle(StoredGame& game) {
  const std::string running = running_side(game);
  if (running.empty() || time_left(game, running, running, now_()) > 0) return false;
  StoredGame changed = game;
  (running == "white" ? changed.white_ms : changed.black_ms) = 0;
  end_game(changed, win_for(other(running)), "time");
  save(game, std::move(changed));
  return true;
}

ApiReply OnlineGames::create(const std::string& text, const std::string& client) {
  return guarded([&] {
    const json body =
        parse_body(text, {"rules", "fen", "minutes", "increment", "colour", "bot", "movetime_ms", "seed"});
    const Rules rules = rules_field(body);
    const std::string fen = string_field(body, "fen", "");
    const Position start = fen_position(fen, rules);
    if (game_status(start).over()) bad("fen", "the game of that position is already over");
    // Minutes may have a fraction (0.25: 15 s); the clock counts milliseconds.
    double minutes = 0;
    if (body.contains("minutes") && !body["minutes"].is_null()) {
      if (!body["minutes"].is_number() || body["minutes"].get<double>() < 0 || body["minutes"].get<double>() > 180)
        bad("minutes", "minutes must be a number from 0 to 180");
      minutes = body["minutes"].get<double>();
    }
    const std::int64_t increment = int_field(body, "increment", 0, 180).value_or(0);
    std::string colour = string_field(body, "colour", "random");
    if (colour != "white" && colour != "black" && colour != "random")
      bad("colour", "colour must be white, black or random");
    if (colour == "random") colour = std::random_device{}() % 2 ? "white" : "black";
    const std::string bot = string_field(body, "bot", "");
    const std::int64_t movetime = int_field(body, "movetime_ms", 10, 60000).value_or(1000);
    const std::optional<std::int64_t> seed = int_field(body, "seed", 0, (std::int64_t{1} << 53) - 1);

    StoredGame g;
    g.id = random_text(10, "abcdefghijkmnopqrstuvwxyz23456789");
    g.rules = rules.name();
    g.fen = fen == "startpos" ? "" : fen;
    g.initial_ms = static_cast<std::int64_t>(minutes * 60000 + 0.5);
    g.increment_ms = increment * 1000;
    g.white_ms = g.black_ms = g.initial_ms;
    g.creator = client;
    g.status = "waiting";
    const std::string token = new_token();
    (colour == "white" ? g.white_token : g.black_token) = token;
    g.seed = seed ? static_cast<std::uint64_t>(*seed)
                  : (std::uint64_t{std::random_device{}()} << 21 ^ std::random_device{}()) &
                        ((std::uint64_t{1} << 53) - 1);
    g.created_ms = now_();

    std::unique_lock lock(mutex_);
    if (!bot.empty()) {
      if (!bots_.known) bad("bot", "this server plays no bots", 400);
      if (!bots_.known(bot)) bad("bot", "no bot named '" + bot.substr(0, 60) + "' in the catalogue", 404);
      g.bot = bot;
      g.bot_movetime_ms = g.initial_ms > 0 ? 0 : movetime;
      g.status = "playing";
    }
    int open = 0;
    try {
      open = store_.open_games_of(client);
    } catch (const StoreError& e) {
      bad("", e.what(), 500);
    }
    if (open >= options_.max_open_games_per_client)
      bad("", "this address has " + std::to_string(open) + " games waiting or under way (at most " +
                  std::to_string(options_.max_open_games_per_client) + "): finish or abort one first",
          429);
    StoredGame& slot = games_[g.id];
    try {
      save(slot, g);
    } catch (...) {
      games_.erase(g.id);
      throw;
    }
    return seat_reply(state_json(slot, token, now_(), bot_thinking_.count(slot.id) > 0), colour, token);
  });
}

ApiReply OnlineGames::join(const std::string& text) {
  return guarded([&] {
    const json body = parse_body(text, {"id"});
    std::unique_lock lock(mutex_);
    StoredGame& g = load(string_field(body, "id", ""));
    if (g.status != "waiting")
      bad("id", g.status == "aborted" ? "the game was aborted" : "both seats of this game are taken: open it to watch",
          409);
    StoredGame changed = g;
    const std::string seat = changed.white_token.empty() ? "white" : "black";
    const std::string token = new_token();
    (seat == "white" ? changed.white_token : changed.black_token) = token;
    changed.status = "playing";
    save(g, std::move(changed));
    return seat_reply(state_json(g, token, now_()), seat, token);
  });
}

ApiReply OnlineGames::state(const std::string& text) {
  return guarded([&] {
    const json body = parse_body(text, {"id", "token"});
    std::unique_lock lock(mutex_);
    StoredGame& g = load(string_field(body, "id", ""));
    settle(g);
    ensure_bot(g);  // again after a failed turn
    return reply(g, string_field(body, "token", ""));
  });
}

ApiReply OnlineGames::act(const std::string& text) {
  return guarded([&] {
    const json body = parse_body(text, {"id", "token", "action", "move", "ply"});
    const std::string token = string_field(body, "token", "");
    const std::string action = string_field(body, "action", "");
    std::unique_lock lock(mutex_);
    StoredGame& g = load(string_field(body, "id", ""));
    settle(g);
    const std::string seat = seat_of(g, token);
    if (seat.empty()) bad("token", "this token holds no seat of the game (watchers cannot act)", 403);
    if (g.status == "over" || g.status == "aborted")
      bad("action", "the game is " + std::string(g.status == "over" ? "over (" + g.termination + ")" : "aborted"),
          409);
    const std::int64_t now = now_();
    StoredGame changed = g;
    const std::string opponent = other(seat);
    if (action == "move") {
      if (g.status != "playing") bad("action", "the other seat is still free: share the game's link", 409);
      const std::int64_t ply = int_field(body, "ply", 0, 100000).value_or(-1);
      if (ply != static_cast<std::int64_t>(g.moves.size()))
        bad("ply", "the game is at ply " + std::to_string(g.moves.size()) + ", not " + std::to_string(ply), 409);
      if (side_to_move(g) != seat) bad("action", "it is " + std::string(opponent) + "'s move", 409);
      apply_move(changed, g, seat, string_field(body, "move", ""), now);
    } else if (action == "resign") {
      if (g.status != "playing") bad("action", "nothing to resign before the game starts: abort it", 409);
      end_game(changed, win_for(opponent), "resignation");
    } else if (action == "abort") {
      if (g.moves.size() >= 2) bad("action", "a game can be aborted only before each side has moved", 409);
      changed.status = "aborted";
      changed.turn_since_ms = 0;
    } else if (!g.bot.empty() && (action == "offer-draw" || action == "accept-draw")) {
      bad("action", "the bot plays on: it takes no draw offers", 409);
    } else if (action == "offer-draw" || action == "accept-draw") {
      if (g.status != "playing") bad("action", "the game has not started", 409);
      if (g.draw_offer == opponent) {
        end_game(changed, "1/2-1/2", "agreement");
      } else if (action == "accept-draw") {
        bad("action", "no draw is offered", 409);
      } else {
        changed.draw_offer = seat;
      }
    } else if (action == "decline-draw") {
      if (g.draw_offer != opponent) bad("action", "no draw is offered", 409);
      changed.draw_offer.clear();
    } else if (action == "offer-takeback") {
      const std::size_t own = (side_to_move(g) == seat) ? 2 : 1;  // plies back to this seat's last move
      if (g.moves.size() < own) bad("action", "there is no move of yours to take back", 409);
      if (!g.bot.empty()) {
        take_back(changed, g, seat, now);  // a bot always grants it
      } else {
        changed.takeback_offer = seat;
      }
    } else if (action == "accept-takeback") {
      if (g.takeback_offer != opponent) bad("action", "no takeback is asked", 409);
      take_back(changed, g, opponent, now);  // back to the asker's turn
    } else if (action == "decline-takeback") {
      if (g.takeback_offer != opponent) bad("action", "no takeback is asked", 409);
      changed.takeback_offer.clear();
    } else {
      bad("action",
          "action must be move, resign, abort, offer-draw, accept-draw, decline-draw, offer-takeback, "
          "accept-takeback or decline-takeback");
    }
    save(g, std::move(changed));
    return reply(g, token);
  });
}

ApiReply OnlineGames::wait(const std::string& text) {
  return guarded([&] {
    const json body = parse_body(text, {"id", "version", "token"});
    const std::int64_t version = int_field(body, "version", 0, std::int64_t{1} << 53).value_or(0);
    const std::string token = string_field(body, "token", "");
    std::unique_lock lock(mutex_);
    const std::string id = load(string_field(body, "id", "")).id;
    ensure_bot(games_.at(id));  // again after a failed turn
    if (waiters_ >= options_.max_waiters) bad("", "too many pages are waiting on games; try again", 503);
    ++waiters_;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.wait_ms);
    for (;;) {
      StoredGame& g = games_.at(id);
      try {
        settle(g);
      } catch (...) {
        --waiters_;
        throw;
      }
      if (g.version != version || stopping_ || std::chrono::steady_clock::now() >= until) {
        --waiters_;
        return reply(g, token);
      }
      // Wake when the game changes, when the running time runs out, or at
      // the end of the poll.
      auto wake = until;
      const std::string running = running_side(g);
      if (!running.empty())
        wake = std::min(wake, std::chrono::steady_clock::now() +
                                  std::chrono::milliseconds(time_left(g, running, running, now_()) + 1));
      changed_.wait_until(lock, wake);
    }
  });
}

std::optional<std::string> OnlineGames::pgn(const std::string& id) {
  std::unique_lock lock(mutex_);
  StoredGame* g = nullptr;
  try {
    g = &load(id);
  } catch (const HttpError&) {
    return std::nullopt;
  }
  settle(*g);
  const Rules rules = Rules::parse(g->rules);
  GameRecord record;
  record.event = "Ultima online game";
  record.site = "ultima serve";
  const std::time_t created = static_cast<std::time_t>(g->created_ms / 1000);
  char date[16];
  std::tm tm{};
  gmtime_r(&created, &tm);
  std::strftime(date, sizeof date, "%Y.%m.%d", &tm);
  record.date = date;
  const std::string bot = bot_seat(*g);
  record.white = bot == "white" ? g->bot : bot.empty() ? "White" : "You";
  record.black = bot == "black" ? g->bot : bot.empty() ? "Black" : "You";
  record.rules = rules;
  record.fen = g->fen;
  record.moves = replayed(*g).moves;
  if (g->status == "over") {
    record.result = g->result == "1-0" ? Outcome::kWhiteWins : g->result == "0-1" ? Outcome::kBlackWins : Outcome::kDraw;
    record.termination = g->termination;
  }
  if (timed(*g))
    record.other_tags.emplace_back("TimeControl",
                                   std::to_string(g->initial_ms / 1000) + "+" + std::to_string(g->increment_ms / 1000));
  record.other_tags.emplace_back("GameId", g->id);
  if (!bot.empty()) record.other_tags.emplace_back("Seed", std::to_string(g->seed));  // replays the bot
  if (g->status == "aborted") record.termination = "aborted";
  return write_pgn(record);
}

}  // namespace ultima
