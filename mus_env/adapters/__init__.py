"""Framework adapters: Mus for Stable-Baselines3, Ray RLlib and Tianshou (each imported on demand).

==========================  =================================================================================
module                      what
==========================  =================================================================================
:mod:`.sb3`                 ``MusVecEnv``: an SB3 ``VecEnv`` over one batched engine (``VectorMusEnv``); needs
                            ``stable-baselines3`` (and ``sb3-contrib`` for ``MaskablePPO``)
:mod:`.rllib`               ``MusMultiAgentEnv``: an RLlib ``MultiAgentEnv`` over ``MusGame``; needs ``ray[rllib]``
:mod:`.tianshou`            ``MusTianshouEnv``: Tianshou's ``PettingZooEnv`` over ``mus_v0`` that pays every agent
                            its whole reward; needs ``tianshou``
==========================  =================================================================================

Importing this package imports none of them (nor their frameworks): ``from mus_env.adapters.sb3 import
MusVecEnv``. They share the public helpers of :mod:`mus_env.interfaces` with ``mus_v0`` and ``wrappers``, and
use only the engines' public API.

The old paths ``mus_env.sb3``, ``mus_env.rllib`` and ``mus_env.tianshou`` still work in this release
(deprecated aliases: the same module objects).
"""

__all__: list[str] = []
