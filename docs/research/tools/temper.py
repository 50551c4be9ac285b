"""A policy file played at another temperature: its action logits divided by ``T``, written into the weights.

A trained policy samples its actions from ``softmax(logits)``. Playing it at temperature ``T`` samples from
``softmax(logits / T)``: below 1 it is sharper (closer to its most likely action), above 1 softer. Dividing the
policy head's last layer (weights and bias) by ``T`` makes exactly those logits, so the tempered policy is an
ordinary policy file that every consumer plays unchanged: ``mus evaluate``, ``mus tournament``, ``mus exploit``
(whose probe from the agent's own weights then starts from the tempered weights), ``mus serve``. The value head is
left as it is, and the file's ``meta`` records the temperature (``temperature``, multiplied through when a tempered
file is tempered again) and the file it came from (``tempered_from``).

Run ``python docs/research/tools/temper.py POLICY TEMPERATURE OUT`` from a checkout (with the ``train`` extra). A
research script, not part of the package.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

__all__ = ["tempered_blob", "write_tempered", "main"]

USAGE = "python docs/research/tools/temper.py POLICY TEMPERATURE OUT"
#: The policy head's parameters, whose outputs are the action logits (agents.policy.PolicyNet.policy_head).
HEAD_KEYS = ("policy_head.weight", "policy_head.bias")


def tempered_blob(blob: dict[str, Any], temperature: float, source: str = "<policy>") -> dict[str, Any]:
    """A copy of a policy file's dict whose logits are ``blob``'s divided by ``temperature`` (``blob`` is left as it
    was).

    Raises:
        ValueError: ``temperature`` is not a finite number above 0, or ``blob`` has no policy head.
    """
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) \
            or not math.isfinite(temperature) or temperature <= 0:
        raise ValueError(f"the temperature must be a finite number above 0 (1 plays the policy as it is), got "
                         f"{temperature!r}")
    model = blob.get("model")
    if not isinstance(model, dict) or any(k not in model for k in HEAD_KEYS):
        raise ValueError(f"{source}: no policy head ({', '.join(HEAD_KEYS)}) in its weights: not a policy file")
    new_model = dict(model)
    for key in HEAD_KEYS:
        new_model[key] = model[key] / temperature
    meta = dict(blob.get("meta") or {})
    meta["temperature"] = float(meta.get("temperature", 1.0)) * float(temperature)
    meta.setdefault("tempered_from", str(source))
    return {**{k: v for k, v in blob.items() if k != "digest"}, "model": new_model, "meta": meta}


def write_tempered(src: str | Path, dst: str | Path, temperature: float) -> Path:
    """Read the policy file ``src``, write it played at ``temperature`` to ``dst``; returns ``dst``.

    Raises:
        agents.policy.PolicyFileError: ``src`` is not a policy file this mus-env plays (a ``ValueError``).
        ValueError: a bad temperature, or ``dst`` is ``src``.
    """
    from agents.policy import build_net, load_policy_file, save_file

    if Path(dst).resolve() == Path(src).resolve():
        raise ValueError(f"OUT {dst} is the policy file itself: write the tempered one elsewhere")
    blob = tempered_blob(load_policy_file(src), temperature, str(src))
    build_net(blob, dst)                       # it still loads as a policy before it is written
    return save_file(dst, blob)


def main(argv: list[str] | None = None) -> int:
    """``python docs/research/tools/temper.py POLICY TEMPERATURE OUT``: write POLICY played at TEMPERATURE to OUT."""
    args = sys.argv[1:] if argv is None else list(argv)
    asked = any(a in ("-h", "--help") for a in args)
    if asked or len(args) != 3:
        print(f"usage: {USAGE}\n{__doc__.splitlines()[0]}", file=sys.stdout if asked else sys.stderr)
        return 0 if asked else 2
    policy, temperature, out = args
    try:
        value = float(temperature)
    except ValueError:
        print(f"error: TEMPERATURE must be a number, got {temperature!r}", file=sys.stderr)
        return 2
    try:
        written = write_tempered(policy, out, value)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {written}: {policy} at temperature {value:g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
