"""Benchmark of the classical controllers on the env's own episodes.

For every controller and every task it applies to, on the same seeded episodes
(``TwoLinkVectorEnv(n).reset(seed=...)``), measures

- success rate (``info["is_success"]`` at the end of the episode; a balance
  episode that falls is a failure),
- final distance (reach: tip to target [m]; balance: larger link tilt [rad]),
- time to settle: the first time from which the task's success condition holds
  until the end of the episode [s],
- control effort ``∫ |tau|² dt`` [N²·m²·s] of the applied (saturated) torque,
- the fraction of steps with a saturated joint,

nominally, with the controller's model off by ±20 % in the masses (and
inertias) or in the lengths (and centre-of-mass distances, inertias ∝ length²),
and under observation noise. It also estimates the region of attraction of the
LQR under the torque limits by sampling initial states.

Usage::

    python benchmarks/bench_controllers.py [--episodes 1000] [--seed 0]
        [--out benchmarks/results/controllers.json]

Prints markdown tables (those of docs/controllers.md) and writes every figure to JSON.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.linalg

from twolink_gym import ArmParams, TwoLinkVectorEnv
from twolink_gym.controllers import CONTROLLERS, Controller, LQRController
from twolink_gym.tasks import TASKS, BalanceTask

#: Observation noise standard deviations, per observation entry name.
NOISE_STD = {
    "cos_q1": 0.01,
    "sin_q1": 0.01,
    "cos_q2": 0.01,
    "sin_q2": 0.01,
    "dq1": 0.05,
    "dq2": 0.05,
    "to_target_x": 0.005,
    "to_target_y": 0.005,
}


def scaled_params(base: ArmParams, mass: float = 1.0, length: float = 1.0) -> ArmParams:
    """``base`` with masses scaled by ``mass`` and lengths by ``length`` (inertias follow)."""
    return base.replace(
        m1=base.m1 * mass,
        m2=base.m2 * mass,
        l1=base.l1 * length,
        l2=base.l2 * length,
        lc1=base.lc1 * length,
        lc2=base.lc2 * length,
        I1=base.I1 * mass * length**2,
        I2=base.I2 * mass * length**2,
    )


@dataclasses.dataclass(frozen=True)
class Case:
    """One benchmark condition: the controller's model and the observation noise."""

    name: str
    mass: float = 1.0
    length: float = 1.0
    noise: bool = False


CASES = (
    Case("nominal"),
    Case("mass +20%", mass=1.2),
    Case("mass -20%", mass=0.8),
    Case("length +20%", length=1.2),
    Case("length -20%", length=0.8),
    Case("obs noise", noise=True),
)


def rollout(
    env: TwoLinkVectorEnv,
    controller: Controller,
    seed: int,
    noise_rng: np.random.Generator | None = None,
    options: dict[str, Any] | None = None,
) -> dict[str, np.ndarray]:
    """Run one episode in every copy of ``env``; per-episode metrics, each of shape ``(n,)``."""
    n, dt = env.num_envs, env.sim.dt
    std = np.array([NOISE_STD.get(name, 0.0) for name in env.sim.observation_names])
    obs, info = env.reset(seed=seed, options=options)
    success_now = info["is_success"].copy()
    settled_since = np.where(success_now, 0.0, np.nan)
    state, start = None, np.ones(n, dtype=bool)
    done = np.zeros(n, dtype=bool)
    success = np.zeros(n, dtype=bool)
    fell = np.zeros(n, dtype=bool)
    distance = np.zeros(n)
    effort = np.zeros(n)
    saturated_steps = np.zeros(n)
    steps = np.zeros(n)
    if env.max_episode_steps is None:
        raise ValueError("env: needs max_episode_steps set (each copy runs one episode), got None")
    for _ in range(env.max_episode_steps):
        seen = obs if noise_rng is None else obs + std * noise_rng.standard_normal(obs.shape)
        action, state = controller.predict(seen, state, start)
        live = ~done
        torque = env.sim.torque(env.sim.expand_action(np.clip(action, -1.0, 1.0)))
        effort[live] += np.sum(torque[live] ** 2, axis=1) * dt
        saturated_steps[live] += np.any(np.abs(np.atleast_2d(action.T).T[live]) >= 1.0, axis=1)
        steps[live] += 1
        obs, _, terminated, truncated, info = env.step(action)
        now = info["is_success"]
        t = info["time"]
        settled_since = np.where(live & now & np.isnan(settled_since), t, settled_since)
        settled_since = np.where(live & ~now, np.nan, settled_since)
        ended = live & (terminated | truncated)
        success[ended] = now[ended] & ~terminated[ended]
        fell[ended] = terminated[ended]
        distance[ended] = info["distance"][ended]
        done |= ended
        start = terminated | truncated
    return {
        "success": success,
        "fell": fell,
        "final_distance": distance,
        "settle_time": np.where(success, settled_since, np.nan),
        "effort": effort,
        "saturated_fraction": saturated_steps / np.maximum(steps, 1),
    }


def summarise(metrics: dict[str, np.ndarray]) -> dict[str, float]:
    """Aggregate per-episode metrics."""
    settle = metrics["settle_time"][~np.isnan(metrics["settle_time"])]
    dist = metrics["final_distance"]
    return {
        "episodes": len(dist),
        "success_rate": float(np.mean(metrics["success"])),
        "fall_rate": float(np.mean(metrics["fell"])),
        "final_distance_median": float(np.median(dist)),
        "final_distance_p95": float(np.percentile(dist, 95)),
        "final_distance_max": float(np.max(dist)),
        "settle_time_median": float(np.median(settle)) if settle.size else math.nan,
        "settle_time_p95": float(np.percentile(settle, 95)) if settle.size else math.nan,
        "effort_mean": float(np.mean(metrics["effort"])),
        "saturated_fraction_mean": float(np.mean(metrics["saturated_fraction"])),
    }


def evaluate_controllers(episodes: int, seed: int) -> list[dict[str, Any]]:
    """Every applicable (controller, task) pair under every case."""
    rows = []
    for task_name in TASKS:
        env = TwoLinkVectorEnv(episodes, task=task_name)
        for name, cls in CONTROLLERS.items():
            if not cls.applies_to(task_name):
                continue
            for case in CASES:
                model = scaled_params(env.sim.params, case.mass, case.length)
                controller = cls.from_env(env, model_params=model)
                noise_rng = np.random.default_rng(seed + 1) if case.noise else None
                start = time.perf_counter()
                summary = summarise(rollout(env, controller, seed, noise_rng))
                summary["seconds"] = time.perf_counter() - start
                rows.append({"controller": name, "task": task_name, "case": case.name, **summary})
    return rows


# -- LQR: region of attraction and the discrete-vs-continuous design ----------
def _attracted(controller: LQRController, starts: np.ndarray, seed: int) -> np.ndarray:
    """Whether balance episodes from ``starts`` ``(n, 4)`` end in success without a fall.

    States with a joint speed beyond the env's limit count as not attracted.
    """
    env = TwoLinkVectorEnv(
        len(starts),
        task="balance",
        max_torque=tuple(controller.max_torque.tolist()),
        actuation=controller.actuation,
    )
    valid = np.all(np.abs(starts[:, 2:]) <= env.sim.max_speed, axis=1)
    safe = np.where(valid[:, None], starts, controller.design.state_eq)
    return rollout(env, controller, seed, options={"state": safe})["success"] & valid


def lqr_region_of_attraction(
    controller: LQRController, directions: int, seed: int
) -> dict[str, Any]:
    """Sampled region of attraction of an LQR controller under the torque limits.

    An initial state is attracted if its balance episode (10 s) ends in the
    task's success condition without a fall. Two estimates:

    - per-axis half-widths: the largest ``a`` such that every state
      ``x* ± s e_i`` with ``s <= a`` on a grid of 200 amplitudes is attracted;
    - a level set ``{dxᵀ P dx < c}``: along ``directions`` random rays
      (uniform on the ellipsoid ``dxᵀ P dx = 1``) and the eight axis rays, the
      first failing level on a grid of 120 levels; ``c`` is the smallest.
    """
    design = controller.design
    upright = design.state_eq
    fall = BalanceTask().fall_angle
    axis_names = ["q1", "q2", "dq1", "dq2"]
    axis_max = np.array([fall, fall, 6.0, 6.0])

    grid = 200
    amplitudes = np.linspace(0.0, 1.0, grid + 1)[1:]
    signed_axes = [(axis, sign) for axis in range(4) for sign in (1.0, -1.0)]
    starts = np.array(
        [
            upright + sign * a * axis_max[axis] * np.eye(4)[axis]
            for axis, sign in signed_axes
            for a in amplitudes
        ]
    )
    ok = _attracted(controller, starts, seed).reshape(len(signed_axes), grid)
    half_widths: dict[str, dict[str, Any]] = {name: {} for name in axis_names}
    for row, (axis, sign) in enumerate(signed_axes):
        first_bad = grid if ok[row].all() else int(np.argmin(ok[row]))
        key = "+" if sign > 0 else "-"
        half_widths[axis_names[axis]][key] = (
            float(amplitudes[first_bad - 1] * axis_max[axis]) if first_bad else 0.0
        )
        half_widths[axis_names[axis]][f"{key}_beyond_grid"] = bool(ok[row].all())

    # rays: unit vectors in the P-metric (dᵀ P d = 1), random and along the axes
    rng = np.random.default_rng(seed)
    u = rng.standard_normal((directions, 4))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    chol = np.linalg.cholesky(design.p)  # P = L Lᵀ, so d = L⁻ᵀ u has dᵀ P d = 1
    rays = np.linalg.solve(chol.T, u.T).T
    axis_rays = np.array([sign * np.eye(4)[axis] for axis, sign in signed_axes])
    axis_rays /= np.sqrt(np.einsum("ni,ij,nj->n", axis_rays, design.p, axis_rays))[:, None]
    rays = np.concatenate([rays, axis_rays])
    levels = (
        np.linspace(0.0, 1.0, 121)[1:] ** 2
        * 4
        * design.cost_to_go(upright + axis_max[0] * np.eye(4)[0])
    )
    starts = upright + np.sqrt(levels)[None, :, None] * rays[:, None, :]
    ok = _attracted(controller, starts.reshape(-1, 4), seed).reshape(len(rays), len(levels))
    first_fail = np.where(ok.all(axis=1), len(levels), np.argmin(ok, axis=1))
    ray_levels = np.where(first_fail > 0, levels[np.maximum(first_fail - 1, 0)], 0.0)
    level = float(np.min(ray_levels))
    return {
        "per_axis_half_widths": half_widths,
        "per_axis_grid_step": (axis_max / grid).tolist(),
        "rays": len(rays),
        "levels": len(levels),
        "level_grid_max": float(levels[-1]),
        "level_c": level,
        "level_any_ray_beyond_grid": bool(ok.all(axis=1).any()),
        # extent of {dxᵀ P dx < c} along each axis (others zero), and its projection
        "level_axis_intercepts": np.sqrt(level / np.diag(design.p)).tolist(),
        "level_projections": np.sqrt(level * np.diag(np.linalg.inv(design.p))).tolist(),
    }


def continuous_vs_discrete(episodes: int, seed: int) -> dict[str, Any]:
    """The default LQR weights designed in continuous time (CARE), run in the sampled loop."""
    env = TwoLinkVectorEnv(episodes, task="balance")
    controller = LQRController.from_env(env)
    d = controller.design
    p_c = scipy.linalg.solve_continuous_are(d.a, d.b, d.q, d.r)
    k_c = np.linalg.solve(d.r, d.b.T @ p_c)
    closed = d.a_d - d.b_d @ k_c
    radius_c = float(np.max(np.abs(np.linalg.eigvals(closed))))
    # the same controller with the continuous-time gain, on the env's episodes
    care = LQRController.from_env(env)
    eigenvalues = np.linalg.eigvals(closed).astype(np.complex128)
    care.design = dataclasses.replace(d, k=k_c, eigenvalues=eigenvalues)
    care_summary = summarise(rollout(env, care, seed))
    result: dict[str, Any] = {
        "dt": d.dt,
        "nyquist_rad_per_s": math.pi / d.dt,
        "open_loop_eigenvalues": sorted(np.linalg.eigvals(d.a).real.tolist()),
        "continuous_closed_loop_eigenvalues": sorted(
            np.linalg.eigvals(d.a - d.b @ k_c).real.tolist()
        ),
        "discrete_gain": d.k.tolist(),
        "continuous_gain": k_c.tolist(),
        "discrete_spectral_radius": float(np.max(np.abs(d.eigenvalues))),
        "continuous_gain_sampled_spectral_radius": radius_c,
        "continuous_gain_balance_success_rate": care_summary["success_rate"],
        "continuous_gain_balance_fall_rate": care_summary["fall_rate"],
        "continuous_gain_saturated_fraction": care_summary["saturated_fraction_mean"],
    }
    if radius_c < 1.0:
        # cost of the continuous gain in the sampled loop, Σ xᵀQx + uᵀRu (discrete Lyapunov)
        p_cs = scipy.linalg.solve_discrete_lyapunov(closed.T, d.q + k_c.T @ d.r @ k_c)
        l_inv = np.linalg.inv(np.linalg.cholesky(d.p))
        ratio = np.linalg.eigvalsh(l_inv @ p_cs @ l_inv.T)
        result["continuous_gain_cost_ratio_range"] = [float(ratio.min()), float(ratio.max())]
    return result


# -- output -------------------------------------------------------------------
def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _num(x: float, digits: int = 3) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}g}"


def markdown(rows: list[dict[str, Any]], roa: dict[str, Any], cvd: dict[str, Any]) -> str:
    """The markdown tables of the results (docs/controllers.md)."""
    out = [
        "| controller | task | success | final distance, median / p95 | settle time, median / p95 [s] | effort ∫τ²dt, mean [N²m²s] | saturated steps |",
        "|---|---|---|---|---|---|---|",
    ]
    unit = {"reach": "m", "balance": "rad"}
    for r in rows:
        if r["case"] != "nominal":
            continue
        out.append(
            f"| {r['controller']} | {r['task']} | {_pct(r['success_rate'])} | "
            f"{_num(r['final_distance_median'])} / {_num(r['final_distance_p95'])} {unit[r['task']]} | "
            f"{_num(r['settle_time_median'])} / {_num(r['settle_time_p95'])} | "
            f"{_num(r['effort_mean'], 4)} | {_pct(r['saturated_fraction_mean'])} |"
        )
    cases = [c.name for c in CASES]
    out += [
        "",
        "Success rate (median final distance) with the controller's model off by ±20 % "
        "(masses and inertias, or lengths, centre-of-mass distances and inertias ∝ length²; "
        "the plant keeps the default arm) and under observation noise (i.i.d. Gaussian per "
        "step, σ = "
        + ", ".join(f"{v:g} on {k}" for k, v in NOISE_STD.items())
        + "; the target itself is exact):",
        "",
        "| controller | task | " + " | ".join(cases) + " |",
        "|---|---|" + "---|" * len(cases),
    ]
    pairs = list(dict.fromkeys((r["controller"], r["task"]) for r in rows))
    for ctrl, task in pairs:
        cells = []
        for case in cases:
            r = next(
                x for x in rows if (x["controller"], x["task"], x["case"]) == (ctrl, task, case)
            )
            cells.append(
                f"{_pct(r['success_rate'])} ({_num(r['final_distance_median'], 2)} {unit[task]})"
            )
        out.append(f"| {ctrl} | {task} | " + " | ".join(cells) + " |")
    hw = roa["per_axis_half_widths"]
    out += [
        "",
        "LQR region of attraction under the torque limits (the balance episode from "
        "the upright plus the offset ends in success, without a fall):",
        "",
        "| axis | − half-width | + half-width | level set: intercept / projection |",
        "|---|---|---|---|",
    ]
    units = ["rad", "rad", "rad/s", "rad/s"]
    for i, axis in enumerate(["q1", "q2", "dq1", "dq2"]):
        plus = _num(hw[axis]["+"]) + ("+" if hw[axis]["+_beyond_grid"] else "")
        minus = _num(hw[axis]["-"]) + ("+" if hw[axis]["-_beyond_grid"] else "")
        out.append(
            f"| {axis} | {minus} {units[i]} | {plus} {units[i]} | "
            f"{_num(roa['level_axis_intercepts'][i])} / {_num(roa['level_projections'][i])} {units[i]} |"
        )
    out += [
        "",
        f"Level set: along {roa['rays']} rays (random in the P-metric, and the 8 axis "
        f"directions) every state with dxᵀPdx < c = {_num(roa['level_c'], 4)} is attracted "
        f"(grid of {roa['levels']} levels). '+': no failure up to the end of the grid "
        "(60° for angles, 6 rad/s for speeds).",
        "",
        f"Discrete vs continuous design at dt = {cvd['dt']} s: the DARE gain gives spectral "
        f"radius {_num(cvd['discrete_spectral_radius'], 4)}. The same Q and R designed in "
        f"continuous time (CARE) place a pole at "
        f"{_num(cvd['continuous_closed_loop_eigenvalues'][0], 4)} rad/s, beyond the Nyquist "
        f"rate {_num(cvd['nyquist_rad_per_s'], 4)} rad/s: in the sampled loop its spectral "
        f"radius is {_num(cvd['continuous_gain_sampled_spectral_radius'], 4)}, and on the "
        f"env it balances {_pct(cvd['continuous_gain_balance_success_rate'])} of the episodes "
        f"({_pct(cvd['continuous_gain_saturated_fraction'])} of the steps saturated)"
        + (
            f"; its cost in the sampled loop is "
            f"{_num(cvd['continuous_gain_cost_ratio_range'][0], 4)}–"
            f"{_num(cvd['continuous_gain_cost_ratio_range'][1], 4)} × the DARE optimum."
            if "continuous_gain_cost_ratio_range" in cvd
            else "."
        ),
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=1000, help="episodes per row")
    parser.add_argument("--seed", type=int, default=0, help="seed of the episode set")
    parser.add_argument(
        "--roa-rays", type=int, default=200, help="random rays for the LQR region of attraction"
    )
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/controllers.json"), help="JSON output"
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = evaluate_controllers(args.episodes, args.seed)
    probe = TwoLinkVectorEnv(1, task="balance")
    roa = lqr_region_of_attraction(LQRController.from_env(probe), args.roa_rays, args.seed)
    cvd = continuous_vs_discrete(args.episodes, args.seed)
    print(markdown(rows, roa, cvd))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "command": "python benchmarks/bench_controllers.py "
        f"--episodes {args.episodes} --seed {args.seed} --roa-rays {args.roa_rays}",
        "noise_std": NOISE_STD,
        "rows": rows,
        "lqr_region_of_attraction": roa,
        "lqr_continuous_vs_discrete": cvd,
        "seconds": time.perf_counter() - start,
    }
    args.out.write_text(json.dumps(payload, indent=2))
    print(f"\nwrote {args.out} ({payload['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
