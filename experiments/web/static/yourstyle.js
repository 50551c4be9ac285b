// The "your style" page: the bidding profile of a finished game's seat (?record=NAME&seat=N) or of a player's
// finished games (?player=NAME), per lance, beside an agent's (?agent=spec). The server computes every rate.
"use strict";

const query = new URLSearchParams(location.search);

// A share as the page shows it: "12% (n=40)", "—" with no decision; few samples get a "*".
function rateText(r) {
  if (!r || r.rate === null || r.rate === undefined) return t("style.no_data", { n: r ? r.n : 0 });
  return t("style.rate", { rate: (r.rate * 100).toFixed(0), n: r.n }) + (r.few ? " *" : "");
}

function factorText(a) {
  const n = a.bets_raises + a.calls;
  if (a.factor === null || a.factor === undefined) return t("style.no_data", { n });
  return t("style.factor", { factor: a.factor.toFixed(2), n }) + (a.few ? " *" : "");
}

function cell(text, few) { return el("td", { class: few ? "few" : "" }, text); }

function profileTable(mine, agent) {
  const head = [t("style.lance"), t("style.decisions")];
  for (const key of ["style.bluff", "style.fold", "style.aggression"]) {
    head.push(`${t(key)}: ${t("style.you")}`);
    if (agent) head.push(`${t(key)}: ${agent.name}`);
  }
  const rows = Object.entries(mine.lances).map(([lance, m]) => {
    const a = agent ? agent.summary.lances[lance] : null;
    const cells = [el("td", {}, lance), el("td", {}, String(m.decisions))];
    for (const key of ["bluff", "fold"]) {
      cells.push(cell(rateText(m[key]), m[key].few));
      if (a) cells.push(cell(rateText(a[key]), a[key].few));
    }
    cells.push(cell(factorText(m.aggression), m.aggression.few));
    if (a) cells.push(cell(factorText(a.aggression), a.aggression.few));
    return el("tr", {}, cells);
  });
  const cut = [el("td", {}, "mus"), el("td", {}, String(mine.cut.n)), el("td", { colspan: agent ? 6 : 3 },
    `${t("style.cut")}: ${t("style.you")} ${rateText(mine.cut)}` +
    (agent ? ` · ${agent.name} ${rateText(agent.summary.cut)}` : ""))];
  return el("table", { class: "data style-table" }, el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows, el("tr", { class: "cut" }, cut)));
}

(async () => {
  await i18nReady;
  const form = document.getElementById("choose");
  const record = query.get("record"), seat = query.get("seat");
  const player = query.get("player") || (record ? "" : "human");
  const agentSpec = query.has("agent") ? query.get("agent") : "rule";
  form.elements.player.value = player;
  try {
    const options = await api("/api/options");
    const select = form.elements.agent;
    select.append(el("option", { value: "" }, t("style.agent_none")));
    for (const spec of options.agents) select.append(el("option", { value: spec }, spec));
    select.value = agentSpec;
    const box = document.getElementById("profile");
    box.append(el("p", { class: "muted" }, t("style.loading")));
    const url = record ? `/api/style/${encodeURI(record)}?seat=${encodeURIComponent(seat || "")}&agent=${encodeURIComponent(agentSpec)}` :
      `/api/style?player=${encodeURIComponent(player)}&agent=${encodeURIComponent(agentSpec)}`;
    const data = await api(url);
    document.getElementById("heading").textContent = record ?
      t("style.heading_seat", { record, seat: data.seat, name: shortName(data.player) }) :
      t("style.heading_player", { name: shortName(data.player), games: data.records.length });
    const agent = data.agent ? { name: agentSpec, summary: data.agent.summary } : null;
    clear(box).append(profileTable(data.style.summary, agent));
    document.getElementById("few-note").textContent = t("style.few_note", { min: data.style.profile.min_samples });
    if (data.agent) {
      const p = data.agent.profile;
      document.getElementById("agent-source").textContent = data.agent.source === "file" ?
        t("style.agent_file", { agent: agentSpec, file: data.agent.file, deals: p.deals }) :
        t("style.agent_computed", { agent: agentSpec, deals: p.deals, field: p.field.join(", ") });
    }
    document.body.dataset.loaded = "1";
  } catch (e) {
    document.getElementById("profile").closest(".panel").hidden = true;     // nothing to show: the error says why
    showError(e.message, e.detail);
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = new URLSearchParams({ player: form.elements.player.value, agent: form.elements.agent.value });
    location.href = `/style?${next}`;
  });
})();
