"""The shipped agent's recipe in one command: ``mus league``, rounds of best responses joining a population.

The recipe is PSRO (Lanctot et al., 2017) with the project's trainer and probes, each round anchored by a magnet
at its starting policy (magnetic mirror descent, Sokota et al., 2022); why: docs/research/index.md. This module
holds its settings (:class:`Recipe`, :data:`PRESETS`, :func:`make_recipe`) and the rules that turn them into a
round's league and the policy kept; :mod:`experiments.population.recipe_run` runs it:

1. **Round 0**: ``mus train`` from the ``equity`` clone with a baseline-heavy league and a moving magnet
   (:data:`PRESETS`' ``first``): the policy ``P0``.
2. **Round r = 1..R**, from ``P(r-1)``:

   a. *probes*: best responses trained against the frozen ``P(r-1)`` (every start of ``probe_starts`` and
      ``probe_seeds`` seeds, and with ``long_probe_decisions`` one long probe; :func:`probe_plan`,
      :func:`experiments.population.exploit.probe`), as parallel processes (``workers``) or Ray tasks
      (``ray_address``); their held-out gains measure ``P(r-1)``'s exploitability;
   b. *the meta-game*: a duplicate round robin of the population (``rule``, ``equity``, the ``rivals``, every
      round's policy, every probe's best response) and its Nash mixture
      (:func:`experiments.evaluate.ratings.nash_mixture` on stones per hand), the ``rivals`` together at most
      ``rival_cap`` of it (:func:`cap_rivals`);
   c. *training*: ``mus train`` warm-started from ``P(r-1)``, the magnet fixed at it, the league its own share
      (``self_share``) plus the Nash mixture's members by their shares, ``rule`` and ``equity`` at least
      ``baseline_floor`` each: the policy ``Pr``.
3. **Final probes** of ``PR``, for the measurement only.
3b. With ``distill_rounds`` N: **one network fitted to the equal mixture of the last N policies**
   (:mod:`experiments.population.distill`: the mixture's leaks cost a share of each member's), its report and
   its own probes (``distilled/train``, ``distilled/report``, ``distilled/probes``); with ``distill_replicas`` K,
   the mixture also takes the last N policies of K - 1 more runs of the rounds (seeds ``seed + 1`` ...; steps
   ``replica<k>``, each a recipe of its own in ``OUT/replica<k>``, run one after the other before the stage);
   with ``stage_probe_decisions``, its probes (and the refined network's) are the protocol's kind instead of a
   round's (every start, ``stage_probe_seeds`` seeds, that many decisions at ``stage_probe_learning_rate``).
3c. With ``refine_decisions`` D as well: **the distilled network trained once more**, D decisions from its own
   weights against its probes (the distilled stage's, as a folder of best responses), the baselines, the rivals and
   itself, the magnet fixed at its start (:func:`refine_league`; ``refined/train``, ``refined/report``,
   ``refined/probes``), kept only if its probes find less; with ``refine_lance`` L, a best response that decides
   only L's betting is trained against the distilled network first (``refined/lance/probes``) and joins that
   league (:data:`REFINE_LANCE_SHARES`).
4. **Keep** the policy whose largest probe gain is the smallest, each measured by the probes of the next round,
   which never trained it (never simply the last round; the distilled and refined policies by their own probes);
   ``OUT/policy.pt``.
5. **The card**: ``mus evaluate``'s report card of the kept policy (``OUT/card.md``, ``card.json``), and the
   recipe's own report (``OUT/recipe.md``, ``recipe.png``: every round's margins, probes and head to head).

Every step is a run of its own folder under ``OUT``, marked done in ``OUT/recipe.json`` when it ends
(:mod:`experiments.population.recipe_state`); ``resume`` skips what is done and resumes a stopped training or probe
from its checkpoint, so a resumed recipe ends exactly as one never stopped. A resume with more ``rounds`` makes a
recipe longer (:func:`~experiments.population.recipe_state.extend_rounds`); one with other ``distill_*``,
``refine_*`` or ``stage_probe_*`` settings runs that stage again (the old one's folder set aside).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agents.policy import SHIPPED_POLICY
from experiments.evaluate.ratings import nash_mixture
from experiments.population.exploit_seeds import STARTS
from experiments.train import ppo
from experiments.train.restricted import LEARNER_DECIDES
from experiments.train.settings import MAX_LAYERS, MAX_WIDTH, check_learning_rate, widths_ok

__all__ = ["Recipe", "PRESETS", "POPULATION_BASELINES", "make_recipe", "league_from_nash",
           "cap_rivals", "keep_round", "probe_plan", "refine_league", "refine_lances", "REFINE_SHARES",
           "REFINE_LANCE_SHARES", "MOST_REFINE_LANCES"]

#: The baselines every population holds (and every round is reported against).
POPULATION_BASELINES = ("rule", "equity")


@dataclasses.dataclass(frozen=True)
class Recipe:
    """Every setting of a recipe (:data:`PRESETS` names two; :func:`make_recipe` changes fields)."""

    rounds: int
    """PSRO rounds after round 0"""
    trainer_preset: str
    """the ``mus train`` preset every training starts from"""
    first: dict[str, Any]
    """``Args`` fields of round 0 (budget, warm start, league, magnet)"""
    round_train: dict[str, Any]
    """``Args`` fields of each round's training (budget, magnet coefficient); its warm start, magnet and league
    are the round's"""
    self_share: float
    """the learner's own share of a round's league"""
    snapshot_share: float
    """its snapshots' share"""
    baseline_floor: float
    """the least share of ``rule`` and of ``equity`` in a round's league"""
    min_share: float
    """population members under this Nash share are left out of the league"""
    probe_starts: tuple[str, ...]
    """the best responses' starts (``equity``: the equity clone; ``agent``: the probed policy's own weights)"""
    probe_seeds: int
    """training seeds per start"""
    probe_decisions: int
    """each best response's budget, in decisions"""
    probe_preset: str
    """the trainer preset of a probe"""
    probe_eval_hands: int
    probe_eval_games: int
    meta_hands: int
    """duplicate deals per pair of the meta-game"""
    eval_hands: int
    """a round report's deals played as hands (against rule, equity, the previous round)"""
    eval_games: int
    card_hands: int | None
    """the final card's sizes (None: mus evaluate's deal set v1)"""
    card_games: int | None
    rivals: tuple[str, ...] = ()
    """agents outside the recipe that join every round's population and report (the presets: the shipped ``ppo``
    and ``ordago``; a recipe records each rival's weights digest, and its resume refuses changed weights): a rival
    that beats a round's policy gets a Nash share of the next league, and each round reports its margin over every
    rival"""
    rival_floor: float = 0.0
    """the least share of each rival in a round's league (``ordago`` loses to everyone, so the Nash mixture alone
    never picks it)"""
    rival_cap: float = 1.0
    """the most the rivals together take of a round's Nash mixture; the rest follows the Nash mixture of the
    population without them (1: no cap; then a rival that beats every member takes the whole mixture and the
    round's own best responses leave the league)"""
    long_probe_decisions: int = 0
    """each round's probes (and the final ones) add one best response of this budget from ``long_probe_start``
    (0: none). It counts in the keep rule and joins the population like the others; it finds gains that the quick
    probes' budget misses (see docs/research/index.md)"""
    long_probe_start: str = "equity"
    """the long probe's start (as in ``probe_starts``)"""
    probe_learning_rate: float = ppo.PROBE_LEARNING_RATE
    """the learning rate of every probe the recipe trains, quick and long (default 3e-4, the measuring probes')"""
    distill_rounds: int = 0
    """after the final probes, fit one network to the equal mixture of the last ``distill_rounds`` policies (0:
    none; :mod:`experiments.population.distill`), probe it as a round's policy is, and keep it if its largest gain
    is the smallest"""
    distill_decisions: int = 4_000_000
    """decisions played to make the distillation's data"""
    distill_epochs: int = 4
    """the distillation's passes over its data"""
    distill_replicas: int = 1
    """runs of the rounds whose last ``distill_rounds`` policies make the mixture: this recipe's, and
    ``distill_replicas - 1`` more, each the same recipe with the next seed (``seed + k``), run before the stage in
    ``OUT/replica<k>`` (a recipe of its own, without a distilled stage)"""
    refine_decisions: int = 0
    """with ``distill_rounds``: train the distilled network this many decisions more against its own probes (0: no
    such stage; :func:`refine_league`); the refined network is kept only if its probes find less"""
    refine_lance: str = ""
    """with ``refine_decisions``: before the refined stage trains, a best response that decides only this lance's
    betting (``pares``; ``mus exploit --lance``) is trained against the distilled network, from its weights, and
    joins the refined stage's league (:data:`REFINE_LANCE_SHARES`; it plays its other decisions as the distilled
    network). Several lances, comma-separated (``pares,juego``), train one such best response each, side by side
    (:func:`refine_lances`). "" for none"""
    refine_hidden: tuple[int, ...] = ()
    """with ``refine_decisions``: the refined network's layer widths, wider than the distilled one's (same depth):
    the distilled network is widened without changing its play (:meth:`agents.policy.PolicyNet.load_narrower`)
    and the refined stage trains the wider one (its probes from its own weights are as wide). Empty: the distilled
    network's widths"""
    refine_lance_decisions: int = 40_000_000
    """that best response's budget, in decisions"""
    refine_lance_learning_rate: float = 3e-3
    """its learning rate"""
    stage_probe_decisions: int = 0
    """with ``distill_rounds``: the distilled and refined networks are probed as the docs measure an agent (every
    start of ``stage_probe_starts`` (or ``probe_starts``), ``stage_probe_seeds`` seeds each, this many decisions at
    ``stage_probe_learning_rate``: 80M at 3e-4 is the protocol) instead of by a round's probes (0: a round's;
    :func:`probe_plan`); the refined stage then trains against these probes"""
    stage_probe_seeds: int = 2
    """the stage probes' training seeds per start (``seed`` ...)"""
    stage_probe_learning_rate: float = ppo.PROBE_LEARNING_RATE
    """the stage probes' learning rate (3e-4: the measuring probes')"""
    stage_probe_starts: tuple[str, ...] = ()
    """the stage probes' starts, in the order they run (empty: ``probe_starts``)"""
    seed: int = 0
    torch_threads: int = 1
    """torch threads of each probe (1: several share the cores)"""
    train_threads: int = 0
    """torch threads of the steps that run alone: the trainings and the distillation (0: all cores, at most 4; the
    same weights as with 1)"""

    def to_dict(self) -> dict[str, Any]:
        """The settings as JSON values."""
        return json.loads(json.dumps(dataclasses.asdict(self)))


#: Round 0's league: the default run's, with ``ordago`` at the rivals' floor taken from the snapshots' share.
_LB = "self:0.2,snapshot:0.15,rule:0.3,equity:0.3,ordago:0.05"

#: The ``ship`` preset (``refine`` changes its round 0).
_SHIP = Recipe(rounds=3, trainer_preset="default",
               first=dict(total_decisions=120_000_000, magnet_coef=0.1, magnet_every=50, league_mix=_LB,
                          eval_every=100, checkpoint_every=25, learning_rate=ppo.PROBE_LEARNING_RATE),
               round_train=dict(total_decisions=60_000_000, magnet_coef=0.1, eval_every=100,
                                checkpoint_every=25, learning_rate=ppo.PROBE_LEARNING_RATE),
               self_share=0.3, snapshot_share=0.1, baseline_floor=0.1, min_share=0.02,
               probe_starts=("equity", "agent"), probe_seeds=1, probe_decisions=13_000_000,
               probe_preset="default", probe_eval_hands=20_000, probe_eval_games=2_000, meta_hands=2_000,
               eval_hands=20_000, eval_games=2_000, card_hands=None, card_games=None,
               rivals=("ppo", "ordago"),
               rival_floor=0.05)

#: The ``refine`` preset (``refine-long`` adds the long probe).
_REFINE = dataclasses.replace(
    _SHIP, rival_cap=0.5,
    first=dict(warm_start=str(SHIPPED_POLICY), total_decisions=8_000_000, magnet_coef=0.1, magnet_every=0,
               league_mix=_LB, eval_every=100, checkpoint_every=25, learning_rate=ppo.PROBE_LEARNING_RATE))

#: Named recipes. ``ship`` makes the shipped agent from the ``equity`` clone (sized for about 3 hours on 2 cores,
#: best responses included); ``refine`` runs the same rounds from the shipped agent's weights (round 0: 8M decisions
#: with the magnet fixed there; the rivals at most half of each Nash mixture); ``refine-long`` runs two of them with
#: a 40M-decision probe from the ``equity`` clone in every round (about 71 minutes on 2 cores); ``tiny`` runs in
#: seconds (tests).
PRESETS: dict[str, Recipe] = {
    "ship": _SHIP,
    "refine": _REFINE,
    "refine-long": dataclasses.replace(_REFINE, rounds=2, long_probe_decisions=40_000_000),
    "tiny": Recipe(rounds=2, trainer_preset="tiny",
                   first=dict(warm_start="none", magnet_coef=0.1, magnet_every=2),
                   round_train=dict(magnet_coef=0.1),
                   self_share=0.3, snapshot_share=0.1, baseline_floor=0.1, min_share=0.02,
                   probe_starts=("equity", "agent"), probe_seeds=1, probe_decisions=32 * 8 * 4, probe_preset="tiny",
                   probe_eval_hands=16, probe_eval_games=4, meta_hands=8, eval_hands=16, eval_games=4,
                   card_hands=16, card_games=4, rivals=("ordago",), rival_floor=0.05,
                   train_threads=1),     # tests run beside each other
}


def make_recipe(preset: str = "ship", **changes: Any) -> Recipe:
    """The recipe of ``preset`` with some fields changed.

    Raises:
        ValueError: an unknown preset or field, or a bad value (named).
    """
    if preset not in PRESETS:
        raise ValueError(f"unknown recipe preset {preset!r}; use one of {', '.join(PRESETS)}")
    fields = {f.name for f in dataclasses.fields(Recipe)}
    bad = sorted(set(changes) - fields)
    if bad:
        raise ValueError(f"unknown recipe field(s) {bad}")
    r = dataclasses.replace(PRESETS[preset], **changes)
    for name in ("rounds", "probe_seeds", "probe_decisions", "meta_hands", "eval_hands", "eval_games",
                 "probe_eval_hands", "probe_eval_games", "torch_threads", "train_threads", "long_probe_decisions",
                 "distill_rounds", "distill_decisions", "distill_epochs", "distill_replicas", "refine_decisions",
                 "stage_probe_decisions", "stage_probe_seeds", "refine_lance_decisions"):
        v = getattr(r, name)
        least = 0 if name in ("rounds", "long_probe_decisions", "distill_rounds", "refine_decisions",
                              "stage_probe_decisions", "train_threads") else 1
        if isinstance(v, bool) or not isinstance(v, int) or v < least:
            raise ValueError(f"Recipe.{name} must be an int >= {least}, got {v!r}")
    for name in ("self_share", "snapshot_share", "baseline_floor", "min_share", "rival_floor"):
        v = getattr(r, name)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 <= v < 1:
            raise ValueError(f"Recipe.{name} must be a number in [0, 1), got {v!r}")
    if not isinstance(r.rival_cap, (int, float)) or isinstance(r.rival_cap, bool) or not 0 <= r.rival_cap <= 1:
        raise ValueError(f"Recipe.rival_cap must be a number in [0, 1], got {r.rival_cap!r}")
    if r.self_share + r.snapshot_share + 2 * r.baseline_floor + len(r.rivals) * r.rival_floor >= 1:
        raise ValueError("Recipe: self_share + snapshot_share + 2 * baseline_floor + rival_floor per rival must "
                         "leave room for the population")
    if isinstance(r.rivals, str) or len(set(r.rivals)) != len(r.rivals) or set(r.rivals) & set(POPULATION_BASELINES):
        raise ValueError("Recipe.rivals: a tuple of distinct agent specs other than "
                         f"{', '.join(POPULATION_BASELINES)}, got {r.rivals!r}")
    if not r.probe_starts or any(s not in STARTS for s in r.probe_starts):
        raise ValueError(f"Recipe.probe_starts: some of {', '.join(STARTS)}, got {r.probe_starts!r}")
    if r.long_probe_start not in STARTS:
        raise ValueError(f"Recipe.long_probe_start: one of {', '.join(STARTS)}, got {r.long_probe_start!r}")
    if r.distill_rounds > r.rounds + 1:
        raise ValueError(f"Recipe.distill_rounds: at most the {r.rounds + 1} policies of the recipe (rounds 0 to "
                         f"{r.rounds}), got {r.distill_rounds}")
    if r.distill_replicas > 1 and not r.distill_rounds:
        raise ValueError(f"Recipe.distill_replicas: {r.distill_replicas} runs of the rounds make the distilled "
                         "mixture only with distill_rounds (--distill-rounds N) above 0")
    if r.refine_decisions and not r.distill_rounds:
        raise ValueError(f"Recipe.refine_decisions: {r.refine_decisions:,} decisions refine the distilled network, "
                         "so they need distill_rounds (--distill-rounds N) above 0")
    lances = refine_lances(r) if isinstance(r.refine_lance, str) else []
    if (not isinstance(r.refine_lance, str) or len(set(lances)) != len(lances)
            or any(x not in LEARNER_DECIDES or x == "all" for x in lances)):
        raise ValueError("Recipe.refine_lance: distinct lances among "
                         f"{', '.join(d for d in LEARNER_DECIDES if d != 'all')}, comma-separated (or \"\" for none), "
                         f"got {r.refine_lance!r}")
    if len(lances) > MOST_REFINE_LANCES:
        raise ValueError(f"Recipe.refine_lance: at most {MOST_REFINE_LANCES} lances (each after the first takes "
                         f"{REFINE_LANCE_SHARES['more_lance']} of the refined league's own share), "
                         f"got {r.refine_lance!r}")
    if r.refine_hidden != () and not widths_ok(r.refine_hidden):
        raise ValueError(f"Recipe.refine_hidden: 1 to {MAX_LAYERS} widths, each an int in 1..{MAX_WIDTH:,} (or () "
                         f"for the distilled network's), got {r.refine_hidden!r}")
    if r.refine_hidden and not r.refine_decisions:
        raise ValueError(f"Recipe.refine_hidden: the widths {list(r.refine_hidden)} are the refined network's, so "
                         "they need refine_decisions (--refine-distilled DECISIONS) above 0")
    if r.refine_lance and not r.refine_decisions:
        raise ValueError(f"Recipe.refine_lance: a {r.refine_lance} best response joins the refined stage's league, "
                         "so it needs refine_decisions (--refine-distilled DECISIONS) above 0")
    if r.stage_probe_decisions and not r.distill_rounds:
        raise ValueError(f"Recipe.stage_probe_decisions: {r.stage_probe_decisions:,}-decision probes measure the "
                         "distilled and refined networks, so they need distill_rounds (--distill-rounds N) above 0")
    if (isinstance(r.stage_probe_starts, str) or len(set(r.stage_probe_starts)) != len(r.stage_probe_starts)
            or any(x not in STARTS for x in r.stage_probe_starts)):
        raise ValueError(f"Recipe.stage_probe_starts: a tuple of distinct starts among {', '.join(STARTS)} (empty: "
                         f"probe_starts), got {r.stage_probe_starts!r}")
    if r.stage_probe_starts and not r.stage_probe_decisions:
        raise ValueError(f"Recipe.stage_probe_starts: {', '.join(r.stage_probe_starts)} start(s) of the stage probes "
                         "need stage_probe_decisions (--stage-probes DECISIONS) above 0")
    check_learning_rate(r.probe_learning_rate, "Recipe.probe_learning_rate")
    check_learning_rate(r.stage_probe_learning_rate, "Recipe.stage_probe_learning_rate")
    check_learning_rate(r.refine_lance_learning_rate, "Recipe.refine_lance_learning_rate")
    return r


# ----------------------------------------------------------------------------------------------------
# the pieces: league shares from a Nash mixture, the policy kept
def league_from_nash(specs: Sequence[str], mixture: Sequence[float], recipe: Recipe) -> str:
    """A round's ``league_mix``: ``self`` and ``snapshot`` at their shares, every population member whose Nash
    share is at least ``min_share`` at its share of the rest, ``rule`` and ``equity`` at least ``baseline_floor``
    each, every rival at least ``rival_floor`` (the shares are renormalised by the trainer)."""
    rest = 1.0 - recipe.self_share - recipe.snapshot_share
    p = np.asarray(mixture, dtype=np.float64)
    keep = p >= recipe.min_share
    p = np.where(keep, p, 0.0)
    p = p / p.sum() if p.sum() > 0 else np.full(len(p), 1.0 / len(p))
    shares = {spec: rest * float(w) for spec, w in zip(specs, p, strict=True) if w > 0}
    for b in POPULATION_BASELINES:
        shares[b] = max(shares.get(b, 0.0), recipe.baseline_floor)
    for rival in recipe.rivals:
        shares[rival] = max(shares.get(rival, 0.0), recipe.rival_floor)
    items = [("self", recipe.self_share), ("snapshot", recipe.snapshot_share), *shares.items()]
    return ",".join(f"{name}:{share:.4f}" for name, share in items if share > 0)


def cap_rivals(specs: Sequence[str], payoff: npt.ArrayLike, mixture: Sequence[float],
               recipe: Recipe) -> npt.NDArray[np.float64]:
    """The mixture with the rivals' total share at most ``rival_cap``: when they hold more, each rival keeps its
    part of the cap and the rest of the mass follows the Nash mixture of ``payoff`` restricted to the members
    that are not rivals. Unchanged when the rivals hold at most the cap (or none of the specs is a rival)."""
    p = np.asarray(mixture, dtype=np.float64)
    is_rival = np.array([s in recipe.rivals for s in specs], dtype=bool)
    held = float(p[is_rival].sum())
    if held <= recipe.rival_cap or is_rival.all() or not is_rival.any():
        return p
    members = np.flatnonzero(~is_rival)
    inner, _ = nash_mixture(np.asarray(payoff, dtype=np.float64)[np.ix_(members, members)])
    capped = np.zeros_like(p)
    capped[is_rival] = p[is_rival] * (recipe.rival_cap / held)
    capped[members] = inner * (1.0 - recipe.rival_cap)
    return capped


#: The refined stage's league: its own share, the snapshots', each baseline's, the distilled network's probes (a
#: folder of best responses) and the rivals' together.
REFINE_SHARES = {"self": 0.3, "snapshot": 0.1, "baseline": 0.1, "probes": 0.3, "rivals": 0.1}


#: The refined stage's league with one-lance best responses (``refine_lance``): the first lance's probe a quarter of
#: the league; each further lance's probe takes ``more_lance`` from the learner's own share.
REFINE_LANCE_SHARES = {"self": 0.2, "snapshot": 0.05, "baseline": 0.1, "probes": 0.2, "lance": 0.25,
                       "more_lance": 0.1, "rivals": 0.1}
#: The most lances ``refine_lance`` may name: each after the first takes ``more_lance`` of the learner's own share.
MOST_REFINE_LANCES = 1 + round(REFINE_LANCE_SHARES["self"] / REFINE_LANCE_SHARES["more_lance"])


def refine_lances(recipe: Recipe) -> list[str]:
    """The lances of ``recipe.refine_lance`` (comma-separated), in order; none for ``""``."""
    return recipe.refine_lance.split(",") if recipe.refine_lance else []


def refine_league(probes: Path, recipe: Recipe, lance_probes: Sequence[Path] = ()) -> str:
    """The ``league_mix`` of the refined stage: :data:`REFINE_SHARES`, the folder ``probes`` standing for its best
    responses, the rivals' share split equally among them (without rivals it is the learner's own); with
    ``lance_probes`` (one-lance probes' folders), :data:`REFINE_LANCE_SHARES`: the first ``lance``, each further one
    ``more_lance`` taken from the learner's own share.

    Raises:
        ValueError: so many one-lance probes that the learner's own share would be negative.
    """
    sh, rivals = dict(REFINE_LANCE_SHARES if lance_probes else REFINE_SHARES), recipe.rivals
    lance_shares = [sh["lance"]] + [sh["more_lance"]] * (len(lance_probes) - 1) if lance_probes else []
    sh["self"] -= sum(lance_shares[1:])
    if len(lance_probes) > MOST_REFINE_LANCES:
        raise ValueError(f"refine_league: {len(lance_probes)} one-lance probes take more than the learner's own share "
                         f"({REFINE_LANCE_SHARES['self']}); give at most {MOST_REFINE_LANCES} lances")
    parts = [("self", sh["self"] + (0.0 if rivals else sh["rivals"])), ("snapshot", sh["snapshot"]),
             *((b, sh["baseline"]) for b in POPULATION_BASELINES), (str(probes), sh["probes"]),
             *((str(p), w) for p, w in zip(lance_probes, lance_shares, strict=True)),
             *((r, sh["rivals"] / len(rivals)) for r in rivals)]
    return ",".join(f"{k}:{w:.4f}" for k, w in parts if w > 0)


def probe_plan(recipe: Recipe, stage: bool = False) -> list[tuple[str, str, int, int]]:
    """Every probe of a round as ``(label, start, seed, decisions)``: the quick ones (each of ``probe_starts`` with
    ``probe_seeds`` seeds, labelled by their start), then the long one (labelled ``long-<start>``) when
    ``long_probe_decisions`` is set. A probe writes in ``<round>/probes/<label>-seed<seed>``.

    With ``stage`` and ``stage_probe_decisions`` set: the distilled and refined stages' probes instead, each of
    ``stage_probe_starts`` (or ``probe_starts``) with ``stage_probe_seeds`` seeds of ``stage_probe_decisions`` (no
    long one)."""
    if stage and recipe.stage_probe_decisions:
        return [(start, start, recipe.seed + k, recipe.stage_probe_decisions)
                for start in (recipe.stage_probe_starts or recipe.probe_starts)
                for k in range(recipe.stage_probe_seeds)]
    plan = [(start, start, recipe.seed + k, recipe.probe_decisions)
            for start in recipe.probe_starts for k in range(recipe.probe_seeds)]
    if recipe.long_probe_decisions:
        plan.append((f"long-{recipe.long_probe_start}", recipe.long_probe_start, recipe.seed,
                     recipe.long_probe_decisions))
    return plan


def keep_round(gains: Sequence[float]) -> int:
    """The round to keep: the smallest largest-probe-gain (the earlier round on a tie)."""
    if not gains:
        raise ValueError("no round was measured")
    return int(np.argmin(np.asarray(gains, dtype=np.float64)))
