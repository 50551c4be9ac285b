"""What ships, and nothing else: the wheel carries the code, the shipped agent and the tables (no research record,
under the size limit of ``.ci/wheel_rules.py``), ``agents/data/`` holds only the shipped files, and no file of the
checkout and no shipped policy's metadata names a folder of one machine (``/tmp/...``, ``/work/...``, ``/home/...``).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from scripts import load_script

ROOT = Path(__file__).resolve().parents[1]


def _wheel_rules():
    return load_script(".ci/wheel_rules.py")


def _checkout_files() -> list[str]:
    """The checkout's files that git tracks or would track (committed, or new and not ignored)."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout: the files of the project are not known")
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                         capture_output=True, check=True).stdout
    return [f for f in out.decode().split("\0") if f and (ROOT / f).is_file()]


# ----------------------------------------------------------------------------------------------------
# the wheel
def test_the_wheel_ships_the_product_and_no_research_record(tmp_path: Path) -> None:
    """A wheel built from this checkout (its files copied, so that no stale build folder leaks in) passes the
    rules: the shipped agent present, every data file a shipped one, no research record, under 4 MB."""
    pytest.importorskip("build")
    src = tmp_path / "src"
    for f in _checkout_files():
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, src / f)
    run = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path / "dist"), str(src)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    wheel = next((tmp_path / "dist").glob("*.whl"))
    rules = _wheel_rules()
    assert rules.wheel_problems(wheel) == []
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    assert {"agents/data/ppo.pt", "agents/data/ppo.md", "mus_env/game.py", "experiments/cli.py"} <= names


def test_the_wheel_rules_name_each_kind_of_problem(tmp_path: Path) -> None:
    """The rules themselves: a candidate's folder, another policy file and an oversized wheel are each named."""
    rules = _wheel_rules()

    def wheel(files: dict[str, bytes]) -> Path:
        path = tmp_path / f"w{len(list(tmp_path.iterdir()))}.whl"
        with zipfile.ZipFile(path, "w") as z:
            for name, data in files.items():
                z.writestr(name, data)
        return path

    good = {"agents/data/ppo.pt": b"x", "mus_env/game.py": b"", "mus_env-0.2.0.dist-info/RECORD": b""}
    assert rules.wheel_problems(wheel(good)) == []
    bad = rules.wheel_problems(wheel(good | {"agents/data/candidates/psro_e/policy.pt": b"x",
                                             "agents/data/candidates/psro_e/card.md": b"x",
                                             "agents/data/old.pt": b"x", "notes/x.py": b""}))
    assert len(bad) == 4 and sum("research record" in p for p in bad) == 2, bad
    assert any("agents/data/old.pt" in p and "not one of the shipped" in p for p in bad)
    assert any("outside the packages" in p for p in bad)
    assert any("ppo.pt, the shipped agent, is missing" in p
               for p in rules.wheel_problems(wheel({"mus_env/game.py": b""})))
    huge = tmp_path / "huge.whl"
    with zipfile.ZipFile(huge, "w", compression=zipfile.ZIP_STORED) as z:
        for name, data in good.items():
            z.writestr(name, data)
        z.writestr("agents/data/equity_tables_k8.npz", bytes(rules.WHEEL_LIMIT_BYTES + 1))
    assert any("over the limit" in p for p in rules.wheel_problems(huge))


def test_agents_data_holds_only_the_shipped_files() -> None:
    """agents/data/ is what ships: the shipped agent, its card, the tables (and the package marker). A research
    record put back there (a candidate's folder, another policy) fails here even before a wheel is built."""
    data = ROOT / "agents" / "data"
    found = {p.relative_to(data).as_posix() for p in data.rglob("*") if p.is_file()
             and "__pycache__" not in p.parts}
    shipped = {"__init__.py", "ppo.pt", "ppo.md", "equity_tables_k4.npz", "equity_tables_k8.npz",
               "sign_tables_k4.npz", "sign_tables_k8.npz"}
    assert found == shipped, f"not shipped files in agents/data: {sorted(found - shipped)}; missing: " \
                             f"{sorted(shipped - found)}"


# ----------------------------------------------------------------------------------------------------
# no folder of one machine
#: A folder of one machine: an absolute path under a home, a scratch or a temporary folder, with a name after it.
MACHINE_PATH = re.compile(r"(?<![\w.~/-])(?:/(?:tmp|work|home|root|Users|mnt|scratch|var/folders)/[\w.-]+"
                          r"|[A-Za-z]:\\(?:Users|tmp)\\[\w.-]+)")
#: Paths that are conventions of a tool, the same on every machine (Ray's session folder).
CONVENTIONS = ("/tmp/ray/",)


def machine_paths(text: str) -> list[str]:
    """The folders of one machine that ``text`` names."""
    return [m.group(0) for m in MACHINE_PATH.finditer(text)
            if not any(text.startswith(c, m.start()) for c in CONVENTIONS)]


def test_the_machine_path_pattern_finds_paths_and_only_paths() -> None:
    assert machine_paths("mus train --out /tmp/exp/candE") == ["/tmp/exp"]
    assert machine_paths('"policy": "/work/exp/benchmark/run/policy.pt"') == ["/work/exp"]
    assert machine_paths("see /home/ana/mus and C:\\Users\\ana\\runs") == ["/home/ana", "C:\\Users\\ana"]
    assert machine_paths("runs/exp/candE, http://127.0.0.1:8000/work/x, ~/tmp/x, /usr/bin/chromium") == []
    assert machine_paths("the folder /tmp/ray/ray_current_cluster of Ray, and '/tmp/'") == []


def test_no_file_of_the_checkout_names_a_folder_of_one_machine() -> None:
    """Docs, cards, JSON results, code and tests: commands quoted anywhere use relative run folders (``runs/X``)."""
    found = []
    for f in _checkout_files():
        if f == "tests/test_product.py":
            continue                                    # this file's examples of the pattern
        raw = (ROOT / f).read_bytes()
        if b"\0" in raw[:8192]:
            continue                                    # binary: policies are read below, tables and images hold none
        for i, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), 1):
            found += [f"{f}:{i}: {p}" for p in machine_paths(line)]
    assert not found, "folders of one machine in the checkout:\n" + "\n".join(found[:40])


def test_no_shipped_policy_names_a_folder_of_one_machine() -> None:
    """The metadata of every policy file in the checkout (the shipped agent's commands, league, lineage)."""
    pytest.importorskip("torch")
    from agents.policy import load_policy_file

    policies = [f for f in _checkout_files() if f.endswith(".pt")]
    assert "agents/data/ppo.pt" in policies
    for f in policies:
        meta = json.dumps(load_policy_file(ROOT / f).get("meta", {}))
        assert not machine_paths(meta), f"{f}: {sorted(set(machine_paths(meta)))[:10]}"
