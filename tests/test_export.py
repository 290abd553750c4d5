"""Exported agents carry their observation statistics: SB3's own ``Policy.load`` acts correctly.

The reference path is independent of the exported extractor: the trained
weights in a policy built the way training built it (SB3's ``MlpPolicy`` /
``MultiInputPolicy``), fed observations normalised by SB3's own
``VecNormalize`` with the statistics of the agent's original
``vecnormalize.pkl`` (kept in ``tests/data/pretrained_old_format``).
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.vec_env import VecNormalize
from stable_baselines3.sac.policies import MultiInputPolicy, SACPolicy
from twolink_gym.training.algorithms import ALGORITHMS, build_model, resolve_hyperparams
from twolink_gym.training.config import config_from_dict
from twolink_gym.training.envs import make_training_env, make_vec
from twolink_gym.training.export import export_agent
from twolink_gym.training.goal_env import GoalSplit
from twolink_gym.training.policies import load_policy

from twolink_gym import pretrained
from twolink_gym.env import TwoLinkEnv
from twolink_gym.vector_env import TwoLinkVectorEnv

DATA = Path(__file__).parent / "data" / "pretrained_old_format"


def _config(name):
    folder = pretrained.pretrained_dir(name)
    return config_from_dict(yaml.safe_load((folder / "config.yaml").read_text()))


def _episode_observations(cfg, act, n_envs=32, steps=30, seed=4242):
    """Raw observations from real episodes of ``cfg``'s env, acting with ``act`` (20 % random)."""
    venv = TwoLinkVectorEnv(n_envs, **cfg.env.make_kwargs())
    obs, _ = venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seen = []
    for _ in range(steps):
        seen.append(obs.copy())
        action = act(obs)
        random = rng.random(n_envs) < 0.2
        action = np.where(random[:, None], rng.uniform(-1, 1, action.shape), action)
        obs, *_ = venv.step(action)
    return np.concatenate(seen).astype(np.float32)


def _trained_policy(cfg, new_policy):
    """The exported weights in the policy training built (dict observations for HER agents)."""
    venv = make_vec(cfg.env, 1, seed=0)  # the agent's own view: flat or goal-conditioned
    hyper = resolve_hyperparams(cfg.algo.hyperparams)
    for key in ("replay_buffer_class", "replay_buffer_kwargs"):
        hyper.pop(key, None)
    model = ALGORITHMS[cfg.algo.name](cfg.algo.policy, venv, device="cpu", **hyper)
    result = model.policy.load_state_dict(new_policy.state_dict(), strict=False)
    assert result.missing_keys == []
    assert all(k.endswith(("mean", "var")) for k in result.unexpected_keys)
    return model.policy, venv


def test_sb3_actor_critic_load_acts_like_the_agent_on_raw_observations():
    cfg = _config("balance_ppo")
    path = pretrained.pretrained_dir("balance_ppo") / "policy.pt"
    policy = ActorCriticPolicy.load(str(path), device="cpu")
    trained, venv = _trained_policy(cfg, policy)
    vec = VecNormalize.load(str(DATA / "balance_ppo_vecnormalize.pkl"), venv)
    vec.training = False

    def reference(obs):
        return trained.predict(vec.normalize_obs(obs), deterministic=True)[0]

    obs = _episode_observations(cfg, reference)
    actions, _ = policy.predict(obs, deterministic=True)
    np.testing.assert_array_equal(actions, reference(obs))
    # one observation at a time, as a Gymnasium loop gives them
    single, _ = policy.predict(obs[5], deterministic=True)
    np.testing.assert_array_equal(single, reference(obs[5:6])[0])
    # and the statistics matter: the bare network on raw observations acts otherwise
    assert np.max(np.abs(trained.predict(obs, deterministic=True)[0] - actions)) > 0.1


@pytest.mark.parametrize("cls", [SACPolicy, MultiInputPolicy])
def test_sb3_sac_load_of_a_goal_conditioned_agent_takes_the_flat_observation(cls):
    cfg = _config("reach_sac")
    assert cfg.algo.policy == "MultiInputPolicy" and cfg.env.goal_observation
    policy = cls.load(str(pretrained.pretrained_dir("reach_sac") / "policy.pt"), device="cpu")
    trained, venv = _trained_policy(cfg, policy)
    vec = VecNormalize.load(str(DATA / "reach_sac_vecnormalize.pkl"), venv)
    vec.training = False
    env = TwoLinkEnv(**cfg.env.make_kwargs())
    split = GoalSplit(
        env.sim.observation_names, env.observation_space.low, env.observation_space.high
    )

    def reference(obs):
        return trained.predict(vec.normalize_obs(split(obs)), deterministic=True)[0]

    obs = _episode_observations(cfg, reference)
    assert policy.observation_space == env.observation_space
    actions, _ = policy.predict(obs, deterministic=True)
    np.testing.assert_array_equal(actions, reference(obs))


def test_policy_load_needs_no_import_of_twolink_gym_first():
    path = pretrained.pretrained_dir("reach_ppo") / "policy.pt"
    code = (
        "import sys\n"
        "from stable_baselines3.common.policies import ActorCriticPolicy\n"
        f"p = ActorCriticPolicy.load({str(path)!r}, device='cpu')\n"
        "print(type(p.features_extractor).__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "twolink_gym.training.normalization"


def _old_format_folder(tmp_path, name):
    """``name`` in the earlier layout: a policy on normalised observations + vecnormalize.pkl."""
    cfg = _config(name)
    new = (
        ALGORITHMS[cfg.algo.name]
        .policy_aliases[cfg.algo.policy]
        .load(str(pretrained.pretrained_dir(name) / "policy.pt"), device="cpu")
    )
    trained, _ = _trained_policy(cfg, new)
    folder = tmp_path / f"old_{name}"
    folder.mkdir()
    trained.save(str(folder / "policy.pt"))
    (folder / "vecnormalize.pkl").write_bytes((DATA / f"{name}_vecnormalize.pkl").read_bytes())
    src = pretrained.pretrained_dir(name) / "config.yaml"
    (folder / "config.yaml").write_text(src.read_text())
    return cfg, new, folder


@pytest.mark.parametrize("name", ["balance_ppo", "reach_sac"])
def test_old_layout_still_loads_and_exports_to_the_new_one(tmp_path, name):
    cfg, new, old = _old_format_folder(tmp_path, name)
    env = TwoLinkEnv(**cfg.env.make_kwargs())
    loaded = load_policy(str(old), cfg.env, env).predictor
    obs = _episode_observations(cfg, lambda o: loaded.predict(o)[0], n_envs=16, steps=20)
    expected, _ = new.predict(obs, deterministic=True)
    np.testing.assert_array_equal(loaded.predict(obs)[0], expected)
    # twolink export upgrades the folder: no vecnormalize.pkl, a card, the same actions
    out = export_agent(old, tmp_path / "upgraded", evaluate=False)
    assert sorted(p.name for p in out.iterdir()) == ["agent.json", "config.yaml", "policy.pt"]
    card = pretrained.read_card(out)
    assert (card.name, card.task, card.algorithm, card.success) == (
        "upgraded",
        cfg.env.task,
        cfg.algo.name,
        None,
    )
    upgraded = type(new).load(str(out / "policy.pt"), device="cpu")
    np.testing.assert_array_equal(upgraded.predict(obs, deterministic=True)[0], expected)


def test_normalising_policy_beside_vecnormalize_is_refused(tmp_path):
    folder = tmp_path / "both"
    folder.mkdir()
    shipped = pretrained.pretrained_dir("balance_ppo")
    for name in ("policy.pt", "config.yaml"):
        (folder / name).write_bytes((shipped / name).read_bytes())
    (folder / "vecnormalize.pkl").write_bytes((DATA / "balance_ppo_vecnormalize.pkl").read_bytes())
    cfg = _config("balance_ppo")
    with pytest.raises(ValueError, match="normalises its observations itself"):
        load_policy(str(folder), cfg.env, TwoLinkEnv(task="balance"))


def _balance_ppo_config(tmp_path, normalize_obs, episodes):
    """An untrained PPO run's config on balance, evaluated on ``episodes`` from seed 77."""
    return config_from_dict(
        {
            "env": {"task": "balance", "normalize_obs": normalize_obs},
            "algo": {"name": "ppo", "hyperparams": {"n_steps": 64, "batch_size": 64}},
            "train": {"total_timesteps": 64, "n_envs": 1, "output_dir": str(tmp_path)},
            "evaluate": {"episodes": episodes, "seed": 77},
        }
    )


def _run_folder(tmp_path, cfg, model):
    """``tmp_path/run`` holding ``model.zip`` and ``config.yaml``, as training writes them."""
    run = tmp_path / "run"
    run.mkdir()
    model.save(run / "model.zip")
    (run / "config.yaml").write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    return run


def test_export_of_a_run_folder_writes_a_self_normalising_policy_and_its_card(tmp_path):
    cfg = _balance_ppo_config(tmp_path, normalize_obs=True, episodes=4)
    venv = make_training_env(cfg.env, 1, seed=0)
    rng = np.random.default_rng(1)
    venv.obs_rms.mean = rng.normal(size=venv.obs_rms.mean.shape)  # statistics that matter
    venv.obs_rms.var = rng.uniform(0.05, 3.0, size=venv.obs_rms.var.shape)
    model = build_model("ppo", "MlpPolicy", venv, cfg.algo.hyperparams, seed=0)
    run = _run_folder(tmp_path, cfg, model)
    venv.save(str(run / "vecnormalize.pkl"))
    out = export_agent(run, tmp_path / "agent")
    assert not (out / "vecnormalize.pkl").exists()
    policy = ActorCriticPolicy.load(str(out / "policy.pt"), device="cpu")
    venv.training = False
    obs = _episode_observations(
        cfg, lambda o: model.predict(venv.normalize_obs(o), deterministic=True)[0], 8, 10
    )
    np.testing.assert_array_equal(
        policy.predict(obs, deterministic=True)[0],
        model.predict(venv.normalize_obs(obs), deterministic=True)[0],
    )
    card = pretrained.read_card(out)
    assert (card.env_id, card.episodes, card.seed) == ("TwoLinkBalance-v0", 4, 77)
    assert card.success is not None and card.success * 4 == int(card.success * 4)
    # a second export refuses to overwrite, and leaves the folder as it was
    before = sorted(p.name for p in out.iterdir())
    with pytest.raises(FileExistsError, match="--overwrite"):
        export_agent(run, out)
    assert sorted(p.name for p in out.iterdir()) == before


def test_export_cli_writes_the_given_description_and_refuses_two_lines(tmp_path, capsys):
    from twolink_gym.training.cli import main

    cfg = _balance_ppo_config(tmp_path, normalize_obs=False, episodes=2)
    model = build_model(
        "ppo", "MlpPolicy", make_vec(cfg.env, 1, seed=0), cfg.algo.hyperparams, seed=0
    )
    run = _run_folder(tmp_path, cfg, model)
    text = "PPO balancing, untrained: a test agent"
    assert main(["export", str(run), "--out", str(tmp_path / "a"), "--description", text]) == 0
    assert pretrained.read_card(tmp_path / "a").description == text
    # without one, the card describes the config
    assert main(["export", str(run), "--out", str(tmp_path / "b")]) == 0
    assert (
        pretrained.read_card(tmp_path / "b").description == "PPO on balance, the fully actuated arm"
    )
    capsys.readouterr()
    assert main(["export", str(run), "--out", str(tmp_path / "c"), "--description", "a\nb"]) == 2
    assert "description must be one non-empty line" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
