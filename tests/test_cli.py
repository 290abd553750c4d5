"""The evaluation commands of ``twolink``: where the environment and the results come from.

``evaluate``, ``compare``, ``record`` and ``robustness`` take their environment
from a config, ``--task`` or an agent that carries its config; they write beside
the run they evaluate (or under ``runs/<command>/<name>``), never into a run
folder that does not exist, and nothing when they fail. ``twolink agents``
lists the shipped agents. Every command runs in a temporary working folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from twolink_gym.training.cli import main
from twolink_gym.training.commands import _setup as sources

from twolink_gym import pretrained
from twolink_gym.controllers import CONTROLLERS

TINY_PPO = {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "policy_kwargs": {"net_arch": [8]}}


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")


def training_config(tmp_path: Path, name: str = "cfg.yaml", **train: object) -> Path:
    """A training config of a tiny PPO run on balance, its runs under ``runs/`` (relative)."""
    data = {
        "env": {"task": "balance"},
        "algo": {"name": "ppo", "hyperparams": TINY_PPO},
        "train": {
            "total_timesteps": 64,
            "n_envs": 2,
            "seed": 7,
            "eval_freq": 0,
            "checkpoint_freq": 0,
            "progress_bar": False,
            **train,
        },
        "evaluate": {"episodes": 2, "seed": 500},
    }
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


# -- where results go ----------------------------------------------------------------
def test_results_go_beside_the_run_they_evaluate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = training_config(tmp_path)
    assert main(["train", str(path), "--set", "train.run_name=ux"]) == 0
    run = Path("runs/ux")
    own_run = Path("runs/balance_ppo_s7")  # the config's own run folder: never created
    assert main(["evaluate", str(path), str(run), "lqr", "--episodes", "2"]) == 0
    summary = json.loads((run / "evaluation" / "summary.json").read_text())
    assert [p["policy"] for p in summary["policies"]] == ["ppo (ux)", "lqr"]
    assert main(["compare", str(path), str(run / "model.zip"), "--no-trajectories"]) == 0
    assert (run / "compare" / "table.md").is_file()
    args = ["robustness", str(path), str(run), "--conditions", "action_delay"]
    assert main([*args, "--levels", "action_delay=1"]) == 0
    assert (run / "robustness" / "robustness.json").is_file()
    assert not own_run.exists()
    # the run's own config needs no other config
    assert main(["evaluate", str(run / "config.yaml"), str(run), "--episodes", "2"]) == 0
    assert main(["evaluate", str(run), "--episodes", "2", "--json"]) == 0
    assert (
        "results (summary.json, per-episode CSV) in runs/ux/evaluation" in capsys.readouterr().out
    )
    assert sorted(p.name for p in Path("runs").iterdir()) == ["ux"]


def test_controllers_and_shipped_agents_write_under_runs_and_training_still_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = training_config(tmp_path, "balance_tiny.yaml")
    args = ["evaluate", str(path), "pretrained:balance_ppo", "lqr", "--episodes", "2"]
    assert main(args) == 0
    out = Path("runs/evaluate/balance_tiny")
    assert (out / "summary.json").is_file()
    assert sorted(p.name for p in Path("runs").iterdir()) == ["evaluate"]
    assert main(["compare", str(path), "pretrained:balance_ppo", "--controllers", "lqr"]) == 0
    assert (Path("runs/compare/balance_tiny") / "table.md").is_file()
    # the config's run folder was never created: training it needs no --overwrite
    capsys.readouterr()
    assert main(["train", str(path)]) == 0
    assert Path("runs/balance_ppo_s7/model.zip").is_file()


def test_a_failed_command_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = training_config(tmp_path)
    before = files_under(tmp_path)
    # the config's run was never trained: nothing to compare
    assert main(["compare", str(path)]) == 2
    err = capsys.readouterr().err
    assert "runs/balance_ppo_s7 holds no model.zip" in err and "twolink train" in err
    assert main(["evaluate", str(path), "lqr", "nosuch", "--episodes", "2"]) == 2
    assert main(["robustness", str(path), "lqr", "--conditions", "wind"]) == 2
    assert main(["record", str(path), "nosuch", "--out", "x.gif"]) == 2
    assert files_under(tmp_path) == before

    # a failure after every policy ran, while writing: still nothing (not even a partial folder)
    from twolink_gym.training import compare

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("plot failed")

    monkeypatch.setattr(compare, "plot_trajectory", broken)
    with pytest.raises(RuntimeError, match="plot failed"):
        main(["compare", "--task", "balance", "--controllers", "lqr", "--out", "out/cmp"])
    assert files_under(tmp_path) == before


def test_train_names_what_a_folder_holds_and_suggests_resume_only_for_a_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = training_config(tmp_path)
    run = Path("runs/balance_ppo_s7")
    (run / "evaluation").mkdir(parents=True)
    (run / "evaluation" / "summary.json").write_text("{}")
    assert main(["train", str(path)]) == 2
    err = capsys.readouterr().err
    assert "it holds evaluation: evaluation results, no training run" in err
    assert "--overwrite" in err and "train.run_name=" in err and "train.seed=" in err
    assert "--resume" not in err
    (run / "config.yaml").write_text(path.read_text())  # a run that saved no model
    assert main(["train", str(path)]) == 2
    err = capsys.readouterr().err
    assert "no model to continue from" in err and "--resume" not in err
    assert not (run / "model.zip").exists()
    assert main(["train", str(path), "--overwrite"]) == 0
    assert (run / "model.zip").is_file() and not (run / "evaluation").exists()
    # now there is a model: --resume is the way to continue it
    assert main(["train", str(path)]) == 2
    assert f"--resume {run}" in capsys.readouterr().err


# -- where the environment comes from ------------------------------------------------
def test_a_shipped_agent_needs_no_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent_cfg = yaml.safe_load(
        (pretrained.pretrained_dir("balance_ppo") / "config.yaml").read_text()
    )
    assert main(["evaluate", "pretrained:balance_ppo", "lqr", "--episodes", "2"]) == 0
    summary = json.loads(Path("runs/evaluate/balance_ppo/summary.json").read_text())
    assert summary["task"] == agent_cfg["env"]["task"]
    assert summary["seed"] == agent_cfg["evaluate"]["seed"]  # the agent's own episodes
    assert [p["policy"] for p in summary["policies"]] == ["ppo (pretrained:balance_ppo)", "lqr"]
    compare_args = ["compare", "pretrained:balance_ppo", "--controllers", "lqr", "--episodes", "2"]
    assert main([*compare_args, "--no-trajectories"]) == 0
    assert Path("runs/compare/balance_ppo/table.md").is_file()
    assert main(["record", "pretrained:balance_ppo", "--out", "x.gif", "--max-steps", "3"]) == 0
    assert Path("x.gif").stat().st_size > 0
    rob = ["robustness", "pretrained:balance_ppo", "--episodes", "2"]
    assert main([*rob, "--conditions", "action_delay", "--levels", "action_delay=1"]) == 0
    assert Path("runs/robustness/balance_ppo/robustness.json").is_file()
    # a config given sets the evaluation (episodes, seed), --set too
    setup = tmp_path / "setup.yaml"
    setup.write_text(
        yaml.safe_dump({"env": {"task": "balance"}, "evaluate": {"episodes": 3, "seed": 5}})
    )
    assert main(["evaluate", str(setup), "pretrained:balance_ppo", "--out", "a"]) == 0
    summary = json.loads(Path("a/summary.json").read_text())
    assert (summary["episodes"], summary["seed"]) == (3, 5)
    args = ["evaluate", "pretrained:balance_ppo", "--set", "evaluate.seed=9", "--episodes", "1"]
    assert main([*args, "--out", "b"]) == 0
    assert json.loads(Path("b/summary.json").read_text())["seed"] == 9


def test_a_config_with_only_env_evaluates_but_does_not_train(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ctrl.yaml"
    path.write_text("env: {task: balance}\nevaluate: {episodes: 2}\n")
    assert main(["evaluate", str(path), "lqr"]) == 0
    assert json.loads(Path("runs/evaluate/ctrl/summary.json").read_text())["episodes"] == 2
    assert main(["compare", str(path), "--no-trajectories"]) == 0  # the config's controllers
    assert Path("runs/compare/ctrl/table.md").is_file()
    assert main(["record", str(path), "lqr", "--out", "c.gif", "--max-steps", "3"]) == 0
    rob = ["robustness", str(path), "lqr", "--conditions", "action_delay"]
    assert main([*rob, "--levels", "action_delay=1"]) == 0
    assert Path("runs/robustness/ctrl/robustness.json").is_file()
    for command in ("train", "run", "sweep", "tune"):
        assert main([command, str(path)]) == 2
        err = capsys.readouterr().err
        assert f"{path}: missing required section 'algo'" in err, command


def test_a_task_alone_gives_the_env(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "--task", "balance", "lqr", "--episodes", "2"]) == 0
    summary = json.loads(Path("runs/evaluate/balance/summary.json").read_text())
    assert summary["task"] == "balance" and summary["episodes"] == 2
    assert main(["evaluate", "--task", "balance", "--actuation", "pendubot", "auto"]) == 0
    summary = json.loads(Path("runs/evaluate/balance_pendubot/summary.json").read_text())
    assert summary["policies"]
    for policy in summary["policies"]:  # 'auto' picked the controllers that drive a pendubot
        assert "pendubot" in CONTROLLERS[policy["policy"]].actuations
    assert main(["evaluate", "--task", "balance", "lqr", "--set", "env.max_torque=30"]) == 0
    for args, message in [
        (["evaluate", "lqr"], "nothing gives the environment"),
        (["evaluate", "--task", "juggle", "lqr"], "--task juggle: env.task must be one of"),
        (["evaluate", "--actuation", "acrobot", "lqr"], "--actuation goes with --task"),
        (["evaluate", "c.yaml", "--task", "balance", "lqr"], "not both"),
        (["record", "--task", "balance", "lqr", "pd_gravity", "--out", "x.gif"], "one policy"),
    ]:
        assert main(args) == 2, args
        assert message in capsys.readouterr().err, args
    assert not Path("x.gif").exists()


def test_policies_may_follow_options_as_before(tmp_path: Path) -> None:
    path = tmp_path / "ctrl.yaml"
    path.write_text("env: {task: balance}\n")
    assert main(["evaluate", str(path), "--episodes", "2", "lqr", "--out", "o"]) == 0
    assert main(["evaluate", str(path), "lqr", "--episodes", "2", "pd_gravity", "--out", "p"]) == 0
    policies = json.loads(Path("p/summary.json").read_text())["policies"]
    assert [p["policy"] for p in policies] == ["lqr", "pd_gravity"]
    with pytest.raises(SystemExit):
        main(["evaluate", str(path), "lqr", "--bogus"])


# -- help and the agent list ----------------------------------------------------------
@pytest.mark.parametrize("command", ["evaluate", "compare", "record", "robustness"])
def test_help_names_shipped_agents_and_the_task_option(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for fragment in ("pretrained:NAME", "twolink agents", "--task", "[CONFIG]", "POLICY"):
        assert fragment in text


CARDS = (
    [
        pretrained.AgentCard(
            name="balance_ppo",
            task="balance",
            actuation="full",
            algorithm="ppo",
            env_id="TwoLinkBalance-v0",
            success=0.97,
            episodes=100,
            seed=1_000_000,
            description="PPO on balance",
        ),
        pretrained.AgentCard(
            name="swingup_pendubot_sac",
            task="swingup",
            actuation="pendubot",
            algorithm="sac",
            env_id="TwoLinkPendubotSwingup-v0",
            success=None,
            episodes=100,
            seed=1_000_000,
            description="SAC on the pendubot swing-up",
        ),
    ]
    if hasattr(pretrained, "AgentCard")
    else []
)


@pytest.mark.skipif(not CARDS, reason="twolink_gym.pretrained.AgentCard is not there")
def test_agents_lists_the_catalog(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(pretrained, "catalog", lambda: list(CARDS))
    assert main(["agents"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["name", "task", "actuation", "algorithm", "env", "id", "success"]
    row = lines[2].split()
    assert row[:6] == ["balance_ppo", "balance", "full", "ppo", "TwoLinkBalance-v0", "97%"]
    assert lines[3].split()[:5] == [
        "swingup_pendubot_sac",
        "swingup",
        "pendubot",
        "sac",
        "TwoLinkPendubotSwingup-v0",
    ]
    assert "not measured" in lines[3]
    assert main(["agents", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data[0] == {
        "name": "balance_ppo",
        "task": "balance",
        "actuation": "full",
        "algorithm": "ppo",
        "env_id": "TwoLinkBalance-v0",
        "success": 0.97,
        "episodes": 100,
        "seed": 1_000_000,
        "description": "PPO on balance",
    }
    assert data[1]["success"] is None


def test_agents_lists_every_shipped_agent(capsys: pytest.CaptureFixture[str]) -> None:
    if not hasattr(pretrained, "catalog"):
        pytest.skip("twolink_gym.pretrained.catalog is not there")
    assert main(["agents", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in data] == pretrained.available()
    for d in data:
        config = yaml.safe_load((pretrained.pretrained_dir(d["name"]) / "config.yaml").read_text())
        assert d["task"] == config["env"]["task"]
        assert d["actuation"] == config["env"].get("actuation", "full")
        assert d["algorithm"] == config["algo"]["name"]


def test_default_output_names() -> None:
    setup = sources.evaluation_setup(["pretrained:balance_sac", "lqr"])
    assert setup.name == "balance_sac" and setup.policies == ["pretrained:balance_sac", "lqr"]
    assert sources.default_output("compare", setup, setup.policies) == Path(
        "runs/compare/balance_sac"
    )
