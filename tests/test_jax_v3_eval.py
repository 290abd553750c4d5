"""Held-out RealAIGym v3 runs during ``jax_*`` training (``train.eval_v3_pushes_seeds``).

The references are the compiled side: the run folder's exported policy asked
through :class:`~twolink_gym.realaigym.protocol.PolicyRunner` (what ``twolink
realaigym v3 RUN`` does) and :func:`twolink_gym.realaigym.v3.run_v3` with the
same held-out pushes; and the selection rule, checked on the files written.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from test_jax_train import TINY_SAC
from twolink_gym.training.config import ConfigError, config_from_dict

needs_rejax = pytest.mark.skipif(
    importlib.util.find_spec("rejax") is None, reason='needs pip install "twolink-gym[jax]"'
)

#: test_jax_train's tiny jax_sac run on the pendubot's swing-up, with two held-out v3 schedules;
#: the agent observes its turns (observe_turns: the runs must encode the state with the extras).
TINY_V3: dict[str, Any] = {
    **json.loads(json.dumps(TINY_SAC)),
    "env": {
        "task": "swingup",
        "actuation": "pendubot",
        "dt": 0.01,
        "substeps": 5,
        "max_torque": [6.0, 6.0],
        "max_speed": 60.0,
        "max_episode_steps": 20,
        "normalize_obs": True,
        "normalize_reward": False,
        "task_options": {"observe_turns": True},
    },
}
TINY_V3["train"]["eval_v3_pushes_seeds"] = [1, 2]


def _config(tmp: Path, **train: object) -> Path:
    data = json.loads(json.dumps(TINY_V3))
    data["train"].update(output_dir=str(tmp / "runs"), **train)
    path = tmp / "tiny_v3.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two seeds trained at once with held-out v3 runs at 64 and 128 steps; the config's path."""
    pytest.importorskip("rejax")
    from twolink_gym.training.cli import main

    config = _config(tmp_path_factory.mktemp("jax_v3"))
    assert main(["train", str(config)]) == 0
    return config


def _runs(config: Path) -> list[Path]:
    return [config.parent / "runs" / f"swingup_pendubot_jax_sac_s{s}" for s in (1, 2)]


def _read(path: Path) -> tuple[list[str], np.ndarray]:
    lines = path.read_text().splitlines()
    return lines[0].split(","), np.array(
        [[float(v) for v in line.split(",")] for line in lines[1:]]
    )


@needs_rejax
def test_every_seed_logs_its_held_out_scores_and_best_follows_them(trained: Path) -> None:
    for run in _runs(trained):
        header, rows = _read(run / "eval" / "v3_heldout.csv")
        assert header == ["timesteps", "pushes_seed_1", "pushes_seed_2", "mean"]
        assert rows[:, 0].tolist() == [64, 128]
        assert np.all((rows[:, 1:3] >= 0.0) & (rows[:, 1:3] <= 1.0))
        np.testing.assert_allclose(rows[:, 3], rows[:, 1:3].mean(axis=1), rtol=1e-12)
        selection = json.loads((run / "best" / "selection.json").read_text())
        card = json.loads((run / "best" / "agent.json").read_text())
        assert card["name"] == f"{run.name}_best"  # the run's, not the folder it was written in
        # best/ is the evaluation of the highest mean held-out score (the first of equals)
        first_best = int(np.argmax(rows[:, 3]))
        assert selection["timesteps"] == rows[first_best, 0]
        assert selection["v3_heldout_score"] == pytest.approx(rows[first_best, 3], rel=1e-12)


@needs_rejax
def test_the_agent_is_asked_as_twolink_realaigym_v3_asks_its_run_folder(trained: Path) -> None:
    """The in-training torque equals PolicyRunner's with the exported policy; the score the
    compiled run of that policy on the same held-out pushes (float32 rounding apart)."""
    import jax
    import jax.numpy as jnp
    from twolink_gym.training.config import load_config
    from twolink_gym.training.jax_program import build_program, make_env
    from twolink_gym.training.jax_run_folders import load_states
    from twolink_gym.training.jax_v3_eval import agent_torque
    from twolink_gym.training.realaigym import policy_runner

    from twolink_gym.realaigym.v3 import run_v3, score_v3

    cfg = load_config(trained)
    runs = _runs(trained)
    program = build_program(cfg)
    keys = jax.vmap(jax.random.PRNGKey)(jnp.asarray([1, 2], dtype=jnp.uint32))
    state, _ = load_states(program.init(keys), runs)
    torque = jax.jit(jax.vmap(agent_torque(cfg, make_env, program.act), in_axes=(None, 0)))
    rng = np.random.default_rng(3)
    x = np.column_stack(
        [rng.uniform(-np.pi, np.pi, (64, 2)), rng.uniform(-30.0, 30.0, (64, 2))]
    ).astype(np.float32)
    run = runs[0]
    runner = policy_runner(str(run), "pendubot")
    assert runner.decision_steps == 5
    seed_state = jax.tree.map(lambda a: a[0], state)
    got = np.asarray(torque(seed_state, jnp.asarray(x)))
    expected, _ = runner.command(x.astype(np.float64), None, True)
    assert np.all(got[:, 1] == 0.0) and np.abs(got[:, 0]).max() > 1e-3
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    # the last evaluation's score on pushes seed 1 is the compiled run's (measured: 1e-4 apart)
    _, rows = _read(run / "eval" / "v3_heldout.csv")
    compiled = score_v3(run_v3(runner, "pendubot", pushes_seed=1).trajectory).score
    assert rows[-1, 1] == pytest.approx(compiled, abs=0.01)


@needs_rejax
def test_resume_keeps_the_held_out_rows_up_to_the_saved_state(
    trained: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from twolink_gym.training.cli import main

    shutil.copytree(trained.parent / "runs", tmp_path / "runs")
    run = tmp_path / "runs" / "swingup_pendubot_jax_sac_s2"
    # a row from a later, lost evaluation is dropped on resume
    log = run / "eval" / "v3_heldout.csv"
    log.write_text(log.read_text() + "192,0.5,0.5,0.5\n")
    assert main(["train", "--resume", str(run), "--set", "train.total_timesteps=192"]) == 0
    _, rows = _read(log)
    assert rows[:, 0].tolist() == [64, 128, 192]
    assert rows[2, 3] != 0.5
    # other pushes seeds on resume: refused before anything is written
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    args = ["--set", "train.total_timesteps=256", "--set", "train.eval_v3_pushes_seeds=[5]"]
    assert main(["train", "--resume", str(run), *args]) != 0
    assert "train.eval_v3_pushes_seeds is [5]" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


def _error(**changes: Any) -> str:
    data = json.loads(json.dumps(TINY_V3))
    for key, value in changes.items():
        section, name = key.split("__")
        data[section][name] = value
    with pytest.raises(ConfigError) as info:
        config_from_dict(data, "tiny.yaml")
    return str(info.value)


def test_bad_settings_name_the_key_and_the_fix() -> None:
    message = _error(train__eval_v3_pushes_seeds=[1, 777])
    assert "train.eval_v3_pushes_seeds" in message and "777" in message and "tiny.yaml" in message
    assert "eval_v3_pushes_seeds" in _error(train__eval_v3_pushes_seeds=[])
    assert "distinct" in _error(train__eval_v3_pushes_seeds=[4, 4])
    assert "[0, 2**32)" in _error(train__eval_v3_pushes_seeds=[-1])
    assert "'swingup'" in _error(env__task="balance", env__actuation="full", env__task_options={})
    assert "multiple of 0.002" in _error(env__dt=0.005)
    assert "train.eval_freq" in _error(train__eval_freq=0)
    assert "env.observation" in _error(env__observation="angles")
    sb3 = _error(algo__name="sac", algo__hyperparams={}, train__seeds=None)
    assert "--pushes-seed" in sb3
    # the acrobot's board seed is 333; 777 is a held-out seed for it
    data = json.loads(json.dumps(TINY_V3))
    data["env"]["actuation"] = "acrobot"
    data["train"]["eval_v3_pushes_seeds"] = [777]
    assert config_from_dict(data, "tiny.yaml").train.eval_v3_pushes_seeds == [777]
    assert "333" in _error(env__actuation="acrobot", train__eval_v3_pushes_seeds=[333])


@needs_rejax
def test_a_tune_study_scores_trials_on_their_held_out_v3_runs(tmp_path: Path) -> None:
    import optuna
    from twolink_gym.training.config import load_config
    from twolink_gym.training.tune import report, tune
    from twolink_gym.training.tune_space import parse_space

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    cfg = load_config(_config(tmp_path))
    space = parse_space("jax_sac", {"learning_rate": {"type": "float", "low": 1e-4, "high": 1e-3}})
    result = tune(cfg, trials=1, space=space)
    [trial] = optuna.load_study(study_name=result.study, storage=result.storage).get_trials()
    folder = result.folder / "trials" / "trial_0000"
    last = [
        _read(folder / f"swingup_pendubot_jax_sac_s{s}" / "eval" / "v3_heldout.csv")[1][-1, 3]
        for s in (1, 2)
    ]
    assert trial.value == pytest.approx(float(np.mean(last)), abs=1e-12)
    assert trial.user_attrs["seed_v3_heldout_score"] == pytest.approx(last, abs=1e-12)
    assert trial.user_attrs["worst_seed_v3_heldout_score"] == pytest.approx(min(last), abs=1e-12)
    assert "seed_success" not in trial.user_attrs
    text = report(cfg)
    assert "mean over seeds of the held-out v3 score" in text
    assert "| trial | held-out v3 | worst seed | learning_rate |" in text
    assert "held-out v3 score" in (result.folder / "best.yaml").read_text()
