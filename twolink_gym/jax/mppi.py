r"""MPPI control of the underactuated arms, planned on the JAX twin's dynamics.

Model-predictive path integral control (Williams et al., *Information theoretic
MPC for model-based reinforcement learning*, ICRA 2017) for the acrobot and the
pendubot: a global controller that needs no swing-up law, so it gets the arm up
again from wherever a push leaves it (RealAIGym v3, :mod:`twolink_gym.realaigym.v3`).

Each decision (every ``dt``, the controller's control period), for each arm:

1. **Catch.** A discrete LQR about the upright
   (:func:`~twolink_gym.controllers.lqr.design_upright_lqr`, weights ``Q``, ``R``)
   drives the arm while its predicted cost ``dxᵀ P dx`` is below ``catch_level``,
   and keeps it until the cost exceeds ``release_level`` (hysteresis, as the
   energy swing-ups' catch, :mod:`twolink_gym.controllers.pfl_swingup`); its
   torque is ``clip(-K dx)``, ``dx`` the state's error from the upright with the
   angles wrapped to ``[-π, π)``.
2. **Plan.** Otherwise ``samples`` torque sequences of the motor,
   ``v_k = clip(u + ε_k)``, ``ε_k ~ N(0, sigma²)`` per decision, around the
   previous plan ``u`` (``horizon`` decisions) are rolled out on the model
   (:func:`twolink_gym.jax.dynamics.rk4`, ``substeps`` steps per decision, the
   speeds clipped to ``±speed_limit`` so that no rollout diverges) and scored

   .. math:: S_k = \sum_{t=1}^{H} \big[ w_a (φ_1^2 + φ_{12}^2) + w_v (\dot q_1^2
             + (\dot q_1 + \dot q_2)^2) + w_u v_{k,t}^2 \big]
             + w_P \min(dx_H^\top P\, dx_H,\ 10^4),

   with ``φ1``, ``φ12`` the wrapped errors of link 1's and link 2's absolute
   angles from the upright (the arm's links, not its joints: a bent elbow costs
   what it lifts) and the terminal term the catch LQR's cost-to-go, capped,
   which draws the plans into the LQR's basin. The new plan is the
   softmax-weighted mean ``u = Σ_k w_k v_k``, ``w ∝ exp(-(S_k - min S) / λ)``,
   with ``λ = temperature · (mean S - min S)`` (a temperature relative to the
   spread of the costs, so the weights need no rescaling when the costs do);
   its first torque is applied, and the plan is shifted by one decision (the
   last torque repeated) to start the next.

The noise of decision ``i`` comes from ``jax.random.fold_in(key(seed), i)``, so a
run is reproducible. The controller's state (SB3's recurrent-state slot, shape
``(n, 2 + horizon)``) holds per arm whether the LQR drives it, the decisions so
far and the plan [N·m]; it restarts where ``episode_start`` is true. The plans
run in JAX's default float (float32 unless ``jax_enable_x64``).
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym._arrays import non_negative_number, positive_integer, positive_number
from twolink_gym.codec import DecodedObservation
from twolink_gym.controllers.base import Array, Controller
from twolink_gym.controllers.lqr import design_upright_lqr
from twolink_gym.dynamics import arm_vector, has_coulomb
from twolink_gym.jax.dynamics import rk4
from twolink_gym.jax.params import arm_of, float_dtype
from twolink_gym.params import ArmParams
from twolink_gym.tasks import SwingupTask, Task

__all__ = ["COST_CAP", "MPPIController", "MPPIMemory", "MPPISettings"]

#: The cap on the terminal cost-to-go (a far state costs this, not more).
COST_CAP = 1.0e4


@dataclasses.dataclass(frozen=True)
class MPPISettings:
    """The planner's settings (module notes).

    Attributes
    ----------
    samples : int
        Sampled torque sequences per decision, >= 2.
    horizon : int
        Decisions in a plan, >= 1.
    sigma : float
        Std of the sampled torque noise [N·m], > 0.
    temperature : float
        ``λ`` relative to ``mean S - min S``, > 0 (smaller: the best samples weigh more).
    angle_weight, speed_weight, torque_weight, terminal_weight : float
        ``w_a`` [1/rad²], ``w_v`` [s²/rad²], ``w_u`` [1/(N·m)²], ``w_P``, each >= 0.
    substeps : int
        RK4 steps per decision in the rollouts, >= 1.
    speed_limit : float
        The rollouts' joint speed clip [rad/s], > 0.
    seed : int
        Of the sampled noise.
    """

    samples: int = 1024
    horizon: int = 50
    sigma: float = 2.0
    temperature: float = 0.1
    angle_weight: float = 10.0
    speed_weight: float = 0.1
    torque_weight: float = 0.01
    terminal_weight: float = 1.0
    substeps: int = 1
    speed_limit: float = 60.0
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("horizon", "substeps"):
            positive_integer(getattr(self, name), name)
        if positive_integer(self.samples, "samples") < 2:
            raise ValueError(f"samples must be an integer >= 2, got {self.samples!r}")
        for name in ("sigma", "temperature", "speed_limit"):
            positive_number(getattr(self, name), name)
        for name in ("angle_weight", "speed_weight", "torque_weight", "terminal_weight"):
            non_negative_number(getattr(self, name), name)
        if isinstance(self.seed, bool) or not isinstance(self.seed, numbers.Integral):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")


class MPPIMemory(NamedTuple):
    """One arm's controller state between decisions (a pytree; leading axes stack arms).

    Attributes
    ----------
    plan : jax.Array, shape (horizon,)
        The motor's torques [N·m] planned for the next decisions.
    caught : jax.Array of bool, shape ()
        Whether the LQR drives the arm.
    decisions : jax.Array of uint32, shape ()
        Decisions so far (the noise of decision ``i`` is drawn from ``fold_in(key(seed), i)``).
    seed : jax.Array of uint32, shape ()
        The noise's seed.
    """

    plan: jax.Array
    caught: jax.Array
    decisions: jax.Array
    seed: jax.Array


def _wrap(angle: jax.Array) -> jax.Array:
    """Angles wrapped to ``[-π, π)``."""
    return (angle + jnp.pi) % (2.0 * jnp.pi) - jnp.pi


class MPPIController(Controller):
    """MPPI swing-up and balance of the acrobot or the pendubot with an LQR catch (module notes).

    Parameters
    ----------
    task, params, dt, max_torque, actuation
        See :class:`~twolink_gym.controllers.base.Controller`; ``params`` is the
        model the plans roll out on, ``dt`` the decision period (the plans'
        step), ``max_torque`` the motor's limit the plans clip to.
    settings : MPPISettings or dict, optional
        The planner's settings (default :class:`MPPISettings`).
    catch_level : float
        The LQR takes over where ``dxᵀ P dx < catch_level``, > 0.
    release_level : float
        ... and hands the arm back to the planner where ``dxᵀ P dx > release_level``
        (>= ``catch_level``).
    Q, R : array_like, optional
        The catch LQR's weights (default: those of
        :class:`~twolink_gym.controllers.lqr.LQRController`); its ``P`` is also
        the plans' terminal cost.

    Attributes
    ----------
    design : LQRDesign
        The catch LQR (one input).
    active : int
        The motor joint (0 shoulder, 1 elbow).

    Raises
    ------
    ValueError
        Naming the argument: a setting out of range, a release level below the
        catch level, an actuation other than ``"acrobot"`` or ``"pendubot"``.
    """

    task_types = (SwingupTask,)
    actuations = ("pendubot", "acrobot")

    def __init__(
        self,
        task: Task | str = "swingup",
        params: ArmParams | Mapping[str, Any] | None = None,
        dt: float = 0.01,
        max_torque: ArrayLike | None = None,
        actuation: str = "pendubot",
        *,
        settings: MPPISettings | Mapping[str, Any] | None = None,
        catch_level: float = 120.0,
        release_level: float = 4500.0,
        Q: ArrayLike | None = None,
        R: ArrayLike | None = None,
    ) -> None:
        super().__init__(task, params, dt, max_torque, actuation)
        if settings is None:
            settings = MPPISettings()
        elif isinstance(settings, Mapping):
            allowed = [f.name for f in dataclasses.fields(MPPISettings)]
            unknown = sorted(set(settings) - set(allowed))
            if unknown:
                raise ValueError(f"settings has unknown key(s) {unknown}; allowed: {allowed}")
            settings = MPPISettings(**settings)
        self.settings = settings
        self.catch_level = positive_number(catch_level, "catch_level")
        self.release_level = positive_number(release_level, "release_level")
        if self.release_level < self.catch_level:
            raise ValueError(
                f"release_level must be >= catch_level ({catch_level}), got {release_level!r}"
            )
        (self.active,) = self.actuated
        self.design = design_upright_lqr(
            self.params, self.dt, self.max_torque, self.actuated, Q=Q, R=R
        )
        self._decide_one = self._compile()
        self._decide_batch = jax.jit(jax.vmap(self._decide_one))
        self._memory: Array | None = None

    @property
    def state_size(self) -> int:
        """Columns of the controller's state in :meth:`predict`: caught flag, decisions so far, the plan."""
        return 2 + self.settings.horizon

    def initial_memory(self, seed: int | None = None) -> MPPIMemory:
        """The state of an arm at an episode's start: a zero plan, not caught (``seed``: the settings')."""
        dtype = float_dtype()
        return MPPIMemory(
            plan=jnp.zeros((self.settings.horizon,), dtype),
            caught=jnp.asarray(False),
            decisions=jnp.asarray(0, jnp.uint32),
            seed=jnp.asarray(self.settings.seed if seed is None else seed, jnp.uint32),
        )

    def _compile(self) -> Any:
        """The pure decision of one arm, :meth:`decide`'s body (module notes)."""
        s = self.settings
        dtype = float_dtype()
        arm = arm_of(self.params, dtype)
        coulomb = bool(has_coulomb(arm_vector(self.params)))
        active = self.active
        limit = float(self.max_torque[active])
        p = jnp.asarray(self.design.p, dtype)
        k = jnp.asarray(self.design.k[0], dtype)
        dt = jnp.asarray(self.dt, dtype)
        catch_level, release_level = self.catch_level, self.release_level

        def error(x: jax.Array) -> jax.Array:
            return jnp.stack([_wrap(x[0] - jnp.pi / 2), _wrap(x[1]), x[2], x[3]])

        def cost_to_go(x: jax.Array) -> jax.Array:
            dx = error(x)
            return dx @ p @ dx

        def stage(x: jax.Array) -> jax.Array:
            links = _wrap(x[0] - jnp.pi / 2) ** 2 + _wrap(x[0] + x[1] - jnp.pi / 2) ** 2
            speeds = x[2] ** 2 + (x[2] + x[3]) ** 2
            return s.angle_weight * links + s.speed_weight * speeds

        def rollout(x0: jax.Array, torques: jax.Array) -> jax.Array:
            def advance(x: jax.Array, u: jax.Array) -> tuple[jax.Array, jax.Array]:
                tau1, tau2 = (u, 0.0) if active == 0 else (0.0, u)
                q1, q2, dq1, dq2 = rk4(
                    arm, x[0], x[1], x[2], x[3], tau1, tau2, dt, s.substeps, coulomb
                )
                speeds = jnp.clip(jnp.stack([dq1, dq2]), -s.speed_limit, s.speed_limit)
                y = jnp.stack([q1, q2, speeds[0], speeds[1]])
                return y, y

            return jax.lax.scan(advance, x0, torques)[1]

        def plan(x: jax.Array, memory: MPPIMemory) -> tuple[jax.Array, jax.Array]:
            key = jax.random.fold_in(jax.random.key(memory.seed), memory.decisions)
            noise = s.sigma * jax.random.normal(key, (s.samples, s.horizon), dtype)
            v = jnp.clip(memory.plan[None, :] + noise, -limit, limit)
            states = jax.vmap(rollout, in_axes=(None, 0))(x, v)
            costs = (
                jnp.sum(jax.vmap(jax.vmap(stage))(states), axis=1)
                + s.torque_weight * jnp.sum(v**2, axis=1)
                + s.terminal_weight * jnp.minimum(jax.vmap(cost_to_go)(states[:, -1]), COST_CAP)
            )
            best = jnp.min(costs)
            lam = s.temperature * (jnp.mean(costs) - best) + 1e-9
            weights = jax.nn.softmax(-(costs - best) / lam)
            new = jnp.clip(weights @ v, -limit, limit)
            return new[0], jnp.concatenate([new[1:], new[-1:]])

        def decide(x: jax.Array, memory: MPPIMemory) -> tuple[jax.Array, MPPIMemory]:
            x = jnp.asarray(x, dtype)
            cost = cost_to_go(x)
            hold = (cost < catch_level) | (memory.caught & (cost <= release_level))

            def lqr(_: Any) -> tuple[jax.Array, jax.Array]:
                return jnp.clip(-(k @ error(x)), -limit, limit), jnp.zeros_like(memory.plan)

            u, next_plan = jax.lax.cond(hold, lqr, lambda _: plan(x, memory), None)
            torques = jnp.zeros((2,), dtype).at[active].set(u)
            after = MPPIMemory(next_plan, hold, memory.decisions + jnp.uint32(1), memory.seed)
            return torques, after

        return decide

    def decide(self, x: jax.Array, memory: MPPIMemory) -> tuple[jax.Array, MPPIMemory]:
        """One decision for one arm: its torques ``(2,)`` [N·m] (0 at the passive joint) and next state.

        A pure JAX function of the state ``x`` ``(4,)`` (our angles, unwrapped or not)
        and :class:`MPPIMemory`: jittable, vmappable, and the stateful policy of
        :func:`twolink_gym.jax.realaigym_v3.run` (with :meth:`initial_memory`).
        """
        decision: tuple[jax.Array, MPPIMemory] = self._decide_one(x, memory)
        return decision

    def _torque(
        self, decoded: DecodedObservation, state: Any, episode_start: NDArray[np.bool_]
    ) -> tuple[Array, Array]:
        x = decoded.state
        n = x.shape[0]
        if state is None and self._memory is not None and self._memory.shape[0] == n:
            state = self._memory
        if state is None:
            memory = np.zeros((n, self.state_size))
        else:
            memory = np.array(state, dtype=np.float64)
            if memory.shape != (n, self.state_size):
                raise ValueError(
                    f"state must be the array of shape ({n}, {self.state_size}) returned by "
                    f"MPPIController.predict, got shape {memory.shape}"
                )
        memory[episode_start] = 0.0
        dtype = float_dtype()
        rows = MPPIMemory(
            plan=jnp.asarray(memory[:, 2:], dtype),
            caught=jnp.asarray(memory[:, 0] > 0.5),
            decisions=jnp.asarray(memory[:, 1], jnp.uint32),
            seed=jnp.full((n,), self.settings.seed, jnp.uint32),
        )
        torques, after = self._decide_batch(jnp.asarray(x, dtype), rows)
        new = np.empty_like(memory)
        new[:, 0] = np.asarray(after.caught, dtype=np.float64)
        new[:, 1] = np.asarray(after.decisions, dtype=np.float64)
        new[:, 2:] = np.asarray(after.plan, dtype=np.float64)
        self._memory = new.copy()
        return np.asarray(torques, dtype=np.float64), new

    def __repr__(self) -> str:
        return (
            f"MPPIController(actuation={self.actuation!r}, dt={self.dt}, settings={self.settings}, "
            f"catch_level={self.catch_level}, release_level={self.release_level}, "
            f"max_torque={self.max_torque.tolist()})"
        )
