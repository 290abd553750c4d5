"""stable-baselines3 fast path: an SB3 ``VecEnv`` over the native :class:`TwoLinkVectorEnv`.

SB3 algorithms step a ``VecEnv`` with SB3's own semantics: a finished copy is
reset within the same step, its last observation goes to
``infos[i]["terminal_observation"]`` and a time-limit ending is flagged by
``infos[i]["TimeLimit.truncated"]``. :class:`TwoLinkSB3VecEnv` provides exactly
that on top of the batched env (in its ``SameStep`` autoreset mode), so SB3
trains on all copies with one batched dynamics call per step instead of a
Python loop over single envs (``DummyVecEnv``).

This module is on the training side (``twolink_gym.training``, the ``train``
extra), with SB3's other glue (:mod:`twolink_gym.training.goal_env`): the core
package ``twolink_gym`` imports no stable-baselines3.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from numpy.typing import NDArray
from stable_baselines3.common.vec_env import VecMonitor
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

from twolink_gym.vector_env import TwoLinkVectorEnv

__all__ = ["TwoLinkSB3VecEnv", "make_sb3_vec_env"]

#: Per-copy info entries copied into SB3's list of info dicts by default.
DEFAULT_INFO_KEYS = ("is_success", "distance")
#: Info entries the ``VecMonitor`` of :func:`make_sb3_vec_env` copies into an episode's statistics.
EPISODE_INFO_KEYS = ("is_success",)
#: Attributes of the vector env with one row per copy: ``get_attr`` gives each copy its row.
PER_COPY_ATTRIBUTES = frozenset({"state", "goal", "arm_params"})
#: Vector-env methods that only compute from their arguments (safe for any ``indices``).
STATELESS_METHODS = frozenset({"decode"})
#: ``get_attr`` of a space answers with a single copy's space, as a single env would.
_SINGLE_SPACES = {
    "observation_space": "single_observation_space",
    "action_space": "single_action_space",
}


class TwoLinkSB3VecEnv(VecEnv):
    """SB3 ``VecEnv`` view of a :class:`TwoLinkVectorEnv`.

    Parameters
    ----------
    venv : TwoLinkVectorEnv
        Must use ``autoreset_mode="SameStep"`` (see :func:`make_sb3_vec_env`).
    info_keys : sequence of str
        Entries of the batched ``info`` copied into each copy's info dict
        (``is_success`` is what SB3's ``EvalCallback`` reads). Fewer keys is
        faster for many copies.

    Notes
    -----
    ``seed()`` and ``set_options()`` apply at the next ``reset()``, as in SB3.
    ``reset_infos[i]`` is the info of copy ``i``'s latest reset, filled by
    :meth:`reset` and, for a copy reset within a step, by :meth:`step_wait`
    (as SB3's ``DummyVecEnv`` does), with every per-copy entry of the env's info.
    All copies are one :class:`TwoLinkVectorEnv`: see :meth:`get_attr`,
    :meth:`set_attr` and :meth:`env_method` for what ``indices`` can select.
    Options are the env's reset options (``"state"``, ``"target"``), given per
    copy; either every copy gets the same keys or none does.
    """

    def __init__(self, venv: TwoLinkVectorEnv, info_keys: Sequence[str] = DEFAULT_INFO_KEYS):
        if not isinstance(venv, TwoLinkVectorEnv):
            raise ValueError(f"venv must be a TwoLinkVectorEnv, got {type(venv).__name__}")
        if venv.metadata["autoreset_mode"] != AutoresetMode.SAME_STEP:
            raise ValueError(
                "venv must be created with autoreset_mode='SameStep' for SB3's reset-in-step "
                f"semantics, got {venv.metadata['autoreset_mode']}"
            )
        self.venv = venv
        self.info_keys = tuple(info_keys)
        self._actions: NDArray[np.float32] | None = None
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)

    # -- core API --------------------------------------------------------
    def reset(self) -> VecEnvObs:
        """Reset all copies (using pending seeds and options)."""
        seeds: list[int | None] = list(self._seeds)
        seed = None if all(s is None for s in seeds) else seeds
        obs, info = self.venv.reset(seed=seed, options=self._batched_options())
        self.reset_infos = [self._copy_info(info, i) for i in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Store the actions for :meth:`step_wait`."""
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        """Step every copy; finished copies are reset in the same step."""
        obs, reward, terminated, truncated, info = self.venv.step(self._actions)
        dones = terminated | truncated
        infos = self._split_info(info, dones)
        if dones.any():
            final_obs = info["final_obs"]
            for i in np.flatnonzero(dones):
                infos[i]["terminal_observation"] = final_obs[i]
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
                # the info of the reset that started the copy's new episode (as DummyVecEnv)
                self.reset_infos[i] = self._copy_info(info, int(i))
        return obs, reward.astype(np.float32), dones, infos

    @staticmethod
    def _copy_info(info: dict[str, Any], i: int) -> dict[str, Any]:
        """Copy ``i``'s entries of a batched info, as a single env's info dict.

        Entries of a finished copy hold its reset info (the vector env writes
        it in place in ``SameStep`` mode); the final info is under ``final_info``.
        """
        out: dict[str, Any] = {}
        for key, value in info.items():
            if key.startswith("_") or key.startswith("final"):
                continue
            if isinstance(value, dict):  # info["params"]: {field: array (num_envs,)}
                out[key] = {k: v[i].item() for k, v in value.items() if not k.startswith("_")}
                continue
            row = value[i]
            out[key] = row.copy() if isinstance(row, np.ndarray) else row.item()
        return out

    def _split_info(self, info: dict[str, Any], dones: NDArray[np.bool_]) -> list[dict[str, Any]]:
        # one tolist() per key (not one .item() per copy and key)
        keys = [key for key in self.info_keys if key in info]
        columns = [info[key].tolist() for key in keys]
        infos = [dict(zip(keys, row, strict=True)) for row in zip(*columns, strict=True)]
        if not keys:
            infos = [{} for _ in range(self.num_envs)]
        if dones.any():
            final = info["final_info"]
            for i in np.flatnonzero(dones):
                infos[i] = {key: final[key][i].item() for key in keys}
        return infos

    def _batched_options(self) -> dict[str, Any] | None:
        keys = {frozenset(o) for o in self._options}
        if keys == {frozenset()}:
            return None
        if len(keys) != 1:
            raise ValueError(
                "set_options: every copy must get the same option keys (or none), "
                f"got {sorted(sorted(k) for k in keys)}"
            )
        return {key: np.stack([o[key] for o in self._options]) for key in next(iter(keys))}

    def close(self) -> None:
        """Close the underlying env."""
        self.venv.close()

    # -- attribute access (the copies are one vector env) ----------------
    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute of each requested copy.

        Per-copy attributes (:data:`PER_COPY_ATTRIBUTES`: ``state``, ``goal``,
        ``arm_params``) give each copy's own row, and ``observation_space`` and
        ``action_space`` give a single copy's space, as a single
        :class:`~twolink_gym.env.TwoLinkEnv` would. Any other attribute is
        the vector env's, which all copies share.

        Raises
        ------
        IndexError
            For an index outside ``[-num_envs, num_envs)``.
        AttributeError
            If the vector env has no such attribute.
        """
        idx = self._get_indices(indices)
        name = _SINGLE_SPACES.get(attr_name, attr_name)
        value = getattr(self.venv, name)
        if attr_name in PER_COPY_ATTRIBUTES:
            return [value[i] for i in idx]
        return [value for _ in idx]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute of the vector env, which all copies share.

        Raises
        ------
        ValueError
            If ``indices`` does not select every copy: the copies have no
            attributes of their own, so one copy's value cannot differ from
            another's.
        IndexError
            For an index outside ``[-num_envs, num_envs)``.
        """
        self._require_all_copies(indices, f"set_attr({attr_name!r})")
        setattr(self.venv, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """Call a method of the vector env; its result, once per requested copy.

        A method that only computes from its arguments (:data:`STATELESS_METHODS`,
        e.g. ``decode``) is called once per requested copy. Any other method
        acts on every copy at once, so it is called once, and only when
        ``indices`` selects every copy.

        Raises
        ------
        ValueError
            If ``indices`` selects some of the copies for a method that is not
            stateless.
        IndexError
            For an index outside ``[-num_envs, num_envs)``.
        """
        method = getattr(self.venv, method_name)
        if method_name in STATELESS_METHODS:
            return [method(*method_args, **method_kwargs) for _ in self._get_indices(indices)]
        idx = self._require_all_copies(indices, f"env_method({method_name!r})")
        result = method(*method_args, **method_kwargs)
        return [result for _ in idx]

    def env_is_wrapped(
        self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        """The native copies are never wrapped in Gymnasium wrappers."""
        return [False for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        """One RGB frame per copy (needs ``render_mode="rgb_array"``)."""
        frames = self.venv.render()
        return list(frames) if frames is not None else [None] * self.num_envs

    def _get_indices(self, indices: VecEnvIndices) -> list[int]:
        """The copies ``indices`` selects (SB3's conventions), checked against ``num_envs``."""
        n = self.num_envs
        if indices is None:
            return list(range(n))
        selected = [indices] if isinstance(indices, (int, np.integer)) else list(indices)
        for i in selected:
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not -n <= i < n:
                raise IndexError(
                    f"indices must be None, an int or ints in [{-n}, {n}) (num_envs = {n}), "
                    f"got {indices!r}"
                )
        return [int(i) % n for i in selected]

    def _require_all_copies(self, indices: VecEnvIndices, what: str) -> list[int]:
        idx = self._get_indices(indices)
        if set(idx) != set(range(self.num_envs)):
            raise ValueError(
                f"{what}: the {self.num_envs} copies of TwoLinkSB3VecEnv are one "
                f"TwoLinkVectorEnv and share its attributes and methods, so they cannot "
                f"be addressed one by one (indices={indices!r}); use indices=None"
            )
        return idx


def make_sb3_vec_env(
    num_envs: int,
    seed: int | None = None,
    info_keys: Sequence[str] = DEFAULT_INFO_KEYS,
    **env_kwargs: Any,
) -> VecMonitor:
    """Build an SB3 ``VecEnv`` of ``num_envs`` arms stepped as one batch, with episode statistics.

    The batched env is wrapped in SB3's ``VecMonitor``: every finished episode's
    return, length and time (``infos[i]["episode"]``, with ``"is_success"`` when
    it is one of ``info_keys``), which ``evaluate_policy`` and the algorithms'
    logs read. Its ``unwrapped`` is the :class:`TwoLinkSB3VecEnv` (whose
    ``reset_infos`` are the copies' reset infos: SB3's wrappers keep their own).

    Parameters
    ----------
    num_envs : int
        Number of copies.
    seed : int, optional
        Copy ``i`` is seeded ``seed + i`` at the first reset (as SB3's
        ``make_vec_env`` does).
    info_keys : sequence of str
        See :class:`TwoLinkSB3VecEnv`.
    **env_kwargs
        Keyword arguments of :class:`TwoLinkVectorEnv` (``task``, ``params``,
        ``dt``, ``max_episode_steps``, ...).
    """
    venv = TwoLinkVectorEnv(num_envs, autoreset_mode=AutoresetMode.SAME_STEP, **env_kwargs)
    env = TwoLinkSB3VecEnv(venv, info_keys=info_keys)
    if seed is not None:
        env.seed(seed)
    return VecMonitor(env, info_keywords=tuple(k for k in EPISODE_INFO_KEYS if k in info_keys))
