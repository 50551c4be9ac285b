"""What the wheel may carry: the code, the shipped agent and its card, the hand tables, the reference ladder and the
web pages' assets, under a size limit; never a research record (a candidate's folder, another policy file, a probe
report). Research records live in docs/research/, outside the package.

``python .ci/wheel_rules.py WHEEL`` prints each problem and exits 1 if there is one (``.ci/check-wheel`` runs it);
``tests/test_product.py`` builds a wheel from the checkout and applies :func:`wheel_problems` to it.
"""

from __future__ import annotations

import fnmatch
import sys
import zipfile
from pathlib import Path

#: The wheel's size limit, in bytes of the file (compressed): 4 MB.
WHEEL_LIMIT_BYTES = 4_000_000

#: The packages whose code ships.
PACKAGES = ("mus_env/", "agents/", "experiments/")

#: Every file of the wheel that is not Python code matches one of these.
DATA_FILES = (
    "agents/data/ppo.pt",
    "agents/data/ppo.md",
    "agents/data/equity_tables_k*.npz",
    "agents/data/sign_tables_k*.npz",
    "experiments/evaluate/reference_ladder.json",
    "experiments/web/static/*.html",
    "experiments/web/static/*.js",
    "experiments/web/static/*.css",
    "experiments/web/static/*.svg",
    "experiments/web/static/i18n/*.json",
    "mus_env-*.dist-info/*",
)

#: A folder of research records: no file of the wheel lies under one.
RESEARCH_FOLDERS = ("candidates", "research", "records")


def wheel_problems(wheel: str | Path) -> list[str]:
    """Every way ``wheel`` breaks the rules above, one sentence each (empty: it passes)."""
    wheel = Path(wheel)
    problems = []
    size = wheel.stat().st_size
    if size > WHEEL_LIMIT_BYTES:
        problems.append(f"the wheel is {size:,} bytes, over the limit of {WHEEL_LIMIT_BYTES:,}")
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if not n.endswith("/")]
    for name in names:
        parts = name.split("/")[:-1]
        if any(p in RESEARCH_FOLDERS for p in parts):
            problems.append(f"{name}: a research record (a file under a {sorted(set(parts) & set(RESEARCH_FOLDERS))[0]}"
                            "/ folder); research records live in docs/research/, not in the package")
        elif name.endswith(".py"):
            if not name.startswith(PACKAGES):
                problems.append(f"{name}: code outside the packages {', '.join(PACKAGES)}")
        elif not any(fnmatch.fnmatchcase(name, pattern) for pattern in DATA_FILES):
            problems.append(f"{name}: a data file that is not one of the shipped ones (.ci/wheel_rules.py DATA_FILES)")
    if "agents/data/ppo.pt" not in names:
        problems.append("agents/data/ppo.pt, the shipped agent, is missing")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python .ci/wheel_rules.py WHEEL", file=sys.stderr)
        return 2
    problems = wheel_problems(argv[0])
    for p in problems:
        print(f"wheel: {p}", file=sys.stderr)
    if not problems:
        print(f"wheel contents OK: {Path(argv[0]).name}, {Path(argv[0]).stat().st_size:,} bytes")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
