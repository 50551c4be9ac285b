"""Decision kinds (phases), lance outcomes and legal action sets, shared by both engines and the observation."""

from __future__ import annotations

import numpy as np

from .actions import DISCARD_BASE, ENVIDO_BASE, NUM_ACTIONS, Action

__all__ = [
    "Phase", "Outcome", "PHASE_NAMES", "SIGNAL_PHASE_NAME", "OUTCOME_NAMES", "ORDAGO_STAKE", "NUM_PHASES",
    "NUM_OUTCOMES", "Legal", "LEGAL_SETS", "LEGAL_MASKS",
]


class Phase:
    """Decision kinds (the ``phase`` of a game). GAME_OVER once the episode has ended."""

    MUS_CALL = 0
    DISCARD = 1
    DECLARE = 2        # only with auto_declare=False
    BET_OPEN = 3
    BET_RESPOND = 4    # r1, or r2 after r1's NO_QUIERO
    BET_CONFIRM = 5    # r2 after r1's QUIERO (partner_override)
    GAME_OVER = 6
    SIGNAL = 7         # a sign decision in a señas window (only with signals on; RULES.md §8)


PHASE_NAMES = ("mus call", "discard", "declaration", "opening round", "response", "partner confirmation",
               "game over")


class Outcome:
    """How each of the four lance slots of a hand ended (slot 3 is juego or punto)."""

    NOT_PLAYED = 0
    VOID = 1          # nobody holds pares/juego (and no punto): no stones
    UNCONTESTED = 2   # only one team holds pares/juego: it wins, bonuses at showdown
    EN_PASO = 3       # everybody passed
    ACCEPTED = 4      # a numeric stake was accepted, paid at showdown
    REFUSED = 5       # the bettor's team won the lance and was paid the fallback at once
    ORDAGO = 6        # an accepted órdago decided the game


OUTCOME_NAMES = ("not played", "void", "uncontested", "en paso", "accepted", "refused", "órdago")

#: Value of ``stake`` once an órdago is live (stakes are otherwise ints >= 2).
ORDAGO_STAKE = -1

#: Name of :attr:`Phase.SIGNAL`. It is kept out of PHASE_NAMES on purpose: the observation's ``phase``
#: one-hot has one entry per PHASE_NAMES (all zeros during a sign decision, whose window kind is in the
#: ``sign_window`` piece), so that with signals off the observation is unchanged.
SIGNAL_PHASE_NAME = "seña"

NUM_PHASES = len(PHASE_NAMES)
NUM_OUTCOMES = len(OUTCOME_NAMES)


# Legal action sets, one per kind of decision, shared by both engines (sorted, as legal_actions() returns).
def _ids(*groups: tuple[int, ...] | int) -> tuple[int, ...]:
    out: list[int] = []
    for g in groups:
        out.extend(g if isinstance(g, tuple) else (g,))
    return tuple(sorted(out))


_ENVIDO = tuple(range(ENVIDO_BASE, ENVIDO_BASE + 5))
MUS_CALL_ACTIONS = _ids(int(Action.MUS), int(Action.NO_MUS))
FORCED_NO_MUS_ACTIONS = _ids(int(Action.NO_MUS))
DISCARD_NONZERO_ACTIONS = tuple(range(DISCARD_BASE + 1, DISCARD_BASE + 16))
DISCARD_ALL_ACTIONS = tuple(range(DISCARD_BASE, DISCARD_BASE + 16))
OPEN_ACTIONS = _ids(int(Action.PASO), _ENVIDO, int(Action.ORDAGO))
RESPOND_ACTIONS = _ids(_ENVIDO, int(Action.QUIERO), int(Action.NO_QUIERO), int(Action.ORDAGO))
RESPOND_ORDAGO_ACTIONS = _ids(int(Action.QUIERO), int(Action.NO_QUIERO))
CONFIRM_ACTIONS = _ids(_ENVIDO, int(Action.QUIERO), int(Action.ORDAGO))
#: Answers once the live stake has reached ``MusConfig.max_stake`` (an RL safety cap): no more raises.
RESPOND_CAPPED_ACTIONS = _ids(int(Action.QUIERO), int(Action.NO_QUIERO), int(Action.ORDAGO))
CONFIRM_CAPPED_ACTIONS = _ids(int(Action.QUIERO), int(Action.ORDAGO))


class Legal:
    """Index of each legal set in :data:`LEGAL_SETS` / :data:`LEGAL_MASKS` (the batched engine stores it)."""

    NONE = 0
    MUS_CALL = 1
    FORCED_NO_MUS = 2
    DISCARD = 3
    DISCARD_ZERO = 4
    OPEN = 5
    RESPOND = 6
    RESPOND_ORDAGO = 7
    CONFIRM = 8
    PARES_SI = 9
    PARES_NO = 10
    JUEGO_SI = 11
    JUEGO_NO = 12
    RESPOND_CAPPED = 13
    CONFIRM_CAPPED = 14


LEGAL_SETS: tuple[tuple[int, ...], ...] = (
    (), MUS_CALL_ACTIONS, FORCED_NO_MUS_ACTIONS, DISCARD_NONZERO_ACTIONS, DISCARD_ALL_ACTIONS, OPEN_ACTIONS,
    RESPOND_ACTIONS, RESPOND_ORDAGO_ACTIONS, CONFIRM_ACTIONS, (int(Action.PARES_SI),), (int(Action.PARES_NO),),
    (int(Action.JUEGO_SI),), (int(Action.JUEGO_NO),), RESPOND_CAPPED_ACTIONS, CONFIRM_CAPPED_ACTIONS,
)
LEGAL_MASKS = np.zeros((len(LEGAL_SETS), NUM_ACTIONS), dtype=np.int8)
for _k, _s in enumerate(LEGAL_SETS):
    LEGAL_MASKS[_k, list(_s)] = 1
LEGAL_MASKS.setflags(write=False)
del _k, _s
