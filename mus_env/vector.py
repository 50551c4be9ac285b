"""VectorMusEnv: the batched numpy engine, B tables stepped at once with exactly the rules of MusGame.

Every table's state is a row of a small set of fixed-dtype arrays (batch axis first, documented in
:meth:`VectorMusEnv._allocate`). Hands are evaluated by table lookup (:mod:`mus_env.tables`); per-game
control flow is index subsets and masks; Python loops run only over the four seats, the four lance
slots and a bounded number of transitions per step, never over games. Randomness comes from
:mod:`mus_env.shuffle`, a pure function of each game's seed and position, so a table of this engine
and a :class:`~mus_env.game.MusGame` with the same seed, deck and actions play the same game
(``tests/test_vector.py`` holds them equal: masks, observations, rewards, scores).

Each step takes one action per table for its :attr:`current_player` and returns that seat's next
observation and mask. Finished episodes auto-reset: ``info["finished"]`` marks them, with the winner
and final scores; the returned observation is the first one of the new episode.

Example:
    >>> import numpy as np
    >>> from mus_env import VectorMusEnv
    >>> venv = VectorMusEnv(num_envs=8, seed=0)
    >>> obs, mask = venv.reset()
    >>> rng = np.random.default_rng(0)
    >>> actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
    >>> obs, mask, rewards, done, info = venv.step(actions)
    >>> obs.shape, mask.shape, rewards.shape
    ((8, 345), (8, 31), (8, 4))
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .actions import ENVIDO_BASE, NUM_ACTIONS, Action, action_to_string
from .cards import NUM_CARDS, slot_positions
from .config import MusConfig, playable_config
from .observation import (
    DISCARD_ROUNDS,
    HAND_DIM,
    OBS_DIM,
    OFFSETS,
    ROUNDS_SCALE,
    STAKE_SCALE,
    TARGET_SCALE,
    full_hand_keys,
    hand_table,
    speech_of,
)
from .phases import (
    LEGAL_MASKS,
    LEGAL_SETS,
    NUM_OUTCOMES,
    NUM_PHASES,
    ORDAGO_STAKE,
    PHASE_NAMES,
    Legal,
    Outcome,
    Phase,
)
from .shuffle import STREAM_RESHUFFLE, card_keys, deal_decks, first_mano, normalize_seed, random_seed, table_seeds
from .tables import (
    CHICA,
    GRANDE,
    JUEGO,
    LANCE_NAMES,
    PARES,
    PUNTO,
    REAL31_JUEGO_RANK,
    get_tables,
    is_real31,
    multiset_index,
)

__all__ = ["VectorMusEnv"]

# Pending transitions between decisions (what the engine still has to do for a table within a step).
_T_NONE, _T_BEGIN, _T_AFTER, _T_DECLARED, _T_SHOWDOWN, _T_HAND_END, _T_GAME_END, _T_DEAL = range(8)

_NO_MUS_A, _PASO_A = int(Action.NO_MUS), int(Action.PASO)
_QUIERO_A, _NO_QUIERO_A, _ORDAGO_A = int(Action.QUIERO), int(Action.NO_QUIERO), int(Action.ORDAGO)
_SI = (int(Action.PARES_SI), int(Action.JUEGO_SI))
_SPEECH = np.full(NUM_ACTIONS, -1, dtype=np.int8)
for _a in (_PASO_A, _QUIERO_A, _NO_QUIERO_A, _ORDAGO_A, *range(ENVIDO_BASE, ENVIDO_BASE + 5)):
    _SPEECH[_a] = speech_of(_a)
# Position of each card in hand-slot order (§9.2) per variant; index -1 (an empty slot) sorts last (40),
# and the inverse: the card at each position (40 -> -1).
_SLOTPOS = {k: np.array((*slot_positions(k), NUM_CARDS), dtype=np.int8) for k in (8, 4)}
_SLOTCARD = {k: np.append(np.argsort(v[:NUM_CARDS]), -1).astype(np.int8) for k, v in _SLOTPOS.items()}
_AR4 = np.arange(4)
_U64_MAX = np.uint64(np.iinfo(np.uint64).max)

_O = {name: sl.start for name, sl in OFFSETS.items()}
_TEAM_ORDER = np.array([[0, 1], [1, 0]])                # by own team: (own, other) team ids
_HAND_COLS = HAND_DIM                                   # hand_numbers .. points are contiguous from 0
# Columns of the per-observer block (observation.OBSERVER_PIECES, at the start of the vector).
_V_BETTOR, _V_LAST, _V_SPEECH = _O["lance_bettor"], _O["lance_last"], _O["lance_speech"]
_V_RAISED, _V_WINNER, _V_DECL = _O["lance_raised"], _O["lance_winner"], _O["pares_decl"]
_V_DISC, _V_PREV = _O["discards"], _O["prev_rank_counts"]
_OBSERVERS = np.arange(4)


def _seat_tables() -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """Who speaks next, from the eligible relative seats as a 4-bit set (bit p = relative seat p):

    ``next_elig[bits, r + 1]``: the first eligible seat after ``r`` (r = -1: the first of all), -1 if none;
    ``responders[bits, last]``: (r1, r2), the eligible seats of the other team (odd distance from the
    bettor ``last``) in cyclic order after it, -1 where absent (RULES.md §5.3).
    """
    next_elig = np.full((16, 5), -1, dtype=np.int8)
    responders = np.full((16, 4, 2), -1, dtype=np.int8)
    for bits in range(16):
        for r in range(-1, 4):
            later = [p for p in range(r + 1, 4) if bits >> p & 1]
            if later:
                next_elig[bits, r + 1] = later[0]
        for last in range(4):
            resp = [p for p in ((last + 1) % 4, (last + 2) % 4, (last + 3) % 4) if bits >> p & 1 and (p - last) % 2]
            responders[bits, last, :len(resp)] = resp
    return next_elig, responders


_NEXT_ELIG, _RESPONDERS = _seat_tables()


def _view_index_tables() -> dict[str, npt.NDArray]:
    """Cells (offsets from a table's first cell of ``_view``) and values of every per-observer cache write.

    Each table has one row per event code (``..._idx[code]``: the cells it rewrites for all four
    observers; ``..._val[code]``: what they become), so a write is one row gather, one add and one scatter.
    ``q[o, seat]`` is the seat as observer ``o`` sees it.
    """
    W = OBS_DIM
    o = _OBSERVERS[:, None]                                                     # (4 observers, 1)
    q = (_AR4[None, :] - _OBSERVERS[:, None]) % 4                               # [o, seat]
    k5, k4, k2 = np.arange(5), np.arange(4), np.arange(2)
    t: dict[str, npt.NDArray] = {}
    # speech: code slot * 4 + seat -> 20 cells; value code cat -> 20
    t["speech_idx"] = np.array([(o * W + _V_SPEECH + 20 * sl + 5 * q[:, [seat]] + k5).ravel()
                                for sl in range(4) for seat in range(4)])
    t["speech_val"] = np.array([np.broadcast_to(k5 == c, (4, 5)).ravel() for c in range(5)], dtype=np.float32)
    # last bettor: code slot -> 16 cells; value code seat -> 16
    t["last_idx"] = np.array([(o * W + _V_LAST + 4 * sl + k4).ravel() for sl in range(4)])
    t["last_val"] = np.array([(k4 == q[:, [seat]]).ravel() for seat in range(4)], dtype=np.float32)
    # team pairs (bettor, winner): code slot -> 8 cells; value code team -> 8
    t["bettor_idx"] = np.array([(o * W + _V_BETTOR + 2 * sl + k2).ravel() for sl in range(4)])
    t["winner_idx"] = np.array([(o * W + _V_WINNER + 2 * sl + k2).ravel() for sl in range(4)])
    t["team_val"] = np.array([(k2 == (team ^ (o & 1))).ravel() for team in range(2)], dtype=np.float32)
    # raised amount: code slot * 4 + seat -> 4 cells
    t["raised_idx"] = np.array([_OBSERVERS * W + _V_RAISED + 4 * sl + q[:, seat] for sl in range(4)
                                for seat in range(4)])
    # declarations: code (kind * 4 + seat) * 2 + yes -> 4 cells (set to 1)
    t["decl_idx"] = np.array([_OBSERVERS * W + _V_DECL + 8 * kind + 2 * q[:, seat] + (0 if yes else 1)
                              for kind in range(2) for seat in range(4) for yes in (0, 1)])
    # a bet (one write): code slot * 4 + seat -> speech 20, last 16, bettor 8, raised 4 cells;
    # value code seat * 2 + (órdago) -> the first 44 (the raised amount is filled in)
    t["bet_idx"] = np.concatenate([t["speech_idx"], np.repeat(t["last_idx"], 4, axis=0),
                                   np.repeat(t["bettor_idx"], 4, axis=0), t["raised_idx"]], axis=1)
    t["bet_val"] = np.array([np.concatenate([t["speech_val"][4 if ordago else 1], t["last_val"][seat],
                                             t["team_val"][seat & 1]])
                             for seat in range(4) for ordago in (0, 1)], dtype=np.float32)
    assert speech_of(int(Action.ORDAGO)) == 4 and speech_of(ENVIDO_BASE) == 1
    for v in t.values():
        v.setflags(write=False)
    return t


_VIX = _view_index_tables()
_OUTCOME_ONEHOT = np.eye(NUM_OUTCOMES, dtype=np.float32)
# The "dynamic" pieces (kings8 .. responder, contiguous) change nearly every step and are observer-independent
# given the acting seat, so they are not cached per observer: _encode writes one row of _dynamic_table per table.
_DYN = slice(_O["kings8"], OFFSETS["responder"].stop)
assert [n for n in OFFSETS if _DYN.start <= OFFSETS[n].start < _DYN.stop] == [
    "kings8", "mano", "acting", "phase", "lance", "responder"]
# Lance record (lance_outcome .. lance_fallback, contiguous, observer-independent, changed by most bets):
# not cached, _encode writes it from the ls_* arrays.
_LREC = slice(_O["lance_outcome"], OFFSETS["lance_fallback"].stop)
_LREC_STAKE = _O["lance_stake"] - _LREC.start
assert _DYN.stop == _LREC.start
assert (_O["lance_ordago"], _O["lance_fallback"]) == (_O["lance_stake"] + 4, _O["lance_stake"] + 8)
# Numbers (punto .. prev_stones, contiguous to the end): rewritten at hand starts, refusals and mus rounds.
_NUM = slice(_O["punto"], OBS_DIM)
assert OFFSETS["prev_stones"].stop == OBS_DIM and _LREC.stop == _NUM.start == OFFSETS["punto"].start


def _dynamic_table(kings: int) -> npt.NDArray[np.float32]:
    """Rows of the dynamic pieces by code ``(((phase * 5 + slot + 1) * 2 + resp_i) * 2 + punto) * 4 + rel``.

    The observer is the acting seat, so ``acting`` is seat q 0 (zeros once the game is over) and the
    mano is at q ``-rel``; the lance is the slot's (slot 3: juego, or punto), during declarations and bets.
    """
    rows = []
    for phase in range(NUM_PHASES):
        for slot in range(-1, 4):
            for resp_i in range(2):
                for punto in range(2):
                    for rel in range(4):
                        r = np.zeros(OBS_DIM, dtype=np.float32)
                        r[_O["kings8"]] = 1.0 if kings == 8 else 0.0
                        r[_O["mano"] + (-rel) % 4] = 1.0
                        if phase != Phase.GAME_OVER:
                            r[_O["acting"]] = 1.0
                        r[_O["phase"] + phase] = 1.0
                        if Phase.DECLARE <= phase <= Phase.BET_CONFIRM and slot >= 0:
                            r[_O["lance"] + (PUNTO if slot == 3 and punto else slot)] = 1.0
                            if phase >= Phase.BET_OPEN:
                                r[_O["responder"] + (0 if phase == Phase.BET_OPEN else resp_i + 1)] = 1.0
                        rows.append(r[_DYN])
    table = np.array(rows, dtype=np.float32)
    table.setflags(write=False)
    return table
_IS_BET = np.zeros(NUM_ACTIONS, dtype=bool)
_IS_BET[ENVIDO_BASE:ENVIDO_BASE + 5] = True
_IS_BET[int(Action.ORDAGO)] = True
_ROT = (_OBSERVERS[:, None] + _AR4[None, :]) % 4        # [observer, q] -> absolute seat
# Legal sets as padded rows (for sample_actions): _LEGAL_COUNT[legal], _LEGAL_PAD[legal, k] for k < count.
_LEGAL_WIDTH = max(len(s) for s in LEGAL_SETS)
_LEGAL_COUNT = np.array([len(s) for s in LEGAL_SETS], dtype=np.int64)
_LEGAL_PAD = np.array([(*s, *(s[-1:] or (0,)) * (_LEGAL_WIDTH - len(s))) for s in LEGAL_SETS], dtype=np.int64)

class VectorMusEnv:
    """B independent Mus games stepped together (the fast path for training and tournaments).

    Args:
        num_envs: number of tables B (>= 1).
        config: the ruleset (every switch MusGame supports).
        seed: master seed; game ``i``'s e-th episode uses ``shuffle.table_seeds(seed, i, e)``. None draws one.
        reward: "game" (+1/-1 per team at the end of an episode) or "stones" (each finished hand, the
            team's stones minus the other team's; a game won by an accepted órdago also credits the
            stones the winners still lacked, as ``HandRecord.stone_difference``).

    Attributes:
        num_envs: B.
        config: the ruleset.
        game_seeds: ``(B,)`` uint64 seed of each table's current episode (``MusGame(config, seed)``
            with that seed plays the same game).
    """

    def __init__(self, num_envs: int, config: MusConfig | None = None, seed: int | None = None,
                 reward: str = "game") -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        cfg = playable_config(config)
        if reward not in ("game", "stones"):
            raise ValueError(f"reward must be 'game' or 'stones', got {reward!r}")
        self.num_envs = int(num_envs)
        self.config = cfg
        self.reward_mode = reward
        self.seed = random_seed() if seed is None else normalize_seed(seed)
        t = get_tables(cfg.kings)
        self._t = t
        self._rank_of_card = np.asarray(t.rank_of_card, dtype=np.int64)
        self._slotpos = _SLOTPOS[cfg.kings]
        self._slotcard = _SLOTCARD[cfg.kings]
        self._bet_amount = np.zeros(NUM_ACTIONS, dtype=np.int32)
        self._bet_amount[ENVIDO_BASE:ENVIDO_BASE + 5] = cfg.bet_sizes
        self._discard_kind = Legal.DISCARD_ZERO if cfg.allow_zero_discard else Legal.DISCARD
        self._hand_table = hand_table(cfg.kings)
        self._dyn_table = _dynamic_table(cfg.kings)
        self._rank_counts = self._hand_table[:, OFFSETS["rank_counts"]].astype(np.int8)   # by hand key
        before = set(vars(self))
        self._allocate()
        self._obs = np.zeros((self.num_envs, OBS_DIM), dtype=np.float32)
        self._mask = np.zeros((self.num_envs, NUM_ACTIONS), dtype=np.int8)
        # every per-table array (state, caches, buffers): what state_dict() saves
        self._state_arrays = tuple(k for k in vars(self) if k not in before)
        self._rows = np.arange(self.num_envs)
        self._started = False

    # ------------------------------------------------------------------------------------------------
    def _allocate(self) -> None:
        """The whole state: one row per table. Seats are absolute unless the comment says relative
        (``rel = (seat - mano) % 4``); -1 means "none" wherever a seat, card or team is stored."""
        B = self.num_envs

        def z(shape: tuple[int, ...], dtype: Any, fill: int = 0) -> np.ndarray:
            return np.full((B, *shape), fill, dtype=dtype)

        self.game_seeds = z((), np.uint64)        # seed of the current episode
        self.episode = z((), np.int64)            # episodes started on this table (auto-reset count)
        self.hand_number = z((), np.int32)        # hands dealt in this episode, 0-based
        self.game_number = z((), np.int32)        # games (juegos) finished in this episode
        self.mano = z((), np.int8)                # absolute seat of the mano
        self.hands = z((4, 4), np.int8, -1)       # [b, seat, slot] card id in hand-slot order; -1 empty
        self.stock = z((NUM_CARDS,), np.int8, -1)  # [b, i] stock, next card at stock_pos; valid < stock_len
        self.stock_pos = z((), np.int16)
        self.stock_len = z((), np.int16)
        self.pile = z((NUM_CARDS,), bool)         # [b, card] card is in the discard pile
        self.round_disc = z((4, 4), np.int8, -1)  # [b, rel, slot] cards discarded this mus round; -1 none
        self.disc_count = z((4,), np.int8)        # [b, rel] cards discarded this mus round
        self.reshuffles = z((), np.int16)         # reshuffles so far in this hand
        self.mus_round = z((), np.int16)          # completed discard rounds in this hand
        self.disc_hist = z((DISCARD_ROUNDS, 4), np.int8)  # [b, j, seat] discards of the j-th latest round
        self.phase = z((), np.int8)               # Phase id of the pending decision
        self.rel = z((), np.int8)                 # relative seat to act
        self.legal = z((), np.int8)               # Legal id of the pending decision
        self.slot = z((), np.int8, -1)            # lance slot being declared or bet (0..3), -1 in mus phase
        self.ls_lance = z((4,), np.int8)          # [b, slot] lance id (slot 3: JUEGO or PUNTO)
        self.ls_outcome = z((4,), np.int8)        # [b, slot] Outcome id
        self.ls_stake = z((4,), np.int32)         # [b, slot] live/final stake; ORDAGO_STAKE (-1) for órdago
        self.ls_fallback = z((4,), np.int32)      # [b, slot] stones paid if the live stake is refused
        self.ls_bettor = z((4,), np.int8, -1)     # [b, slot] team of the last bettor/raiser
        self.ls_winner = z((4,), np.int8, -1)     # [b, slot] team known to have won the lance
        self.ls_last = z((4,), np.int8, -1)       # [b, slot] seat of the last bettor/raiser
        self.ls_said = z((4, 4), np.int8, -1)     # [b, slot, seat] speech category said last (-1 silent)
        self.ls_raised = z((4, 4), np.int32)      # [b, slot, seat] stones bet or raised
        self.elig = z((), np.int8)                # relative seats that may speak in the current lance, bit p = seat p
        self.resp = z((2,), np.int8, -1)          # [b, k] relative seats of responders r1, r2 (-1 none)
        self.resp_i = z((), np.int8)              # which responder is acting (0 = r1, 1 = r2)
        self.decl = z((2, 4), np.int8, -1)        # [b, pares/juego, seat] declared 1 yes / 0 no / -1 not yet
        self.strength = z((5, 4), np.int32)       # [b, lance, rel] higher wins (tables.strength, 31 real = 9)
        self.pares_b = z((4,), np.int8)           # [b, rel] pares bonus (0 = no pares)
        self.juego_b = z((4,), np.int8)           # [b, rel] juego bonus (0 = no juego)
        self.scores_ = z((2,), np.int32)          # [b, team] stones in the current game
        self.hand_stones = z((2,), np.int32)      # [b, team] stones in the current hand
        self.lance_stones = z((4, 2), np.int32)   # [b, slot, team] stones of the current hand per lance slot
        self.games_won = z((2,), np.int16)        # [b, team] games in the current vaca
        self.vacas_won = z((2,), np.int16)        # [b, team] vacas in the match
        self.showdown = z((), bool)               # the current hand's cards have been shown
        self.prev_shown = z((), bool)             # the previous hand's cards were shown
        self.prev_counts = z((4, 10), np.int8)    # [b, seat, rank-1] previous hand's final rank counts
        self.prev_stones = z((2,), np.int32)      # [b, team] stones of the previous hand
        self.todo = z((), np.int8)                # pending transition (_T_*), _T_NONE at a decision
        # Cache, not state: the observation of each of the 4 seats, updated where the state it encodes
        # changes (so observing is one row gather per table; the _DYN and _LREC columns, which change
        # nearly every step, are not kept here: _encode writes them).
        self._view = np.zeros((B, 4, OBS_DIM), dtype=np.float32)
        self._hkey = np.zeros((B, 4), dtype=np.int64)   # hand_keys of each seat's hand (rows of _hand_table)
        self._num_dirty = np.zeros(B, dtype=bool)   # the numbers block (_NUM) of _view needs a rewrite
        self.end_winner = z((), np.int8, -1)      # team winning the game in a pending _T_GAME_END
        self.end_ordago = z((), bool)             # that game end comes from an accepted órdago
        # per-step outputs
        self._rewards = np.zeros((B, 4), dtype=np.float32)
        self._finished = np.zeros(B, dtype=bool)
        self._winner = np.full(B, -1, dtype=np.int8)
        self._final_scores = np.zeros((B, 2), dtype=np.int32)
        self._hand_finished = np.zeros(B, dtype=bool)
        self._last_hand_stones = np.zeros((B, 2), dtype=np.int32)
        self._last_lance_stones = np.zeros((B, 4, 2), dtype=np.int32)

    def state_bytes(self) -> int:
        """Bytes of game state per table (every state array, per-step outputs excluded)."""
        total = sum(v.nbytes for k, v in vars(self).items()
                    if isinstance(v, np.ndarray) and not k.startswith("_") and v.shape[:1] == (self.num_envs,))
        return total // self.num_envs

    def cache_bytes(self) -> int:
        """Bytes per table of the observation caches (the per-seat observations and their helpers)."""
        return sum(getattr(self, k).nbytes for k in ("_view", "_hkey", "_num_dirty")) // self.num_envs

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue exactly where the engine is (training checkpoints).

        Returns:
            ``{"num_envs", "config", "reward", "seed", "started", "arrays": {name: ndarray copy}}``: plain
            values and numpy arrays (state, observation caches and output buffers), no objects.
        """
        return {"num_envs": self.num_envs, "config": self.config.to_dict(), "reward": self.reward_mode,
                "seed": int(self.seed), "started": bool(self._started),
                "arrays": {k: getattr(self, k).copy() for k in self._state_arrays}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned (the same ``num_envs``, config and reward mode).

        Raises:
            ValueError: the state belongs to another engine (size, config, reward mode) or an array is
                missing or has the wrong shape or dtype; the message names it, and nothing changes.
        """
        if not isinstance(state, dict) or "arrays" not in state:
            raise ValueError("not a VectorMusEnv state_dict (expected a dict with 'arrays')")
        for key, mine in (("num_envs", self.num_envs), ("config", self.config.to_dict()), ("reward", self.reward_mode)):
            if state.get(key) != mine:
                raise ValueError(f"VectorMusEnv state_dict: {key} is {state.get(key)!r}, this engine has {mine!r}")
        arrays = state["arrays"]
        for k in self._state_arrays:
            mine, theirs = getattr(self, k), arrays.get(k)
            if not isinstance(theirs, np.ndarray) or theirs.shape != mine.shape or theirs.dtype != mine.dtype:
                got = ("missing" if theirs is None
                       else f"{getattr(theirs, 'shape', '?')} {getattr(theirs, 'dtype', '?')}")
                raise ValueError(f"VectorMusEnv state_dict: array {k!r} should be {mine.shape} {mine.dtype}, got {got}")
        for k in self._state_arrays:
            getattr(self, k)[...] = arrays[k]
        self.seed = normalize_seed(int(state["seed"]))
        self._started = bool(state["started"])

    # ------------------------------------------------------------------------------------------------
    # public API
    @property
    def current_player(self) -> npt.NDArray[np.int8]:
        """``(B,)`` absolute seat whose view the last obs/mask are."""
        return ((self.mano + self.rel) % 4).astype(np.int8)

    @property
    def scores(self) -> npt.NDArray[np.int32]:
        """``(B, 2)`` stones of team 0 and team 1 in each table's current game (a copy)."""
        return self.scores_.copy()

    def reset(self, seed: int | None = None) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]:
        """Start a fresh episode on every table (deals from ``shuffle.table_seeds``).

        Returns:
            ``obs (B, OBS_DIM)`` float32 and ``mask (B, NUM_ACTIONS)`` int8 for each table's first player.
        """
        if seed is not None:
            self.seed = normalize_seed(seed)
        self.episode[:] = -1
        self._new_episode(self._rows)
        self._started = True
        return self._observe()

    def reset_from_decks(self, decks: npt.ArrayLike, mano: npt.ArrayLike, scores: npt.ArrayLike | None = None,
                         seeds: npt.ArrayLike | None = None) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]:
        """Start every table from a given first deal (duplicate tournaments, differential tests).

        Args:
            decks: ``(B, 40)`` permutations of the card ids, dealt as in ``MusGame.from_deck``.
            mano: ``(B,)`` absolute seat of each first hand's mano.
            scores: ``(B, 2)`` starting stones, each in ``0 .. target - 1``; zeros if None.
            seeds: ``(B,)`` non-negative game seeds for reshuffles and later hands; by default
                ``table_seeds(seed, i, episode)`` as for :meth:`reset`.

        Raises:
            ValueError: a bad shape, dtype or value (the message names the first bad table); nothing changes.
        """
        return self.reset_tables(self._rows, decks, mano, scores, seeds)

    def reset_tables(self, tables: npt.ArrayLike, decks: npt.ArrayLike, mano: npt.ArrayLike,
                     scores: npt.ArrayLike | None = None, seeds: npt.ArrayLike | None = None,
                     ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]:
        """Start a new episode on some tables from given deals; the other tables are untouched.

        Args:
            tables: ``(n,)`` distinct table indices.
            decks, mano, scores, seeds: as in :meth:`reset_from_decks`, with n rows.

        Returns:
            The observation and mask buffers, with the reset tables' rows refreshed.
        """
        t = np.asarray(tables)
        t = self._int_array("tables", t, (t.size,)) if t.size else np.zeros(0, dtype=np.int64)
        n = t.size
        if ((t < 0) | (t >= self.num_envs)).any() or np.unique(t).size != n:
            raise ValueError(f"tables must be distinct indices in 0..{self.num_envs - 1}, got {t.tolist()}")
        d = self._int_array("decks", decks, (n, NUM_CARDS))
        bad = np.flatnonzero((np.sort(d, axis=1) != np.arange(NUM_CARDS)).any(axis=1))
        if bad.size:
            raise ValueError(f"decks[{bad[0]}] is not a permutation of the 40 card ids 0..39 "
                             f"({bad.size} bad row(s)): {d[bad[0]].tolist()}")
        m = self._int_array("mano", mano, (n,))
        bad = np.flatnonzero((m < 0) | (m > 3))
        if bad.size:
            raise ValueError(f"mano[{bad[0]}] = {m[bad[0]]} is not a seat 0..3")
        s = np.zeros((n, 2), dtype=np.int64) if scores is None else self._int_array("scores", scores, (n, 2))
        bad = np.flatnonzero(((s < 0) | (s >= self.config.target)).any(axis=1))
        if bad.size:
            raise ValueError(
                f"scores[{bad[0]}] = {s[bad[0]].tolist()}: each score must be in 0..{self.config.target - 1}")
        if seeds is not None:
            sd = self._int_array("seeds", seeds, (n,))
            if (sd < 0).any():
                raise ValueError("seeds must be non-negative")
        if not self._started and n < self.num_envs:
            self.reset()                                    # the other tables need a game too
        if not self._started:
            self.episode[:] = -1
        self.episode[t] += 1
        self.game_seeds[t] = table_seeds(self.seed, t, self.episode[t]) if seeds is None else sd.astype(np.uint64)
        self._clear_episode(t)
        self.scores_[t] = s
        self._start_hands(t, d.astype(np.int8), m.astype(np.int8))
        if not self._started:
            self._started = True
            return self._observe()
        return self.observe(t)

    def step(self, actions: npt.ArrayLike) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8],
                                                     npt.NDArray[np.float32], npt.NDArray[np.bool_], dict]:
        """Apply one action per table for its current player.

        Args:
            actions: ``(B,)`` integer action ids, each legal for its table.

        Returns:
            ``obs (B, OBS_DIM)``, ``mask (B, NUM_ACTIONS)`` of the next player of each table; ``rewards
            (B, 4)`` float32 by absolute seat; ``done (B,)`` bool (episode finished, table auto-reset);
            ``info`` with ``finished``, ``winner`` (team, -1), ``final_scores`` (B, 2), ``hand_finished``,
            ``hand_stones`` (B, 2) and ``lance_stones`` (B, 4 slots, 2 teams) of hands that ended this step.
            ``obs`` and ``mask`` are the engine's buffers, overwritten by the next call: copy them to keep them.

        Raises:
            ValueError: bad shape or dtype, or an action illegal on some table (the message names the
                table, seat, phase and legal actions); nothing changes.
        """
        if not self._started:
            raise RuntimeError("call reset() or reset_from_decks() before step()")
        a = self._check_actions(actions)
        self._rewards.fill(0.0)
        self._finished.fill(False)
        self._winner.fill(-1)
        self._hand_finished.fill(False)
        self._step_rows(slice(0, self.num_envs), a)
        obs, mask = self._obs, self._mask
        info = {"finished": self._finished.copy(), "winner": self._winner.copy(),
                "final_scores": self._final_scores.copy(), "hand_finished": self._hand_finished.copy(),
                "hand_stones": self._last_hand_stones.copy(), "lance_stones": self._last_lance_stones.copy()}
        return obs, mask, self._rewards.copy(), self._finished.copy(), info

    def sample_actions(self, rng: np.random.Generator | int | None = None) -> npt.NDArray[np.int64]:
        """One uniformly random legal action per table, for its current player (random play, exploration).

        Args:
            rng: a ``numpy.random.Generator``, or a seed for one (None: fresh entropy).

        Returns:
            ``(B,)`` int64 action ids, legal for :meth:`step`.

        Example:
            >>> venv = VectorMusEnv(4, seed=0); _ = venv.reset()
            >>> actions = venv.sample_actions(np.random.default_rng(0))
            >>> bool(venv.observe()[1][np.arange(4), actions].all())
            True
        """
        if not self._started:
            raise RuntimeError("call reset() or reset_from_decks() before sample_actions()")
        if not (rng is None or isinstance(rng, (np.random.Generator, int, np.integer))) or isinstance(rng, bool):
            raise TypeError(f"rng must be a numpy.random.Generator, an int seed or None, got {type(rng).__name__}")
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        legal = self.legal.astype(np.int64)
        k = (gen.random(self.num_envs) * _LEGAL_COUNT[legal]).astype(np.int64)
        return _LEGAL_PAD.reshape(-1)[legal * _LEGAL_WIDTH + k]

    # ------------------------------------------------------------------------------------------------
    # validation
    @staticmethod
    def _int_array(name: str, value: npt.ArrayLike, shape: tuple[int, ...]) -> npt.NDArray[np.int64]:
        arr = np.asarray(value)
        if arr.shape != shape:
            raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
        if arr.dtype.kind not in "iu":
            raise ValueError(f"{name} must be an integer array, got dtype {arr.dtype}")
        return arr.astype(np.int64)

    def _check_actions(self, actions: npt.ArrayLike) -> npt.NDArray[np.int64]:
        a = self._int_array("actions", actions, (self.num_envs,))
        bad_range = (a < 0) | (a >= NUM_ACTIONS)
        ok = np.zeros(self.num_envs, dtype=bool)
        ok[~bad_range] = LEGAL_MASKS[self.legal[~bad_range], a[~bad_range]] == 1
        bad = np.flatnonzero(~ok)
        if bad.size:
            b = int(bad[0])
            act = int(a[b])
            what = (f"{act} ({action_to_string(act, self.config)})" if 0 <= act < NUM_ACTIONS
                    else f"{act} (out of range 0..{NUM_ACTIONS - 1})")
            legal = ", ".join(f"{x} {action_to_string(x, self.config)}" for x in LEGAL_SETS[self.legal[b]])
            raise ValueError(
                f"illegal action on {bad.size} table(s); first: table {b}, action {what} for seat "
                f"{int(self.current_player[b])} in phase {self._phase_name(b)}; legal actions: {legal}")
        return a

    def _phase_name(self, b: int) -> str:
        ph = int(self.phase[b])
        if ph in (Phase.BET_OPEN, Phase.BET_RESPOND, Phase.BET_CONFIRM):
            return f"{LANCE_NAMES[self.ls_lance[b, self.slot[b]]]}: {PHASE_NAMES[ph]}"
        if ph == Phase.DECLARE:
            return f"{'pares' if self.slot[b] == 2 else 'juego'}: declaration"
        return PHASE_NAMES[ph]

    # ------------------------------------------------------------------------------------------------
    # episodes and hands
    def _clear_episode(self, i: npt.NDArray[np.int64]) -> None:
        self.scores_[i] = 0
        self.games_won[i] = 0
        self.vacas_won[i] = 0
        self.hand_number[i] = 0
        self.game_number[i] = 0
        self.prev_shown[i] = False
        self.prev_counts[i] = 0
        self._view[i, :, _V_PREV:_V_PREV + 40] = 0.0
        self.prev_stones[i] = 0

    def _new_episode(self, i: npt.NDArray[np.int64], deal_now: bool = True) -> None:
        """A fresh episode on tables ``i`` from their next table seed (dealt now, or by a pending _T_DEAL)."""
        self.episode[i] += 1
        seeds = table_seeds(self.seed, i, self.episode[i])
        self.game_seeds[i] = seeds
        self._clear_episode(i)
        fm = self.config.first_mano
        self.mano[i] = first_mano(seeds) if fm == "random" else fm
        if deal_now:
            self._deal(i)
        else:
            self.todo[i] = _T_DEAL

    def _deal(self, i: npt.NDArray[np.int64]) -> None:
        """Deal hand ``hand_number`` of each table's game from its seed, with the mano already set."""
        self._start_hands(i, deal_decks(self.game_seeds[i], self.hand_number[i]), self.mano[i])

    def _start_hands(self, i: npt.NDArray[np.int64], decks: npt.NDArray[np.int8], mano: npt.NDArray[np.int8]) -> None:
        """Deal ``decks`` (n, 40) with ``mano`` (n,) and open the mus phase (RULES.md §2.5, §3.1)."""
        n = i.size
        self.mano[i] = mano
        by_rel = decks[:, :16].reshape(n, 4, 4).transpose(0, 2, 1)       # [k, rel, j]
        seats = (mano[:, None].astype(np.int64) + _AR4) % 4
        hands = np.empty((n, 4, 4), dtype=np.int8)
        hands[np.arange(n)[:, None], seats] = by_rel
        self.hands[i] = self._sorted_hands(hands)
        self.stock[i, :24] = decks[:, 16:]
        self.stock[i, 24:] = -1
        self.stock_pos[i] = 0
        self.stock_len[i] = 24
        self.pile[i] = False
        self.round_disc[i] = -1
        self.disc_count[i] = 0
        self.reshuffles[i] = 0
        self.mus_round[i] = 0
        self.disc_hist[i] = 0
        self.ls_lance[i] = (GRANDE, CHICA, PARES, JUEGO)
        self.ls_outcome[i] = Outcome.NOT_PLAYED
        self.ls_stake[i] = 0
        self.ls_fallback[i] = 0
        self.ls_bettor[i] = -1
        self.ls_winner[i] = -1
        self.ls_last[i] = -1
        self.ls_said[i] = -1
        self.ls_raised[i] = 0
        self.slot[i] = -1
        self.decl[i] = -1
        self._view[i, :, _V_BETTOR:_V_PREV] = 0.0
        self._view_hands(i)
        self.hand_stones[i] = 0
        self.lance_stones[i] = 0
        self.showdown[i] = False
        self.todo[i] = _T_NONE
        self.rel[i] = 0
        self._set_mus_call(i)
        self._num_dirty[i] = True

    def _sorted_hands(self, hands: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
        return self._slotcard[np.sort(self._slotpos[hands], axis=-1)]

    def _set_mus_call(self, i: npt.NDArray[np.int64]) -> None:
        self.phase[i] = Phase.MUS_CALL
        cap = self.config.max_mus_rounds
        if cap is None:
            self.legal[i] = Legal.MUS_CALL
        else:
            self.legal[i] = np.where(self.mus_round[i] >= cap, Legal.FORCED_NO_MUS, Legal.MUS_CALL)

    # ------------------------------------------------------------------------------------------------
    # mus phase (RULES.md §3)
    def _on_mus_call(self, i: npt.NDArray[np.int64], a: npt.NDArray[np.int64]) -> None:
        cut = a == _NO_MUS_A
        self.todo[i[cut]] = _T_BEGIN
        k = i[~cut]
        self.rel[k] += 1
        full = self.rel[k] == 4
        d = k[full]
        self.rel[d] = 0
        self.phase[d] = Phase.DISCARD
        self.legal[d] = self._discard_kind
        self.round_disc[d] = -1
        self.disc_count[d] = 0
        self._set_mus_call(k[~full])

    def _on_discard(self, i: npt.NDArray[np.int64], a: npt.NDArray[np.int64]) -> None:
        seat = (self.mano[i].astype(np.int64) + self.rel[i]) % 4
        rel = self.rel[i].astype(np.int64)
        hand = self.hands[i, seat]                                          # (n, 4)
        bits = ((a - (ENVIDO_BASE - 17))[:, None] >> _AR4) & 1 == 1         # DISCARD_m = 2 + m
        out = np.where(bits, hand, -1)
        rows = np.repeat(i, 4)[bits.ravel()]
        self.pile[rows, hand[bits]] = True
        self.round_disc[i, rel] = out
        self.disc_count[i, rel] = bits.sum(axis=1)
        self.hands[i, seat] = self._sorted_hands(np.where(bits, -1, hand).astype(np.int8))
        # (the discarder's cached view is not refreshed here: nobody observes it before the replacements)
        self.rel[i] += 1
        full = self.rel[i] == 4
        d = i[full]
        if d.size:
            self._serve(d)
            self.mus_round[d] += 1
            self.disc_hist[d, 1:] = self.disc_hist[d, :-1]
            rel_of_seat = (_AR4 - self.mano[d][:, None].astype(np.int64)) % 4
            self.disc_hist[d, 0] = np.take_along_axis(self.disc_count[d], rel_of_seat, axis=1)
            self._view_hands(d)
            dh = self.disc_hist[d][:, :, _ROT]                               # [n, j, observer, q]
            self._view[d, :, _V_DISC:_V_DISC + 4 * DISCARD_ROUNDS] = dh.transpose(0, 2, 1, 3).reshape(
                d.size, 4, -1) / 4.0
            self.rel[d] = 0
            self._set_mus_call(d)
            self._num_dirty[d] = True

    def _serve(self, d: npt.NDArray[np.int64]) -> None:
        """The postre serves S0..S3 their replacements, reshuffling when the stock runs out (§3.3, §3.4)."""
        need = self.disc_count[d].astype(np.int64)                         # (n, rel)
        pos = self.stock_pos[d].astype(np.int64)
        enough = need.sum(axis=1) <= self.stock_len[d] - pos
        f = d[enough]
        if f.size:                          # the stock covers everyone: all draws in one gather and scatter
            nf = need[enough]
            first = pos[enough][:, None] + np.cumsum(nf, axis=1) - nf       # stock position of each seat's 1st card
            t = _AR4[None, None, :]
            ok = t < nf[:, :, None]                                         # (n, rel, t)
            rows = np.broadcast_to(f[:, None, None], ok.shape)[ok]
            seats = np.broadcast_to(((self.mano[f].astype(np.int64)[:, None] + _AR4) % 4)[:, :, None], ok.shape)[ok]
            slots = (4 - nf[:, :, None] + t)[ok]
            self.hands[rows, seats, slots] = self.stock[rows, (first[:, :, None] + t)[ok]]
            self.stock_pos[f] = pos[enough] + nf.sum(axis=1)
            self.hands[f] = self._sorted_hands(self.hands[f])
        d = d[~enough]
        for p in range(4):
            need = self.disc_count[d, p].astype(np.int64)
            j = d[need > 0]
            if not j.size:
                continue
            need = need[need > 0]
            seat = (self.mano[j].astype(np.int64) + p) % 4
            have = 4 - need
            pos = self.stock_pos[j].astype(np.int64)
            left = self.stock_len[j].astype(np.int64) - pos
            take = np.minimum(need, left)
            for t in range(4):
                m = t < take
                if m.any():
                    jm = j[m]
                    self.hands[jm, seat[m], have[m] + t] = self.stock[jm, pos[m] + t]
            self.stock_pos[j] = pos + take
            short = need > take
            if short.any():
                r, rs = j[short], seat[short]
                got, rest = (have + take)[short], (need - take)[short]
                own = np.zeros((r.size, NUM_CARDS), dtype=bool)
                if self.config.exclude_own_discards:
                    disc = self.round_disc[r, p].astype(np.int64)
                    rr = np.repeat(np.arange(r.size), 4)
                    ok = disc.ravel() >= 0
                    own[rr[ok], disc.ravel()[ok]] = True
                cand = self.pile[r] & ~own
                keys = card_keys(self.game_seeds[r], STREAM_RESHUFFLE, self.hand_number[r], self.reshuffles[r])
                keys[~cand] = _U64_MAX
                order = np.argsort(keys, axis=1, kind="stable").astype(np.int8)
                count = cand.sum(axis=1)
                order[np.arange(NUM_CARDS)[None, :] >= count[:, None]] = -1
                self.stock[r] = order
                self.stock_len[r] = count
                self.pile[r] = own
                self.reshuffles[r] += 1
                for t in range(4):
                    m = t < rest
                    if m.any():
                        rm = r[m]
                        self.hands[rm, rs[m], got[m] + t] = self.stock[rm, t]
                self.stock_pos[r] = rest
            self.hands[j, seat] = self._sorted_hands(self.hands[j, seat])

    # ------------------------------------------------------------------------------------------------
    # lances (RULES.md §4)
    def _begin(self, i: npt.NDArray[np.int64]) -> None:
        """Evaluate the four hands (table lookups) and open grande."""
        t = self._t
        seats = (self.mano[i].astype(np.int64)[:, None] + _AR4) % 4
        cards = self.hands[i[:, None], seats]                               # (n, rel, 4)
        ranks = np.sort(self._rank_of_card[cards], axis=-1)
        idx = multiset_index(ranks)                                         # (n, rel)
        self.strength[i] = t.strength[:, idx].transpose(1, 0, 2)
        self.pares_b[i] = t.pares_bonus[idx]
        juego_b = t.juego_bonus[idx]
        if self.config.real31 != "off":
            real = is_real31(cards, self.config.real31, self.config.kings) & (t.juego_points[idx] == 31)
            if real.any():
                st = self.strength[i]
                st[:, JUEGO, :] = np.where(real, REAL31_JUEGO_RANK, st[:, JUEGO, :])
                self.strength[i] = st
                juego_b = np.where(real, 3, juego_b)
        self.juego_b[i] = juego_b
        self.todo[i] = _T_NONE
        self._open(i, 0, GRANDE, np.ones((i.size, 4), dtype=bool))

    def _open(self, i: npt.NDArray[np.int64], slot: int, lance: npt.ArrayLike, elig: npt.NDArray[np.bool_]) -> None:
        self.slot[i] = slot
        self.ls_lance[i, slot] = lance
        bits = (elig * (1 << _AR4)).sum(axis=1)
        self.elig[i] = bits
        self.rel[i] = _NEXT_ELIG[bits, 0]
        self.phase[i] = Phase.BET_OPEN
        self.legal[i] = Legal.OPEN
        self.todo[i] = _T_NONE

    def _after(self, i: npt.NDArray[np.int64]) -> None:
        """Move on from the lance slot that just closed."""
        sl = self.slot[i]
        self._open(i[sl == 0], 1, CHICA, np.ones(((sl == 0).sum(), 4), dtype=bool))
        for slot in (1, 2):
            j = i[sl == slot]
            if j.size:
                self.slot[j] = slot + 1
                self._declare(j, slot - 1)
        self.todo[i[sl == 3]] = _T_SHOWDOWN

    def _holders(self, i: npt.NDArray[np.int64], kind: int) -> npt.NDArray[np.bool_]:
        return (self.pares_b[i] if kind == 0 else self.juego_b[i]) > 0

    def _declare(self, i: npt.NDArray[np.int64], kind: int) -> None:
        """Forced declarations: kind 0 pares (slot 2), 1 juego (slot 3)."""
        has = self._holders(i, kind)
        if self.config.auto_declare:
            seats = (self.mano[i].astype(np.int64)[:, None] + _AR4) % 4
            self.decl[i[:, None], kind, seats] = has
            self._view_decl(i, kind, seats, has)
            self.todo[i] = _T_DECLARED
            return
        self.phase[i] = Phase.DECLARE
        self.rel[i] = 0
        self._set_declare_legal(i, kind, has[:, 0])
        self.todo[i] = _T_NONE

    @staticmethod
    def _declare_kind(kind: int, has: npt.NDArray[np.bool_]) -> npt.NDArray[np.int8]:
        si, no = (Legal.PARES_SI, Legal.PARES_NO) if kind == 0 else (Legal.JUEGO_SI, Legal.JUEGO_NO)
        return np.where(has, si, no).astype(np.int8)

    def _set_declare_legal(self, i: npt.NDArray[np.int64], kind: int, has: npt.NDArray[np.bool_]) -> None:
        self.legal[i] = self._declare_kind(kind, has)

    def _on_declare(self, i: npt.NDArray[np.int64], a: npt.NDArray[np.int64]) -> None:
        for kind in (0, 1):
            m = self.slot[i] == kind + 2
            j, aj = i[m], a[m]
            if not j.size:
                continue
            seat = (self.mano[j].astype(np.int64) + self.rel[j]) % 4
            self.decl[j, kind, seat] = aj == _SI[kind]
            self._view_decl(j, kind, seat, aj == _SI[kind])
            self.rel[j] += 1
            done = self.rel[j] == 4
            self.todo[j[done]] = _T_DECLARED
            k = j[~done]
            if k.size:
                has = self._holders(k, kind)
                self._set_declare_legal(k, kind, has[np.arange(k.size), self.rel[k].astype(np.int64)])

    def _declared(self, i: npt.NDArray[np.int64]) -> None:
        """After the declarations of slot 2 (pares) or 3 (juego): void, uncontested, punto or betting."""
        for slot in (2, 3):
            j = i[self.slot[i] == slot]
            if not j.size:
                continue
            holders = self._holders(j, slot - 2)
            team = (self.mano[j].astype(np.int64)[:, None] + _AR4) % 2
            t0 = (holders & (team == 0)).any(axis=1)
            t1 = (holders & (team == 1)).any(axis=1)
            nobody = ~(t0 | t1)
            contested = t0 & t1
            one = (t0 ^ t1)
            if slot == 3:
                p = j[nobody]
                self.ls_lance[p, 3] = PUNTO
                self._num_dirty[p] = True
                if self.config.punto:
                    self._open(p, 3, PUNTO, np.ones((p.size, 4), dtype=bool))
                else:
                    self.ls_outcome[p, 3] = Outcome.VOID
                    self.todo[p] = _T_AFTER
            else:
                self.ls_outcome[j[nobody], 2] = Outcome.VOID
                self.todo[j[nobody]] = _T_AFTER
            u = j[one]
            self.ls_outcome[u, slot] = Outcome.UNCONTESTED
            self.ls_winner[u, slot] = t1[one]
            self._view_team(u, "winner", np.full(u.size, slot), t1[one].astype(np.int64))
            self.todo[u] = _T_AFTER
            c = j[contested]
            if c.size:
                elig = holders[contested] if self.config.holders_only_speak else np.ones((c.size, 4), dtype=bool)
                self._open(c, slot, self.ls_lance[c, slot], elig)

    # ------------------------------------------------------------------------------------------------
    # betting (RULES.md §5)
    def _on_betting(self, i: npt.NDArray[np.int64], a: npt.NDArray[np.int64]) -> None:
        """Every betting decision (opening round, responses, partner confirmations) of tables ``i`` at once."""
        ph = self.phase[i]
        sl = self.slot[i].astype(np.int64)
        mano = self.mano[i].astype(np.int64)
        rel = self.rel[i].astype(np.int64)
        seat = (mano + rel) % 4
        said = _SPEECH[a]
        self.ls_said[i, sl, seat] = said
        bet = _IS_BET[a]                                        # opening bet, raise or órdago (see _bet)
        talk = ~bet
        self._view_speech(i[talk], sl[talk], seat[talk], said[talk])
        paso = a == _PASO_A                                     # opening round: next eligible seat, or en paso
        if paso.any():
            p = i[paso]
            nxt = _NEXT_ELIG[self.elig[p], rel[paso] + 1]
            more = nxt >= 0
            self.rel[p[more]] = nxt[more]
            e = p[~more]
            self.ls_outcome[e, sl[paso][~more]] = Outcome.EN_PASO
            self.todo[e] = _T_AFTER
        if bet.any():
            b, sb = i[bet], sl[bet]
            opening = ph[bet] == Phase.BET_OPEN
            stake = self.ls_stake[b, sb].astype(np.int64)
            self.ls_fallback[b, sb] = np.where(opening, 1, stake)
            self._bet(b, a[bet], np.where(opening, 0, stake), sb, rel[bet], seat[bet])
        has_r2 = (self.resp_i[i] == 0) & (self.resp[i, 1] >= 0) & (ph == Phase.BET_RESPOND)
        q = a == _QUIERO_A                                      # §5.4: r2 may confirm or upgrade r1's quiero
        if q.any():
            iq = i[q]
            confirm = has_r2[q] & (self.ls_stake[iq, sl[q]] != ORDAGO_STAKE) & self.config.partner_override
            c = iq[confirm]
            self.resp_i[c] = 1
            self.rel[c] = self.resp[c, 1]
            self.phase[c] = Phase.BET_CONFIRM
            self.legal[c] = Legal.CONFIRM
            self._accept(iq[~confirm])
        nq = a == _NO_QUIERO_A                                  # §5.4: r1's no quiero passes the word to r2
        if nq.any():
            inq = i[nq]
            h = has_r2[nq]
            r2 = inq[h]
            self.resp_i[r2] = 1
            self.rel[r2] = self.resp[r2, 1]
            self._refuse(inq[~h])

    def _bet(self, i: npt.NDArray[np.int64], a: npt.NDArray[np.int64], stake_before: npt.NDArray[np.int64],
             sl: npt.NDArray[np.int64], rel: npt.NDArray[np.int64], seat: npt.NDArray[np.int64]) -> None:
        """An opening bet, raise or órdago by ``seat``; the other team's responders answer (§5.3)."""
        ordago = a == _ORDAGO_A
        amount = self._bet_amount[a]
        self.ls_stake[i, sl] = np.where(ordago, ORDAGO_STAKE, stake_before + amount)
        self.ls_raised[i, sl, seat] += amount
        self.ls_last[i, sl] = seat
        bettor = seat % 2
        self.ls_bettor[i, sl] = bettor
        self._view_bet(i, sl, seat, ordago, self.ls_raised[i, sl, seat] / STAKE_SCALE)
        resp = _RESPONDERS[self.elig[i], rel]                                   # (n, 2)
        self.resp[i] = resp
        self.resp_i[i] = 0
        self.rel[i] = resp[:, 0]
        self.phase[i] = Phase.BET_RESPOND
        self.legal[i] = np.where(ordago, Legal.RESPOND_ORDAGO, Legal.RESPOND)

    def _accept(self, i: npt.NDArray[np.int64]) -> None:
        if not i.size:
            return
        sl = self.slot[i].astype(np.int64)
        ordago = self.ls_stake[i, sl] == ORDAGO_STAKE
        n = i[~ordago]
        self.ls_outcome[n, sl[~ordago]] = Outcome.ACCEPTED
        self.todo[n] = _T_AFTER
        o = i[ordago]
        if o.size:
            so = sl[ordago]
            self.ls_outcome[o, so] = Outcome.ORDAGO
            win = (self._lance_winner(o, self.ls_lance[o, so].astype(np.int64)) + self.mano[o]) % 2
            self.ls_winner[o, so] = win
            self.showdown[o] = True
            self._end_game(o, win, by_ordago=True)

    def _refuse(self, i: npt.NDArray[np.int64]) -> None:
        if not i.size:
            return
        sl = self.slot[i].astype(np.int64)
        bettor = self.ls_bettor[i, sl].astype(np.int64)
        self.ls_outcome[i, sl] = Outcome.REFUSED
        self.ls_winner[i, sl] = bettor
        self._view_team(i, "winner", sl, bettor)
        reached = self._add_stones(i, bettor, self.ls_fallback[i, sl], sl)
        self._num_dirty[i] = True
        self._end_game(i[reached], bettor[reached], by_ordago=False)
        self.todo[i[~reached]] = _T_AFTER

    # ------------------------------------------------------------------------------------------------
    # scoring (RULES.md §6)
    def _add_stones(self, i: npt.NDArray[np.int64], team: npt.NDArray[np.int64],
                    stones: npt.NDArray[np.int64], slot: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Add stones won in lance ``slot``; True where the team reached the target (§6.1)."""
        self.scores_[i, team] += stones
        self.hand_stones[i, team] += stones
        self.lance_stones[i, slot, team] += stones
        return self.scores_[i, team] >= self.config.target

    def _lance_winner(self, i: npt.NDArray[np.int64], lance: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Relative seat with the best eligible hand for ``lance`` (``(n,)`` or ``(n, k)`` lances per table;
        the mano wins ties: first argmax)."""
        ax = (slice(None),) + (None,) * (lance.ndim - 1)
        s = self.strength[i[ax], lance]                                     # (n, [k,] 4)
        elig = np.where((lance == PARES)[..., None], (self.pares_b[i] > 0)[ax],
                        np.where((lance == JUEGO)[..., None], (self.juego_b[i] > 0)[ax], True))
        return np.argmax(np.where(elig, s, -1), axis=-1)

    def _showdown(self, i: npt.NDArray[np.int64]) -> None:
        """Count the four lances in order, checking the target after each (§6.2); all slots at once: the
        count stops at the first slot after which a team has reached the target."""
        n = i.size
        self.showdown[i] = True
        out = self.ls_outcome[i]                                            # (n, slot)
        lance = self.ls_lance[i].astype(np.int64)
        mano = self.mano[i].astype(np.int64)
        fixed = (out == Outcome.REFUSED) | (out == Outcome.UNCONTESTED)
        compared = (self._lance_winner(i, lance) + mano[:, None]) % 2
        team = np.where(fixed, self.ls_winner[i], compared).astype(np.int64)   # (n, slot)
        counted = out != Outcome.VOID
        base = np.where(out == Outcome.ACCEPTED, self.ls_stake[i],
                        np.where((out == Outcome.EN_PASO) & (lance <= CHICA), 1, 0))
        same_team = (mano[:, None, None] + _AR4) % 2 == team[:, :, None]     # (n, slot, rel)
        bonus = np.where(lance == PARES, (self.pares_b[i][:, None, :] * same_team).sum(axis=2),
                         np.where(lance == JUEGO, (self.juego_b[i][:, None, :] * same_team).sum(axis=2),
                                  np.where(lance == PUNTO, 1, 0)))
        total = np.where(counted, base + bonus, 0)
        gain = np.stack([np.where(team == 0, total, 0), np.where(team == 1, total, 0)], axis=2)  # (n, slot, team)
        running = self.scores_[i][:, None, :] + np.cumsum(gain, axis=1)
        reach = (running >= self.config.target).any(axis=2)                 # (n, slot)
        reached = reach.any(axis=1)
        last = np.where(reached, np.argmax(reach, axis=1), 3)               # last slot counted
        applied = _AR4 <= last[:, None]
        gain *= applied[:, :, None]
        won = gain.sum(axis=1)
        self.scores_[i] += won
        self.hand_stones[i] += won
        self.lance_stones[i] += gain
        record = counted & ~fixed & applied
        self.ls_winner[i] = np.where(record, team, self.ls_winner[i])
        r = i[reached]
        self._end_game(r, team[np.arange(n)[reached], last[reached]], by_ordago=False)
        self.todo[i[~reached]] = _T_HAND_END

    # ------------------------------------------------------------------------------------------------
    # hands, games, vacas (RULES.md §7)
    def _end_game(self, i: npt.NDArray[np.int64], team: npt.NDArray[np.int64], by_ordago: bool) -> None:
        self.todo[i] = _T_GAME_END
        self.end_winner[i] = team
        self.end_ordago[i] = by_ordago

    def _finish_hand(self, i: npt.NDArray[np.int64]) -> None:
        """Remember the hand for the next observation (shown cards, stones) and pay stone rewards."""
        self.prev_shown[i] = self.showdown[i]
        counts = self._rank_counts[self._hkey[i]]                            # (n, seat, 10)
        self.prev_counts[i] = np.where(self.showdown[i][:, None, None], counts, 0)
        self._view[i, :, _V_PREV:_V_PREV + 40] = self.prev_counts[i][:, _ROT].reshape(i.size, 4, 40)
        hs = self.hand_stones[i]
        self.prev_stones[i] = hs
        self._hand_finished[i] = True
        self._last_hand_stones[i] = hs
        self._last_lance_stones[i] = self.lance_stones[i]
        if self.reward_mode == "stones":
            diff = (hs[:, 0] - hs[:, 1]).astype(np.float32)
            self._rewards[i] = diff[:, None] * np.array([1, -1, 1, -1], dtype=np.float32)

    def _next_hand(self, i: npt.NDArray[np.int64]) -> None:
        """Rotate the mano and leave the deal of the next hand pending (one batched deal per round)."""
        self.hand_number[i] += 1
        self.mano[i] = (self.mano[i] + 1) % 4
        self.todo[i] = _T_DEAL

    def _hand_end(self, i: npt.NDArray[np.int64]) -> None:
        self._finish_hand(i)
        self._next_hand(i)

    def _game_end(self, i: npt.NDArray[np.int64]) -> None:
        cfg = self.config
        self._finish_hand(i)
        w = self.end_winner[i].astype(np.int64)
        if self.reward_mode == "stones":                # an accepted órdago is worth the stones still lacking
            o = self.end_ordago[i]
            lacking = np.maximum(cfg.target - self.scores_[i[o], w[o]], 0)
            signed = np.where(w[o] == 0, lacking, -lacking).astype(np.float32)
            self._rewards[i[o]] += signed[:, None] * np.array([1, -1, 1, -1], dtype=np.float32)
        self.games_won[i, w] += 1
        vaca = self.games_won[i, w] >= cfg.juegos_to_win_vaca
        v = i[vaca]
        self.vacas_won[v, w[vaca]] += 1
        self.games_won[v] = 0
        match = np.zeros(i.size, dtype=bool)
        match[vaca] = self.vacas_won[v, w[vaca]] >= cfg.vacas_to_win_match
        m = i[match]
        if m.size:
            wm = w[match]
            self._finished[m] = True
            self._winner[m] = wm
            self._final_scores[m] = self.scores_[m]
            if self.reward_mode == "game":
                sign = np.where(wm == 0, 1.0, -1.0).astype(np.float32)
                self._rewards[m] = sign[:, None] * np.array([1, -1, 1, -1], dtype=np.float32)
            self._new_episode(m, deal_now=False)
        g = i[~match]
        if g.size:
            self.game_number[g] += 1
            self.scores_[g] = 0
            self._next_hand(g)

    def _advance(self, rows: slice) -> None:
        """Run pending transitions of tables ``rows`` until each waits for a decision (bounded rounds)."""
        # Transitions only move forward through the hand, so this order settles nearly every table in one
        # pass: a lance closing at chica can run declare pares, (void/uncontested) declare juego, showdown,
        # next deal.
        handlers = ((_T_BEGIN, self._begin), (_T_AFTER, self._after), (_T_DECLARED, self._declared),
                    (_T_AFTER, self._after), (_T_DECLARED, self._declared), (_T_AFTER, self._after),
                    (_T_SHOWDOWN, self._showdown), (_T_GAME_END, self._game_end), (_T_HAND_END, self._hand_end),
                    (_T_DEAL, self._deal))
        pending = np.flatnonzero(self.todo[rows]) + rows.start   # transitions never start on other tables
        for _ in range(32):
            if not pending.size:
                return
            for code, handler in handlers:
                i = pending[self.todo[pending] == code]
                if i.size:
                    handler(i)
            pending = pending[self.todo[pending] != _T_NONE]
        raise RuntimeError("VectorMusEnv: transitions did not settle (engine bug)")

    def _step_rows(self, rows: slice, a: npt.NDArray[np.int64]) -> None:
        """The whole step for the tables of ``rows`` (a contiguous slice)."""
        ph = self.phase[rows].copy()
        for phase, handler in ((Phase.MUS_CALL, self._on_mus_call), (Phase.DISCARD, self._on_discard),
                               (Phase.DECLARE, self._on_declare), (Phase.BET_OPEN, self._on_betting)):
            i = np.flatnonzero(ph >= Phase.BET_OPEN) if phase == Phase.BET_OPEN else np.flatnonzero(ph == phase)
            if i.size:
                i += rows.start
                handler(i, a[i])
        self._advance(rows)
        self._encode(rows, self._obs[rows])
        np.take(LEGAL_MASKS, self.legal[rows], axis=0, out=self._mask[rows])

    # ------------------------------------------------------------------------------------------------
    # observation (mirrors observation.encode exactly; see tests/test_vector.py)
    # ------------------------------------------------------------------------------------------------
    # the per-observer cache (self._view): one writer per kind of change
    def _view_hands(self, i: npt.NDArray[np.int64]) -> None:
        """Own-hand pieces of every seat of tables ``i`` (after a deal or the replacements)."""
        keys = full_hand_keys(self.hands[i].reshape(-1, 4)).reshape(i.size, 4)   # hands are full here
        self._hkey[i] = keys
        self._view[i, :, :_HAND_COLS] = self._hand_table[keys]

    def _view_write(self, i: npt.NDArray[np.int64], table: str, code: npt.ArrayLike,
                    values: npt.ArrayLike) -> None:
        """Scatter ``values`` into the cells ``_VIX[table + "_idx"][code]`` of tables ``i`` (all observers);
        ``code`` is ``(n,)`` or ``(n, k)`` (k events per table)."""
        idx = np.take(_VIX[table + "_idx"], code, axis=0)
        idx += (i * (4 * OBS_DIM)).reshape((-1,) + (1,) * (idx.ndim - 1))
        self._view.reshape(-1)[idx] = values

    def _view_speech(self, i: npt.NDArray[np.int64], slot: npt.NDArray[np.int64], seat: npt.NDArray[np.int64],
                     cat: npt.NDArray[np.int8]) -> None:
        """Seat ``seat`` said ``cat`` in lance ``slot``: its speech one-hot as each observer sees it."""
        self._view_write(i, "speech", slot * 4 + seat, np.take(_VIX["speech_val"], cat, axis=0))

    def _view_bet(self, i: npt.NDArray[np.int64], slot: npt.NDArray[np.int64], seat: npt.NDArray[np.int64],
                  ordago: npt.NDArray[np.bool_], raised: npt.NDArray[np.float64]) -> None:
        """Seat ``seat`` bet or raised (or went órdago) in lance ``slot``, having raised ``raised`` in all:
        its speech, the last bettor and its team, and its raised amount, in one write."""
        val = np.empty((i.size, _VIX["bet_idx"].shape[1]), dtype=np.float32)
        nv = _VIX["bet_val"].shape[1]
        np.take(_VIX["bet_val"], seat * 2 + ordago, axis=0, out=val[:, :nv])
        val[:, nv:] = raised[:, None]
        self._view_write(i, "bet", slot * 4 + seat, val)

    def _view_team(self, i: npt.NDArray[np.int64], piece: str, slot: npt.NDArray[np.int64],
                   team: npt.NDArray[np.int64]) -> None:
        """The team-relative pair (own, other) of lance ``slot`` in ``piece`` ("bettor" or "winner")."""
        self._view_write(i, piece, slot, np.take(_VIX["team_val"], team, axis=0))

    def _view_decl(self, i: npt.NDArray[np.int64], kind: int, seat: npt.NDArray[np.int64],
                   yes: npt.NDArray[np.bool_]) -> None:
        """Seat ``seat`` declared ``yes`` for pares (kind 0) or juego (kind 1); ``seat``/``yes`` (n,) or (n, k)."""
        self._view_write(i, "decl", (kind * 4 + seat) * 2 + yes, 1.0)

    def _flush_numbers(self) -> None:
        """Rewrite the numbers block of the tables marked dirty this step (one batched write)."""
        d = np.flatnonzero(self._num_dirty)
        if d.size:
            self._num_dirty[d] = False
            self._view_numbers(d)

    def _view_numbers(self, i: npt.NDArray[np.int64]) -> None:
        """Rewrite the numeric tail (punto .. prev_stones) of tables ``i`` for every observer."""
        if not i.size:
            return
        n = i.size
        target = self.config.target
        val = np.empty((n, 2, _NUM.stop - _NUM.start), dtype=np.float32)   # [b, observer team, column]
        r = {name: slice(sl.start - _NUM.start, sl.stop - _NUM.start) for name, sl in OFFSETS.items()
             if sl.start >= _NUM.start}
        val[:, :, r["punto"]] = (self.ls_lance[i, 3] == PUNTO)[:, None, None]
        val[:, :, r["mus_rounds"]] = (self.mus_round[i] / ROUNDS_SCALE)[:, None, None]
        val[:, :, r["target"]] = target / TARGET_SCALE
        val[:, :, r["prev_shown"]] = self.prev_shown[i][:, None, None]
        for name, arr, scale in (("hand_stones", self.hand_stones, target), ("scores", self.scores_, target),
                                 ("games_won", self.games_won, 1), ("vacas_won", self.vacas_won, 1),
                                 ("prev_stones", self.prev_stones, target)):
            v = arr[i] / scale if scale != 1 else arr[i]
            val[:, :, r[name]] = v[:, _TEAM_ORDER]                                  # [b, me, own/other]
        self._view[i, :, _NUM] = val[:, _OBSERVERS & 1]

    def _observe(self) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]:
        """Observation and mask of every table's acting seat, written into the preallocated buffers."""
        self._encode(slice(None), self._obs)
        np.take(LEGAL_MASKS, self.legal, axis=0, out=self._mask)
        return self._obs, self._mask

    def observe(self, tables: npt.ArrayLike | None = None) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]:
        """Refresh (all, or the given ``tables``) rows of the observation and mask buffers and return them."""
        if tables is None:
            return self._observe()
        i = np.asarray(tables, dtype=np.int64)
        if i.size:
            self._obs[i] = self._encode(i, np.empty((i.size, OBS_DIM), dtype=np.float32))
            self._mask[i] = LEGAL_MASKS[self.legal[i]]
        return self._obs, self._mask

    def _encode(self, i: slice | npt.NDArray[np.int64], obs: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Write the acting seat's observation of tables ``i`` (a slice or index array) into ``obs``.

        One row gather from the per-seat cache ``self._view``, then the dynamic pieces (mano, acting, phase,
        lance, responder: one row of ``self._dyn_table``) and the lance record, assembled densely and written
        once. Mirrors ``observation.encode``.
        """
        self._flush_numbers()
        tables = self._rows[i]
        rel = self.rel[i].astype(np.int64)
        seat = (self.mano[i] + rel) & 3
        np.take(self._view.reshape(-1, OBS_DIM), tables * 4 + seat, axis=0, out=obs, mode="clip")
        slot = self.slot[i].astype(np.int64)
        code = (self.phase[i] * 5 + slot + 1) * 2 + self.resp_i[i]
        code = (code * 2 + (self.ls_lance[i, 3] == PUNTO)) * 4 + rel
        # the dynamic pieces and the lance record are adjacent: assembled densely, written once
        stake = self.ls_stake[i]
        rec = np.empty((stake.shape[0], _LREC.stop - _DYN.start), dtype=np.float32)
        d, st = _DYN.stop - _DYN.start, _LREC_STAKE + _DYN.stop - _DYN.start
        rec[:, :d] = self._dyn_table[code]
        rec[:, d:st] = np.take(_OUTCOME_ONEHOT, self.ls_outcome[i], axis=0).reshape(-1, 4 * NUM_OUTCOMES)
        rec[:, st:st + 4] = np.maximum(stake, 0) / STAKE_SCALE
        rec[:, st + 4:st + 8] = stake == ORDAGO_STAKE
        rec[:, st + 8:] = self.ls_fallback[i] / STAKE_SCALE
        obs[:, _DYN.start:_LREC.stop] = rec
        return obs

    def close(self) -> None:
        """Nothing to release (kept for the usual env interface)."""

    # ------------------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"VectorMusEnv(num_envs={self.num_envs}, config={self.config!r}, reward={self.reward_mode!r})"
