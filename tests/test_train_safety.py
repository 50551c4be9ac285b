"""mus train and mus exploit under bad input, interruption and tampering (issue 22): nothing lost, nothing vague.

Every refusal is exit status 2, one line on stderr, no traceback, and the run's folder byte for byte as it was
(the whole tree hashed before and after, with ``--overwrite`` and ``--resume`` too). A run stopped by Ctrl-C says
where its last checkpoint is and the command that resumes, and resumes exactly; a run whose loss goes NaN stops
with a message and keeps its last good checkpoint; a hypothesis fuzz of the ``mus train`` options checks that any
value either runs a tiny budget or is refused before anything is written.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import pickle
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from hang_guards import APPEAR_S, PROCESS_S
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from agents import make_agent  # noqa: E402
from agents.policy import (  # noqa: E402
    PolicyFileError,
    PolicyNet,
    TorchPolicyAgent,
    content_digest,
    load_policy_file,
    sample_masked,
    save_policy,
)
from experiments.commands import exploit as exploit_command  # noqa: E402
from experiments.commands import train as train_command  # noqa: E402
from experiments.population import exploit  # noqa: E402
from experiments.train import ppo as ps  # noqa: E402
from experiments.train.session import REPLACED, TrainingInterrupted  # noqa: E402
from mus_env import MusConfig, VectorMusEnv  # noqa: E402
from mus_env.interrupts import HELD_NOTE  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
_TIMING = {"minutes", "decisions_per_s", "time_env", "time_policy", "time_opponents", "time_update"}

#: A tiny run's options (4 updates of 256 decisions, checkpoints every 2, no warm start): about a second.
TINY = ["--preset", "tiny", "--warm-start", "none", "--progress", "false"]


# ----------------------------------------------------------------------------------------------------
# helpers
def tree(root: Path) -> dict[str, str]:
    """Every entry under ``root`` (and whether it exists): files by their bytes' SHA-256, folders as such."""
    if not root.exists():
        return {}
    out = {".": "<dir>" if root.is_dir() else hashlib.sha256(root.read_bytes()).hexdigest()}
    for p in sorted(root.rglob("*")):
        out[str(p.relative_to(root))] = "<dir>" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def run_cli(main, argv: list[str]) -> tuple[int, str, str]:
    """Run a command's ``main`` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def refused(main, argv: list[str], folder: Path, *words: str) -> str:
    """``main(argv)`` is a refusal: exit status 2, one line on stderr naming ``words``, no traceback, nothing
    printed, and ``folder`` exactly as it was (absent if it was)."""
    before = tree(folder)
    code, out, err = run_cli(main, argv)
    assert code == 2, (code, err)
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert out == ""
    assert tree(folder) == before, f"{folder} changed"
    return lines[0]


def forge(path: Path, edit) -> None:
    """Edit a checkpoint or policy file and write it back with a valid digest (a tampered but well-formed file)."""
    blob = torch.load(path, weights_only=True)
    edit(blob)
    blob.pop("digest", None)
    blob["digest"] = content_digest(blob)
    torch.save(blob, path)


def rows(path: Path) -> list[dict[str, str]]:
    with open(path) as f:
        return [{k: v for k, v in r.items() if k not in _TIMING} for r in csv.DictReader(f)]


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A tiny run stopped after its checkpoint at update 2 of 4 (resumable), and bad policy files beside it."""
    root = tmp_path_factory.mktemp("safety")
    run = root / "run"
    ps.train(ps.make_args("tiny", out=str(run), warm_start="none", progress=False), log=lambda *a: None,
             max_updates=2)
    good = run / "policy.pt"
    data = good.read_bytes()
    (root / "truncated.pt").write_bytes(data[: len(data) // 2])

    class Payload:
        def __reduce__(self):
            return (os.system, ("echo pwned",))

    (root / "pickle.pt").write_bytes(pickle.dumps(Payload()))
    shutil.copyfile(good, root / "nan.pt")
    forge(root / "nan.pt", lambda b: b["model"]["policy_head.weight"].fill_(float("nan")))
    save_policy(root / "shape.pt", PolicyNet(obs_dim=10, hidden=(8,)))                     # not this game's shape
    save_policy(root / "other.pt", PolicyNet(hidden=(8,)), MusConfig().to_dict())           # another width
    signals = PolicyNet(obs_dim=477, num_actions=47, hidden=(32, 32))
    save_policy(root / "signals.pt", signals, MusConfig(signals="free").to_dict())          # trained with señas
    (root / "folder.pt").mkdir()
    (root / "plain.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)                              # an empty zip
    (root / "a-file").write_text("")
    return root


@pytest.fixture
def run(base, tmp_path) -> Path:
    """A copy of the base run to refuse things on."""
    dst = tmp_path / "run"
    shutil.copytree(base / "run", dst)
    return dst


BAD_FILES = {"missing": "does not exist", "truncated": "damaged or truncated", "pickle": "safe loader",
             "nan": "NaN or infinite", "shape": "observations of 10", "folder": "is a folder"}


# ----------------------------------------------------------------------------------------------------
# 1. --overwrite never deletes the old run before the new one is checked; agent specs are loaded up front
@pytest.mark.parametrize("bad", sorted(BAD_FILES))
@pytest.mark.parametrize("option", ["--league-mix", "--eval-opponents", "--warm-start"])
def test_overwrite_with_a_bad_policy_file_keeps_the_old_run(base, run, option: str, bad: str) -> None:
    path = str(base / f"{bad}.pt")
    value = f"self:1,{path}:1" if option == "--league-mix" else path
    words = [BAD_FILES[bad]] if (bad, option) != ("shape", "--warm-start") else ["this run's is"]
    refused(train_command.main, [*TINY, "--out", str(run), "--overwrite", option, value], run, *words)
    # and in a new folder: refused before the folder is made
    fresh = run.parent / "fresh"
    refused(train_command.main, [*TINY, "--out", str(fresh), option, value], fresh, *words)
    assert not fresh.exists()


def test_a_policy_trained_with_senas_is_refused_where_there_are_none(base, run) -> None:
    sig = str(base / "signals.pt")
    line = refused(train_command.main, [*TINY, "--out", str(run), "--overwrite", "--league-mix", f"self:1,{sig}:1"],
                   run, "trained with señas", "--signals")
    assert "league_mix" in line
    refused(train_command.main, [*TINY, "--out", str(run), "--overwrite", "--eval-opponents", sig], run,
            "trained with señas", "eval_opponents")
    refused(train_command.main, [*TINY, "--out", str(run), "--overwrite", "--warm-start", sig], run,
            "trained with señas", "--signals free")
    # the same weights as an agent in a game without señas: the message says so, and which flag to use
    agent = make_agent(sig)
    obs, mask = VectorMusEnv(4, seed=0).reset()
    with pytest.raises(ValueError, match=r"trained with señas .*--signals free"):
        agent.act_batch(obs, mask, np.random.default_rng(0))


def test_a_warm_start_of_another_width_names_the_flags(base, run) -> None:
    refused(train_command.main, [*TINY, "--out", str(run), "--overwrite", "--warm-start", str(base / "other.pt")],
            run, "--hidden")


# ----------------------------------------------------------------------------------------------------
# 2. a tampered checkpoint is refused before anything is written, --resume leaves the folder as it was
def _pool_shape(b):
    b["pool"][0]["policy_head.weight"] = torch.zeros(3, 3)


def _nan_weight(b):
    b["model"]["policy_head.bias"][0] = float("nan")


def _bad_kind(b):
    b["league"]["kind"][0] = 99


def _update(value):
    def edit(b):
        b["counters"]["update"] = value
    return edit


def _kind_shape(b):
    b["league"]["kind"] = b["league"]["kind"][:3]


def _buffer(b):
    b["buffer"]["pending"][0, 0] = 10**6


def _optimiser(b):
    state = b["optimizer"]["state"]
    state[next(iter(state))]["exp_avg"] = torch.zeros(2)


TAMPERED = {"pool_shape": (_pool_shape, "snapshot 0"), "nan_weight": (_nan_weight, "NaN or infinite"),
            "kind": (_bad_kind, "table kinds"), "kind_shape": (_kind_shape, "table kinds"),
            "update_-5": (_update(-5), "update is -5"), "update_1e12": (_update(10**12), "decisions are not"),
            "buffer": (_buffer, "pending"), "optimiser": (_optimiser, "optimiser")}


@pytest.mark.parametrize("case", sorted(TAMPERED))
def test_a_tampered_checkpoint_is_refused_and_the_run_is_untouched(run, case: str) -> None:
    edit, words = TAMPERED[case]
    forge(run / "checkpoint.pt", edit)
    refused(train_command.main, [*TINY, "--out", str(run), "--resume"], run, "checkpoint.pt", words)


def test_a_checkpoint_past_the_budget_says_which_budget_resumes_it(run) -> None:
    # a real run at update 2 resumed with a budget of 1 update: refused, with the flag value that resumes it
    refused(train_command.main, [*TINY, "--out", str(run), "--resume", "--total-decisions", "256"], run,
            "past this run's budget", "--total-decisions 512 or more")
    # a finished run resumed: nothing to do, nothing written
    before = tree(run)
    code, out, err = run_cli(train_command.main, [*TINY, "--out", str(run), "--resume", "--total-decisions", "512"])
    assert code == 0 and err == "" and "nothing to do" in out
    assert tree(run) == before


def test_resume_alone_takes_the_runs_own_settings_not_the_presets(tmp_path) -> None:
    """``mus train --resume --out RUN`` with no other flag continues a run made with non-default settings (they
    come from its args.json); a flag given that changes the game is still refused, naming it."""
    run = tmp_path / "run"
    first = ["--preset", "tiny", "--progress", "false", "--out", str(run), "--warm-start", "none",
             "--max-stake", "7", "--hidden", "16", "16", "--league-mix", "self:0.5,rule:0.5",
             "--total-decisions", str(32 * 8 * 2)]
    code, _, err = run_cli(train_command.main, first)
    assert code == 0, err
    code, out, err = run_cli(train_command.main, ["--resume", "--out", str(run), "--total-decisions", str(32 * 8 * 3),
                                                  "--progress", "false"])
    assert code == 0, err
    saved = json.loads((run / "args.json").read_text())
    assert (saved["max_stake"], saved["hidden"], saved["league_mix"], saved["warm_start"]) == (
        7, [16, 16], "self:0.5,rule:0.5", "none")
    assert json.loads((run / "run.json").read_text())["sessions"][-1]["from_update"] == 2
    # the thread count is where the run happens, not what it is: another one resumes (the tiny preset uses 1)
    code, _, err = run_cli(train_command.main, ["--resume", "--out", str(run), "--total-decisions", str(32 * 8 * 4),
                                                "--progress", "false", "--torch-threads", "2"])
    assert code == 0, err
    assert json.loads((run / "run.json").read_text())["sessions"][-1]["torch_threads"] == 2
    refused(train_command.main, ["--resume", "--out", str(run), "--max-stake", "9", "--total-decisions", "4096"],
            run, "max_stake=7 (now 9)")


def test_resume_alone_of_a_run_from_before_the_cap_plays_without_it(tmp_path) -> None:
    """An args.json written before ``max_stake`` existed: the resume takes what such runs played (no cap), where
    the preset's cap would be refused by the checkpoint."""
    from agents.policy import load_policy_file, save_file
    from experiments.train.checkpoint import to_torch

    run = tmp_path / "run"
    code, _, err = run_cli(train_command.main, [*TINY, "--out", str(run), "--max-stake", "0",
                                                "--total-decisions", str(32 * 8 * 2)])
    assert code == 0, err
    blob = load_policy_file(run / "checkpoint.pt")
    del blob["args"]["max_stake"]
    save_file(run / "checkpoint.pt", to_torch(blob))
    saved = json.loads((run / "args.json").read_text())
    del saved["max_stake"]
    (run / "args.json").write_text(json.dumps(saved))
    code, _, err = run_cli(train_command.main, ["--resume", "--out", str(run), "--total-decisions",
                                                str(32 * 8 * 3)])
    assert code == 0 and json.loads((run / "args.json").read_text())["max_stake"] == 0


def test_resume_and_exploit_resume_without_a_checkpoint_create_nothing(tmp_path) -> None:
    empty = tmp_path / "empty"
    refused(train_command.main, [*TINY, "--out", str(empty), "--resume"], empty, "no checkpoint to resume")
    assert not empty.exists()
    empty.mkdir()
    refused(train_command.main, [*TINY, "--out", str(empty), "--resume"], empty, "no checkpoint to resume")
    assert list(empty.iterdir()) == []
    probe = tmp_path / "probe"
    refused(exploit_command.main, ["rule", "--decisions", "256", "--minutes", "0", "--out", str(probe), "--resume"],
            probe, "no checkpoint to resume")
    assert not probe.exists()
    refused(train_command.main, [*TINY, "--out", str(empty), "--resume", "--overwrite"], empty, "--resume",
            "--overwrite")


# ----------------------------------------------------------------------------------------------------
# 3. settings: non-finite and out-of-range values refused before anything is made
@pytest.mark.parametrize(("flag", "value"), [
    ("--learning-rate", "inf"), ("--learning-rate", "nan"), ("--learning-rate", "-1"), ("--learning-rate", "5"),
    ("--ent-coef", "inf"), ("--ent-coef", "nan"), ("--vf-coef", "-inf"), ("--max-grad-norm", "inf"),
    ("--clip-coef", "nan"), ("--gamma", "nan"), ("--target-kl", "inf"), ("--max-minutes", "inf"),
    ("--stones-coef", "nan"), ("--num-tables", "1000000"), ("--hidden", "0"), ("--hidden", "100000"),
    ("--eval-opponents", ""), ("--bc-decisions", str(10**12)), ("--total-decisions", str(10**30)),
])
def test_non_finite_and_out_of_range_settings_are_refused(tmp_path, flag: str, value: str) -> None:
    out = tmp_path / "new"
    refused(train_command.main, [*TINY, "--out", str(out), f"{flag}={value}"], out,
            flag.strip("-").replace("-", "_"))
    assert not out.exists()


# ----------------------------------------------------------------------------------------------------
# 4. NaN weights: refused at load, naming the file; an agent never returns an illegal action silently
def test_nan_weights_are_refused_at_load_and_never_play(base) -> None:
    with pytest.raises(PolicyFileError, match=r"nan\.pt: holds NaN or infinite numbers \(model/policy_head"):
        make_agent(str(base / "nan.pt"))
    net = PolicyNet(hidden=(8,))
    with torch.no_grad():
        net.policy_head.weight.fill_(float("nan"))
    agent = TorchPolicyAgent(net, name="poisoned")
    obs, mask = VectorMusEnv(8, seed=0).reset()
    for greedy in (False, True):
        agent.greedy = greedy
        with pytest.raises(ValueError, match="'poisoned'.*NaN or infinite probabilities"):
            agent.act_batch(obs, mask, np.random.default_rng(0))
    with pytest.raises(ValueError, match="cannot sample"):
        sample_masked(np.array([[0.5, np.nan, 0.5]], dtype=np.float32), np.random.default_rng(0))
    with pytest.raises(ValueError, match="cannot sample"):
        sample_masked(np.zeros((2, 3), dtype=np.float32), np.random.default_rng(0))
    # a checkpoint whose weights went NaN (valid digest) is refused as an agent too, naming the file
    ck = base / "nan_checkpoint.pt"
    shutil.copyfile(base / "run" / "checkpoint.pt", ck)
    forge(ck, _nan_weight)
    with pytest.raises(PolicyFileError, match="nan_checkpoint.pt: holds NaN"):
        make_agent(str(ck))


def test_a_folder_named_like_a_policy_file_is_called_a_folder(base) -> None:
    with pytest.raises(ValueError, match="is a folder"):
        make_agent(str(base / "folder.pt"))
    with pytest.raises(PolicyFileError, match="a folder, not a policy file"):
        load_policy_file(base / "folder.pt")


# ----------------------------------------------------------------------------------------------------
# 5. divergence: a NaN loss stops the run with a message and keeps the last good checkpoint
def _poison_at(monkeypatch, update: int, how: str = "nan") -> None:
    """From ``update`` on, the rollout's rewards are NaN (the loss goes NaN), or Ctrl-C is pressed."""
    original = ps.rollout

    def rollout(self):
        if self.update >= update and how == "interrupt":
            raise KeyboardInterrupt
        timing = original(self)
        if self.update >= update:
            self.buffer.reward[: self.buffer.n] = np.nan
        return timing

    monkeypatch.setattr(ps, "rollout", rollout)


def test_a_diverged_run_stops_and_keeps_its_last_good_checkpoint(run, monkeypatch) -> None:
    kept = (run / "checkpoint.pt").read_bytes()
    _poison_at(monkeypatch, 3)                 # update 3 of 4 goes NaN; the checkpoint of update 2 must stay
    code, out, err = run_cli(train_command.main, [*TINY, "--out", str(run), "--resume"])
    assert code == 1 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "update 4: training diverged" in err and "loss became NaN" in err and "--learning-rate" in err, err
    assert f"the last checkpoint is {run / 'checkpoint.pt'} (update 2)" in err, err
    assert (run / "checkpoint.pt").read_bytes() == kept
    monkeypatch.undo()
    code, out, err = run_cli(train_command.main, [*TINY, "--out", str(run), "--resume"])
    assert code == 0 and len(rows(run / "metrics.csv")) == 4, err


def test_a_run_diverging_before_its_first_checkpoint_leaves_the_replaced_run(run, monkeypatch) -> None:
    before = tree(run)
    _poison_at(monkeypatch, 0)
    code, out, err = run_cli(train_command.main, [*TINY, "--out", str(run), "--overwrite"])
    assert code == 1 and len(err.splitlines()) == 1 and "diverged" in err, err
    assert "nothing of this run was kept" in err and "is back as it was" in err, err
    assert tree(run) == before


def test_an_overwrite_whose_first_checkpoint_cannot_be_written_leaves_the_replaced_run(run, monkeypatch) -> None:
    """The replaced run is deleted only once the new run's first checkpoint is on disk: when writing it fails (a
    full disk), the old run is back as it was (committing before the write would leave neither run)."""
    before = tree(run)
    writes: list[int] = []

    def disk_full(t) -> None:
        writes.append(t.update)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("experiments.train.session.save_checkpoint", disk_full)
    with pytest.raises(OSError, match="No space left"):
        ps.train(ps.make_args("tiny", out=str(run), warm_start="none", progress=False), log=lambda *a: None,
                 overwrite=True)
    assert writes, "the session never tried to write a checkpoint"
    assert tree(run) == before and not (run / REPLACED).exists()


# ----------------------------------------------------------------------------------------------------
# 6. Ctrl-C: one line, where the checkpoint is, how to resume; before a checkpoint the folder is as it was
def test_ctrl_c_before_the_first_checkpoint_restores_the_replaced_run(run, monkeypatch) -> None:
    (run / "notes.txt").write_text("mine")
    before = tree(run)
    _poison_at(monkeypatch, 0, "interrupt")
    argv = [*TINY, "--out", str(run), "--overwrite"]
    code, out, err = run_cli(train_command.main, argv)
    assert code == 130 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "interrupted at update 0 of 4; nothing of this run was kept" in err, err
    assert f"start it again with: mus train {shlex.join(argv)}" in err, err
    assert tree(run) == before and not (run / REPLACED).exists()


@pytest.mark.parametrize("at", [2, 3])
def test_ctrl_c_in_a_resumed_run_before_its_checkpoint_leaves_the_folder_as_it_was(run, monkeypatch, at) -> None:
    before = tree(run)
    _poison_at(monkeypatch, at, "interrupt")        # at 3: after an update and its evaluation (--eval-every 1)
    code, out, err = run_cli(train_command.main, [*TINY, "--out", str(run), "--eval-every", "1", "--resume"])
    assert code == 130 and len(err.splitlines()) == 1, err
    assert f"interrupted at update {at} of 4; the last checkpoint is {run / 'checkpoint.pt'} (update 2); resume " \
           "with: mus train" in err, err
    assert err.rstrip().endswith("--resume"), err
    assert tree(run) == before                       # args.json, run.json, best_policy.pt and tb/ as they were


def test_a_run_left_aside_by_a_killed_overwrite_is_never_lost(run) -> None:
    (run / REPLACED).mkdir()
    (run / REPLACED / "checkpoint.pt").write_bytes(b"the old run")
    for extra in (["--resume"], ["--overwrite"], []):
        refused(train_command.main, [*TINY, "--out", str(run), *extra], run, REPLACED, "move its files back")


def test_ctrl_c_in_a_new_run_removes_the_folder_it_made(tmp_path, monkeypatch) -> None:
    out = tmp_path / "a" / "b"
    _poison_at(monkeypatch, 0, "interrupt")
    code, _, err = run_cli(train_command.main, [*TINY, "--out", str(out)])
    assert code == 130 and "nothing of this run was kept" in err and not (tmp_path / "a").exists(), err


def test_ctrl_c_of_a_real_mus_train_process_resumes_exactly(tmp_path) -> None:
    """SIGINT to a real ``mus train`` after its first checkpoint: one line with the checkpoint and the command
    that resumes; resumed, the run equals an uninterrupted one (metrics and weights)."""
    out = tmp_path / "cut"
    argv = [*TINY, "--out", str(out), "--anneal-lr", "false", "--eval-every", "0", "--checkpoint-every", "2",
            "--total-decisions", str(256 * 100_000)]
    proc = subprocess.Popen([sys.executable, "-m", "experiments.cli", "train", *argv], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + APPEAR_S
        while not (out / "checkpoint.pt").exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert (out / "checkpoint.pt").exists(), "mus train wrote no checkpoint: " + str(proc.poll())
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=PROCESS_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    lines = [line for line in stderr.splitlines() if line != HELD_NOTE]      # (a compile in progress said it waits)
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    assert f"the last checkpoint is {out / 'checkpoint.pt'} (update " in lines[0], lines[0]
    kept = int(lines[0].split("(update ")[1].split(")")[0])
    assert kept >= 2 and kept % 2 == 0
    command = shlex.split(lines[0].split("resume with: ")[1])
    assert command[:2] == ["mus", "train"] and command[-1] == "--resume" and "--out" in command
    # resume with the printed command (a smaller budget: the same run, 2 updates past the checkpoint) and
    # compare with the same run uninterrupted
    total = str(256 * (kept + 2))
    resume = command[2:]
    resume[resume.index("--total-decisions") + 1] = total
    assert run_cli(train_command.main, resume)[0] == 0
    whole = argv[:]
    whole[whole.index("--out") + 1] = str(tmp_path / "whole")
    whole[whole.index("--total-decisions") + 1] = total
    assert run_cli(train_command.main, whole)[0] == 0
    assert rows(out / "metrics.csv") == rows(tmp_path / "whole" / "metrics.csv")
    assert rows(out / "eval.csv") == rows(tmp_path / "whole" / "eval.csv")
    a, b = load_policy_file(out / "policy.pt")["model"], load_policy_file(tmp_path / "whole" / "policy.pt")["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


# ----------------------------------------------------------------------------------------------------
# 7. mus exploit: bad agents and folders are one line; Ctrl-C says how to resume
def test_exploit_refusals_are_one_line_and_write_nothing(base, tmp_path, monkeypatch) -> None:
    out = tmp_path / "probe"
    budget = ["--decisions", "256", "--minutes", "0"]
    refused(exploit_command.main, [str(base / "plain.zip"), *budget, "--out", str(out)], out, "plain.zip",
            "not a MaskablePPO model")
    refused(exploit_command.main, [str(base / "folder.pt"), *budget, "--out", str(out)], out, "is a folder")
    refused(exploit_command.main, [str(base / "nan.pt"), *budget, "--out", str(out)], out, "NaN")
    refused(exploit_command.main, [str(base / "signals.pt"), *budget, "--out", str(out)], out,
            "trained with señas", "--signals free")
    refused(exploit_command.main, ["rule", *budget, "--out", str(base / "a-file")], base / "a-file",
            "cannot write", "is a file")
    refused(exploit_command.main, ["rule", *budget, "--out", str(base / "a-file" / "x")], base / "a-file",
            "cannot write")
    assert not out.exists()
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)          # sb3-contrib not installed: still one line
    refused(exploit_command.main, [str(base / "plain.zip"), *budget, "--out", str(out)], out, "sb3-contrib")


def test_exploit_probes_a_senas_policy_in_its_own_game(base, tmp_path) -> None:
    r = exploit.probe(str(base / "signals.pt"), tmp_path / "sig", minutes=0, decisions=256, warm_start="none",
                      preset="tiny", eval_hands=10, eval_games=2, log=lambda *a: None, progress=False,
                      signals="free")
    assert r["frozen"]["unchanged"] and r["trained"]["updates"] == 1
    assert load_policy_file(tmp_path / "sig" / "policy.pt")["arch"]["obs_dim"] == 477


def test_unwritable_output_folders_are_refused(tmp_path) -> None:
    if os.access("/sys/kernel", os.F_OK) and not _can_write("/sys/kernel"):
        target = Path("/sys/kernel/mus-run")
        refused(train_command.main, [*TINY, "--out", str(target)], target, "cannot write")
        refused(exploit_command.main, ["rule", "--decisions", "9", "--minutes", "0", "--out", str(target)], target,
                "cannot write")
    if os.geteuid() != 0:                                     # root writes anywhere: a read-only folder needs a user
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        try:
            refused(train_command.main, [*TINY, "--out", str(ro / "run")], ro, "cannot write")
            refused(exploit_command.main, ["rule", "--decisions", "9", "--minutes", "0", "--out", str(ro)], ro,
                    "cannot write")
        finally:
            ro.chmod(0o755)


def _can_write(folder: str) -> bool:
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def test_ctrl_c_in_mus_exploit_is_one_line_with_the_resume_command(tmp_path, monkeypatch) -> None:
    out = tmp_path / "probe"
    _poison_at(monkeypatch, 0, "interrupt")
    argv = ["rule", "--decisions", "256", "--minutes", "0", "--out", str(out), "--warm-start", "none",
            "--progress", "false", "--overwrite"]
    code, _, err = run_cli(exploit_command.main, argv)
    assert code == 130 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "nothing of this run was kept; start it again with: mus exploit rule" in err and not out.exists(), err
    # after a checkpoint (the library, tiny preset): the interrupt names it, and --resume finishes the probe
    monkeypatch.undo()
    _poison_at(monkeypatch, 2, "interrupt")
    kw = dict(minutes=0, decisions=32 * 8 * 4, warm_start="none", preset="tiny", eval_hands=20, eval_games=2,
              log=lambda *a: None, progress=False)
    with pytest.raises(TrainingInterrupted) as e:
        exploit.probe("rule", out, **kw)
    assert e.value.checkpoint == out / "checkpoint.pt" and e.value.update == 2
    assert "(update 2)" in str(e.value)
    monkeypatch.undo()
    r = exploit.probe("rule", out, resume=True, **kw)
    assert r["trained"]["updates"] == 4 and (out / "exploit.json").is_file()


# ----------------------------------------------------------------------------------------------------
# 8. the fuzz: any value of the mus train options runs a tiny budget or is refused before anything is written
_FUZZ_BASE = ["--preset", "tiny", "--num-tables", "8", "--rollout-steps", "4", "--total-decisions", "32",
              "--minibatch-size", "16", "--hidden", "8", "--warm-start", "none", "--eval-every", "0",
              "--eval-hands", "2", "--eval-games", "1", "--league-mix", "self:1,rule:1", "--eval-opponents", "rule",
              "--progress", "false", "--bc-decisions", "64", "--target", "10"]
_BAD_INT = st.sampled_from(["-1", "0", "nan", "inf", "1.5", "x", "", str(10**16), str(10**30), "-99999"])
_INT = st.one_of(st.integers(-2, 12).map(str), _BAD_INT)
_FLOAT = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr),
                   st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1e-3", "0.5", "1", "x", "1e308"]))
_BOOL = st.sampled_from(["true", "false", "maybe", "1", ""])
_FIELDS = {
    "--seed": _INT, "--total-decisions": _INT, "--num-tables": _INT, "--rollout-steps": _INT,
    "--update-epochs": _INT, "--minibatch-size": _INT, "--snapshot-every": _INT, "--pool-size": _INT,
    "--checkpoint-every": _INT, "--eval-hands": _INT, "--eval-games": _INT, "--eval-every": _INT,
    "--value-warmup": _INT, "--max-mus-rounds": _INT, "--exploiter-reset-every": _INT, "--target": _INT,
    "--kings": st.sampled_from(["4", "8", "6", "x"]), "--bc-decisions": _INT, "--bc-epochs": _INT,
    "--learning-rate": _FLOAT, "--gamma": _FLOAT, "--gae-lambda": _FLOAT, "--clip-coef": _FLOAT,
    "--ent-coef": _FLOAT, "--vf-coef": _FLOAT, "--max-grad-norm": _FLOAT, "--target-kl": _FLOAT,
    "--stones-coef": _FLOAT, "--game-coef": _FLOAT, "--signal-intercept-p": _FLOAT,
    "--max-minutes": st.sampled_from(["0", "-1", "nan", "inf", "0.5"]),
    "--anneal-lr": _BOOL, "--central-critic": _BOOL, "--eval-greedy": _BOOL,
    "--signals": st.sampled_from(["off", "truthful", "free", "loud"]),
    "--hidden": st.sampled_from(["8", "0", "-1", "8 4", "100000", "x", ""]),
    "--league-mix": st.sampled_from(["self:1", "rule:1", "self:1,exploiter:1", "snapshot:1", "self:-1", "self:nan",
                                     "grandma:1", "", "BAD:1", "MISSING:1", "NAN:1"]),
    "--eval-opponents": st.sampled_from(["rule", "random,ordago", "", "grandma", "self", "BAD", "NAN"]),
    "--warm-start": st.sampled_from(["none", "equity", "bridge", "BAD", "MISSING", "NAN"]),
    "--learner-decides": st.sampled_from(["all", "bidding", "grande", "everything"]),
}


@pytest.fixture(scope="module")
def fuzz_base(base, tmp_path_factory) -> Path:
    """A finished run of the fuzz's base options (what --overwrite and --resume meet)."""
    out = tmp_path_factory.mktemp("fuzz") / "run"
    code, _, err = run_cli(train_command.main, [*_FUZZ_BASE, "--out", str(out)])
    assert code == 0, err
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes=st.lists(st.sampled_from(sorted(_FIELDS)), min_size=1, max_size=3, unique=True).flatmap(
           lambda names: st.tuples(*(st.tuples(st.just(n), _FIELDS[n]) for n in names))),
       mode=st.sampled_from(["new", "overwrite", "resume"]))
def test_fuzz_train_options_run_a_tiny_budget_or_write_nothing(base, fuzz_base, changes, mode) -> None:
    files = {"BAD": base / "truncated.pt", "MISSING": base / "missing.pt", "NAN": base / "nan.pt"}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        if mode != "new":
            shutil.copytree(fuzz_base, out)
        argv = [*_FUZZ_BASE, "--out", str(out), *({"new": [], "overwrite": ["--overwrite"],
                                                   "resume": ["--resume"]}[mode])]
        for flag, value in changes:
            for name, path in files.items():
                value = value.replace(name, str(path))
            argv += [flag, *value.split()] if flag == "--hidden" else [f"{flag}={value}"]
        before = tree(out)
        code, _, err = run_cli(train_command.main, argv)
        event(f"{mode}: exit status {code}")
        assert "Traceback" not in err, err
        if code == 0:                      # it ran (or, resumed at its budget, had nothing to do)
            assert (out / "checkpoint.pt").is_file() and not (out / REPLACED).exists()
            return
        assert code in (1, 2), (code, err)
        assert len(err.splitlines()) == 1, err
        if code == 1:
            assert "diverged" in err, err
        # refused, or diverged before its first checkpoint: the folder is as it was (absent for a new run)
        assert tree(out) == before, (argv, err)
