"""Stress test of the environment: a million steps per action pattern, measured.

For each task and each action pattern the native vector env runs
``num_envs x steps_per_env`` steps (default 250 x 4000 = 1e6) and every step is
checked: observations finite and inside the observation space, rewards finite,
joint speeds within ``max_speed``. Episodes are as long as the run
(``max_episode_steps = steps_per_env``), so reach arms run uninterrupted for
4000 steps (80 s of simulated time); balance arms fall and are reset.

Action patterns:

- ``random``: uniform in ``[-1, 1]`` per joint and step;
- ``bang-bang``: ``±1`` per joint, a fresh random sign every step (saturated);
- ``constant-max``: full torque held for the whole run, the four sign
  combinations ``(±1, ±1)`` spread over the copies.

A shorter run through ``gym.make`` (single env, with Gymnasium's checker and
time limit) checks the single-env path the same way.

Run::

    .venv/bin/python benchmarks/stress_env.py                 # 1e6 steps per case
    .venv/bin/python benchmarks/stress_env.py --steps-per-env 400   # quick

Exit status 1 if any check failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import gymnasium as gym
import numpy as np

import twolink_gym  # noqa: F401  (registers TwoLink-v0)
from twolink_gym import TwoLinkEnv, TwoLinkVectorEnv

ActionFn = Callable[[np.random.Generator, int, int], np.ndarray]

SIGNS = np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]], dtype=np.float32)


def random_actions(rng: np.random.Generator, n: int, t: int) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, size=(n, 2)).astype(np.float32)


def bang_bang_actions(rng: np.random.Generator, n: int, t: int) -> np.ndarray:
    return rng.choice(np.array([-1.0, 1.0], dtype=np.float32), size=(n, 2))


def constant_max_actions(rng: np.random.Generator, n: int, t: int) -> np.ndarray:
    return SIGNS[np.arange(n) % 4]


PATTERNS: dict[str, ActionFn] = {
    "random": random_actions,
    "bang-bang": bang_bang_actions,
    "constant-max": constant_max_actions,
}


@dataclass
class Figures:
    """What one run measured."""

    steps: int = 0
    nan_obs: int = 0
    out_of_space: int = 0
    nan_reward: int = 0
    over_speed: int = 0
    at_speed_limit: int = 0
    episodes_ended: int = 0
    max_abs_speed: float = 0.0
    extras_use: float = 0.0  # largest |task extra| as a fraction of its bound
    reward_range: list[float] = field(default_factory=lambda: [np.inf, -np.inf])
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether every check passed."""
        return not (self.nan_obs or self.out_of_space or self.nan_reward or self.over_speed)

    def update(self, obs, reward, done, state, low, high, max_speed) -> None:
        """Check and record one batch of steps (leading axis: copies)."""
        n = obs.shape[0]
        self.steps += n
        self.nan_obs += int(np.count_nonzero(~np.isfinite(obs).all(axis=1)))
        inside = (obs >= low) & (obs <= high)
        self.out_of_space += int(np.count_nonzero(~inside.all(axis=1)))
        self.nan_reward += int(np.count_nonzero(~np.isfinite(reward)))
        speed = np.abs(state[:, 2:])
        self.over_speed += int(np.count_nonzero((speed > max_speed).any(axis=1)))
        self.at_speed_limit += int(np.count_nonzero((speed == max_speed).any(axis=1)))
        self.episodes_ended += int(np.count_nonzero(done))
        self.max_abs_speed = max(self.max_abs_speed, float(speed.max()))
        if obs.shape[1] > 6:
            use = np.abs(obs[:, 6:]) / np.maximum(np.abs(low[6:]), np.abs(high[6:]))
            self.extras_use = max(self.extras_use, float(use.max()))
        self.reward_range[0] = min(self.reward_range[0], float(reward.min()))
        self.reward_range[1] = max(self.reward_range[1], float(reward.max()))


def run_vector(task: str, pattern: str, num_envs: int, steps_per_env: int, seed: int) -> Figures:
    env = TwoLinkVectorEnv(num_envs=num_envs, task=task, max_episode_steps=steps_per_env)
    space = env.single_observation_space
    assert isinstance(space, gym.spaces.Box)
    low, high = space.low, space.high
    max_speed = env.sim.max_speed
    rng = np.random.default_rng(seed)
    act = PATTERNS[pattern]
    figures = Figures()
    obs, info = env.reset(seed=seed)
    # the initial observations are checked too (not counted as steps)
    figures.update(
        obs, np.zeros(num_envs), np.zeros(num_envs, bool), info["state"], low, high, max_speed
    )
    figures.steps = 0
    start = time.perf_counter()
    for t in range(steps_per_env):
        obs, reward, terminated, truncated, info = env.step(act(rng, num_envs, t))
        figures.update(obs, reward, terminated | truncated, info["state"], low, high, max_speed)
    figures.seconds = time.perf_counter() - start
    return figures


def run_single(task: str, pattern: str, steps: int, seed: int) -> Figures:
    env = gym.make("TwoLink-v0", task=task)
    space = env.observation_space
    assert isinstance(space, gym.spaces.Box)
    unwrapped = env.unwrapped
    assert isinstance(unwrapped, TwoLinkEnv)
    max_speed = unwrapped.sim.max_speed
    rng = np.random.default_rng(seed)
    act = PATTERNS[pattern]
    figures = Figures()
    obs, info = env.reset(seed=seed)
    start = time.perf_counter()
    for t in range(steps):
        obs, reward, terminated, truncated, info = env.step(act(rng, 1, t)[0])
        figures.update(
            obs[None], np.array([reward]), np.array([terminated or truncated]),
            info["state"][None], space.low, space.high, max_speed,
        )  # fmt: skip
        if terminated or truncated:
            obs, info = env.reset()
    figures.seconds = time.perf_counter() - start
    return figures


def report(label: str, f: Figures) -> None:
    print(
        f"{label:<34} {f.steps:>9,d} {f.steps / f.seconds:>10,.0f} "
        f"{f.nan_obs + f.nan_reward:>5d} {f.out_of_space:>6d} {f.over_speed:>6d} "
        f"{f.max_abs_speed:>8.4f} {100 * f.at_speed_limit / max(f.steps, 1):>7.3f}% "
        f"{f.extras_use:>7.3f} {f.reward_range[0]:>8.3f} {f.reward_range[1]:>7.3f} "
        f"{f.episodes_ended:>7d}  {'ok' if f.ok else 'FAIL'}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-envs", type=int, default=250)
    parser.add_argument("--steps-per-env", type=int, default=4000)
    parser.add_argument("--single-steps", type=int, default=20_000)
    parser.add_argument("--tasks", nargs="+", default=["reach", "balance"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    env = TwoLinkVectorEnv(num_envs=1)
    print(
        f"max_speed = {env.sim.max_speed:.4f} rad/s, max_torque = {env.sim.max_torque.tolist()} N·m, "
        f"dt = {env.sim.dt} s, substeps = {env.sim.substeps}"
    )
    print(
        f"{'run':<34} {'steps':>9} {'steps/s':>10} {'NaN':>5} {'outside':>6} {'>vmax':>6} "
        f"{'max|dq|':>8} {'at vmax':>8} {'extras':>7} {'r min':>8} {'r max':>7} {'ends':>7}"
    )
    all_ok = True
    for task in args.tasks:
        for pattern in PATTERNS:
            f = run_vector(task, pattern, args.num_envs, args.steps_per_env, args.seed)
            report(f"vector {task} {pattern}", f)
            all_ok &= f.ok
        if args.single_steps:
            for pattern in PATTERNS:
                f = run_single(task, pattern, args.single_steps, args.seed)
                report(f"single {task} {pattern}", f)
                all_ok &= f.ok
    print("all checks passed" if all_ok else "SOME CHECKS FAILED")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
