"""RealAIGym's robustness board (v2): six families of simulated imperfections.

Every run is the protocol of :mod:`twolink_gym.realaigym.protocol` in a changed
world; the controller keeps its nominal model. A run succeeds if its *final*
true state lies in the box of :func:`~twolink_gym.realaigym.protocol.final_state_success`.
Families (21 levels each, nominal included):

=================  =====================================================  ====  ======================
family             levels                                                 runs  a level passes if
=================  =====================================================  ====  ======================
model              10 parameters × 21 levels, one parameter at a time     1     the run succeeds
velocity_noise     σ ∈ linspace(0, 0.5, 21) rad/s on both velocities      10    > 50 % succeed
torque_noise       σ ∈ linspace(0, 1.1, 21) N·m on the motor's torque     10    > 50 % succeed
responsiveness     k ∈ linspace(0.1, 2.0, 21)                             1     the run succeeds
delay              0 … 20 steps of 2 ms (0 … 0.04 s)                      1     the run succeeds
perturbations      50 random profiles of six torque pulses (3 per joint)  1     the run succeeds
=================  =====================================================  ====  ======================

Only the motor joint's pulses act, as in RealAIGym's plant (its actuation matrix
drops torque on the passive joint; :mod:`~twolink_gym.realaigym.protocol`, step 4).
The model family's parameters: ``Ir`` ∈ linspace(0, 1e-4); ``m1r1``, ``I1``,
``m2r2``, ``m2``, ``I2`` ∈ linspace(0.75, 1.25)·nominal (``r_i = value / m_i``
with the inertias about the joints kept; ``m2`` with ``r2`` and ``I2`` kept);
``b1``, ``b2`` ∈ linspace(-0.1, 0.1) N·m·s; ``cf1``, ``cf2`` ∈ linspace(-0.2, 0.2) N·m.
The plant of every level is the nominal arm (RealAIGym's C.1 / model 1.1, gear
ratio 6) with one parameter changed, in RealAIGym's own model: rotor inertia,
viscous and Coulomb friction are :class:`~twolink_gym.params.ArmParams` fields.
A level outside :class:`~twolink_gym.params.ArmParams`'s physical bounds
(negative damping or Coulomb friction; ``m1r1`` above nominal, which puts the
centre of link 1 beyond its end, ``r1 > l1 = 0.2``, and at 1.25 gives it a
negative centre-of-mass inertia; likewise the top ``m2r2`` levels) is built as a
:class:`~twolink_gym.params.NonphysicalArmParams`, the explicit opt-in for such
studies: RealAIGym's model takes any ``r_i`` and any sign of ``b``, ``cf``. So every
one of the 210 levels runs. A level whose plant had no positive-definite mass
matrix would be *not run* (:attr:`Level.reason`) and its family scored over the
levels run and marked partial; none of the board's levels is such. Family
score = passed levels / levels; overall = the mean of the six family scores.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from twolink_gym.params import ArmParams, NonphysicalArmParams
from twolink_gym.realaigym.arm import DESIGNS, MOTORS
from twolink_gym.realaigym.protocol import (
    DT,
    Conditions,
    PolicyRunner,
    final_state_success,
    perturbation_profile,
    run,
)

__all__ = [
    "FAMILIES",
    "MODEL_PARAMETERS",
    "MODEL_RANGES",
    "FamilyResult",
    "Level",
    "arm_from_realaigym",
    "levels",
    "model_arm",
    "robustness",
]

#: The six families, in the board's column order.
FAMILIES = (
    "model",
    "velocity_noise",
    "torque_noise",
    "responsiveness",
    "delay",
    "perturbations",
)
#: The model family's parameters, in RealAIGym's order.
MODEL_PARAMETERS = ("Ir", "m1r1", "I1", "b1", "cf1", "m2r2", "m2", "I2", "b2", "cf2")
#: The number of random perturbation profiles.
PERTURBATION_PROFILES = 50
#: Runs per level of the noise families; a level passes with more than half successful.
NOISE_RUNS = 10


def arm_from_realaigym(
    m1: float,
    m2: float,
    l1: float,
    l2: float,
    r1: float,
    r2: float,
    i1: float,
    i2: float,
    **motors: float,
) -> ArmParams:
    """Our arm for RealAIGym's parameters (inertias ``i1, i2`` about the joints), ``g = 9.81``.

    Parameters
    ----------
    m1, m2, l1, l2, r1, r2, i1, i2 : float
        RealAIGym's masses [kg], lengths and centre-of-mass distances [m] and
        inertias about the joints [kg·m²].
    **motors : float
        Further :class:`ArmParams` fields: ``rotor_inertia``, ``gear_ratio``
        (default: C.1's 6), ``friction1``, ``friction2``, ``coulomb1``,
        ``coulomb2`` (default 0).

    Returns
    -------
    ArmParams
        A :class:`~twolink_gym.params.NonphysicalArmParams` if the plant is
        outside :class:`ArmParams`'s physical bounds (``r_i > l_i``, a negative
        centre-of-mass inertia ``i_i - m_i r_i²``, negative friction).

    Raises
    ------
    ValueError
        If not even :class:`~twolink_gym.params.NonphysicalArmParams` can hold
        it (a mass matrix that is not positive definite, an unknown field).
    """
    ir, gr, b1, b2, cf1, cf2 = MOTORS["C.1/1.1"]
    fields: dict[str, float] = {
        "m1": m1,
        "m2": m2,
        "l1": l1,
        "l2": l2,
        "lc1": r1,
        "lc2": r2,
        "I1": i1 - m1 * r1**2,
        "I2": i2 - m2 * r2**2,
        "gravity": 9.81,
        "friction1": b1,
        "friction2": b2,
        "rotor_inertia": ir,
        "gear_ratio": gr,
        "coulomb1": cf1,
        "coulomb2": cf2,
        **motors,
    }
    try:
        return ArmParams(**fields)
    except ValueError:
        return NonphysicalArmParams(**fields)


@dataclasses.dataclass(frozen=True)
class Level:
    """One level of a family.

    Attributes
    ----------
    family : str
    parameter : str
        The model family's parameter (else the family's name).
    value : float
        The level (a factor for the model family's scaled parameters, σ, k,
        steps of delay, or the profile's index).
    runs : int
        Runs at this level.
    arm : ArmParams or None
        The plant (model family), ``None``: the nominal arm.
    reason : str
        Why the level cannot run (empty: it runs).
    """

    family: str
    parameter: str
    value: float
    runs: int
    arm: ArmParams | None = None
    reason: str = ""


#: The model family's parameters set to a value (not a factor), and the field each is.
_ABSOLUTE = {
    "Ir": "rotor_inertia",
    "b1": "friction1",
    "b2": "friction2",
    "cf1": "coulomb1",
    "cf2": "coulomb2",
}
#: The values the absolute parameters span: rotor inertia [kg·m²], viscous [N·m·s] and
#: Coulomb [N·m] friction.
_SPANS = {
    "Ir": (0.0, 1e-4),
    "b1": (-0.1, 0.1),
    "b2": (-0.1, 0.1),
    "cf1": (-0.2, 0.2),
    "cf2": (-0.2, 0.2),
}
#: The factors on RealAIGym's value that the other parameters span.
_FACTORS = (0.75, 1.25)
#: Each model parameter's range on the board, ``(low, high)``: a value for the absolute
#: ones, a factor for the others; 21 levels ``linspace(low, high, 21)``.
MODEL_RANGES: dict[str, tuple[float, float]] = {
    name: _SPANS.get(name, _FACTORS) for name in MODEL_PARAMETERS
}


def model_arm(name: str, value: float) -> ArmParams:
    """The plant of the model family with ``name`` at ``value``, every other parameter RealAIGym's.

    Parameters
    ----------
    name : str
        One of :data:`MODEL_PARAMETERS`.
    value : float
        The parameter's value, or for the scaled parameters (``m1r1``, ``I1``,
        ``m2r2``, ``m2``, ``I2``) its factor (:data:`MODEL_RANGES`).

    Raises
    ------
    ValueError
        For another name (listing them), or a plant no arm holds
        (:func:`arm_from_realaigym`).
    """
    if name not in MODEL_PARAMETERS:
        raise ValueError(f"name must be one of {list(MODEL_PARAMETERS)}, got {name!r}")
    m1, m2, l1, l2, r1, r2, i1, i2 = DESIGNS["C.1/1.1"]
    p = [m1, m2, l1, l2, r1, r2, i1, i2]
    if name in _ABSOLUTE:
        return arm_from_realaigym(*p, **{_ABSOLUTE[name]: value})
    if name == "m1r1":
        p[4] = value * m1 * r1 / m1
    elif name == "I1":
        p[6] = value * i1
    elif name == "m2r2":
        p[5] = value * m2 * r2 / m2
    elif name == "m2":
        p[1] = value * m2
    else:  # I2
        p[7] = value * i2
    return arm_from_realaigym(*p)


def _model_levels() -> list[Level]:
    out = []
    for name in MODEL_PARAMETERS:
        for value in np.linspace(*MODEL_RANGES[name], 21):
            try:
                plant = model_arm(name, float(value))
            except ValueError as exc:
                out.append(Level("model", name, float(value), 1, None, f"not a valid plant: {exc}"))
                continue
            out.append(Level("model", name, float(value), 1, plant))
    return out


def levels(family: str) -> list[Level]:
    """The levels of ``family`` (one of :data:`FAMILIES`).

    Raises
    ------
    ValueError
        For another name, listing the families.
    """
    if family == "model":
        return _model_levels()
    if family == "velocity_noise":
        return [Level(family, family, float(s), NOISE_RUNS) for s in np.linspace(0, 0.5, 21)]
    if family == "torque_noise":
        return [Level(family, family, float(s), NOISE_RUNS) for s in np.linspace(0, 1.1, 21)]
    if family == "responsiveness":
        return [Level(family, family, float(k), 1) for k in np.linspace(0.1, 2.0, 21)]
    if family == "delay":
        return [Level(family, family, float(round(d / DT)), 1) for d in np.linspace(0, 0.04, 21)]
    if family == "perturbations":
        return [Level(family, family, float(i), 1) for i in range(PERTURBATION_PROFILES)]
    raise ValueError(f"family must be one of {list(FAMILIES)}, got {family!r}")


@dataclasses.dataclass(frozen=True)
class FamilyResult:
    """A family's outcome.

    Attributes
    ----------
    family : str
    levels : list of Level
    successes : list of int
        Successful runs per level (-1: not run).
    passed : list of bool or None
        Whether each level passed (``None``: not run).
    """

    family: str
    levels: list[Level]
    successes: list[int]
    passed: list[bool | None]

    @property
    def levels_run(self) -> int:
        """Levels that ran."""
        return sum(p is not None for p in self.passed)

    @property
    def partial(self) -> bool:
        """Whether some levels could not run."""
        return self.levels_run < len(self.levels)

    @property
    def score(self) -> float:
        """Passed levels / levels run (NaN if none ran)."""
        run_count = self.levels_run
        return sum(bool(p) for p in self.passed) / run_count if run_count else math.nan

    def as_dict(self) -> dict[str, object]:
        """JSON-ready summary with every level."""
        return {
            "family": self.family,
            "score": self.score,
            "passed": sum(bool(p) for p in self.passed),
            "levels_run": self.levels_run,
            "levels": len(self.levels),
            "partial": self.partial,
            "per_level": [
                {
                    "parameter": lv.parameter,
                    "value": lv.value,
                    "runs": lv.runs,
                    "successes": s if p is not None else None,
                    "passed": p,
                    "not_run": lv.reason or None,
                }
                for lv, s, p in zip(self.levels, self.successes, self.passed, strict=True)
            ],
        }


def robustness(
    policy: PolicyRunner,
    robot: str,
    families: tuple[str, ...] = FAMILIES,
    *,
    rng: np.random.Generator | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, FamilyResult]:
    """Run ``families`` of the robustness board for ``policy``, all runs in one batch.

    Parameters
    ----------
    policy : PolicyRunner
    robot : {"acrobot", "pendubot"}
    families : tuple of str
        A subset of :data:`FAMILIES`.
    rng : numpy.random.Generator, optional
        Noise and perturbation profiles (default: unseeded, as RealAIGym's).
    progress : callable, optional
        Called with the steps done (of 5000).

    Returns
    -------
    dict
        ``family -> FamilyResult``.
    """
    rng = np.random.default_rng() if rng is None else rng
    plan = {family: levels(family) for family in families}
    arms: list[ArmParams] = []
    vnoise: list[float] = []
    tnoise: list[float] = []
    resp: list[float] = []
    delay: list[int] = []
    pulses: list[NDArray[np.float64] | None] = []
    owner: list[tuple[str, int]] = []
    nominal = arm_from_realaigym(*DESIGNS["C.1/1.1"])  # == arm("C.1/1.1")
    for family, level_list in plan.items():
        for i, lv in enumerate(level_list):
            if lv.reason:
                continue
            for _ in range(lv.runs):
                owner.append((family, i))
                arms.append(lv.arm or nominal)
                vnoise.append(lv.value if family == "velocity_noise" else 0.0)
                tnoise.append(lv.value if family == "torque_noise" else 0.0)
                resp.append(lv.value if family == "responsiveness" else 1.0)
                delay.append(int(lv.value) if family == "delay" else 0)
                pulses.append(perturbation_profile(rng) if family == "perturbations" else None)
    n = len(owner)
    perturbation = None
    if any(p is not None for p in pulses):
        perturbation = np.zeros((n, *next(p for p in pulses if p is not None).shape))
        for j, p in enumerate(pulses):
            if p is not None:
                perturbation[j] = p
    conditions = Conditions.create(n, arms, vnoise, tnoise, resp, delay, perturbation)
    outcome = final_state_success(run(policy, robot, conditions, rng=rng, progress=progress).final)
    results = {}
    for family, level_list in plan.items():
        successes = [0 if not lv.reason else -1 for lv in level_list]
        for (fam, i), ok in zip(owner, outcome, strict=True):
            if fam == family:
                successes[i] += int(ok)
        passed: list[bool | None] = [
            None if lv.reason else (s > lv.runs / 2 if lv.runs > 1 else s == 1)
            for lv, s in zip(level_list, successes, strict=True)
        ]
        results[family] = FamilyResult(family, level_list, successes, passed)
    return results
