"""The robustness keys of a run config: validated, passed to the envs, frame stacking in training.

The frame stack an agent builds for itself (``SB3Agent``) is checked against
SB3's own ``VecFrameStack`` over the same episodes.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from twolink_gym.training.config import ConfigError, config_from_dict
from twolink_gym.training.envs import make_training_env, make_vec
from twolink_gym.training.evaluate import evaluate_policies
from twolink_gym.training.policies import SB3Agent, load_policy
from twolink_gym.training.train import train

import twolink_gym  # noqa: F401
from twolink_gym import TwoLinkEnv

ROBUST_ENV: dict[str, Any] = {
    "task": "reach",
    "randomize": {"m2": [0.8, 1.2], "friction1": {"absolute": [0.0, 0.2]}},
    "observation": "angles",
    "obs_noise": 0.01,
    "torque_noise": 0.05,
    "torque_response": 0.7,
    "action_delay": 1,
    "frame_stack": 3,
}
BASE: dict[str, Any] = {
    "algo": {"name": "ppo", "hyperparams": {"n_steps": 32, "batch_size": 32, "n_epochs": 1}},
    "train": {"total_timesteps": 64, "n_envs": 2, "seed": 3, "progress_bar": False},
    "evaluate": {"episodes": 4, "seed": 100},
}


def config(env: dict[str, Any], tmp_path: Path | None = None, **train: Any) -> Any:
    data = copy.deepcopy(BASE)
    data["env"] = env
    data["train"].update(train)
    if tmp_path is not None:
        data["train"]["output_dir"] = str(tmp_path / "runs")
    return config_from_dict(data, "robust.yaml")


@pytest.fixture(autouse=True)
def _restore_torch_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def test_the_keys_reach_the_env():
    cfg = config(ROBUST_ENV)
    env = TwoLinkEnv(**cfg.env.make_kwargs())
    assert env.observation_kind == "angles" and env.observation_space.shape == (8,)
    assert env.randomization is not None and env.randomization.fields == ("m2", "friction1")
    model = env.actuator_model
    assert model is not None and (model.noise, model.response, model.delay) == (0.05, 0.7, 1)
    assert "params" in env.reset(seed=0)[1]
    # the nominal env keeps the layout and drops the conditions
    nominal = cfg.env.nominal()
    assert nominal.observation == "angles" and nominal.frame_stack == 3
    assert TwoLinkEnv(**nominal.make_kwargs()).randomization is None
    assert config({"task": "reach", "obs_noise": [0.0] * 6 + [0.01] * 4}).env.obs_noise[-1] == 0.01


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        (
            "randomize",
            {"m5": [0.8, 1.2]},
            r"env\.randomize\.m5: .*unknown ArmParams field\(s\) 'm5'",
        ),
        (
            "randomize",
            {"m2": [1.2, 0.8]},
            r"env\.randomize\.m2: randomize\['m2'\] must satisfy low < high",
        ),
        (
            "randomize",
            {"l2": [0.3, 1.0]},
            r"env\.randomize\.l2: randomize\['l2'\] allows invalid arms",
        ),
        ("randomize", [0.8, 1.2], r"env\.randomize must be a mapping"),
        ("observation", "pixels", r"env\.observation must be one of \['angles', 'state'\]"),
        ("obs_noise", -0.1, r"env\.obs_noise: obs_noise must be a number >= 0"),
        ("obs_noise", [0.1, 0.1], r"env\.obs_noise: obs_noise must be .* sequence of 10"),
        ("obs_noise", "loud", r"env\.obs_noise must be a number"),
        ("torque_noise", -1.0, r"env\.torque_noise: torque_noise must be a number >= 0"),
        (
            "torque_response",
            0.0,
            r"env\.torque_response: torque_response must be a number in \(0, 1\]",
        ),
        ("action_delay", -2, r"env\.action_delay: action_delay must be an integer >= 0"),
        ("action_delay", 0.5, r"env\.action_delay must be an integer"),
        ("frame_stack", 0, r"env\.frame_stack must be >= 1"),
    ],
)
def test_bad_values_name_the_key_path_and_the_file(key: str, value: Any, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected) as info:
        config({"task": "reach", key: value})
    assert str(info.value).startswith("robust.yaml: ")


def test_frame_stack_with_goal_observation_is_refused():
    with pytest.raises(ConfigError, match=r"env\.frame_stack > 1 cannot be combined"):
        config({"task": "reach", "frame_stack": 2, "goal_observation": True})


@pytest.mark.parametrize("vectorization", ["native", "dummy"])
def test_agent_frame_stack_equals_sb3_vec_frame_stack(vectorization: str) -> None:
    """SB3Agent's own stack over plain observations equals VecFrameStack's, across episode ends."""
    env = {**ROBUST_ENV, "vectorization": vectorization, "max_episode_steps": 5}
    stacked = make_vec(config(env).env, 2, seed=4)
    plain = make_vec(config({**env, "frame_stack": 1}).env, 2, seed=4)
    assert stacked.observation_space.shape == (3 * 8,)

    seen: list[np.ndarray] = []

    class Echo:
        def predict(self, obs, state=None, episode_start=None, deterministic=True):  # type: ignore[no-untyped-def]
            seen.append(np.array(obs))
            return np.zeros((len(obs), 2), dtype=np.float32), state

    agent = SB3Agent(Echo(), frame_stack=3)  # type: ignore[arg-type]
    expected = [stacked.reset()]
    obs = plain.reset()
    state, starts = None, np.ones(2, dtype=bool)
    rng = np.random.default_rng(0)
    ended = False
    for _ in range(12):
        _, state = agent.predict(obs, state=state, episode_start=starts)
        a = rng.uniform(-1, 1, (2, 2)).astype(np.float32)
        out, *_ = stacked.step(a)
        expected.append(out)
        obs, _, starts, _ = plain.step(a)
        ended |= bool(starts.any())
    assert ended
    for got, want in zip(seen, expected, strict=False):
        np.testing.assert_array_equal(got, want)
    # the newest frame is last, the oldest first; an episode starts with zeros
    np.testing.assert_array_equal(expected[0][:, :16], 0.0)


def test_robust_training_runs_and_the_agent_acts_on_the_nominal_env(tmp_path: Path) -> None:
    cfg = config(ROBUST_ENV, tmp_path, eval_freq=32, eval_episodes=2, checkpoint_freq=0)
    venv = make_training_env(cfg.env, 2, seed=0)
    assert venv.observation_space.shape == (24,)
    run = train(cfg).run_dir
    policy = load_policy(str(run), cfg.env, TwoLinkEnv(**cfg.env.make_kwargs()))
    assert policy.predictor.frame_stack == 3
    # the same agent on the nominal env of its layout (no randomisation, no noise)
    nominal = cfg.env.nominal()
    _, (rollouts,) = evaluate_policies([str(run)], config({**ROBUST_ENV, **_as_dict(nominal)}))
    assert rollouts.success.shape == (4,)
    # but not on another observation layout
    with pytest.raises(ValueError, match="another environment"):
        evaluate_policies([str(run)], config({**ROBUST_ENV, "observation": "state"}))


def _as_dict(env_cfg: Any) -> dict[str, Any]:
    import dataclasses

    return {k: v for k, v in dataclasses.asdict(env_cfg).items() if v is not None}
