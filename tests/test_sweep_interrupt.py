"""A sweep stopped with SIGTERM stops its workers too, and each worker saves its run;
``twolink train`` stopped with SIGTERM saves its run as Ctrl-C does.

Ctrl-C in a terminal reaches every process of the terminal's process group, the
sweep's workers included; a SIGTERM sent to the sweep's own process (a job
scheduler, ``kill PID``) reaches only the sweep, which must pass it on. The
test starts a real ``twolink sweep`` in a subprocess, waits until both workers
are training, sends SIGTERM to the sweep alone and checks from the operating
system's process table that no worker outlives it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc for child processes")


def _children(pid: int) -> list[int]:
    """Process ids whose parent is ``pid``, from /proc (an independent view of the workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces, so split after the last ')'
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited


def _wait(condition: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.2)
    return False


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _long_config(tmp_path: Path) -> dict[str, object]:
    """A balance PPO run far longer than a test waits for, into ``tmp_path/runs/sig``."""
    return {
        "env": {"task": "balance"},
        "algo": {
            "name": "ppo",
            "hyperparams": {"n_steps": 64, "batch_size": 64, "policy_kwargs": {"net_arch": [8]}},
        },
        "train": {
            "total_timesteps": 50_000_000,
            "n_envs": 2,
            "eval_freq": 0,
            "checkpoint_freq": 0,
            "output_dir": str(tmp_path / "runs"),
            "run_name": "sig",
            "progress_bar": False,
        },
        "evaluate": {"episodes": 2, "seed": 500},
    }


def test_sigterm_on_a_sweep_interrupts_and_saves_every_worker(tmp_path: Path) -> None:
    config = _long_config(tmp_path)
    path = tmp_path / "sig.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    sweep = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "twolink_gym.training.cli",
            "sweep",
            str(path),
            "--seeds",
            "0-2",
            "--workers",
            "2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        text=True,
        # SIGINT ignored, as in a background job of a non-interactive shell (`cmd &`,
        # nohup): the workers inherit that unless they restore the handler
        preexec_fn=_ignore_sigint,
    )
    runs = [tmp_path / "runs" / f"sig_s{s}" for s in (0, 1)]
    try:
        # both workers are training once their run folders hold the resolved config
        assert _wait(lambda: all((r / "config.yaml").exists() for r in runs), 120), "no training"
        time.sleep(2.0)  # past model construction, inside learn()
        workers = [p for p in _children(sweep.pid) if _alive(p)]
        assert len(workers) >= 2, workers
        sweep.send_signal(signal.SIGTERM)
        out, _ = sweep.communicate(timeout=120)
    finally:
        if sweep.poll() is None:
            sweep.kill()
            for pid in _children(sweep.pid):
                os.kill(pid, signal.SIGKILL)
    assert sweep.returncode != 0, out  # interrupted, not a completed sweep
    assert _wait(lambda: not any(_alive(p) for p in workers), 30), "workers outlived the sweep"
    for run in runs:  # each interrupted worker saved its model, as Ctrl-C does
        assert (run / "model.zip").exists(), out
    assert not (tmp_path / "runs" / "sig_s2").exists(), "a seed not started was trained"
    assert not (tmp_path / "runs" / "sig_sweep").exists(), "an interrupted sweep was summarised"


def test_sigterm_on_train_saves_the_run_as_ctrl_c_does(tmp_path: Path) -> None:
    config = _long_config(tmp_path)
    path = tmp_path / "sig.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    argv = [sys.executable, "-m", "twolink_gym.training.cli", "train", str(path)]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        text=True,
        preexec_fn=_ignore_sigint,  # a background job: SIGTERM is how it gets stopped
    )
    run = tmp_path / "runs" / "sig"
    try:
        assert _wait(lambda: (run / "config.yaml").exists(), 120), "no training"
        time.sleep(2.0)  # past model construction, inside learn()
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out
    assert (run / "model.zip").exists() and (run / "vecnormalize.pkl").exists(), out
    summary = json.loads((run / "train_summary.json").read_text())
    assert summary["interrupted"] and 0 < summary["timesteps"] < 50_000_000
    assert f"--resume {run}" in out
