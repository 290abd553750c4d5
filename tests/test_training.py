"""Smoke tests of train → save → load → evaluate → compare, on tiny runs in a temporary folder.

The metrics of ``evaluate`` are checked against an independent rollout of the
same policy in a single ``gym.make`` env (its own reward and torque bookkeeping),
and the shared episode set against what single envs draw from the same seeds.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from twolink_gym.training.cli import main
from twolink_gym.training.compare import compare
from twolink_gym.training.config import RunConfig, config_from_dict
from twolink_gym.training.evaluate import draw_episodes, evaluate_policies, settle_times
from twolink_gym.training.policies import load_policy
from twolink_gym.training.train import train

import twolink_gym  # noqa: F401

TINY_PPO = {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "policy_kwargs": {"net_arch": [8]}}
TINY_SAC = {
    "learning_starts": 50,
    "batch_size": 16,
    "buffer_size": 1000,
    "policy_kwargs": {"net_arch": [8]},
}


def tiny_config(tmp_path: Path, task: str, algo: str, **train: object) -> RunConfig:
    data = {
        "env": {"task": task},
        "algo": {"name": algo, "hyperparams": TINY_PPO if algo == "ppo" else TINY_SAC},
        "train": {
            "total_timesteps": 128,
            "n_envs": 2,
            "seed": 7,
            "eval_freq": 64,
            "eval_episodes": 2,
            "checkpoint_freq": 64,
            "output_dir": str(tmp_path / "runs"),
            "progress_bar": False,
            **train,
        },
        "evaluate": {"episodes": 6, "seed": 500},
    }
    return config_from_dict(data, "test")


def params_of(model: object) -> list[np.ndarray]:
    return [p.detach().numpy().copy() for p in model.policy.parameters()]  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _restore_torch_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize(("task", "algo"), [("reach", "ppo"), ("balance", "sac")])
def test_train_save_load_evaluate(tmp_path: Path, task: str, algo: str) -> None:
    cfg = tiny_config(tmp_path, task, algo)
    result = train(cfg)
    run = result.run_dir
    assert result.timesteps >= 128 and not result.interrupted
    for name in ("model.zip", "vecnormalize.pkl", "config.yaml", "train_summary.json"):
        assert (run / name).exists(), name
    assert (run / "eval" / "evaluations.npz").exists()
    assert list((run / "checkpoints").glob("model_*_steps.zip"))
    assert any((run / "tb").rglob("events.out.tfevents*"))
    # the run folder's config reproduces the run's config
    from twolink_gym.training.config import load_config

    assert load_config(run / "config.yaml").to_dict() == cfg.to_dict()

    env = gym.make("TwoLink-v0", **cfg.env.make_kwargs())
    policy = load_policy(str(run), cfg.env, env)
    assert policy.kind == "agent" and policy.label == f"{algo} ({run.name})"
    # the loaded statistics are frozen: predicting does not update them
    vec = policy.predictor.vec_normalize
    mean_before = vec.obs_rms.mean.copy()
    _, rollouts = evaluate_policies([str(run)], cfg, tmp_path / "eval")
    np.testing.assert_array_equal(vec.obs_rms.mean, mean_before)
    (r,) = rollouts
    assert r.success.shape == (6,) and np.all(r.length >= 1)
    summary = json.loads((tmp_path / "eval" / "summary.json").read_text())
    assert summary["policies"][0]["episodes"] == 6


def test_seeded_training_is_reproducible(tmp_path: Path) -> None:
    a = train(tiny_config(tmp_path / "a", "reach", "ppo", eval_freq=0, checkpoint_freq=0))
    b = train(tiny_config(tmp_path / "b", "reach", "ppo", eval_freq=0, checkpoint_freq=0))
    c = train(tiny_config(tmp_path / "c", "reach", "ppo", eval_freq=0, checkpoint_freq=0, seed=8))
    pa, pb, pc = (params_of(PPO.load(r.model_path)) for r in (a, b, c))
    for x, y in zip(pa, pb, strict=True):
        np.testing.assert_array_equal(x, y)
    assert any(not np.array_equal(x, z) for x, z in zip(pa, pc, strict=True))


def test_dummy_and_native_vectorisation_both_train(tmp_path: Path) -> None:
    cfg = config_from_dict(
        {
            **tiny_config(tmp_path, "reach", "ppo").to_dict(),
            "env": {"task": "reach", "vectorization": "dummy"},
        }
    )
    assert train(cfg).timesteps >= 128


def test_resume_from_checkpoint(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path, "reach", "ppo")
    train(cfg)
    checkpoint = sorted((cfg.run_dir / "checkpoints").glob("model_*_steps.zip"))[0]
    longer = config_from_dict(
        {**cfg.to_dict(), "train": {**cfg.to_dict()["train"], "total_timesteps": 256}}
    )
    result = train(longer, resume=checkpoint)
    assert result.timesteps >= 256
    summary = json.loads((cfg.run_dir / "train_summary.json").read_text())
    assert summary["resumed_from"] == str(checkpoint)


def test_ctrl_c_saves_the_current_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Interrupt(BaseCallback):
        def _on_step(self) -> bool:
            if self.num_timesteps >= 64:
                raise KeyboardInterrupt
            return True

    original = PPO.learn

    def learn(self, total_timesteps, callback=None, **kwargs):  # type: ignore[no-untyped-def]
        return original(self, total_timesteps, callback=[callback, Interrupt()], **kwargs)

    monkeypatch.setattr(PPO, "learn", learn)
    cfg = tiny_config(tmp_path, "reach", "ppo", total_timesteps=10_000)
    result = train(cfg)
    assert result.interrupted
    assert 64 <= result.timesteps < 10_000
    assert PPO.load(result.model_path).num_timesteps == result.timesteps
    assert (cfg.run_dir / "vecnormalize.pkl").exists()


@pytest.mark.parametrize("task", ["reach", "balance"])
def test_episode_set_matches_single_env_seeds(tmp_path: Path, task: str) -> None:
    cfg = tiny_config(tmp_path, task, "ppo")
    episodes = draw_episodes(cfg.env, 5, 123)
    for i in range(5):
        _, info = gym.make("TwoLink-v0", task=task).reset(seed=123 + i)
        np.testing.assert_array_equal(episodes.states[i], info["state"])
        if task == "reach":
            np.testing.assert_array_equal(episodes.goals[i], info["target"])


def test_policies_face_identical_episodes(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path, "reach", "ppo")
    agent = train(cfg).run_dir
    episodes, results = evaluate_policies([str(agent), "pd_gravity", "impedance"], cfg)
    starts = [r.states[:, 0] for r in results]
    for s in starts:
        np.testing.assert_array_equal(s, episodes.states)
    # the policies differ, so their trajectories do
    assert not np.allclose(results[0].states[:, 5], results[1].states[:, 5])


def test_metrics_match_an_independent_single_env_rollout(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path, "balance", "ppo")
    episodes, (r,) = evaluate_policies(["lqr"], cfg, episodes=3)
    env = gym.make("TwoLinkBalance-v0")  # the task's own episode length (500 steps)
    policy = load_policy("lqr", cfg.env, env).predictor
    max_torque = np.array(cfg.env.resolved_max_torque)
    for i in range(3):
        obs, info = env.reset(options={"state": episodes.states[i]})
        ret, effort, steps, done = 0.0, 0.0, 0, False
        pstate = None
        while not done:
            action, pstate = policy.predict(obs, pstate, np.array([steps == 0]))
            obs, reward, terminated, truncated, info = env.step(action)
            ret += reward
            effort += float(np.sum((np.clip(action, -1, 1) * max_torque) ** 2)) * 0.02
            steps += 1
            done = terminated or truncated
        assert r.length[i] == steps == 500
        assert r.returns[i] == pytest.approx(ret, rel=1e-9)
        assert r.effort[i] == pytest.approx(effort, rel=1e-9)
        assert r.final_distance[i] == pytest.approx(info["distance"], abs=1e-12)
        assert bool(r.success[i]) == info["is_success"]


def test_a_falling_balance_episode_ends_unsuccessful(tmp_path: Path) -> None:
    # no torque from a tilted start: the arm falls, terminating the episode early
    cfg = config_from_dict(
        {
            **tiny_config(tmp_path, "balance", "ppo").to_dict(),
            "env": {"task": "balance", "task_options": {"init_angle_noise": 0.3}},
        }
    )
    from twolink_gym.training.evaluate import run_policy
    from twolink_gym.training.policies import LoadedPolicy

    class Limp:
        def predict(self, obs, state=None, episode_start=None, deterministic=True):  # type: ignore[no-untyped-def]
            return np.zeros((len(obs), 2), dtype=np.float32), None

    episodes = draw_episodes(cfg.env, 4, 0)
    r = run_policy(LoadedPolicy("limp", "controller", Limp()), cfg.env, episodes)
    assert np.all(r.length < 500)
    assert not r.success.any()
    assert np.all(r.final_distance > np.pi / 3)
    assert np.all(np.isnan(r.settle_time))
    assert np.all(r.effort == 0.0)


def test_settle_times() -> None:
    tol, dt = 0.1, 0.5
    distance = np.array(
        [
            [1.0, 0.5, 0.05, 0.2, 0.05, 0.01],  # enters at t=2.0 for good
            [0.05, 0.05, 0.05, 0.05, 0.05, 0.05],  # inside from the start
            [1.0, 0.05, 0.05, 0.05, 0.05, 0.2],  # leaves at the end: never settled
            [1.0, 0.05, 0.05, np.nan, np.nan, np.nan],  # ended after 2 steps, inside
        ]
    )
    out = settle_times(distance, np.array([5, 5, 5, 2]), tol, dt)
    np.testing.assert_array_equal(out[[0, 1, 3]], [2.0, 0.0, 0.5])
    assert np.isnan(out[2])


def test_compare_writes_table_and_plots(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path, "balance", "ppo")
    run = train(cfg).run_dir
    out = tmp_path / "cmp"
    table, _, results = compare(cfg, [run], out)
    labels = [r.label for r in results]
    assert labels[0] == f"ppo ({run.name})"
    assert "lqr" in labels and "impedance" not in labels  # only controllers for balance
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert len(rows) == 1 + len(results)
    for label in labels:
        assert any(row.startswith(f"| {label} |") for row in rows)
    lqr_row = next(row for row in rows if row.startswith("| lqr |"))
    assert "| 100% |" in lqr_row  # LQR holds every small perturbation
    for name in (
        "table.md",
        "summary.json",
        "learning_curves.png",
        "distributions.png",
        "trajectory.png",
    ):
        assert (out / name).stat().st_size > 0, name


def test_cli_train_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    cfg = tiny_config(tmp_path, "reach", "ppo", eval_freq=0, checkpoint_freq=0)
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg.to_dict()))
    assert main(["train", str(path), "--set", "train.seed=11"]) == 0
    assert (Path(cfg.train.output_dir) / "reach_ppo_s11" / "model.zip").exists()
    assert main(["train", str(path), "--set", "train.n_env=3"]) == 2
    err = capsys.readouterr().err
    assert "train.n_env" in err and str(path) in err
    assert main(["evaluate", str(path), "lqr"]) == 2
    assert "does not apply to task 'reach'" in capsys.readouterr().err


def test_cli_run_prints_the_table_and_record_writes_a_gif(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import yaml

    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    cfg = tiny_config(tmp_path, "balance", "ppo", checkpoint_freq=0)
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg.to_dict()))
    assert main(["run", str(path), "--set", "evaluate.episodes=3"]) == 0
    out = capsys.readouterr().out
    assert "| lqr |" in out and f"| ppo ({cfg.run_name}) |" in out
    assert (cfg.run_dir / "compare" / "table.md").exists()
    gif = tmp_path / "lqr.gif"
    assert main(["record", str(path), "lqr", "--out", str(gif), "--max-steps", "5"]) == 0
    assert gif.stat().st_size > 0
    assert main(["record", str(path), str(cfg.run_dir), "--out", str(gif), "--max-steps", "3"]) == 0


def test_an_agent_is_not_evaluated_on_another_environment(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path, "reach", "ppo", eval_freq=0, checkpoint_freq=0)
    run = train(cfg).run_dir
    other = config_from_dict(
        {**cfg.to_dict(), "env": {"task": "reach", "max_torque": [20.0, 10.0]}}
    )
    with pytest.raises(ValueError, match="another environment"):
        evaluate_policies([str(run)], other)
    balance = tiny_config(tmp_path, "balance", "ppo")
    with pytest.raises(ValueError, match="trained on task 'reach'"):
        evaluate_policies([str(run)], balance)
    # options that only shape the drawn episodes may differ (the agent acts on the
    # same observations and rewards); a reward or success option may not
    wider = {"max_target_radius_frac": 0.9, "init_angle_noise": 0.2}
    episodes = config_from_dict(
        {**cfg.to_dict(), "env": {**cfg.to_dict()["env"], "task_options": wider}}
    )
    assert evaluate_policies([str(run)], episodes)
    strict = config_from_dict(
        {**cfg.to_dict(), "env": {**cfg.to_dict()["env"], "task_options": {"tolerance": 0.02}}}
    )
    with pytest.raises(ValueError, match="another environment"):
        evaluate_policies([str(run)], strict)


# -- runs that keep a user's work ------------------------------------------------
def write_config(tmp_path: Path, cfg: RunConfig, name: str = "cfg.yaml") -> Path:
    import yaml

    path = tmp_path / name
    path.write_text(yaml.safe_dump(cfg.to_dict()))
    return path


def interrupt_first_learn(monkeypatch: pytest.MonkeyPatch, cls: type, at: int) -> None:
    """Make the first ``cls.learn`` call raise KeyboardInterrupt once ``at`` steps are done."""
    state = {"armed": True}

    class Interrupt(BaseCallback):
        def _on_step(self) -> bool:
            if state["armed"] and self.num_timesteps >= at:
                state["armed"] = False
                raise KeyboardInterrupt
            return True

    original = cls.learn

    def learn(self, total_timesteps, callback=None, **kwargs):  # type: ignore[no-untyped-def]
        return original(self, total_timesteps, callback=[callback, Interrupt()], **kwargs)

    monkeypatch.setattr(cls, "learn", learn)


def obs_count(path: Path) -> float:
    """How many observations the saved VecNormalize statistics have seen (read as pickled)."""
    import pickle

    with path.open("rb") as f:
        return float(pickle.load(f).obs_rms.count)


def test_resume_after_ctrl_c_from_the_final_model_and_the_run_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # no checkpoint is ever written: Ctrl-C leaves only the final model.zip to resume from
    cfg = tiny_config(tmp_path, "reach", "ppo", total_timesteps=256, checkpoint_freq=0)
    interrupt_first_learn(monkeypatch, PPO, at=64)
    first = train(cfg)
    assert first.interrupted and 64 <= first.timesteps < 256
    assert not (cfg.run_dir / "checkpoints").exists()
    saved_steps = PPO.load(cfg.run_dir / "model.zip").num_timesteps
    saved_count = obs_count(cfg.run_dir / "vecnormalize.pkl")
    saved_evals = np.load(cfg.run_dir / "eval" / "evaluations.npz")["timesteps"].tolist()
    assert saved_evals and max(saved_evals) <= saved_steps

    second = train(cfg, resume=cfg.run_dir / "model.zip")
    assert not second.interrupted and second.timesteps >= 256
    summary = json.loads((cfg.run_dir / "train_summary.json").read_text())
    assert summary["resumed_at"] == saved_steps == first.timesteps
    # the statistics went on from the saved ones: one reset of 2 envs + the new steps
    final = obs_count(cfg.run_dir / "vecnormalize.pkl")
    assert final == pytest.approx(saved_count + 2 + (second.timesteps - saved_steps))
    # the learning curve keeps the evaluations made before the interrupt
    evals = np.load(cfg.run_dir / "eval" / "evaluations.npz")["timesteps"].tolist()
    assert evals[: len(saved_evals)] == saved_evals and len(evals) > len(saved_evals)

    # the run folder itself resumes too (here: to a larger total, through the CLI)
    path = write_config(tmp_path, cfg)
    capsys.readouterr()
    assert (
        main(
            ["train", str(path), "--resume", str(cfg.run_dir), "--set", "train.total_timesteps=384"]
        )
        == 0
    )
    assert PPO.load(cfg.run_dir / "model.zip").num_timesteps == 384
    assert (
        f"resuming from {cfg.run_dir / 'model.zip'} at {second.timesteps:,}"
        in capsys.readouterr().out
    )


def test_sac_saves_and_restores_its_replay_buffer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stable_baselines3 import SAC
    from stable_baselines3.common.save_util import load_from_pkl

    cfg = tiny_config(tmp_path, "balance", "sac", total_timesteps=200, checkpoint_freq=0)
    interrupt_first_learn(monkeypatch, SAC, at=60)
    first = train(cfg)
    assert first.interrupted
    saved = load_from_pkl(cfg.run_dir / "replay_buffer.pkl")
    # one row per step of the 2 envs; the step interrupted in its callback is not stored
    assert first.timesteps // 2 - 1 <= saved.pos <= first.timesteps // 2

    second = train(cfg, resume=cfg.run_dir)
    assert second.timesteps >= 200
    final = load_from_pkl(cfg.run_dir / "replay_buffer.pkl")
    assert final.pos == saved.pos + (second.timesteps - first.timesteps) // 2
    np.testing.assert_array_equal(final.observations[: saved.pos], saved.observations[: saved.pos])


def test_resume_folder_picks_the_newest_model(tmp_path: Path) -> None:
    from twolink_gym.training.train import find_resume_point

    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    for steps in (64, 128):
        (run / "checkpoints" / f"model_{steps}_steps.zip").write_bytes(b"")
    (run / "checkpoints" / "model_vecnormalize_128_steps.pkl").write_bytes(b"")
    (run / "model.zip").write_bytes(b"")
    (run / "train_summary.json").write_text(json.dumps({"timesteps": 100}))
    point = find_resume_point(run)  # a crash after checkpoint 128: the checkpoint is newer
    assert point.model == run / "checkpoints" / "model_128_steps.zip"
    assert point.vecnormalize == run / "checkpoints" / "model_vecnormalize_128_steps.pkl"
    assert point.replay_buffer is None and point.run_dir == run
    (run / "train_summary.json").write_text(json.dumps({"timesteps": 150}))
    (run / "replay_buffer.pkl").write_bytes(b"")
    point = find_resume_point(run)  # Ctrl-C at 150: the final model is newer
    assert point.model == run / "model.zip"
    assert point.replay_buffer == run / "replay_buffer.pkl" and point.vecnormalize is None
    with pytest.raises(FileNotFoundError, match="--resume"):
        find_resume_point(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"no model\.zip and no checkpoints"):
        find_resume_point(tmp_path / "empty")


def test_resume_refuses_another_algorithm_and_a_finished_total(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path, "reach", "ppo", eval_freq=0, checkpoint_freq=0)
    train(cfg)
    before = (cfg.run_dir / "model.zip").read_bytes()
    with pytest.raises(ValueError, match=r"already has 128 timesteps.*train.total_timesteps"):
        train(cfg, resume=cfg.run_dir)
    sac = tiny_config(tmp_path, "reach", "sac", eval_freq=0, checkpoint_freq=0, run_name="x")
    with pytest.raises(ValueError, match=r"algo\.name='ppo'"):
        train(sac, resume=cfg.run_dir / "model.zip")
    assert (cfg.run_dir / "model.zip").read_bytes() == before
    assert not sac.run_dir.exists()


def test_an_existing_run_folder_is_kept_unless_overwrite(tmp_path: Path) -> None:
    from twolink_gym.training.train import RunExistsError

    cfg = tiny_config(tmp_path, "reach", "ppo", eval_freq=0, run_name="mine")
    train(cfg)
    before = (cfg.run_dir / "model.zip").read_bytes()
    with pytest.raises(RunExistsError) as info:
        train(cfg)
    message = str(info.value)
    for fragment in (str(cfg.run_dir), "--overwrite", "--resume", "train.run_name=", "model.zip"):
        assert fragment in message
    assert (cfg.run_dir / "model.zip").read_bytes() == before

    (cfg.run_dir / "notes.txt").write_text("mine")
    stale = cfg.run_dir / "checkpoints" / "model_999_steps.zip"
    stale.write_bytes(b"old")
    other = config_from_dict({**cfg.to_dict(), "train": {**cfg.to_dict()["train"], "seed": 3}})
    result = train(other, overwrite=True)
    assert result.run_dir == cfg.run_dir
    assert json.loads((cfg.run_dir / "train_summary.json").read_text())["seed"] == 3
    assert not stale.exists()  # the old run's files went
    assert (cfg.run_dir / "notes.txt").read_text() == "mine"  # nothing else did


def test_an_invalid_config_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tiny_config(tmp_path, "reach", "ppo", eval_freq=0, checkpoint_freq=0)
    train(cfg)
    kept = (cfg.run_dir / "config.yaml").read_text()
    path = write_config(tmp_path, cfg)
    assert main(["train", str(path), "--set", "env.params={m1: -2.0}", "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert "env.params.m1: ArmParams.m1 must be > 0" in err and str(path) in err
    assert (cfg.run_dir / "config.yaml").read_text() == kept
    # a bad --resume leaves no folder behind either
    assert main(["train", str(path), "--set", "train.run_name=new", "--resume", "nope"]) == 2
    assert "--resume nope" in capsys.readouterr().err
    assert not (Path(cfg.train.output_dir) / "new").exists()
    # the run that was there still evaluates
    assert (
        main(["evaluate", str(cfg.run_dir / "config.yaml"), str(cfg.run_dir), "--episodes", "2"])
        == 0
    )


def test_rounded_total_is_announced_and_the_progress_bar_counts_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from stable_baselines3.common import callbacks

    bars: list[dict[str, int]] = []

    class FakeBar:
        def __init__(self, total: int, **kwargs: object) -> None:
            self.record = {"total": total, "n": 0}
            bars.append(self.record)

        def update(self, n: int) -> None:
            self.record["n"] += n

        def refresh(self) -> None:
            pass

        def close(self) -> None:
            pass

    monkeypatch.setattr(callbacks, "tqdm", FakeBar)
    # 2 envs x n_steps 32 = rollouts of 64 steps: 100 requested -> 2 rollouts = 128
    cfg = tiny_config(
        tmp_path,
        "reach",
        "ppo",
        total_timesteps=100,
        eval_freq=0,
        checkpoint_freq=0,
        progress_bar=True,
    )
    path = write_config(tmp_path, cfg)
    assert main(["train", str(path)]) == 0
    out = capsys.readouterr().out
    assert "train.total_timesteps = 100 is not a whole number of rollouts of 64 steps" in out
    assert "training runs to 128 timesteps" in out
    assert "done: 128 timesteps (train.total_timesteps 100 rounded up" in out
    assert bars == [{"total": 128, "n": 128}]


def test_cli_version_and_evaluate_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tomllib = pytest.importorskip("tomllib")
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    version = tomllib.loads(pyproject.read_text())["project"]["version"]
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"twolink {version}"

    cfg = tiny_config(tmp_path, "balance", "ppo")
    path = write_config(tmp_path, cfg)
    out_dir = tmp_path / "ev"
    assert (
        main(["evaluate", str(path), "lqr", "pd_gravity", "--episodes", "3", "--out", str(out_dir)])
        == 0
    )
    out = capsys.readouterr().out
    summary = json.loads((out_dir / "summary.json").read_text())
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| policy | success |")
    assert len(rows) == 1 + len(summary["policies"]) == 3
    for row, policy in zip(rows[1:], summary["policies"], strict=True):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[0] == policy["policy"]
        assert cells[1] == f"{100 * policy['success_rate']:.0f}%"
    assert not any(line.startswith("{") for line in out.splitlines())
    assert main(["evaluate", str(path), "lqr", "--episodes", "3", "--json"]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert json.loads(line)["policy"] == "lqr"


def test_cli_rejects_bad_numbers_naming_the_argument(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tiny_config(tmp_path, "balance", "ppo")  # evaluation set of 6 episodes
    path = write_config(tmp_path, cfg)
    gif = tmp_path / "x.gif"
    for args, fragment in [
        (
            ["record", str(path), "lqr", "--out", str(gif), "--episode", "-1"],
            "argument --episode: must be an integer >= 0",
        ),
        (
            ["record", str(path), "lqr", "--out", str(gif), "--max-steps", "0"],
            "argument --max-steps: must be an integer >= 1",
        ),
        (
            ["record", str(path), "lqr", "--out", str(gif), "--fps", "-5"],
            "argument --fps: must be a number > 0",
        ),
        (
            ["record", str(path), "lqr", "--out", str(gif), "--every", "0"],
            "argument --every: must be an integer >= 1",
        ),
        (
            ["evaluate", str(path), "lqr", "--episodes", "0"],
            "argument --episodes: must be an integer >= 1",
        ),
    ]:
        with pytest.raises(SystemExit) as info:
            main(args)
        assert info.value.code == 2
        assert fragment in capsys.readouterr().err
    assert main(["record", str(path), "lqr", "--out", str(gif), "--episode", "6"]) == 2
    err = capsys.readouterr().err
    assert "--episode must be an index into the evaluation set, 0..5" in err
    assert "evaluate.episodes = 6" in err and str(path) in err
    assert main(["record", str(path), "lqr", "--out", str(tmp_path / "x.avi")]) == 2
    assert "--out must end in one of ['.gif', '.mp4']" in capsys.readouterr().err
    assert not gif.exists()


def test_cli_run_keeps_an_existing_run_unless_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tiny_config(tmp_path, "balance", "ppo", eval_freq=0, checkpoint_freq=0)
    path = write_config(tmp_path, cfg)
    assert main(["train", str(path)]) == 0
    before = (cfg.run_dir / "model.zip").read_bytes()
    capsys.readouterr()
    assert main(["run", str(path), "--set", "evaluate.episodes=2"]) == 2
    err = capsys.readouterr().err
    assert f"run folder {cfg.run_dir} already exists" in err and "--overwrite" in err
    assert (cfg.run_dir / "model.zip").read_bytes() == before
    assert not (cfg.run_dir / "compare").exists()
    assert main(["run", str(path), "--set", "evaluate.episodes=2", "--overwrite"]) == 0
    assert (cfg.run_dir / "compare" / "table.md").exists()


def test_resume_from_a_checkpoint_trains_to_the_same_total(tmp_path: Path) -> None:
    # rollouts of 2 envs x 32 steps = 64; a checkpoint every 96 steps falls mid-rollout
    # unless it is rounded to whole rollouts (here 128)
    cfg = tiny_config(tmp_path, "reach", "ppo", total_timesteps=256, checkpoint_freq=96)
    full = train(cfg)
    assert full.timesteps == 256
    checkpoints = sorted((cfg.run_dir / "checkpoints").glob("model_*_steps.zip"))
    steps = sorted(int(p.stem.split("_")[1]) for p in checkpoints)
    assert steps and all(s % 64 == 0 for s in steps)
    other = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, run_name="again"))
    resumed = train(other, resume=cfg.run_dir / "checkpoints" / f"model_{steps[0]}_steps.zip")
    assert resumed.timesteps == full.timesteps == 256
