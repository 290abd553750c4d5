"""Env-steps/s of the JAX twin beside gymnax's Acrobot-v1 and the numba vector env.

Measures, in one process and one run, on whatever device JAX sees (it prints
which):

* the twin (:func:`twolink_gym.jax.make`, ``--env-id``, default
  ``TwoLinkBalance-v0``) for ``N`` copies, as ``jit(scan(vmap(step)))``: every
  step splits a key per copy (as a training loop does) and steps all copies
  with auto-reset; in float32 and in float64 (``jax.enable_x64``);
* gymnax's ``Acrobot-v1`` in the same harness (random discrete actions), in
  float32 and float64 (an error is recorded where it fails);
* the numba vector env (``gym.make_vec(env_id, num_envs=N)``, float64).

Every backend steps with the same kind of actions, drawn beforehand with
numpy: 8 batches of uniform random actions (Acrobot: random discrete
actions), batch ``i mod 8`` at step ``i``.

Each rate is the best of ``--repeats`` calls of ``T`` steps, with ``N · T``
about ``--work`` env-steps (``T`` in [10, 10000]); the first call (compile) is
timed apart. A backend stops growing ``N`` once one call takes longer than
``--max-call-seconds`` (memory and time on a CPU). The table goes to stdout
and everything to JSON (``--json``).

Usage::

    python benchmarks/bench_jax.py [--n 1 16 256 4096] [--repeats 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
from bench_speed import machine as speed_machine  # the benchmarks' folder is on sys.path

import twolink_gym.jax as tj

HERE = Path(__file__).resolve().parent
DEFAULT_N = (1, 16, 256, 4096, 65536, 262144, 1048576)
BACKENDS = ("twin", "gymnax", "numba")


def steps_per_call(n: int, work: int) -> int:
    """Steps per timed call: about ``work`` env-steps, between 10 and 10,000."""
    return int(min(10_000, max(10, work // n)))


# -- the JAX harness -------------------------------------------------------------
ACTION_BATCHES = 8


def action_batches(n: int, shape: tuple[int, ...], discrete: int | None = None) -> np.ndarray:
    """``ACTION_BATCHES`` batches of random actions for ``n`` copies, ``(8, n, *shape)``.

    Uniform in ``[-1, 1]`` (float32), or integers in ``[0, discrete)``; one
    numpy generator seeded 0, as every backend takes them.
    """
    rng = np.random.default_rng(0)
    size = (ACTION_BATCHES, n, *shape)
    if discrete is not None:
        return rng.integers(0, discrete, size).astype(np.int32)
    return rng.uniform(-1, 1, size).astype(np.float32)


def jax_runner(env: Any, params: Any, n: int, steps: int, actions: Any) -> Callable[[], Any]:
    """``jit(scan(vmap(step)))`` over ``n`` copies for ``steps`` steps.

    Step ``i`` takes ``actions[i % 8]`` (:func:`action_batches`) and a key per
    copy, split from a carried key.
    """
    keys = jax.random.split(jax.random.key(0), n)
    _, state = jax.jit(jax.vmap(env.reset, (0, None)))(keys, params)
    step = jax.vmap(env.step, (0, 0, 0, None))
    actions = jax.device_put(actions)

    @jax.jit
    def rollout(state: Any, key: Any) -> tuple[Any, Any, Any]:
        def body(carry: Any, i: Any) -> tuple[Any, Any]:
            state, key = carry
            key, k_step = jax.random.split(key)
            action = actions[i % ACTION_BATCHES]
            _, state, reward, _, _ = step(jax.random.split(k_step, n), state, action, params)
            return (state, key), reward.sum()

        (state, key), rewards = jax.lax.scan(body, (state, key), jnp.arange(steps))
        return state, key, rewards.sum()

    carry = [state, jax.random.key(1)]

    def run() -> Any:
        state, key, total = rollout(carry[0], carry[1])
        jax.block_until_ready(total)
        carry[0], carry[1] = state, key
        return total

    return run


def twin_runner(env_id: str, n: int, steps: int) -> Callable[[], Any]:
    env, params = tj.make(env_id)
    actions = action_batches(n, (env.num_actions,)).astype(params.dt.dtype)
    return jax_runner(env, params, n, steps, actions)


def gymnax_runner(n: int, steps: int) -> Callable[[], Any]:
    import gymnax

    env, params = gymnax.make("Acrobot-v1")
    return jax_runner(env, params, n, steps, jnp.asarray(action_batches(n, (), discrete=3)))


def numba_runner(env_id: str, n: int, steps: int) -> Callable[[], Any]:
    env = gym.make_vec(env_id, num_envs=n)
    env.reset(seed=0)
    shape = env.single_action_space.shape
    assert shape is not None
    actions = action_batches(n, shape)

    def run() -> None:
        for i in range(steps):
            env.step(actions[i % ACTION_BATCHES])

    return run


def measure(make_run: Callable[[], Callable[[], Any]], repeats: int) -> dict[str, Any]:
    """Set-up and first call (compile) times, every timed call and the best of them [s]."""
    t0 = time.perf_counter()
    run = make_run()
    t1 = time.perf_counter()
    run()
    t2 = time.perf_counter()
    calls = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        calls.append(time.perf_counter() - start)
    return {
        "setup_s": t1 - t0,
        "first_call_s": t2 - t1,
        "best_call_s": min(calls),
        "calls_s": calls,
    }


# -- report ----------------------------------------------------------------------
def machine() -> dict[str, Any]:
    """bench_speed's machine record, with the device JAX sees and its version."""
    device = jax.devices()[0]
    return {
        **speed_machine(),
        "jax_device": f"{device.platform}: {device.device_kind}",
        "jax_devices": len(jax.devices()),
        "jax": jax.__version__,
    }


def fmt(rate: float | None) -> str:
    if rate is None:
        return "-"
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if rate >= scale:
            return f"{rate / scale:.3g} {unit}"
    return f"{rate:.3g}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=list(DEFAULT_N), help="copies N")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls (best of)")
    parser.add_argument("--work", type=int, default=1 << 21, help="env-steps per timed call")
    parser.add_argument("--env-id", default="TwoLinkBalance-v0")
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    parser.add_argument(
        "--dtypes", nargs="+", choices=("float32", "float64"), default=["float32", "float64"]
    )
    parser.add_argument(
        "--max-call-seconds", type=float, default=30.0, help="stop growing N past this"
    )
    parser.add_argument("--json", type=Path, default=HERE / "results" / "jax_speed.json")
    args = parser.parse_args(argv)
    if args.repeats < 1 or any(n < 1 for n in args.n):
        parser.error("--repeats and every --n must be >= 1")

    info = machine()
    print(f"JAX device: {info['jax_device']} ({info['jax_devices']} seen); CPU {info['cpu']}")
    rows: list[dict[str, Any]] = []
    stopped: set[tuple[str, str]] = set()
    for n in sorted(args.n):
        steps = steps_per_call(n, args.work)
        for backend in args.backends:
            for dtype in ["float64"] if backend == "numba" else args.dtypes:
                if (backend, dtype) in stopped:
                    continue
                row: dict[str, Any] = {"backend": backend, "dtype": dtype, "n": n, "steps": steps}
                make_run: Callable[[], Callable[[], Any]]
                if backend == "twin":
                    make_run = partial(twin_runner, args.env_id, n, steps)
                elif backend == "gymnax":
                    make_run = partial(gymnax_runner, n, steps)
                else:
                    make_run = partial(numba_runner, args.env_id, n, steps)
                try:
                    with jax.enable_x64(dtype == "float64"):
                        row.update(measure(make_run, args.repeats))
                    row["steps_per_s"] = n * steps / row["best_call_s"]
                except Exception as exc:
                    row["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
                    stopped.add((backend, dtype))
                rows.append(row)
                rate = row.get("steps_per_s")
                print(
                    f"N={n:>8} {backend:>6} {dtype}: {fmt(rate):>9} steps/s"
                    + (f"  (first call {row['first_call_s']:.2f} s)" if rate else "")
                    + (f"  {row['error']}" if "error" in row else ""),
                    flush=True,
                )
                if row.get("best_call_s", 0.0) > args.max_call_seconds:
                    stopped.add((backend, dtype))
    info["load_average_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    results = {"machine": info, "env_id": args.env_id, "work": args.work, "rows": rows}
    print()
    print(table(rows))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"\nwritten to {args.json}")
    return 0


def table(rows: list[dict[str, Any]]) -> str:
    """A Markdown table: one row per N, one column per backend and dtype."""
    columns = list(dict.fromkeys((r["backend"], r["dtype"]) for r in rows))
    rates = {(r["backend"], r["dtype"], r["n"]): r.get("steps_per_s") for r in rows}
    names = {"twin": "twin", "gymnax": "gymnax Acrobot-v1", "numba": "numba vector env"}
    lines = [
        "| N | " + " | ".join(f"{names[b]} {d}" for b, d in columns) + " |",
        "|---:|" + "---:|" * len(columns),
    ]
    for n in sorted({r["n"] for r in rows}):
        cells = [fmt(rates.get((b, d, n))) for b, d in columns]
        lines.append(f"| {n:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
