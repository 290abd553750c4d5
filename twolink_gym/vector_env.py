"""``TwoLinkVectorEnv``: many arms stepped at once with the batched dynamics."""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import error, spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numpy.typing import NDArray

from twolink_gym import _jit
from twolink_gym._arrays import positive_integer
from twolink_gym.adapters import BoundStepLoop, check_render_mode, draw, new_renderer
from twolink_gym.codec import check_action
from twolink_gym.env_config import EnvConfig
from twolink_gym.imperfections import RANDOMIZABLE
from twolink_gym.kernel import (
    DISTANCE,
    REWARD,
    SUCCESS,
    TERMINATED,
    TIME,
    TIP_X,
    TIP_Y,
    clip_actions,
)
from twolink_gym.params import ArmParams
from twolink_gym.simulation import (
    DecodedObservation,
    Simulation,
    SimulationProperties,
    StepBuffers,
    decode_observation,
)
from twolink_gym.tasks import Evaluation, Task

__all__ = ["TwoLinkVectorEnv"]


class TwoLinkVectorEnv(BoundStepLoop, SimulationProperties, VectorEnv):
    """``num_envs`` copies of :class:`~twolink_gym.env.TwoLinkEnv` in one batched env.

    A step is one call of the compiled step kernel over all copies
    (:mod:`twolink_gym.kernel`), the machine code the single env runs for one
    arm, spread over ``num_threads`` threads. Each copy may have its own arm
    (``params`` as a sequence). Each copy has its own random generator, seeded ``seed + i`` like
    Gymnasium's ``SyncVectorEnv``, so that with the same seed and actions this
    env and ``num_envs`` single envs produce identical trajectories. The env
    counts its own steps and truncates each copy after ``max_episode_steps``
    (as ``gym.make``'s ``TimeLimit`` does for a single env).

    Parameters
    ----------
    num_envs : int
        Number of copies.
    task : str or Task, optional
        The setting ``task`` (the one setting that may be given by position).
    config : EnvConfig, optional
        The settings of every copy (:class:`~twolink_gym.env_config.EnvConfig`),
        as for :class:`~twolink_gym.env.TwoLinkEnv`.
    params : ArmParams, dict, or sequence of them, optional
        The setting ``params``: one arm for all copies, or one per copy (a
        list of ``num_envs``).
    num_threads : int
        Threads of the step kernel, 1 … ``NUMBA_NUM_THREADS`` (default 1: the
        loop on the calling thread). More threads pay from a few hundred copies
        on (docs/speed.md); below that, and beside a training
        library's own threads or other worker processes, one is faster.
        Results do not depend on it (bit for bit).
    max_episode_steps : int, optional
        Episode length in control steps: a positive integer, ``None`` for the
        task's length at this ``dt`` (the default) or ``-1`` for no limit
        (Gymnasium's convention; :attr:`max_episode_steps` is then ``None``).
        ``gym.make_vec(id, ...)`` passes the id's registered length, or the
        ``max_episode_steps`` it was given (see :mod:`twolink_gym.registration`).
    autoreset_mode : AutoresetMode or str
        ``"NextStep"`` (Gymnasium's default: a finished copy is reset on the next
        call to :meth:`step`, which then ignores its action) or ``"SameStep"``
        (reset within the step that finished; the final observation and info go
        to ``info["final_obs"]`` and ``info["final_info"]``, with the mask
        ``info["_final_obs"]``).
    render_mode : {"rgb_array"}, optional
        Renders one frame per copy.
    **settings
        The other fields of :class:`~twolink_gym.env_config.EnvConfig` as
        keywords, over ``config``. With the robustness models (``randomize``,
        the noises, the actuator's response and delay), each copy draws its own
        arm (around its own ``params``) at each of its resets and its own noise,
        from its own generator, so copy ``i`` equals a single env seeded ``seed + i``.

    Notes
    -----
    ``reset(options=...)`` takes ``"state"`` of shape ``(num_envs, 4)`` (or
    ``(4,)`` for all copies) and, for reach, ``"target"`` of shape
    ``(num_envs, 2)``. ``info`` is a dict of arrays with leading axis
    ``num_envs``, each key ``k`` with its mask ``_k`` (all True). With
    ``randomize``, ``info["params"]`` holds each copy's current arm in
    Gymnasium's vector form of a dict entry (as ``SyncVectorEnv`` gives it):
    ``{field: array (num_envs,), "_" + field: mask}`` for every ``ArmParams``
    field, with the mask ``info["_params"]``.

    Every array a step or reset returns is new (no later step writes into
    it). Some are rows of one fresh block rather than arrays of their own:
    the reward and ``info["distance"]``, ``terminated`` and
    ``info["is_success"]``, the reward terms, the masks. Rows do not overlap:
    an in-place edit of one entry changes no other.
    """

    metadata: dict[str, Any] = {  # noqa: RUF012 - Gymnasium's convention
        "render_modes": ["rgb_array"],
        "render_fps": 50,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(
        self,
        num_envs: int = 1,
        task: str | Task | None = None,
        *,
        config: EnvConfig | None = None,
        params: ArmParams
        | Mapping[str, Any]
        | Sequence[ArmParams | Mapping[str, Any]]
        | None = None,
        max_episode_steps: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
        num_threads: int = 1,
        **settings: Any,
    ) -> None:
        num_envs = positive_integer(num_envs, "num_envs")
        per_copy: list[ArmParams] | None = None
        if isinstance(params, Sequence) and not isinstance(params, (str, bytes)):
            if len(params) != num_envs:
                raise ValueError(
                    f"params must be one ArmParams (or dict) or a sequence of num_envs = "
                    f"{num_envs} of them, got a sequence of {len(params)}"
                )
            per_copy = [ArmParams.coerce(p) for p in params]
            params = per_copy[0]
        num_threads = positive_integer(num_threads, "num_threads")
        if num_threads > _jit.max_threads():
            raise ValueError(
                f"num_threads must lie in [1, {_jit.max_threads()}] (NUMBA_NUM_THREADS), "
                f"got {num_threads}"
            )
        if task is not None:
            settings["task"] = task
        if params is not None:
            settings["params"] = params
        #: The settings shared by every copy (:class:`~twolink_gym.env_config.EnvConfig`;
        #: its ``params`` is copy 0's arm when each copy has its own).
        self.config = EnvConfig.from_settings(config, settings)
        self.sim = Simulation.create(self.config)
        if self.sim.randomization is not None and per_copy is not None:
            self.sim.randomization.check(per_copy)
        limit = _episode_limit(max_episode_steps, self.sim.max_episode_steps)
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError as exc:
            raise ValueError(
                f"autoreset_mode must be one of {[m.value for m in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)]}, "
                f"got {autoreset_mode!r}"
            ) from exc
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
            raise ValueError(
                f"autoreset_mode {mode.value!r} is not supported; use NextStep or SameStep"
            )
        check_render_mode(render_mode, self.metadata["render_modes"])

        self.num_envs = int(num_envs)
        #: Steps after which a copy's episode is truncated (``None``: never).
        self.max_episode_steps: int | None = limit
        self.render_mode = render_mode
        self.metadata = {
            **self.metadata,
            "render_fps": round(1.0 / self.sim.dt),
            "autoreset_mode": mode,
        }
        self.num_threads = num_threads
        low, high = self.sim.observation_bounds(per_copy)
        self.single_observation_space = spaces.Box(low, high, dtype=np.float32)
        self._obs_bounds = (low, high)
        self.single_action_space = spaces.Box(
            -1.0, 1.0, shape=(self.sim.action_size,), dtype=np.float32
        )
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

        n = self.num_envs
        self._nominal: list[ArmParams] = per_copy or [self.sim.params] * n
        # each copy's current arm (None: the one arm of self.sim for all)
        self._params: list[ArmParams] | None = per_copy
        self._arms = self.sim.arms(per_copy, n)
        self._rngs = [seeding.np_random()[0] for _ in range(n)]
        # the current arms as columns of RANDOMIZABLE (for info["params"])
        self._param_table = np.zeros((n, len(RANDOMIZABLE)))
        if self.sim.randomization is not None:
            self._params = list(self._nominal)
            self._draw_arms(np.arange(n))
        self._state, self._goal = self.sim.initial_conditions(self._rngs, None, n, self._params)
        model = self.sim.actuator_model
        self._actuator = None if model is None else model.new_state(n)
        self._elapsed = np.zeros(n, dtype=np.int64)
        self._needs_reset = np.zeros(n, dtype=bool)
        self._last_action = np.zeros((n, 2))
        self._last_reward = np.zeros(n)
        self._buffers = self.sim.buffers(n)
        self._renderers: list[Any] | None = None
        # the info's mask keys, "_" + each key (the same keys every step; built once)
        self._mask_keys: tuple[str, ...] | None = None
        self._all_true = np.ones((0, n), dtype=bool)  # their block's template, copied per step
        self._plain_goal_info = type(self.sim.task).goal_info is Task.goal_info
        self._action_shape = (n, self.sim.action_size)  # read on every step
        self._bind_kernel()

    # -- accessors -------------------------------------------------------
    @property
    def arm_params(self) -> list[ArmParams]:
        """The arm of every copy in its current episode (with ``randomize``: its draw), a list of ``num_envs``."""
        return list(self._params) if self._params else [self.sim.params] * self.num_envs

    @property
    def state(self) -> NDArray[np.float64]:
        """True states of all copies (a copy), shape ``(num_envs, 4)``."""
        return self._state.copy()

    @property
    def goal(self) -> NDArray[np.float64]:
        """Goals of all copies (a copy), shape ``(num_envs, goal_size)``."""
        return self._goal.copy()

    def decode(self, observation: Any) -> DecodedObservation:
        """Recover states and goals from a batch of observations (angles only: NaN speeds)."""
        return decode_observation(observation, self.sim.task, self.sim.observation_kind)

    def _draw_arms(self, idx: NDArray[np.intp]) -> None:
        """New arms for copies ``idx`` from the randomisation, each from its own generator."""
        randomization = self.sim.randomization
        if randomization is None or self._params is None:
            return
        rows = idx.tolist()
        drawn = randomization.draw([self._rngs[i] for i in rows], [self._nominal[i] for i in rows])
        for i, arm in zip(rows, drawn, strict=True):
            self._params[i] = arm
        self._arms[idx] = self.sim.arms(drawn, len(rows))
        self._param_table[idx] = [[getattr(arm, f) for f in RANDOMIZABLE] for arm in drawn]

    def _observe(
        self,
        kernel_obs: NDArray[np.float32],
        rngs: Sequence[np.random.Generator],
        rows: NDArray[np.intp] | None = None,
    ) -> NDArray[np.float32]:
        """What the agent sees of the kernel's observations (a new array; observation model)."""
        model = self.sim.observation_model
        if model is None:
            return kernel_obs.copy()
        return model.apply(kernel_obs, rngs, *self._obs_bounds, rows)

    # -- Gymnasium API ---------------------------------------------------
    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        """Reset every copy.

        Parameters
        ----------
        seed : int, list of (int or None), or None
            An int seeds copy ``i`` with ``seed + i`` (as Gymnasium's
            ``SyncVectorEnv``); a list gives one seed per copy; ``None`` keeps
            the generators. Seeds go through :func:`gymnasium.utils.seeding.np_random`.
        options : dict, optional
            See the class notes.

        Raises
        ------
        gymnasium.error.Error
            For a negative or non-integer seed (as ``gymnasium.utils.seeding``).
        ValueError
            For a list of seeds whose length is not ``num_envs``, or ``options``
            that are not a dict (or ``None``) of the task's option keys.
        """
        n = self.num_envs
        self.sim.check_options(options)  # before the generators are reseeded
        if seed is not None:
            seeds = self._seed_list(seed)
            rngs = [seeding.np_random(s) for s in seeds]
            self._rngs = [rng for rng, _ in rngs]
            self._np_random = self._rngs[0]
            self._np_random_seed = rngs[0][1]
        self._draw_arms(np.arange(n))
        self._state[:], self._goal[:] = self.sim.initial_conditions(
            self._rngs, options, n, self._params
        )
        self._elapsed[:] = 0
        self._needs_reset[:] = False
        self._last_action[:] = 0.0
        self._last_reward[:] = 0.0
        if self._actuator is not None:
            self._actuator.reset()
        self.sim.observe_into(self._arms, self._state, self._goal, self._buffers, self._elapsed)
        obs = self._observe(self._buffers.obs, self._rngs)
        return obs, self._outcome_info(self._buffers)[2]

    def _seed_list(self, seed: Any) -> list[int | None]:
        """One seed per copy from an int or a sequence (numpy integers become ints)."""
        n = self.num_envs
        if isinstance(seed, np.integer):
            seed = int(seed)
        if isinstance(seed, int) and not isinstance(seed, bool):
            return [seed + i for i in range(n)]
        if isinstance(seed, (str, bytes)) or not isinstance(seed, (Sequence, np.ndarray)):
            raise error.Error(
                f"seed must be an int, a list of {n} ints (or None entries) or None, got {seed!r}"
            )
        seeds = [int(s) if isinstance(s, np.integer) else s for s in seed]
        if len(seeds) != n:
            raise ValueError(f"seed must be an int or a list of {n} seeds, got {len(seeds)}")
        return seeds

    def step(
        self, actions: Any
    ) -> tuple[
        NDArray[np.float32],
        NDArray[np.float64],
        NDArray[np.bool_],
        NDArray[np.bool_],
        dict[str, Any],
    ]:
        """Step every copy (see the class docstring for autoreset)."""
        n = self.num_envs
        self._set_command(actions)
        mode = self.metadata["autoreset_mode"]
        # NextStep: the copies that finished last step (None: none did)
        restart = (
            self._needs_reset.copy()
            if mode == AutoresetMode.NEXT_STEP and np.count_nonzero(self._needs_reset)
            else None
        )
        # copies restarted in this step (NextStep) draw no noise: they get a reset's draws
        rows = None if restart is None else np.flatnonzero(~restart)
        if self._actuator is not None:
            model = self.sim.actuator_model
            assert model is not None
            self._last_action[:] = model.apply(self._last_action, self._actuator, self._rngs, rows)
        self._step_kernel()  # advances _elapsed too
        obs = self._observe(self._buffers.obs, self._rngs, rows)
        # new arrays, never views of the buffers the next step overwrites
        reward, terminated, info = self._outcome_info(self._buffers)
        if self.max_episode_steps is None:
            truncated = np.zeros(n, dtype=bool)
        else:
            truncated = self._elapsed >= self.max_episode_steps
        self._last_reward[:] = reward

        if restart is not None:
            # NextStep: copies that finished last step start anew, ignoring the action
            idx = np.flatnonzero(restart)
            self._restart(idx, obs, info)
            reward[idx] = 0.0
            terminated[idx] = False
            truncated[idx] = False
        done = terminated | truncated
        if mode == AutoresetMode.NEXT_STEP:
            self._needs_reset = done
        elif np.count_nonzero(done):  # (cheaper than done.any() at small N)
            idx = np.flatnonzero(done)
            info["final_obs"] = np.where(done[:, None], obs, 0.0).astype(np.float32)
            info["_final_obs"] = done.copy()
            info["final_info"] = {
                k: (done.copy() if k.startswith("_") else _copy(v))
                for k, v in info.items()
                if not k.startswith(("final", "_final"))
            }
            info["_final_info"] = done.copy()
            self._restart(idx, obs, info)
        return obs, reward, terminated, truncated, info

    def _set_command(self, actions: Any) -> None:
        """Check ``actions`` ``(num_envs, action_size)`` into :attr:`_last_action` ``(num_envs, 2)``.

        Clipped to ``[-1, 1]``, a joint without a motor at 0, in place (the
        step loop's bound argument).

        Raises
        ------
        ValueError
            On a wrong shape or a NaN or infinite entry (:func:`~twolink_gym.codec.check_action`).
        """
        shape = self._action_shape
        command = self._last_action
        # the common case, a float32/64 array of the right shape: checked and clipped in
        # one compiled pass, without the general checks' copies
        if (
            type(actions) is np.ndarray
            and actions.shape == shape
            and actions.dtype.char in "fd"
            and shape[1] == 2
            and clip_actions(actions, command)
        ):
            return
        actions = check_action(actions, shape)  # raises, or a float64 copy
        if shape[1] == 2:
            np.minimum(np.maximum(actions, -1.0, out=command), 1.0, out=command)
            return
        joint = self.sim.actuated[0]
        command[:, 1 - joint] = 0.0
        column = command[:, joint]
        np.minimum(np.maximum(actions[:, 0], -1.0, out=column), 1.0, out=column)

    def _step_kernel(self) -> None:
        """Step every copy with the compiled loop (state and buffers in place)."""
        threads = self.num_threads
        if threads == 1:
            self._step_loop()
            return
        previous = _jit.get_num_threads()
        _jit.set_num_threads(threads)
        try:
            self._loops.step_parallel(*self._step_args)
        finally:
            _jit.set_num_threads(previous)

    def _restart(
        self, idx: NDArray[np.intp], obs: NDArray[np.float32], info: dict[str, Any]
    ) -> None:
        """Start new episodes in copies ``idx``, writing their reset obs and info in place."""
        self._draw_arms(idx)
        params = None if self._params is None else [self._params[i] for i in idx]
        rngs = [self._rngs[i] for i in idx]
        states, goals = self.sim.initial_conditions(rngs, None, len(idx), params)
        self._state[idx] = states
        self._elapsed[idx] = 0
        self._last_action[idx] = 0.0
        self._last_reward[idx] = 0.0
        if self._actuator is not None:
            self._actuator.reset(idx)
        buffers = self.sim.buffers(len(idx))
        self._goal[idx] = goals
        self.sim.observe_into(np.ascontiguousarray(self._arms[idx]), states, goals, buffers)
        self._buffers.memory[idx] = buffers.memory  # the new episodes' task memory
        obs[idx] = self._observe(buffers.obs, rngs)
        self._overwrite_info(info, idx, self.sim.evaluation(buffers))

    def _outcome_info(
        self, buffers: StepBuffers
    ) -> tuple[NDArray[np.float64], NDArray[np.bool_], dict[str, Any]]:
        """Reward ``(n,)``, terminated ``(n,)`` and info of the kernel's outcome in ``buffers``.

        Every returned array is new (the buffers are rewritten by the next
        step). Reward, distance, success and time are rows of one fresh ``(7, n)``
        block (the transposed outcome), so a caller's in-place edit of one
        changes no other returned entry; the other entries are copies of their own.
        """
        cols = buffers.out.T.copy()
        flags = cols[TERMINATED : SUCCESS + 1] != 0.0  # rows: terminated, success
        task = self.sim.task
        info: dict[str, Any] = {
            "state": self._state.copy(),
            "tip": buffers.out[:, TIP_X : TIP_Y + 1].copy(),
            "distance": cols[DISTANCE],
            "is_success": flags[1],
            "time": cols[TIME],
        }
        if task.goal_size:
            # the base goal_info reads no extras; an override gets a copy it may keep
            extras = buffers.extras if self._plain_goal_info else buffers.extras.copy()
            info.update(task.goal_info(self._goal, extras))
        terms = buffers.terms.T.copy()  # rows of one fresh block
        for name, j in task.reported_columns:
            info[name] = terms[j]
        if self.sim.randomization is not None:
            # Gymnasium's vector form of a dict entry: each field with its mask
            params: dict[str, Any] = {}
            field_masks = np.ones((len(RANDOMIZABLE), self.num_envs), dtype=bool)
            for j, field in enumerate(RANDOMIZABLE):
                params[field] = self._param_table[:, j].copy()
                params["_" + field] = field_masks[j]
            info["params"] = params
        # one mask per key (rows of one allocation): editing one leaves the others
        mask_keys = self._mask_keys
        if mask_keys is None or len(mask_keys) != len(info):
            mask_keys = self._mask_keys = tuple("_" + key for key in info)
            self._all_true = np.ones((len(info), self.num_envs), dtype=bool)
        info.update(zip(mask_keys, self._all_true.copy(), strict=True))
        return cols[REWARD], flags[0], info

    def _overwrite_info(
        self, info: dict[str, Any], idx: NDArray[np.intp], fresh: Evaluation
    ) -> None:
        info["state"][idx] = self._state[idx]
        info["tip"][idx] = fresh.tip
        info["distance"][idx] = fresh.distance
        info["is_success"][idx] = fresh.success
        info["time"][idx] = 0.0
        if self.sim.task.goal_size:
            goal_info = self.sim.task.goal_info(self._goal[idx], fresh.extras)
            for key, value in goal_info.items():
                info[key][idx] = value
        for key, value in fresh.terms.items():
            info[key][idx] = value
        if "params" in info:
            for j, field in enumerate(RANDOMIZABLE):
                info["params"][field][idx] = self._param_table[idx, j]

    # -- rendering -------------------------------------------------------
    def render(self) -> tuple[NDArray[np.uint8], ...] | None:
        """One ``(H, W, 3)`` uint8 frame per copy (``render_mode="rgb_array"``)."""
        if self.render_mode is None:
            return None
        fps = self.metadata["render_fps"]
        if self._renderers is None:
            self._renderers = [
                new_renderer(self.sim, arm, "rgb_array", fps) for arm in self.arm_params
            ]
        for renderer, arm in zip(self._renderers, self.arm_params, strict=True):
            renderer.params = arm  # a randomised copy's current arm
        frames = (
            draw(
                r,
                self.sim,
                self._state[i],
                self._goal[i],
                self._elapsed[i] * self.sim.dt,
                float(self._last_reward[i]),
                self._last_action[i],
            )
            for i, r in enumerate(self._renderers)
        )
        return tuple(frame for frame in frames if frame is not None)

    def close_extras(self, **kwargs: Any) -> None:
        """Release the renderers."""
        if self._renderers is not None:
            for r in self._renderers:
                r.close()
            self._renderers = None


def _episode_limit(max_episode_steps: object, task_steps: int) -> int | None:
    """The truncation length from the ``max_episode_steps`` argument (``None``: no limit).

    ``None`` gives ``task_steps``, ``-1`` no limit, a positive integer itself.

    Raises
    ------
    ValueError
        For anything else, naming the argument and the allowed values.
    """
    if max_episode_steps is None:
        return task_steps
    if isinstance(max_episode_steps, numbers.Integral) and not isinstance(max_episode_steps, bool):
        steps = int(max_episode_steps)
        if steps == -1:
            return None
        if steps >= 1:
            return steps
    raise ValueError(
        "max_episode_steps must be a positive integer, -1 (no limit) or None "
        f"(the task's length), got {max_episode_steps!r}"
    )


def _copy(value: Any) -> Any:
    """A copy of an info entry: an array, or a dict of arrays (``info["params"]``)."""
    if isinstance(value, dict):
        return {k: v.copy() for k, v in value.items()}
    return value.copy()
