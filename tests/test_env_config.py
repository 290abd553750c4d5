"""The env's settings are declared once, in ``EnvConfig``, and their errors carry the key as data."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import yaml
from twolink_gym.training import conditions
from twolink_gym.training import config as training_config

import twolink_gym
from twolink_gym import env_config as core
from twolink_gym.env import TwoLinkEnv
from twolink_gym.env_config import EnvConfig, EnvConfigError, setting_names
from twolink_gym.params import ArmParams
from twolink_gym.simulation import Simulation
from twolink_gym.vector_env import TwoLinkVectorEnv

#: A valid value other than the default for every setting.
SAMPLES: dict[str, Any] = {
    "task": "balance",
    "task_options": {"ctrl_weight": 0.2},
    "params": {"m1": 1.3},
    "actuation": "pendubot",
    "dt": 0.01,
    "substeps": 3,
    "max_torque": [20.0, 5.0],
    "max_speed": 15.0,
    "randomize": {"m2": [0.9, 1.1]},
    "observation": "angles",
    "obs_noise": 0.02,
    "torque_noise": 0.05,
    "torque_response": 0.5,
    "action_delay": 2,
    "push_rate": 0.25,
}

FIELDS = [f.name for f in dataclasses.fields(EnvConfig)]


def test_the_settings_are_the_fields_of_the_core_config() -> None:
    assert list(setting_names()) == FIELDS
    assert set(SAMPLES) == set(FIELDS)  # a new setting needs a sample here
    for name in FIELDS:
        assert SAMPLES[name] != core.setting_default(name)


@pytest.mark.parametrize("name", FIELDS)
def test_every_front_end_takes_each_setting_by_its_field_name(name: str, tmp_path: Path) -> None:
    value = SAMPLES[name]
    assert getattr(EnvConfig(**{name: value}), name) == value
    # the two envs and the simulation, as keywords
    assert getattr(TwoLinkEnv(**{name: value}).config, name) == value
    assert getattr(TwoLinkVectorEnv(2, **{name: value}).config, name) == value
    expected = Simulation.create(EnvConfig(**{name: value}))
    assert repr(Simulation.create(**{name: value})) == repr(expected)
    assert repr(expected) != repr(Simulation.create())
    # gym.make (JSON-friendly kwargs in the spec)
    env = gym.make("TwoLink-v0", **{name: value})
    assert getattr(env.unwrapped.config, name) == value
    assert env.spec is not None and env.spec.kwargs[name] == value
    env.close()
    # the YAML env: section of a training config
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump({"env": {"task": "reach", name: value}}))
    cfg = training_config.load_eval_config(path)
    assert getattr(cfg.env, name) == value
    assert getattr(cfg.env.env_config(), name) == value
    # a robustness condition varies it by the same name
    base = training_config.EnvConfig(task="reach")
    condition = conditions.Condition("c", "g", {name: value})
    assert getattr(condition.env_config(base), name) == value


def test_the_training_section_adds_only_training_keys() -> None:
    training_fields = {f.name for f in dataclasses.fields(training_config.EnvConfig)}
    extra = training_fields - set(FIELDS)
    assert set(FIELDS) <= training_fields
    # none of the extra keys is an env keyword
    for name in extra:
        with pytest.raises(TypeError, match=name):
            TwoLinkEnv(**{name: None})


def test_a_name_that_is_not_a_setting_is_rejected_everywhere(tmp_path: Path) -> None:
    for make in (
        lambda: TwoLinkEnv(max_torgue=3.0),
        lambda: TwoLinkVectorEnv(2, max_torgue=3.0),
        lambda: Simulation.create(max_torgue=3.0),
    ):
        with pytest.raises(TypeError, match="max_torgue"):
            make()
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump({"env": {"task": "reach", "max_torgue": 3.0}}))
    with pytest.raises(training_config.ConfigError, match=r"env\.max_torgue"):
        training_config.load_eval_config(path)


def test_a_setting_added_to_the_declaration_is_checked_and_accepted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A copy of the class with one more field: the front ends take it with no other change."""
    seen: list[Any] = []

    def check(value: Any, checked: Any) -> Any:
        seen.append(value)
        if value < 0:
            raise ValueError(f"wind must be >= 0, got {value!r}")
        return value

    extended = dataclasses.make_dataclass(
        "EnvConfig",
        [("wind", float, core._setting(0.0, check, "a number >= 0"))],
        bases=(EnvConfig,),
        frozen=True,
    )
    monkeypatch.setattr(core, "EnvConfig", extended)
    assert "wind" in setting_names()
    assert extended(wind=2.0).wind == 2.0
    with pytest.raises(EnvConfigError) as info:
        extended(wind=-1.0)
    assert info.value.key == "wind" and info.value.allowed == "a number >= 0"
    assert extended.from_settings(None, {"wind": 3.0}).wind == 3.0
    assert seen == [2.0, -1.0, 3.0]


# -- errors carry their key as data -------------------------------------------------
@pytest.mark.parametrize(
    ("settings", "key", "allowed"),
    [
        ({"dt": 0}, "dt", "a finite number > 0"),
        ({"actuation": "hexapod"}, "actuation", ["acrobot", "full", "pendubot"]),
        ({"task": "juggle"}, "task", ["balance", "reach", "swingup", "track"]),
        ({"observation": "pixels"}, "observation", ["angles", "state"]),
        ({"max_torque": [30, -1]}, "max_torque", None),
        ({"torque_response": 2.0}, "torque_response", "a number in (0, 1]"),
        ({"action_delay": 0.5}, "action_delay", "an integer >= 0"),
        ({"push_rate": -1.0}, "push_rate", "a number >= 0 (pushes per second)"),
        ({"params": {"m1": -2.0}}, "params.m1", None),
        ({"params": {"l2": 0.5, "lc2": 0.4, "m3": 1}}, "params.m3", None),
        ({"task_options": {"tolerance": -1.0}}, "task_options.tolerance", None),
        ({"task_options": {"fall_angle": 1.0}}, "task_options.fall_angle", None),
        ({"randomize": {"lc2": [0.5, 3.0]}}, "randomize.lc2", None),
        # a constraint between entries: the key is the whole setting
        (
            {"task_options": {"min_target_radius_frac": 0.9, "max_target_radius_frac": 0.5}},
            "task_options",
            "the task's options",
        ),
    ],
)
def test_an_invalid_setting_names_its_key_path(
    settings: dict[str, Any], key: str, allowed: Any
) -> None:
    for make in (lambda: EnvConfig(**settings), lambda: TwoLinkEnv(**settings)):
        with pytest.raises(EnvConfigError) as info:
            make()
        assert info.value.key == key
        if allowed is not None:
            assert info.value.allowed == allowed
        assert isinstance(info.value, ValueError)
    again = pickle.loads(pickle.dumps(info.value))
    assert (again.key, again.allowed, str(again)) == (key, info.value.allowed, str(info.value))


def _fake_positive_number(value: Any, name: str) -> float:
    if value == 0:
        raise ValueError("the control period is too short for any motor")
    return float(value)


def test_the_config_reads_the_key_not_the_message(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Reword the env's message: the config error still names env.dt and the file."""
    from twolink_gym import simulation

    for module in (core, simulation):  # wherever the env's dt check looks the function up
        monkeypatch.setattr(module, "positive_number", _fake_positive_number, raising=False)
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump({"env": {"task": "reach", "dt": 0}}))
    with pytest.raises(training_config.ConfigError) as info:
        training_config.load_eval_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: env.dt")
    assert "the control period is too short for any motor" in message


def test_a_rule_of_the_training_options_is_keyed_as_such(tmp_path: Path) -> None:
    path = tmp_path / "cfg.yaml"
    env = {"task": "swingup", "train_task_options": {"explore_fraction": 2.0}}
    path.write_text(yaml.safe_dump({"env": env}))
    with pytest.raises(training_config.ConfigError) as info:
        training_config.load_eval_config(path)
    assert str(info.value).startswith(f"{path}: env.train_task_options.explore_fraction: ")


# -- keywords and EnvConfig build the same env ---------------------------------------
ROBUST = {
    "task": "swingup",
    "actuation": "acrobot",
    "dt": 0.01,
    "params": {"m2": 1.2},
    "randomize": {"m1": [0.9, 1.1]},
    "obs_noise": 0.01,
    "torque_noise": 0.05,
    "torque_response": 0.7,
    "action_delay": 1,
    "push_rate": 2.0,
}


def _rollout(env: Any, seed: int, actions: np.ndarray) -> list[np.ndarray]:
    obs, _ = env.reset(seed=seed)
    out = [np.asarray(obs, dtype=np.float64)]
    for a in actions:
        obs, reward, _, _, info = env.step(a)
        out += [np.asarray(obs, dtype=np.float64), np.atleast_1d(reward), np.asarray(info["state"])]
    return out


def test_keywords_and_a_config_give_identical_rollouts() -> None:
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, (40, 1))
    config = EnvConfig(**ROBUST)
    by_keywords = _rollout(TwoLinkEnv(**ROBUST), 3, actions)
    by_config = _rollout(TwoLinkEnv(config=config), 3, actions)
    by_gym = _rollout(gym.make("TwoLink-v0", **ROBUST), 3, actions)
    for a, b, c in zip(by_keywords, by_config, by_gym, strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    # the vector env: copy 0 equals the single env with the same seed
    vec_actions = actions[:, None, :].repeat(2, axis=1)
    v_kw = _rollout(TwoLinkVectorEnv(2, **ROBUST), 3, vec_actions)
    v_cfg = _rollout(TwoLinkVectorEnv(2, config=config), 3, vec_actions)
    for a, b in zip(v_kw, v_cfg, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(v_kw[0][0], by_keywords[0])


def test_a_config_with_keywords_over_it_and_pickling() -> None:
    config = EnvConfig(task="balance", dt=0.01)
    env = TwoLinkEnv(config=config, torque_noise=0.1)
    assert env.config == config.replace(torque_noise=0.1)
    assert env.dt == 0.01 and env.task.name == "balance"
    assert TwoLinkEnv("reach", config=config).task.name == "reach"
    again = pickle.loads(pickle.dumps(env))
    assert again.config == env.config
    np.testing.assert_array_equal(again.reset(seed=1)[0], env.reset(seed=1)[0])
    # objects pass through as the settings they are
    arm = ArmParams(m1=1.5)
    assert TwoLinkEnv(params=arm).params == arm == TwoLinkEnv(params={"m1": 1.5}).params
    assert twolink_gym.TwoLinkEnv(params=None).params == ArmParams()
