"""``twolink tune`` over a ``jax_*`` config: every trial trains its seeds at once in JAX.

What is checked against what:

* each trial's value against the seeds' ``eval/time_log.csv`` files read here
  with the ``csv`` module: the mean over the seeds of their last row's
  ``success_rate`` (and the worst seed's, kept as a user attribute), and the
  values reported to the pruner against the mean at every row;
* each seed's training config against the sampled value and the seed rule
  ``train.seeds + trial number``;
* a continued study against the trial stored before it;
* a pruned trial against its time logs (one evaluation, then stopped);
* an interrupted trial: saved, failed and not counted, run again on the restart;
* a bad search-space key against the file, the key and the allowed keys in the error.

The search space varies ``log_std_init`` only: it is applied to the initial
train state, not compiled into the program, so every training here reuses one
compiled program through JAX's persistent compilation cache (compiling is the
slow part on CPU).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pytest
import yaml
from optuna.trial import TrialState
from twolink_gym.training.cli import main
from twolink_gym.training.config import RunConfig, config_from_dict, load_config
from twolink_gym.training.tune import counted_trials, report, tune
from twolink_gym.training.tune_space import parse_space

pytest.importorskip("rejax")
optuna.logging.set_verbosity(optuna.logging.WARNING)

SEEDS = [3, 5]
SPACE = {"log_std_init": {"type": "float", "low": -1.5, "high": 0.0}}


def tiny_data(tmp: Path) -> dict[str, Any]:
    """Balance with 20-step episodes and a wide success band: success rates between 0 and 1."""
    return {
        "env": {
            "task": "balance",
            "max_episode_steps": 20,
            "task_options": {"success_angle": 0.2, "success_speed": 2.0},
        },
        "algo": {
            "name": "jax_ppo",
            "hyperparams": {
                "num_steps": 16,
                "num_minibatches": 2,
                "num_epochs": 1,
                "log_std_init": -0.5,
                "agent_kwargs": {"activation": "tanh", "hidden_layer_sizes": [16, 8]},
            },
        },
        "train": {
            "total_timesteps": 256,
            "n_envs": 8,
            "seeds": SEEDS,
            "eval_freq": 128,
            "eval_episodes": 16,
            "output_dir": str(tmp / "runs"),
        },
        "evaluate": {"episodes": 3},
    }


def tiny_config(tmp: Path) -> RunConfig:
    return config_from_dict(tiny_data(tmp), "tiny_jax_ppo")


@pytest.fixture(scope="module", autouse=True)
def _compilation_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One persistent compilation cache for this module's trainings (all the same program)."""
    import jax

    names = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs")
    before = {name: getattr(jax.config, name) for name in names}
    jax.config.update("jax_compilation_cache_dir", str(tmp_path_factory.mktemp("xla_cache")))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    yield
    for name, value in before.items():
        jax.config.update(name, value)


def time_log(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "eval" / "time_log.csv", newline="") as f:
        return list(csv.DictReader(f))


def seed_folders(study_folder: Path, number: int) -> list[Path]:
    """A trial's run folders, in the order of its seeds ``SEEDS + number``."""
    trial = study_folder / "trials" / f"trial_{number:04d}"
    return [trial / f"balance_jax_ppo_s{s + number}" for s in SEEDS]


def check_trial_against_its_runs(study_folder: Path, t: optuna.trial.FrozenTrial) -> list[float]:
    """Assert what the trial stored against its seeds' files; their last success rates."""
    runs = seed_folders(study_folder, t.number)
    last = []
    for seed, run in zip(SEEDS, runs, strict=True):
        saved = load_config(run / "config.yaml")
        assert saved.train.seed == seed + t.number
        hp = saved.algo.hyperparams
        assert hp["log_std_init"] == pytest.approx(t.params["log_std_init"], rel=1e-12)
        assert hp["num_steps"] == 16  # the config's own values stay
        last.append(float(time_log(run)[-1]["success_rate"]))
    logs = [time_log(run) for run in runs]
    # the values reported after each evaluation: the mean over the seeds, keyed by the steps
    steps = [int(row["timesteps"]) for row in logs[0]]
    assert all([int(r["timesteps"]) for r in log] == steps for log in logs)
    expected = {
        s: float(np.mean([float(log[i]["success_rate"]) for log in logs]))
        for i, s in enumerate(steps)
    }
    assert t.intermediate_values == pytest.approx(expected, abs=1e-12)
    assert t.user_attrs["seed_success"] == pytest.approx(last, abs=1e-12)
    assert t.user_attrs["worst_seed_success"] == pytest.approx(min(last), abs=1e-12)
    if t.state == TrialState.COMPLETE:
        assert t.value == pytest.approx(float(np.mean(last)), abs=1e-12)
    return last


def test_a_jax_study_scores_trials_on_their_seeds_time_logs(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path)
    space = parse_space("jax_ppo", SPACE)
    first = tune(cfg, trials=1, space=space)
    assert first.trials == 1 and first.storage.startswith("sqlite:///")
    [before] = optuna.load_study(study_name=first.study, storage=first.storage).get_trials()
    # continuing the study to 2 trials trains only the missing one
    result = tune(cfg, trials=2, space=space)
    trials = optuna.load_study(study_name=result.study, storage=result.storage).get_trials()
    assert [t.state for t in trials] == [TrialState.COMPLETE] * 2
    assert trials[0].params == before.params and trials[0].value == before.value
    assert trials[0].datetime_complete == before.datetime_complete
    spread = []
    for t in trials:
        last = check_trial_against_its_runs(result.folder, t)
        spread.append(max(last) - min(last))
    # the seeds disagree somewhere, so the mean is told apart from the worst seed
    assert max(spread) > 0

    # best.yaml: the best trial's value with the config's own seeds
    best = max(trials, key=lambda t: (t.value, t.user_attrs["worst_seed_success"], -t.number))
    assert result.best is not None and result.best.number == best.number
    written = yaml.safe_load((result.folder / "best.yaml").read_text())
    assert written["algo"]["hyperparams"]["log_std_init"] == best.params["log_std_init"]
    assert written["train"]["seeds"] == SEEDS
    assert f"train.seeds {[s + best.number for s in SEEDS]}" in (
        result.folder / "best.yaml"
    ).read_text().replace("\n# ", " ")

    text = report(cfg)
    assert "| trial | success | worst seed | log_std_init |" in text
    assert (
        f"| {best.number} | {best.value:.3f} | {best.user_attrs['worst_seed_success']:.3f} |"
        in text
    )
    assert (result.folder / "report" / "history.png").is_file()


def test_a_pruned_jax_trial_stops_after_the_evaluation_that_pruned_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a pruner that prunes every trial once it has a reported value (success <= 1 < 2)
    monkeypatch.setattr(
        optuna.pruners, "MedianPruner", lambda **kw: optuna.pruners.ThresholdPruner(lower=2.0)
    )
    cfg = tiny_config(tmp_path)
    result = tune(cfg, trials=1, space=parse_space("jax_ppo", SPACE))
    trials = optuna.load_study(study_name=result.study, storage=result.storage).get_trials()
    assert [t.state for t in trials] == [TrialState.PRUNED]
    assert len(counted_trials(trials)) == 1 and result.best is None
    check_trial_against_its_runs(result.folder, trials[0])
    for run in seed_folders(result.folder, 0):
        # one evaluation, at the first segment of 8 envs x 16 steps, then stopped
        assert [row["timesteps"] for row in time_log(run)] == ["128"]
        summary = json.loads((run / "train_summary.json").read_text())
        assert summary["timesteps"] == 128 < cfg.train.total_timesteps
        assert summary["stopped_early"] is True and summary["interrupted"] is False
    assert not (result.folder / "best.yaml").exists()


def test_an_interrupted_jax_trial_is_kept_uncounted_and_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from twolink_gym.training import tune as tune_module

    report_evaluation = tune_module._ReportSeedEvaluations.__call__

    def ctrl_c(self: Any, steps: int, rows: Any) -> bool:  # Ctrl-C during the first segment
        raise KeyboardInterrupt

    cfg = tiny_config(tmp_path)
    space = parse_space("jax_ppo", SPACE)
    monkeypatch.setattr(tune_module._ReportSeedEvaluations, "__call__", ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        tune(cfg, trials=1, space=space)
    folder = tmp_path / "runs" / "balance_jax_ppo_tune"
    url = f"sqlite:///{folder / 'study.db'}"
    [stopped] = optuna.load_study(study_name="balance_jax_ppo", storage=url).get_trials()
    assert stopped.state == TrialState.FAIL and stopped.user_attrs["interrupted"]
    assert counted_trials([stopped]) == []
    for run in seed_folders(folder, 0):  # every seed saved as twolink train saves on Ctrl-C
        summary = json.loads((run / "train_summary.json").read_text())
        assert summary["interrupted"] is True and (run / "train_state.npz").is_file()
    # the restart runs the study's one trial again, as a new trial
    monkeypatch.setattr(tune_module._ReportSeedEvaluations, "__call__", report_evaluation)
    result = tune(cfg, trials=1, space=space)
    trials = optuna.load_study(study_name=result.study, storage=url).get_trials()
    assert [t.state for t in trials] == [TrialState.FAIL, TrialState.COMPLETE]
    check_trial_against_its_runs(folder, trials[1])


def test_a_bad_space_key_names_the_file_the_key_and_the_allowed_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "tiny_jax_ppo.yaml"
    config.write_text(yaml.safe_dump(tiny_data(tmp_path)))
    space = tmp_path / "space.yaml"
    space.write_text(yaml.safe_dump({"n_steps": {"type": "categorical", "choices": [16, 32]}}))
    assert main(["tune", str(config), "--space", str(space), "--trials", "1"]) == 2
    message = capsys.readouterr().err
    assert f"--space {space}: search space key 'n_steps': unknown key(s) ['n_steps']" in message
    assert "'num_steps'" in message and "'learning_rate'" in message  # the allowed keys
    nested = {"agent_kwargs.width": {"type": "categorical", "choices": [16]}}
    with pytest.raises(
        ValueError, match=r"agent_kwargs\.width.*'activation', 'hidden_layer_sizes'"
    ):
        parse_space("jax_ppo", nested, "--space s.yaml")
    with pytest.raises(ValueError, match=r"'gamma'.*gamma must be in \(0\.0, 1\.0\], got 1\.5"):
        parse_space("jax_ppo", {"gamma": {"type": "float", "low": 0.9, "high": 1.5}})
    assert not (tmp_path / "runs").exists()  # a failed command writes nothing


def test_every_shipped_search_space_is_valid_for_its_config() -> None:
    """``configs/tune/<config>_space.yaml`` parses against ``configs/<config>.yaml``'s algorithm."""
    root = Path(__file__).resolve().parents[1] / "configs"
    spaces = sorted((root / "tune").glob("*_space.yaml"))
    assert root / "tune" / "balance_jax_ppo_space.yaml" in spaces
    for path in spaces:
        cfg = load_config(root / f"{path.name.removesuffix('_space.yaml')}.yaml")
        space = parse_space(cfg.algo.name, yaml.safe_load(path.read_text()), str(path))
        assert space.dimensions
