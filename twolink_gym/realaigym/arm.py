"""RealAIGym's arms as :class:`~twolink_gym.params.ArmParams`, and its angle convention.

RealAIGym's model gives each link's inertia about its joint axis and its
centre of mass at ``r_i`` from that joint; :class:`ArmParams` takes the inertia
about the centre of mass, ``I_com = I_joint - m r²`` (parallel-axis theorem),
and ``lc_i = r_i``. Its simulation boards have no friction and no motor
inertia (model 1.1), and ``g = 9.81`` m/s²; the identified model 1.0 of the
same design adds rotor inertia ``Ir`` (gear ratio ``gr = 6``), viscous
damping ``b`` and Coulomb friction ``cf`` (:data:`MOTORS`), which are
:class:`ArmParams`'s ``rotor_inertia``, ``gear_ratio``, ``friction_i`` and
``coulomb_i`` as they are.

RealAIGym measures ``q1`` from hanging straight down, ours from the +x axis:
``q1_ours = q1_theirs - π/2``; ``q2``, the velocities and the torques agree.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym.params import ArmParams

__all__ = [
    "DESIGNS",
    "MOTORS",
    "TORQUE_LIMITS",
    "arm",
    "from_realaigym_state",
    "to_realaigym_state",
]

Design = Literal["C.1/1.1", "C.1/1.0", "A.0/2.1"]

#: Published model parameters ``(m1, m2, l1, l2, r1, r2, I1, I2)`` [kg, m, kg·m²],
#: inertias about the joint axes: design C.1 / model 1.1 (the v2 boards, both
#: robots), its identified model 1.0 (the same links, with the motors and
#: friction of :data:`MOTORS`) and design A.0 / model 2.1 (the archived v1
#: pendubot board). The
#: archived v1 acrobot arm (C.0 / 3.1) has a negative centre-of-mass inertia of
#: link 2 and no rigid-body equivalent, so it is not offered.
_C1_LINKS = (
    0.5234602302310271,
    0.6255677234174437,
    0.2,
    0.3,
    0.2,
    0.25569305436052964,
    0.031887199591513114,
    0.05086984812807257,
)
DESIGNS: dict[str, tuple[float, ...]] = {
    "C.1/1.1": _C1_LINKS,
    "C.1/1.0": _C1_LINKS,  # the same links; its motors and friction differ (MOTORS)
    "A.0/2.1": (
        0.5593806151425046,
        0.6043459469186889,
        0.3,
        0.2,
        0.3,
        0.18377686083653508,
        0.053470810264216295,
        0.02392374528789766,
    ),
}
#: Motor and friction parameters ``(Ir, gr, b1, b2, cf1, cf2)`` of each design
#: [kg·m², 1, N·m·s, N·m·s, N·m, N·m] (RealAIGym's ``model_parameters.yml``; the
#: boards' models zero ``Ir``, ``b`` and ``cf``).
MOTORS: dict[str, tuple[float, ...]] = {
    "C.1/1.1": (0.0, 6.0, 0.0, 0.0, 0.0, 0.0),
    "C.1/1.0": (6.287203962819607e-05, 6.0, 0.001, 0.001, 0.16, 0.12),
    "A.0/2.1": (0.0, 6.0, 0.0, 0.0, 0.0, 0.0),
}
#: Torque limits ``(τ1, τ2)`` [N·m] of the simulation boards: the acrobot drives
#: the elbow, the pendubot the shoulder.
TORQUE_LIMITS = {"acrobot": (0.0, 6.0), "pendubot": (6.0, 0.0)}


def arm(design: str = "C.1/1.1") -> ArmParams:
    """The RealAIGym arm ``design``: "C.1/1.1" (the current boards'), "C.1/1.0" or "A.0/2.1".

    Raises
    ------
    ValueError
        For another design, listing the available ones.
    """
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {sorted(DESIGNS)}, got {design!r}")
    m1, m2, l1, l2, r1, r2, i1, i2 = DESIGNS[design]
    ir, gr, b1, b2, cf1, cf2 = MOTORS[design]
    return ArmParams(
        m1=m1,
        m2=m2,
        l1=l1,
        l2=l2,
        lc1=r1,
        lc2=r2,
        I1=i1 - m1 * r1**2,
        I2=i2 - m2 * r2**2,
        gravity=9.81,
        friction1=b1,
        friction2=b2,
        rotor_inertia=ir,
        gear_ratio=gr,
        coulomb1=cf1,
        coulomb2=cf2,
    )


def from_realaigym_state(x: ArrayLike) -> NDArray[np.float64]:
    """States ``(..., 4)`` in RealAIGym's angles to ours (``q1 - π/2``)."""
    out = np.array(x, dtype=np.float64)
    out[..., 0] -= math.pi / 2
    return out


def to_realaigym_state(x: ArrayLike) -> NDArray[np.float64]:
    """States ``(..., 4)`` in our angles to RealAIGym's (``q1 + π/2``)."""
    out = np.array(x, dtype=np.float64)
    out[..., 0] += math.pi / 2
    return out
