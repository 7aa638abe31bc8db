// The web board's server. This is the one file that includes httplib.h.
#include "frontends/server/server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/mcts/mcts.h"
#include "frontends/analysis/analysis.h"
#include "engine/play/bot.h"
#include "engine/play/level.h"
#include "engine/play/match.h"
#include "engine/play/pgn.h"
#include "engine/play/puzzle.h"
#include "engine/play/value_fit.h"
#include "frontends/server/web_assets.h"
#include "engine/rules/movegen.h"
#include "engine/rules/notation.h"
#include "engine/rules/replay.h"
#include "engine/rules/rule_set.h"
#include "engine/search/search.h"

namespace ultima {
namespace {

using json = nlohmann::json;

// A request the server refuses: its HTTP status, the message, and the
// field at fault (empty: the request as a whole).
struct HttpError {
  int status = 400;
  std::string message;
  std::string field;
};

[[noreturn]] void bad(const std::string& field, const std::string& message, int status = 400) {
  throw HttpError{status, message, field};
}

json error_body(const std::string& message, const std::string& field) {
  json e;
  e["error"] = message;
  if (!field.empty()) e["field"] = field;
  return e;
}

void send_json(httplib::Response& res, const json& body, int status = 200) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

// The request's body as JSON; `object_error` when it is not an object.
json body_object(const httplib::Request& req, const std::string& object_error) {
  json body;
  try {
    body = json::parse(req.body);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    const std::size_t at = what.find("] ");
    bad("", "the body is not valid JSON: " + (at == std::string::npos ? what : what.substr(at + 2)));
  }
  if (!body.is_object()) bad("", object_error);
  return body;
}

// The request's body as a JSON object with only the allowed fields.
json parse_body(const httplib::Request& req, const std::vector<std::string>& allowed) {
  json body = body_object(req, "the body must be a JSON object");
  for (auto it = body.begin(); it != body.end(); ++it)
    if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end()) {
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      bad(it.key(), "unknown field '" + it.key() + "' (fields: " + list + ")");
    }
  return body;
}

std::string string_field(const json& body, const char* name, const std::string& fallback) {
  if (!body.contains(name) || body[name].is_null()) return fallback;
  if (!body[name].is_string()) bad(name, std::string(name) + " must be a string");
  return body[name].get<std::string>();
}

std::vector<std::string> string_list(const json& body, const char* name) {
  std::vector<std::string> out;
  if (!body.contains(name) || body[name].is_null()) return out;
  if (!body[name].is_array()) bad(name, std::string(name) + " must be an array of strings");
  for (const json& v : body[name]) {
    if (!v.is_string()) bad(name, std::string(name) + " must be an array of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::optional<std::int64_t> int_field(const json& body, const char* name, std::int64_t lo, std::int64_t hi) {
  if (!body.contains(name) || body[name].is_null()) return std::nullopt;
  const json& v = body[name];
  const std::string range = std::string(name) + " must be an integer from " + std::to_string(lo) + " to " +
                            std::to_string(hi);
  if (!v.is_number_integer()) bad(name, range);
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) bad(name, range);
  const std::int64_t n = v.get<std::int64_t>();
  if (n < lo || n > hi) bad(name, range);
  return n;
}

Rules rules_field(const json& body) {
  try {
    return Rules::parse(string_field(body, "rules", kDefaultRules));
  } catch (const HttpError&) {
    throw;
  } catch (const std::exception& e) {
    bad("rules", std::string("rules: ") + e.what());
  }
}

Position fen_position(const std::string& fen, const Rules& rules) {
  try {
    return start_position(fen, rules);
  } catch (const std::exception& e) {
    bad("fen", std::string("fen: ") + e.what());
  }
}

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

// The socket of the request's connection (found by its two ends among the
// process's open files), or -1. httplib hands a response's writer no
// socket, and a client that goes away is otherwise seen only at the next
// write, which a long search may not make for a while.
int connection_socket(const httplib::Request& req) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    const int fd = std::atoi(entry.path().filename().c_str());
    sockaddr_storage peer{}, local{};
    socklen_t peer_size = sizeof peer, local_size = sizeof local;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_size) != 0) continue;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_size) != 0) continue;
    auto ends = [](const sockaddr_storage& a, std::string& host, int& port) {
      char text[INET6_ADDRSTRLEN] = {};
      if (a.ss_family == AF_INET) {
        const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
        inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
        port = ntohs(in->sin_port);
      } else if (a.ss_family == AF_INET6) {
        const auto* in = reinterpret_cast<const sockaddr_in6*>(&a);
        inet_ntop(AF_INET6, &in->sin6_addr, text, sizeof text);
        port = ntohs(in->sin6_port);
      } else {
        return false;
      }
      host = text;
      return true;
    };
    std::string peer_host, local_host;
    int peer_port = -1, local_port = -1;
    if (!ends(peer, peer_host, peer_port) || !ends(local, local_host, local_port)) continue;
    if (peer_host == req.remote_addr && peer_port == req.remote_port && local_port == req.local_port) return fd;
  }
  return -1;
}

// Has the other end closed the connection (or has it failed)?
bool peer_closed(int fd) {
  if (fd < 0) return false;
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
  char c;
  return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

// The lines of an analysis's answers, from the engine's threads to the
// connection's.
struct Stream {
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::string> lines;
  bool done = false;  // the query's last answer is in `lines`
};

}  // namespace

class WebServer::Impl {
 public:
  Impl(ServerOptions options, NetworkFactory networks)
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
    routes();
  }

  int bind() {
    if (options_.port == 0) {
      const int port = http_.bind_to_any_port(options_.host);
      if (port <= 0) throw std::runtime_error("cannot listen on " + options_.host + " (any port)");
      options_.port = port;
    } else if (!http_.bind_to_port(options_.host, options_.port)) {
      throw std::runtime_error("cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
                               " (in use, or not an address of this machine)");
    }
    return options_.port;
  }

  void run() {
    // Debian's cpp-httplib (0.11) leaves its accept loop on an accept()
    // error it does not expect (a client that resets its connection before
    // it is accepted), closing the listening socket: the process would live
    // on without answering. Until stop() is asked, the port is bound again
    // and served on; a port that cannot be had back ends the server.
    while (!http_.listen_after_bind() && !stopping_.load()) {
      bool bound = false;
      for (int attempt = 0; attempt < 50 && !bound && !stopping_.load(); ++attempt) {
        bound = http_.bind_to_port(options_.host, options_.port);
        if (!bound) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (!bound) {
        std::fprintf(stderr, "ultima serve: the listening socket failed and %s:%d could not be bound again\n",
                     options_.host.c_str(), options_.port);
        break;
      }
      std::fprintf(stderr, "ultima serve: the listening socket failed; listening again on %s:%d\n",
                   options_.host.c_str(), options_.port);
    }
    // The streams have ended (their providers see the server stopping);
    // what is still queued is answered into sinks nobody reads.
    service_->finish();
  }

  void stop() {
    stopping_ = true;
    http_.stop();
  }

  const ServerOptions& options() const { return options_; }

 private:
  std::atomic<bool> stopping_{false};
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  // Runs a handler, turning HttpError and other exceptions into JSON errors.
  static httplib::Server::Handler guarded(Handler h) {
    return [h](const httplib::Request& req, httplib::Response& res) {
      try {
        h(req, res);
      } catch (const HttpError& e) {
        send_json(res, error_body(e.message, e.field), e.status);
      } catch (const std::exception& e) {
        send_json(res, error_body(std::string("internal error: ") + e.what(), ""), 500);
      }
    };
  }

  void routes() {
    // Each analysis stream and each waiting bot move holds a connection's
    // thread: room for all of them, and for the page's other requests.
    const int connections = options_.max_searches + options_.max_queue + 16;
    http_.new_task_queue = [connections] { return new httplib::ThreadPool(static_cast<std::size_t>(connections)); };
    http_.set_payload_max_length(options_.max_body);
    // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a
    // second server on the same port would start and share the requests.
    http_.set_socket_options([](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    // An idle connection holds a thread, and stopping waits for it.
    http_.set_keep_alive_timeout(1);
    http_.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      if (res.status == 413)
        send_json(res, error_body("the body is over " + std::to_string(options_.max_body) + " bytes", ""), 413);
      else if (res.status == 404)
        send_json(res, error_body("no such path: " + req.method + " " + req.path.substr(0, 200), ""), 404);
      else
        send_json(res, error_body("bad request", ""), res.status);
    });
    http_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      std::string what = "unknown";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      send_json(res, error_body("internal error: " + what, ""), 500);
    });

    http_.Get("/", [](const httplib::Request&, httplib::Response& res) { serve_asset("/index.html", res); });
    http_.Get("/api/info", guarded([this](const httplib::Request&, httplib::Response& res) { info(res); }));
    http_.Get("/api/puzzles", guarded([this](const httplib::Request&, httplib::Response& res) { puzzles(res); }));
    http_.Post("/api/position", guarded([](const httplib::Request& req, httplib::Response& res) {
                 const json body = parse_body(req, {"rules", "fen", "moves"});
                 send_json(res, position_json(replay(body)));
               }));
    http_.Post("/api/bot-move", guarded([this](const httplib::Request& req, httplib::Response& res) { bot_move(req, res); }));
    http_.Post("/api/analyze", guarded([this](const httplib::Request& req, httplib::Response& res) { analyze(req, res); }));
    http_.Post("/api/analyze/stop",
               guarded([this](const httplib::Request& req, httplib::Response& res) { analyze_stop(req, res); }));
    http_.Post("/api/puzzles/check",
               guarded([this](const httplib::Request& req, httplib::Response& res) { puzzle_check(req, res); }));
    http_.Post("/api/pgn/parse", guarded([](const httplib::Request& req, httplib::Response& res) { pgn_parse(req, res); }));
    http_.Post("/api/pgn/write", guarded([](const httplib::Request& req, httplib::Response& res) { pgn_write(req, res); }));
    // Every other GET: an embedded file, or 404 (the error handler).
    http_.Get(R"(/[A-Za-z0-9_./-]+)", [](const httplib::Request& req, httplib::Response& res) {
      if (req.path.rfind("/api/", 0) == 0 || !serve_asset(req.path, res)) res.status = 404;
    });
  }

  static bool serve_asset(const std::string& path, httplib::Response& res) {
    const WebAsset* asset = find_web_asset(path);
    if (!asset) return false;
    res.set_content(asset->content.data(), asset->content.size(), std::string(asset->content_type));
    res.set_header("Cache-Control", "no-cache");
    return true;
  }

  // ---- GET /api/info

  void info(httplib::Response& res) const {
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
    send_json(res, out);
  }

  // ---- POST /api/bot-move

  void bot_move(const httplib::Request& req, httplib::Response& res) {
    const json body =
        parse_body(req, {"rules", "fen", "moves", "bot", "movetime_ms", "wtime", "btime", "winc", "binc", "seed"});
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

    // The time it may take: movetime_ms, else a share of the mover's clock.
    const Color us = game.pos.side_to_move();
    std::int64_t budget_ms = movetime.value_or(0);
    const auto clock = us == kWhite ? wtime : btime;
    if (!budget_ms && clock) {
      const std::int64_t inc = (us == kWhite ? winc : binc).value_or(0);
      budget_ms = std::max<std::int64_t>(10, std::min(*clock / 2, *clock / 30 + inc * 3 / 4));
    }

    auto done = std::make_shared<std::promise<MoveChoice>>();
    std::future<MoveChoice> answer = done->get_future();
    auto pos = std::make_shared<Position>(game.pos);
    const NetworkFactory networks = bot_networks_;
    const auto admission = service_->submit_job([done, pos, bot, budget_ms, seed, networks] {
      try {
        const std::uint64_t move_seed_value = move_seed(seed, 0, pos->game_ply());
        // A level (or search: spec) plays within the time as well as its own budget.
        std::optional<Level> level;
        if (bot.is_level) level = find_level(bot.name);
        else if (bot.spec.rfind("search:", 0) == 0) level = Level::from_pairs(bot.playable_spec().substr(7));
        if (level && budget_ms > 0) {
          level->name = bot.name;
          Searcher searcher(level->hash_mb);
          SearchLimits limits;
          limits.movetime_ms = budget_ms;
          done->set_value(play_level_move(searcher, *level, *pos, move_seed_value, limits));
        } else {
          std::unique_ptr<Player> player = make_player(bot.name, networks);
          player->new_game();
          done->set_value(player->choose(*pos, move_seed_value));
        }
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
    send_json(res, out);
  }

  [[noreturn]] void busy() const {
    bad("", "busy: this server runs " + std::to_string(options_.max_searches) + " searches at once and queues " +
                std::to_string(options_.max_queue) + " more, and all are taken; try again soon",
        503);
  }

  // ---- POST /api/analyze

  void analyze(const httplib::Request& req, httplib::Response& res) {
    json query = body_object(req, "the body must be a JSON object (one analysis query)");
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
    auto stream = std::make_shared<Stream>();
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
    const auto admission = service_->submit(query.dump(), sink, client);
    if (admission != AnalysisService::Admission::kQueued) {
      forget(id);
      if (admission == AnalysisService::Admission::kBusy) busy();
      // An error answer names the field at fault.
      std::lock_guard lock(stream->mutex);
      json answer = stream->lines.empty() ? json::object() : json::parse(stream->lines.front());
      bad(answer["field"].is_string() ? answer["field"].get<std::string>() : "",
          answer.value("error", std::string("the query was not taken")));
    }
    if (std::all_of(id.begin(), id.end(), [](char c) { return c >= 0x20 && c < 0x7f; }))
      res.set_header("X-Query-Id", id);
    const int socket = connection_socket(req);
    res.set_chunked_content_provider(
        "application/x-ndjson",
        [this, stream, socket, id](std::size_t, httplib::DataSink& out) {
          std::unique_lock lock(stream->mutex);
          stream->cv.wait_for(lock, std::chrono::milliseconds(200),
                              [&] { return !stream->lines.empty() || stream->done; });
          while (!stream->lines.empty()) {
            const std::string line = std::move(stream->lines.front());
            stream->lines.pop_front();
            lock.unlock();
            if (!out.write(line.data(), line.size())) return false;
            lock.lock();
          }
          if (stream->done) {
            lock.unlock();
            forget(id);  // before the end reaches the client, who may reuse the id at once
            out.done();
            return true;
          }
          lock.unlock();
          return out.is_writable() && !peer_closed(socket);
        },
        [this, stream, id, client](bool) {
          // Ended early (the client went away, the server stops): the
          // search stops too.
          bool done = false;
          {
            std::lock_guard lock(stream->mutex);
            done = stream->done;
          }
          if (!done) service_->terminate(client, id);
          forget(id);
        });
  }

  void forget(const std::string& id) {
    std::lock_guard lock(ids_mutex_);
    running_ids_.erase(id);
  }

  void analyze_stop(const httplib::Request& req, httplib::Response& res) {
    const json body = parse_body(req, {"id"});
    const std::string id = string_field(body, "id", "");
    if (!body.contains("id")) bad("id", "id: missing (the query's id)");
    std::string client;
    {
      std::lock_guard lock(ids_mutex_);
      const auto it = running_ids_.find(id);
      if (it != running_ids_.end()) client = it->second;
    }
    const int stopped = client.empty() ? 0 : service_->terminate(client, id);
    send_json(res, {{"stopped", stopped > 0}});
  }

  // ---- puzzles

  void puzzles(httplib::Response& res) const {
    if (!puzzles_error_.empty()) bad("", "the puzzle file cannot be read: " + puzzles_error_, 500);
    json list = json::array();
    for (const Puzzle& p : puzzles_) {
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
      list.push_back(j);
    }
    send_json(res, {{"puzzles", list}});
  }

  void puzzle_check(const httplib::Request& req, httplib::Response& res) const {
    const json body = parse_body(req, {"id", "moves"});
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
          return send_json(res, out);
        }
        out["correct"] = false;
        out["expected"] = to_coordinate(expected);
        return send_json(res, out);
      }
    }
    out["solved"] = moves.size() == p.solution.size();
    if (moves.size() % 2 == 1 && moves.size() < p.solution.size())
      out["reply"] = to_coordinate(p.solution[moves.size()]);
    send_json(res, out);
  }

  // ---- PGN

  static void pgn_parse(const httplib::Request& req, httplib::Response& res) {
    const json body = parse_body(req, {"pgn"});
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
    send_json(res, {{"games", games}});
  }

  static void pgn_write(const httplib::Request& req, httplib::Response& res) {
    const json body = parse_body(req, {"tags", "rules", "fen", "moves", "result"});
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
    send_json(res, {{"pgn", text}});
  }

  ServerOptions options_;
  NetworkFactory networks_;
  NetworkFactory bot_networks_;
  std::unique_ptr<AnalysisService> service_;
  std::vector<Bot> catalogue_;
  std::string catalogue_error_;
  std::vector<Puzzle> puzzles_;
  std::string puzzles_error_;
  httplib::Server http_;
  std::atomic<std::uint64_t> serial_{0};
  std::mutex ids_mutex_;
  std::map<std::string, std::string> running_ids_;  // analysis id -> its client key
};

WebServer::WebServer(ServerOptions options, NetworkFactory networks)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(networks))) {}

WebServer::~WebServer() = default;

int WebServer::bind() { return impl_->bind(); }

void WebServer::run() { impl_->run(); }

void WebServer::stop() { impl_->stop(); }

const ServerOptions& WebServer::options() const { return impl_->options(); }

}  // namespace ultima
