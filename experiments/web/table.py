"""One game at a browser table: a :class:`~mus_env.game.MusGame`, people at some seats and bots at the others,
the log of every move, and what each seat may see of it.

The server is the only referee. :class:`Table` applies moves (checking them with the engine and the seat's
turn), plays the bots until it is a person's turn (a person's seat waits for its move, however long), keeps a
log of the moves annotated with their lance and with who saw them, and builds the **view of one seat**
(:meth:`Table.view`): only what that seat may see under the rules (RULES.md):

* its own cards, and other seats' cards only once the rules show them (the hands of a finished hand that went
  to a showdown or an accepted órdago, ``HandRecord.shown``);
* every public move; of another seat's discard only how many cards it threw (the slots of a discard mask are
  in rank order, so they would tell which cards);
* with señas on, its own signs, its partner's, and the rivals' it intercepted (``signals.sees_sign``), never
  the others;
* the legal actions, only when it is that seat's turn.

The **public view** (``view(WATCHER)``, for a spectator) holds no hidden card at all (only the hands the rules
showed), no sign (a spectator sits at no seat, so catches none), and of a discard only its count.

A person's seat may be given to a bot (:meth:`Table.hand_over`, the host's choice when the person is away); the
record names it ``"human, then <spec>"`` and lists the handover in its ``meta``, so a restarted server rebuilds
the same table.

Cards leave this module only as card objects ``{"card": id, "text": "Ro", "number": 12, "suit": "o"}``, so a
test can check every card a response holds against what the seat may see.

A :class:`Table` is rebuilt from its record (:func:`Table.from_record`) by replaying the moves, and the bots'
random draws are seeded by the game's seed and the move number, so a game continues identically after a
restart. :func:`timeline` walks a finished record for the replay page (all hands face up: a finished record is
public).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents import Agent, act_one, make_agent
from mus_env import MusConfig, MusGame
from mus_env.actions import (
    DISCARD_ACTIONS,
    ENVIDO_ACTIONS,
    Action,
    action_to_string,
    discard_mask,
    is_sign_action,
    sign_of_action,
)
from mus_env.cards import SUITS, card_number, card_to_string, sort_hand
from mus_env.game import ActionEvent, HandRecord
from mus_env.phases import ORDAGO_STAKE, OUTCOME_NAMES
from mus_env.records import game_record, replay
from mus_env.signals import SIGN_GESTURES, SIGN_WORDS, sees_sign
from mus_env.tables import LANCE_NAMES

__all__ = ["Move", "Table", "TableError", "StaleTurn", "card_json", "public_state", "timeline", "game_at",
           "seat_decisions", "HUMAN", "WATCHER", "handovers"]

#: The player name of a person's seat in a record.
HUMAN = "human"
#: The "seat" of a spectator in :meth:`Table.view`: it sits nowhere, so sees only what is public.
WATCHER = -1


class TableError(ValueError):
    """A move or a request the table refuses; the message names the problem (the table is unchanged)."""


class StaleTurn(TableError):
    """A move made for a turn the table has left, or out of turn (another tab moved first)."""


def card_json(card: int) -> dict[str, Any]:
    """The one way a card leaves the server: id, short text (``Ro``), number printed on it, suit letter."""
    return {"card": int(card), "text": card_to_string(card), "number": card_number(card), "suit": SUITS[card // 10]}


def _cards(cards: Sequence[int], kings: int) -> list[dict[str, Any]]:
    return [card_json(c) for c in sort_hand(cards, kings)]


@dataclass(frozen=True)
class Move:
    """One entry of a table's log: an action with its seat, where it was made and who saw it.

    Attributes:
        index: position in the game's list of moves (automatic declarations included).
        hand_number: the hand it belongs to.
        seat: absolute seat that made it.
        action: action id.
        amount: stones of an ENVIDO (0 otherwise).
        auto: made by the engine (a forced declaration).
        lance: the lance being bet or declared ("" in the mus phase).
        phase: the decision's phase name (``MusGame.phase_name``).
        seen_by: bit ``s`` set when seat ``s`` saw the move (every seat but for rival signs not intercepted).
        thrown: the cards a discard threw (seen by its own seat only).
    """

    index: int
    hand_number: int
    seat: int
    action: int
    amount: int
    auto: bool
    lance: str
    phase: str
    seen_by: int = 0b1111
    thrown: tuple[int, ...] = ()

    def text(self, config: MusConfig, seat: int | None = None) -> str:
        """The move in Mus words as ``seat`` knows it (None: everything, as in a public replay)."""
        if self.action in DISCARD_ACTIONS:
            n = bin(discard_mask(self.action)).count("1")
            if seat is None or seat == self.seat:
                return f"descarta {n}: " + " ".join(card_to_string(c) for c in self.thrown)
            return f"descarta {n}"
        if self.action in ENVIDO_ACTIONS and self.amount:
            return f"envido {self.amount}"
        if is_sign_action(self.action):
            t = int(sign_of_action(self.action))
            return f"{SIGN_WORDS[t]} ({SIGN_GESTURES[t]})"
        return action_to_string(self.action, config, words=True)

    def json(self, config: MusConfig, seat: int | None, kings: int) -> dict[str, Any]:
        """The move for ``seat``'s view (None: the public replay). Another seat's discard keeps only its count."""
        mine = seat is None or seat == self.seat
        out: dict[str, Any] = {"index": self.index, "hand": self.hand_number, "seat": self.seat, "auto": self.auto,
                               "lance": self.lance, "phase": self.phase, "text": self.text(config, seat)}
        if self.action in DISCARD_ACTIONS:
            out["kind"], out["count"] = "discard", bin(discard_mask(self.action)).count("1")
            if mine:
                out["action"], out["thrown"] = self.action, _cards(self.thrown, kings)
        else:
            out["kind"] = "sign" if is_sign_action(self.action) else "move"
            out["action"] = self.action
        return out


@dataclass
class Table:
    """A game in progress with people at the seats ``people`` (none: bots only, as in a replay) and bots
    elsewhere (``specs``: the agent spec of each bot's seat).

    Build one with :meth:`new` or :meth:`from_record`; :meth:`play` takes a person's move and lets the bots
    answer; :meth:`view` is what a seat (or a spectator) may see.
    """

    game: MusGame
    people: frozenset[int]
    specs: dict[int, str]
    bots: dict[int, Agent] = field(default_factory=dict)
    log: list[Move] = field(default_factory=list)
    first: tuple[list[int], int, tuple[int, int]] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    # ----------------------------------------------------------------------------------------------------
    # building
    @classmethod
    def new(cls, config: MusConfig, people: int | Iterable[int], specs: Mapping[int, str], seed: int | None = None,
            agents: Mapping[int, Agent] | None = None, meta: Mapping[str, Any] | None = None) -> Table:
        """A new game: people at ``people`` (one seat or several), and ``specs`` names the bot at each other seat
        (``make_agent`` specs); ``agents`` may give them already built (by seat). The bots play until it is a
        person's turn."""
        seats = [people] if not isinstance(people, Iterable) else list(people)
        bad = any(isinstance(s, bool) or s not in (0, 1, 2, 3) for s in seats)
        if not seats or bad or len(set(seats)) < len(seats):
            raise TableError(f"people sit at one or more different seats 0, 1, 2 or 3, got {people!r}")
        others = sorted(set(range(4)) - set(seats))
        if sorted(specs) != others:
            raise TableError(f"give a bot for each of the seats {others}, got seats {sorted(specs)}")
        game = MusGame(config, seed=seed)
        table = cls(game=game, people=frozenset(int(s) for s in seats),
                    specs={int(s): str(v) for s, v in specs.items()},
                    first=(list(game.deck), game.mano, tuple(game.scores)), meta=dict(meta or {}))
        table.bots = dict(agents) if agents else {s: make_agent(v) for s, v in table.specs.items()}
        table.advance()
        return table

    @classmethod
    def from_record(cls, record: dict[str, Any], agents: Mapping[int, Agent] | None = None,
                    play_bots: bool = True) -> Table:
        """Rebuild a table from its record: the record is verified (``records.replay``, every stored result
        compared), then its moves are applied again to rebuild the log. ``play_bots`` builds the bots of the
        record's ``players`` (for a game to continue) and lets them play if it is their turn.

        Raises:
            mus_env.records.RecordError: the record is malformed or does not replay.
            ValueError: a bot spec of the record cannot be built.
        """
        replay(record, check=True)
        cfg = MusConfig.from_dict(record["config"])
        players = {int(k): str(v) for k, v in record["players"].items()}
        meta = dict(record.get("meta") or {})
        specs = {s: v for s, v in players.items() if v != HUMAN}
        for h in handovers(meta):
            specs[h["seat"]] = h["agent"]                          # the bot that plays the seat now
        game = MusGame.from_deck(record["deck"], record["mano"], tuple(record["scores"]), cfg, record["seed"])
        table = cls(game=game, people=frozenset(s for s, v in players.items() if v == HUMAN), specs=specs,
                    first=(list(record["deck"]), int(record["mano"]), tuple(record["scores"])), meta=meta)
        moves = [e for h in record["hands"] for e in h["actions"]] + list(record["pending_actions"])
        for seat, action, amount, auto in moves:
            if not auto:
                table.apply(int(seat), int(action), int(amount))
        if play_bots:
            table.bots = dict(agents) if agents else {s: make_agent(v) for s, v in table.specs.items()}
            table.advance()
        return table

    # ----------------------------------------------------------------------------------------------------
    # moves
    @property
    def turn(self) -> int:
        """The number of decisions made so far (automatic declarations excluded): a move names the turn it was
        made in, so a second tab's stale move is refused."""
        return sum(1 for m in self.log if not m.auto)

    def apply(self, seat: int, action: int, amount: int = 0) -> None:
        """Apply ``seat``'s move and log it (with the declarations the engine makes after it). No check of whose
        table this is: :meth:`play` checks the person's moves; this is for bots, rebuilding and replays.

        Raises:
            mus_env.IllegalActionError: the engine refuses the move (nothing changes).
        """
        g = self.game
        before_hand, before = g.hand_number, len(g.hand_actions)
        lance = LANCE_NAMES[g.lance] if g.lance >= 0 else ""
        phase = g.phase_name
        window = g.sign_window_counter
        thrown = tuple(g.hands[seat])
        if action in ENVIDO_ACTIONS and amount and amount not in g.config.bet_sizes:
            g.step_envido(amount)
        else:
            g.step(action)
        ended = g.hand_number != before_hand or g.is_over
        events: Sequence[ActionEvent] = (g.hand_log[-1].actions if ended else g.hand_actions)[before:]
        p = g.config.signal_intercept_p
        for ev in events:
            seen = 0b1111
            if is_sign_action(ev.action) and window is not None:
                seen = sum(1 << o for o in range(4)
                           if sees_sign(g.seed, before_hand, window, ev.seat, o, p))
            mine = ev.seat == seat and not ev.auto
            move_lance = lance if mine else ("pares" if ev.action in (Action.PARES_SI, Action.PARES_NO)
                                             else "juego" if ev.action in (Action.JUEGO_SI, Action.JUEGO_NO) else lance)
            if mine and ev.action in DISCARD_ACTIONS:
                m = discard_mask(ev.action)
                kept = tuple(c for k, c in enumerate(thrown) if m >> k & 1)
            else:
                kept = ()
            self.log.append(Move(len(self.log), before_hand, ev.seat, ev.action, ev.amount, ev.auto, move_lance,
                                 phase if mine else "declaration", seen, kept))

    def _bot_rng(self) -> np.random.Generator:
        # seeded by the game and the move number: a restarted server makes the same bot moves
        return np.random.default_rng([self.game.seed % 2**63, self.turn])

    def advance(self, limit: int = 100_000) -> None:
        """Let the bots play until it is a person's turn or the game is over."""
        g = self.game
        for _ in range(limit):
            if g.is_over or g.current_player in self.people:
                return
            seat = g.current_player
            action = act_one(self.bots[seat], g.observe(seat), g.legal_action_mask(), self._bot_rng(), g.table_rows())
            self.apply(seat, action)
        raise TableError(f"the bots made {limit} moves without reaching the person's turn (an endless raise war?)")

    def play(self, action: Any, turn: Any, seat: int | None = None) -> None:
        """The move ``action`` of the person at ``seat`` (None: the only person of the table) in turn ``turn``,
        then the bots' answers.

        Raises:
            TableError: nobody (or a bot) plays ``seat``, the game is over, it is not ``seat``'s turn, ``turn`` is
                not the current one (a stale page: another tab moved first), or the action is malformed or
                illegal; the message names the legal actions, and nothing changes.
        """
        g = self.game
        if seat is None:
            if len(self.people) != 1:
                raise TableError("nobody plays at this table" if not self.people else
                                 f"people play seats {sorted(self.people)}: name the seat that moves")
            seat = next(iter(self.people))
        if seat not in self.people:
            raise TableError(f"seat {seat!r} is not played by a person at this table")
        if isinstance(turn, bool) or not isinstance(turn, int) or turn != self.turn:
            raise StaleTurn(f"this move was made for turn {turn!r}, but the table is at turn {self.turn} "
                             "(another tab or a reload moved first): reload the page")
        if g.is_over:
            raise TableError("the game is over")
        if g.current_player != seat:
            raise StaleTurn(f"it is seat {g.current_player}'s turn, not yours (seat {seat})")
        if isinstance(action, bool) or not isinstance(action, int):
            raise TableError(f"an action is an integer id, got {action!r}; legal: {g.legal_actions()}")
        legal = g.legal_actions()
        if action not in legal:
            raise TableError(f"action {action} is not legal now ({g.phase_name}); legal: {legal}")
        self.apply(seat, action)
        self.advance()

    def hand_over(self, seat: int, spec: str, agent: Agent) -> None:
        """Give the person's seat ``seat`` to the bot ``agent`` (of spec ``spec``) from now on, and let the bots
        play. The handover is public: the record lists it in ``meta["handovers"]``.

        Raises:
            TableError: no person plays ``seat`` (a bot already does, or it is no seat), or the game is over.
        """
        if isinstance(seat, bool) or seat not in self.people:
            raise TableError(f"seat {seat!r} is not played by a person at this table (people: {sorted(self.people)})")
        if self.game.is_over:
            raise TableError("the game is over")
        self.people = self.people - {seat}
        self.specs[seat] = str(spec)
        self.bots[seat] = agent
        self.meta["handovers"] = [*handovers(self.meta), {"seat": seat, "turn": self.turn, "agent": str(spec)}]
        self.advance()

    def record(self) -> dict[str, Any]:
        """The game's record (``mus_env.records`` format): a person's seat is named :data:`HUMAN`, a seat given
        to a bot ``"human, then <spec>"``."""
        given = {h["seat"] for h in handovers(self.meta)}
        players = {s: f"{HUMAN}, then {v}" if s in given else v for s, v in self.specs.items()}
        players.update({s: HUMAN for s in self.people})
        return game_record(self.game, players=players, meta=self.meta, first=self.first)

    # ----------------------------------------------------------------------------------------------------
    # views
    def legal(self) -> list[dict[str, Any]]:
        """The legal actions of the seat to act, with their words (the ids the page sends back)."""
        g = self.game
        out = []
        for a in g.legal_actions():
            item: dict[str, Any] = {"action": a}
            if a in DISCARD_ACTIONS:
                item["kind"], item["mask"] = "discard", discard_mask(a)
                item["text"] = f"descarta {bin(discard_mask(a)).count('1')}"
            elif is_sign_action(a):
                t = int(sign_of_action(a))
                item["kind"], item["text"], item["gesture"] = "sign", SIGN_WORDS[t], SIGN_GESTURES[t]
            else:
                item["kind"] = "move"
                item["text"] = action_to_string(a, g.config, words=True)
            out.append(item)
        return out

    def sees(self, move: Move, seat: int) -> bool:
        """Whether ``seat`` (or :data:`WATCHER`) saw ``move``: a spectator sees every move but the signs."""
        if seat == WATCHER:
            return not is_sign_action(move.action)
        return bool((move.seen_by >> seat) & 1)

    def view(self, seat: int) -> dict[str, Any]:
        """Everything ``seat`` may see now, as JSON values (see the module docstring); :data:`WATCHER`: the
        public view of a spectator.

        Raises:
            TableError: ``seat`` is neither a seat 0..3 nor :data:`WATCHER`.
        """
        if isinstance(seat, bool) or seat not in (0, 1, 2, 3, WATCHER):
            raise TableError(f"a view is of a seat 0..3 or of a spectator, got {seat!r}")
        g, cfg = self.game, self.game.config
        watcher = seat == WATCHER
        kings = cfg.kings
        names = self.player_names(None if watcher else seat)
        hand = g.hand_number
        history = [m.json(cfg, seat, kings) for m in self.log if m.hand_number == hand and self.sees(m, seat)]
        signs = {"mus": {}, "grande": {}} if watcher else g.signs_seen(seat)

        def role(s: int) -> str:
            return "player" if watcher else "you" if s == seat else "partner" if s % 2 == seat % 2 else "rival"

        view: dict[str, Any] = {
            "seat": None if watcher else seat, "turn": self.turn, "over": g.is_over, "winner": g.winner,
            "config": {"kings": kings, "target": cfg.target, "signals": cfg.signals,
                       "signal_intercept_p": cfg.signal_intercept_p},
            "players": [{"seat": s, "name": names[s], "team": s % 2, "role": role(s),
                         "person": s in self.people} for s in range(4)],
            "mano": g.mano if not g.is_over else None, "current_player": g.current_player,
            "phase": g.phase_name if not g.is_over else "game over",
            "lance": LANCE_NAMES[g.lance] if g.lance >= 0 else None,
            "hand_number": hand, "game_number": g.game_number, "scores": list(g.scores),
            "amarracos": [[s // 5, s % 5] for s in g.scores], "games_won": list(g.games_won),
            "hand_stones": list(g.hand_stones) if not g.is_over else [0, 0],
            "cards": _cards(g.hands[seat], kings) if not g.is_over and not watcher else [],
            "lances": self._lances() if not g.is_over else [],
            "betting": self._betting(),
            "declarations": self._declarations() if not g.is_over else {"pares": [None] * 4, "juego": [None] * 4},
            "discards": [list(r) for r in g.discard_counts] if not g.is_over else [],
            "history": history,
            "signs": {w: {str(s): {"token": t, "text": SIGN_WORDS[t], "gesture": SIGN_GESTURES[t]}
                          for s, t in d.items()} for w, d in signs.items()},
            "legal": self.legal() if not g.is_over and g.current_player == seat else [],
            "hands": [self.hand_summary(h, seat) for h in g.hand_log],
        }
        return view

    def player_names(self, seat: int | None) -> list[str]:
        """Names of the four seats as ``seat`` sees them ("you" for its own; None: as the record names them)."""
        out = []
        for s in range(4):
            if seat is not None and s == seat:
                out.append("you")
            elif s in self.people:
                out.append(HUMAN)
            else:
                out.append(self.specs.get(s, "?"))
        return out

    def _lances(self) -> list[dict[str, Any]]:
        out = []
        for slot in range(4):
            ls = self.game.lance_state(slot)
            out.append({"lance": LANCE_NAMES[ls.lance], "outcome": OUTCOME_NAMES[ls.outcome],
                        "stake": "órdago" if ls.stake == ORDAGO_STAKE else ls.stake, "fallback": ls.fallback,
                        "bettor_team": ls.bettor, "winner_team": ls.winner})
        return out

    def _betting(self) -> dict[str, Any] | None:
        b = self.game.betting
        if b is None:
            return None
        return {"lance": LANCE_NAMES[b["lance"]], "stake": "órdago" if b["stake"] == ORDAGO_STAKE else b["stake"],
                "fallback": b["fallback"], "bettor_team": b["bettor"], "last": b["last"], "responder": b["responder"]}

    def _declarations(self) -> dict[str, list[bool | None]]:
        pares, juego = self.game.declarations
        conv = {1: True, 0: False, -1: None}
        return {"pares": [conv[v] for v in pares], "juego": [conv[v] for v in juego]}

    def hand_summary(self, h: HandRecord, seat: int | None) -> dict[str, Any]:
        """A finished hand as ``seat`` knows it (:data:`WATCHER`: as a spectator; None: everything, as in a
        public replay): its moves that ``seat`` saw, and the final hands the rules showed (its own too)."""
        kings = self.game.config.kings
        out: dict[str, Any] = {
            "hand_number": h.hand_number, "game_number": h.game_number, "mano": h.mano,
            "scores_before": list(h.scores_before), "scores_after": list(h.scores_after),
            "stones": [{"lance": e.lance, "team": e.team, "stones": e.stones, "reason": e.reason} for e in h.stones],
            "outcomes": list(h.outcomes), "fourth_lance": h.fourth_lance, "game_winner": h.game_winner,
            "shown": h.shown, "by_ordago": h.by_ordago,
            "moves": [m.json(self.game.config, seat, kings) for m in self.log
                      if m.hand_number == h.hand_number and (seat is None or self.sees(m, seat))],
        }
        if h.shown or seat is None:
            out["final_hands"] = [_cards(h.final_hands[s], kings) for s in range(4)]
        elif seat is not None:
            out["final_hands"] = [_cards(h.final_hands[s], kings) if s == seat else None for s in range(4)]
        return out


def handovers(meta: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The handovers a record's ``meta`` lists (``[{"seat", "turn", "agent"}]``: a person's seat given to a bot)."""
    out = []
    for h in meta.get("handovers") or []:
        if not isinstance(h, dict) or h.get("seat") not in (0, 1, 2, 3) or not isinstance(h.get("agent"), str):
            raise TableError(f"a handover is {{'seat': 0..3, 'turn': n, 'agent': spec}}, got {str(h)[:80]!r}")
        out.append(h)
    return out


def _rebuild(record: dict[str, Any]) -> tuple[Table, list[tuple[int, int, int]]]:
    """A bots-free table at the record's first deal, and the record's decisions (automatic ones left out)."""
    replay(record, check=True)
    cfg = MusConfig.from_dict(record["config"])
    players = {int(k): str(v) for k, v in record["players"].items()}
    game = MusGame.from_deck(record["deck"], record["mano"], tuple(record["scores"]), cfg, record["seed"])
    table = Table(game=game, people=frozenset(), specs=players, meta=dict(record.get("meta") or {}))
    moves = [e for h in record["hands"] for e in h["actions"]] + list(record["pending_actions"])
    return table, [(int(s), int(a), int(n)) for s, a, n, auto in moves if not auto]


def public_state(game: MusGame) -> dict[str, Any]:
    """The whole table with every hand face up (for replays of finished games, which are public)."""
    kings = game.config.kings
    return {"hand_number": game.hand_number, "game_number": game.game_number, "scores": list(game.scores),
            "mano": game.mano if not game.is_over else None, "current_player": game.current_player,
            "phase": game.phase_name if not game.is_over else "game over",
            "lance": LANCE_NAMES[game.lance] if game.lance >= 0 else None,
            "cards": [_cards(game.hands[s], kings) for s in range(4)] if not game.is_over else [],
            "legal": game.legal_actions() if not game.is_over else []}


def timeline(record: dict[str, Any]) -> dict[str, Any]:
    """A finished record decision by decision, for the replay page: ``steps[k]`` is the table before decision
    ``k`` (every hand face up) and the move made there; the last step is the final table (no move).

    Raises:
        mus_env.records.RecordError: the record is malformed or does not replay.
    """
    table, decisions = _rebuild(record)
    cfg = table.game.config
    steps = []
    for seat, action, amount in decisions:
        state = public_state(table.game)
        before = len(table.log)
        table.apply(seat, action, amount)
        state["move"] = table.log[before].json(cfg, None, cfg.kings)
        state["move"]["after"] = [m.json(cfg, None, cfg.kings) for m in table.log[before + 1:]]
        steps.append(state)
    steps.append({**public_state(table.game), "move": None})
    return {"players": table.player_names(None), "config": cfg.to_dict(), "seed": table.game.seed,
            "winner": table.game.winner, "scores": list(table.game.scores), "steps": steps,
            "hands": [table.hand_summary(h, None) for h in table.game.hand_log]}


def game_at(record: dict[str, Any], k: int) -> MusGame:
    """The game of a record as it was before its decision ``k`` (0-based; automatic declarations not counted).

    Raises:
        mus_env.records.RecordError: the record does not replay.
        TableError: ``k`` is not a decision of the record.
    """
    table, decisions = _rebuild(record)
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(decisions):
        raise TableError(f"step must be a decision 0..{len(decisions) - 1} of this record, got {k!r}")
    for seat, action, amount in decisions[:k]:
        table.apply(seat, action, amount)
    return table.game


def seat_decisions(record: dict[str, Any], seat: int, hand: int) -> Iterator[tuple[int, MusGame, int]]:
    """``(turn, game, action)`` for each decision ``seat`` made in hand ``hand`` of a record: the game as it was
    before the decision (the same object, moved on between items: read it before asking for the next) and the
    action played there. Automatic declarations are no decisions.

    Raises:
        mus_env.records.RecordError: the record does not replay.
    """
    table, decisions = _rebuild(record)
    for turn, (s, action, amount) in enumerate(decisions):
        g = table.game
        if g.hand_number > hand:
            return
        if s == seat and g.hand_number == hand:
            yield turn, g, action
        table.apply(s, action, amount)
