"""What every classical controller shares: construction, decoding, ``predict``, saturation.

A controller sees only what a learned agent sees: the observation, decoded with
the env's own :func:`~twolink_gym.codec.decode_observation`. It computes
joint torques from its *model* of the arm (by default the env's parameters; pass
others to study model mismatch, as Modern Robotics' ``SimulateControl`` does),
and returns the env's normalised action ``clip(tau / max_torque, -1, 1)``.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym._arrays import positive_number
from twolink_gym.codec import ACTUATIONS, DecodedObservation, check_actuation, decode_observation
from twolink_gym.kinematics import inverse_kinematics, wrap_angle
from twolink_gym.params import ArmParams
from twolink_gym.simulation import Simulation
from twolink_gym.tasks import Task, make_task
from twolink_gym.tasks.base import UPRIGHT as UPRIGHT_STATE

__all__ = ["UPRIGHT", "Controller", "gain_vector", "nearest_ik", "simulation_of"]

Array = NDArray[np.float64]
ControllerT = TypeVar("ControllerT", bound="Controller")

#: The upright equilibrium ``[q1, q2, dq1, dq2]`` that the balance task holds, as an array.
UPRIGHT = np.array(UPRIGHT_STATE)


def simulation_of(env: Any) -> Simulation:
    """The :class:`~twolink_gym.simulation.Simulation` behind an environment.

    Accepts a :class:`~twolink_gym.env.TwoLinkEnv` (also wrapped, e.g. by
    ``gym.make``), a :class:`~twolink_gym.vector_env.TwoLinkVectorEnv`, an SB3
    ``VecEnv`` over either (through ``get_attr``), or a ``Simulation``.

    Raises
    ------
    ValueError
        If ``env`` is none of these.
    """
    if isinstance(env, Simulation):
        return env
    for candidate in (env, getattr(env, "unwrapped", None), getattr(env, "venv", None)):
        sim = getattr(candidate, "sim", None)
        if isinstance(sim, Simulation):
            return sim
    get_attr = getattr(env, "get_attr", None)
    if callable(get_attr):
        try:
            sims = get_attr("sim")
        except (AttributeError, TypeError):
            sims = []
        if sims and isinstance(sims[0], Simulation):
            return sims[0]
    raise ValueError(
        "env must be a twolink_gym environment (TwoLinkEnv, possibly wrapped; "
        f"TwoLinkVectorEnv; an SB3 VecEnv over one) or a Simulation, got {type(env).__name__}"
    )


def gain_vector(value: ArrayLike, name: str) -> Array:
    """A per-joint (or per-axis) gain: a number or a pair of numbers, each finite and >= 0.

    Returns
    -------
    ndarray, shape (2,)

    Raises
    ------
    ValueError
        Naming ``name`` if the value has another shape or a negative or
        non-finite entry.
    """
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number or a pair of numbers, got {value!r}") from exc
    if arr.shape not in ((), (2,)):
        raise ValueError(f"{name} must be a number or a pair of numbers, got shape {arr.shape}")
    arr = np.broadcast_to(arr, (2,)).copy()
    if not np.all(np.isfinite(arr) & (arr >= 0.0)):
        raise ValueError(f"{name} must be finite and >= 0, got {arr.tolist()}")
    return arr


def nearest_ik(params: ArmParams, target: ArrayLike, q: ArrayLike) -> Array:
    """The inverse-kinematics solution for ``target`` nearest to the pose ``q``.

    Both elbow branches are computed (targets outside the model's workspace are
    projected onto it) and the one with the smaller joint-space distance
    ``|wrap(q_branch - q)|`` is chosen. The result is unwrapped next to ``q``
    (``q + wrap(q_branch - q)``), so ``result - q`` is the short way round.

    Parameters
    ----------
    params : ArmParams
        The (model) arm.
    target : array_like, shape (n, 2)
        Tip targets [m].
    q : array_like, shape (n, 2)
        Current joint angles [rad].

    Returns
    -------
    ndarray, shape (n, 2)
        Joint angles [rad].
    """
    q = np.asarray(q, dtype=np.float64)
    diffs = np.stack(
        [
            wrap_angle(inverse_kinematics(params, target, elbow, clip=True) - q)
            for elbow in ("up", "down")
        ]
    )
    pick = np.argmin(np.sum(diffs**2, axis=-1), axis=0)
    return q + np.take_along_axis(diffs, pick[None, :, None], axis=0)[0]


class Controller(abc.ABC):
    """A classical feedback controller with stable-baselines3's ``predict`` protocol.

    Subclasses implement :meth:`_torque`. Build one from an environment with
    :meth:`from_env` (the task, the control period and the torque limits come
    from the env) or directly from its parts.

    Parameters
    ----------
    task : Task or str
        The task the controller is designed for; it fixes the observation layout.
    params : ArmParams or dict, optional
        The controller's *model* of the arm (default :class:`ArmParams`). It
        may differ from the simulated plant (model-mismatch studies).
    dt : float
        Control period [s] (the env's ``dt``).
    max_torque : float or pair of floats, optional
        Torques at action ±1 [N·m] (the env's ``max_torque``); default: the
        task's default for the actuation (``Task.default_max_torque_for``).
    actuation : {"full", "acrobot", "pendubot"}
        The arm's motors (the env's ``actuation``); one of :attr:`actuations`.
        An underactuated arm's action has one entry.

    Raises
    ------
    ValueError
        If the task is not one the controller applies to (:attr:`task_types`),
        the actuation not one it can drive (:attr:`actuations`), or on a bad
        ``dt`` or ``max_torque``.
    """

    #: The task classes the controller applies to.
    task_types: ClassVar[tuple[type[Task], ...]] = ()
    #: The actuations (keys of :data:`~twolink_gym.codec.ACTUATIONS`) it can drive.
    actuations: ClassVar[tuple[str, ...]] = ("full",)
    #: What its observations hold (:meth:`set_observation`): ``"state"`` or ``"angles"``.
    observation_kind: str = "state"
    #: The angles of the previous call (the speed estimator's memory, ``"angles"`` only).
    _previous_angles: Array | None = None

    def __init__(
        self,
        task: Task | str,
        params: ArmParams | Mapping[str, Any] | None = None,
        dt: float = 0.02,
        max_torque: ArrayLike | None = None,
        actuation: str = "full",
    ) -> None:
        the_task = make_task(task)
        if not isinstance(the_task, self.task_types):
            raise ValueError(
                f"{type(self).__name__} applies to task(s) {list(self.task_names())}, "
                f"got task {the_task.name!r}"
            )
        self.task: Task = the_task
        self.params = ArmParams.coerce(params)
        self.dt = positive_number(dt, "dt")
        self.actuation = self.check_actuation(actuation)
        if max_torque is None:
            max_torque = the_task.default_max_torque_for(self.actuation)
        torque = np.asarray(max_torque, dtype=np.float64)
        if torque.shape not in ((), (2,)) or not np.all(np.isfinite(torque) & (torque > 0)):
            raise ValueError(
                f"max_torque must be a number or a pair of numbers > 0, got {max_torque!r}"
            )
        self.max_torque = np.broadcast_to(torque, (2,)).copy()
        #: The joints with a motor, in action order (0: shoulder, 1: elbow).
        self.actuated: tuple[int, ...] = ACTUATIONS[self.actuation]

    @classmethod
    def check_actuation(cls, actuation: str) -> str:
        """``actuation`` if the controller can drive it.

        Raises
        ------
        ValueError
            Naming the argument, the controller and the actuations it drives.
        """
        if check_actuation(actuation) not in cls.actuations:
            raise ValueError(
                f"{cls.__name__} cannot drive actuation {actuation!r}: it drives "
                f"actuation {list(cls.actuations)}"
            )
        return actuation

    # -- construction ------------------------------------------------------
    @classmethod
    def task_names(cls) -> tuple[str, ...]:
        """Names of the tasks the controller applies to."""
        return tuple(t.name for t in cls.task_types)

    @classmethod
    def applies_to(cls, task: Task | str) -> bool:
        """Whether the controller applies to ``task`` (an object or a registered name)."""
        return isinstance(make_task(task), cls.task_types)

    @classmethod
    def from_env(
        cls: type[ControllerT],
        env: Any,
        *,
        model_params: ArmParams | Mapping[str, Any] | None = None,
        **options: Any,
    ) -> ControllerT:
        """Build the controller for an environment.

        The controller reads the env's observations: with ``observation="angles"``
        it estimates the speeds (:meth:`set_observation`).

        Parameters
        ----------
        env : TwoLinkEnv, TwoLinkVectorEnv, SB3 VecEnv or Simulation
            See :func:`simulation_of`. Task, ``dt`` and ``max_torque`` come from it.
        model_params : ArmParams or dict, optional
            The controller's model of the arm; default: the env's nominal
            parameters (with ``randomize``, not the episode's drawn arm).
        **options
            The controller's own keyword arguments (gains, weights, ...).

        Raises
        ------
        ValueError
            If the env's actuation is not one the controller drives.
        """
        sim = simulation_of(env)
        cls.check_actuation(sim.actuation)
        params = sim.params if model_params is None else model_params
        if sim.actuation != "full":
            options = {**options, "actuation": sim.actuation}
        controller = cls(sim.task, params, sim.dt, sim.max_torque, **options)
        return controller.set_observation(sim.observation_kind)

    def set_observation(self: ControllerT, kind: str) -> ControllerT:
        """Read observations of ``kind`` (the env's ``observation``); returns the controller.

        ``"angles"`` (joint angles without speeds): the controller estimates
        the speeds by a backward difference over the control period,
        ``dq_t = wrap(q_t - q_{t-1}) / dt``, with ``dq = 0`` at an episode's
        first observation (``episode_start``, or the first call). The estimate
        lags the true speed by half a control period and turns angle noise of
        std ``s`` into speed noise of std ``sqrt(2) s / dt``. The previous
        angles are kept in the controller: one controller per stream of
        observations (a batch keeps its rows).

        Raises
        ------
        ValueError
            If ``kind`` is not ``"state"`` or ``"angles"``.
        """
        if kind not in ("state", "angles"):
            raise ValueError(f"observation must be 'state' or 'angles', got {kind!r}")
        self.observation_kind = kind
        self._previous_angles = None
        return self

    # -- the SB3 protocol --------------------------------------------------
    def predict(
        self,
        observation: ArrayLike,
        state: Any = None,
        episode_start: ArrayLike | None = None,
        deterministic: bool = True,
    ) -> tuple[NDArray[np.float32], Any]:
        """The normalised action for an observation (or a batch of them).

        Parameters
        ----------
        observation : array_like, shape (obs_size,) or (n, obs_size)
            Observations of the env the controller was built for.
        state : ndarray or None
            The controller's state returned by the previous call (SB3's
            recurrent-state slot); ``None`` for stateless controllers, or to let
            a stateful controller use the state it keeps itself.
        episode_start : array_like of bool, shape () or (n,), optional
            Which observations begin a new episode (SB3's ``evaluate_policy``
            passes it); stateful controllers restart there.
        deterministic : bool
            Ignored: the controllers are deterministic.

        Returns
        -------
        action : ndarray of float32, shape (action_size,) or (n, action_size)
            ``clip(tau / max_torque, -1, 1)`` of the actuated joints (both,
            or the one motor of an underactuated arm).
        state : ndarray or None
            Pass it back with the next observation.

        Raises
        ------
        ValueError
            If the observation does not fit the controller's task, is not
            finite, or ``episode_start`` has the wrong size.
        """
        obs = np.asarray(observation, dtype=np.float64)
        if obs.ndim not in (1, 2):
            raise ValueError(
                f"observation must have shape (obs_size,) or (n, obs_size), got {obs.shape}"
            )
        single = obs.ndim == 1
        obs = obs.reshape(-1, obs.shape[-1])
        try:
            decoded = decode_observation(obs, self.task, self.observation_kind)
        except ValueError as exc:
            raise ValueError(
                f"{type(self).__name__} was built for task {self.task.name!r}: {exc}"
            ) from exc
        if not np.all(np.isfinite(obs)):
            raise ValueError("observation must be finite")
        n = obs.shape[0]
        if episode_start is None:
            starts = np.zeros(n, dtype=bool)
        else:
            starts = np.asarray(episode_start, dtype=bool).reshape(-1)
            if starts.shape != (n,):
                raise ValueError(
                    f"episode_start must have one entry per observation ({n}), got shape "
                    f"{np.shape(episode_start)}"
                )
        if state is not None and single:
            state = np.asarray(state)[None]
        if self.observation_kind == "angles":
            decoded = self._with_estimated_speeds(decoded, starts)
        tau, new_state = self._torque(decoded, state, starts)
        action = np.clip(tau / self.max_torque, -1.0, 1.0).astype(np.float32)
        if self.actuation != "full":
            action = np.ascontiguousarray(action[:, self.actuated])
        if single:
            return action[0], (None if new_state is None else new_state[0])
        return action, new_state

    def _with_estimated_speeds(
        self, decoded: DecodedObservation, episode_start: NDArray[np.bool_]
    ) -> DecodedObservation:
        """``decoded`` with the speeds estimated from the previous angles (:meth:`set_observation`)."""
        q = decoded.state[:, :2]
        previous = self._previous_angles
        if previous is None or previous.shape != q.shape:
            previous, episode_start = q, np.ones(len(q), dtype=bool)
        dq = wrap_angle(q - previous) / self.dt
        dq[episode_start] = 0.0
        self._previous_angles = q.copy()
        return dataclasses.replace(decoded, state=np.concatenate([q, dq], axis=1))

    @abc.abstractmethod
    def _torque(
        self, decoded: DecodedObservation, state: Any, episode_start: NDArray[np.bool_]
    ) -> tuple[Array, Any]:
        """Joint torques ``(n, 2)`` [N·m] for decoded observations, and the next state.

        An underactuated controller returns 0 at the joint without a motor.

        Parameters
        ----------
        decoded : DecodedObservation
            States ``(n, 4)``, goals ``(n, goal_size)``, extras ``(n, extras_size)``.
        state : ndarray, shape (n, k), or None
            The state passed to :meth:`predict` (batched).
        episode_start : ndarray of bool, shape (n,)
        """

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(task={self.task.name!r}, dt={self.dt}, "
            f"max_torque={self.max_torque.tolist()}, actuation={self.actuation!r})"
        )
