"""Region of attraction of the upright LQR under the swing-up task's torque limits.

For each actuation (the full arm, the pendubot, the acrobot), the discrete LQR
about the upright is designed on the arm's linearisation (one input for an
underactuated arm) with ``LQRController``'s default weights and the swing-up
task's default limits for that arm (``SwingupTask.default_max_torque_for``:
(8, 4) N·m for the full arm, (30, 10) N·m for the acrobot and the pendubot);
its region of attraction is estimated with
``bench_controllers.lqr_region_of_attraction`` (balance episodes from the
upright plus an offset that end in success without a fall). The levels ``c``
bound the default catch levels of ``energy_swingup`` (full arm) and
``pendubot_swingup``.

The second table runs the *switched* ``pendubot_swingup`` controller (catch
below the level, release above its ``release_level``; swing-up episodes,
15 s) from states just inside the catch level on the same random rays, and
counts the rays it balances: the LQR's trajectories may leave the level set
on their way in, and the hysteresis keeps them with the LQR.

    python benchmarks/swingup_lqr_roa.py            # table on stdout (400 random rays)
    python benchmarks/swingup_lqr_roa.py --rays 100 # fewer random rays
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_controllers import lqr_region_of_attraction, rollout

from twolink_gym.controllers import LQRController, PendubotSwingupController
from twolink_gym.controllers.pfl_swingup import PFLSwingupController
from twolink_gym.dynamics import linearize
from twolink_gym.simulation import ACTUATIONS
from twolink_gym.tasks import SwingupTask
from twolink_gym.vector_env import TwoLinkVectorEnv

UPRIGHT = np.array([np.pi / 2, 0.0, 0.0, 0.0])
#: Levels of the switched-catch check.
CATCH_LEVELS = (20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0)


def switched_catch(cls: type[PFLSwingupController], rays: int, seed: int) -> dict[float, float]:
    """Share of random rays (uniform in the P-metric) the switched controller balances, per level.

    Each start is ``upright + sqrt(0.99 level) d`` with ``dᵀ P d = 1`` (just inside
    the catch region); it counts if
    the swing-up episode from there (controller with ``catch_level = level``)
    ends in success.
    """
    probe = cls()
    rng = np.random.default_rng(seed)
    u = rng.standard_normal((rays, 4))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    directions = np.linalg.solve(np.linalg.cholesky(probe.design.p).T, u.T).T
    env = TwoLinkVectorEnv(rays, task="swingup", actuation=probe.actuation)
    shares = {}
    for level in CATCH_LEVELS:
        controller = cls.from_env(env, catch_level=level)
        starts = UPRIGHT + np.sqrt(0.99 * level) * directions
        shares[level] = float(
            np.mean(rollout(env, controller, seed, options={"state": starts})["success"])
        )
    return shares


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rays", type=int, default=400, help="random rays of the level-set estimate"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    rows = {}
    print(f"LQR about the upright, the swing-up task's default limits, dt 0.02 s, {args.rays} rays")
    print(
        "| arm | limits (τ1, τ2) [N·m] | controllable (rank of [B AB A²B A³B]) "
        "| q1 | q2 | dq1 | dq2 | level c |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for actuation in ("full", "pendubot", "acrobot"):
        limits = SwingupTask.default_max_torque_for(actuation)
        controller = LQRController("balance", max_torque=limits, actuation=actuation)
        a, b = linearize(controller.params, UPRIGHT, np.zeros(2))
        b = b[:, list(ACTUATIONS[actuation])]
        rank = int(
            np.linalg.matrix_rank(np.hstack([np.linalg.matrix_power(a, i) @ b for i in range(4)]))
        )
        roa = lqr_region_of_attraction(controller, args.rays, args.seed)
        rows[actuation] = {"limits": list(limits), "rank": rank, **roa}
        hw = roa["per_axis_half_widths"]
        cells = [
            f"±{hw[k]['+']:.3g}{'+' if hw[k]['+_beyond_grid'] else ''}"
            for k in ("q1", "q2", "dq1", "dq2")
        ]
        print(
            f"| {actuation} | {limits} | {'yes' if rank == 4 else 'no'} ({rank}) | "
            + " | ".join(cells)
            + f" | {roa['level_c']:.3g} |"
        )
    print(
        "half-widths along each axis [rad, rad, rad/s, rad/s]; level c: every state with dxᵀPdx < c was balanced"
    )
    shares = switched_catch(PendubotSwingupController, args.rays, args.seed)
    rows["pendubot_switched_catch"] = {str(k): v for k, v in shares.items()}
    print()
    print("pendubot_swingup, switched catch: share of the rays balanced from dxᵀPdx = 0.99 level")
    print("| level | " + " | ".join(f"{k:g}" for k in shares) + " |")
    print("|---|" + "---:|" * len(shares))
    print("| balanced | " + " | ".join(f"{100 * v:.1f} %" for v in shares.values()) + " |")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
