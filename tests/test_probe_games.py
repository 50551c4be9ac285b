"""docs/research/tools/probe_games.py (a research script, imported from its file): the game win rate of probes
fitted to their stones, by lance, from a folder of probe results or from the research data file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scripts import research_tool

pg = research_tool("probe_games")



def _write(folder: Path, name: str, by_lance: dict[str, float], win: float, decides: str = "all") -> None:
    gain = {"stones": sum(by_lance.values()), "win": win, "by_lance": by_lance}
    (folder / name).write_text(json.dumps({"learner_decides": decides, "gain": gain,
                                           "frozen": {"parameters_sha256": name}}))


def test_the_fit_finds_which_lance_s_stones_win_games(tmp_path: Path) -> None:
    """Twelve made-up probes whose game win rate is 0.5 + 0.1 per stone of juego + 0.02 per stone of grande: the lance
    fit gives those figures and nothing to the others; a copy of a probe counts once, a one-lance probe not at all
    (each assertion fails if the reading or the fit is broken)."""
    rng = np.random.default_rng(0)
    for k in range(12):
        parts = {t: float(rng.uniform(-0.2, 0.6)) for t in pg.LANCE_TERMS}
        _write(tmp_path, f"p{k}.json", parts, 0.5 + 0.1 * parts["juego"] + 0.02 * parts["grande"])
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / "p0.json").write_text((tmp_path / "p0.json").read_text())
    _write(tmp_path, "pares_only.json", {"pares": 3.0}, 0.9, decides="pares")
    points = pg.probe_points(tmp_path)
    assert len(points) == 12
    fit = pg.fit_game_wins(points)
    assert fit["lances"]["juego"] == pytest.approx(0.1) and fit["lances"]["grande"] == pytest.approx(0.02)
    assert all(fit["lances"][t] == pytest.approx(0.0, abs=1e-9) for t in ("chica", "pares", "ordago_credit"))
    assert fit["lances"]["intercept"] == pytest.approx(0.5) and fit["lances"]["residual_sd"] < 1e-9
    assert fit["intervals"]["juego"] == pytest.approx((0.1, 0.1))           # an exact relation: no spread
    assert "| juego | +0.100 | [+0.100, +0.100] |" in pg.fit_markdown(fit)
    # noisy game wins: the interval widens and holds the true coefficient
    for k, p in enumerate(points):
        p["win"] += 0.01 * (-1) ** k
    noisy = pg.fit_game_wins(points)
    low, high = noisy["intervals"]["juego"]
    assert low < 0.1 < high and high - low > 0.01


def test_too_few_probes_is_an_error_that_says_how_many(tmp_path: Path, capsys) -> None:
    _write(tmp_path, "one.json", {"juego": 0.3}, 0.52)
    with pytest.raises(ValueError, match="1 probe result"):
        pg.fit_game_wins(pg.probe_points(tmp_path))
    with pytest.raises(SystemExit) as e:
        pg.main([str(tmp_path)])
    assert e.value.code == 2 and "needs at least 7" in capsys.readouterr().err


def test_the_data_file_s_probes_are_read_once_each_and_only_whole_game_ones(tmp_path: Path, capsys) -> None:
    """The research data file's form (version 1): a candidate's probe kept again in another record (the same weights,
    stones and win) counts once, a one-lance probe or one without stones by lance not at all; the command reads it."""
    rng = np.random.default_rng(1)
    probes = []
    for k in range(9):
        parts = {t: float(rng.uniform(-0.2, 0.6)) for t in pg.LANCE_TERMS}
        probes.append({"file": f"p{k}.json", "weights": "kept", "learner_decides": "all", "by_lance": parts,
                       "stones": sum(parts.values()), "win": 0.5 + 0.05 * sum(parts.values())})
    lance = dict(probes[0], learner_decides="pares", file="lance.json")
    bare = dict(probes[1], by_lance=None, file="bare.json", win=0.9)
    copied = dict(probes[2], weights="other", frozen_sha256="a" * 64)          # the first record's weights, kept again
    data = {"version": 1, "candidates": [
        {"name": "one", "parameters_sha256": "a" * 64, "probes": [*probes[:3], lance, bare]},
        {"name": "two", "parameters_sha256": "b" * 64, "probes": [*probes[3:], copied]}]}
    points = pg.data_points(data)
    assert len(points) == 9 and {p["file"] for p in points} == {f"{'one' if k < 3 else 'two'}/p{k}.json"
                                                                  for k in range(9)}
    fit = pg.fit_game_wins(points)
    assert fit["stones"]["per_stone"] == pytest.approx(0.05) and fit["stones"]["intercept"] == pytest.approx(0.5)
    path = tmp_path / "candidates.json"
    path.write_text(json.dumps(data))
    pg.main([str(path)])
    assert capsys.readouterr().out.startswith("9 probes. Game win rate = 0.500 +0.050")
