"""Deprecated alias: the RLlib MultiAgentEnv (``MusMultiAgentEnv``) moved to :mod:`mus_env.adapters.rllib`.

``import mus_env.rllib`` and ``from mus_env.rllib import ...`` keep working in this release: they give the very
same module object as ``mus_env.adapters.rllib`` (an attribute set or monkeypatched through one name is seen
through the other). New code imports ``mus_env.adapters.rllib``; this alias will be removed in a later release.
"""

import sys

from mus_env.adapters import rllib as _module

sys.modules[__name__] = _module
