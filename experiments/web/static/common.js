// Shared helpers of the mus-env pages: the languages, the JSON API, DOM building (text only, never HTML from
// data), cards.
"use strict";

// Languages: every text a page shows comes from one message catalogue per language, static/i18n/<lang>.json
// (flat keys, ICU-like {name} placeholders). The language is the one saved by the switch (localStorage), else
// the first of the browser's languages (navigator.languages, the Accept-Language list) that has a catalogue,
// else English. The Mus terms (envido, órdago, grande, chica, pares, juego, mus, paso, quiero, mano...) are the
// game's own in every language.
const LANGUAGES = { es: "español", en: "English", eu: "euskara" };
const LANGUAGE_KEY = "mus-lang";
let language = "en";
let catalogue = {};

function chooseLanguage() {
  let saved = null;
  try { saved = localStorage.getItem(LANGUAGE_KEY); } catch (e) { /* storage off: the browser's language */ }
  if (saved && Object.hasOwn(LANGUAGES, saved)) return saved;
  for (const tag of navigator.languages || [navigator.language || ""]) {
    const primary = String(tag).toLowerCase().split("-")[0];
    if (Object.hasOwn(LANGUAGES, primary)) return primary;
  }
  return "en";
}

// t("play.your_turn"), t("play.discard_n", {n: 2}): the catalogue's text with its {name} placeholders filled.
function t(key, params) {
  const text = Object.hasOwn(catalogue, key) ? catalogue[key] : key;
  return text.replace(/\{(\w+)\}/g, (whole, name) =>
    (params && params[name] !== undefined && params[name] !== null ? String(params[name]) : whole));
}

// A text the server sends from a fixed set (a phase, an outcome, a role): its translation under prefix, or the
// text itself when the catalogue has none.
function tKnown(prefix, text, params) {
  return Object.hasOwn(catalogue, prefix + text) ? t(prefix + text, params) : String(text);
}

// A phase as the server names it ("grande: response", "seña (mus window)", "discard") in the page's language.
function phaseText(phase) {
  const sign = /^seña \((\w+) window\)$/.exec(phase);
  if (sign) return t("phase.sign_window", { window: sign[1] });
  const bet = /^(\w+): (.+)$/.exec(phase);
  if (bet) return `${bet[1]}: ${tKnown("phase.", bet[2])}`;
  return tKnown("phase.", phase);
}

// The page's own texts: data-i18n (the text), data-i18n-title, data-i18n-aria-label; data-i18n-params (JSON).
function translatePage(root) {
  for (const node of root.querySelectorAll("[data-i18n], [data-i18n-title], [data-i18n-aria-label]")) {
    const params = node.dataset.i18nParams ? JSON.parse(node.dataset.i18nParams) : undefined;
    if (node.dataset.i18n) node.textContent = t(node.dataset.i18n, params);
    if (node.dataset.i18nTitle) node.title = t(node.dataset.i18nTitle, params);
    if (node.dataset.i18nAriaLabel) node.setAttribute("aria-label", t(node.dataset.i18nAriaLabel, params));
  }
}

// The switch in every page's header: the choice is saved and the page drawn again in that language.
function languageSwitch() {
  const select = el("select", { id: "lang", "aria-label": t("lang.label"), onchange: (event) => {
    try { localStorage.setItem(LANGUAGE_KEY, event.target.value); } catch (e) { /* this page only */ }
    location.reload();
  } }, Object.entries(LANGUAGES).map(([code, name]) => el("option", { value: code, lang: code }, name)));
  select.value = language;
  return el("label", { class: "lang" }, el("span", {}, t("lang.label")), " ", select);
}

async function loadLanguage() {
  language = chooseLanguage();
  const response = await fetch(`/static/i18n/${language}.json`);
  if (!response.ok) throw new Error(`the ${language} catalogue: ${response.status}`);
  catalogue = await response.json();
  document.documentElement.lang = language;
  translatePage(document);
  const header = document.querySelector("header");
  if (header) header.append(languageSwitch());
}

// The page scripts start with `await i18nReady`.
const i18nReady = loadLanguage().catch((e) => showError(String(e.message || e)));

const SUIT_NAMES = { o: "oros", c: "copas", e: "espadas", b: "bastos" };
const NUMBER_TEXT = { 1: "A", 10: "S", 11: "C", 12: "R" };
const LANCES = ["grande", "chica", "pares", "juego"];

// el("div", {class: "x", onclick: f}, "text", child, ...): children are nodes or text (inserted as text).
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else if (key === "style") node.style.cssText = value;   // CSSOM: allowed by the page's CSP
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  for (const child of children) node.append(child);
  return node;
}

// The suit drawn as a small picture: a gold coin, a red cup, a blue sword, a green club.
function suitIcon(suit, size) {
  const s = svg("svg", { viewBox: "0 0 40 40", width: size, height: size, class: "suit-icon", "aria-hidden": "true" });
  if (suit === "o") {
    s.append(svg("circle", { cx: 20, cy: 20, r: 16, fill: "#e9b824", stroke: "#9a6b00", "stroke-width": 2 }),
             svg("circle", { cx: 20, cy: 20, r: 8, fill: "none", stroke: "#9a6b00", "stroke-width": 2 }));
  } else if (suit === "c") {
    s.append(svg("path", { d: "M8 6 H32 Q32 22 20 24 Q8 22 8 6 Z", fill: "#c62828", stroke: "#7f1010", "stroke-width": 2 }),
             svg("rect", { x: 18, y: 24, width: 4, height: 8, fill: "#7f1010" }),
             svg("rect", { x: 11, y: 32, width: 18, height: 4, rx: 1, fill: "#7f1010" }));
  } else if (suit === "e") {
    s.append(svg("path", { d: "M20 2 L24 26 L16 26 Z", fill: "#4a78c2", stroke: "#1d3f78", "stroke-width": 1.5 }),
             svg("rect", { x: 9, y: 26, width: 22, height: 4, rx: 1, fill: "#1d3f78" }),
             svg("rect", { x: 18, y: 30, width: 4, height: 8, fill: "#1d3f78" }));
  } else {
    s.append(svg("path", { d: "M15 36 L19 4 Q25 3 25 9 L23 36 Z", fill: "#3f8f3a", stroke: "#1f5a1c", "stroke-width": 2 }),
             svg("circle", { cx: 21, cy: 14, r: 2, fill: "#1f5a1c" }),
             svg("circle", { cx: 20, cy: 24, r: 2, fill: "#1f5a1c" }));
  }
  return s;
}

// A card object from the server ({card, text, number, suit}) drawn face up; card === null draws a back.
function cardEl(card, options) {
  const opts = options || {};
  if (!card) return el("div", { class: "card back" + (opts.small ? " small" : ""), title: t("common.hidden_card") });
  const label = NUMBER_TEXT[card.number] || String(card.number);
  const node = el("div", { class: `card suit-${card.suit}` + (opts.small ? " small" : ""),
                           title: t("common.card_title", { number: card.number, suit: SUIT_NAMES[card.suit] }), "data-card": card.text },
                  el("span", { class: "corner" }, label), suitIcon(card.suit, opts.small ? 20 : 30),
                  el("span", { class: "corner bottom" }, label));
  if (opts.onclick) { node.classList.add("selectable"); node.addEventListener("click", opts.onclick); }
  return node;
}

// A refusal of the server: the message in the page's language (error.<code>), the server's own words as detail.
class ApiRefusal extends Error {
  constructor(code, detail) {
    super(code && Object.hasOwn(catalogue, `error.${code}`) ? t(`error.${code}`) : detail);
    this.code = code;
    this.detail = detail;
  }
}

async function api(path, body, headers) {
  const init = body === undefined ? { headers: headers || {} } :
    { method: "POST", headers: { ...(headers || {}), "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const response = await fetch(path, init);
  let data = null;
  try { data = await response.json(); } catch (e) { data = { error: `${response.status} ${response.statusText}` }; }
  if (!response.ok) throw new ApiRefusal(data && data.code, data && data.error ? data.error : `${response.status}`);
  return data;
}

function showError(message, detail) {
  const box = document.getElementById("error");
  if (!box) return;
  box.textContent = message;
  if (detail && detail !== message) box.append(" ", el("small", { class: "detail" }, `(${detail})`));
  box.hidden = !message;
}

// An agent spec as a short name: a file's name without its folders (runs/train/policy.pt -> policy.pt).
// A seat's player as the page names it: a spec's file name, or a person (in the page's language).
function shortName(spec) { return tKnown("player.", String(spec).split("/").pop()); }

function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

function scoreText(stones) {
  return t("common.score", { stones, amarracos: Math.floor(stones / 5), piedras: stones % 5 });
}

function table(headers, rows) {
  return el("table", { class: "data" },
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c) => el("td", {}, c))))));
}

// A small line chart: series [{name, points: [[x, y]...]}]; SVG, no library.
function lineChart(series, opts) {
  const o = Object.assign({ width: 640, height: 220, xlabel: "", ylabel: "" }, opts || {});
  const pts = series.flatMap((s) => s.points);
  if (!pts.length) return el("p", {}, t("common.no_data"));
  const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
  let [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys, 0), Math.max(...ys, 0)];
  if (x1 === x0) x1 = x0 + 1;
  if (y1 === y0) y1 = y0 + 1;
  const pad = 36, W = o.width, H = o.height;
  const X = (x) => pad + (x - x0) / (x1 - x0) * (W - 2 * pad);
  const Y = (y) => H - pad + (y0 - y) / (y1 - y0) * (H - 2 * pad);
  const colors = ["#c62828", "#1d3f78", "#3f8f3a", "#9a6b00", "#6a1b9a"];
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "chart" });
  chart.append(svg("line", { x1: pad, y1: Y(0), x2: W - pad, y2: Y(0), stroke: "#999", "stroke-dasharray": "4 3" }));
  const axis = (x, y, text, anchor) => { const t = svg("text", { x, y, "font-size": 11, "text-anchor": anchor }); t.textContent = text; return t; };
  chart.append(axis(pad - 4, Y(y1) + 4, y1.toFixed(2), "end"), axis(pad - 4, Y(y0) + 4, y0.toFixed(2), "end"),
               axis(X(x0), H - 12, String(x0), "middle"), axis(X(x1), H - 12, String(x1), "middle"),
               axis(W / 2, H - 2, o.xlabel, "middle"));
  series.forEach((s, i) => {
    const d = s.points.map((p, j) => `${j ? "L" : "M"}${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join(" ");
    chart.append(svg("path", { d, fill: "none", stroke: colors[i % colors.length], "stroke-width": 2 }));
    chart.append(axis(W - pad, pad - 20 + 14 * i, s.name, "end"));
    chart.lastChild.setAttribute("fill", colors[i % colors.length]);
  });
  return chart;
}

// The one-person games this browser holds the links of (/play/<id>/<token>), newest first, kept in localStorage:
// the start page shows them (the server lists a game in progress only to whoever sends its link).
const GAMES_KEY = "mus-games";
const MAX_GAMES = 100;

function heldGames() {
  let links = [];
  try { links = JSON.parse(localStorage.getItem(GAMES_KEY) || "[]"); } catch (e) { links = []; }
  return Array.isArray(links) ? links.filter((l) => typeof l === "string" && /^\/play\/[0-9a-f]{16}\/[A-Za-z0-9_-]{32}$/.test(l)) : [];
}

function keepGames(links) {
  try { localStorage.setItem(GAMES_KEY, JSON.stringify(links.slice(0, MAX_GAMES))); } catch (e) { /* storage off */ }
}

function holdGame(link) { keepGames([link, ...heldGames().filter((l) => l !== link)]); }
