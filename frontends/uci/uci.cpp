#include "engine/base/text.h"
#include "frontends/uci/uci.h"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cctype>
#include <charconv>
#include <functional>
#include <chrono>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/mcts/material_evaluator.h"
#include "engine/mcts/mcts.h"
#include "engine/mcts/settings.h"
#include "engine/play/bot.h"
#include "engine/play/level.h"
#include "engine/play/player_spec.h"
#include "engine/play/value_fit.h"
#include "engine/rules/movegen.h"
#include "engine/rules/notation.h"
#include "engine/rules/replay.h"
#include "engine/search/search.h"

namespace ultima {
namespace {

constexpr const char* kEngineName = "Ultima 0.1";

class UciEngine {
 public:
  UciEngine(std::ostream& out, NetworkFactory networks, std::size_t hash_mb)
      : out_(out), networks_(std::move(networks)), pos_(Position::start(rules_)), hash_mb_(hash_mb),
        searcher_(hash_mb) {
    declare_options();
  }
  ~UciEngine() { stop_search(); }

  // One UCI option: what the handshake announces, what setoption accepts,
  // and its help (`ultima uci --options`). Declared once, in
  // declare_options(); setoption checks a spin's range, a check's value and
  // a strict combo's choices before `set` runs, and `set` throws with the
  // problem for anything else.
  struct Option {
    std::string name;
    std::string type;  // spin, check, combo or string
    std::string default_value;
    long long min = 0, max = 0;     // spin
    bool clamp = false;             // spin: values past the range mean its nearer end
    std::vector<std::string> vars;  // combo
    bool strict = true;             // combo: only these values (else `set` decides)
    bool checked = true;            // false: `set` checks the value itself
    std::string help;
    std::function<void(const std::string& value)> set;
  };
  const std::vector<Option>& options() const { return options_; }

  // End of input: let a bounded search finish and answer, as a scripted
  // session expects; an infinite one is stopped.
  void finish() { wait_search(); }

  bool handle(const std::string& line) {
    const std::vector<std::string> t = split_words(line);
    if (t.empty()) return true;
    const std::string& cmd = t[0];
    if (cmd == "quit") return false;
    if (cmd == "uci") {
      uci();
    } else if (cmd == "isready") {
      say("readyok");
    } else if (cmd == "ucinewgame") {
      wait_search();
      searcher_.clear();
      if (bot_player_) bot_player_->new_game();
    } else if (cmd == "setoption") {
      setoption(line);
    } else if (cmd == "position") {
      wait_search();
      position(t);
    } else if (cmd == "go") {
      go(t);
    } else if (cmd == "stop") {
      stop_search();
    } else if (cmd == "ponderhit") {
      ponderhit();
    } else if (cmd == "d") {
      display();
    } else {
      error("unknown command '" + cmd + "'");
    }
    return true;
  }

 private:
  void say(const std::string& text) {
    std::lock_guard<std::mutex> lock(out_mutex_);
    out_ << text << std::endl;
  }
  void error(const std::string& text) { say("info string error " + text); }

  std::vector<std::string> variant_names() const { return preset_names(); }

  void uci() {
    say(std::string("id name ") + kEngineName);
    say("id author the Ultima developers");
    for (const Option& o : options_) {
      std::string line = "option name " + o.name + " type " + o.type + " default " + o.default_value;
      if (o.type == "spin") line += " min " + std::to_string(o.min) + " max " + std::to_string(o.max);
      for (const std::string& v : o.vars) line += " var " + v;
      say(line);
    }
    say("uciok");
  }

  void declare_options() {
    auto add = [this](Option o) { options_.push_back(std::move(o)); };
    add({"Hash", "spin", std::to_string(hash_mb_), 1, 65536, false, {}, true, true,
         "the alpha-beta transposition table, MB",
         [this](const std::string& v) { searcher_.set_hash_mb(std::stoull(v)); }});
    add({"Threads", "spin", "1", 1, 256, false, {}, true, true, "alpha-beta search threads (Lazy SMP)",
         [this](const std::string& v) { searcher_.set_threads(std::stoi(v)); }});
    add({"MultiPV", "spin", "1", 1, 256, false, {}, true, true, "best lines reported",
         [this](const std::string& v) { multipv_ = std::stoi(v); }});
    add({"Ponder", "check", "false", 0, 0, false, {}, true, true,
         "the GUI may send go ponder (nothing to set here)", [](const std::string&) {}});
    add({"UCI_ShowWDL", "check", "false", 0, 0, false, {}, true, true,
         "win/draw/loss per mille in the info lines", [this](const std::string& v) { show_wdl_ = v == "true"; }});
    add({"UCI_Variant", "combo", kDefaultRules, 0, 0, false, variant_names(), false, true,
         "the rule preset, optionally with switches (ultima means the default)",
         [this](const std::string& v) {
           rules_ = Rules::parse(v == "ultima" ? kDefaultRules : v);
           pos_ = Position::start(rules_);
           say("info string variant " + rules_.name() + " files 8 ranks 8 pocket 0 template fairy startpos " +
               rules_.start_fen());
         }});
    add({"UCI_LimitStrength", "check", "false", 0, 0, false, {}, true, true,
         "play as the catalogue's bot nearest UCI_Elo", [this](const std::string& v) {
           limit_strength_ = v == "true";
           update_level();
         }});
    const auto [min_elo, max_elo] = elo_range();
    add({"UCI_Elo", "spin", std::to_string(min_elo), min_elo, max_elo, true, {}, true, true,
         "the strength with UCI_LimitStrength (outside the range: its nearer end)", [this](const std::string& v) {
           elo_ = static_cast<int>(std::stoll(v));
           update_level();
         }});
    std::vector<std::string> levels{"none"};
    for (const Level& l : levels_) levels.push_back(l.name);
    add({"Level", "combo", "none", 0, 0, false, levels, false, true, "play as this graded level",
         [this](const std::string& v) {
           if (v == "none" || v.empty()) {
             named_level_.reset();
           } else {
             auto it = std::find_if(levels_.begin(), levels_.end(), [&](const Level& l) { return l.name == v; });
             if (it == levels_.end()) throw std::invalid_argument("unknown level '" + v + "'");
             named_level_ = *it;
           }
           update_level();
         }});
    std::vector<std::string> bots{"none"};
    for (const Bot& b : catalogue_) bots.push_back(b.name);
    add({"Bot", "combo", "none", 0, 0, false, bots, false, true, "play as this bot of the catalogue",
         [this](const std::string& v) {
           if (v == "none" || v.empty()) {
             named_bot_.reset();
           } else {
             auto it = std::find_if(catalogue_.begin(), catalogue_.end(), [&](const Bot& b) { return b.name == v; });
             if (it == catalogue_.end()) throw std::invalid_argument("unknown bot '" + v + "'");
             named_bot_ = *it;
           }
           update_level();
         }});
    add({"Backend", "combo", "alphabeta", 0, 0, false, {"alphabeta", "mcts"}, true, true,
         "the engine's own search: alpha-beta, or MCTS with WeightsFile's network",
         [this](const std::string& v) { use_mcts_ = v == "mcts"; }});
    add({"EvalFile", "string", "default", 0, 0, false, {}, true, true,
         "the alpha-beta evaluation: default (the shipped network), none (hand-written) or a network file",
         [this](const std::string& v) {
           // Read now, so that a bad file is reported here and the previous one stays.
           try {
             eval_net_ = load_nnue(v);
           } catch (const std::exception& e) {
             throw std::invalid_argument("EvalFile: " + std::string(e.what()));
           }
           eval_file_ = v;
           eval_loaded_ = true;
           say("info string EvalFile " + (eval_net_ ? v : std::string("none (the hand-written evaluation)")));
         }});
    add({"WeightsFile", "string", "<empty>", 0, 0, false, {}, true, true, "the MCTS backend's network (.unn)",
         [this](const std::string& v) {
           weights_ = (v == "<empty>") ? "" : v;
           mcts_.reset();  // built again, with the new network, at the next go
         }});
    add({"RunDir", "string", "<empty>", 0, 0, false, {}, true, true,
         "a run directory: its best model becomes WeightsFile", [this](const std::string& v) {
           if (v == "<empty>" || v.empty()) return;
           weights_ = run_best_model(v);
           mcts_.reset();
           say("info string WeightsFile " + weights_);
         }});
    add({"Device", "string", "cpu", 0, 0, false, {}, true, true, "where the network runs: cpu, cuda or cuda:N",
         [this](const std::string& v) {
           const bool index = v.size() > 5 && v.rfind("cuda:", 0) == 0 &&
                              std::all_of(v.begin() + 5, v.end(), [](unsigned char c) { return std::isdigit(c); });
           if (v != "cpu" && v != "cuda" && !index) throw std::invalid_argument("Device must be cpu, cuda or cuda:N");
           device_ = v;
           mcts_.reset();  // built again, on the new device, at the next go
         }});
    // The MCTS settings that UCI exposes, from their one declaration.
    for (const MctsSettingInfo& m : mcts_setting_list()) {
      if (m.uci_name.empty()) continue;
      const std::string type = m.type == SettingType::kBool      ? "check"
                               : m.type == SettingType::kInteger ? "spin"
                                                                  : "string";
      add({m.uci_name, type, m.default_text, static_cast<long long>(m.min), static_cast<long long>(m.max), false,
           {}, true, false, m.help, [this, name = m.name, uci_name = m.uci_name](const std::string& v) {
             set_mcts_setting(mcts_settings_, name, v, uci_name);
             mcts_.reset();  // built again, with the new settings, at the next go
           }});
    }
  }

  std::pair<int, int> elo_range() const {
    int lo = 0, hi = 0;
    bool any = false;
    for (const Bot& b : catalogue_) {
      if (!b.has_elo) continue;
      lo = any ? std::min(lo, b.elo) : b.elo;
      hi = any ? std::max(hi, b.elo) : b.elo;
      any = true;
    }
    return {lo, hi};
  }

  void setoption(const std::string& line) {
    // "setoption name <id...> [value <x...>]": names may contain spaces.
    const std::vector<std::string> t = split_words(line);
    std::string name, value;
    bool in_value = false;
    if (t.size() < 3 || t[1] != "name") return error("setoption needs 'name <option> [value <x>]'");
    for (std::size_t i = 2; i < t.size(); ++i) {
      if (t[i] == "value" && !in_value) {
        in_value = true;
        continue;
      }
      std::string& target = in_value ? value : name;
      target += (target.empty() ? "" : " ") + t[i];
    }
    wait_search();
    const std::string key = to_lower(name);
    const auto it = std::find_if(options_.begin(), options_.end(), [&](const Option& o) { return to_lower(o.name) == key; });
    if (it == options_.end()) return error("unknown option '" + name + "'");
    const Option& o = *it;
    if (o.checked && o.type == "spin") {
      long long n = 0;
      if (!parse_integer(value, n) || (!o.clamp && (n < o.min || n > o.max)))
        return error(o.name + " must be an integer" +
                     (o.clamp ? "" : " from " + std::to_string(o.min) + " to " + std::to_string(o.max)));
    } else if (o.checked && o.type == "check" && value != "true" && value != "false") {
      return error(o.name + " must be true or false");
    } else if (o.checked && o.type == "combo" && o.strict &&
               std::find(o.vars.begin(), o.vars.end(), value) == o.vars.end()) {
      std::string choices;
      for (std::size_t i = 0; i < o.vars.size(); ++i)
        choices += (i == 0 ? "" : i + 1 == o.vars.size() ? " or " : ", ") + o.vars[i];
      return error(o.name + " must be " + choices);
    }
    try {
      o.set(value);
    } catch (const std::exception& e) {
      return error(e.what());
    }
  }

  // A named level wins, then a named bot; else UCI_LimitStrength picks the
  // catalogue's bot nearest UCI_Elo (levels among them). Whichever it is
  // becomes a player at the next go (a network loads only then) and plays
  // within the go command's limits and its own budget.
  void update_level() {
    bot_player_.reset();
    bot_spec_.clear();
    if (named_level_) {
      bot_spec_ = named_level_->name;
      say("info string playing as level " + bot_spec_);
      return;
    }
    std::optional<Bot> bot = named_bot_;
    if (!bot && limit_strength_) {
      // A program without network support plays only the bots that need none.
      std::vector<Bot> playable;
      for (const Bot& b : catalogue_)
        if (networks_ || b.network_file().empty()) playable.push_back(b);
      if (const Bot* nearest = nearest_bot(playable, elo_)) bot = *nearest;
    }
    if (!bot) return;
    bot_spec_ = bot->name;
    say("info string playing as " + std::string(bot->is_level ? "level " : "bot ") + bot->name +
        (bot->has_elo ? " (Elo " + std::to_string(bot->elo) + ")" : ""));
  }

  void position(const std::vector<std::string>& t) {
    // Built on a copy: a bad command leaves the position as it was.
    std::size_t i = 1;
    Position next;
    try {
      if (t.size() >= 2 && t[1] == "startpos") {
        next = Position::start(rules_);
        i = 2;
      } else if (t.size() >= 2 && t[1] == "fen") {
        std::string fen;
        for (i = 2; i < t.size() && t[i] != "moves"; ++i) fen += t[i] + " ";
        next = Position::from_fen(fen, rules_);
      } else {
        return error("position needs 'startpos' or 'fen <FEN>'");
      }
      if (i < t.size()) {
        if (t[i] != "moves") return error("expected 'moves' after the position, got '" + t[i] + "'");
        next = replay_game(next, std::vector<std::string>(t.begin() + static_cast<std::ptrdiff_t>(i) + 1, t.end()))
                   .last();
      }
    } catch (const std::exception& e) {
      return error(e.what());
    }
    pos_ = next;
  }

  // Reads the parameters of "go" into `limits`. Returns the problem with
  // them ("" when there is none): a go with a problem searches nothing.
  std::string parse_go(const std::vector<std::string>& t, SearchLimits& limits, bool& ponder) const {
    static const std::vector<std::string> kKeys = {"infinite", "ponder", "depth", "nodes",     "movetime", "wtime",
                                                   "btime",    "winc",   "binc",  "movestogo", "mate",     "searchmoves"};
    for (std::size_t i = 1; i < t.size(); ++i) {
      const std::string& key = t[i];
      if (key == "infinite") {
        limits.infinite = true;
        continue;
      }
      if (key == "ponder") {
        ponder = true;
        continue;
      }
      if (key == "searchmoves") {
        for (; i + 1 < t.size() && std::find(kKeys.begin(), kKeys.end(), t[i + 1]) == kKeys.end(); ++i) {
          try {
            limits.root_moves.push_back(parse_coordinate(pos_, t[i + 1]));
          } catch (const std::exception& e) {
            return "go: searchmoves: " + std::string(e.what());
          }
        }
        if (limits.root_moves.empty()) return "go: searchmoves needs at least one move";
        continue;
      }
      if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) return "go: unknown parameter '" + key + "'";
      long long n = 0;
      if (i + 1 >= t.size() || !parse_integer(t[i + 1], n) || n < 0)
        return "go: '" + key + "' needs a non-negative number, got '" + (i + 1 < t.size() ? t[i + 1] : "") + "'";
      ++i;
      if (key == "depth") limits.depth = static_cast<int>(std::min<long long>(n, kMaxPly - 2));
      else if (key == "nodes") limits.nodes = static_cast<std::uint64_t>(n);
      else if (key == "movetime") limits.movetime_ms = n;
      else if (key == "wtime") limits.time_ms[kWhite] = n;
      else if (key == "btime") limits.time_ms[kBlack] = n;
      else if (key == "winc") limits.inc_ms[kWhite] = n;
      else if (key == "binc") limits.inc_ms[kBlack] = n;
      else if (key == "movestogo") limits.movestogo = static_cast<int>(n);
      else if (key == "mate") {
        if (n < 1) return "go: 'mate' needs a number of moves from 1";
        limits.mate = static_cast<int>(std::min<long long>(n, (kMaxPly - 2) / 2));
      }
    }
    return "";
  }

  void go(const std::vector<std::string>& t) {
    wait_search();
    SearchLimits limits;
    limits.multipv = multipv_;
    bool ponder = false;
    const std::string problem = parse_go(t, limits, ponder);
    if (!problem.empty()) return error(problem + "; not searching");
    const GameStatus status = game_status(pos_);
    if (status.over()) {
      say(std::string("info string game over: ") + termination_name(status.termination) + " " +
          outcome_text(status.outcome));
      say("bestmove (none)");
      return;
    }
    if (ponder) {
      // Searched without end until "ponderhit" (then with these limits) or "stop".
      ponder_limits_ = limits;
      pondering_ = true;
      limits.infinite = true;
    }
    start(limits);
  }

  // The opponent played the move pondered on: the pondering search ends
  // without an answer and the real one starts, on the clock "go ponder" gave
  // (the transposition table, or the tree, keeps what pondering found).
  void ponderhit() {
    if (!pondering_) return;
    quiet_ = true;
    stop_search();
    quiet_ = false;
    start(ponder_limits_);
  }

  void start(const SearchLimits& limits) {
    // A mate search is alpha-beta's, whatever the backend.
    if (use_mcts_ && limits.mate == 0) {
      if (!ensure_mcts()) return;
      return go_mcts(limits);
    }
    searching_ = true;
    // Nothing but "stop" ends a search without limits: treat it as infinite
    // when the input ends.
    const Color us = pos_.side_to_move();
    infinite_ = limits.infinite || (limits.depth == 0 && limits.nodes == 0 && limits.movetime_ms == 0 &&
                                    limits.time_ms[us] == 0 && limits.inc_ms[us] == 0 && limits.mate == 0 &&
                                    bot_spec_.empty());
    if (!bot_spec_.empty() && !bot_player_ && limits.mate == 0) {
      try {
        bot_player_ = make_player(bot_spec_, networks_);
        bot_player_->new_game();
      } catch (const std::exception& e) {
        error("cannot start bot " + bot_spec_ + ": " + e.what() + "; the engine's search answers");
      }
    }
    worker_ = std::thread([this, limits] {
      Position pos = pos_;
      auto on_info = [this](const SearchInfo& info) { report(info); };
      Move best, ponder;
      std::string verdict;
      bool answered = false;
      SearchLimits search_limits = limits;
      if (!bot_spec_.empty() && limits.mate == 0) {
        // A bot that cannot start or fails (a network that cannot run) is
        // reported, and the engine's own search answers instead, within
        // go's limits or else to a short depth: a GUI always gets a move.
        if (bot_player_) {
          try {
            MoveLimits move_limits = move_limits_of(limits);
            move_limits.on_info = on_info;
            best = bot_player_->choose(pos, pos.key() ^ 0x1EE7, move_limits).move;
            answered = true;
          } catch (const std::exception& e) {
            error("bot " + bot_spec_ + " failed: " + e.what() + "; the engine's search answers");
          }
        }
        if (!answered && !limits.infinite && limits.depth == 0 && limits.nodes == 0 && limits.movetime_ms == 0 &&
            limits.time_ms[pos.side_to_move()] == 0)
          search_limits.depth = 4;
      }
      if (answered) {
        // The bot's move.
      } else {
        // The engine's own evaluation, whatever a level played with before.
        searcher_.set_weights(EvalWeights{});
        searcher_.set_eval_noise(0, 0);
        searcher_.set_network(evaluation());
        const SearchResult r = searcher_.search(pos, search_limits, on_info);
        best = r.best;
        if (!r.lines.empty() && r.lines[0].pv.size() > 1) ponder = r.lines[0].pv[1];
        if (limits.mate > 0) {
          const int score = r.lines.empty() ? 0 : r.lines[0].score;
          const int moves = score >= kMateBound ? (kMateScore - score + 1) / 2 : 0;
          if (moves > 0 && moves <= limits.mate)
            verdict = "info string mate in " + std::to_string(moves) + " found";
          else if (r.depth >= 2 * limits.mate - 1)
            verdict = "info string no mate in " + std::to_string(limits.mate);
          else
            verdict = "info string no mate in " + std::to_string(limits.mate) + " found before the search stopped (depth " +
                      std::to_string(r.depth) + ")";
        }
      }
      // With "go infinite" the answer waits for "stop", as UCI requires.
      while (limits.infinite && !stop_requested_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      if (!quiet_) {
        if (!verdict.empty()) say(verdict);
        std::string answer = "bestmove " + to_coordinate(best);
        if (!ponder.is_null()) answer += " ponder " + to_coordinate(ponder);
        say(answer);
      }
      searching_ = false;
    });
  }

  // The network of EvalFile, read at its first use; when the shipped one is
  // missing the hand-written evaluation answers, and the GUI is told once.
  std::shared_ptr<const nnue::Network> evaluation() {
    if (eval_loaded_) return eval_net_;
    eval_loaded_ = true;
    try {
      eval_net_ = load_nnue(eval_file_);
    } catch (const std::exception& e) {
      eval_net_ = nullptr;
      error("EvalFile: " + std::string(e.what()) + "; the hand-written evaluation answers");
    }
    return eval_net_;
  }

  std::shared_ptr<Evaluator> network(const std::string& settings) const {
    if (!networks_) throw std::runtime_error("this program has no neural-network support");
    return networks_(settings);
  }

  // The MCTS backend: the network from WeightsFile, or the material
  // evaluator without one. Built on first use, so LibTorch loads only then.
  bool ensure_mcts() {
    if (mcts_) return true;
    try {
      std::shared_ptr<Evaluator> evaluator = weights_.empty()
                                                 ? std::shared_ptr<Evaluator>(std::make_shared<MaterialEvaluator>())
                                                 : network("weights=" + weights_ + ",device=" + device_ + ",max_batch=" +
                                                           std::to_string(mcts_settings_.config.threads *
                                                                          mcts_settings_.config.batch_size));
      mcts_ = std::make_unique<Mcts>(std::move(evaluator), mcts_settings_.config);
      say("info string mcts backend: " + mcts_->evaluator().name());
    } catch (const std::exception& e) {
      error(std::string("cannot start the mcts backend: ") + e.what());
      return false;
    }
    return true;
  }

  void go_mcts(const SearchLimits& limits) {
    MctsConfig config = mcts_->config();
    config.multipv = multipv_;
    config.mate_scan = mcts_settings_.config.mate_scan;
    config.info_interval_ms = 500;
    mcts_->set_config(config);
    mcts_->set_position(pos_);
    MctsLimits m;
    m.visits = limits.nodes;
    m.movetime_ms = limits.movetime_ms;
    const Color us = pos_.side_to_move();
    if (!m.movetime_ms) m.movetime_ms = mcts_move_time_ms(limits.time_ms[us], limits.inc_ms[us], limits.movestogo);
    m.infinite = limits.infinite;
    m.root_moves = limits.root_moves;
    // "go depth N" has no meaning for MCTS: N * 100 playouts stands in for it.
    if (limits.depth && !m.visits) m.playouts = static_cast<std::uint64_t>(limits.depth) * 100;
    if (!m.visits && !m.playouts && !m.movetime_ms) m.infinite = true;
    searching_ = true;
    infinite_ = m.infinite;
    worker_ = std::thread([this, m] {
      MctsResult r;
      try {
        r = mcts_->search(m, [this](const MctsResult& snapshot) { report_mcts(snapshot); });
      } catch (const std::exception& e) {
        error(std::string("mcts search failed: ") + e.what());
      }
      while (m.infinite && !stop_requested_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      if (!quiet_) {
        std::string answer = r.best.is_null() ? std::string("bestmove (none)") : "bestmove " + to_coordinate(r.best);
        if (!r.best.is_null() && r.pv.size() > 1) answer += " ponder " + to_coordinate(r.pv[1]);
        say(answer);
      }
      searching_ = false;
    });
  }

  void report_mcts(const MctsResult& r) {
    const int lines = std::min<int>(multipv_, static_cast<int>(r.moves.size()));
    const std::int64_t ms = static_cast<std::int64_t>(r.seconds * 1000);
    for (int i = 0; i < lines; ++i) {
      const MctsRootMove& m = r.moves[i];
      // A move not searched yet (a one-node search) has no value of its
      // own: report the root's, the network's estimate of the position.
      struct Value { float q, win, draw, loss; };
      const Value v = m.visits == 0 && !m.mate && !m.proven_draw ? Value{r.q, r.win, r.draw, r.loss}
                                                                  : Value{m.q, m.win, m.draw, m.loss};
      std::ostringstream s;
      s << "info depth " << std::max(1, r.depth) << " seldepth " << r.seldepth << " multipv " << i + 1 << " score ";
      if (m.mate) s << "mate " << m.mate; else s << "cp " << q_to_centipawns(v.q);
      if (show_wdl_) {
        const WdlPermille w = shares_to_wdl(v.win, v.draw, v.loss);
        s << " wdl " << w.win << " " << w.draw << " " << w.loss;
      }
      s << " nodes " << r.visits << " nps " << std::llround(r.playouts_per_second) << " time " << ms
        << " visits " << m.visits << " pv";
      for (const Move& mv : m.pv) s << " " << to_coordinate(mv);
      say(s.str());
    }
  }

  void report(const SearchInfo& info) {
    std::ostringstream s;
    s << "info depth " << info.depth << " seldepth " << info.seldepth << " multipv " << info.multipv << " score "
      << score_text(info.score);
    if (show_wdl_) {
      const WdlPermille w = score_to_wdl(info.score);
      s << " wdl " << w.win << " " << w.draw << " " << w.loss;
    }
    s << " nodes " << info.nodes << " nps "
      << (info.time_ms > 0 ? info.nodes * 1000 / info.time_ms : info.nodes) << " hashfull " << info.hashfull
      << " time " << info.time_ms << " pv";
    for (const Move& m : info.pv) s << " " << to_coordinate(m);
    say(s.str());
  }

  // Before a command that changes what is searched: a bounded search is
  // waited for (scripts expect its full depth), an endless one (infinite,
  // pondering, or no limit at all) is stopped.
  void wait_search() {
    if (!worker_.joinable()) return;
    if (infinite_ || pondering_) return stop_search();
    worker_.join();
  }

  void stop_search() {
    pondering_ = false;
    if (!worker_.joinable()) return;
    stop_requested_ = true;
    // The worker may not have started searching yet: keep asking until it ends.
    while (searching_.load()) {
      searcher_.stop();
      if (mcts_) mcts_->stop();
      if (bot_player_) bot_player_->stop();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    worker_.join();
    stop_requested_ = false;
  }

  void display() {
    std::ostringstream s;
    s << "\n";
    const Bitboard frozen = pos_.frozen(kWhite) | pos_.frozen(kBlack);
    for (int rank = 7; rank >= 0; --rank) {
      s << " " << rank + 1 << " ";
      for (int file = 0; file < 8; ++file) {
        const Square sq = make_square(file, rank);
        s << ' ' << piece_char(pos_.piece_on(sq)) << ((frozen & square_bb(sq)) ? '*' : ' ');
      }
      s << "\n";
    }
    s << "    a  b  c  d  e  f  g  h     (* frozen)\n\n";
    s << "Fen: " << pos_.fen() << "\nRules: " << rules_.name() << "\nKey: " << std::hex << pos_.key() << std::dec
      << "\nSide to move: " << (pos_.side_to_move() == kWhite ? "white" : "black")
      << (pos_.in_check() ? " (in check)" : "") << "\n";
    const GameStatus status = game_status(pos_);
    if (status.over()) s << "Game over: " << termination_name(status.termination) << " " << outcome_text(status.outcome) << "\n";
    say(s.str());
  }

  std::ostream& out_;
  NetworkFactory networks_;
  std::mutex out_mutex_;
  Rules rules_;
  Position pos_;
  std::size_t hash_mb_;
  Searcher searcher_;
  int multipv_ = 1;
  bool limit_strength_ = false;
  int elo_ = 0;
  std::vector<Level> levels_ = [] {
    try {
      return load_levels();
    } catch (const std::exception&) {
      return std::vector<Level>{};
    }
  }();
  std::optional<Level> named_level_;
  std::vector<Bot> catalogue_ = [] {
    try {
      return load_catalogue();
    } catch (const std::exception&) {
      return std::vector<Bot>{};
    }
  }();
  std::optional<Bot> named_bot_;
  std::vector<Option> options_;  // filled by declare_options() once the levels and bots are read
  std::string bot_spec_;                // the level or bot playing, by name
  std::unique_ptr<Player> bot_player_;  // made from it at the first go
  std::thread worker_;
  std::atomic<bool> searching_{false};
  bool infinite_ = false;
  bool use_mcts_ = false;
  std::string eval_file_ = "default";            // EvalFile
  std::shared_ptr<const nnue::Network> eval_net_;  // read from it (null: hand-written)
  bool eval_loaded_ = false;
  std::string weights_;
  MctsSettings mcts_settings_;  // those UCI exposes: MctsThreads, MctsBatch, MateScan
  std::string device_ = "cpu";  // the network's (Device)
  std::unique_ptr<Mcts> mcts_;
  std::atomic<bool> stop_requested_{false};
  bool show_wdl_ = false;
  bool pondering_ = false;
  SearchLimits ponder_limits_;      // what "ponderhit" searches with
  std::atomic<bool> quiet_{false};  // the search ends without a bestmove
};

}  // namespace

void run_uci(std::istream& in, std::ostream& out, const NetworkFactory& networks, std::size_t hash_mb) {
  UciEngine engine(out, networks, std::clamp<std::size_t>(hash_mb, 1, 65536));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!engine.handle(line)) return;
  }
  engine.finish();
}

std::string uci_option_help() {
  std::ostringstream sink;
  UciEngine engine(sink, {}, kDefaultHashMb);
  std::ostringstream out;
  for (const UciEngine::Option& o : engine.options()) {
    out << o.name << " (" << o.type << ", default " << o.default_value;
    if (o.type == "spin") out << ", " << o.min << " to " << o.max;
    if (o.type == "combo" && o.vars.size() <= 8) {
      out << ", one of";
      for (const std::string& v : o.vars) out << " " << v;
    }
    out << ")\n    " << o.help << "\n";
  }
  return out.str();
}

}  // namespace ultima
