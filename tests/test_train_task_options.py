"""``env.train_task_options``: task options of the training env only.

The training env draws its episodes (and computes its rewards) with them; every
evaluation (the periodic one included) runs the task's own. Checked on the drawn start states
against the task's documented start spread, and on the envs ``train`` builds.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from twolink_gym.training import train as train_module
from twolink_gym.training.config import ConfigError, RunConfig, config_from_dict
from twolink_gym.training.envs import make_vec

from twolink_gym.tasks.swingup import HANGING

WIDE = 3.0  # rad: starts almost all round the circle


def config(train_task_options: Any, tmp_path: Path | None = None) -> RunConfig:
    data: dict[str, Any] = {
        "env": {
            "task": "swingup",
            "actuation": "pendubot",
            "task_options": {"init_angle_noise": 0.05},
            "train_task_options": train_task_options,
        },
        "algo": {"name": "ppo", "hyperparams": {"n_steps": 32, "batch_size": 32, "n_epochs": 1}},
        "train": {"total_timesteps": 64, "n_envs": 2, "seed": 3, "progress_bar": False},
        "evaluate": {"episodes": 2, "seed": 100},
    }
    if tmp_path is not None:
        data["train"].update(output_dir=str(tmp_path / "runs"), eval_freq=32, eval_episodes=2)
    return config_from_dict(data, "explore.yaml")


def start_offsets(cfg_env: Any, n: int = 64) -> np.ndarray:
    """Largest angle offset from hanging of ``n`` drawn starts [rad]."""
    venv = make_vec(cfg_env, n, seed=0)
    obs = venv.reset()
    venv.close()
    # the swing-up observation starts with cos q1, sin q1, cos q2, sin q2
    q1, q2 = np.arctan2(obs[:, 1], obs[:, 0]), np.arctan2(obs[:, 3], obs[:, 2])
    d1 = np.angle(np.exp(1j * (q1 - HANGING[0])))
    return np.max(np.abs(np.stack([d1, q2 - HANGING[1]])), axis=0)


def test_training_episodes_use_them_and_the_task_episodes_do_not():
    cfg = config({"init_angle_noise": WIDE})
    wide, own = start_offsets(cfg.env.for_training()), start_offsets(cfg.env)
    assert own.max() <= 0.05 + 1e-9  # the task's own spread
    assert wide.max() <= WIDE + 1e-9 and wide.max() > 2.0  # uniform within ±3 rad
    assert cfg.env.for_training().task_options == {"init_angle_noise": WIDE}
    assert cfg.env.nominal().train_task_options == {}
    assert config({}).env.for_training() == config({}).env


def test_train_builds_the_training_env_with_them_and_the_evaluation_env_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[tuple[dict[str, Any], bool]] = []
    make = train_module.make_training_env

    def spy(cfg_env: Any, *args: Any, training: bool = True, **kwargs: Any) -> Any:
        built.append((dict(cfg_env.task_options), training))
        return make(cfg_env, *args, training=training, **kwargs)

    monkeypatch.setattr(train_module, "make_training_env", spy)
    threads = torch.get_num_threads()
    try:
        train_module.train(config({"init_angle_noise": WIDE}, tmp_path))
    finally:
        torch.set_num_threads(threads)
    assert built == [({"init_angle_noise": WIDE}, True), ({"init_angle_noise": 0.05}, False)]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (
            {"sucess_angle": 0.2},
            r"explore\.yaml: unknown key\(s\) \['env\.train_task_options\.sucess_angle'\]; "
            r"valid keys of 'env\.train_task_options' are \['catch_angle', 'catch_fraction', "
            r"'catch_speed', 'ctrl_weight', 'explore_fraction', 'explore_speed', "
            r"'fall_angle', 'height_weight', 'init_angle_noise', 'init_speed_noise', "
            r"'line_height', 'line_weight', 'observe_turns', 'push_fraction', 'push_turns', 'smooth_weight', 'speed_weight', 'still_sigma', 'success_angle', 'success_speed', "
            r"'upright_sigma', 'wound_shaped_weight', 'wound_weight'\]",
        ),
        ({"init_angle_noise": -1.0}, r"explore\.yaml: env\.train_task_options\.init_angle_noise"),
        ([math.pi], r"explore\.yaml: env\.train_task_options"),
    ],
)
def test_bad_options_name_the_key_and_the_file(options: Any, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        config(options)


def test_reward_and_termination_options_train_and_layout_options_are_refused() -> None:
    data: dict[str, Any] = {
        "env": {"task": "track", "train_task_options": {"lost_distance": 0.2}},
        "algo": {"name": "ppo"},
        "train": {"total_timesteps": 64},
    }
    cfg = config_from_dict(data, "track.yaml")
    trained = cfg.env.for_training().checked()["task_options"]
    assert trained.lost_distance == 0.2 and cfg.env.checked()["task_options"].lost_distance == 0
    # the agent's env is the task's own
    assert cfg.env.nominal().train_task_options == {}
    # preview sets the observation's length (8 + 2 * preview extras): refused
    data["env"]["train_task_options"] = {"preview": 3}
    with pytest.raises(
        ConfigError,
        match=r"track\.yaml: env\.train_task_options \['preview'\] "
        r"change the observation's length \(14 against 18 in evaluation\)",
    ):
        config_from_dict(data, "track.yaml")
    # so does the swing-up's observe_turns (2 extras): allowed in env.task_options only
    swingup: dict[str, Any] = {**data, "env": {"task": "swingup"}}
    swingup["env"]["train_task_options"] = {"observe_turns": True}
    with pytest.raises(
        ConfigError,
        match=r"sw\.yaml: env\.train_task_options \['observe_turns'\] "
        r"change the observation's length \(2 against 0 in evaluation\)",
    ):
        config_from_dict(swingup, "sw.yaml")
    swingup["env"] = {"task": "swingup", "task_options": {"observe_turns": True}}
    assert (
        config_from_dict(swingup, "sw.yaml").env.nominal().checked()["task_options"].extras_size
        == 2
    )
