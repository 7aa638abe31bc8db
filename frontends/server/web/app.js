// The Ultima web board: plain JavaScript, no library. The server is the
// referee: every position, its legal moves and their captures come from
// /api/position; this page only shows them and sends what the player picks.
'use strict';

const FILES = 'abcdefgh';
const PIECE_NAMES = {
  k: 'King', p: 'Pincer pawn', w: 'Withdrawer', l: 'Long leaper',
  c: 'Coordinator', i: 'Immobilizer', x: 'Chameleon',
};

const $ = (id) => document.getElementById(id);

const S = {
  info: null,
  rules: 'abbott1963',
  startFen: null,        // null: the preset's own start
  moves: [],             // the game's moves, coordinate form
  viewPly: 0,            // the ply shown on the board
  pos: null,             // /api/position answer at viewPly
  full: null,            // /api/position answer after all moves
  flipped: false,
  selected: null,
  mode: 'human',         // 'human' | 'bot' | 'online' | 'puzzle'
  gameId: 0,             // bumps on every new game; stale answers are dropped
  result: null,          // {result, text} once the game is over
  tags: {},
  bot: null,             // {name, elo, humanColor, timeMode, movetime, thinking}
  clock: null,           // {white, black, inc, side, since, timer}
  puzzle: null,          // {p, solved, expected, busy}
  graph: null,           // {gameId, scores: []}
  analysis: null,        // {id, controller, side, running, lines}
  puzzles: [],
  puzzlePage: 0,
  player: null,          // {token, rating, rd, streak, best_streak, attempts, solved}: the puzzle trainer's
  online: null,          // {id, token, seat, version, state, busy}: a game between browsers
  courseData: null,      // the lessons of /api/course
  course: null,          // {li, ei, done, busy}: the exercise on the board
};

// ---------------------------------------------------------------- helpers

class ApiError extends Error {
  constructor(message, status, field) { super(message); this.status = status; this.field = field; }
}

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  };
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    throw new ApiError('the server does not answer (' + e.message + ')', 0);
  }
  let data = null;
  try { data = await resp.json(); } catch (e) { /* not JSON */ }
  if (!resp.ok) {
    const msg = data && data.error ? data.error : ('HTTP ' + resp.status);
    throw new ApiError(msg, resp.status, data && data.field);
  }
  return data;
}

function squareName(index) {        // board index, a8 first
  return FILES[index % 8] + (8 - Math.floor(index / 8));
}
function squareIndex(sq) {
  return (8 - Number(sq[1])) * 8 + FILES.indexOf(sq[0]);
}
function other(color) { return color === 'white' ? 'black' : 'white'; }
function cap(s) { return s.charAt(0).toUpperCase() + s.slice(1); }

function moveSquares(move) {        // {from, to} of a coordinate move; a removal has from == to
  if (!move) return null;
  if (move[0] === 'x') return { from: move.slice(1, 3), to: move.slice(1, 3), removal: true };
  return { from: move.slice(0, 2), to: move.slice(2, 4), removal: false };
}

function setMessage(text, kind) {
  const m = $('message');
  m.textContent = text || '';
  m.className = kind || '';
}

function formatClock(ms) {
  if (ms <= 0) return '0:00.0';
  const total = Math.floor(ms / 100);
  const tenths = total % 10;
  const s = Math.floor(total / 10);
  const m = Math.floor(s / 60);
  const ss = String(s % 60).padStart(2, '0');
  return ms < 20000 ? `${m}:${ss}.${tenths}` : `${m}:${ss}`;
}

// A score from the side to move's view, as text from White's view.
function scoreText(score, side) {
  if (!score) return '';
  const sign = side === 'white' ? 1 : -1;
  if (score.mate !== undefined && score.mate !== null) {
    const m = score.mate * sign;
    return (m > 0 ? '#' : '-#') + Math.abs(m);
  }
  const cp = score.cp * sign;
  return (cp > 0 ? '+' : cp < 0 ? '−' : '') + (Math.abs(cp) / 100).toFixed(2);
}
function whiteWdl(wdl, side) {
  if (!wdl) return null;
  return side === 'white' ? wdl : [wdl[2], wdl[1], wdl[0]];
}

// ---------------------------------------------------------------- pieces

// Two piece sets, chosen in the header and remembered: 'emblems' (a token
// with the piece's letter, shaped by kind) and 'chess' (the chess pieces
// whose moves each Ultima piece recalls: the withdrawer a queen, the long
// leaper a knight, the chameleon a bishop, the coordinator a rook, the
// immobilizer a rook upside down).
let pieceSet = (() => {
  try { return localStorage.getItem('ultima-pieces') === 'chess' ? 'chess' : 'emblems'; } catch (e) { return 'emblems'; }
})();

function setPieceSet(name) {
  pieceSet = name === 'chess' ? 'chess' : 'emblems';
  try { localStorage.setItem('ultima-pieces', pieceSet); } catch (e) { /* this page only */ }
  document.body.dataset.pieces = pieceSet;
  if ($('piece-set')) $('piece-set').value = pieceSet;
  if ($('board')) renderBoard();
  renderDiagrams();
}

// The chess set's silhouettes, drawn on a 100 x 100 box.
const CHESS_SHAPES = {
  p: '<circle cx="50" cy="30" r="13"/><path d="M39 42 Q50 48 61 42 L67 72 L33 72 Z"/><rect x="24" y="72" width="52" height="13" rx="3"/>',
  r: '<path d="M25 16 H36 V25 H44 V16 H56 V25 H64 V16 H75 V34 L67 40 V66 L75 72 V86 H25 V72 L33 66 V40 L25 34 Z"/>',
  n: '<path d="M28 86 V74 Q31 60 43 52 L29 51 Q20 48 24 39 L43 21 Q52 11 63 15 Q81 24 79 52 L77 74 L79 86 Z"/><circle cx="52" cy="28" r="3.5" class="eye"/>',
  b: '<path d="M50 10 Q67 28 65 48 Q63 60 57 64 H43 Q37 60 35 48 Q33 28 50 10 Z"/><path d="M41 64 H59 L64 73 H36 Z"/><rect x="26" y="73" width="48" height="13" rx="3"/><path d="M50 24 L56 40" class="cut"/>',
  q: '<path d="M18 28 L31 63 L37 25 L50 60 L63 25 L69 63 L82 28 L75 73 H25 Z"/><circle cx="18" cy="25" r="5"/><circle cx="37" cy="21" r="5"/><circle cx="50" cy="17" r="5"/><circle cx="63" cy="21" r="5"/><circle cx="82" cy="25" r="5"/><rect x="23" y="73" width="54" height="13" rx="3"/>',
  k: '<path d="M46 8 H54 V16 H62 V23 H54 V31 H46 V23 H38 V16 H46 Z"/><path d="M27 73 Q17 45 37 38 Q50 33 63 38 Q83 45 73 73 Z"/><rect x="23" y="73" width="54" height="13" rx="3"/>',
};
const CHESS_OF = { p: 'p', k: 'k', w: 'q', l: 'n', x: 'b', c: 'r', i: 'r' };

function chessPieceSvg(letter) {
  const white = letter === letter.toUpperCase();
  const kind = letter.toLowerCase();
  const fill = white ? '#fbf7ee' : '#2b2622';
  const stroke = white ? '#2b2622' : '#e8dcc4';
  // The immobilizer: the rook turned over, the only piece that stands on its head.
  const turn = kind === 'i' ? ' transform="rotate(180 50 50)"' : '';
  return `<svg class="piece-svg chess" viewBox="0 0 100 100" aria-hidden="true" data-kind="${kind}">` +
    `<g${turn} fill="${fill}" stroke="${stroke}" stroke-width="3.5" stroke-linejoin="round">` +
    CHESS_SHAPES[CHESS_OF[kind] || 'p'].replace('class="eye"', `fill="${stroke}" stroke="none"`)
      .replace('class="cut"', `fill="none" stroke="${stroke}"`) +
    '</g></svg>';
}

function pieceSvg(letter) {
  return pieceSet === 'chess' ? chessPieceSvg(letter) : emblemSvg(letter);
}

// The emblems: a token in the side's colour with the piece's letter, and
// a shape that tells the kinds apart at a glance.
function emblemSvg(letter) {
  const white = letter === letter.toUpperCase();
  const kind = letter.toLowerCase();
  const fill = white ? '#fbf7ee' : '#2b2622';
  const ink = white ? '#2b2622' : '#fbf7ee';
  const stroke = white ? '#2b2622' : '#e8dcc4';
  let shape;
  switch (kind) {
    case 'p':
      shape = `<circle cx="50" cy="52" r="27" fill="${fill}" stroke="${stroke}" stroke-width="4"/>`;
      break;
    case 'k':
      shape = `<path d="M18 78 L14 30 L32 46 L50 20 L68 46 L86 30 L82 78 Z" fill="${fill}" stroke="${stroke}" stroke-width="4" stroke-linejoin="round"/>`;
      break;
    case 'i':
      shape = `<rect x="15" y="15" width="70" height="70" rx="8" fill="${fill}" stroke="${stroke}" stroke-width="4"/>`;
      break;
    case 'c':
      shape = `<polygon points="50,10 90,50 50,90 10,50" fill="${fill}" stroke="${stroke}" stroke-width="4" stroke-linejoin="round"/>`;
      break;
    case 'l':
      shape = `<polygon points="50,10 88,78 12,78" fill="${fill}" stroke="${stroke}" stroke-width="4" stroke-linejoin="round"/>`;
      break;
    case 'w':
      shape = `<polygon points="50,10 84,30 84,70 50,90 16,70 16,30" fill="${fill}" stroke="${stroke}" stroke-width="4" stroke-linejoin="round"/>`;
      break;
    case 'x':
      shape = `<circle cx="50" cy="50" r="38" fill="${fill}" stroke="${stroke}" stroke-width="4" stroke-dasharray="9 5"/>`;
      break;
    default:
      shape = `<circle cx="50" cy="50" r="38" fill="${fill}" stroke="${stroke}" stroke-width="4"/>`;
  }
  const y = kind === 'k' ? 66 : kind === 'l' ? 68 : 63;
  const size = kind === 'p' ? 30 : 36;
  return `<svg class="piece-svg" viewBox="0 0 100 100" aria-hidden="true">${shape}` +
    `<text x="50" y="${y}" text-anchor="middle" font-size="${size}" font-weight="700" ` +
    `font-family="DejaVu Sans, Arial, sans-serif" fill="${ink}">${kind.toUpperCase()}</text></svg>`;
}

// ---------------------------------------------------------------- board

function buildBoard() {
  const board = $('board');
  board.innerHTML = '';
  for (let row = 0; row < 8; ++row) {
    for (let col = 0; col < 8; ++col) {
      const file = S.flipped ? 7 - col : col;
      const rank = S.flipped ? row + 1 : 8 - row;
      const sq = FILES[file] + rank;
      const div = document.createElement('div');
      div.className = 'square ' + ((file + rank) % 2 === 0 ? 'dark' : 'light');
      div.dataset.square = sq;
      div.setAttribute('role', 'gridcell');
      div.addEventListener('click', () => onSquareClick(sq));
      div.addEventListener('mouseenter', () => onSquareHover(sq));
      div.addEventListener('mouseleave', () => onSquareHover(null));
      board.appendChild(div);
    }
  }
  const ranks = $('ranks');
  const files = $('files');
  ranks.innerHTML = '';
  files.innerHTML = '';
  for (let i = 0; i < 8; ++i) {
    const r = document.createElement('span');
    r.textContent = S.flipped ? i + 1 : 8 - i;
    ranks.appendChild(r);
    const f = document.createElement('span');
    f.textContent = S.flipped ? FILES[7 - i] : FILES[i];
    files.appendChild(f);
  }
  const top = $('clock-top');
  const bottom = $('clock-bottom');
  top.dataset.color = S.flipped ? 'white' : 'black';
  bottom.dataset.color = S.flipped ? 'black' : 'white';
  document.body.dataset.flipped = S.flipped ? 'true' : 'false';
  renderBoard();
  renderClocks();
}

function squareEl(sq) { return document.querySelector(`#board [data-square="${sq}"]`); }

function renderBoard() {
  const pos = S.pos;
  const last = pos && pos.last_move ? moveSquares(pos.last_move.move) : null;
  const captured = new Map();
  if (pos && pos.last_move && pos.last_move.captured) {
    for (const c of pos.last_move.captured) captured.set(c.square, c.piece);
  }
  const targets = new Map();
  if (S.selected && pos) {
    for (const m of pos.legal) {
      if (m.from === S.selected && m.move[0] !== 'x') targets.set(m.to, m);
    }
  }
  let kingInCheck = null;
  if (pos && pos.in_check) {
    const k = pos.side === 'white' ? 'K' : 'k';
    const i = pos.board.findIndex((e) => e && e.piece === k);
    if (i >= 0) kingInCheck = squareName(i);
  }
  for (const div of document.querySelectorAll('#board .square')) {
    const sq = div.dataset.square;
    const entry = pos ? pos.board[squareIndex(sq)] : null;
    div.classList.toggle('last-from', !!last && last.from === sq);
    div.classList.toggle('last-to', !!last && last.to === sq);
    div.classList.toggle('captured', captured.has(sq));
    div.classList.toggle('selected', S.selected === sq);
    div.classList.toggle('target', targets.has(sq));
    div.classList.toggle('capture-target', targets.has(sq) && targets.get(sq).captures.length > 0);
    div.classList.toggle('check', kingInCheck === sq);
    div.classList.remove('will-capture');
    let html = '';
    if (entry) {
      html = `<div class="piece${entry.frozen ? ' frozen' : ''}" data-piece="${entry.piece}" ` +
        `data-color="${entry.color}" title="${cap(entry.color)} ${PIECE_NAMES[entry.piece.toLowerCase()]}` +
        `${entry.frozen ? ' (frozen)' : ''}">${pieceSvg(entry.piece)}` +
        `${entry.frozen ? '<span class="frost" aria-label="frozen"></span>' : ''}</div>`;
      div.dataset.piece = entry.piece;
      div.dataset.frozen = entry.frozen ? 'true' : 'false';
    } else {
      delete div.dataset.piece;
      delete div.dataset.frozen;
      if (captured.has(sq)) html = `<div class="ghost">${pieceSvg(captured.get(sq))}</div>`;
    }
    div.innerHTML = html;
  }
  renderArrows();
}

function onSquareHover(sq) {
  for (const d of document.querySelectorAll('#board .will-capture')) d.classList.remove('will-capture');
  if (!sq || !S.selected || !S.pos) return;
  const m = S.pos.legal.find((x) => x.from === S.selected && x.to === sq && x.move[0] !== 'x');
  if (!m) return;
  for (const c of m.captures) {
    const d = squareEl(c);
    if (d) d.classList.add('will-capture');
  }
  setMessage(m.notation + (m.captures.length ? `: captures ${m.captures.join(', ')}` : ''), 'info');
}

function canMoveNow() {
  const pos = S.pos;
  if (!pos) return 'the position is loading';
  if (pos.status !== 'playing') return 'the game is over in this position';
  if (S.mode === 'online') {
    const o = S.online;
    if (!o.seat) return 'you are watching this game';
    if (S.result) return 'the game is over';
    if (o.state && o.state.status === 'waiting') return 'your friend has not opened the link yet';
    if (S.viewPly !== S.moves.length) return 'go to the last move to play on';
    if (o.busy || pos.side !== o.seat) return o.bot ? 'it is the bot\'s turn' : 'it is your friend\'s turn';
  }
  if (S.mode === 'human' && S.result) return 'the game is over';
  if (S.mode === 'course') {
    if (S.course.done) return 'the exercise is done: press Next exercise';
    if (S.course.busy || S.moves.length > 0) return 'wait';
  }
  if (S.mode === 'puzzle') {
    if (S.puzzle.solved) return 'the puzzle is solved';
    if (S.viewPly !== S.moves.length) return 'go to the last move to play on';
    if (S.puzzle.busy || pos.side !== S.puzzle.p.side) return 'wait for the reply';
  }
  return null;
}

function select(sq) {
  S.selected = sq;
  const removal = sq && S.pos.legal.find((m) => m.move === 'x' + sq);
  $('removal-box').hidden = !removal;
  renderBoard();
}

function onSquareClick(sq) {
  if (suppressClick) return;
  const pos = S.pos;
  if (!pos) return;
  const entry = pos.board[squareIndex(sq)];
  if (S.selected) {
    if (sq === S.selected) { select(null); setMessage(''); return; }
    const m = pos.legal.find((x) => x.from === S.selected && x.to === sq && x.move[0] !== 'x');
    if (m) { select(null); playMove(m); return; }
    if (entry && entry.color === pos.side) { trySelect(sq, entry); return; }
    const from = S.selected;
    select(null);
    refuse(`Illegal move: ${from}-${sq} is not a legal move`);
    return;
  }
  if (!entry) return;
  trySelect(sq, entry);
}

// ---------------------------------------------------------------- drag and drop

// A piece of the side to move can be dragged to its target as well as
// clicked there: the drag selects it (with its targets shown), the drop
// plays as a click on the target would. A press without a move is left to
// the click handlers.
let drag = null;           // {from, x, y, id, ghost, size, moved}
let suppressClick = false; // the click that ends a drag is not a click

function squareAt(x, y) {
  const el = document.elementFromPoint(x, y);
  const cell = el && el.closest ? el.closest('#board .square') : null;
  return cell ? cell.dataset.square : null;
}

function onPointerDown(ev) {
  if (ev.button !== undefined && ev.button !== 0) return;
  const cell = ev.target.closest ? ev.target.closest('.square') : null;
  if (!cell || !S.pos) return;
  const entry = S.pos.board[squareIndex(cell.dataset.square)];
  if (!entry || entry.color !== S.pos.side) return;
  drag = { from: cell.dataset.square, x: ev.clientX, y: ev.clientY, id: ev.pointerId, ghost: null, moved: false };
}

function onPointerMove(ev) {
  if (!drag || ev.pointerId !== drag.id) return;
  if (!drag.moved) {
    if (Math.hypot(ev.clientX - drag.x, ev.clientY - drag.y) < 6) return;
    if (canMoveNow()) { drag = null; return; }    // the click says why not
    if (S.selected !== drag.from) trySelect(drag.from, S.pos.board[squareIndex(drag.from)]);
    if (S.selected !== drag.from) { drag = null; return; }
    drag.moved = true;
    const from = squareEl(drag.from);
    drag.size = from.getBoundingClientRect().width;
    const g = document.createElement('div');
    g.className = 'drag-ghost';
    g.innerHTML = pieceSvg(S.pos.board[squareIndex(drag.from)].piece);
    g.style.width = g.style.height = drag.size + 'px';
    document.body.appendChild(g);
    drag.ghost = g;
    from.classList.add('dragging');
  }
  drag.ghost.style.left = (ev.clientX - drag.size / 2) + 'px';
  drag.ghost.style.top = (ev.clientY - drag.size / 2) + 'px';
  onSquareHover(squareAt(ev.clientX, ev.clientY));
  ev.preventDefault();
}

function onPointerUp(ev) {
  if (!drag || ev.pointerId !== drag.id) return;
  const d = drag;
  drag = null;
  if (!d.moved) return;
  d.ghost.remove();
  const from = squareEl(d.from);
  if (from) from.classList.remove('dragging');
  suppressClick = true;
  setTimeout(() => { suppressClick = false; }, 0);
  const to = squareAt(ev.clientX, ev.clientY);
  if (!to || to === d.from) return;              // dropped back: still selected
  suppressClick = false;
  onSquareClick(to);
  suppressClick = true;
}

function trySelect(sq, entry) {
  const pos = S.pos;
  const why = canMoveNow();
  if (why) { select(null); refuse(`You cannot move now: ${why}.`); return; }
  if (entry.color !== pos.side) {
    select(null);
    refuse(`Illegal move: that ${PIECE_NAMES[entry.piece.toLowerCase()].toLowerCase()} is ${cap(entry.color)}'s, and it is ${cap(pos.side)}'s turn.`);
    return;
  }
  select(sq);
  const n = pos.legal.filter((m) => m.from === sq && m.move[0] !== 'x').length;
  if (entry.frozen) {
    setMessage(`This ${PIECE_NAMES[entry.piece.toLowerCase()]} is frozen` +
      (pos.legal.some((m) => m.move === 'x' + sq) ? ': it cannot move, but you may remove it.' : ' and cannot move.'), 'info');
  } else if (n === 0) {
    setMessage(`This ${PIECE_NAMES[entry.piece.toLowerCase()]} has no legal move.`, 'info');
  } else {
    setMessage(`${PIECE_NAMES[entry.piece.toLowerCase()]}: ${n} legal move${n === 1 ? '' : 's'}.`, 'info');
  }
}

function refuse(text) {
  setMessage(text, 'error');
  const b = $('board');
  b.classList.remove('shake');
  void b.offsetWidth;
  b.classList.add('shake');
}

// ---------------------------------------------------------------- positions

const positionCache = new Map();

async function fetchPosition(moves) {
  const key = S.rules + '|' + (S.startFen || '') + '|' + moves.join(' ');
  if (positionCache.has(key)) return positionCache.get(key);
  const body = { rules: S.rules, moves };
  if (S.startFen) body.fen = S.startFen;
  const pos = await api('/api/position', body);
  if (positionCache.size > 2000) positionCache.clear();
  positionCache.set(key, pos);
  return pos;
}

// Shows ply `ply` of the game; `fullChanged`: the move list changed.
let showSeq = 0;
async function showPly(ply, fullChanged) {
  const gameId = S.gameId;
  const seq = ++showSeq;
  // A newer call replaces this one; it takes over a pending move-list change.
  fullChanged = fullChanged || S.needFull;
  S.needFull = fullChanged;
  ply = Math.max(0, Math.min(ply, S.moves.length));
  try {
    const [pos, full] = await Promise.all([
      fetchPosition(S.moves.slice(0, ply)),
      fullChanged || !S.full ? fetchPosition(S.moves) : Promise.resolve(S.full),
    ]);
    if (gameId !== S.gameId || seq !== showSeq) return;
    S.viewPly = ply;
    S.pos = pos;
    S.full = full;
    S.needFull = false;
  } catch (e) {
    if (gameId === S.gameId) setMessage('The server refused the position: ' + e.message, 'error');
    return;
  }
  S.selected = null;
  $('removal-box').hidden = true;
  if (fullChanged) renderMoveList();
  checkGameEnd();
  renderBoard();
  renderStatus();
  highlightMoveList();
  renderGraph();
  if (S.analysis && S.analysis.running && S.analysis.key !== analysisKey()) startAnalysis();
}

function checkGameEnd() {
  const full = S.full;
  if (!full || S.result) return;
  if (full.status !== 'playing') {
    S.result = { result: full.result, text: endText(full) };
    stopClock();
  }
}

function endText(full) {
  const winner = full.result === '1-0' ? 'White wins' : full.result === '0-1' ? 'Black wins' : 'Draw';
  const labels = {
    checkmate: 'Checkmate', stalemate: 'Stalemate', 'no-legal-move': 'No legal move',
    draw: 'Draw', 'king-captured': 'King captured',
  };
  const what = labels[full.status] || cap(String(full.status).replace(/-/g, ' '));
  const reason = full.reason && full.reason !== full.status ? ` (${String(full.reason).replace(/-/g, ' ')})` : '';
  if (full.status === 'draw' || full.result === '1/2-1/2') return `${what}${reason} — draw · ${full.result}`;
  return `${what}${reason} — ${winner} · ${full.result}`;
}

function renderStatus() {
  const pos = S.pos;
  const st = $('status');
  if (!pos) return;
  let text;
  if (S.result && S.viewPly === S.moves.length) {
    text = S.result.text;
  } else if (pos.status !== 'playing') {
    text = endText(pos);
  } else {
    text = `${cap(pos.side)} to move` + (pos.in_check ? ' — check!' : '');
    if (S.mode === 'puzzle' && !S.puzzle.solved) text += ' · puzzle ' + S.puzzle.p.id;
    const o = S.online;
    if (S.mode === 'online' && S.viewPly === S.moves.length && o.seat) {
      const thinking = o.state && o.state.bot && o.state.bot.thinking;
      text += pos.side === o.seat ? ' · your move' : !o.bot ? ' · your friend\'s move' :
        thinking ? ` · ${o.bot} is thinking…` : ` · ${o.bot}'s move`;
    }
  }
  st.textContent = text;
  st.dataset.status = pos.status;
  st.dataset.side = pos.side;
  st.dataset.ply = String(S.viewPly);
  document.body.dataset.mode = S.mode;
  $('ply-label').textContent = `${S.viewPly} / ${S.moves.length}`;
  const banner = $('result-banner');
  if (S.result && S.viewPly === S.moves.length) {
    banner.textContent = S.result.text;
    banner.dataset.result = S.result.result || '';
    banner.hidden = false;
  } else {
    banner.hidden = true;
  }
}

function renderMoveList() {
  const list = $('move-list');
  list.innerHTML = '';
  const hist = S.full ? S.full.history : [];
  // Number moves from the start position's move number and side.
  const pos0 = positionCache.get(S.rules + '|' + (S.startFen || '') + '|');
  const fields = (pos0 ? pos0.fen : (S.startFen || 'x w 0 1')).split(' ');
  let number = Number(fields[3]) || 1;
  let side = fields[1] === 'b' ? 'black' : 'white';
  let li = null;
  hist.forEach((h, i) => {
    if (!li || side === 'white') {
      li = document.createElement('li');
      li.value = number;
      list.appendChild(li);
      if (side === 'black') {
        const dots = document.createElement('span');
        dots.className = 'dots';
        dots.textContent = '…';
        li.appendChild(dots);
      }
    }
    const span = document.createElement('span');
    span.className = 'move';
    span.dataset.ply = String(i + 1);
    span.dataset.move = h.move;
    span.textContent = h.notation;
    span.addEventListener('click', () => showPly(i + 1, false));
    li.appendChild(span);
    if (side === 'black') ++number;
    side = other(side);
  });
}

function highlightMoveList() {
  for (const s of document.querySelectorAll('#move-list .move')) {
    const cur = Number(s.dataset.ply) === S.viewPly;
    s.classList.toggle('current', cur);
    if (cur) {
      // Scroll the list only, never the page.
      const list = $('move-list');
      const top = s.offsetTop;          // the list is the offset parent
      if (top < list.scrollTop) list.scrollTop = top;
      else if (top + s.offsetHeight > list.scrollTop + list.clientHeight) list.scrollTop = top + s.offsetHeight - list.clientHeight;
    }
  }
}

// ---------------------------------------------------------------- moves

async function playMove(m) {
  if (S.mode === 'puzzle') { puzzleMove(m); return; }
  if (S.mode === 'online') { onlineMove(m); return; }
  if (S.mode === 'course') { courseMove(m); return; }
  const why = canMoveNow();
  if (why) { refuse(`You cannot move now: ${why}.`); return; }
  const mover = S.pos.side;
  S.moves = S.moves.slice(0, S.viewPly).concat([m.move]);
  S.result = null;
  S.graph = null;
  setMessage(m.notation + (m.captures.length ? ` — captured ${m.captures.join(', ')}` : ''), 'info');
  clockMoved(mover);
  if (S.mode === 'human' && $('auto-flip').checked) {
    S.flipped = mover === 'white';
    buildBoard();
  }
  await showPly(S.moves.length, true);
}

// Marks the page while a bot thinks (the browser test waits on it).
function setBusy(b) {
  document.body.dataset.thinking = b ? 'true' : 'false';
}

// ---------------------------------------------------------------- clock

function startClock(minutes, incSeconds, side) {
  stopClock();
  const ms = Math.max(1000, Math.round(minutes * 60000));
  S.clock = { white: ms, black: ms, inc: Math.round(incSeconds * 1000), side, since: performance.now(), timer: null };
  S.clock.timer = setInterval(tickClock, 100);
  renderClocks();
}

function stopClock() {
  if (S.clock && S.clock.timer) {
    const now = performance.now();
    S.clock[S.clock.side] -= now - S.clock.since;
    S.clock.since = now;
    clearInterval(S.clock.timer);
    S.clock.timer = null;
  }
  renderClocks();
}

function clockMoved(mover) {
  const c = S.clock;
  if (!c || !c.timer) return;
  const now = performance.now();
  c[mover] -= now - c.since;
  c[mover] += c.inc;
  c.side = other(mover);
  c.since = now;
  renderClocks();
}

function tickClock() {
  const c = S.clock;
  if (!c || !c.timer) return;
  const left = c[c.side] - (performance.now() - c.since);
  if (left <= 0 && !S.result && c.server) {
    // The server decides: its answer comes with the long poll.
    renderClocks();
    return;
  }
  if (left <= 0 && !S.result) {
    c[c.side] = 0;
    c.since = performance.now();
    const winner = other(c.side);
    S.result = {
      result: winner === 'white' ? '1-0' : '0-1',
      text: `${cap(c.side)} lost on time — ${cap(winner)} wins · ${winner === 'white' ? '1-0' : '0-1'}`,
    };
    stopClock();
    renderStatus();
  }
  renderClocks();
}

function renderClocks() {
  for (const el of [$('clock-top'), $('clock-bottom')]) {
    const color = el.dataset.color;
    const name = el.querySelector('.clock-name');
    const time = el.querySelector('.clock-time');
    let who = cap(color);
    const o = S.mode === 'online' ? S.online : null;
    if (o && o.seat) who += color === o.seat ? ' · you' : o.bot ? ` · ${o.bot}` : ' · your friend';
    name.textContent = who;
    const c = S.clock;
    if (!c) {
      const bot = o && o.state && o.state.bot;
      time.textContent = bot && bot.seat === color && bot.movetime_ms ? `${bot.movetime_ms} ms/move` : '';
      el.classList.remove('running');
      el.dataset.ms = '';
      continue;
    }
    let ms = c[color];
    if (c.timer && c.side === color) ms -= performance.now() - c.since;
    time.textContent = formatClock(ms);
    el.dataset.ms = String(Math.max(0, Math.round(ms)));
    el.classList.toggle('running', !!c.timer && c.side === color);
    el.classList.toggle('low', ms < 10000);
  }
}

// ---------------------------------------------------------------- new game

// Each game against a bot gets its own seed, so that a weak bot does not
// play the same game twice; below 2^53, as the server takes it.
function newSeed() {
  const words = crypto.getRandomValues(new Uint32Array(2));
  return (words[0] & 0x1fffff) * 0x100000000 + words[1];
}

// The seed typed in (a game's Seed tag, to replay its bot), else a new one.
function chosenSeed() {
  const typed = $('bot-seed').value.trim();
  const n = Number(typed);
  return typed !== '' && Number.isSafeInteger(n) && n >= 0 ? n : newSeed();
}

async function newGame() {
  stopAnalysis();
  const rules = $('rules-select').value;
  const fen = $('fen-input').value.trim();
  const opponent = $('opponent-select').value;
  if (opponent === 'online') { newOnlineGame(rules, fen); return; }
  if (opponent === 'bot') { newBotGame(rules, fen); return; }
  // Check the start position before anything changes.
  try {
    const body = { rules, moves: [] };
    if (fen) body.fen = fen;
    await api('/api/position', body);
  } catch (e) {
    refuse('That start position is refused: ' + e.message);
    return;
  }
  resetGame(rules, fen || null, []);
  S.tags = {};
  S.mode = 'human';
  buildBoard();
  await showPly(0, true);
  const minutes = Number($('friend-minutes').value) || 0;
  if (minutes > 0) startClock(minutes, Number($('friend-increment').value) || 0, S.full.side);
  setMessage('New game: both sides move on this board.', 'info');
  history.replaceState(null, '', location.pathname);
}

function resetGame(rules, fen, moves) {
  ++S.gameId;
  stopClock();
  S.clock = null;
  S.rules = rules;
  S.startFen = fen;
  S.moves = moves;
  S.viewPly = 0;
  S.pos = null;
  S.full = null;
  S.result = null;
  S.selected = null;
  S.graph = null;
  S.puzzle = null;
  S.online = null;
  $('online-box').hidden = true;
  $('result-banner').hidden = true;      // the last game's result goes with it
  setBusy(false);
  const rs = $('rules-select');
  if (![...rs.options].some((o) => o.value === rules)) {
    // A rule set with switches (from a PGN): offered as it is.
    const o = document.createElement('option');
    o.value = rules;
    o.textContent = rules;
    rs.appendChild(o);
  }
  rs.value = rules;
  $('graph-status').textContent = '';
}

// A button that acts on its second click within four seconds (resigning
// is not undone).
function confirmThen(button, action) {
  if (button.classList.contains('confirm')) {
    button.classList.remove('confirm');
    button.textContent = button.dataset.label;
    action();
    return;
  }
  button.dataset.label = button.textContent;
  button.textContent = 'Sure? Click again';
  button.classList.add('confirm');
  setTimeout(() => {
    if (!button.classList.contains('confirm')) return;
    button.classList.remove('confirm');
    button.textContent = button.dataset.label;
  }, 4000);
}

function resign() {
  if (S.result) return;
  if (S.mode === 'online') { onlineAction('resign'); return; }
  if (S.mode === 'human') {
    const loser = S.full.side;
    const winner = other(loser);
    S.result = {
      result: winner === 'white' ? '1-0' : '0-1',
      text: `${cap(loser)} resigned — ${cap(winner)} wins · ${winner === 'white' ? '1-0' : '0-1'}`,
    };
    stopClock();
    showPly(S.moves.length, false);
  }
}

// The side to move after the first `ply` moves.
function sideAt(ply) {
  return (S.moves.length - ply) % 2 === 0 ? S.full.side : other(S.full.side);
}

// Back to the player's last move: on one board, one move; online it is
// asked of the friend, and a bot grants it at once (its reply, or the
// search on its way, and the player's move).
function takeBack() {
  if (S.mode === 'online') {
    const o = S.online;
    onlineAction(o.state && o.state.takeback_offer === other(o.seat) ? 'accept-takeback' : 'offer-takeback');
    return;
  }
  if (!S.full || S.moves.length === 0 || S.mode !== 'human') return;
  const n = S.moves.length - 1;
  const c = S.clock;
  if (c && c.timer) {                    // the clock goes on for the side to move again
    const now = performance.now();
    c[c.side] -= now - c.since;
    c.since = now;
    c.side = sideAt(n);
  }
  S.moves = S.moves.slice(0, n);
  S.result = null;
  S.graph = null;
  setMessage('Taken back.', 'info');
  showPly(n, true);
}

// ---------------------------------------------------------------- games against a bot

// A game against a bot is a game on the server whose second seat the bot
// holds: its moves come like a friend's, and it survives a reload or a
// server restart. This browser remembers its last one, and opens it again
// while it is going on.
const BOT_GAME_KEY = 'ultima-bot-game';

function lastBotGame() {
  try {
    const id = localStorage.getItem(BOT_GAME_KEY);
    return id && /^[a-z0-9]+$/.test(id) ? id : null;
  } catch (e) { return null; }
}

async function newBotGame(rules, fen) {
  const name = $('bot-select').value;
  const bot = S.info.bots.find((b) => b.name === name) || S.info.bots[0];
  const body = { rules, bot: bot.name, colour: $('color-select').value, seed: chosenSeed() };
  if ($('time-mode').value === 'clock') {
    body.minutes = Math.max(0.25, Number($('clock-minutes').value) || 5);
    body.increment = Math.round(Number($('clock-increment').value) || 0);
  } else {
    body.movetime_ms = Math.max(10, Number($('movetime-ms').value) || 1000);
  }
  if (fen) body.fen = fen;
  ++S.gameId;                            // the game on the board stops following the server
  await leaveBotGame();
  const made = await makeServerGame(body);
  if (!made) return;
  try { localStorage.setItem(BOT_GAME_KEY, made.id); } catch (e) { /* this page only */ }
  await openOnlineGame(made.id, made.game);
  setMessage(`New game against ${bot.name} (Elo ${bot.elo ?? '?'}); you play ${cap(made.seat)}.`, 'info');
}

// The last game against a bot, if it is still going, is resigned (or
// aborted, before each side has moved) before a new one starts, so that
// games left behind do not count against this address's open games.
async function leaveBotGame() {
  const id = lastBotGame();
  const token = id && seatToken(id);
  if (!token) return;
  try {
    const st = await api('/api/games/state', { id, token });
    if (st.status !== 'playing' && st.status !== 'waiting') return;
    await api('/api/games/act', { id, token, action: st.moves.length < 2 ? 'abort' : 'resign' });
  } catch (e) { /* gone, or over already */ }
}

async function restoreBotGame() {
  const id = lastBotGame();
  if (!id) return false;
  let state;
  try {
    state = await api('/api/games/state', { id, token: seatToken(id) || '' });
  } catch (e) {
    if (e.status === 404) { try { localStorage.removeItem(BOT_GAME_KEY); } catch (x) { /* */ } }
    return false;
  }
  if (state.status !== 'playing') return false;   // a finished game stays on the server, not on the board
  history.replaceState(null, '', '#game=' + id);
  await openOnlineGame(id);
  if (S.online && S.online.bot) setMessage(`Your game against ${S.online.bot} goes on where it was.`, 'info');
  return true;
}

// ---------------------------------------------------------------- learn the rules

const COURSE_KEY = 'ultima-course';

function courseProgress() {
  try { return JSON.parse(localStorage.getItem(COURSE_KEY) || '{}') || {}; } catch (e) { return {}; }
}

function markExercise(lessonId, index) {
  const p = courseProgress();
  p[lessonId + '/' + index] = true;
  try { localStorage.setItem(COURSE_KEY, JSON.stringify(p)); } catch (e) { /* this page only */ }
}

async function loadCourse() {
  if (!S.courseData) {
    try {
      S.courseData = (await api('/api/course')).lessons;
    } catch (e) {
      $('lesson-list').textContent = 'The course cannot be loaded: ' + e.message;
      return;
    }
  }
  renderLessons();
}

function renderLessons() {
  const list = $('lesson-list');
  list.innerHTML = '';
  const done = courseProgress();
  S.courseData.forEach((lesson, li) => {
    const n = lesson.exercises.length;
    const k = lesson.exercises.filter((x, i) => done[lesson.id + '/' + i]).length;
    const item = document.createElement('li');
    item.dataset.lesson = lesson.id;
    item.classList.toggle('complete', k === n);
    item.classList.toggle('current', !!S.course && S.course.li === li && S.mode === 'course');
    item.append(lesson.title + ' ');
    const progress = document.createElement('span');
    progress.className = 'progress';
    progress.textContent = `${k}/${n}`;
    item.appendChild(progress);
    // A lesson opens at its first exercise not yet done.
    const first = lesson.exercises.findIndex((x, i) => !done[lesson.id + '/' + i]);
    item.addEventListener('click', () => startExercise(li, first < 0 ? 0 : first));
    list.appendChild(item);
  });
}

async function startExercise(li, ei) {
  const lesson = S.courseData[li];
  const x = lesson.exercises[ei];
  await stopAnalysis();
  resetGame(x.rules, x.fen, []);
  S.mode = 'course';
  S.course = { li, ei, done: false, busy: false };
  S.tags = { Event: `Lesson: ${lesson.title}` };
  S.flipped = false;
  buildBoard();
  await showPly(0, true);
  $('lesson').hidden = false;
  $('lesson').dataset.lesson = lesson.id;
  $('lesson').dataset.exercise = String(ei);
  $('lesson-title').textContent = `${lesson.title} · exercise ${ei + 1} of ${lesson.exercises.length}`;
  $('lesson-text').textContent = lesson.text;
  $('exercise-task').textContent = x.task;
  setExerciseStatus('', 'playing');
  $('exercise-next').hidden = true;
  renderLessons();
  setMessage('');
}

function setExerciseStatus(text, state) {
  $('exercise-status').textContent = text;
  $('exercise-status').dataset.state = state;
}

async function courseMove(m) {
  const why = canMoveNow();
  if (why) { refuse(`You cannot move now: ${why}.`); return; }
  const c = S.course;
  const lesson = S.courseData[c.li];
  const gameId = S.gameId;
  c.busy = true;
  S.moves = [m.move];
  await showPly(1, true);
  let check;
  try {
    check = await api('/api/course/check', { lesson: lesson.id, exercise: c.ei, move: m.move });
  } catch (e) {
    check = { done: false, why: e.message };
  }
  if (gameId !== S.gameId) return;
  c.busy = false;
  if (check.done) {
    c.done = true;
    markExercise(lesson.id, c.ei);
    setExerciseStatus('Well done!', 'done');
    const last = c.ei + 1 >= lesson.exercises.length && c.li + 1 >= S.courseData.length;
    $('exercise-next').textContent = c.ei + 1 < lesson.exercises.length ? 'Next exercise' : 'Next lesson';
    $('exercise-next').hidden = last;
    if (last) setExerciseStatus('Well done! That was the last exercise of the course.', 'done');
    renderLessons();
    return;
  }
  setExerciseStatus(`Not quite: ${check.why}. The position is set up again; try another move.`, 'wrong');
  await new Promise((resolve) => setTimeout(resolve, 900));
  if (gameId !== S.gameId) return;
  S.moves = [];
  await showPly(0, true);
}

function nextExercise() {
  const c = S.course;
  if (!c) return;
  const lesson = S.courseData[c.li];
  if (c.ei + 1 < lesson.exercises.length) startExercise(c.li, c.ei + 1);
  else if (c.li + 1 < S.courseData.length) startExercise(c.li + 1, 0);
}

function exerciseHint() {
  const c = S.course;
  if (!c) return;
  const x = S.courseData[c.li].exercises[c.ei];
  setExerciseStatus(x.hint || 'Look at what each of your pieces can capture.', 'hint');
  const d = x.hint_square && squareEl(x.hint_square);
  if (d) d.classList.add('hint');
}

// ---------------------------------------------------------------- a friend online

function seatToken(id) {
  try { return localStorage.getItem('ultima-seat-' + id); } catch (e) { return null; }
}
function keepSeat(id, token) {
  try { localStorage.setItem('ultima-seat-' + id, token); } catch (e) { /* the seat lasts this page only */ }
}

// A game on the server (`/api/games/new`): its seat's token kept and its
// link in the address bar; null, with the reason shown, when refused.
async function makeServerGame(body) {
  let made;
  try {
    made = await api('/api/games/new', body);
  } catch (e) {
    refuse('The game could not be made: ' + e.message);
    return null;
  }
  keepSeat(made.id, made.token);
  history.replaceState(null, '', '#game=' + made.id);
  return made;
}

async function newOnlineGame(rules, fen) {
  const body = {
    rules, colour: $('online-colour').value,
    minutes: Math.max(0, Number($('friend-minutes').value) || 0),
    increment: Math.round(Number($('friend-increment').value) || 0),
  };
  if (fen) body.fen = fen;
  const made = await makeServerGame(body);
  if (!made) return;
  await openOnlineGame(made.id, made.game);
  setMessage('Send the link to your friend; the game starts when it is opened.', 'info');
}

// Opens a game between browsers: as its seat when this browser holds its
// token, taking the free seat when there is one, else watching.
async function openOnlineGame(id, first) {
  stopAnalysis();
  let token = seatToken(id);
  let state = first;
  try {
    if (!state) state = await api('/api/games/state', { id, token: token || '' });
    if (!state.you && state.status === 'waiting') {
      const joined = await api('/api/games/join', { id });
      keepSeat(id, joined.token);
      token = joined.token;
      state = joined.game;
    }
  } catch (e) {
    setMessage('That game cannot be opened: ' + e.message, 'error');
    return false;
  }
  resetGame(state.rules, state.fen || null, state.moves.slice());
  S.mode = 'online';
  const bot = state.bot ? state.bot.name : null;
  S.online = { id, token: state.you ? token : null, seat: state.you, version: -1, state: null, busy: false, bot };
  S.flipped = state.you === 'black';
  S.tags = { Event: 'Ultima online game', White: 'White', Black: 'Black', GameId: id };
  if (bot) {
    const you = state.you ? 'You' : 'Player';
    Object.assign(S.tags, { Event: 'Ultima game against a bot', White: state.bot.seat === 'white' ? bot : you,
      Black: state.bot.seat === 'black' ? bot : you, Seed: String(state.seed) });
  }
  buildBoard();
  $('online-box').hidden = false;
  $('online-title').textContent = bot ? `Game against ${bot}` : 'Game online';
  $('online-link-label').textContent = bot ? 'Link to watch the game' : 'Link for your friend';
  $('online-link').value = location.origin + location.pathname + '#game=' + id;
  $('online-pgn').href = '/api/games/' + id + '.pgn';
  await applyOnline(state);
  setMessage(state.you ? `You play ${cap(state.you)}${bot ? ' against ' + bot : ''}.` : 'You are watching this game.', 'info');
  pollOnline(S.gameId);
  return true;
}

function onlineEndText(state) {
  if (state.status === 'aborted') return 'Game aborted';
  const winner = state.result === '1-0' ? 'white' : state.result === '0-1' ? 'black' : null;
  if (state.termination === 'time') return `${cap(other(winner))} lost on time — ${cap(winner)} wins · ${state.result}`;
  if (state.termination === 'resignation') return `${cap(other(winner))} resigned — ${cap(winner)} wins · ${state.result}`;
  if (state.termination === 'agreement') return 'Draw by agreement · 1/2-1/2';
  return null;                           // a rules end: the position says it
}

// Shows the server's game, unless an answer already shown is newer.
async function applyOnline(state) {
  const o = S.online;
  if (!o || state.id !== o.id || state.version <= o.version) return;
  o.version = state.version;
  o.state = state;
  S.moves = state.moves.slice();
  stopClock();
  S.clock = null;
  if (state.clock) {
    const running = state.clock.running;
    S.clock = { white: state.clock.white_ms, black: state.clock.black_ms, inc: state.clock.increment_ms,
      side: running || 'white', since: performance.now(), timer: null, server: true };
    if (running) S.clock.timer = setInterval(tickClock, 100);
  }
  renderClocks();                        // a clock not yet running shows its time too
  const text = state.status === 'over' || state.status === 'aborted' ? onlineEndText(state) : null;
  S.result = text ? { result: state.result || '*', text } : null;
  await showPly(S.moves.length, true);
  renderOnline();
}

function renderOnline() {
  const o = S.online;
  if (!o || !o.state) return;
  const st = o.state;
  const playing = st.status === 'playing';
  const seated = !!o.seat;
  let status = seated ? `You play ${cap(o.seat)}${o.bot ? ' against ' + o.bot : ''}.` : 'You are watching.';
  if (st.status === 'waiting') status += ' Waiting for your friend to open the link…';
  if (st.bot && st.bot.error) status += ` ${st.bot.error} (tried again in a moment)`;
  setBusy(!!(st.bot && st.bot.thinking && playing));
  $('online-status').textContent = status;
  $('online-status').dataset.status = st.status;
  const offer = seated && playing && (st.draw_offer === other(o.seat) ? 'draw' : st.takeback_offer === other(o.seat) ? 'takeback' : null);
  $('online-offer').hidden = !offer;
  $('online-offer').dataset.kind = offer || '';
  $('online-offer-text').textContent = offer === 'draw' ? 'Your friend offers a draw.' :
    offer === 'takeback' ? 'Your friend asks to take back a move.' : '';
  $('offer-draw').hidden = !(seated && playing) || !!o.bot;
  $('offer-draw').disabled = st.draw_offer === o.seat;
  $('abort').hidden = !(seated && (st.status === 'waiting' || playing) && st.moves.length < 2);
  $('resign').hidden = !(seated && playing);
  $('takeback').hidden = !(seated && playing);
  $('takeback').disabled = st.takeback_offer === o.seat;
  $('online-analyse').hidden = playing || st.status === 'waiting';
}

// A finished game between browsers on this board, to step through and
// analyse freely (the server's copy stays as it is).
async function analyseOnlineGame() {
  const o = S.online;
  if (!o || !o.state) return;
  const st = o.state;
  const tags = Object.assign({}, S.tags, { Result: st.result || '*' });
  resetGame(st.rules, st.fen || null, st.moves.slice());
  S.mode = 'human';
  S.tags = tags;
  history.replaceState(null, '', location.pathname);
  buildBoard();
  await showPly(S.moves.length, true);
  setTab('analysis');
  setMessage('The game is on the board: step through it and press Start to analyse.', 'info');
}

async function pollOnline(gameId) {
  while (S.gameId === gameId && S.online) {
    const o = S.online;
    try {
      const state = await api('/api/games/wait', { id: o.id, version: o.version, token: o.token || '' });
      if (S.gameId !== gameId) return;
      await applyOnline(state);
    } catch (e) {
      if (S.gameId !== gameId) return;
      $('online-status').textContent = 'The server does not answer; trying again…';
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

async function onlineMove(m) {
  const why = canMoveNow();
  if (why) { refuse(`You cannot move now: ${why}.`); return; }
  const o = S.online;
  o.busy = true;
  try {
    const state = await api('/api/games/act', { id: o.id, token: o.token, action: 'move', move: m.move, ply: S.moves.length });
    setMessage(m.notation + (m.captures.length ? ` — captured ${m.captures.join(', ')}` : ''), 'info');
    o.busy = false;
    await applyOnline(state);
  } catch (e) {
    o.busy = false;
    refuse('The move was refused: ' + e.message);
  }
}

async function onlineAction(action) {
  const o = S.online;
  if (!o || !o.seat) return;
  try {
    await applyOnline(await api('/api/games/act', { id: o.id, token: o.token, action }));
  } catch (e) {
    refuse(e.message);
  }
}

// ---------------------------------------------------------------- analysis

let analysisCounter = 0;

function analysisKey() {
  return S.rules + '|' + (S.startFen || '') + '|' + S.moves.slice(0, S.viewPly).join(' ');
}

async function startAnalysis() {
  await stopAnalysis();
  if (!S.pos) return;
  const id = `web-${Date.now().toString(36)}-${++analysisCounter}`;
  const controller = new AbortController();
  const backend = $('backend-select').value;
  const body = {
    id, rules: S.rules, fen: S.startFen || 'startpos', moves: S.moves.slice(0, S.viewPly),
    backend, multi_pv: Number($('multipv-select').value), report_every_ms: 250,
    max_time_ms: 120000,
  };
  if (backend === 'alphabeta') body.max_depth = 60;
  else body.max_visits = 10000000;
  if (backend === 'mcts') {
    const ev = $('evaluator-select').value;
    if (ev === 'material') { if (S.info.weights) body.weights = ''; } else body.weights = ev;
  }
  const a = {
    id, controller, body, running: true, key: analysisKey(), side: S.pos.side,
    lines: [], gameId: S.gameId, updates: 0, done: null,
  };
  S.analysis = a;
  $('analyze-start').disabled = true;
  $('analyze-stop').disabled = false;
  $('analysis-lines').innerHTML = '';
  $('analysis-lines').dataset.updates = '0';
  $('analysis-lines').dataset.state = 'running';
  $('analysis-info').textContent = 'searching…';
  a.done = (async () => {
    try {
      const resp = await fetch('/api/analyze', {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body), signal: controller.signal,
      });
      if (!resp.ok) {
        let msg = 'HTTP ' + resp.status;
        try { const j = await resp.json(); if (j.error) msg = j.error; } catch (e) { /* not JSON */ }
        throw new Error(resp.status === 503 ? `the server is busy (${msg}); try again shortly` : msg);
      }
      const reader = resp.body.getReader();
      const dec = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (line) onAnswer(a, JSON.parse(line));
        }
      }
      if (buf.trim()) onAnswer(a, JSON.parse(buf));
    } catch (e) {
      if (e.name !== 'AbortError' && S.analysis === a) {
        setMessage('Analysis: ' + e.message, 'error');
      }
    } finally {
      a.running = false;
      if (S.analysis === a) {
        $('analyze-start').disabled = false;
        $('analyze-stop').disabled = true;
        $('analysis-lines').dataset.state = 'done';
        if ($('analysis-info').textContent === 'searching…') $('analysis-info').textContent = '';
      }
    }
  })();
}

async function stopAnalysis() {
  const a = S.analysis;
  if (!a || !a.running) return;
  // Ask the server to stop (the stream then ends with the final answer);
  // abort the fetch if it does not end soon.
  try { await api('/api/analyze/stop', { id: a.id }); } catch (e) { a.controller.abort(); }
  const timer = setTimeout(() => a.controller.abort(), 3000);
  try { await a.done; } finally { clearTimeout(timer); }
}

function onAnswer(a, ans) {
  if (S.analysis !== a) return;
  if (ans.error) { setMessage('Analysis: ' + ans.error, 'error'); return; }
  a.updates += 1;
  const list = $('analysis-lines');
  list.dataset.updates = String(a.updates);
  if (ans.game_over) {
    list.innerHTML = `<li class="game-over">Game over: ${ans.game_over.termination} ${ans.game_over.result}</li>`;
    a.lines = [];
    renderArrows();
    return;
  }
  const root = ans.root || {};
  const side = a.side;
  const w = whiteWdl(root.wdl, side);
  if (w) $('wdl').textContent = `W/D/L ${(w[0] / 10).toFixed(1)}% / ${(w[1] / 10).toFixed(1)}% / ${(w[2] / 10).toFixed(1)}%`;
  const size = root.nodes !== undefined ? `${root.nodes} nodes` : root.visits !== undefined ? `${root.visits} visits` : '';
  $('analysis-info').textContent = `depth ${root.depth !== undefined ? (+root.depth).toFixed(root.depth % 1 ? 1 : 0) : '–'}` +
    (size ? ` · ${size}` : '') + (root.time_ms !== undefined ? ` · ${(root.time_ms / 1000).toFixed(1)} s` : '') +
    (ans.final ? ' · done' : '');
  setEvalBar(root, side);
  a.lines = ans.moves || [];
  list.innerHTML = '';
  for (const m of a.lines) {
    const li = document.createElement('li');
    li.className = 'line';
    li.dataset.rank = String(m.rank);
    li.dataset.move = m.move;
    const score = document.createElement('span');
    score.className = 'score';
    score.textContent = scoreText(m, side);
    const pv = document.createElement('span');
    pv.className = 'pv';
    pv.textContent = (m.pv || [m.move]).join(' ');
    li.append(score, ' ', pv);
    li.title = 'Click to play this line\'s first move';
    li.addEventListener('click', () => {
      const lm = S.pos && S.pos.legal.find((x) => x.move === m.move);
      if (lm && analysisKey() === a.key) onSquareClickMove(lm);
    });
    list.appendChild(li);
    pvText(a, m.pv || [m.move]).then((moves) => {
      if (!moves) return;
      // One span per move, so a line breaks between moves only.
      pv.textContent = '';
      moves.forEach((t, i) => {
        const span = document.createElement('span');
        span.className = 'pv-move';
        span.textContent = t;
        pv.append(i ? ' ' : '', span);
      });
    });
  }
  renderArrows();
}

function onSquareClickMove(m) {
  const why = canMoveNow();
  if (why) { refuse(`You cannot move now: ${why}.`); return; }
  playMove(m);
}

// A principal variation in the project's move text, from /api/position.
const pvCache = new Map();
async function pvText(a, pv) {
  const moves = pv.slice(0, 10);
  const ck = a.key + '#' + moves.join(' ');
  if (pvCache.has(ck)) return pvCache.get(ck);
  const base = a.body.moves;
  try {
    const body = { rules: a.body.rules, moves: base.concat(moves) };
    if (a.body.fen !== 'startpos') body.fen = a.body.fen;
    const pos = await api('/api/position', body);
    const hist = pos.history.slice(base.length);
    const text = hist.map((h) => h.notation);
    if (pv.length > moves.length) text.push('…');
    if (pvCache.size > 500) pvCache.clear();
    pvCache.set(ck, text);
    return text;
  } catch (e) {
    return null;
  }
}

function setEvalBar(score, side) {
  let white;          // White's expected share, 0..1
  if (score.mate !== undefined && score.mate !== null) {
    const m = side === 'white' ? score.mate : -score.mate;
    white = m > 0 ? 1 : 0;
  } else if (score.wdl) {
    const w = whiteWdl(score.wdl, side);
    white = (w[0] + w[1] / 2) / 1000;
  } else {
    const cp = side === 'white' ? score.cp : -score.cp;
    white = 1 / (1 + Math.exp(-cp / 250));
  }
  $('eval-bar-fill').style.height = `${(white * 100).toFixed(1)}%`;
  $('eval-bar-text').textContent = scoreText(score, side);
  $('eval-bar').dataset.white = white.toFixed(3);
}

function renderArrows() {
  const svg = $('arrows');
  const a = S.analysis;
  let html = '<defs><marker id="ah1" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="3" markerHeight="3" orient="auto">' +
    '<path d="M0,0 L10,5 L0,10 z" fill="#2f7d32"/></marker>' +
    '<marker id="ah2" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="3" markerHeight="3" orient="auto">' +
    '<path d="M0,0 L10,5 L0,10 z" fill="#1e5fa8"/></marker></defs>';
  if (a && a.key === analysisKey() && a.lines.length) {
    const center = (sq) => {
      const f = FILES.indexOf(sq[0]);
      const r = Number(sq[1]);
      const col = S.flipped ? 7 - f : f;
      const row = S.flipped ? r - 1 : 8 - r;
      return [col + 0.5, row + 0.5];
    };
    [...a.lines].reverse().forEach((m) => {
      const ms = moveSquares(m.move);
      const best = m.rank === 1;
      const color = best ? '#2f7d32' : '#1e5fa8';
      const opacity = best ? 0.85 : Math.max(0.3, 0.7 - 0.1 * m.rank);
      const width = best ? 0.16 : 0.1;
      const [x1, y1] = center(ms.from);
      const [x2, y2] = center(ms.to);
      if (ms.removal) {
        html += `<circle class="arrow" data-move="${m.move}" cx="${x1}" cy="${y1}" r="0.4" fill="none" stroke="${color}" stroke-width="${width}" opacity="${opacity}"/>`;
        return;
      }
      const dx = x2 - x1;
      const dy = y2 - y1;
      const len = Math.hypot(dx, dy);
      const ex = x2 - (dx / len) * 0.25;
      const ey = y2 - (dy / len) * 0.25;
      html += `<line class="arrow" data-move="${m.move}" x1="${x1}" y1="${y1}" x2="${ex}" y2="${ey}" stroke="${color}" ` +
        `stroke-width="${width}" stroke-linecap="round" opacity="${opacity}" marker-end="url(#${best ? 'ah1' : 'ah2'})"/>`;
    });
  }
  svg.innerHTML = html;
}

// ---------------------------------------------------------------- games (PGN)

async function loadPgn() {
  const text = $('pgn-text').value;
  if (!text.trim()) { refuse('Paste a PGN or choose a file first.'); return; }
  let games;
  try {
    games = (await api('/api/pgn/parse', { pgn: text })).games;
  } catch (e) {
    refuse('The PGN is refused: ' + e.message);
    return;
  }
  if (!games || games.length === 0) { refuse('No game found in that PGN.'); return; }
  S.loadedGames = games;
  const sel = $('game-select');
  sel.innerHTML = '';
  games.forEach((g, i) => {
    const o = document.createElement('option');
    o.value = String(i);
    const t = g.tags || {};
    o.textContent = `${i + 1}. ${t.White || '?'} – ${t.Black || '?'} ${g.result || ''}`;
    sel.appendChild(o);
  });
  $('game-choice').hidden = games.length < 2;
  await showGame(games[0]);
}

async function showGame(g) {
  await stopAnalysis();
  const start = g.fen && g.fen !== 'startpos' ? g.fen : null;
  resetGame(g.rules || S.info.default_rules, start, (g.moves || []).slice());
  S.mode = 'human';
  S.tags = g.tags || {};
  buildBoard();
  await showPly(0, true);
  if (!S.result && g.result && g.result !== '*') {
    S.result = { result: g.result, text: `Result: ${g.result}` + (S.tags.Termination ? ` (${S.tags.Termination})` : '') };
  }
  renderStatus();
  const t = S.tags;
  setMessage(`Loaded: ${t.White || '?'} – ${t.Black || '?'}, ${S.moves.length} plies` +
    (g.result ? `, ${g.result}` : '') + '. Step through with ← and →.', 'info');
}

async function savePgn() {
  const tags = Object.assign({}, S.tags);
  const result = S.result ? S.result.result : (S.full && S.full.result) || '*';
  tags.Result = result || '*';
  if (!tags.Event) tags.Event = 'Ultima web board';
  if (!tags.Date) tags.Date = new Date().toISOString().slice(0, 10).replace(/-/g, '.');
  if (!tags.White) tags.White = '?';
  if (!tags.Black) tags.Black = '?';
  const body = { tags, rules: S.rules, moves: S.moves, result: tags.Result };
  if (S.startFen) body.fen = S.startFen;
  let pgn;
  try {
    pgn = (await api('/api/pgn/write', body)).pgn;
  } catch (e) {
    refuse('Could not write the PGN: ' + e.message);
    return;
  }
  $('pgn-text').value = pgn;
  const url = URL.createObjectURL(new Blob([pgn], { type: 'application/x-chess-pgn' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = 'ultima-game.pgn';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
  setMessage('Saved as ultima-game.pgn (the text is also in the PGN box).', 'info');
}

// The evaluation graph: a quick alpha-beta search of every position.
async function runGraph() {
  const gameId = S.gameId;
  const n = S.moves.length;
  const moves = S.moves.slice();
  S.graph = { gameId, scores: new Array(n + 1).fill(null) };
  $('graph-run').disabled = true;
  const pos0 = await fetchPosition([]).catch(() => null);
  const startSide = pos0 ? pos0.side : 'white';
  try {
    for (let ply = 0; ply <= n; ++ply) {
      if (gameId !== S.gameId) return;
      $('graph-status').textContent = `analysing ${ply} / ${n}…`;
      const body = {
        id: `graph-${gameId}-${ply}`, rules: S.rules, fen: S.startFen || 'startpos',
        moves: moves.slice(0, ply), backend: 'alphabeta', max_depth: 3, max_time_ms: 500,
      };
      let final = null;
      for (let attempt = 0; attempt < 20 && !final; ++attempt) {
        const resp = await fetch('/api/analyze', {
          method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
        });
        if (resp.status === 503) { await new Promise((r) => setTimeout(r, 300)); continue; }
        const text = await resp.text();
        if (!resp.ok) throw new Error(text);
        const lines = text.trim().split('\n').filter((l) => l.trim());
        final = JSON.parse(lines[lines.length - 1]);
      }
      if (!final) throw new Error('the server stayed busy');
      const side = (ply % 2 === 0) ? startSide : other(startSide);
      let white;
      if (final.game_over) {
        const r = final.game_over.result;
        white = r === '1-0' ? 1 : r === '0-1' ? -1 : 0;
      } else {
        const root = final.root || {};
        let v;
        if (root.mate !== undefined && root.mate !== null) v = root.mate > 0 ? 1 : -1;
        else v = 2 / (1 + Math.exp(-(root.cp || 0) / 250)) - 1;
        white = side === 'white' ? v : -v;
      }
      S.graph.scores[ply] = white;
      renderGraph();
    }
    $('graph-status').textContent = `done: ${n + 1} positions, depth 3`;
  } catch (e) {
    $('graph-status').textContent = 'stopped: ' + e.message;
  } finally {
    $('graph-run').disabled = false;
  }
}

function renderGraph() {
  const svg = $('eval-graph');
  const g = S.graph;
  const W = 400;
  const H = 120;
  let html = `<rect x="0" y="0" width="${W}" height="${H / 2}" class="graph-white-half"/>` +
    `<line x1="0" y1="${H / 2}" x2="${W}" y2="${H / 2}" class="graph-axis"/>`;
  const n = S.moves.length;
  const x = (ply) => (n === 0 ? W / 2 : (ply / n) * W);
  if (g && g.gameId === S.gameId) {
    const pts = [];
    g.scores.forEach((v, ply) => { if (v !== null) pts.push(`${x(ply).toFixed(1)},${(H / 2 - v * (H / 2 - 4)).toFixed(1)}`); });
    if (pts.length) {
      html += `<polyline class="graph-line" points="${pts.join(' ')}"/>`;
      html += `<polygon class="graph-area" points="${x(0).toFixed(1)},${H / 2} ${pts.join(' ')} ${pts[pts.length - 1].split(',')[0]},${H / 2}"/>`;
    }
    svg.dataset.points = String(pts.length);
  } else {
    svg.dataset.points = '0';
  }
  html += `<line class="graph-cursor" x1="${x(S.viewPly)}" y1="0" x2="${x(S.viewPly)}" y2="${H}"/>`;
  svg.innerHTML = html;
}

function onGraphClick(ev) {
  const svg = $('eval-graph');
  const r = svg.getBoundingClientRect();
  const n = S.moves.length;
  if (n === 0 || r.width === 0) return;
  showPly(Math.round(((ev.clientX - r.left) / r.width) * n), false);
}

// ---------------------------------------------------------------- puzzles

function solvedSet() {
  try { return new Set(JSON.parse(localStorage.getItem('ultima-solved') || '[]')); } catch (e) { return new Set(); }
}
function markSolved(id) {
  const s = solvedSet();
  s.add(id);
  try { localStorage.setItem('ultima-solved', JSON.stringify([...s])); } catch (e) { /* private mode */ }
}

function puzzleElo(p) {
  if (typeof p.learnt_rating === 'number') return p.learnt_rating;
  if (typeof p.rating_elo === 'number') return p.rating_elo;
  if (typeof p.rating === 'number') return p.rating;
  return null;
}

async function loadPuzzles() {
  if (S.puzzles.length) return;
  try {
    S.puzzles = (await api('/api/puzzles')).puzzles || [];
  } catch (e) {
    $('puzzle-count').textContent = 'Could not load the puzzles: ' + e.message;
    return;
  }
  const tags = new Set();
  for (const p of S.puzzles) for (const t of p.tags || []) tags.add(t);
  const sel = $('puzzle-tag');
  for (const t of [...tags].sort()) {
    const o = document.createElement('option');
    o.value = t;
    o.textContent = t;
    sel.appendChild(o);
  }
  renderPuzzleList();
}

// The puzzle trainer's anonymous player: its token kept in this browser,
// made on first use (again if the server no longer knows it).
async function ensurePlayer() {
  if (S.player) return S.player;
  let token = null;
  try { token = localStorage.getItem('ultima-player'); } catch (e) { /* no storage */ }
  try {
    if (token) {
      const state = await api('/api/players/state', { token });
      S.player = Object.assign({ token }, state.player);
    }
  } catch (e) {
    if (e.status !== 404) throw e;
  }
  if (!S.player) {
    const made = await api('/api/players/new', {});
    try { localStorage.setItem('ultima-player', made.token); } catch (e) { /* this page only */ }
    S.player = Object.assign({ token: made.token }, made.player);
  }
  renderPlayer();
  return S.player;
}

function renderPlayer(delta) {
  const p = S.player;
  const el = $('puzzle-player');
  if (!p) { el.textContent = ''; return; }
  el.textContent = `Your puzzle rating: ${p.rating} ± ${2 * p.rd}` +
    (typeof delta === 'number' ? ` (${delta >= 0 ? '+' : ''}${delta})` : '') +
    ` · streak ${p.streak} (best ${p.best_streak}) · ${p.solved} of ${p.attempts} solved`;
  el.dataset.rating = String(p.rating);
  el.dataset.streak = String(p.streak);
}

async function nextPuzzle() {
  try {
    const p = await ensurePlayer();
    const answer = await api('/api/puzzles/next', { token: p.token, tag: $('puzzle-tag').value });
    if (!answer.puzzle) { setPuzzleStatus('You have tried every puzzle of this theme.', 'done'); return; }
    startPuzzle(answer.puzzle);
  } catch (e) {
    setPuzzleStatus('No puzzle: ' + e.message, 'wrong');
  }
}

const PUZZLES_PER_PAGE = 50;

function renderPuzzleList() {
  const tag = $('puzzle-tag').value;
  const min = $('puzzle-min').value === '' ? -Infinity : Number($('puzzle-min').value);
  const max = $('puzzle-max').value === '' ? Infinity : Number($('puzzle-max').value);
  const solved = solvedSet();
  const list = $('puzzle-list');
  list.innerHTML = '';
  const shown = S.puzzles.filter((p) => {
    const elo = puzzleElo(p);
    if (tag && !(p.tags || []).includes(tag)) return false;
    if (elo !== null && (elo < min || elo > max)) return false;
    return true;
  });
  const pages = Math.max(1, Math.ceil(shown.length / PUZZLES_PER_PAGE));
  S.puzzlePage = Math.max(0, Math.min(S.puzzlePage, pages - 1));
  const first = S.puzzlePage * PUZZLES_PER_PAGE;
  for (const p of shown.slice(first, first + PUZZLES_PER_PAGE)) {
    const li = document.createElement('li');
    li.dataset.puzzleId = p.id;
    li.classList.toggle('solved', solved.has(p.id));
    const elo = puzzleElo(p);
    const rating = typeof p.learnt_rating === 'number' ? `${p.learnt_rating}` :
      typeof p.rating === 'string' ? `${p.rating}${elo !== null ? ' ' + elo : ''}` : `${elo}`;
    const what = p.kind === 'mate' ? `mate in ${p.moves_to_find}` : `win material (${p.moves_to_find} move${p.moves_to_find === 1 ? '' : 's'})`;
    li.innerHTML = `<span class="pid"></span> <span class="prating"></span> <span class="pkind"></span> <span class="ptags"></span>`;
    li.querySelector('.pid').textContent = p.id;
    li.querySelector('.prating').textContent = rating;
    li.querySelector('.pkind').textContent = `${p.side} · ${what}`;
    li.querySelector('.ptags').textContent = (p.tags || []).join(', ');
    li.addEventListener('click', () => startPuzzle(p));
    list.appendChild(li);
  }
  $('puzzle-count').textContent = `${shown.length} of ${S.puzzles.length} puzzles` +
    ` · ${solved.size} solved here`;
  $('puzzle-page').textContent = `page ${S.puzzlePage + 1} of ${pages}`;
  $('puzzle-prev-page').disabled = S.puzzlePage === 0;
  $('puzzle-next-page').disabled = S.puzzlePage >= pages - 1;
}

async function startPuzzle(p) {
  await stopAnalysis();
  resetGame(p.rules, p.fen, []);
  S.mode = 'puzzle';
  S.puzzle = { p, solved: false, expected: null, busy: false };
  S.tags = { Event: `Puzzle ${p.id}` };
  S.flipped = p.side === 'black';
  buildBoard();
  await showPly(0, true);
  for (const li of document.querySelectorAll('#puzzle-list li')) li.classList.toggle('current', li.dataset.puzzleId === p.id);
  const what = p.kind === 'mate' ? `mate in ${p.moves_to_find}` : 'win material';
  setPuzzleStatus(`${p.id}: ${cap(p.side)} to play and ${what}.`, 'playing');
  $('puzzle-hint').hidden = true;
  setMessage('');
}

function setPuzzleStatus(text, state) {
  const el = $('puzzle-status');
  el.textContent = text;
  el.dataset.state = state;
}

async function puzzleMove(m) {
  const why = canMoveNow();
  if (why) { refuse(`You cannot move now: ${why}.`); return; }
  const pz = S.puzzle;
  const gameId = S.gameId;
  const tried = S.moves.concat([m.move]);
  pz.busy = true;
  let check;
  try {
    const body = { id: pz.p.id, moves: tried };
    if (S.player) body.token = S.player.token;
    check = await api('/api/puzzles/check', body);
  } catch (e) {
    pz.busy = false;
    refuse('Could not check the move: ' + e.message);
    return;
  }
  if (gameId !== S.gameId) return;
  if (check.rating) {
    Object.assign(S.player, check.rating.player);
    renderPlayer(check.rating.rated ? check.rating.delta : undefined);
  }
  if (!check.correct) {
    pz.busy = false;
    pz.expected = check.expected || null;
    refuse(`${m.notation} is not the solution. Try again.`);
    setPuzzleStatus(`Not ${m.notation}: try again.`, 'wrong');
    $('puzzle-hint').hidden = !pz.expected;
    return;
  }
  S.moves = tried;
  await showPly(S.moves.length, true);
  if (check.solved) {
    pz.solved = true;
    pz.busy = false;
    markSolved(pz.p.id);
    setPuzzleStatus(`Solved! ${pz.p.id} is done.`, 'solved');
    setMessage(`${m.notation} — solved.`, 'info');
    $('puzzle-hint').hidden = true;
    renderPuzzleList();
    renderStatus();
    return;
  }
  setPuzzleStatus(`${m.notation} is right. Wait for the reply…`, 'correct');
  if (check.reply) {
    await new Promise((r) => setTimeout(r, 350));
    if (gameId !== S.gameId) return;
    S.moves = S.moves.concat([check.reply]);
    await showPly(S.moves.length, true);
    const last = S.full.history[S.full.history.length - 1];
    setPuzzleStatus(`Right. The reply was ${last ? last.notation : check.reply}; find the next move.`, 'correct');
  }
  pz.busy = false;
  renderStatus();
}

function puzzleHint() {
  const pz = S.puzzle;
  if (!pz || !pz.expected || !S.pos) return;
  const m = S.pos.legal.find((x) => x.move === pz.expected);
  setMessage(`The solution's move: ${m ? m.notation : pz.expected}`, 'info');
  const ms = moveSquares(pz.expected);
  const d = squareEl(ms.from);
  if (d) d.classList.add('hint');
}

// ---------------------------------------------------------------- setup

function setTab(name) {
  for (const t of document.querySelectorAll('#tabs .tab')) t.classList.toggle('active', t.dataset.tab === name);
  for (const p of document.querySelectorAll('.panel')) p.classList.toggle('active', p.id === 'panel-' + name);
  if (name === 'learn') loadCourse();
  if (name === 'puzzles') {
    loadPuzzles();
    ensurePlayer().catch((e) => { $('puzzle-player').textContent = 'No puzzle rating: ' + e.message; });
  }
}

function syncOptions() {
  const opponent = $('opponent-select').value;
  $('bot-options').hidden = opponent !== 'bot';
  $('friend-options').hidden = opponent === 'bot';
  $('online-colour-label').hidden = opponent !== 'online';
  $('auto-flip-label').hidden = opponent !== 'human';
  const clock = $('time-mode').value === 'clock';
  $('clock-options').hidden = !clock;
  $('movetime-options').hidden = clock;
  const bot = S.info && S.info.bots.find((b) => b.name === $('bot-select').value);
  $('bot-description').textContent = bot ? bot.description || '' : '';
  $('evaluator-label').hidden = $('backend-select').value !== 'mcts';
}

function onKey(ev) {
  const tag = (ev.target && ev.target.tagName) || '';
  if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') return;
  if (ev.key === 'ArrowLeft') { showPly(S.viewPly - 1, false); ev.preventDefault(); }
  else if (ev.key === 'ArrowRight') { showPly(S.viewPly + 1, false); ev.preventDefault(); }
  else if (ev.key === 'Home') { showPly(0, false); ev.preventDefault(); }
  else if (ev.key === 'End') { showPly(S.moves.length, false); ev.preventDefault(); }
  else if (ev.key === 'f') { S.flipped = !S.flipped; buildBoard(); }
  else if (ev.key === 'Escape') { select(null); setMessage(''); }
}

async function init() {
  try {
    S.info = await api('/api/info');
  } catch (e) {
    $('status').textContent = 'The server does not answer: ' + e.message;
    return;
  }
  const info = S.info;
  $('version').textContent = info.version ? 'v' + info.version : '';
  const rs = $('rules-select');
  for (const p of info.presets) {
    const o = document.createElement('option');
    o.value = p;
    o.textContent = p;
    rs.appendChild(o);
  }
  rs.value = info.default_rules || info.presets[0];
  const bs = $('bot-select');
  for (const b of info.bots) {
    const o = document.createElement('option');
    o.value = b.name;
    o.textContent = `${b.name} (Elo ${b.elo ?? '?'})`;
    bs.appendChild(o);
  }
  bs.value = info.default_bot || info.bots[0].name;
  if (info.weights) {
    const o = document.createElement('option');
    o.value = info.weights;
    o.textContent = 'network: ' + info.weights.split('/').pop();
    $('evaluator-select').prepend(o);
    $('evaluator-select').value = info.weights;
  }
  for (const id of ['opponent-select', 'time-mode', 'bot-select', 'backend-select']) {
    $(id).addEventListener('change', syncOptions);
  }
  syncOptions();
  for (const t of document.querySelectorAll('#tabs .tab')) t.addEventListener('click', () => setTab(t.dataset.tab));
  $('new-game').addEventListener('click', newGame);
  $('resign').addEventListener('click', () => { if (!S.result) confirmThen($('resign'), resign); });
  $('takeback').addEventListener('click', takeBack);
  $('board').addEventListener('pointerdown', onPointerDown);
  window.addEventListener('pointermove', onPointerMove);
  window.addEventListener('pointerup', onPointerUp);
  window.addEventListener('pointercancel', onPointerUp);
  $('offer-draw').addEventListener('click', () => onlineAction('offer-draw'));
  $('abort').addEventListener('click', () => onlineAction('abort'));
  $('offer-accept').addEventListener('click', () => onlineAction('accept-' + $('online-offer').dataset.kind));
  $('offer-decline').addEventListener('click', () => onlineAction('decline-' + $('online-offer').dataset.kind));
  $('online-link').addEventListener('focus', () => $('online-link').select());
  $('online-analyse').addEventListener('click', analyseOnlineGame);
  window.addEventListener('hashchange', () => {
    const m = /^#game=([a-z0-9]+)$/.exec(location.hash);
    if (m && (!S.online || S.online.id !== m[1])) openOnlineGame(m[1]);
  });
  $('flip').addEventListener('click', () => { S.flipped = !S.flipped; buildBoard(); });
  $('nav-first').addEventListener('click', () => showPly(0, false));
  $('nav-prev').addEventListener('click', () => showPly(S.viewPly - 1, false));
  $('nav-next').addEventListener('click', () => showPly(S.viewPly + 1, false));
  $('nav-last').addEventListener('click', () => showPly(S.moves.length, false));
  $('removal-button').addEventListener('click', () => {
    const m = S.selected && S.pos.legal.find((x) => x.move === 'x' + S.selected);
    if (m) { select(null); playMove(m); }
  });
  $('analyze-start').addEventListener('click', startAnalysis);
  $('analyze-stop').addEventListener('click', stopAnalysis);
  $('multipv-select').addEventListener('change', () => { if (S.analysis && S.analysis.running) startAnalysis(); });
  $('pgn-load').addEventListener('click', loadPgn);
  $('pgn-save').addEventListener('click', savePgn);
  $('pgn-file').addEventListener('change', () => {
    const f = $('pgn-file').files[0];
    if (!f) return;
    const r = new FileReader();
    r.onload = () => { $('pgn-text').value = String(r.result); loadPgn(); };
    r.readAsText(f);
  });
  $('game-select').addEventListener('change', () => showGame(S.loadedGames[Number($('game-select').value)]));
  $('graph-run').addEventListener('click', runGraph);
  $('eval-graph').addEventListener('click', onGraphClick);
  for (const id of ['puzzle-tag', 'puzzle-min', 'puzzle-max']) {
    $(id).addEventListener('input', () => { S.puzzlePage = 0; renderPuzzleList(); });
    $(id).addEventListener('change', () => { S.puzzlePage = 0; renderPuzzleList(); });
  }
  $('puzzle-hint').addEventListener('click', puzzleHint);
  $('puzzle-next').addEventListener('click', nextPuzzle);
  $('exercise-next').addEventListener('click', nextExercise);
  $('exercise-hint').addEventListener('click', exerciseHint);
  $('puzzle-prev-page').addEventListener('click', () => { S.puzzlePage -= 1; renderPuzzleList(); });
  $('puzzle-next-page').addEventListener('click', () => { S.puzzlePage += 1; renderPuzzleList(); });
  document.addEventListener('keydown', onKey);

  const link = /^#game=([a-z0-9]+)$/.exec(location.hash);
  if (link) {
    await openOnlineGame(link[1]);
  } else if (!(await restoreBotGame())) {
    resetGame(rs.value, null, []);
    S.mode = 'human';
    buildBoard();
    await showPly(0, true);
    setMessage('Click a piece to see its moves; pick a bot and press Start to play.', 'info');
  }
  document.body.dataset.ready = 'true';
}

// The rules page: small diagrams written as rows of cells, '/' between rows:
// a piece letter (FEN case) or '.' for an empty square, 'o' an empty square
// the piece can move to; '!' after a piece marks it captured, '~' frozen.
function renderDiagrams() {
  for (const d of document.querySelectorAll('.diagram[data-rows]')) {
    d.innerHTML = '';
    const rows = d.dataset.rows.split('/');
    d.style.setProperty('--n', String(rows[0].replace(/[!~]/g, '').length));
    rows.forEach((row, r) => {
      let col = 0;
      for (let i = 0; i < row.length; ++i) {
        const ch = row[i];
        if (ch === '!' || ch === '~') continue;
        const cell = document.createElement('span');
        cell.className = (r + col) % 2 === 0 ? 'l' : 'd';
        if (ch === 'o') cell.classList.add('t');
        else if (ch !== '.') {
          cell.innerHTML = pieceSvg(ch);
          cell.title = `${ch === ch.toUpperCase() ? 'White' : 'Black'} ${PIECE_NAMES[ch.toLowerCase()]}`;
        }
        if (row[i + 1] === '!') cell.classList.add('x');
        if (row[i + 1] === '~') cell.classList.add('f');
        d.appendChild(cell);
        ++col;
      }
    });
  }
  for (const l of document.querySelectorAll('.legend[data-legend]')) {
    l.innerHTML = '';
    for (const ch of l.dataset.legend) {
      const item = document.createElement('div');
      item.innerHTML = pieceSvg(ch) + pieceSvg(ch.toLowerCase()) +
        `<span>${ch} · ${PIECE_NAMES[ch.toLowerCase()]}</span>`;
      l.appendChild(item);
    }
  }
}

window.addEventListener('DOMContentLoaded', () => {
  document.body.dataset.pieces = pieceSet;
  if ($('piece-set')) {
    $('piece-set').value = pieceSet;
    $('piece-set').addEventListener('change', () => setPieceSet($('piece-set').value));
  }
  if ($('board')) init();
  else renderDiagrams();
});
