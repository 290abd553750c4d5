"""``twolink tune``: real Optuna studies of tiny trials (balance, PPO, a few hundred steps).

What is checked against what:

* the trials in the storage against the number asked for, counted through
  Optuna's own API on a fresh connection (no lost or duplicated trial, two
  worker processes writing to one SQLite file);
* each trial's value against the success of its last periodic evaluation as
  SB3's ``EvalCallback`` saved it in the trial's ``eval/evaluations.npz``;
* each trial's training config against the sampled parameters and the seed
  rule ``train.seed + trial number``;
* a resumed study against the trials stored before the restart;
* ``best.yaml`` against the best trial's sampled values mapped through the
  search space written in the test.
"""

from __future__ import annotations

import datetime
import getpass
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pytest
import torch
import yaml
from optuna.trial import TrialState, create_trial
from twolink_gym.training.cli import main
from twolink_gym.training.config import RunConfig, config_from_dict, load_config
from twolink_gym.training.train import train
from twolink_gym.training.tune import counted_trials, open_storage, tune
from twolink_gym.training.tune_space import DEFAULT_SPACES, parse_space

optuna.logging.set_verbosity(optuna.logging.WARNING)

NETS = {"a": [8], "b": [4, 4]}
SPACE = {
    "learning_rate": {"type": "float", "low": 1.0e-4, "high": 1.0e-2, "log": True},
    "n_steps": {"type": "categorical", "choices": [16, 32]},
    "policy_kwargs.net_arch": {"type": "categorical", "choices": NETS},
}


def tiny_data(tmp_path: Path, **train_keys: Any) -> dict[str, Any]:
    return {
        "env": {"task": "balance"},
        "algo": {
            "name": "ppo",
            "hyperparams": {
                "n_steps": 32,
                "batch_size": 32,
                "n_epochs": 1,
                "policy_kwargs": {"net_arch": [8]},
            },
        },
        "train": {
            "total_timesteps": 192,
            "n_envs": 2,
            "seed": 3,
            "eval_freq": 64,
            "eval_episodes": 2,
            "checkpoint_freq": 0,
            "output_dir": str(tmp_path / "runs"),
            "progress_bar": False,
            **train_keys,
        },
        "evaluate": {"episodes": 4, "seed": 500},
    }


def tiny_config(tmp_path: Path, **train_keys: Any) -> RunConfig:
    return config_from_dict(tiny_data(tmp_path, **train_keys), "test")


@pytest.fixture(autouse=True)
def _restore_torch_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def stored_trials(url: str, name: str) -> list[optuna.trial.FrozenTrial]:
    """The study's trials through a fresh connection (what another machine would see)."""
    return optuna.load_study(study_name=name, storage=url).get_trials()


def check_trial_against_its_run(study_folder: Path, t: optuna.trial.FrozenTrial) -> None:
    run = study_folder / "trials" / f"trial_{t.number:04d}"
    saved = load_config(run / "config.yaml")
    assert saved.train.seed == 3 + t.number
    hp = saved.algo.hyperparams
    assert hp["learning_rate"] == pytest.approx(t.params["learning_rate"], rel=1e-12)
    assert hp["n_steps"] == t.params["n_steps"]
    assert hp["policy_kwargs"]["net_arch"] == NETS[t.params["policy_kwargs.net_arch"]]
    assert hp["batch_size"] == 32  # the config's own value stays
    if t.state == TrialState.COMPLETE:
        with np.load(run / "eval" / "evaluations.npz") as data:
            assert t.value == pytest.approx(float(np.mean(data["successes"][-1])))
            # the intermediate values are the evaluations, keyed by their timesteps
            assert sorted(t.intermediate_values) == [int(s) for s in data["timesteps"]]


def test_two_workers_share_one_sqlite_study(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path)
    result = tune(cfg, trials=6, space=parse_space("ppo", SPACE), workers=2)
    trials = stored_trials(result.storage, result.study)
    counted = counted_trials(trials)
    assert len(counted) == result.trials == 6
    assert all(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in counted)
    numbers = [t.number for t in trials]
    assert len(set(numbers)) == len(numbers)
    # both processes wrote trials into the file
    assert len({t.user_attrs["worker"] for t in counted}) == 2
    for t in counted:
        check_trial_against_its_run(result.folder, t)
    # best.yaml is the best trial's hyperparameters on the base config, and trains
    best = max(
        (t for t in trials if t.state == TrialState.COMPLETE), key=lambda t: (t.value, -t.number)
    )
    assert result.best is not None and result.best.number == best.number
    assert result.best_yaml == result.folder / "best.yaml"
    written = load_config(result.best_yaml)
    hp = written.algo.hyperparams
    assert hp["learning_rate"] == pytest.approx(best.params["learning_rate"], rel=1e-12)
    assert hp["policy_kwargs"]["net_arch"] == NETS[best.params["policy_kwargs.net_arch"]]
    assert written.train.seed == cfg.train.seed and written.train.run_name == "balance_ppo_tuned"
    assert written.env == cfg.env
    trained = train(written)
    assert trained.run_dir == Path(cfg.train.output_dir) / "balance_ppo_tuned"
    assert (trained.run_dir / "model.zip").is_file()


def test_resume_adds_only_the_missing_trials(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path)
    space = parse_space("ppo", SPACE)
    first = tune(cfg, trials=2, space=space)
    before = {t.number: t for t in stored_trials(first.storage, first.study)}
    assert len(before) == 2
    second = tune(cfg, trials=4, space=space)
    after = stored_trials(second.storage, second.study)
    assert second.storage == first.storage and len(counted_trials(after)) == 4
    assert [t.number for t in after] == [0, 1, 2, 3]
    for t in after[:2]:  # the earlier trials are unchanged
        old = before[t.number]
        assert (t.state, t.value, t.params, t.datetime_complete) == (
            old.state,
            old.value,
            old.params,
            old.datetime_complete,
        )
    for t in after:
        check_trial_against_its_run(second.folder, t)
    # the restart drew new hyperparameters (a sampler reseeded as at the start would repeat
    # the first draws: TPE's first trials are random draws from its seed)
    rates = [t.params["learning_rate"] for t in after]
    assert len(set(rates)) == 4
    # a study that is full runs nothing
    tune(cfg, trials=4, space=space)
    assert len(stored_trials(second.storage, second.study)) == 4
    # restarting with another search space is refused, naming what differs
    other = dict(SPACE, n_steps={"type": "categorical", "choices": [16, 64]})
    with pytest.raises(ValueError, match="another space"):
        tune(cfg, trials=5, space=parse_space("ppo", other))


def test_a_seeded_study_is_reproducible(tmp_path: Path) -> None:
    space = parse_space("ppo", SPACE)
    runs = [tune(tiny_config(tmp_path / k), trials=3, space=space) for k in "ab"]
    a, b = (stored_trials(r.storage, r.study) for r in runs)
    assert [(t.params, t.value) for t in a] == [(t.params, t.value) for t in b]
    assert len({t.params["learning_rate"] for t in a}) == 3  # the sampler did draw


def _trial(state: TrialState, **attrs: Any) -> optuna.trial.FrozenTrial:
    value = 0.5 if state == TrialState.COMPLETE else None
    return create_trial(state=state, value=value, user_attrs=attrs)


def test_counted_trials_skip_interrupted_and_surplus_trials() -> None:
    trials = [
        _trial(TrialState.COMPLETE),
        _trial(TrialState.PRUNED),
        _trial(TrialState.PRUNED, surplus=True),
        _trial(TrialState.FAIL, error="ValueError: bad combination"),
        _trial(TrialState.FAIL, interrupted=True),
        _trial(TrialState.FAIL),  # a worker that died: its heartbeat stopped
        _trial(TrialState.RUNNING),
    ]
    assert [trials.index(t) for t in counted_trials(trials)] == [0, 1, 3, 6]


@pytest.mark.parametrize(
    ("space", "message"),
    [
        (
            {"learning_rat": {"type": "float", "low": 1e-4, "high": 1e-3}},
            r"unknown key.*learning_rat",
        ),
        (
            {"learning_rate": {"type": "float", "low": 1e-3, "high": 1e-3}},
            r"learning_rate is an empty or reversed range",
        ),
        ({"learning_rate": {"type": "float", "low": 1e-2, "high": 1e-3}}, r"low=0.01, high=0.001"),
        ({"n_epochs": {"type": "int", "low": 5, "high": 2}}, r"n_epochs is an empty or reversed"),
        (
            {"n_epochs": {"type": "integer", "low": 1, "high": 2}},
            r"n_epochs.type must be one of \['categorical', 'float', 'int'\]",
        ),
        (
            {"gamma": {"type": "categorical", "choices": []}},
            r"gamma.choices must be a non-empty list",
        ),
        (
            {"gamma": {"type": "float", "low": 0.9, "high": 0.99, "step": 0.01}},
            r"unknown key.*gamma.step",
        ),
        (
            {"ent_coef": {"type": "float", "low": 0.0, "high": 0.1, "log": True}},
            r"ent_coef.log needs low > 0",
        ),
        (
            {"policy_kwargs.net_arch": {"type": "categorical", "choices": [[64, 64]]}},
            r"name other values in a mapping",
        ),
        ({"seed": {"type": "int", "low": 0, "high": 3}}, r"'seed'.*set from the train section"),
        ({}, r"non-empty mapping"),
    ],
)
def test_bad_search_space_names_the_key(space: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_space("ppo", space, "space.yaml")


def test_default_spaces_are_valid_for_their_algorithms() -> None:
    for algo, data in DEFAULT_SPACES.items():
        assert parse_space(algo).dimensions, algo
        assert [d.key for d in parse_space(algo).dimensions] == list(data)


def _cli(tmp_path: Path, *args: str, space: dict[str, Any] | None = SPACE) -> list[str]:
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(tiny_data(tmp_path)))
    argv = ["tune", str(config), *args]
    if space is not None:
        (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
        argv += ["--space", str(tmp_path / "space.yaml")]
    return argv


@pytest.mark.parametrize(
    ("args", "space", "message"),
    [
        (
            ("--trials", "2", "--storage", "nosuchdb://x"),
            SPACE,
            "--storage 'nosuchdb://x' cannot be opened",
        ),
        (
            ("--trials", "2", "--storage", "sqlite:////nonexistent/folder/study.db"),
            SPACE,
            "cannot be opened",
        ),
        (
            ("--trials", "2"),
            {"learning_rat": {"type": "float", "low": 1e-4, "high": 1e-3}},
            "learning_rat",
        ),
        (
            ("--trials", "2"),
            {"n_steps": {"type": "int", "low": 64, "high": 32}},
            "n_steps is an empty or reversed range",
        ),
        (
            ("--trials", "2", "--set", "train.eval_freq=0"),
            SPACE,
            "train.eval_freq must be in 1..train.total_timesteps",
        ),
        ((), SPACE, "needs --trials N"),
    ],
)
def test_bad_input_is_an_error_and_writes_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    space: Any,
    message: str,
) -> None:
    assert main(_cli(tmp_path, *args, space=space)) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_cli_runs_reports_and_plots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_cli(tmp_path, "--trials", "3", "--report")) == 0
    out = capsys.readouterr().out
    folder = tmp_path / "runs" / "balance_ppo_tune"
    assert "study 'balance_ppo'" in out and "3 counted trials" in out
    assert "| trial | success | learning_rate | n_steps | policy_kwargs.net_arch |" in out
    assert "parameter importances (PED-ANOVA):" in out
    for name in ("history.png", "parallel_coordinate.png", "importances.png"):
        png = folder / "report" / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    assert (folder / "study.db").is_file() and (folder / "best.yaml").is_file()
    # --report alone reads the stored study
    assert main(_cli(tmp_path, "--report")) == 0
    assert "3 counted trials (3 complete)" in capsys.readouterr().out


# -- PostgreSQL: a real server on a local port, two workers against it ----------


def _postgres_bin() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "initdb").is_file() and (candidate / "pg_ctl").is_file():
            return candidate
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_server_user(argv: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run it as the ``postgres`` user then."""
    if os.geteuid() != 0:
        return argv
    runuser = shutil.which("runuser")
    if runuser is None:
        pytest.skip("running as root and no runuser to start PostgreSQL as another user")
    return [runuser, "-u", "postgres", "--", *argv]


@pytest.fixture
def postgres_url(tmp_path_factory: pytest.TempPathFactory) -> Any:
    bin_dir = _postgres_bin()
    if bin_dir is None:
        pytest.skip(
            "PostgreSQL's initdb/pg_ctl are not installed (Debian: apt-get install postgresql)"
        )
    try:
        import psycopg2  # noqa: F401
    except ImportError:
        pytest.skip("no PostgreSQL driver for SQLAlchemy (pip install psycopg2-binary)")
    if os.geteuid() == 0:
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run the server")
    root = Path(f"/tmp/twolink_pg_{os.getpid()}_{time.monotonic_ns()}")
    root.mkdir(mode=0o777)
    os.chmod(root, 0o777)
    data, log = root / "data", root / "server.log"
    port = _free_port()
    user = "postgres" if os.geteuid() == 0 else getpass.getuser()
    init = subprocess.run(
        _as_server_user([str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", user]),
        capture_output=True,
        text=True,
    )
    if init.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"initdb failed: {init.stderr.strip()[-300:]}")
    ctl = [str(bin_dir / "pg_ctl"), "-D", str(data)]
    start = subprocess.run(
        _as_server_user(
            [
                *ctl,
                "-l",
                str(log),
                "-w",
                "-t",
                "60",
                "-o",
                f"-p {port} -k {root} -h 127.0.0.1",
                "start",
            ]
        ),
        capture_output=True,
        text=True,
    )
    if start.returncode != 0:
        text = log.read_text()[-300:] if log.exists() else start.stderr
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"pg_ctl could not start a server: {text}")
    try:
        yield f"postgresql+psycopg2://{user}@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(_as_server_user([*ctl, "-m", "fast", "-w", "stop"]), capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def test_two_workers_share_a_postgresql_study(tmp_path: Path, postgres_url: str) -> None:
    cfg = tiny_config(tmp_path)
    result = tune(cfg, trials=4, space=parse_space("ppo", SPACE), workers=2, storage=postgres_url)
    trials = stored_trials(postgres_url, result.study)
    counted = counted_trials(trials)
    assert len(counted) == 4 and len({t.number for t in trials}) == len(trials)
    assert len({t.user_attrs["worker"] for t in counted}) == 2
    for t in counted:
        check_trial_against_its_run(result.folder, t)
    # nothing in the study folder but the trials and best.yaml: the study is in the server
    assert not (result.folder / "study.db").exists()
    assert isinstance(trials[0].datetime_start, datetime.datetime)
    assert (
        open_storage(postgres_url, heartbeat=False).get_all_studies()[0].study_name == "balance_ppo"
    )


def test_pruning_stops_a_trial_at_its_first_evaluation(tmp_path: Path) -> None:
    from twolink_gym.training.tune import _ReportEvaluations

    cfg = tiny_config(tmp_path, total_timesteps=512)
    # a pruner that prunes every trial once it has a reported value (success <= 1 < 2)
    study = optuna.create_study(
        direction="maximize", pruner=optuna.pruners.ThresholdPruner(lower=2.0)
    )
    trial = study.ask()
    callback = _ReportEvaluations(trial)
    result = train(cfg, after_eval=callback)
    assert callback.pruned
    # stopped at the first evaluation (64 steps: two rollouts of 2 envs x 32 steps)
    assert result.timesteps == 64 < cfg.train.total_timesteps
    with np.load(result.run_dir / "eval" / "evaluations.npz") as data:
        assert list(data["timesteps"]) == [64]
        assert trial.storage.get_trial(trial._trial_id).intermediate_values == {
            64: float(np.mean(data["successes"][0]))
        }
    with pytest.raises(ValueError, match=r"train\.eval_freq must be > 0"):
        train(tiny_config(tmp_path / "x", eval_freq=0), after_eval=callback)


def _wait(condition: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.3)
    return False


def _child_pids(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc for the worker processes")
def test_sigterm_keeps_completed_trials_and_a_restart_reruns_the_interrupted(
    tmp_path: Path,
) -> None:
    import signal
    import sys

    # trials long enough that both workers are still inside one when SIGTERM lands
    data = tiny_data(tmp_path, total_timesteps=12000, eval_freq=1000)
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(data))
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(SPACE))
    argv = [sys.executable, "-m", "twolink_gym.training.cli", "tune", str(config)]
    argv += ["--space", str(tmp_path / "space.yaml")]
    url = f"sqlite:///{tmp_path / 'runs' / 'balance_ppo_tune' / 'study.db'}"

    def states() -> list[TrialState]:
        try:
            return [t.state for t in stored_trials(url, "balance_ppo")]
        except Exception:  # not created yet
            return []

    # started with SIGINT ignored, as a background job of a non-interactive shell is
    # (`cmd &`, nohup): the workers must still stop on the SIGINT their parent sends
    proc = subprocess.Popen(
        [*argv, "--trials", "20", "--workers", "2"],
        cwd=tmp_path,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        assert _wait(
            lambda: TrialState.COMPLETE in states() and states().count(TrialState.RUNNING) == 2,
            240,
        ), states()
        workers = _child_pids(proc.pid)
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(120) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _wait(lambda: not any(Path(f"/proc/{p}").exists() for p in workers), 30)
    trials = stored_trials(url, "balance_ppo")
    interrupted = [t for t in trials if t.user_attrs.get("interrupted")]
    # one per worker that was inside a trial (a worker may be between two trials)
    assert 1 <= len(interrupted) <= 2 and all(t.state == TrialState.FAIL for t in interrupted)
    assert TrialState.RUNNING not in [t.state for t in trials]
    for t in interrupted:  # each interrupted worker saved its run, as twolink train does
        assert (
            tmp_path
            / "runs"
            / "balance_ppo_tune"
            / "trials"
            / f"trial_{t.number:04d}"
            / "model.zip"
        ).is_file()
    kept = {t.number: (t.value, t.params) for t in counted_trials(trials)}
    assert kept and all(
        t.state == TrialState.COMPLETE or t.state == TrialState.PRUNED
        for t in counted_trials(trials)
    )
    # a restart asking for one more trial runs exactly one, and keeps every completed trial
    assert subprocess.run([*argv, "--trials", str(len(kept) + 1)], cwd=tmp_path).returncode == 0
    after = stored_trials(url, "balance_ppo")
    assert len(counted_trials(after)) == len(kept) + 1 and len(after) == len(trials) + 1
    assert {
        t.number: (t.value, t.params) for t in counted_trials(after) if t.number in kept
    } == kept


def test_opening_a_fresh_storage_waits_out_another_process_creating_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what PostgreSQL raises to the second of two workers creating a fresh study schema
    race = 'type "studydirection" already exists'
    import sqlalchemy.exc

    real = optuna.storages.RDBStorage
    calls = {"n": 0}

    def racing(url: str, **kwargs: Any) -> optuna.storages.RDBStorage:
        calls["n"] += 1
        if calls["n"] == 1:  # the first attempt meets the other worker's half-made schema
            raise sqlalchemy.exc.ProgrammingError("CREATE TYPE", {}, Exception(race))
        return real(url, **kwargs)

    monkeypatch.setattr(optuna.storages, "RDBStorage", racing)
    monkeypatch.setattr(time, "sleep", lambda s: None)
    storage = open_storage(f"sqlite:///{tmp_path / 'study.db'}", heartbeat=False)
    assert calls["n"] == 2 and storage.get_all_studies() == []

    # an error that is not that race is not retried: it names the storage
    def refused(url: str, **kwargs: Any) -> optuna.storages.RDBStorage:
        raise sqlalchemy.exc.ProgrammingError("SELECT", {}, Exception("permission denied"))

    monkeypatch.setattr(optuna.storages, "RDBStorage", refused)
    with pytest.raises(ValueError, match=r"cannot be opened .*permission denied"):
        open_storage(f"sqlite:///{tmp_path / 'other.db'}", heartbeat=False)


def test_an_interrupt_after_training_keeps_the_trial_and_starts_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SIGINT lands when the trial's training has returned (saving, or Optuna storing
    # the trial): the trial is completed and stored, then the study stops
    import signal

    import twolink_gym.training.train as train_module

    real = train_module.train

    def train_then_interrupted(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)
        return result

    monkeypatch.setattr(train_module, "train", train_then_interrupted)
    cfg = tiny_config(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        tune(cfg, trials=3, space=parse_space("ppo", SPACE), workers=1)
    url = f"sqlite:///{tmp_path / 'runs' / 'balance_ppo_tune' / 'study.db'}"
    (trial,) = stored_trials(url, "balance_ppo")
    assert trial.state == TrialState.COMPLETE
    run = tmp_path / "runs" / "balance_ppo_tune" / "trials" / "trial_0000"
    with np.load(run / "eval" / "evaluations.npz") as data:
        assert trial.value == pytest.approx(float(np.mean(data["successes"][-1])))
