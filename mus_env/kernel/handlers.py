"""The rules on one table's row: the handlers of :class:`mus_env.game.MusGame`, compiled with numba.

Inside a table the code reads like ``MusGame``: the functions below carry the names of its handlers
(``on_mus_call``, ``on_discard``, ``serve_replacements``, ``begin_lances``, ``open_lance``, ``after_lance``,
``declare``, ``on_declare``, ``start_declared_lance``, ``on_open``, ``bet``, ``on_respond``, ``on_confirm``,
``accept``, ``refuse``, ``add_stones``, ``lance_winner``, ``do_showdown``, ``finish_hand``, ``next_hand``,
``end_game``) and do the same thing on the row, with the same arguments less ``self`` (the row ``st``, its
step outputs ``out`` and the read-only rules ``R``; their layouts are in :mod:`mus_env.kernel.layout`). Seats
inside a hand are relative to the mano (``rel = (seat - mano) % 4``) as in RULES.md; stored seats are absolute
unless the field's meaning says "relative".

As in ``MusGame``, a finished episode leaves the table at its game-over state (:func:`end_game`); the
stepping loop (``drivers.step_table``) then starts the table's next episode (:func:`new_episode`) unless the
rules keep finished tables over (``make_rules(..., keep_over=True)``, ``VectorMusEnv(auto_reset=False)``).

Randomness is :mod:`mus_env.shuffle` re-expressed for numba (:func:`event_hash`, :func:`deal_deck`,
:func:`reshuffle`): bit-identical SplitMix64 hashes of (seed, event), so a table and a ``MusGame`` with
the same seed deal and reshuffle the same cards (``tests/test_vector.py`` holds the engines equal).

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
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from ..actions import DISCARD_BASE
from ..phases import ORDAGO_STAKE
from ..tables import CHICA, GRANDE, JUEGO, PARES, PUNTO, REAL31_JUEGO_RANK
from .layout import (
    ACCEPTED,
    ALL_SEATS,
    ALL_SIGNS_,
    BET_CONFIRM,
    BET_OPEN,
    BET_RESPOND,
    C_AUTO_DECLARE,
    C_DISCARD_LEGAL,
    C_EXCLUDE_OWN,
    C_FIRST_MANO,
    C_HOLDERS_ONLY,
    C_JUEGOS,
    C_MAX_MUS,
    C_MAX_STAKE,
    C_OVERRIDE,
    C_PUNTO,
    C_REAL31,
    C_SIGNALS,
    C_STONES_REWARD,
    C_TARGET,
    C_VACAS,
    DECLARE,
    DISCARD,
    DISCARD_ROUNDS_,
    EN_PASO,
    GAME_OVER,
    INV_2_53,
    JUEGO_SI_A,
    L_CONFIRM,
    L_CONFIRM_CAPPED,
    L_FORCED_NO_MUS,
    L_JUEGO_NO,
    L_JUEGO_SI,
    L_MUS_CALL,
    L_NONE,
    L_OPEN,
    L_PARES_NO,
    L_PARES_SI,
    L_RESPOND,
    L_RESPOND_CAPPED,
    L_RESPOND_ORDAGO,
    MUS_BIT,
    MUS_CALL,
    NO_MUS_A,
    NO_QUIERO_A,
    NOT_PLAYED,
    NUM_CARDS_,
    ORDAGO_A,
    ORDAGO_OUT,
    PARES_SI_A,
    PASO_A,
    QUIERO_A,
    REAL31_BIT,
    REFUSED,
    SIGNAL,
    SIGNAL_BASE_,
    SIGNALS_FREE,
    U_DEAL,
    U_GOLDEN,
    U_M1,
    U_M2,
    U_MANO,
    U_RESHUFFLE,
    U_S11,
    U_S27,
    U_S30,
    U_S31,
    U_S32,
    U_SIGN,
    U_SIGNAL,
    U_TABLE,
    UNCONTESTED,
    VOID,
    WINDOW_GRANDE_,
    WINDOW_MUS_,
)


# ---------------------------------------------------------------------------------------------------
# Randomness (mus_env.shuffle, bit for bit)
@njit(cache=True, inline="always")
def mix(x: np.uint64) -> np.uint64:
    """SplitMix64 finaliser (wrapping uint64 arithmetic)."""
    x = x + U_GOLDEN
    x = (x ^ (x >> U_S30)) * U_M1
    x = (x ^ (x >> U_S27)) * U_M2
    return x ^ (x >> U_S31)


@njit(cache=True)
def event_hash(seed: np.uint64, stream: np.uint64, a: np.uint64, b: np.uint64) -> np.uint64:
    """``shuffle.event_hash`` of one event: (seed, stream, a, b)."""
    return mix(mix(mix(mix(seed) ^ stream) ^ a) ^ (b << U_S32))


@njit(cache=True)
def intercept_uniform(seed: np.uint64, hand_number: int, window: int, signer: int, observer: int) -> float:
    """``signals.intercept_uniform``: the uniform number in [0, 1) that decides whether opponent ``observer``
    sees ``signer``'s token in window counter ``window`` of hand ``hand_number`` (absolute seats)."""
    h = event_hash(seed, U_SIGNAL, np.uint64(hand_number), np.uint64(16 * window + 4 * signer + observer))
    return np.float64(h >> U_S11) * INV_2_53


@njit(cache=True)
def card_key(h: np.uint64, card: int) -> np.uint64:
    """Hash key of ``card`` for the event hash ``h`` (``shuffle.card_keys``)."""
    return mix(h ^ (np.uint64(card) * U_GOLDEN))


@njit(cache=True, inline="always")
def sort_by_key(cards: npt.NDArray[np.int8], n: int, h: np.uint64) -> None:
    """Order ``cards[:n]`` by their keys for the event ``h`` (the order ``shuffle`` gives). The keys are
    distinct 64-bit hashes, so each card's place is the number of smaller keys: a branch-free count that
    the compiler vectorises (about twice as fast as a comparison sort of 40 random keys). The sign bit is
    flipped so that signed comparisons order the unsigned keys exactly."""
    keys = np.empty(n, dtype=np.int64)
    src = cards[:n].copy()
    for i in range(n):
        keys[i] = np.int64(card_key(h, src[i]) ^ U_SIGN)
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
    sort_by_key(deck, NUM_CARDS_, event_hash(seed, U_DEAL, np.uint64(hand_number), np.uint64(0)))
    return deck


@njit(cache=True)
def table_seed(master: np.uint64, table: int, episode: int) -> np.uint64:
    """``shuffle.table_seeds``: the game seed of a table's episode."""
    return event_hash(master, U_TABLE, np.uint64(table), np.uint64(episode))


@njit(cache=True)
def first_mano(seed: np.uint64) -> int:
    """``shuffle.first_mano``: the first hand's mano when ``first_mano="random"``."""
    return np.int64(event_hash(seed, U_MANO, np.uint64(0), np.uint64(0)) % np.uint64(4))


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
    sort_by_key(st.stock, n, event_hash(st.game_seeds, U_RESHUFFLE, np.uint64(st.hand_number),
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
def seeded_episode(st, R, seed: np.uint64) -> None:
    """The table's next episode, the game of seed ``seed``: dealt as ``MusGame(config, seed)`` deals it."""
    st.episode += 1
    st.game_seeds = seed
    clear_episode(st)
    fm = R.cfg[C_FIRST_MANO]
    mano = first_mano(st.game_seeds) if fm < 0 else fm
    start_hand(st, R, deal_deck(st.game_seeds, st.hand_number), mano)


@njit(cache=True)
def new_episode(st, R, b: int, master: np.uint64) -> None:
    """A fresh episode on table ``b`` from its next table seed, ``table_seed(master, b, episode + 1)``, dealt
    as ``MusGame(config, seed)`` deals it (auto-reset, :func:`new_episodes`)."""
    seeded_episode(st, R, table_seed(master, b, st.episode + 1))
