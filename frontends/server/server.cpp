// The web board's server: HTTP over the JSON API's handlers (handlers.h),
// and the page's files. This is the one file that includes httplib.h.
#include "frontends/server/server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>

#include "frontends/server/handlers.h"
#include "frontends/server/web_assets.h"

namespace ultima {
namespace {

// Answers with a handler's reply.
void send_reply(httplib::Response& res, const ApiReply& reply) {
  res.status = reply.status;
  res.set_content(reply.body, "application/json");
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

}  // namespace

class WebServer::Impl {
 public:
  Impl(ServerOptions options, NetworkFactory networks)
      : api_(std::move(options), std::move(networks)), options_(api_.options()) {
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
    api_.finish();
  }

  void stop() {
    stopping_ = true;
    api_.online().shutdown();  // the long polls answer at once
    http_.stop();
  }

  const ServerOptions& options() const { return options_; }

 private:
  void routes() {
    // Each analysis stream and each waiting bot move holds a connection's
    // thread: room for all of them, and for the page's other requests.
    // So does each page waiting on a game between browsers.
    const int connections = options_.max_searches + options_.max_queue + options_.max_waiters + 16;
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
        send_reply(res, api_error(413, "the body is over " + std::to_string(options_.max_body) + " bytes"));
      else if (res.status == 404)
        send_reply(res, api_error(404, "no such path: " + req.method + " " + req.path.substr(0, 200)));
      else
        send_reply(res, api_error(res.status, "bad request"));
    });
    http_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      std::string what = "unknown";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      send_reply(res, api_error(500, "internal error: " + what));
    });

    // Each address's requests, as a token bucket: max_requests_per_minute
    // on average, a quarter of that at once; beyond, 429 before any work.
    http_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (limiter_.allow(req.remote_addr)) return httplib::Server::HandlerResponse::Unhandled;
      send_reply(res, api_error(429, "too many requests from this address (at most " +
                                         std::to_string(options_.max_requests_per_minute) +
                                         " a minute); wait a moment"));
      return httplib::Server::HandlerResponse::Handled;
    });
    http_.Get("/", [](const httplib::Request&, httplib::Response& res) { serve_asset("/index.html", res); });
    http_.Get("/api/info", route(&ServerApi::info));
    http_.Get("/api/puzzles", route(&ServerApi::puzzles));
    http_.Post("/api/position", route(&ServerApi::position));
    http_.Post("/api/bot-move", [this](const httplib::Request& req, httplib::Response& res) {
      send_reply(res, api_.bot_move(req.body, req.remote_addr));
    });
    http_.Post("/api/analyze", [this](const httplib::Request& req, httplib::Response& res) { analyze(req, res); });
    http_.Post("/api/analyze/stop", route(&ServerApi::analyze_stop));
    http_.Post("/api/puzzles/check", route(&ServerApi::puzzle_check));
    http_.Post("/api/puzzles/next", route(&ServerApi::puzzle_next));
    http_.Get("/api/course", route(&ServerApi::course));
    http_.Post("/api/course/check", route(&ServerApi::course_check));
    http_.Post("/api/players/new", route(&ServerApi::player_new));
    http_.Post("/api/players/state", route(&ServerApi::player_state));
    http_.Post("/api/pgn/parse", route(&ServerApi::pgn_parse));
    http_.Post("/api/pgn/write", route(&ServerApi::pgn_write));
    // Games between browsers (online.h).
    OnlineGames& online = api_.online();
    http_.Post("/api/games/new", [&online](const httplib::Request& req, httplib::Response& res) {
      send_reply(res, online.create(req.body, req.remote_addr));
    });
    http_.Post("/api/games/join", [&online](const httplib::Request& req, httplib::Response& res) {
      send_reply(res, online.join(req.body));
    });
    http_.Post("/api/games/state", [&online](const httplib::Request& req, httplib::Response& res) {
      send_reply(res, online.state(req.body));
    });
    http_.Post("/api/games/act", [&online](const httplib::Request& req, httplib::Response& res) {
      send_reply(res, online.act(req.body));
    });
    http_.Post("/api/games/wait", [&online](const httplib::Request& req, httplib::Response& res) {
      send_reply(res, online.wait(req.body));
    });
    http_.Get(R"(/api/games/([a-z0-9]{1,40})\.pgn)", [&online](const httplib::Request& req, httplib::Response& res) {
      const std::optional<std::string> pgn = online.pgn(req.matches[1]);
      if (!pgn) return send_reply(res, api_error(404, "no game '" + std::string(req.matches[1]) + "'", "id"));
      res.set_content(*pgn, "application/x-chess-pgn");
      res.set_header("Content-Disposition", "attachment; filename=\"ultima-" + std::string(req.matches[1]) + ".pgn\"");
    });
    // Every other GET: an embedded file, or 404 (the error handler).
    http_.Get(R"(/[A-Za-z0-9_./-]+)", [](const httplib::Request& req, httplib::Response& res) {
      if (req.path.rfind("/api/", 0) == 0 || !serve_asset(req.path, res)) res.status = 404;
    });
  }

  // A route answered by one of the API's handlers: of the request's body
  // (a POST), or of nothing (a GET).
  template <typename Handler>
  httplib::Server::Handler route(Handler handler) {
    return [this, handler](const httplib::Request& req, httplib::Response& res) {
      if constexpr (std::is_invocable_v<Handler, ServerApi&, const std::string&>)
        send_reply(res, std::invoke(handler, api_, req.body));
      else
        send_reply(res, std::invoke(handler, api_));
    };
  }

  static bool serve_asset(const std::string& path, httplib::Response& res) {
    const WebAsset* asset = find_web_asset(path);
    if (!asset) return false;
    res.set_content(asset->content.data(), asset->content.size(), std::string(asset->content_type));
    res.set_header("Cache-Control", "no-cache");
    return true;
  }

  // ---- POST /api/analyze: the query's answers streamed as they come, one
  // JSON line each, until its last; a client that goes away stops it.

  void analyze(const httplib::Request& req, httplib::Response& res) {
    const AnalysisStart query = api_.analyze(req.body, req.remote_addr);
    if (!query.stream) return send_reply(res, query.error);
    const std::string& id = query.id;
    if (std::all_of(id.begin(), id.end(), [](char c) { return c >= 0x20 && c < 0x7f; }))
      res.set_header("X-Query-Id", id);
    const int socket = connection_socket(req);
    res.set_chunked_content_provider(
        "application/x-ndjson",
        [this, query, socket](std::size_t, httplib::DataSink& out) {
          AnalysisStream& stream = *query.stream;
          std::unique_lock lock(stream.mutex);
          stream.cv.wait_for(lock, std::chrono::milliseconds(200),
                             [&] { return !stream.lines.empty() || stream.done; });
          while (!stream.lines.empty()) {
            const std::string line = std::move(stream.lines.front());
            stream.lines.pop_front();
            lock.unlock();
            if (!out.write(line.data(), line.size())) return false;
            lock.lock();
          }
          if (stream.done) {
            lock.unlock();
            api_.forget(query.id);  // before the end reaches the client, who may reuse the id at once
            out.done();
            return true;
          }
          lock.unlock();
          return out.is_writable() && !peer_closed(socket);
        },
        // Ended, or ended early (the client went away, the server stops):
        // the search stops too.
        [this, query](bool) { api_.end_analysis(query); });
  }

  // Requests per address (a token bucket each).
  class Limiter {
   public:
    explicit Limiter(int per_minute)
        : rate_(per_minute / 60.0), burst_(std::max(10.0, per_minute / 4.0)) {}
    bool allow(const std::string& address) {
      const double now = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
      std::lock_guard lock(mutex_);
      if (buckets_.size() > 100000) buckets_.clear();  // a flood of addresses starts them all afresh
      auto [it, made] = buckets_.try_emplace(address, Bucket{burst_, now});
      Bucket& b = it->second;
      b.tokens = std::min(burst_, b.tokens + (now - b.at) * rate_);
      b.at = now;
      if (b.tokens < 1) return false;
      b.tokens -= 1;
      return true;
    }

   private:
    struct Bucket {
      double tokens;
      double at;
    };
    double rate_, burst_;
    std::mutex mutex_;
    std::map<std::string, Bucket> buckets_;
  };

  std::atomic<bool> stopping_{false};
  // The handlers before the server: httplib's threads, which call them,
  // end first.
  ServerApi api_;
  ServerOptions options_;  // api_'s, with the port bound
  Limiter limiter_{options_.max_requests_per_minute};
  httplib::Server http_;
};

WebServer::WebServer(ServerOptions options, NetworkFactory networks)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(networks))) {}

WebServer::~WebServer() = default;

int WebServer::bind() { return impl_->bind(); }

void WebServer::run() { impl_->run(); }

void WebServer::stop() { impl_->stop(); }

const ServerOptions& WebServer::options() const { return impl_->options(); }

}  // namespace ultima
