"""Time RealAIGym v3 runs in JAX (:mod:`twolink_gym.jax.realaigym_v3`) against the compiled simulator.

The agent is a 6-256-256-1 ReLU network (the RealAIGym SAC configs' actor) with
random weights, on the pendubot, deciding every 5th step (10 ms). Prints, per
batch of ``agents × schedules`` runs, the compile time and the best of three
timed calls; then one compiled-simulator run of the same network as a numpy
agent through :class:`~twolink_gym.realaigym.protocol.PolicyRunner` (what
``twolink realaigym v3 RUN`` does). The uptimes are not compared (random
agents, float32 against float64 arithmetic).

    python benchmarks/bench_v3_jax.py [--agents 1 3 16] [--schedules 3]
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np

from twolink_gym.jax import realaigym_v3 as jv3
from twolink_gym.realaigym.protocol import PolicyRunner, make_policy_env
from twolink_gym.realaigym.v3 import run_v3

SIZES = (6, 256, 256, 1)


def network(key: jax.Array) -> list[tuple[jax.Array, jax.Array]]:
    """Random ``(kernel, bias)`` layers of :data:`SIZES` (He-scaled)."""
    layers = []
    keys = jax.random.split(key, len(SIZES) - 1)
    for k, (n_in, n_out) in zip(keys, itertools.pairwise(SIZES), strict=True):
        w = jax.random.normal(k, (n_in, n_out)) * np.sqrt(2.0 / n_in)
        layers.append((w, jnp.zeros(n_out)))
    return layers


def act(layers: list[tuple[jax.Array, jax.Array]], x: jax.Array) -> jax.Array:
    """Shoulder torque [N·m] of the network at state ``x`` (our angles): ``6 tanh(out)``."""
    h = jnp.stack([jnp.cos(x[0]), jnp.sin(x[0]), jnp.cos(x[1]), jnp.sin(x[1]), x[2], x[3]])
    for i, (w, b) in enumerate(layers):
        h = h @ w + b
        if i < len(layers) - 1:
            h = jax.nn.relu(h)
    return jnp.stack([6.0 * jnp.tanh(h[0]), jnp.zeros((), h.dtype)])


class NumpyAgent:
    """The same network in numpy, with SB3's ``predict`` (float32 observations)."""

    def __init__(self, layers: list[tuple[jax.Array, jax.Array]]) -> None:
        self.layers = [(np.asarray(w), np.asarray(b)) for w, b in layers]

    def predict(self, obs, state=None, episode_start=None, deterministic=True):
        """Normalised shoulder actions ``(n, 1)`` of observations ``(n, 6)``."""
        h = np.asarray(obs, np.float32)
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        return np.tanh(h), state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, nargs="+", default=[1, 3, 16])
    parser.add_argument("--schedules", type=int, default=3)
    args = parser.parse_args()
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.1f}; jax {jax.__version__} on {jax.devices()[0].device_kind}"
    )
    schedules = jv3.pushes("pendubot", list(range(1, args.schedules + 1)))
    print("agents x schedules   compile [s]   run [s]   per run [s]")
    for n in args.agents:
        nets = jax.vmap(network)(jax.random.split(jax.random.PRNGKey(0), n))

        def scores(layers, pushes):
            return jax.vmap(
                lambda s: jv3.score(jv3.run(lambda x: act(layers, x), s, decision_steps=5))
            )(pushes)

        batch = jax.jit(jax.vmap(scores, in_axes=(0, None)))
        t0 = time.perf_counter()
        compiled = batch.lower(nets, schedules).compile()
        compile_s = time.perf_counter() - t0
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            jax.block_until_ready(compiled(nets, schedules))
            times.append(time.perf_counter() - t0)
        runs = n * args.schedules
        print(
            f"{n:>6} x {args.schedules:<9} {compile_s:11.1f} {min(times):9.2f} {min(times) / runs:12.3f}"
        )
    layers = jax.tree.map(
        lambda a: a[0], jax.vmap(network)(jax.random.split(jax.random.PRNGKey(0), 1))
    )
    runner = PolicyRunner(NumpyAgent(layers), make_policy_env("pendubot").sim, 5)
    t0 = time.perf_counter()
    run_v3(runner, "pendubot", pushes_seed=1)
    print(f"compiled simulator, numpy agent: {time.perf_counter() - t0:.2f} s a run")


if __name__ == "__main__":
    main()
