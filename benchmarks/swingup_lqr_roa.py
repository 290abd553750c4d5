"""Region of attraction of the upright LQR under the swing-up task's torque limits.

For each actuation (the full arm, the pendubot, the acrobot), the discrete LQR
about the upright is designed on the arm's linearisation (one input for an
underactuated arm) with ``LQRController``'s default weights and the swing-up
task's default limits (8, 4) N·m; its region of attraction is estimated with
``bench_controllers.lqr_region_of_attraction`` (balance episodes from the
upright plus an offset that end in success without a fall). The full arm's
level ``c`` is the default catch level of the ``energy_swingup`` controller.

    python benchmarks/swingup_lqr_roa.py            # table on stdout
    python benchmarks/swingup_lqr_roa.py --rays 200 # more random rays
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_controllers import lqr_region_of_attraction

from twolink_gym.controllers import LQRController
from twolink_gym.dynamics import linearize
from twolink_gym.simulation import ACTUATIONS
from twolink_gym.tasks import SwingupTask

UPRIGHT = np.array([np.pi / 2, 0.0, 0.0, 0.0])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rays", type=int, default=100, help="random rays of the level-set estimate"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    limits = SwingupTask.default_max_torque
    rows = {}
    print(f"LQR about the upright, torque limits {limits} N·m, dt 0.02 s")
    print("| arm | controllable (rank of [B AB A²B A³B]) | q1 | q2 | dq1 | dq2 | level c |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for actuation in ("full", "pendubot", "acrobot"):
        controller = LQRController("balance", max_torque=limits, actuation=actuation)
        a, b = linearize(controller.params, UPRIGHT, np.zeros(2))
        b = b[:, list(ACTUATIONS[actuation])]
        rank = int(
            np.linalg.matrix_rank(np.hstack([np.linalg.matrix_power(a, i) @ b for i in range(4)]))
        )
        roa = lqr_region_of_attraction(controller, args.rays, args.seed)
        rows[actuation] = {"rank": rank, **roa}
        hw = roa["per_axis_half_widths"]
        cells = [
            f"±{hw[k]['+']:.3g}{'+' if hw[k]['+_beyond_grid'] else ''}"
            for k in ("q1", "q2", "dq1", "dq2")
        ]
        print(
            f"| {actuation} | {'yes' if rank == 4 else 'no'} ({rank}) | "
            + " | ".join(cells)
            + f" | {roa['level_c']:.3g} |"
        )
    print(
        "half-widths along each axis [rad, rad, rad/s, rad/s]; level c: every state with dxᵀPdx < c was balanced"
    )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
