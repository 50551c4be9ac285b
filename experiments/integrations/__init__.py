"""Worked examples of other RL libraries on mus-env: sb3-contrib MaskablePPO on the batched engine (``mus sb3``),
Ray RLlib PPO self-play (``mus rllib``), Tianshou masked DQN (``mus tianshou``), and the SB3 throughput bench
(``mus bench-sb3``).

:func:`require` is how an example checks, before it does anything, that its library is installed: a missing one is
a ``ModuleNotFoundError`` naming the module and the extra that installs it (``pip install -e '.[dev]'``).
"""

from __future__ import annotations

import importlib

from experiments import EXTRAS

__all__ = ["require", "EXTRAS"]


def require(*modules: str) -> None:
    """Import each of ``modules`` (top-level names, e.g. ``"sb3_contrib"``) or raise ``ModuleNotFoundError``.

    Raises:
        ModuleNotFoundError: a module is missing; ``name`` is the module, the message names the extra to install.
    """
    for module in modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:
            missing = (e.name or module).split(".")[0]
            extra = EXTRAS.get(missing, EXTRAS.get(module, "dev"))
            raise ModuleNotFoundError(f"{module} is not installed (it needs {missing}); "
                                      f"pip install -e '.[{extra}]'", name=missing) from None
