"""The robustness models of :mod:`twolink_gym.imperfections` as pure JAX functions.

The twins of the compiled env's per-episode and per-step models, and the
:class:`Models` object that plugs them into the JAX env's hook points
(:mod:`twolink_gym.jax.robustness`):

:func:`draw_arm`
    :class:`~twolink_gym.imperfections.Randomization`: each declared
    :class:`~twolink_gym.params.ArmParams` field uniform in its range (a
    factor of the nominal value, or an absolute value), the others nominal;
    the arm vector of the result (:func:`arm_of_fields`).
:func:`observe`
    :class:`~twolink_gym.imperfections.ObservationModel`: the kept columns
    (the full state or the angles only, then the task's extras) plus Gaussian
    noise of the declared stds, the noisy entries clipped to the observation
    space's bounds.
:func:`actuate`
    :class:`~twolink_gym.imperfections.ActuatorModel`: the delay (a queue of
    the last ``delay`` commands), the first-order response
    ``tau_t = tau_{t-1} + k (u_t - tau_{t-1})`` and torque noise
    ``clip(tau_t + noise · z, -1, 1)`` on the motor joints.
:func:`push_arm`
    :class:`~twolink_gym.imperfections.PushModel`: with probability
    ``1 - exp(-rate · dt)`` a step starts where a RealAIGym v3 push
    (:func:`twolink_gym.jax.tasks.push.push`) leaves the arm.

The deterministic parts (the columns, the delay, the response, the arm
vector) follow the compiled models operation by operation, so under
``jax_enable_x64`` they are exact; the random draws come from
:mod:`jax.random` (the same distributions, not numpy's draws).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from twolink_gym.imperfections import (
    RANDOMIZABLE,
    ActuatorModel,
    ObservationModel,
    PushModel,
    Randomization,
)
from twolink_gym.jax.robustness import Models
from twolink_gym.jax.tasks.push import push, push_target
from twolink_gym.kernel import Arm
from twolink_gym.params import ArmParams

__all__ = [
    "ActuatorState",
    "ImperfectModels",
    "ModelParams",
    "actuate",
    "arm_of_fields",
    "draw_arm",
    "observe",
    "push_arm",
]


def arm_of_fields(fields: jax.Array) -> Arm:
    """The arm vector of :class:`~twolink_gym.params.ArmParams` fields, as an :class:`~twolink_gym.kernel.Arm`.

    The twin of :func:`twolink_gym.dynamics.arm_vector` (the same operations).

    Parameters
    ----------
    fields : Array, shape (15,)
        The fields in :data:`~twolink_gym.imperfections.RANDOMIZABLE` order
        (``m1, m2, l1, l2, lc1, lc2, I1, I2, gravity, friction1, friction2,
        rotor_inertia, gear_ratio, coulomb1, coulomb2``).
    """
    p = dict(zip(RANDOMIZABLE, (fields[j] for j in range(len(RANDOMIZABLE))), strict=True))
    ir, gr = p["rotor_inertia"], p["gear_ratio"]
    m1, m2, l1, lc1, lc2 = p["m1"], p["m2"], p["l1"], p["lc1"], p["lc2"]
    # in ARM_VECTOR_FIELDS order: a, b, d, g1, g2, f1, f2, l1, l2, e, cf1, cf2
    values = (
        m1 * lc1**2 + m2 * (l1**2 + lc2**2) + p["I1"] + p["I2"] + (gr**2 + 1.0) * ir,
        m2 * l1 * lc2,
        m2 * lc2**2 + p["I2"] + gr**2 * ir,
        (m1 * lc1 + m2 * l1) * p["gravity"],
        m2 * lc2 * p["gravity"],
        p["friction1"],
        p["friction2"],
        l1,
        p["l2"],
        m2 * lc2**2 + p["I2"] - gr * ir,
        p["coulomb1"],
        p["coulomb2"],
    )
    return Arm(*iter(values))


def draw_arm(
    key: jax.Array,
    nominal: jax.Array,
    index: jax.Array,
    low: jax.Array,
    high: jax.Array,
    absolute: jax.Array,
) -> jax.Array:
    """One episode's arm fields ``(15,)``: the declared fields drawn, the others nominal.

    Parameters
    ----------
    key : PRNG key
    nominal : Array, shape (15,)
        The nominal fields (:func:`arm_of_fields` order).
    index : int Array, shape (k,)
        The randomised fields' positions in ``nominal``.
    low, high : Array, shape (k,)
        Their ranges: factors of the nominal value, or values (``absolute``).
    absolute : bool Array, shape (k,)
    """
    u = jax.random.uniform(key, low.shape, nominal.dtype, low, high)
    values = jnp.where(absolute, u, u * nominal[index])
    return nominal.at[index].set(values)


def observe(
    key: jax.Array,
    obs: jax.Array,
    columns: tuple[int, ...],
    std: jax.Array,
    low: jax.Array,
    high: jax.Array,
) -> jax.Array:
    """What the agent sees of a kernel observation ``(6 + extras,)``: shape ``(len(columns),)``.

    The kept ``columns`` (static), plus ``std · z`` with ``z ~ N(0, 1)`` on the
    entries whose std is > 0, those clipped to ``[low, high]`` (the others
    exact, as the compiled model leaves them).
    """
    out = obs[jnp.asarray(columns)]
    z = jax.random.normal(key, out.shape, out.dtype)
    noisy = jnp.clip(out + z * std, low, high)
    return jnp.where(std > 0.0, noisy, out)


@dataclasses.dataclass(frozen=True)
class ActuatorState:
    """The actuator model's memory of one env (zeros at an episode start).

    Attributes
    ----------
    torque : Array, shape (2,)
        The first-order response's last output (normalised torque).
    history : Array, shape (delay, 2)
        The last ``delay`` commands, oldest first.
    """

    torque: jax.Array
    history: jax.Array


jax.tree_util.register_dataclass(ActuatorState, data_fields=["torque", "history"], meta_fields=[])


def actuate(
    key: jax.Array,
    command: jax.Array,
    state: ActuatorState,
    noise: jax.Array,
    response: jax.Array,
    motors: jax.Array,
) -> tuple[jax.Array, ActuatorState]:
    """The applied normalised torques ``(2,)`` of one control step, and the advanced memory.

    In order: the delay (the oldest queued command, the new one queued; no
    delay for an empty queue), the first-order response (skipped for
    ``response == 1``, so an ideal motor passes the command bit for bit), then
    ``clip(tau + noise · z, -1, 1)`` with ``z ~ N(0, 1)`` on the ``motors``
    (``(2,)`` 0/1) and 0 elsewhere.

    Parameters
    ----------
    command : Array, shape (2,)
        Normalised commands in ``[-1, 1]`` (0 at a joint without a motor).
    noise : Array, shape ()
        Torque noise std, a fraction of ``max_torque``.
    response : Array, shape ()
        The response's gain in ``(0, 1]``.
    """
    u = command
    history = state.history
    if history.shape[0]:
        u = history[0]
        history = jnp.concatenate([history[1:], command[None, :]])
    filtered = state.torque + response * (u - state.torque)
    ideal = response == 1.0
    u = jnp.where(ideal, u, filtered)
    torque = jnp.where(ideal, state.torque, filtered)
    z = jax.random.normal(key, (2,), u.dtype) * motors
    applied = jnp.clip(u + noise * z, -1.0, 1.0)
    return applied, ActuatorState(torque, history)


def push_arm(
    key: jax.Array, x: jax.Array, arm: Arm, probability: jax.Array, coulomb: bool = True
) -> tuple[jax.Array, jax.Array]:
    """The state ``(4,)`` a step starts from, and whether a push put it there.

    ``u = uniform(key, (3,))``: pushed if ``u[0] < probability``, towards
    :func:`~twolink_gym.jax.tasks.push.push_target` of ``u[1:]`` (the compiled
    :meth:`PushModel.apply <twolink_gym.imperfections.PushModel.apply>`'s use
    of its three draws). The push is computed on every call (under ``vmap`` a
    condition computes both branches) and kept where pushed.

    Parameters
    ----------
    x : Array, shape (4,)
        ``[q1, q2, dq1, dq2]`` [rad, rad/s].
    arm : Arm
        The episode's arm.
    probability : Array, shape ()
        The chance of a push at this step, ``1 - exp(-rate · dt)``.
    coulomb : bool
        As in :func:`twolink_gym.jax.dynamics.rk4` (static).
    """
    u = jax.random.uniform(key, (3,), x.dtype)
    pushed = u[0] < probability
    return jnp.where(pushed, push(arm, x, push_target(u[1:]), coulomb), x), pushed


# -- the models in the JAX env ------------------------------------------------------
@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class ModelParams:
    """The models' parameters in ``EnvParams.models`` (traced: changing one does not recompile).

    Attributes
    ----------
    nominal : Array, shape (15,)
        The nominal arm's fields.
    index : int Array, shape (k,)
    low, high : Array, shape (k,)
    absolute : bool Array, shape (k,)
        The randomisation's ranges (:func:`draw_arm`; ``k = 0`` without one).
    obs_std, obs_low, obs_high : Array, shape (obs_size,)
        The observation noise's stds and the clipping bounds.
    torque_noise, torque_response : Array, shape ()
    motors : Array, shape (2,)
        1.0 at a joint with a motor.
    push_probability : Array, shape ()
        The chance of a push at a control step (:meth:`PushModel.probability
        <twolink_gym.imperfections.PushModel.probability>`; 0: none).
    """

    nominal: jax.Array
    index: jax.Array
    low: jax.Array
    high: jax.Array
    absolute: jax.Array
    obs_std: jax.Array
    obs_low: jax.Array
    obs_high: jax.Array
    torque_noise: jax.Array
    torque_response: jax.Array
    motors: jax.Array
    push_probability: jax.Array


class ImperfectModels(Models):
    """The compiled env's robustness models at the JAX env's hook points.

    Built by :func:`twolink_gym.jax.robustness.build` from the validated
    settings when one of ``randomize``, ``observation``, ``obs_noise``,
    ``torque_noise``, ``torque_response``, ``action_delay`` or ``push_rate`` is set. The
    observation's columns and the delay (shapes) are static; the rest is in
    :class:`ModelParams`.

    Parameters
    ----------
    checked : dict
        :meth:`EnvConfig.checked <twolink_gym.env_config.EnvConfig.checked>`.
    actuated : tuple of int
        The joints with a motor.
    """

    def __init__(self, checked: dict[str, Any], actuated: tuple[int, ...]) -> None:
        self.nominal: ArmParams = checked["params"]
        self.task = checked["task_options"]
        self.max_speed = float(checked["max_speed"])
        self.randomization: Randomization | None = checked["randomize"]
        self.observation_model: ObservationModel | None = checked["obs_noise"]
        self.actuator_model = ActuatorModel.create(
            checked["torque_noise"], checked["torque_response"], checked["action_delay"], actuated
        )
        self.push_model: PushModel | None = PushModel.create(checked["push_rate"])
        self.dt = float(checked["dt"])
        self.actuated = actuated
        size = 6 + self.task.extras_size
        model = self.observation_model
        self.columns: tuple[int, ...] = tuple(range(size)) if model is None else model.columns
        self.delay = 0 if self.actuator_model is None else self.actuator_model.delay
        self.draws = frozenset(
            name
            for name, model in (
                ("draw_arm", self.randomization),
                ("actuate", self.actuator_model),
                ("push", self.push_model),
                ("observe", self.observation_model),
            )
            if model is not None
        )

    # -- parameters --------------------------------------------------------------
    def params(self, dtype: Any) -> ModelParams:
        """The models' parameters in ``dtype`` (see :class:`ModelParams`)."""
        ranges = () if self.randomization is None else self.randomization.ranges
        model = self.observation_model
        std = np.zeros(len(self.columns)) if model is None else np.asarray(model.noise)
        low, high = self.bounds(*self._kernel_bounds())
        actuator = self.actuator_model
        motors = np.zeros(2)
        motors[list(self.actuated)] = 1.0
        return ModelParams(
            nominal=jnp.asarray([getattr(self.nominal, f) for f in RANDOMIZABLE], dtype),
            index=jnp.asarray([RANDOMIZABLE.index(r.field) for r in ranges], jnp.int32),
            low=jnp.asarray([r.low for r in ranges], dtype),
            high=jnp.asarray([r.high for r in ranges], dtype),
            absolute=jnp.asarray([r.absolute for r in ranges], bool),
            obs_std=jnp.asarray(std, dtype),
            # the compiled env clips to its float32 bounds
            obs_low=jnp.asarray(low.astype(np.float32), dtype),
            obs_high=jnp.asarray(high.astype(np.float32), dtype),
            torque_noise=jnp.asarray(0.0 if actuator is None else actuator.noise, dtype),
            torque_response=jnp.asarray(1.0 if actuator is None else actuator.response, dtype),
            motors=jnp.asarray(motors, dtype),
            push_probability=jnp.asarray(
                0.0 if self.push_model is None else self.push_model.probability(self.dt), dtype
            ),
        )

    def _kernel_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The kernel observation's bounds at the nominal arm (float64)."""
        low_x, high_x = self.task.extras_bounds(self.nominal)
        s = self.max_speed
        low = np.concatenate([[-1.0, -1.0, -1.0, -1.0, -s, -s], low_x])
        high = np.concatenate([[1.0, 1.0, 1.0, 1.0, s, s], high_x])
        return low, high

    # -- the hooks -----------------------------------------------------------------
    def draw_arm(self, key: jax.Array, params: Any) -> Any:
        """The episode's arm: drawn from the randomisation, else the nominal one."""
        if self.randomization is None:
            return params.arm
        m = params.models
        return arm_of_fields(draw_arm(key, m.nominal, m.index, m.low, m.high, m.absolute))

    def init_actuator(self, key: jax.Array, params: Any, dtype: Any) -> ActuatorState | tuple[()]:
        """Zeroed memory (no torque, an empty queue of ``delay`` commands); ``()`` without an actuator model.

        Without one the env's state has the ideal env's structure (a saved
        train state of one loads into the other).
        """
        if self.actuator_model is None:
            return ()
        return ActuatorState(jnp.zeros((2,), dtype), jnp.zeros((self.delay, 2), dtype))

    def actuate(
        self, key: jax.Array, command: jax.Array, actuator: Any, params: Any
    ) -> tuple[jax.Array, Any]:
        """The applied torques of :func:`actuate` (the command itself without an actuator model)."""
        if self.actuator_model is None:
            return command, actuator
        m = params.models
        return actuate(key, command, actuator, m.torque_noise, m.torque_response, m.motors)

    def push(
        self, key: jax.Array, x: jax.Array, arm: Any, params: Any
    ) -> tuple[jax.Array, jax.Array]:
        """The state of :func:`push_arm` (``x`` itself, never pushed, without a push model)."""
        if self.push_model is None:
            return x, jnp.zeros((), bool)
        return push_arm(key, x, arm, params.models.push_probability, params.coulomb)

    def observe(self, key: jax.Array, obs: jax.Array, params: Any) -> jax.Array:
        """The observation of :func:`observe` (the kept columns, with noise)."""
        if self.observation_model is None:
            return obs
        m = params.models
        return observe(key, obs, self.columns, m.obs_std, m.obs_low, m.obs_high)

    def bounds(self, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The compiled env's bounds: over the randomisation's extreme arms, then the model's.

        As :meth:`Simulation.observation_bounds
        <twolink_gym.simulation.Simulation.observation_bounds>`.
        """
        if self.randomization is not None:
            extras = [
                self.task.extras_bounds(arm) for arm in self.randomization.extremes(self.nominal)
            ]
            low = np.concatenate([low[:6], np.min([b[0] for b in extras], axis=0)])
            high = np.concatenate([high[:6], np.max([b[1] for b in extras], axis=0)])
        if self.observation_model is not None:
            low, high = self.observation_model.bounds(low, high)
        return low, high
