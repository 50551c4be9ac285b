"""The standard report card of an agent (``mus evaluate AGENT``): how every agent is reported, the same way.

For any ``make_agent`` spec, on a **versioned deal set** (:data:`DEAL_SETS`: the deals are a function of the
version's seed and sizes, so two cards of one version played the same cards):

* duplicate results against every baseline and ``ppo`` (:data:`OPPONENTS`): stones per hand (single hands) and
  the game win rate (whole games), each with a 95% confidence interval and a two-sided p-value, and the bidding
  rates of both sides (envido, órdago per betting decision; no quiero per answer), so that a degenerate bidder
  shows; a policy agent is also played greedy against ``rule`` and ``equity``;
* its **place in the ladder**: its Elo fitted on its own games against opponents whose ratings are fixed at the
  reference ladder (:data:`REFERENCE_LADDER`, the measured ladder of ``docs/ladder_results.json``), with a
  bootstrap standard error over deals;
* with ``style=True`` (``mus evaluate`` sets it), **how it bids** in those matches: per lance its opening bets, bluffs,
  folds, weak calls, aggression factor and órdagos, and its mus cut rate, from the style profile's code
  (:mod:`experiments.evaluate.style`; ``mus style`` gives the whole profile);
* optionally an **exploitability probe** (:func:`experiments.population.exploit.probe`): the held-out gain of a best
  response trained against it, a lower bound on its exploitability (needs the ``train`` extra).

:func:`report_card` returns the card as JSON values; :func:`card_markdown` writes it as a page (the model card
of the shipped agent quotes it). ``mus evaluate`` (:mod:`experiments.commands.evaluate`) writes both.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from agents import make_agent
from experiments.evaluate.deals import make_deals
from experiments.evaluate.duplicate import PairResult, play_pair
from experiments.evaluate.style_play import StyleRecorder
from experiments.evaluate.style_plot import summary_rows
from experiments.evaluate.style_profile import StyleProfile, rate
from mus_env import MusConfig
from mus_env.records import write_text_atomic

__all__ = ["DEAL_SETS", "OPPONENTS", "GREEDY_OPPONENTS", "REFERENCE_LADDER", "reference_ladder", "p_value",
           "card_row", "duplicate_results", "duplicate_row", "place_in_ladder", "report_card", "card_markdown",
           "save_card"]

#: Versioned evaluation deal sets: ``(seed, hands, games)``; hand deals are ``make_deals(hands, seed)``, game deals
#: ``make_deals(games, seed + 1)`` (the sizes and seeds the shipped agent's card has always used).
DEAL_SETS: dict[str, tuple[int, int, int]] = {"v1": (7, 20_000, 2_000), "v1-quick": (7, 2_000, 200)}
#: The opponents of a report card.
OPPONENTS = ("rule", "equity", "ordago", "random", "ppo")
#: The opponents a policy agent also meets playing greedy (its argmax).
GREEDY_OPPONENTS = ("rule", "equity")
#: The reference ladder's file (package data).
REFERENCE_LADDER = Path(__file__).resolve().parent / "reference_ladder.json"


def reference_ladder() -> dict[str, Any]:
    """The reference ladder: ``{"version", "command", "unit", "anchor", "ratings": {agent: Elo}}``."""
    return json.loads(REFERENCE_LADDER.read_text(encoding="utf-8"))


def p_value(mean: float, lo: float, hi: float, null: float) -> float:
    """Two-sided normal p-value of ``mean`` against ``null`` from its 95% confidence interval ``[lo, hi]``."""
    se = (hi - lo) / (2 * 1.96)
    if not se > 0:
        return float("nan")
    return math.erfc(abs(mean - null) / se / math.sqrt(2))


def card_row(h: PairResult, g: PairResult) -> dict[str, Any]:
    """One row of a card from a pair's duplicate hands ``h`` and games ``g``: stones/hand and game win rate with
    95% CIs and p-values, hands per game, the bidding rates of both sides, deals dropped as endless raise wars,
    ``by_lance``: where the stones came from (:meth:`~experiments.evaluate.duplicate.PairResult.stones_by_lance`),
    and how each side bet in each lance (``lance_rates``, ``opp_lance_rates``: ``PairResult.rates_by_lance``)."""
    s = h.summary()
    m, lo, hi = h.mean_diff()
    w, wlo, whi = g.game_win_rate()
    return {"opponent": h.b, "hands": len(h.hand_diff), "games": len(g.game_wins),
            "stones": m, "stones_lo": lo, "stones_hi": hi, "stones_p": p_value(m, lo, hi, 0.0),
            "win": w, "win_lo": wlo, "win_hi": whi, "win_p": p_value(w, wlo, whi, 0.5),
            "hands_per_game": float(g.game_hands.mean()) if len(g.game_hands) else float("nan"),
            "envido_rate": s["envido_rate_a"], "ordago_rate": s["ordago_rate_a"],
            "no_quiero_rate": s["no_quiero_rate_a"], "opp_envido_rate": s["envido_rate_b"],
            "opp_ordago_rate": s["ordago_rate_b"], "opp_no_quiero_rate": s["no_quiero_rate_b"],
            "abandoned": h.abandoned + g.abandoned, "by_lance": h.stones_by_lance(),
            "lance_rates": h.rates_by_lance(h.a), "opp_lance_rates": h.rates_by_lance(h.b)}


def duplicate_results(me: Any, opp: Any, names: tuple[str, str], hand_deals: Any, game_deals: Any,
                      config: MusConfig, seed: int) -> tuple[PairResult, PairResult]:
    """``me`` against ``opp`` in duplicate: single hands on ``hand_deals``, whole games on ``game_deals``."""
    h = play_pair(me, opp, hand_deals, mode="hands", config=config, seed=seed, names=names)
    g = play_pair(me, opp, game_deals, mode="games", config=config, seed=seed, names=names)
    return h, g


def duplicate_row(me: Any, opp: Any, names: tuple[str, str], hand_deals: Any, game_deals: Any, config: MusConfig,
                  seed: int) -> dict[str, Any]:
    """:func:`card_row` of :func:`duplicate_results`: one row of a card (the model card's rows too)."""
    return card_row(*duplicate_results(me, opp, names, hand_deals, game_deals, config, seed))


def place_in_ladder(games: dict[str, PairResult], ratings: dict[str, float], bootstrap: int = 200,
                    seed: int = 0) -> dict[str, float]:
    """The Elo of the agent that played ``games`` (opponent -> its duplicate games as side a) against opponents
    whose ratings are fixed at ``ratings``: the maximum-likelihood rating (Bradley-Terry on each deal's match
    score, a half-win prior against each opponent), and a bootstrap standard error over deals.

    Raises:
        ValueError: no opponent with a reference rating was played.
    """
    pairs = [(ratings[o], g.match_scores()) for o, g in games.items() if o in ratings and len(g.match_scores())]
    if not pairs:
        raise ValueError(f"none of the opponents played has a reference rating ({', '.join(sorted(ratings))})")

    def fit(samples: list[tuple[float, np.ndarray]]) -> float:
        def slope(r: float) -> float:                   # d log-likelihood / dr (up to a constant factor)
            total = 0.0
            for r_o, s in samples:
                p = 1.0 / (1.0 + 10.0 ** ((r_o - r) / 400.0))
                total += (s.sum() + 0.5) - (len(s) + 1.0) * p
            return total
        lo, hi = -2000.0, 5000.0
        for _ in range(80):                             # the slope falls as r grows: bisection
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if slope(mid) > 0 else (lo, mid)
        return (lo + hi) / 2

    rating = fit(pairs)
    rng = np.random.default_rng(seed)
    boots = [fit([(r_o, s[rng.integers(0, len(s), len(s))]) for r_o, s in pairs]) for _ in range(bootstrap)]
    return {"elo": rating, "se": float(np.std(boots, ddof=1)) if bootstrap > 1 else 0.0}


def _version() -> str:
    try:
        return metadata.version("mus-env")
    except metadata.PackageNotFoundError:  # pragma: no cover - a checkout that is not installed
        return "unknown"


def report_card(spec: str, deal_set: str = "v1", opponents: Sequence[str] = OPPONENTS, kings: int = 8,
                target: int = 40, hands: int | None = None, games: int | None = None, seed: int | None = None,
                name: str | None = None, style: bool = False,
                command: str = "", log: Callable[[str], None] = print) -> dict[str, Any]:
    """Play the report card of agent ``spec`` (see the module docstring).

    Args:
        spec: any ``make_agent`` spec.
        deal_set: a version of :data:`DEAL_SETS`.
        opponents: the opponents (an opponent equal to ``spec`` is left out).
        kings: 8 or 4 kings.
        target: stones to win a game.
        hands: deals played as single hands (None: the deal set's); another size makes a ``custom`` card.
        games: deals played as whole games (None: the deal set's).
        seed: the deals' seed (None: the deal set's; another makes a ``custom`` card).
        name: the agent's name in the rows (default: ``spec``).
        style: also count how the agent bid in its sampled matches (:mod:`experiments.evaluate.style`) into
            ``card["style"]``: per lance its opening bets, bluffs, folds, weak calls, aggression factor and órdagos,
            and its mus cut rate (``mus style`` gives the whole profile).
        command: the command line to record.
        log: where progress lines go.

    Raises:
        ValueError: an unknown deal set, a bad spec, or sizes below 1.
    """
    if deal_set not in DEAL_SETS:
        raise ValueError(f"deal_set must be one of {', '.join(DEAL_SETS)}, got {deal_set!r}")
    set_seed, n_hands, n_games = DEAL_SETS[deal_set]
    hands, games = hands or n_hands, games or n_games
    seed = set_seed if seed is None else int(seed)
    if hands < 1 or games < 1:
        raise ValueError(f"hands and games must be >= 1, got {hands} and {games}")
    version = deal_set if (hands, games, seed) == (n_hands, n_games, set_seed) else f"{deal_set}-custom"
    name = name or spec
    cfg = MusConfig(kings=kings, target=target)
    me = make_agent(spec)
    recorder = StyleRecorder(me) if style else None          # plays as ``me``, counting its decisions
    others = [o for o in opponents if o not in (spec, name)]
    hand_deals, game_deals = make_deals(hands, seed, cfg.target), make_deals(games, seed + 1, cfg.target)
    t_start = time.perf_counter()
    rows, game_results = [], {}
    for opp in others:
        t0 = time.perf_counter()
        h, g = duplicate_results(recorder or me, make_agent(opp), (name, opp), hand_deals, game_deals, cfg, seed)
        row = card_row(h, g)
        rows.append({"play": "sampled", **row})
        game_results[opp] = g
        log(f"{name} vs {opp}: {row['stones']:+.3f} stones/hand [{row['stones_lo']:+.3f}, {row['stones_hi']:+.3f}], "
            f"game win rate {row['win']:.3f} [{row['win_lo']:.3f}, {row['win_hi']:.3f}] "
            f"({time.perf_counter() - t0:.0f} s)")
    try:
        greedy_me = make_agent(spec, greedy=True)
    except TypeError:                                   # not a policy agent: no greedy play to report
        greedy_me = None
    if greedy_me is not None:
        for opp in (o for o in GREEDY_OPPONENTS if o in others):
            rows.append({"play": "greedy", **duplicate_row(greedy_me, make_agent(opp), (name, opp), hand_deals,
                                                            game_deals, cfg, seed)})
    ref = reference_ladder()
    ratings = {k: v for k, v in ref["ratings"].items() if k not in (spec, name)}
    # the place in the ladder needs games against a rated opponent, in the ladder's own game (8 kings, 40 stones)
    rated = any(o in ratings and len(g.match_scores()) for o, g in game_results.items())
    ladder = place_in_ladder(game_results, ratings) if rated and (kings, target) == (8, 40) else None
    if ladder is not None:
        order = sorted([*ratings.items(), (name, ladder["elo"])], key=lambda kv: -kv[1])
        ladder["rank"] = [n for n, _ in order].index(name) + 1
        ladder["of"] = len(order)
        ladder["reference"] = {"version": ref["version"], "command": ref["command"], "ratings": ratings}
    card: dict[str, Any] = {
        "agent": name, "spec": spec, "deal_set": version, "seed": seed, "hands": hands, "games": games,
        "config": {"kings": kings, "target": target}, "rows": rows, "ladder": ladder,
        "probe": None, "command": command, "mus_env": _version(),
        "style": None if recorder is None else _style(recorder, name),
        "seconds": time.perf_counter() - t_start,
    }
    return card


def _style(recorder: StyleRecorder, name: str) -> dict[str, Any]:
    """The card's "how it bids" section from the decisions ``recorder`` counted."""
    c = recorder.counts
    return {"decisions": c.decisions(), "mus_cut": rate(int(c.mus_cut.sum()), int(c.mus_n.sum())),
            "lances": [{k: v for k, v in r.items() if k != "agent"}
                       for r in summary_rows([StyleProfile(c, {"agent": name})])]}


def _fmt_p(p: float) -> str:
    if not p == p:
        return "–"
    return "< 1e-6" if p < 1e-6 else f"{p:.1e}" if p < 1e-3 else f"{p:.3f}"


def card_markdown(card: dict[str, Any]) -> str:
    """The card as a markdown page."""
    lines = [f"# Report card: `{card['agent']}`", "",
             f"Duplicate evaluation on the deal set `{card['deal_set']}` (seed {card['seed']}: {card['hands']:,} deals "
             f"played as single hands, {card['games']:,} as whole games; each deal twice, seats swapped), "
             f"{card['config']['kings']} kings, target {card['config']['target']}, mus-env {card['mus_env']}. "
             "Stones/hand is the agent minus the opponent (an accepted órdago counts the stones the winners lacked); "
             "the game win rate is over paired games. 95% confidence intervals; p: two-sided, against 0 stones and "
             "a 0.5 win rate.", "",
             "| play | opponent | stones/hand | 95% CI | p | game win rate | 95% CI | p |",
             "|---|---|---|---|---|---|---|---|"]
    for r in card["rows"]:
        lines.append(f"| {r['play']} | {r['opponent']} | {r['stones']:+.3f} | [{r['stones_lo']:+.3f}, "
                     f"{r['stones_hi']:+.3f}] | {_fmt_p(r['stones_p'])} | {r['win']:.3f} | [{r['win_lo']:.3f}, "
                     f"{r['win_hi']:.3f}] | {_fmt_p(r['win_p'])} |")
    lines += ["", "Bidding rates (envido and órdago per betting decision, no quiero per answer to a bet), the agent / "
              "the opponent:", "", "| play | opponent | envido | órdago | no quiero |", "|---|---|---|---|---|"]
    for r in card["rows"]:
        lines.append(f"| {r['play']} | {r['opponent']} | {r['envido_rate']:.3f} / {r['opp_envido_rate']:.3f} | "
                     f"{r['ordago_rate']:.3f} / {r['opp_ordago_rate']:.3f} | "
                     f"{r['no_quiero_rate']:.3f} / {r['opp_no_quiero_rate']:.3f} |")
    dropped = sum(r["abandoned"] for r in card["rows"])
    if dropped:
        lines += ["", f"{dropped} deal(s) dropped as endless raise wars (both seatings)."]
    ladder = card.get("ladder")
    if ladder:
        lines += ["", f"Place in the ladder: **{ladder['rank']} of {ladder['of']}**, Elo {ladder['elo']:.0f} "
                  f"± {1.96 * ladder['se']:.0f}, fitted on its games against the reference ladder "
                  f"`{ladder['reference']['version']}` (`{ladder['reference']['command']}`, random = 1000)."]
    elif card.get("config", {}).get("kings", 8) == 8 and card.get("config", {}).get("target", 40) == 40:
        names = ", ".join(sorted(reference_ladder()["ratings"]))
        lines += ["", f"No place in the ladder: none of its opponents is in the reference ladder (add one of {names} "
                  "to --opponents)."]
    style = card.get("style")
    if style:
        def r(x: dict[str, Any]) -> str:
            return "–" if x["rate"] is None else f"{x['rate']:.2f}" + ("*" if x["few"] else "")

        lines += ["", f"How it bids, from its {style['decisions']:,} decisions in the sampled matches above (both "
                  "sides pooled; `mus style` gives the whole profile, by strength): bet = opening envido or órdago, "
                  "bluff = that below the median hand, fold = no quiero to a bet, call weak = quiero to a bet below "
                  "the median, aggr. = (bets + raises) / calls, órdago where legal; * fewer than 30 decisions.", "",
                  "| lance | bet | bluff | fold | call weak | aggr. | órdago |", "|---|---|---|---|---|---|---|"]
        for x in style["lances"]:
            a = x["aggression"]
            aggr = "–" if a["factor"] is None else f"{a['factor']:.2f}" + ("*" if a["few"] else "")
            lines.append(f"| {x['lance']} | {r(x['bet'])} | {r(x['bluff'])} | {r(x['fold'])} | "
                         f"{r(x['call_weak'])} | {aggr} | {r(x['ordago'])} |")
        lines += ["", f"Mus: it cuts (no mus) {r(style['mus_cut'])} of the times it may."]
    probe = card.get("probe")
    if probe:
        g = probe["gain"]
        lines += ["", f"Exploitability probe ({probe['decisions']:,} decisions, a lower bound): a best response gains "
                  f"{g['stones']:+.3f} [{g['stones_lo']:+.3f}, {g['stones_hi']:+.3f}] stones/hand, game win rate "
                  f"{g['win']:.3f}."]
    if card.get("command"):
        lines += ["", f"Command: `{card['command']}`."]
    return "\n".join(lines) + "\n"


def save_card(card: dict[str, Any], folder: str | Path) -> list[Path]:
    """Write ``card.json`` and ``card.md`` into ``folder`` (made if needed), each atomically."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)

    def strict(v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: strict(x) for k, x in v.items()}
        if isinstance(v, list):
            return [strict(x) for x in v]
        return v

    return [write_text_atomic(folder / "card.json", json.dumps(strict(card), indent=1) + "\n"),
            write_text_atomic(folder / "card.md", card_markdown(card))]
