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
    # one frame every 2 steps: the reset, step 2 and step 3 (the last), at half the frame rate
    from PIL import Image

    every = ["--max-steps", "3", "--every", "2"]
    assert main(["record", str(path), "lqr", "--out", "d.gif", *every]) == 0
    with Image.open("d.gif") as gif:
        assert gif.n_frames == 3 and gif.info["duration"] == 40  # balance steps at 50 Hz
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


# -- #43: what a newcomer trips over ---------------------------------------------------
REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "configs"


def test_every_command_adds_its_own_parser() -> None:
    import argparse
    import importlib

    from twolink_gym.training.commands import COMMANDS

    for name in COMMANDS:
        module = importlib.import_module(f"twolink_gym.training.commands.{name}")
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers(dest="command")
        module.add_parser(sub)
        assert list(sub.choices) == [name], name
        assert callable(sub.choices[name].get_default("func"))
    assert {"watch", "configs"} <= set(COMMANDS)


def test_resume_hint_continues_the_run_with_its_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from stable_baselines3 import PPO
    from test_training import interrupt_first_learn

    interrupt_first_learn(monkeypatch, PPO, at=64)  # Ctrl-C after the first rollout
    path = training_config(tmp_path, total_timesteps=256)
    assert main(["train", str(path), "--set", "train.run_name=ctrlc"]) == 130
    out = capsys.readouterr().out
    (hint,) = [line for line in out.splitlines() if line.startswith("continue with: ")]
    argv = hint.removeprefix("continue with: ").split()
    assert argv[:2] == ["twolink", "train"]
    # follow the hint from another working folder: the run folder alone carries the config
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    argv = [a if a.startswith("-") or a == "train" else f"../{a}" for a in argv[2:]]
    assert main(["train", *argv]) == 0
    summary = json.loads((tmp_path / "runs/ctrlc/train_summary.json").read_text())
    assert summary["interrupted"] is False
    assert summary["timesteps"] == 256  # the config's total: 4 rollouts of 2 envs x 32 steps
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["ctrlc"]
    assert not (elsewhere / "runs").exists()
    # without a config, --resume is needed
    assert main(["train"]) == 2
    assert "--resume RUN" in capsys.readouterr().err


def test_compare_refuses_to_replace_a_comparison_unless_asked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = ["compare", "--task", "balance", "--episodes", "2", "--no-trajectories"]
    assert main([*base, "--controllers", "lqr", "pd_gravity"]) == 0
    out = capsys.readouterr().out
    # the header of evaluate: the task and the episode seeds (evaluate.seed's default, 1000000)
    assert "Task 'balance', 2 episodes (seeds 1000000..1000001), identical for every policy:" in out
    folder = Path("runs/compare/balance")
    table = (folder / "table.md").read_bytes()
    before = files_under(folder)
    assert {"lqr", "pd_gravity"} <= before

    assert main([*base, "--controllers", "lqr"]) == 2
    err = capsys.readouterr().err
    assert "already holds a comparison" in err and "--overwrite" in err and str(folder) in err
    assert files_under(folder) == before and (folder / "table.md").read_bytes() == table

    assert main([*base, "--controllers", "lqr", "--overwrite"]) == 0
    summary = json.loads((folder / "summary.json").read_text())
    assert [p["policy"] for p in summary["policies"]] == ["lqr"]
    assert not (folder / "pd_gravity").exists()  # no stale policy folder left beside it
    assert (folder / "lqr" / "episodes.csv").is_file()


def test_trajectory_torque_panels_have_legends_and_distinct_lines() -> None:
    import matplotlib.pyplot as plt
    from twolink_gym.training.compare import trajectory_figure
    from twolink_gym.training.config import eval_config_from_dict
    from twolink_gym.training.evaluate import evaluate_policies

    cfg = eval_config_from_dict({"env": {"task": "balance"}}, "test")
    _, results = evaluate_policies(["lqr", "pd_gravity", "computed_torque"], cfg, episodes=1)
    # twelve copies of each: 36 exactly overlapping lines, each must still be told apart
    many = [r for r in results for _ in range(12)]
    fig = trajectory_figure(many, "balance", 0.1)
    try:
        for ax in fig.axes:
            legend = ax.get_legend()
            assert legend is not None
            assert [t.get_text() for t in legend.get_texts()][: len(many)] == [
                r.label for r in many
            ]
            lines = [ln for ln in ax.get_lines() if ln.get_label() in {r.label for r in many}]
            styles = [(ln.get_color(), ln.get_linestyle(), ln.get_linewidth()) for ln in lines]
            assert len(styles) == len(many) == len(set(styles))
    finally:
        plt.close(fig)


def test_evaluate_names_a_missing_run_folder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "runs/doesnotexist"]) == 2
    err = capsys.readouterr().err
    assert "no such run folder or model: runs/doesnotexist" in err
    assert main(["evaluate", "--task", "balance", "lqr", "runs/doesnotexist/model.zip"]) == 2
    assert "no such run folder or model: runs/doesnotexist/model.zip" in capsys.readouterr().err
    assert main(["evaluate", "--task", "balance", "lqrr"]) == 2
    assert "policy 'lqrr' is neither a controller" in capsys.readouterr().err
    assert not Path("runs").exists()


def test_configs_lists_and_copies_the_shipped_configs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["configs"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()[:-2] if line]
    assert listed == sorted(p.stem for p in SHIPPED.glob("*.yaml"))

    assert main(["configs", "reach_ppo", "--out", "mine.yaml"]) == 0
    assert Path("mine.yaml").read_bytes() == (SHIPPED / "reach_ppo.yaml").read_bytes()
    Path("mine.yaml").write_text("# edited\n")
    assert main(["configs", "reach_ppo", "--out", "mine.yaml"]) == 2  # nothing lost silently
    assert "already exists" in capsys.readouterr().err
    assert Path("mine.yaml").read_text() == "# edited\n"
    Path("folder").mkdir()
    assert main(["configs", "balance_sac", "--out", "folder"]) == 0
    assert (
        Path("folder/balance_sac.yaml").read_bytes() == (SHIPPED / "balance_sac.yaml").read_bytes()
    )
    assert main(["configs", "nope", "--out", "x.yaml"]) == 2
    assert "reach_ppo" in capsys.readouterr().err and not Path("x.yaml").exists()


def test_commands_take_a_shipped_config_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the working folder is an empty temporary one: no configs/ folder here
    tiny = [
        "algo.hyperparams.n_steps=32",
        "algo.hyperparams.batch_size=32",
        "algo.hyperparams.n_epochs=1",
        "train.n_envs=2",
        "train.total_timesteps=64",
        "train.eval_freq=0",
        "train.checkpoint_freq=0",
        "train.progress_bar=false",
        "train.run_name=byname",
    ]
    assert main(["train", "default", *(a for s in tiny for a in ("--set", s))]) == 0
    saved = yaml.safe_load(Path("runs/byname/config.yaml").read_text())
    shipped = yaml.safe_load((SHIPPED / "default.yaml").read_text())
    assert saved["env"]["task"] == shipped["env"]["task"]
    assert saved["algo"]["hyperparams"]["gamma"] == shipped["algo"]["hyperparams"]["gamma"]

    assert main(["evaluate", "balance_ppo", "lqr", "--episodes", "2"]) == 0
    summary = json.loads(Path("runs/evaluate/balance_ppo/summary.json").read_text())
    assert summary["task"] == "balance" and summary["episodes"] == 2
    # the README's path from a clone's root, run elsewhere: the error names the shipped one
    assert main(["run", "configs/reach_ppo.yaml"]) == 2
    err = capsys.readouterr().err
    assert "no such config file 'configs/reach_ppo.yaml'" in err and "'reach_ppo'" in err


def test_help_and_configs_work_without_the_train_extra(tmp_path: Path) -> None:
    import subprocess
    import sys

    # the core install: the train extra's modules cannot be imported
    code = """
import sys
from importlib.machinery import PathFinder

BLOCKED = {"yaml", "stable_baselines3", "sb3_contrib", "torch", "matplotlib", "optuna"}

class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
from twolink_gym.training.cli import main
command = sys.argv[1:]
try:
    code = main(command)
except SystemExit as exc:
    code = exc.code
sys.exit(code)
"""

    def twolink(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )

    result = twolink("--help")
    assert result.returncode == 0, result.stderr
    assert "watch" in result.stdout and "configs" in result.stdout
    for command in ("train", "evaluate", "watch", "configs"):
        assert twolink(command, "--help").returncode == 0, command
    result = twolink("configs")
    assert result.returncode == 0, result.stderr
    assert "reach_ppo" in result.stdout
    result = twolink("train", "reach_ppo")
    assert result.returncode == 2
    assert 'pip install "twolink-gym[train]"' in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "runs").exists()


# -- twolink watch -------------------------------------------------------------------
def test_watch_without_a_screen_names_what_is_missing_and_the_way_out(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["watch", "--task", "reach", "computed_torque", "--episodes", "1"]
    assert main(args) == 2  # the fixture's SDL_VIDEODRIVER=dummy: no screen
    err = capsys.readouterr().err
    assert "SDL_VIDEODRIVER=dummy" in err and "--record FILE" in err
    monkeypatch.delenv("SDL_VIDEODRIVER")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "DISPLAY" in err and "--record FILE" in err and "Traceback" not in err
    assert list(Path().iterdir()) == []


def test_watch_records_the_evaluation_episodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import csv

    from PIL import Image

    args = ["--task", "reach", "computed_torque", "--episodes", "2"]
    assert main(["watch", *args, "--record", "watched.gif"]) == 0
    out = capsys.readouterr().out
    assert main(["evaluate", *args, "--out", "eval"]) == 0
    with open("eval/computed_torque/episodes.csv") as fh:
        rows = list(csv.DictReader(fh))
    # the same episodes as evaluate's: its lengths and returns, episode by episode
    for i, row in enumerate(rows):
        length = int(float(row["length"]))
        expected = f"episode {i} (seed {1_000_000 + i}): "
        (line,) = [ln for ln in out.splitlines() if expected in ln]
        assert line.endswith(f", return {float(row['return']):.2f}, {length} steps"), line
    with Image.open("watched.gif") as gif:
        frames = gif.n_frames
    assert frames == sum(int(float(r["length"])) + 1 for r in rows)  # a reset frame each


def test_watch_records_one_frame_every_n_steps(capsys: pytest.CaptureFixture[str]) -> None:
    from PIL import Image

    args = ["watch", "--task", "balance", "lqr", "--episodes", "2", "--max-steps", "5"]
    assert main([*args, "--record", "w.gif", "--every", "2"]) == 0
    # per episode: the reset, steps 2 and 4, and step 5 (the last) at 25 fps (balance: 50 Hz)
    with Image.open("w.gif") as gif:
        assert gif.n_frames == 2 * 4 and gif.info["duration"] == 40
    capsys.readouterr()
    # --every and --fps shape only a video: without --record they are refused by name
    for extra in (["--every", "2"], ["--fps", "10"]):
        assert main([*args, *extra]) == 2
        err = capsys.readouterr().err
        assert extra[0] in err and "--record" in err and "Traceback" not in err
    assert list(Path().iterdir()) == [Path("w.gif")]


def test_watch_opens_a_window_where_there_is_a_screen(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pygame
    from twolink_gym.training.commands import watch

    monkeypatch.setattr(watch, "display_problem", lambda: None)  # SDL's dummy driver draws
    flips = []
    monkeypatch.setattr(pygame.display, "flip", lambda: flips.append(1))
    args = ["watch", "--task", "balance", "lqr", "--episodes", "2", "--max-steps", "3"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.count(", 3 steps") == 2
    assert len(flips) >= 2 * (3 + 1)  # every step and every reset drawn in the window
