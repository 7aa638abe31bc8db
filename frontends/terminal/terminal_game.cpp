#include "engine/base/text.h"
#include "frontends/terminal/terminal_game.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <exception>
#include <istream>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "engine/play/match.h"
#include "engine/rules/movegen.h"
#include "engine/rules/notation.h"
#include "engine/search/search.h"

namespace ultima {
namespace {

// Seed streams of the bot's moves and of the hints (the `game` argument of
// move_seed), so a hint never shifts the bot's choices.
constexpr int kBotStream = 0;
constexpr int kHintStream = 1;

const char* color_name(Color c) { return c == kWhite ? "White" : "Black"; }

// Typed text in a message: printable characters only, long lines cut.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text.substr(0, 40)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  return out + (text.size() > 40 ? "...'" : "'");
}

// A score from the mover's point of view, for people.
std::string score_text(int cp) {
  if (cp >= kMateBound || cp <= -kMateBound) {
    const int moves = (kMateScore - std::abs(cp) + 1) / 2;
    return (cp > 0 ? "mates in " : "is mated in ") + std::to_string(moves) + (moves == 1 ? " move" : " moves");
  }
  if (cp >= 20000) return "a forced win";
  if (cp <= -20000) return "a forced loss";
  return (cp > 0 ? "+" : "") + std::to_string(cp) + " cp";
}

// Parses what the person typed as a move: the coordinate form ("d4d1"), the
// `ultima moves` line ("d4d1 d5", the captures checked) or the readable form
// ("Wd4-d1 xd5"). Throws MoveError naming the problem.
Move parse_typed_move(const Position& pos, const std::string& text) {
  const std::vector<std::string> w = split_words(text);
  if (!w.empty() && std::islower(static_cast<unsigned char>(w[0][0]))) {
    if (w.size() > 2)
      throw MoveError("malformed move " + quoted(text) +
                      ": expected a move like d2d5, optionally followed by its captures");
    const Move move = parse_coordinate(pos, w[0]);
    if (w.size() == 2 && w[1] != captures_text(move))
      throw MoveError("illegal move " + quoted(text) + ": " + w[0] + " captures " + captures_text(move) + ", not " +
                      quoted(w[1]));
    return move;
  }
  return parse_move(pos, text);
}

const char* kHelp =
    "Type a move in either form:\n"
    "  d2d5          from and to squares (xc5: remove your frozen piece on c5)\n"
    "  Pd2-d5 xd4    piece letter, from-to, and optionally what it captures\n"
    "Commands:\n"
    "  moves   the legal moves with what each captures\n"
    "  hint    the engine's suggestion and its score\n"
    "  undo    take back your last move and the reply to it\n"
    "  board   show the board again\n"
    "  resign  give up the game\n"
    "  quit    stop; the game is saved unfinished (so does the end of input)\n"
    "Pieces: K king, P pawn, W withdrawer, L leaper, C coordinator, I immobilizer,\n"
    "X chameleon; upper case White, lower case Black, '.' empty; a piece in\n"
    "parentheses, like (p), is frozen by an immobilizer and cannot move.\n";

// One move of the game as the messages show it.
struct PlyInfo {
  Color mover;
  std::string numbered;  // "12... Wd7-d5 xd4 (d7d5)"
  std::string captured;  // "P on d4, L on e3", or empty
};

class Session {
 public:
  Session(Player& bot, Player* hint, const TerminalGameConfig& config, std::istream& in, std::ostream& out)
      : bot_(bot), hint_(hint), config_(config), in_(in), out_(out) {
    record_.event = "ultima play";
    record_.date = config.date;
    record_.white = config.human == kWhite ? config.human_name : config.bot_name;
    record_.black = config.human == kWhite ? config.bot_name : config.human_name;
    record_.rules = config.rules;
    record_.fen = config.fen;
    record_.other_tags.emplace_back("Seed", std::to_string(config.seed));  // replays the bot's choices
    pos_ = first_position(record_);
  }

  GameRecord run() {
    if (!config_.pgn_path.empty()) save_or_throw();
    out_ << "You play " << color_name(config_.human) << " against " << config_.bot_name << " (rules "
         << config_.rules.name() << ", seed " << config_.seed << ").\n";
    if (!config_.pgn_path.empty()) out_ << "The game is saved to " << config_.pgn_path << " after every move.\n";
    out_ << "Type a move like d2d5 or Pd2-d5, or 'help' for the commands.\n\n";
    bot_.new_game();
    if (hint_) hint_->new_game();
    show_position();
    for (;;) {
      const GameStatus status = game_status(pos_);
      if (status.over()) {
        finish(status.outcome, termination_name(status.termination));
        return record_;
      }
      if (pos_.side_to_move() != config_.human) {
        bot_move();
        continue;
      }
      out_ << "> " << std::flush;
      std::string line;
      if (!std::getline(in_, line)) {
        out_ << "\nEnd of input.\n";
        leave_unfinished();
        return record_;
      }
      line = trim(line);
      if (line.empty()) continue;
      const std::string command = to_lower(line);
      if (command == "help" || command == "?") {
        out_ << kHelp;
      } else if (command == "board") {
        show_position();
      } else if (command == "moves") {
        list_moves();
      } else if (command == "hint") {
        give_hint();
      } else if (command == "undo") {
        undo();
      } else if (command == "resign") {
        out_ << "You resign.\n";
        finish(config_.human == kWhite ? Outcome::kBlackWins : Outcome::kWhiteWins, "resignation");
        return record_;
      } else if (command == "quit" || command == "exit") {
        leave_unfinished();
        return record_;
      } else {
        try {
          play(parse_typed_move(pos_, line), "You play ");
        } catch (const MoveError& e) {
          out_ << e.what() << " (type 'moves' for the legal moves, 'help' for the commands)\n";
        }
      }
    }
  }

 private:
  void save_or_throw() { write_pgn_file(config_.pgn_path, {record_}); }

  // A failed save mid-game is told, not fatal: the game in memory goes on
  // and the next save may succeed.
  bool save() {
    if (config_.pgn_path.empty()) return true;
    try {
      save_or_throw();
      return true;
    } catch (const std::exception& e) {
      out_ << "Could not save the game: " << e.what() << "\n";
      return false;
    }
  }

  void show_position() {
    out_ << draw_board(pos_, config_.human, config_.colour);
    if (!plies_.empty()) {
      const PlyInfo& last = plies_.back();
      out_ << "Last move: " << last.numbered;
      if (!last.captured.empty()) out_ << ", captured " << last.captured;
      out_ << "\n";
    }
    if (pos_.frozen(kWhite) | pos_.frozen(kBlack)) out_ << "A piece in parentheses is frozen.\n";
    const GameStatus status = game_status(pos_);
    if (!status.over()) {
      const Color side = pos_.side_to_move();
      out_ << color_name(side) << " to move (" << (side == config_.human ? "you" : config_.bot_name) << ")"
           << (pos_.in_check() ? ", in check" : "") << "\n";
    }
    out_ << "\n";
  }

  void play(const Move& move, const std::string& who) {
    PlyInfo info;
    info.mover = pos_.side_to_move();
    info.numbered = std::to_string(pos_.fullmove_number()) + (info.mover == kWhite ? ". " : "... ") +
                    to_readable(pos_, move) + " (" + to_coordinate(move) + ")";
    for (Bitboard b = move.captures; b;) {
      const Square s = pop_lsb(b);
      info.captured += (info.captured.empty() ? "" : ", ") + std::string(1, piece_char(pos_.piece_on(s))) + " on " +
                       square_name(s);
    }
    pos_.make(move);
    record_.moves.push_back(move);
    plies_.push_back(info);
    save();
    out_ << who << info.numbered << "\n\n";
    show_position();
  }

  void bot_move() {
    const std::uint64_t key = pos_.key();
    const int ply = pos_.game_ply();
    MoveChoice choice;
    try {
      choice = bot_.choose(pos_, move_seed(config_.seed, kBotStream, ply));
    } catch (...) {
      save();
      throw std::runtime_error("the bot '" + config_.bot_name +
                               "' failed: " + describe_exception(std::current_exception()));
    }
    if (pos_.key() != key || pos_.game_ply() != ply)
      throw std::runtime_error("the bot '" + config_.bot_name + "' left the position changed");
    const Move* legal = find_legal(choice.move);
    if (!legal) {
      save();
      throw std::runtime_error("the bot '" + config_.bot_name + "' chose the illegal move '" +
                               to_coordinate(choice.move) + "' in " + pos_.fen());
    }
    play(*legal, config_.bot_name + " plays ");
  }

  const Move* find_legal(const Move& move) {
    generate_legal(pos_, legal_);
    const Move* found = std::find(legal_.begin(), legal_.end(), move);
    return found == legal_.end() ? nullptr : found;
  }

  void list_moves() {
    MoveList list;
    generate_legal(pos_, list);
    // "d4d1  Wd4-d1 xd5" entries in columns as wide as the widest entry, so a
    // hundred moves of an open board fit on one screen.
    std::vector<std::string> entries;
    for (const Move& m : list) {
      const std::string coordinate = to_coordinate(m);
      entries.push_back(coordinate + std::string(6 - coordinate.size(), ' ') + to_readable(pos_, m));
    }
    std::sort(entries.begin(), entries.end());
    std::size_t width = 0;
    for (const std::string& e : entries) width = std::max(width, e.size() + 3);
    const std::size_t columns = std::max<std::size_t>(1, 78 / width);
    const std::size_t rows = (entries.size() + columns - 1) / columns;
    out_ << entries.size() << (entries.size() == 1 ? " legal move:\n" : " legal moves:\n");
    for (std::size_t row = 0; row < rows; ++row) {
      std::string line;
      for (std::size_t column = 0; column < columns; ++column) {
        const std::size_t i = column * rows + row;
        if (i >= entries.size()) break;
        if (!line.empty()) line += std::string(width - line.size() % width, ' ');
        line += entries[i];
      }
      out_ << "  " << line << "\n";
    }
  }

  void give_hint() {
    if (!hint_) {
      out_ << "No hint engine here.\n";
      return;
    }
    const std::uint64_t key = pos_.key();
    MoveChoice choice;
    try {
      choice = hint_->choose(pos_, move_seed(config_.seed, kHintStream, pos_.game_ply()));
    } catch (...) {
      out_ << "The hint engine failed: " << describe_exception(std::current_exception()) << "\n";
      return;
    }
    const Move* legal = pos_.key() == key ? find_legal(choice.move) : nullptr;
    if (!legal) {
      out_ << "The hint engine gave no legal move.\n";
      return;
    }
    out_ << "Hint: " << to_readable(pos_, *legal) << " (" << to_coordinate(*legal) << "), score "
         << score_text(choice.score_cp) << " for you";
    if (choice.depth > 0) out_ << " at depth " << choice.depth;
    out_ << " (" << config_.hint_name << ")\n";
  }

  // Takes back the person's last move and the bot's reply to it.
  void undo() {
    const bool moved =
        std::any_of(plies_.begin(), plies_.end(), [&](const PlyInfo& p) { return p.mover == config_.human; });
    if (!moved) {
      out_ << "Nothing to undo: you have not moved yet.\n";
      return;
    }
    int taken = 0;
    while (!plies_.empty()) {
      const bool human = plies_.back().mover == config_.human;
      plies_.pop_back();
      record_.moves.pop_back();
      pos_.unmake();
      ++taken;
      if (human) break;
    }
    save();
    out_ << "Took back " << taken << (taken == 1 ? " move.\n\n" : " moves.\n\n");
    show_position();
  }

  void finish(Outcome outcome, const std::string& termination) {
    record_.result = outcome;
    record_.termination = termination;
    const bool saved = save();
    std::string verdict = "a draw";
    if (outcome != Outcome::kDraw)
      verdict = (outcome == Outcome::kWhiteWins) == (config_.human == kWhite) ? "you win" : config_.bot_name + " wins";
    out_ << "Game over: " << termination << ", " << verdict << " (" << outcome_text(outcome) << ").\n";
    if (saved && !config_.pgn_path.empty()) out_ << "The game is saved in " << config_.pgn_path << ".\n";
  }

  void leave_unfinished() {
    if (save() && !config_.pgn_path.empty())
      out_ << "The game is saved unfinished in " << config_.pgn_path << ".\n";
  }

  Player& bot_;
  Player* hint_;
  const TerminalGameConfig& config_;
  std::istream& in_;
  std::ostream& out_;
  GameRecord record_;
  Position pos_;
  std::vector<PlyInfo> plies_;  // one per move of record_.moves
  MoveList legal_;
};

}  // namespace

std::string draw_board(const Position& pos, Color bottom, bool colour) {
  const Bitboard frozen = pos.frozen(kWhite) | pos.frozen(kBlack);
  const auto file_at = [&](int column) { return bottom == kWhite ? column : 7 - column; };
  std::string files = "   ";
  for (int column = 0; column < 8; ++column)
    files += std::string(" ") + char('a' + file_at(column)) + (column < 7 ? " " : "\n");
  std::string out = files;
  for (int row = 0; row < 8; ++row) {
    const int rank = bottom == kWhite ? 7 - row : row;
    const std::string label(1, char('1' + rank));
    out += " " + label + " ";
    for (int column = 0; column < 8; ++column) {
      const Square s = make_square(file_at(column), rank);
      const Piece piece = pos.piece_on(s);
      const bool is_frozen = frozen & square_bb(s);
      const std::string mark = colour ? "\x1b[31m" : "";
      const std::string reset = colour ? "\x1b[0m" : "";
      std::string letter(1, piece_char(piece));
      if (colour && piece != kEmpty) letter = (color_of(piece) == kWhite ? "\x1b[1m" : "\x1b[34m") + letter + reset;
      out += is_frozen ? mark + "(" + reset : " ";
      out += letter;
      out += is_frozen ? mark + ")" + reset : " ";
    }
    out += " " + label + "\n";
  }
  return out + files;
}

GameRecord play_terminal_game(Player& bot, Player* hint, const TerminalGameConfig& config, std::istream& in,
                              std::ostream& out) {
  return Session(bot, hint, config, in, out).run();
}

}  // namespace ultima
