"""What a real arm adds to the simulator: domain randomisation, observation and actuator models.

Three small frozen models, each validated once when an environment is built,
whose batched functions (``n`` copies; the single env is ``n = 1``) the single
and the vector env both call. They act around the compiled step kernel, never
inside it: the actuator model turns the agent's commands into the normalised
actions the kernel applies, the observation model turns the kernel's
observation into what the agent sees, and the randomisation draws the arm the
kernel simulates at each episode start.

:class:`Randomization`
    per-episode arm parameters, uniform in declared ranges (factors of the
    nominal value, or absolute values);
:class:`ObservationModel`
    the full state or the joint angles only, plus additive Gaussian noise;
:class:`ActuatorModel`
    an action delay, a first-order torque response and torque noise;
:class:`PushModel`
    pushes of the arm at random times, as RealAIGym v3 knocks it.

Every random draw of a copy comes from that copy's own generator (the env's
``np_random``), in a fixed order, so seeded episodes are bit-reproducible and
the vector env's copy ``i`` equals a single env seeded alike.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from twolink_gym.params import ArmParams
from twolink_gym.tasks.push import push, push_target

__all__ = [
    "NOISE_BOUND_SIGMAS",
    "OBSERVATIONS",
    "RANDOMIZABLE",
    "ActuatorModel",
    "ActuatorState",
    "ObservationModel",
    "ParameterRange",
    "PushModel",
    "Randomization",
]

Array = NDArray[np.float64]

#: The :class:`~twolink_gym.params.ArmParams` fields a randomisation may draw, in draw order.
RANDOMIZABLE: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(ArmParams))

#: Observation kinds: the state-encoding entries each keeps (indices into
#: :data:`~twolink_gym.simulation.STATE_OBS_NAMES`); the task's extras follow.
OBSERVATIONS: dict[str, tuple[int, ...]] = {"state": (0, 1, 2, 3, 4, 5), "angles": (0, 1, 2, 3)}

#: Noisy observation entries are clipped to their noiseless bounds widened by
#: this many standard deviations (so they stay inside the observation space).
NOISE_BOUND_SIGMAS = 6.0


def _finite(value: Any, name: str, rule: str) -> float:
    """``value`` as a float if it is a finite real number (bools rejected)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be {rule}, got {value!r}")
    return float(value)


# -- domain randomisation ------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ParameterRange:
    """The range one arm parameter is drawn from, uniformly.

    Attributes
    ----------
    field : str
        An :class:`~twolink_gym.params.ArmParams` field.
    low, high : float
        ``low < high``: factors of the nominal value, or (``absolute``) values
        in the field's unit.
    absolute : bool
    """

    field: str
    low: float
    high: float
    absolute: bool = False

    def values(self, nominal: float) -> tuple[float, float]:
        """The lowest and highest value of the field for a nominal value (SI units)."""
        if self.absolute:
            return self.low, self.high
        return self.low * nominal, self.high * nominal


@dataclasses.dataclass(frozen=True)
class Randomization:
    """Per-episode domain randomisation of the arm's parameters.

    Build it with :meth:`create` from a mapping ``field -> range``:

    * ``(low, high)`` (or a list): factors of the nominal value, e.g.
      ``{"m2": (0.8, 1.2)}`` draws ``m2 = f * nominal_m2`` with
      ``f ~ U(0.8, 1.2)``;
    * ``{"factor": (low, high)}``: the same, spelled out;
    * ``{"absolute": (low, high)}``: the value itself, in the field's unit,
      e.g. ``{"friction1": {"absolute": (0.0, 0.2)}}`` (also for a field whose
      nominal value is 0, which factors cannot move).

    Each episode draws every declared field independently from
    ``U(low, high)``, one ``rng.uniform`` call per episode, in
    :data:`RANDOMIZABLE` order; undeclared fields keep their nominal value.

    Attributes
    ----------
    ranges : tuple of ParameterRange
        In :data:`RANDOMIZABLE` order.
    """

    ranges: tuple[ParameterRange, ...]
    _low: Array = dataclasses.field(init=False, repr=False, compare=False)
    _high: Array = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_low", np.array([r.low for r in self.ranges]))
        object.__setattr__(self, "_high", np.array([r.high for r in self.ranges]))

    @classmethod
    def create(cls, spec: Mapping[str, Any] | None) -> Randomization | None:
        """Validate a ``randomize`` mapping (see the class notes); ``None`` or ``{}`` give ``None``.

        Raises
        ------
        ValueError
            Naming ``randomize[field]`` and the rule: an unknown field, a range
            that is not a pair of finite numbers with ``low < high``, a
            negative factor, or an unknown range form.
        """
        if spec is None:
            return None
        if not isinstance(spec, Mapping):
            raise ValueError(
                f"randomize must be a mapping of ArmParams fields to ranges, or None, got {spec!r}"
            )
        unknown = sorted(map(repr, set(spec) - set(RANDOMIZABLE)))
        if unknown:
            raise ValueError(
                f"randomize: unknown ArmParams field(s) {', '.join(unknown)}; "
                f"valid fields are {list(RANDOMIZABLE)}"
            )
        ranges = [_parse_range(name, spec[name]) for name in RANDOMIZABLE if name in spec]
        return cls(tuple(ranges)) if ranges else None

    @property
    def fields(self) -> tuple[str, ...]:
        """The randomised fields, in draw order."""
        return tuple(r.field for r in self.ranges)

    def to_spec(self) -> dict[str, Any]:
        """The mapping :meth:`create` takes that gives this randomisation (plain data)."""
        return {
            r.field: {"absolute": [r.low, r.high]} if r.absolute else [r.low, r.high]
            for r in self.ranges
        }

    def extremes(self, nominal: ArmParams) -> tuple[ArmParams, ArmParams]:
        """The arm with every randomised field at its lowest value, and at its highest.

        Raises
        ------
        ValueError
            If the ranges allow an invalid arm around ``nominal`` (a mass,
            length or centre-of-mass distance <= 0, an inertia, gravity or
            friction < 0, or a centre-of-mass distance beyond its link's
            length), naming ``randomize[field]`` and the rule.
        """
        low: dict[str, float] = {}
        high: dict[str, float] = {}
        for r in self.ranges:
            low[r.field], high[r.field] = r.values(getattr(nominal, r.field))
        # every constraint of ArmParams holds for the whole box of arms if it
        # holds for the all-low arm (the lower bounds) and for the all-low arm
        # with the centres of mass at their highest (lc <= l)
        lc_high = {k: v for k, v in high.items() if k in ("lc1", "lc2")}
        for arm in (low, {**low, **lc_high}):
            try:
                nominal.replace(**arm)
            except ValueError as exc:
                field = re.search(r"ArmParams\.(\w+)", str(exc))
                name = field[1] if field else "?"
                if name not in arm:  # a fixed lc beyond a randomised length
                    name = {"lc1": "l1", "lc2": "l2"}.get(name, name)
                raise ValueError(
                    f"randomize[{name!r}] allows invalid arms around the nominal arm: "
                    f"at the range's extremes {exc}"
                ) from exc
        return nominal.replace(**low), nominal.replace(**{**low, **high})

    def check(self, nominal: Sequence[ArmParams]) -> None:
        """Raise ``ValueError`` unless every arm the ranges allow around each nominal arm is valid."""
        for arm in dict.fromkeys(nominal):
            self.extremes(arm)

    def draw(
        self, rngs: Sequence[np.random.Generator], nominal: Sequence[ArmParams]
    ) -> list[ArmParams]:
        """One arm per copy: copy ``i`` draws from ``rngs[i]`` around ``nominal[i]``.

        Parameters
        ----------
        rngs : sequence of n numpy Generators
        nominal : sequence of n ArmParams

        Returns
        -------
        list of n ArmParams
        """
        arms = []
        for rng, arm in zip(rngs, nominal, strict=True):
            u = rng.uniform(self._low, self._high)
            values = {
                r.field: float(x) if r.absolute else float(x) * getattr(arm, r.field)
                for r, x in zip(self.ranges, u.tolist(), strict=True)
            }
            arms.append(arm.replace(**values))
        return arms


def _parse_range(name: str, value: Any) -> ParameterRange:
    """One entry of a ``randomize`` mapping (see :class:`Randomization`)."""
    key = f"randomize[{name!r}]"
    absolute = False
    if isinstance(value, Mapping):
        if len(value) != 1 or next(iter(value)) not in ("factor", "absolute"):
            raise ValueError(
                f"{key} must be (low, high) factors, {{'factor': (low, high)}} or "
                f"{{'absolute': (low, high)}}, got {value!r}"
            )
        form, value = next(iter(value.items()))
        absolute = form == "absolute"
        key = f"{key}[{form!r}]"
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise ValueError(f"{key} must be a pair (low, high), got {value!r}")
    if len(value) != 2:
        raise ValueError(f"{key} must be a pair (low, high), got {len(value)} entries")
    low, high = (_finite(v, key, "a pair of finite numbers") for v in value)
    if not low < high:
        raise ValueError(f"{key} must satisfy low < high (a non-empty range), got {list(value)}")
    if not absolute and low < 0:
        raise ValueError(f"{key}: factors must be >= 0, got {list(value)}")
    return ParameterRange(name, low, high, absolute)


# -- observation models ---------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ObservationModel:
    """What the agent observes of the kernel's observation.

    Attributes
    ----------
    kind : str
        ``"state"`` (the full observation) or ``"angles"`` (the angle encoding
        ``[cos q1, sin q1, cos q2, sin q2]`` and the task's extras, no speeds).
    columns : tuple of int, length size
        The kernel observation's columns kept, in order.
    noise : tuple of float, length size
        Standard deviation of the additive Gaussian noise on each kept entry
        (in the entry's unit).
    """

    kind: str
    columns: tuple[int, ...]
    noise: tuple[float, ...]
    _columns: NDArray[np.intp] = dataclasses.field(init=False, repr=False, compare=False)
    _std: Array = dataclasses.field(init=False, repr=False, compare=False)
    _noisy: NDArray[np.intp] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_columns", np.array(self.columns, dtype=np.intp))
        object.__setattr__(self, "_std", np.array(self.noise, dtype=np.float64))
        object.__setattr__(self, "_noisy", np.flatnonzero(self._std > 0))

    @classmethod
    def create(
        cls, kind: Any, noise: Any, state_size: int, extras_size: int
    ) -> ObservationModel | None:
        """Validate ``observation`` and ``obs_noise``; ``None`` for the full, noiseless state.

        Parameters
        ----------
        kind : {"state", "angles"}
        noise : float or sequence of float
            A number: the std of every state entry (the task's extras stay
            exact); a sequence: one std per observation entry (extras included).
        state_size : int
            Length of the kernel's state encoding (6).
        extras_size : int
            Number of the task's extras.

        Raises
        ------
        ValueError
            Naming ``observation`` or ``obs_noise`` and the allowed values.
        """
        if not isinstance(kind, str) or kind not in OBSERVATIONS:
            raise ValueError(f"observation must be one of {sorted(OBSERVATIONS)}, got {kind!r}")
        kept = OBSERVATIONS[kind]
        columns = (*kept, *range(state_size, state_size + extras_size))
        size = len(columns)
        rule = f"a number >= 0 or a sequence of {size} numbers >= 0 (one per observation entry)"
        if isinstance(noise, (Sequence, np.ndarray)) and not isinstance(noise, (str, bytes)):
            if len(noise) != size:
                raise ValueError(f"obs_noise must be {rule}, got {len(noise)} entries")
            std = np.array([_finite(v, "obs_noise", rule) for v in noise])
        else:
            std = np.zeros(size)
            std[: len(kept)] = _finite(noise, "obs_noise", rule)
        if np.any(std < 0):
            raise ValueError(f"obs_noise must be {rule}, got {noise!r}")
        if kind == "state" and not np.any(std > 0):
            return None
        return cls(kind, columns, tuple(std.tolist()))

    @property
    def size(self) -> int:
        """Length of the observation."""
        return len(self.columns)

    def names(self, full: Sequence[str]) -> tuple[str, ...]:
        """The kept entries' names, from the kernel observation's names ``full``."""
        return tuple(full[j] for j in self.columns)

    def bounds(self, low: Array, high: Array) -> tuple[Array, Array]:
        """Bounds of the observation from the kernel observation's bounds.

        Noisy entries get their bounds widened by :data:`NOISE_BOUND_SIGMAS` stds.
        """
        margin = NOISE_BOUND_SIGMAS * self._std
        return low[self._columns] - margin, high[self._columns] + margin

    def apply(
        self,
        observation: NDArray[np.float32],
        rngs: Sequence[np.random.Generator],
        low: NDArray[np.float32],
        high: NDArray[np.float32],
        rows: NDArray[np.intp] | None = None,
    ) -> NDArray[np.float32]:
        """What the agent sees of the kernel observations (a new array).

        Parameters
        ----------
        observation : ndarray, shape (n, 6 + extras_size), float32
            The kernel's observations.
        rngs : sequence of n numpy Generators
            Copy ``i``'s noise is ``rngs[i].standard_normal(k)``, one call for its
            ``k`` noisy entries.
        low, high : ndarray, shape (size,), float32
            The observation space's bounds (:meth:`bounds`): noisy
            observations are clipped to them.
        rows : ndarray of int, optional
            The copies that draw noise (default all); the others are returned
            noiseless (the vector env skips copies whose observation is replaced
            by a reset).

        Returns
        -------
        ndarray, shape (n, size), float32
        """
        out = observation[:, self._columns]
        noisy = self._noisy
        if len(noisy):
            n = observation.shape[0]
            z = np.zeros((n, len(noisy)))
            for i in range(n) if rows is None else rows.tolist():
                z[i] = rngs[i].standard_normal(len(noisy))
            out[:, noisy] = np.clip(out[:, noisy] + z * self._std[noisy], low[noisy], high[noisy])
        return out


# -- actuator models ------------------------------------------------------------
@dataclasses.dataclass
class ActuatorState:
    """The memory of :class:`ActuatorModel` for ``n`` copies (reset at episode starts).

    Attributes
    ----------
    torque : ndarray, shape (n, 2)
        The first-order response's last output (normalised torque).
    history : ndarray, shape (n, delay, 2)
        The last ``delay`` commands, oldest first (zeros at an episode start).
    """

    torque: Array
    history: Array

    def reset(self, rows: NDArray[np.intp] | slice = slice(None)) -> None:
        """Zero the memory of copies ``rows`` (default all)."""
        self.torque[rows] = 0.0
        self.history[rows] = 0.0


@dataclasses.dataclass(frozen=True)
class ActuatorModel:
    """The motors between the agent's command and the torque on the joints.

    A command ``a_t`` (normalised, clipped to ``[-1, 1]``) becomes the
    applied normalised torque in three stages, in order:

    1. delay: ``u_t = a_{t - delay}`` (zero for ``t < delay``);
    2. first-order response: ``tau_t = tau_{t-1} + response * (u_t - tau_{t-1})``,
       ``tau_{-1} = 0``;
    3. noise and saturation: ``clip(tau_t + noise * z_t, -1, 1)`` with
       ``z_t ~ N(0, 1)`` per motor, i.e. a std of ``noise * max_torque`` N·m.

    Attributes
    ----------
    noise : float
        Torque noise std as a fraction of each joint's ``max_torque``, >= 0.
    response : float
        The first-order response's gain ``k`` in ``(0, 1]`` (1: ideal motor).
    delay : int
        Control steps between a command and its application, >= 0.
    actuated : tuple of int
        The joints with a motor (the noise acts on these only).
    """

    noise: float
    response: float
    delay: int
    actuated: tuple[int, ...] = (0, 1)

    @classmethod
    def create(
        cls, noise: Any, response: Any, delay: Any, actuated: tuple[int, ...] = (0, 1)
    ) -> ActuatorModel | None:
        """Validate ``torque_noise``, ``torque_response`` and ``action_delay``; ``None`` for ideal motors.

        Raises
        ------
        ValueError
            Naming the argument and its allowed values.
        """
        noise = _finite(noise, "torque_noise", "a number >= 0 (a fraction of max_torque)")
        if noise < 0:
            raise ValueError(
                f"torque_noise must be a number >= 0 (a fraction of max_torque), got {noise!r}"
            )
        response = _finite(response, "torque_response", "a number in (0, 1]")
        if not 0 < response <= 1:
            raise ValueError(f"torque_response must be a number in (0, 1], got {response!r}")
        if isinstance(delay, bool) or not isinstance(delay, numbers.Integral) or delay < 0:
            raise ValueError(f"action_delay must be an integer >= 0 (control steps), got {delay!r}")
        if noise == 0 and response == 1 and delay == 0:
            return None
        return cls(noise, response, int(delay), tuple(actuated))

    def new_state(self, n: int) -> ActuatorState:
        """Zeroed memory for ``n`` copies."""
        return ActuatorState(np.zeros((n, 2)), np.zeros((n, self.delay, 2)))

    def apply(
        self,
        command: Array,
        state: ActuatorState,
        rngs: Sequence[np.random.Generator],
        rows: NDArray[np.intp] | None = None,
    ) -> Array:
        """The applied normalised torques of one control step; ``state`` is advanced in place.

        Parameters
        ----------
        command : ndarray, shape (n, 2)
            Normalised commands, clipped to ``[-1, 1]`` (0 at a joint without a motor).
        state : ActuatorState
            Of ``n`` copies.
        rngs : sequence of n numpy Generators
            Copy ``i``'s noise is ``rngs[i].standard_normal(len(actuated))``.
        rows : ndarray of int, optional
            The copies that draw noise (default all).

        Returns
        -------
        ndarray, shape (n, 2)
            In ``[-1, 1]``.
        """
        u = command
        if self.delay:
            u = state.history[:, 0].copy()
            state.history[:, :-1] = state.history[:, 1:]
            state.history[:, -1] = command
        if self.response != 1.0:
            u = state.torque + self.response * (u - state.torque)
            state.torque[:] = u
        applied = np.array(u, dtype=np.float64)
        if self.noise:
            n = command.shape[0]
            z = np.zeros((n, 2))
            joints = list(self.actuated)
            for i in range(n) if rows is None else rows.tolist():
                z[i, joints] = rngs[i].standard_normal(len(joints))
            np.clip(applied + self.noise * z, -1.0, 1.0, out=applied)
        return applied


# -- pushes -----------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class PushModel:
    """Pushes of the arm at random times: RealAIGym v3's push, between two control steps.

    At the start of each control step a copy is pushed with probability
    ``1 - exp(-rate · dt)`` (a Poisson process of ``rate`` pushes a second,
    sampled at the control steps): its state becomes where one v3 push
    (:func:`twolink_gym.tasks.push.push`: 0.2 s of a saturated PID on both
    joints, with gravity compensation, towards a random configuration without
    angle wrapping) leaves it, and the step's action then acts from there. The
    push takes no episode time (v3's takes 0.2 s of the run, in which the
    controller is not called): the agent's episode is the same length with
    or without pushes.

    Attributes
    ----------
    rate : float
        Pushes per second of episode time, > 0 (RealAIGym v3: 15 in 60 s, 0.25).
    """

    rate: float

    @classmethod
    def create(cls, rate: Any) -> PushModel | None:
        """Validate ``push_rate``; ``None`` for no pushes (``0``).

        Raises
        ------
        ValueError
            Naming ``push_rate`` and its allowed values.
        """
        rule = "a number >= 0 (pushes per second)"
        value = _finite(rate, "push_rate", rule)
        if value < 0:
            raise ValueError(f"push_rate must be {rule}, got {rate!r}")
        return None if value == 0 else cls(value)

    def probability(self, dt: float) -> float:
        """The probability that a copy is pushed at a control step of ``dt`` seconds."""
        return -math.expm1(-self.rate * dt)

    def apply(
        self,
        states: Array,
        params: Sequence[ArmParams],
        rngs: Sequence[np.random.Generator],
        dt: float,
        rows: NDArray[np.intp] | None = None,
    ) -> NDArray[np.bool_]:
        """Push the copies whose draw says so, in place; which were pushed.

        Parameters
        ----------
        states : ndarray, shape (n, 4)
            ``[q1, q2, dq1, dq2]`` [rad, rad/s]; a pushed copy's row is overwritten.
        params : sequence of n ArmParams
            Each copy's arm (the push's dynamics and gravity compensation).
        rngs : sequence of n numpy Generators
            Copy ``i`` draws ``u = rngs[i].random(3)``: pushed if ``u[0]`` is below
            :meth:`probability`, towards :func:`~twolink_gym.tasks.push.push_target` of ``u[1:]``.
        dt : float
            The control period [s].
        rows : ndarray of int, optional
            The copies that draw (default all; the others are not pushed).

        Returns
        -------
        ndarray of bool, shape (n,)
        """
        n = states.shape[0]
        pushed = np.zeros(n, dtype=bool)
        p = self.probability(dt)
        for i in range(n) if rows is None else rows.tolist():
            u = rngs[i].random(3)
            if u[0] < p:
                states[i] = push(params[i], states[i], push_target(u[1:]))
                pushed[i] = True
        return pushed
