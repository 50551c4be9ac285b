"""The libraries and the ``mus`` command, in wings by purpose.

* :mod:`experiments.train`: the PPO league trainer (``mus train``) and its benchmark.
* :mod:`experiments.evaluate`: duplicate matches, deal sets, ratings, tournaments, report cards, señas value.
* :mod:`experiments.population`: best-response probes (``mus exploit``) and shipping (``mus ship-agent``), above
  both train and evaluate.
* :mod:`experiments.integrations`: SB3, RLlib and Tianshou examples.
* :mod:`experiments.tools`: benchmarks, profiles, table and docs generators.
* :mod:`experiments.cli` (with :mod:`experiments.commands`, :mod:`experiments.play`, :mod:`experiments.replay`):
  the command line, on top. It imports the libraries; they never import it.

Modules that moved in 0.2 keep their old paths until 0.4, as aliases with a ``DeprecationWarning``
(:func:`mus_env.deprecation.register_moved`, the project's one mechanism): the 0.1 paths of this folder
(``experiments.tournament``, ``experiments.ppo_selfplay``, ...) in :data:`MOVED`, and the probes and the shipping
step that left ``experiments.evaluate`` and ``experiments.train`` for :mod:`experiments.population` during 0.2's
development in :data:`MOVED_0_2`; the CHANGELOG says when they go. The ``main`` functions of the 0.1 modules (the
command lines) are now the subcommand modules of :mod:`experiments.commands` (``mus tournament`` is
:mod:`experiments.commands.tournament`).
"""

from __future__ import annotations

from mus_env.deprecation import register_moved

#: A package a library or a subcommand may lack -> the extra of pyproject.toml that installs it (the messages of
#: ``mus`` and of :func:`experiments.integrations.require`).
EXTRAS = {"torch": "train", "tensorboard": "train", "ray": "rllib", "tianshou": "tianshou", "sb3_contrib": "dev",
          "stable_baselines3": "dev", "starlette": "web", "uvicorn": "web"}

#: Version 0.1 module path -> where the module lives now.
MOVED = {
    "experiments.ppo_selfplay": "experiments.train.ppo",
    "experiments.ship_agent": "experiments.population.ship_agent",
    "experiments.bench_train": "experiments.train.bench_train",
    "experiments.tournament": "experiments.evaluate.tournament",
    "experiments.deals": "experiments.evaluate.deals",
    "experiments.exploit": "experiments.population.exploit",
    "experiments.signals_value": "experiments.evaluate.signals_value",
    "experiments.sign_info": "experiments.evaluate.sign_info",
    "experiments.sb3_maskable_ppo": "experiments.integrations.sb3_maskable_ppo",
    "experiments.rllib_selfplay": "experiments.integrations.rllib_selfplay",
    "experiments.tianshou_example": "experiments.integrations.tianshou_example",
    "experiments.bench_sb3": "experiments.integrations.bench_sb3",
    "experiments.bench": "experiments.tools.bench",
    "experiments.profile_vector": "experiments.tools.profile_vector",
    "experiments.make_equity_tables": "experiments.tools.make_equity_tables",
    "experiments.make_sign_tables": "experiments.tools.make_sign_tables",
    "experiments.update_readme": "experiments.tools.update_docs",
}

#: Module paths that moved during 0.2's development -> where they live now (the wing above train and evaluate).
MOVED_0_2 = {
    "experiments.evaluate.exploit": "experiments.population.exploit",
    "experiments.evaluate.exploit_seeds": "experiments.population.exploit_seeds",
    "experiments.train.ship_agent": "experiments.population.ship_agent",
}

register_moved(MOVED, since="0.2", removed_in="0.4")
register_moved(MOVED_0_2, since="0.2", removed_in="0.4")
