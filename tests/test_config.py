"""Config loading: every shipped config is valid; every kind of bad file is rejected clearly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from twolink_gym.training.config import (
    AlgoConfig,
    ConfigError,
    EnvConfig,
    EvalConfig,
    EvaluateConfig,
    RunConfig,
    TrainConfig,
    config_from_dict,
    load_config,
    load_eval_config,
)

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
REQUIRED_CONFIGS = ["reach_ppo", "reach_sac", "balance_ppo", "balance_sac", "default"]

VALID: dict[str, dict[str, Any]] = {
    "env": {"task": "reach", "max_torque": [30, 10]},
    "algo": {"name": "ppo", "hyperparams": {"n_steps": 64, "policy_kwargs": {"net_arch": [8]}}},
    "train": {"total_timesteps": 1000, "n_envs": 2, "seed": 1},
}


def write(tmp_path: Path, data: object, name: str = "cfg.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return path


def with_change(section: str, key: str, value: object) -> dict:
    data = {k: dict(v) for k, v in VALID.items()}
    data[section][key] = value
    return data


@pytest.mark.parametrize("name", REQUIRED_CONFIGS)
def test_shipped_configs_load(name: str) -> None:
    cfg = load_config(CONFIGS / f"{name}.yaml")
    assert isinstance(cfg, RunConfig)
    assert cfg.env.task in ("reach", "balance")
    assert cfg.algo.name in ("ppo", "sac")
    assert cfg.train.total_timesteps > 0


def test_every_yaml_in_configs_loads() -> None:
    files = sorted(CONFIGS.glob("*.yaml"))
    assert len(files) >= len(REQUIRED_CONFIGS)
    for path in files:
        load_config(path)


def test_shipped_configs_cover_both_tasks_and_algorithms() -> None:
    cfgs = [load_config(CONFIGS / f"{n}.yaml") for n in REQUIRED_CONFIGS]
    pairs = {(c.env.task, c.algo.name) for c in cfgs}
    assert {("reach", "ppo"), ("reach", "sac"), ("balance", "ppo"), ("balance", "sac")} <= pairs


def test_values_and_defaults_are_typed(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, VALID))
    assert cfg.env == EnvConfig(task="reach", max_torque=[30.0, 10.0])
    assert all(isinstance(x, float) for x in cfg.env.max_torque)  # ints promoted to floats
    assert cfg.algo == AlgoConfig(
        name="ppo", hyperparams={"n_steps": 64, "policy_kwargs": {"net_arch": [8]}}
    )
    assert cfg.train == TrainConfig(total_timesteps=1000, n_envs=2, seed=1)
    assert cfg.evaluate.controllers == ["auto"]
    assert cfg.run_dir == Path("runs") / "reach_ppo_s1"


def test_resolved_config_round_trips(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, VALID))
    again = config_from_dict(yaml.safe_load(yaml.safe_dump(cfg.to_dict())), "again")
    assert again.to_dict() == cfg.to_dict()


@pytest.mark.parametrize(
    ("data", "fragments"),
    [
        ({**VALID, "extra": {}}, ["unknown section", "extra"]),
        (with_change("env", "torque_limit", 5), ["env.torque_limit", "unknown key"]),
        (with_change("train", "timesteps", 5), ["train.timesteps"]),
        (with_change("algo", "hyperparams", {"n_step": 64}), ["algo.hyperparams", "n_step"]),
        (with_change("algo", "hyperparams", {"seed": 3}), ["algo.hyperparams", "seed"]),
    ],
)
def test_unknown_keys_are_errors(tmp_path: Path, data: dict, fragments: list[str]) -> None:
    path = write(tmp_path, data)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    for fragment in [*fragments, str(path)]:
        assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("section", "key"),
    [("env", "task"), ("algo", "name"), ("train", "total_timesteps")],
)
def test_missing_required_key(tmp_path: Path, section: str, key: str) -> None:
    data = {k: dict(v) for k, v in VALID.items()}
    del data[section][key]
    path = write(tmp_path, data)
    with pytest.raises(ConfigError, match=rf"missing required key '{section}\.{key}'") as info:
        load_config(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("section", ["env", "algo", "train"])
def test_missing_section(tmp_path: Path, section: str) -> None:
    data = {k: v for k, v in VALID.items() if k != section}
    with pytest.raises(ConfigError, match=f"missing required section '{section}'"):
        load_config(write(tmp_path, data))


@pytest.mark.parametrize(
    ("section", "key", "value", "expected"),
    [
        ("train", "n_envs", "8", "train.n_envs must be an integer"),
        ("train", "seed", 1.5, "train.seed must be an integer"),
        ("train", "total_timesteps", True, "train.total_timesteps must be an integer"),
        ("env", "normalize_obs", "yes", "env.normalize_obs must be true or false"),
        ("env", "max_torque", "strong", "env.max_torque must be a number or a list, got 'strong'"),
        ("env", "max_torque", [30, "ten"], r"env.max_torque\[1\] must be a number"),
        ("env", "dt", None, "env.dt must be a number"),
        ("env", "params", [1, 2], "env.params must be a mapping"),
        ("algo", "name", 3, "algo.name must be a string"),
        ("algo", "hyperparams", "lr=3", "algo.hyperparams must be a mapping"),
    ],
)
def test_wrong_types(tmp_path: Path, section: str, key: str, value: object, expected: str) -> None:
    path = write(tmp_path, with_change(section, key, value))
    with pytest.raises(ConfigError, match=expected) as info:
        load_config(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("section", "key", "value", "expected"),
    [
        ("env", "task", "juggle", "env.task must be one of"),
        ("algo", "name", "dqn", "algo.name must be one of"),
        ("env", "vectorization", "subproc", "env.vectorization must be"),
        ("env", "max_torque", [1, 2, 3], r"env\.max_torque: max_torque must be a number or a pair"),
        ("train", "n_envs", 0, "train.n_envs must be >= 1"),
        ("train", "eval_freq", -1, "train.eval_freq must be >= 0"),
    ],
)
def test_invalid_values(
    tmp_path: Path, section: str, key: str, value: object, expected: str
) -> None:
    with pytest.raises(ConfigError, match=expected):
        load_config(write(tmp_path, with_change(section, key, value)))


@pytest.mark.parametrize("text", ["env: [unclosed", "- just\n- a list\n", "42\n", ""])
def test_not_a_config_file(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_config(tmp_path / "nope.yaml")


def test_section_that_is_not_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="section 'train' must be a mapping"):
        load_config(write(tmp_path, {**VALID, "train": [1, 2]}))


def test_overrides(tmp_path: Path) -> None:
    path = write(tmp_path, VALID)
    cfg = load_config(
        path,
        [
            "train.seed=3",
            "env.normalize_obs=false",
            "algo.hyperparams.learning_rate=1.0e-3",
            "env.task_options={tolerance: 0.1}",
        ],
    )
    assert cfg.train.seed == 3
    assert cfg.env.normalize_obs is False
    assert cfg.algo.hyperparams["learning_rate"] == pytest.approx(1e-3)
    assert cfg.algo.hyperparams["n_steps"] == 64  # untouched sibling
    assert cfg.env.task_options == {"tolerance": 0.1}
    assert "overrides" in cfg.source


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("train.seed", "section.key=value"),
        ("seed=3", "section and a key"),
        ("train.seed=abc", "train.seed must be an integer"),
        ("train.sed=3", "train.sed"),
        ("train.seed.x=3", "'seed' is not a section"),
        ("algo.hyperparams.learning_rate=1e-3", "YAML reads exponents"),
    ],
)
def test_bad_overrides(tmp_path: Path, override: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        load_config(write(tmp_path, VALID), [override])


@pytest.mark.parametrize(
    ("section", "key", "value", "expected"),
    [
        # the arm: the error names the key path, as for every other key
        ("env", "params", {"m1": -2.0}, r"env\.params\.m1: ArmParams\.m1 must be > 0, got -2\.0"),
        ("env", "params", {"lc2": 1.5}, r"env\.params\.lc2: .*lc2 must satisfy 0 < lc2 <= l2"),
        ("env", "params", {"I1": -0.1}, r"env\.params\.I1: .*I1 must be >= 0"),
        (
            "env",
            "params",
            {"m3": 1.0},
            r"env\.params\.m3: unknown ArmParams field\(s\) 'm3'; valid fields are \['m1'",
        ),
        # the task's options
        (
            "env",
            "task_options",
            {"tolerance": -1},
            r"env\.task_options\.tolerance: .*tolerance must be > 0",
        ),
        (
            "env",
            "task_options",
            {"sparse": 2},
            r"env\.task_options\.sparse: .*sparse must be True or False",
        ),
        (
            "env",
            "task_options",
            {"fall_angle": 1},
            r"env\.task_options\.fall_angle: unknown option\(s\) \['fall_angle'\].*valid options",
        ),
        (
            "env",
            "task_options",
            {"min_target_radius_frac": 0.9, "max_target_radius_frac": 0.5},
            "env.task_options: reach task options must satisfy",
        ),
        # the env built from them
        ("env", "dt", 0, r"env\.dt: dt must be a finite number > 0"),
        ("env", "max_torque", [30, -1], r"env\.max_torque: max_torque must be"),
        ("env", "max_episode_steps", 0, "env.max_episode_steps must be >= 1"),
        ("env", "id", "NoSuchEnv-v0", "env.id must be a registered Gymnasium id"),
        ("train", "run_name", "a/b", "train.run_name must be a plain folder name"),
        ("train", "run_name", "..", "train.run_name must be a plain folder name"),
    ],
)
def test_environment_values_name_the_key_path_and_the_file(
    tmp_path: Path, section: str, key: str, value: object, expected: str
) -> None:
    path = write(tmp_path, with_change(section, key, value))
    with pytest.raises(ConfigError, match=expected) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: ")


def test_an_empty_reach_target_range_is_a_config_error(tmp_path: Path) -> None:
    # a long first link: every target in the range would lie inside the unreachable disc
    data = with_change("env", "params", {"l1": 1.0, "l2": 0.1, "lc2": 0.05})
    data["env"]["task_options"] = {"max_target_radius_frac": 0.5}
    path = write(tmp_path, data)
    with pytest.raises(ConfigError, match="env: reach targets have an empty radius range") as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_one_max_torque_number_is_both_joints(tmp_path: Path) -> None:
    from twolink_gym.env import TwoLinkEnv

    # as TwoLinkEnv takes it: a number is the limit of both joints
    direct = TwoLinkEnv(task="reach", max_torque=12).sim.max_torque
    for cfg in (
        load_config(write(tmp_path, with_change("env", "max_torque", 12))),
        load_config(write(tmp_path, VALID), ["env.max_torque=12"]),
    ):
        assert cfg.env.max_torque == 12.0
        assert cfg.env.resolved_max_torque == tuple(direct) == (12.0, 12.0)
        assert list(TwoLinkEnv(**cfg.env.make_kwargs()).sim.max_torque) == list(direct)
    with pytest.raises(
        ConfigError, match=r"env\.max_torque: max_torque must be a number or a pair of numbers > 0"
    ):
        load_config(write(tmp_path, VALID), ["env.max_torque=-3"])


def test_an_evaluation_config_needs_only_env(tmp_path: Path) -> None:
    path = write(tmp_path, {"env": {"task": "balance"}, "evaluate": {"episodes": 7}})
    cfg = load_eval_config(path)
    assert type(cfg) is EvalConfig
    assert cfg.env == EnvConfig(task="balance")
    assert cfg.evaluate == EvaluateConfig(episodes=7)
    assert str(cfg.output_dir) == "runs"
    assert load_eval_config(write(tmp_path, {"env": {"task": "reach"}}, "e.yaml")).evaluate == (
        EvaluateConfig()
    )
    # training still needs algo and train, and says why
    with pytest.raises(ConfigError, match=f"{path}: missing required section 'algo'") as info:
        load_config(path)
    assert "evaluate, compare, record and robustness need only env:" in str(info.value)
    # a training config evaluates as the RunConfig it is, checked whole
    full = load_eval_config(write(tmp_path, VALID, "full.yaml"))
    assert isinstance(full, RunConfig) and full.algo.name == "ppo"
    assert str(full.output_dir) == "runs"
    half = write(tmp_path, {"env": {"task": "balance"}, "algo": {"name": "ppo"}}, "half.yaml")
    with pytest.raises(ConfigError, match="missing required section 'train'"):
        load_eval_config(half)
    for data, expected in [
        (
            {"env": {"task": "balance"}, "evaluate": {"episodes": 0}},
            "evaluate.episodes must be >= 1",
        ),
        ({"env": {"task": "juggle"}}, "env.task must be one of"),
        ({"env": {"task": "balance"}, "train2": {}}, r"unknown section\(s\) \['train2'\]"),
        ({"evaluate": {"episodes": 3}}, "missing required section 'env'"),
    ]:
        bad = write(tmp_path, data, "bad.yaml")
        with pytest.raises(ConfigError, match=expected) as info:
            load_eval_config(bad)
        assert str(info.value).startswith(f"{bad}: ")


def test_a_run_config_writes_its_sections_in_order() -> None:
    cfg = config_from_dict(VALID)
    assert list(cfg.to_dict()) == ["env", "algo", "train", "evaluate"]


# -- hyperparameter values: checked before anything is built (#43) -----------------------
def _ppo(**hyperparams: object) -> dict:
    data = {k: dict(v) for k, v in VALID.items()}
    data["algo"] = {"name": "ppo", "hyperparams": {"n_steps": 64, **hyperparams}}
    return data


@pytest.mark.parametrize(
    ("hyperparams", "key", "allowed"),
    [
        ({"learning_rate": "fast"}, "learning_rate", "a number > 0 or a linear schedule"),
        ({"clip_range": "abc"}, "clip_range", "a number > 0 or a linear schedule"),
        ({"n_steps": 0}, "n_steps", "an integer >= 1"),
        ({"policy_kwargs": {"net_arch": [64, -64]}}, "policy_kwargs.net_arch", "layer widths"),
        ({"gamma": 1.5}, "gamma", "a number in [0, 1]"),
        ({"gae_lambda": -0.1}, "gae_lambda", "a number in [0, 1]"),
        ({"n_epochs": 2.5}, "n_epochs", "an integer"),
        ({"normalize_advantage": "yes"}, "normalize_advantage", "true or false"),
        # 2 envs x 64 steps = a rollout of 128 steps
        ({"batch_size": 256}, "batch_size", "in [2, 128]"),
    ],
)
def test_bad_hyperparameter_values_name_key_file_and_allowed_values(
    tmp_path: Path, hyperparams: dict, key: str, allowed: str
) -> None:
    path = write(tmp_path, _ppo(**hyperparams))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: algo.hyperparams.{key} must be ")
    assert allowed in message


def test_bad_hyperparameter_from_an_override_names_it(tmp_path: Path) -> None:
    path = write(tmp_path, _ppo())
    with pytest.raises(ConfigError, match=r"algo\.hyperparams\.clip_range must be .*'abc'"):
        load_config(path, ["algo.hyperparams.clip_range=abc"])


@pytest.mark.parametrize(
    ("name", "hyperparams"),
    [
        ("ppo", {"gamma": 1.0, "gae_lambda": 0.0, "batch_size": 128, "clip_range": "lin_0.2"}),
        ("ppo", {"policy_kwargs": {"net_arch": {"pi": [8], "vf": [16, 16]}}, "target_kl": None}),
        ("sac", {"ent_coef": "auto", "train_freq": [1, "episode"], "gradient_steps": -1}),
        ("sac", {"ent_coef": "auto_0.1", "tau": 1.0, "learning_starts": 0}),
        ("sac", {"ent_coef": 0.01, "batch_size": 512, "buffer_size": 10}),
    ],
)
def test_edge_hyperparameter_values_are_accepted(
    tmp_path: Path, name: str, hyperparams: dict
) -> None:
    data = _ppo()
    data["algo"] = {"name": name, "hyperparams": hyperparams}
    if name == "ppo":
        data["algo"]["hyperparams"]["n_steps"] = 64
    assert load_config(write(tmp_path, data)).algo.hyperparams == data["algo"]["hyperparams"]


def test_sac_takes_no_auto_entropy_for_ppo(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"ent_coef must be a number >= 0"):
        load_config(write(tmp_path, _ppo(ent_coef="auto")))


def test_shipped_on_policy_configs_train_whole_rollouts() -> None:
    # SB3's learn collects whole rollouts (n_steps x n_envs): a total that is not a whole
    # number of them is rounded up with a warning, and resumes end elsewhere. Configs with
    # a lin_<x> schedule keep the total they were trained with: it sets the schedule's length.
    checked = []
    for path in sorted(CONFIGS.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        hyperparams = data["algo"].get("hyperparams", {})
        if data["algo"]["name"] not in ("ppo", "sbx_ppo"):
            continue
        if any(str(v).startswith("lin_") for v in hyperparams.values()):
            continue
        rollout = hyperparams.get("n_steps", 2048) * data["train"].get("n_envs", 8)
        assert data["train"]["total_timesteps"] % rollout == 0, path.name
        checked.append(path.stem)
    assert {"reach_ppo", "default", "balance_ppo", "swingup_ppo"} <= set(checked)
