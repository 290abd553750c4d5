"""Where an off-policy agent's wall time goes on this env: collection vs gradient updates.

For SAC and TQC on reach (flat observations, and the goal-conditioned view with
HER), measures with one torch thread:

* collection: environment steps per second when no gradient step is taken
  (``gradient_steps=0``: policy inference, env step, replay-buffer insert);
* updates: gradient updates per second (``train_freq=1, gradient_steps=1`` on one
  env, minus the collection time measured above).

With ``--sbx``, compares instead stable-baselines3's SAC (PyTorch) with SBX's
(``algo.name: sbx_sac``, JAX; the ``jax`` extra) on reach's flat observations
through the same SB3 VecEnv glue, with the same settings (``[256, 256]``,
batch 256, one gradient step per env step, one env, one CPU thread each: torch
via ``torch.set_num_threads(1)``, XLA via the ``XLA_FLAGS`` that
:data:`twolink_gym.training.algorithms.XLA_ONE_THREAD` sets): env steps/s with
one update per step after ``learning_starts``, and the updates/s that leaves
once collection (measured with ``gradient_steps=0``) is taken out.

Usage::

    python benchmarks/bench_sac_updates.py [--seconds 15] [--json out.json]
    python benchmarks/bench_sac_updates.py --sbx [--updates 3000] [--json out.json]

Prints a table (markdown). Timings depend on the machine and its load: say both
beside the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import torch
from sb3_contrib import TQC
from stable_baselines3 import SAC, HerReplayBuffer
from twolink_gym.training.algorithms import ALGORITHMS
from twolink_gym.training.config import config_from_dict
from twolink_gym.training.envs import make_training_env


def _model(algo: str, her: bool, net: int, gradient_steps: int):
    cfg = config_from_dict(
        {
            "env": {"task": "reach", "goal_observation": her, "normalize_reward": False},
            "algo": {"name": algo},
            "train": {"total_timesteps": 1},
        }
    ).env
    env = make_training_env(cfg, 1, seed=0)
    kwargs = {}
    if her:
        kwargs = {
            "replay_buffer_class": HerReplayBuffer,
            "replay_buffer_kwargs": {"n_sampled_goal": 4, "copy_info_dict": True},
        }
    cls = {"sac": SAC, "tqc": TQC}.get(algo) or ALGORITHMS[algo]
    policy_kwargs: dict = {"net_arch": [net, net]}
    if algo == "tqc":
        policy_kwargs["n_critics"] = 2
    return cls(
        "MultiInputPolicy" if her else "MlpPolicy",
        env,
        learning_starts=400,
        batch_size=256,
        train_freq=1,
        gradient_steps=gradient_steps,
        policy_kwargs=policy_kwargs,
        seed=0,
        **kwargs,
    )


def _rate(model, seconds: float) -> float:
    model.learn(600)  # past learning_starts, and warm
    start, steps0 = time.perf_counter(), model.num_timesteps
    while time.perf_counter() - start < seconds:
        model.learn(200, reset_num_timesteps=False)
    return (model.num_timesteps - steps0) / (time.perf_counter() - start)


def _timed(model, steps: int) -> float:
    """Env steps per second over ``steps`` steps, after warming up past learning_starts."""
    model.learn(600)  # past learning_starts (400), and compiled (JAX) / warm
    start, steps0 = time.perf_counter(), model.num_timesteps
    model.learn(steps, reset_num_timesteps=False)
    return (model.num_timesteps - steps0) / (time.perf_counter() - start)


def compare_backends(updates: int, json_path: str | None) -> None:
    """SB3 SAC against SBX SAC: same env and settings, one thread each (see the module doc)."""
    rows: list[dict[str, Any]] = []
    print(
        "| implementation | env steps/s (1 update per step) | collection alone [steps/s] "
        "| gradient updates/s (collection removed) |"
    )
    print("|---|---:|---:|---:|")
    for algo, label in [("sac", "stable-baselines3 SAC (PyTorch)"), ("sbx_sac", "SBX SAC (JAX)")]:
        collect = _timed(_model(algo, False, 256, 0), updates)
        both = _timed(_model(algo, False, 256, 1), updates)
        update_rate = 1.0 / (1.0 / both - 1.0 / collect)
        rows.append(
            {
                "algo": algo,
                "steps_per_s_with_1_update": both,
                "collect_steps_per_s": collect,
                "updates_per_s": update_rate,
            }
        )
        print(f"| {label} | {both:,.0f} | {collect:,.0f} | {update_rate:,.0f} |", flush=True)
    speedup = rows[1]["steps_per_s_with_1_update"] / rows[0]["steps_per_s_with_1_update"]
    load = os.getloadavg()
    print(
        f"\nSBX / SB3 env steps/s: {speedup:.2f}x. reach, flat observations, one env, "
        f"[256, 256], batch 256, {updates:,} update steps each after learning_starts; "
        f"torch threads {torch.get_num_threads()}, XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}; "
        f"load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (1/5/15 min), "
        f"{os.cpu_count()} cores"
    )
    if json_path:
        with open(json_path, "w") as fh:
            json.dump({"rows": rows, "updates": updates, "loadavg": load}, fh, indent=2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--json", help="also write the numbers to this file")
    parser.add_argument(
        "--sbx", action="store_true", help="compare SB3's SAC with SBX's (needs the jax extra)"
    )
    parser.add_argument(
        "--updates", type=int, default=3000, help="with --sbx: timed steps per measurement"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.sbx:
        compare_backends(args.updates, args.json)
        return
    print(
        "| algorithm | observations | net | collection [steps/s] | updates/s "
        "| share of time in updates (UTD 1) |"
    )
    print("|---|---|---|---:|---:|---:|")
    rows: list[dict[str, Any]] = []
    for algo, her, net in [
        ("sac", False, 64),
        ("sac", False, 256),
        ("sac", True, 64),
        ("sac", True, 128),
        ("sac", True, 256),
        ("tqc", True, 128),
        ("tqc", True, 256),
    ]:
        collect = _rate(_model(algo, her, net, 0), args.seconds / 3)
        both = _rate(_model(algo, her, net, 1), args.seconds)
        update_s = 1.0 / both - 1.0 / collect  # seconds per update, collection removed
        rows.append(
            {
                "algo": algo,
                "her": her,
                "net": net,
                "collect_steps_per_s": collect,
                "steps_per_s_with_1_update": both,
                "updates_per_s": 1.0 / update_s,
                "update_share": update_s * both,
            }
        )
        r = rows[-1]
        print(
            f"| {algo} | {'HER' if her else 'flat'} | [{net}, {net}] | "
            f"{r['collect_steps_per_s']:,.0f} | {r['updates_per_s']:,.0f} | "
            f"{100 * r['update_share']:.0f}% |",
            flush=True,
        )
    load = os.getloadavg()
    print(f"load average during the run: {load[0]:.2f} (1 min), {os.cpu_count()} cores")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"rows": rows, "loadavg": load}, fh, indent=2)


if __name__ == "__main__":
    main()
