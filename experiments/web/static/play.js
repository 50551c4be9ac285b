// The play page: a person at a table with three bots (/play/<id>/<token>, the person's own link), or a shared
// table opened by one of its links
// (/table/<id>/<token>): a person's seat, the host (the links, who is here, a seat given to a bot) or a
// spectator (the public table). The server is the referee: this page draws the view it is sent (only what its
// link may see) and sends back action ids. At a shared table the views come by Server-Sent Events as they
// happen; two tabs of one seat get the same views and either may move (the second move of a turn is refused).
"use strict";

const path = location.pathname.split("/");
const shared = path[1] === "table";
const gameId = path[2];
const base = shared ? `/api/tables/${path[2]}/${path[3]}` : `/api/games/${path[2]}/${path[3]}`;
let view = null;            // the latest view from the server
let state = null;           // a shared table: the latest answer (role, who is here, links for the host)
let selected = new Set();   // hand slots picked for a discard
let shownMoves = 0;         // moves of the current hand already drawn (for the bots' pace)
let busy = false;
let pending = null;         // a view that came while another was being drawn
const hostPicks = {};       // the host's choice of a bot for each person's seat (kept across redraws)
let coachAsked = "";        // the decision and agent the coach was last asked about
let reviewAsked = "";       // the hand and agent the coach last reviewed

function position(seat) { return (seat - (view.seat ?? 0) + 4) % 4; }   // 0 you, 1 right, 2 partner, 3 left

function seatBox(p) {
  const s = p.seat, me = s === view.seat;
  const decl = view.declarations;
  const tags = [];
  if (state && p.person && !me) {
    tags.push(el("span", { class: "tag " + (state.present[s] ? "here" : "away") }, state.present[s] ? t("play.here") : t("play.not_here")));
  }
  if (view.mano === s) tags.push(el("span", { class: "tag mano", title: t("play.mano_title") }, t("play.mano")));
  if (view.current_player === s && !view.over) tags.push(el("span", { class: "tag acting" }, me ? t("play.your_turn") : t("play.to_act")));
  if (decl.pares[s] !== null) tags.push(el("span", { class: "tag" }, decl.pares[s] ? t("play.pares_yes") : t("play.pares_no")));
  if (decl.juego[s] !== null) tags.push(el("span", { class: "tag" }, decl.juego[s] ? t("play.juego_yes") : t("play.juego_no")));
  for (const w of ["mus", "grande"]) {
    const sign = view.signs[w][String(s)];
    if (sign) tags.push(el("span", { class: "tag sign", title: sign.gesture }, `${w}: ${sign.text}`));
  }
  const lastRound = view.discards.length ? view.discards[view.discards.length - 1][s] : null;
  if (lastRound) tags.push(el("span", { class: "tag" }, t("play.threw", { cards: lastRound })));
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
  const who = me ? t("play.you") : (p.role === "player" ? shortName(p.name) : `${tKnown("role.", p.role)} (${shortName(p.name)})`);
  const box = el("div", { class: "seatbox" + (view.current_player === s ? " acting" : "") + (s % 2 === (view.seat ?? 0) % 2 ? " own-team" : " other-team") },
    el("div", { class: "who" }, el("strong", {}, who), t("play.seat_team", { seat: s, team: p.team })),
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
    const stake = l.stake === "órdago" ? "órdago" : (l.stake ? t("play.stones", { n: l.stake }) : "");
    const active = view.lance === l.lance;
    return el("div", { class: "lance" + (active ? " active" : "") },
      el("span", { class: "lance-name" }, l.lance), el("span", {}, l.outcome === "not played" ? (active ? t("play.betting") : "") : tKnown("outcome.", l.outcome)),
      el("span", {}, stake));
  });
  const bet = view.betting;
  const betting = bet ? el("div", { class: "betting" },
    bet.bettor_team < 0 ? t("play.nobody_bet", { lance: bet.lance }) :
      t("play.bet_on_table", { lance: bet.lance, stake: bet.stake === "órdago" ? "ÓRDAGO" : t("play.stones", { n: bet.stake }),
                               team: bet.bettor_team, fallback: bet.fallback })) : null;
  return el("div", {}, el("div", { class: "phase" }, view.over ? t("play.game_over") : phaseText(view.phase)), el("div", { class: "lances" }, rows), betting,
    el("div", { class: "hand-stones" }, t("play.hand_stones", { a: view.hand_stones[0], b: view.hand_stones[1] })));
}

function actionsBox() {
  const box = el("div", {});
  if (state && state.given !== null) {
    box.append(el("p", { class: "banner" }, t("play.given", { seat: state.given })));
  }
  if (view.over) {
    const watching = view.seat === null;
    const won = !watching && view.winner === view.seat % 2;
    const last = view.hands[view.hands.length - 1];
    const how = last && last.by_ordago ? t("play.by_ordago", { a: view.scores[0], b: view.scores[1] })
      : `${view.scores[0]}-${view.scores[1]}`;
    box.append(el("div", { class: "banner " + (won || watching ? "win" : "lose") },
      t("play.game_over_banner", { team: view.winner, how }) + (watching ? "" : won ? t("play.you_win") : t("play.rivals_win"))),
      el("p", {}, t("play.saved"),
        el("a", { href: `/replay/games/game-${gameId}.json`, id: "replay-link" }, t("play.replay_it")), t("play.face_up")));
    return box;
  }
  if (view.current_player !== view.seat) {
    const acting = view.players[view.current_player];
    const text = acting.person ? t("play.waiting_person", { seat: acting.seat }) : t("play.bots_playing");
    box.append(el("p", { class: "waiting" }, view.seat === null ? `${text} ${t("play.watching")}` : text));
    return box;
  }
  const discards = view.legal.filter((a) => a.kind === "discard");
  if (discards.length) {
    let mask = 0; for (const s of selected) mask |= 1 << s;
    const match = discards.find((a) => a.mask === mask);
    box.append(el("p", {}, t("play.click_cards")),
      el("button", { class: "act", id: "discard", disabled: !match, onclick: () => match && send(match.action) },
        match ? t("play.discard_n", { n: selected.size }) : t("play.pick_cards")));
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

function seatName(p) {
  return p.seat === view.seat ? t("play.you_short") : p.role === "player" ? t("play.seat_n", { seat: p.seat })
    : `${tKnown("role.", p.role)}-${p.seat}`;
}

function historyBox(moves) {
  const names = view.players.map(seatName);
  const groups = [];
  for (const m of moves) {
    const lance = m.lance || "mus";
    if (!groups.length || groups[groups.length - 1].lance !== lance) groups.push({ lance, moves: [] });
    groups[groups.length - 1].moves.push(m);
  }
  return el("div", {}, el("h3", {}, t("play.hand_n", { n: view.hand_number + 1 })),
    groups.map((g) => el("div", { class: "group" }, el("div", { class: "group-name" }, g.lance),
      el("ul", {}, g.moves.map((m) => el("li", { class: m.auto ? "auto" : "" }, el("b", {}, names[m.seat]), `: ${m.text}`))))));
}

function summaryBox() {
  if (!view.hands.length) return el("p", { class: "muted" }, t("play.summary_empty"));
  const h = view.hands[view.hands.length - 1];
  const names = view.players.map(seatName);
  const shown = h.final_hands.map((cards, s) => (cards ? el("div", { class: "shown" }, el("span", {}, names[s]),
    el("div", { class: "cards small" }, cards.map((c) => cardEl(c, { small: true })))) : null));
  return el("div", {}, el("h3", {}, t("play.hand_summary", { n: h.hand_number + 1, before: h.scores_before.join("-"), after: h.scores_after.join("-") })),
    h.stones.length ? table([t("play.col_lance"), t("play.col_team"), t("play.col_stones"), t("play.col_why")], h.stones.map((e) => [e.lance, String(e.team), String(e.stones), e.reason.split("+").map((r) => tKnown("reason.", r)).join(" + ")]))
      : el("p", {}, h.by_ordago ? t("play.ordago_decided", { team: h.game_winner }) : t("play.no_stones")),
    h.shown ? el("p", {}, h.by_ordago ? t("play.shown_ordago") : t("play.shown_count")) :
      el("p", {}, t("play.not_shown")), shown);
}

// The coach (off by default): at the person's own decision, what an agent would play there, computed by the
// server from this seat's own observation only.
async function coach() {
  const box = document.getElementById("coach-box");
  const on = document.getElementById("coach").checked;
  const mine = view.seat !== null && !view.over && view.current_player === view.seat;
  const spec = document.getElementById("coach-agent").value;
  box.hidden = !on || !mine;
  if (!on || !mine) { coachAsked = ""; return; }
  const key = `${view.turn}:${spec}`;
  if (key === coachAsked) return;
  coachAsked = key;
  clear(box).append(el("h3", {}, t("play.coach_title", { agent: spec })), el("p", { class: "muted" }, t("play.thinking")));
  try {
    const a = await api(`${base}/coach?agent=${encodeURIComponent(spec)}`);
    if (coachAsked !== key) return;
    const best = Math.max(...a.actions.map((r) => (r.probability !== undefined ? r.probability : -Infinity)));
    clear(box).append(el("h3", {}, t("play.coach_title", { agent: spec })),
      el("p", {}, a.value !== undefined && a.value !== null ? t("play.coach_would_value", { value: a.value.toFixed(3) }) : t("play.coach_would")),
      el("table", { class: "data analysis" }, el("tbody", {}, a.actions.map((r) => el("tr", { class: r.probability === best ? "chosen" : "" },
        el("td", {}, r.text),
        el("td", {}, r.probability !== undefined ? el("span", { class: "bar", style: `width:${Math.round(r.probability * 100)}px` }) : ""),
        el("td", {}, r.probability !== undefined ? `${(r.probability * 100).toFixed(1)}%` : ""),
        el("td", {}, r.value !== undefined && r.value !== null ? r.value.toFixed(3) : ""))))));
  } catch (e) {
    if (coachAsked === key) clear(box).append(el("h3", {}, t("play.coach_name")), el("p", { class: "muted" }, e.message));
  }
}

// The coach's review (with the coach on): after each hand, this seat's decisions that differed most from the
// agent's, by the gap in the agent's own measure (its probability, or equity's value) between its first choice
// and the move played.
async function reviewHand() {
  const box = document.getElementById("review-box");
  const on = document.getElementById("coach").checked;
  const spec = document.getElementById("coach-agent").value;
  const last = view.hands.length ? view.hands[view.hands.length - 1].hand_number : null;
  box.hidden = !on || view.seat === null || last === null;
  if (box.hidden) { reviewAsked = ""; return; }
  const key = `${last}:${spec}`;
  if (key === reviewAsked) return;
  reviewAsked = key;
  const title = el("h3", {}, t("play.review_title", { n: last + 1, agent: spec }));
  clear(box).append(title, el("p", { class: "muted" }, t("play.thinking")));
  try {
    const r = await api(`${base}/review?agent=${encodeURIComponent(spec)}&hand=${last}`);
    if (reviewAsked !== key) return;
    const m = (row) => (r.measure === "probability" ? `${(row.probability * 100).toFixed(1)}%` : row.value.toFixed(3));
    clear(box).append(title, r.differed.length
      ? el("ol", { class: "review" }, r.differed.map((d) => el("li", {}, t("play.review_row", {
          phase: phaseText(d.phase), played: d.played.text, played_m: m(d.played), agent: spec,
          preferred: d.preferred.text, preferred_m: m(d.preferred) }))))
      : el("p", {}, t("play.review_same", { n: last + 1, agent: spec, count: r.decisions })));
  } catch (e) {
    if (reviewAsked === key) clear(box).append(title, el("p", { class: "muted" }, e.message));
  }
}

async function setUpCoach() {
  const options = await api("/api/options");
  const select = document.getElementById("coach-agent");
  for (const spec of options.explaining) select.append(el("option", { value: spec }, spec));
  if (!options.explaining.length || view.seat === null) return;
  select.value = options.explaining.includes("ppo") ? "ppo" : options.explaining[0];
  document.getElementById("coach-switch").hidden = false;
  for (const id of ["coach", "coach-agent"]) document.getElementById(id).addEventListener("change", () => { coach(); reviewHand(); });
}

// The host's panel: the links to hand out, who is here, a person's seat given to a bot.
function hostBox() {
  if (!state || state.role !== "host") return null;
  const origin = location.origin;
  const link = (label, url, id) => el("label", { class: "link" }, label,
    el("input", { type: "text", readonly: true, value: origin + url, id, onfocus: (e) => e.target.select() }));
  const rows = Object.entries(state.links.seats).map(([s, url]) => {
    const pick = el("select", { "aria-label": t("play.bot_for_seat", { seat: s }), onchange: (e) => { hostPicks[s] = e.target.value; } },
      state.agents.map((a) => el("option", { value: a }, a)));
    if (hostPicks[s]) pick.value = hostPicks[s];
    const give = el("button", { class: "give", onclick: async () => {
      showError("");
      try { await update((await api(`${base}/bots`, { seat: Number(s), agent: pick.value })).view); } catch (e) { showError(e.message, e.detail); }
    } }, t("play.give"));
    return el("div", { class: "host-seat" }, link(t("play.host_seat", { seat: s, team: Number(s) % 2, here: state.present[Number(s)] ? t("play.here") : t("play.not_here") }), url, `link-${s}`),
      view.over ? null : el("span", {}, pick, give));
  });
  return el("div", {}, el("h3", {}, t("play.your_table")),
    el("p", {}, t("play.host_help")),
    rows, link(t("play.spectators"), state.links.watch, "link-watch"));
}

function render() {
  const who = view.seat === null ? (state && state.role === "host" ? t("play.host") : t("play.spectator")) : t("play.seat_n", { seat: view.seat });
  document.getElementById("title").textContent = t("play.page_title", { who, kings: view.config.kings, target: view.config.target }) +
    (view.config.signals !== "off" ? t("play.title_signals", { signals: tKnown("signals.", view.config.signals) }) : "");
  for (const p of view.players) clear(document.getElementById(`seat-${position(p.seat)}`)).append(seatBox(p));
  clear(document.getElementById("center")).append(centerBox());
  clear(document.getElementById("actions")).append(actionsBox());
  clear(document.getElementById("score")).append(el("h3", {}, t("play.score")),
    el("div", { class: "score" }, el("div", {}, t(view.seat !== null && view.seat % 2 === 0 ? "play.team_score_you" : "play.team_score", { team: 0, score: scoreText(view.scores[0]) })),
      el("div", {}, t(view.seat !== null && view.seat % 2 === 1 ? "play.team_score_you" : "play.team_score", { team: 1, score: scoreText(view.scores[1]) }))));
  clear(document.getElementById("history")).append(historyBox(view.history.slice(0, shownMoves)));
  clear(document.getElementById("summary")).append(summaryBox());
  const host = hostBox();
  const hostPanel = document.getElementById("host");
  clear(hostPanel).append(host || "");
  hostPanel.hidden = !host;
  document.body.dataset.turn = String(view.turn);
  document.body.dataset.role = state ? state.role : "seat";
  document.body.dataset.state = busy ? "busy" : (view.over ? "over" : (view.current_player === view.seat ? "yours" : "waiting"));
  if (!busy) { coach(); reviewHand(); }
}

// Draw the newest view: one that comes while another is being drawn waits for it; an older one is dropped.
async function update(next) {
  if (view && next.turn < view.turn) return;
  if (busy) { pending = next; return; }
  await show(next);
  while (pending) { const p = pending; pending = null; if (p.turn >= view.turn) await show(p); }
}

async function show(next) {
  const sameHand = view && next.hand_number === view.hand_number;
  const from = sameHand ? Math.min(shownMoves, next.history.length) : 0;
  if (!view || next.turn !== view.turn) selected = new Set();
  view = next;
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
    const next = await api(`${base}/moves`, shared ? { action, turn: view.turn, seat: view.seat } : { action, turn: view.turn });
    busy = false;
    if (shared) state = next;
    await update(shared ? next.view : next);
  } catch (e) {
    busy = false;
    showError(e.message, e.detail);
    try { await load(); } catch (e2) { /* the error is shown */ }
  }
}

async function load() {
  const next = await api(base);
  if (shared) state = next;
  await update(shared ? next.view : next);
}

// A shared table's stream: a view now and one after every change; the browser reconnects by itself.
function listen() {
  const events = new EventSource(`${base}/events`);
  events.addEventListener("view", (event) => {
    const next = JSON.parse(event.data);
    if (view && next.view.turn < view.turn) return;
    state = next;
    showError("");
    update(next.view);
  });
  events.addEventListener("error", () => {
    if (events.readyState === EventSource.CLOSED) showError(t("play.closed"));
  });
}

(async () => {
  await i18nReady;
  try {
    await load();
    if (!shared) holdGame(`/play/${path[2]}/${path[3]}`);   // this browser holds the link: the start page lists it
    if (shared) listen();
    await setUpCoach();
  } catch (e) { showError(e.message, e.detail); }
})();
