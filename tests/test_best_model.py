"""``train.save_best``: the run's ``best/`` folder holds the model of its best periodic evaluation.

The selection is checked against SB3's own record of the evaluations
(``eval/evaluations.npz``) and the saved model against the checkpoint that
SB3's ``CheckpointCallback`` wrote at the same step.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import gymnasium as gym
import numpy as np
from stable_baselines3 import PPO
from twolink_gym.training.config import config_from_dict
from twolink_gym.training.evaluate import evaluate_policies
from twolink_gym.training.export import export_agent
from twolink_gym.training.policies import load_policy
from twolink_gym.training.train import train

import twolink_gym  # noqa: F401
from tests.test_training import params_of, tiny_config


def _best_evaluation(run: Path) -> int:
    """The step of the best evaluation in SB3's record: success, then return, the first of equals."""
    with np.load(run / "eval" / "evaluations.npz") as data:
        steps = data["timesteps"].tolist()
        success = data["successes"].mean(axis=1).tolist()
        returns = data["results"].mean(axis=1).tolist()
    best = 0
    for i in range(1, len(steps)):
        if (success[i], returns[i]) > (success[best], returns[best]):
            best = i
    return int(steps[best])


def _obs_mean(path: Path) -> np.ndarray:
    with path.open("rb") as f:
        return pickle.load(f).obs_rms.mean


def test_the_best_folder_holds_the_best_evaluations_model(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path, "reach", "ppo", total_timesteps=512, checkpoint_freq=64)
    run = train(cfg).run_dir
    best = run / "best"
    selection = json.loads((best / "selection.json").read_text())
    step = _best_evaluation(run)
    assert selection["timesteps"] == step
    with np.load(run / "eval" / "evaluations.npz") as data:
        assert len(data["timesteps"]) == 8  # one evaluation every 64 steps
    # the saved model is the one evaluated then: the checkpoint of the same step
    assert PPO.load(best / "model.zip").num_timesteps == step
    checkpoint = run / "checkpoints" / f"model_{step}_steps.zip"
    for x, y in zip(
        params_of(PPO.load(best / "model.zip")), params_of(PPO.load(checkpoint)), strict=True
    ):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(
        _obs_mean(best / "vecnormalize.pkl"),
        _obs_mean(run / "checkpoints" / f"model_vecnormalize_{step}_steps.pkl"),
    )
    assert (best / "config.yaml").read_text() == (run / "config.yaml").read_text()

    # it loads and evaluates as a run, labelled with its run
    env = gym.make("TwoLink-v0", **cfg.env.make_kwargs())
    policy = load_policy(str(best), cfg.env, env)
    assert policy.label == f"ppo ({run.name}/best)"
    _, (rollout,) = evaluate_policies([str(best)], cfg, tmp_path / "eval")
    assert rollout.success.shape == (6,)
    # and exports as a run does: the exported agent acts as the best model does
    exported = export_agent(best, tmp_path / "agent", evaluate=False)
    _, (again,) = evaluate_policies([str(exported)], cfg, tmp_path / "eval_exported")
    np.testing.assert_allclose(again.returns, rollout.returns, rtol=1e-5)


def _mark_best(run: Path, timesteps: int) -> None:
    """Make ``run``'s best folder claim an evaluation no real one beats (all successes)."""
    path = run / "best" / "selection.json"
    row = {**json.loads(path.read_text()), "timesteps": timesteps, "success_rate": 1.0}
    path.write_text(json.dumps(row))


def test_resuming_keeps_the_earlier_best_unless_it_came_later(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path, "reach", "ppo", total_timesteps=256, checkpoint_freq=64)
    run = train(cfg).run_dir
    longer = config_from_dict(
        {**cfg.to_dict(), "train": {**cfg.to_dict()["train"], "total_timesteps": 384}}
    )
    # resumed from its end: a best from before the resume stays unless beaten
    _mark_best(run, 192)
    train(longer, resume=run)
    assert json.loads((run / "best" / "selection.json").read_text())["timesteps"] == 192
    # resumed from an earlier checkpoint: a best from after it belongs to the discarded
    # training, and the resumed run's own evaluations pick the new one
    _mark_best(run, 320)
    even_longer = config_from_dict(
        {**cfg.to_dict(), "train": {**cfg.to_dict()["train"], "total_timesteps": 512}}
    )
    train(even_longer, resume=run / "checkpoints" / "model_128_steps.zip")
    selection = json.loads((run / "best" / "selection.json").read_text())
    assert 128 < selection["timesteps"] <= 512 and selection["success_rate"] < 1.0
    assert PPO.load(run / "best" / "model.zip").num_timesteps == selection["timesteps"]


def test_save_best_false_keeps_none(tmp_path: Path) -> None:
    run = train(tiny_config(tmp_path, "reach", "ppo", save_best=False)).run_dir
    assert not (run / "best").exists()
    assert (run / "eval" / "evaluations.npz").is_file()
