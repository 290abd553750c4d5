"""The shipped agents load by name and do their task on episodes they were not selected on."""

import gymnasium as gym
import numpy as np
import pytest
from twolink_gym.training.cli import main
from twolink_gym.training.config import load_config
from twolink_gym.training.evaluate import draw_episodes, run_policy
from twolink_gym.training.policies import load_policy, load_pretrained

import twolink_gym  # noqa: F401
from twolink_gym import pretrained
from twolink_gym.env import TwoLinkEnv

# what each shipped agent is, and the success rate its task's target asks of it
SHIPPED = {
    "balance_ppo": ("balance", "ppo", 0.95),
    "balance_ppo_robust": ("balance", "ppo", 0.95),
    "balance_sac": ("balance", "sac", 0.95),
    "balance_sac_robust": ("balance", "sac", 0.95),
    "reach_ppo": ("reach", "ppo", 0.90),
    "reach_ppo_robust": ("reach", "ppo", 0.90),
    "reach_sac": ("reach", "sac", 0.90),
    "reach_sac_tuned": ("reach", "sac", 0.90),
    "reach_sac_robust": ("reach", "sac", 0.90),
    "swingup_ppo": ("swingup", "ppo", 0.90),
    "swingup_sac": ("swingup", "sac", 0.90),
    "swingup_pendubot_sac": ("swingup_pendubot", "sac", 0.80),
    "swingup_pendubot_ppo": ("swingup_pendubot", "ppo", 0.80),
    "track_ppo": ("track", "ppo", 0.80),
    "track_sac": ("track", "sac", 0.80),
}
# the config of each agent's env (task and actuation)
CONFIGS = {
    "balance": "configs/balance_ppo.yaml",
    "reach": "configs/reach_ppo.yaml",
    "swingup": "configs/swingup_ppo.yaml",
    "swingup_pendubot": "configs/swingup_pendubot_sac.yaml",
    "track": "configs/track_ppo.yaml",
}
# episodes neither the training runs (seed + 10_000 ...) nor the README's fixed set
# (1_000_000 ...) used
SEED = 7_000_000


def test_every_agent_is_shipped_and_small():
    assert pretrained.available() == sorted(SHIPPED)
    for name in SHIPPED:
        folder = pretrained.pretrained_dir(name)
        size = sum(p.stat().st_size for p in folder.iterdir())
        # SB3 saves a SAC policy with its two critics and their targets (swingup_sac,
        # swingup_pendubot_sac and track_sac, net [256, 256]: 1.4-1.5 MB); every other
        # agent is at most 0.6 MB
        assert size < 1_500_000, f"{name} is {size} bytes"
        assert (folder / "config.yaml").is_file()


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_pretrained_agent_succeeds(name):
    task, algo, target = SHIPPED[name]
    cfg = load_config(CONFIGS[task])
    env = TwoLinkEnv(**cfg.env.make_kwargs())
    policy = load_policy(f"pretrained:{name}", cfg.env, env)
    assert policy.label == f"{algo} (pretrained:{name})"
    episodes = draw_episodes(cfg.env, 20, SEED)
    rollouts = run_policy(policy, cfg.env, episodes)
    # 20 episodes: at the target rate, at most a 10-point shortfall is allowed for chance
    assert rollouts.success.mean() >= target - 0.1, rollouts.success.mean()


def test_load_pretrained_from_python_drives_gym_make():
    agent, env_cfg = load_pretrained("balance_ppo")
    env = gym.make("TwoLink-v0", **env_cfg.make_kwargs())
    obs, _ = env.reset(seed=SEED)
    for _ in range(500):
        action, _ = agent.predict(obs, deterministic=True)
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert truncated and not terminated and info["is_success"]


def test_unknown_pretrained_name_lists_the_shipped_ones(capsys):
    cfg = load_config(CONFIGS["reach"])
    with pytest.raises(ValueError, match=r"shipped agents are .*reach_ppo"):
        load_policy("pretrained:nope", cfg.env, TwoLinkEnv(task="reach"))
    assert main(["evaluate", CONFIGS["reach"], "pretrained:nope", "--episodes", "1"]) == 2
    assert "no pretrained agent 'nope'" in capsys.readouterr().err


def test_pretrained_agent_refuses_another_task():
    cfg = load_config(CONFIGS["reach"])
    with pytest.raises(ValueError, match="trained on task 'balance'"):
        load_policy("pretrained:balance_ppo", cfg.env, TwoLinkEnv(task="reach"))


def test_evaluate_command_accepts_pretrained(tmp_path, capsys):
    out = tmp_path / "ev"
    code = main(
        [
            "evaluate",
            CONFIGS["balance"],
            "pretrained:balance_ppo",
            "lqr",
            "--episodes",
            "3",
            "--seed",
            str(SEED),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "ppo (pretrained:balance_ppo) | 100%" in printed
    assert (out / "summary.json").is_file()
    assert np.load(out / "episode_set.npz")["states"].shape == (3, 4)
