#include "fuzz_targets.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>
#include <cctype>
#include <nlohmann/json.hpp>

#include "engine/play/pgn.h"
#include "frontends/server/handlers.h"
#include "frontends/server/online.h"
#include "frontends/uci/uci.h"
#include "engine/rules/rules.h"
#include "nn/data/sample.h"
#include "nn/model_file.h"
#include "training/nnue/nnue_train.h"
#include "nn/payload_format.h"
#include "training/loop/run_config.h"
#include "training/train.h"

namespace ultima::fuzz {
namespace {

std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz: broken promise: %s\n", what.c_str());
  std::abort();
}

// Runs `body`; the parser's documented error (`Expected`) is a fine answer
// to bad input. Anything else escapes and libFuzzer (or the replay test)
// reports it, except std::bad_alloc, std::length_error and
// std::out_of_range, which say a size from the input was trusted: those
// abort with their message.
template <class Expected, class Body>
void expect_only(Body&& body) {
  try {
    body();
  } catch (const std::bad_alloc&) {
    broken("bad_alloc: a size taken from the input");
  } catch (const std::length_error& e) {
    broken(std::string("length_error: ") + e.what());
  } catch (const std::out_of_range& e) {
    broken(std::string("out_of_range: ") + e.what());
  } catch (const Expected&) {
  }
}

// The input as a file, for the readers that take a path; one file per
// process, rewritten for each input.
std::string as_file(const std::uint8_t* data, std::size_t size, const char* suffix) {
  static const std::string dir = [] {
    const std::string d = (std::filesystem::temp_directory_path() / ("ultima-fuzz-" + std::to_string(getpid()))).string();
    std::filesystem::create_directories(d);
    return d;
  }();
  const std::string path = dir + "/input" + suffix;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  return path;
}

const Rules& rules_by(std::uint8_t selector) {
  static const std::vector<Rules> presets = [] {
    std::vector<Rules> r;
    for (const char* name : {"abbott1963", "abbott1962", "cambridge", "boardspace", "zillions"})
      r.push_back(Rules::preset(name));
    return r;
  }();
  return presets[selector % presets.size()];
}

}  // namespace

// First byte: the rule set; the rest: a FEN.
int fen(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const Rules& rules = rules_by(data[0]);
  const std::string text(text_of(data + 1, size - 1));
  expect_only<FenError>([&] {
    Position pos = Position::from_fen(text, rules);
    const std::string written = pos.fen();
    if (Position::from_fen(written, rules).fen() != written) broken("FEN does not read back: " + written);
    MoveList list;
    generate_legal(pos, list);
    if (count_legal(pos) != list.size()) broken("count_legal differs from the list in " + written);
    game_status(pos);
    for (const Move& m : list) {
      pos.make(m);
      pos.unmake();
    }
    if (pos.fen() != written) broken("make/unmake changed " + written);
  });
  return 0;
}

// First byte: one of a few positions; the rest: a move in either form.
int move_text(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const char* kFens[] = {
      "clxwkxli/pppppppp/8/8/8/8/PPPPPPPP/ILXKWXLC w 0 1",
      "k7/8/8/3p4/3W4/8/1P6/2i4K w 0 1",
      "8/8/8/c1PpkpP1/4X3/4w3/8/K7 w 0 1",
      "4k3/8/2l5/8/2L1p3/8/3P4/3K4 b 0 1",
  };
  const std::uint8_t which = data[0] % 4;
  const Position pos = Position::from_fen(kFens[which], which == 2 ? Rules::preset("zillions") : Rules{});
  const std::string text(text_of(data + 1, size - 1));
  expect_only<MoveError>([&] {
    const Move m = parse_move(pos, text);
    MoveList list;
    generate_legal(pos, list);
    bool found = false;
    for (const Move& legal : list) found |= legal == m;
    if (!found) broken("parse_move gave an illegal move for '" + text + "'");
    if (!(parse_move(pos, to_coordinate(m)) == m)) broken("coordinate text does not read back");
  });
  return 0;
}

// A number a word of a `go` or `setoption` line may carry at most in a
// fuzzed session; 0 for words left alone.
std::uint64_t uci_cap(const std::string& word) {
  static const std::pair<const char*, std::uint64_t> caps[] = {
      {"depth", 1},  {"nodes", 100}, {"movetime", 1}, {"wtime", 20}, {"btime", 20}, {"winc", 2},
      {"binc", 2},   {"mate", 1},    {"hash", 1},     {"threads", 2}, {"mctsthreads", 2}, {"mctsbatch", 4},
      {"multipv", 3}};
  std::string lower;
  for (const char c : word) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [name, cap] : caps)
    if (lower == name) return cap;
  return 0;
}

// The input with its costly numbers bounded: `go depth 30` becomes `go
// depth 2`, a Hash of 4096 MB one of 1, and so on (uci_cap), so that an
// input costs a few small searches whatever it asks. Only numbers that
// read as such are lowered: a malformed one (`1O`, `-3`, twenty digits)
// reaches the parser as it came. An input runs at most kMaxSearches
// searches: `go` lines after those are left out, so that what an input
// costs stays bounded, and the commands around them still run. Lines are
// otherwise kept word for word.
constexpr int kMaxSearches = 4;

std::string cheap_uci(std::string_view text) {
  std::string out;
  int searches = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(at, end - at));
    at = end + 1;
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string word; words >> word;) w.push_back(word);
    const bool go = !w.empty() && w[0] == "go";
    if (go && ++searches > kMaxSearches) continue;
    const bool option = !w.empty() && w[0] == "setoption";
    // go: "depth 30"; setoption: "name Hash value 4096" (names are one word).
    // Leading zeros do not make a number malformed (`nodes 000107737631`
    // is 107 million nodes to the parser), so they do not hide it from its cap.
    auto lower = [](std::string& value, std::uint64_t cap) {
      if (!cap || value.empty() || value.find_first_not_of("0123456789") != std::string::npos) return;
      const std::size_t first = std::min(value.find_first_not_of('0'), value.size());
      // Twenty digits and more overflow the parser's 64-bit integer: its
      // error to give. Nineteen still parse (up to 9.2e18), so they are capped.
      if (value.size() - first > 19) return;
      if (first < value.size() && std::stoull(value.substr(first)) > cap) value = std::to_string(cap);
    };
    if (go)
      for (std::size_t i = 1; i + 1 < w.size(); ++i) lower(w[i + 1], uci_cap(w[i]));
    if (option && w.size() >= 5 && w[1] == "name" && w[3] == "value") lower(w[4], uci_cap(w[2]));
    if (go || option) {
      line.clear();
      for (const std::string& word : w) line += (line.empty() ? "" : " ") + word;
    }
    out += line;
    out += '\n';
  }
  return out;
}

// UCI commands as a GUI would send them, with their searches kept small
// (cheap_uci): what is fuzzed is the reading of commands and the engine's
// state through them (positions, options, searches started, waited for,
// stopped), not the search's speed. Searches are cut short by the end of
// the input.
int uci_lines(const std::uint8_t* data, std::size_t size) {
  const std::string text = cheap_uci(text_of(data, size));
  // No network files: each would be a LibTorch load.
  for (const char* slow : {"WeightsFile", "weights="})
    if (text.find(slow) != std::string::npos) return 0;
  std::istringstream in(text);
  std::ostringstream out;
  run_uci(in, out, {}, 1);
  return 0;
}

namespace {

// The web server's handlers that take a request body and answer at once
// (no search): one server for the process, with a game between two seats
// and a puzzle player made at the start. In a body, $ID, $WHITE, $BLACK and
// $PLAYER stand for that game's id, its seats' tokens and the player's
// token, so that inputs reach past "no such game".
struct FuzzServer {
  FuzzServer() : api(options(), {}), store(":memory:"), online(store, online_options()) {
    const nlohmann::json made = nlohmann::json::parse(online.create(R"({"minutes": 1, "colour": "white"})", "x").body);
    id = made["id"];
    white = made["token"];
    black = nlohmann::json::parse(online.join(nlohmann::json{{"id", id}}.dump()).body)["token"];
    player = nlohmann::json::parse(api.player_new("{}").body)["token"];
    // Games against a bot: the turns are answered after each request.
    BotHost host;
    host.known = [](const std::string& name) { return name == "fuzzbot"; };
    host.start = [this](const BotTurn& turn) { turns.push_back(turn); };
    online.set_bots(host);
  }
  static ServerOptions options() {
    ServerOptions o;
    o.max_searches = 1;
    o.db = ":memory:";
    return o;
  }
  static OnlineOptions online_options() {
    OnlineOptions o;
    o.wait_ms = 0;  // a long poll answers at once
    return o;
  }
  ServerApi api;
  Store store;
  OnlineGames online;
  std::string id, white, black, player;
  std::vector<BotTurn> turns;  // bots' turns not yet answered
};

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
}

}  // namespace

int server_requests(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static FuzzServer server;
  std::string body(text_of(data + 1, size - 1));
  replace_all(body, "$ID", server.id);
  replace_all(body, "$WHITE", server.white);
  replace_all(body, "$BLACK", server.black);
  replace_all(body, "$PLAYER", server.player);
  ApiReply reply;
  switch (data[0] % 12) {
    case 0: reply = server.api.position(body); break;
    case 1: reply = server.api.puzzle_check(body); break;
    case 2: reply = server.api.pgn_parse(body); break;
    case 3: reply = server.api.pgn_write(body); break;
    case 4: reply = server.api.puzzle_next(body); break;
    case 5: reply = server.api.player_state(body); break;
    case 6: reply = server.online.create(body, "fuzz"); break;
    case 7: reply = server.online.join(body); break;
    case 8: reply = server.online.state(body); break;
    case 9: reply = server.online.act(body); break;
    case 10: reply = server.online.wait(body); break;
    default: reply = server.api.analyze_stop(body); break;
  }
  // The bots answer: with a move taken from the input, legal or not.
  std::vector<BotTurn> turns;
  turns.swap(server.turns);
  for (const BotTurn& turn : turns) server.online.bot_moved(turn, body.substr(0, 4));
  // Every answer is JSON, and bad input a 4xx naming the problem: a 500
  // (an exception the handler did not expect) is a finding.
  if (reply.status >= 500 && reply.status != 503) broken("server: status " + std::to_string(reply.status) + ": " + reply.body);
  nlohmann::json answer;
  try {
    answer = nlohmann::json::parse(reply.body);
  } catch (const std::exception&) {
    broken("server: an answer that is not JSON: " + reply.body.substr(0, 200));
  }
  if (reply.status != 200 && !(answer.is_object() && answer.contains("error")))
    broken("server: an error without its message: " + reply.body.substr(0, 200));
  return 0;
}

int pgn(const std::uint8_t* data, std::size_t size) {
  expect_only<PgnError>([&] {
    for (const GameRecord& r : read_pgn(text_of(data, size))) {
      const std::string written = write_pgn(r);
      if (read_pgn(written).size() != 1) broken("a written record does not read back as one game");
    }
  });
  return 0;
}

int run_config(const std::uint8_t* data, std::size_t size) {
  // RunConfig::parse names a bad key or value with std::invalid_argument;
  // YAML syntax errors come as yaml-cpp's exceptions (runtime errors).
  expect_only<std::invalid_argument>([&] {
    try {
      const loop::RunConfig c = loop::RunConfig::parse(std::string(text_of(data, size)), "fuzz");
      const loop::RunConfig again = loop::RunConfig::parse(c.to_yaml(), "fuzz again");
      if (!c.differing_keys(again).empty()) broken("a config does not read back from its own YAML");
    } catch (const std::runtime_error&) {
    }
  });
  return 0;
}

int model_file(const std::uint8_t* data, std::size_t size) {
  const std::string path = as_file(data, size, ".unn");
  expect_only<nn::ModelFileError>([&] {
    const nn::ModelFile file = nn::read_model_file(path);
    try {
      for (const nn::payload::Record& r : nn::payload::read_records(file.payload.data(), file.payload.size()))
        if (r.data_at + r.data_bytes > file.payload.size()) broken("a tensor's data lies past the payload");
    } catch (const std::runtime_error&) {
    }
  });
  return 0;
}

int checkpoint(const std::uint8_t* data, std::size_t size) {
  nn::NetArchitecture arch;
  arch.input_planes = 1;
  arch.policy_planes = 1;
  expect_only<std::runtime_error>([&] {
    const training::Checkpoint c = training::parse_checkpoint(text_of(data, size), "fuzz.ckpt", arch);
    if (c.state.size() + c.average.size() > size) broken("a checkpoint larger than its file");
  });
  return 0;
}

int sample_shard(const std::uint8_t* data, std::size_t size) {
  const std::string path = as_file(data, size, ".shard");
  expect_only<data::ShardError>([&] { data::read_shard(path); });
  return 0;
}

int nnue_file(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  expect_only<nnue::FileError>([&] {
    const nnue::Network net = nnue::deserialize(bytes, "fuzz.unnue");
    // What reads must evaluate, and write back to the same bytes.
    if (nnue::serialize(net) != bytes) broken("a network file does not write back to its own bytes");
    nnue::evaluate_full(net, Position::start());
  });
  return 0;
}

int nnue_records(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  expect_only<nnue::DataError>([&] {
    const auto records = nnue::deserialize_records(bytes, "fuzz.data");
    if (nnue::serialize_records(records) != bytes) broken("a record file does not write back to its own bytes");
  });
  return 0;
}

const std::vector<NamedTarget>& all_targets() {
  static const std::vector<NamedTarget> targets = {
      {"fen", fen},
      {"move_text", move_text},
      {"uci_lines", uci_lines},
      {"pgn", pgn},
      {"run_config", run_config},
      {"model_file", model_file},
      {"checkpoint", checkpoint},
      {"sample_shard", sample_shard},
      {"nnue_file", nnue_file},
      {"nnue_records", nnue_records},
      {"server_requests", server_requests},
  };
  return targets;
}

}  // namespace ultima::fuzz
