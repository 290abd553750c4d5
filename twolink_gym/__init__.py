"""twolink-gym: a Gymnasium environment for a planar two-link robot arm.

``import twolink_gym`` registers the per-task ids ``TwoLinkReach-v0`` and
``TwoLinkBalance-v0`` and the generic ``TwoLink-v0`` (task chosen by its
``task`` keyword) with Gymnasium (see :mod:`twolink_gym.registration`). The physics
(:mod:`twolink_gym.dynamics`, :mod:`twolink_gym.kinematics`,
:mod:`twolink_gym.integrators`) is usable on its own: batched numpy functions
over compiled per-arm kernels (numba). A task is written once, as a compiled
task kernel (:func:`task_kernel`); :mod:`twolink_gym.kernel` steps any number
of arms with it.

The shipped pretrained agents load with :func:`load_pretrained` (this needs
stable-baselines3, the ``train`` extra; ``import twolink_gym`` itself does not
import it). :func:`twolink_gym.pretrained.catalog` lists them.
"""

import importlib.util
from typing import TYPE_CHECKING

from twolink_gym.codec import DecodedObservation, decode_observation, encode_state
from twolink_gym.dynamics import (
    Equilibrium,
    coriolis_forces,
    coriolis_matrix,
    energy,
    equilibria,
    forward_dynamics,
    friction_torque,
    gravity_jacobian,
    gravity_torque,
    inverse_dynamics,
    kinetic_energy,
    linearize,
    mass_matrix,
    potential_energy,
    state_derivative,
    total_energy,
)
from twolink_gym.env import TwoLinkEnv
from twolink_gym.integrators import step
from twolink_gym.kinematics import (
    forward_kinematics,
    inverse_kinematics,
    jacobian,
    project_to_workspace,
    tip_position,
    tip_velocity,
    wrap_angle,
)
from twolink_gym.params import ArmParams
from twolink_gym.registration import register_envs
from twolink_gym.tasks import (
    TASKS,
    BalanceTask,
    ReachTask,
    SwingupTask,
    Task,
    TrackTask,
    make_task,
    task_kernel,
)
from twolink_gym.vector_env import TwoLinkVectorEnv

if TYPE_CHECKING:
    from twolink_gym.training.policies import PretrainedAgent

__version__ = "0.8.0"

register_envs()


def load_pretrained(name: str) -> "PretrainedAgent":
    """A shipped agent by name, acting on raw observations of its env.

    Parameters
    ----------
    name : str
        One of :func:`twolink_gym.pretrained.available` (e.g. ``"balance_ppo"``;
        :func:`twolink_gym.pretrained.catalog` describes each).

    Returns
    -------
    twolink_gym.training.policies.PretrainedAgent
        With ``name``, ``task``, ``actuation``, ``algorithm``, ``env_id``,
        ``env_kwargs``, ``config``, ``make_env(**overrides)`` and SB3's
        ``predict(obs, state=None, episode_start=None, deterministic=True)``.

    Raises
    ------
    ImportError
        If stable-baselines3 is not installed (``pip install "twolink-gym[train]"``).
    ValueError
        If no agent ``name`` is shipped, listing those that are.

    Examples
    --------
    >>> import twolink_gym
    >>> agent = twolink_gym.load_pretrained("balance_ppo")  # doctest: +SKIP
    >>> env = agent.make_env()  # doctest: +SKIP
    >>> obs, info = env.reset(seed=0)  # doctest: +SKIP
    >>> action, _ = agent.predict(obs, deterministic=True)  # doctest: +SKIP
    """
    # checked without importing them: the core package imports no stable-baselines3
    if any(importlib.util.find_spec(name) is None for name in ("stable_baselines3", "sb3_contrib")):
        raise ImportError(
            "twolink_gym.load_pretrained needs stable-baselines3 and sb3-contrib: "
            'pip install "twolink-gym[train]"'
        )
    from twolink_gym.training.policies import load_pretrained as _load

    return _load(name)


__all__ = [
    "TASKS",
    "ArmParams",
    "BalanceTask",
    "DecodedObservation",
    "Equilibrium",
    "ReachTask",
    "SwingupTask",
    "Task",
    "TrackTask",
    "TwoLinkEnv",
    "TwoLinkVectorEnv",
    "__version__",
    "coriolis_forces",
    "coriolis_matrix",
    "decode_observation",
    "encode_state",
    "energy",
    "equilibria",
    "forward_dynamics",
    "forward_kinematics",
    "friction_torque",
    "gravity_jacobian",
    "gravity_torque",
    "inverse_dynamics",
    "inverse_kinematics",
    "jacobian",
    "kinetic_energy",
    "linearize",
    "load_pretrained",
    "make_task",
    "mass_matrix",
    "potential_energy",
    "project_to_workspace",
    "register_envs",
    "state_derivative",
    "step",
    "task_kernel",
    "tip_position",
    "tip_velocity",
    "total_energy",
    "wrap_angle",
]
