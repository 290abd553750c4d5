"""The Python around the compiled step, in pairs: one checkout of the package against another.

Prints, for the package found first on ``sys.path`` (or the checkout given with
``--package``, e.g. a ``git worktree`` of an earlier commit):

* the vector env's whole step at N = 16 (reach, one thread, autoreset every 200
  steps) and its compiled step loop alone, through numba's dispatch of its 12
  arrays as the env's core calls it [µs], and the ratio; for an earlier
  checkout that called the loop by address, that call too;
* the single env's step through ``gym.make`` (reach, random actions) and
  Acrobot-v1's [µs], and the ratio (issue #44's floor: at least 6x); for an
  earlier checkout that called the loop by address, also its single env with
  the loop through numba's dispatch.

All of them run in one process, in short bursts taken in turn (``--repeats``
rounds); each time is the best burst. Interleaving cancels most of a drifting
machine's speed from the ratios. Compare checkouts by running them alternately::

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


def burst_microseconds(run: Callable[[int], object], calls: int) -> float:
    """Mean time of one call of ``run`` over a burst of ``calls`` calls [µs]."""
    start = time.perf_counter()
    for i in range(calls):
        run(i)
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--package", type=Path, help="a checkout whose twolink_gym to time")
    parser.add_argument("--repeats", type=int, default=40, help="rounds of bursts")
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
    loop_env = TwoLinkVectorEnv(16, task="reach", num_threads=1)
    for e in (env, loop_env):
        e.reset(seed=0)
        for i in range(300):
            e.step(actions[i & 3])
    core = getattr(loop_env, "_core", None)
    if core is not None:  # through numba's dispatch, as the core calls it
        loop, loop_args = core._loops.step, tuple(core.arrays)
    else:  # an earlier checkout: the env bound the loop's arguments itself
        loop, loop_args = loop_env._loops.step, loop_env._step_args  # type: ignore[attr-defined]
    by_address = getattr(loop_env, "_step_loop", None) if core is None else None

    def single(env_id: str, dispatch: bool = False) -> Callable[[int], object]:
        single_env = gym.make(env_id)
        if dispatch:
            # an earlier checkout's single env: the loop through numba's dispatch
            single_env.unwrapped._by_address = None  # type: ignore[attr-defined]
        single_env.reset(seed=0)
        single_env.action_space.seed(0)
        sampled = [single_env.action_space.sample() for _ in range(1024)]

        def run(i: int) -> None:
            _, _, terminated, truncated, _ = single_env.step(sampled[i & 1023])
            if terminated or truncated:
                single_env.reset()

        return run

    runners: dict[str, tuple[Callable[[int], object], int]] = {
        "step": (lambda i: env.step(actions[i & 3]), 2_000),
        "dispatch": (lambda i: loop(*loop_args), 2_000),
        "single": (single("TwoLink-v0"), 10_000),
        "acrobot": (single("Acrobot-v1"), 2_000),
    }
    if by_address is not None:
        runners["address"] = (lambda i: by_address(), 2_000)
        runners["single_dispatch"] = (single("TwoLink-v0", dispatch=True), 10_000)
    best = dict.fromkeys(runners, float("inf"))
    for _ in range(args.repeats):
        for name, (run, calls) in runners.items():
            best[name] = min(best[name], burst_microseconds(run, calls))

    where = Path(twolink_gym.__file__).resolve().parent.parent
    step, dispatch, ours, acrobot = best["step"], best["dispatch"], best["single"], best["acrobot"]
    print(f"{where}:")
    line = (
        f"  N=16 step {step:.2f} µs | loop by dispatch {dispatch:.2f} µs ({step / dispatch:.2f}x)"
    )
    if "address" in best:
        line += f" | loop by address {best['address']:.2f} µs ({step / best['address']:.2f}x)"
    print(line)
    line = f"  single {ours:.2f} µs | Acrobot-v1 {acrobot:.2f} µs | ratio {acrobot / ours:.2f}x"
    if "single_dispatch" in best:
        slow = best["single_dispatch"]
        line += f" | single, loop by dispatch {slow:.2f} µs ({acrobot / slow:.2f}x)"
    print(line)


if __name__ == "__main__":
    main()
