#!/usr/bin/env python3
"""The web board in a real browser: headless Chromium driven by Selenium.

Starts `ultima serve --port 0`, opens the page and plays it as a person
would, by clicking squares: a game against the weakest bot to its end
(kept by the server through a reload), an illegal move refused and a
takeback granted, an analysis whose lines appear and update, puzzles
solved and rated, a PGN loaded and stepped through, two browsers playing
each other through a reload and a server restart, the piece sets and
dragging, a lesson of the course. A screenshot of each scenario is
written to the artifacts folder.

Usage: test_web.py --ultima BUILD/ultima --source SOURCE_DIR --artifacts DIR
Exit status: 0 passed, 1 failed, 77 skipped (no chromium, chromedriver or
selenium on this machine).
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
import urllib.request

SKIP = 77


def find_browser():
    chromium = shutil.which('chromium') or shutil.which('chromium-browser')
    driver = shutil.which('chromedriver')
    if not driver and os.path.exists('/usr/bin/chromedriver'):
        driver = '/usr/bin/chromedriver'
    return chromium, driver


def import_selenium():
    try:
        import selenium  # noqa: F401
        return True
    except ImportError:
        # A Python from pyenv or a venv may not see Debian's package.
        sys.path.append('/usr/lib/python3/dist-packages')
        try:
            import selenium  # noqa: F401,F811
            return True
        except ImportError:
            return False


class Server:
    """`ultima serve --port 0`, its port read from the line it prints."""

    def __init__(self, ultima, cwd, log_path, db, port=0):
        self.args = (ultima, cwd, log_path, db)
        self.log = open(log_path, 'a')
        self.proc = subprocess.Popen([ultima, 'serve', '--port', str(port), '--db', db], cwd=cwd,
                                     stdout=subprocess.PIPE, stderr=self.log, text=True, start_new_session=True)
        self.port = None
        found = threading.Event()

        def read():
            for line in self.proc.stdout:
                self.log.write(line)
                self.log.flush()
                m = re.search(r'http://[^\s/]+:(\d+)', line)
                if m and not found.is_set():
                    self.port = int(m.group(1))
                    found.set()
        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        if not found.wait(120) or self.proc.poll() is not None:
            self.stop()
            raise RuntimeError('ultima serve printed no address (see %s)' % log_path)
        self.url = 'http://127.0.0.1:%d' % self.port

    def post(self, path, body):
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(),
                                     headers={'Content-Type': 'application/json'})
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.read().decode()

    def post_json(self, path, body):
        return json.loads(self.post(path, body))

    def kill_and_restart(self):
        """SIGKILL, then the server again on the same port and database."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.reader.join(10)
        self.log.close()
        port = self.port
        for _ in range(50):
            try:
                self.__init__(*self.args, port=port)
                return
            except RuntimeError:
                time.sleep(0.2)
        raise RuntimeError('the server did not start again on port %d' % port)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(10)        # it writes the log until the server's output ends
        self.log.close()


class BoardTest:
    def __init__(self, driver, server, source, artifacts):
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait
        from selenium.common.exceptions import StaleElementReferenceException
        self.Stale = StaleElementReferenceException
        from selenium.webdriver.common.action_chains import ActionChains
        self.ActionChains = ActionChains
        self.By = By
        self.d = driver
        self.server = server
        self.source = source
        self.artifacts = artifacts
        self.Wait = WebDriverWait

    # ---- helpers

    def wait(self, cond, what, timeout=60):
        try:
            return self.Wait(self.d, timeout, poll_frequency=0.05,
                             ignored_exceptions=(self.Stale,)).until(lambda d: cond())
        except Exception as e:
            # The page's own message line says what it saw (an error from
            # the server, a game that could not be opened).
            try:
                shown = self.el('#message').text
            except Exception:
                shown = '(no message line)'
            raise AssertionError('timed out waiting for: %s (%s); the page says: %r' % (what, type(e).__name__, shown))

    def el(self, css):
        return self.d.find_element(self.By.CSS_SELECTOR, css)

    def els(self, css):
        return self.d.find_elements(self.By.CSS_SELECTOR, css)

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def square(self, sq):
        return self.el('#board [data-square="%s"]' % sq)

    def shot(self, name):
        path = os.path.join(self.artifacts, name + '.png')
        self.js('window.scrollTo(0, 0)')
        self.d.save_screenshot(path)
        return path

    def open_page(self):
        self.d.get(self.server.url + '/')
        self.wait(lambda: self.js('return document.body.dataset.ready') == 'true', 'the page to load')

    def tab(self, name):
        self.el('#tabs [data-tab="%s"]' % name).click()

    def select(self, css, value):
        from selenium.webdriver.support.ui import Select
        Select(self.el(css)).select_by_value(value)

    def set_input(self, css, value):
        e = self.el(css)
        e.clear()
        e.send_keys(value)

    def ply(self):
        return int(self.el('#status').get_attribute('data-ply') or -1)

    def moves_shown(self):
        return len(self.els('#move-list .move'))

    def click_move(self, move):
        """Plays a coordinate move by clicking its squares."""
        if move.startswith('x'):
            self.square(move[1:3]).click()
            self.wait(lambda: self.el('#removal-box').is_displayed(), 'the removal button')
            self.el('#removal-button').click()
            return
        # A click that lands while the page redraws the board after the
        # opponent's move can find the piece not yet selectable: as a person
        # would, click it again.
        for attempt in range(3):
            self.square(move[0:2]).click()
            try:
                self.wait(lambda: 'selected' in self.square(move[0:2]).get_attribute('class'), 'the piece selected',
                          timeout=5 if attempt < 2 else 60)
                break
            except AssertionError:
                if attempt == 2:
                    raise
        self.square(move[2:4]).click()

    def best_move(self, rules, fen, moves, depth=5):
        text = self.server.post('/api/analyze', {'id': 'test-best', 'rules': rules, 'fen': fen,
                                                 'moves': moves, 'max_depth': depth})
        final = json.loads(text.strip().split('\n')[-1])
        return final['moves'][0]['move']

    def board_pieces(self):
        """{square: FEN letter} of the board as shown, read in one go."""
        return self.js('const o = {}; for (const e of document.querySelectorAll("#board .square[data-piece]"))'
                       ' o[e.dataset.square] = e.dataset.piece; return o;')

    def game_moves(self):
        return [e.get_attribute('data-move') for e in self.els('#move-list .move')]

    # ---- scenarios

    def play_bot_game(self):
        """Against the weakest bot, from a position the bot starts (Black to
        move) where White is close to a mate; White's moves are the server's
        best. The game is the server's: a reload in the middle finds it as it
        was, and it must end with a result on the banner."""
        info = json.loads(urllib.request.urlopen(self.server.url + '/api/info', timeout=30).read())
        weakest = info['bots'][0]['name']
        fen = '6pk/5K1p/8/8/3W4/2p5/8/8 b 0 1'
        self.open_page()
        self.tab('play')
        self.select('#rules-select', 'abbott1963')
        self.set_input('#fen-input', fen)
        self.select('#opponent-select', 'bot')
        self.select('#bot-select', weakest)
        self.select('#color-select', 'white')
        self.select('#time-mode', 'movetime')
        self.set_input('#movetime-ms', '100')
        self.set_input('#bot-seed', '1')  # the same game every run
        before = self.js('return S.online && S.online.id')
        self.el('#new-game').click()
        self.wait(lambda: self.js('return S.online && S.online.state && S.online.id') not in (None, before) and
                  not self.el('#result-banner').is_displayed(), 'the new game from the server')
        reloaded = False
        for _ in range(40):
            # Wait for the bot's move (or the end).
            self.wait(lambda: self.el('#result-banner').is_displayed() or
                      (self.js('return document.body.dataset.thinking') != 'true' and
                       self.el('#status').get_attribute('data-side') == 'white' and
                       self.ply() == self.moves_shown() and self.moves_shown() % 2 == 1),
                      "the bot's move")
            if self.el('#result-banner').is_displayed():
                break
            moves = self.game_moves()
            n = len(moves)
            if not reloaded:
                # A reload: the game comes back from the server, seat and moves.
                game = self.js('return S.online.id')
                self.d.refresh()
                self.wait(lambda: self.js('return document.body.dataset.ready') == 'true', 'the reloaded page')
                self.wait(lambda: self.js('return S.online && S.online.id') == game and self.moves_shown() == n,
                          'the game after the reload')
                assert self.js('return [S.online.seat, S.online.bot]') == ['white', weakest]
                reloaded = True
            self.click_move(self.best_move('abbott1963', fen, moves))
            self.wait(lambda: self.moves_shown() > n, 'our move in the move list')
        banner = self.el('#result-banner')
        self.wait(lambda: banner.is_displayed(), 'the result banner')
        text = banner.text
        assert re.search(r'(1-0|0-1|1/2-1/2)', text), 'no result on the banner: %r' % text
        assert self.moves_shown() >= 2, 'the bot never moved'
        # The bot moved first: Black's first move is the bot's.
        assert self.game_moves()[0][0:2] in ('c3', 'g8', 'h7', 'h8'), self.game_moves()
        self.shot('bot-game')
        plies = self.moves_shown()
        # Each game against a bot has its own seed, kept in its record's
        # tags: the next game's differs.
        seed = 'return S.online && S.online.state && [S.online.state.seed, S.tags.Seed]'
        first = self.js(seed)
        assert first == [1, '1'], first
        record = urllib.request.urlopen('%s/api/games/%s.pgn' % (self.server.url, self.js('return S.online.id')),
                                        timeout=30).read().decode()
        assert '[Seed "1"]' in record and '[Black "%s"]' % weakest in record, record
        self.set_input('#bot-seed', '')
        self.el('#new-game').click()
        self.wait(lambda: (self.js(seed) or first)[0] != first[0], 'a new seed for the next game')
        second = self.js(seed)
        assert isinstance(second[0], int) and second[1] == str(second[0]), second
        self.set_input('#bot-seed', '')
        self.el('#new-game').click()
        self.wait(lambda: (self.js(seed) or first)[0] not in (first[0], second[0]), 'another new seed')
        return 'game over after %d plies (a reload after the first): %s' % (plies, text)

    def illegal_move(self):
        """A clock game against a bot: a move that is not legal is refused
        with a message, and nothing moves; a takeback is granted; both clocks
        are shown and, once each side has moved, the running one counts
        down; resigning asks to be confirmed."""
        info = json.loads(urllib.request.urlopen(self.server.url + '/api/info', timeout=30).read())
        self.open_page()
        self.select('#opponent-select', 'bot')
        self.select('#bot-select', info['bots'][0]['name'])
        self.select('#color-select', 'white')
        self.select('#time-mode', 'clock')
        self.set_input('#clock-minutes', '2')
        self.set_input('#clock-increment', '1')
        self.el('#new-game').click()
        white = self.el('.clock[data-color="white"]')
        black = self.el('.clock[data-color="black"]')
        self.wait(lambda: self.js('return !!(S.online && S.online.bot)') and white.get_attribute('data-ms'),
                  'the new game with its clocks')
        assert black.get_attribute('data-ms'), 'the black clock is not shown'
        # Selecting the pawn on a2 shows its moves; a2-b3 is not one of them.
        self.square('a2').click()
        self.wait(lambda: 'target' in self.square('a3').get_attribute('class'), 'a2 pawn targets shown')
        assert 'target' not in self.square('b3').get_attribute('class')
        self.square('b3').click()
        msg = self.el('#message')
        self.wait(lambda: 'error' in msg.get_attribute('class'), 'the refusal message')
        assert 'Illegal' in msg.text, msg.text
        refused = msg.text
        assert self.square('a2').get_attribute('data-piece') == 'P', 'the pawn left a2'
        assert self.square('b3').get_attribute('data-piece') is None
        assert self.moves_shown() == 0
        # Touching the opponent's piece is refused too.
        self.square('e7').click()
        self.wait(lambda: "Black" in msg.text or 'turn' in msg.text, 'the wrong side refused')
        self.shot('illegal-move')
        # A legal move is played and the bot answers; White's clock runs.
        self.click_move('d2d5')
        self.wait(lambda: self.moves_shown() == 2, "the bot's answer")
        # Take back: the bot grants it at once, its reply and the move go.
        self.el('#takeback').click()
        self.wait(lambda: self.moves_shown() == 0, 'the takeback')
        self.click_move('d2d5')
        self.wait(lambda: self.moves_shown() == 2, "the bot's answer again")
        self.wait(lambda: 'running' in white.get_attribute('class'), "White's clock to run")
        start = int(white.get_attribute('data-ms'))
        self.wait(lambda: int(white.get_attribute('data-ms')) < start, "White's clock to count down")
        # Resigning asks to be confirmed: the first click only asks.
        self.el('#resign').click()
        self.wait(lambda: 'Sure' in self.el('#resign').text, 'the resignation to be confirmed')
        assert not self.el('#result-banner').is_displayed(), 'resigned on one click'
        self.el('#resign').click()
        self.wait(lambda: self.el('#result-banner').is_displayed(), 'the resignation banner')
        assert '0-1' in self.el('#result-banner').text
        status = self.el('#status').text
        assert 'resigned' in status and 'to move' not in status, status
        return 'refused: %s' % refused

    def presets(self):
        """Every rule preset of /api/info is offered, and a new game under
        each starts from that preset's own position (the server's)."""
        info = json.loads(urllib.request.urlopen(self.server.url + '/api/info', timeout=30).read())
        self.open_page()
        offered = [e.get_attribute('value') for e in self.els('#rules-select option')]
        assert offered == info['presets'], offered
        self.select('#opponent-select', 'human')
        for preset in info['presets']:
            # The new game before has set up its board (its rule set too),
            # so it cannot set the rule set back after this one is chosen.
            game = self.js('return S.gameId')
            self.select('#rules-select', preset)
            self.el('#new-game').click()
            start = self.server.post_json('/api/position', {'rules': preset, 'moves': []})
            want = {'abcdefgh'[i % 8] + str(8 - i // 8): e['piece'] for i, e in enumerate(start['board']) if e}
            self.wait(lambda: self.js('return S.gameId') > game and self.board_pieces() == want,
                      'the start position of ' + preset)
        return '%d presets' % len(info['presets'])

    def analysis(self):
        """Analysis of the start position: lines appear, then update while it
        searches; arrows on the board; the bar and W/D/L are filled; Stop ends it."""
        self.open_page()
        self.tab('analysis')
        self.select('#backend-select', 'alphabeta')
        self.select('#multipv-select', '3')
        self.el('#analyze-start').click()
        lines = self.el('#analysis-lines')
        self.wait(lambda: len(self.els('#analysis-lines li.line')) == 3, 'three analysis lines')
        first = int(lines.get_attribute('data-updates'))
        self.wait(lambda: int(lines.get_attribute('data-updates')) > first, 'the lines to update')
        assert len(self.els('#arrows .arrow')) == 3, 'no arrows for the lines'
        assert self.el('#wdl').text.startswith('W/D/L '), self.el('#wdl').text
        self.wait(lambda: re.search(r'[A-Z][a-h][1-8]-[a-h][1-8]', self.el('#analysis-lines .pv').text),
                  'the principal variation in move text')
        text = self.el('#analysis-lines li.line').text
        self.shot('analysis')
        self.el('#analyze-stop').click()
        self.wait(lambda: lines.get_attribute('data-state') == 'done', 'the analysis to stop')
        assert self.el('#analyze-start').is_enabled()
        # MCTS with the material evaluator also streams lines.
        self.select('#backend-select', 'mcts')
        self.select('#evaluator-select', 'material')
        self.el('#analyze-start').click()
        self.wait(lambda: len(self.els('#analysis-lines li.line')) >= 1 and
                  int(lines.get_attribute('data-updates')) >= 2, 'MCTS lines')
        self.el('#analyze-stop').click()
        self.wait(lambda: lines.get_attribute('data-state') == 'done', 'MCTS to stop')
        return 'best line: %s' % text

    def puzzle(self):
        """A puzzle with a reply (three moves in its solution): a wrong move is
        refused, the solution's moves are played by clicking, the reply comes,
        and the puzzle is marked solved."""
        path = os.path.join(self.source, 'configs', 'puzzles', 'puzzles.jsonl')
        with open(path) as f:
            puzzles = [json.loads(line) for line in f if line.strip()]
        chosen = next(p for p in puzzles[:200]
                      if len(p['solution']) == 3 and not any(m.startswith('x') for m in p['solution']))
        self.open_page()
        self.tab('puzzles')
        self.wait(lambda: len(self.els('#puzzle-list li')) > 0, 'the puzzle list')
        tag = chosen['tags'][0]
        self.select('#puzzle-tag', tag)
        self.wait(lambda: all(tag in e.text for e in self.els('#puzzle-list li .ptags')), 'the tag filter')
        item = self.el('#puzzle-list li[data-puzzle-id="%s"]' % chosen['id'])
        self.d.execute_script('arguments[0].scrollIntoView()', item)
        item.click()
        self.wait(lambda: self.el('#puzzle-status').get_attribute('data-state') == 'playing', 'the puzzle to start')
        # A legal move that is not the solution is refused.
        pos = self.server.post_json('/api/position', {'rules': chosen['rules'], 'fen': chosen['fen'], 'moves': []})
        wrong = next(m['move'] for m in pos['legal']
                     if m['move'] != chosen['solution'][0] and not m['move'].startswith('x'))
        self.click_move(wrong)
        self.wait(lambda: self.el('#puzzle-status').get_attribute('data-state') == 'wrong', 'the wrong move refused')
        assert self.moves_shown() == 0
        for i in range(0, len(chosen['solution']), 2):
            move = chosen['solution'][i]
            before = self.server.post_json('/api/position', {'rules': chosen['rules'], 'fen': chosen['fen'],
                                                             'moves': chosen['solution'][:i]})
            captures = next(m['captures'] for m in before['legal'] if m['move'] == move)
            # Hovering over the target frames what the move would capture.
            self.square(move[0:2]).click()
            self.ActionChains(self.d).move_to_element(self.square(move[2:4])).perform()
            self.wait(lambda: sorted(e.get_attribute('data-square') for e in self.els('#board .will-capture')) ==
                      sorted(captures), 'the capture preview of %s' % move)
            self.square(move[2:4]).click()
            self.wait(lambda: self.moves_shown() >= i + 1, 'the move played')
            # After the move its captures stay marked until the reply.
            if i + 1 == len(chosen['solution']):
                for c in captures:
                    self.wait(lambda: 'captured' in self.square(c).get_attribute('class'), 'captured mark on ' + c)
            if i + 1 < len(chosen['solution']):
                self.wait(lambda: self.moves_shown() == i + 2, 'the reply')
                assert self.game_moves()[i + 1] == chosen['solution'][i + 1]
        status = self.el('#puzzle-status')
        self.wait(lambda: status.get_attribute('data-state') == 'solved', 'solved')
        assert 'Solved' in status.text, status.text
        assert 'solved' in self.el('#puzzle-list li[data-puzzle-id="%s"]' % chosen['id']).get_attribute('class')
        self.shot('puzzle')
        return '%s solved (%s)' % (chosen['id'], ' '.join(chosen['solution']))

    def puzzle_rating(self):
        """The puzzle trainer: two puzzles from 'Next puzzle at my level'
        solved raise the player's rating and make a streak of two; a wrong
        first move at the third lowers the rating and ends the streak."""
        path = os.path.join(self.source, 'configs', 'puzzles', 'puzzles.jsonl')
        with open(path) as f:
            puzzles = {p['id']: p for p in (json.loads(line) for line in f if line.strip())}
        self.open_page()
        self.tab('puzzles')
        player = self.el('#puzzle-player')
        self.wait(lambda: player.get_attribute('data-rating'), 'the player and its rating')
        rating = lambda: int(player.get_attribute('data-rating'))  # noqa: E731
        streak = lambda: int(player.get_attribute('data-streak'))  # noqa: E731
        start = self.js('return S.player.streak')
        seen = []

        def next_puzzle():
            self.el('#puzzle-next').click()
            self.wait(lambda: self.js('return S.puzzle && S.puzzle.p.id') not in seen + [None] and
                      self.el('#puzzle-status').get_attribute('data-state') == 'playing', 'the next puzzle')
            seen.append(self.js('return S.puzzle.p.id'))
            return puzzles[seen[-1]]

        ratings = [rating()]
        for k in range(2):
            p = next_puzzle()
            solution = p['solution']
            for i in range(0, len(solution), 2):
                self.click_move(solution[i])
                self.wait(lambda: self.moves_shown() >= i + 1, 'the move played')
                if i + 1 < len(solution):
                    self.wait(lambda: self.moves_shown() == i + 2, 'the reply')
            self.wait(lambda: self.el('#puzzle-status').get_attribute('data-state') == 'solved', 'solved')
            self.wait(lambda: rating() > ratings[-1], 'the rating to rise after %s' % p['id'])
            ratings.append(rating())
            assert streak() == start + k + 1, (streak(), start, k)
        p = next_puzzle()
        pos = self.server.post_json('/api/position', {'rules': p['rules'], 'fen': p['fen'], 'moves': []})
        wrong = next(m['move'] for m in pos['legal'] if m['move'] != p['solution'][0] and
                     not self.server.post_json('/api/puzzles/check', {'id': p['id'], 'moves': [m['move']]})['correct'])
        self.click_move(wrong)
        self.wait(lambda: self.el('#puzzle-status').get_attribute('data-state') == 'wrong', 'the wrong move refused')
        self.wait(lambda: rating() < ratings[-1], 'the rating to fall after the failure')
        assert streak() == 0, streak()
        self.shot('puzzle-rating')
        return 'ratings %s then %d, puzzles %s' % (ratings, rating(), ' '.join(seen))

    def pieces_and_drag(self):
        """The piece set switches from the emblems to the chess set (the
        immobilizer a rook upside down) and stays chosen after a reload; a
        piece dragged to its target is played; in a phone-sized window the
        board fits the screen's width."""
        def new_local_game():
            self.select('#opponent-select', 'human')
            self.set_input('#friend-minutes', '0')
            self.el('#new-game').click()
            self.wait(lambda: self.js('return S.mode') == 'human' and self.moves_shown() == 0 and
                      self.square('d2').get_attribute('data-piece') == 'P', 'a new game on one board')

        self.open_page()
        self.select('#piece-set', 'emblems')
        new_local_game()
        svg = lambda sq: self.el('#board [data-square="%s"] svg' % sq)  # noqa: E731
        assert 'chess' not in svg('a1').get_attribute('class')
        self.select('#piece-set', 'chess')
        self.wait(lambda: 'chess' in svg('a1').get_attribute('class'), 'the chess set on the board')
        assert svg('a1').get_attribute('data-kind') == 'i'
        assert 'rotate(180' in self.el('#board [data-square="a1"] svg g').get_attribute('transform')
        assert svg('e1').get_attribute('data-kind') == 'w'  # the withdrawer, drawn as a queen
        self.d.refresh()
        self.wait(lambda: self.js('return document.body.dataset.ready') == 'true', 'the page to load again')
        self.wait(lambda: 'chess' in svg('a1').get_attribute('class'), 'the chess set after a reload')
        assert self.el('#piece-set').get_attribute('value') == 'chess'
        new_local_game()
        # Drag and drop: press on d2, move over d5, release.
        self.ActionChains(self.d).click_and_hold(self.square('d2')).move_by_offset(5, -5) \
            .move_to_element(self.square('d5')).release().perform()
        self.wait(lambda: self.moves_shown() == 1, 'the dragged move played')
        assert self.game_moves() == ['d2d5'], self.game_moves()
        assert self.square('d5').get_attribute('data-piece') == 'P'
        self.shot('chess-set')
        self.select('#piece-set', 'emblems')
        self.wait(lambda: 'chess' not in svg('a1').get_attribute('class'), 'the emblems again')
        # A phone: the whole board within a 390-pixel-wide window.
        self.d.set_window_size(390, 844)
        try:
            self.wait(lambda: self.js('return document.getElementById("board").getBoundingClientRect().right') <= 390,
                      'the board to fit the phone')
            self.shot('phone')
        finally:
            self.d.set_window_size(1280, 960)
        return 'chess set kept over a reload, d2d5 dragged, board fits 390 px'

    def course(self):
        """The rules course: the first lesson (pawns) opens at its first
        exercise; a move that misses the goal is refused and the position
        set up again; the right move is praised; progress is kept over a
        reload, the lesson opens at the exercise not yet done, and doing it
        completes the lesson."""
        self.open_page()
        self.tab('learn')
        self.wait(lambda: len(self.els('#lesson-list li')) >= 9, 'the lessons')
        self.js("localStorage.removeItem('ultima-course')")
        self.d.refresh()
        self.wait(lambda: self.js('return document.body.dataset.ready') == 'true', 'the page to load')
        self.tab('learn')
        self.wait(lambda: len(self.els('#lesson-list li')) >= 9, 'the lessons again')
        first = self.el('#lesson-list li[data-lesson="pawn"]')
        assert first.find_element(self.By.CSS_SELECTOR, '.progress').text == '0/2'
        first.click()
        status = self.el('#exercise-status')
        self.wait(lambda: self.js('return S.mode') == 'course' and
                  self.el('#lesson').get_attribute('data-exercise') == '0', 'the first exercise')
        # c1-c4 lands short of the pinch: refused, and the board set up again.
        self.click_move('c1c4')
        self.wait(lambda: status.get_attribute('data-state') == 'wrong', 'the miss named')
        assert 'd5' in status.text, status.text
        self.wait(lambda: self.moves_shown() == 0 and self.square('c1').get_attribute('data-piece') == 'P',
                  'the position set up again')
        self.el('#exercise-hint').click()
        self.wait(lambda: 'hint' in self.square('c1').get_attribute('class'), 'the hint marking c1')
        self.click_move('c1c5')
        self.wait(lambda: status.get_attribute('data-state') == 'done', 'the exercise done')
        assert self.square('d5').get_attribute('data-piece') is None, 'the pinched pawn is still there'
        self.wait(lambda: self.el('#lesson-list li[data-lesson="pawn"] .progress').text == '1/2', 'progress 1/2')
        # Kept over a reload: the lesson opens at its second exercise.
        self.d.refresh()
        self.wait(lambda: self.js('return document.body.dataset.ready') == 'true', 'the page to load')
        self.tab('learn')
        self.wait(lambda: len(self.els('#lesson-list li')) >= 9, 'the lessons after the reload')
        assert self.el('#lesson-list li[data-lesson="pawn"] .progress').text == '1/2'
        self.el('#lesson-list li[data-lesson="pawn"]').click()
        self.wait(lambda: self.el('#lesson').get_attribute('data-exercise') == '1', 'the second exercise')
        self.click_move('d1d4')
        status = self.el('#exercise-status')  # the page was loaded again
        self.wait(lambda: status.get_attribute('data-state') == 'done', 'the second exercise done')
        self.wait(lambda: 'complete' in self.el('#lesson-list li[data-lesson="pawn"]').get_attribute('class'),
                  'the lesson complete')
        self.shot('course')
        return 'lesson pawn: a miss refused, both exercises done, kept over a reload'

    def pgn(self):
        """A PGN file is loaded and stepped through with the buttons, the keys
        and the move list; the evaluation graph is drawn; the game is saved."""
        from selenium.webdriver.common.keys import Keys
        path = os.path.join(self.source, 'tests', 'browser', 'sample_game.pgn')
        self.open_page()
        self.tab('games')
        self.el('#pgn-file').send_keys(path)
        self.wait(lambda: self.moves_shown() > 0, 'the game loaded')
        n = self.moves_shown()
        assert self.ply() == 0
        assert self.el('#ply-label').text == '0 / %d' % n
        self.el('#nav-next').click()
        self.wait(lambda: self.ply() == 1, 'next')
        self.el('#nav-next').click()
        self.wait(lambda: self.ply() == 2, 'next again')
        self.el('#nav-prev').click()
        self.wait(lambda: self.ply() == 1, 'previous')
        assert 'current' in self.el('#move-list .move[data-ply="1"]').get_attribute('class')
        body = self.el('body')
        body.send_keys(Keys.ARROW_RIGHT)
        self.wait(lambda: self.ply() == 2, 'the right arrow key')
        body.send_keys(Keys.ARROW_LEFT)
        self.wait(lambda: self.ply() == 1, 'the left arrow key')
        self.el('#move-list .move[data-ply="10"]').click()
        self.wait(lambda: self.ply() == 10, 'a click in the move list')
        # The board shows the position after those 10 moves.
        fen_after = self.server.post_json('/api/position', {'rules': 'abbott1963', 'moves': self.game_moves()[:10]})
        want = {'abcdefgh'[i % 8] + str(8 - i // 8): e['piece'] for i, e in enumerate(fen_after['board']) if e}
        assert self.board_pieces() == want, self.board_pieces()
        self.el('#nav-last').click()
        self.wait(lambda: self.ply() == n, 'last')
        self.wait(lambda: self.el('#result-banner').is_displayed(), 'the game result')
        self.el('#graph-run').click()
        graph = self.el('#eval-graph')
        self.wait(lambda: graph.get_attribute('data-points') == str(n + 1), 'the evaluation graph', timeout=180)
        # A click on the graph's middle jumps to the middle of the game.
        self.ActionChains(self.d).move_to_element(graph).click().perform()
        self.wait(lambda: abs(self.ply() - n / 2) <= 1, 'a click on the graph')
        self.el('#nav-first').click()
        self.wait(lambda: self.ply() == 0, 'first')
        self.el('#nav-next').click()
        self.wait(lambda: self.ply() == 1, 'next')
        self.shot('pgn')
        # Saved: the written PGN has the same moves.
        self.el('#pgn-text').clear()
        self.el('#pgn-save').click()
        self.wait(lambda: '[Event' in self.el('#pgn-text').get_attribute('value'), 'the saved PGN')
        text = self.el('#pgn-text').get_attribute('value')
        saved = self.server.post_json('/api/pgn/parse', {'pgn': text})
        assert saved['games'][0]['moves'] == self.game_moves(), 'the saved game differs'
        assert saved['games'][0]['result'] == '1-0', saved['games'][0]['result']
        # The browser downloaded the same text.
        download = os.path.join(self.artifacts, 'ultima-game.pgn')
        self.wait(lambda: os.path.exists(download) and open(download).read() == text, 'the downloaded PGN')
        return '%d plies stepped, graph drawn, saved' % n


    def friend_online(self):
        """Two browsers play each other online: one makes the game (White,
        15 s, no increment) and the other opens its link and takes Black.
        Black reloads the page in the middle and the server is killed and
        started again; then White lets the clock run out. Both pages show
        the loss on time, and the game's record holds the moves played."""
        self.open_page()
        self.select('#opponent-select', 'online')
        self.select('#online-colour', 'white')
        self.set_input('#friend-minutes', '0.25')
        self.set_input('#friend-increment', '0')
        self.el('#new-game').click()
        self.wait(lambda: self.el('#online-link').get_attribute('value'), 'the link to share')
        link = self.el('#online-link').get_attribute('value')
        game = link.split('#game=')[1]
        assert self.js('return S.online.seat') == 'white'
        friend = BoardTest(self.second_browser(), self.server, self.source, self.artifacts)
        try:
            friend.d.get(link)
            friend.wait(lambda: friend.js('return document.body.dataset.ready') == 'true', "the friend's page")
            friend.wait(lambda: friend.js('return S.online && S.online.seat') == 'black', 'the friend to take Black')
            self.wait(lambda: self.js('return S.online.state.status') == 'playing', 'White to see the friend come')

            def play(board, move, plies):
                board.click_move(move)
                for b in (self, friend):
                    b.wait(lambda: b.moves_shown() == plies, 'ply %d on both boards' % plies)

            play(self, 'd2d5', 1)
            play(friend, 'd7d6', 2)
            play(self, 'e2e5', 3)
            # A reload keeps the seat, the moves and the clock.
            friend.d.refresh()
            friend.wait(lambda: friend.js('return document.body.dataset.ready') == 'true', 'the reloaded page')
            friend.wait(lambda: friend.js('return S.online && S.online.seat') == 'black', 'the seat after the reload')
            assert friend.moves_shown() == 3, friend.game_moves()
            # A server killed and started again loses nothing. The pages'
            # waiting requests fail meanwhile (and are tried again): errors
            # the console may show.
            self.expected_console = ('/api/games/', 'net::ERR_')
            self.server.kill_and_restart()
            play(friend, 'e7e6', 4)
            # White does not move: the server ends the game by time.
            for b in (self, friend):
                b.wait(lambda: b.el('#result-banner').is_displayed(), 'the end by time', timeout=60)
                text = b.el('#result-banner').text
                assert 'lost on time' in text and '0-1' in text, text
            friend.shot('friend-online')
        finally:
            friend.d.quit()
        # The finished game opens in the analysis.
        self.wait(lambda: self.el('#online-analyse').is_displayed(), 'the analyse button')
        self.el('#online-analyse').click()
        self.wait(lambda: self.js('return S.mode') == 'human' and self.game_moves() == ['d2d5', 'd7d6', 'e2e5', 'e7e6']
                  and self.el('#panel-analysis').is_displayed(), 'the game in the analysis tab')
        with urllib.request.urlopen(self.server.url + '/api/games/%s.pgn' % game, timeout=30) as r:
            pgn = r.read().decode()
        record = self.server.post_json('/api/pgn/parse', {'pgn': pgn})['games'][0]
        assert record['moves'] == ['d2d5', 'd7d6', 'e2e5', 'e7e6'], record['moves']
        assert record['result'] == '0-1', record['result']
        return 'game %s: 4 plies, a reload, a restart, lost on time' % game


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ultima', required=True)
    ap.add_argument('--source', required=True)
    ap.add_argument('--artifacts', required=True)
    ap.add_argument('--only', default='', help='comma-separated scenario names')
    ap.add_argument('--screenshot-to', default='', help='also copy the analysis screenshot here')
    args = ap.parse_args()

    chromium, chromedriver = find_browser()
    if not chromium or not chromedriver or not import_selenium():
        print('SKIP: needs chromium, chromedriver and python3-selenium (scripts/install-deps.sh)')
        return SKIP
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    args.artifacts = os.path.abspath(args.artifacts)
    os.makedirs(args.artifacts, exist_ok=True)
    for old in os.listdir(args.artifacts):
        if old.endswith('.png') or old.endswith('.pgn'):
            os.remove(os.path.join(args.artifacts, old))
    log = os.path.join(args.artifacts, 'server.log')
    open(log, 'w').close()
    db = os.path.join(args.artifacts, 'games.sqlite')
    for old in (db, db + '-wal', db + '-shm'):
        if os.path.exists(old):
            os.remove(old)
    server = Server(args.ultima, args.source, log, db)
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ('--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--window-size=1280,960',
              '--disable-gpu', '--no-first-run', '--disable-extensions'):
        opts.add_argument(a)
    opts.add_experimental_option('prefs', {'download.default_directory': args.artifacts})
    opts.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
    driver = None
    failed = []
    try:
        driver = webdriver.Chrome(service=Service(chromedriver), options=opts)
        driver.set_page_load_timeout(60)
        t = BoardTest(driver, server, os.path.abspath(args.source), args.artifacts)
        t.second_browser = lambda: webdriver.Chrome(service=Service(chromedriver), options=opts)
        scenarios = ['illegal_move', 'presets', 'analysis', 'puzzle', 'puzzle_rating', 'pgn', 'play_bot_game',
                     'friend_online', 'pieces_and_drag', 'course']
        if args.only:
            scenarios = [s for s in scenarios if s in args.only.split(',')]
        for name in scenarios:
            t0 = time.monotonic()
            try:
                note = getattr(t, name)()
                # The page logged no error to the console (a script error, a
                # failed request) while the scenario ran.
                expected = getattr(t, 'expected_console', None)
                t.expected_console = None
                errors = [e['message'] for e in driver.get_log('browser') if e.get('level') == 'SEVERE'
                          and not (expected and all(part in e['message'] for part in expected))]
                assert not errors, 'console errors: %s' % errors
                print('PASS %-14s %5.1f s  %s' % (name, time.monotonic() - t0, note), flush=True)
            except Exception:
                failed.append(name)
                print('FAIL %-14s %5.1f s' % (name, time.monotonic() - t0), flush=True)
                traceback.print_exc()
                try:
                    t.shot('failed-' + name)
                    for entry in driver.get_log('browser'):
                        print('  browser:', entry.get('message'))
                except Exception:
                    pass
        if args.screenshot_to and not failed:
            shutil.copyfile(os.path.join(args.artifacts, 'analysis.png'), args.screenshot_to)
    finally:
        if driver is not None:
            driver.quit()
        server.stop()
    print('%d failed: %s' % (len(failed), ', '.join(failed)) if failed else 'all passed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
