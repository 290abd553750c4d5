"""Our classical swing-ups with gains for RealAIGym's arm (6 N·m on one joint).

The controllers are :class:`~twolink_gym.controllers.AcrobotSwingupController`
and :class:`~twolink_gym.controllers.PendubotSwingupController` (energy pumping
by collocated PFL, LQR catch) with their own gains for this arm; the defaults
of those classes are tuned for our default arm and its (30, 10) N·m motors and
stay unchanged. The variants decide every 2 ms and shape their command with a
first-order low-pass filter of gain ``alpha`` (:class:`LowPassPolicy`): the
board's smoothness criterion is the std of the 2 ms torque changes, and the
swing-up law's switches to the catch would otherwise be torque jumps. The gains
were found by a random search over gains, levels and ``alpha`` that maximised
the v2 performance score (docs/realaigym.md).

``realaigym_acrobot_tvlqr`` and ``realaigym_pendubot_tvlqr`` are of another kind: a trajectory-optimised swing-up
tracked by time-varying LQR (:class:`~twolink_gym.realaigym.trajopt.TVLQRController`),
unfiltered (its nominal torque is smooth by construction), with the weights
:data:`TVLQR_GAINS`: RealAIGym's tracking ``Q``, a third of their ``R`` (stiff
tracking and balance, which rejects pushes), and a soft balance (ten times
their ``R``) inside a box around the upright, which tolerates measurement delays.

``realaigym_acrobot_global`` and ``realaigym_pendubot_global`` are for the v3 board
(:mod:`twolink_gym.realaigym.v3`), where pushes leave the arm anywhere: the energy
pumping of the PFL swing-ups, which acts on the current state only, caught by an LQR
with :data:`GLOBAL_CATCH`'s weights that also takes over states outside its level set
when a simulation of it on the model (``catch_horizon``) brings them in, and a braking
mode (:data:`GLOBAL_BRAKE`): while the arm's energy exceeds the upright's by more than
``brake_level`` [J] the motor only damps its own joint (``τ = -brake_gain · q̇`` [N·m],
saturated at 6 N·m), which removes a push's excess energy, until the excess is below
``brake_exit`` [J].
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

import numpy as np
from numpy.typing import NDArray

from twolink_gym.controllers import AcrobotSwingupController, PendubotSwingupController
from twolink_gym.controllers.base import Controller
from twolink_gym.realaigym.protocol import DT, PolicyRunner, decision_steps, make_policy_env
from twolink_gym.realaigym.trajopt import TRACKING_Q, TRACKING_R, TVLQRController

__all__ = [
    "GLOBAL_BRAKE",
    "GLOBAL_CATCH",
    "MPPI_SETTINGS",
    "TVLQR_GAINS",
    "VARIANTS",
    "LowPassPolicy",
    "Variant",
    "variant_runner",
]

#: The TVLQR variants' weights: RealAIGym's tracking ``Q`` (:data:`~twolink_gym.realaigym.trajopt.TRACKING_Q`)
#: with a third of its ``R``, and a balance of ``R`` ten times theirs inside the
#: soft box (:data:`~twolink_gym.realaigym.trajopt.SOFT_BOX`).
TVLQR_GAINS: dict[str, Any] = {"R": TRACKING_R / 3, "soft_R": 10 * TRACKING_R}

#: The catch LQR of the global variants: RealAIGym's tracking ``Q`` with a third of its ``R``
#: (the weights of the TVLQR variants' tracking and stiff balance).
GLOBAL_CATCH: dict[str, Any] = {"Q": TRACKING_Q, "R": (TRACKING_R / 3,)}

#: The braking mode of the global variants, per robot: ``brake_level`` and ``brake_exit``,
#: excess energy over the upright's [J], and ``brake_gain`` [N·m·s/rad]
#: (:class:`~twolink_gym.controllers.PendubotSwingupController`, module notes of
#: :mod:`twolink_gym.controllers.pfl_swingup`); chosen on the v3 board (docs/realaigym.md).
GLOBAL_BRAKE: dict[str, dict[str, float]] = {
    "pendubot": {"brake_level": 8.0, "brake_exit": 4.0, "brake_gain": 1.0},
    "acrobot": {"brake_level": 2.0, "brake_exit": 0.5, "brake_gain": 1.0},
}


@dataclasses.dataclass(frozen=True)
class Variant:
    """A named controller for RealAIGym's arm.

    Attributes
    ----------
    robot : {"acrobot", "pendubot"}
        The board it drives.
    controller : type or str
        A :class:`~twolink_gym.controllers.base.Controller` subclass, or its
        ``"module:Class"`` path for one whose module needs an optional extra
        (imported when the variant is built).
    gains : dict
        Its keyword arguments (``from_env``).
    alpha : float
        The low-pass filter's gain (:class:`LowPassPolicy`; 1: no filter).
    dt : float
        Its decision period [s], a multiple of the protocol's 2 ms step.
    """

    robot: str
    controller: type[Controller] | str
    gains: dict[str, Any]
    alpha: float = 1.0
    dt: float = DT

    def controller_class(self) -> type[Controller]:
        """The controller class (imported from its path if given as one)."""
        if not isinstance(self.controller, str):
            return self.controller
        module, _, name = self.controller.partition(":")
        cls: type[Controller] = getattr(importlib.import_module(module), name)
        return cls


#: The MPPI variants' planners per robot (:class:`twolink_gym.jax.mppi.MPPISettings`): plans of
#: 50 decisions of 10 ms (0.5 s), the terminal cost three times the catch LQR's cost-to-go;
#: the acrobot samples 1,024 of them a decision, the pendubot 4,096 (VIMPPI's count). The
#: acrobot's are the first settings tried; the pendubot's sigma, temperature and samples were
#: chosen on held-out v3 push schedules (docs/realaigym.md).
MPPI_SETTINGS: dict[str, dict[str, Any]] = {
    "acrobot": {
        "samples": 1024,
        "horizon": 50,
        "sigma": 2.0,
        "temperature": 0.1,
        "angle_weight": 10.0,
        "speed_weight": 0.1,
        "torque_weight": 0.01,
        "terminal_weight": 3.0,
    },
    "pendubot": {
        "samples": 4096,
        "horizon": 50,
        "sigma": 3.0,
        "temperature": 0.05,
        "angle_weight": 10.0,
        "speed_weight": 0.1,
        "torque_weight": 0.01,
        "terminal_weight": 3.0,
    },
}

#: Named variants (:class:`Variant`).
VARIANTS: dict[str, Variant] = {
    "realaigym_pendubot_swingup": Variant(
        "pendubot",
        PendubotSwingupController,
        {
            "kp": 38.174,
            "kd": 12.7563,
            "pump": 82.2932,
            "pump_gain": 0.5402,
            "catch_level": 198.615,
            "release_level": 2948.9883,
        },
        0.1416,
    ),
    "realaigym_acrobot_swingup": Variant(
        "acrobot",
        AcrobotSwingupController,
        {
            "kp": 13.4261,
            "kd": 0.6074,
            "pump": 60.4246,
            "pump_gain": 0.151,
            "catch_level": 162.2578,
            "release_level": 2614.166,
            "catch_horizon": 0.0,
        },
        0.3594,
    ),
    # the trajectory-optimised swing-up with TVLQR (twolink_gym.realaigym.trajopt)
    "realaigym_acrobot_tvlqr": Variant("acrobot", TVLQRController, TVLQR_GAINS),
    "realaigym_pendubot_tvlqr": Variant("pendubot", TVLQRController, TVLQR_GAINS),
    # global swing-ups for the v3 board (twolink_gym.realaigym.v3): braking above the
    # upright's energy, energy pumping from wherever a push leaves the arm, caught by the
    # LQR of GLOBAL_CATCH with a look-ahead
    "realaigym_pendubot_global": Variant(
        "pendubot",
        PendubotSwingupController,
        {
            "kp": 38.174,
            "kd": 12.7563,
            "pump": 82.2932,
            "pump_gain": 0.5402,
            "catch_level": 120.0,
            "release_level": 4500.0,
            "catch_horizon": 0.5,
            **GLOBAL_CATCH,
            **GLOBAL_BRAKE["pendubot"],
        },
        1.0,
    ),
    "realaigym_acrobot_global": Variant(
        "acrobot",
        AcrobotSwingupController,
        {
            "kp": 39.0,
            "kd": 3.9,
            "pump": 300.0,
            "pump_gain": 0.073,
            "catch_level": 50.0,
            "release_level": 2949.0,
            "catch_horizon": 0.5,
            **GLOBAL_CATCH,
            **GLOBAL_BRAKE["acrobot"],
        },
        1.0,
    ),
    # MPPI on the JAX twin with the catch LQR of GLOBAL_CATCH, deciding every 10 ms
    # (twolink_gym.jax.mppi; the jax extra)
    "realaigym_pendubot_mppi": Variant(
        "pendubot",
        "twolink_gym.jax.mppi:MPPIController",
        {
            "settings": MPPI_SETTINGS["pendubot"],
            "catch_level": 120.0,
            "release_level": 4500.0,
            **GLOBAL_CATCH,
        },
        dt=0.01,
    ),
    "realaigym_acrobot_mppi": Variant(
        "acrobot",
        "twolink_gym.jax.mppi:MPPIController",
        {
            "settings": MPPI_SETTINGS["acrobot"],
            "catch_level": 120.0,
            "release_level": 4500.0,
            **GLOBAL_CATCH,
        },
        dt=0.01,
    ),
}


class LowPassPolicy:
    """A policy whose normalised action is low-passed: ``a_k = a_{k-1} + alpha (a_cmd - a_{k-1})``.

    Parameters
    ----------
    policy : object
        Has SB3's ``predict``.
    alpha : float
        In ``(0, 1]`` (1: no filter). The filter starts from 0 at an episode start.
    """

    def __init__(self, policy: Any, alpha: float) -> None:
        if not 0.0 < alpha <= 1.0:
            raise ValueError(f"alpha must lie in (0, 1], got {alpha!r}")
        self.policy = policy
        self.alpha = float(alpha)
        self._action: NDArray[np.float64] | None = None

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
    ) -> tuple[NDArray[np.float64], Any]:
        """The filtered action ``(n, action_size)`` and the wrapped policy's state."""
        action, state = self.policy.predict(observation, state, episode_start, deterministic)
        a = np.asarray(action, dtype=np.float64)
        if self._action is None or self._action.shape != a.shape:
            self._action = np.zeros_like(a)
        if episode_start is not None:
            self._action[np.asarray(episode_start, dtype=bool).reshape(-1)] = 0.0
        self._action = self._action + self.alpha * (a - self._action)
        return self._action.copy(), state


def variant_runner(name: str, robot: str, **overrides: Any) -> PolicyRunner:
    """The variant ``name`` (a key of :data:`VARIANTS`) on the board of ``robot``.

    Parameters
    ----------
    name : str
        A key of :data:`VARIANTS`.
    robot : {"acrobot", "pendubot"}
        The board.
    **overrides
        Keyword arguments of the controller replacing the variant's (for tuning).

    Raises
    ------
    ValueError
        For an unknown name or a variant of the other robot.
    """
    if name not in VARIANTS:
        raise ValueError(f"variant must be one of {sorted(VARIANTS)}, got {name!r}")
    variant = VARIANTS[name]
    if variant.robot != robot:
        raise ValueError(f"variant {name!r} drives the {variant.robot}, not the {robot}")
    env = make_policy_env(robot, dt=variant.dt)
    controller = variant.controller_class().from_env(env, **{**variant.gains, **overrides})
    policy = controller if variant.alpha == 1.0 else LowPassPolicy(controller, variant.alpha)
    return PolicyRunner(policy, env.sim, decision_steps(variant.dt))
