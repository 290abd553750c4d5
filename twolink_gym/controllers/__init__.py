"""Classical controllers with stable-baselines3's ``predict`` protocol.

Each controller decodes the env's observation, computes joint torques from its
model of the arm, and returns the normalised action, so one evaluation loop
(e.g. SB3's ``evaluate_policy``) runs learned agents and these baselines on the
same episodes::

    env = gym.make("TwoLinkBalance-v0")
    controller = CONTROLLERS["lqr"].from_env(env)
    action, state = controller.predict(obs, state, episode_start)

:data:`CONTROLLERS` maps names to classes; ``cls.task_names()`` lists the tasks
each applies to, ``cls.actuations`` the arms it can drive, and
:func:`controllers_for` selects them for a task and an arm.
"""

from __future__ import annotations

from twolink_gym.codec import check_actuation
from twolink_gym.controllers.base import Controller, nearest_ik, simulation_of
from twolink_gym.controllers.computed_torque import ComputedTorqueController
from twolink_gym.controllers.impedance import ImpedanceController
from twolink_gym.controllers.lqr import LQRController, LQRDesign, design_lqr, discrete_lqr
from twolink_gym.controllers.pd_gravity import PDGravityController
from twolink_gym.controllers.pfl_swingup import (
    AcrobotSwingupController,
    PendubotSwingupController,
    collocated_pfl_torque,
)
from twolink_gym.controllers.swingup import SWINGUP_CATCH_LEVEL, EnergySwingupController
from twolink_gym.controllers.tracking import FeedForwardController, track_reference
from twolink_gym.controllers.trajectory import quintic
from twolink_gym.tasks import Task

__all__ = [
    "CONTROLLERS",
    "SWINGUP_CATCH_LEVEL",
    "AcrobotSwingupController",
    "ComputedTorqueController",
    "Controller",
    "EnergySwingupController",
    "FeedForwardController",
    "ImpedanceController",
    "LQRController",
    "LQRDesign",
    "PDGravityController",
    "PendubotSwingupController",
    "collocated_pfl_torque",
    "controllers_for",
    "design_lqr",
    "discrete_lqr",
    "nearest_ik",
    "quintic",
    "simulation_of",
    "track_reference",
]

#: Controller classes by name: the only place controller names are mapped to code.
CONTROLLERS: dict[str, type[Controller]] = {
    "lqr": LQRController,
    "computed_torque": ComputedTorqueController,
    "pd_gravity": PDGravityController,
    "impedance": ImpedanceController,
    "energy_swingup": EnergySwingupController,
    "acrobot_swingup": AcrobotSwingupController,
    "pendubot_swingup": PendubotSwingupController,
    "feedforward": FeedForwardController,
}


def controllers_for(task: Task | str, actuation: str = "full") -> dict[str, type[Controller]]:
    """The controllers of :data:`CONTROLLERS` that apply to ``task`` on an arm of ``actuation``.

    Parameters
    ----------
    task : Task or str
        A task object or name.
    actuation : {"full", "acrobot", "pendubot"}
        The arm's motors; a controller is listed only if it drives them
        (``cls.actuations``), e.g. swing-up: ``energy_swingup`` for the full
        arm, ``acrobot_swingup`` for the acrobot, ``pendubot_swingup`` for the pendubot.

    Raises
    ------
    ValueError
        If ``actuation`` is not one of the three (naming the allowed values).
    """
    check_actuation(actuation)
    return {
        name: cls
        for name, cls in CONTROLLERS.items()
        if actuation in cls.actuations and cls.applies_to(task)
    }
