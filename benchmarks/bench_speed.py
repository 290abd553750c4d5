"""Speed of TwoLink-v0 beside the environments a user would otherwise pick.

Measures, in one process and one run:

* single-env steps/s through ``gym.make`` (default wrappers, random actions) of
  ``TwoLink-v0`` (reach) beside ``Acrobot-v1``, ``Pendulum-v1`` and, when
  ``mujoco`` is installed (``pip install -e .[bench]``), ``Reacher-v5``;
* env-steps/s of the native vector env (whole step: dynamics, reward,
  observations, autoreset) for ``N`` = 1 ... 65536 on one thread and on all of
  numba's threads, beside the compiled RK4 kernel alone and a C loop over the same RK4 sub-steps (``benchmarks/c_reference/rk4_ref.c``,
  compiled here with ``gcc -O2`` when gcc exists; never part of the package;
  timed in the bursts of N = 4096, interleaved with the env's);
* memory per env of the vector env, and ``import twolink_gym`` in a fresh process;
* optionally (``--sb3``) PPO training fps with 16 envs: the native SB3 adapter
  against ``DummyVecEnv`` of 16 single envs.

Every rate is the best of ``--repeats`` short interleaved bursts (the machine
may be shared; the best burst is the least disturbed one). The table goes to
stdout and everything to JSON (``--json``).

Usage::

    python benchmarks/bench_speed.py [--quick] [--sb3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import twolink_gym
from twolink_gym import _jit
from twolink_gym.dynamics import arm_vector
from twolink_gym.integrators import _rk4_loop
from twolink_gym.integrators import step as rk4_step
from twolink_gym.params import ArmParams
from twolink_gym.vector_env import TwoLinkVectorEnv

HERE = Path(__file__).resolve().parent
C_SOURCE = HERE / "c_reference" / "rk4_ref.c"
SUBSTEPS = 2  # TwoLink-v0's default RK4 sub-steps per control step
C_N = 4096  # batch size of the C reference loop
DT = 0.02


def best_rate(run: Callable[[int], None], units_per_call: int, seconds: float) -> float:
    """Units/s of ``run(k)`` (k calls) over a burst of about ``seconds``."""
    run(3)  # warm up
    k, elapsed = 1, 0.0
    while True:  # grow the burst until it lasts long enough to time
        start = time.perf_counter()
        run(k)
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return k * units_per_call / elapsed
        k = max(k * 2, int(k * seconds / max(elapsed, 1e-9) * 1.1))


# -- single envs ---------------------------------------------------------------
def single_env_runner(env_id: str, seed: int = 0) -> Callable[[int], None]:
    env = gym.make(env_id)
    env.action_space.seed(seed)
    actions = [env.action_space.sample() for _ in range(1024)]
    env.reset(seed=seed)

    def run(k: int) -> None:
        step, reset = env.step, env.reset
        for i in range(k):
            _, _, terminated, truncated, _ = step(actions[i & 1023])
            if terminated or truncated:
                reset()

    return run


def single_env_ids() -> list[str]:
    ids = ["TwoLink-v0", "Acrobot-v1", "Pendulum-v1"]
    try:
        import mujoco  # noqa: F401

        ids.append("Reacher-v5")
    except ImportError:
        pass
    return ids


# -- vector env ----------------------------------------------------------------
def vector_env_runner(n: int, threads: int, seed: int = 0) -> Callable[[int], None]:
    env = TwoLinkVectorEnv(n, task="reach", num_threads=threads)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    actions = [rng.uniform(-1, 1, (n, 2)).astype(np.float32) for _ in range(4)]

    def run(k: int) -> None:
        for i in range(k):
            env.step(actions[i & 3])

    return run


def sync_vector_runner(env_id: str, n: int, seed: int = 0) -> Callable[[int], None]:
    env = gym.make_vec(env_id, num_envs=n, vectorization_mode="sync")
    env.action_space.seed(seed)
    actions = [env.action_space.sample() for _ in range(16)]
    env.reset(seed=seed)

    def run(k: int) -> None:
        for i in range(k):
            env.step(actions[i & 15])

    return run


def rk4_kernel_runner(n: int, warm_steps: int = 100) -> Callable[[int], None]:
    """The compiled RK4 kernel alone (one thread), on the states the vector env visits.

    libm's cos and sin get slower for larger angles, so the states come from a
    vector env after ``warm_steps`` steps of the same random actions.
    """
    env = TwoLinkVectorEnv(n, task="reach", num_threads=1)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(warm_steps):
        env.step(rng.uniform(-1, 1, (n, 2)).astype(np.float32))
    x = np.ascontiguousarray(env.state)
    u = np.ascontiguousarray(rng.uniform(-1, 1, (n, 2)) * env.sim.max_torque)
    arm = arm_vector(ArmParams())

    def run(calls: int) -> None:
        for _ in range(calls):
            _rk4_loop(arm, x, u, DT, SUBSTEPS)

    return run


def step_loop_runner(n: int, warm_steps: int = 100) -> Callable[[int], None]:
    """The vector env's compiled step loop alone (one thread) on its own bound arrays.

    What a whole step calls for dynamics, task and observation (RK4, reward
    terms, observation; called as the env's core calls it, through numba's
    dispatch of its arrays), without the Python around it (action check,
    info, autoreset).
    """
    env = TwoLinkVectorEnv(n, task="reach", num_threads=1)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(warm_steps):
        env.step(rng.uniform(-1, 1, (n, 2)).astype(np.float32))
    loop, arrays = env._core._loops.step, tuple(env._core.arrays)  # as Core.step calls it

    def run(calls: int) -> None:
        for _ in range(calls):
            loop(*arrays)

    return run


def memory_per_env(n: int) -> dict[str, float]:
    """Bytes per env: persistent (after reset) and peak transient during one step."""
    tracemalloc.start()
    env = TwoLinkVectorEnv(n, task="reach")
    env.reset(seed=0)
    persistent = tracemalloc.get_traced_memory()[0]
    actions = np.zeros((n, 2), dtype=np.float32)
    env.step(actions)  # outputs of the first step are freed below
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    out = env.step(actions)
    peak = tracemalloc.get_traced_memory()[1] - before
    del out
    tracemalloc.stop()
    return {"n": n, "persistent_bytes_per_env": persistent / n, "step_peak_bytes_per_env": peak / n}


def import_seconds(repeats: int) -> float:
    """Wall time of ``import twolink_gym`` in a fresh interpreter (best of ``repeats``) [s]."""
    code = (
        "import time; t = time.perf_counter(); import twolink_gym; print(time.perf_counter() - t)"
    )
    runs = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(repeats)
    ]
    return min(runs)


# -- C reference ----------------------------------------------------------------
def c_reference(n: int, steps: int, repeats: int) -> dict[str, Any] | None:
    """Compile and run the C RK4 loop; None without gcc. Checks it against integrators.step."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    args = [repr(float(v)) for v in arm_vector(ArmParams())[:7]]
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "rk4_ref")
        subprocess.run([gcc, "-O2", "-o", exe, str(C_SOURCE), "-lm"], check=True)
        best = math.inf
        final: list[float] = []
        for _ in range(repeats):
            out = subprocess.run(
                [exe, str(n), str(steps), str(SUBSTEPS), repr(DT), *args],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.split("\n")
            best = min(best, float(out[0]))
            final = [float(v) for v in out[1].split()]
    # the same computation in Python (state 0: q = (0.3, -0.5), torques (1, -0.5))
    x = np.array([0.3, -0.5, 0.0, 0.0])
    for _ in range(steps):
        x = rk4_step(ArmParams(), x, [1.0, -0.5], DT, SUBSTEPS)
    agree = bool(np.allclose(final, x, rtol=1e-9, atol=1e-9))
    return {
        "n": n,
        "env_steps_per_s": n * steps / best,
        "rk4_substeps_per_s": n * steps * SUBSTEPS / best,
        "matches_python": agree,
        "compiler": "gcc -O2",
    }


# -- SB3 -----------------------------------------------------------------------
def sb3_fps(total_timesteps: int, repeats: int, n_envs: int = 16) -> dict[str, float]:
    """PPO training fps (SB3's ``fps``: timesteps / wall time, training included).

    On the native adapter and on ``DummyVecEnv`` of single envs from ``gym.make``
    (reach), with PPO at n_steps 256, batch 512, 10 epochs (``configs/reach_ppo.yaml``'s
    rollout length; ``configs/default.yaml`` uses n_steps 512) and one torch thread; after a
    warm-up run of each (torch's first calls are slow), best of ``repeats``
    interleaved runs.
    """
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from twolink_gym.training.sb3_vec_env import make_sb3_vec_env

    # one torch thread: on a small shared machine several intra-op threads make the
    # training phase vary by 10x between identical runs, hiding the env's share
    torch.set_num_threads(1)
    builders = {
        "native": lambda: make_sb3_vec_env(n_envs, seed=0, task="reach"),
        "dummy": lambda: make_vec_env("TwoLink-v0", n_envs=n_envs, seed=0),
    }

    def fps(name: str, steps: int) -> float:
        venv = builders[name]()
        model = PPO(
            "MlpPolicy", venv, n_steps=256, batch_size=512, n_epochs=10, seed=0, device="cpu"
        )
        start = time.perf_counter()
        model.learn(total_timesteps=steps)
        elapsed = time.perf_counter() - start
        venv.close()
        return model.num_timesteps / elapsed

    for name in builders:  # warm-up
        fps(name, n_envs * 256)
    result = dict.fromkeys(builders, 0.0)
    for _ in range(repeats):
        for name in builders:
            result[name] = max(result[name], fps(name, total_timesteps))
    return result


# -- report --------------------------------------------------------------------
def machine() -> dict[str, Any]:
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "gymnasium": gym.__version__,
        "twolink_gym": getattr(twolink_gym, "__version__", "?"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="bursts per measurement")
    parser.add_argument("--seconds", type=float, default=0.5, help="length of one burst [s]")
    parser.add_argument("--quick", action="store_true", help="fewer sizes, shorter bursts")
    parser.add_argument("--sb3", action="store_true", help="also time PPO training (slow)")
    parser.add_argument(
        "--single-only", action="store_true", help="only the single-env table (a quick check)"
    )
    parser.add_argument("--sb3-steps", type=int, default=8192)
    parser.add_argument("--json", type=Path, default=HERE / "results" / "speed.json")
    args = parser.parse_args(argv)
    seconds = 0.2 if args.quick else args.seconds
    sizes = [1, 16, 256, 4096] if args.quick else [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536]

    gym.logger.min_level = 40  # no warnings in the table
    results: dict[str, Any] = {"machine": machine(), "burst_seconds": seconds}

    # single envs: interleaved bursts, best of repeats
    ids = single_env_ids()
    runners = {env_id: single_env_runner(env_id) for env_id in ids}
    single = {env_id: 0.0 for env_id in ids}
    for _ in range(args.repeats):
        for env_id, run in runners.items():
            single[env_id] = max(single[env_id], best_rate(run, 1, seconds))
    results["single_env_steps_per_s"] = single
    results["import_seconds"] = import_seconds(args.repeats)
    if args.single_only:
        results["machine"]["load_average_end"] = os.getloadavg()
        print_table(results)
        return 0

    # vector env scaling (one thread and all threads) and the RK4 kernel alone
    # the C loop at N = 4096 runs in the same interleaved bursts as the env there
    threads = _jit.max_threads()
    c_steps = 200 if args.quick else 500
    c_ref: dict[str, Any] | None = None
    vector, vector_mt, dynamics, loop = {}, {}, {}, {}
    for n in sizes:
        run_env, run_mt = vector_env_runner(n, 1), vector_env_runner(n, threads)
        run_dyn, run_loop = rk4_kernel_runner(n), step_loop_runner(n)
        vector[n] = vector_mt[n] = dynamics[n] = loop[n] = 0.0
        for _ in range(args.repeats):
            vector[n] = max(vector[n], best_rate(run_env, n, seconds))
            vector_mt[n] = max(vector_mt[n], best_rate(run_mt, n, seconds))
            dynamics[n] = max(dynamics[n], best_rate(run_dyn, n, seconds))
            loop[n] = max(loop[n], best_rate(run_loop, n, seconds))
            if n == C_N:
                burst = c_reference(C_N, c_steps, 1)
                if c_ref is None or (
                    burst is not None and burst["env_steps_per_s"] > c_ref["env_steps_per_s"]
                ):
                    c_ref = burst
    results["threads"] = threads
    results["vector_env_steps_per_s"] = vector
    results["vector_env_all_threads_steps_per_s"] = vector_mt
    results["rk4_kernel_env_steps_per_s"] = dynamics
    results["step_loop_env_steps_per_s"] = loop

    # vector envs at N = 16: native vs SyncVectorEnv of single envs (peers included)
    sync16 = {}
    for env_id in ids:
        run = sync_vector_runner(env_id, 16)
        sync16[env_id] = max(best_rate(run, 16, seconds) for _ in range(args.repeats))
    results["sync_vector_16_env_steps_per_s"] = sync16

    results["memory"] = [memory_per_env(n) for n in (4096, 65536)]
    results["c_reference"] = c_ref if C_N in sizes else c_reference(C_N, c_steps, args.repeats)
    if args.sb3:
        results["sb3_ppo_fps_16_envs"] = sb3_fps(args.sb3_steps, min(args.repeats, 2))
    results["machine"]["load_average_end"] = os.getloadavg()

    print_table(results)
    args.json.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"\nwritten to {args.json}")
    return 0


def print_table(r: dict[str, Any]) -> None:
    m = r["machine"]
    print(
        f"machine: {m['cpu']}, {m['cores']} cores; load {m['load_average']} -> "
        f"{m['load_average_end']}; python {m['python']}, numpy {m['numpy']}"
    )
    single = r["single_env_steps_per_s"]
    ours = single["TwoLink-v0"]
    print("\nSingle env through gym.make, random actions (steps/s)")
    print(f"{'env':<14}{'steps/s':>12}{'TwoLink / env':>16}")
    for env_id, rate in single.items():
        print(f"{env_id:<14}{rate:>12,.0f}{ours / rate:>15.2f}x")
    if "import_seconds" in r:
        print(f"import twolink_gym in a fresh process: {r['import_seconds']:.2f} s (best of runs)")
    if "vector_env_steps_per_s" not in r:
        return

    print("\nSyncVectorEnv of 16 single envs vs native TwoLinkVectorEnv(16) (env-steps/s)")
    native16 = r["vector_env_steps_per_s"].get(16)
    for env_id, rate in r["sync_vector_16_env_steps_per_s"].items():
        extra = f"{native16 / rate:>15.2f}x" if native16 else ""
        print(f"{env_id + ' sync':<20}{rate:>12,.0f}{extra}")
    if native16:
        print(f"{'TwoLink native':<20}{native16:>12,.0f}")

    c = r["c_reference"]
    t = r["threads"]
    print(
        f"\nNative vector env, whole step (env-steps/s) on 1 and {t} threads; the compiled "
        "RK4 kernel alone and the env's compiled step loop alone (1 thread); the whole "
        "step's time over the step loop's; ratios to the C RK4 loop (1 thread)"
    )
    header = f"{'N':>7}{'1 thread':>12}{f'{t} threads':>12}{'RK4 only':>12}{'step loop':>12}"
    header += f"{'step/loop':>11}"
    print(header + (f"{'1 thr / C':>11}{f'{t} thr / C':>11}" if c else ""))
    loops = r.get("step_loop_env_steps_per_s", {})
    for n, rate in r["vector_env_steps_per_s"].items():
        mt = r["vector_env_all_threads_steps_per_s"][n]
        dyn = r["rk4_kernel_env_steps_per_s"][n]
        lp = loops.get(n, math.nan)
        line = f"{n:>7}{rate:>12,.0f}{mt:>12,.0f}{dyn:>12,.0f}{lp:>12,.0f}{lp / rate:>10.2f}x"
        if c:
            line += f"{rate / c['env_steps_per_s']:>10.2f}x{mt / c['env_steps_per_s']:>10.2f}x"
        print(line)
    if c:
        print(
            f"C reference (gcc -O2, N={c['n']}, {SUBSTEPS} RK4 sub-steps per env-step, one core): "
            f"{c['env_steps_per_s']:,.0f} env-steps/s = {c['rk4_substeps_per_s']:,.0f} RK4 steps/s"
            f"; agrees with the Python RK4: {c['matches_python']}"
        )
    else:
        print("C reference: gcc not found, skipped")
    for mem in r["memory"]:
        print(
            f"memory per env at N={mem['n']}: {mem['persistent_bytes_per_env']:.0f} B persistent, "
            f"{mem['step_peak_bytes_per_env']:.0f} B peak during a step"
        )
    if "sb3_ppo_fps_16_envs" in r:
        s = r["sb3_ppo_fps_16_envs"]
        print(
            f"\nSB3 PPO, 16 envs: native adapter {s['native']:,.0f} fps, DummyVecEnv "
            f"{s['dummy']:,.0f} fps ({s['native'] / s['dummy']:.2f}x)"
        )


if __name__ == "__main__":
    sys.exit(main())
