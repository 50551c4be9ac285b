"""JSON hand records: a whole game written down, read back, and replayed exactly by MusGame.

A record holds the config, the game's seed, the first deal (deck, mano, starting scores), every action
with its seat, and each finished hand's results (hands, stones per lance, scores). Because every later
deal and every reshuffle is a function of the seed (:mod:`mus_env.shuffle`), replaying the actions on
``MusGame.from_deck(deck, mano, scores, config, seed)`` reproduces the game; :func:`replay` checks each
hand's scores against the record while it goes.

Format (``"format": "mus-env-record"``, ``"version": 1``)::

    {"format", "version", "config": {...MusConfig fields}, "seed", "deck", "mano", "scores",
     "players": {"0": "rule", ...}, "hands": [{"hand_number", "game_number", "mano", "deck",
     "scores_before", "scores_after", "initial_hands", "final_hands", "actions": [[seat, action, amount, auto]],
     "stones": [[lance, team, stones, reason]], "outcomes", "fourth_lance", "game_winner", "shown", "mus_rounds",
     "discards"}], "pending_actions": [[seat, action, amount, auto]], "over", "winner", "scores_now", "meta"}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .actions import ENVIDO_ACTIONS, ENVIDO_BASE, action_to_string
from .cards import hand_to_string
from .config import MusConfig
from .game import HandRecord, MusGame

__all__ = ["RECORD_FORMAT", "RECORD_VERSION", "game_record", "save_record", "load_record", "replay",
           "format_record", "RecordError"]

RECORD_FORMAT = "mus-env-record"
RECORD_VERSION = 1


class RecordError(ValueError):
    """A record that cannot be read or does not replay to the results it states."""


def _hand_dict(h: HandRecord) -> dict[str, Any]:
    return {
        "hand_number": h.hand_number, "game_number": h.game_number, "mano": h.mano, "deck": list(h.deck),
        "scores_before": list(h.scores_before), "scores_after": list(h.scores_after),
        "initial_hands": [list(x) for x in h.initial_hands], "final_hands": [list(x) for x in h.final_hands],
        "actions": [[e.seat, e.action, e.amount, e.auto] for e in h.actions],
        "stones": [[s.lance, s.team, s.stones, s.reason] for s in h.stones],
        "outcomes": list(h.outcomes), "fourth_lance": h.fourth_lance, "game_winner": h.game_winner,
        "shown": h.shown, "mus_rounds": h.mus_rounds, "discards": [list(d) for d in h.discards],
    }


def game_record(game: MusGame, players: dict[int, str] | None = None, meta: dict[str, Any] | None = None,
                first: tuple[list[int], int, tuple[int, int]] | None = None) -> dict[str, Any]:
    """The JSON-ready record of ``game`` so far (finished hands plus the actions of the hand in progress).

    Args:
        game: the game.
        players: optional name of the player at each absolute seat.
        meta: optional free-form metadata (tournament, date, ...).
        first: (deck, mano, scores) of the first hand, needed only when no hand has finished yet and the
            game was not started from its own seed; by default it is read from the game.
    """
    if game.hand_log:
        h0 = game.hand_log[0]
        deck, mano, scores = list(h0.deck), h0.mano, list(h0.scores_before)
    elif first is not None:
        deck, mano, scores = list(first[0]), first[1], list(first[2])
    else:
        deck, mano, scores = list(game._deck), game.mano, list(game._scores_before)
    return {
        "format": RECORD_FORMAT, "version": RECORD_VERSION, "config": game.config.to_dict(), "seed": game.seed,
        "deck": deck, "mano": mano, "scores": scores,
        "players": {str(k): v for k, v in (players or {}).items()},
        "hands": [_hand_dict(h) for h in game.hand_log],
        "pending_actions": [] if game.is_over else [[e.seat, e.action, e.amount, e.auto] for e in game.hand_actions],
        "over": game.is_over, "winner": game.winner, "scores_now": list(game.scores),
        "meta": meta or {},
    }


def save_record(record: dict[str, Any], path: str | Path) -> Path:
    """Write a record as JSON (UTF-8, indented)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


def load_record(path: str | Path) -> dict[str, Any]:
    """Read a record written by :func:`save_record`.

    Raises:
        RecordError: not JSON, or not a mus-env record of a supported version.
    """
    try:
        rec = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise RecordError(f"cannot read record {path}: {e}") from e
    if not isinstance(rec, dict) or rec.get("format") != RECORD_FORMAT:
        raise RecordError(f"{path} is not a mus-env record (no \"format\": \"{RECORD_FORMAT}\")")
    if rec.get("version") != RECORD_VERSION:
        raise RecordError(f"{path}: record version {rec.get('version')!r} is not supported (expected {RECORD_VERSION})")
    return rec


def _apply(game: MusGame, seat: int, action: int, amount: int) -> None:
    if game.current_player != seat:
        raise RecordError(f"record says seat {seat} acts but seat {game.current_player} is to act "
                          f"(hand {game.hand_number}, phase {game.phase_name})")
    if action in ENVIDO_ACTIONS and amount and amount != game.config.bet_sizes[action - ENVIDO_BASE]:
        game.step_envido(amount)
    else:
        game.step(action)


def replay(record: dict[str, Any], check: bool = True) -> MusGame:
    """Rebuild the game of a record by replaying its actions on MusGame.

    Args:
        record: a record dict (:func:`load_record`).
        check: verify each hand's final scores and stones against the record.

    Returns:
        The game after the last recorded action.

    Raises:
        RecordError: an action is illegal where the record puts it, or a result differs.
    """
    cfg = MusConfig.from_dict(record["config"])
    game = MusGame.from_deck(record["deck"], record["mano"], tuple(record["scores"]), cfg, record["seed"])
    try:
        for h in record["hands"]:
            for seat, action, amount, auto in h["actions"]:
                if not auto:
                    _apply(game, seat, action, amount)
            if check:
                got = game.hand_log[h["hand_number"]] if len(game.hand_log) > h["hand_number"] else None
                if got is None or list(got.scores_after) != h["scores_after"] or \
                        [[s.lance, s.team, s.stones, s.reason] for s in got.stones] != h["stones"]:
                    raise RecordError(f"hand {h['hand_number']} does not replay to the recorded result "
                                      f"(recorded {h['scores_after']}, got {got.scores_after if got else None})")
        for seat, action, amount, auto in record.get("pending_actions", []):
            if not auto:
                _apply(game, seat, action, amount)
    except ValueError as e:
        if isinstance(e, RecordError):
            raise
        raise RecordError(f"record does not replay: {e}") from e
    return game


def format_record(record: dict[str, Any]) -> str:
    """The record as readable text, hand by hand (used by ``mus replay``)."""
    cfg = MusConfig.from_dict(record["config"])
    players = record.get("players", {})
    lines = [f"Mus game, seed {record['seed']}, target {cfg.target}, {cfg.kings} kings; "
             f"start {record['scores'][0]}-{record['scores'][1]}"]
    if players:
        lines.append("players: " + ", ".join(f"seat {s} ({'team ' + str(int(s) % 2)}): {n}"
                                             for s, n in sorted(players.items())))
    for h in record["hands"]:
        lines.append("")
        lines.append(f"== hand {h['hand_number'] + 1} (game {h['game_number'] + 1}), mano seat {h['mano']}, "
                     f"score {h['scores_before'][0]}-{h['scores_before'][1]}")
        for s in range(4):
            lines.append(f"   seat {s}: {hand_to_string(h['initial_hands'][s])}"
                         + (f"  ->  {hand_to_string(h['final_hands'][s])}"
                            if h['final_hands'][s] != h['initial_hands'][s] else ""))
        words = []
        for seat, action, amount, _auto in h["actions"]:
            w = action_to_string(action, cfg, words=True)
            if action in ENVIDO_ACTIONS and amount:
                w = f"envido {amount}"
            words.append(f"s{seat} {w}")
        lines.append("   " + "; ".join(words))
        for lance, team, stones, reason in h["stones"]:
            lines.append(f"   {lance}: team {team} +{stones} ({reason})")
        names = ("grande", "chica", "pares", h["fourth_lance"])
        lines.append("   outcomes: " + ", ".join(f"{n}: {o}" for n, o in zip(names, h["outcomes"], strict=True)))
        lines.append(f"   score {h['scores_after'][0]}-{h['scores_after'][1]}"
                     + (f"  -> team {h['game_winner']} wins the game" if h["game_winner"] is not None else ""))
    if record.get("pending_actions"):
        lines.append("")
        lines.append("hand in progress: " + "; ".join(
            f"s{seat} {action_to_string(action, cfg, words=True)}"
            for seat, action, _, _ in record["pending_actions"]))
    if record.get("over"):
        lines.append("")
        final = record["scores_now"]
        lines.append(f"winner: team {record['winner']}, final score {final[0]}-{final[1]}")
    return "\n".join(lines)

