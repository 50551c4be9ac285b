"""How much an agent's señas say about its hand: the mutual information I(hand class; token), in bits.

``mus sign-info POLICY_OR_SPEC --signals free --games N --seed S`` plays ``N`` games on
:class:`~mus_env.VectorMusEnv` with the agent at all four seats, records every sign decision (the hand the
signer holds at that window, the kind of window and the token it makes) and reports, for each kind of window
(``mus``: the window before each mus call; ``grande``: the window once the mus is cut),

* ``mi_plugin``: the plug-in estimate ``I = H(class) + H(token) - H(class, token)`` over the empirical joint
  distribution;
* ``mi_miller_madow``: the same with each entropy Miller-Madow corrected (``+ (m - 1) / (2 n)`` nats, m the
  number of non-empty bins), i.e. ``I_plugin + ((m_class - 1) + (m_token - 1) - (m_joint - 1)) / (2 n ln 2)``.
  The plug-in estimate is biased upwards (about ``(K_class - 1)(K_token - 1) / (2 n ln 2)`` bits for
  independent variables); the correction removes most of that bias;
* ``shuffled_plugin`` / ``shuffled_miller_madow``: the same estimates after permuting the tokens across the
  samples of that window kind (mean over ``shuffles`` permutations, with ``shuffled_plugin_sd``): the noise
  floor, what an agent whose tokens say nothing about its hand would score with this many samples;
* ``h_class``, ``h_token``: plug-in entropies (``mi_plugin <= min`` of them), ``n`` samples, how many
  distinct classes and tokens occurred, and the token counts.

Hand class
    The set of sign meanings (RULES.md §8, :func:`mus_env.signals.true_signs`) true for the hand's rank
    multiset: ``signals.hand_sign_bits(kings)[multiset index]``, a bitmask over DOS_REYES .. VEINTINUEVE,
    CIEGO and SOLOMILLO (NONE always set; REAL31, which depends on the suits, and MUS, which depends on the
    window and on the player's wish, are left out). It takes 30 values in either variant, few enough for the
    estimates to converge in some thousand samples, and it is exactly what a truthful signer can reveal: a
    signer that always makes its hand's most valuable true sign emits a function of the class (and of the
    wish to discard), so its MI is close to ``H(token)``; an agent that signs at random scores about 0 after
    the bias correction, near its shuffled baseline.

Use ``--signals free`` (the default) to measure what a policy chooses to reveal: under ``truthful`` the
mask already restricts the tokens to true ones, so even a random signer's tokens carry information.

Example (:mod:`experiments.commands.sign_info`):
    mus sign-info rule --signals free --games 200 --seed 0
    mus sign-info runs/signals/policy.pt --games 500 --out runs/signals/sign_info.json
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import numpy.typing as npt

from mus_env import MusConfig, VectorMusEnv
from mus_env import signals as sig
from mus_env.observation import OBS_DIM
from mus_env.tables import get_tables

__all__ = ["HAND_CLASS", "hand_classes", "collect_signs", "mutual_information", "sign_mutual_information",
           "format_table"]

#: What the hand class of a sample is (recorded in the results).
HAND_CLASS = ("bitmask of the sign meanings true for the hand's rank multiset "
              "(signals.hand_sign_bits: tokens 0-12 and 14; REAL31 and MUS left out)")

_WINDOW = OBS_DIM + sig.SIGNAL_OFFSETS["sign_window"].start


def hand_classes(hands: npt.ArrayLike, kings: int) -> npt.NDArray[np.int64]:
    """``(n, 4)`` card ids -> ``(n,)`` hand classes (:data:`HAND_CLASS`)."""
    h = np.asarray(hands, dtype=np.int64)
    return sig.hand_sign_bits(kings)[get_tables(kings).hand_index(h)].astype(np.int64)


def collect_signs(agent: Any, config: MusConfig, games: int, seed: int, max_tables: int = 256,
                  max_steps: int = 1_000_000) -> dict[str, npt.NDArray[np.int64]]:
    """Play ``games`` games with ``agent`` at all four seats; return every sign decision of them.

    Each table plays games until ``games`` games have been started in all; decisions of games beyond that
    number are not recorded (such a table plays on with first-legal moves until every counted game is over).

    Returns:
        ``window`` (WINDOW_MUS / WINDOW_GRANDE), ``hand_class`` (:func:`hand_classes` of the signer's hand at
        that window) and ``token`` (0..15), one entry per sign decision.

    Raises:
        ValueError: ``config`` has signals off, or ``games`` < 1.
        RuntimeError: the games did not end within ``max_steps`` steps (an agent that says mus forever: give
            the config a ``max_mus_rounds`` cap).
    """
    if not sig.signals_on(config):
        raise ValueError("sign information needs a game with señas: MusConfig(signals='free' or 'truthful')")
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 1:
        raise ValueError(f"games must be an int >= 1, got {games!r}")
    B = int(min(games, max_tables))
    venv = VectorMusEnv(B, config, seed=seed, reward="game")
    obs, mask = venv.reset()
    rng = np.random.default_rng([seed, 0x516E])
    started = B
    counting = np.ones(B, dtype=bool)
    windows: list[npt.NDArray[np.int64]] = []
    classes: list[npt.NDArray[np.int64]] = []
    tokens: list[npt.NDArray[np.int64]] = []
    steps = 0
    while counting.any():
        steps += 1
        if steps > max_steps:
            raise RuntimeError(f"{games} games did not end within {max_steps} steps: does the agent say mus "
                               "forever? Give the config a max_mus_rounds cap (--max-mus-rounds)")
        rows = np.flatnonzero(counting)
        actions = mask.argmax(axis=1).astype(np.int64)          # tables past their quota: first legal action
        actions[rows] = np.asarray(agent.act_batch(obs[rows], mask[rows], rng), dtype=np.int64)
        w = obs[rows, _WINDOW:_WINDOW + 2]
        signing = w.max(axis=1) > 0.5
        if signing.any():
            r = rows[signing]
            seat = venv.current_player[r].astype(np.int64)
            tok = actions[r] - sig.SIGNAL_BASE
            if ((tok < 0) | (tok >= sig.NUM_SIGNS)).any():
                raise AssertionError("a sign decision was answered with a non-sign action")
            windows.append(w[signing].argmax(axis=1).astype(np.int64))
            classes.append(hand_classes(venv.hands[r, seat], config.kings))
            tokens.append(tok)
        obs, mask, _, done, _ = venv.step(actions)
        fin = np.flatnonzero(done & counting)
        for b in fin:                                          # a new game on this table, if any are left
            if started < games:
                started += 1
            else:
                counting[b] = False
    return {"window": _cat(windows), "hand_class": _cat(classes), "token": _cat(tokens)}


def _cat(parts: list[npt.NDArray[np.int64]]) -> npt.NDArray[np.int64]:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _entropy_bits(counts: npt.NDArray[np.int64]) -> float:
    c = counts[counts > 0].astype(np.float64)
    p = c / c.sum()
    return max(0.0, float(-(p * np.log2(p)).sum()))          # 0.0, never -0.0, for a single bin


def mutual_information(x: npt.ArrayLike, y: npt.ArrayLike) -> dict[str, float]:
    """Plug-in and Miller-Madow estimates of ``I(x; y)`` in bits from paired samples (module docstring).

    Returns:
        ``mi_plugin``, ``mi_miller_madow``, ``h_x``, ``h_y`` (plug-in entropies, bits), ``n``, ``bins_x``,
        ``bins_y``, ``bins_xy`` (non-empty bins). All zeros for no samples.
    """
    x, y = np.asarray(x, dtype=np.int64), np.asarray(y, dtype=np.int64)
    n = len(x)
    if n == 0:
        return {"mi_plugin": 0.0, "mi_miller_madow": 0.0, "h_x": 0.0, "h_y": 0.0, "n": 0, "bins_x": 0,
                "bins_y": 0, "bins_xy": 0}
    _, xi = np.unique(x, return_inverse=True)
    _, yi = np.unique(y, return_inverse=True)
    nx, ny = int(xi.max()) + 1, int(yi.max()) + 1
    joint = np.bincount(xi * ny + yi, minlength=nx * ny)
    cx, cy = np.bincount(xi, minlength=nx), np.bincount(yi, minlength=ny)
    hx, hy, hxy = _entropy_bits(cx), _entropy_bits(cy), _entropy_bits(joint)
    mx, my, mxy = int((cx > 0).sum()), int((cy > 0).sum()), int((joint > 0).sum())
    plug = max(hx + hy - hxy, 0.0)
    mm = plug + ((mx - 1) + (my - 1) - (mxy - 1)) / (2.0 * n * math.log(2.0))
    return {"mi_plugin": plug, "mi_miller_madow": mm, "h_x": hx, "h_y": hy, "n": n, "bins_x": mx, "bins_y": my,
            "bins_xy": mxy}


def _window_stats(cls: npt.NDArray[np.int64], tok: npt.NDArray[np.int64], rng: np.random.Generator,
                  shuffles: int) -> dict[str, Any]:
    est = mutual_information(cls, tok)
    perm = [mutual_information(cls, rng.permutation(tok)) for _ in range(shuffles)] if len(tok) else []
    sp = np.array([p["mi_plugin"] for p in perm]) if perm else np.zeros(1)
    smm = np.array([p["mi_miller_madow"] for p in perm]) if perm else np.zeros(1)
    counts = np.bincount(tok, minlength=sig.NUM_SIGNS) if len(tok) else np.zeros(sig.NUM_SIGNS, dtype=np.int64)
    return {"n": est["n"], "classes": est["bins_x"], "tokens": est["bins_y"], "h_class": est["h_x"],
            "h_token": est["h_y"], "mi_plugin": est["mi_plugin"], "mi_miller_madow": est["mi_miller_madow"],
            "shuffled_plugin": float(sp.mean()), "shuffled_plugin_sd": float(sp.std()),
            "shuffled_miller_madow": float(smm.mean()),
            "token_counts": {sig.Sign(t).name: int(c) for t, c in enumerate(counts) if c}}


def sign_mutual_information(agent_spec_or_agent: Any, config: MusConfig | None = None, games: int = 200,
                            seed: int = 0, shuffles: int = 20, max_tables: int = 256) -> dict[str, Any]:
    """``I(hand class; token)`` of an agent's signs, per window kind, with its shuffled baseline.

    Args:
        agent_spec_or_agent: an agent, or a spec for ``agents.make_agent`` (``rule``, ``random``, a policy file).
        config: the game (default ``MusConfig(signals="free", max_mus_rounds=6)``); signals must be on.
        games: games played (the agent at all four seats).
        seed: seeds the deals, the agent's sampling and the permutations.
        shuffles: permutations of the shuffled baseline.
        max_tables: tables stepped at once.

    Returns:
        ``agent``, ``config`` (dict), ``games``, ``seed``, ``hand_class`` (:data:`HAND_CLASS`), ``seconds``,
        and ``windows``: ``{"mus": {...}, "grande": {...}}`` with the fields of the module docstring.
    """
    if isinstance(agent_spec_or_agent, str):
        from agents import make_agent

        agent, name = make_agent(agent_spec_or_agent), agent_spec_or_agent
    else:
        agent, name = agent_spec_or_agent, str(getattr(agent_spec_or_agent, "name", type(agent_spec_or_agent).__name__))
    cfg = MusConfig(signals="free", max_mus_rounds=6) if config is None else config
    t0 = time.perf_counter()
    data = collect_signs(agent, cfg, games, seed, max_tables=max_tables)
    rng = np.random.default_rng([seed, 0x5EED])
    windows = {}
    for kind, wname in enumerate(sig.WINDOW_NAMES):
        sel = data["window"] == kind
        windows[wname] = _window_stats(data["hand_class"][sel], data["token"][sel], rng, shuffles)
    return {"agent": name, "config": cfg.to_dict(), "games": int(games), "seed": int(seed),
            "hand_class": HAND_CLASS, "shuffles": int(shuffles), "seconds": time.perf_counter() - t0,
            "windows": windows}


def format_table(result: dict[str, Any]) -> str:
    """The per-window estimates as a plain text table."""
    head = (f"{'window':<7} {'n':>7} {'classes':>7} {'tokens':>6} {'H(class)':>8} {'H(token)':>8} "
            f"{'MI plug-in':>10} {'MI M-M':>8} {'shuffled':>15} {'shuffled M-M':>12}")
    lines = [f"I(hand class; token) of {result['agent']} (signals={result['config']['signals']}, "
             f"{result['games']} games, seed {result['seed']}), bits", head, "-" * len(head)]
    for wname, s in result["windows"].items():
        lines.append(f"{wname:<7} {s['n']:>7} {s['classes']:>7} {s['tokens']:>6} {s['h_class']:>8.3f} "
                     f"{s['h_token']:>8.3f} {s['mi_plugin']:>10.4f} {s['mi_miller_madow']:>8.4f} "
                     f"{s['shuffled_plugin']:>8.4f}±{s['shuffled_plugin_sd']:<6.4f} "
                     f"{s['shuffled_miller_madow']:>12.4f}")
    lines.append("hand class: " + result["hand_class"])
    return "\n".join(lines)

