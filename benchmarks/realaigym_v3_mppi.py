r"""The MPPI variants on v3 push schedules, in JAX: many runs of one compiled function, for tuning.

Runs a RealAIGym MPPI variant (:data:`twolink_gym.realaigym.controllers.VARIANTS`,
:class:`twolink_gym.jax.mppi.MPPIController`) through the v3 protocol on the JAX twin
(:func:`twolink_gym.jax.realaigym_v3.run`, float32 unless ``--x64``) for every pair of a push
schedule (``--pushes-seeds``: held-out schedules; ``board`` is the ICRA 2025 one) and a
noise seed of the planner (``--noise-seeds``), one compiled function for all, and prints each
run's score, then over all runs the mean, the worst run and the best.
``--set KEY=VALUE`` overrides a planner setting (:class:`~twolink_gym.jax.mppi.MPPISettings`)
or ``catch_level`` / ``release_level``. Choose settings on held-out schedules; the board
itself is run by ``twolink realaigym v3 VARIANT --robot R --out DIR`` (the compiled plant,
float64).

Usage::

    python benchmarks/realaigym_v3_mppi.py realaigym_pendubot_mppi --robot pendubot \
        --pushes-seeds 1 2 3 --noise-seeds 0 1 [--set terminal_weight=3] [--json FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import numpy as np


def parse_value(text: str) -> Any:
    """An int if ``text`` is one, else a float."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variant", help="an MPPI variant, e.g. realaigym_pendubot_mppi")
    parser.add_argument("--robot", choices=("acrobot", "pendubot"), required=True)
    parser.add_argument("--pushes-seeds", nargs="+", default=["1", "2", "3"])
    parser.add_argument("--noise-seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--x64", action="store_true", help="plan and simulate in float64")
    parser.add_argument("--json", help="write the scores here")
    args = parser.parse_args()

    import jax

    if args.x64:
        jax.config.update("jax_enable_x64", True)
    from twolink_gym.jax import realaigym_v3 as jv3
    from twolink_gym.jax.mppi import MPPIController, MPPISettings
    from twolink_gym.realaigym.controllers import VARIANTS, variant_runner

    if args.variant not in VARIANTS:
        parser.error(f"variant must be one of {sorted(VARIANTS)}, got {args.variant!r}")
    variant = VARIANTS[args.variant]
    if variant.robot != args.robot or variant.controller_class() is not MPPIController:
        parser.error(f"{args.variant!r} is not an MPPI variant of the {args.robot}")
    gains = dict(variant.gains)
    settings = dict(gains.pop("settings"))
    fields = {f.name for f in dataclasses.fields(MPPISettings)}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or key not in fields | {"catch_level", "release_level"}:
            parser.error(f"--set takes KEY=VALUE with KEY in {sorted(fields)} or the levels")
        (settings if key in fields else gains)[key] = parse_value(value)
    runner = variant_runner(args.variant, args.robot, **{**gains, "settings": settings})
    controller = runner.predictor

    pushes_seeds = [None if s == "board" else int(s) for s in args.pushes_seeds]
    schedules = jv3.pushes(args.robot, pushes_seeds)
    pairs = [(i, n) for i in range(len(pushes_seeds)) for n in args.noise_seeds]

    @jax.jit
    def one(schedule: Any, memory: Any) -> Any:
        record = jv3.run(
            controller.decide,
            schedule,
            decision_steps=runner.decision_steps,
            memory=memory,
        )
        return jv3.score(record)

    # one run per call, not vmapped: under vmap the decision's lax.cond (plan or hold the
    # command, plan or catch) would become a select that plans on every step of every run
    start = time.perf_counter()
    scores = np.array(
        [
            float(
                one(
                    jax.tree_util.tree_map(lambda a, i=i: a[i], schedules),
                    controller.initial_memory(noise),
                )
            )
            for i, noise in pairs
        ]
    )
    seconds = time.perf_counter() - start
    rows = []
    for (i, noise), score in zip(pairs, scores, strict=True):
        name = args.pushes_seeds[i]
        rows.append({"pushes_seed": name, "noise_seed": noise, "score": float(score)})
        print(f"pushes {name:>5}  noise {noise:>3}  score {score:.4f}")
    print(
        f"{len(rows)} runs: mean {scores.mean():.4f}, worst {scores.min():.4f}, "
        f"best {scores.max():.4f} ({seconds:.0f} s, settings {settings}, {gains})"
    )
    if args.json:
        out = {"variant": args.variant, "settings": settings, "gains": gains, "runs": rows}
        Path(args.json).write_text(json.dumps(out, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
