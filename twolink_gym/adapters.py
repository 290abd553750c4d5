"""What the single and the vector env share around a :class:`~twolink_gym.core.Core`.

:class:`~twolink_gym.env.TwoLinkEnv` and
:class:`~twolink_gym.vector_env.TwoLinkVectorEnv` are thin Gymnasium adapters
of one batched core (:mod:`twolink_gym.core`, which also builds their
``info``); the configuration properties they expose and their renderers are
built here, once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from twolink_gym.imperfections import ActuatorModel, ObservationModel, PushModel, Randomization
from twolink_gym.params import ArmParams
from twolink_gym.simulation import Simulation
from twolink_gym.tasks import Task

if TYPE_CHECKING:
    from twolink_gym.rendering import ArmRenderer

__all__ = ["EnvSettings", "check_render_mode", "draw", "new_renderer"]


class EnvSettings:
    """Read-only properties of an env's configuration (its :class:`Simulation`, ``self.sim``).

    Mixed into both envs.
    """

    sim: Simulation

    @property
    def params(self) -> ArmParams:
        """The arm's physical parameters."""
        return self.sim.params

    @property
    def task(self) -> Task:
        """The task object."""
        return self.sim.task

    @property
    def dt(self) -> float:
        """Control period [s]."""
        return self.sim.dt

    @property
    def substeps(self) -> int:
        """RK4 sub-steps per control period."""
        return self.sim.substeps

    @property
    def max_torque(self) -> NDArray[np.float64]:
        """Joint torques at action ±1 [N·m] (a copy), shape ``(2,)``."""
        return self.sim.max_torque.copy()

    @property
    def max_speed(self) -> float:
        """Joint speed limit [rad/s]."""
        return self.sim.max_speed

    @property
    def actuation(self) -> str:
        """``"full"``, ``"acrobot"`` (elbow motor only) or ``"pendubot"`` (shoulder only)."""
        return self.sim.actuation

    @property
    def observation_kind(self) -> str:
        """``"state"`` or ``"angles"`` (the ``observation`` keyword).

        Not named ``observation``: Gymnasium's observation wrappers have a method of that name.
        """
        return self.sim.observation_kind

    @property
    def randomization(self) -> Randomization | None:
        """The per-episode randomisation of the arm (``None``: every episode has :attr:`params`)."""
        return self.sim.randomization

    @property
    def observation_model(self) -> ObservationModel | None:
        """The observation model (``None``: the full state, without noise)."""
        return self.sim.observation_model

    @property
    def actuator_model(self) -> ActuatorModel | None:
        """The actuator model (``None``: ideal motors)."""
        return self.sim.actuator_model

    @property
    def push_model(self) -> PushModel | None:
        """The pushes of the arm (``None``: none)."""
        return self.sim.push_model


def check_render_mode(render_mode: str | None, modes: Sequence[str]) -> str | None:
    """``render_mode`` if it is ``None`` or one of ``modes``.

    Raises
    ------
    ValueError
        Naming the argument and the allowed values.
    """
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode must be one of {list(modes)} or None, got {render_mode!r}")
    return render_mode


def new_renderer(sim: Simulation, arm: ArmParams, render_mode: str, fps: int) -> ArmRenderer:
    """A renderer of ``sim``'s task and motors for the arm ``arm`` (imports pygame).

    Raises
    ------
    ImportError
        If pygame is not installed (from :mod:`twolink_gym.rendering`).
    """
    from twolink_gym.rendering import ArmRenderer

    return ArmRenderer(
        arm,
        sim.task,
        render_mode=render_mode,
        fps=fps,
        max_torque=sim.max_torque,
        actuated=sim.actuated,
    )


def draw(
    renderer: ArmRenderer,
    sim: Simulation,
    state: NDArray[np.float64],
    goal: NDArray[np.float64],
    time: float,
    reward: float,
    action: NDArray[np.float64],
) -> NDArray[np.uint8] | None:
    """Draw one arm: ``state`` ``(4,)``, ``goal`` ``(goal_size,)``, applied ``action`` ``(2,)``.

    ``time`` [s] and ``reward`` are shown; the action is drawn as joint
    torques [N·m]. Returns the ``(H, W, 3)`` uint8 frame (``rgb_array``) or ``None``.
    """
    return renderer.draw(state, goal, time=time, reward=reward, torque=sim.torque(action))
