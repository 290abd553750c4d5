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
from twolink_gym.adapters import EnvSettings, check_render_mode, draw, new_renderer
from twolink_gym.core import Core, StepResult, step_info
from twolink_gym.env_config import EnvConfig
from twolink_gym.imperfections import RANDOMIZABLE
from twolink_gym.params import ArmParams
from twolink_gym.simulation import DecodedObservation, Simulation, decode_observation
from twolink_gym.tasks import Task

__all__ = ["TwoLinkVectorEnv"]


class TwoLinkVectorEnv(EnvSettings, VectorEnv):
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
    the reward terms, the masks. Rows do not overlap: an in-place edit of one
    entry changes no other.
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
        n = self.num_envs
        #: The batched core of every copy: its state, episodes and step.
        self._core = Core(
            self.sim, [seeding.np_random()[0] for _ in range(n)], per_copy, num_threads
        )
        low, high = self._core.obs_bounds
        self.single_observation_space = spaces.Box(low, high, dtype=np.float32)
        self.single_action_space = spaces.Box(
            -1.0, 1.0, shape=(self.sim.action_size,), dtype=np.float32
        )
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._core.reset()  # valid right after __init__: episodes of unseeded generators
        self._needs_reset = np.zeros(n, dtype=bool)
        self._last_reward = np.zeros(n)
        self._renderers: list[Any] | None = None
        # the info's mask keys, "_" + each key (the same keys every step; built once)
        self._mask_keys: tuple[str, ...] | None = None
        self._all_true = np.ones((0, n), dtype=bool)  # their block's template, copied per step

    # -- accessors -------------------------------------------------------
    @property
    def arm_params(self) -> list[ArmParams]:
        """The arm of every copy in its current episode (with ``randomize``: its draw), a list of ``num_envs``."""
        return list(self._core.params)

    @property
    def state(self) -> NDArray[np.float64]:
        """True states of all copies (a copy), shape ``(num_envs, 4)``."""
        return self._core.arrays.state.copy()

    @property
    def goal(self) -> NDArray[np.float64]:
        """Goals of all copies (a copy), shape ``(num_envs, goal_size)``."""
        return self._core.arrays.goal.copy()

    def decode(self, observation: Any) -> DecodedObservation:
        """Recover states and goals from a batch of observations (angles only: NaN speeds)."""
        return decode_observation(observation, self.sim.task, self.sim.observation_kind)

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
        core = self._core
        self.sim.check_options(options)  # before the generators are reseeded
        if seed is not None:
            seeds = self._seed_list(seed)
            rngs = [seeding.np_random(s) for s in seeds]
            core.rngs = [rng for rng, _ in rngs]
            self._np_random = core.rngs[0]
            self._np_random_seed = rngs[0][1]
        result = core.reset(None, options)
        self._needs_reset[:] = False
        self._last_reward[:] = 0.0
        return result.obs, self._info(result)

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
        core = self._core
        core.set_command(actions)
        mode = self.metadata["autoreset_mode"]
        # NextStep: the copies that finished last step (None: none did)
        restart = (
            self._needs_reset.copy()
            if mode == AutoresetMode.NEXT_STEP and np.count_nonzero(self._needs_reset)
            else None
        )
        # copies restarted in this step (NextStep) draw no noise: they get a reset's draws
        result = core.step(None, None if restart is None else np.flatnonzero(~restart))
        obs = result.obs
        # new arrays, never views of the arrays the next step overwrites
        reward = result.reward.copy()
        terminated = result.terminated.copy()
        info = self._info(result)
        if self.max_episode_steps is None:
            truncated = np.zeros(self.num_envs, dtype=bool)
        else:
            truncated = core.arrays.steps >= self.max_episode_steps
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

    def _restart(
        self, idx: NDArray[np.intp], obs: NDArray[np.float32], info: dict[str, Any]
    ) -> None:
        """Start new episodes in copies ``idx``, writing their reset obs and info in place."""
        fresh = self._core.reset(idx)
        self._last_reward[idx] = 0.0
        obs[idx] = fresh.obs
        for key, value in step_info(fresh, self.sim.task, None, self._params(idx)).items():
            if isinstance(value, dict):  # info["params"]: a dict of arrays and masks
                for field, column in value.items():
                    info[key][field][idx] = column
            else:
                info[key][idx] = value

    def _params(self, rows: NDArray[np.intp] | None = None) -> dict[str, Any] | None:
        """The ``params`` entry of info, with a randomisation (``None`` without).

        Gymnasium's vector form of a dict entry: each field ``(n,)`` with its mask.
        """
        if self.sim.randomization is None:
            return None
        table = self._core.param_table if rows is None else self._core.param_table[rows]
        params: dict[str, Any] = {}
        field_masks = np.ones((len(RANDOMIZABLE), len(table)), dtype=bool)
        for j, field in enumerate(RANDOMIZABLE):
            params[field] = table[:, j].copy()
            params["_" + field] = field_masks[j]
        return params

    def _info(self, result: StepResult) -> dict[str, Any]:
        """The info of every copy (:func:`~twolink_gym.core.step_info`) with its masks.

        Every array is new; each key ``k`` has the mask ``_k`` (all True; rows of
        one allocation: editing one leaves the others).
        """
        info = step_info(result, self.sim.task, None, self._params())
        mask_keys = self._mask_keys
        if mask_keys is None or len(mask_keys) != len(info):
            mask_keys = self._mask_keys = tuple("_" + key for key in info)
            self._all_true = np.ones((len(info), self.num_envs), dtype=bool)
        info.update(zip(mask_keys, self._all_true.copy(), strict=True))
        return info

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
        a = self._core.arrays
        frames = (
            draw(
                r,
                self.sim,
                a.state[i],
                a.goal[i],
                self._core.time(i),
                float(self._last_reward[i]),
                a.action[i],
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
