"""How the baseline agents use señas (RULES.md §8, :mod:`mus_env.signals`): what they sign, what they read.

Signing (truthful). In a sign window an agent makes the most useful sign that is true for its hand, by a
fixed priority (:data:`SIGN_PRIORITY`: the rarest, most valuable holdings first: solomillo, 31 real, duples,
three kings, medias, 31, ...; ``CIEGO`` when nothing is worth signalling). It never signs falsely, also under
``signals="free"`` (where every token is legal): the truth of a token is read from its own hand in the
observation (:func:`mus_env.signals.hand_sign_bits`), and REAL31 is made only when the mask says it is true
(``truthful``), since the observation does not tell which 31 is real. In a mus window, a hand that
would not cut the mus by its own rule signs ``MUS`` (it wants to discard) unless it holds one of the strong
signs.

Reading. The tokens a seat has seen are in the observation's signal block. For betting, the signs of the
grande window (made with the final hands) shift the agent's hand quality ``q`` for the lance at hand:
``+SIGN_BONUS[token, lance]`` for the partner's sign, ``-SIGN_BONUS[token, lance]`` for each opponent's sign
it intercepted. In the mus phase a strong sign of the partner in the latest mus window makes the agent
cut the mus (the team already holds a hand worth playing).

:class:`SilentAgent` wraps any agent so that it never signs (NONE); it still reads the rival signs it
intercepts (``blind=True``: it sees none, its signal block cleared): the "without signs" side of the
value-of-information benchmark (spec suffix ``-nosigns``; ``-blind`` for the blind one), and the way an
agent trained without signals plays a game with them (blind, the block cut off).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mus_env.actions import NUM_ACTIONS
from mus_env.observation import OBS_DIM
from mus_env.signals import (
    NUM_SIGNS,
    SIGNAL_BASE,
    SIGNAL_DIM,
    SIGNAL_OFFSETS,
    WINDOW_MUS,
    Sign,
    hand_sign_bits,
)
from mus_env.tables import CHICA, GRANDE, JUEGO, PARES, PUNTO

from .base import Agent, TableRows, act_rows

__all__ = ["SIGN_PRIORITY", "SIGN_BONUS", "STRONG_SIGNS", "SignView", "read_signs", "choose_signs",
           "sign_quality_shift", "SilentAgent"]

#: Signs in the order an agent prefers them (first legal and true wins); NONE last.
SIGN_PRIORITY = (Sign.SOLOMILLO, Sign.REAL31, Sign.DUPLES, Sign.TRES_REYES, Sign.MEDIAS, Sign.TREINTA_Y_UNA,
                 Sign.TRES_ASES, Sign.DOS_REYES, Sign.JUEGO, Sign.TREINTA, Sign.DOS_ASES, Sign.VEINTINUEVE,
                 Sign.PAR, Sign.CIEGO, Sign.NONE)
#: Signs of a hand strong enough that the partner cuts the mus on seeing them.
STRONG_SIGNS = (Sign.SOLOMILLO, Sign.REAL31, Sign.DUPLES, Sign.TRES_REYES, Sign.MEDIAS, Sign.TREINTA_Y_UNA)

#: ``(NUM_SIGNS, 5)`` shift of hand quality q per seen sign and lance id (grande, chica, pares, juego, punto).
SIGN_BONUS = np.zeros((NUM_SIGNS, 5))
for _sign, _shift in {
    Sign.DOS_REYES: {GRANDE: 0.08, PARES: 0.05}, Sign.TRES_REYES: {GRANDE: 0.12, PARES: 0.12},
    Sign.DOS_ASES: {CHICA: 0.08, PARES: 0.05}, Sign.TRES_ASES: {CHICA: 0.12, PARES: 0.12},
    Sign.MEDIAS: {PARES: 0.15}, Sign.DUPLES: {PARES: 0.25}, Sign.PAR: {PARES: 0.05},
    Sign.JUEGO: {JUEGO: 0.05}, Sign.TREINTA_Y_UNA: {JUEGO: 0.20}, Sign.TREINTA: {PUNTO: 0.15},
    Sign.VEINTINUEVE: {PUNTO: 0.10}, Sign.REAL31: {JUEGO: 0.25, PARES: 0.12},
    Sign.SOLOMILLO: {GRANDE: 0.12, PARES: 0.12, JUEGO: 0.20},
    Sign.CIEGO: {GRANDE: -0.04, CHICA: -0.02, PARES: -0.05, JUEGO: -0.05, PUNTO: -0.02},
}.items():
    for _lance, _v in _shift.items():
        SIGN_BONUS[_sign, _lance] = _v
SIGN_BONUS.setflags(write=False)

_O_WINDOW = OBS_DIM + SIGNAL_OFFSETS["sign_window"].start
_O_MUS = OBS_DIM + SIGNAL_OFFSETS["signs_mus"].start
_O_GRANDE = OBS_DIM + SIGNAL_OFFSETS["signs_grande"].start
_O_CONFIG = OBS_DIM + SIGNAL_OFFSETS["sign_config"].start
_PRIORITY_BITS = np.array([1 << int(s) for s in SIGN_PRIORITY], dtype=np.int64)
_PRIORITY_IDS = np.array([int(s) for s in SIGN_PRIORITY], dtype=np.int64)
_STRONG = np.zeros(NUM_SIGNS + 1, dtype=bool)            # index token + 1 (0: nothing seen)
_STRONG[[int(s) + 1 for s in STRONG_SIGNS]] = True


@dataclass
class SignView:
    """The signal block of a batch of observations, read into arrays.

    Attributes:
        on: ``(B,)`` the observation has a signal block (signals on).
        window: ``(B,)`` kind of the pending sign window (WINDOW_MUS, WINDOW_GRANDE), -1 when no sign is asked.
        mus, grande: ``(B, 4)`` token seen from seat q (0 self, 1 right opponent, 2 partner, 3 left opponent)
            in the latest mus window / the grande window; -1 when none was seen.
        free: ``(B,)`` signs are cheap talk (``signals="free"``).
    """

    on: npt.NDArray[np.bool_]
    window: npt.NDArray[np.int64]
    mus: npt.NDArray[np.int64]
    grande: npt.NDArray[np.int64]
    free: npt.NDArray[np.bool_]


def _seen(block: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
    b = block.reshape(len(block), 4, NUM_SIGNS)
    return np.where(b.max(axis=2) > 0.5, b.argmax(axis=2), -1).astype(np.int64)


def read_signs(obs: npt.ArrayLike) -> SignView:
    """:class:`SignView` of ``(B, obs_dim)`` observations (rows without a signal block read as nothing seen)."""
    x = np.asarray(obs, dtype=np.float32)
    if x.ndim == 1:
        x = x[None]
    B = len(x)
    if x.shape[1] < OBS_DIM + SIGNAL_DIM:
        none = np.full((B, 4), -1, dtype=np.int64)
        return SignView(np.zeros(B, bool), np.full(B, -1, dtype=np.int64), none, none.copy(), np.zeros(B, bool))
    w = x[:, _O_WINDOW:_O_WINDOW + 2]
    window = np.where(w.max(axis=1) > 0.5, w.argmax(axis=1), -1).astype(np.int64)
    return SignView(np.ones(B, bool), window, _seen(x[:, _O_MUS:_O_MUS + 4 * NUM_SIGNS]),
                    _seen(x[:, _O_GRANDE:_O_GRANDE + 4 * NUM_SIGNS]), x[:, _O_CONFIG] > 0.5)


def choose_signs(idx: npt.NDArray[np.int64], kings8: npt.NDArray[np.bool_], window: npt.NDArray[np.int64],
                 wants_mus: npt.NDArray[np.bool_], masks: npt.NDArray[np.int8],
                 free: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """Sign action ids (``SIGNAL_BASE + token``) of rows about to sign (module docstring, "Signing").

    Args:
        idx: ``(n,)`` rank multiset index of each row's hand; kings8: ``(n,)`` its variant.
        window: ``(n,)`` kind of the window; wants_mus: ``(n,)`` the hand would not cut the mus.
        masks: ``(n, num_actions)`` legal masks; free: ``(n,)`` cheap-talk rows (the mask says nothing
            about the truth of a token there).
    """
    n = len(idx)
    true = np.where(kings8, hand_sign_bits(8)[np.minimum(idx, len(hand_sign_bits(8)) - 1)],
                    hand_sign_bits(4)[idx]).astype(np.int64)
    legal = (masks[:, SIGNAL_BASE:SIGNAL_BASE + NUM_SIGNS] > 0) @ (1 << np.arange(NUM_SIGNS))
    legal = legal.astype(np.int64)
    # REAL31 only where the mask vouches for it (truthful); MUS in a mus window when the hand wants mus
    true |= np.where(free, 0, legal & (1 << int(Sign.REAL31)))
    strong = (true & sum(1 << int(s) for s in STRONG_SIGNS)) != 0
    mus_sign = (window == WINDOW_MUS) & wants_mus & ~strong
    ok = true & legal
    pick = np.full(n, int(Sign.NONE), dtype=np.int64)
    has = (ok[:, None] & _PRIORITY_BITS[None, :]) != 0
    first = has.argmax(axis=1)
    pick = np.where(has.any(axis=1), _PRIORITY_IDS[first], pick)
    can_mus = (legal & (1 << int(Sign.MUS))) != 0
    pick = np.where(mus_sign & can_mus, int(Sign.MUS), pick)
    return (SIGNAL_BASE + pick).astype(np.int64)


def sign_quality_shift(view: SignView, rows: npt.NDArray[np.int64],
                       lance: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """``(n,)`` shift of q for rows ``rows`` betting lance ids ``lance``: the partner's grande-window sign
    adds its :data:`SIGN_BONUS`, each intercepted opponent's sign subtracts its own."""
    g = view.grande[rows]
    lance = np.clip(lance, 0, 4)
    shift = np.zeros(len(rows))
    for q, sign in ((2, 1.0), (1, -1.0), (3, -1.0)):
        tok = g[:, q]
        seen = tok >= 0
        shift += sign * np.where(seen, SIGN_BONUS[np.maximum(tok, 0), lance], 0.0)
    return shift


def partner_cut(view: SignView, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """``(n,)`` the partner made a strong sign in the latest mus window (module docstring, "Reading")."""
    return _STRONG[view.mus[rows, 2] + 1]


class SilentAgent(Agent):
    """``inner`` without signs of its own: it signs NONE in every window. It still watches: the rival signs
    it intercepts reach ``inner`` in its observation (its partner, silent too, shows nothing), unless
    ``blind``. Plays any config; with signals off it is ``inner`` itself.

    Args:
        inner: the agent to silence.
        blind: also clear the signal block before ``inner`` reads it (it sees no sign at all).
        obs_dim: the observation length ``inner`` expects: ``None`` keeps the signal block's length;
            ``OBS_DIM`` cuts it off (an agent trained without signals: blind whatever ``blind`` says).
    """

    def __init__(self, inner: Agent, obs_dim: int | None = None, blind: bool = False) -> None:
        self.inner = inner
        self.obs_dim = obs_dim
        self.blind = bool(blind)
        self.name = f"{getattr(inner, 'name', 'agent')}-{'blind' if blind else 'nosigns'}"

    def __repr__(self) -> str:
        return f"SilentAgent({self.inner!r})"

    @property
    def wants_rows(self) -> bool:  # type: ignore[override]
        """As ``inner``: a silenced agent that plays by game still gets each row's identity."""
        return bool(getattr(self.inner, "wants_rows", False))

    def act_batch(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8],
                  rng: np.random.Generator) -> npt.NDArray[np.int64]:
        return self.act_rows(obs, masks, rng, None)  # type: ignore[arg-type]

    def act_rows(self, obs: npt.NDArray[np.float32], masks: npt.NDArray[np.int8], rng: np.random.Generator,
                 rows: TableRows | None) -> npt.NDArray[np.int64]:
        x = np.asarray(obs, dtype=np.float32)
        masks = np.asarray(masks)
        if x.shape[1] < OBS_DIM + SIGNAL_DIM:
            return act_rows(self.inner, x, masks, rng, rows)
        view = read_signs(x)
        out = np.full(len(x), SIGNAL_BASE + int(Sign.NONE), dtype=np.int64)
        rest = np.flatnonzero(view.window < 0)
        if rest.size:
            y = x[rest].copy()
            if self.blind:
                y[:, _O_WINDOW:_O_CONFIG] = 0.0
            if self.obs_dim is not None:
                y = y[:, :self.obs_dim]
            m = masks[rest]
            if self.obs_dim == OBS_DIM:
                m = m[:, :NUM_ACTIONS]
            out[rest] = act_rows(self.inner, y, m, rng, rows.take(rest) if rows is not None else None)
        return out
