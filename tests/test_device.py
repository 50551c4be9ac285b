"""``--device auto|cpu|cuda`` of mus train and mus exploit: the choice, its refusals, and that on the CPU it
changes nothing (the networks' tensors go through ``.to(device)``, a no-op there)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from test_train_safety import TINY, run_cli, tree  # noqa: E402

from agents.policy import load_policy_file, resolve_device, save_file  # noqa: E402
from experiments.commands import train as train_command  # noqa: E402
from experiments.train.ppo import make_args, train  # noqa: E402

NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU: cuda would be accepted")


def _weights_digest(net: torch.nn.Module) -> str:
    h = hashlib.sha256()
    for name, v in net.state_dict().items():
        h.update(name.encode() + v.detach().cpu().numpy().tobytes())
    return h.hexdigest()


def test_resolve_device() -> None:
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(" CPU ") == torch.device("cpu")
    assert resolve_device("auto") == torch.device("cuda" if torch.cuda.is_available() else "cpu")
    for bad in ("gpu", "cuda:x", "", "tpu"):
        with pytest.raises(ValueError, match="auto, cpu, cuda or cuda:N"):
            resolve_device(bad)


@NO_CUDA
def test_cuda_without_a_gpu_says_why_and_what_to_give() -> None:
    for name in ("cuda", "cuda:0", "cuda:3"):
        with pytest.raises(ValueError, match="CUDA is not available .*--device cpu"):
            resolve_device(name)


@NO_CUDA
def test_mus_train_device_cuda_without_a_gpu_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, _, err = run_cli(train_command.main, [*TINY, "--device", "cuda", "--out", str(out)])
    assert code == 2 and len(err.splitlines()) == 1 and "CUDA is not available" in err, err
    assert "--device cpu" in err and not out.exists()


def test_a_bad_device_name_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, _, err = run_cli(train_command.main, [*TINY, "--device", "gpu", "--out", str(out)])
    assert code == 2 and "Args.device must be auto, cpu, cuda or cuda:N, got 'gpu'" in err, err
    assert not out.exists() and tree(tmp_path) == {".": "<dir>"}


@pytest.mark.skipif(torch.cuda.is_available(), reason="auto is a GPU here: its results differ from the CPU's")
def test_auto_on_a_cpu_machine_is_the_cpu_run_weight_for_weight(tmp_path: Path) -> None:
    runs = {}
    for device in ("cpu", "auto"):
        t = train(make_args("tiny", out=str(tmp_path / device), progress=False, device=device),
                  log=lambda *a: None)
        assert t.device == torch.device("cpu") and t.net.device == torch.device("cpu")
        evals = {k: v for k, v in t.evals[-1].items() if k != "minutes"}       # (the clock differs)
        runs[device] = (_weights_digest(t.net), [r["policy_loss"] for r in t.history], evals)
    assert runs["cpu"] == runs["auto"]


def test_a_run_resumes_on_another_device_setting(tmp_path: Path) -> None:
    """The device is where a run trains, not what it is: a checkpoint made with --device cpu resumes with auto
    (a GPU machine picking up a CPU run), and the finished run equals one that never stopped."""
    out = tmp_path / "run"
    train(make_args("tiny", out=str(out), progress=False, device="cpu"), log=lambda *a: None, max_updates=2)
    resumed = train(make_args("tiny", out=str(out), progress=False, device="auto"), resume=True,
                    log=lambda *a: None)
    straight = train(make_args("tiny", out=str(tmp_path / "straight"), progress=False, device="auto"),
                     log=lambda *a: None)
    if not torch.cuda.is_available():
        assert _weights_digest(resumed.net) == _weights_digest(straight.net)
    assert resumed.update == straight.update


def test_files_are_written_with_cpu_tensors_whatever_the_structure(tmp_path: Path) -> None:
    """save_file puts every tensor on the CPU (a GPU run's checkpoint loads on a machine without one) and keeps
    the blob's structure: dicts, lists and tuples, and the non-tensor values."""
    blob = {"format": "mus-env-policy", "version": 1, "arch": {"obs_dim": 3, "num_actions": 2, "hidden": [4],
                                                               "value_dim": 0},
            "model": {"w": torch.ones(2, 3)}, "pool": [{"w": torch.zeros(2)}], "pair": (torch.ones(1), 5),
            "config": {}, "meta": {"note": "x"}}
    path = save_file(tmp_path / "p.pt", blob)
    back = torch.load(path, weights_only=True)
    assert back["model"]["w"].device.type == "cpu" and torch.equal(back["model"]["w"], torch.ones(2, 3))
    assert isinstance(back["pool"], list) and torch.equal(back["pool"][0]["w"], torch.zeros(2))
    assert isinstance(back["pair"], tuple) and back["pair"][1] == 5 and back["meta"] == {"note": "x"}
    assert load_policy_file(path)["digest"] == back["digest"]
