#include "engine/play/pgn.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/base/file_io.h"
#include "engine/rules/notation.h"

namespace ultima {
namespace {

constexpr std::size_t kLineWidth = 79;

std::string escaped(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

void tag(std::string& out, const char* name, const std::string& value) {
  out += "[";
  out += name;
  out += " \"" + escaped(value) + "\"]\n";
}

bool is_start_position(const GameRecord& record) {
  if (record.fen.empty()) return true;
  try {
    return Position::from_fen(record.fen, record.rules).fen() == Position::start(record.rules).fen();
  } catch (const FenError&) {
    return false;
  }
}

// "12." before a white move, "12..." before a black one.
std::string move_number(int fullmove, Color side) {
  return std::to_string(fullmove) + (side == kWhite ? "." : "...");
}

bool is_result_token(std::string_view t) { return t == "1-0" || t == "0-1" || t == "1/2-1/2" || t == "*"; }

Outcome outcome_of(std::string_view t) {
  if (t == "1-0") return Outcome::kWhiteWins;
  if (t == "0-1") return Outcome::kBlackWins;
  if (t == "1/2-1/2") return Outcome::kDraw;
  return Outcome::kOngoing;
}

// One game as read, before its moves are replayed.
struct RawGame {
  std::vector<std::pair<std::string, std::string>> tags;
  std::vector<std::string> moves;
  std::string result_token;
  bool empty() const { return tags.empty() && moves.empty(); }
};

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  std::vector<RawGame> games() {
    std::vector<RawGame> out;
    RawGame game;
    while (skip_space_and_comments()) {
      const char c = text_[i_];
      if (c == '[') {
        if (!game.moves.empty())
          throw PgnError(label(out.size()) + ": the moves end without a result (1-0, 0-1, 1/2-1/2 or *)");
        game.tags.push_back(read_tag(out.size()));
      } else if (c == '(') {
        throw PgnError(label(out.size()) + ": variations in parentheses are not supported");
      } else if (c == '$') {
        for (++i_; i_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[i_]));) ++i_;
      } else {
        std::string token = read_token();
        if (is_result_token(token)) {
          game.result_token = token;
          out.push_back(std::move(game));
          game = RawGame{};
          continue;
        }
        // A move number, possibly glued to its move ("12.d2d4").
        std::size_t k = 0;
        while (k < token.size() && std::isdigit(static_cast<unsigned char>(token[k]))) ++k;
        if (k > 0 && k < token.size() && token[k] == '.') {
          while (k < token.size() && token[k] == '.') ++k;
          token.erase(0, k);
        } else if (k > 0 && k == token.size()) {
          throw PgnError(label(out.size()) + ": stray number '" + token + "' in the moves");
        }
        while (!token.empty() && std::strchr("+#!?", token.back())) token.pop_back();
        if (!token.empty()) game.moves.push_back(token);
      }
    }
    if (!game.empty()) throw PgnError(label(out.size()) + ": the text ends before the game's result");
    return out;
  }

 private:
  static std::string label(std::size_t index) { return "game " + std::to_string(index + 1); }

  // Skips blanks, {comments}, ;comments and %escape lines; false at the end.
  bool skip_space_and_comments() {
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i_;
      } else if (c == '{') {
        const std::size_t end = text_.find('}', i_);
        if (end == std::string_view::npos) throw PgnError("a {comment} is never closed");
        i_ = end + 1;
      } else if (c == ';' || (c == '%' && (i_ == 0 || text_[i_ - 1] == '\n'))) {
        const std::size_t end = text_.find('\n', i_);
        i_ = end == std::string_view::npos ? text_.size() : end + 1;
      } else {
        return true;
      }
    }
    return false;
  }

  std::pair<std::string, std::string> read_tag(std::size_t game_index) {
    const std::size_t start = i_++;
    const std::size_t line_end = std::min(text_.find('\n', start), text_.size());
    const auto malformed = [&] {
      return PgnError(label(game_index) + ": malformed tag " + std::string(text_.substr(start, line_end - start)) +
                      " (expected [Name \"value\"])");
    };
    while (i_ < text_.size() && text_[i_] == ' ') ++i_;
    std::string name;
    while (i_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[i_])) || text_[i_] == '_'))
      name += text_[i_++];
    while (i_ < text_.size() && text_[i_] == ' ') ++i_;
    if (name.empty() || i_ >= text_.size() || text_[i_] != '"') throw malformed();
    std::string value;
    for (++i_;; ++i_) {
      if (i_ >= text_.size() || text_[i_] == '\n') throw malformed();
      if (text_[i_] == '"') break;
      if (text_[i_] == '\\' && i_ + 1 < text_.size()) ++i_;
      value += text_[i_];
    }
    ++i_;
    while (i_ < text_.size() && text_[i_] == ' ') ++i_;
    if (i_ >= text_.size() || text_[i_] != ']') throw malformed();
    ++i_;
    return {name, value};
  }

  std::string read_token() {
    const std::size_t start = i_;
    while (i_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[i_])) &&
           !std::strchr("{}[]();", text_[i_]))
      ++i_;
    if (i_ == start) throw PgnError("unexpected '" + std::string(1, text_[i_]) + "' in the moves");
    return std::string(text_.substr(start, i_ - start));
  }

  std::string_view text_;
  std::size_t i_ = 0;
};

int parse_count(const std::string& value, const std::string& where, const char* tag_name) {
  std::size_t used = 0;
  int n = -1;
  try {
    n = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || n < 0)
    throw PgnError(where + ": " + tag_name + " tag '" + value + "' is not a count");
  return n;
}

GameRecord replay(const RawGame& raw, std::size_t index) {
  GameRecord record;
  std::string where = "game " + std::to_string(index + 1);
  std::string rules_text, result_tag, ply_count;
  for (const auto& [name, value] : raw.tags) {
    if (name == "Round") where += " (round " + value + ")";
  }
  for (const auto& [name, value] : raw.tags) {
    if (name == "Event") record.event = value;
    else if (name == "Site") record.site = value;
    else if (name == "Date") record.date = value;
    else if (name == "Round") record.round = value;
    else if (name == "White") record.white = value;
    else if (name == "Black") record.black = value;
    else if (name == "Result") result_tag = value;
    else if (name == "Rules") rules_text = value;
    else if (name == "FEN") record.fen = value;
    else if (name == "Termination") record.termination = value;
    else if (name == "PlyCount") ply_count = value;
    else if (name == "OpeningPlies") record.opening_plies = parse_count(value, where, "OpeningPlies");
    else if (name == "SetUp") continue;  // implied by FEN
    else if (name == "Variant") {
      if (value != "ultima") throw PgnError(where + ": Variant is '" + value + "', not 'ultima'");
    } else {
      record.other_tags.emplace_back(name, value);
    }
  }
  if (!rules_text.empty()) {
    try {
      record.rules = Rules::parse(rules_text);
    } catch (const std::invalid_argument& e) {
      throw PgnError(where + ": Rules tag: " + e.what());
    }
  }
  Position pos;
  try {
    pos = first_position(record);
  } catch (const FenError& e) {
    throw PgnError(where + ": FEN tag: " + e.what());
  }
  if (is_start_position(record)) record.fen.clear();

  int fullmove = pos.fullmove_number();
  for (std::size_t ply = 0; ply < raw.moves.size(); ++ply) {
    const std::string& text = raw.moves[ply];
    const Color side = pos.side_to_move();
    const std::string at = where + ", ply " + std::to_string(ply + 1) + " (" + move_number(fullmove, side) + " " +
                           text + ")";
    const GameStatus status = game_status(pos);
    if (status.over())
      throw PgnError(at + ": the game was already over (" + termination_name(status.termination) + ")");
    try {
      const Move m = parse_move(pos, text);
      pos.make(m);
      record.moves.push_back(m);
    } catch (const MoveError& e) {
      throw PgnError(at + ": " + e.what());
    }
    if (side == kBlack) ++fullmove;
  }
  record.result = outcome_of(raw.result_token);
  if (!result_tag.empty() && result_tag != raw.result_token)
    throw PgnError(where + ": the Result tag says " + result_tag + " but the moves end with " + raw.result_token);
  if (!ply_count.empty() && parse_count(ply_count, where, "PlyCount") != static_cast<int>(record.moves.size()))
    throw PgnError(where + ": PlyCount is " + ply_count + " but there are " + std::to_string(record.moves.size()) +
                   " moves");
  if (record.opening_plies > static_cast<int>(record.moves.size()))
    throw PgnError(where + ": OpeningPlies is more than the number of moves");
  return record;
}

}  // namespace

Position first_position(const GameRecord& record) {
  return record.fen.empty() ? Position::start(record.rules) : Position::from_fen(record.fen, record.rules);
}

Position final_position(const GameRecord& record) {
  Position pos = first_position(record);
  for (const Move& m : record.moves) pos.make(m);
  return pos;
}

std::string write_pgn(const GameRecord& record) {
  const std::string result = outcome_text(record.result);
  std::string out;
  tag(out, "Event", record.event);
  tag(out, "Site", record.site);
  tag(out, "Date", record.date);
  tag(out, "Round", record.round);
  tag(out, "White", record.white);
  tag(out, "Black", record.black);
  tag(out, "Result", result);
  tag(out, "Variant", "ultima");
  tag(out, "Rules", record.rules.name());
  const Position first = first_position(record);
  if (!is_start_position(record)) {
    tag(out, "SetUp", "1");
    tag(out, "FEN", first.fen());
  }
  if (record.opening_plies > 0) tag(out, "OpeningPlies", std::to_string(record.opening_plies));
  if (!record.termination.empty()) tag(out, "Termination", record.termination);
  tag(out, "PlyCount", std::to_string(record.moves.size()));
  for (const auto& [name, value] : record.other_tags) tag(out, name.c_str(), value);
  out += "\n";

  // Move numbers come from the first position; a game that starts with
  // Black to move opens with "N...".
  std::string line;
  const auto emit = [&](const std::string& word) {
    if (!line.empty() && line.size() + 1 + word.size() > kLineWidth) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  };
  int fullmove = first.fullmove_number();
  Color side = first.side_to_move();
  for (std::size_t i = 0; i < record.moves.size(); ++i) {
    // A move number stays on the line of its move.
    const std::string move = to_coordinate(record.moves[i]);
    emit(side == kWhite || i == 0 ? move_number(fullmove, side) + " " + move : move);
    if (side == kBlack) ++fullmove;
    side = ~side;
  }
  emit(result);
  out += line + "\n\n";
  return out;
}

std::vector<GameRecord> read_pgn(std::string_view text) {
  std::vector<GameRecord> records;
  const std::vector<RawGame> games = Reader(text).games();
  for (std::size_t i = 0; i < games.size(); ++i) records.push_back(replay(games[i], i));
  return records;
}

void write_pgn_file(const std::string& path, const std::vector<GameRecord>& records) {
  std::string text;
  for (const GameRecord& r : records) text += write_pgn(r);
  write_file_atomically(path, text);
}

std::vector<GameRecord> read_pgn_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << file.rdbuf();
  return read_pgn(text.str());
}

}  // namespace ultima
