// The web server's JSON API (handlers.h): the requests' fields checked,
// positions and their legal moves, bot moves and analyses through the
// shared analysis service, puzzles, PGN. No HTTP here: server.cpp routes
// the requests to these.
#include "frontends/server/handlers.h"

#include "frontends/server/api_json.h"

#include <algorithm>
#include <cstdlib>
#include <future>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/mcts/mcts.h"
#include "engine/play/level.h"
#include "engine/play/match.h"
#include "engine/play/pgn.h"
#include "engine/play/value_fit.h"
#include "engine/rules/movegen.h"
#include "engine/rules/notation.h"
#include "engine/rules/replay.h"
#include "engine/rules/rule_set.h"
#include "engine/search/search.h"

namespace ultima {
namespace {

using namespace api_json;

const char* color_name(Color c) { return c == kWhite ? "white" : "black"; }

// The squares whose pieces a move takes off the board (a removal: its own).
std::vector<Square> removed_squares(const Move& m) {
  std::vector<Square> out;
  if (m.is_removal()) return {m.from()};
  for (Bitboard b = m.captures; b;) out.push_back(pop_lsb(b));
  return out;
}

json captures_json(const Move& m) {
  json a = json::array();
  for (Square s : removed_squares(m)) a.push_back(square_name(s));
  return a;
}

// Plays a list of moves (the request's field `list`) from `start`; a move
// that cannot be played is a 400 naming it.
ReplayedGame replay_moves(const Position& start, const std::vector<std::string>& moves, const std::string& list = "moves") {
  try {
    return replay_game(start, moves, list);
  } catch (const ReplayError& e) {
    bad(list, e.what());
  }
}

// A game: the position after the moves, the moves, and each move's record.
struct Game {
  Position pos;
  std::vector<Move> moves;
  json history = json::array();
};

Game replay(const json& body) {
  const Rules rules = rules_field(body);
  const ReplayedGame played = replay_moves(fen_position(string_field(body, "fen", ""), rules), string_list(body, "moves"));
  Game g{played.last(), played.moves};
  for (std::size_t i = 0; i < played.moves.size(); ++i) {
    const Position& before = played.positions[i];
    const Move& m = played.moves[i];
    json entry;
    entry["move"] = to_coordinate(m);
    entry["notation"] = to_readable(before, m);
    json captured = json::array();
    for (Square s : removed_squares(m))
      captured.push_back({{"square", square_name(s)}, {"piece", std::string(1, piece_char(before.piece_on(s)))}});
    entry["captured"] = captured;
    entry["fen_after"] = played.positions[i + 1].fen();
    g.history.push_back(entry);
  }
  return g;
}

std::string status_name(Termination t) {
  switch (t) {
    case Termination::kNone: return "playing";
    case Termination::kCheckmate: return "checkmate";
    case Termination::kStalemate: return "stalemate";
    case Termination::kNoLegalMove: return "no-legal-move";
    case Termination::kKingCaptured: return "king-captured";
    case Termination::kBareKings:
    case Termination::kRepetition:
    case Termination::kHundredPlies: return "draw";
  }
  return "playing";
}

json position_json(const Game& g) {
  const Position& pos = g.pos;
  json out;
  out["fen"] = pos.fen();
  out["side"] = color_name(pos.side_to_move());
  const GameStatus status = game_status(pos);
  out["status"] = status_name(status.termination);
  out["result"] = status.over() ? json(outcome_text(status.outcome)) : json();
  out["reason"] = status.over() ? json(termination_name(status.termination)) : json();
  out["in_check"] = pos.king_square(pos.side_to_move()) != kNoSquare && pos.in_check();
  const Bitboard frozen = pos.frozen(kWhite) | pos.frozen(kBlack);
  json board = json::array();
  for (int rank = 7; rank >= 0; --rank)
    for (int file = 0; file < 8; ++file) {
      const Square s = make_square(file, rank);
      const Piece p = pos.piece_on(s);
      if (p == kEmpty) {
        board.push_back(nullptr);
        continue;
      }
      board.push_back({{"piece", std::string(1, piece_char(p))},
                       {"color", color_name(color_of(p))},
                       {"frozen", (frozen & square_bb(s)) != 0}});
    }
  out["board"] = board;
  json legal = json::array();
  if (!status.over()) {
    MoveList list;
    generate_legal(pos, list);
    for (const Move& m : list)
      legal.push_back({{"move", to_coordinate(m)},
                       {"from", square_name(m.from())},
                       {"to", square_name(m.to())},
                       {"captures", captures_json(m)},
                       {"notation", to_readable(pos, m)}});
  }
  out["legal"] = legal;
  out["history"] = g.history;
  out["last_move"] = g.history.empty() ? json() : g.history.back();
  return out;
}

// The line of a PGN text that a read error points at (1-based), from the
// game and the move text the message names ("game 2, ply 5 (3. a2a9): ..."):
// the line of that move in that game, else the game's first line; 0 when
// the message names no game.
int pgn_error_line(std::string_view text, const std::string& message) {
  const std::size_t at = message.find("game ");
  if (at == std::string::npos) return 0;
  const int game = std::atoi(message.c_str() + at + 5);
  if (game <= 0) return 0;
  std::string word;
  const std::size_t open = message.find(" ("), close = message.find("):");
  if (open != std::string::npos && close != std::string::npos && close > open) {
    const std::string token = message.substr(open + 2, close - open - 2);
    word = token.substr(token.find_last_of(' ') == std::string::npos ? 0 : token.find_last_of(' ') + 1);
  }
  // A game begins at its first tag line after movetext, or at the text's
  // first non-blank line.
  int line = 0, games = 0, start = 0;
  bool in_moves = true;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    const std::string_view l = text.substr(pos, end - pos);
    ++line;
    const std::size_t first = l.find_first_not_of(" \t\r");
    if (first != std::string_view::npos) {
      const bool tag = l[first] == '[';
      if ((tag && in_moves) || (!tag && games == 0)) {
        if (++games == game) start = line;
        if (games > game) break;
      }
      in_moves = !tag;
      if (games == game && !word.empty() && l.find(word) != std::string_view::npos && !tag) return line;
    }
    pos = end + 1;
  }
  return start;
}

// A search score (centipawns for the side to move, mates near kMateScore)
// as the analysis answers show one.
json score_json(int score) {
  json s;
  if (score >= kMateBound) {
    s["cp"] = q_to_centipawns(1);
    s["mate"] = (kMateScore - score + 1) / 2;
  } else if (score <= -kMateBound) {
    s["cp"] = q_to_centipawns(-1);
    s["mate"] = -((kMateScore + score) / 2);
  } else {
    s["cp"] = score;
  }
  const WdlPermille w = score_to_wdl(score);
  s["wdl"] = json::array({w.win, w.draw, w.loss});
  return s;
}

std::string bot_kind(const Bot& bot) {
  if (bot.is_level) return "level";
  const std::size_t colon = bot.spec.find(':');
  return colon == std::string::npos ? bot.spec : bot.spec.substr(0, colon);
}

}  // namespace

ApiReply api_error(int status, const std::string& message, const std::string& field) {
  return reply_json(error_body(message, field), status);
}

ServerApi::ServerApi(ServerOptions options, NetworkFactory networks)
    : options_(std::move(options)),
      networks_(networks),
      bot_networks_(networks ? shared_networks(networks) : NetworkFactory{}) {
  if (options_.max_searches <= 0) options_.max_searches = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options_.max_queue = std::max(0, options_.max_queue);
  options_.threads = std::max(1, options_.threads);
  AnalysisOptions a;
  a.parallel = options_.max_searches;
  a.max_pending = options_.max_searches + options_.max_queue;
  a.hash_mb = options_.hash_mb;
  a.max_threads = options_.threads;
  a.version = options_.version;
  a.nnue = options_.nnue;
  // The network of MCTS analyses is read now, so that a missing or damaged
  // file stops the server before it listens rather than failing the first
  // analysis.
  if (!options_.weights.empty() && options_.weights != "random") {
    if (!networks_) throw std::invalid_argument("--weights '" + options_.weights + "': this program has no neural-network support");
    try {
      networks_("weights=" + options_.weights);
    } catch (const std::exception& e) {
      throw std::invalid_argument("--weights '" + options_.weights + "': " + e.what());
    }
  }
  store_ = std::make_unique<Store>(options_.db);
  OnlineOptions online;
  online.max_open_games_per_client = options_.max_open_games;
  online.max_waiters = options_.max_waiters;
  online_ = std::make_unique<OnlineGames>(*store_, online);
  service_ = std::make_unique<AnalysisService>(networks_, a);
  try {
    catalogue_ = load_catalogue();
  } catch (const std::exception& e) {
    catalogue_error_ = e.what();
  }
  try {
    puzzles_ = read_puzzle_file(default_puzzle_file());
  } catch (const std::exception& e) {
    puzzles_error_ = e.what();
  }
  trainer_ = std::make_unique<PuzzleTrainer>(*store_, puzzles_);
  // Games against bots: the server plays the bot's seat. A turn is queued
  // here and handed to a search worker as soon as one is free.
  BotHost host;
  host.known = [this](const std::string& name) {
    return std::any_of(catalogue_.begin(), catalogue_.end(), [&](const Bot& b) { return b.name == name; });
  };
  host.start = [this](const BotTurn& turn) {
    std::lock_guard lock(bots_mutex_);
    bot_turns_.push_back(turn);
    bots_cv_.notify_one();
  };
  online_->set_bots(host);
  bot_driver_ = std::thread([this] { drive_bots(); });
  try {
    course_ = read_course(default_course_file());
  } catch (const std::exception& e) {
    course_error_ = e.what();
  }
}

// ---- the rules course

ApiReply ServerApi::course() const {
  return guarded([&] {
    if (!course_error_.empty()) bad("", "the course cannot be read: " + course_error_, 500);
    json lessons = json::array();
    for (const CourseLesson& l : course_) {
      json exercises = json::array();
      for (const CourseExercise& x : l.exercises)
        exercises.push_back({{"fen", x.fen}, {"rules", x.rules.name()}, {"task", x.task}, {"hint", x.hint},
                             {"hint_square", x.hint_square}});
      lessons.push_back({{"id", l.id}, {"title", l.title}, {"text", l.text}, {"exercises", exercises}});
    }
    return reply_json({{"lessons", lessons}});
  });
}

ApiReply ServerApi::course_check(const std::string& request) const {
  return guarded([&] {
    if (!course_error_.empty()) bad("", "the course cannot be read: " + course_error_, 500);
    const json body = parse_body(request, {"lesson", "exercise", "move"});
    const std::string id = string_field(body, "lesson", "");
    const auto lesson = std::find_if(course_.begin(), course_.end(), [&](const CourseLesson& l) { return l.id == id; });
    if (lesson == course_.end()) bad("lesson", "no lesson '" + id.substr(0, 40) + "'", 404);
    const std::int64_t n = int_field(body, "exercise", 0, 1000).value_or(0);
    if (n >= static_cast<std::int64_t>(lesson->exercises.size()))
      bad("exercise", "lesson '" + id + "' has " + std::to_string(lesson->exercises.size()) + " exercises", 404);
    CourseCheck check;
    try {
      check = check_exercise(lesson->exercises[static_cast<std::size_t>(n)], string_field(body, "move", ""));
    } catch (const ReplayError& e) {
      bad("move", e.what());
    }
    json out;
    out["done"] = check.done;
    out["why"] = check.done ? json() : json(check.why);
    return reply_json(out);
  });
}

ServerApi::~ServerApi() {
  {
    std::lock_guard lock(bots_mutex_);
    bots_stopping_ = true;
  }
  bots_cv_.notify_all();
  if (bot_driver_.joinable()) bot_driver_.join();
  online_->set_bots({});
  online_->shutdown();
  service_.reset();  // its workers finish first: bot jobs report to online_
}

void ServerApi::drive_bots() {
  std::unique_lock lock(bots_mutex_);
  for (;;) {
    bots_cv_.wait(lock, [&] { return bots_stopping_ || !bot_turns_.empty(); });
    if (bots_stopping_) return;
    const BotTurn turn = bot_turns_.front();
    lock.unlock();
    const auto admission = service_->submit_job([this, turn] { play_bot_turn(turn); });
    lock.lock();
    if (admission != AnalysisService::Admission::kBusy) {
      bot_turns_.pop_front();
    } else {
      // Every worker and queue place is taken: the turn waits its place.
      bots_cv_.wait_for(lock, std::chrono::milliseconds(200), [&] { return bots_stopping_; });
    }
  }
}

void ServerApi::play_bot_turn(const BotTurn& turn) {
  try {
    const auto bot = std::find_if(catalogue_.begin(), catalogue_.end(), [&](const Bot& b) { return b.name == turn.bot; });
    if (bot == catalogue_.end()) throw std::runtime_error("no bot named '" + turn.bot + "' in the catalogue");
    const Rules rules = Rules::parse(turn.rules);
    const ReplayedGame game = replay_game(start_position(turn.fen, rules), turn.moves);
    Position pos = game.last();
    MoveLimits limits;
    limits.movetime_ms = turn.movetime_ms;
    if (!limits.movetime_ms) {
      limits.time_ms[kWhite] = turn.white_ms;
      limits.time_ms[kBlack] = turn.black_ms;
      limits.inc_ms[kWhite] = limits.inc_ms[kBlack] = turn.increment_ms;
    }
    std::unique_ptr<Player> player = make_player(bot->name, bot_networks_);
    player->new_game();
    const MoveChoice choice = player->choose(pos, move_seed(turn.seed, 0, pos.game_ply()), limits);
    online_->bot_moved(turn, to_coordinate(choice.move));
  } catch (const std::exception& e) {
    online_->bot_failed(turn, "the bot '" + turn.bot + "' could not move: " + e.what());
  }
}

// ---- GET /api/info

ApiReply ServerApi::info() const {
  return guarded([&] {
    json out;
    out["version"] = options_.version;
    out["presets"] = preset_names();
    out["default_rules"] = kDefaultRules;
    json bots = json::array();
    for (const Bot& b : catalogue_)
      bots.push_back({{"name", b.name},
                      {"elo", b.has_elo ? json(b.elo) : json()},
                      {"description", b.description},
                      {"style", b.style},
                      {"kind", bot_kind(b)}});
    out["bots"] = bots;
    std::string fallback = catalogue_.empty() ? "" : catalogue_.front().name;
    for (const Bot& b : catalogue_)
      if (b.name == "intermediate") fallback = b.name;
    out["default_bot"] = fallback;
    if (!catalogue_error_.empty()) out["bots_error"] = catalogue_error_;
    out["backends"] = {"alphabeta", "mcts"};
    out["weights"] = options_.weights;
    out["nnue"] = options_.nnue;
    out["limits"] = {
        {"max_searches", options_.max_searches}, {"max_queue", options_.max_queue}, {"threads", options_.threads}};
    return reply_json(out);
  });
}

// ---- POST /api/position

ApiReply ServerApi::position(const std::string& request) const {
  return guarded([&] {
    const json body = parse_body(request, {"rules", "fen", "moves"});
    return reply_json(position_json(replay(body)));
  });
}

// ---- POST /api/bot-move

void ServerApi::take_search(const std::string& address) {
  if (address.empty()) return;
  std::lock_guard lock(addresses_mutex_);
  int& n = searches_of_[address];
  if (n >= options_.max_searches_per_address)
    bad("", "this address already runs " + std::to_string(n) + " searches (at most " +
                std::to_string(options_.max_searches_per_address) + "); stop one or wait for it",
        429);
  ++n;
}

void ServerApi::release_search(const std::string& address) {
  if (address.empty()) return;
  std::lock_guard lock(addresses_mutex_);
  auto it = searches_of_.find(address);
  if (it != searches_of_.end() && --it->second <= 0) searches_of_.erase(it);
}

ApiReply ServerApi::bot_move(const std::string& request, const std::string& address) {
  return guarded([&] {
    const json body =
        parse_body(request, {"rules", "fen", "moves", "bot", "movetime_ms", "wtime", "btime", "winc", "binc", "seed"});
    Game game = replay(body);
    const std::string name = string_field(body, "bot", "");
    if (name.empty()) bad("bot", "bot: missing (a name from /api/info's bots)");
    const auto it = std::find_if(catalogue_.begin(), catalogue_.end(), [&](const Bot& b) { return b.name == name; });
    if (it == catalogue_.end()) bad("bot", "bot: no bot named '" + name.substr(0, 60) + "' in the catalogue", 404);
    const Bot bot = *it;
    const std::int64_t kDay = 86'400'000;
    const auto movetime = int_field(body, "movetime_ms", 1, kDay);
    const auto wtime = int_field(body, "wtime", 0, kDay), btime = int_field(body, "btime", 0, kDay);
    const auto winc = int_field(body, "winc", 0, kDay), binc = int_field(body, "binc", 0, kDay);
    const std::uint64_t seed = static_cast<std::uint64_t>(int_field(body, "seed", 0, std::int64_t{1} << 53).value_or(1));
    const GameStatus status = game_status(game.pos);
    if (status.over()) bad("moves", std::string("the game is over (") + termination_name(status.termination) + ")");

    // The time it may take: movetime_ms, else the mover's clock; every bot
    // plays within it and its own budget, whichever ends first.
    MoveLimits limits;
    limits.movetime_ms = movetime.value_or(0);
    if (!limits.movetime_ms) {
      limits.time_ms[kWhite] = wtime.value_or(0);
      limits.time_ms[kBlack] = btime.value_or(0);
      limits.inc_ms[kWhite] = winc.value_or(0);
      limits.inc_ms[kBlack] = binc.value_or(0);
    }

    take_search(address);
    struct Slot {
      ServerApi* api;
      std::string address;
      ~Slot() { api->release_search(address); }
    } slot{this, address};
    auto done = std::make_shared<std::promise<MoveChoice>>();
    std::future<MoveChoice> answer = done->get_future();
    auto pos = std::make_shared<Position>(game.pos);
    const NetworkFactory networks = bot_networks_;
    const auto admission = service_->submit_job([done, pos, bot, limits, seed, networks] {
      try {
        std::unique_ptr<Player> player = make_player(bot.name, networks);
        player->new_game();
        done->set_value(player->choose(*pos, move_seed(seed, 0, pos->game_ply()), limits));
      } catch (...) {
        done->set_exception(std::current_exception());
      }
    });
    if (admission == AnalysisService::Admission::kBusy) busy();
    MoveChoice choice;
    try {
      choice = answer.get();
    } catch (const std::exception& e) {
      bad("bot", "the bot '" + bot.name + "' failed: " + e.what(), 500);
    }
    MoveList legal;
    generate_legal(game.pos, legal);
    const Move* found = std::find(legal.begin(), legal.end(), choice.move);
    if (found == legal.end()) bad("bot", "the bot '" + bot.name + "' chose an illegal move", 500);
    json out;
    out["move"] = to_coordinate(*found);
    out["notation"] = to_readable(game.pos, *found);
    out["captures"] = captures_json(*found);
    out["bot"] = bot.name;
    out["elo"] = bot.has_elo ? json(bot.elo) : json();
    out["score"] = score_json(choice.score_cp);
    if (choice.depth) out["depth"] = choice.depth;
    if (choice.nodes) out["nodes"] = choice.nodes;
    return reply_json(out);
  });
}

void ServerApi::busy() const {
  bad("", "busy: this server runs " + std::to_string(options_.max_searches) + " searches at once and queues " +
              std::to_string(options_.max_queue) + " more, and all are taken; try again soon",
      503);
}

// ---- POST /api/analyze

AnalysisStart ServerApi::analyze(const std::string& request, const std::string& address) {
  AnalysisStart started;
  started.error = guarded([&] {
    json query = body_object(request, "the body must be a JSON object (one analysis query)");
    if (query.contains("action")) bad("action", "actions are not taken here; stop a query with /api/analyze/stop");
    if (query.contains("analyze_turns"))
      bad("analyze_turns", "the server analyses one turn, the last; send one request per position");
    if (query.contains("weights")) {
      const json& w = query["weights"];
      if (!w.is_string()) bad("weights", "weights must be a string");
      if (!w.get<std::string>().empty() && w.get<std::string>() != options_.weights)
        bad("weights", "this server analyses with its own network only (" +
                           (options_.weights.empty() ? std::string("none: start it with --weights")
                                                     : "'" + options_.weights + "'") + ")");
      if (w.get<std::string>().empty()) query.erase("weights");
    } else if (!options_.weights.empty() && query.value("backend", json("")) == json("mcts")) {
      query["weights"] = options_.weights;
    }
    if (query.contains("nnue")) {
      const json& n = query["nnue"];
      if (!n.is_string() || (n.get<std::string>() != "none" && n.get<std::string>() != "default"))
        bad("nnue", "nnue must be none (the hand-written evaluation) or default (the shipped network); "
                    "without it the server's own evaluation answers ('" + options_.nnue + "')");
    }
    // Progress every 250 ms unless asked otherwise, and never more often
    // than every 50 ms: a stream is for people watching.
    if (!query.contains("report_every_ms")) query["report_every_ms"] = 250;
    if (query["report_every_ms"].is_number_integer() && query["report_every_ms"].get<std::int64_t>() > 0 &&
        query["report_every_ms"].get<std::int64_t>() < 50)
      query["report_every_ms"] = 50;
    const std::uint64_t serial = ++serial_;
    if (!query.contains("id")) query["id"] = "q" + std::to_string(serial);
    if (!query["id"].is_string()) bad("id", "id must be a string");
    const std::string id = query["id"].get<std::string>();
    const std::string client = "c" + std::to_string(serial);
    {
      std::lock_guard lock(ids_mutex_);
      if (running_ids_.count(id)) bad("id", "id '" + id.substr(0, 60) + "' is in use by a running analysis");
      running_ids_[id] = client;
    }
    auto stream = std::make_shared<AnalysisStream>();
    const AnalysisSink sink = [stream](const std::string& answer, bool last) {
      {
        std::lock_guard lock(stream->mutex);
        // A client that does not read keeps the newest progress only: each
        // answer is a whole picture of the search so far.
        if (!last && stream->lines.size() >= 64) stream->lines.pop_front();
        stream->lines.push_back(answer + "\n");
        if (last) stream->done = true;
      }
      stream->cv.notify_all();
    };
    try {
      take_search(address);
    } catch (...) {
      forget(id);
      throw;
    }
    const auto admission = service_->submit(query.dump(), sink, client);
    if (admission != AnalysisService::Admission::kQueued) {
      forget(id);
      release_search(address);
      if (admission == AnalysisService::Admission::kBusy) busy();
      // An error answer names the field at fault.
      std::lock_guard lock(stream->mutex);
      json answer = stream->lines.empty() ? json::object() : json::parse(stream->lines.front());
      bad(answer["field"].is_string() ? answer["field"].get<std::string>() : "",
          answer.value("error", std::string("the query was not taken")));
    }
    started.id = id;
    started.client = client;
    started.address = address;
    started.stream = stream;
    return ApiReply{};
  });
  return started;
}

void ServerApi::forget(const std::string& id) {
  std::lock_guard lock(ids_mutex_);
  running_ids_.erase(id);
}

void ServerApi::end_analysis(const AnalysisStart& query) {
  bool done = false;
  {
    std::lock_guard lock(query.stream->mutex);
    done = query.stream->done;
  }
  if (!done) service_->terminate(query.client, query.id);
  forget(query.id);
  release_search(query.address);
}

void ServerApi::finish() { service_->finish(); }

// ---- POST /api/analyze/stop

ApiReply ServerApi::analyze_stop(const std::string& request) {
  return guarded([&] {
    const json body = parse_body(request, {"id"});
    const std::string id = string_field(body, "id", "");
    if (!body.contains("id")) bad("id", "id: missing (the query's id)");
    std::string client;
    {
      std::lock_guard lock(ids_mutex_);
      const auto it = running_ids_.find(id);
      if (it != running_ids_.end()) client = it->second;
    }
    const int stopped = client.empty() ? 0 : service_->terminate(client, id);
    return reply_json({{"stopped", stopped > 0}});
  });
}

// ---- puzzles

namespace {

json puzzle_json(const Puzzle& p, PuzzleTrainer& trainer) {
  json j;
  j["id"] = p.id;
  j["rules"] = p.rules.name();
  j["fen"] = p.fen;
  j["side"] = p.fen.find(" b") != std::string::npos ? "black" : "white";
  try {
    j["side"] = color_name(Position::from_fen(p.fen, p.rules).side_to_move());
  } catch (const std::exception&) {
  }
  j["kind"] = puzzle_kind_name(p.kind);
  if (p.kind == PuzzleKind::kMate) j["mate_in"] = p.mate_in;
  j["rating"] = p.rating;
  j["rating_elo"] = p.rating_elo;
  j["tags"] = p.tags;
  j["moves_to_find"] = (p.solution.size() + 1) / 2;
  const PuzzleRating r = trainer.rating_of(p);
  j["learnt_rating"] = std::lround(r.rating);
  j["attempts"] = r.attempts;
  return j;
}

json player_json(const StoredPlayer& p) {
  return {{"rating", std::lround(p.rating)}, {"rd", std::lround(p.rd)}, {"streak", p.streak},
          {"best_streak", p.best_streak}, {"attempts", p.attempts}, {"solved", p.solved}};
}

}  // namespace

ApiReply ServerApi::puzzles() const {
  return guarded([&] {
    if (!puzzles_error_.empty()) bad("", "the puzzle file cannot be read: " + puzzles_error_, 500);
    json list = json::array();
    for (const Puzzle& p : puzzles_) list.push_back(puzzle_json(p, *trainer_));
    return reply_json({{"puzzles", list}});
  });
}

ApiReply ServerApi::player_new(const std::string& request) {
  return guarded([&] {
    parse_body(request, {});
    const StoredPlayer p = trainer_->new_player();
    return reply_json({{"token", p.token}, {"player", player_json(p)}});
  });
}

ApiReply ServerApi::player_state(const std::string& request) {
  return guarded([&] {
    const json body = parse_body(request, {"token"});
    const std::optional<StoredPlayer> p = trainer_->player(string_field(body, "token", ""));
    if (!p) bad("token", "no player with this token (POST /api/players/new makes one)", 404);
    return reply_json({{"player", player_json(*p)}});
  });
}

ApiReply ServerApi::puzzle_next(const std::string& request) {
  return guarded([&] {
    if (!puzzles_error_.empty()) bad("", "the puzzle file cannot be read: " + puzzles_error_, 500);
    const json body = parse_body(request, {"token", "tag"});
    const std::optional<StoredPlayer> p = trainer_->player(string_field(body, "token", ""));
    if (!p) bad("token", "no player with this token (POST /api/players/new makes one)", 404);
    const Puzzle* next = trainer_->next(*p, string_field(body, "tag", ""));
    json out;
    out["player"] = player_json(*p);
    out["puzzle"] = next ? puzzle_json(*next, *trainer_) : json();
    return reply_json(out);
  });
}

ApiReply ServerApi::puzzle_check(const std::string& request) {
  return guarded([&] {
    const json body = parse_body(request, {"id", "moves", "token"});
    const std::string token = string_field(body, "token", "");
    std::optional<StoredPlayer> player;
    if (!token.empty() && !(player = trainer_->player(token)))
      bad("token", "no player with this token (POST /api/players/new makes one)", 404);
    const std::string id = string_field(body, "id", "");
    if (!body.contains("id")) bad("id", "id: missing (a puzzle id from /api/puzzles)");
    const auto it = std::find_if(puzzles_.begin(), puzzles_.end(), [&](const Puzzle& p) { return p.id == id; });
    if (it == puzzles_.end()) bad("id", "id: no puzzle '" + id.substr(0, 60) + "'", 404);
    const Puzzle& p = *it;
    const std::vector<std::string> moves = string_list(body, "moves");
    if (moves.size() > p.solution.size())
      bad("moves", "moves: " + std::to_string(moves.size()) + " moves, but the solution has only " +
                       std::to_string(p.solution.size()));
    const ReplayedGame played = replay_moves(Position::from_fen(p.fen, p.rules), moves);
    json out;
    out["correct"] = true;
    out["solved"] = false;
    out["reply"] = nullptr;
    // A player's attempt ends at its first wrong move or at the solution;
    // its first attempt at this puzzle is rated.
    auto rated = [&](bool solved) {
      if (!player) return reply_json(out);
      const PuzzleTrainer::Outcome o = trainer_->attempt(token, p, solved);
      out["rating"] = {{"rated", o.rated}, {"player", player_json(o.player)}, {"delta", std::lround(o.delta)},
                       {"puzzle_rating", std::lround(o.puzzle.rating)}};
      return reply_json(out);
    };
    for (std::size_t i = 0; i < moves.size(); ++i) {
      const Move& m = played.moves[i];
      const Move& expected = p.solution[i];
      const bool solver = i % 2 == 0;
      if (!(m == expected)) {
        if (!solver)
          bad("moves", ReplayError("moves", i, moves[i], "the reply in this puzzle is " + to_coordinate(expected)).what());
        // Another move that wins at once (a mate) is as good as the solution's.
        if (Position before = played.positions[i]; wins_at_once(before, m)) {
          out["solved"] = true;
          return rated(true);
        }
        out["correct"] = false;
        out["expected"] = to_coordinate(expected);
        return rated(false);
      }
    }
    out["solved"] = moves.size() == p.solution.size();
    if (moves.size() % 2 == 1 && moves.size() < p.solution.size())
      out["reply"] = to_coordinate(p.solution[moves.size()]);
    if (out["solved"] == true) return rated(true);
    return reply_json(out);
  });
}

// ---- PGN

ApiReply ServerApi::pgn_parse(const std::string& request) const {
  return guarded([&] {
    const json body = parse_body(request, {"pgn"});
    if (!body.contains("pgn")) bad("pgn", "pgn: missing (the PGN text)");
    const std::string text = string_field(body, "pgn", "");
    std::vector<GameRecord> records;
    try {
      records = read_pgn(text);
    } catch (const std::exception& e) {
      const int line = pgn_error_line(text, e.what());
      bad("pgn", "pgn: " + (line > 0 ? "line " + std::to_string(line) + ", " : std::string()) + e.what());
    }
    json games = json::array();
    for (const GameRecord& r : records) {
      json tags;
      tags["Event"] = r.event;
      tags["Site"] = r.site;
      tags["Date"] = r.date;
      tags["Round"] = r.round;
      tags["White"] = r.white;
      tags["Black"] = r.black;
      tags["Result"] = outcome_text(r.result);
      if (!r.termination.empty()) tags["Termination"] = r.termination;
      for (const auto& [key, value] : r.other_tags) tags[key] = value;
      json moves = json::array();
      for (const Move& m : r.moves) moves.push_back(to_coordinate(m));
      games.push_back({{"tags", tags},
                       {"rules", r.rules.name()},
                       {"fen", first_position(r).fen()},
                       {"moves", moves},
                       {"result", outcome_text(r.result)}});
    }
    return reply_json({{"games", games}});
  });
}

ApiReply ServerApi::pgn_write(const std::string& request) const {
  return guarded([&] {
    const json body = parse_body(request, {"tags", "rules", "fen", "moves", "result"});
    GameRecord r;
    r.rules = rules_field(body);
    const std::string fen = string_field(body, "fen", "");
    const Position first = fen_position(fen, r.rules);
    if (!fen.empty() && fen != "startpos" && first.fen() != Position::start(r.rules).fen()) r.fen = first.fen();
    if (body.contains("tags") && !body["tags"].is_null()) {
      if (!body["tags"].is_object()) bad("tags", "tags must be an object of strings");
      for (auto it = body["tags"].begin(); it != body["tags"].end(); ++it) {
        if (!it.value().is_string()) bad("tags", "tags." + it.key() + " must be a string");
        const std::string& key = it.key();
        const std::string value = it.value().get<std::string>();
        if (key.empty() || key.find_first_of(" \t\r\n\"[]") != std::string::npos)
          bad("tags", "tags: '" + key.substr(0, 40) + "' is not a tag name");
        if (value.find_first_of("\r\n") != std::string::npos) bad("tags", "tags." + key + " has a line break");
        if (key == "Event") r.event = value;
        else if (key == "Site") r.site = value;
        else if (key == "Date") r.date = value;
        else if (key == "Round") r.round = value;
        else if (key == "White") r.white = value;
        else if (key == "Black") r.black = value;
        else if (key == "Termination") r.termination = value;
        else if (key == "Result" || key == "Rules" || key == "FEN" || key == "Variant" || key == "SetUp") continue;
        else r.other_tags.emplace_back(key, value);
      }
    }
    r.moves = replay(body).moves;
    const std::string result = string_field(body, "result", "*");
    if (result == "1-0") r.result = Outcome::kWhiteWins;
    else if (result == "0-1") r.result = Outcome::kBlackWins;
    else if (result == "1/2-1/2") r.result = Outcome::kDraw;
    else if (result != "*") bad("result", "result must be 1-0, 0-1, 1/2-1/2 or *");
    std::string text;
    try {
      text = write_pgn(r);
      read_pgn(text);  // the record must read back (a result against the final position does not)
    } catch (const std::exception& e) {
      bad("result", std::string("the game cannot be written: ") + e.what());
    }
    return reply_json({{"pgn", text}});
  });
}

}  // namespace ultima
