"""The classic looping-path tracking exercise, reproduced with the package.

The source samples a looping path (a circle of radius 0.79 m with 13 loops
of radius 0.2 m, 2000 points over 60 s), solves inverse kinematics taking
the branch nearest to the previous point, differentiates the angles twice by
finite differences, computes the torques by inverse dynamics, and finds that
simulating forward under those torques alone "quickly diverges". Here:

1. the same path, as the analytic :class:`~twolink_gym.paths.LoopingPath`
   (equal to the exercise's points to round-off except at the two end points,
   where its one-sided finite-difference tangent is off by 0.3 mm), and the
   exercise's finite-difference joint derivatives against the analytic ones
   of :func:`~twolink_gym.paths.joint_reference`;
2. (a) open loop: the feed-forward torques alone, integrated with
   :func:`twolink_gym.step`; the time until the tip is 5 cm off, and the
   cause (the linearisation along the path is unstable, so any error grows);
3. (b) computed torque ``τ = M(q)(q̈_ref + Kd ė + Kp e) + h(q, q̇)`` with the
   exact model, evaluated as :func:`twolink_gym.inverse_dynamics` of the
   controller's model;
4. (c) the same with ±20 % errors in the controller's model.

The arm is the exercise's: l1 = l2 = 0.5 m, m1 = 1 kg, m2 = 10 kg, taken as
uniform rods (lc = l/2, I = m l²/12: the exercise's own inertias do not
follow its stated rule), g = 9.81 m/s², no friction. Control period 0.02 s
(the env's default) with 2 RK4 sub-steps, torque held over the period, and no
torque limit.

Usage::

    python benchmarks/looping_path.py [--figure docs/results/tracking/looping_path.png]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from twolink_gym import ArmParams, inverse_dynamics, linearize, step, tip_position
from twolink_gym.controllers.base import nearest_ik
from twolink_gym.controllers.computed_torque import computed_torque_law
from twolink_gym.paths import LoopingPath, TipPath, joint_reference

Array = NDArray[np.float64]

#: The exercise's arm, as uniform rods without friction.
LOOPING_ARM = ArmParams.uniform_rods(m1=1.0, m2=10.0, l1=0.5, l2=0.5, friction1=0.0, friction2=0.0)
#: The exercise's sampling: 2000 points over 60 s.
LOOPING_POINTS = 2000
LOOPING_SECONDS = 60.0
DT = 0.02
SUBSTEPS = 2
#: Computed-torque gains: ``Kp = ωn²``, ``Kd = 2 ζ ωn`` (the package controller's defaults).
NATURAL_FREQUENCY = 10.0
DAMPING_RATIO = 1.0
#: Tip error [m] that counts as "diverged" in the open-loop runs.
DIVERGED = 0.05
#: Natural frequencies [rad/s] of the mismatch table.
GAINS = (NATURAL_FREQUENCY, 20.0)
#: Length of the open-loop runs [s], a finer control period [s] and an initial error [rad].
OPEN_LOOP_SECONDS = 10.0
FINE_DT = 0.002
PERTURBATION = 1e-9

ROOT = Path(__file__).resolve().parents[1]
FIGURE = ROOT / "docs" / "results" / "tracking" / "looping_path.png"


# -- the exercise's finite differences ------------------------------------------------


@dataclasses.dataclass(frozen=True)
class FiniteDifferences:
    """The exercise's joint trajectory and its finite-difference derivatives.

    Attributes
    ----------
    t : ndarray, shape (N - 2,)
        Times of the torque samples (interior points) [s].
    q, dq, ddq : ndarray, shape (N - 2, 2)
        Angles [rad], backward-difference velocities [rad/s] (the exercise
        pairs ``q[i]`` with ``(q[i] - q[i-1]) / dt``) and central second
        differences [rad/s²].
    tau : ndarray, shape (N - 2, 2)
        Inverse-dynamics torques of those [N·m].
    branch_flips : int
        Points where the nearest-branch rule changed the sign of ``q2``.
    """

    t: Array
    q: Array
    dq: Array
    ddq: Array
    tau: Array
    branch_flips: int


def seed_finite_differences(
    params: ArmParams, path: TipPath, points: int = LOOPING_POINTS
) -> FiniteDifferences:
    """The exercise's pipeline: nearest-branch IK per point, then two finite differences.

    The first point takes the branch with ``q2 >= 0`` (the exercise's "elbow
    to the right", the package's ``"down"``); every later point takes the
    branch nearest to the previous angles (:func:`~twolink_gym.controllers.base.nearest_ik`).
    """
    t = np.linspace(0.0, path.duration, points)
    p = path.position(t)
    q = np.empty((points, 2))
    q[0] = joint_reference(params, path, t[:1], elbow="down")[0][0]
    for i in range(1, points):
        q[i] = nearest_ik(params, p[i : i + 1], q[i - 1 : i])[0]
    h = t[1] - t[0]
    vel = np.diff(q, axis=0) / h  # at the midpoints
    acc = np.diff(vel, axis=0) / h  # at t[1:-1]
    q_in, dq_in = q[1:-1], vel[:-1]
    tau = inverse_dynamics(params, q_in, dq_in, acc)
    flips = int(np.count_nonzero(np.diff(np.sign(q[:, 1])) != 0))
    return FiniteDifferences(t[1:-1], q_in, dq_in, acc, tau, flips)


# -- simulation -----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Run:
    """One simulated run at the control period.

    Attributes
    ----------
    t : ndarray, shape (n + 1,)
        Control instants [s].
    state : ndarray, shape (n + 1, 4)
        ``[q1, q2, dq1, dq2]`` at those instants.
    tau : ndarray, shape (n, 2)
        Torque held over each period [N·m].
    tip, tip_ref : ndarray, shape (n + 1, 2)
        Actual and reference tip positions [m].
    """

    t: Array
    state: Array
    tau: Array
    tip: Array
    tip_ref: Array

    @property
    def error(self) -> Array:
        """Tip error [m], shape ``(n + 1,)``."""
        return np.asarray(np.hypot(*(self.tip - self.tip_ref).T))

    @property
    def rms(self) -> float:
        """RMS tip error [m]."""
        return float(np.sqrt(np.mean(self.error**2)))

    @property
    def max(self) -> float:
        """Largest tip error [m]."""
        return float(np.max(self.error))

    def time_to(self, threshold: float) -> float:
        """First instant [s] at which the tip error exceeds ``threshold`` (inf if never)."""
        over = self.error > threshold
        return float(self.t[np.argmax(over)]) if over.any() else math.inf


def _instants(seconds: float, dt: float) -> Array:
    return np.arange(round(seconds / dt) + 1, dtype=np.float64) * dt


def _start(params: ArmParams, path: TipPath, q_error: float) -> Array:
    q, dq, _ = joint_reference(params, path, np.zeros(1))
    return np.concatenate([q[0] + np.array([q_error, 0.0]), dq[0]])


def _simulate(
    params: ArmParams,
    path: TipPath,
    seconds: float,
    dt: float,
    substeps: int,
    q_error: float,
    torque_at: Callable[[int, Array], Array],
) -> Run:
    """Run the arm from the reference start, holding ``torque_at(k, x_k)`` over each period."""
    t = _instants(seconds, dt)
    x = np.empty((t.size, 4))
    x[0] = _start(params, path, q_error)
    tau = np.empty((t.size - 1, 2))
    for k in range(t.size - 1):
        tau[k] = torque_at(k, x[k])
        x[k + 1] = step(params, x[k], tau[k], dt, substeps)
    return Run(t, x, tau, tip_position(params, x[:, :2]), path.position(t))


def open_loop(
    params: ArmParams,
    path: TipPath,
    torque: Array,
    seconds: float = LOOPING_SECONDS,
    dt: float = DT,
    substeps: int = SUBSTEPS,
    q_error: float = 0.0,
) -> Run:
    """Apply the torques ``torque[k]`` over ``[k dt, (k + 1) dt]`` with no feedback.

    The arm starts on the reference (``q1`` offset by ``q_error`` [rad]).
    """
    return _simulate(params, path, seconds, dt, substeps, q_error, lambda k, _: torque[k])


def feed_forward(params: ArmParams, path: TipPath, t: Array) -> Array:
    """Analytic inverse-dynamics torques along ``path`` at the times ``t`` [N·m], shape ``(n, 2)``."""
    return inverse_dynamics(params, *joint_reference(params, path, t))


def computed_torque(
    params: ArmParams,
    model: ArmParams,
    path: TipPath,
    seconds: float = LOOPING_SECONDS,
    dt: float = DT,
    substeps: int = SUBSTEPS,
    natural_frequency: float = NATURAL_FREQUENCY,
    damping_ratio: float = DAMPING_RATIO,
    q_error: float = 0.0,
) -> Run:
    """Track ``path`` with computed torque on the controller's ``model``.

    At each control instant ``t_k`` with measured ``(q, q̇)``:
    ``τ = inverse_dynamics(model, q, q̇, q̈_ref + Kd ė + Kp e)``
    (:func:`~twolink_gym.controllers.computed_torque.computed_torque_law`), i.e.
    ``M(q)(q̈_ref + Kd ė + Kp e) + C(q, q̇) q̇ + G(q)`` of the model, with
    ``e = wrap(q_ref - q)``, ``ė = q̇_ref - q̇``, held over the period; no
    torque limit. The joint reference comes from the true arm's kinematics
    (``params``): the model error is in the dynamics only.
    """
    kp, kd = natural_frequency**2, 2.0 * damping_ratio * natural_frequency
    q_ref, dq_ref, ddq_ref = joint_reference(params, path, _instants(seconds, dt))

    def law(k: int, x: Array) -> Array:
        return computed_torque_law(model, x[:2], x[2:], q_ref[k], dq_ref[k], ddq_ref[k], kp, kd)

    return _simulate(params, path, seconds, dt, substeps, q_error, law)


def unstable_rate(params: ArmParams, path: TipPath, samples: int = 600) -> tuple[Array, Array]:
    """Largest real part [1/s] of the eigenvalues of the linearisation along the path.

    ``A(t) = ∂f/∂x`` at the reference state and feed-forward torque
    (:func:`twolink_gym.linearize`), at ``samples`` instants.

    Returns
    -------
    t : ndarray, shape (samples,)
    rate : ndarray, shape (samples,)
    """
    t = np.linspace(0.0, path.duration, samples)
    q, dq, ddq = joint_reference(params, path, t)
    a, _ = linearize(params, np.concatenate([q, dq], -1), inverse_dynamics(params, q, dq, ddq))
    return t, np.max(np.linalg.eigvals(a).real, axis=-1)


#: Model errors of the mismatch table: (label, field changes as factors).
MISMATCH: tuple[tuple[str, dict[str, float]], ...] = (
    ("exact model", {}),
    ("m1 × 1.2", {"m1": 1.2}),
    ("m1 × 0.8", {"m1": 0.8}),
    ("m2 × 1.2", {"m2": 1.2}),
    ("m2 × 0.8", {"m2": 0.8}),
    ("l1 × 1.2", {"l1": 1.2}),
    ("l1 × 0.8", {"l1": 0.8}),
    ("l2 × 1.2", {"l2": 1.2}),
    ("l2 × 0.8", {"l2": 0.8}),
    ("m1, m2, l1, l2 × 1.2", {"m1": 1.2, "m2": 1.2, "l1": 1.2, "l2": 1.2}),
)


def mismatched_model(factors: dict[str, float]) -> ArmParams:
    """The seed arm with some of ``m1, m2, l1, l2`` scaled (still uniform rods, no friction)."""
    base = {"m1": LOOPING_ARM.m1, "m2": LOOPING_ARM.m2, "l1": LOOPING_ARM.l1, "l2": LOOPING_ARM.l2}
    scaled = {k: v * factors.get(k, 1.0) for k, v in base.items()}
    return ArmParams.uniform_rods(**scaled, friction1=0.0, friction2=0.0)


# -- report ---------------------------------------------------------------------------


def _mm(metres: float) -> str:
    return f"{1000 * metres:.3g}"


def _figure(out: Path, path: TipPath, runs: dict[str, Run], fd: FiniteDifferences, ct: Run) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 5.2))
    ax = axes[0]
    ref = path.position(np.linspace(0.0, path.duration, 4000))
    ring = np.linspace(0.0, 2 * math.pi, 400)
    ax.plot(LOOPING_ARM.reach * np.cos(ring), LOOPING_ARM.reach * np.sin(ring), "k--", lw=0.8)
    ax.plot(*ref.T, color="0.6", lw=2.5, label="reference")
    open_run = runs["analytic"]
    stop = int(np.argmax(open_run.error > 0.3)) if (open_run.error > 0.3).any() else None
    ax.plot(*open_run.tip[:stop].T, color="tab:red", lw=1, label="open loop (until 30 cm off)")
    ax.plot(*ct.tip.T, color="tab:blue", lw=0.6, label="computed torque (on the reference)")
    ax.plot(*ref[0], "go", label="start")
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_title("Tip paths (arm reach dashed)")
    ax.legend(loc="lower left", fontsize=8)

    ax = axes[1]
    for label, run in runs.items():
        ax.semilogy(run.t, np.maximum(run.error, 1e-12), lw=1, label=f"open loop, {label}")
    ax.semilogy(ct.t, np.maximum(ct.error, 1e-12), lw=1, label="computed torque")
    ax.axhline(DIVERGED, color="k", lw=0.8, ls="--")
    ax.set_xlim(0, 10)
    ax.set_ylim(1e-9, 3)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("tip error [m]")
    ax.set_title("Tip error (first 10 s; 5 cm dashed)")
    ax.legend(fontsize=8)

    ax = axes[2]
    ax.plot(fd.t, fd.tau[:, 0], color="0.7", lw=3, label="τ1, exercise (finite diff.)")
    ax.plot(fd.t, fd.tau[:, 1], color="0.85", lw=3, label="τ2, exercise (finite diff.)")
    mid = ct.t[:-1]
    ax.plot(mid, ct.tau[:, 0], color="tab:blue", lw=0.8, label="τ1, computed torque")
    ax.plot(mid, ct.tau[:, 1], color="tab:orange", lw=0.8, label="τ2, computed torque")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("torque [N·m]")
    ax.set_title("Joint torques")
    ax.legend(fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figure", type=Path, default=FIGURE, help="where to write the figure")
    args = parser.parse_args()
    start = time.perf_counter()
    params, path = LOOPING_ARM, LoopingPath()

    # 1. finite differences against the analytic reference
    fd = seed_finite_differences(params, path)
    q, dq, ddq = joint_reference(params, path, fd.t)
    tau = inverse_dynamics(params, q, dq, ddq)
    rows = [
        ("points, sample step", f"{LOOPING_POINTS}, {1000 * (fd.t[1] - fd.t[0]):.2f} ms", ""),
        ("branch flips of the nearest-branch rule", str(fd.branch_flips), ""),
        ("max angle difference (exercise vs analytic)", f"{np.abs(fd.q - q).max():.2e}", "rad"),
        ("max q̇ error (backward difference)", f"{np.abs(fd.dq - dq).max():.3g}", "rad/s"),
        ("max q̈ error (second difference)", f"{np.abs(fd.ddq - ddq).max():.3g}", "rad/s²"),
        ("max |q̈| (analytic)", f"{np.abs(ddq).max():.3g}", "rad/s²"),
        ("max torque error of the exercise", f"{np.abs(fd.tau - tau).max():.3g}", "N·m"),
        ("max |τ| (analytic)", f"{np.abs(tau).max(axis=0).round(1).tolist()}", "N·m"),
    ]

    # 2a. open loop under feed-forward torques alone (10 s: all of them diverge before)
    seconds = OPEN_LOOP_SECONDS
    mid = _instants(seconds, DT)[:-1] + DT / 2
    fine_mid = _instants(seconds, FINE_DT)[:-1] + FINE_DT / 2
    ff = feed_forward(params, path, mid)
    runs = {
        "exercise's torques": open_loop(
            params,
            path,
            np.stack([np.interp(mid, fd.t, fd.tau[:, j]) for j in (0, 1)], -1),
            seconds,
        ),
        "analytic": open_loop(params, path, ff, seconds),
        "analytic, dt = 2 ms": open_loop(
            params, path, feed_forward(params, path, fine_mid), seconds, FINE_DT, 1
        ),
    }
    twin = open_loop(params, path, ff, seconds, q_error=PERTURBATION)
    separation = np.hypot(*(twin.tip - runs["analytic"].tip).T)
    runs[f"analytic, q1 + {PERTURBATION:g} rad (distance to the unperturbed run)"] = (
        dataclasses.replace(twin, tip_ref=runs["analytic"].tip)
    )
    _, rate = unstable_rate(params, path)
    for label, run in runs.items():
        rows.append((f"open loop ({label}): time to 5 cm", f"{run.time_to(DIVERGED):.2f}", "s"))
    grow = (separation > 0) & (separation < 1e-4)
    grow[int(np.argmax(separation >= 1e-4)) :] = False
    rate_fit = np.polyfit(twin.t[grow], np.log(separation[grow]), 1)[0]
    rows += [
        (
            "open loop: growth rate of the separation (fit, 1e-9 to 1e-4 m)",
            f"{rate_fit:.2f}",
            "1/s",
        ),
        (
            "largest Re λ of the linearisation along the path (min, median, max)",
            f"{rate.min():.2f}, {np.median(rate):.2f}, {rate.max():.2f}",
            "1/s",
        ),
    ]

    # 2b, 2c. computed torque, exact and mismatched models, two gains
    table = []
    for label, factors in MISMATCH:
        model = mismatched_model(factors)
        table.append(
            (label, [computed_torque(params, model, path, natural_frequency=w) for w in GAINS])
        )
    ct = table[0][1][0]

    print(f"Looping-path tracking exercise (`python benchmarks/looping_path.py`), arm {params}\n")
    print("| quantity | value | unit |\n|---|---|---|")
    for name, value, unit in rows:
        print(f"| {name} | {value} | {unit} |")
    print(
        f"\nComputed torque, ζ = {DAMPING_RATIO}, dt = {DT} s × {SUBSTEPS} RK4 sub-steps, "
        "no torque limit, 60 s; the controller's model differs from the arm as listed:\n"
    )
    head = " | ".join(f"RMS / max tip error [mm], ωn = {w:g} rad/s" for w in GAINS)
    print(f"| controller's model | {head} |\n|---|{'---|' * len(GAINS)}")
    for label, results in table:
        cells = " | ".join(f"{_mm(r.rms)} / {_mm(r.max)}" for r in results)
        print(f"| {label} | {cells} |")
    peak = np.abs(ct.tau).max(axis=0).round(1).tolist()
    print(f"\npeak torques of the exact-model run (ωn = {GAINS[0]:g}): {peak} N·m")
    _figure(args.figure, path, runs, fd, ct)
    print(
        f"\nfigure: {args.figure.relative_to(ROOT) if args.figure.is_relative_to(ROOT) else args.figure}"
    )
    print(f"run time: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
