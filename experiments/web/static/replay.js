// The replay page: a finished record step by step (every hand may be shown: a finished game is public), the
// score as a timeline, and for each decision what an agent thought (asked from the server on demand).
"use strict";

const recordName = decodeURIComponent(location.pathname.replace(/^\/replay\//, ""));
let data = null, options = null, step = 0, timer = null;

// agents that show probabilities or action values (the others show only their choice)
function explaining(spec) { return options.explaining.indexOf(spec) >= 0; }

function stepFromHash() {
  const m = /step=(\d+)/.exec(location.hash);
  return m ? Math.min(Number(m[1]), data.steps.length - 1) : 0;
}

function seatBox(s, st) {
  const acting = st.current_player === s;
  const faceUp = document.getElementById("faceup").checked || acting;
  const cards = st.cards.length ? st.cards[s].map((c) => cardEl(faceUp ? c : null, { small: !acting })) : [];
  const tags = [];
  if (st.mano === s) tags.push(el("span", { class: "tag mano" }, t("play.mano")));
  if (acting) tags.push(el("span", { class: "tag acting" }, t("play.to_act")));
  return el("div", { class: "seatbox" + (acting ? " acting" : "") + (s % 2 === 0 ? " own-team" : " other-team") },
    el("div", { class: "who" }, el("strong", {}, t("replay.seat_name", { seat: s, name: shortName(data.players[s]) })), t("replay.team", { team: s % 2 })),
    el("div", { class: "tags" }, tags), el("div", { class: "cards" + (acting ? "" : " small") }, cards));
}

function render() {
  const st = data.steps[step];
  for (let s = 0; s < 4; s++) clear(document.getElementById(`seat-${s}`)).append(seatBox(s, st));
  clear(document.getElementById("center")).append(
    el("div", { class: "phase" }, t("replay.hand_phase", { n: st.hand_number + 1, phase: phaseText(st.phase) })),
    el("div", { class: "score" }, t("play.team_score", { team: 0, score: scoreText(st.scores[0]) })),
    el("div", { class: "score" }, t("play.team_score", { team: 1, score: scoreText(st.scores[1]) })));
  const moveBox = clear(document.getElementById("move"));
  if (st.move) {
    moveBox.append(el("div", { class: "banner" }, t("replay.move_seat", { seat: st.move.seat, name: data.players[st.move.seat] }) +
      (st.move.lance ? ` [${st.move.lance}]` : "") + `: ${st.move.text}`));
    for (const a of st.move.after) moveBox.append(el("div", { class: "auto" }, t("replay.auto_move", { seat: a.seat, text: a.text })));
  } else {
    moveBox.append(el("div", { class: "banner win" }, t("replay.game_over", { team: data.winner, score: data.scores.join("-") })));
  }
  document.getElementById("position").textContent = t("replay.position", { step, last: data.steps.length - 1 });
  document.getElementById("permalink").href = `#step=${step}`;
  document.getElementById("hand").value = String(st.hand_number);
  document.body.dataset.step = String(step);
  drawTimeline();
  analyse();
}

function go(k) {
  step = Math.max(0, Math.min(k, data.steps.length - 1));
  history.replaceState(null, "", `#step=${step}`);
  render();
}

function drawTimeline() {
  const points = [[], []];
  data.steps.forEach((st, k) => { points[0].push([k, st.scores[0]]); points[1].push([k, st.scores[1]]); });
  const chart = lineChart([{ name: t("replay.team_n", { team: 0 }), points: points[0] }, { name: t("replay.team_n", { team: 1 }), points: points[1] }],
    { width: 420, height: 180, xlabel: t("replay.decision") });
  const x = 36 + step / Math.max(1, data.steps.length - 1) * (420 - 72);
  chart.append(svg("line", { x1: x, y1: 10, x2: x, y2: 150, stroke: "#333" }));
  clear(document.getElementById("timeline")).append(chart);
}

let analysisToken = 0;
async function analyse() {
  const box = clear(document.getElementById("analysis"));
  const st = data.steps[step];
  let spec = document.getElementById("agent").value;
  if (spec === "auto" && st.move) spec = explaining(data.players[st.move.seat]) ? data.players[st.move.seat] : "ppo";
  if (!st.move || !spec) return;
  const token = ++analysisToken;
  try {
    const a = await api(`/api/records/${recordName}/analysis?step=${step}&agent=${encodeURIComponent(spec)}`);
    if (token !== analysisToken) return;
    const chosen = st.move.action;
    box.append(el("p", {}, t("replay.analysis_head", { seat: a.seat, phase: phaseText(a.phase) }) +
      (a.value !== undefined && a.value !== null ? t("replay.analysis_value", { value: a.value.toFixed(3) }) : "")),
      el("table", { class: "data analysis" }, el("tbody", {}, a.actions.map((r) => el("tr", { class: r.action === chosen ? "chosen" : "" },
        el("td", {}, r.text),
        el("td", {}, r.probability !== undefined ? el("span", { class: "bar", style: `width:${Math.round(r.probability * 100)}px` }) : ""),
        el("td", {}, r.probability !== undefined ? `${(r.probability * 100).toFixed(1)}%` : ""),
        el("td", {}, r.value !== undefined && r.value !== null ? r.value.toFixed(3) : ""))))));
  } catch (e) {
    if (token === analysisToken) box.append(el("p", { class: "muted" }, e.message));
  }
}

function togglePlay() {
  const button = document.getElementById("play");
  if (timer) { clearInterval(timer); timer = null; button.textContent = t("replay.play"); return; }
  button.textContent = t("replay.pause");
  timer = setInterval(() => {
    if (step >= data.steps.length - 1) togglePlay(); else go(step + 1);
  }, Number(document.getElementById("speed").value));
}

(async () => {
  await i18nReady;
  try {
    [data, options] = await Promise.all([api(`/api/records/${recordName}`), api("/api/options")]);
  } catch (e) { showError(e.message, e.detail); return; }
  document.getElementById("title").textContent = t("replay.page_title", { name: recordName, kings: data.config.kings, target: data.config.target });
  const styleLinks = document.getElementById("style-links");
  for (let s = 0; s < 4; s++) {
    styleLinks.append(" ", el("a", { href: `/style?record=${encodeURIComponent(recordName)}&seat=${s}`, class: "style-seat" },
      `${shortName(data.players[s])} (${s})`));
  }
  const agentSelect = document.getElementById("agent");
  agentSelect.append(el("option", { value: "auto" }, t("replay.agent_auto")), el("option", { value: "" }, t("replay.agent_none")));
  for (const spec of options.agents) if (explaining(spec)) agentSelect.append(el("option", { value: spec }, spec));
  agentSelect.value = "auto";
  const hands = [...new Set(data.steps.map((s) => s.hand_number))];
  const handSelect = document.getElementById("hand");
  for (const h of hands) handSelect.append(el("option", { value: String(h) }, t("replay.hand_n", { n: h + 1 })));
  handSelect.addEventListener("change", () => go(data.steps.findIndex((s) => s.hand_number === Number(handSelect.value))));
  document.getElementById("first").addEventListener("click", () => go(0));
  document.getElementById("prev").addEventListener("click", () => go(step - 1));
  document.getElementById("next").addEventListener("click", () => go(step + 1));
  document.getElementById("last").addEventListener("click", () => go(data.steps.length - 1));
  document.getElementById("play").addEventListener("click", togglePlay);
  document.getElementById("faceup").addEventListener("change", render);
  agentSelect.addEventListener("change", analyse);
  window.addEventListener("hashchange", () => { step = stepFromHash(); render(); });
  step = stepFromHash();
  render();
})();
