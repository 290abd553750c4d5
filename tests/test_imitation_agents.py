"""Networks trained by imitation (``algo.name: dagger``): agent folders every command runs.

``benchmarks/realaigym_v3_distill.py`` writes its chosen network with
:func:`~twolink_gym.training.jax_run_folders.imitation_config` and
:func:`~twolink_gym.training.jax_run_folders.write_policy`. The references are
independent of the loading code: the network's forward pass computed here by
hand from the arrays it was given, and the config file as YAML.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from twolink_gym.training.config import ConfigError, config_from_dict

#: A base config of the pendubot's swing-up (an SB3 algorithm: no JAX needed), trained with
#: task options of its own that the imitation-trained agent must not claim.
BASE: dict[str, Any] = {
    "env": {
        "task": "swingup",
        "actuation": "pendubot",
        "dt": 0.01,
        "substeps": 5,
        "max_torque": [6.0, 6.0],
        "max_speed": 60.0,
        "max_episode_steps": 50,
        "normalize_obs": True,
        "train_task_options": {"explore_fraction": 0.5},
    },
    "algo": {"name": "sac"},
    "train": {"total_timesteps": 1000, "seeds": None},
    "evaluate": {"episodes": 2},
}

SETTINGS = {
    "teacher": "realaigym_pendubot_mppi",
    "samples": 1024,
    "rounds": 8,
    "runs": 6,
    "fit_steps": 6000,
    "hidden": [16],
    "lr": 0.001,
    "lr_schedule": "constant",
    "final_hidden": None,
    "final_fit_steps": None,
    "select_seeds": [101, 102],
    "chosen_round": 5,
}


def _arrays(obs_dim: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {
        "kernel_0": rng.normal(size=(obs_dim, 16)).astype(np.float32),
        "bias_0": rng.normal(size=16).astype(np.float32),
        "kernel_1": (0.3 * rng.normal(size=(16, 1))).astype(np.float32),
        "bias_1": rng.normal(size=1).astype(np.float32) * 0.1,
        "activation": np.array("relu"),
        "output": np.array("tanh"),
        "action_low": np.array([-1.0], np.float32),
        "action_high": np.array([1.0], np.float32),
        "obs_mean": rng.normal(size=obs_dim).astype(np.float32),
        "obs_var": rng.uniform(0.5, 4.0, size=obs_dim).astype(np.float32),
        "obs_epsilon": np.array(1e-8, np.float32),
    }


def _by_hand(arrays: dict[str, np.ndarray], obs: np.ndarray) -> np.ndarray:
    x = (obs - arrays["obs_mean"]) / np.sqrt(arrays["obs_var"] + arrays["obs_epsilon"])
    h = np.maximum(x @ arrays["kernel_0"] + arrays["bias_0"], 0.0)
    return np.tanh(h @ arrays["kernel_1"] + arrays["bias_1"])


@pytest.fixture()
def agent(tmp_path: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """An imitation-trained agent folder as the DAgger benchmark writes it (seed 1)."""
    import gymnasium as gym
    from twolink_gym.training.envs import env_id_for
    from twolink_gym.training.jax_export import NumpyPolicy
    from twolink_gym.training.jax_run_folders import imitation_config, write_policy

    base = config_from_dict(BASE, "base")
    env = gym.make(env_id_for("swingup", "pendubot"))
    obs_dim = int(env.observation_space.shape[0])
    env.close()
    arrays = _arrays(obs_dim)
    folder = tmp_path / "dag" / "agent_s1"
    cfg = imitation_config(base, "dagger", 1, 34194, SETTINGS, folder)
    write_policy(folder, NumpyPolicy(arrays, "test"), cfg, "an MPPI planner distilled by DAgger")
    return folder, arrays


def test_the_folder_records_the_imitation_and_not_the_base_training(
    agent: tuple[Path, dict[str, np.ndarray]],
) -> None:
    folder, _ = agent
    data = yaml.safe_load((folder / "config.yaml").read_text())
    assert data["algo"] == {"name": "dagger", "policy": "MlpPolicy", "hyperparams": SETTINGS}
    assert data["train"]["seed"] == 1 and data["train"]["total_timesteps"] == 34194
    assert data["train"]["run_name"] == "agent_s1"
    assert data["train"]["output_dir"] == str(folder.parent)
    # the network normalises its own inputs and was not trained on the base's episodes
    assert data["env"]["normalize_obs"] is False
    assert data["env"]["train_task_options"] == {}
    card = json.loads((folder / "agent.json").read_text())
    assert card["backend"] == "numpy" and card["algorithm"] == "dagger"
    assert card["description"] == "an MPPI planner distilled by DAgger"
    assert card["actuation"] == "pendubot" and card["success"] is None


def test_every_policy_command_loads_it_as_its_network(
    agent: tuple[Path, dict[str, np.ndarray]],
) -> None:
    from twolink_gym.training.config import load_config
    from twolink_gym.training.policies import load_policy
    from twolink_gym.training.realaigym import _agent_details, policy_runner

    folder, arrays = agent
    cfg = load_config(folder / "config.yaml")
    loaded = load_policy(str(folder), cfg.env, None)
    assert loaded.label == "dagger (agent_s1)" and loaded.kind == "agent"
    obs = np.random.default_rng(0).normal(size=(9, len(arrays["obs_mean"]))).astype(np.float32)
    action, _ = loaded.predictor.predict(obs, deterministic=True)
    np.testing.assert_allclose(action, _by_hand(arrays, obs), rtol=1e-5, atol=1e-6)
    # on RealAIGym's boards: the env of its config (10 ms decisions), grouped by seed and method
    runner = policy_runner(str(folder), "pendubot")
    assert runner.decision_steps == 5
    assert _agent_details(str(folder)) == {"train_seed": 1, "algorithm": "dagger"}


def test_the_acrobot_board_refuses_a_pendubot_agent(
    agent: tuple[Path, dict[str, np.ndarray]],
) -> None:
    from twolink_gym.training.realaigym import policy_runner

    with pytest.raises(ValueError, match="not the acrobot's swing-up"):
        policy_runner(str(agent[0]), "acrobot")


def test_train_tune_and_sweep_refuse_an_imitation_config(
    agent: tuple[Path, dict[str, np.ndarray]], capsys: pytest.CaptureFixture[str]
) -> None:
    from twolink_gym.training.cli import main
    from twolink_gym.training.config import load_config
    from twolink_gym.training.sweep import sweep
    from twolink_gym.training.tune import tune

    folder, _ = agent
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert main(["train", str(folder / "config.yaml")]) != 0
    err = capsys.readouterr().err
    assert (
        f"{folder / 'config.yaml'}: algo.name 'dagger' labels a network trained by imitation" in err
    )
    assert "benchmarks/realaigym_v3_distill.py" in err and "'jax_sac'" in err
    cfg = load_config(folder / "config.yaml")
    names_the_file = re.escape(f"{folder / 'config.yaml'}: ") + ".*trained by imitation"
    with pytest.raises(ValueError, match=names_the_file):
        tune(cfg, trials=1)
    with pytest.raises(ValueError, match=names_the_file):
        sweep(cfg, [0, 1])
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


def test_an_unknown_imitation_setting_is_refused_naming_the_valid_ones() -> None:
    data = json.loads(json.dumps(BASE))
    data["algo"] = {"name": "dagger", "hyperparams": {"teacher": "x", "epochs": 3}}
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['epochs'\] for dagger; valid keys"):
        config_from_dict(data, "dagger.yaml")


def test_export_copies_the_network_and_measures_it(
    agent: tuple[Path, dict[str, np.ndarray]], tmp_path: Path
) -> None:
    from twolink_gym.training.export import export_agent

    folder, _ = agent
    out = export_agent(folder, tmp_path / "shipped")
    assert (out / "policy.npz").read_bytes() == (folder / "policy.npz").read_bytes()
    card = json.loads((out / "agent.json").read_text())
    assert card["backend"] == "numpy" and card["algorithm"] == "dagger"
    assert card["description"] == (
        "DAGGER (imitating realaigym_pendubot_mppi) on swingup, the pendubot"
    )
    assert card["success"] is not None and card["episodes"] == 2
