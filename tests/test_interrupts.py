"""Ctrl-C during a numba compile is held until the compile has finished (mus_env.interrupts)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from mus_env.interrupts import HELD_NOTE, ctrl_c_held

ROOT = Path(__file__).resolve().parents[1]


def test_a_ctrl_c_in_the_block_is_raised_after_it_and_said_once() -> None:
    notes: list[str] = []
    finished = []
    with pytest.raises(KeyboardInterrupt):
        with ctrl_c_held(write=notes.append):
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):           # the handler runs between bytecodes: give it some
                pass
            finished.append(True)           # the block ran to its end
    assert finished == [True] and notes == [HELD_NOTE]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler    # Python's handler is back


def test_no_ctrl_c_no_interrupt_and_the_blocks_own_error_goes_on() -> None:
    with ctrl_c_held(write=pytest.fail):
        pass
    with pytest.raises(ValueError, match="its own"):
        with ctrl_c_held():
            raise ValueError("its own")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_programs_own_handler_and_other_threads_are_left_alone() -> None:
    seen: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    try:
        with ctrl_c_held():
            assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                pass
        assert seen == [signal.SIGINT]      # theirs took it, and nothing was raised
    finally:
        signal.signal(signal.SIGINT, previous)
    errors: list[BaseException] = []

    def in_a_thread() -> None:
        try:
            with ctrl_c_held():             # signal.signal would raise ValueError outside the main thread
                pass
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    t = threading.Thread(target=in_a_thread)
    t.start()
    t.join()
    assert errors == []


def test_ctrl_c_in_the_baselines_first_compile_comes_after_it(tmp_path: Path) -> None:
    """A cold numba cache (its own folder): Ctrl-C half a second into the rule agent's first decision, whose
    first kernel (the feature reader) compiles for seconds: it is compiled, then the interrupt comes."""
    script = textwrap.dedent("""
        import os, signal, threading
        import numpy as np
        from agents import make_agent
        from agents.compiled import read_rows
        from mus_env import MusGame
        game = MusGame(seed=0)
        o = game.observe(game.current_player)[None]
        m = game.legal_action_mask()[None]
        agent = make_agent("rule")
        threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            agent.act_batch(o, m, np.random.default_rng(0))
        except KeyboardInterrupt:
            print("interrupted after the compile:", bool(read_rows.signatures))
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    r = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "interrupted after the compile: True", (r.stdout, r.stderr)
    assert r.stderr.strip().splitlines()[-1] == HELD_NOTE, r.stderr
