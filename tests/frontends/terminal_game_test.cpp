// The terminal game (`ultima play`) driven by scripted input: games to their
// end, bad input, undo, hints, the bot moving first, the drawn board, and
// the saved record.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <string>

#include "engine/play/pgn.h"
#include "engine/play/player_spec.h"
#include "frontends/terminal/terminal_game.h"
#include "test_util.h"

namespace ultima {
namespace {

// White mates at once with c1c6 (the pawn pinches the king frozen by Ie4
// against the immobilizer); h1g1 is a quiet king step.
const char* kMateInOne = "p7/8/8/4k3/4I3/8/8/2P4K w 0 1";

struct Played {
  GameRecord record;
  std::string output;
};

Played play(const std::string& bot_spec, const std::string& input, TerminalGameConfig config,
            Player* hint = nullptr) {
  const std::unique_ptr<Player> bot = make_player(bot_spec);
  config.bot_name = bot_spec;
  std::istringstream in(input);
  std::ostringstream out;
  Played played;
  played.record = play_terminal_game(*bot, hint, config, in, out);
  played.output = out.str();
  return played;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<std::string> coordinates(const std::vector<Move>& moves) {
  std::vector<std::string> out;
  for (const Move& m : moves) out.push_back(to_coordinate(m));
  return out;
}

TEST(TerminalGame, MateEndsTheGameWithTheResultAndARecordThatReadsBack) {
  test::TempDir dir("terminal-mate");
  TerminalGameConfig config;
  config.fen = kMateInOne;
  config.pgn_path = dir.path() + "/game.pgn";
  config.date = "2026.12.01";
  // A quiet move, the bot's reply, both taken back, then the mate.
  const Played p = play("random", "h1g1\nundo\nc1c6\nd2d3\n", config);
  EXPECT_TRUE(contains(p.output, "Game over: checkmate, you win (1-0)")) << p.output;
  // The game ended at the mate: the line after it was never read as a move.
  EXPECT_FALSE(contains(p.output, "'d2d3'")) << p.output;
  EXPECT_EQ(p.record.result, Outcome::kWhiteWins);
  EXPECT_EQ(p.record.termination, "checkmate");
  EXPECT_EQ(coordinates(p.record.moves), std::vector<std::string>{"c1c6"});

  const std::vector<GameRecord> read = read_pgn_file(config.pgn_path);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(coordinates(read[0].moves), coordinates(p.record.moves));
  EXPECT_EQ(read[0].result, Outcome::kWhiteWins);
  EXPECT_EQ(read[0].termination, "checkmate");
  EXPECT_EQ(read[0].fen, kMateInOne);
  EXPECT_EQ(read[0].white, "human");
  EXPECT_EQ(read[0].black, "random");
  EXPECT_EQ(read[0].date, "2026.12.01");
}

TEST(TerminalGame, TheBotMovesFirstWhenThePersonPlaysBlack) {
  TerminalGameConfig config;
  config.human = kBlack;
  // From the start position: the bot's move comes before the first prompt.
  Played p = play("random", "", config);
  ASSERT_EQ(p.record.moves.size(), 1u);
  const std::size_t bot_line = p.output.find("random plays 1. ");
  ASSERT_NE(bot_line, std::string::npos) << p.output;
  EXPECT_LT(bot_line, p.output.find("> "));
  EXPECT_TRUE(contains(p.output, "Black to move (you)"));
  // The board is drawn from Black's side: rank 1 on top, files h to a.
  const std::string black_side = "    h  g  f  e  d  c  b  a\n 1  C  L  X  W  K  X  L  I  1\n";
  EXPECT_NE(p.output.find(black_side), std::string::npos) << p.output;

  // A bot that can mate at once does, and wins.
  config.fen = kMateInOne;
  p = play("search:depth=1", "", config);
  EXPECT_EQ(coordinates(p.record.moves), std::vector<std::string>{"c1c6"});
  EXPECT_TRUE(contains(p.output, "Game over: checkmate, search:depth=1 wins (1-0)")) << p.output;
  EXPECT_EQ(p.record.result, Outcome::kWhiteWins);
}

TEST(TerminalGame, BadInputIsRefusedWithAReasonAndPlayGoesOn) {
  TerminalGameConfig config;
  const Played p = play("random",
                        "d2d9\nfoo\nd2d3d4\nd7d5\na1a2\nb2b3 c3\nPd2-d5 xd4\nWd2-d5\n\nd2d5 -\n", config);
  EXPECT_TRUE(contains(p.output, "malformed move 'd2d9': squares are a-h followed by 1-8")) << p.output;
  EXPECT_TRUE(contains(p.output, "malformed move 'foo'")) << p.output;
  EXPECT_TRUE(contains(p.output, "malformed move 'd2d3d4'")) << p.output;
  EXPECT_TRUE(contains(p.output, "belongs to the side not to move")) << p.output;
  EXPECT_TRUE(contains(p.output, "illegal move 'a1a2'")) << p.output;
  EXPECT_TRUE(contains(p.output, "b2b3 captures -, not 'c3'")) << p.output;
  EXPECT_TRUE(contains(p.output, "captures -, not the squares listed")) << p.output;
  EXPECT_TRUE(contains(p.output, "the piece on d2 is not a W")) << p.output;
  // The last line, a `moves` line with its captures, is played, and the bot
  // replies; then the input ends and the game is left unfinished.
  const std::vector<std::string> moves = coordinates(p.record.moves);
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_EQ(moves[0], "d2d5");
  EXPECT_EQ(p.record.result, Outcome::kOngoing);
  EXPECT_TRUE(contains(p.output, "End of input."));
}

TEST(TerminalGame, RandomLinesNeverEndTheGameEarly) {
  // Seeded junk: random characters, fragments of moves and commands, mixed
  // with legal moves; every line is answered and the game goes on to the
  // end of the input (or to the game's end) with only legal moves recorded.
  std::mt19937_64 rng(11);
  const std::vector<std::string> pieces = {"d2", "d5", "x", "Pd2-", "e4", " ", "xd4", "-", ",", "+", "#",
                                           "moves", "undo", "hint", "board", "help", "rm", "\t", "\r", "\x01"};
  for (int round = 0; round < 20; ++round) {
    std::string input;
    for (int line = 0; line < 30; ++line) {
      std::string text;
      const int parts = std::uniform_int_distribution<int>(0, 4)(rng);
      for (int i = 0; i < parts; ++i) {
        if (rng() % 3 == 0) text += static_cast<char>(std::uniform_int_distribution<int>(1, 255)(rng));
        else text += pieces[rng() % pieces.size()];
      }
      if (text.find('\n') == std::string::npos) input += text + "\n";
    }
    TerminalGameConfig config;
    config.seed = static_cast<std::uint64_t>(round);
    Played p;
    ASSERT_NO_THROW(p = play("random", input, config)) << "round " << round;
    Position pos = Position::start();
    for (const Move& m : p.record.moves) {
      ASSERT_TRUE(test::is_legal(pos, m)) << "round " << round;
      pos.make(m);
    }
    EXPECT_TRUE(contains(p.output, "End of input.") || contains(p.output, "Game over")) << "round " << round;
  }
}

TEST(TerminalGame, UndoTakesBackTheLastMovePair) {
  TerminalGameConfig config;
  config.seed = 7;
  const Played one = play("random", "d2d5\n", config);
  ASSERT_EQ(one.record.moves.size(), 2u);
  const Played undone = play("random", "undo\nd2d5\nb2b4\nundo\n", config);
  EXPECT_TRUE(contains(undone.output, "Nothing to undo: you have not moved yet.")) << undone.output;
  EXPECT_TRUE(contains(undone.output, "Took back 2 moves.")) << undone.output;
  EXPECT_EQ(coordinates(undone.record.moves), coordinates(one.record.moves));
  // The board shown after the undo is the position after the first pair.
  Position pos = Position::start();
  for (const Move& m : one.record.moves) pos.make(m);
  const std::size_t took_back = undone.output.rfind("Took back");
  EXPECT_NE(undone.output.find(draw_board(pos), took_back), std::string::npos) << undone.output;

  // Undo twice goes back to the start.
  const Played twice = play("random", "d2d5\nb2b4\nundo\nundo\n", config);
  EXPECT_TRUE(twice.record.moves.empty());
  EXPECT_NE(twice.output.find(draw_board(Position::start()), twice.output.rfind("Took back")), std::string::npos);
}

TEST(TerminalGame, HintSuggestsALegalMoveWithItsScoreAndPlaysNothing) {
  TerminalGameConfig config;
  config.fen = kMateInOne;
  const std::unique_ptr<Player> hint = make_player("search:depth=2");
  const Played p = play("random", "hint\n", config, hint.get());
  const std::size_t at = p.output.find("Hint: ");
  ASSERT_NE(at, std::string::npos) << p.output;
  // "Hint: Pc1-c6# (c1c6), score mates in 1 move for you ..."
  const std::size_t open = p.output.find('(', at);
  const std::string coordinate = p.output.substr(open + 1, p.output.find(')', open) - open - 1);
  const Position pos = Position::from_fen(kMateInOne);
  EXPECT_NO_THROW(parse_coordinate(pos, coordinate)) << coordinate;
  EXPECT_EQ(coordinate, "c1c6");
  EXPECT_TRUE(contains(p.output, "score mates in 1 move for you")) << p.output;
  EXPECT_TRUE(p.record.moves.empty());

  const Played none = play("random", "hint\n", config, nullptr);
  EXPECT_TRUE(contains(none.output, "No hint engine here."));
}

TEST(TerminalGame, ResignationLosesAndIsRecorded) {
  test::TempDir dir("terminal-resign");
  TerminalGameConfig config;
  config.human = kBlack;
  config.pgn_path = dir.path() + "/resigned.pgn";
  const Played p = play("random", "resign\n", config);
  EXPECT_TRUE(contains(p.output, "Game over: resignation, random wins (1-0)")) << p.output;
  const std::vector<GameRecord> read = read_pgn_file(config.pgn_path);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].result, Outcome::kWhiteWins);
  EXPECT_EQ(read[0].termination, "resignation");
  EXPECT_EQ(coordinates(read[0].moves), coordinates(p.record.moves));
  EXPECT_EQ(read[0].white, "random");
}

TEST(TerminalGame, QuitSavesTheUnfinishedGame) {
  test::TempDir dir("terminal-quit");
  TerminalGameConfig config;
  config.pgn_path = dir.path() + "/quit.pgn";
  const Played p = play("random", "e2e4\nQUIT\ne2e3\n", config);
  ASSERT_EQ(p.record.moves.size(), 2u);
  const std::vector<GameRecord> read = read_pgn_file(config.pgn_path);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].result, Outcome::kOngoing);
  EXPECT_EQ(coordinates(read[0].moves), coordinates(p.record.moves));
}

TEST(TerminalGame, AnUnwritableRecordFileIsRefusedBeforeTheFirstMove) {
  test::TempDir dir("terminal-unwritable");
  TerminalGameConfig config;
  config.pgn_path = dir.path() + "/missing-folder/game.pgn";
  const std::unique_ptr<Player> bot = make_player("random");
  std::istringstream in("e2e4\n");
  std::ostringstream out;
  try {
    play_terminal_game(*bot, nullptr, config, in, out);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "missing-folder")) << e.what();
  }
}

TEST(TerminalGame, FrozenPiecesAreDrawnInParentheses) {
  // Black's king e5 stands next to White's immobilizer f4.
  const Position black_frozen = Position::from_fen("p7/8/8/4k3/2K2I2/3w4/8/8 w 0 1");
  EXPECT_EQ(draw_board(black_frozen),
            "    a  b  c  d  e  f  g  h\n"
            " 8  p  .  .  .  .  .  .  .  8\n"
            " 7  .  .  .  .  .  .  .  .  7\n"
            " 6  .  .  .  .  .  .  .  .  6\n"
            " 5  .  .  .  . (k) .  .  .  5\n"
            " 4  .  .  K  .  .  I  .  .  4\n"
            " 3  .  .  .  w  .  .  .  .  3\n"
            " 2  .  .  .  .  .  .  .  .  2\n"
            " 1  .  .  .  .  .  .  .  .  1\n"
            "    a  b  c  d  e  f  g  h\n");
  // White's pawn d3 next to Black's immobilizer d4.
  const Position white_frozen = Position::from_fen("4k3/8/8/8/3i4/3P4/8/4K3 w 0 1");
  EXPECT_TRUE(contains(draw_board(white_frozen), " 3  .  .  . (P) .  .  .  .  3\n")) << draw_board(white_frozen);
  // In games of random moves, exactly the pieces the rules call frozen
  // (chameleons and immobilizers next to each other included) are marked,
  // whichever side is drawn at the bottom.
  std::mt19937_64 rng(3);
  int marked = 0;
  for (int game = 0; game < 60; ++game) {
    const Position pos = test::random_game_position(Rules{}, rng, 20 + game);
    const Bitboard frozen = pos.frozen(kWhite) | pos.frozen(kBlack);
    for (Color bottom : {kWhite, kBlack}) {
      const std::string board = draw_board(pos, bottom);
      ASSERT_EQ(std::count(board.begin(), board.end(), '('), popcount(frozen)) << pos.fen() << "\n" << board;
    }
    for (Bitboard b = frozen; b;) {
      const Square s = pop_lsb(b);
      const std::string cell = std::string("(") + piece_char(pos.piece_on(s)) + ")";
      // The file letters (27 characters), then ranks 8 to 1 of 30 each.
      const std::string row = draw_board(pos).substr(27 + 30 * (7 - rank_of(s)), 30);
      EXPECT_EQ(row.substr(3 + 3 * file_of(s), 3), cell) << pos.fen() << " " << square_name(s);
      ++marked;
    }
  }
  EXPECT_GT(marked, 0);

  // Colours change nothing but the escapes around the letters.
  std::string coloured = draw_board(black_frozen, kBlack, true);
  EXPECT_TRUE(contains(coloured, "\x1b[31m(\x1b[0m\x1b[34mk\x1b[0m\x1b[31m)\x1b[0m")) << coloured;
  EXPECT_TRUE(contains(coloured, "\x1b[1mK\x1b[0m")) << coloured;
  for (std::size_t at; (at = coloured.find('\x1b')) != std::string::npos;)
    coloured.erase(at, coloured.find('m', at) - at + 1);
  EXPECT_EQ(coloured, draw_board(black_frozen, kBlack));

  // The game's board says what the parentheses mean.
  TerminalGameConfig config;
  config.fen = "p7/8/8/4k3/2K2I2/3w4/8/8 w 0 1";
  const Played p = play("random", "", config);
  EXPECT_TRUE(contains(p.output, " 5  .  .  .  . (k) .  .  .  5\n")) << p.output;
  EXPECT_TRUE(contains(p.output, "A piece in parentheses is frozen.")) << p.output;
}

}  // namespace
}  // namespace ultima
