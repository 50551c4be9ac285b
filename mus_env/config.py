"""MusConfig: every variant switch of RULES.md §1.2, validated.

The defaults are the ruleset of RULES.md §1.1: 8 kings, a game to 40 stones, discards of 1-4 cards,
the four lances with punto, the "more aggressive partner wins" team answer (§5.4), pares/juego betting
among holders only, no 31 real, no signals, one game per episode.

Example:
    >>> from mus_env import MusConfig
    >>> cfg = MusConfig(kings=4, target=30)
    >>> cfg.kings, cfg.target
    (4, 30)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["MusConfig", "REAL31_CHOICES", "SIGNALS_CHOICES", "NUM_BET_SIZES", "MAX_TARGET", "MAX_BET",
           "playable_config", "signals_on", "is_int"]

#: Accepted values of ``MusConfig.real31`` (RULES.md §1.2).
REAL31_CHOICES = ("off", "any10", "sota", "sota_oros", "sota_4suits")
#: Accepted values of ``MusConfig.signals`` (RULES.md §8).
SIGNALS_CHOICES = ("off", "truthful", "free")
#: The discrete action space has exactly this many ENVIDO_k actions (ids 19..23, RULES.md §9.1).
NUM_BET_SIZES = 5
#: Largest target and bet amount: stakes, scores and stones stay far inside the batched engine's int32 fields
#: (and the observation's float32) whatever the number of raises a real game makes.
MAX_TARGET = 10_000
MAX_BET = 1_000
#: Largest ``max_stake``: a cap beyond any stake a game can use.
MAX_STAKE_CAP = 1_000_000


def is_int(value: Any, numpy: bool = False) -> bool:
    """Whether ``value`` is an integer and not a bool: a Python ``int`` (an ``IntEnum`` member included), and with
    ``numpy`` also a numpy integer (values read back from arrays and checkpoints). The one integer check of every
    validator (configs, records, training settings, checkpoints)."""
    if isinstance(value, (bool, np.bool_)):
        return False
    return isinstance(value, (int, np.integer) if numpy else int)


def _on_off(name: str, value: Any) -> bool:
    """Normalise an ``on``/``off`` switch given as a bool or as the strings of RULES.md."""
    if isinstance(value, bool):
        return value
    if value in ("on", "off"):
        return value == "on"
    raise ValueError(f"MusConfig.{name} must be 'on' or 'off' (or True/False), got {value!r}")


def _bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"MusConfig.{name} must be True or False, got {value!r}")
    return value


def _int(name: str, value: Any, accepted: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"MusConfig.{name} must be {accepted}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class MusConfig:
    """The variant switches of RULES.md §1.2 (defaults first in each list there).

    Attributes:
        kings: 8 (every 3 is a rey and every 2 an as) or 4 (3 and 2 are ordinary cards).
        target: stones needed to win a game (juego); any int >= 1, usually 40 or 30.
        juegos_to_win_vaca: games needed to win a vaca (1, 2 or 3); 1 with 1 vaca = one game per episode.
        vacas_to_win_match: vacas needed to win the match (1, 2 or 3).
        real31: "off", "any10", "sota", "sota_oros" or "sota_4suits": which 31 counts as a "31 real".
        punto: True ("on") or False ("off"): when nobody has juego, False skips the fourth lance.
        allow_zero_discard: whether DISCARD_0 (keep all four cards) is legal in a mus round.
        partner_override: whether the second responder may upgrade the first responder's QUIERO (§5.4).
        holders_only_speak: whether only pares/juego holders speak in those lances.
        exclude_own_discards: whether the player served when the stock runs out keeps his own
            current-round discards out of the reshuffle (§3.4).
        bet_sizes: the five amounts of ENVIDO actions 19..23, strictly increasing ints >= 2.
        max_mus_rounds: None, or a cap N >= 0: after N completed mus rounds every mus call is forced
            to NO_MUS (an RL safety cap, not a real rule).
        max_stake: None, or a cap N >= 2: once a lance's live stake is N stones or more, it can no longer be
            raised (ENVIDO is not legal; QUIERO, NO QUIERO and ÓRDAGO remain). An RL safety cap, not a real
            rule (stakes have no limit, RULES.md §5.1): two policies that always re-raise would otherwise bet
            forever and the hand never end.
        signals: "off", "truthful" or "free" (§8, :mod:`mus_env.signals`).
        signal_intercept_p: chance that an opponent sees a sign, in [0, 1]; 0 when ``signals`` is "off".
        auto_declare: whether the engine makes the forced pares/juego declarations itself.
        first_mano: "random" or a seat 0..3, the mano of the first hand.
    """

    kings: int = 8
    target: int = 40
    juegos_to_win_vaca: int = 1
    vacas_to_win_match: int = 1
    real31: str = "off"
    punto: bool = True
    allow_zero_discard: bool = False
    partner_override: bool = True
    holders_only_speak: bool = True
    exclude_own_discards: bool = True
    bet_sizes: tuple[int, ...] = (2, 3, 4, 5, 10)
    max_mus_rounds: int | None = None
    max_stake: int | None = None
    signals: str = "off"
    signal_intercept_p: float = 0.0
    auto_declare: bool = True
    first_mano: str | int = "random"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if isinstance(self.kings, bool) or not isinstance(self.kings, int) or self.kings not in (8, 4):
            raise ValueError(f"MusConfig.kings must be 8 or 4, got {self.kings!r}")
        target = _int("target", self.target, f"an int in 1..{MAX_TARGET} (usually 40 or 30)")
        if not 1 <= target <= MAX_TARGET:
            raise ValueError(f"MusConfig.target must be an int in 1..{MAX_TARGET} (usually 40 or 30), got {target!r}")
        for name in ("juegos_to_win_vaca", "vacas_to_win_match"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value not in (1, 2, 3):
                raise ValueError(f"MusConfig.{name} must be 1, 2 or 3, got {value!r}")
        if self.real31 not in REAL31_CHOICES:
            raise ValueError(f"MusConfig.real31 must be one of {', '.join(REAL31_CHOICES)}; got {self.real31!r}")
        set_(self, "punto", _on_off("punto", self.punto))
        for name in ("allow_zero_discard", "partner_override", "holders_only_speak",
                     "exclude_own_discards", "auto_declare"):
            _bool(name, getattr(self, name))
        try:
            sizes = tuple(self.bet_sizes)
        except TypeError:
            raise ValueError(
                f"MusConfig.bet_sizes must be {NUM_BET_SIZES} strictly increasing ints >= 2, "
                f"got {self.bet_sizes!r}") from None
        if (len(sizes) != NUM_BET_SIZES
                or any(isinstance(k, bool) or not isinstance(k, int) or not 2 <= k <= MAX_BET for k in sizes)
                or any(a >= b for a, b in zip(sizes, sizes[1:], strict=False))):
            raise ValueError(
                f"MusConfig.bet_sizes must be {NUM_BET_SIZES} strictly increasing ints in 2..{MAX_BET} "
                f"(one per ENVIDO action 19..23), got {self.bet_sizes!r}")
        set_(self, "bet_sizes", tuple(int(k) for k in sizes))
        if self.max_mus_rounds is not None:
            cap = _int("max_mus_rounds", self.max_mus_rounds, "None or an int >= 0")
            if cap < 0:
                raise ValueError(f"MusConfig.max_mus_rounds must be None or an int >= 0, got {cap!r}")
        if self.max_stake is not None:
            cap = _int("max_stake", self.max_stake, f"None or an int in 2..{MAX_STAKE_CAP}")
            if not 2 <= cap <= MAX_STAKE_CAP:
                raise ValueError(f"MusConfig.max_stake must be None or an int in 2..{MAX_STAKE_CAP}, got {cap!r}")
        if self.signals not in SIGNALS_CHOICES:
            raise ValueError(f"MusConfig.signals must be one of {', '.join(SIGNALS_CHOICES)}; got {self.signals!r}")
        p = self.signal_intercept_p
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise ValueError(f"MusConfig.signal_intercept_p must be a number in [0, 1], got {p!r}")
        if self.signals == "off" and p != 0:
            raise ValueError(f"MusConfig.signal_intercept_p must be 0 with signals='off' (there are no signs to "
                             f"intercept), got {p!r}; give signals='truthful' or 'free', or leave it at 0")
        set_(self, "signal_intercept_p", float(p))
        fm = self.first_mano
        if fm != "random" and (isinstance(fm, bool) or not isinstance(fm, int) or fm not in (0, 1, 2, 3)):
            raise ValueError(f"MusConfig.first_mano must be 'random' or a seat 0, 1, 2 or 3, got {self.first_mano!r}")

    def replace(self, **changes: Any) -> MusConfig:
        """A copy with some fields changed (validated like the constructor)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-friendly dict of every field (``MusConfig(**d)`` rebuilds it)."""
        d = dataclasses.asdict(self)
        d["bet_sizes"] = list(self.bet_sizes)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MusConfig:
        """Rebuild a config from :meth:`to_dict` output; anything but a dict, and unknown keys, raise
        ``ValueError``."""
        if not isinstance(d, Mapping):
            raise ValueError(f"MusConfig.from_dict needs a dict of MusConfig fields (MusConfig.to_dict()), "
                             f"got {type(d).__name__}: {d!r:.80}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names, key=repr)
        if unknown:
            raise ValueError(f"unknown MusConfig field(s) {unknown}; accepted fields: {sorted(names)}")
        d = dict(d)
        if "bet_sizes" in d and isinstance(d["bet_sizes"], list):
            d["bet_sizes"] = tuple(d["bet_sizes"])
        return cls(**d)


def signals_on(config: MusConfig) -> bool:
    """Whether ``config`` has the señas channel of RULES.md §8 (``signals`` is "truthful" or "free").

    Also importable as ``mus_env.signals.signals_on`` (the same function).
    """
    return config.signals != "off"


def playable_config(config: MusConfig | None, *, signals: bool = False) -> MusConfig:
    """The config an engine plays: ``MusConfig()`` for None, else ``config`` checked.

    Args:
        signals: whether the caller supports the señas channel (RULES.md §8, :mod:`mus_env.signals`).

    Raises:
        ValueError: ``config`` is not a MusConfig.
        NotImplementedError: ``config.signals`` is not "off" and the caller does not support signs.
    """
    cfg = MusConfig() if config is None else config
    if not isinstance(cfg, MusConfig):
        raise ValueError(f"config must be a MusConfig, got {type(cfg).__name__}")
    if cfg.signals != "off" and not signals:
        import inspect
        caller = inspect.stack()[1].frame.f_globals.get("__name__", "this interface")
        raise NotImplementedError(
            f"MusConfig(signals={cfg.signals!r}): {caller} does not play the señas channel of RULES.md §8 yet; "
            "use signals='off' here (MusGame, VectorMusEnv and the PettingZoo env play signs)")
    return cfg
