"""``mus style AGENT [AGENT ...]``: how agents bid (:mod:`experiments.evaluate.style`): a profile JSON per agent,
plots of every agent side by side and a short table."""

from __future__ import annotations

import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from experiments.commands.options import (
    MAX_DEALS,
    ArgumentParser,
    apply_torch_threads,
    check_agent_specs,
    check_creatable_dir,
    int_in,
    split_specs,
    torch_threads_option,
    version,
)
from experiments.evaluate.style import StyleCounts
from experiments.evaluate.style_play import (
    DEFAULT_FIELD,
    SELF,
    STYLE_DEAL_SETS,
    counts_from_record,
    field_members,
    play_style,
    style_deals,
)
from experiments.evaluate.style_plot import (
    has_signs,
    plot_curves,
    plot_heatmaps,
    plot_mus,
    plot_score,
    plot_signs,
    score_rows,
    sign_rows,
    summary_rows,
)
from experiments.evaluate.style_profile import StyleProfile, save_profile
from mus_env import MusConfig
from mus_env.config import SIGNALS_CHOICES
from mus_env.vector import warm_up

__all__ = ["main"]


def _label(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_") or "agent"


def _say(line: str) -> None:
    from tqdm import tqdm

    tqdm.write(line, file=sys.stderr)                 # above the progress bar, not through it


def _cell(r: dict[str, Any]) -> str:
    if r["rate"] is None:
        return "–"
    return f"{r['rate']:.2f}" + ("*" if r["few"] else "")


def _aggr(r: dict[str, Any]) -> str:
    if r["factor"] is None:
        return "–"
    return f"{r['factor']:.2f}" + ("*" if r["few"] else "")


def _marked(r: dict[str, Any]) -> str:
    return _cell(r) + ("≠" if r.get("apart") else "")


def _print_rows(title: str, head: tuple[str, ...], rows: list[tuple[str, ...]], note: str) -> None:
    """A rich table (plain text without rich)."""
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # pragma: no cover - rich is in the tools extra
        print(title)
        print("  ".join(f"{h:>9}" for h in head))
        for row in rows:
            print("  ".join(f"{c:>9}" for c in row))
        print(note)
        return
    t = Table(title=title, caption=note)
    for i, h in enumerate(head):
        t.add_column(h, justify="left" if i < 2 else "right")
    for row in rows:
        t.add_row(*row)
    Console().print(t)


def print_score_table(profiles: list[StyleProfile]) -> None:
    """The rates by score situation (:func:`~experiments.evaluate.style_plot.score_rows`)."""
    rows = [(r["agent"], r["situation"], f"{r['decisions']:,}", *(_marked(r[k]) for k in
             ("bet", "raise", "fold", "ordago_made", "ordago_accepted"))) for r in score_rows(profiles)]
    _print_rows("By the score (all lances, both sides pooled)",
                ("agent", "score", "n", "bet", "raise", "fold", "órdago", "órdago quiero"), rows,
                "score: the deciding team's lead; near end: a team needs at most target // 8 stones (5 of 40); "
                "bet: opening envido or órdago; raise: one answering a bet; fold: no quiero to a bet; órdago: "
                f"where legal; órdago quiero: facing one; * fewer than 30 decisions; ≠ apart from {profiles[0].agent}")


def print_sign_table(profiles: list[StyleProfile]) -> None:
    """The signs each agent made (:func:`~experiments.evaluate.style_plot.sign_rows`)."""
    rows = [(r["agent"], r["window"], r["sign"], f"{r['made']['k']:,}", _marked(r["made"]), _cell(r["where_legal"]),
             f"{r['with'][0]} ({r['with'][1]:.0%})") for r in sign_rows(profiles)]
    _print_rows("Señas: the signs made, per kind of window",
                ("agent", "window", "sign", "made", "share", "where legal", "mostly with"), rows,
                "share: of the window's sign decisions; where legal: made where the sign was legal; mostly with: the "
                f"hand class held most often when making it; ≠ apart from {profiles[0].agent}")


def print_table(profiles: list[StyleProfile]) -> None:
    """A table of :func:`~experiments.evaluate.style_plot.summary_rows` (plain text without rich)."""
    head = ("agent", "lance", "n", "bet", "bluff", "fold", "call weak", "aggr.", "órdago")
    rows = [(r["agent"], r["lance"], f"{r['n']:,}", _cell(r["bet"]), _cell(r["bluff"]), _cell(r["fold"]),
             _cell(r["call_weak"]), _aggr(r["aggression"]), _cell(r["ordago"])) for r in summary_rows(profiles)]
    cuts = ", ".join(f"{p.agent} {p.counts.mus_cut.sum() / max(int(p.counts.mus_n.sum()), 1):.2f}"
                     for p in profiles)
    note = ("bet: opening envido or órdago; bluff: that with a hand below the median; fold: no quiero to a bet; "
            "call weak: quiero to a bet below the median; aggr.: (bets + raises) / calls; órdago: where legal; "
            "* fewer than 30 decisions")
    _print_rows("How they bid (both sides pooled)", head, rows, note)
    print(f"mus: cut rate (no mus where mus was legal): {cuts}")


def main(argv: list[str] | None = None) -> None:
    """Run ``mus style`` with ``argv`` (default: the process's arguments)."""
    argv = sys.argv[1:] if argv is None else argv
    set_seed, set_deals = STYLE_DEAL_SETS["v1"]
    p = ArgumentParser(prog="mus style",
                       description="How agents bid: each agent plays a fixed deal set in duplicate (single hands "
                                   "from 0-0 unless --random-scores, each deal twice with the seats swapped) "
                                   "against the field, and every decision it makes is counted by lance, role (mano "
                                   "or postre side; opening, answering, confirming, facing an órdago) and hand "
                                   "strength (its percentile for the lance), by score situation and, with "
                                   "--signals, its señas by hand class. Writes AGENT.style.json per agent (rates "
                                   "with 95% Wilson intervals, counts; docs/style.md has the schema), "
                                   "style_curves.png, style_<lance>.png, style_mus.png, style_score.png (and "
                                   "style_signs.png with señas) with the agents side by side, and prints tables.")
    p.add_argument("agents", nargs="+", metavar="AGENT",
                   help="agent specs: random, rule, equity, ordago, ppo, runs/train/policy.pt, model.zip, ...; "
                        "with --records, player names of the records")
    p.add_argument("--deals", type=int_in(1, MAX_DEALS), default=set_deals,
                   help="deals of the deal set (the default is deal set v1; another size makes a custom one)")
    p.add_argument("--seed", type=int_in(0, 2**62), default=set_seed,
                   help="seed of the deals and of the agents (the default is deal set v1's)")
    p.add_argument("--field", default=",".join(DEFAULT_FIELD),
                   help=f"comma-separated opponents; {SELF} is the profiled agent itself (an opponent equal to "
                        "the profiled agent counts as self)")
    p.add_argument("--kings", type=int, choices=(8, 4), default=8, help="8 or 4 kings")
    p.add_argument("--target", type=int_in(1, 1000), default=40, help="stones to win a game")
    p.add_argument("--signals", choices=SIGNALS_CHOICES, default="off",
                   help="the señas channel (RULES.md §8): with truthful or free, the signs each agent makes are "
                        "profiled too (by kind of window and hand class); add -nosigns to a spec for that agent "
                        "without signs")
    p.add_argument("--random-scores", action="store_true",
                   help="deals start from random scores (each team 0 .. target - 1), not 0-0, so the split by score "
                        "(ahead, level, behind, near the end) has decisions; the deal set is then named v1-scores")
    p.add_argument("--out", default="runs/style", help="output folder")
    p.add_argument("--no-plots", action="store_true", help="write the profiles and the table only")
    p.add_argument("--records", nargs="+", metavar="FILE", default=None,
                   help="profile the players of these JSON hand records (mus play and mus serve save them) instead "
                        "of playing: each AGENT is a player name, its decisions at the seats it sat at")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    torch_threads_option(p)
    args = p.parse_args(argv)
    labels = [_label(a) for a in args.agents]
    if len(set(labels)) != len(labels):
        p.error(f"argument AGENT: two agents would write the same file ({', '.join(labels)}); give each once")
    if args.records:
        check_creatable_dir(p, "--out", args.out)
        profiles = _from_records(p, args, labels, "mus style " + shlex.join(argv))
        _finish(args, profiles)
        return
    try:
        field = split_specs(args.field)
    except ValueError as e:
        p.error(f"argument --field: {e}")
    if not field:
        p.error("argument --field: give at least one opponent")
    cfg = MusConfig(kings=args.kings, target=args.target, signals=args.signals)
    check_agent_specs(p, "AGENT", args.agents, config=cfg)
    check_agent_specs(p, "--field", [s for s in field if s != SELF], config=cfg)
    check_creatable_dir(p, "--out", args.out)
    apply_torch_threads(args.torch_threads)
    warm_up(1, log=lambda line: print(f"mus style: {line}", file=sys.stderr))
    from agents import make_agent

    deals, deal_set = style_deals("v1", args.deals, args.seed, cfg.target, random_scores=args.random_scores)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    profiles = []
    from tqdm import tqdm

    command = "mus style " + shlex.join(argv)
    for spec, label in zip(args.agents, labels, strict=True):
        agent = make_agent(spec)
        members = len(field_members(field, spec))
        t0 = time.perf_counter()
        with tqdm(total=members * len(deals), desc=f"{spec}", unit="deal", disable=args.quiet, file=sys.stderr,
                  dynamic_ncols=True) as bar:
            counts, _ = play_style(agent, deals, field, spec=spec, name=spec, config=cfg, seed=args.seed,
                                   progress=bar.update, log=None if args.quiet else _say)
        prof = StyleProfile(counts, {"agent": spec, "spec": spec, "field": field, "deal_set": deal_set,
                                     "deals": len(deals), "seed": args.seed,
                                     "config": {"kings": args.kings, "target": args.target,
                                                "signals": args.signals}, "command": command,
                                     "mus_env": version(), "seconds": time.perf_counter() - t0})
        profiles.append(prof)
        path = save_profile(prof, out / f"{label}.style.json")
        print(f"wrote {path} ({counts.decisions():,} decisions, {time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    _finish(args, profiles)


def _from_records(p: ArgumentParser, args: Any, labels: list[str], command: str) -> list[StyleProfile]:
    """The profiles of the players ``args.agents`` of the records ``args.records`` (each written to its file)."""
    from mus_env.records import RecordError, load_record

    records = []
    for path in args.records:
        try:
            records.append(load_record(path))
        except (RecordError, OSError) as e:
            p.error(f"argument --records: {path}: {e}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    profiles = []
    for name, label in zip(args.agents, labels, strict=True):
        counts, used = StyleCounts(), []
        for path, record in zip(args.records, records, strict=True):
            if name not in record.get("players", {}).values():
                continue
            try:
                counts += counts_from_record(record, player=name)[0]
            except (RecordError, ValueError) as e:
                p.error(f"argument --records: {path}: {e}")
            used.append(str(path))
        if not used:
            p.error(f"argument AGENT: {name!r} sat at no seat of the records (their players: "
                    f"{', '.join(sorted({v for r in records for v in r.get('players', {}).values()})) or 'none'})")
        prof = StyleProfile(counts, {"agent": name, "spec": name, "deal_set": "records", "records": used,
                                     "command": command, "mus_env": version()})
        profiles.append(prof)
        path = save_profile(prof, out / f"{label}.style.json")
        print(f"wrote {path} ({counts.decisions():,} decisions from {len(used)} record(s))", file=sys.stderr)
    return profiles


def _finish(args: Any, profiles: list[StyleProfile]) -> None:
    """The plots (unless ``--no-plots``) and the table."""
    out = Path(args.out)
    if not args.no_plots:
        paths = [plot_curves(profiles, out / "style_curves.png"), *plot_heatmaps(profiles, out),
                 plot_mus(profiles, out / "style_mus.png"), plot_score(profiles, out / "style_score.png")]
        if has_signs(profiles):
            paths.append(plot_signs(profiles, out / "style_signs.png"))
        print("wrote " + ", ".join(str(x) for x in paths), file=sys.stderr)
    print_table(profiles)
    print_score_table(profiles)
    if has_signs(profiles):
        print_sign_table(profiles)


if __name__ == "__main__":
    main()
