// The start page: a new game, a new table for people and bots, the records to replay (or games to continue),
// the run folders.
"use strict";

(async () => {
  await i18nReady;
  try {
    const options = await api("/api/options");
    const selects = document.querySelectorAll("select.agent");
    selects.forEach((select, i) => {
      for (const spec of options.agents) select.append(el("option", { value: spec }, spec));
      select.value = options.default_bots[i];
    });
    document.getElementById("new-game").addEventListener("submit", async (event) => {
      event.preventDefault();
      const f = event.target.elements;
      showError("");
      try {
        const game = await api("/api/games", {
          seat: Number(f.seat.value), bots: [f.partner.value, f.rival1.value, f.rival2.value],
          kings: Number(f.kings.value), target: Number(f.target.value), signals: f.signals.value,
          intercept: f.signals.value === "off" ? 0 : Number(f.intercept.value),
        });
        holdGame(game.url);
        location.href = game.url;
      } catch (e) { showError(e.message, e.detail); }
    });
    document.querySelectorAll("select.seat-kind").forEach((select, i) => {
      select.append(el("option", { value: "person" }, t("index.a_person")));
      for (const spec of options.agents) select.append(el("option", { value: spec }, spec));
      select.value = i % 2 === 0 ? "person" : options.default_bots[i === 1 ? 1 : 2];
    });
    document.getElementById("new-table").addEventListener("submit", async (event) => {
      event.preventDefault();
      const f = event.target.elements;
      showError("");
      try {
        const links = await api("/api/tables", {
          seats: [f.seat0.value, f.seat1.value, f.seat2.value, f.seat3.value],
          kings: Number(f.kings.value), target: Number(f.target.value), signals: f.signals.value,
          intercept: f.signals.value === "off" ? 0 : Number(f.intercept.value),
        });
        location.href = links.host;
      } catch (e) { showError(e.message, e.detail); }
    });
    const held = heldGames();
    const links = Object.fromEntries(held.map((l) => [l.split("/")[2], l]));
    const records = (await api("/api/records", undefined,
      { "X-Mus-Games": held.map((l) => l.split("/").slice(2).join(".")).join(",") })).records;
    const over = new Set(records.filter((r) => r.over).map((r) => r.name));
    keepGames(held.filter((l) => !over.has(`games/game-${l.split("/")[2]}.json`)));   // a finished game is public
    const recordBox = document.getElementById("records");
    if (!records.length) recordBox.append(el("p", {}, t("index.no_records")));
    else recordBox.append(table([t("index.col_record"), t("index.col_players"), t("index.col_score"), t("index.col_hands"), ""], records.map((r) => {
      const id = /^games\/game-([0-9a-f]{16})\.json$/.exec(r.name);
      const link = r.over ? el("a", { href: `/replay/${r.name}` }, t("index.replay")) :
        (id && links[id[1]] ? el("a", { href: links[id[1]] }, t("index.continue")) : t("index.in_progress"));
      return [r.name, r.players.join(", "), r.scores ? r.scores.join("-") : "", String(r.hands), link];
    })));
    const runs = (await api("/api/runs")).runs;
    const runBox = document.getElementById("runs");
    if (!runs.length) runBox.append(el("p", {}, t("index.no_runs")));
    else runBox.append(table([t("index.col_run"), t("index.col_kind"), ""], runs.map((r) => [r.name, r.kind, el("a", { href: `/runs/${r.name}` }, t("index.open"))])));
  } catch (e) { showError(e.message, e.detail); }
})();
