"""EquityAgent: bids by estimated expected value from precomputed win-probability tables.

The agent reads only its observation (through :mod:`agents.features`) and is vectorised. Its knowledge
of the cards is the table file ``agents/data/equity_tables_k{8,4}.npz`` written by
``mus make-tables equity`` (:mod:`experiments.tools.make_equity_tables` for how the tables are made). Per own hand
(rank multiset), own relative seat S0..S3 and lance context it holds ``win[tau]`` = P(own team wins the
lance and the opponents' best hand is at or above percentile ``tau``) and ``acc[tau]`` = P(opponents'
best >= ``tau``); the contexts of pares and juego are the public declarations (partner sí / no, which
opponents hold), punto assumes nobody holds juego.

Policy
------
**Opponent model.** Opponents are assumed to play thresholds on their best hand's percentile ``U``
(per lance: grande, chica, pares, juego, punto): they open a bet when ``U >= tau_bet``, raise when
``U >= tau_raise``, throw an órdago when ``U >= tau_ordago``, and accept a stake ``S`` when
``U >= min(tau_accept + tau_accept_per_stone * (S - 2), tau_accept_max)`` (an órdago when
``U >= tau_ordago_accept``; anything when refusing would hand us the game). Two robustness shares
temper the model: a share ``opp_bluff`` of their bets and raises (``opp_ordago_bluff`` of their órdagos)
is made with any hand, and a share ``opp_call`` of our bets is accepted whatever they hold. So after
their bet the own chance is ``(1 - opp_bluff) * win[tau] / acc[tau] + opp_bluff * win[0]`` at their
threshold, and they accept a bet of ours with ``opp_call + (1 - opp_call) * acc[tau'] / acc[tau]``.

**Values.** Every betting action is scored by the expected probability of winning the game,
``WP(own + x, other + y)`` summed over its outcomes (refused: the bettor's team gets the fallback, plus
its pares / juego / punto bonuses at showdown; accepted: the lance winner gets the stake plus bonuses;
en paso: 1 stone in grande and chica, bonuses otherwise; an accepted órdago wins or loses the game).
``WP`` is a dynamic-programming table over the scores for the game's target, built from the
distribution of stones per hand in the table file, so the agent is score-aware without special cases:
near the target it avoids giving stones away, far behind it takes órdago risks. At 0-0 the values are
proportional to expected stones. Bonuses: own hand's exact bonus, a declaring partner's and each
declaring opponent's mean holder bonus.

* Opening round: the best of PASO, ENVIDO k for each bet size, and ÓRDAGO; with probability
  ``bluff_rate`` a PASO becomes the smallest ENVIDO.
* Facing a stake: the best of NO QUIERO, QUIERO, each raise (below ``max_stake``), and ÓRDAGO (partner
  confirmation: no NO QUIERO).
* Órdagos: the WP model assumes equal opponents, so órdago decisions carry margins (the agent's edge
  over its opponents): an ÓRDAGO of its own must beat the best other action by ``ordago_margin``, and
  accepting one must beat refusing by ``ordago_call_margin`` (in game-win probability).

**Mus and discards.** ``value = sum(slot_weights * ev[slot])``, the expected en-paso stones of the hand
(table ``ev``). Discard: the legal mask with the highest expected value after drawing (table ``disc``,
exact over the unseen cards). Mus: cut (NO_MUS) when ``value >= best_discard_value - drift + mus_margin``,
where ``drift`` is the average improvement a discard round brings to a hand (the opponents improve too).

**Señas** (with signals on, :mod:`agents.signs`): it signs as :class:`~agents.rule.RuleBasedAgent` does
(the most useful true sign; MUS when it would not cut) and cuts the mus on a strong partner sign. Betting,
it reads the partner's grande-window sign ``t`` from the sign tables ``agents/data/sign_tables_k{8,4}.npz``
(``mus make-tables signs``): with ``P_t`` = P(win the lance | own hand, seat, partner signs
``t``) and ``P_u`` the same without the sign, each of its lance-win chances (``p_range``, ``p_w``, and
``win_x`` relative to ``acc_x``) is multiplied by ``min(P_t / P_u, 1)`` and clipped to [0, 1] (``win_x``
to [0, ``acc_x``]): by default only bad news is acted on (``sign_boost=False``). Measured against the
silent twin (``mus signals --agents equity --intercept 0 --hands 20000``, stones per hand): the full
ratio +0.01 [-0.01, +0.03], bad news only +0.10 [+0.08, +0.11], good news only -0.07, the ratio clipped
to [0.67, 1.5] +0.06, scaling the chance of losing by ``(1 - P_t) / (1 - P_u)`` on good news -1.0 (the
table's P(win) is over all deals; once the opponents have bet, a partner's good sign is worth less than
the table says). ``sign_boost=True`` uses the full ratio. Each intercepted opponent's sign moves the
chances down by its fixed :data:`agents.signs.SIGN_BONUS`.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from mus_env.actions import DISCARD_BASE, ENVIDO_BASE, Action
from mus_env.actions import NUM_ACTIONS as _NUM_ACTIONS
from mus_env.phases import Phase
from mus_env.signals import Sign
from mus_env.tables import CHICA, JUEGO, PARES, PUNTO, get_tables

from .base import Agent
from .compiled import I_KINGS8, I_PHASE, I_TARGET, equity_rows, equity_values, run_kernel
from .features import DECL_SI, Features, hand_weights, per_lance, read, read_packed
from .rule import first_legal
from .signs import SIGN_BONUS, SignView, choose_signs, partner_cut, read_signs

__all__ = ["EquityAgent", "EquityTables", "SignTables", "load_tables", "load_sign_tables", "win_probability_table",
           "CONTEXTS", "DATA_DIR"]

#: Where the table files live (``equity_tables_k8.npz``, ``equity_tables_k4.npz``).
DATA_DIR = Path(__file__).resolve().parent / "data"
#: Names of the lance contexts of the tables (index = context id).
CONTEXTS = ("grande", "chica") + tuple(
    f"{lance}: partner {pt}, opponents {op}" for lance in ("pares", "juego") for pt in ("no", "sí")
    for op in ("right", "left", "both")) + ("punto",)
_FORMAT_VERSION = 1
_MUS, _NO_MUS = int(Action.MUS), int(Action.NO_MUS)
_PASO, _QUIERO, _NO_QUIERO, _ORDAGO = int(Action.PASO), int(Action.QUIERO), int(Action.NO_QUIERO), int(Action.ORDAGO)


@dataclass(frozen=True, eq=False)
class EquityTables:
    """The arrays of one table file (see :mod:`experiments.tools.make_equity_tables`)."""

    kings: int
    tau: npt.NDArray[np.float64]            # (T,)
    acc: npt.NDArray[np.float32]            # (15 ctx, 4 seats, M, T)
    win: npt.NDArray[np.float32]            # (15 ctx, 4 seats, M, T)
    ev: npt.NDArray[np.float32]             # (4 slots, 4 seats, M)
    disc: npt.NDArray[np.float32]           # (4 slots, 4 seats, M, 16 masks)
    holder_bonus: npt.NDArray[np.float64]   # (2,) mean pares / juego bonus of a holder
    hand_pmf: npt.NDArray[np.float64]       # (X+1, X+1) stones of (team, other team) per hand
    count: npt.NDArray[np.int32]            # (15 ctx, M) Monte Carlo samples behind each context


def _read_table_file(path: Path, version: int, kings: int, dtypes: dict[str, type],
                     missing: Callable[[Path], FileNotFoundError]) -> dict[str, np.ndarray]:
    """The arrays ``dtypes`` of a table file of format ``version`` for ``kings``; ``missing(path)`` (an error
    that says how to regenerate the file) when it is absent, unreadable, or of another version or variant."""
    if not path.exists():
        raise missing(path)
    try:
        with np.load(path) as z:
            if int(z["format_version"]) != version or int(z["kings"]) != kings:
                raise missing(path)
            return {name: z[name].astype(dtype) for name, dtype in dtypes.items()}
    except (KeyError, ValueError, OSError, zipfile.BadZipFile) as e:
        raise missing(path) from e


def _missing(path: Path) -> FileNotFoundError:
    return FileNotFoundError(
        f"equity tables {path} are missing or outdated; regenerate them with "
        f"`mus make-tables equity` (add --quick for a fast, noisy version)")


@lru_cache(maxsize=4)
def load_tables(kings: int, directory: str | None = None) -> EquityTables:
    """Load (once) the table file of a variant from ``directory`` (default :data:`DATA_DIR`).

    Raises:
        FileNotFoundError: the file is missing or of another format version; the message says how to
            regenerate it.
    """
    path = (Path(directory) if directory else DATA_DIR) / f"equity_tables_k{kings}.npz"
    arrays = _read_table_file(path, _FORMAT_VERSION, kings, _TABLE_DTYPES, _missing)
    m = get_tables(kings).size
    if arrays["acc"].shape[2] != m or arrays["disc"].shape[2] != m:
        raise _missing(path)
    for a in arrays.values():
        a.setflags(write=False)
    return EquityTables(kings=kings, **arrays)


@dataclass(frozen=True, eq=False)
class SignTables:
    """The arrays of one sign-table file (see :mod:`experiments.tools.make_sign_tables`)."""

    kings: int
    win: npt.NDArray[np.float32]            # (7 sign contexts, 4 seats, M, NUM_SIGNS) P(win | h, p, partner token)
    base: npt.NDArray[np.float32]           # (7 sign contexts, 4 seats, M) P(win | h, p)
    count: npt.NDArray[np.int32]            # (M, NUM_SIGNS) deals per partner token


_SIGN_FORMAT_VERSION = 1


def _missing_signs(path: Path) -> FileNotFoundError:
    return FileNotFoundError(
        f"sign tables {path} are missing or outdated; regenerate them with "
        f"`mus make-tables signs` (about a minute)")


@lru_cache(maxsize=4)
def load_sign_tables(kings: int, directory: str | None = None) -> SignTables:
    """Load (once) the sign-table file of a variant from ``directory`` (default :data:`DATA_DIR`).

    Raises:
        FileNotFoundError: the file is missing or of another format version; the message says how to
            regenerate it.
    """
    path = (Path(directory) if directory else DATA_DIR) / f"sign_tables_k{kings}.npz"
    arrays = _read_table_file(path, _SIGN_FORMAT_VERSION, kings,
                              {"win": np.float32, "base": np.float32, "count": np.int32}, _missing_signs)
    if arrays["win"].shape[2] != get_tables(kings).size or arrays["win"].shape[:2] != arrays["base"].shape[:2]:
        raise _missing_signs(path)
    for a in arrays.values():
        a.setflags(write=False)
    return SignTables(kings=kings, **arrays)


def _sign_adjust(p: npt.NDArray[np.float64], p_u: npt.NDArray[np.float64],
                 p_t: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Win chances ``p`` (n,) or (n, k) times the sign's ratio ``p_t / p_u`` (n,), clipped to [0, 1]."""
    ratio = p_t / np.maximum(p_u, 1e-6)
    return np.clip(p * (ratio[:, None] if p.ndim == 2 else ratio), 0.0, 1.0)


_TABLE_DTYPES = {"tau": np.float64, "acc": np.float32, "win": np.float32, "ev": np.float32, "disc": np.float32,
                 "holder_bonus": np.float64, "hand_pmf": np.float64, "count": np.int32}


@lru_cache(maxsize=16)
def _wp_cached(pmf_bytes: bytes, shape: tuple[int, int], target: int) -> npt.NDArray[np.float64]:
    pmf = np.frombuffer(pmf_bytes, dtype=np.float64).reshape(shape)
    X = shape[0] - 1
    size = target + X + 1
    e = np.zeros((size, size))
    e[target:, :target] = 1.0
    e[target:, target:] = 0.5                      # both reach the target in one count: call it even
    p = pmf.copy()
    p[0, 0] = 0.0
    p /= p.sum()
    for a in range(target - 1, -1, -1):
        for b in range(target - 1, -1, -1):
            e[a, b] = float((p * e[a:a + X + 1, b:b + X + 1]).sum())
    out = e[:target + 1, :target + 1].copy()
    out.setflags(write=False)
    return out


def win_probability_table(pmf: npt.NDArray[np.float64], target: int) -> npt.NDArray[np.float64]:
    """``(target + 1, target + 1)`` chance that the team with ``a`` stones beats one with ``b`` (index
    ``target`` = reached), when each hand adds stones drawn from ``pmf[x, y]`` (dynamic programming)."""
    pmf = np.ascontiguousarray(pmf, dtype=np.float64)
    return _wp_cached(pmf.tobytes(), pmf.shape, int(target))


class EquityAgent(Agent):
    """Expected-value bidding from win-probability tables (the module docstring states the policy).

    Args:
        tau_bet: the opponent model: percentile threshold at which the opponents bet (a number, or five:
            grande, chica, pares, juego, punto).
        tau_raise: the same, at which they raise.
        tau_accept: the same, at which they accept a bet.
        tau_ordago: the same, at which they say órdago.
        tau_ordago_accept: the same, at which they accept an órdago.
        tau_accept_per_stone: increase of the opponents' accepting threshold per stone of stake above 2.
        tau_accept_max: the opponents' accepting threshold never exceeds this; they accept anything when
            refusing would give the game away.
        opp_bluff: share of the opponents' bets and raises assumed to be made with any hand.
        opp_ordago_bluff: the same for their órdagos.
        opp_call: share of our bets, raises and órdagos the opponents accept whatever they hold.
        bet_sizes: stones offered by the ENVIDO ids 19..23 (the environment's ``bet_sizes``).
        max_stake: no raise at or above this live stake.
        ordago_margin: game-win probability an órdago of its own must gain over the best other action.
        ordago_call_margin: game-win probability accepting an órdago must gain over refusing it.
        slot_weights: weights of the four lance slots in the hand value (mus and discards).
        mus_margin: extra value (stones) a hand needs to cut the mus.
        bluff_rate: chance that an opening PASO becomes the smallest ENVIDO (uses the rng).
        score_aware: value outcomes by game-win probability at the current scores (default); False values
            stones linearly at the 0-0 exchange rate (as in a hands-only match).
        sign_boost: also raise its lance-win chances on a partner's sign that is good news (the full
            ratio of the sign tables); by default only bad news lowers them (module docstring, Señas).
        tables_dir: directory of the table files (default :data:`DATA_DIR`).
        compiled: decide and value in compiled passes (:func:`agents.compiled.equity_rows`, the default); False
            plays :meth:`act_batch_reference`, the numpy code they are held equal to (the same actions, slower).
    """

    name = "equity"

    def __init__(self, *, tau_bet: float | Sequence[float] = (0.8, 0.8, 0.6, 0.6, 0.75),
                 tau_raise: float | Sequence[float] = (0.9, 0.9, 0.85, 0.85, 0.9),
                 tau_accept: float | Sequence[float] = (0.6, 0.6, 0.3, 0.3, 0.4),
                 tau_ordago: float | Sequence[float] = (0.95, 0.95, 0.9, 0.9, 0.95),
                 tau_ordago_accept: float | Sequence[float] = (0.6, 0.6, 0.4, 0.4, 0.6),
                 tau_accept_per_stone: float = 0.02, tau_accept_max: float = 0.9, opp_bluff: float = 0.35,
                 opp_ordago_bluff: float = 0.35, opp_call: float = 0.2, bet_sizes: Sequence[int] = (2, 3, 4, 5, 10),
                 max_stake: int = 12, ordago_margin: float = 0.25, ordago_call_margin: float = 0.25,
                 slot_weights: Sequence[float] = (1.0, 1.0, 1.0, 1.0), mus_margin: float = 0.0,
                 bluff_rate: float = 0.0, score_aware: bool = True, sign_boost: bool = False,
                 tables_dir: str | Path | None = None, compiled: bool = True) -> None:
        self.compiled = bool(compiled)
        self.tau_bet, self.tau_raise = per_lance("tau_bet", tau_bet), per_lance("tau_raise", tau_raise)
        self.tau_accept = per_lance("tau_accept", tau_accept)
        self.tau_ordago = per_lance("tau_ordago", tau_ordago)
        self.tau_ordago_accept = per_lance("tau_ordago_accept", tau_ordago_accept)
        self.tau_accept_per_stone = float(tau_accept_per_stone)
        self.tau_accept_max = float(tau_accept_max)
        if not 0.0 <= opp_bluff <= 1.0:
            raise ValueError(f"opp_bluff must be in [0, 1], got {opp_bluff!r}")
        self.opp_bluff = float(opp_bluff)
        if not 0.0 <= opp_ordago_bluff <= 1.0:
            raise ValueError(f"opp_ordago_bluff must be in [0, 1], got {opp_ordago_bluff!r}")
        self.opp_ordago_bluff = float(opp_ordago_bluff)
        if not 0.0 <= opp_call <= 1.0:
            raise ValueError(f"opp_call must be in [0, 1], got {opp_call!r}")
        self.opp_call = float(opp_call)
        if len(bet_sizes) != 5 or any(int(k) < 2 for k in bet_sizes):
            raise ValueError(f"bet_sizes must be five amounts >= 2 (ENVIDO ids 19..23), got {bet_sizes!r}")
        self.bet_sizes = np.asarray(bet_sizes, dtype=np.int64)
        self.max_stake = int(max_stake)
        self.ordago_margin = float(ordago_margin)
        self.ordago_call_margin = float(ordago_call_margin)
        self.slot_weights = np.asarray(slot_weights, dtype=np.float64)
        if self.slot_weights.shape != (4,):
            raise ValueError("slot_weights must be four numbers (grande, chica, pares, juego/punto), "
                             f"got {slot_weights!r}")
        self.mus_margin = float(mus_margin)
        if not 0.0 <= bluff_rate <= 1.0:
            raise ValueError(f"bluff_rate must be in [0, 1], got {bluff_rate!r}")
        self.bluff_rate = float(bluff_rate)
        self.score_aware = bool(score_aware)
        self.sign_boost = bool(sign_boost)
        self.tables_dir = None if tables_dir is None else str(tables_dir)
        self._derived: dict[int, tuple[npt.NDArray, npt.NDArray, npt.NDArray]] = {}
        self._wp: dict[tuple[int, int], npt.NDArray[np.float64]] = {}
        self._stone_value: dict[int, float] = {}
        for kings in (8, 4):                       # fail early, with the regeneration hint
            self._tables(kings)

    def __repr__(self) -> str:
        return f"EquityAgent(bluff_rate={self.bluff_rate}, ordago_margin={self.ordago_margin})"

    # ------------------------------------------------------------------------------------------------
    def _tables(self, kings: int) -> EquityTables:
        t = load_tables(kings, self.tables_dir)
        if kings not in self._derived:
            w = self.slot_weights[:, None, None]
            value = (t.ev * w).sum(axis=0)                                           # (4 seats, M)
            disc = (t.disc * w[..., None]).sum(axis=0)                                # (4 seats, M, 16)
            best = disc[:, :, 1:].max(axis=2)
            hw = hand_weights(kings)
            drift = ((best - value) * hw).sum(axis=1) / hw.sum()                      # (4 seats,)
            self._derived[kings] = (value, disc, drift)
            wp40 = win_probability_table(t.hand_pmf, 40)
            self._stone_value[kings] = float(wp40[1, 0] - wp40[0, 0])              # game chance of a stone at 0-0
        return t

    def _wp_table(self, t: EquityTables, target: int) -> npt.NDArray[np.float64]:
        """Flat ``(target + 1) ** 2`` game-win probabilities of the variant's self-play stone distribution."""
        key = (t.kings, target)
        if key not in self._wp:
            self._wp[key] = np.array(win_probability_table(t.hand_pmf, target), dtype=np.float64).ravel()  # a copy
        return self._wp[key]

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        if not self.compiled:
            return self.act_batch_reference(obs, masks, rng)
        masks = np.require(masks, np.int8, ["C", "W"])          # (one compiled signature: C-contiguous, writable)
        x, ints, floats = read_packed(obs)
        B = len(ints)
        out = np.empty(B, dtype=np.int64)
        if not B:
            return out
        phase = ints[:, I_PHASE]
        kings8 = ints[:, I_KINGS8] != 0
        bets = (phase >= Phase.BET_OPEN) & (phase <= Phase.BET_CONFIRM)
        signs = read_signs(x) if masks.shape[1] > _NUM_ACTIONS else None
        f = Features.from_packed(x, ints, floats) if signs is not None else None
        u = np.full(B, 2.0)                                    # the bluff draws of the betting rows
        shift, p_u, p_t = np.zeros(B), np.ones(B), np.ones(B)  # the señas' adjustments (none: ratio 1, shift 0)
        pcut, cut = np.zeros(B, dtype=bool), np.zeros(B, dtype=bool)
        for kings in (8, 4):                                   # in the reference's order: its draws come in this order
            rows = np.flatnonzero(kings8 == (kings == 8))
            if not rows.size:
                continue
            t = self._tables(kings)
            value, disc, drift = self._derived[kings]
            i = rows[bets[rows]]
            if i.size and self.bluff_rate > 0:
                u[i] = rng.random(i.size)
            if signs is not None:
                shift[i] = self._opponent_shift(signs, i, f.lance[i])
                p_u[i], p_t[i] = self._partner_sign(f, signs, i, kings)
                j = rows[phase[rows] == Phase.MUS_CALL]
                pcut[j] = partner_cut(signs, j)
            tabs, tix = self._target_tables(t, ints, i)
            run_kernel(equity_rows, rows, ints, masks, value, disc, drift, t.acc, t.win, t.tau, tabs, tix,
                        self._kernel_floats(t, adjust=True), self._lanes(), self.bet_sizes, u, shift, p_u, p_t, pcut,
                        out, cut)
        i = np.flatnonzero(phase == Phase.SIGNAL)
        if i.size and signs is not None:
            out[i] = choose_signs(f.idx[i], f.kings8[i], signs.window[i], ~cut[i], masks[i], signs.free[i])
        return out

    def _kernel_floats(self, t: EquityTables, adjust: bool) -> npt.NDArray[np.float64]:
        """The options as the compiled kernels take them (:data:`agents.compiled.EQUITY_FLOATS`), for ``t``'s variant;
        ``adjust``: apply the señas' adjustments (``_bet_values``' ``partner`` and ``shift``)."""
        return np.array([self.tau_accept_per_stone, self.tau_accept_max, self.opp_bluff, self.opp_ordago_bluff,
                         self.opp_call, self.max_stake, self.ordago_margin, self.ordago_call_margin, self.mus_margin,
                         self.bluff_rate, self.score_aware, self._stone_value[t.kings], t.holder_bonus[0],
                         t.holder_bonus[1], adjust], dtype=np.float64)

    def _lanes(self) -> npt.NDArray[np.float64]:
        """The per-lance opponent model as the compiled kernels take it (:data:`agents.compiled.EQUITY_LANCES`)."""
        return np.stack([self.tau_bet, self.tau_raise, self.tau_accept, self.tau_ordago,
                         self.tau_ordago_accept]).astype(np.float64)

    def _target_tables(self, t: EquityTables, ints: npt.NDArray[np.int64],
                       rows: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
        """The flat win-probability tables of the targets of ``rows`` stacked (padded) and each row's index in
        them (a dummy table when the agent is not score-aware)."""
        tix = np.zeros(len(ints), dtype=np.int64)
        if not self.score_aware or not rows.size:
            return np.zeros((1, 1)), tix
        target = ints[rows, I_TARGET]
        if target.min() == target.max():                     # one target per batch in practice
            return self._wp_table(t, int(target[0]))[None], tix
        targets, inverse = np.unique(target, return_inverse=True)
        flat = [self._wp_table(t, int(T)) for T in targets]
        tabs = np.zeros((len(flat), max(len(a) for a in flat)))
        for k, a in enumerate(flat):
            tabs[k, :len(a)] = a
        tix[rows] = inverse.reshape(-1)
        return tabs, tix

    def act_batch_reference(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                            rng: np.random.Generator) -> npt.NDArray[np.int64]:
        """:meth:`act_batch` written with numpy on :class:`~agents.features.Features`: the readable reference that
        the compiled path (:func:`agents.compiled.equity_rows`) is held equal to, action for action and draw for
        draw."""
        masks = np.asarray(masks)
        f = read(obs)
        out = first_legal(masks)
        if not len(out):
            return out
        for kings in (8, 4):
            sel = f.kings8 == (kings == 8)
            if sel.any():
                self._decide(f, masks, rng, out, np.flatnonzero(sel), kings)
        return out

    def action_values(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8]) -> npt.NDArray[np.float64]:
        """What the agent thinks each legal action is worth, for ``(B, obs_dim)`` observations: ``(B, A)``.

        In a betting decision, the estimated probability of winning the game after each action (the agent
        takes the largest, except for its bluffs, and its órdago margins are already subtracted); at a discard,
        the expected en-paso stones of the hand after each discard (the agent throws the best); at a mus call,
        in the same stones, MUS is worth the best discard less the rivals' ``drift`` and NO_MUS the hand as it
        is (the agent cuts when NO_MUS is worth at least MUS plus its ``mus_margin``, or on a strong partner's
        seña).
        NaN where an action is illegal and for other decisions (señas, declarations). Read-only: nothing is
        sampled (the bluffs the agent may draw are not in the values).
        """
        masks = np.asarray(masks)
        x, ints, floats = read_packed(obs)
        f = Features.from_packed(x, ints, floats)
        out = np.full(masks.shape, np.nan)
        for kings in (8, 4):
            rows = np.flatnonzero(f.kings8 == (kings == 8))
            if not rows.size:
                continue
            t = self._tables(kings)
            value, disc, drift = self._derived[kings]
            phase = f.phase[rows]
            i = rows[phase == Phase.MUS_CALL]
            if i.size:
                p, h = f.seat[i], f.idx[i]
                out[i, _MUS] = disc[p, h, 1:].max(axis=1) - drift[p]
                out[i, _NO_MUS] = value[p, h]
            i = rows[phase == Phase.DISCARD]
            if i.size:
                out[i, DISCARD_BASE:DISCARD_BASE + 16] = disc[f.seat[i], f.idx[i]]
            i = rows[(phase >= Phase.BET_OPEN) & (phase <= Phase.BET_CONFIRM)]
            signs = read_signs(f.obs) if masks.shape[1] > _NUM_ACTIONS else None
            if self.compiled:
                out[i, :_NUM_ACTIONS] = self._bet_values_compiled(f, ints, i, masks, t, signs, kings)
                continue
            for T in np.unique(f.target[i]):
                j = i[f.target[i] == T]
                shift, partner = None, None
                if signs is not None:
                    shift, partner = self._opponent_shift(signs, j, f.lance[j]), self._partner_sign(f, signs, j, kings)
                out[j, :_NUM_ACTIONS] = self._bet_values(f, j, masks[j, :_NUM_ACTIONS], t, shift, partner)
        out[np.asarray(masks) == 0] = np.nan
        out[~np.isfinite(out)] = np.nan
        return out

    def _bet_values_compiled(self, f: Features, ints: npt.NDArray[np.int64], i: npt.NDArray[np.int64],
                             masks: npt.NDArray[np.int8], t: EquityTables, signs: SignView | None,
                             kings: int) -> npt.NDArray[np.float64]:
        """:meth:`_bet_values` of rows ``i`` (any targets) in one compiled pass (:func:`agents.compiled.equity_values`),
        with the señas' adjustments as :meth:`action_values` applies them (only with signals on)."""
        B = len(f.phase)
        shift, p_u, p_t = np.zeros(B), np.ones(B), np.ones(B)
        if signs is not None and i.size:
            shift[i] = self._opponent_shift(signs, i, f.lance[i])
            p_u[i], p_t[i] = self._partner_sign(f, signs, i, kings)
        vals = np.full((B, _NUM_ACTIONS), -np.inf)
        tabs, tix = self._target_tables(t, ints, i)
        run_kernel(equity_values, i, ints, np.require(masks, np.int8, ["C", "W"]), t.acc, t.win, t.tau, tabs, tix,
                      self._kernel_floats(t, adjust=signs is not None), self._lanes(), self.bet_sizes, shift, p_u, p_t,
                      vals)
        return vals[i]

    def _decide(self, f: Features, masks: npt.NDArray[np.int8], rng: np.random.Generator,
                out: npt.NDArray[np.int64], rows: npt.NDArray[np.int64], kings: int) -> None:
        t = self._tables(kings)
        value, disc, drift = self._derived[kings]
        phase = f.phase[rows]
        signs = read_signs(f.obs) if masks.shape[1] > _NUM_ACTIONS else None

        def cuts(i: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
            p, h = f.seat[i], f.idx[i]
            best = disc[p, h, 1:].max(axis=1)
            return value[p, h] >= best - drift[p] + self.mus_margin

        i = rows[phase == Phase.SIGNAL]
        if i.size and signs is not None:
            out[i] = choose_signs(f.idx[i], f.kings8[i], signs.window[i], ~cuts(i), masks[i], signs.free[i])
        i = rows[phase == Phase.MUS_CALL]
        if i.size:
            cut = cuts(i)
            if signs is not None:
                cut |= partner_cut(signs, i)
            out[i] = np.where(cut | (masks[i, _MUS] == 0), _NO_MUS, _MUS)
        i = rows[phase == Phase.DISCARD]
        if i.size:
            d = np.where(masks[i, DISCARD_BASE:DISCARD_BASE + 16] > 0, disc[f.seat[i], f.idx[i]], -np.inf)
            out[i] = DISCARD_BASE + np.argmax(d, axis=1)
        i = rows[(phase >= Phase.BET_OPEN) & (phase <= Phase.BET_CONFIRM)]
        if i.size:
            bluff = rng.random(i.size) < self.bluff_rate if self.bluff_rate > 0 else np.zeros(i.size, dtype=bool)
            target = f.target[i]
            if signs is not None:
                shift = self._opponent_shift(signs, i, f.lance[i])
                p_u, p_t = self._partner_sign(f, signs, i, kings)
            else:
                shift, p_u, p_t = np.zeros(i.size), np.ones(i.size), np.ones(i.size)      # ratio 1: no sign
            m = masks[i, :_NUM_ACTIONS]
            if target.min() == target.max():               # one target per batch in practice
                out[i] = self._bet(f, i, m, t, bluff, shift, (p_u, p_t))
            else:
                for T in np.unique(target):
                    sel = target == T
                    out[i[sel]] = self._bet(f, i[sel], m[sel], t, bluff[sel], shift[sel], (p_u[sel], p_t[sel]))

    @staticmethod
    def _opponent_shift(view: SignView, rows: npt.NDArray[np.int64],
                        lance: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """``(n,)`` minus the :data:`agents.signs.SIGN_BONUS` of each intercepted opponent's grande-window sign."""
        lance = np.clip(lance, 0, 4)
        shift = np.zeros(len(rows))
        for q in (1, 3):
            tok = view.grande[rows, q]
            shift -= np.where(tok >= 0, SIGN_BONUS[np.maximum(tok, 0), lance], 0.0)
        return shift

    def _partner_sign(self, f: Features, view: SignView, rows: npt.NDArray[np.int64],
                      kings: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """``(P_u, P_t)`` per row: P(win the lance) without and with the partner's grande-window sign
        (equal where no sign was seen: ratio 1); from the sign tables."""
        tok = view.grande[rows, 2]
        seen = tok > int(Sign.NONE)                 # NONE: a silent partner tells nothing
        p_u = np.ones(len(rows))
        p_t = np.ones(len(rows))
        if not seen.any():
            return p_u, p_t
        st = load_sign_tables(kings, self.tables_dir)
        lance = np.clip(f.lance[rows], 0, 4)
        sc = np.select([lance <= CHICA, lance == PARES, lance == JUEGO],
                       [lance, 2 + (f.pares_decl[rows, 2] == DECL_SI), 4 + (f.juego_decl[rows, 2] == DECL_SI)], 6)
        p, h = f.seat[rows], f.idx[rows]
        p_u = st.base[sc, p, h].astype(np.float64)
        p_t = np.where(seen, st.win[sc, p, h, np.maximum(tok, 0)], p_u).astype(np.float64)
        if not self.sign_boost:                     # good news is not acted on (module docstring, Señas)
            p_t = np.minimum(p_t, p_u)
        return p_u, p_t

    # ------------------------------------------------------------------------------------------------
    def _context(self, f: Features, i: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        lance = f.lance[i]
        ctx = np.where(lance == PUNTO, 14, lance)                                     # grande 0, chica 1
        for L, decl, base in ((PARES, f.pares_decl[i], 2), (JUEGO, f.juego_decl[i], 8)):
            right, left = decl[:, 1] == DECL_SI, decl[:, 3] == DECL_SI
            pattern = np.where(right & left, 2, np.where(left, 1, 0))
            ctx = np.where(lance == L, base + 3 * (decl[:, 2] == DECL_SI) + pattern, ctx)
        return ctx

    @staticmethod
    def _interp(tau: npt.NDArray[np.float64], arr: npt.NDArray[np.float32],
                x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Row-wise linear interpolation of ``arr`` (n, T) on the grid ``tau`` at ``x`` (n,) or (n, k)."""
        x = np.clip(x, tau[0], tau[-1])
        j = np.clip(np.searchsorted(tau, x, side="right") - 1, 0, len(tau) - 2)
        w = (x - tau[j]) / (tau[j + 1] - tau[j])
        r = np.arange(len(x)).reshape((-1,) + (1,) * (x.ndim - 1))
        return arr[r, j] * (1.0 - w) + arr[r, j + 1] * w

    def _bet(self, f: Features, i: npt.NDArray[np.int64], masks: npt.NDArray[np.int8], t: EquityTables,
             bluff: npt.NDArray[np.bool_], shift: npt.NDArray[np.float64] | None = None,
             partner: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None = None) -> npt.NDArray[np.int64]:
        n = i.size
        vals = self._bet_values(f, i, masks, t, shift, partner)
        opening = f.phase[i] == Phase.BET_OPEN
        a = np.argmax(vals, axis=1)
        a = np.where(opening & bluff & (a == _PASO) & (masks[:, ENVIDO_BASE] > 0), ENVIDO_BASE, a)
        legal = masks[np.arange(n), a] > 0
        return np.where(legal, a, first_legal(masks)).astype(np.int64)

    def _bet_values(self, f: Features, i: npt.NDArray[np.int64], masks: npt.NDArray[np.int8], t: EquityTables,
                    shift: npt.NDArray[np.float64] | None = None,
                    partner: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None = None,
                    ) -> npt.NDArray[np.float64]:
        """``(n, 31)`` the estimated game-win probability of each betting action (-inf where illegal)."""
        n = i.size
        lance = f.lance[i]
        ctx = self._context(f, i)
        p, h = f.seat[i], f.idx[i]
        acc, win = t.acc[ctx, p, h], t.win[ctx, p, h]                                 # (n, T)
        tau = t.tau

        def at(arr: npt.NDArray[np.float32], x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
            return self._interp(tau, arr, x)

        # bonuses the lance brings to each team when it wins it
        hb_pares, hb_juego = t.holder_bonus
        own_bonus = np.zeros(n)
        opp_bonus = np.zeros(n)
        pd, jd = f.pares_decl[i], f.juego_decl[i]
        opp_p = (pd[:, 1] == DECL_SI).astype(float) + (pd[:, 3] == DECL_SI)
        opp_j = (jd[:, 1] == DECL_SI).astype(float) + (jd[:, 3] == DECL_SI)
        is_p, is_j, is_pt = lance == PARES, lance == JUEGO, lance == PUNTO
        own_bonus = np.where(is_p, f.pares_class[i] + hb_pares * (pd[:, 2] == DECL_SI), own_bonus)
        opp_bonus = np.where(is_p, hb_pares * opp_p, opp_bonus)
        my_juego = np.where(f.points[i] == 31, 3.0, np.where(f.points[i] >= 31, 2.0, 0.0))
        own_bonus = np.where(is_j, my_juego + hb_juego * (jd[:, 2] == DECL_SI), own_bonus)
        opp_bonus = np.where(is_j, hb_juego * opp_j, opp_bonus)
        own_bonus = np.where(is_pt, 1.0, own_bonus)
        opp_bonus = np.where(is_pt, 1.0, opp_bonus)
        base = (lance <= 1).astype(float)                                             # en-paso stone

        # game-win probability after the own team (gain) or the other team (lose) wins x more stones;
        # bonuses are expectations, so x is fractional: linear between whole stones
        T = int(f.target[i[0]])
        tab = self._wp_table(t, T)                                                    # flat (T+1)^2
        own, other = np.minimum(f.own[i], T), np.minimum(f.other[i], T)

        if self.score_aware:
            def gain(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
                a = np.minimum(own + x, T)
                a0 = np.floor(a).astype(np.int64)
                fr = a - a0
                row = other
                return tab[a0 * (T + 1) + row] * (1 - fr) + tab[np.minimum(a0 + 1, T) * (T + 1) + row] * fr

            def lose(y: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
                b = np.minimum(other + y, T)
                b0 = np.floor(b).astype(np.int64)
                fr = b - b0
                return tab[own * (T + 1) + b0] * (1 - fr) + tab[own * (T + 1) + np.minimum(b0 + 1, T)] * fr
        else:                                                # stones at the 0-0 exchange rate, no target
            stone_value = self._stone_value[t.kings]

            def gain(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
                return 0.5 + stone_value * x

            def lose(y: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
                return 0.5 - stone_value * y

        def gain2(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
            """:func:`gain` of an (n, k) array."""
            return gain(x.T).T

        def lose2(y: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
            return lose(y.T).T

        phase = f.phase[i]
        stake = f.stake[i].astype(float)
        fallback = f.fallback[i].astype(float)
        ordago_live = f.ordago[i]
        opening = phase == Phase.BET_OPEN
        # the opponents' strength implied by their last bet or raise (none in the opening round)
        first_bet = fallback <= 1
        tau_prev = np.where(opening, 0.0, np.where(first_bet, self.tau_bet[lance], self.tau_raise[lance]))
        tau_prev = np.where(ordago_live, self.tau_ordago[lance], tau_prev)
        new_fall = np.where(opening, 1.0, stake)                                      # paid if our bet is refused
        game_if_refused = own + new_fall >= T                       # they will not hand us the game
        # the opponents' thresholds for accepting each bet size, and an órdago: all read at once
        s_new = np.where(opening[:, None], self.bet_sizes[None, :], stake[:, None] + self.bet_sizes[None, :])
        tau_acc = np.minimum(self.tau_accept[lance][:, None] + self.tau_accept_per_stone * (s_new - 2),
                             self.tau_accept_max)
        tau_acc = np.where(game_if_refused[:, None], tau_prev[:, None], np.maximum(tau_prev[:, None], tau_acc))
        tau_oa = np.maximum(tau_prev, self.tau_ordago_accept[lance])
        x = np.concatenate([tau_prev[:, None], tau_acc, tau_oa[:, None]], axis=1)    # (n, 7)
        acc_x, win_x = at(acc, x), at(win, x)
        a_prev = np.maximum(acc_x[:, 0], 1e-6)
        p_any = win[:, 0].astype(np.float64)                                          # P(win), no information
        eps = np.where(opening, 0.0, np.where(ordago_live, self.opp_ordago_bluff, self.opp_bluff))
        p_range = np.clip(win_x[:, 0] / a_prev, 0.0, 1.0)                             # P(win | their range)
        p_w = np.clip((1 - eps) * p_range + eps * p_any, 0.0, 1.0)
        if partner is not None:                     # the partner's seña, from the sign tables
            p_u, p_t = partner
            p_range = _sign_adjust(p_range, p_u, p_t)
            p_w = _sign_adjust(p_w, p_u, p_t)
            safe = np.maximum(acc_x, 1e-9)
            win_x = np.where(acc_x > 0, _sign_adjust(win_x / safe, p_u, p_t) * acc_x, win_x)
        if shift is not None:                       # intercepted rival señas (agents.signs): a fixed shift down
            p_range = np.clip(p_range + shift, 0.0, 1.0)
            p_w = np.clip(p_w + shift, 0.0, 1.0)
            win_x = np.clip(win_x + shift[:, None] * acc_x, 0.0, acc_x)

        # a share ``opp_call`` of our bets is accepted whatever the opponents hold (then we win with p_range)
        gamma = self.opp_call
        # candidate actions and their values (game-win probability); -inf where illegal
        vals = np.full((n, 31), -np.inf)
        # en paso (opening) / quiero (facing a bet): the lance is decided by the cards
        paso = p_w * gain(base + own_bonus) + (1 - p_w) * lose(base + opp_bonus)
        vals[:, _PASO] = paso
        vals[:, _QUIERO] = p_w * gain(stake + own_bonus) + (1 - p_w) * lose(stake + opp_bonus)
        vals[:, _NO_QUIERO] = lose(fallback + opp_bonus)
        # bets and raises: the new stake, and the opponents' chance to accept it
        pa = np.clip(acc_x[:, 1:6] / a_prev[:, None], 0.0, 1.0)                      # all bet sizes: (n, 5)
        pw = np.clip(win_x[:, 1:6] / a_prev[:, None], 0.0, pa)
        pa, pw = (1 - gamma) * pa + gamma, (1 - gamma) * pw + gamma * p_range[:, None]
        v = ((1 - pa) * gain(new_fall + own_bonus)[:, None] + pw * gain2(s_new + own_bonus[:, None])
             + (pa - pw) * lose2(s_new + opp_bonus[:, None]))
        vals[:, ENVIDO_BASE:ENVIDO_BASE + 5] = np.where((opening | (stake < self.max_stake))[:, None], v, -np.inf)
        # órdago of its own: refused pays the fallback, accepted decides the game
        pa = np.clip(acc_x[:, 6] / a_prev, 0.0, 1.0)
        pw = np.clip(win_x[:, 6] / a_prev, 0.0, pa)
        pa, pw = (1 - gamma) * pa + gamma, (1 - gamma) * pw + gamma * p_range
        vals[:, _ORDAGO] = (1 - pa) * gain(new_fall + own_bonus) + pw - self.ordago_margin
        # facing an órdago: quiero wins the game with the lance
        vals[:, _QUIERO] = np.where(ordago_live, p_w - self.ordago_call_margin, vals[:, _QUIERO])
        return np.where(masks > 0, vals, -np.inf)
