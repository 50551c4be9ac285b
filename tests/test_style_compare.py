"""experiments.evaluate.style_compare: where two bidding-style profiles differ most (hand-built counts)."""

from __future__ import annotations

from experiments.evaluate.style import BET_ACTION_NAMES, LANCES, SITUATIONS, StyleCounts
from experiments.evaluate.style_compare import difference_text, differences
from experiments.evaluate.style_profile import MIN_SAMPLES, StyleProfile

_J = {name: j for j, name in enumerate(BET_ACTION_NAMES)}


def _cell(c: StyleCounts, lance: str, side: int, situation: str, bucket: int, n: int, **k: int) -> None:
    """Put ``n`` decisions in one cell, ``k[action]`` of them taking each named action (the rest paso)."""
    li, ti = LANCES.index(lance), SITUATIONS.index(situation)
    c.bet_n[li, side, ti, bucket] += n
    for name, v in k.items():
        c.bet_k[li, side, ti, bucket, _J[name]] += v


def test_the_cell_that_differs_most_comes_first_and_overlapping_or_thin_cells_are_ignored() -> None:
    a, b = StyleCounts(), StyleCounts()
    # the big one: pares, postre answering, bucket 5: no quiero 70% against 20% over 200 decisions each
    _cell(a, "pares", 1, "answer", 5, 200, no_quiero=140, quiero=60)
    _cell(b, "pares", 1, "answer", 5, 200, no_quiero=40, quiero=150)
    # a smaller real one: grande, mano opening, bucket 12: envido_2 10% against 35%
    _cell(a, "grande", 0, "open", 12, 300, envido_2=30)
    _cell(b, "grande", 0, "open", 12, 300, envido_2=105)
    # larger than both, but too few decisions on one side (intervals apart all the same)
    _cell(a, "chica", 0, "open", 3, MIN_SAMPLES - 1, ordago=MIN_SAMPLES - 1)
    _cell(b, "chica", 0, "open", 3, 500)
    # a difference whose intervals overlap: 50% against 60% of 40
    _cell(a, "juego", 1, "open", 8, 40, envido_2=20)
    _cell(b, "juego", 1, "open", 8, 40, envido_2=24)
    rows = differences(StyleProfile(a), b, names=("agent", "probe"))
    cells = [(r["lance"], r["role"], r["bucket"], r["action"]) for r in rows]
    assert cells[0] == ("pares", "postre answer", 5, "no_quiero")
    assert cells[1] == ("pares", "postre answer", 5, "quiero")               # 30% against 75%
    assert ("grande", "mano open", 12, "envido_2") in cells
    assert not any(c[0] in ("chica", "juego") for c in cells)
    assert [abs(r["diff"]) for r in rows] == sorted((abs(r["diff"]) for r in rows), reverse=True)
    top = rows[0]
    assert top["agent"] == {"k": 140, "n": 200, "rate": 0.7, "lo": top["agent"]["lo"], "hi": top["agent"]["hi"]}
    assert top["probe"]["rate"] == 0.2 and abs(top["diff"] + 0.5) < 1e-12 and top["strength"] == "0.50-0.60"
    assert top["agent"]["lo"] > top["probe"]["hi"]
    assert len(differences(a, b, top=1)) == 1 and differences(a, a) == []
    # with the sample floor lowered the thin cell comes first (its 100% against 0% is the largest)
    assert differences(a, b, min_samples=MIN_SAMPLES - 1)[0]["lance"] == "chica"
    line = difference_text(top, ("agent", "probe"))
    assert line.startswith("pares postre answer, strength 0.50-0.60: no_quiero the agent 70% [")
    assert "of 200, the probe 20% [" in line


def test_of_two_equal_differences_the_one_with_more_decisions_comes_first() -> None:
    a, b = StyleCounts(), StyleCounts()
    _cell(a, "grande", 0, "open", 1, 40, ordago=40)
    _cell(b, "grande", 0, "open", 1, 40)
    _cell(a, "punto", 1, "open", 1, 400, ordago=400)
    _cell(b, "punto", 1, "open", 1, 400)
    assert [r["lance"] for r in differences(a, b)] == ["punto", "grande"]
