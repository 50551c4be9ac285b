"""docs/research/tools/probe_rank_agreement.py on a made-up candidates file: which probes it counts, and the
agreement it reports."""

from __future__ import annotations

import json

from scripts import research_tool

tool = research_tool("probe_rank_agreement")


def _probe(stones: float, decisions: int, **kw) -> dict:
    return {"stones": stones, "decisions": decisions, "weights": kw.get("weights", "kept"),
            "learner_decides": kw.get("learner_decides", "all"), "start": kw.get("start", "agent"),
            "learning_rate": kw.get("learning_rate", 3e-4)}


def test_it_counts_only_the_kept_weights_own_start_probes_and_ranks_them(tmp_path, capsys):
    q, L = tool.QUICK, tool.LONG
    candidates = [
        {"name": "a", "probes": [_probe(0.1, q), _probe(0.3, q), _probe(1.0, L), _probe(9.0, L, start="equity"),
                                 _probe(9.0, L, weights="other"), _probe(9.0, L, learning_rate=3e-3),
                                 _probe(9.0, L, learner_decides="pares")]},
        {"name": "b", "probes": [_probe(0.5, L)], "quick_probes": {"0": 0.4, "1": 0.6}},
        {"name": "c", "probes": [_probe(0.9, q), _probe(0.2, L), _probe(0.4, L)]},
        {"name": "no long probe", "probes": [_probe(0.9, q)]},
    ]
    path = tmp_path / "candidates.json"
    path.write_text(json.dumps({"version": 1, "candidates": candidates}))
    assert tool.main([str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = out["candidates"]
    assert set(rows) == {"a", "b", "c"}
    assert rows["a"]["quick"] == [0.1, 0.3] and rows["a"]["long"] == [1.0]
    assert rows["b"]["quick"] == [0.4, 0.6] and abs(rows["b"]["quick_mean"] - 0.5) < 1e-12
    assert abs(rows["c"]["long_mean"] - 0.3) < 1e-12
    # quick order c (0.9) > b (0.5) > a (0.2); long order a (1.0) > b (0.5) > c (0.3): reversed
    agreement = out["agreement"]
    assert agreement["n"] == 3 and agreement["kendall_tau"] == -1.0 and agreement["spearman_rho"] == -1.0


def test_usage(capsys):
    assert tool.main(["-h"]) == 0
    assert "Kendall" in capsys.readouterr().out
    assert tool.main(["a", "b"]) == 2
