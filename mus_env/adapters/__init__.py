"""Framework adapters: Mus for Stable-Baselines3, Ray RLlib, Tianshou and OpenSpiel (each imported on demand).

==========================  =================================================================================
module                      what
==========================  =================================================================================
:mod:`.sb3`                 ``MusVecEnv``: an SB3 ``VecEnv`` over one batched engine (``VectorMusEnv``); needs
                            ``stable-baselines3`` (and ``sb3-contrib`` for ``MaskablePPO``)
:mod:`.rllib`               ``MusMultiAgentEnv``: an RLlib ``MultiAgentEnv`` over ``MusGame``; needs ``ray[rllib]``
:mod:`.tianshou`            ``MusTianshouEnv``: Tianshou's ``PettingZooEnv`` over ``mus_v0`` that pays every agent
                            its whole reward; needs ``tianshou``
:mod:`.openspiel`           the OpenSpiel game ``"python_mus"`` (``pyspiel.load_game`` once imported): a
                            ``pyspiel.Game`` over ``MusGame`` whose deals and replacement cards are chance
                            nodes; needs ``open_spiel``
==========================  =================================================================================

Importing this package imports none of them (nor their frameworks): ``from mus_env.adapters.sb3 import
MusVecEnv``. They share the public helpers of :mod:`mus_env.interfaces` with ``mus_v0`` and ``wrappers``, and
use only the engines' public API.

The old paths ``mus_env.sb3``, ``mus_env.rllib`` and ``mus_env.tianshou`` still work in this release
(deprecated aliases: the same module objects); ``openspiel`` is new and has none.
"""

__all__: list[str] = []
