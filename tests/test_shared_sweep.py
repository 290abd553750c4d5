"""``twolink sweep --storage``: seed sweeps handed out by an Optuna study (tiny PPO runs on balance).

What is checked against what:

* the trials in the storage, read through Optuna's API on a fresh connection
  (what another machine sees), against the seeds asked for: each seed
  completed exactly once, by the worker processes of one or of two sweep
  processes with their own run folders (two "machines" on one SQLite file or
  on a PostgreSQL server);
* each stored seed record against that seed's run folder (its saved config
  and its ``eval/evaluations.npz``), and the summary against the local sweep
  (``twolink sweep --no-train``) over the same run folders: a second path
  through the evaluation, without the storage;
* an interrupted seed (a failed trial, an unfinished run) against the run
  that a restarted sweep resumes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pytest
import torch
from optuna.trial import TrialState
from test_tune import postgres_url, tiny_data  # noqa: F401  (a fixture)
from twolink_gym.training.cli import main
from twolink_gym.training.config import config_from_dict, load_config
from twolink_gym.training.shared_sweep import shared_sweep
from twolink_gym.training.sweep import seed_config, sweep
from twolink_gym.training.train import train

optuna.logging.set_verbosity(optuna.logging.WARNING)


@pytest.fixture(autouse=True)
def _restore_torch_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def _config(tmp_path: Path, machine: str = "a") -> Any:
    data = tiny_data(tmp_path, output_dir=str(tmp_path / machine / "runs"))
    return config_from_dict(data, f"test ({machine})")


def _by_seed(url: str, name: str) -> dict[int, list[optuna.trial.FrozenTrial]]:
    trials = optuna.load_study(study_name=name, storage=url).get_trials()
    out: dict[int, list[optuna.trial.FrozenTrial]] = {}
    for t in trials:
        if t.state == TrialState.COMPLETE:
            out.setdefault(int(t.user_attrs["seed"]), []).append(t)
    return out


def _check_record_against_its_run(record: dict[str, Any], seed: int, value: float) -> None:
    run = Path(record["run"])
    assert load_config(run / "config.yaml").train.seed == seed
    with np.load(run / "eval" / "evaluations.npz") as data:
        assert record["curve"]["timesteps"] == [float(t) for t in data["timesteps"]]
        np.testing.assert_allclose(record["curve"]["success"], data["successes"].mean(axis=1))
    assert record["seed"] == seed and record["success_rate"] == value
    assert record["timesteps"] >= 192


def test_two_workers_share_the_seeds_and_the_summary_matches_a_local_sweep(
    tmp_path: Path,
) -> None:
    cfg = _config(tmp_path)
    url = f"sqlite:///{tmp_path / 'sweep.db'}"
    result = shared_sweep(cfg, [0, 1, 2, 3], storage=url, workers=2)
    assert result.pending == () and result.summary is not None
    assert result.study == "balance_ppo_sweep"
    done = _by_seed(url, result.study)
    assert sorted(done) == [0, 1, 2, 3] and all(len(v) == 1 for v in done.values())
    assert len({t.user_attrs["worker"] for v in done.values() for t in v}) == 2  # both worked
    for seed, (t,) in done.items():
        _check_record_against_its_run(t.user_attrs["record"], seed, t.value)
    written = json.loads((result.out_dir / "sweep.json").read_text())
    assert [s["seed"] for s in written["seeds"]] == [0, 1, 2, 3]
    # the same runs through the local sweep (no storage): the same figures
    local = sweep(cfg, [0, 1, 2, 3], train=False)
    assert local.summary["success_rate"] == written["success_rate"]
    assert [s["success_rate"] for s in local.summary["seeds"]] == [
        s["success_rate"] for s in written["seeds"]
    ]
    assert (result.out_dir / "learning_curves.png").stat().st_size > 0


def _machine(tmp_path: Path, machine: str, url: str) -> subprocess.Popen[str]:
    """A ``twolink sweep --storage`` process with its own run folders (another machine)."""
    config = tmp_path / f"{machine}.yaml"
    import yaml

    config.write_text(yaml.safe_dump(tiny_data(tmp_path, output_dir=str(tmp_path / machine))))
    code = (
        "import sys; from twolink_gym.training.cli import main; "
        f"sys.exit(main(['sweep', {str(config)!r}, '--seeds', '0-3', '--storage', {url!r}]))"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def _two_machines(tmp_path: Path, url: str) -> None:
    procs = [_machine(tmp_path, m, url) for m in ("a", "b")]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    for out in outputs:
        print(out)  # whole, in the captured output of a failure (the assertion's is cut)
    assert [p.returncode for p in procs] == [0, 0], outputs
    done = _by_seed(url, "balance_ppo_sweep")
    assert sorted(done) == [0, 1, 2, 3] and all(len(v) == 1 for v in done.values())
    # each seed was trained on one machine only: the run folders do not overlap
    runs = {m: {p.name for p in (tmp_path / m).glob("balance_ppo_s[0-9]*")} for m in ("a", "b")}
    assert runs["a"].isdisjoint(runs["b"])
    assert runs["a"] | runs["b"] == {f"balance_ppo_s{s}" for s in range(4)}
    for seed, (t,) in done.items():
        _check_record_against_its_run(t.user_attrs["record"], seed, t.value)
    # whichever machine finished last wrote the summary of all four seeds
    summaries = list(tmp_path.glob("*/balance_ppo_sweep/sweep.json"))
    assert summaries
    assert [s["seed"] for s in json.loads(summaries[0].read_text())["seeds"]] == [0, 1, 2, 3]


def test_two_machines_share_one_sqlite_sweep(tmp_path: Path) -> None:
    _two_machines(tmp_path, f"sqlite:///{tmp_path / 'sweep.db'}")


def test_two_machines_share_a_postgresql_sweep(
    tmp_path: Path,
    postgres_url: str,  # noqa: F811
) -> None:
    _two_machines(tmp_path, postgres_url)


def test_an_interrupted_seed_is_enqueued_again_and_its_run_resumed(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    url = f"sqlite:///{tmp_path / 'sweep.db'}"
    first = shared_sweep(cfg, [0], storage=url)
    assert first.pending == ()
    # seed 1: a trial that failed as an interrupted one does, and a run saved half-way
    study = optuna.load_study(study_name=first.study, storage=url)
    study.enqueue_trial({}, user_attrs={"seed": 1})
    trial = study.ask()
    trial.set_user_attr("interrupted", True)
    study.tell(trial, state=TrialState.FAIL)
    half = seed_config(cfg, 1)
    half_data = half.to_dict()
    half_data["train"]["total_timesteps"] = 64
    train(config_from_dict(half_data, "half"))
    before = json.loads((half.run_dir / "train_summary.json").read_text())["timesteps"]
    assert before < 192
    pending = shared_sweep(cfg, [0, 1], storage=url, train=False)
    assert pending.pending == (1,) and pending.summary is None
    result = shared_sweep(cfg, [0, 1], storage=url)
    assert result.pending == ()
    done = _by_seed(url, first.study)
    assert sorted(done) == [0, 1] and all(len(v) == 1 for v in done.values())  # seed 0 kept
    after = json.loads((half.run_dir / "train_summary.json").read_text())
    assert after["resumed_at"] == before and after["timesteps"] >= 192


def test_bad_input_is_named_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = _config(tmp_path)
    with pytest.raises(ValueError, match=r"--storage 'nosuchdb://x' cannot be opened"):
        shared_sweep(cfg, [0], storage="nosuchdb://x")
    assert not (tmp_path / "a").exists()
    url = f"sqlite:///{tmp_path / 'sweep.db'}"
    shared_sweep(cfg, [0], storage=url, train=False)  # creates the study, trains nothing
    other = tiny_data(tmp_path, output_dir=str(tmp_path / "a" / "runs"))
    other["algo"]["hyperparams"]["n_epochs"] = 2
    with pytest.raises(ValueError, match=r"is a sweep of another algo than"):
        shared_sweep(config_from_dict(other, "other"), [0], storage=url)
    with pytest.raises(ValueError, match="sweep needs at least one seed"):
        shared_sweep(cfg, [], storage=url)
    assert not (tmp_path / "a").exists()
    config = tmp_path / "c.yaml"
    import yaml

    config.write_text(yaml.safe_dump(tiny_data(tmp_path)))
    assert main(["sweep", str(config), "--study", "x"]) == 2
    assert "--study names a sweep in a study storage: give --storage URL too" in (
        capsys.readouterr().err
    )


_POP = """
import sys
import optuna
from twolink_gym.training.tune import open_storage

optuna.logging.set_verbosity(optuna.logging.ERROR)
study = optuna.load_study(study_name="pop", storage=open_storage(sys.argv[1], heartbeat=False))
print(" ".join(str(study.ask().number) for _ in range(int(sys.argv[2]))))
"""


def test_two_processes_never_take_the_same_waiting_trial_from_sqlite(tmp_path: Path) -> None:
    """Each waiting trial goes to one process (SQLite's driver alone hands some to both)."""
    url = f"sqlite:///{tmp_path / 'pop.db'}"
    study = optuna.create_study(study_name="pop", storage=url)
    for i in range(120):
        study.enqueue_trial({"x": i})
    procs = [
        subprocess.Popen([sys.executable, "-c", _POP, url, "60"], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    taken = [set(map(int, p.communicate(timeout=300)[0].split())) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert len(taken[0]) == len(taken[1]) == 60  # each got 60 distinct trials
    assert taken[0].isdisjoint(taken[1]) and taken[0] | taken[1] == set(range(120))
    # every trial is running once, as Optuna's API reads it on a fresh connection
    trials = optuna.load_study(study_name="pop", storage=url).get_trials(deepcopy=False)
    assert [t.state for t in trials] == [TrialState.RUNNING] * 120
