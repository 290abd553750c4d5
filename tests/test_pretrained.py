"""The shipped agents load by name and do their task on episodes they were not selected on."""

import dataclasses
import json
import math
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
import yaml
from scipy.stats import binom
from twolink_gym.training.cli import main
from twolink_gym.training.config import config_from_dict, load_config
from twolink_gym.training.evaluate import draw_episodes, evaluate_policies, run_policy
from twolink_gym.training.policies import PretrainedAgent, load_policy

import twolink_gym
from twolink_gym import pretrained
from twolink_gym.env import TwoLinkEnv

# what each shipped agent is, and the success rate its task's target asks of it (None: an
# agent for the RealAIGym v3 board, checked by its v3 score below, not by success)
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
    "realaigym_acrobot_sac": ("swingup_acrobot", "sbx_sac", 0.80),
    "realaigym_pendubot_sac": ("swingup_pendubot", "sbx_sac", 0.80),
    "realaigym_pendubot_dart": ("swingup_pendubot", "dart", 0.80),
    "realaigym_acrobot_sac_v3": ("swingup_acrobot", "jax_sac", None),
    "swingup_pendubot_ppo": ("swingup_pendubot", "ppo", 0.80),
    "track_ppo": ("track", "ppo", 0.80),
    "track_sac": ("track", "sbx_sac", 0.80),
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
        # SB3 saves a SAC policy with its two critics and their targets (swingup_sac and
        # swingup_pendubot_sac, net [256, 256]: 1.4-1.5 MB); every other agent is at most
        # 0.6 MB
        assert size < 1_500_000, f"{name} is {size} bytes"
        assert (folder / "config.yaml").is_file()
        # the statistics live inside policy.pt (SBX agents: obs_stats.npz beside
        # policy.msgpack, read by the one loader): no VecNormalize file to lose
        assert not (folder / "vecnormalize.pkl").exists()


def test_every_shipped_folder_has_a_card_that_matches_its_config():
    cards = pretrained.catalog()
    assert [c.name for c in cards] == sorted(SHIPPED)
    ids = {
        "full": "TwoLink{}-v0",
        "pendubot": "TwoLinkPendubot{}-v0",
        "acrobot": "TwoLinkAcrobot{}-v0",
    }
    for card in cards:
        folder = pretrained.pretrained_dir(card.name)
        cfg = config_from_dict(yaml.safe_load((folder / "config.yaml").read_text()))
        task, algo, _ = SHIPPED[card.name]
        assert (card.task, card.algorithm) == (cfg.env.task, algo) == (task.split("_")[0], algo)
        assert card.actuation == cfg.env.actuation
        assert card.env_id == ids[card.actuation].format(card.task.capitalize())
        spec = gym.spec(card.env_id)
        assert spec.kwargs["task"] == card.task
        assert spec.kwargs.get("actuation", "full") == card.actuation
        assert (card.episodes, card.seed) == (cfg.evaluate.episodes, cfg.evaluate.seed)
        assert 0.0 <= card.success <= 1.0 and card.description and "\n" not in card.description
        # the card's fields, and for an agent of another backend than torch its name
        backend = pretrained.backend_of(folder)
        assert set(json.loads((folder / "agent.json").read_text())) == {
            f.name for f in dataclasses.fields(pretrained.AgentCard)
        } | ({"backend"} if backend != "torch" else set())
        assert (backend == "sbx") == card.algorithm.startswith("sbx_")


def test_card_success_is_what_the_agent_scores_on_its_evaluation_set():
    # measured here again on the card's own set (reach_ppo: short episodes)
    card = {c.name: c for c in pretrained.catalog()}["reach_ppo"]
    cfg = config_from_dict(
        yaml.safe_load((pretrained.pretrained_dir("reach_ppo") / "config.yaml").read_text())
    )
    _, (rollouts,) = evaluate_policies(
        ["pretrained:reach_ppo"], cfg, episodes=card.episodes, seed=card.seed, trajectories=False
    )
    assert card.success == rollouts.success.mean()


def test_catalog_and_import_need_no_stable_baselines3():
    code = (
        "import sys, twolink_gym\n"
        "from twolink_gym import pretrained\n"
        "cards = pretrained.catalog()\n"
        "assert 'stable_baselines3' not in sys.modules and 'torch' not in sys.modules\n"
        "print(len(cards))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(len(SHIPPED))


# The shipped-agent check: each agent on episodes that neither training (seeds
# train.seed + i, periodic evaluations from train.seed + 10_000), model selection, the
# reported figures (1_000_000 ...), the issue #30 checks (6_160_000 ..., 8_250_000 ...),
# the tracking diagnosis (9_000_000 ...) nor the unseen-agreement table (11_000_000 ...) use.
UNSEEN_SEED = 5_000_000
# The test passes an agent whose true rate is SLACK below its card's figure with
# probability at least 1 - ALPHA, and one whose rate is DROP below it with probability at
# most BETA. The slack: a card's figure comes from its config's evaluation set, sized so
# that its 95 % Wilson interval is at most ±3 points (100-800 episodes), so a rate 4 points
# under the card is at the edge of the card's own sampling error and must pass.
ALPHA, BETA, DROP, SLACK = 0.01, 0.01, 0.10, 0.04


def unseen_plan(reported: float) -> tuple[int, int]:
    """Episodes ``n`` and the least successes ``c`` for a card's ``reported`` success.

    The smallest ``n`` for which a ``c`` exists with ``P(X >= c) >= 1 - ALPHA`` at the
    rate ``reported - SLACK`` and ``P(X >= c) <= BETA`` at ``reported - DROP``,
    ``X ~ Binomial(n, rate)`` (exact binomial tails, ``scipy.stats.binom``).
    """
    p_pass, p_fail = reported - SLACK, reported - DROP
    for n in range(10, 5000):
        c = int(binom.isf(BETA, n, p_fail)) + 1
        while binom.sf(c - 2, n, p_fail) <= BETA:
            c -= 1
        while binom.sf(c - 1, n, p_fail) > BETA:
            c += 1
        if binom.sf(c - 1, n, p_pass) >= 1 - ALPHA:
            return n, c
    raise AssertionError(f"no plan for a reported success of {reported}")


def test_unseen_plan_meets_both_error_rates():
    def tails(n, p):
        """P(X >= c) for c = 0 .. n + 1, from the binomial terms summed by hand."""
        log_terms = [
            math.lgamma(n + 1)
            - math.lgamma(k + 1)
            - math.lgamma(n - k + 1)
            + k * math.log(p)
            + (n - k) * math.log1p(-p)
            for k in range(n + 1)
        ]
        terms = [math.exp(t) for t in log_terms]
        return [math.fsum(terms[c:]) for c in range(n + 2)]

    for reported in (1.0, 0.94, 0.85):
        n, c = unseen_plan(reported)
        good, bad = tails(n, reported - SLACK), tails(n, reported - DROP)
        assert good[c] >= 1 - ALPHA and bad[c] <= BETA
        # n is the smallest: with one episode fewer no threshold meets both
        good, bad = tails(n - 1, reported - SLACK), tails(n - 1, reported - DROP)
        assert not any(g >= 1 - ALPHA and b <= BETA for g, b in zip(good, bad, strict=True))
    # a 10-point drop is caught although the threshold lies between the two rates
    n, c = unseen_plan(0.85)
    assert 0.75 < c / n < 0.81


def _agent_config(name):
    folder = pretrained.pretrained_dir(name)
    return config_from_dict(yaml.safe_load((folder / "config.yaml").read_text()))


@pytest.mark.parametrize("name", sorted(n for n, (*_, target) in SHIPPED.items() if target))
def test_pretrained_agent_holds_its_reported_success_on_unseen_episodes(name):
    _, algo, _ = SHIPPED[name]
    card = {c.name: c for c in pretrained.catalog()}[name]
    # the agent's own config: the env its card's figure was measured in (robust agents:
    # randomised arm parameters and observation noise)
    cfg = _agent_config(name)
    env = TwoLinkEnv(**cfg.env.make_kwargs())
    policy = load_policy(f"pretrained:{name}", cfg.env, env)
    assert policy.label == f"{algo} (pretrained:{name})"
    n, c = unseen_plan(card.success)
    rollouts = run_policy(policy, cfg.env, draw_episodes(cfg.env, n, UNSEEN_SEED))
    k = int(rollouts.success.sum())
    assert k >= c, (
        f"{name}: {k}/{n} = {k / n:.1%} on unseen episodes (seeds {UNSEEN_SEED}..), needs "
        f">= {c} (its card: {card.success:.0%})"
    )


def test_load_pretrained_from_python_drives_gym_make():
    agent = twolink_gym.load_pretrained("balance_ppo")
    assert isinstance(agent, PretrainedAgent)
    assert (agent.name, agent.task, agent.actuation, agent.algorithm) == (
        "balance_ppo",
        "balance",
        "full",
        "ppo",
    )
    assert (agent.env_id, agent.env_kwargs) == ("TwoLinkBalance-v0", {})
    assert agent.config.env.task == "balance"
    env = agent.make_env()
    assert env.spec.id == "TwoLinkBalance-v0"
    obs, _ = env.reset(seed=SEED)
    for _ in range(1000):
        action, _ = agent.predict(obs, deterministic=True)
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert truncated and not terminated and info["is_success"]


def test_load_pretrained_gives_the_env_of_an_underactuated_and_a_robust_agent():
    agent = twolink_gym.load_pretrained("swingup_pendubot_ppo")
    assert (agent.env_id, agent.env_kwargs) == ("TwoLinkPendubotSwingup-v0", {})
    env = agent.make_env(max_episode_steps=5)
    assert env.unwrapped.sim.actuation == "pendubot"
    robust = twolink_gym.load_pretrained("balance_ppo_robust")
    assert robust.env_kwargs["randomize"] == robust.config.env.randomize
    assert robust.env_kwargs["obs_noise"] == robust.config.env.obs_noise > 0
    assert "task" not in robust.env_kwargs and "actuation" not in robust.env_kwargs
    assert robust.make_env(obs_noise=0.0).unwrapped.sim is not None  # overrides replace


def test_load_pretrained_errors_name_the_fix(monkeypatch):
    with pytest.raises(
        ValueError, match=r"no pretrained agent 'nope'; shipped agents are .*balance_ppo"
    ):
        twolink_gym.load_pretrained("nope")
    monkeypatch.setitem(sys.modules, "stable_baselines3", None)  # as if not installed
    with pytest.raises(ImportError, match=r'pip install "twolink-gym\[train\]"'):
        twolink_gym.load_pretrained("balance_ppo")


def test_mismatch_error_lists_only_the_differing_keys_and_suggests_the_agents_config():
    cfg = load_config(CONFIGS["swingup"])  # the full arm's swing-up
    with pytest.raises(ValueError) as err:
        load_policy("pretrained:swingup_pendubot_ppo", cfg.env, TwoLinkEnv(task="swingup"))
    message = str(err.value)
    assert "actuation: 'pendubot' (trained) vs 'full' (evaluation)" in message
    assert "max_torque: [30.0, 10.0] (trained) vs [8.0, 4.0] (evaluation)" in message
    assert message.count("(trained) vs") == 2  # nothing else differs
    assert "'dt'" not in message and "substeps" not in message
    assert "omit the config, the agent carries its own" in message.lower()
    assert str(pretrained.pretrained_dir("swingup_pendubot_ppo") / "config.yaml") in message


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


# RealAIGym v3 push schedules no training run, model selection (pushes seeds 1-8) or
# reported figure (the board's 333, 1001-1016) uses
V3_UNSEEN_PUSHES = (5_000_000, 5_000_001)


def test_the_v3_agent_keeps_its_v3_score_on_unseen_push_schedules(tmp_path):
    # realaigym_acrobot_sac_v3 holds the tip above the line through v3's pushes (its
    # swing-up success, upright and still at the end of pushed episodes, is low by design).
    # Its mean over two unseen schedules must stay above 0.60: 0.06 under the target
    # 0.66, about three standard deviations of a two-run mean (its runs on sixteen other
    # schedules spread with a standard deviation of 0.03). The v2 agent realaigym_acrobot_sac
    # averages 0.575 on these two schedules and fails it.
    scores = []
    for seed in V3_UNSEEN_PUSHES:
        out = tmp_path / str(seed)
        args = ["--robot", "acrobot", "--out", str(out), "--pushes-seed", str(seed)]
        main(["realaigym", "v3", "pretrained:realaigym_acrobot_sac_v3", *args])
        (row,) = json.loads((out / "v3.json").read_text())
        assert row["pushes_seed"] == seed and row["algorithm"] == "jax_sac"
        scores.append(row["score"])
    assert np.mean(scores) > 0.60, f"v3 on pushes seeds {V3_UNSEEN_PUSHES}: {scores}"
