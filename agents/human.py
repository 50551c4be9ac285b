"""HumanAgent: a person at the terminal chooses each action.

Before each decision the agent prints the own cards (slot by slot) and the legal actions, each with its
action id and its Mus words (``mus_env.actions.action_to_string(a, words=True)``), then reads a line:

* an action id from the list (``24``), or its words or name (``quiero``, ``no hay mus``, ``envido 2``,
  ``ordago``, ``ENVIDO_2``; accents and case do not matter; ``envido`` alone is the smallest bet);
* when discarding, the slots of the cards to throw, each once, separated by spaces or commas (``0 2``; a
  number is always a slot there, never an action id, and ``0 0`` or ``02`` is refused), the cards
  (``Ro 4c``, or rank letters such as ``R 4``), or ``all`` / ``todas``;
* ``?`` / ``help`` shows the choices again; ``q`` / ``quit`` stops the game.

Invalid input gets an explanation and the prompt again, never an exception. End of input (Ctrl-D)
and ``q`` raise :class:`QuitGame`, which ``mus play`` catches to stop the game cleanly.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from mus_env.actions import DISCARD_BASE, ENVIDO_ACTIONS, action_to_string, discard_mask
from mus_env.cards import RANK_CHARS, card_to_string
from mus_env.config import MusConfig
from mus_env.observation import decode
from mus_env.phases import PHASE_NAMES, Phase
from mus_env.signals import SIGN_WORDS, WINDOW_NAMES
from mus_env.tables import LANCE_NAMES

from .base import Agent

__all__ = ["HumanAgent", "QuitGame"]

_QUIT_WORDS = ("q", "quit", "exit", "salir")
_HELP_WORDS = ("?", "h", "help", "ayuda")
_ALL_WORDS = ("all", "todas", "todo")


class QuitGame(Exception):
    """The human asked to stop (``q`` or end of input)."""


def _norm(text: str) -> str:
    """Lower case, no accents, single spaces, '_' as space."""
    t = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return " ".join(t.lower().replace("_", " ").split())


class HumanAgent(Agent):
    """Reads each decision from the terminal (see the module docstring for the accepted input).

    Args:
        input_fn: called with a prompt, returns the typed line (default :func:`input`); EOFError ends the game.
        output_fn: prints one message (default :func:`print`).
        config: the ruleset, for the words of the ENVIDO ids (bet sizes); default :class:`MusConfig`.
    """

    name = "human"

    def __init__(self, input_fn: Callable[[str], str] = input, output_fn: Callable[[str], None] = print,
                 config: MusConfig | None = None) -> None:
        self.input_fn = input_fn
        self.output_fn = output_fn
        self.config = config or MusConfig()

    def __repr__(self) -> str:
        return "HumanAgent()"

    # ------------------------------------------------------------------------------------------------
    def act(self, observation: npt.NDArray[np.float32], action_mask: npt.NDArray[np.int8],
            rng: np.random.Generator) -> int:
        legal = [int(a) for a in np.flatnonzero(np.asarray(action_mask) > 0)]
        if not legal:
            raise ValueError("HumanAgent.act: the mask has no legal action")
        d = decode(observation)
        if len(legal) == 1:                        # nothing to choose (a forced declaration or NO_MUS)
            return legal[0]
        self._show(d, legal)
        while True:
            try:
                text = self.input_fn("your action> ")
            except EOFError:
                raise QuitGame("end of input") from None
            action, problem = self.parse(text, legal, d)
            if action is not None:
                return action
            self.output_fn(problem)

    # ------------------------------------------------------------------------------------------------
    def _words(self, a: int) -> str:
        return action_to_string(a, self.config, words=True)

    def _show(self, d: dict, legal: list[int]) -> None:
        hand = d["hand"]
        slots = "  ".join(f"[{s}] {card_to_string(c)}" for s, c in enumerate(hand))
        phase = d["phase"]
        where = PHASE_NAMES[phase] if 0 <= phase < len(PHASE_NAMES) else "?"
        if phase == Phase.SIGNAL:
            where = f"seña, {WINDOW_NAMES[d['sign_window']]} window"
        if d["lance"] >= 0:
            where += f", {LANCE_NAMES[d['lance']]}"
            lance = d["lances"][min(d["lance"], 3)]
            if lance["stake"] == "ordago":
                where += ", facing ÓRDAGO"
            elif lance["stake"]:
                where += f", stake {lance['stake']}"
        own, other = d["scores"]
        self.output_fn(f"Your cards: {slots}   ({where}; score {own}-{other} of {d['target']})")
        seen = self.signs_text(d)
        if seen:
            self.output_fn(seen)
        if phase == Phase.DISCARD:
            self.output_fn("Discard: type the slots of the cards to throw, e.g. '0 2' (numbers here are slots "
                           "[0]-[3], not action ids), or the cards, e.g. 'Ro 4c', or 'all'. You may throw:")
            for a in legal:
                m = discard_mask(a)
                slots = " ".join(str(s) for s in range(4) if m >> s & 1)
                cards = " ".join(card_to_string(hand[s]) for s in range(4) if m >> s & 1 and s < len(hand))
                self.output_fn(f"  {slots:<8} {cards}")
        else:
            self.output_fn("Choose (number or words): " + "   ".join(f"{a}: {self._words(a)}" for a in legal))

    @staticmethod
    def signs_text(d: dict) -> str:
        """The signs seen this hand (partner always, rivals when intercepted), from a decoded observation."""
        if "signs_mus" not in d:
            return ""
        who = ("you", "right rival", "partner", "left rival")
        parts = []
        for window in ("mus", "grande"):
            seen = [f"{who[q]} {SIGN_WORDS[t].removeprefix('seña: ')}" for q, t in enumerate(d[f"signs_{window}"])
                    if t is not None]
            if seen:
                parts.append(f"{window} window: " + ", ".join(seen))
        return ("Signs seen: " + "; ".join(parts)) if parts else ""

    def parse(self, text: str, legal: list[int], d: dict) -> tuple[int | None, str]:
        """Action id of a typed line, or ``(None, explanation)`` (raises :class:`QuitGame` on ``q``)."""
        t = _norm(text)
        if not t:
            return None, "Please type an action (its number or words); '?' lists them, 'q' quits."
        if t in _QUIT_WORDS:
            raise QuitGame("the player quit")
        if t in _HELP_WORDS:
            self._show(d, legal)
            return None, "Type one of the choices above."
        discarding = d["phase"] == Phase.DISCARD
        tokens = t.replace(",", " ").split()
        if all(tok.isascii() and tok.isdigit() for tok in tokens):   # not "²": str.isdigit is Unicode
            if any(len(tok) > 6 for tok in tokens):                    # and int() refuses 4,301+ digits
                return None, f"That number is not one of the legal actions now ({', '.join(map(str, legal))})."
            if discarding:
                return self._discard_slots(tokens, legal)
            nums = [int(tok) for tok in tokens]
            if len(nums) == 1:
                if nums[0] in legal:
                    return nums[0], ""
                return None, f"{nums[0]} is not one of the legal actions now ({', '.join(map(str, legal))})."
            return None, "Type one action number."
        if discarding:
            if t in _ALL_WORDS:
                return self._discard({0, 1, 2, 3}, legal)
            slots = self._slots_of_cards(tokens, d["hand"])
            if slots is not None:
                return self._discard(slots, legal)
        for a in legal:
            words = _norm(self._words(a))
            if t in (words, _norm(action_to_string(a, self.config)), words.removeprefix("seña: ")):
                return a, ""
        if t == "envido":
            env = [a for a in legal if a in ENVIDO_ACTIONS]
            if env:
                return env[0], ""
        words = ", ".join(self._words(a) for a in legal if not discarding)
        hint = ("slots 0-3 or cards of your hand (" + " ".join(card_to_string(c) for c in d["hand"]) + ")"
                if discarding else words)
        return None, f"Did not understand {text.strip()!r}. Choose one of: {hint}."

    @classmethod
    def _discard_slots(cls, tokens: list[str], legal: list[int]) -> tuple[int | None, str]:
        """The discard of slot numbers typed at the discard prompt: each a single digit 0-3, each once."""
        if any(tok not in ("0", "1", "2", "3") for tok in tokens):
            return None, (f"Slots are 0, 1, 2 and 3, separated by spaces (e.g. '0 2'); got {' '.join(tokens)!r}. "
                          "At the discard a number is a slot, not an action id.")
        if len(set(tokens)) != len(tokens):
            return None, f"Each slot once, please: {' '.join(tokens)!r} names a slot twice."
        return cls._discard({int(tok) for tok in tokens}, legal)

    @staticmethod
    def _discard(slots: set[int], legal: list[int]) -> tuple[int | None, str]:
        mask = sum(1 << s for s in slots)
        a = DISCARD_BASE + mask
        if a in legal:
            return a, ""
        if mask == 0:
            return None, "You must discard at least one card (say 'no hay mus' at the mus call to keep them all)."
        return None, f"Discarding slots {sorted(slots)} is not allowed now."

    @staticmethod
    def _slots_of_cards(tokens: list[str], hand: list[int]) -> set[int] | None:
        """Slots named by card tokens ('ro', '4c') or rank letters ('r', '4'); None if any token fails."""
        names = [card_to_string(c).lower() for c in hand]
        taken: set[int] = set()
        for tok in tokens:
            if tok in names and names.index(tok) not in taken:
                taken.add(names.index(tok))
                continue
            if len(tok) == 1 and tok.upper() in RANK_CHARS:
                free = [s for s, n in enumerate(names) if n[0] == tok and s not in taken]
                if free:
                    taken.add(free[0])
                    continue
            return None
        return taken
