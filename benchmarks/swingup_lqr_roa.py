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

The second table is about the catches of the underactuated swing-ups
(``pendubot_swingup``, ``acrobot_swingup``), whose catch LQR may have its own
weights. For each: a level-set estimate of the catch LQR's region of
attraction in the task where it acts (swing-up episodes of 15 s, no fall
condition; the LQR alone, i.e. the controller with catch and release levels
beyond any cost): along random rays (uniform in the P-metric) and the eight
axis rays, the first failing level on a geometric grid of levels; ``c`` is
the smallest. Then the *switched* controller with its default levels (catch
below ``catch_level``, release above ``release_level``) from states just
inside the catch level (0.99 of it) on the same rays: the share it balances.

    python benchmarks/swingup_lqr_roa.py            # table on stdout (400 random rays)
    python benchmarks/swingup_lqr_roa.py --rays 100 # fewer random rays
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_controllers import lqr_region_of_attraction, rollout

from twolink_gym.controllers import (
    AcrobotSwingupController,
    LQRController,
    PendubotSwingupController,
)
from twolink_gym.controllers.pfl_swingup import PFLSwingupController
from twolink_gym.dynamics import linearize
from twolink_gym.simulation import ACTUATIONS
from twolink_gym.tasks import SwingupTask
from twolink_gym.vector_env import TwoLinkVectorEnv

UPRIGHT = np.array([np.pi / 2, 0.0, 0.0, 0.0])
#: Level grid of the catch LQRs' level-set estimate.
CATCH_GRID = np.geomspace(1.0, 1000.0, 41)


def _unit_rays(p: np.ndarray, rays: int, seed: int) -> np.ndarray:
    """``rays`` random directions and the 8 signed axes, each scaled to ``dᵀ P d = 1``."""
    rng = np.random.default_rng(seed)
    u = rng.standard_normal((rays, 4))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    random = np.linalg.solve(np.linalg.cholesky(p).T, u.T).T
    axes = np.concatenate([np.eye(4), -np.eye(4)])
    axes /= np.sqrt(np.einsum("ni,ij,nj->n", axes, p, axes))[:, None]
    return np.concatenate([random, axes])


def _balanced(controller: PFLSwingupController, starts: np.ndarray, seed: int) -> np.ndarray:
    """Whether swing-up episodes from ``starts`` end in success (speeds beyond the limit: no)."""
    env = TwoLinkVectorEnv(len(starts), task="swingup", actuation=controller.actuation)
    valid = np.all(np.abs(starts[:, 2:]) <= env.sim.max_speed, axis=1)
    safe = np.where(valid[:, None], starts, UPRIGHT)
    ok = rollout(env, controller, seed, options={"state": safe})["success"]
    return np.asarray(ok & valid)


def catch_check(cls: type[PFLSwingupController], rays: int, seed: int) -> dict[str, Any]:
    """The catch LQR's level-set estimate and the switched controller's share at its catch level."""
    default = cls()
    directions = _unit_rays(default.design.p, rays, seed)
    lqr_alone = cls(catch_level=1e12, release_level=1e12)
    starts = UPRIGHT + np.sqrt(CATCH_GRID)[None, :, None] * directions[:, None, :]
    ok = _balanced(lqr_alone, starts.reshape(-1, 4), seed).reshape(len(directions), -1)
    first_fail = np.where(ok.all(axis=1), len(CATCH_GRID), np.argmin(ok, axis=1))
    ray_levels = np.where(first_fail > 0, CATCH_GRID[np.maximum(first_fail - 1, 0)], 0.0)
    inside = UPRIGHT + np.sqrt(0.99 * default.catch_level) * directions
    switched = _balanced(default, inside, seed)
    return {
        "Q": np.diag(default.design.q).tolist(),
        "R": default.design.r.ravel().tolist(),
        "level_c": float(ray_levels.min()),
        "catch_level": default.catch_level,
        "release_level": default.release_level,
        "switched_share": float(switched.mean()),
        "rays": len(directions),
    }


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
    print()
    print("catch LQRs of the underactuated swing-ups (swing-up episodes, no fall condition)")
    print(
        "| controller | Q (diagonal) | R | level c, LQR alone | catch level | release level "
        "| switched, rays balanced from 0.99 catch level |"
    )
    print("|---|---|---|---:|---:|---:|---:|")
    for name, cls in (
        ("pendubot_swingup", PendubotSwingupController),
        ("acrobot_swingup", AcrobotSwingupController),
    ):
        check = catch_check(cls, args.rays, args.seed)
        rows[f"{name}_catch"] = check
        q = ", ".join(f"{v:.3g}" for v in check["Q"])
        print(
            f"| {name} | ({q}) | {check['R'][0]:.3g} | {check['level_c']:.3g} | "
            f"{check['catch_level']:g} | {check['release_level']:g} | "
            f"{100 * check['switched_share']:.1f} % of {check['rays']} |"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
