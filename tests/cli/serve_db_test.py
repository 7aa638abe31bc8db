#!/usr/bin/env python3
"""`ultima serve`'s database over HTTP, with a killed server.

Two seats play a timed game between browsers (POST /api/games/...); the
server is killed with SIGKILL right after a move was acknowledged, started
again on the same --db file, and the game goes on from every acknowledged
move with the seats' tokens, its clock and its record (the .pgn download).
A long poll from a watcher answers the next move. A game against a bot
(the server plays its seat) is killed while the bot thinks; after the
restart the bot thinks again and its move arrives. One address gets at
most --max-searches-per-address searches at once and
--max-requests-per-minute requests (429 beyond). A --db that is not a
database stops the server before it listens, naming the file.

Usage: serve_db_test.py ULTIMA
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request

ultima = sys.argv[1]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message, file=sys.stderr)
    return condition


def start(db, extra=()):
    server = subprocess.Popen([ultima, "serve", "--port", "0", "--db", db] + list(extra),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = server.stdout.readline()
    if "http://127.0.0.1:" not in line:
        print("the server did not start:", line, server.stderr.read(), file=sys.stderr)
        server.kill()
        sys.exit(1)
    return server, "http://" + line.split("http://", 1)[1].split("/", 1)[0]


def post(base, path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read().decode())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())


with tempfile.TemporaryDirectory() as work:
    db = os.path.join(work, "games.sqlite")
    server, base = start(db)
    status, made = post(base, "/api/games/new", {"minutes": 10, "increment": 5, "colour": "white"})
    check(status == 200 and made["seat"] == "white", "create: %s %s" % (status, made))
    game = made["id"]
    white = made["token"]
    status, joined = post(base, "/api/games/join", {"id": game})
    check(status == 200 and joined["seat"] == "black", "join: %s %s" % (status, joined))
    black = joined["token"]
    played = []
    for ply, (token, move) in enumerate([(white, "d2d5"), (black, "d7d6"), (white, "e2e5")]):
        status, state = post(base, "/api/games/act",
                             {"id": game, "token": token, "action": "move", "move": move, "ply": ply})
        check(status == 200 and state["moves"] == played + [move], "move %s: %s %s" % (move, status, state))
        played.append(move)
    # Killed right after the last acknowledgement: nothing may be lost.
    server.send_signal(signal.SIGKILL)
    server.wait()
    server, base = start(db)
    status, state = post(base, "/api/games/state", {"id": game, "token": black})
    check(status == 200 and state["moves"] == played, "after the kill: %s %s" % (status, state))
    check(state.get("you") == "black", "the black seat's token after the kill: %s" % state.get("you"))
    check(state["clock"]["running"] == "black", "the clock after the kill: %s" % state.get("clock"))

    # A watcher's long poll answers Black's move.
    seen = {}

    def watch():
        seen["reply"] = post(base, "/api/games/wait", {"id": game, "version": state["version"]})

    watcher = threading.Thread(target=watch)
    watcher.start()
    status, _ = post(base, "/api/games/act",
                     {"id": game, "token": black, "action": "move", "move": "e7e6", "ply": 3})
    check(status == 200, "the move after the restart: %s" % status)
    watcher.join(60)
    reply = seen.get("reply")
    check(reply is not None and reply[1]["moves"] == played + ["e7e6"], "the watcher's poll: %s" % (reply,))
    status, _ = post(base, "/api/games/act", {"id": game, "token": white, "action": "resign"})
    check(status == 200, "resign: %s" % status)
    with urllib.request.urlopen(base + "/api/games/%s.pgn" % game, timeout=60) as r:
        pgn = r.read().decode()
    check('[Result "0-1"]' in pgn and "1. d2d5 d7d6 2. e2e5 e7e6 0-1" in pgn, "the record: %s" % pgn)
    server.send_signal(signal.SIGTERM)
    check(server.wait(timeout=60) == 0, "SIGTERM: exit %s" % server.returncode)

    # A game against a bot, killed while the bot's turn waits behind a long
    # analysis on the one search worker.
    server, base = start(db, ["--max-searches", "1"])
    started = threading.Event()

    def occupy():
        req = urllib.request.Request(base + "/api/analyze", method="POST",
                                     data=json.dumps({"id": "hold", "max_depth": 60}).encode())
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                r.readline()
                started.set()
                r.read()
        except Exception:
            started.set()  # the server was killed under it

    holder = threading.Thread(target=occupy)
    holder.start()
    check(started.wait(60), "the long analysis started")
    status, made = post(base, "/api/games/new", {"bot": "novice", "colour": "black", "movetime_ms": 200, "seed": 3})
    check(status == 200 and made["game"]["bot"]["thinking"] is True and made["game"]["moves"] == [],
          "a bot game: %s %s" % (status, made))
    bot_game, token = made["id"], made["token"]
    server.send_signal(signal.SIGKILL)
    server.wait(timeout=60)
    holder.join(60)
    server, base = start(db)
    status, state = post(base, "/api/games/state", {"id": bot_game, "token": token})
    check(status == 200 and state["you"] == "black" and state["bot"]["name"] == "novice",
          "the bot game after the kill: %s %s" % (status, state))
    for _ in range(10):
        if state["moves"]:
            break
        status, state = post(base, "/api/games/wait", {"id": bot_game, "token": token, "version": state["version"]})
    check(len(state["moves"]) == 1, "the bot's move after the restart: %s" % state)
    server.send_signal(signal.SIGTERM)
    check(server.wait(timeout=60) == 0, "SIGTERM with a bot game: exit %s" % server.returncode)

    # Per-address limits: one search at a time, and 40 requests a minute
    # (10 at once).
    server, base = start(db, ["--max-searches-per-address", "1", "--max-requests-per-minute", "40"])
    seen = {}

    def long_analysis():
        req = urllib.request.Request(base + "/api/analyze", method="POST",
                                     data=json.dumps({"id": "long", "max_depth": 60}).encode())
        with urllib.request.urlopen(req, timeout=120) as r:
            seen["first"] = r.readline()   # the search has started
            seen["rest"] = r.read()

    runner = threading.Thread(target=long_analysis)
    runner.start()
    for _ in range(100):
        if "first" in seen:
            break
        threading.Event().wait(0.05)
    status, answer = post(base, "/api/bot-move", {"bot": "novice", "moves": []})
    check(status == 429 and "searches" in answer.get("error", ""), "a second search from the address: %s %s"
          % (status, answer))
    post(base, "/api/analyze/stop", {"id": "long"})
    runner.join(60)
    statuses = [post(base, "/api/position", {"moves": []})[0] for _ in range(30)]
    check(429 in statuses and statuses[0] == 200, "30 requests at once: %s" % statuses)
    status, answer = post(base, "/api/position", {"moves": []})
    check(status == 429 and "too many requests" in answer.get("error", ""), "the refusal: %s %s" % (status, answer))
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=60)

    # A file that is not a database: refused before the server listens.
    garbage = os.path.join(work, "garbage.sqlite")
    with open(garbage, "w") as f:
        f.write("not a database, just text long enough to fill a header page of a file\n" * 4)
    refused = subprocess.run([ultima, "serve", "--port", "0", "--db", garbage],
                             capture_output=True, text=True, timeout=60)
    check(refused.returncode not in (0, -9) and garbage in refused.stderr,
          "a garbage --db: exit %s, %s" % (refused.returncode, refused.stderr))

if failures:
    print("serve_db_test: %d failed" % len(failures))
    sys.exit(1)
print("serve_db_test: all passed")
