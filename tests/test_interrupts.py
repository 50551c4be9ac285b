"""Ctrl-C during a numba compile is held until the compile has finished (mus_env.interrupts)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from hang_guards import APPEAR_S, PROCESS_S

from mus_env.interrupts import HELD_NOTE, ctrl_c_held, terminate_as_ctrl_c

ROOT = Path(__file__).resolve().parents[1]


def test_a_ctrl_c_in_the_block_is_raised_after_it_and_said_once() -> None:
    notes: list[str] = []
    finished = []
    with pytest.raises(KeyboardInterrupt):
        with ctrl_c_held(write=notes.append):
            signal.raise_signal(signal.SIGINT)          # (to this thread: handled at once, whatever the load)
            signal.raise_signal(signal.SIGINT)
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
            signal.raise_signal(signal.SIGINT)
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


def test_sigterm_stops_like_ctrl_c_and_is_held_during_a_compile() -> None:
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finished = []
    with pytest.raises(KeyboardInterrupt):
        with terminate_as_ctrl_c():
            with ctrl_c_held(write=lambda line: None):      # a compile: held until its end
                signal.raise_signal(signal.SIGTERM)
                for _ in range(1000):
                    pass
                finished.append("compile")
            finished.append("after")                        # not reached: raised when the compile ended
    assert finished == ["compile"]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL         # the default is back
    with pytest.raises(KeyboardInterrupt):
        with terminate_as_ctrl_c():
            signal.raise_signal(signal.SIGTERM)
            for _ in range(1000):
                pass
    # a program's own SIGTERM handler is left alone
    seen: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    try:
        with terminate_as_ctrl_c():
            signal.raise_signal(signal.SIGTERM)
            for _ in range(1000):
                pass
        assert seen == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_kill_of_a_mus_train_started_in_the_background_keeps_its_checkpoint(tmp_path: Path) -> None:
    """A run started by a script in the background ignores Ctrl-C's SIGINT; ``kill PID`` (SIGTERM) stops it as
    Ctrl-C would: one line with the last checkpoint and how to resume, exit status 130."""
    out = tmp_path / "run"
    argv = ["--preset", "tiny", "--progress", "false", "--out", str(out), "--eval-every", "0",
            "--checkpoint-every", "2", "--total-decisions", str(256 * 100_000)]
    proc = subprocess.Popen([sys.executable, "-m", "experiments.cli", "train", *argv], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))   # as `cmd &` does
    try:
        deadline = time.monotonic() + APPEAR_S
        while not (out / "checkpoint.pt").exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert (out / "checkpoint.pt").exists(), "mus train wrote no checkpoint: " + str(proc.poll())
        proc.send_signal(signal.SIGINT)                     # ignored, as in a background job
        time.sleep(0.3)
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=PROCESS_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = [line for line in stderr.splitlines() if line != HELD_NOTE]
    assert proc.returncode == 130 and len(lines) == 1 and "Traceback" not in stderr, stderr
    assert f"the last checkpoint is {out / 'checkpoint.pt'}" in lines[0] and lines[0].endswith("--resume"), lines


def test_ctrl_c_in_the_baselines_first_compile_comes_after_it(tmp_path: Path) -> None:
    """A cold numba cache (its own folder): Ctrl-C as numba starts compiling the rule agent's first kernel (the
    feature reader; numba's compile event, so no clock decides when): it is compiled, then the interrupt comes."""
    script = textwrap.dedent("""
        import signal
        import numpy as np
        from numba.core import event
        from agents import make_agent
        from agents.compiled import read_rows
        from mus_env import MusGame
        game = MusGame(seed=0)
        o = game.observe(game.current_player)[None]
        m = game.legal_action_mask()[None]
        agent = make_agent("rule")

        class CtrlCAtCompile(event.Listener):
            def on_start(self, ev):
                if not pressed:
                    pressed.append(ev.data["dispatcher"].py_func.__name__)
                    signal.raise_signal(signal.SIGINT)
            def on_end(self, ev):
                pass

        pressed = []
        event.register("numba:compile", CtrlCAtCompile())
        try:
            agent.act_batch(o, m, np.random.default_rng(0))
        except KeyboardInterrupt:
            print("interrupted after the compile:", bool(read_rows.signatures), pressed)
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    r = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=PROCESS_S)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "interrupted after the compile: True ['read_rows']", (r.stdout, r.stderr)
    assert r.stderr.strip().splitlines()[-1] == HELD_NOTE, r.stderr
