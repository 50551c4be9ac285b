"""The kernel's data: the layouts of a table's state row, of a step's outputs and of the read-only rules, and
the constants the compiled code reads.

:data:`STATE_FIELDS` is the one place where a table's state is documented (one row of a numpy structured array,
:data:`STATE_DTYPE`); :data:`OUT_FIELDS` is what a step reports per table; :data:`RULES_FIELDS` holds the
tables and switches of one engine, built by :func:`make_rules` (``R`` in the handlers). Module-level ints and
numpy scalars are compile-time constants for numba: config switch indexes (``C_*``), phase, legal-set, outcome
and action ids, observation offsets (``O_*``), the señas' offsets and bits, the SplitMix64 constants as uint64
(``U_*``). Nothing here is compiled; it imports numpy and the rules modules only.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..actions import ENVIDO_BASE, NUM_ACTIONS, NUM_SIGNS, SIGNAL_BASE, Action, Sign
from ..cards import NUM_CARDS, card_number, slot_positions, value_table
from ..config import REAL31_CHOICES, SIGNALS_CHOICES, MusConfig
from ..observation import (
    DISCARD_ROUNDS,
    OBS_DIM,
    OFFSETS,
    ROUNDS_SCALE,
    STAKE_SCALE,
    TARGET_SCALE,
    VIEW_FIELDS,
    speech_of,
)
from ..phases import LEGAL_MASKS, LEGAL_SETS, NUM_OUTCOMES, Legal, Outcome, Phase
from ..shuffle import (
    SPLITMIX_GOLDEN,
    SPLITMIX_M1,
    SPLITMIX_M2,
    STREAM_DEAL,
    STREAM_MANO,
    STREAM_RESHUFFLE,
    STREAM_SIGNAL,
    STREAM_TABLE,
)
from ..signals import ALL_SIGNS, SIGNAL_OFFSETS, WINDOW_GRANDE, WINDOW_MUS, hand_sign_bits
from ..tables import get_tables

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
# The view's compiled writer (view.encode) reads a table's row and a MusGame's view record (observation.VIEW_FIELDS)
# alike: each field of the record is a state field of the same name, shape and kind of value.
_STATE_SHAPES = {name: (np.dtype(dt).kind, shape) for name, dt, shape, _ in STATE_FIELDS}
assert all(_STATE_SHAPES.get(name, ("", None))[1] == shape and _STATE_SHAPES[name][0] in "iub" + np.dtype(dt).kind
           for name, dt, shape, _ in VIEW_FIELDS), [f[0] for f in VIEW_FIELDS if f[0] not in _STATE_SHAPES]

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
U_GOLDEN, U_M1, U_M2 = np.uint64(SPLITMIX_GOLDEN), np.uint64(SPLITMIX_M1), np.uint64(SPLITMIX_M2)
U_S30, U_S27, U_S31, U_S32 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(32)
U_SIGN = np.uint64(1 << 63)
U_DEAL, U_RESHUFFLE = np.uint64(STREAM_DEAL), np.uint64(STREAM_RESHUFFLE)
U_MANO, U_TABLE = np.uint64(STREAM_MANO), np.uint64(STREAM_TABLE)
U_SIGNAL, U_S11 = np.uint64(STREAM_SIGNAL), np.uint64(11)
INV_2_53 = 1.0 / 9007199254740992.0


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
