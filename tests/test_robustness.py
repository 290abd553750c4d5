"""``twolink robustness``: the conditions, the score's arithmetic, and the command.

The score and table are checked against hand computations on a small made-up
result; the conditions against parameters computed here from ``ArmParams``'
defaults; the nominal condition against ``evaluate`` on the same episodes; the
episodes run under a shorter arm against the targets' radii computed here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from twolink_gym.training import evaluate as evaluate_module
from twolink_gym.training.cli import main
from twolink_gym.training.conditions import (
    MODEL_FIELDS,
    PERTURBATIONS,
    Condition,
    build_conditions,
    parse_levels,
)
from twolink_gym.training.config import EnvConfig, RunConfig, config_from_dict
from twolink_gym.training.evaluate import EpisodeSet, draw_episodes, evaluate_policies
from twolink_gym.training.policies import LoadedPolicy, load_policy
from twolink_gym.training.robustness import (
    PolicyRobustness,
    RobustnessResult,
    _pct,
    feasible_episodes,
    group_scores,
    markdown_table,
    robustness,
    robustness_score,
    run_conditions,
    score_table,
)

from twolink_gym.params import ArmParams
from twolink_gym.vector_env import TwoLinkVectorEnv


def config_data(task: str = "balance", episodes: int = 4, **env: object) -> dict[str, object]:
    return {
        "env": {"task": task, **env},
        "algo": {"name": "ppo"},
        "train": {"total_timesteps": 10, "output_dir": "unused"},
        "evaluate": {"episodes": episodes, "seed": 500},
    }


def config(task: str = "balance", episodes: int = 4, **env: object) -> RunConfig:
    return config_from_dict(config_data(task, episodes, **env), "test")


# -- the score ------------------------------------------------------------------
CONDITIONS = [
    Condition("nominal", "nominal", {}),
    Condition("a", "model", {}),
    Condition("b", "model", {}),
    Condition("c", "noise", {}),
    Condition("d", "delay", {}),
]


def test_percentages_never_show_a_near_miss_as_100() -> None:
    assert [_pct(x) for x in (None, 0.0, 1.0, 0.25, 0.995, 0.004, 0.996)] == [
        "–",
        "0%",
        "100%",
        "25%",
        "99.5%",
        "0.4%",
        "99.6%",
    ]


def test_group_scores_and_score_by_hand() -> None:
    rates = {"nominal": 1.0, "a": 0.5, "b": 1.0, "c": 0.2, "d": None}
    groups = group_scores(rates, CONDITIONS)
    # model: (0.5 + 1.0) / 2; noise: 0.2; delay skipped; nominal not scored
    assert groups == pytest.approx({"model": 0.75, "noise": 0.2})
    assert robustness_score(groups) == pytest.approx((0.75 + 0.2) / 2)
    assert robustness_score({}) is None


def test_the_table_by_hand() -> None:
    episodes = EpisodeSet(np.zeros((4, 4)), np.zeros((4, 0)), seed=9)
    ok = np.array([True, True, True, True])
    p1 = PolicyRobustness(
        "p1",
        "controller",
        {
            "nominal": ok,
            "a": np.array([True, False, False, False]),
            "b": np.array([True, True, False, False]),
            "c": np.array([False, False, False, False]),
            "d": ok,
        },
        {},
        0.0,
    )
    p2 = PolicyRobustness(
        "p2", "agent", {"nominal": ok, "a": ok, "b": ok, "c": ok}, {"d": "no angles"}, 0.0
    )
    result = RobustnessResult("balance", episodes, CONDITIONS, [p1, p2], {})
    table = markdown_table(result)
    lines = table.splitlines()
    assert lines[0] == "| condition | group | p1 | p2 |"
    assert "| a | model | 25% | 100% |" in lines
    assert "| d | delay | 100% | – |" in lines
    # p1: model (0.25 + 0.5) / 2 = 0.375, noise 0, delay 1 -> (0.375 + 0 + 1) / 3
    assert "| **model (group score)** | | 38% | 100% |" in lines
    assert "| **robustness score** | | **0.458** | **1.000 (2/3 groups)** |" in lines
    assert "- p2, d: skipped: no angles" in lines
    scores = score_table(result.to_dict()).splitlines()
    assert scores[0] == "| policy | nominal | model | noise | delay | robustness score |"
    assert scores[2] == "| p1 | 100% | 38% | 0% | 100% | **0.458** |"
    assert scores[3] == "| p2 | 100% | 100% | 100% | – | **1.000 (2/3 groups)** |"
    data = result.to_dict()
    assert data["policies"][0]["score"] == pytest.approx((0.375 + 0.0 + 1.0) / 3)
    assert data["policies"][1]["group_scores"] == {"model": 1.0, "noise": 1.0}


# -- the conditions ------------------------------------------------------------
def test_model_conditions_scale_one_parameter_of_the_true_arm() -> None:
    cfg = config(params={"m2": 2.0})
    conditions = build_conditions(cfg.env, ["model"], {"model": [0.5, 1.5]})
    assert [c.name for c in conditions][:3] == ["nominal", "m1 ×0.5", "m1 ×1.5"]
    assert len(conditions) == 1 + 2 * len(MODEL_FIELDS)
    defaults = ArmParams()
    for c in conditions[1:]:
        field, factor = c.name.split(" ×")
        arm = TwoLinkVectorEnv(1, **c.env_config(cfg.env).make_kwargs()).sim.params
        nominal = 2.0 if field == "m2" else getattr(defaults, field)
        expected = {**defaults.to_dict(), "m2": 2.0, field: nominal * float(factor)}
        assert arm.to_dict() == pytest.approx(expected), c.name


def test_a_controller_keeps_the_nominal_model_while_the_arm_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cfg = config(episodes=3)
    built: list[ArmParams] = []
    original = evaluate_module._vector_env

    def spy(env_cfg: EnvConfig, n: int) -> TwoLinkVectorEnv:
        venv = original(env_cfg, n)
        built.append(venv.sim.params)
        return venv

    monkeypatch.setattr(evaluate_module, "_vector_env", spy)
    seen: list[tuple[ArmParams, np.ndarray]] = []
    from twolink_gym.controllers import LQRController

    predict = LQRController.predict

    def record(self: LQRController, *args: Any, **kwargs: Any) -> Any:
        seen.append((self.params, self.design.k.copy()))
        return predict(self, *args, **kwargs)

    monkeypatch.setattr(LQRController, "predict", record)
    result = robustness(cfg, ["lqr"], kinds=["model"], levels={"model": [1.3]})
    # the episode set is drawn on the nominal arm, then one env per condition,
    # each with its own true arm
    names = [c.name for c in result.conditions]
    assert len(built) == 1 + len(names)
    built = built[1:]
    assert built[0] == ArmParams()
    assert built[names.index("m1 ×1.3")] == ArmParams(m1=1.3)
    assert built[names.index("l2 ×1.3")] == ArmParams(l2=1.3)
    # the controller's model and gains never change
    nominal = LQRController.from_env(TwoLinkVectorEnv(1, task="balance"))
    assert seen
    for params, gain in seen:
        assert params == ArmParams()
        np.testing.assert_array_equal(gain, nominal.design.k)


def test_the_nominal_condition_reproduces_evaluate() -> None:
    # short reach episodes: the controllers succeed in some episodes and not others
    cfg = config("reach", episodes=12, max_episode_steps=60)
    _, expected = evaluate_policies(["auto"], cfg)
    assert any(0 < r.success.mean() < 1 for r in expected)
    result = robustness(cfg, ["auto"], kinds=["model"], levels={"model": [1.1]})
    for r, p in zip(expected, result.policies, strict=True):
        assert p.label == r.label
        np.testing.assert_array_equal(p.success["nominal"], r.success)


def test_episodes_out_of_the_true_arms_reach_are_not_run() -> None:
    cfg = config("reach", episodes=40)
    episodes = draw_episodes(cfg.env, 40, 500)
    radius = np.hypot(episodes.goals[:, 0], episodes.goals[:, 1])
    # l1 x0.7: the workspace is 0.3 m <= r <= 1.7 m
    reachable = (radius <= 1.7) & (radius >= 0.3)
    assert 0 < reachable.sum() < 40
    short = config("reach", params={"l1": 0.7}).env
    np.testing.assert_array_equal(feasible_episodes(short, episodes), reachable)
    assert feasible_episodes(config().env, draw_episodes(config().env, 3, 0)).all()
    result = robustness(cfg, ["pd_gravity"], kinds=["model"], levels={"model": [0.7]})
    np.testing.assert_array_equal(result.feasible["l1 ×0.7"], reachable)
    assert result.policies[0].success["l1 ×0.7"].shape == (reachable.sum(),)
    assert result.policies[0].success["nominal"].shape == (40,)
    table = markdown_table(result)
    assert (
        f"| l1 ×0.7 | model | {100 * result.policies[0].success['l1 ×0.7'].mean():.0f}% | {reachable.sum()} |"
        in table
    )


def test_each_condition_sets_its_env_model() -> None:
    base = config().env
    conditions = {
        c.name: c.env_config(base)
        for c in build_conditions(base, [n for n in PERTURBATIONS if n != "model"])
    }
    assert conditions["nominal"] == base
    envs = {name: TwoLinkVectorEnv(2, **cfg.make_kwargs()) for name, cfg in conditions.items()}
    assert envs["nominal"].actuator_model is None and envs["nominal"].observation_model is None
    noise = envs["obs_noise 0.05"].observation_model
    assert noise is not None and 0.05 in noise.noise
    act = envs["torque_noise 0.1"].actuator_model
    assert act is not None and (act.noise, act.response, act.delay) == (0.1, 1.0, 0)
    act = envs["torque_response 0.25"].actuator_model
    assert act is not None and (act.noise, act.response, act.delay) == (0.0, 0.25, 0)
    act = envs["action_delay 2"].actuator_model
    assert act is not None and (act.noise, act.response, act.delay) == (0.0, 1.0, 2)
    assert envs["observation angles"].observation_kind == "angles"
    # the true arm of every one of these is the nominal arm
    assert all(env.sim.params == ArmParams() for env in envs.values())


def test_noise_conditions_are_reproducible_and_the_config_noise_is_not_nominal() -> None:
    # pd_gravity balances in every episode without noise, in some with obs_noise 0.01
    noisy = config(episodes=8, obs_noise=0.05, torque_noise=0.05)
    runs = [
        robustness(noisy, ["pd_gravity"], kinds=["obs_noise"], levels={"obs_noise": [0.01]})
        for _ in range(2)
    ]
    first, second = (r.policies[0].success for r in runs)
    assert 0 < first["obs_noise 0.01"].mean() < 1
    np.testing.assert_array_equal(first["obs_noise 0.01"], second["obs_noise 0.01"])
    # the config's own noise is not part of the nominal condition
    _, expected = evaluate_policies(["pd_gravity"], config(episodes=8))
    assert expected[0].success.all()
    np.testing.assert_array_equal(first["nominal"], expected[0].success)


class AnyObservation:
    """A policy that takes observations of any width (zero torque)."""

    def predict(self, obs: Any, state: Any = None, episode_start: Any = None, **_: Any) -> Any:
        return np.zeros((np.atleast_2d(obs).shape[0], 2), dtype=np.float32), state


def test_angles_only_a_controller_estimates_speeds_and_other_policies_run_or_skip() -> None:
    base = config(episodes=8).env
    env = TwoLinkVectorEnv(1, **base.make_kwargs())
    conditions = build_conditions(base, ["observation"])
    episodes = draw_episodes(base, 8, 500)
    feasible = {c.name: np.ones(8, dtype=bool) for c in conditions}
    pd = load_policy("pd_gravity", base, env)
    result = run_conditions(pd, base, episodes, conditions, feasible)
    assert not result.skipped and set(result.success) == {"nominal", "observation angles"}
    # the same as evaluating PD+G built on an angles-only env (speeds estimated),
    # which balances in some of these episodes and not in others
    _, direct = evaluate_policies(["pd_gravity"], config(episodes=8, observation="angles"))
    assert 0 < direct[0].success.mean() < 1
    np.testing.assert_array_equal(result.success["observation angles"], direct[0].success)
    assert result.success["nominal"].all()
    assert pd.predictor.observation_kind == "state"  # back to the nominal observation
    assert pd.predictor.params == ArmParams()
    runs = run_conditions(
        LoadedPolicy("any", "agent", AnyObservation()), base, episodes, conditions, feasible
    )
    assert set(runs.success) == {"nominal", "observation angles"} and not runs.skipped


# -- bad input -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("kinds", "levels", "message"),
    [
        (["wind"], None, "unknown condition 'wind'"),
        (["model"], {"model": [-1.0]}, "--levels model: level -1.0 must be a finite factor > 0"),
        (["model"], {"model": []}, "at least one level"),
        (["model"], {"obs_noise": [0.1]}, "not among the chosen conditions"),
        (["model"], {"model": [3.0]}, "factor 3.0 on lc1 gives an invalid arm"),
    ],
)
def test_bad_conditions_and_levels(
    kinds: list[str], levels: dict[str, list[float]] | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        build_conditions(config().env, kinds, levels)


def test_parse_levels() -> None:
    assert parse_levels(["model=0.7, 1.3", "action_delay=1"]) == {
        "model": [0.7, 1.3],
        "action_delay": [1.0],
    }
    with pytest.raises(ValueError, match="must look like NAME=V1,V2"):
        parse_levels(["model"])
    with pytest.raises(ValueError, match="unknown condition 'mass'"):
        parse_levels(["mass=1.2"])
    with pytest.raises(ValueError, match="'x' is not a number"):
        parse_levels(["model=0.8,x"])


# -- the command ---------------------------------------------------------------
def test_cli_end_to_end_and_its_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg_path = tmp_path / "cfg.yaml"
    cfg_path.write_text(yaml.safe_dump(config_data("balance", episodes=3)))
    out = tmp_path / "rob"
    args = [
        "robustness",
        str(cfg_path),
        "lqr",
        "pd_gravity",
        "--conditions",
        "model",
        "--levels",
        "model=0.5",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "| condition | group | lqr | pd_gravity |" in printed
    data = json.loads((out / "robustness.json").read_text())
    assert data["episodes"] == 3
    assert [p["policy"] for p in data["policies"]] == ["lqr", "pd_gravity"]
    names = [c["name"] for c in data["conditions"]]
    assert names == ["nominal", *(f"{f} ×0.5" for f in MODEL_FIELDS)]
    for p in data["policies"]:
        rates = [p["success"][n] for n in names[1:]]
        assert p["score"] == pytest.approx(np.mean(rates))  # one group: the mean
    timing = json.loads((out / "timing.json").read_text())
    assert timing["machine"]["cpus"] >= 1 and set(timing["wall_time_s"]) == {"lqr", "pd_gravity"}
    assert "machine" not in data  # the results hold nothing that differs between runs
    assert (out / "table.md").read_text().count("\n| ") >= len(names)
    assert (out / "robustness.png").stat().st_size > 1000
    # an existing result is kept unless --overwrite
    before = (out / "robustness.json").read_text()
    assert main(args) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert (out / "robustness.json").read_text() == before
    # a re-run reproduces the results file byte for byte
    assert main([*args, "--overwrite"]) == 0
    assert (out / "robustness.json").read_text() == before
    assert main([*args, "--overwrite"]) == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["nosuch"], "policy 'nosuch' is neither a controller"),
        (["lqr", "--conditions", "wind"], "unknown condition 'wind'"),
        (["lqr", "--levels", "model=0"], "--levels model: level 0.0 must be a finite factor > 0"),
        (["lqr", "--levels", "model"], "must look like NAME=V1,V2"),
        (["impedance"], "does not apply to task 'balance'"),
    ],
)
def test_cli_bad_input_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    cfg_path = tmp_path / "cfg.yaml"
    cfg_path.write_text(yaml.safe_dump(config_data("balance", episodes=2)))
    out = tmp_path / "rob"
    assert main(["robustness", str(cfg_path), *extra, "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("agent", ["pretrained:reach_sac", "pretrained:reach_ppo"])
def test_a_shipped_agent_is_skipped_on_angles_only_and_runs_nominally(agent: str) -> None:
    # reach_sac acts through the goal-conditioned view, reach_ppo through VecNormalize:
    # each fails in its own way on 8 entries instead of 10
    result = robustness(config("reach", episodes=2), [agent], kinds=["observation"])
    policy = result.policies[0]
    assert set(policy.success) == {"nominal"}
    assert policy.success["nominal"].shape == (2,)
    assert (
        "acts on observations of shape (10,), this condition gives (8,)"
        in (policy.skipped["observation angles"])
    )
