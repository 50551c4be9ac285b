// The play page: one person at a table with three bots. The server is the referee: this page draws the view
// it is sent (only what the person's seat may see) and sends back action ids.
"use strict";

const gameId = location.pathname.split("/").pop();
let view = null;            // the latest view from the server
let selected = new Set();   // hand slots picked for a discard
let shownMoves = 0;         // moves of the current hand already drawn (for the bots' pace)
let busy = false;

function position(seat) { return (seat - view.seat + 4) % 4; }   // 0 you, 1 right, 2 partner, 3 left

function seatBox(p) {
  const s = p.seat, me = s === view.seat;
  const decl = view.declarations;
  const tags = [];
  if (view.mano === s) tags.push(el("span", { class: "tag mano", title: "mano: first to speak, wins ties" }, "mano"));
  if (view.current_player === s && !view.over) tags.push(el("span", { class: "tag acting" }, me ? "your turn" : "to act"));
  if (decl.pares[s] !== null) tags.push(el("span", { class: "tag" }, decl.pares[s] ? "pares sí" : "pares no"));
  if (decl.juego[s] !== null) tags.push(el("span", { class: "tag" }, decl.juego[s] ? "juego sí" : "juego no"));
  for (const w of ["mus", "grande"]) {
    const sign = view.signs[w][String(s)];
    if (sign) tags.push(el("span", { class: "tag sign", title: sign.gesture }, `${w}: ${sign.text}`));
  }
  const lastRound = view.discards.length ? view.discards[view.discards.length - 1][s] : null;
  if (lastRound) tags.push(el("span", { class: "tag" }, `threw ${lastRound}`));
  let cards;
  if (me) {
    const discarding = view.legal.some((a) => a.kind === "discard");
    cards = view.cards.map((c, slot) => {
      const node = cardEl(c, discarding ? { onclick: () => toggle(slot) } : {});
      if (selected.has(slot)) node.classList.add("picked");
      return node;
    });
  } else {
    cards = view.over ? [] : [0, 1, 2, 3].map(() => cardEl(null, { small: true }));
  }
  const box = el("div", { class: "seatbox" + (view.current_player === s ? " acting" : "") + (s % 2 === view.seat % 2 ? " own-team" : " other-team") },
    el("div", { class: "who" }, el("strong", {}, me ? "You" : `${p.role} (${shortName(p.name)})`), ` · seat ${s} · team ${p.team}`),
    el("div", { class: "tags" }, tags), el("div", { class: "cards" + (me ? "" : " small") }, cards));
  return box;
}

function toggle(slot) {
  if (busy) return;
  if (selected.has(slot)) selected.delete(slot); else selected.add(slot);
  render();
}

function centerBox() {
  const rows = view.lances.map((l) => {
    const stake = l.stake === "órdago" ? "órdago" : (l.stake ? `${l.stake} stones` : "");
    const active = view.lance === l.lance;
    return el("div", { class: "lance" + (active ? " active" : "") },
      el("span", { class: "lance-name" }, l.lance), el("span", {}, l.outcome === "not played" ? (active ? "betting" : "") : l.outcome),
      el("span", {}, stake));
  });
  const bet = view.betting;
  const betting = bet ? el("div", { class: "betting" },
    bet.bettor_team < 0 ? `${bet.lance}: nobody has bet` :
      `${bet.lance}: ${bet.stake === "órdago" ? "ÓRDAGO" : bet.stake + " stones"} on the table by team ${bet.bettor_team}` +
      ` (refused: ${bet.fallback})`) : null;
  return el("div", {}, el("div", { class: "phase" }, view.over ? "game over" : view.phase), el("div", { class: "lances" }, rows), betting,
    el("div", { class: "hand-stones" }, `this hand: team 0 ${view.hand_stones[0]}, team 1 ${view.hand_stones[1]}`));
}

function actionsBox() {
  const box = el("div", {});
  if (view.over) {
    const won = view.winner === view.seat % 2;
    const last = view.hands[view.hands.length - 1];
    const how = last && last.by_ordago ? `by an accepted órdago (the score stood at ${view.scores[0]}-${view.scores[1]})`
      : `${view.scores[0]}-${view.scores[1]}`;
    box.append(el("div", { class: "banner " + (won ? "win" : "lose") },
      `Game over: team ${view.winner} wins ${how}. ` + (won ? "You win!" : "The rivals win.")),
      el("p", {}, "The game is saved as a record: ",
        el("a", { href: `/replay/games/game-${gameId}.json`, id: "replay-link" }, "replay it"), "."));
    return box;
  }
  if (view.current_player !== view.seat) { box.append(el("p", { class: "waiting" }, "The bots are playing…")); return box; }
  const discards = view.legal.filter((a) => a.kind === "discard");
  if (discards.length) {
    let mask = 0; for (const s of selected) mask |= 1 << s;
    const match = discards.find((a) => a.mask === mask);
    box.append(el("p", {}, "Click the cards to throw, then discard."),
      el("button", { class: "act", id: "discard", disabled: !match, onclick: () => match && send(match.action) },
        match ? `Discard ${selected.size}` : "Pick the cards to throw"));
  }
  for (const a of view.legal) {
    if (a.kind === "discard") continue;
    const label = a.kind === "sign" ? `${a.text}` : a.text;
    box.append(el("button", { class: "act" + (a.kind === "sign" ? " sign" : ""), "data-action": a.action,
                              title: a.gesture || "", onclick: () => send(a.action) }, label,
      a.kind === "sign" ? el("small", {}, a.gesture) : null));
  }
  return box;
}

function historyBox(moves) {
  const names = view.players.map((p) => (p.seat === view.seat ? "you" : `${p.role}-${p.seat}`));
  const groups = [];
  for (const m of moves) {
    const lance = m.lance || "mus";
    if (!groups.length || groups[groups.length - 1].lance !== lance) groups.push({ lance, moves: [] });
    groups[groups.length - 1].moves.push(m);
  }
  return el("div", {}, el("h3", {}, `Hand ${view.hand_number + 1}`),
    groups.map((g) => el("div", { class: "group" }, el("div", { class: "group-name" }, g.lance),
      el("ul", {}, g.moves.map((m) => el("li", { class: m.auto ? "auto" : "" }, el("b", {}, names[m.seat]), `: ${m.text}`))))));
}

function summaryBox() {
  if (!view.hands.length) return el("p", { class: "muted" }, "The hand summaries appear here after each hand.");
  const h = view.hands[view.hands.length - 1];
  const names = view.players.map((p) => (p.seat === view.seat ? "you" : `${p.role}-${p.seat}`));
  const shown = h.final_hands.map((cards, s) => (cards ? el("div", { class: "shown" }, el("span", {}, names[s]),
    el("div", { class: "cards small" }, cards.map((c) => cardEl(c, { small: true })))) : null));
  return el("div", {}, el("h3", {}, `Hand ${h.hand_number + 1}: ${h.scores_before.join("-")} → ${h.scores_after.join("-")}`),
    h.stones.length ? table(["lance", "team", "stones", "why"], h.stones.map((e) => [e.lance, String(e.team), String(e.stones), e.reason]))
      : el("p", {}, h.by_ordago ? `The órdago decided the game: team ${h.game_winner} wins.` : "No stones in this hand."),
    h.shown ? el("p", {}, h.by_ordago ? "An órdago was accepted: the hands are shown." : "The count: the hands are shown.") :
      el("p", {}, "No showdown: the hands stay hidden."), shown);
}

function render() {
  document.getElementById("title").textContent =
    `seat ${view.seat} · ${view.config.kings} kings · to ${view.config.target}` + (view.config.signals !== "off" ? ` · señas ${view.config.signals}` : "");
  for (const p of view.players) clear(document.getElementById(`seat-${position(p.seat)}`)).append(seatBox(p));
  clear(document.getElementById("center")).append(centerBox());
  clear(document.getElementById("actions")).append(actionsBox());
  clear(document.getElementById("score")).append(el("h3", {}, "Score"),
    el("div", { class: "score" }, el("div", {}, `team 0${view.seat % 2 === 0 ? " (you)" : ""}: ${scoreText(view.scores[0])}`),
      el("div", {}, `team 1${view.seat % 2 === 1 ? " (you)" : ""}: ${scoreText(view.scores[1])}`)));
  clear(document.getElementById("history")).append(historyBox(view.history.slice(0, shownMoves)));
  clear(document.getElementById("summary")).append(summaryBox());
  document.body.dataset.turn = String(view.turn);
  document.body.dataset.state = busy ? "busy" : (view.over ? "over" : (view.current_player === view.seat ? "yours" : "waiting"));
}

async function show(next) {
  const sameHand = view && next.hand_number === view.hand_number;
  const from = sameHand ? shownMoves : 0;
  view = next;
  selected = new Set();
  const delay = Number(document.getElementById("delay").value);
  busy = true;
  for (shownMoves = from; delay > 0 && shownMoves < view.history.length; shownMoves++) {
    render();
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
  shownMoves = view.history.length;
  busy = false;
  render();
}

async function send(action) {
  if (busy) return;
  busy = true;
  showError("");
  try {
    const next = await api(`/api/games/${gameId}/moves`, { action, turn: view.turn });
    busy = false;
    await show(next);
  } catch (e) {
    busy = false;
    showError(e.message);
    try { await show(await api(`/api/games/${gameId}`)); } catch (e2) { /* the error is shown */ }
  }
}

(async () => {
  try { await show(await api(`/api/games/${gameId}`)); } catch (e) { showError(e.message); }
})();
