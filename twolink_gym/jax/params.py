"""The JAX env's parameters and state: :class:`EnvParams` and :class:`EnvState` (frozen pytrees).

:class:`EnvParams` is built from the same :class:`~twolink_gym.env_config.EnvConfig`
the compiled envs take (:meth:`EnvParams.from_config`), so every setting is
still declared once: the arm (its arm vector, :class:`twolink_gym.kernel.Arm`),
the control period, the torque and speed limits, the task's kernel options
(``task.options_type()``) and episode options, as JAX scalars (traceable:
changing one does not recompile); the number of RK4 sub-steps, the episode
length and whether the arm has Coulomb friction are static fields (Python
values: the traced step leaves out what they switch off). Floats are JAX's default float:
float32, or float64 under ``jax_enable_x64`` (make the params inside it).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from twolink_gym.dynamics import arm_vector, has_coulomb
from twolink_gym.kernel import Arm
from twolink_gym.params import ArmParams
from twolink_gym.tasks import Task

__all__ = ["NO_LIMIT", "EnvParams", "EnvState", "arm_of", "float_dtype"]

#: ``max_steps_in_episode`` of an env without a time limit (``max_episode_steps=-1``).
NO_LIMIT = 2**31 - 1


def float_dtype() -> Any:
    """JAX's default float dtype now: float32, or float64 under ``jax_enable_x64``."""
    return jax.dtypes.canonicalize_dtype(jnp.float64)


def arm_of(params: ArmParams, dtype: Any = None) -> Arm:
    """The arm vector of ``params`` as a :class:`twolink_gym.kernel.Arm` of JAX scalars."""
    dtype = float_dtype() if dtype is None else dtype
    return Arm(*(jnp.asarray(v, dtype) for v in arm_vector(params)))


@struct.dataclass
class EnvParams:
    """The env's settings as a pytree (see the module notes).

    Attributes
    ----------
    arm : twolink_gym.kernel.Arm
        The nominal arm's entries (:data:`twolink_gym.dynamics.ARM_VECTOR_FIELDS`).
    max_torque : Array, shape (2,)
        Joint torques at action ±1 [N·m].
    max_speed : Array, shape ()
        Joint speed limit [rad/s]; speeds are clipped to it after every step.
    dt : Array, shape ()
        Control period [s].
    options : Task.Options
        The task kernel's options (named tuple of scalars; bools as 0.0/1.0).
    episode : dict of str to Array
        The task's episode options (``Task.episode_option_names``).
    models : pytree
        The robustness models' parameters (:mod:`twolink_gym.jax.robustness`).
    substeps : int
        RK4 sub-steps per control period (static).
    max_steps_in_episode : int
        Steps after which an episode is truncated (static; :data:`NO_LIMIT`: none).
    coulomb : bool
        Whether the dynamics evaluate the Coulomb friction terms (static): true
        when the arm has a nonzero ``coulomb1``/``coulomb2`` or the
        randomisation draws one. ``False`` leaves them out (they would add exact
        zeros); set it true (``params.replace(coulomb=True)``) before giving
        ``arm`` a nonzero ``cf1``/``cf2`` by hand.
    """

    arm: Any
    max_torque: jax.Array
    max_speed: jax.Array
    dt: jax.Array
    options: Any
    episode: dict[str, jax.Array]
    models: Any = None
    substeps: int = struct.field(pytree_node=False, default=2)
    max_steps_in_episode: int = struct.field(pytree_node=False, default=NO_LIMIT)
    coulomb: bool = struct.field(pytree_node=False, default=True)

    @classmethod
    def from_checked(
        cls, checked: dict[str, Any], max_steps: int | None, models: Any = None
    ) -> EnvParams:
        """The params of validated settings (:meth:`EnvConfig.checked`), in the default float."""
        dtype = float_dtype()
        task: Task = checked["task_options"]
        options_cls = task.options_type()
        options = options_cls(*(jnp.asarray(v, dtype) for v in task.kernel_options()))
        # the numeric ones (track's path families are static: its twin reads the task)
        episode = {
            name: jnp.asarray(float(getattr(task, name)), dtype)
            for name in task.episode_option_names
            if isinstance(getattr(task, name), (int, float))
        }
        randomized = () if checked["randomize"] is None else checked["randomize"].ranges
        coulomb = bool(has_coulomb(arm_vector(checked["params"]))) or any(
            r.field in ("coulomb1", "coulomb2") for r in randomized
        )
        return cls(
            arm=arm_of(checked["params"], dtype),
            max_torque=jnp.asarray(np.asarray(checked["max_torque"], dtype=np.float64), dtype),
            max_speed=jnp.asarray(checked["max_speed"], dtype),
            dt=jnp.asarray(checked["dt"], dtype),
            options=options,
            episode=episode,
            models=models,
            substeps=int(checked["substeps"]),
            max_steps_in_episode=NO_LIMIT if max_steps is None else int(max_steps),
            coulomb=coulomb,
        )


@struct.dataclass
class EnvState:
    """One env's state between steps (a pytree; batch it with ``jax.vmap``).

    Attributes
    ----------
    x : Array, shape (4,)
        The arm state ``[q1, q2, dq1, dq2]`` [rad, rad, rad/s, rad/s].
    goal : Array, shape (goal_size,)
        The episode's goal (reach: the target [m]).
    memory : Task.Memory
        The task's episode memory (named tuple of scalars).
    arm : twolink_gym.kernel.Arm
        The episode's arm (the nominal one unless randomised).
    steps : Array, shape (), int32
        Control steps taken in the episode.
    time : Array, shape ()
        Episode time ``steps · dt`` [s].
    action : Array, shape (2,)
        The normalised action applied at the last step (both joints; 0 at reset).
    reward : Array, shape ()
        The last step's reward (0 at reset).
    actuator : pytree
        The actuator model's state (:mod:`twolink_gym.jax.robustness`; empty if ideal).
    """

    x: jax.Array
    goal: jax.Array
    memory: Any
    arm: Any
    steps: jax.Array
    time: jax.Array
    action: jax.Array
    reward: jax.Array
    actuator: Any = ()
