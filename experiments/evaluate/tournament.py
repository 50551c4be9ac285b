"""Duplicate round-robin tournaments between agents on VectorMusEnv, and JSON records of their games.

:func:`round_robin` plays every pair of agents on one deal set; :func:`run_tournament` is what
``mus tournament`` runs: a hands round and a games round on seeded deal sets, then the ladder. Its parts live in
their own modules, and this one re-exports their public names (the paths that version 0.1 had):

* :mod:`experiments.evaluate.duplicate`: the duplicate match of two agents (:func:`play_pair`,
  :class:`PairResult`, :data:`MAX_HAND_DECISIONS`), its chunks (:data:`DEAL_CHUNK`, :func:`chunk_seed`,
  :func:`merge_pair_results`) and :func:`agent_labels`;
* :mod:`experiments.evaluate.ratings`: the ladder (:func:`make_ladder`, :class:`Ladder`, :func:`elo_ladder`,
  :func:`stones_ladder`);
* :mod:`experiments.evaluate.report`: the printed tables (:func:`print_tables`), the run folder's files and plots
  (:func:`write_outputs`, :func:`per_agent_lance_stones`) and the progress bar;
* :mod:`experiments.evaluate.ray_shards`: every chunk of every pair a Ray task (:func:`ray_round_robins`);
* :mod:`experiments.evaluate.deals`: the deal sets.

Command line (:mod:`experiments.commands.tournament`): ``mus tournament --agents random,rule,equity,ordago
--hands 4000 --games 1000 --out runs/ladder``; ``--ray`` plays every chunk of every pair as a task on a local Ray
instance (``--ray ADDRESS``: on a running cluster) with the same results.

The chunk size is read from :data:`experiments.evaluate.duplicate.DEAL_CHUNK` when a round robin starts: patch it
there (or pass ``deal_chunk=``), not in this module.
"""

from __future__ import annotations

import itertools
import os
import shutil
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agents import Agent, act_one, make_agent
from experiments.evaluate.deals import DealSet, make_deals
from experiments.evaluate.duplicate import (
    DEAL_CHUNK,
    MAX_HAND_DECISIONS,
    PairResult,
    agent_labels,
    check_deal_chunk,
    chunk_seed,
    merge_pair_results,
    play_pair,
    play_pair_in_chunks,
)
from experiments.evaluate.ratings import Ladder, elo_ladder, make_ladder, stones_ladder
from experiments.evaluate.ray_shards import ray_round_robins
from experiments.evaluate.report import ProgressBar, per_agent_lance_stones, print_tables, write_outputs
from mus_env import MusConfig

__all__ = ["round_robin", "tournament_agent", "run_tournament", "TournamentRun", "play_record_game",
           "write_tournament_records", "OUTPUT_NAMES",
           # re-exported from the modules the tournament is made of (the paths of version 0.1)
           "PairResult", "play_pair", "MAX_HAND_DECISIONS", "DEAL_CHUNK", "chunk_seed", "merge_pair_results",
           "agent_labels", "Ladder", "elo_ladder", "stones_ladder", "make_ladder", "ray_round_robins",
           "write_outputs", "print_tables", "per_agent_lance_stones"]


def tournament_agent(spec: str) -> Agent:
    """``make_agent(spec)`` as a tournament plays it: a policy agent left at torch's thread count (``threads=None``)
    acts on one torch thread. A pair's agents and the engine take turns in one process, so a second thread only
    waits: on a busy machine a two-thread forward pass of the shipped policy measured 4-6x slower than one thread
    (``docs/performance.md``). Spread a tournament over cores with ``--ray`` instead."""
    agent = make_agent(spec)
    if getattr(agent, "threads", 0) is None:        # agents.TorchPolicyAgent(threads=None)
        agent.threads = 1
    return agent


def round_robin(agent_specs: Sequence[str], deals: DealSet, *, mode: str = "hands",
                config: MusConfig | None = None, max_tables: int = 2048, seed: int = 0,
                progress: bool = True, use_ray: bool = False, deal_chunk: int | None = None,
                agents: Mapping[str, Agent] | None = None) -> list[PairResult]:
    """Every pair of agents plays the whole deal set (duplicate). A spec given twice plays itself: its
    copies are labelled ``rule``, ``rule#2``... (see :func:`agent_labels`).

    The agents are built from the specs with :func:`tournament_agent`, or given as ``agents`` (by label: what
    :func:`run_tournament` does, to build them once for both of its rounds; an agent holds no game state, so one
    object plays every pair of a round already).

    A pair plays the deal set in chunks of ``deal_chunk`` deals (default :data:`DEAL_CHUNK`): chunk ``k`` is
    :func:`play_pair` on deals ``k*C .. (k+1)*C - 1`` with seed ``chunk_seed(seed, k)``, and the chunks' results
    are merged in order (:func:`merge_pair_results`). Up to ``deal_chunk`` deals this is one ``play_pair`` call
    with ``seed``.

    With ``use_ray`` every chunk of every pair is a Ray task (see :func:`ray_round_robins`; Ray must be
    initialised); the results are the same as without.
    """
    chunk = check_deal_chunk(deal_chunk)
    if use_ray:
        return ray_round_robins(agent_specs, [(deals, mode)], config=config, max_tables=max_tables, seed=seed,
                                progress=progress, deal_chunk=chunk)[0]
    if mode not in ("hands", "games"):
        raise ValueError(f"mode must be 'hands' or 'games', got {mode!r}")
    labels = agent_labels(agent_specs)
    if agents is None:
        agents = {label: tournament_agent(spec) for label, spec in zip(labels, agent_specs, strict=True)}
    elif list(agents) != labels:
        raise ValueError(f"agents must be given by the specs' labels {labels}, got {list(agents)}")
    pairs = list(itertools.combinations(labels, 2))
    results: list[PairResult] = []
    with ProgressBar(len(pairs) * len(deals), f"{mode}", enabled=progress) as bar:
        for a, b in pairs:
            bar.describe(f"{a} vs {b} ({mode})")
            results.append(play_pair_in_chunks(agents[a], agents[b], deals, mode=mode, config=config,
                                               max_tables=max_tables, seed=seed, names=(a, b), progress=bar.advance,
                                               deal_chunk=chunk))
    return results


@dataclass
class TournamentRun:
    """What :func:`run_tournament` played and rated.

    Attributes:
        labels: the agents' labels (a spec given twice is ``rule``, ``rule#2``: :func:`agent_labels`).
        hand_results: one :class:`PairResult` per pair on the hand deals (empty without hands).
        game_results: one per pair on the game deals (empty without games).
        ladder: the ratings (:func:`make_ladder`).
        meta: ``agents``, ``hands``, ``games``, ``seed``, ``config`` (dict), ``seconds``, ``hands_played``,
            ``hands_per_second``, ``rating_from``: the ``meta`` of ``results.json``.
    """

    labels: list[str]
    hand_results: list[PairResult]
    game_results: list[PairResult]
    ladder: Ladder
    meta: dict[str, Any]

#: What a tournament writes in its folder (:func:`write_outputs`, and ``records/``): a run replaces all of them.
OUTPUT_NAMES = ("pairs.csv", "ladder.csv", "results.json", "ladder.png", "lances.png", "records")


def run_tournament(agent_specs: Sequence[str], *, hands: int, games: int, seed: int = 0,
                   config: MusConfig | None = None, random_scores: bool = False, max_tables: int = 2048,
                   progress: bool = True, use_ray: bool = False) -> TournamentRun:
    """A duplicate round robin on ``hands`` single-hand deals and ``games`` whole-game deals, and its ladder.

    The hand deals are ``make_deals(hands, seed, target, random_scores)``, the game deals ``make_deals(games,
    seed + 1, target)`` (from 0-0), so a seed names both deal sets; the agents' randomness is seeded by ``seed``
    too. With ``use_ray`` every chunk of every pair of both rounds is a Ray task, all submitted at once
    (:func:`ray_round_robins`; Ray must be initialised), with the same results.

    Args:
        agent_specs: at least two ``agents.make_agent`` specs; a spec given twice plays itself.
        hands: deals played as single hands (0: none).
        games: deals played as whole games (0: none; the ladder then rates the hands' stones per hand).
        seed: names the deal sets and seeds the agents.
        config: the ruleset (default ``MusConfig()``).
        random_scores: the hand deals start from random scores, not 0-0.
        max_tables: tables stepped at once (two per deal in flight).
        progress: show progress bars.
        use_ray: play on the Ray instance this process is connected to.

    Raises:
        ValueError: fewer than two specs, or nothing to play.
    """
    if len(agent_specs) < 2:
        raise ValueError(f"a tournament needs at least two agents (a spec given twice plays itself), "
                         f"got {list(agent_specs)}")
    if hands <= 0 and games <= 0:
        raise ValueError("nothing to play: give hands and/or games >= 1")
    cfg = MusConfig() if config is None else config
    specs = list(agent_specs)
    hand_results: list[PairResult] = []
    game_results: list[PairResult] = []
    t0 = time.perf_counter()
    hand_deals = make_deals(hands, seed, cfg.target, random_scores) if hands > 0 else None
    game_deals = make_deals(games, seed + 1, cfg.target) if games > 0 else None
    if use_ray:
        rounds = [(d, m) for d, m in ((hand_deals, "hands"), (game_deals, "games")) if d is not None]
        played = dict(zip((m for _, m in rounds), ray_round_robins(
            specs, rounds, config=cfg, max_tables=max_tables, seed=seed, progress=progress), strict=True))
        hand_results, game_results = played.get("hands", []), played.get("games", [])
    else:
        agents = {label: tournament_agent(spec) for label, spec in zip(agent_labels(specs), specs, strict=True)}
        if hand_deals is not None:
            hand_results = round_robin(specs, hand_deals, mode="hands", config=cfg, max_tables=max_tables,
                                       seed=seed, progress=progress, agents=agents)
        if game_deals is not None:
            game_results = round_robin(specs, game_deals, mode="games", config=cfg, max_tables=max_tables,
                                       seed=seed, progress=progress, agents=agents)
    labels = agent_labels(specs)
    ladder = make_ladder(labels, hand_results, game_results, seed=seed)
    elapsed = time.perf_counter() - t0
    hands_played = sum(2 * len(r.hand_diff) for r in hand_results) + sum(int(r.game_hands.sum()) for r in game_results)
    meta = {"agents": specs, "hands": hands, "games": games, "seed": seed,
            "config": cfg.to_dict(), "seconds": elapsed, "hands_played": hands_played,
            "hands_per_second": hands_played / elapsed if elapsed else None,
            "rating_from": ladder.source}
    return TournamentRun(labels, hand_results, game_results, ladder, meta)


def play_record_game(agents: dict[int, Agent], names: dict[int, str], deck: npt.ArrayLike, mano: int,
                     seed: int, config: MusConfig, rng: np.random.Generator,
                     meta: dict[str, Any] | None = None, table: int = 0) -> dict[str, Any]:
    """Play one whole game on MusGame from a deal, ``agents[seat]`` at each seat; return its JSON record.

    ``table`` numbers the game for the agents that play by game (:class:`mus_env.rows.TableRows`: table ``table``,
    game 0)."""
    from mus_env import MusGame
    from mus_env.records import game_record

    game = MusGame.from_deck(np.asarray(deck, dtype=np.int64), int(mano), (0, 0), config, int(seed))
    while not game.is_over:
        seat = game.current_player
        game.step(act_one(agents[seat], game.observe(seat), game.legal_action_mask(), rng, game.table_rows(table)))
    return game_record(game, names, meta)


def write_tournament_records(out: Path, specs: Sequence[str], config: MusConfig, n: int, seed: int) -> list[Path]:
    """JSON records of ``n`` duplicate games (both seatings) per pair of agents, played on MusGame.

    A spec given twice plays itself (labelled as in :func:`agent_labels`). The records are written to a
    fresh folder that then replaces ``out`` whole, so ``out`` never mixes records of two runs and a reader
    never sees half of one. Returns the files written.
    """
    from mus_env.records import save_record

    labels = agent_labels(specs)
    deals = make_deals(n, seed + 2, config.target)
    agents = {label: make_agent(spec) for label, spec in zip(labels, specs, strict=True)}
    rng = np.random.default_rng([seed, 0x5EC])
    out.parent.mkdir(parents=True, exist_ok=True)
    fresh = out.parent / f".{out.name}.new.{uuid.uuid4().hex[:12]}"
    fresh.mkdir()
    written: list[str] = []
    try:
        for k, (a, b) in enumerate(itertools.combinations(labels, 2)):
            stem = f"{_safe(a)}-vs-{_safe(b)}"
            if any(w.startswith(stem + "-deal") for w in written):
                stem = f"pair{k}-{stem}"                # two specs with the same file name stem
            for d in range(n):
                for side, (t0, t1) in enumerate(((a, b), (b, a))):
                    seats = {0: t0, 2: t0, 1: t1, 3: t1}
                    rec = play_record_game({s: agents[x] for s, x in seats.items()}, seats, deals.decks[d],
                                           int(deals.mano[d]), int(deals.seeds[d]), config, rng,
                                           {"tournament_seed": seed, "deal": d, "side": side},
                                           table=(k * n + d) * 2 + side)
                    name = f"{stem}-deal{d}-side{side}.json"
                    save_record(rec, fresh / name)
                    written.append(name)
        old = None
        if out.exists():
            old = out.parent / f".{out.name}.old.{uuid.uuid4().hex[:12]}"
            os.replace(out, old)
        os.replace(fresh, out)
        if old is not None:
            shutil.rmtree(old) if old.is_dir() else old.unlink()
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    return [out / w for w in written]


def _safe(label: str) -> str:
    """A file-name stem for an agent label (a policy file's name without its folder and extension)."""
    name = Path(label).name
    for ext in (".pt", ".zip"):
        name = name.replace(ext, "")
    return "".join(ch if ch.isalnum() else "_" for ch in name)
