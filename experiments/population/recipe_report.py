"""A recipe's own report: ``OUT/recipe.md`` and ``OUT/recipe.png`` (every round's margins, probes and head to head)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from experiments.population.recipe_state import trained_rounds

__all__ = ["kept_text", "write_report"]


def kept_text(keep: dict[str, Any]) -> str:
    """Which candidate a recipe kept, in words: ``round 1``, ``the distilled policy`` or ``the refined policy``."""
    if keep.get("refined"):
        return "the refined policy"
    return "the distilled policy" if keep.get("distilled") else f"round {keep['round']}"


def _wall_text(step_seconds: dict[str, float]) -> str:
    """``; N minutes of wall time, evaluations included (trainings A, probes B)`` from ``step_seconds``."""
    if not step_seconds:
        return ""
    def part(kind: str) -> float:
        return sum(v for k, v in step_seconds.items() if k.endswith(kind)) / 60
    return (f"; {sum(step_seconds.values()) / 60:.1f} minutes of wall time, evaluations included (trainings "
            f"{part('/train'):.1f}, probes {part('/probes'):.1f})")


def write_report(out: Path, data: dict[str, Any], keep: dict[str, Any]) -> Path:
    """``OUT/recipe.md`` and ``OUT/recipe.png``: every round's budget, margins, probe gain and head to head, and
    the policy kept."""
    s = data["steps"]
    rounds = trained_rounds(s)
    gains = keep["gains"]
    opponents = [row["opponent"] for row in s[f"round{rounds[0]}/report"]["rows"]] + ["previous"]   # rivals too
    long_gains = keep.get("long_gains") or [None] * len(gains)
    long_column = any(g is not None for g in long_gains)
    resumed = "".join(f", resumed with `{c}`" for c in data.get("resumed_with", []))
    lines = ["# The recipe's rounds", "", f"`{data.get('command', 'mus league')}`{resumed}, on "
             f"{data.get('machine', '?')}; {data.get('seconds', 0.0) / 60:.1f} minutes in all (trainings and probes)"
             + _wall_text(data.get("step_seconds", {})) + ".",
             "",
             "| round | decisions | minutes | " + " | ".join(f"vs {o}" for o in opponents[:-1])
             + " | vs previous round | largest probe gain | its game win rate |"
             + (" long probe's gain |" if long_column else ""),
             "|---" * (len(opponents) + 5 + long_column) + "|"]
    rows = [(str(r), f"round{r}") for r in rounds]
    if "distilled/train" in s:                  # the network fitted to the last rounds' mixture, after them
        members = s["distilled/train"]["members"]
        runs = int(data["settings"].get("distill_replicas", 1))
        rows.append((f"distilled ({len(members)} policies" + (f" of {runs} runs)" if runs > 1 else ")"), "distilled"))
    if "refined/train" in s:                    # the distilled network trained against its own probes
        rows.append(("refined (the distilled, against its probes)", "refined"))
    for i, (label, step) in enumerate(rows):
        t, rep = s[f"{step}/train"], s[f"{step}/report"]
        by = {row["opponent"]: row for row in rep["rows"]}
        cells = [f"{by[o]['stones']:+.3f} [{by[o]['stones_lo']:+.3f}, {by[o]['stones_hi']:+.3f}]" if o in by else ""
                 for o in opponents]
        mark = " **kept**" if i == keep["round"] else ""
        lines.append(f"| {label}{mark} | {t['decisions']:,} | {t['minutes']:.1f} | " + " | ".join(cells)
                     + f" | {gains[i]:+.3f} | {keep['wins'][i]:.3f} |"
                     + ((f" {long_gains[i]:+.3f} |" if long_gains[i] is not None else " |") if long_column else ""))
    lines += ["", f"Kept: {kept_text(keep)} (the smallest largest gain of probes that never trained it), "
              f"`{keep['policy']}`, copied to `policy.pt`; its report card: `card.md`."]
    (out / "recipe.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    fig = Figure(figsize=(9, 3.6))
    ax1, ax2 = fig.subplots(1, 2)
    for o, color in (("rule", "C0"), ("equity", "C1")):
        y = [next(row["stones"] for row in s[f"round{r}/report"]["rows"] if row["opponent"] == o) for r in rounds]
        ax1.plot(rounds, y, marker="o", color=color, label=f"vs {o}")
        for i, (_, step) in enumerate(rows[len(rounds):]):
            d = next(row["stones"] for row in s[f"{step}/report"]["rows"] if row["opponent"] == o)
            ax1.plot([len(rounds) + i], [d], marker="*" if step == "distilled" else "P", ms=12, ls="none", color=color)
    ax1.set_xlabel("round")
    ax1.set_ylabel("stones/hand (held out)")
    ax1.legend(fontsize=8)
    ax2.plot(rounds, gains[: len(rounds)], marker="s", color="C3", label="largest")
    if long_column:
        ax2.plot(rounds, [long_gains[r] for r in rounds], marker="^", color="C2", label="the long probe")
        ax2.legend(fontsize=8)
    for i, (_, step) in enumerate(rows[len(rounds):]):
        ax2.plot([len(rounds) + i], [gains[len(rounds) + i]], marker="*" if step == "distilled" else "P", ms=12,
                 ls="none", color="C4" if step == "distilled" else "C5", label=step)
        ax2.legend(fontsize=8)
    ax2.axhline(0, color="black", lw=0.6)
    ax2.axvline(keep["round"], color="grey", ls="--", lw=0.8)
    ax2.set_xlabel("round (dashed: kept)")
    ax2.set_ylabel("probe gain, stones/hand")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.set_xticks(range(len(rows)), [str(r) for r in rounds] + [step for _, step in rows[len(rounds):]])
    fig.tight_layout()
    fig.savefig(out / "recipe.png", dpi=110)
    return out / "recipe.md"
