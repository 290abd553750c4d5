"""The Python around the compiled step, in pairs: one checkout of the package against another.

Prints, for the package found first on ``sys.path`` (or the checkout given with
``--package``, e.g. a ``git worktree`` of an earlier commit):

* the vector env's whole step at N = 16 (reach, one thread, autoreset every 200
  steps) and its compiled step loop alone [µs], and their ratio (issue #28's target:
  at most 3x);
* the single env's step through ``gym.make`` (reach, random actions) and
  Acrobot-v1's [µs], and their ratio (target: at least 8x).

Each time is the best of ``--repeats`` bursts. On a machine whose speed drifts,
run two checkouts alternately, several times, and compare the pairs::

    git worktree add /tmp/before <commit>
    for k in 1 2 3; do
        python benchmarks/step_overhead.py --package /tmp/before
        python benchmarks/step_overhead.py
    done
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path


def best_microseconds(run: Callable[[int], object], calls: int, repeats: int) -> float:
    """Best time of one call of ``run`` over ``repeats`` bursts of ``calls`` calls [µs]."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for i in range(calls):
            run(i)
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--package", type=Path, help="a checkout whose twolink_gym to time")
    parser.add_argument("--repeats", type=int, default=7, help="bursts per time")
    args = parser.parse_args()
    if args.package is not None:
        sys.path.insert(0, str(args.package.resolve()))

    import gymnasium as gym
    import numpy as np

    import twolink_gym
    from twolink_gym.vector_env import TwoLinkVectorEnv

    rng = np.random.default_rng(0)
    actions = [rng.uniform(-1, 1, (16, 2)).astype(np.float32) for _ in range(4)]
    env = TwoLinkVectorEnv(16, task="reach", num_threads=1)
    env.reset(seed=0)
    for i in range(300):
        env.step(actions[i & 3])
    step = best_microseconds(lambda i: env.step(actions[i & 3]), 20_000, args.repeats)
    loop_env = TwoLinkVectorEnv(16, task="reach", num_threads=1)
    loop_env.reset(seed=0)
    for i in range(100):
        loop_env.step(actions[i & 3])
    if hasattr(loop_env, "_step_loop"):  # the env's own call (by address)
        loop_time = best_microseconds(lambda i: loop_env._step_loop(), 20_000, args.repeats)
    else:  # a checkout before it: the loop through numba's dispatch
        loop, loop_args = loop_env._loops.step, loop_env._step_args
        loop_time = best_microseconds(lambda i: loop(*loop_args), 20_000, args.repeats)

    def single(env_id: str, calls: int) -> float:
        single_env = gym.make(env_id)
        single_env.reset(seed=0)
        single_env.action_space.seed(0)
        sampled = [single_env.action_space.sample() for _ in range(1024)]

        def run(i: int) -> None:
            _, _, terminated, truncated, _ = single_env.step(sampled[i & 1023])
            if terminated or truncated:
                single_env.reset()

        return best_microseconds(run, calls, args.repeats)

    ours = single("TwoLink-v0", 100_000)
    acrobot = single("Acrobot-v1", 20_000)
    where = Path(twolink_gym.__file__).resolve().parent.parent
    print(
        f"{where}: N=16 step {step:.2f} µs, loop {loop_time:.2f} µs, ratio {step / loop_time:.2f}x"
        f" | single {ours:.2f} µs, Acrobot-v1 {acrobot:.2f} µs, ratio {acrobot / ours:.2f}x"
    )


if __name__ == "__main__":
    main()
