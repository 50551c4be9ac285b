"""Deprecated alias: the Stable-Baselines3 VecEnv (``MusVecEnv``) moved to :mod:`mus_env.adapters.sb3`.

``import mus_env.sb3`` and ``from mus_env.sb3 import ...`` keep working in this release: they give the very
same module object as ``mus_env.adapters.sb3`` (an attribute set or monkeypatched through one name is seen
through the other). New code imports ``mus_env.adapters.sb3``; this alias will be removed in a later release.
"""

import sys

from mus_env.adapters import sb3 as _module

sys.modules[__name__] = _module
