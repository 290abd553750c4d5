"""RealAIGym's criteria and scores of one recorded swing-up trajectory.

A trajectory is ``N`` samples ``(t_k, x_k, u_k)``: time [s], the state
``x = (q1, q2, q̇1, q̇2)`` in RealAIGym's convention (``q1`` from hanging straight
down, counter-clockwise; ``(π, 0)`` upright) [rad, rad, rad/s, rad/s] and the
applied torques ``u = (u1, u2)`` [N·m]. Sums run over ``k = 0 … N-2`` with
``Δt_k = t_{k+1} - t_k``:

swing-up time [s]
    The tip is *up* at sample ``k`` when its height ``-l1 cos q1 - l2 cos(q1 + q2)``
    exceeds ``0.9 (l1 + l2)`` (strictly). A run shorter than ``0.99 T`` never
    swings up (∞). Otherwise only samples ``1 … N-2`` are looked at: if the tip
    is not up at ``N-2`` the time is ``t_{N-1}`` (a failure), else it is the time
    of the first sample of the final unbroken run of *up* samples ending at
    ``N-2``.
success
    1 if the swing-up time is below ``t_{N-1}``, else 0.
energy [J]
    ``Σ_k Σ_i |u_{i,k} (q_{i,k+1} - q_{i,k})|``: the absolute work of both joints.
max torque [N·m] (v1 only)
    ``max_{k,i} |u_{i,k}|`` over all ``N`` samples.
integrated torque [N·m·s] (v1 only)
    ``Σ_k (|u_{1,k}| + |u_{2,k}|) Δt_k``.
torque cost [N²·m²·s]
    ``Σ_k (u_{1,k}² + u_{2,k}²) Δt_k``.
torque smoothness [N·m]
    ``std(Δu_1) + std(Δu_2)``, population standard deviations of the ``N-1``
    successive torque differences of each joint.
velocity cost [rad²/s]
    ``Σ_k (q̇_{1,k}² + q̇_{2,k}²) Δt_k``.

Scores: v2 (the current boards) is ``success · (1 - (1/5) Σ_i tanh(π c_i / n_i))``
over time, energy, torque cost, smoothness and velocity cost with ``n = (20 s,
60 J, 20, 0.1 N·m, 400)``; v1 (archived) is ``success · (1 - Σ_i w_i c_i / n_i)``
over all seven criteria. The factor π and the ``Δt`` in the costs are in the
publisher's scoring code (and reproduce its published scores); the prose of its
tables omits them.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Literal

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "BOARD_LINKS",
    "COLUMNS",
    "SCORE_VERSIONS",
    "V1_WEIGHTS_AND_NORMS",
    "V2_NORMS",
    "Criteria",
    "Trajectory",
    "above_line",
    "criteria",
    "read_csv",
    "score",
    "write_csv",
]

Robot = Literal["acrobot", "pendubot"]
Version = Literal["v1", "v2"]

#: The columns of a RealAIGym trajectory file (``sim_swingup.csv``), in order.
COLUMNS = ("time", "pos_meas1", "pos_meas2", "vel_meas1", "vel_meas2", "tau_con1", "tau_con2")
#: The score versions this module computes.
SCORE_VERSIONS: tuple[Version, ...] = ("v1", "v2")
#: Link lengths ``(l1, l2)`` [m] of each board's arm, ``(version, robot) -> (l1, l2)``:
#: v2 uses design C.1 for both robots; v1 used C.0 (acrobot) and A.0 (pendubot).
BOARD_LINKS: dict[tuple[Version, Robot], tuple[float, float]] = {
    ("v2", "acrobot"): (0.2, 0.3),
    ("v2", "pendubot"): (0.2, 0.3),
    ("v1", "acrobot"): (0.2, 0.3),
    ("v1", "pendubot"): (0.3, 0.2),
}
#: Episode length of the simulation boards [s].
T_FINAL = 10.0
#: The tip must rise above this fraction of the arm's reach ``l1 + l2``.
HEIGHT_FRACTION = 0.9
#: v2 normalisations of the five scored criteria.
V2_NORMS = {
    "swingup_time": 20.0,
    "energy": 60.0,
    "tau_cost": 20.0,
    "tau_smoothness": 0.1,
    "velocity_cost": 400.0,
}
#: v1 ``criterion -> (weight, normalisation)``; the weights sum to 1.
V1_WEIGHTS_AND_NORMS = {
    "swingup_time": (0.2, 10.0),
    "energy": (0.1, 100.0),
    "max_tau": (0.1, 6.0),
    "integ_tau": (0.1, 60.0),
    "tau_cost": (0.1, 360.0),
    "tau_smoothness": (0.2, 12.0),
    "velocity_cost": (0.2, 1000.0),
}


@dataclasses.dataclass(frozen=True)
class Trajectory:
    """A recorded run in RealAIGym's layout.

    Attributes
    ----------
    t : ndarray, shape (N,)
        Sample times [s].
    x : ndarray, shape (N, 4)
        States ``(q1, q2, q̇1, q̇2)`` [rad, rad, rad/s, rad/s], RealAIGym's angles.
    u : ndarray, shape (N, 2)
        Applied torques ``(u1, u2)`` [N·m].
    """

    t: NDArray[np.float64]
    x: NDArray[np.float64]
    u: NDArray[np.float64]

    def __post_init__(self) -> None:
        n = len(self.t)
        if self.t.shape != (n,) or self.x.shape != (n, 4) or self.u.shape != (n, 2):
            raise ValueError(
                "a trajectory needs t (N,), x (N, 4) and u (N, 2); got "
                f"{self.t.shape}, {self.x.shape}, {self.u.shape}"
            )
        if n < 3:
            raise ValueError(f"a trajectory needs at least 3 samples, got {n}")


def read_csv(path: str | Path) -> Trajectory:
    """Read a trajectory file in RealAIGym's CSV format.

    Parameters
    ----------
    path : str or Path
        A file with the header ``time,pos_meas1,pos_meas2,vel_meas1,vel_meas2,
        tau_con1,tau_con2`` and one row per sample.

    Raises
    ------
    ValueError
        If the header is not that one or the rows are not numbers.
    """
    path = Path(path)
    with path.open(encoding="utf-8") as f:
        header = f.readline().strip()
    if tuple(h.strip() for h in header.split(",")) != COLUMNS:
        raise ValueError(f"{path}: header must be {','.join(COLUMNS)!r}, got {header!r}")
    try:
        data = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64, ndmin=2)
    except ValueError as exc:
        raise ValueError(f"{path}: not a table of numbers ({exc})") from exc
    if data.shape[1] != len(COLUMNS):
        raise ValueError(f"{path}: rows must have {len(COLUMNS)} columns, got {data.shape[1]}")
    return Trajectory(t=data[:, 0].copy(), x=data[:, 1:5].copy(), u=data[:, 5:7].copy())


def write_csv(path: str | Path, trajectory: Trajectory) -> Path:
    """Write ``trajectory`` in RealAIGym's CSV format (full float64 precision)."""
    path = Path(path)
    data = np.column_stack([trajectory.t, trajectory.x, trajectory.u])
    np.savetxt(path, data, delimiter=",", header=",".join(COLUMNS), comments="", fmt="%.18e")
    return path


@dataclasses.dataclass(frozen=True)
class Criteria:
    """RealAIGym's criteria of one trajectory (see the module docstring for each).

    Attributes
    ----------
    success : int
        1 or 0.
    swingup_time : float
        [s]; ``inf`` for a run shorter than 99 % of 10 s.
    energy : float
        [J].
    max_tau : float
        [N·m].
    integ_tau : float
        [N·m·s].
    tau_cost : float
        [N²·m²·s].
    tau_smoothness : float
        [N·m].
    velocity_cost : float
        [rad²/s].
    """

    success: int
    swingup_time: float
    energy: float
    max_tau: float
    integ_tau: float
    tau_cost: float
    tau_smoothness: float
    velocity_cost: float

    def as_dict(self) -> dict[str, float]:
        """The criteria by name."""
        return dataclasses.asdict(self)


def above_line(q: NDArray[np.float64], links: tuple[float, float]) -> NDArray[np.bool_]:
    """Whether the tip is above the boards' line, ``HEIGHT_FRACTION`` of the reach, ``(n,)``.

    Parameters
    ----------
    q : ndarray, shape (n, 2)
        Joint angles [rad] in RealAIGym's convention (0: hanging).
    links : (float, float)
        The link lengths ``l1, l2`` [m] the board scores with.
    """
    l1, l2 = links
    height = -l1 * np.cos(q[:, 0]) - l2 * np.cos(q[:, 0] + q[:, 1])
    return np.asarray(height > HEIGHT_FRACTION * (l1 + l2))


def _links(robot: str, version: str) -> tuple[float, float]:
    key = (version, robot)
    if key not in BOARD_LINKS:
        raise ValueError(
            f"robot must be one of ['acrobot', 'pendubot'] and version one of "
            f"{list(SCORE_VERSIONS)}; got robot={robot!r}, version={version!r}"
        )
    return BOARD_LINKS[key]


def _swingup_time(trajectory: Trajectory, links: tuple[float, float]) -> float:
    t, q = trajectory.t, trajectory.x[:, :2]
    if t[-1] < 0.99 * T_FINAL:
        return math.inf
    up = above_line(q, links)
    n = len(t)
    index = n - 1
    for k in range(n - 2, 0, -1):  # samples N-2 down to 1: the final run of "up"
        if not up[k]:
            break
        index = k
    return float(t[index])


def criteria(trajectory: Trajectory, robot: str = "acrobot", version: str = "v2") -> Criteria:
    """RealAIGym's criteria of ``trajectory`` on the board of ``robot`` and ``version``.

    Parameters
    ----------
    trajectory : Trajectory
    robot : {"acrobot", "pendubot"}
    version : {"v1", "v2"}
        The board, which fixes the link lengths of the height test.
    """
    links = _links(robot, version)
    t, x, u = trajectory.t, trajectory.x, trajectory.u
    dt = np.diff(t)
    swingup_time = _swingup_time(trajectory, links)
    return Criteria(
        success=int(swingup_time < t[-1]),
        swingup_time=swingup_time,
        energy=float(np.sum(np.abs(u[:-1] * np.diff(x[:, :2], axis=0)))),
        max_tau=float(np.max(np.abs(u))),
        integ_tau=float(np.sum(np.sum(np.abs(u[:-1]), axis=1) * dt)),
        tau_cost=float(np.sum(np.sum(u[:-1] ** 2, axis=1) * dt)),
        tau_smoothness=float(np.sum(np.std(np.diff(u, axis=0), axis=0))),
        velocity_cost=float(np.sum(np.sum(x[:-1, 2:] ** 2, axis=1) * dt)),
    )


def score(c: Criteria, version: str = "v2") -> float:
    """The RealAI score of criteria ``c`` under score ``version`` ("v1" or "v2"), in [0, 1]."""
    if version == "v2":
        penalty = sum(
            math.tanh(math.pi * getattr(c, name) / norm) for name, norm in V2_NORMS.items()
        )
        return c.success * (1.0 - penalty / len(V2_NORMS))
    if version == "v1":
        penalty = sum(
            weight * getattr(c, name) / norm
            for name, (weight, norm) in V1_WEIGHTS_AND_NORMS.items()
        )
        return c.success * (1.0 - penalty)
    raise ValueError(f"version must be one of {list(SCORE_VERSIONS)}, got {version!r}")
