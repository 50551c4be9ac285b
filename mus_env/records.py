"""JSON hand records: a whole game written down, read back, and replayed exactly by MusGame.

A record holds the config, the game's seed, the first deal (deck, mano, starting scores), every action
with its seat, and each finished hand's results (hands, stones per lance, scores). Because every later
deal and every reshuffle is a function of the seed (:mod:`mus_env.shuffle`), replaying the actions on
``MusGame.from_deck(deck, mano, scores, config, seed)`` reproduces the game. :func:`replay` rebuilds it
from those inputs alone and compares every stored result with what it rebuilt: each hand's deck, hands,
actions (the automatic declarations too), stones, outcomes, scores, mus rounds, discards and game winner,
then the hand in progress, ``over``, ``winner`` and ``scores_now``. Any difference, and any malformed
field, is a :class:`RecordError` that names the field (``hands[2].final_hands[1]``).

Format (``"format": "mus-env-record"``, ``"version": 1``)::

    {"format", "version", "config": {...MusConfig fields}, "seed", "deck", "mano", "scores",
     "players": {"0": "rule", ...}, "hands": [{"hand_number", "game_number", "mano", "deck",
     "scores_before", "scores_after", "initial_hands", "final_hands", "actions": [[seat, action, amount, auto]],
     "stones": [[lance, team, stones, reason]], "outcomes", "fourth_lance", "game_winner", "shown", "mus_rounds",
     "discards"}], "pending_actions": [[seat, action, amount, auto]], "over", "winner", "scores_now", "meta"}

The inputs are ``config``, ``seed``, ``deck``, ``mano``, ``scores`` and the non-automatic actions; every
other field except ``players`` and ``meta`` (free-form labels that the game never reads) is a result
that replay checks. With signals on (``config.signals`` "truthful" or "free", RULES.md §8) the sign
decisions are actions like any other (ids 31..46, in the hand's ``actions`` where they were made); who saw
which sign is a function of the seed (``signals.sees_sign``), so replay rebuilds it too. Files are at most
:data:`MAX_RECORD_BYTES` long and are written atomically.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .actions import ENVIDO_ACTIONS, ENVIDO_BASE, NUM_ACTIONS, action_to_string, is_sign_action, num_actions
from .cards import NUM_CARDS, hand_to_string
from .config import MusConfig, is_int, playable_config
from .game import ActionEvent, HandRecord, MusGame
from .phases import Phase

__all__ = ["RECORD_FORMAT", "RECORD_VERSION", "MAX_RECORD_BYTES", "game_record", "save_record", "load_record",
           "replay", "rebuild_record", "format_record", "check_shape", "write_atomic", "write_text_atomic",
           "RecordError"]

RECORD_FORMAT = "mus-env-record"
RECORD_VERSION = 1
#: Largest record file :func:`load_record` reads (a whole vaca of long hands is well under 1 MiB).
MAX_RECORD_BYTES = 16 * 2**20
#: Largest envido amount a record may hold (the stones of a bet fit the batched engine's int32).
MAX_AMOUNT = 2**31 - 1

#: The fields of a record and of each of its hands, in the order :func:`game_record` writes them.
RECORD_FIELDS = ("format", "version", "config", "seed", "deck", "mano", "scores", "players", "hands",
                 "pending_actions", "over", "winner", "scores_now", "meta")
HAND_FIELDS = ("hand_number", "game_number", "mano", "deck", "scores_before", "scores_after", "initial_hands",
               "final_hands", "actions", "stones", "outcomes", "fourth_lance", "game_winner", "shown",
               "mus_rounds", "discards")


class RecordError(ValueError):
    """A record that cannot be read or does not replay to the results it states; the message names the field."""


# ------------------------------------------------------------------------------------------------------
# writing
def _event(e: ActionEvent) -> list[Any]:
    return [e.seat, e.action, e.amount, e.auto]


def _hand_dict(h: HandRecord) -> dict[str, Any]:
    return {
        "hand_number": h.hand_number, "game_number": h.game_number, "mano": h.mano, "deck": list(h.deck),
        "scores_before": list(h.scores_before), "scores_after": list(h.scores_after),
        "initial_hands": [list(x) for x in h.initial_hands], "final_hands": [list(x) for x in h.final_hands],
        "actions": [_event(e) for e in h.actions],
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
        deck, mano, scores = [int(c) for c in first[0]], int(first[1]), [int(s) for s in first[2]]
    else:
        deck, mano, scores = list(game.deck), game.mano, list(game.scores_before)
    return {
        "format": RECORD_FORMAT, "version": RECORD_VERSION, "config": game.config.to_dict(), "seed": game.seed,
        "deck": deck, "mano": mano, "scores": scores,
        "players": {str(k): v for k, v in (players or {}).items()},
        "hands": [_hand_dict(h) for h in game.hand_log],
        "pending_actions": [] if game.is_over else [_event(e) for e in game.hand_actions],
        "over": game.is_over, "winner": game.winner, "scores_now": list(game.scores),
        "meta": meta or {},
    }


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: str | Path, write: Callable[[str], object]) -> Path:
    """Make ``path`` by ``write(temporary_path)`` and a rename: a reader sees the old file or the whole new
    one, never half of it, and a failed write leaves the old file and no temporary one. Creates the folder
    if needed; the file gets the usual permissions (the umask's), not mkstemp's private ones."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp" + path.suffix)
    os.close(fd)
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`write_atomic`)."""
    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())

    return write_atomic(path, write)


def save_record(record: dict[str, Any], path: str | Path) -> Path:
    """Write a record as JSON (UTF-8, indented), atomically (:func:`write_text_atomic`).

    Raises:
        OSError: the file cannot be written (the folder is not writable, ...).
        ValueError: the record holds something JSON cannot represent (NaN, infinity, a non-JSON type).
    """
    return write_text_atomic(path, json.dumps(record, indent=1, ensure_ascii=False, allow_nan=False))


# ------------------------------------------------------------------------------------------------------
# reading and checking the shape
def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def load_record(path: str | Path) -> dict[str, Any]:
    """Read a record written by :func:`save_record` and check its shape (not yet its results: :func:`replay`).

    Raises:
        RecordError: unreadable, larger than :data:`MAX_RECORD_BYTES`, not UTF-8 JSON, not a mus-env record
            of a supported version, or a field of the wrong shape (the message names it).
    """
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_RECORD_BYTES + 1)
    except OSError as e:
        raise RecordError(f"cannot read record {path}: {e.strerror or e}") from None
    if len(data) > MAX_RECORD_BYTES:
        raise RecordError(f"cannot read record {path}: larger than {MAX_RECORD_BYTES} bytes, not a mus-env record")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RecordError(f"cannot read record {path}: not UTF-8 text (byte {e.start})") from None
    try:
        rec = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as e:
        raise RecordError(f"cannot read record {path}: not JSON ({str(e)[:200]})") from None
    try:
        check_shape(rec)
    except RecordError as e:
        raise RecordError(f"{path}: {e}") from None
    return rec


def _short(value: Any, limit: int = 120) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


def _int(v: Any, where: str, lo: int, hi: int) -> int:
    if not is_int(v) or not lo <= v <= hi:
        raise RecordError(f"{where} must be an int in {lo}..{hi}, got {_short(v)}")
    return v


def _list(v: Any, where: str, n: int | None = None) -> list[Any]:
    if type(v) is not list:
        raise RecordError(f"{where} must be a list, got {_short(v)}")
    if n is not None and len(v) != n:
        raise RecordError(f"{where} must have {n} entries, got {len(v)}")
    return v


def _dict(v: Any, where: str, fields: tuple[str, ...] | None = None) -> dict[str, Any]:
    if type(v) is not dict:
        raise RecordError(f"{where} must be an object, got {_short(v)}")
    if fields is not None:
        missing = [k for k in fields if k not in v]
        if missing:
            raise RecordError(f"{where}{'.' if where else ''}{missing[0]} is missing")
        unknown = [k for k in v if k not in fields]
        if unknown:
            raise RecordError(f"{where}{'.' if where else ''}{_short(unknown[0])} is not a field of a "
                              f"version-{RECORD_VERSION} record")
    return v


def _actions(v: Any, where: str, n_actions: int = NUM_ACTIONS) -> list[tuple[int, int, int, bool]]:
    out = []
    for j, a in enumerate(_list(v, where)):
        w = f"{where}[{j}]"
        _list(a, w, 4)
        seat = _int(a[0], f"{w} (seat)", 0, 3)
        action = _int(a[1], f"{w} (action)", 0, n_actions - 1)
        amount = _int(a[2], f"{w} (amount)", 0, MAX_AMOUNT)
        if type(a[3]) is not bool:
            raise RecordError(f"{w} (auto) must be true or false, got {_short(a[3])}")
        out.append((seat, action, amount, a[3]))
    return out


def _config(record: dict[str, Any]) -> MusConfig:
    d = _dict(record["config"], "config")
    try:
        return playable_config(MusConfig.from_dict(d), signals=True)
    except (ValueError, TypeError, NotImplementedError) as e:
        raise RecordError(f"config: {e}") from None


def check_shape(record: Any) -> None:
    """Check that ``record`` has every field of a version-1 record with the right shape (inputs in full;
    results only as far as being present, since :func:`replay` compares them with what it rebuilds).

    Raises:
        RecordError: naming the first field that is missing, unknown or malformed.
    """
    if type(record) is not dict or record.get("format") != RECORD_FORMAT:
        raise RecordError(f"format: not a mus-env record (no \"format\": \"{RECORD_FORMAT}\")")
    if not is_int(record.get("version")) or record["version"] != RECORD_VERSION:
        raise RecordError(f"version: record version {_short(record.get('version'))} is not supported "
                          f"(expected {RECORD_VERSION})")
    _dict(record, "", RECORD_FIELDS)
    cfg = _config(record)
    _int(record["seed"], "seed", 0, 2**64 - 1)
    deck = _list(record["deck"], "deck", NUM_CARDS)
    if not all(is_int(c) for c in deck) or sorted(deck) != list(range(NUM_CARDS)):
        raise RecordError(f"deck must be a permutation of the card ids 0..{NUM_CARDS - 1}, got {_short(deck)}")
    _int(record["mano"], "mano", 0, 3)
    for t, s in enumerate(_list(record["scores"], "scores", 2)):
        _int(s, f"scores[{t}]", 0, cfg.target - 1)
    players = _dict(record["players"], "players")
    for k, name in players.items():
        if k not in ("0", "1", "2", "3") or type(name) is not str:
            raise RecordError(f"players must map seats \"0\"..\"3\" to names, got {_short(k)}: {_short(name)}")
    _dict(record["meta"], "meta")
    n_actions = num_actions(cfg)
    for i, h in enumerate(_list(record["hands"], "hands")):
        _dict(h, f"hands[{i}]", HAND_FIELDS)
        _actions(h["actions"], f"hands[{i}].actions", n_actions)
    _actions(record["pending_actions"], "pending_actions", n_actions)


# ------------------------------------------------------------------------------------------------------
# replaying
def _canon(v: Any) -> str | None:
    """A canonical JSON text of ``v`` (types kept: ``true`` is not ``1``), None if it has none."""
    try:
        return json.dumps(v, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None


def _compare(got: Any, stored: Any, where: str) -> None:
    """RecordError naming the first place where ``stored`` differs from the rebuilt ``got``."""
    if _canon(got) == _canon(stored):
        return
    if type(got) is list and type(stored) is list and len(got) == len(stored):
        for k, (g, s) in enumerate(zip(got, stored, strict=True)):
            _compare(g, s, f"{where}[{k}]")
    raise RecordError(f"{where}: the record says {_short(stored)} but the replay gives {_short(got)}")


def _apply(game: MusGame, seat: int, action: int, amount: int, where: str) -> None:
    if game.current_player != seat:
        raise RecordError(f"{where}: the record says seat {seat} acts but seat {game.current_player} is to act "
                          f"(hand {game.hand_number}, phase {game.phase_name})")
    if game.phase == Phase.SIGNAL and not is_sign_action(action):
        raise RecordError(f"{where}: the record has action {action} ({action_to_string(action, game.config)}) "
                          f"where seat {seat} makes a sign decision ({game.phase_name}): config.signals is "
                          f"{game.config.signals!r}, yet the record's actions have no sign here (a record made "
                          "with signals='off'?)")
    try:
        if action in ENVIDO_ACTIONS and amount and amount != game.config.bet_sizes[action - ENVIDO_BASE]:
            game.step_envido(amount)
        else:
            game.step(action)
    except ValueError as e:
        raise RecordError(f"{where}: {e}") from None


def replay(record: dict[str, Any], check: bool = True) -> MusGame:
    """Rebuild the game of a record from its inputs (config, seed, first deal, actions) on MusGame.

    Args:
        record: a record dict (:func:`load_record`).
        check: compare every stored result (each hand's fields, the hand in progress, ``over``, ``winner``,
            ``scores_now``) with the rebuilt game. With False only the inputs are used.

    Returns:
        The game after the last recorded action.

    Raises:
        RecordError: a field is malformed, an action is illegal where the record puts it, the hands do not
            end where the record ends them, or a stored result differs from the rebuilt one; the message
            names the field.
    """
    check_shape(record)
    cfg = _config(record)
    n_actions = num_actions(cfg)
    try:
        game = MusGame.from_deck(record["deck"], record["mano"], tuple(record["scores"]), cfg, record["seed"])
    except ValueError as e:                       # check_shape has vetted each input; kept as a safety net
        raise RecordError(f"deck/mano/scores: {e}") from None
    hands = record["hands"]
    for i, h in enumerate(hands):
        where = f"hands[{i}]"
        if game.is_over:
            raise RecordError(f"{where}: the game was over after hand {i - 1}; the record has more hands")
        if check:                                 # what is known when the hand is dealt
            start = {"hand_number": game.hand_number, "game_number": game.game_number, "mano": game.mano,
                     "deck": list(game.deck), "scores_before": list(game.scores),
                     "initial_hands": [list(x) for x in game.hands]}
            for k, v in start.items():
                _compare(v, h[k], f"{where}.{k}")
        for j, (seat, action, amount, auto) in enumerate(_actions(h["actions"], f"{where}.actions", n_actions)):
            if auto:
                continue                          # the engine makes these; compared with the rebuilt ones below
            if len(game.hand_log) > i:
                raise RecordError(f"{where}.actions[{j}]: the hand was over before this action")
            _apply(game, seat, action, amount, f"{where}.actions[{j}]")
        if len(game.hand_log) <= i:
            raise RecordError(f"{where}.actions: the hand does not finish with its recorded actions")
        if check:
            got = _hand_dict(game.hand_log[i])
            for k in ("actions", *HAND_FIELDS):
                _compare(got[k], h[k], f"{where}.{k}")
    pending = _actions(record["pending_actions"], "pending_actions", n_actions)
    if pending and game.is_over:
        raise RecordError("pending_actions: the game is over, yet the record has actions after it")
    for j, (seat, action, amount, auto) in enumerate(pending):
        if not auto:
            if len(game.hand_log) > len(hands):
                raise RecordError(f"pending_actions[{j}]: the hand was over before this action (a finished "
                                  "hand belongs in \"hands\")")
            _apply(game, seat, action, amount, f"pending_actions[{j}]")
    if len(game.hand_log) > len(hands):
        raise RecordError("pending_actions: they finish a hand (a finished hand belongs in \"hands\")")
    if check:
        if record["over"] is True and not game.is_over:
            raise RecordError(f"over: the record says the game is over, but after its {len(hands)} hands "
                              "and pending_actions it is not (a hand is missing from \"hands\", or \"over\" "
                              "is wrong)")
        _compare([] if game.is_over else [_event(e) for e in game.hand_actions], record["pending_actions"],
                 "pending_actions")
        _compare(game.is_over, record["over"], "over")
        _compare(game.winner, record["winner"], "winner")
        _compare(list(game.scores), record["scores_now"], "scores_now")
    return game


def rebuild_record(record: dict[str, Any], check: bool = True) -> dict[str, Any]:
    """The record of the game :func:`replay` rebuilds, with the players and meta of ``record``: what the
    inputs prove, not what the file claims (the same thing when ``check`` passes)."""
    game = replay(record, check=check)
    players = {int(k): v for k, v in record["players"].items()}
    return game_record(game, players, record["meta"],
                       first=(record["deck"], record["mano"], tuple(record["scores"])))


def format_record(record: dict[str, Any], check: bool = True) -> str:
    """The game of a record as readable text, hand by hand (used by ``mus replay``).

    The text is made from the rebuilt game (:func:`rebuild_record`), so it never shows a result that the
    record's actions do not produce.

    Raises:
        RecordError: as :func:`replay`.
    """
    record = rebuild_record(record, check=check)
    cfg = MusConfig.from_dict(record["config"])
    players = record["players"]
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
    if record["pending_actions"]:
        lines.append("")
        lines.append("hand in progress: " + "; ".join(
            f"s{seat} {action_to_string(action, cfg, words=True)}"
            for seat, action, _, _ in record["pending_actions"]))
    if record["over"]:
        lines.append("")
        final = record["scores_now"]
        lines.append(f"winner: team {record['winner']}, final score {final[0]}-{final[1]}")
    return "\n".join(lines)
