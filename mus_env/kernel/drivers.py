"""The kernel's entry points, called by :class:`~mus_env.vector.VectorMusEnv` over the whole batch.

:func:`step_tables` steps all tables in one compiled pass (:func:`step_parallel`: ``prange`` over the tables;
each table touches only its own rows, so results are identical whatever the number of threads), or none when
an action is illegal. :func:`step_table` is one decision on one table, as ``MusGame.step``: it dispatches on
the phase to the handler (:mod:`mus_env.kernel.handlers`), starts the table's next episode if this one ended
(unless finished tables are kept over) and writes the acting seat's view (:mod:`mus_env.kernel.view`). The
other entry points step, restart, observe, mask or sample a list of tables, and read ``MusGame.state()``.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from .handlers import (
    clear_episode,
    new_episode,
    on_confirm,
    on_declare,
    on_discard,
    on_mus_call,
    on_open,
    on_respond,
    on_sign,
    pending_sign_bits,
    seeded_episode,
    start_hand,
)
from .layout import (
    BET_OPEN,
    BET_RESPOND,
    C_KEEP_OVER,
    DECLARE,
    DISCARD,
    GAME_OVER,
    MUS_CALL,
    NUM_CARDS_,
    NUM_SIGNS_,
    SIGNAL,
    SIGNAL_BASE_,
    Rules,
)
from .view import encode, is_illegal, write_mask, write_view


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
def seed_table(S, rules: Rules, b: int, seed: np.uint64, obs, mask) -> None:
    """Table ``b``'s next episode, the game of seed ``seed`` (dealt as ``MusGame(config, seed)`` deals it), with its
    first view written."""
    seeded_episode(S[b], rules[0], seed)
    write_view(S, rules[0], b, obs, mask)


@njit(cache=True)
def step_one(S, O, rules: Rules, b: int, action: int, master: np.uint64, obs, mask) -> bool:
    """:func:`step_table` on table ``b`` when ``action`` is legal there (True); otherwise nothing changes (False)."""
    if is_illegal(S[b], rules[0], action):
        return False
    step_table(S, O, rules, b, action, master, obs, mask)
    return True


@njit(cache=True)
def observe_seat(S, rules: Rules, b: int, seat: int, row) -> None:
    """Seat ``seat``'s view of table ``b`` written into ``row`` (no mask)."""
    encode(S[b], rules[0], seat, row)


def compiled_entry(dispatcher, *args):
    """The compiled function that ``dispatcher(*args)`` runs, for arguments of the types of ``args`` (numba's public
    ``Dispatcher.compile``: compiled, or loaded from the cache, once). Calling it skips numba's choice of a
    compiled version by the arguments' types at every call, most of the cost of a call that does little work
    (``interfaces.CompiledObserver.writer``); it checks nothing, so each call must pass arguments of those types."""
    return dispatcher.compile(tuple(numba.typeof(a) for a in args))


@njit(cache=True)
def observe_view(V, rules: Rules, seat: int, row) -> None:
    """Seat ``seat``'s view written into ``row`` from one record of ``observation.VIEW_DTYPE`` (``V[0]``,
    ``MusGame.view_state``): the tables' own writer :func:`~mus_env.kernel.view.encode`, which reads the same
    field names from a record of the view as from a table's state row."""
    encode(V[0], rules[0], seat, row)


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
