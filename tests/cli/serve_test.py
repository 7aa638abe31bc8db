#!/usr/bin/env python3
"""`ultima serve` over HTTP, with Python's urllib (no browser).

Starts the server on a free port (--port 0) and checks: the page's files
with their content types, each byte for byte the file of WEB_DIR; /api/info; a position after moves, with a
capture listed before and after it is played; a bot's move is legal; an
analysis streams JSON lines ending with a final answer that finds a mate;
stopping an analysis; the puzzles with a correct and an incorrect answer;
a PGN written and read back. Every malformed request is answered with its
status and the field at fault, and a good request right after it still
succeeds. Two clients at once get their own analyses and games; an id in
use is refused. With --max-searches 2 --max-queue 1, a fourth long analysis
and a bot move are refused with 503; a client that hangs up lets the
waiting analysis start, and work is taken again once the searches stop.
A second server on the port in use is refused. SIGTERM stops the server
cleanly.

Usage: serve_test.py ULTIMA PUZZLE_FILE WEB_DIR
"""
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request

ultima, puzzle_file, web_dir = sys.argv[1:4]
failures = []
checks = 0


def check(condition, message):
    global checks
    checks += 1
    if not condition:
        failures.append(message)
        print("FAIL:", message, file=sys.stderr)
    return condition


server = subprocess.Popen([ultima, "serve", "--port", "0", "--max-searches", "2", "--max-queue", "1"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
first_line = server.stdout.readline()
if "http://127.0.0.1:" not in first_line:
    print("the server did not start:", first_line, server.stderr.read(), file=sys.stderr)
    server.kill()
    sys.exit(1)
base = first_line.split("http://", 1)[1].split("/", 1)[0]
base = "http://" + base


def request(method, path, body=None, raw=None):
    """(status, content type, text) of one request."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


def post(path, body):
    status, _, text = request("POST", path, body)
    return status, json.loads(text)


def get(path):
    status, _, text = request("GET", path)
    return status, json.loads(text)


class Analysis:
    """One analysis stream read on its own thread."""

    def __init__(self, query):
        self.query = query
        self.status = None
        self.closed = False
        self.answers = []
        self.first = threading.Event()
        self.opened = threading.Event()  # the server took it (or refused it)
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        host, port = base[len("http://"):].split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=300)
        try:
            self.connection.request("POST", "/api/analyze", body=json.dumps(self.query),
                                    headers={"Content-Type": "application/json"})
            r = self.connection.getresponse()
            self.status = r.status
            self.content_type = r.getheader("Content-Type", "")
            self.opened.set()
            if r.status != 200:
                self.answers.append(json.loads(r.read().decode()))
            else:
                for line in r:
                    self.answers.append(json.loads(line))
                    self.first.set()
        except (OSError, http.client.HTTPException, ValueError):
            self.closed = True  # cut by hang_up()
        self.opened.set()
        self.first.set()

    def hang_up(self):
        """Closes the connection under the reader, as a browser's aborted fetch does."""
        self.closed = True
        self.connection.sock.shutdown(socket.SHUT_RDWR)
        self.thread.join()

    def wait(self):
        self.thread.join()
        return self.answers


MATE_IN_ONE = "6pk/5K1p/8/8/3W4/2p5/8/8 w 0 1"  # d4g7 mates

try:
    # ---- the page's files
    for path, kind in [("/", "text/html"), ("/index.html", "text/html"), ("/app.js", "text/javascript"),
                       ("/style.css", "text/css"), ("/rules.html", "text/html"), ("/favicon.svg", "image/svg+xml")]:
        status, content_type, text = request("GET", path)
        check(status == 200 and content_type.startswith(kind) and text, f"GET {path}: {status} {content_type}")

    for name in sorted(os.listdir(web_dir)):
        with open(os.path.join(web_dir, name), "rb") as f:
            content = f.read()
        with urllib.request.urlopen(base + "/" + name, timeout=60) as r:
            check(r.read() == content, f"/{name} is served byte for byte")

    # ---- info
    status, info = get("/api/info")
    check(status == 200, "info answers")
    check("abbott1963" in info["presets"] and info["default_rules"] == "abbott1963", "info: presets")
    names = [b["name"] for b in info["bots"]]
    check("novice" in names and info["default_bot"] in names, f"info: bots {names}")
    check(info["backends"] == ["alphabeta", "mcts"], "info: backends")
    check(info["nnue"] == "default", f"info: the alpha-beta analyses' evaluation {info['nnue']}")
    check(info["limits"]["max_searches"] == 2 and info["limits"]["max_queue"] == 1, f"info: limits {info['limits']}")
    novice = next(b for b in info["bots"] if b["name"] == "novice")

    # ---- a position, and a capture before and after it is played
    status, start = post("/api/position", {"rules": "abbott1963", "moves": []})
    check(status == 200 and start["side"] == "white" and start["status"] == "playing", "start position")
    check(len(start["board"]) == 64 and start["board"][0]["color"] == "black", "board: a8 first")
    check(start["history"] == [] and start["last_move"] is None, "no history at the start")
    # A game walked until some legal move captures.
    moves = []
    capture = None
    position = start
    for _ in range(40):
        capture = next((m for m in position["legal"] if m["captures"] and not m["move"].startswith("x")), None)
        if capture:
            break
        moves.append(position["legal"][len(moves) * 7 % len(position["legal"])]["move"])
        status, position = post("/api/position", {"moves": moves})
        check(status == 200, f"position after {moves}")
    if check(capture is not None, "some capture within 40 plies"):
        status, after = post("/api/position", {"moves": moves + [capture["move"]]})
        last = after["last_move"]
        check(last["move"] == capture["move"] and last["notation"] == capture["notation"], "last move")
        check(sorted(c["square"] for c in last["captured"]) == sorted(capture["captures"]), "captured squares")
        files = "abcdefgh"
        for square in capture["captures"]:
            index = (8 - int(square[1])) * 8 + files.index(square[0])
            check(after["board"][index] is None, f"captured square {square} empty afterwards")
        check(len(after["history"]) == len(moves) + 1 and after["history"][-1] == last, "history")
        check(after["side"] != position["side"], "the side to move changes")

    # ---- a bot's move is legal
    status, bot = post("/api/bot-move", {"moves": moves, "bot": "novice", "seed": 3})
    check(status == 200 and bot["bot"] == "novice" and bot["elo"] == novice["elo"], f"bot move: {status} {bot}")
    check(bot.get("move") in [m["move"] for m in position["legal"]], f"the bot's move {bot.get('move')} is legal")
    check("cp" in bot["score"] and len(bot["score"]["wdl"]) == 3, "the bot's score")
    status, timed = post("/api/bot-move", {"moves": moves, "bot": "casual", "wtime": 60000, "btime": 60000,
                                           "winc": 1000, "binc": 1000})
    check(status == 200 and timed["move"] in [m["move"] for m in position["legal"]], "a bot on a clock")

    # ---- an analysis stream finds the mate
    a = Analysis({"id": "mate", "fen": MATE_IN_ONE, "max_depth": 4, "multi_pv": 2})
    answers = a.wait()
    check(a.status == 200 and a.content_type.startswith("application/x-ndjson"), f"analysis: {a.status}")
    check(answers and answers[-1]["final"] and answers[-1]["id"] == "mate", "the stream ends with the final answer")
    check(all(not x["final"] for x in answers[:-1]), "only the last answer is final")
    check(answers[-1]["moves"][0]["move"] == "d4g7" and answers[-1]["moves"][0]["mate"] == 1, "the mate found")
    check(len(answers[-1]["moves"]) == 2, "multi_pv 2")
    b = Analysis({"backend": "mcts", "max_visits": 50, "moves": ["a2a3"]})
    answers = b.wait()
    check(b.status == 200 and answers[-1]["final"] and answers[-1]["root"]["visits"] >= 50, "an MCTS analysis")
    check(answers[-1]["id"].startswith("q"), "a server-made id when none is given")

    # ---- stop
    long_query = {"id": "long", "max_time_ms": 600000, "report_every_ms": 20}
    s = Analysis(long_query)
    s.first.wait(60)
    status, taken = post("/api/analyze", {"id": "long", "max_depth": 1})
    check(status == 400 and taken["field"] == "id", f"an id in use is refused: {taken}")
    status, stopped = post("/api/analyze/stop", {"id": "long"})
    check(status == 200 and stopped == {"stopped": True}, f"stop: {stopped}")
    answers = s.wait()
    check(answers[-1]["final"] and answers[-1].get("terminated") and answers[-1]["moves"], "stopped with a final answer")
    status, stopped = post("/api/analyze/stop", {"id": "long"})
    check(status == 200 and stopped == {"stopped": False}, "nothing left to stop")

    # ---- puzzles
    status, listing = get("/api/puzzles")
    shipped = [json.loads(line) for line in open(puzzle_file) if line.strip()]
    check(status == 200 and len(listing["puzzles"]) == len(shipped), "every shipped puzzle listed")
    check(all("solution" not in p for p in listing["puzzles"]), "no solutions in the list")
    first = listing["puzzles"][0]
    check({"id", "rules", "fen", "side", "kind", "rating", "tags", "moves_to_find"} <= set(first), f"puzzle fields {first}")
    long_one = next(p for p in shipped if len(p["solution"]) >= 3)
    solution = long_one["solution"]
    status, verdict = post("/api/puzzles/check", {"id": long_one["id"], "moves": solution[:1]})
    check(status == 200 and verdict["correct"] and not verdict["solved"] and verdict["reply"] == solution[1],
          f"a correct first move gets the reply: {verdict}")
    status, verdict = post("/api/puzzles/check", {"id": long_one["id"], "moves": solution})
    check(status == 200 and verdict["correct"] and verdict["solved"] and verdict["reply"] is None, f"solved: {verdict}")
    status, at = post("/api/position", {"rules": long_one["rules"], "fen": long_one["fen"]})
    wrong = next(m["move"] for m in at["legal"] if m["move"] != solution[0])
    status, verdict = post("/api/puzzles/check", {"id": long_one["id"], "moves": [wrong]})
    check(status == 200 and not verdict["correct"] and verdict["expected"] == solution[0], f"a wrong move: {verdict}")

    # ---- PGN both ways
    game_moves = moves + ([capture["move"]] if capture else [])
    status, written = post("/api/pgn/write", {"tags": {"White": "Ann", "Black": "novice", "Event": "web"},
                                              "rules": "abbott1963", "moves": game_moves, "result": "*"})
    check(status == 200 and '[White "Ann"]' in written["pgn"], "PGN written")
    status, parsed = post("/api/pgn/parse", {"pgn": written["pgn"]})
    if check(status == 200 and len(parsed["games"]) == 1, f"PGN parsed: {parsed}"):
        g = parsed["games"][0]
        check(g["moves"] == game_moves and g["tags"]["White"] == "Ann" and g["tags"]["Event"] == "web",
              "the PGN round trip keeps moves and tags")
        check(g["rules"] == "abbott1963" and g["result"] == "*" and g["fen"] == start["fen"], "rules, result, fen")

    bad_pgn = written["pgn"].replace(game_moves[-1], "h9h9")
    bad_line = next(i + 1 for i, line in enumerate(bad_pgn.split("\n")) if "h9h9" in line)
    status, refused = post("/api/pgn/parse", {"pgn": "\n" + written["pgn"] + "\n" + bad_pgn})
    check(status == 400 and refused["field"] == "pgn" and f"line {bad_line + len(written['pgn'].split(chr(10))) + 1}, game 2"
          in refused["error"], f"a PGN error names the line and the game: {refused}")

    # ---- malformed requests: their error, then a good request still answers
    oversize = b'{"pgn": "' + b"a" * (1 << 20) + b'"}'
    bad_requests = [
        ("POST", "/api/position", b"{not json", 400, None),
        ("POST", "/api/position", b"[1, 2]", 400, None),
        ("POST", "/api/position", json.dumps({"moves": [], "colour": "red"}).encode(), 400, "colour"),
        ("POST", "/api/position", json.dumps({"moves": "a2a3"}).encode(), 400, "moves"),
        ("POST", "/api/position", json.dumps({"moves": ["a2a3", "a2a3"]}).encode(), 400, "moves"),
        ("POST", "/api/position", json.dumps({"fen": "8/8/8 w"}).encode(), 400, "fen"),
        ("POST", "/api/position", json.dumps({"rules": "nonesuch"}).encode(), 400, "rules"),
        ("POST", "/api/bot-move", json.dumps({"bot": "nobody"}).encode(), 404, "bot"),
        ("POST", "/api/bot-move", json.dumps({"bot": "novice", "movetime_ms": "fast"}).encode(), 400, "movetime_ms"),
        ("POST", "/api/analyze", b"{", 400, None),
        ("POST", "/api/analyze", json.dumps({"max_depth": 0}).encode(), 400, "max_depth"),
        ("POST", "/api/analyze", json.dumps({"depth": 3}).encode(), 400, "depth"),
        ("POST", "/api/analyze", json.dumps({"moves": ["e2e9"]}).encode(), 400, "moves"),
        ("POST", "/api/analyze", json.dumps({"backend": "mcts", "weights": "/etc/passwd"}).encode(), 400, "weights"),
        ("POST", "/api/analyze", json.dumps({"nnue": "/etc/passwd"}).encode(), 400, "nnue"),
        ("POST", "/api/analyze/stop", json.dumps({"id": 5}).encode(), 400, "id"),
        ("POST", "/api/puzzles/check", json.dumps({"id": "P99999999", "moves": []}).encode(), 404, "id"),
        ("POST", "/api/puzzles/check", json.dumps({"id": first["id"], "moves": ["zz"]}).encode(), 400, "moves"),
        ("POST", "/api/pgn/parse", json.dumps({"pgn": "1. a2a9 *"}).encode(), 400, "pgn"),
        ("POST", "/api/pgn/write", json.dumps({"moves": [], "result": "2-0"}).encode(), 400, "result"),
        ("POST", "/api/position", oversize, 413, None),
        ("GET", "/api/nothing", None, 404, None),
        ("GET", "/../../etc/passwd", None, 404, None),
    ]
    for method, path, raw, want, field in bad_requests:
        label = f"{method} {path} {raw[:40] if raw else ''}"
        try:
            status, content_type, text = request(method, path, raw=raw)
        except (ConnectionError, urllib.error.URLError) as e:
            check(False, f"{label}: no answer ({e})")
            continue
        check(status == want, f"{label}: status {status}, expected {want}: {text[:200]}")
        try:
            body = json.loads(text)
            check(isinstance(body.get("error"), str) and body["error"], f"{label}: an error message")
            if field:
                check(body.get("field") == field, f"{label}: field {body.get('field')}, expected {field}")
        except ValueError:
            check(False, f"{label}: the error is not JSON: {text[:200]}")
        status, ok = post("/api/position", {"moves": ["a2a3"]})
        check(status == 200 and ok["history"][0]["move"] == "a2a3", f"after {label}: a good request answers")

    # ---- two clients at once: analyses and games
    one = Analysis({"id": "one", "fen": MATE_IN_ONE, "max_depth": 5})
    two = Analysis({"id": "two", "moves": ["a2a3"], "max_depth": 5})
    for stream, mover in [(one, "d4g7"), (two, None)]:
        answers = stream.wait()
        check(stream.status == 200 and all(x["id"] == stream.query["id"] for x in answers),
              f"client {stream.query['id']}: its own answers")
        if mover:
            check(answers[-1]["moves"][0]["move"] == mover, "client one: the mate")
        else:
            check(answers[-1]["moves"][0]["move"] != "d4g7" and answers[-1]["root"]["depth"] == 5, "client two: its position")
    games = {}

    def play(name, opening):
        status, p = post("/api/position", {"moves": opening})
        status2, b = post("/api/bot-move", {"moves": opening, "bot": "novice"})
        games[name] = (status, p, status2, b)

    threads = [threading.Thread(target=play, args=("x", ["a2a3"])), threading.Thread(target=play, args=("y", ["b2b4", "g7g5"]))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for name, opening in [("x", ["a2a3"]), ("y", ["b2b4", "g7g5"])]:
        status, p, status2, b = games[name]
        check(status == 200 and [h["move"] for h in p["history"]] == opening, f"game {name}: its own position")
        check(status2 == 200 and b["move"] in [m["move"] for m in p["legal"]], f"game {name}: a legal bot move")

    # ---- the limit: 2 running, 1 waiting, then 503
    busy = [Analysis(dict(long_query, id=f"busy{i}")) for i in range(3)]
    for stream in busy:
        stream.opened.wait(60)  # its response began: the server holds it, running or waiting
        check(stream.status == 200, f"{stream.query['id']} taken: {stream.status}")
    status, content_type, text = request("POST", "/api/analyze", raw=json.dumps({"id": "extra", "max_depth": 1}).encode())
    refused = json.loads(text)
    check(status == 503 and "busy" in refused["error"], f"beyond the limit: {status} {refused}")
    status, body = post("/api/bot-move", {"bot": "novice"})
    check(status == 503, f"a bot move beyond the limit: {status}")
    # A client that goes away frees its place: the waiting one starts.
    running = []
    for _ in range(6000):
        running = [x for x in busy if x.answers]
        if len(running) == 2:
            break
        threading.Event().wait(0.01)
    if check(len(running) == 2, f"two of three running: {[x.query['id'] for x in running]}"):
        waiting = next(x for x in busy if x not in running)
        check(not waiting.answers, "the third waits")
        running[0].hang_up()
        check(running[0].closed or running[0].answers[-1]["final"] is False, "hung up mid-stream")
        check(waiting.first.wait(120) and waiting.answers, "the waiting analysis starts once a client goes away")
    for stream in busy:
        if not stream.closed:
            post("/api/analyze/stop", {"id": stream.query["id"]})
    for stream in busy:
        answers = stream.wait()
        if not stream.closed:
            check(stream.status == 200 and answers[-1]["final"], f"{stream.query['id']} ends with its final answer")
    status, body = post("/api/bot-move", {"bot": "novice"})
    check(status == 200, "after the searches stop, work is taken again")

    # ---- a second server on the same port is refused, naming the address
    port = base.rsplit(":", 1)[1]
    second = subprocess.run([ultima, "serve", "--port", port], capture_output=True, text=True, timeout=60)
    check(second.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in second.stderr,
          f"the port in use: {second.returncode} {second.stderr}")
finally:
    server.send_signal(signal.SIGTERM)
    try:
        out, err = server.communicate(timeout=60)
        check(server.returncode == 0, f"SIGTERM: exit status {server.returncode}: {err[-500:]}")
        check("stopped" in out, "the server says it stopped")
    except subprocess.TimeoutExpired:
        server.kill()
        check(False, "the server did not stop on SIGTERM")

if failures:
    print(f"{len(failures)} failure(s)", file=sys.stderr)
    sys.exit(1)
print(f"serve test: all {checks} checks passed")
