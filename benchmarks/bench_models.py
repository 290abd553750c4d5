"""Step rates of the envs with the robustness models off and on.

Single-env steps/s through ``gym.make("TwoLink-v0", task="reach")`` (random
actions, resets included) and env-steps/s of the native vector env of 256
copies, with every model off and with all of them on (two randomised fields,
``obs_noise``, ``torque_noise``, ``torque_response``, ``action_delay``). Each
rate is the best of ``--repeats`` bursts (the machine may be shared), and the
two settings alternate ``--rounds`` times. Run it against another version of
the package (``PYTHONPATH=<folder holding that twolink_gym>``) with
``--off-only`` to compare the default path across versions.

Usage::

    python benchmarks/bench_models.py [--rounds 2] [--repeats 15] [--off-only]
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import gymnasium as gym
import numpy as np

import twolink_gym  # registers the ids
from twolink_gym import TwoLinkVectorEnv

MODELS: dict[str, Any] = {
    "randomize": {"m2": (0.8, 1.2), "l1": (0.8, 1.2)},
    "obs_noise": 0.01,
    "torque_noise": 0.05,
    "torque_response": 0.5,
    "action_delay": 2,
}
COPIES = 256


def rates(kwargs: dict[str, Any], repeats: int) -> tuple[float, float]:
    """Best single-env steps/s and vector-env env-steps/s over ``repeats`` bursts."""
    env = gym.make("TwoLink-v0", task="reach", **kwargs)
    env.reset(seed=0)
    actions = np.random.default_rng(0).uniform(-1, 1, (2000, 2)).astype(np.float32)

    def single() -> float:
        start = time.perf_counter()
        for a in actions:
            _, _, terminated, truncated, _ = env.step(a)
            if terminated or truncated:
                env.reset()
        return len(actions) / (time.perf_counter() - start)

    venv = TwoLinkVectorEnv(COPIES, task="reach", **kwargs)
    venv.reset(seed=0)
    batch = np.random.default_rng(0).uniform(-1, 1, (COPIES, 2)).astype(np.float32)

    def vector() -> float:
        start = time.perf_counter()
        for _ in range(100):
            venv.step(batch)
        return 100 * COPIES / (time.perf_counter() - start)

    single(), vector()  # compile and warm up
    return max(single() for _ in range(repeats)), max(vector() for _ in range(repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--off-only", action="store_true", help="only the default path")
    args = parser.parse_args()
    print(f"twolink_gym from {os.path.dirname(twolink_gym.__file__)}; load {os.getloadavg()}")
    settings: list[tuple[str, dict[str, Any]]] = [("off", {})]
    if not args.off_only:
        settings.append(("all models", MODELS))
    for _ in range(args.rounds):
        for name, kwargs in settings:
            s, v = rates(kwargs, args.repeats)
            print(f"{name:10s}  single {s:9.0f} steps/s   vector N={COPIES} {v:10.0f} env-steps/s")
    print(f"load {os.getloadavg()}")


if __name__ == "__main__":
    main()
