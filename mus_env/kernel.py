"""The batched engine's per-table kernel: the rules of :mod:`mus_env.game`, compiled with numba.

:class:`~mus_env.vector.VectorMusEnv` keeps every table's state in one row of a numpy structured array
(:data:`STATE_FIELDS`, the one place where the state is documented) and steps all tables in one compiled
pass (:func:`step_tables`, ``prange`` over the tables; each table touches only its own row, so results
are identical whatever the number of threads). Inside a table the code reads like ``MusGame``: the
functions below carry the names of its handlers (``on_mus_call``, ``on_discard``,
``serve_replacements``, ``begin_lances``, ``open_lance``, ``after_lance``, ``declare``, ``on_declare``,
``start_declared_lance``, ``on_open``, ``bet``, ``on_respond``, ``on_confirm``, ``accept``, ``refuse``,
``add_stones``, ``lance_winner``, ``do_showdown``, ``finish_hand``, ``next_hand``, ``end_game``) and do
the same thing on the row, with the same arguments less ``self`` (the row ``st``, its step outputs ``out``
and the read-only rules ``R``). Seats inside a hand are relative to the mano (``rel = (seat - mano) % 4``) as
in RULES.md; stored seats are absolute unless the field's meaning says "relative".

As in ``MusGame``, a finished episode leaves the table at its game-over state (:func:`end_game`); the
stepping loop (:func:`step_table`) then starts the table's next episode (:func:`new_episode`) unless the
rules keep finished tables over (``make_rules(..., keep_over=True)``, ``VectorMusEnv(auto_reset=False)``).

Randomness is :mod:`mus_env.shuffle` re-expressed for numba (:func:`event_hash`, :func:`deal_deck`,
:func:`reshuffle`): bit-identical SplitMix64 hashes of (seed, event), so a table and a ``MusGame`` with
the same seed deal and reshuffle the same cards (``tests/test_vector.py`` holds the engines equal).

The observation of a seat is written straight into the output row by :func:`encode`, a transcription
of ``MusGame._encode`` (the pieces of :mod:`mus_env.observation`); nothing is cached per seat.

Señas (RULES.md §8, :mod:`mus_env.signals`), only with ``MusConfig(signals="truthful" or "free")``: a sign
window (:func:`open_window`) opens when a hand starts, after each discard round's replacements (before the
next mus call) and when the mus is cut (before grande). In it relative seats 0..3 make one
``Phase.SIGNAL`` decision each (:func:`on_sign`; the Legal set is ``Legal.NONE`` and the legal tokens,
:func:`pending_sign_bits`, are computed from the signer's hand and the window's kind), then the game goes
on as without the window. The tokens of the latest mus window and of the grande window are kept per
absolute seat (``sig_mus``, ``sig_grande``); the window counter of :func:`mus_env.signals.intercept_uniform`
is not stored: the latest mus window's is ``mus_round`` and the grande window's ``mus_round + 1``
(``mus_round`` changes only when a discard round ends, which opens a new mus window). With signals off no
window opens, the sign fields stay at -1, and every observation, mask and game is as before.

Everything here is compiled on first use and cached on disk (``cache=True``: ``__pycache__`` beside this
file, or ``NUMBA_CACHE_DIR``), so only the first import after an install pays the compile.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit, prange

from .actions import DISCARD_BASE, ENVIDO_BASE, NUM_ACTIONS, NUM_SIGNS, SIGNAL_BASE, Action, Sign
from .cards import NUM_CARDS, card_number, slot_positions, value_table
from .config import REAL31_CHOICES, SIGNALS_CHOICES, MusConfig
from .observation import DISCARD_ROUNDS, OBS_DIM, OFFSETS, ROUNDS_SCALE, STAKE_SCALE, TARGET_SCALE, speech_of
from .phases import LEGAL_MASKS, LEGAL_SETS, NUM_OUTCOMES, ORDAGO_STAKE, Legal, Outcome, Phase
from .shuffle import (
    SPLITMIX_GOLDEN,
    SPLITMIX_M1,
    SPLITMIX_M2,
    STREAM_DEAL,
    STREAM_MANO,
    STREAM_RESHUFFLE,
    STREAM_SIGNAL,
    STREAM_TABLE,
)
from .signals import ALL_SIGNS, SIGNAL_OFFSETS, WINDOW_GRANDE, WINDOW_MUS, hand_sign_bits
from .tables import CHICA, GRANDE, JUEGO, PARES, PUNTO, REAL31_JUEGO_RANK, get_tables

__all__ = ["STATE_FIELDS", "STATE_DTYPE", "OUT_FIELDS", "OUT_DTYPE", "RULES_FIELDS", "RULES_DTYPE", "Rules",
           "make_rules", "step_tables", "step_rows", "step_subset", "first_bad_table", "reset_tables", "new_episodes",
           "observe_tables", "state_rows", "sample_legal", "legal_masks", "intercept_uniform", "legal_sign_bits"]

# ---------------------------------------------------------------------------------------------------
# The state of one table: one row of a structured array. (name, dtype, shape, meaning)
STATE_FIELDS: tuple[tuple[str, str, tuple[int, ...], str], ...] = (
    ("game_seeds", "u8", (), "seed of the current episode (MusGame(config, seed) plays the same game)"),
    ("episode", "i8", (), "episodes started on this table (auto-reset count)"),
    ("hand_number", "i4", (), "hands dealt in this episode, 0-based"),
    ("game_number", "i4", (), "games (juegos) finished in this episode"),
    ("mano", "i1", (), "absolute seat of the mano"),
    ("hands", "i1", (4, 4), "[seat, slot] card id in hand-slot order; -1 empty (sorted last)"),
    ("stock", "i1", (NUM_CARDS,), "the stock; the next card is stock[stock_pos]; valid below stock_len"),
    ("stock_pos", "i1", (), "next card of the stock"),
    ("stock_len", "i1", (), "cards in the stock"),
    ("pile", "u1", (NUM_CARDS,), "[card] 1: the card is in the discard pile"),
    ("round_disc", "i1", (4, 4), "[rel, slot] card discarded from that slot this mus round; -1 none"),
    ("disc_count", "i1", (4,), "[rel] cards discarded this mus round"),
    ("reshuffles", "i2", (), "reshuffles of the discard pile so far in this hand"),
    ("mus_round", "i2", (), "completed discard rounds in this hand"),
    ("disc_hist", "i1", (DISCARD_ROUNDS, 4), "[j, seat] discards of the j-th latest mus round"),
    ("phase", "i1", (), "Phase of the pending decision"),
    ("rel", "i1", (), "relative seat to act"),
    ("legal", "i1", (), "Legal set of the pending decision (row of phases.LEGAL_MASKS)"),
    ("slot", "i1", (), "lance slot being declared or bet (0..3), -1 in the mus phase"),
    ("ls_lance", "i1", (4,), "[slot] lance id (slot 3: JUEGO, or PUNTO when nobody holds juego)"),
    ("ls_outcome", "i1", (4,), "[slot] Outcome id"),
    ("ls_stake", "i4", (4,), "[slot] live or final stake; ORDAGO_STAKE (-1) for an órdago"),
    ("ls_fallback", "i4", (4,), "[slot] stones the bettor's team gets if the live stake is refused"),
    ("ls_bettor", "i1", (4,), "[slot] team of the last bettor or raiser; -1 before any bet"),
    ("ls_winner", "i1", (4,), "[slot] team known to have won the lance; -1 unknown"),
    ("ls_last", "i1", (4,), "[slot] absolute seat of the last bettor or raiser; -1"),
    ("ls_said", "i1", (4, 4), "[slot, seat] speech category said last (observation.SPEECH_NAMES); -1 silent"),
    ("ls_raised", "i4", (4, 4), "[slot, seat] stones bet or raised in all"),
    ("elig", "i1", (), "relative seats that may speak in the current lance, bit p = relative seat p"),
    ("resp", "i1", (2,), "relative seats of the responders r1, r2 (RULES.md §5.3); -1 none"),
    ("resp_i", "i1", (), "which responder is acting (0 = r1, 1 = r2)"),
    ("decl", "i1", (2, 4), "[pares/juego, seat] declared 1 yes, 0 no, -1 not yet"),
    ("strength", "i4", (5, 4), "[lance, rel] higher wins (tables.strength; 31 real = REAL31_JUEGO_RANK)"),
    ("pares_b", "i1", (4,), "[rel] pares bonus (0 = no pares)"),
    ("juego_b", "i1", (4,), "[rel] juego bonus (0 = no juego)"),
    ("scores", "i4", (2,), "[team] stones in the current game"),
    ("hand_stones", "i4", (2,), "[team] stones won in the current hand"),
    ("lance_stones", "i4", (4, 2), "[slot, team] stones of the current hand per lance slot"),
    # señas (signals on only; with signals off they stay -1). The legal tokens of a sign decision are not
    # stored: they are legal_sign_bits of the signer's hand and the window's kind.
    ("sig_mus", "i1", (4,), "[seat] token signed in the latest mus window of this hand; -1 none (cleared when a "
                            "hand starts and when a mus window opens; its window counter is mus_round)"),
    ("sig_grande", "i1", (4,), "[seat] token signed in the grande window of this hand; -1 none (cleared when a "
                               "hand starts; its window counter is mus_round + 1)"),
    ("sig_window", "i1", (), "kind of the window of the pending sign decision (signals.WINDOW_MUS or "
                             "WINDOW_GRANDE); -1 when no sign decision is pending"),
    ("games_won", "i2", (2,), "[team] games won in the current vaca"),
    ("vacas_won", "i2", (2,), "[team] vacas won in the match"),
    ("showdown", "b1", (), "the current hand's cards have been shown (count or accepted órdago)"),
    ("prev_shown", "b1", (), "the previous hand's cards were shown"),
    ("prev_counts", "i1", (4, 10), "[seat, rank - 1] previous hand's final rank counts (zeros if not shown)"),
    ("prev_stones", "i4", (2,), "[team] stones won in the previous hand"),
)
STATE_DTYPE = np.dtype([(name, dt, shape) for name, dt, shape, _ in STATE_FIELDS], align=True)
# A row is 512 bytes, 8 cache lines (the order and the int8 stock counters keep it so: 528-byte rows, not
# aligned to cache lines, made every step about 4 % slower).
assert STATE_DTYPE.itemsize == 512, STATE_DTYPE.itemsize

# What a step reports per table (the info dict of VectorMusEnv.step).
OUT_FIELDS: tuple[tuple[str, str, tuple[int, ...], str], ...] = (
    ("rewards", "f4", (4,), "reward of each absolute seat this step"),
    ("finished", "b1", (), "the episode ended this step (the table was reset, or waits at game over when kept over)"),
    ("winner", "i1", (), "team that won the finished episode; -1"),
    ("final_scores", "i4", (2,), "scores of the finished episode's last game"),
    ("hand_finished", "b1", (), "a hand ended this step"),
    ("hand_stones", "i4", (2,), "stones of the last finished hand, per team"),
    ("lance_stones", "i4", (4, 2), "stones of the last finished hand per lance slot and team"),
)
OUT_DTYPE = np.dtype([(name, dt, shape) for name, dt, shape, _ in OUT_FIELDS], align=True)

# ---------------------------------------------------------------------------------------------------
# Constants (module-level ints are compile-time constants for numba).
MUS_CALL, DISCARD, DECLARE, BET_OPEN = Phase.MUS_CALL, Phase.DISCARD, Phase.DECLARE, Phase.BET_OPEN
BET_RESPOND, BET_CONFIRM, GAME_OVER, SIGNAL = Phase.BET_RESPOND, Phase.BET_CONFIRM, Phase.GAME_OVER, Phase.SIGNAL
L_MUS_CALL, L_FORCED_NO_MUS, L_OPEN = Legal.MUS_CALL, Legal.FORCED_NO_MUS, Legal.OPEN
L_RESPOND, L_RESPOND_ORDAGO, L_CONFIRM = Legal.RESPOND, Legal.RESPOND_ORDAGO, Legal.CONFIRM
L_RESPOND_CAPPED, L_CONFIRM_CAPPED = Legal.RESPOND_CAPPED, Legal.CONFIRM_CAPPED
L_PARES_SI, L_PARES_NO, L_JUEGO_SI, L_JUEGO_NO = Legal.PARES_SI, Legal.PARES_NO, Legal.JUEGO_SI, Legal.JUEGO_NO
NOT_PLAYED, VOID, UNCONTESTED, EN_PASO = Outcome.NOT_PLAYED, Outcome.VOID, Outcome.UNCONTESTED, Outcome.EN_PASO
ACCEPTED, REFUSED, ORDAGO_OUT = Outcome.ACCEPTED, Outcome.REFUSED, Outcome.ORDAGO
NO_MUS_A, PASO_A, QUIERO_A = int(Action.NO_MUS), int(Action.PASO), int(Action.QUIERO)
NO_QUIERO_A, ORDAGO_A = int(Action.NO_QUIERO), int(Action.ORDAGO)
PARES_SI_A, JUEGO_SI_A = int(Action.PARES_SI), int(Action.JUEGO_SI)
ALL_SEATS = 15                                          # eligibility bits of the four relative seats

# Config switches, by index into the rules' cfg field (int64).
(C_TARGET, C_KINGS, C_PUNTO, C_HOLDERS_ONLY, C_OVERRIDE, C_AUTO_DECLARE, C_EXCLUDE_OWN, C_MAX_MUS,
 C_DISCARD_LEGAL, C_JUEGOS, C_VACAS, C_FIRST_MANO, C_STONES_REWARD, C_REAL31, C_KEEP_OVER, C_SIGNALS,
 C_MAX_STAKE) = range(17)
NUM_SWITCHES = 17
#: Values of the C_SIGNALS switch: the index of ``config.signals`` in SIGNALS_CHOICES.
SIGNALS_OFF, SIGNALS_TRUTHFUL, SIGNALS_FREE = (SIGNALS_CHOICES.index(m) for m in ("off", "truthful", "free"))
assert SIGNALS_OFF == 0
L_NONE = Legal.NONE

# Observation offsets (observation.PIECES).
_O = {name: sl.start for name, sl in OFFSETS.items()}
O_NUMBERS, O_SUITS, O_RANK_COUNTS = _O["hand_numbers"], _O["hand_suits"], _O["rank_counts"]
O_PARES_CLASS, O_POINTS = _O["pares_class"], _O["points"]
O_BETTOR, O_LAST, O_SPEECH, O_RAISED, O_WINNER = (_O["lance_bettor"], _O["lance_last"], _O["lance_speech"],
                                                  _O["lance_raised"], _O["lance_winner"])
O_PARES_DECL, O_JUEGO_DECL, O_DISCARDS, O_PREV_COUNTS = (_O["pares_decl"], _O["juego_decl"], _O["discards"],
                                                         _O["prev_rank_counts"])
O_KINGS8, O_MANO, O_ACTING, O_PHASE, O_LANCE, O_RESPONDER = (_O["kings8"], _O["mano"], _O["acting"], _O["phase"],
                                                             _O["lance"], _O["responder"])
O_OUTCOME, O_STAKE, O_ORDAGO, O_FALLBACK = (_O["lance_outcome"], _O["lance_stake"], _O["lance_ordago"],
                                            _O["lance_fallback"])
O_PUNTO, O_MUS_ROUNDS, O_HAND_STONES, O_SCORES, O_TARGET = (_O["punto"], _O["mus_rounds"], _O["hand_stones"],
                                                            _O["scores"], _O["target"])
O_GAMES_WON, O_VACAS_WON, O_PREV_SHOWN, O_PREV_STONES = (_O["games_won"], _O["vacas_won"], _O["prev_shown"],
                                                         _O["prev_stones"])
assert OFFSETS["lance_outcome"].stop - O_OUTCOME == 4 * NUM_OUTCOMES
STAKE_SCALE_, TARGET_SCALE_, ROUNDS_SCALE_ = float(STAKE_SCALE), float(TARGET_SCALE), float(ROUNDS_SCALE)
NUM_CARDS_, OBS_DIM_, DISCARD_ROUNDS_, NUM_ACTIONS_ = NUM_CARDS, OBS_DIM, DISCARD_ROUNDS, NUM_ACTIONS

# Señas (mus_env.signals): action ids, token bits, window kinds, and the signal block's offsets (after OBS_DIM).
SIGNAL_BASE_, NUM_SIGNS_, ALL_SIGNS_ = SIGNAL_BASE, NUM_SIGNS, ALL_SIGNS
WINDOW_MUS_, WINDOW_GRANDE_ = WINDOW_MUS, WINDOW_GRANDE
REAL31_BIT, MUS_BIT = 1 << int(Sign.REAL31), 1 << int(Sign.MUS)
O_SIGN_WINDOW = OBS_DIM + SIGNAL_OFFSETS["sign_window"].start
O_SIGNS_MUS = OBS_DIM + SIGNAL_OFFSETS["signs_mus"].start
O_SIGNS_GRANDE = OBS_DIM + SIGNAL_OFFSETS["signs_grande"].start
O_SIGN_CONFIG = OBS_DIM + SIGNAL_OFFSETS["sign_config"].start
assert SIGNAL_OFFSETS["signs_mus"].stop - SIGNAL_OFFSETS["signs_mus"].start == 4 * NUM_SIGNS

# SplitMix64 (mus_env.shuffle), as uint64 constants so numba never mixes signed and unsigned.
_GOLDEN, _M1, _M2 = np.uint64(SPLITMIX_GOLDEN), np.uint64(SPLITMIX_M1), np.uint64(SPLITMIX_M2)
_S30, _S27, _S31, _S32 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(32)
_SIGN = np.uint64(1 << 63)
_U_DEAL, _U_RESHUFFLE = np.uint64(STREAM_DEAL), np.uint64(STREAM_RESHUFFLE)
_U_MANO, _U_TABLE = np.uint64(STREAM_MANO), np.uint64(STREAM_TABLE)
_U_SIGNAL, _S11 = np.uint64(STREAM_SIGNAL), np.uint64(11)
_INV_2_53 = 1.0 / 9007199254740992.0


#: Largest number of rank multisets of a variant (4 kings: 715); the 8-king tables are padded to it, so
#: both variants share one compiled kernel.
MAX_MULTISETS = 715

#: Read-only tables and switches of one engine: one record (name, dtype, shape, meaning), built by make_rules.
RULES_FIELDS: tuple[tuple[str, str, tuple[int, ...], str], ...] = (
    ("cfg", "i8", (NUM_SWITCHES,), "config switches, indexed by the C_* constants"),
    ("intercept_p", "f8", (), "config.signal_intercept_p (an opponent sees a sign with this probability)"),
    ("rank_of_card", "i8", (NUM_CARDS,), "rank 1..R of each card"),
    ("slot_pos", "i8", (NUM_CARDS + 1,), "place of each card in hand-slot order; [40] (empty) = 40"),
    ("number_of_card", "i8", (NUM_CARDS,), "card number 1..12 (31 real)"),
    ("value_of_card", "i8", (NUM_CARDS,), "point value (31 real)"),
    ("binom", "i8", (16, 5), "binomial coefficients (multiset index)"),
    ("strength", "i4", (5, MAX_MULTISETS), "[lance, multiset] higher wins (tables.strength)"),
    ("pares_bonus", "i1", (MAX_MULTISETS,), "tables.pares_bonus"),
    ("juego_bonus", "i1", (MAX_MULTISETS,), "tables.juego_bonus"),
    ("juego_points", "i1", (MAX_MULTISETS,), "tables.juego_points"),
    ("pares_class", "i1", (MAX_MULTISETS,), "tables.pares_class"),
    ("sign_bits", "i4", (MAX_MULTISETS,), "signals.hand_sign_bits: the tokens true for a multiset (no REAL31, MUS)"),
    ("bet_amount", "i4", (NUM_ACTIONS,), "stones of each ENVIDO action (0 for the others)"),
    ("speech", "i1", (NUM_ACTIONS,), "speech category of each betting action; -1 otherwise"),
    ("next_elig", "i1", (16, 5), "[bits, r + 1] first eligible relative seat after r; -1"),
    ("responders", "i1", (16, 4, 2), "[bits, bettor] the other team's eligible seats after the bettor; -1"),
    ("legal_masks", "i1", (len(LEGAL_SETS), NUM_ACTIONS), "phases.LEGAL_MASKS"),
    ("legal_count", "i8", (len(LEGAL_SETS),), "number of actions of each legal set"),
    ("legal_list", "i8", (len(LEGAL_SETS), 16), "the actions of each legal set, ascending (padded)"),
)
RULES_DTYPE = np.dtype([(name, dt, shape) for name, dt, shape, _ in RULES_FIELDS], align=True)
Rules = np.ndarray        # a (1,) array of RULES_DTYPE; the kernel reads its row R = rules[0]


def _seat_tables() -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """``next_elig[bits, r + 1]``: the first eligible relative seat after ``r`` (r = -1: the first), -1 if
    none; ``responders[bits, last]``: (r1, r2), the eligible seats of the other team in cyclic order after
    the bettor ``last``, -1 where absent (RULES.md §5.3). ``bits``: bit p = relative seat p is eligible."""
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


def make_rules(cfg: MusConfig, stones_reward: bool, keep_over: bool = False) -> Rules:
    """The read-only tables and switches of ``cfg`` for the kernel.

    ``keep_over``: a finished episode is not reset in the step that ends it; the table stays in the
    ``GAME_OVER`` phase (no legal action), so that its terminal view can be read, until
    :func:`new_episodes` restarts it (``VectorMusEnv(auto_reset=False)``; by default it auto-resets).
    """
    t = get_tables(cfg.kings)
    switches = np.zeros(NUM_SWITCHES, dtype=np.int64)
    switches[C_TARGET] = cfg.target
    switches[C_KINGS] = cfg.kings
    switches[C_PUNTO] = cfg.punto
    switches[C_HOLDERS_ONLY] = cfg.holders_only_speak
    switches[C_OVERRIDE] = cfg.partner_override
    switches[C_AUTO_DECLARE] = cfg.auto_declare
    switches[C_EXCLUDE_OWN] = cfg.exclude_own_discards
    switches[C_MAX_MUS] = -1 if cfg.max_mus_rounds is None else cfg.max_mus_rounds
    switches[C_DISCARD_LEGAL] = Legal.DISCARD_ZERO if cfg.allow_zero_discard else Legal.DISCARD
    switches[C_JUEGOS] = cfg.juegos_to_win_vaca
    switches[C_VACAS] = cfg.vacas_to_win_match
    switches[C_FIRST_MANO] = -1 if cfg.first_mano == "random" else int(cfg.first_mano)
    switches[C_STONES_REWARD] = stones_reward
    switches[C_REAL31] = REAL31_CHOICES.index(cfg.real31)
    switches[C_KEEP_OVER] = keep_over
    switches[C_SIGNALS] = SIGNALS_CHOICES.index(cfg.signals)
    switches[C_MAX_STAKE] = -1 if cfg.max_stake is None else cfg.max_stake
    from math import comb
    bet_amount = np.zeros(NUM_ACTIONS, dtype=np.int32)
    bet_amount[ENVIDO_BASE:ENVIDO_BASE + 5] = cfg.bet_sizes
    speech = np.full(NUM_ACTIONS, -1, dtype=np.int8)
    for a in (PASO_A, QUIERO_A, NO_QUIERO_A, ORDAGO_A, *range(ENVIDO_BASE, ENVIDO_BASE + 5)):
        speech[a] = speech_of(a)
    next_elig, responders = _seat_tables()
    rules = np.zeros(1, dtype=RULES_DTYPE)
    r = rules[0]
    m = t.size
    r["cfg"] = switches
    r["intercept_p"] = cfg.signal_intercept_p
    r["sign_bits"][:m] = hand_sign_bits(cfg.kings)
    r["rank_of_card"] = t.rank_of_card
    r["slot_pos"] = (*slot_positions(cfg.kings), NUM_CARDS)
    r["number_of_card"] = [card_number(c) for c in range(NUM_CARDS)]
    r["value_of_card"] = value_table(cfg.kings)
    r["binom"] = [[comb(n, k) for k in range(5)] for n in range(16)]
    r["strength"][:, :m] = t.strength
    for name in ("pares_bonus", "juego_bonus", "juego_points", "pares_class"):
        r[name][:m] = getattr(t, name)
    r["bet_amount"] = bet_amount
    r["speech"] = speech
    r["next_elig"] = next_elig
    r["responders"] = responders
    r["legal_masks"] = LEGAL_MASKS
    for k, actions in enumerate(LEGAL_SETS):
        r["legal_count"][k] = len(actions)
        r["legal_list"][k, :len(actions)] = actions
    rules.setflags(write=False)
    return rules


# ---------------------------------------------------------------------------------------------------
# Randomness (mus_env.shuffle, bit for bit)
@njit(cache=True, inline="always")
def mix(x: np.uint64) -> np.uint64:
    """SplitMix64 finaliser (wrapping uint64 arithmetic)."""
    x = x + _GOLDEN
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    return x ^ (x >> _S31)


@njit(cache=True)
def event_hash(seed: np.uint64, stream: np.uint64, a: np.uint64, b: np.uint64) -> np.uint64:
    """``shuffle.event_hash`` of one event: (seed, stream, a, b)."""
    return mix(mix(mix(mix(seed) ^ stream) ^ a) ^ (b << _S32))


@njit(cache=True)
def intercept_uniform(seed: np.uint64, hand_number: int, window: int, signer: int, observer: int) -> float:
    """``signals.intercept_uniform``: the uniform number in [0, 1) that decides whether opponent ``observer``
    sees ``signer``'s token in window counter ``window`` of hand ``hand_number`` (absolute seats)."""
    h = event_hash(seed, _U_SIGNAL, np.uint64(hand_number), np.uint64(16 * window + 4 * signer + observer))
    return np.float64(h >> _S11) * _INV_2_53


@njit(cache=True)
def card_key(h: np.uint64, card: int) -> np.uint64:
    """Hash key of ``card`` for the event hash ``h`` (``shuffle.card_keys``)."""
    return mix(h ^ (np.uint64(card) * _GOLDEN))


@njit(cache=True, inline="always")
def sort_by_key(cards: npt.NDArray[np.int8], n: int, h: np.uint64) -> None:
    """Order ``cards[:n]`` by their keys for the event ``h`` (the order ``shuffle`` gives). The keys are
    distinct 64-bit hashes, so each card's place is the number of smaller keys: a branch-free count that
    the compiler vectorises (about twice as fast as a comparison sort of 40 random keys). The sign bit is
    flipped so that signed comparisons order the unsigned keys exactly."""
    keys = np.empty(n, dtype=np.int64)
    src = cards[:n].copy()
    for i in range(n):
        keys[i] = np.int64(card_key(h, src[i]) ^ _SIGN)
    for i in range(n):
        k = keys[i]
        place = 0
        for j in range(n):
            place += keys[j] < k
        cards[place] = src[i]


@njit(cache=True)
def deal_deck(seed: np.uint64, hand_number: int) -> npt.NDArray[np.int8]:
    """The deck of hand ``hand_number`` of the game ``seed`` (``shuffle.deal_decks``)."""
    deck = np.empty(NUM_CARDS_, dtype=np.int8)
    for c in range(NUM_CARDS_):
        deck[c] = c
    sort_by_key(deck, NUM_CARDS_, event_hash(seed, _U_DEAL, np.uint64(hand_number), np.uint64(0)))
    return deck


@njit(cache=True)
def table_seed(master: np.uint64, table: int, episode: int) -> np.uint64:
    """``shuffle.table_seeds``: the game seed of a table's episode."""
    return event_hash(master, _U_TABLE, np.uint64(table), np.uint64(episode))


@njit(cache=True)
def first_mano(seed: np.uint64) -> int:
    """``shuffle.first_mano``: the first hand's mano when ``first_mano="random"``."""
    return np.int64(event_hash(seed, _U_MANO, np.uint64(0), np.uint64(0)) % np.uint64(4))


# ---------------------------------------------------------------------------------------------------
# Hands
@njit(cache=True)
def sort_hand(hand: npt.NDArray[np.int8], R) -> None:
    """Sort a hand into hand-slot order, empty slots (-1) last (insertion sort of four)."""
    for i in range(1, 4):
        c = hand[i]
        k = R.slot_pos[c] if c >= 0 else NUM_CARDS_
        j = i - 1
        while j >= 0 and (R.slot_pos[hand[j]] if hand[j] >= 0 else NUM_CARDS_) > k:
            hand[j + 1] = hand[j]
            j -= 1
        hand[j + 1] = c


@njit(cache=True)
def multiset_of(hand: npt.NDArray[np.int8], R) -> int:
    """Index of the rank multiset of a full hand (``tables.multiset_index``; a sorting network of four)."""
    a, b, c, d = (R.rank_of_card[hand[0]], R.rank_of_card[hand[1]], R.rank_of_card[hand[2]],
                  R.rank_of_card[hand[3]])
    if a > b:
        a, b = b, a
    if c > d:
        c, d = d, c
    if a > c:
        a, c = c, a
    if b > d:
        b, d = d, b
    if b > c:
        b, c = c, b
    return R.binom[a - 1, 1] + R.binom[b, 2] + R.binom[c + 1, 3] + R.binom[d + 2, 4]


@njit(cache=True)
def is_real31(hand: npt.NDArray[np.int8], R) -> bool:
    """``tables.is_real31`` of one hand under the config's mode."""
    mode = R.cfg[C_REAL31]
    sevens = 0
    other = 0
    for j in range(4):
        if R.number_of_card[hand[j]] == 7:
            sevens += 1
        elif hand[j] > other:
            other = hand[j]
    if sevens != 3:
        return False
    if mode == 1:
        return R.value_of_card[other] == 10
    if R.number_of_card[other] != 10:
        return False
    if mode == 2:
        return True
    if mode == 3:
        return other // 10 == 0
    seen = 0
    for j in range(4):
        seen |= 1 << (hand[j] // 10)
    return seen == 15


# ---------------------------------------------------------------------------------------------------
# Decisions and the mus phase (RULES.md §3); ``st`` is one table's row (a record), ``out`` its outputs.
@njit(cache=True, inline="always")
def set_decision(st, phase: int, rel: int, legal: int) -> None:
    """``MusGame._set_decision``: the pending decision is ``phase`` for relative seat ``rel`` with Legal set
    ``legal``."""
    st.phase = phase
    st.rel = rel
    st.legal = legal


@njit(cache=True, inline="always")
def set_mus_call(st, R, rel: int) -> None:
    """``MusGame._set_mus_call``: relative seat ``rel`` calls MUS or NO_MUS (RULES.md §3.1); only NO_MUS once
    ``max_mus_rounds`` discard rounds were played."""
    cap = R.cfg[C_MAX_MUS]
    set_decision(st, MUS_CALL, rel, L_FORCED_NO_MUS if cap >= 0 and st.mus_round >= cap else L_MUS_CALL)


@njit(cache=True)
def legal_sign_bits(hand: npt.NDArray[np.int8], R, kind: int) -> int:
    """``signals.legal_signs`` of a full hand in a window of ``kind``: every token with signals "free"; with
    "truthful" the tokens true for the hand (``sign_bits`` of its multiset, REAL31 for a 31 real under the
    config's mode, MUS in a mus window)."""
    if R.cfg[C_SIGNALS] == SIGNALS_FREE:
        return ALL_SIGNS_
    bits = R.sign_bits[multiset_of(hand, R)]
    if R.cfg[C_REAL31] and is_real31(hand, R):
        bits |= REAL31_BIT
    if kind == WINDOW_MUS_:
        bits |= MUS_BIT
    return bits


@njit(cache=True, inline="always")
def pending_sign_bits(st, R) -> int:
    """The legal tokens of the pending decision (bit t = token t): those of the signer's hand in the open
    window during a sign decision, none otherwise."""
    if st.phase != SIGNAL:
        return 0
    return legal_sign_bits(st.hands[(st.mano + st.rel) % 4], R, st.sig_window)


@njit(cache=True)
def open_window(st, R, kind: int) -> None:
    """``MusGame._open_window``: a sign window of ``kind`` opens (signals on, RULES.md §8): S0..S3 will sign in
    turn. A mus window forgets the tokens of the previous mus window of the hand."""
    if kind == WINDOW_MUS_:
        st.sig_mus[:] = -1
    st.sig_window = kind
    set_decision(st, SIGNAL, 0, L_NONE)


@njit(cache=True)
def on_sign(st, out, R, action: int) -> None:
    """``MusGame._on_sign``, RULES.md §8: a token (``action - SIGNAL_BASE``); after S3 the window closes and the
    game goes on as without it: the mus call of S0 (mus window) or the lances (grande window)."""
    kind = st.sig_window
    seat = (st.mano + st.rel) % 4
    if kind == WINDOW_MUS_:
        st.sig_mus[seat] = action - SIGNAL_BASE_
    else:
        st.sig_grande[seat] = action - SIGNAL_BASE_
    if st.rel < 3:
        set_decision(st, SIGNAL, st.rel + 1, L_NONE)
        return
    st.sig_window = -1
    if kind == WINDOW_MUS_:
        set_mus_call(st, R, 0)
    else:
        begin_lances(st, R)


@njit(cache=True)
def start_hand(st, R, deck: npt.NDArray[np.int8], mano: int) -> None:
    """``MusGame._start_hand``: deal ``deck`` with ``mano`` and open the mus phase (RULES.md §2.5, §3.1):
    ``deck[i]`` for i < 16 goes to relative seat ``i % 4``; the stock is ``deck[16:]``."""
    st.mano = mano
    for i in range(16):
        st.hands[(mano + i) % 4, i // 4] = deck[i]
    for s in range(4):
        sort_hand(st.hands[s], R)
    for i in range(NUM_CARDS_):
        st.stock[i] = deck[16 + i] if i < 24 else -1
        st.pile[i] = False
    st.stock_pos = 0
    st.stock_len = 24
    st.round_disc[:, :] = -1
    st.disc_count[:] = 0
    st.reshuffles = 0
    st.mus_round = 0
    st.disc_hist[:, :] = 0
    st.ls_lance[0] = GRANDE
    st.ls_lance[1] = CHICA
    st.ls_lance[2] = PARES
    st.ls_lance[3] = JUEGO
    st.ls_outcome[:] = NOT_PLAYED
    st.ls_stake[:] = 0
    st.ls_fallback[:] = 0
    st.ls_bettor[:] = -1
    st.ls_winner[:] = -1
    st.ls_last[:] = -1
    st.ls_said[:, :] = -1
    st.ls_raised[:, :] = 0
    st.slot = -1
    st.decl[:, :] = -1
    st.hand_stones[:] = 0
    st.lance_stones[:, :] = 0
    st.showdown = False
    st.sig_mus[:] = -1
    st.sig_grande[:] = -1
    st.sig_window = -1
    if R.cfg[C_SIGNALS]:
        open_window(st, R, WINDOW_MUS_)
    else:
        set_mus_call(st, R, 0)


@njit(cache=True)
def on_mus_call(st, out, R, action: int) -> None:
    """``MusGame._on_mus_call``, RULES.md §3.1: NO_MUS cuts the mus (the grande sign window, or the lances);
    MUS passes the call to the next seat, and after S3's a discard round starts at S0 (§3.2)."""
    if action == NO_MUS_A:
        if R.cfg[C_SIGNALS]:
            open_window(st, R, WINDOW_GRANDE_)
        else:
            begin_lances(st, R)
    elif st.rel < 3:
        set_mus_call(st, R, st.rel + 1)
    else:
        st.round_disc[:, :] = -1
        st.disc_count[:] = 0
        set_decision(st, DISCARD, 0, R.cfg[C_DISCARD_LEGAL])


@njit(cache=True)
def on_discard(st, out, R, action: int) -> None:
    """``MusGame._on_discard``, RULES.md §3.2: the seat discards the slots of the mask (§9.2); after S3 the
    replacements are served (§3.3) and a new mus-call round (or mus sign window) starts."""
    rel = st.rel
    hand = st.hands[(st.mano + rel) % 4]
    mask = action - DISCARD_BASE
    n = 0
    for j in range(4):
        if mask >> j & 1:
            st.pile[hand[j]] = True
            st.round_disc[rel, j] = hand[j]
            hand[j] = -1
            n += 1
    st.disc_count[rel] = n
    sort_hand(hand, R)
    if rel < 3:
        set_decision(st, DISCARD, rel + 1, R.cfg[C_DISCARD_LEGAL])
        return
    serve_replacements(st, R)
    for j in range(DISCARD_ROUNDS_ - 1, 0, -1):
        for s in range(4):
            st.disc_hist[j, s] = st.disc_hist[j - 1, s]
    for s in range(4):
        st.disc_hist[0, s] = st.disc_count[(s - st.mano) % 4]
    st.mus_round += 1
    if R.cfg[C_SIGNALS]:
        open_window(st, R, WINDOW_MUS_)
    else:
        set_mus_call(st, R, 0)


@njit(cache=True)
def serve_replacements(st, R) -> None:
    """``MusGame._serve_replacements``: the postre serves S0..S3 their replacement cards, reshuffling the pile
    when needed (RULES.md §3.3, §3.4)."""
    for rel in range(4):
        need = st.disc_count[rel]
        if not need:
            continue
        hand = st.hands[(st.mano + rel) % 4]
        have = 4 - need
        left = st.stock_len - st.stock_pos
        if left < need:
            for t in range(left):
                hand[have + t] = st.stock[st.stock_pos + t]
            have += left
            need -= left
            reshuffle(st, rel, R)
        for t in range(need):
            hand[have + t] = st.stock[st.stock_pos + t]
        st.stock_pos += need
        sort_hand(hand, R)


@njit(cache=True)
def reshuffle(st, rel: int, R) -> None:
    """The reshuffle inside ``MusGame._serve_replacements``, RULES.md §3.4: the discard pile (less the served
    seat's own discards of this round, with ``exclude_own_discards``) becomes the stock, in the order of
    ``shuffle.reshuffle_order``."""
    own = np.zeros(NUM_CARDS_, dtype=np.bool_)
    if R.cfg[C_EXCLUDE_OWN]:
        for j in range(4):
            if st.round_disc[rel, j] >= 0:
                own[st.round_disc[rel, j]] = True
    n = 0
    for c in range(NUM_CARDS_):
        if st.pile[c] and not own[c]:
            st.stock[n] = c
            n += 1
        st.pile[c] = own[c]
    for c in range(n, NUM_CARDS_):
        st.stock[c] = -1
    sort_by_key(st.stock, n, event_hash(st.game_seeds, _U_RESHUFFLE, np.uint64(st.hand_number),
                                        np.uint64(st.reshuffles)))
    st.stock_len = n
    st.stock_pos = 0
    st.reshuffles += 1


# ---------------------------------------------------------------------------------------------------
# Lances (RULES.md §4)
@njit(cache=True)
def begin_lances(st, R) -> None:
    """``MusGame._begin_lances``: evaluate the four hands once (table lookups; a 31 real under ``real31``) and
    open grande (RULES.md §4, §4.1)."""
    for rel in range(4):
        hand = st.hands[(st.mano + rel) % 4]
        idx = multiset_of(hand, R)
        for lance in range(5):
            st.strength[lance, rel] = R.strength[lance, idx]
        st.pares_b[rel] = R.pares_bonus[idx]
        st.juego_b[rel] = R.juego_bonus[idx]
        if R.cfg[C_REAL31] and R.juego_points[idx] == 31 and is_real31(hand, R):
            st.strength[JUEGO, rel] = REAL31_JUEGO_RANK
            st.juego_b[rel] = 3
    open_lance(st, R, 0, GRANDE, ALL_SEATS)


@njit(cache=True, inline="always")
def open_lance(st, R, slot: int, lance: int, elig: int) -> None:
    """``MusGame._open_lance``: the opening round of ``lance`` in ``slot`` among the ``elig`` seats (bit p =
    relative seat p) starts with the first of them (RULES.md §5.2)."""
    st.slot = slot
    st.ls_lance[slot] = lance
    st.elig = elig
    set_decision(st, BET_OPEN, R.next_elig[elig, 0], L_OPEN)


@njit(cache=True)
def after_lance(st, out, R) -> None:
    """``MusGame._after_lance``, RULES.md §4: move on from the lance slot that just closed (without ending the
    game): chica, or the declarations of pares or juego (such a lance may close at once: void or uncontested),
    or the showdown after the fourth lance (§6.2)."""
    while True:
        slot = st.slot
        if slot == 0:
            open_lance(st, R, 1, CHICA, ALL_SEATS)
            return
        if slot == 3:
            do_showdown(st, out, R)
            return
        st.slot = slot + 1
        if not declare(st, R, slot + 1, 0):
            return


@njit(cache=True, inline="always")
def has_lance(st, kind: int, rel: int) -> bool:
    """Relative seat ``rel`` holds pares (kind 0) or juego (kind 1)."""
    return (st.pares_b[rel] if kind == 0 else st.juego_b[rel]) > 0


@njit(cache=True, inline="always")
def declare(st, R, slot: int, rel: int) -> bool:
    """``MusGame._declare``: forced pares (slot 2) or juego (slot 3) declarations from relative seat ``rel`` on
    (RULES.md §4.3, §4.4). Returns True when the lance closed at once (void or uncontested): the caller moves
    on (``MusGame`` calls ``_after_lance`` itself)."""
    kind = slot - 2
    if not R.cfg[C_AUTO_DECLARE]:
        has = has_lance(st, kind, rel)
        legal = (L_PARES_SI if has else L_PARES_NO) if kind == 0 else (L_JUEGO_SI if has else L_JUEGO_NO)
        set_decision(st, DECLARE, rel, legal)
        return False
    for p in range(rel, 4):
        st.decl[kind, (st.mano + p) % 4] = has_lance(st, kind, p)
    return start_declared_lance(st, R, slot)


@njit(cache=True)
def on_declare(st, out, R, action: int) -> None:
    """``MusGame._on_declare`` (only with ``auto_declare=False``), RULES.md §4.3, §4.4: the seat's forced
    pares or juego declaration; after S3 the lance is played, or closes at once."""
    slot = st.slot
    st.decl[slot - 2, (st.mano + st.rel) % 4] = action == PARES_SI_A or action == JUEGO_SI_A
    if st.rel < 3:
        declare(st, R, slot, st.rel + 1)
    elif start_declared_lance(st, R, slot):
        after_lance(st, out, R)


@njit(cache=True, inline="always")
def start_declared_lance(st, R, slot: int) -> bool:
    """``MusGame._start_declared_lance``, RULES.md §4.3, §4.4: after the declarations the lance is void (no
    holder), uncontested (holders in one team), punto (nobody holds juego) or bet among its holders. True when
    the lance closed at once."""
    kind = slot - 2
    holders = 0
    teams = 0
    for p in range(4):
        if has_lance(st, kind, p):
            holders |= 1 << p
            teams |= 1 << ((p + st.mano) % 2)
    if slot == 3 and not holders:
        st.ls_lance[3] = PUNTO
        if R.cfg[C_PUNTO]:
            open_lance(st, R, 3, PUNTO, ALL_SEATS)
            return False
        st.ls_outcome[3] = VOID
        return True
    if not holders:
        st.ls_outcome[slot] = VOID
        return True
    if teams != 3:
        st.ls_outcome[slot] = UNCONTESTED
        st.ls_winner[slot] = 0 if teams == 1 else 1
        return True
    open_lance(st, R, slot, st.ls_lance[slot], holders if R.cfg[C_HOLDERS_ONLY] else ALL_SEATS)
    return False


# ---------------------------------------------------------------------------------------------------
# Betting (RULES.md §5)
@njit(cache=True)
def on_open(st, out, R, action: int) -> None:
    """``MusGame._on_open``, RULES.md §5.2: PASO passes to the next eligible seat (after the last one the lance
    is en paso); ENVIDO k or ÓRDAGO is the opening bet, with fallback 1 (§5.3)."""
    sl = st.slot
    st.ls_said[sl, (st.mano + st.rel) % 4] = R.speech[action]
    if action == PASO_A:
        nxt = R.next_elig[st.elig, st.rel + 1]
        if nxt >= 0:
            set_decision(st, BET_OPEN, nxt, L_OPEN)
        else:
            st.ls_outcome[sl] = EN_PASO
            after_lance(st, out, R)
        return
    st.ls_fallback[sl] = 1
    bet(st, R, action, 0)


@njit(cache=True, inline="always")
def bet(st, R, action: int, stake_before: int) -> None:
    """``MusGame._bet``: an opening bet, raise or órdago by the current seat; the other team's responders
    answer (RULES.md §5.3)."""
    sl = st.slot
    seat = (st.mano + st.rel) % 4
    if action == ORDAGO_A:
        st.ls_stake[sl] = ORDAGO_STAKE
    else:
        amount = R.bet_amount[action]
        st.ls_stake[sl] = stake_before + amount
        st.ls_raised[sl, seat] += amount
    st.ls_last[sl] = seat
    st.ls_bettor[sl] = seat % 2
    st.resp[0] = R.responders[st.elig, st.rel, 0]
    st.resp[1] = R.responders[st.elig, st.rel, 1]
    st.resp_i = 0
    if action == ORDAGO_A:
        set_decision(st, BET_RESPOND, st.resp[0], L_RESPOND_ORDAGO)
    else:
        set_decision(st, BET_RESPOND, st.resp[0], L_RESPOND_CAPPED if capped(st, R) else L_RESPOND)


@njit(cache=True, inline="always")
def capped(st, R) -> bool:
    """``MusGame._capped``: the live numeric stake has reached ``max_stake`` (no more raises)."""
    cap = R.cfg[C_MAX_STAKE]
    return cap >= 0 and st.ls_stake[st.slot] >= cap


@njit(cache=True)
def on_respond(st, out, R, action: int) -> None:
    """``MusGame._on_respond``, RULES.md §5.3, §5.4: a responder's QUIERO (r2 may still confirm or upgrade with
    ``partner_override``), NO QUIERO (r2, if any, decides; else the refusal) or raise / ÓRDAGO."""
    sl = st.slot
    st.ls_said[sl, (st.mano + st.rel) % 4] = R.speech[action]
    has_r2 = st.resp_i == 0 and st.resp[1] >= 0
    if action == QUIERO_A:
        if has_r2 and st.ls_stake[sl] != ORDAGO_STAKE and R.cfg[C_OVERRIDE]:
            st.resp_i = 1
            set_decision(st, BET_CONFIRM, st.resp[1], L_CONFIRM_CAPPED if capped(st, R) else L_CONFIRM)
        else:
            accept(st, out, R)
    elif action == NO_QUIERO_A:
        if has_r2:
            st.resp_i = 1
            set_decision(st, BET_RESPOND, st.resp[1], st.legal)
        else:
            refuse(st, out, R)
    else:
        raise_stake(st, R, action)


@njit(cache=True)
def on_confirm(st, out, R, action: int) -> None:
    """``MusGame._on_confirm``, RULES.md §5.4: after r1's QUIERO, r2 confirms (QUIERO) or upgrades (raise or
    ÓRDAGO, r2 becomes the raiser)."""
    st.ls_said[st.slot, (st.mano + st.rel) % 4] = R.speech[action]
    if action == QUIERO_A:
        accept(st, out, R)
    else:
        raise_stake(st, R, action)


@njit(cache=True)
def raise_stake(st, R, action: int) -> None:
    """``MusGame._raise``, RULES.md §5.3: a raise or órdago over a live stake; refused, it would pay the stake
    live before it (the fallback)."""
    sl = st.slot
    st.ls_fallback[sl] = st.ls_stake[sl]
    bet(st, R, action, st.ls_stake[sl])


@njit(cache=True)
def accept(st, out, R) -> None:
    """``MusGame._accept``, RULES.md §5.3, §6.3: an accepted numeric stake closes the lance (paid at the
    showdown); an accepted órdago compares this lance only, among its eligible hands, and ends the game."""
    sl = st.slot
    if st.ls_stake[sl] != ORDAGO_STAKE:
        st.ls_outcome[sl] = ACCEPTED
        after_lance(st, out, R)
        return
    # accepted órdago: compare this lance only, among its eligible hands (§6.3)
    st.ls_outcome[sl] = ORDAGO_OUT
    team = (lance_winner(st, st.ls_lance[sl]) + st.mano) % 2
    st.ls_winner[sl] = team
    st.showdown = True
    end_game(st, out, R, np.int64(team), np.bool_(True))


@njit(cache=True)
def refuse(st, out, R) -> None:
    """``MusGame._refuse``, RULES.md §5.3, §6.1: the bettor's team wins the lance and scores the fallback at
    once (which may end the game); else the hand goes on."""
    sl = st.slot
    st.ls_outcome[sl] = REFUSED
    st.ls_winner[sl] = st.ls_bettor[sl]
    if not add_stones(st, out, R, sl, st.ls_bettor[sl], st.ls_fallback[sl]):
        after_lance(st, out, R)


# ---------------------------------------------------------------------------------------------------
# Scoring (RULES.md §6)
@njit(cache=True, inline="always")
def add_stones(st, out, R, slot: int, team: int, stones: int) -> bool:
    """``MusGame._add_stones``, RULES.md §6.1: add stones won in lance ``slot``; True (and the game ended) if the
    team reached the target."""
    st.scores[team] += stones
    st.hand_stones[team] += stones
    st.lance_stones[slot, team] += stones
    if st.scores[team] >= R.cfg[C_TARGET]:
        end_game(st, out, R, np.int64(team), np.bool_(False))
        return True
    return False


@njit(cache=True)
def lance_winner(st, lance: int) -> int:
    """``MusGame._lance_winner``, RULES.md §6.2: the relative seat with the best hand for ``lance`` among its
    eligible hands (mano wins ties)."""
    best = -1
    for p in range(4):
        if lance == PARES and st.pares_b[p] <= 0:
            continue
        if lance == JUEGO and st.juego_b[p] <= 0:
            continue
        if best < 0 or st.strength[lance, p] > st.strength[lance, best]:
            best = p
    return best


@njit(cache=True)
def do_showdown(st, out, R) -> None:
    """``MusGame._do_showdown``, RULES.md §6.2: count the four lances in order (stakes, en paso, bonuses),
    checking the target after each; then the next hand (§7)."""
    st.showdown = True
    m = st.mano
    for sl in range(4):
        outcome = st.ls_outcome[sl]
        if outcome == VOID:
            continue
        lance = st.ls_lance[sl]
        if outcome == REFUSED or outcome == UNCONTESTED:
            team = st.ls_winner[sl]
            base = 0
        else:
            team = (lance_winner(st, lance) + m) % 2
            st.ls_winner[sl] = team
            if outcome == ACCEPTED:
                base = st.ls_stake[sl]
            else:                                       # en paso
                base = 1 if lance == GRANDE or lance == CHICA else 0
        bonus = 0
        if lance == PUNTO:
            bonus = 1
        elif lance == PARES or lance == JUEGO:
            for p in range(4):
                if (p + m) % 2 == team:
                    bonus += st.pares_b[p] if lance == PARES else st.juego_b[p]
        total = base + bonus
        if total and add_stones(st, out, R, sl, team, total):
            return
    finish_hand(st, out, R)
    next_hand(st, R)


# ---------------------------------------------------------------------------------------------------
# Hands, games, vacas (RULES.md §7)
@njit(cache=True)
def finish_hand(st, out, R) -> None:
    """``MusGame._finish_hand``: remember the hand for the next observation (shown cards, stones) and report it
    in the step outputs (``hand_finished``, stones, and the ``reward="stones"`` rewards)."""
    st.prev_shown = st.showdown
    st.prev_counts[:, :] = 0
    if st.showdown:
        for s in range(4):
            for j in range(4):
                st.prev_counts[s, R.rank_of_card[st.hands[s, j]] - 1] += 1
    for t in range(2):
        st.prev_stones[t] = st.hand_stones[t]
        out.hand_stones[t] = st.hand_stones[t]
        for sl in range(4):
            out.lance_stones[sl, t] = st.lance_stones[sl, t]
    out.hand_finished = True
    if R.cfg[C_STONES_REWARD]:
        diff = st.hand_stones[0] - st.hand_stones[1]          # ints, so that a draw pays 0.0, not -0.0
        for s in range(4):
            out.rewards[s] = diff if s % 2 == 0 else -diff


@njit(cache=True)
def next_hand(st, R) -> None:
    """``MusGame._next_hand``, RULES.md §7: the next deal of the game's seed, the mano passed to the right."""
    st.hand_number += 1
    mano = (st.mano + 1) % 4
    start_hand(st, R, deal_deck(st.game_seeds, st.hand_number), mano)


@njit(cache=True)
def end_game(st, out, R, team: int, by_ordago: bool) -> None:
    """``MusGame._end_game``, RULES.md §6.1, §6.3, §7: a team reached the target or won an órdago; count games,
    vacas and the match. When the match is won the table is left at its game-over state (the step outputs say
    who won; :func:`step_table` starts the next episode unless finished tables are kept over); else the next
    game starts at 0-0 with the next hand."""
    finish_hand(st, out, R)
    if R.cfg[C_STONES_REWARD] and by_ordago:            # an accepted órdago is worth the stones still lacking
        lacking = max(R.cfg[C_TARGET] - st.scores[team], 0)
        signed = lacking if team == 0 else -lacking
        for s in range(4):
            out.rewards[s] += signed if s % 2 == 0 else -signed
    st.games_won[team] += 1
    if st.games_won[team] >= R.cfg[C_JUEGOS]:
        st.vacas_won[team] += 1
        st.games_won[:] = 0
        if st.vacas_won[team] >= R.cfg[C_VACAS]:
            out.finished = True
            out.winner = team
            out.final_scores[0] = st.scores[0]
            out.final_scores[1] = st.scores[1]
            if not R.cfg[C_STONES_REWARD]:
                for s in range(4):
                    out.rewards[s] = 1.0 if s % 2 == team else -1.0
            set_decision(st, GAME_OVER, st.rel, L_NONE)
            return
    st.game_number += 1
    st.scores[:] = 0
    next_hand(st, R)


@njit(cache=True)
def clear_episode(st) -> None:
    """Zero what an episode accumulates (scores, games and vacas won, hand and game numbers, the previous
    hand's record) before its first hand is dealt."""
    st.scores[:] = 0
    st.games_won[:] = 0
    st.vacas_won[:] = 0
    st.hand_number = 0
    st.game_number = 0
    st.prev_shown = False
    st.prev_counts[:, :] = 0
    st.prev_stones[:] = 0


@njit(cache=True)
def new_episode(st, R, b: int, master: np.uint64) -> None:
    """A fresh episode on table ``b`` from its next table seed, ``table_seed(master, b, episode + 1)``, dealt
    as ``MusGame(config, seed)`` deals it (auto-reset, :func:`new_episodes`)."""
    st.episode += 1
    st.game_seeds = table_seed(master, b, st.episode)
    clear_episode(st)
    fm = R.cfg[C_FIRST_MANO]
    mano = first_mano(st.game_seeds) if fm < 0 else fm
    start_hand(st, R, deal_deck(st.game_seeds, st.hand_number), mano)


# ---------------------------------------------------------------------------------------------------
# Observation (MusGame._encode, transcribed)
@njit(cache=True)
def encode(st, R, seat: int, row: npt.NDArray[np.float32]) -> None:
    """Write absolute ``seat``'s view of the table into ``row``, exactly as ``MusGame.observe``: ``(OBS_DIM,)``,
    or with signals on ``(observation.obs_dim(config),)``, the signal block (:func:`encode_signs`) after OBS_DIM.
    During a sign decision the ``phase`` one-hot (and ``lance``, ``responder``) are zeros."""
    row[:] = 0.0
    me = seat % 2
    mano = st.mano
    # own hand (numbers, suits, rank counts; pares class and points once the hand is full)
    hand = st.hands[seat]
    full = True
    for j in range(4):
        c = hand[j]
        if c < 0:
            full = False
            continue
        row[O_NUMBERS + 10 * j + c % 10] = 1.0
        row[O_SUITS + 4 * j + c // 10] = 1.0
        row[O_RANK_COUNTS + R.rank_of_card[c] - 1] += 1.0
    if full:
        idx = multiset_of(hand, R)
        row[O_PARES_CLASS + R.pares_class[idx]] = 1.0
        row[O_POINTS] = R.juego_points[idx] / 40.0
    # who, what, where
    row[O_MANO + (mano - seat) % 4] = 1.0
    if R.cfg[C_KINGS] == 8:
        row[O_KINGS8] = 1.0
    phase = st.phase
    if phase != SIGNAL:                                # (Phase.SIGNAL has no entry: its kind is in sign_window)
        row[O_PHASE + phase] = 1.0
    if phase != GAME_OVER:
        row[O_ACTING + (mano + st.rel - seat) % 4] = 1.0
    if DECLARE <= phase <= BET_CONFIRM:
        row[O_LANCE + st.ls_lance[st.slot]] = 1.0
        if phase >= BET_OPEN:
            row[O_RESPONDER + (0 if phase == BET_OPEN else st.resp_i + 1)] = 1.0
    # betting record of each lance slot
    for sl in range(4):
        row[O_OUTCOME + NUM_OUTCOMES * sl + st.ls_outcome[sl]] = 1.0
        if st.ls_winner[sl] >= 0:
            row[O_WINNER + 2 * sl + (1 if st.ls_winner[sl] != me else 0)] = 1.0
        stake = st.ls_stake[sl]
        if stake == ORDAGO_STAKE:
            row[O_ORDAGO + sl] = 1.0
        elif stake:
            row[O_STAKE + sl] = stake / STAKE_SCALE_
        if st.ls_fallback[sl]:
            row[O_FALLBACK + sl] = st.ls_fallback[sl] / STAKE_SCALE_
        if st.ls_bettor[sl] >= 0:
            row[O_BETTOR + 2 * sl + (1 if st.ls_bettor[sl] != me else 0)] = 1.0
        if st.ls_last[sl] >= 0:
            row[O_LAST + 4 * sl + (st.ls_last[sl] - seat) % 4] = 1.0
        for s in range(4):
            q = (s - seat) % 4
            if st.ls_said[sl, s] >= 0:
                row[O_SPEECH + 20 * sl + 5 * q + st.ls_said[sl, s]] = 1.0
            if st.ls_raised[sl, s]:
                row[O_RAISED + 4 * sl + q] = st.ls_raised[sl, s] / STAKE_SCALE_
    if st.ls_lance[3] == PUNTO:
        row[O_PUNTO] = 1.0
    # declarations (by absolute seat)
    for s in range(4):
        q = (s - seat) % 4
        if st.decl[0, s] >= 0:
            row[O_PARES_DECL + 2 * q + 1 - st.decl[0, s]] = 1.0
        if st.decl[1, s] >= 0:
            row[O_JUEGO_DECL + 2 * q + 1 - st.decl[1, s]] = 1.0
    # mus phase summary
    if st.mus_round:
        row[O_MUS_ROUNDS] = st.mus_round / ROUNDS_SCALE_
        for j in range(min(st.mus_round, DISCARD_ROUNDS_)):
            for s in range(4):
                if st.disc_hist[j, s]:
                    row[O_DISCARDS + 4 * j + (s - seat) % 4] = st.disc_hist[j, s] / 4.0
    # stones, scores, games
    target = R.cfg[C_TARGET]
    for k in range(2):
        team = me if k == 0 else 1 - me
        row[O_HAND_STONES + k] = st.hand_stones[team] / target
        row[O_SCORES + k] = st.scores[team] / target
        row[O_GAMES_WON + k] = st.games_won[team]
        row[O_VACAS_WON + k] = st.vacas_won[team]
        row[O_PREV_STONES + k] = st.prev_stones[team] / target
    row[O_TARGET] = target / TARGET_SCALE_
    if st.prev_shown:
        row[O_PREV_SHOWN] = 1.0
        for s in range(4):
            q = (s - seat) % 4
            for r in range(10):
                row[O_PREV_COUNTS + 10 * q + r] = st.prev_counts[s, r]
    if R.cfg[C_SIGNALS]:
        encode_signs(st, R, seat, row)


@njit(cache=True, inline="always")
def sees_sign(st, R, window: int, signer: int, observer: int) -> bool:
    """``signals.sees_sign`` in the current hand: the signer and its partner always, an opponent when the
    interception draw of (hand, window, signer, observer) is below ``intercept_p``."""
    if (observer - signer) % 2 == 0:
        return True
    p = R.intercept_p
    if p <= 0.0:                                       # (u >= 0: never below 0; skip the hash)
        return False
    return intercept_uniform(st.game_seeds, st.hand_number, window, signer, observer) < p


@njit(cache=True)
def encode_signs(st, R, seat: int, row: npt.NDArray[np.float32]) -> None:
    """The signal block of ``seat``'s view (signals.SIGNAL_PIECES, after OBS_DIM): the pending window's kind,
    the tokens it sees of the latest mus window and of the grande window (per seat q relative to it),
    and the channel's settings."""
    if st.phase == SIGNAL:
        row[O_SIGN_WINDOW + st.sig_window] = 1.0
    w = st.mus_round
    for s in range(4):
        q = (s - seat) % 4
        t = st.sig_mus[s]
        if t >= 0 and sees_sign(st, R, w, s, seat):
            row[O_SIGNS_MUS + NUM_SIGNS_ * q + t] = 1.0
        t = st.sig_grande[s]
        if t >= 0 and sees_sign(st, R, w + 1, s, seat):
            row[O_SIGNS_GRANDE + NUM_SIGNS_ * q + t] = 1.0
    row[O_SIGN_CONFIG] = 1.0 if R.cfg[C_SIGNALS] == SIGNALS_FREE else 0.0
    row[O_SIGN_CONFIG + 1] = R.intercept_p


@njit(cache=True, inline="always")
def write_mask(st, R, mask: npt.NDArray[np.int8], k: int) -> None:
    """The legal mask of the pending decision into ``mask[k]``: NUM_ACTIONS columns, or with signals on
    ``actions.num_actions(config)``, the sign ids' columns from :func:`pending_sign_bits`."""
    for a in range(NUM_ACTIONS_):                      # (a loop: array-to-array assignment compiles slowly)
        mask[k, a] = R.legal_masks[st.legal, a]
    if mask.shape[1] > NUM_ACTIONS_:
        bits = pending_sign_bits(st, R)
        for t in range(NUM_SIGNS_):
            mask[k, SIGNAL_BASE_ + t] = (bits >> t) & 1


@njit(cache=True, inline="always")
def is_illegal(st, R, a: int) -> bool:
    """Whether action id ``a`` is not legal for the pending decision: a non-sign id outside its Legal set
    (during a sign decision the set is Legal.NONE), or a sign id outside a sign decision or not among
    its legal tokens."""
    if 0 <= a < NUM_ACTIONS_ and R.legal_masks[st.legal, a] != 0:
        return False
    if SIGNAL_BASE_ <= a < SIGNAL_BASE_ + NUM_SIGNS_:
        return (pending_sign_bits(st, R) >> (a - SIGNAL_BASE_)) & 1 == 0
    return True


@njit(cache=True)
def write_view(S, R, b: int, obs: npt.NDArray[np.float32], mask: npt.NDArray[np.int8]) -> None:
    """The acting seat's observation and legal mask of table ``b`` into the output rows."""
    st = S[b]
    encode(st, R, (st.mano + st.rel) % 4, obs[b])
    write_mask(st, R, mask, b)


# ---------------------------------------------------------------------------------------------------
# Entry points (called by VectorMusEnv)
@njit(cache=True)
def step_table(S, O, rules: Rules, b: int, action: int, master: np.uint64, obs, mask) -> None:
    """One decision on table ``b`` (``MusGame.step``): dispatch on the phase, run every automatic transition,
    start the next episode if this one ended (unless finished tables are kept over), write the view."""
    R = rules[0]
    st = S[b]
    out = O[b]
    out.rewards[:] = 0.0
    out.finished = False
    out.winner = -1
    out.hand_finished = False
    phase = st.phase
    if phase == MUS_CALL:
        on_mus_call(st, out, R, action)
    elif phase == DISCARD:
        on_discard(st, out, R, action)
    elif phase == DECLARE:
        on_declare(st, out, R, action)
    elif phase == BET_OPEN:
        on_open(st, out, R, action)
    elif phase == BET_RESPOND:
        on_respond(st, out, R, action)
    elif phase == SIGNAL:
        on_sign(st, out, R, action)
    else:
        on_confirm(st, out, R, action)
    if st.phase == GAME_OVER and not R.cfg[C_KEEP_OVER]:   # the episode ended: auto-reset
        new_episode(st, R, b, master)
    write_view(S, R, b, obs, mask)


@njit(cache=True)
def first_illegal(S, rules: Rules, actions) -> int:
    """Index of the first table whose action is not legal for its pending decision, -1 if all are."""
    R = rules[0]
    for b in range(actions.shape[0]):
        if is_illegal(S[b], R, actions[b]):
            return b
    return -1


@njit(cache=True)
def step_serial(S, O, rules: Rules, actions, master: np.uint64, obs, mask) -> int:
    """:func:`step_tables` on one thread: every table in order, or none (returns the first illegal table, -1)."""
    bad = first_illegal(S, rules, actions)
    if bad < 0:
        for b in range(actions.shape[0]):
            step_table(S, O, rules, b, actions[b], master, obs, mask)
    return bad


@njit(cache=True, parallel=True)
def step_parallel(S, O, rules: Rules, actions, master: np.uint64, obs, mask) -> int:
    """:func:`step_tables` on numba's threads (``prange`` over the tables, each touching only its own rows), or
    none (returns the first illegal table, -1)."""
    bad = first_illegal(S, rules, actions)
    if bad < 0:
        for b in prange(actions.shape[0]):          # (b is unsigned here: cast, so that the serial build is reused)
            step_table(S, O, rules, np.int64(b), actions[b], master, obs, mask)
    return bad


def step_tables(S, O, rules: Rules, actions, master: np.uint64, obs, mask, parallel: bool) -> int:
    """Step every table, or none: returns the first table whose action is illegal (nothing changed), or -1.
    ``parallel`` runs the tables on numba's threads."""
    return (step_parallel if parallel else step_serial)(S, O, rules, actions, master, obs, mask)


@njit(cache=True)
def first_bad_table(tables, num_tables: int) -> int:
    """The first position k whose ``tables[k]`` is not a table index ``0..num_tables-1`` or repeats an earlier
    one, -1 if they are distinct table indices (the check of ``VectorMusEnv``'s subset calls)."""
    seen = np.zeros(num_tables, dtype=np.bool_)
    for k in range(tables.shape[0]):
        b = tables[k]
        if b < 0 or b >= num_tables or seen[b]:
            return k
        seen[b] = True
    return -1


@njit(cache=True)
def step_rows(S, O, rules: Rules, rows, actions, master: np.uint64, obs, mask) -> int:
    """Step only the tables ``rows`` (distinct indices), table ``b`` with ``actions[b]``, or none: returns the
    first position k whose table's action is illegal (nothing changed), or -1."""
    R = rules[0]
    for k in range(rows.shape[0]):
        b = rows[k]
        if is_illegal(S[b], R, actions[b]):
            return k
    for k in range(rows.shape[0]):
        step_table(S, O, rules, rows[k], actions[rows[k]], master, obs, mask)
    return -1


@njit(cache=True)
def step_subset(S, O, rules: Rules, tables, actions, master: np.uint64, obs, mask) -> int:
    """Step table ``tables[k]`` with ``actions[k]`` for every k, or none (``VectorMusEnv.step_tables``): returns
    -1 when done; ``-2 - k`` when ``tables[k]`` is out of range or repeated (:func:`first_bad_table`), ``k`` when
    ``actions[k]`` is illegal on its table; then nothing changed."""
    bad = first_bad_table(tables, S.shape[0])
    if bad >= 0:
        return -2 - bad
    R = rules[0]
    for k in range(tables.shape[0]):
        if is_illegal(S[tables[k]], R, actions[k]):
            return k
    for k in range(tables.shape[0]):
        step_table(S, O, rules, tables[k], actions[k], master, obs, mask)
    return -1


@njit(cache=True)
def new_episodes(S, rules: Rules, tables, master: np.uint64, obs, mask) -> None:
    """A fresh episode (the next table seed) on each of ``tables``, with its first view written."""
    R = rules[0]
    for k in range(tables.shape[0]):
        b = tables[k]
        new_episode(S[b], R, b, master)
        write_view(S, R, b, obs, mask)


@njit(cache=True)
def reset_tables(S, rules: Rules, tables, decks, manos, scores, seeds, obs, mask) -> None:
    """Start an episode on each of ``tables`` from a given first deal, scores and game seed."""
    R = rules[0]
    for k in range(tables.shape[0]):
        b = tables[k]
        st = S[b]
        st.episode += 1
        st.game_seeds = seeds[k]
        clear_episode(st)
        st.scores[0] = scores[k, 0]
        st.scores[1] = scores[k, 1]
        start_hand(st, R, decks[k], np.int64(manos[k]))
        write_view(S, R, b, obs, mask)


@njit(cache=True)
def observe_tables(S, rules: Rules, tables, seats, obs, mask) -> None:
    """Seat ``seats[k]``'s view of table ``tables[k]`` into ``obs[k]``; ``mask[k]`` is the legal mask when
    that seat is to act, zeros otherwise. ``seats[k] = -1``: the acting seat."""
    R = rules[0]
    for k in range(tables.shape[0]):
        st = S[tables[k]]
        acting = (st.mano + st.rel) % 4
        seat = acting if seats[k] < 0 else seats[k]
        encode(st, R, seat, obs[k])
        if seat == acting:
            write_mask(st, R, mask, k)
        else:
            mask[k, :] = 0


@njit(cache=True)
def legal_masks(S, rules: Rules, mask) -> None:
    """``mask[b]``: the legal mask of table ``b``'s pending decision (``(B, actions.num_actions(config))``)."""
    R = rules[0]
    for b in range(S.shape[0]):
        write_mask(S[b], R, mask, b)


@njit(cache=True)
def sample_legal(S, rules: Rules, u, actions) -> None:
    """``actions[b]``: the ``int(u[b] * n)``-th of the ``n`` legal actions of table ``b`` (ascending ids); -1 when
    it has none (a table kept at game over)."""
    R = rules[0]
    for b in range(S.shape[0]):
        st = S[b]
        if st.phase == SIGNAL:
            bits = pending_sign_bits(st, R)
            n = 0
            for t in range(NUM_SIGNS_):
                n += (bits >> t) & 1
            k = np.int64(u[b] * n)
            for t in range(NUM_SIGNS_):
                if (bits >> t) & 1:
                    if k == 0:
                        actions[b] = SIGNAL_BASE_ + t
                        break
                    k -= 1
            continue
        legal = st.legal
        n = R.legal_count[legal]
        actions[b] = R.legal_list[legal, np.int64(u[b] * n)] if n else -1     # -1: at game over (kept over)


@njit(cache=True)
def state_rows(S, rules: Rules, out) -> None:
    """``MusGame.state()`` of every table: seat 0's view, then each seat's hand one-hot over card ids
    (``out`` is ``(B, observation.state_dim(config))``)."""
    R = rules[0]
    n_obs = out.shape[1] - 4 * NUM_CARDS_
    for b in range(S.shape[0]):
        st = S[b]
        row = out[b]
        encode(st, R, np.int64(0), row[:n_obs])
        row[n_obs:] = 0.0
        for s in range(4):
            for j in range(4):
                if st.hands[s, j] >= 0:
                    row[n_obs + NUM_CARDS_ * s + st.hands[s, j]] = 1.0
