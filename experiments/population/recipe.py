"""The shipped agent's recipe in one command: ``mus league``, rounds of best responses joining a population.

Beating the baselines is not being hard to exploit, and one long self-play run drifts toward beating its own
league. The recipe is PSRO (Lanctot et al., 2017) with the project's trainer and probes, each round anchored by
a magnet at its starting policy (magnetic mirror descent, Sokota et al., 2022), since hand-set rounds cycled:

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
   ``refined/probes``), kept only if its probes find less (on candidate K's recipe they found more: +1.35 against
   +0.50, 2026-12-05); with ``refine_lance`` L, a best response that decides only L's betting is trained against the
   distilled network first (``refined/lance/probes``) and joins that league (:data:`REFINE_LANCE_SHARES`).
4. **Keep** the policy whose largest probe gain is the smallest, each measured by the probes of the next round,
   which never trained it (never simply the last round; the distilled and refined policies by their own probes);
   ``OUT/policy.pt``.
5. **The card**: ``mus evaluate``'s report card of the kept policy (``OUT/card.md``, ``card.json``), and the
   recipe's own report (``OUT/recipe.md``, ``recipe.png``: every round's margins, probes and head to head).

Every step is a run of its own folder under ``OUT`` (``round0/train``, ``round1/probes/equity-seed0``,
``round1/meta.json``, ...) and is marked done in ``OUT/recipe.json`` when it ends; ``resume`` skips what is done
and resumes a stopped training or probe from its checkpoint, so a resumed recipe ends exactly as one never
stopped. A resume with more ``rounds`` makes a recipe longer (:func:`extend_rounds`): the final probes of its last
policy become the next round's, and it ends as a recipe of that many rounds from the start would. A resume with
other ``distill_*`` settings runs the distilled stage again on the rounds done (the old one's folder set aside),
one with another ``refine_decisions`` the refined stage again, and one with other ``stage_probe_*`` settings the
distilled network's probes and the refined stage again.
One progress bar counts the whole recipe's decisions.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from matplotlib.figure import Figure
from tqdm import tqdm

from agents import make_agent
from agents.policy import SHIPPED_POLICY, build_net, load_policy_file, parameters_digest
from experiments.evaluate.deals import make_deals
from experiments.evaluate.ratings import nash_mixture
from experiments.evaluate.report_card import card_markdown, duplicate_row, report_card
from experiments.evaluate.tournament import agent_labels, round_robin
from experiments.population.distill import distill
from experiments.population.exploit import policy_file_of, probe
from experiments.population.exploit_seeds import STARTS, aggregate_probes, probe_folder, run_probe_jobs
from experiments.population.recipe_clock import StepClock
from experiments.train import ppo
from experiments.train.league import LEARNER_DECIDES
from experiments.train.report import machine_text, progress_bar
from experiments.train.session import TrainingInterrupted
from experiments.train.settings import MAX_LAYERS, MAX_WIDTH, check_learning_rate, torch_thread_count, widths_ok
from mus_env import MusConfig

__all__ = ["Recipe", "PRESETS", "CANDIDATE_E", "CANDIDATE_E_NAME", "make_recipe", "run_recipe", "league_from_nash",
           "keep_round",
           "STATE_NAME", "rival_digests", "extend_rounds", "probe_plan", "trained_rounds", "replica_folder",
           "refine_league", "refine_lances", "REFINE_SHARES", "REFINE_LANCE_SHARES", "MOST_REFINE_LANCES",
           "kept_text"]

#: The recipe's record of its settings and finished steps (in ``OUT``).
STATE_NAME = "recipe.json"
#: The baselines every population holds.
BASELINES = ("rule", "equity")


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
    """agents outside the recipe that join every round's population and report (``ship``: ``psro_e``, the
    ``ppo`` shipped on 2026-12-02, and ``ordago``; named by its record, so that a preset stays the same recipe
    whatever agent is shipped later; until 2026-12-06 the presets named ``ppo``, then the same weights): a rival
    that beats a round's policy gets a Nash share of the next league, and each round reports its margin over every
    rival (the recipe of 2026-12-03, without rivals, kept a policy that lost −0.68 stones/hand to ``ppo`` and beat
    ``ordago`` by only +4.8)"""
    rival_floor: float = 0.0
    """the least share of each rival in a round's league (``ordago`` loses to everyone, so the Nash mixture never
    picks it; the shipped ``ppo``'s stages kept it at 0.05)"""
    rival_cap: float = 1.0
    """the most the rivals together take of a round's Nash mixture; the rest follows the Nash mixture of the
    population without them (1: no cap). A rival that beats every member takes the whole mixture: in the run of
    2026-12-03 with ``ppo`` as a rival, ``ppo`` got 1.00 in every round, the round's own best responses left the
    league, and the quick probe's gain rose again (+0.89 to +0.96, against +0.41 to +0.56 without rivals)"""
    long_probe_decisions: int = 0
    """each round's probes (and the final ones) add one best response of this budget from ``long_probe_start``
    (0: none). It counts in the keep rule and joins the population like the others. The quick probes (13M
    decisions) chose a policy that 80M-decision probes from the ``equity`` clone exploit by +2.9 stones/hand (the
    ``refine`` run of 2026-12-04): their gain from the clone appears only after about 13M decisions"""
    long_probe_start: str = "equity"
    """the long probe's start (as in ``probe_starts``)"""
    probe_learning_rate: float = ppo.LEARNING_RATE_2026_11
    """the learning rate of every probe the recipe trains (quick and long; the final measuring probes of the docs
    run at 3e-4, the default). From candidate H's own weights a probe at 3e-3 found in 26M decisions (+0.94) what
    80M at 3e-4 found (+1.04, +1.16), and a quick probe at 3e-4 only +0.14"""
    distill_rounds: int = 0
    """after the final probes, fit one network to the equal mixture of the last ``distill_rounds`` policies (0:
    none; :mod:`experiments.population.distill`), probe it as a round's policy is, and keep it if its largest gain
    is the smallest. Probes from I's weights found +0.36 to +0.54 at 30M to 60M decisions against the mixture of
    I and round 2 of its recipe, against +1.0 to +1.25 against I alone (2026-12-05)"""
    distill_decisions: int = 4_000_000
    """decisions played to make the distillation's data"""
    distill_epochs: int = 4
    """the distillation's passes over its data"""
    distill_replicas: int = 1
    """runs of the rounds whose last ``distill_rounds`` policies make the mixture: this recipe's, and
    ``distill_replicas - 1`` more, each the same recipe with the next seed (``seed + k``), run before the stage in
    ``OUT/replica<k>`` (a recipe of its own, without a distilled stage). The one network that conceded least to
    the 80M probes (candidate J, +0.48 and +0.50) was fitted to the last two rounds of two recipes; the last two or
    three rounds of one recipe (K, M) conceded +0.54 and +0.61, its last four (L) more than its own round 1"""
    refine_decisions: int = 0
    """with ``distill_rounds``: train the distilled network this many decisions more against its own probes (0: no
    such stage; :func:`refine_league`). On candidate K's recipe (30M decisions, 2026-12-05) the refined network
    conceded +1.35 to the recipe's probe and +1.31 to an 80M probe (K: +0.50, +0.54), and the recipe kept K's; from
    N's weights by hand, against N's four 80M probes, +0.48 to a fresh 80M probe (N +0.53) but +0.87 to the recipe's
    (N +0.56)"""
    refine_lance: str = ""
    """with ``refine_decisions``: before the refined stage trains, a best response that decides only this lance's
    betting (``pares``; ``mus exploit --lance``) is trained against the distilled network, from its weights, and
    joins the refined stage's league (:data:`REFINE_LANCE_SHARES`; it plays its other decisions as the distilled
    network). Several lances, comma-separated (``pares,juego``), train one such best response each, side by side
    (:func:`refine_lances`). "" for none. By hand from N's weights with the magnet at N (record T, 2026-12-05) the
    pares one closed the pares leak: +0.31 to N's +0.53 from the protocol's probes, game win 0.541"""
    refine_hidden: tuple[int, ...] = ()
    """with ``refine_decisions``: the refined network's layer widths, wider than the distilled one's (same depth):
    the distilled network is widened without changing its play (:meth:`agents.policy.PolicyNet.load_narrower`)
    and the refined stage trains the wider one (its probes from its own weights are as wide). Empty: the distilled
    network's widths. A capacity test: every refined 128-128 network conceded about +0.4 to a probe from its own
    weights (records U to Y4)"""
    refine_lance_decisions: int = 40_000_000
    """that best response's budget (record T's: 40M decisions)"""
    refine_lance_learning_rate: float = 3e-3
    """its learning rate (record T's: 3e-3)"""
    stage_probe_decisions: int = 0
    """with ``distill_rounds``: the distilled and refined networks are probed as the docs measure an agent (every
    start of ``probe_starts``, ``stage_probe_seeds`` seeds each, this many decisions at
    ``stage_probe_learning_rate``: 80M at 3e-4 is the protocol) instead of by a round's probes (0: a round's;
    :func:`probe_plan`). The refined stage then trains against such probes: N trained 30M decisions against its
    four 80M probes conceded +0.48 to a fresh 80M probe (record P), against +1.31 for K trained against the
    recipe's 40M probes at 3e-3 (record Q)"""
    stage_probe_seeds: int = 2
    """the stage probes' training seeds per start (``seed`` ...)"""
    stage_probe_learning_rate: float = ppo.LEARNING_RATE_2026_11
    """the stage probes' learning rate (3e-4: the measuring probes')"""
    stage_probe_starts: tuple[str, ...] = ()
    """the stage probes' starts, in the order they run (empty: ``probe_starts``). ``("agent",)`` halves the stage's
    probes: against every fitted network the ``equity``-clone 80M probes found at most +0.24 while those from its
    own weights found the largest gain (records S, U and T's E2, 2026-12-05)"""
    seed: int = 0
    torch_threads: int = 1
    """torch threads of each probe (1: several share the cores)"""
    train_threads: int = 0
    """torch threads of the steps that run alone: the trainings and the distillation (0: all cores, at most 4). On 2
    cores, 2 threads trained a round's kind of run 1.6x faster than 1 (45,000 decisions a second against 28,000) to the
    very same weights (their digest; 2026-12-05); before that date every step ran with ``torch_threads``"""

    def to_dict(self) -> dict[str, Any]:
        """The settings as JSON values."""
        return json.loads(json.dumps(dataclasses.asdict(self)))


#: The fields with a default, as JSON values: what a recipe.json written before a field existed ran with.
_DEFAULTS: dict[str, Any] = json.loads(json.dumps({f.name: f.default for f in dataclasses.fields(Recipe)
                                                   if f.default is not dataclasses.MISSING}))

#: Round 0's league: the default run's, with ``ordago`` at the rivals' floor taken from the snapshots' share (the
#: default run's league alone made policies that beat ``ordago`` by only +6 to +9 stones/hand; ``ppo``: +15.5).
_LB = "self:0.2,snapshot:0.15,rule:0.3,equity:0.3,ordago:0.05"

#: Candidate E's weights, the ``ppo`` shipped on 2026-12-02 (kept beside its probes, so that ``refine`` starts from
#: the same weights whatever agent is shipped later).
CANDIDATE_E = SHIPPED_POLICY.parent / "candidates" / "psro_e" / "policy.pt"
#: Candidate E as an agent spec (``agents.candidate_policy``): the presets' rival.
CANDIDATE_E_NAME = "psro_e"

#: The ``ship`` preset (``refine`` changes its round 0).
_SHIP = Recipe(rounds=3, trainer_preset="default",
               first=dict(total_decisions=120_000_000, magnet_coef=0.1, magnet_every=50, league_mix=_LB,
                          eval_every=100, checkpoint_every=25, learning_rate=ppo.LEARNING_RATE_2026_11),
               round_train=dict(total_decisions=60_000_000, magnet_coef=0.1, eval_every=100,
                                checkpoint_every=25, learning_rate=ppo.LEARNING_RATE_2026_11),
               self_share=0.3, snapshot_share=0.1, baseline_floor=0.1, min_share=0.02,
               probe_starts=("equity", "agent"), probe_seeds=1, probe_decisions=13_000_000,
               probe_preset="default", probe_eval_hands=20_000, probe_eval_games=2_000, meta_hands=2_000,
               eval_hands=20_000, eval_games=2_000, card_hands=None, card_games=None,
               rivals=(CANDIDATE_E_NAME, "ordago"),
               rival_floor=0.05)

#: The ``refine`` preset (``refine-long`` adds the long probe).
_REFINE = dataclasses.replace(
    _SHIP, rival_cap=0.5,
    first=dict(warm_start=str(CANDIDATE_E), total_decisions=8_000_000, magnet_coef=0.1, magnet_every=0,
               league_mix=_LB, eval_every=100, checkpoint_every=25, learning_rate=ppo.LEARNING_RATE_2026_11))

#: Named recipes. ``ship`` makes the shipped agent from the ``equity`` clone (sized for about 3 hours on 2 cores,
#: best responses included); ``refine`` runs the same rounds from candidate E's weights (round 0: 8M decisions with
#: the magnet fixed there; the rivals at most half of each Nash mixture); ``refine-long`` runs two of them with a
#: 40M-decision probe from the ``equity`` clone in every round (candidate H, 71 minutes on 2 cores); ``tiny`` runs
#: in seconds (tests).
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
    if isinstance(r.rivals, str) or len(set(r.rivals)) != len(r.rivals) or set(r.rivals) & set(BASELINES):
        raise ValueError(f"Recipe.rivals: a tuple of distinct agent specs other than {', '.join(BASELINES)}, "
                         f"got {r.rivals!r}")
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
    for b in BASELINES:
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
#: folder of best responses) and the rivals' together (what was measured from candidate N's weights on 2026-12-05,
#: with the rivals ppo and ordago at 0.05 each).
REFINE_SHARES = {"self": 0.3, "snapshot": 0.1, "baseline": 0.1, "probes": 0.3, "rivals": 0.1}


#: The refined stage's league with one-lance best responses (``refine_lance``): record T's (2026-12-05), the first
#: lance's probe a quarter of the league; each further lance's probe takes ``more_lance`` from the learner's own share
#: (the rest stays as measured).
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
             *((b, sh["baseline"]) for b in BASELINES), (str(probes), sh["probes"]),
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


def trained_rounds(steps: dict[str, Any]) -> list[int]:
    """The rounds whose training is done in a recipe's ``steps`` (``recipe.json``), in order."""
    return sorted(int(k.split("/")[0][5:]) for k in steps if k.startswith("round") and k.endswith("/train"))


def replica_folder(out: Path, k: int) -> Path:
    """Where the ``k``-th more run of a recipe's rounds (``distill_replicas``) is: a recipe of its own."""
    return out / f"replica{k}"


def keep_round(gains: Sequence[float]) -> int:
    """The round to keep: the smallest largest-probe-gain (the earlier round on a tie)."""
    if not gains:
        raise ValueError("no round was measured")
    return int(np.argmin(np.asarray(gains, dtype=np.float64)))


# ----------------------------------------------------------------------------------------------------
# the run
class _Steps:
    """``OUT/recipe.json``: the settings and the result of every finished step, written after each step."""

    def __init__(self, out: Path, recipe: Recipe, resume: bool, command: str, rivals: dict[str, str | None]) -> None:
        self.path = out / STATE_NAME
        if self.path.is_file() and not resume:
            raise ValueError(f"{out} holds a recipe already ({STATE_NAME}): continue it with --resume, or give "
                             "another --out")
        if resume and not self.path.is_file():
            raise ValueError(f"{self.path}: no recipe to resume (start without --resume)")
        aside_before = _stages_set_aside(out)
        if resume:
            saved = json.loads(self.path.read_text(encoding="utf-8"))
            # a setting added after the recipe started counts at its default (the behaviour it was made with)
            settings = {**_DEFAULTS, **saved.get("settings", {})}
            wanted = recipe.to_dict()
            for stage in ("first", "round_train"):      # stages that did not name a learning rate ran at 3e-4,
                then = settings.get(stage, {})            # the trainer's default until 2026-12-04
                if "learning_rate" in wanted[stage] and "learning_rate" not in then:
                    settings[stage] = {**then, "learning_rate": ppo.LEARNING_RATE_2026_11}
            differ = sorted(k for k, v in wanted.items() if settings.get(k) != v and k not in _MACHINE_FIELDS)
            # the distilled stage comes after every round: another one replaces it (the old one is set aside)
            redistill = [k for k in differ if k in _DISTILL_FIELDS]
            rerefine = [k for k in differ if k in _REFINE_FIELDS]
            reprobe = [k for k in differ if k in _STAGE_PROBE_FIELDS]
            differ = [k for k in differ if k not in _DISTILL_FIELDS + _REFINE_FIELDS + _STAGE_PROBE_FIELDS]
            longer = differ == ["rounds"] and recipe.rounds > settings["rounds"]
            if differ and not longer:
                more = " (rounds can only grow: a longer recipe continues a shorter one)" if "rounds" in differ else ""
                raise ValueError(f"--resume: the recipe in {out} was made with other settings ({', '.join(differ)})"
                                 + more)
            changed = [spec for spec, digest in saved.get("rivals", rivals).items() if rivals.get(spec) != digest]
            if changed:
                raise ValueError(f"--resume: the rival(s) {', '.join(changed)} changed since the recipe in {out} "
                                 "started (another policy file): rerun it in a new folder, or restore the file")
            if longer:
                saved = extend_rounds(out, saved, recipe.rounds)
            elif redistill:
                saved = _set_distilled_aside(out, saved)
            elif reprobe:      # the distilled network stays; its probes and the refined stage that trained on them go
                saved = _set_stage_aside(out, _set_stage_aside(out, saved, "distilled/probes"), "refined")
            elif rerefine:
                saved = _set_stage_aside(out, saved, "refined")
            staged = _DISTILL_FIELDS + _REFINE_FIELDS + _STAGE_PROBE_FIELDS + _MACHINE_FIELDS
            saved["settings"] = {**saved["settings"], **{k: wanted[k] for k in staged}}
            self.data = {**saved, "rivals": rivals}
            if command != saved.get("command"):         # what each resume asked for (another distilled stage...)
                self.data["resumed_with"] = [*saved.get("resumed_with", []), command]
        else:
            self.data = {"settings": recipe.to_dict(), "command": command, "machine": machine_text(),
                         "rivals": rivals, "steps": {}, "seconds": 0.0}
        out.mkdir(parents=True, exist_ok=True)
        self.write()
        self.clock = StepClock(out, resume)
        if _stages_set_aside(out) > aside_before:       # the stopped step was in a stage set aside: so is its time
            self.data["seconds_set_aside"] = self.data.get("seconds_set_aside", 0.0) + self.clock.set_aside()
            self.write()

    def done(self, name: str) -> dict[str, Any] | None:
        return self.data["steps"].get(name)

    def finish(self, name: str, result: dict[str, Any]) -> dict[str, Any]:
        """Record a finished step, and its wall time (``step_seconds``: since the previous step finished, the time
        a stopped process had spent on it included; :class:`~experiments.population.recipe_clock.StepClock`)."""
        self.data["steps"][name] = result
        self.data.setdefault("step_seconds", {})[name] = round(self.clock.lap(), 1)
        self.write()
        return result

    def write(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(self.data, indent=2), encoding="utf-8")
        tmp.replace(self.path)


#: The settings of the distilled stage, which a resume may change (:func:`_set_distilled_aside`).
_DISTILL_FIELDS = ("distill_rounds", "distill_decisions", "distill_epochs", "distill_replicas")
#: The settings of the refined stage, which a resume may change (:func:`_set_stage_aside`).
_REFINE_FIELDS = ("refine_decisions", "refine_lance", "refine_lance_decisions", "refine_lance_learning_rate",
                  "refine_hidden")
#: The settings of the distilled and refined stages' probes, which a resume may change (their probes and the refined
#: stage run again).
_STAGE_PROBE_FIELDS = ("stage_probe_decisions", "stage_probe_seeds", "stage_probe_learning_rate",
                       "stage_probe_starts")
#: How a run uses the machine, not what it makes: a resume may change them (the new values are recorded).
_MACHINE_FIELDS = ("torch_threads", "train_threads")


def _set_stage_aside(out: Path, saved: dict[str, Any], stage: str) -> dict[str, Any]:
    """``saved`` without the steps of ``stage`` (``distilled``, ``refined`` or one step, ``distilled/probes``), the
    keep and the card (chosen again at the end); the stage's folder, if any, moved to ``<stage>-before-<n>`` (``n``
    counts the stages set aside), never deleted."""
    if (out / stage).exists():
        n = 1 + sum(1 for p in out.glob(f"{stage}-before-*"))
        (out / stage).replace(out / f"{stage}-before-{n}")
    steps = {k: v for k, v in saved["steps"].items()
             if k not in ("keep", "card", stage) and not k.startswith(f"{stage}/")}
    return _with_steps(saved, steps)


def _stages_set_aside(out: Path) -> int:
    """How many stage folders :func:`_set_stage_aside` has moved aside in ``out`` (``distilled-before-1``,
    ``distilled/probes-before-1``, ...)."""
    return sum(1 for pattern in ("*-before-*", "*/*-before-*") for _ in out.glob(pattern)) if out.is_dir() else 0


def _with_steps(saved: dict[str, Any], steps: dict[str, Any]) -> dict[str, Any]:
    """``saved`` with only ``steps``: the wall time of the steps left out (``step_seconds``) leaves the recipe's
    ``seconds`` for ``seconds_set_aside``, so that the recipe's time is that of the steps it is made of (steps
    recorded before ``step_seconds`` existed, 2026-12-05, cannot be taken out)."""
    times = saved.get("step_seconds", {})
    gone = sum(v for k, v in times.items() if k not in steps)
    return {**saved, "steps": steps, "step_seconds": {k: v for k, v in times.items() if k in steps},
            "seconds": saved.get("seconds", 0.0) - gone,
            "seconds_set_aside": saved.get("seconds_set_aside", 0.0) + gone}


def _set_distilled_aside(out: Path, saved: dict[str, Any]) -> dict[str, Any]:
    """``saved`` without its distilled stage and the refined stage that started from it (:func:`_set_stage_aside`)."""
    return _set_stage_aside(out, _set_stage_aside(out, saved, "distilled"), "refined")


def extend_rounds(out: Path, saved: dict[str, Any], rounds: int) -> dict[str, Any]:
    """``saved`` (a recipe.json's content) made a recipe of ``rounds`` rounds: what ``--resume --rounds N`` does.

    Rounds already run stay as they are. The final probes of the shorter recipe's last policy are the probes of
    the next round (the same target, starts, seeds and budget), so their step and their folder
    (``final/probes``, finished or stopped) become ``round<R+1>/probes``; the kept policy and the card are chosen
    again at the end, and a distilled stage is set aside (its mixture was of the shorter recipe's rounds). A recipe
    extended so ends exactly as one run with ``rounds`` from the start.

    Raises:
        ValueError: the next round's probes folder exists already (nothing is changed).
    """
    before = int(saved["settings"]["rounds"])
    name = f"round{before + 1}/probes"
    source, target = out / "final" / "probes", out / name
    if source.exists() and target.exists():
        raise ValueError(f"--resume --rounds {rounds}: both {source} and {target} exist; remove the one that is "
                         "not the last policy's probes")

    def moved(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: moved(v) for k, v in x.items()}
        if isinstance(x, list):
            return [moved(v) for v in x]
        if isinstance(x, str) and x.startswith(str(source)):
            return str(target) + x[len(str(source)):]
        return x

    saved = _set_distilled_aside(out, saved)       # a mixture of the shorter recipe's rounds: not reused
    # the replicas' rounds are made as long again when the stage runs (each resumed with the new rounds)
    steps = {k: v for k, v in saved["steps"].items() if k != "final/probes" and not k.startswith("replica")}
    if "final/probes" in saved["steps"]:
        steps[name] = moved(saved["steps"]["final/probes"])
    times = dict(saved.get("step_seconds", {}))
    if "final/probes" in times:
        times[name] = times.pop("final/probes")
    saved = _with_steps({**saved, "step_seconds": times}, steps)
    if source.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        source.replace(target)                     # before recipe.json: a crash between is repaired by a rerun
    history = [*saved.get("extended", []), {"from": before, "to": rounds}]
    return {**saved, "settings": {**saved["settings"], "rounds": rounds}, "extended": history}


def rival_digests(recipe: Recipe) -> dict[str, str | None]:
    """Each rival's weights digest (None for an agent without weights), recorded in ``recipe.json``: ``ppo`` is
    whatever agent is shipped when the recipe runs, and a resume refuses a rival whose weights changed.

    Raises:
        ValueError: a rival that cannot play (before anything is written).
    """
    digests: dict[str, str | None] = {}
    for spec in recipe.rivals:
        try:
            make_agent(spec)
            digests[spec] = _policy_digest(Path(policy_file_of(spec))) if spec == "ppo" or spec.endswith(".pt") \
                else None
        except (ValueError, OSError, ImportError) as e:
            raise ValueError(f"Recipe.rivals: {spec!r} cannot play: {e}") from None
    return digests


def _policy_digest(path: Path) -> str:
    blob = load_policy_file(path)
    return parameters_digest(build_net(blob, path))


def run_recipe(recipe: Recipe, out: str | Path, resume: bool = False, workers: int = 1, ray_address: str | None = None,
               log: Callable[[str], object] = print, progress: bool = True, command: str = "mus league",
               probe_fn: Callable[..., dict[str, Any]] = probe) -> dict[str, Any]:
    """Run (or with ``resume`` continue) ``recipe`` in the folder ``out`` (see the module docstring).

    Args:
        recipe: the settings (:func:`make_recipe`).
        out: the recipe's folder.
        resume: continue the recipe in ``out`` (the same settings): finished steps are read, a stopped training or
            probe resumes from its checkpoint.
        workers: the probes of a round run at once as processes on this machine (:func:`run_probe_jobs`).
        ray_address: or each as a Ray task on this cluster.
        log: where the recipe's lines go (every run inside it is quiet).
        progress: one progress bar over the whole recipe's decisions.
        command: the command line, recorded.
        probe_fn: the probe of a run in this process (tests give a stub).

    Returns:
        ``OUT/recipe.json``'s content: every step's result, ``keep`` (the round kept, its policy and gains).

    Raises:
        ValueError: ``out`` holds a recipe (without ``resume``) or one of other settings; a step's own refusals.
        experiments.train.session.TrainingInterrupted: Ctrl-C (``resume`` continues from where it stopped): in a
            training, the message names its checkpoint; elsewhere (parallel probes, between steps) ``checkpoint``
            is ``OUT/recipe.json``, the finished steps.
    """
    out = Path(out)
    steps = _Steps(out, recipe, resume, command, rival_digests(recipe))
    plan, stage_plan = probe_plan(recipe), probe_plan(recipe, stage=True)
    probe_budget = sum(decisions for *_, decisions in plan)
    stage_budget = sum(decisions for *_, decisions in stage_plan)
    first_args = ppo.make_args(recipe.trainer_preset, **recipe.first)
    round_args = ppo.make_args(recipe.trainer_preset, **recipe.round_train)
    rounds_budget = (first_args.total_decisions + recipe.rounds * round_args.total_decisions
                     + (recipe.rounds + 1) * probe_budget)
    total = (rounds_budget * (1 + (recipe.distill_replicas - 1) * bool(recipe.distill_rounds))
             + (recipe.distill_decisions + stage_budget) * bool(recipe.distill_rounds)
             + (recipe.refine_decisions + stage_budget) * bool(recipe.refine_decisions)
             + recipe.refine_lance_decisions * len(refine_lances(recipe)))
    bar = progress_bar(total, "recipe", progress)
    # the recipe's seconds: those recorded, the stopped step's that the clock carried, and this process's
    t_start, seconds_before = time.perf_counter(), steps.data.get("seconds", 0.0) + steps.clock.carried
    steps.clock.start()
    say = log if not progress or log is not print else tqdm.write     # lines above the bar, not through it

    def tick(name: str, decisions: int) -> None:
        bar.update(decisions)
        bar.set_postfix_str(name)
        steps.data["seconds"] = seconds_before + time.perf_counter() - t_start
        steps.write()

    def train_step(name: str, overrides: dict[str, Any]) -> dict[str, Any]:
        if (done := steps.done(name)) is not None:
            tick(name, done["budget"])
            return done
        folder = out / name
        args = ppo.make_args(recipe.trainer_preset, **{"seed": recipe.seed, **overrides, "out": str(folder),
                                                       "progress": False, "torch_threads": recipe.train_threads})
        say(f"{name}: mus train, {args.total_decisions:,} decisions, warm start {args.warm_start}, league "
            f"{args.league_mix}, magnet {args.magnet_coef} (every {args.magnet_every or 'never'})")
        t = ppo.train(args, resume=(folder / "checkpoint.pt").is_file(), log=lambda *a: None,
                      run_info={"command": f"{command} (step {name})", "preset": recipe.trainer_preset})
        ev = t.evals[-1] if t.evals else {}
        result = {"policy": str(folder / "policy.pt"), "digest": _policy_digest(folder / "policy.pt"),
                  "decisions": t.decisions, "budget": t.num_updates * t.batch, "minutes": t.elapsed / 60,
                  "league_mix": args.league_mix, "last_eval": ev}
        tick(name, result["budget"])
        return steps.finish(name, result)

    def probe_job(name: str, target: str, folder: Path, start: str, seed: int, decisions: int, lr: float,
                  **more: Any) -> dict[str, Any]:
        """One best response's arguments (:func:`run_probe_jobs`), resumed if its folder holds a checkpoint."""
        return {"spec": target, "out": folder, "minutes": 0, "decisions": decisions, "warm_start": start,
                "seed": seed, "eval_hands": recipe.probe_eval_hands, "eval_games": recipe.probe_eval_games,
                "preset": recipe.probe_preset, "resume": (folder / "checkpoint.pt").is_file(), "progress": False,
                "torch_threads": recipe.torch_threads, "learning_rate": lr, "command": f"{command} (step {name})",
                **more}

    def probe_step(name: str, target: str, stage: bool = False) -> dict[str, Any]:
        step_plan, budget = (stage_plan, stage_budget) if stage else (plan, probe_budget)
        lr = recipe.stage_probe_learning_rate if stage and recipe.stage_probe_decisions else recipe.probe_learning_rate
        if (done := steps.done(name)) is not None:
            tick(name, budget)
            return done
        jobs, keys, found = [], [], {}
        # the longest first: the others run beside it when there are fewer workers than probes
        for label, start, seed, decisions in sorted(step_plan, key=lambda p: -p[3]):
            folder = probe_folder(out / name, label, seed)
            if (folder / "exploit.json").is_file():
                found[label, seed] = json.loads((folder / "exploit.json").read_text(encoding="utf-8"))
                continue
            jobs.append(probe_job(name, target, folder, start, seed, decisions, lr))
            keys.append((label, seed))
        say(f"{name}: {len(jobs)} best response(s) against {target} ({workers} at once"
            + (f", Ray at {ray_address}" if ray_address else "") + ")")
        ran = run_probe_jobs(jobs, workers, ray_address, lambda *a: None, probe_fn)
        found.update(zip(keys, ran, strict=True))
        report = aggregate_probes([found[label, seed] for label, _, seed, _ in step_plan])
        report.pop("results")
        report["policies"] = [str(probe_folder(out / name, label, seed) / "policy.pt")
                              for label, _, seed, _ in step_plan]
        report["labels"] = [label for label, *_ in step_plan]
        say(f"{name}: largest gain {report['max']['stones']:+.3f} stones/hand ({report['max']['start']} start, "
            f"{report['max']['decisions']:,} decisions), game win rate up to {report['max_win']['win']:.3f}")
        tick(name, budget)
        return steps.finish(name, report)

    def lance_step(name: str, target: str) -> list[Path]:
        """A best response that decides only one lance's betting against ``target``, from its weights, for each of
        ``refine_lance`` (side by side, ``workers`` at once): their folders, for the refined stage's league."""
        lances = refine_lances(recipe)
        folders = [out / name / f"{lance}-seed{recipe.seed}" for lance in lances]
        if steps.done(name) is None:
            say(f"{name}: a best response deciding only the {' and one only the '.join(lances)} betting against "
                f"{target}")
            found = {lance: json.loads((f / "exploit.json").read_text(encoding="utf-8"))
                     for lance, f in zip(lances, folders, strict=True) if (f / "exploit.json").is_file()}
            todo = [(lance, f) for lance, f in zip(lances, folders, strict=True) if lance not in found]
            jobs = [probe_job(name, target, f, "agent", recipe.seed, recipe.refine_lance_decisions,
                              recipe.refine_lance_learning_rate, learner_decides=lance) for lance, f in todo]
            ran = run_probe_jobs(jobs, workers, ray_address, lambda *a: None, probe_fn)
            found.update(zip([lance for lance, _ in todo], ran, strict=True))
            report = _lance_report([found[lance] for lance in lances])
            report["policies"], report["labels"] = [str(f / "policy.pt") for f in folders], lances
            say(f"{name}: gain " + ", ".join(f"{row['stones']:+.3f} stones/hand deciding only the {lance} betting"
                                             for row, lance in zip(report["probes"], lances, strict=True)))
            steps.finish(name, report)
        tick(name, recipe.refine_lance_decisions * len(lances))
        return folders

    def meta_step(name: str, specs: list[str]) -> dict[str, Any]:
        if (done := steps.done(name)) is not None:
            return done
        deals = make_deals(recipe.meta_hands, recipe.seed + 7_000 + len(specs), MusConfig().target)
        pairs = round_robin(specs, deals, mode="hands", config=MusConfig(), seed=recipe.seed, progress=False)
        labels = agent_labels(specs)
        index = {label: i for i, label in enumerate(labels)}
        payoff = np.zeros((len(specs), len(specs)))
        for pr in pairs:
            m = pr.mean_diff()[0]
            payoff[index[pr.a], index[pr.b]], payoff[index[pr.b], index[pr.a]] = m, -m
        mixture, gap = nash_mixture(payoff)
        shares = cap_rivals(specs, payoff, mixture, recipe)
        league = league_from_nash(specs, shares, recipe)

        def listed(p: npt.NDArray[np.float64]) -> str:
            return ", ".join(f"{Path(s).parent.name if s.endswith('.pt') else s} {w:.2f}"
                             for s, w in zip(specs, p, strict=True) if w >= 0.01)
        say(f"{name}: Nash mixture of {len(specs)} agents (gap {gap:.3f}): {listed(mixture)}"
            + ("" if np.array_equal(shares, mixture) else f"; rivals capped at {recipe.rival_cap:g}: {listed(shares)}"))
        return steps.finish(name, {"specs": specs, "payoff": payoff.round(4).tolist(), "mixture": mixture.tolist(),
                                   "shares": shares.tolist(), "gap": gap, "league_mix": league})

    def distill_step(name: str, members: list[str], start: str) -> dict[str, Any]:
        if (done := steps.done(name)) is not None:
            tick(name, done["budget"])
            return done
        folder = out / name
        say(f"{name}: one network fitted to the equal mixture of {len(members)} policies, "
            f"{recipe.distill_decisions:,} decisions, from {start}")
        t0 = time.perf_counter()
        record = distill(",".join(members), folder, decisions=recipe.distill_decisions, epochs=recipe.distill_epochs,
                         start=start, seed=recipe.seed, torch_threads=torch_thread_count(recipe.train_threads),
                         progress=False,
                         resume=(folder / "checkpoint.pt").is_file(), log=lambda *a: None,
                         command=f"{command} (step {name})")
        result = {"policy": str(folder / "policy.pt"), "digest": _policy_digest(folder / "policy.pt"),
                  "members": members, "start": start, "kl": record["kl"], "decisions": recipe.distill_decisions,
                  "budget": recipe.distill_decisions, "minutes": (time.perf_counter() - t0) / 60}
        tick(name, result["budget"])
        return steps.finish(name, result)

    def replica_step(k: int) -> dict[str, Any]:
        folder = replica_folder(out, k)
        name = folder.name
        if (done := steps.done(name)) is not None:
            tick(name, rounds_budget)
            return done
        sub = dataclasses.replace(recipe, distill_rounds=0, distill_replicas=1, seed=recipe.seed + k)
        say(f"{name}: the rounds again with seed {sub.seed}, a recipe of its own in {folder}")
        t_here = time.perf_counter()
        data = run_recipe(sub, folder, resume=(folder / STATE_NAME).is_file(), workers=workers,
                          ray_address=ray_address, log=lambda *a: None, progress=False,
                          command=f"{command} (step {name})", probe_fn=probe_fn)
        s = data["steps"]
        result = {"recipe": str(folder / STATE_NAME), "seed": sub.seed,
                  "policies": [s[f"round{r}/train"]["policy"] for r in range(sub.rounds + 1)],
                  "gains": s["keep"]["gains"], "minutes": float(data.get("seconds", 0.0)) / 60,
                  "minutes_here": (time.perf_counter() - t_here) / 60}     # the rest ran by a command of its own
        tick(name, rounds_budget)
        return steps.finish(name, result)

    def report_step(name: str, policy: str, previous: str | None) -> dict[str, Any]:
        if (done := steps.done(name)) is not None:
            return done
        cfg = MusConfig()
        hands, games = make_deals(recipe.eval_hands, 7, cfg.target), make_deals(recipe.eval_games, 8, cfg.target)
        me = make_agent(policy)
        rows = [duplicate_row(me, make_agent(o), ("policy", o), hands, games, cfg, 7)
                for o in (*BASELINES, *recipe.rivals)]
        if previous is not None:
            rows.append(duplicate_row(me, make_agent(previous), ("policy", "previous"), hands, games, cfg, 7))
        say(f"{name}: " + ", ".join(f"vs {r['opponent']} {r['stones']:+.3f} [{r['stones_lo']:+.3f}, "
                                    f"{r['stones_hi']:+.3f}]" for r in rows))
        return steps.finish(name, {"policy": policy, "rows": rows})

    try:
        # round 0
        policies = [train_step("round0/train", dict(recipe.first))["policy"]]
        report_step("round0/report", policies[0], None)
        responses: list[str] = []
        probes: list[dict[str, Any]] = []
        for r in range(1, recipe.rounds + 1):
            previous = policies[-1]
            probes.append(probe_step(f"round{r}/probes", previous))
            responses += probes[-1]["policies"]
            meta = meta_step(f"round{r}/meta", [*BASELINES, *recipe.rivals, *policies, *responses])
            overrides = {**recipe.round_train, "warm_start": previous, "magnet_every": 0,
                         "league_mix": meta["league_mix"], "seed": recipe.seed + r}
            policies.append(train_step(f"round{r}/train", overrides)["policy"])
            report_step(f"round{r}/report", policies[-1], previous)
        probes.append(probe_step("final/probes", policies[-1]))
        candidates = list(policies)
        if recipe.distill_rounds:
            members = policies[-recipe.distill_rounds:]
            member_gains = [p["max"]["stones"] for p in probes[-len(members):]]
            for k in range(1, recipe.distill_replicas):       # the same rounds with other seeds
                replica = replica_step(k)
                members += replica["policies"][-recipe.distill_rounds:]
                member_gains += replica["gains"][-recipe.distill_rounds:]
            start = members[keep_round(member_gains)]
            student = distill_step("distilled/train", members, start)["policy"]
            report_step("distilled/report", student, policies[-1])
            probes.append(probe_step("distilled/probes", student, stage=True))
            candidates.append(student)
            if recipe.refine_decisions:                        # the distilled network against its own probes
                lance_probes = lance_step("refined/lance/probes", student) if recipe.refine_lance else []
                overrides = {**recipe.round_train, "warm_start": student, "magnet_every": 0,
                             "league_mix": refine_league(out / "distilled" / "probes", recipe, lance_probes),
                             "total_decisions": recipe.refine_decisions, "seed": recipe.seed + recipe.rounds + 1}
                if recipe.refine_hidden:                       # widened from the distilled network (same play)
                    overrides["hidden"] = tuple(recipe.refine_hidden)
                refined = train_step("refined/train", overrides)["policy"]
                report_step("refined/report", refined, student)
                probes.append(probe_step("refined/probes", refined, stage=True))
                candidates.append(refined)
        gains = [p["max"]["stones"] for p in probes]
        kept = keep_round(gains)
        shutil.copyfile(candidates[kept], out / "policy.pt")
        long_gains = [next((row["stones"] for row, label in zip(p["probes"], _labels(p, plan), strict=True)
                            if label.startswith("long-")), None) for p in probes]
        keep = steps.finish("keep", {"round": kept, "policy": candidates[kept], "gains": gains,
                                     "distilled": kept == len(policies), "refined": kept == len(policies) + 1,
                                     "wins": [p["max_win"]["win"] for p in probes], "long_gains": long_gains,
                                     "digest": _policy_digest(out / "policy.pt")})
        say(f"kept {kept_text(keep)} (largest probe gains by round"
            + (", then the distilled policy" if recipe.distill_rounds else "")
            + (" and the refined one" if recipe.refine_decisions else "") + ": "
            + ", ".join(f"{g:+.3f}" for g in gains)
            + f"): {out / 'policy.pt'}")
        if steps.done("card") is None:
            card = report_card(str(out / "policy.pt"), hands=recipe.card_hands, games=recipe.card_games,
                               name="recipe", command=f"mus evaluate {out / 'policy.pt'}", log=lambda *a: None)
            (out / "card.json").write_text(json.dumps(card, indent=2), encoding="utf-8")
            (out / "card.md").write_text(card_markdown(card), encoding="utf-8")
            steps.finish("card", {"card": str(out / "card.md")})
        write_report(out, steps.data, keep)
    except KeyboardInterrupt as e:
        if isinstance(e, TrainingInterrupted) and e.checkpoint is not None:
            raise
        # between steps, in parallel probes, or before a step's first checkpoint: the finished steps are kept
        finished = len(steps.data["steps"])
        raise TrainingInterrupted(f"interrupted after {finished} finished step(s), kept in {steps.path} (a stopped "
                                  "training or probe resumes from its last checkpoint)", steps.path, finished) from None
    finally:
        steps.clock.stop()
        bar.close()
    return steps.data


def _lance_report(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The report of one-lance probes of one agent, each of its own lance: :func:`aggregate_probes`' keys without
    ``results``, ``learner_decides`` the lances comma-separated (for one lance, that function's report)."""
    rows = [aggregate_probes([r]) for r in results]
    gains = [r["max"]["stones"] for r in rows]
    report = {**rows[0], "learner_decides": ",".join(r["learner_decides"] for r in rows), "n": len(rows),
              "max": max((r["max"] for r in rows), key=lambda x: x["stones"]),
              "max_win": max((r["max_win"] for r in rows), key=lambda x: x["win"]),
              "spread": max(gains) - min(gains), "mean": sum(gains) / len(gains),
              "probes": [r["probes"][0] for r in rows]}
    report.pop("results")
    return report


def _labels(report: dict[str, Any], plan: list[tuple[str, str, int, int]]) -> list[str]:
    """The labels of a probe step's probes, in order: recorded since the stage probes (2026-12-05); before, the
    round plan's."""
    return report.get("labels") or [label for label, *_ in plan]


# ----------------------------------------------------------------------------------------------------
# the report
def kept_text(keep: dict[str, Any]) -> str:
    """Which candidate a recipe kept, in words: ``round 1``, ``the distilled policy`` or ``the refined policy``."""
    if keep.get("refined"):
        return "the refined policy"
    return "the distilled policy" if keep.get("distilled") else f"round {keep['round']}"


def _wall_text(step_seconds: dict[str, float]) -> str:
    """``; N minutes of wall time, evaluations included (trainings A, probes B)`` from ``step_seconds``."""
    if not step_seconds:
        return ""
    def part(kind: str) -> float:
        return sum(v for k, v in step_seconds.items() if k.endswith(kind)) / 60
    return (f"; {sum(step_seconds.values()) / 60:.1f} minutes of wall time, evaluations included (trainings "
            f"{part('/train'):.1f}, probes {part('/probes'):.1f})")


def write_report(out: Path, data: dict[str, Any], keep: dict[str, Any]) -> Path:
    """``OUT/recipe.md`` and ``OUT/recipe.png``: every round's budget, margins, probe gain and head to head, and
    the policy kept."""
    s = data["steps"]
    rounds = trained_rounds(s)
    gains = keep["gains"]
    opponents = [row["opponent"] for row in s[f"round{rounds[0]}/report"]["rows"]] + ["previous"]   # rivals too
    long_gains = keep.get("long_gains") or [None] * len(gains)
    long_column = any(g is not None for g in long_gains)
    resumed = "".join(f", resumed with `{c}`" for c in data.get("resumed_with", []))
    lines = ["# The recipe's rounds", "", f"`{data.get('command', 'mus league')}`{resumed}, on "
             f"{data.get('machine', '?')}; {data.get('seconds', 0.0) / 60:.1f} minutes in all (trainings and probes)"
             + _wall_text(data.get("step_seconds", {})) + ".",
             "",
             "| round | decisions | minutes | " + " | ".join(f"vs {o}" for o in opponents[:-1])
             + " | vs previous round | largest probe gain | its game win rate |"
             + (" long probe's gain |" if long_column else ""),
             "|---" * (len(opponents) + 5 + long_column) + "|"]
    rows = [(str(r), f"round{r}") for r in rounds]
    if "distilled/train" in s:                  # the network fitted to the last rounds' mixture, after them
        members = s["distilled/train"]["members"]
        runs = int(data["settings"].get("distill_replicas", 1))
        rows.append((f"distilled ({len(members)} policies" + (f" of {runs} runs)" if runs > 1 else ")"), "distilled"))
    if "refined/train" in s:                    # the distilled network trained against its own probes
        rows.append(("refined (the distilled, against its probes)", "refined"))
    for i, (label, step) in enumerate(rows):
        t, rep = s[f"{step}/train"], s[f"{step}/report"]
        by = {row["opponent"]: row for row in rep["rows"]}
        cells = [f"{by[o]['stones']:+.3f} [{by[o]['stones_lo']:+.3f}, {by[o]['stones_hi']:+.3f}]" if o in by else ""
                 for o in opponents]
        mark = " **kept**" if i == keep["round"] else ""
        lines.append(f"| {label}{mark} | {t['decisions']:,} | {t['minutes']:.1f} | " + " | ".join(cells)
                     + f" | {gains[i]:+.3f} | {keep['wins'][i]:.3f} |"
                     + ((f" {long_gains[i]:+.3f} |" if long_gains[i] is not None else " |") if long_column else ""))
    lines += ["", f"Kept: {kept_text(keep)} (the smallest largest gain of probes that never trained it), "
              f"`{keep['policy']}`, copied to `policy.pt`; its report card: `card.md`."]
    (out / "recipe.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    fig = Figure(figsize=(9, 3.6))
    ax1, ax2 = fig.subplots(1, 2)
    for o, color in (("rule", "C0"), ("equity", "C1")):
        y = [next(row["stones"] for row in s[f"round{r}/report"]["rows"] if row["opponent"] == o) for r in rounds]
        ax1.plot(rounds, y, marker="o", color=color, label=f"vs {o}")
        for i, (_, step) in enumerate(rows[len(rounds):]):
            d = next(row["stones"] for row in s[f"{step}/report"]["rows"] if row["opponent"] == o)
            ax1.plot([len(rounds) + i], [d], marker="*" if step == "distilled" else "P", ms=12, ls="none", color=color)
    ax1.set_xlabel("round")
    ax1.set_ylabel("stones/hand (held out)")
    ax1.legend(fontsize=8)
    ax2.plot(rounds, gains[: len(rounds)], marker="s", color="C3", label="largest")
    if long_column:
        ax2.plot(rounds, [long_gains[r] for r in rounds], marker="^", color="C2", label="the long probe")
        ax2.legend(fontsize=8)
    for i, (_, step) in enumerate(rows[len(rounds):]):
        ax2.plot([len(rounds) + i], [gains[len(rounds) + i]], marker="*" if step == "distilled" else "P", ms=12,
                 ls="none", color="C4" if step == "distilled" else "C5", label=step)
        ax2.legend(fontsize=8)
    ax2.axhline(0, color="black", lw=0.6)
    ax2.axvline(keep["round"], color="grey", ls="--", lw=0.8)
    ax2.set_xlabel("round (dashed: kept)")
    ax2.set_ylabel("probe gain, stones/hand")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.set_xticks(range(len(rows)), [str(r) for r in rounds] + [step for _, step in rows[len(rounds):]])
    fig.tight_layout()
    fig.savefig(out / "recipe.png", dpi=110)
    return out / "recipe.md"
