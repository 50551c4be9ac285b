"""What ``mus serve`` keeps and reads: games saved as records after every move, and the only folders it serves.

* :class:`GameStore` holds the browser games: each is a :class:`~experiments.web.table.Table` saved as a record
  (``mus_env.records`` format, atomically) after every move, as ``GAMES/game-<id>.json``; after a restart the
  same id loads the record, replays it and continues. One lock per game: two tabs acting at once cannot both
  move (the second is refused as a stale turn).
* A **one-person game** (against three bots, :meth:`GameStore.create`) is opened only by its link,
  ``/play/<id>/<token>``: one token like a shared table's seat (192 bits), kept beside the record in
  ``GAMES/.tables/<id>.json`` (format ``mus-serve-game``), never in the record. Its id alone opens nothing
  (:meth:`GameStore.solo`). A game in progress saved before games had keys gets one when the server starts
  (:meth:`GameStore.key_old_games`, whose links ``mus serve`` prints on its console, and only there).
* A **shared table** (people and bots, :meth:`GameStore.create_table`) is opened only by its links: one
  unguessable token (:func:`secrets.token_urlsafe`, 192 bits) for the host, one for the spectators and one per
  person's seat (:class:`TableKeys`). The tokens are kept beside the record in ``GAMES/.tables/<id>.json``
  (owner-only; a hidden folder, which no served name reaches and no listing shows), never in the record, which
  becomes public once the game is over. A token opens only its own table and role (:meth:`GameStore.access`);
  a shared table's id alone opens nothing.
* :func:`safe_path` resolves a name a page sent inside one of the folders the server was given, and refuses
  everything else: ``..``, absolute paths, backslashes, hidden names, encoded slashes (they arrive decoded as
  ``/`` inside a segment name, which no segment may hold), and symlinks that lead out of the folder.
* :func:`list_records`, :func:`list_runs` and :func:`read_run` read the records and run folders (tournaments:
  ``results.json``; training runs: ``eval.csv``, ``metrics.csv``, ``args.json``; their ``*.png`` plots).
* :func:`policy_files` lists the policy files (``*.pt``) under the runs folder, which the page may seat as bots
  beside the built-in agents.
"""

from __future__ import annotations

import csv
import json
import os
import re
import secrets
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents import Agent, make_agent
from experiments.web.table import HUMAN, WATCHER, Table, TableError, handovers
from mus_env import MusConfig
from mus_env.records import MAX_RECORD_BYTES, RecordError, load_record, save_record, write_atomic

__all__ = ["GameStore", "PathRefused", "LinkRefused", "Access", "TableKeys", "safe_path", "list_records", "list_runs",
           "read_run", "policy_files", "BUILTIN_AGENTS", "GAME_ID", "TOKEN", "PERSON", "KEYS_FOLDER", "MAX_LISTED",
           "MAX_CSV_ROWS", "SHARED", "SOLO_KEYS", "MAX_HELD"]

#: Agents any page may seat: the built-in specs (no file, no code of anybody's).
BUILTIN_AGENTS = ("ppo", "equity", "rule", "random", "ordago")
#: A game id: 16 hex digits.
GAME_ID = re.compile(r"^[0-9a-f]{16}$")
#: A link's token: ``secrets.token_urlsafe(24)``, 32 URL-safe characters (192 random bits).
TOKEN = re.compile(r"^[A-Za-z0-9_-]{32}$")
#: What a new shared table's seat holds when a person plays it (any other value is an agent spec).
PERSON = "person"
#: The folder (inside the games folder) of the shared tables' keys: hidden, so never served nor listed.
KEYS_FOLDER = ".tables"
#: ``meta["table"]`` of a shared table's record (public: the record says the game was played at a shared
#: table, not how to open it).
SHARED = "shared"
#: ``format`` of a one-person game's keys file (``GAMES/.tables/<id>.json``: its one token).
SOLO_KEYS = "mus-serve-game"
#: At most this many games a records request may say it holds (``X-Mus-Games``).
MAX_HELD = 100
#: One path segment of a record or run name: a letter or digit first, then letters, digits, ``._-``.
_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
#: At most this many records, runs or policy files are listed.
MAX_LISTED = 500
#: Rows of a CSV sent to a run page (the rest is summarised by the plots).
MAX_CSV_ROWS = 5000


class PathRefused(ValueError):
    """A name that does not lead to a file inside the served folder (the message says why)."""


class LinkRefused(PermissionError):
    """A token that opens nothing at this table (forged, mistyped, or another table's); nothing changes."""


def _token() -> str:
    return secrets.token_urlsafe(24)


@dataclass(frozen=True)
class Access:
    """What a link opens at a shared table: ``role`` ``"host"``, ``"seat"`` (the person's seat ``seat``) or
    ``"watch"`` (the public table); ``given`` is the seat of a retired seat link (the host gave that seat to a
    bot, so its link now shows the public table)."""

    role: str
    seat: int | None = None
    given: int | None = None

    @property
    def viewer(self) -> int:
        """The seat whose view this link gets (:data:`~experiments.web.table.WATCHER` for all but a seat)."""
        return self.seat if self.role == "seat" and self.seat is not None else WATCHER


@dataclass
class TableKeys:
    """The tokens of a shared table's links: the host's, the spectators', one per person's seat (``seats``);
    a seat given to a bot moves its token to ``retired``."""

    host: str
    watch: str
    seats: dict[int, str]
    retired: dict[int, str] = field(default_factory=dict)

    @classmethod
    def new(cls, people: Iterable[int]) -> TableKeys:
        """Fresh tokens for a table with people at ``people``."""
        return cls(host=_token(), watch=_token(), seats={int(s): _token() for s in people})

    def access(self, token: Any) -> Access:
        """What ``token`` opens (each token is compared in constant time, all of them every time).

        Raises:
            LinkRefused: ``token`` is none of this table's.
        """
        if not isinstance(token, str) or not TOKEN.match(token):
            raise LinkRefused("this link opens nothing at this table")
        found: Access | None = None
        candidates = [(self.host, Access("host")), (self.watch, Access("watch"))]
        candidates += [(t, Access("seat", s)) for s, t in self.seats.items()]
        candidates += [(t, Access("watch", given=s)) for s, t in self.retired.items()]
        for known, access in candidates:
            if secrets.compare_digest(known, token):
                found = access
        if found is None:
            raise LinkRefused("this link opens nothing at this table")
        return found

    def retire(self, seat: int) -> None:
        """The seat was given to a bot: its link shows the public table from now on."""
        self.retired[seat] = self.seats.pop(seat)

    def json(self, game_id: str) -> dict[str, Any]:
        """The saved form (with the table's id, checked on reading)."""
        return {"format": "mus-serve-table", "version": 1, "id": game_id, "host": self.host, "watch": self.watch,
                "seats": {str(s): t for s, t in sorted(self.seats.items())},
                "retired": {str(s): t for s, t in sorted(self.retired.items())}}

    @classmethod
    def from_json(cls, data: Any, game_id: str) -> TableKeys:
        """Read the saved form.

        Raises:
            ValueError: not the keys of table ``game_id`` (the message names the field).
        """
        if not isinstance(data, dict) or data.get("format") != "mus-serve-table" or data.get("id") != game_id:
            raise ValueError(f"not the keys of table {game_id}")
        tokens = [data.get("host"), data.get("watch")]

        def seats(key: str) -> dict[int, str]:
            value = data.get(key)
            if not isinstance(value, dict) or not all(k in ("0", "1", "2", "3") for k in value):
                raise ValueError(f"the keys of table {game_id}: {key} must map seats '0'..'3' to tokens")
            tokens.extend(value.values())
            return {int(k): v for k, v in value.items()}

        keys = cls(host=data.get("host"), watch=data.get("watch"), seats=seats("seats"), retired=seats("retired"))
        if not all(isinstance(t, str) and TOKEN.match(t) for t in tokens):
            raise ValueError(f"the keys of table {game_id}: a token is malformed")
        return keys


def safe_path(root: Path, name: str, suffixes: Iterable[str] = (), must_exist: bool = True) -> Path:
    """``root / name`` if ``name`` is a relative path of plain segments that stays inside ``root``.

    Raises:
        PathRefused: an empty, absolute or parent segment, a backslash, a hidden or odd name, a suffix not in
            ``suffixes`` (when given), a missing file (``must_exist``), or a path that resolves (through a
            symlink) outside ``root``.
    """
    if not isinstance(name, str) or not name or len(name) > 1024:
        raise PathRefused("give a relative name inside the served folder")
    if "\\" in name or "\x00" in name or name.startswith("/"):
        raise PathRefused(f"{name[:80]!r}: only relative names with '/' between plain segments")
    parts = name.split("/")
    for part in parts:
        if not _SEGMENT.match(part):
            raise PathRefused(f"{name[:80]!r}: the segment {part[:40]!r} is not a plain name (letters, digits, "
                              "'._-', not starting with a dot)")
    suffixes = tuple(suffixes)
    if suffixes and not parts[-1].lower().endswith(suffixes):
        raise PathRefused(f"{name[:80]!r}: only {', '.join(suffixes)} files are served here")
    base = root.resolve()
    path = base.joinpath(*parts)
    try:
        resolved = path.resolve(strict=must_exist)
    except (FileNotFoundError, NotADirectoryError):
        raise PathRefused(f"{name[:80]!r}: no such file") from None
    if not resolved.is_relative_to(base):
        raise PathRefused(f"{name[:80]!r}: it leads outside the served folder")
    return resolved


def _relative(root: Path, path: Path) -> str | None:
    try:
        rel = path.resolve().relative_to(root.resolve())
    except ValueError:                         # a symlink out of the folder: not listed
        return None
    text = rel.as_posix()
    return text if all(_SEGMENT.match(p) for p in text.split("/")) else None


def list_records(root: Path, held: Iterable[str] = ()) -> list[dict[str, Any]]:
    """The game records under ``root`` (``*.json`` of the records format), newest first, with a summary each.
    Files that are not records are left out, and so is every game in progress but those named in ``held``
    (record names: the games the asker holds the link of); finished games are public."""
    held = set(held)
    out = []
    if not root.is_dir():
        return out
    paths = sorted(root.rglob("*.json"), key=lambda p: p.stat().st_mtime if p.exists() else 0, reverse=True)
    for path in paths[:MAX_LISTED * 2]:
        name = _relative(root, path)
        if name is None or not path.is_file() or path.stat().st_size > MAX_RECORD_BYTES:
            continue
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(rec, dict) or rec.get("format") != "mus-env-record":
            continue
        if rec.get("over") is not True and name not in held:
            continue                            # somebody's game in progress: only its own link shows it
        players = rec.get("players") if isinstance(rec.get("players"), dict) else {}
        meta = rec.get("meta") if isinstance(rec.get("meta"), dict) else {}
        out.append({"name": name, "over": rec.get("over") is True, "winner": rec.get("winner"),
                    "shared": meta.get("table") == SHARED,
                    "scores": rec.get("scores_now"), "hands": len(rec.get("hands") or []),
                    "players": [str(players.get(str(s), "?"))[:80] for s in range(4)]})
        if len(out) >= MAX_LISTED:
            break
    return out


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        rows = []
        for i, row in enumerate(csv.DictReader(f)):
            if i >= MAX_CSV_ROWS:
                break
            rows.append(row)
    return rows


_RUN_FILES = ("results.json", "eval.csv", "metrics.csv", "exploit.json")


def list_runs(root: Path, depth: int = 3) -> list[dict[str, Any]]:
    """The run folders under ``root`` (a tournament's ``results.json``, a training run's ``eval.csv`` or
    ``metrics.csv``, a probe's ``exploit.json``), at most ``depth`` folders deep."""
    out: list[dict[str, Any]] = []
    if not root.is_dir():
        return out

    def walk(folder: Path, level: int) -> None:
        if len(out) >= MAX_LISTED or level > depth:
            return
        try:
            children = sorted(folder.iterdir())
        except OSError:
            return
        names = {c.name for c in children}
        kinds = [f for f in _RUN_FILES if f in names]
        if kinds and folder != root:
            name = _relative(root, folder)
            if name is not None:
                out.append({"name": name, "files": kinds,
                            "kind": "tournament" if "results.json" in kinds else
                                    "exploit" if "exploit.json" in kinds else "training"})
        for c in children:
            if c.is_dir() and not c.is_symlink() and _SEGMENT.match(c.name) and c.name not in ("tb", "records"):
                walk(c, level + 1)

    walk(root, 0)
    return out


def read_run(root: Path, name: str) -> dict[str, Any]:
    """What a run page shows: the parsed ``results.json``/``exploit.json``/``args.json``, the rows of
    ``eval.csv`` and ``metrics.csv`` (at most :data:`MAX_CSV_ROWS`), and the names of its ``*.png`` plots.

    Raises:
        PathRefused: ``name`` is not a run folder inside ``root``.
    """
    folder = safe_path(root, name)
    if not folder.is_dir():
        raise PathRefused(f"{name[:80]!r}: not a run folder")
    out: dict[str, Any] = {"name": name, "plots": sorted(p.name for p in folder.glob("*.png")
                                                         if _SEGMENT.match(p.name))}
    for file in ("results.json", "exploit.json", "args.json", "run.json"):
        path = folder / file
        if path.is_file() and path.stat().st_size <= MAX_RECORD_BYTES:
            try:
                out[file.removesuffix(".json")] = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                out[file.removesuffix(".json")] = None
    for file in ("eval.csv", "metrics.csv"):
        path = folder / file
        if path.is_file():
            out[file.removesuffix(".csv")] = _read_csv(path)
    if not any(k in out for k in ("results", "exploit", "eval", "metrics")):
        raise PathRefused(f"{name[:80]!r}: not a run folder (no results.json, exploit.json, eval.csv or metrics.csv)")
    return out


def policy_files(root: Path) -> list[str]:
    """The policy files (``*.pt``) under ``root`` (a training run's ``policy.pt``, ``best_policy.pt``...), as
    names relative to ``root``."""
    if not root.is_dir():
        return []
    out = []
    for path in sorted(root.rglob("*.pt")):
        name = _relative(root, path)
        if name is not None and path.name != "checkpoint.pt" and "tb" not in path.parts:
            out.append(name)
        if len(out) >= MAX_LISTED:
            break
    return out


class GameStore:
    """The browser games, each a :class:`Table` saved after every move as ``folder/game-<id>.json``.

    Args:
        folder: where the games are saved (made if needed).
        runs: the runs folder, whose ``*.pt`` policy files may be seated as ``runs:<name>``.
        extra_specs: trusted specs given on the command line (``mus serve --agent``), allowed as well.

    The agents a page may seat (:meth:`allowed_specs`) are built on first use and shared: agents hold no game
    state.
    """

    def __init__(self, folder: Path, runs: Path | None = None, extra_specs: Iterable[str] = ()) -> None:
        self.folder = Path(folder)
        self.runs = Path(runs) if runs is not None else None
        self.extra_specs = tuple(extra_specs)
        self._tables: dict[str, Table] = {}
        self._keys: dict[str, TableKeys] = {}
        self._solo_keys: dict[str, str] = {}
        self._present: dict[str, list[int]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._agents: dict[str, Agent] = {}
        self._guard = threading.Lock()

    # agents
    def allowed_specs(self) -> list[str]:
        """The specs a page may seat: the built-in agents, the command line's, and the runs' policy files."""
        files = [f"runs:{p}" for p in policy_files(self.runs)] if self.runs is not None else []
        return list(dict.fromkeys([*BUILTIN_AGENTS, *self.extra_specs, *files]))

    def agent(self, spec: str) -> Agent:
        """The agent of an allowed spec (built once).

        Raises:
            TableError: ``spec`` is not allowed here (the message lists what is), or cannot be built.
        """
        if spec not in self.allowed_specs():
            raise TableError(f"agent {str(spec)[:80]!r} is not offered here; choose one of "
                             f"{', '.join(self.allowed_specs()[:20])}")
        with self._guard:
            if spec not in self._agents:
                real = str(safe_path(self.runs, spec[5:], (".pt",))) if spec.startswith("runs:") else spec
                try:
                    self._agents[spec] = make_agent(real)
                except (ValueError, OSError, ImportError) as e:
                    raise TableError(f"agent {spec!r} cannot be built: {e}") from e
            return self._agents[spec]

    # games
    def path(self, game_id: str) -> Path:
        """Where game ``game_id`` is saved."""
        if not isinstance(game_id, str) or not GAME_ID.match(game_id):
            raise PathRefused("a game id is 16 hex digits")
        return self.folder / f"game-{game_id}.json"

    def lock(self, game_id: str) -> threading.Lock:
        """The lock of one game (its moves are made one at a time)."""
        with self._guard:
            return self._locks.setdefault(game_id, threading.Lock())

    def create(self, config: MusConfig, seat: int, specs: Mapping[int, str], seed: int | None = None) -> str:
        """A new game: the person at ``seat``, the bots of ``specs`` (allowed specs) at the other seats. Its key
        (:meth:`solo_link`) is saved before its record, so no new game's record is ever without it.

        Raises:
            TableError: a bad seat or spec (nothing is saved).
        """
        agents = {int(s): self.agent(v) for s, v in specs.items()}
        table = Table.new(config, seat, {int(s): str(v) for s, v in specs.items()}, seed=seed, agents=agents,
                          meta={"source": "mus serve"})
        game_id = secrets.token_hex(8)
        self.folder.mkdir(parents=True, exist_ok=True)
        with self._guard:
            self._solo_keys[game_id] = _token()
            self._tables[game_id] = table
        self._save_solo_key(game_id)
        self.save(game_id)
        return game_id

    def create_table(self, config: MusConfig, seats: Mapping[int, str], seed: int | None = None) -> str:
        """A new shared table: ``seats`` gives each of the four seats :data:`PERSON` or an allowed agent spec
        (at least one person). Its keys are saved before its record, so no record of a shared table is ever
        without them.

        Raises:
            TableError: not four seats, no person, or a spec that is not allowed (nothing is saved).
        """
        if sorted(seats) != [0, 1, 2, 3]:
            raise TableError(f"give each of the seats 0..3 a person or a bot, got seats {sorted(seats)}")
        people = [s for s in range(4) if seats[s] == PERSON]
        if not people:
            raise TableError(f"a shared table needs a person at one seat at least (a seat is {PERSON!r} or a bot)")
        specs = {s: str(seats[s]) for s in range(4) if s not in people}
        agents = {s: self.agent(v) for s, v in specs.items()}
        table = Table.new(config, people, specs, seed=seed, agents=agents,
                          meta={"source": "mus serve", "table": SHARED})
        game_id = secrets.token_hex(8)
        keys = TableKeys.new(people)
        with self._guard:
            self._keys[game_id] = keys
            self._tables[game_id] = table
        self._save_keys(game_id)
        self.save(game_id)
        return game_id

    def keys_path(self, game_id: str) -> Path:
        """Where the keys of shared table ``game_id`` are saved."""
        self.path(game_id)                              # checks the id
        return self.folder / KEYS_FOLDER / f"{game_id}.json"

    def _save_keys(self, game_id: str) -> None:
        self._write_keys(game_id, self._keys[game_id].json(game_id))

    def _save_solo_key(self, game_id: str) -> None:
        self._write_keys(game_id, {"format": SOLO_KEYS, "version": 1, "id": game_id,
                                   "token": self._solo_keys[game_id]})

    def _write_keys(self, game_id: str, data: dict[str, Any]) -> None:
        path = self.keys_path(game_id)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        text = json.dumps(data, indent=1)

        def write(tmp: str) -> None:
            os.chmod(tmp, 0o600)                        # the owner's only: the tokens open the table
            fd = os.open(tmp, os.O_WRONLY | os.O_TRUNC)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())

        write_atomic(path, write)

    def keys(self, game_id: str) -> TableKeys:
        """The keys of shared table ``game_id`` (loaded after a restart).

        Raises:
            PathRefused: a malformed id, no such game, or a game that is not a shared table.
        """
        table = self.get(game_id)
        with self._guard:
            keys = self._keys.get(game_id)
        if keys is not None:
            return keys
        path = self.keys_path(game_id)
        if table.meta.get("table") != SHARED or not path.is_file():
            raise PathRefused(f"no table {game_id}")
        try:
            keys = TableKeys.from_json(json.loads(path.read_text(encoding="utf-8")), game_id)
        except (OSError, ValueError) as e:
            raise PathRefused(f"table {game_id} cannot be opened: its keys are unreadable ({e})") from None
        with self._guard:
            return self._keys.setdefault(game_id, keys)

    def access(self, game_id: str, token: Any) -> Access:
        """What ``token`` opens at shared table ``game_id``.

        Raises:
            PathRefused: no such shared table (404).
            LinkRefused: the token is none of this table's (403).
        """
        return self.keys(game_id).access(token)

    def links(self, game_id: str) -> dict[str, Any]:
        """The links of a shared table (for its host): the host's, the spectators', one per person's seat."""
        keys = self.keys(game_id)
        base = f"/table/{game_id}/"
        return {"host": base + keys.host, "watch": base + keys.watch,
                "seats": {str(s): base + t for s, t in sorted(keys.seats.items())}}

    def solo_token(self, game_id: str) -> str | None:
        """The token of one-person game ``game_id`` (read from its keys file after a restart); None when it has
        none (a shared table, no such game, or a game saved before games had keys and not keyed since)."""
        path = self.keys_path(game_id)                  # checks the id
        with self._guard:
            token = self._solo_keys.get(game_id)
        if token is not None:
            return token
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("format") != SOLO_KEYS or data.get("id") != game_id:
            return None
        token = data.get("token")
        if not isinstance(token, str) or not TOKEN.match(token):
            return None
        with self._guard:
            return self._solo_keys.setdefault(game_id, token)

    def solo_link(self, game_id: str) -> str:
        """The page of one-person game ``game_id``, ``/play/<id>/<token>`` (its person's only)."""
        token = self.solo_token(game_id)
        if token is None:
            raise PathRefused(f"no game {game_id}")
        return f"/play/{game_id}/{token}"

    def solo(self, game_id: str, token: Any) -> Table:
        """The table of a one-person game of ``POST /api/games``, which only its link's ``token`` opens; a shared
        table opens nothing here (the same answer as no game at all).

        Raises:
            PathRefused: a malformed id, no such game, or a shared table (404).
            LinkRefused: ``token`` is not this game's (forged, another game's, or none yet: 403).
        """
        known = self.solo_token(game_id)
        table = self.get(game_id)
        if table.meta.get("table") == SHARED or len(table.people) != 1:
            raise PathRefused(f"no game {game_id}")
        if not isinstance(token, str) or not TOKEN.match(token) or known is None \
                or not secrets.compare_digest(known, token):
            raise LinkRefused("this link opens nothing: a game opens only by its own link, /play/<id>/<token>")
        return table

    def held(self, pairs: Iterable[tuple[str, str]]) -> set[str]:
        """The record names (``games/game-<id>.json``) of the one-person games whose ``(id, token)`` is given
        right: the games the asker holds the link of (at most :data:`MAX_HELD` are looked at)."""
        out = set()
        for game_id, token in list(pairs)[:MAX_HELD]:
            if not isinstance(game_id, str) or not GAME_ID.match(game_id) or not isinstance(token, str):
                continue
            known = self.solo_token(game_id)
            if known is not None and secrets.compare_digest(known, token):
                out.add(f"{self.folder.name}/game-{game_id}.json")
        return out

    def key_old_games(self) -> list[str]:
        """Give a key to each one-person game in progress saved before games had keys (a record with one
        ``human`` seat, not a shared table, no keys file), and answer their links (``/play/<id>/<token>``), for
        the server's own console only: no page lists them. A record that does not read is left alone."""
        links = []
        if not self.folder.is_dir():
            return links
        for path in sorted(self.folder.glob("game-*.json")):
            game_id = path.name.removeprefix("game-").removesuffix(".json")
            if not GAME_ID.match(game_id) or self.keys_path(game_id).exists():
                continue
            try:
                rec = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if not isinstance(rec, dict) or rec.get("format") != "mus-env-record" or rec.get("over") is not False:
                continue
            players = rec.get("players") if isinstance(rec.get("players"), dict) else {}
            meta = rec.get("meta") if isinstance(rec.get("meta"), dict) else {}
            if meta.get("table") == SHARED or sum(1 for v in players.values() if v == HUMAN) != 1:
                continue
            with self._guard:
                self._solo_keys[game_id] = _token()
            self._save_solo_key(game_id)
            links.append(self.solo_link(game_id))
        return links

    def get(self, game_id: str) -> Table:
        """The table of a game, loaded from its record after a restart.

        Raises:
            PathRefused: a malformed id or no such game.
            mus_env.records.RecordError: its record does not replay (tampered).
        """
        path = self.path(game_id)
        with self._guard:
            table = self._tables.get(game_id)
        if table is not None:
            return table
        if not path.is_file():
            raise PathRefused(f"no game {game_id}")
        record = load_record(path)
        specs = {int(k): str(v) for k, v in record["players"].items() if v != HUMAN}
        try:
            specs.update({h["seat"]: h["agent"] for h in handovers(record["meta"])})
        except TableError as e:
            raise RecordError(f"meta: {e}") from None
        agents = {s: self.agent(v) for s, v in specs.items()}
        table = Table.from_record(record, agents=agents)
        with self._guard:
            return self._tables.setdefault(game_id, table)

    def save(self, game_id: str) -> Path:
        """Write the game's record (atomically)."""
        return save_record(self._tables[game_id].record(), self.path(game_id))

    def move(self, game_id: str, action: Any, turn: Any, seat: int | None = None, token: Any = None) -> Table:
        """The move of the person at ``seat`` (None: a one-person game's person, whose link holds ``token``),
        the bots' answers, and the record saved; all under the game's lock.

        Raises:
            TableError: a stale turn, a move out of turn or an illegal move (nothing changes).
            PathRefused, mus_env.records.RecordError: as :meth:`get`.
            LinkRefused: as :meth:`solo`.
        """
        with self.lock(game_id):
            table = self.solo(game_id, token) if seat is None else self.get(game_id)
            before = table.turn
            try:
                table.play(action, turn, seat)
            finally:
                if table.turn != before:        # the move was made (a bot may have failed after it): keep it
                    self.save(game_id)
            return table

    def hand_over(self, game_id: str, seat: Any, spec: Any) -> Table:
        """Give the person's seat ``seat`` of a shared table to the bot ``spec`` (an allowed spec): its link is
        retired (it shows the public table from then on), the bots play, and the keys and the record are saved.

        Raises:
            TableError: no person plays ``seat``, the game is over, or ``spec`` is not allowed (nothing changes).
            PathRefused: as :meth:`keys`.
        """
        with self.lock(game_id):
            keys = self.keys(game_id)
            table = self.get(game_id)
            if isinstance(seat, bool) or not isinstance(seat, int) or seat not in table.people:
                raise TableError(f"seat {str(seat)[:20]!r} is not played by a person at this table "
                                 f"(people: {sorted(table.people)})")
            if table.game.is_over:
                raise TableError("the game is over")
            agent = self.agent(str(spec))
            keys.retire(seat)
            self._save_keys(game_id)
            try:
                table.hand_over(seat, str(spec), agent)
            finally:
                self.save(game_id)
            return table

    # who is at the table
    def arrive(self, game_id: str, seat: int) -> None:
        """A page of ``seat`` opened its stream (counted, so the table shows who is here)."""
        with self._guard:
            self._present.setdefault(game_id, [0, 0, 0, 0])[seat] += 1

    def leave(self, game_id: str, seat: int) -> None:
        """A page of ``seat`` closed its stream."""
        with self._guard:
            counts = self._present.setdefault(game_id, [0, 0, 0, 0])
            counts[seat] = max(0, counts[seat] - 1)

    def present(self, game_id: str) -> list[bool]:
        """Which seats have a page open now (public: who sits at the table)."""
        with self._guard:
            return [n > 0 for n in self._present.get(game_id, [0, 0, 0, 0])]

