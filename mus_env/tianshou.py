"""Deprecated alias: the Tianshou env (``MusTianshouEnv``) moved to :mod:`mus_env.adapters.tianshou`.

``import mus_env.tianshou`` and ``from mus_env.tianshou import ...`` keep working in this release: they give the very
same module object as ``mus_env.adapters.tianshou`` (an attribute set or monkeypatched through one name is seen
through the other). New code imports ``mus_env.adapters.tianshou``; this alias will be removed in a later release.
"""

import sys

from mus_env.adapters import tianshou as _module

sys.modules[__name__] = _module
