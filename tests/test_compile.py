"""The first compile of the batched engine's kernel: ``vector.kernel_is_cached``, ``vector.warm_up`` (the one line a
command prints before it compiles) and ``python -m mus_env.compile``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hang_guards import PROCESS_S

from mus_env import vector

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str, cache: Path | None = None, timeout: int = PROCESS_S) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env=env)


def test_an_empty_cache_is_not_cached_and_the_check_compiles_and_prints_nothing(tmp_path: Path) -> None:
    # a look at the index files, not a compile: no kernel function has a compiled signature afterwards (no
    # clock is read: the verdict must not depend on the machine's speed)
    r = _python("from mus_env import kernel, vector\n"
                "print(vector.kernel_is_cached(), vector.kernel_is_cached(True),\n"
                "      sum(len(f.signatures) for f in vars(kernel).values() if hasattr(f, 'signatures')))", tmp_path)
    assert r.returncode == 0, r.stderr
    cached, threaded, compiled = r.stdout.split()
    assert (cached, threaded) == ("False", "False") and r.stderr == ""
    assert compiled == "0"                                         # nothing compiled in the process...
    assert not any(tmp_path.rglob("*.nbc"))                        # ...nothing written


def test_warm_up_is_silent_when_cached_and_announces_a_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    vector.warm_up(1)                                              # compiled (or loaded) in this process
    assert vector.kernel_is_cached()
    lines: list[str] = []
    assert vector.warm_up(1, log=lines.append) == 0.0 and lines == []
    monkeypatch.setattr(vector, "kernel_is_cached", lambda threaded=False: False)
    seconds = vector.warm_up(1, log=lines.append)
    assert seconds > 0 and len(lines) == 2
    assert lines[0].startswith("compiling the batched engine once") and f"about {vector.COMPILE_SECONDS} s" in lines[0]
    assert lines[1].startswith("compiled in ")


def test_python_m_mus_env_compile() -> None:
    vector.warm_up(1)
    r = subprocess.run([sys.executable, "-m", "mus_env.compile", "--threads", "1"], capture_output=True, text=True,
                       timeout=PROCESS_S, cwd=ROOT)
    assert r.returncode == 0 and "already compiled" in r.stdout, r
    r = subprocess.run([sys.executable, "-m", "mus_env.compile", "--threads", "0"], capture_output=True, text=True,
                       timeout=PROCESS_S, cwd=ROOT)
    assert r.returncode == 2 and "--threads" in r.stderr


@pytest.mark.slow
def test_a_cold_compile_is_announced_then_cached_for_the_next_process(tmp_path: Path) -> None:
    """With an empty numba cache: one line before the compile, one after; the next process finds it cached."""
    r = subprocess.run([sys.executable, "-m", "mus_env.compile"], capture_output=True, text=True, timeout=PROCESS_S,
                       cwd=ROOT, env=dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path)))
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.splitlines()
    assert first.startswith("mus_env: compiling the batched engine once") and second.startswith("mus_env: compiled in")
    r = _python("from mus_env import vector; print(vector.kernel_is_cached(True))", tmp_path)
    assert r.stdout.split() == ["True"], r


def test_a_changed_kernel_source_drops_the_stale_cache(tmp_path: Path) -> None:
    """numba checks a cached function against its own file only; the kernel's import guard deletes the cached
    entry points when any source compiled into them changed (an edited handler never runs as its old compile)."""
    from mus_env import kernel

    def fake_cache() -> list[Path]:
        files = [tmp_path / "drivers.step_serial-10.py311.nbi", tmp_path / "drivers.step_serial-10.py311.1.nbc",
                 tmp_path / "handlers.deal_deck-20.py311.nbi"]
        for f in files:
            f.write_bytes(b"compiled")
        return files

    other = tmp_path / "other_module.f-1.py311.nbi"
    other.write_bytes(b"not the kernel's")
    files = fake_cache()
    assert kernel.drop_stale_cache([tmp_path], "digest-a") is True           # no stamp: origin unknown
    assert not any(f.exists() for f in files) and other.exists()
    assert (tmp_path / kernel.CACHE_STAMP).read_text(encoding="utf-8") == "digest-a"
    files = fake_cache()
    assert kernel.drop_stale_cache([tmp_path], "digest-a") is False          # compiled from these sources: kept
    assert all(f.exists() for f in files)
    assert kernel.drop_stale_cache([tmp_path], "digest-b") is True           # a source changed: dropped
    assert not any(f.exists() for f in files) and other.exists()
    # the guard ran on import: the real cache folder is stamped with the sources as they are now
    folder = Path(kernel.step_serial.stats.cache_path)
    assert (folder / kernel.CACHE_STAMP).read_text(encoding="utf-8") == kernel.sources_digest()
