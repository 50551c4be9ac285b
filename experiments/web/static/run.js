// A run folder: a tournament's ladder and pairs, a training run's evaluations and curve, a probe's result,
// and the folder's plots.
"use strict";

const runName = decodeURIComponent(location.pathname.replace(/^\/runs\//, ""));
const fmt = (x, digits) => (x === null || x === undefined || x === "" ? "–" : Number(x).toFixed(digits));
const signed = (x) => (x === null || x === undefined ? "–" : (x >= 0 ? "+" : "") + Number(x).toFixed(3));

function tournament(r) {
  const unit = r.rating ? r.rating.unit : "Elo";
  const ladder = Object.entries(r.ladder).map(([name, v], i) =>
    [String(i + 1), name, fmt(v.rating !== undefined ? v.rating : v.elo, unit === "Elo" ? 0 : 2), `± ${fmt(1.96 * v.se, 1)}`]);
  const pairs = r.pairs.map((p) => [p.a, p.b, p.mode, String(p.mode === "games" ? p.games_deals : p.deals),
    p.mode === "hands" ? `${signed(p.mean_diff)} [${signed(p.ci_low)}, ${signed(p.ci_high)}]` : "",
    p.game_win_rate !== undefined && p.game_win_rate !== null ? `${fmt(p.game_win_rate, 3)} [${fmt(p.win_ci_low, 3)}, ${fmt(p.win_ci_high, 3)}]` : ""]);
  return [el("h2", {}, t("run.ladder")), el("p", {}, r.rating ? r.rating.method : ""),
    table([t("run.rank"), t("run.agent"), unit, t("run.ci")], ladder),
    el("h2", {}, t("run.pairs")), table(["A", "B", t("run.mode"), t("run.deals"), t("run.stones_diff"), t("run.win_rate_a")], pairs)];
}

function training(run) {
  const out = [];
  if (run.eval && run.eval.length) {
    const cols = Object.keys(run.eval[0]);
    const opponents = cols.filter((c) => /_stones$/.test(c)).map((c) => c.replace(/_stones$/, ""));
    const x = cols.indexOf("decisions") >= 0 ? "decisions" : cols[0];
    out.push(el("h2", {}, t("run.evaluations")),
      lineChart(opponents.map((o) => ({ name: t("run.vs", { opponent: o }), points: run.eval.map((row) => [Number(row[x]), Number(row[`${o}_stones`])]) })),
        { xlabel: t("run.x_stones", { x }) }),
      table([t("run.update"), x, ...opponents.flatMap((o) => [t("run.vs_stones", { opponent: o }), t("run.vs_win", { opponent: o })])],
        run.eval.map((row) => [row.update || "", row[x], ...opponents.flatMap((o) => [
          `${signed(Number(row[`${o}_stones`]))} [${signed(Number(row[`${o}_stones_lo`]))}, ${signed(Number(row[`${o}_stones_hi`]))}]`,
          fmt(row[`${o}_win`], 3)])])));
  }
  if (run.metrics && run.metrics.length) {
    const cols = Object.keys(run.metrics[0]);
    const x = cols.indexOf("decisions") >= 0 ? "decisions" : cols[0];
    const show = ["vs_league_stones_per_hand", "decisions_per_s", "entropy", "policy_loss", "value_loss"].filter((c) => cols.indexOf(c) >= 0);
    out.push(el("h2", {}, t("run.curve")), el("p", {}, t("run.updates", { n: run.metrics.length })),
      ...show.map((c) => el("div", { class: "chart-box" }, el("h3", {}, c),
        lineChart([{ name: c, points: run.metrics.map((row) => [Number(row[x]), Number(row[c])]) }], { xlabel: x, height: 160 }))));
  }
  return out;
}

function exploit(e) {
  const g = e.gain || {};
  return [el("h2", {}, t("run.best_response", { agent: e.agent })),
    table([t("run.measure"), t("run.value")], [[t("run.gain"), `${signed(g.stones)} [${signed(g.stones_lo)}, ${signed(g.stones_hi)}]`],
      [t("run.win_rate"), `${fmt(g.win, 3)} [${fmt(g.win_lo, 3)}, ${fmt(g.win_hi, 3)}]`], [t("run.command"), e.command || ""]])];
}

(async () => {
  await i18nReady;
  let run;
  try { run = await api(`/api/runs/${runName}`); } catch (e) { showError(e.message, e.detail); return; }
  document.getElementById("title").textContent = runName;
  const main = document.getElementById("run");
  main.append(el("h1", {}, runName));
  if (run.results) main.append(...tournament(run.results));
  if (run.exploit) main.append(...exploit(run.exploit));
  main.append(...training(run));
  if (run.plots.length) {
    main.append(el("h2", {}, t("run.plots")));
    for (const p of run.plots) main.append(el("figure", {}, el("img", { src: `/files/runs/${runName}/${p}`, alt: p }), el("figcaption", {}, p)));
  }
  document.body.dataset.loaded = "1";
})();
