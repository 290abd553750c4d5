"""Observation normalisation inside an SB3 policy: features extractors with frozen statistics.

An agent trained with SB3's ``VecNormalize`` acts on observations normalised
by the statistics it learned during training. Kept in a separate
``vecnormalize.pkl``, those statistics are easy to lose: SB3's own
``Policy.load`` then returns a policy that acts on raw observations and fails
without a word. The extractors here carry the statistics in the policy itself,
as buffers saved by ``policy.save`` and restored by ``Policy.load``, and
compute exactly what ``VecNormalize.normalize_obs`` computes::

    clip((obs - mean) / sqrt(var + epsilon), -clip_obs, clip_obs)

in float64, then rounded to float32 (bit for bit the same numbers). A policy
built with them takes the env's **raw** observations. ``twolink export`` builds
its policies this way (:mod:`twolink_gym.training.export`).

* :class:`NormalizedFlatten`: a flat (``Box``) observation, normalised and flattened.
* :class:`GoalNormalizedFlatten`: a flat observation of a goal task (reach),
  split into the parts SB3's ``HerReplayBuffer`` trains on (``achieved_goal``,
  ``desired_goal``, ``observation``, as
  :class:`~twolink_gym.training.goal_env.GoalSplit` computes them), each
  normalised with its own statistics, concatenated in the order of SB3's
  ``CombinedExtractor``: the policy of a goal-conditioned agent takes the env's
  flat observation directly.
* :class:`ObservationStatistics`: the same arithmetic in numpy, outside any
  network, for policies that are no PyTorch module (SBX's JAX policies); saved
  as plain arrays (``.npz``).

``Policy.load`` unpickles the extractor class by its module path
(``twolink_gym.training.normalization``): it needs twolink-gym installed and
imports this module by itself.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import torch as th
from gymnasium import spaces
from numpy.typing import NDArray
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

__all__ = ["GoalNormalizedFlatten", "NormalizedFlatten", "ObservationStatistics", "is_normalizing"]


def _float64(values: Sequence[float] | NDArray[np.float64], size: int, name: str) -> th.Tensor:
    array = np.asarray(values, dtype=np.float64).reshape(-1)
    if array.shape != (size,):
        raise ValueError(f"{name} must have {size} entries (one per feature), got {array.shape[0]}")
    return th.as_tensor(array, dtype=th.float64)


class _Normalizer(BaseFeaturesExtractor):
    """Shared part: the statistics as float64 buffers and the normalisation itself."""

    mean: th.Tensor
    var: th.Tensor

    def __init__(
        self,
        observation_space: spaces.Space,
        features_dim: int,
        mean: Sequence[float] | None,
        var: Sequence[float] | None,
        clip_obs: float,
        epsilon: float,
    ) -> None:
        super().__init__(observation_space, features_dim)
        if (mean is None) != (var is None):
            raise ValueError("mean and var must be given together (or both None: no normalisation)")
        self.normalize = mean is not None
        if not float(clip_obs) > 0:
            raise ValueError(f"clip_obs must be > 0, got {clip_obs!r}")
        if not float(epsilon) >= 0:
            raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
        self.clip_obs = float(clip_obs)
        self.epsilon = float(epsilon)
        ones = np.ones(features_dim)
        self.register_buffer(
            "mean", _float64(mean if mean is not None else 0 * ones, features_dim, "mean")
        )
        self.register_buffer("var", _float64(var if var is not None else ones, features_dim, "var"))

    def _normalized(self, features: th.Tensor) -> th.Tensor:
        """Features ``(n, features_dim)`` → normalised, float32 (VecNormalize's arithmetic)."""
        if not self.normalize:
            return features.to(th.float32)
        x = features.to(th.float64)
        x = th.clamp(
            (x - self.mean) / th.sqrt(self.var + self.epsilon), -self.clip_obs, self.clip_obs
        )
        return x.to(th.float32)


class NormalizedFlatten(_Normalizer):
    """A flat observation normalised by frozen ``VecNormalize`` statistics, then flattened.

    Parameters
    ----------
    observation_space : gymnasium.spaces.Box
        The env's (raw) observation space, shape ``(d,)``.
    mean, var : sequence of float, length d
        The running mean and variance of the observations (``VecNormalize.obs_rms``).
    clip_obs : float
        Normalised observations are clipped to ``[-clip_obs, clip_obs]``.
    epsilon : float
        Added to the variance before the square root.

    Notes
    -----
    ``forward`` maps observations ``(n, d)`` (float32, as SB3's ``preprocess_obs``
    gives them) to ``(n, d)`` float32 features.
    """

    def __init__(
        self,
        observation_space: spaces.Box,
        mean: Sequence[float],
        var: Sequence[float],
        clip_obs: float = 10.0,
        epsilon: float = 1e-8,
    ) -> None:
        if not isinstance(observation_space, spaces.Box):
            raise TypeError(
                f"NormalizedFlatten needs a Box observation space, got {observation_space}"
            )
        size = int(np.prod(observation_space.shape))
        super().__init__(observation_space, size, mean, var, clip_obs, epsilon)

    def forward(self, observations: th.Tensor) -> th.Tensor:
        """Normalised, flattened observations ``(n, d)`` float32."""
        return self._normalized(th.flatten(observations, start_dim=1))


class GoalNormalizedFlatten(_Normalizer):
    """A flat goal-task observation → HER's parts, normalised and concatenated.

    The parts are those of :class:`~twolink_gym.training.goal_env.GoalSplit`:
    ``observation`` (the state entries), ``desired_goal`` (the target) and
    ``achieved_goal`` (the tip, ``target - to_target`` in float32, clipped to
    ``[goal_low, goal_high]``).

    Parameters
    ----------
    observation_space : gymnasium.spaces.Box
        The env's flat observation space, shape ``(d,)``.
    state_index, target_index, to_target_index : sequence of int
        Where the state entries, the target and the tip-to-target vector are in
        the flat observation.
    goal_low, goal_high : sequence of float, length 2
        Bounds of the goal parts (the ``achieved_goal`` is clipped to them).
    order : sequence of str
        The parts in the order they are concatenated (SB3's ``CombinedExtractor``
        order: the keys of the goal ``Dict`` space).
    mean, var : sequence of float, or None
        The statistics of the concatenated parts (each part's
        ``VecNormalize.obs_rms[key]`` one after another, in ``order``); ``None``
        for an agent trained without normalisation.
    clip_obs, epsilon : float
        As for :class:`NormalizedFlatten`.

    Notes
    -----
    ``forward`` maps observations ``(n, d)`` to ``(n, 10)`` float32 features.
    """

    #: The size of each part.
    PART_SIZES: ClassVar[dict[str, int]] = {"observation": 6, "achieved_goal": 2, "desired_goal": 2}

    _state_index: th.Tensor
    _target_index: th.Tensor
    _to_target_index: th.Tensor
    _low: th.Tensor
    _high: th.Tensor

    def __init__(
        self,
        observation_space: spaces.Box,
        state_index: Sequence[int],
        target_index: Sequence[int],
        to_target_index: Sequence[int],
        goal_low: Sequence[float],
        goal_high: Sequence[float],
        order: Sequence[str] = ("achieved_goal", "desired_goal", "observation"),
        mean: Sequence[float] | None = None,
        var: Sequence[float] | None = None,
        clip_obs: float = 10.0,
        epsilon: float = 1e-8,
    ) -> None:
        if not isinstance(observation_space, spaces.Box) or len(observation_space.shape) != 1:
            raise TypeError(
                f"GoalNormalizedFlatten needs a flat Box observation space, got {observation_space}"
            )
        if sorted(order) != sorted(self.PART_SIZES):
            raise ValueError(f"order must list the parts {sorted(self.PART_SIZES)}, got {order}")
        self.order = [str(key) for key in order]
        size = sum(self.PART_SIZES[key] for key in self.order)
        super().__init__(observation_space, size, mean, var, clip_obs, epsilon)
        self.state_index = [int(i) for i in state_index]
        self.target_index = [int(i) for i in target_index]
        self.to_target_index = [int(i) for i in to_target_index]
        self.goal_low = [float(v) for v in goal_low]
        self.goal_high = [float(v) for v in goal_high]
        for name in ("state_index", "target_index", "to_target_index"):
            self.register_buffer(
                f"_{name}", th.as_tensor(getattr(self, name), dtype=th.long), persistent=False
            )
        self.register_buffer(
            "_low", th.as_tensor(np.asarray(goal_low, dtype=np.float32)), persistent=False
        )
        self.register_buffer(
            "_high", th.as_tensor(np.asarray(goal_high, dtype=np.float32)), persistent=False
        )

    def parts(self, observations: th.Tensor) -> dict[str, th.Tensor]:
        """The raw (unnormalised) parts of flat observations ``(n, d)``, float32."""
        obs = observations.to(th.float32)
        target = obs[:, self._target_index]
        tip = target - obs[:, self._to_target_index]
        return {
            "observation": obs[:, self._state_index],
            "achieved_goal": th.clamp(tip, self._low, self._high),
            "desired_goal": target,
        }

    def forward(self, observations: th.Tensor) -> th.Tensor:
        """Normalised parts, concatenated in ``order``: ``(n, 10)`` float32."""
        parts = self.parts(th.flatten(observations, start_dim=1))
        return self._normalized(th.cat([parts[key] for key in self.order], dim=1))


def is_normalizing(policy: Any) -> bool:
    """Whether an SB3 policy normalises (or splits) its observations itself.

    True if its features extractor is one of this module's classes: such a
    policy takes the env's raw observations.
    """
    extractor = getattr(policy, "features_extractor_class", None)
    return isinstance(extractor, type) and issubclass(extractor, _Normalizer)


class ObservationStatistics:
    """Frozen ``VecNormalize`` observation statistics, applied in numpy.

    ``normalize_obs`` computes what ``VecNormalize.normalize_obs`` computes for
    a flat observation: ``clip((obs - mean) / sqrt(var + epsilon), -clip_obs,
    clip_obs)`` in float64, rounded to float32.

    Parameters
    ----------
    mean, var : array_like, shape (d,)
        The running mean and variance of the observations (``VecNormalize.obs_rms``).
    clip_obs : float
        Normalised observations are clipped to ``[-clip_obs, clip_obs]``.
    epsilon : float
        Added to the variance before the square root.

    Raises
    ------
    ValueError
        If ``mean`` and ``var`` differ in shape or are not flat, if ``var`` has
        a negative entry, or if ``clip_obs <= 0`` or ``epsilon < 0``.
    """

    #: The arrays of the ``.npz`` file, in the order of the constructor.
    KEYS = ("mean", "var", "clip_obs", "epsilon")

    def __init__(
        self,
        mean: Sequence[float] | NDArray[np.float64],
        var: Sequence[float] | NDArray[np.float64],
        clip_obs: float = 10.0,
        epsilon: float = 1e-8,
    ) -> None:
        self.mean = np.array(mean, dtype=np.float64)
        self.var = np.array(var, dtype=np.float64)
        if self.mean.ndim != 1 or self.mean.shape != self.var.shape:
            raise ValueError(
                f"mean and var must be flat and of one shape, got {self.mean.shape} and "
                f"{self.var.shape}"
            )
        if np.any(self.var < 0):
            raise ValueError("var must be >= 0 in every entry")
        if not float(clip_obs) > 0:
            raise ValueError(f"clip_obs must be > 0, got {clip_obs!r}")
        if not float(epsilon) >= 0:
            raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
        self.clip_obs = float(clip_obs)
        self.epsilon = float(epsilon)

    def normalize_obs(self, obs: NDArray[np.floating[Any]]) -> NDArray[np.float32]:
        """Observations ``(d,)`` or ``(n, d)`` → normalised, float32, same shape."""
        x = np.asarray(obs)
        if x.shape[-1:] != self.mean.shape:
            raise ValueError(
                f"observations of shape {x.shape} for statistics of {self.mean.shape[0]} features"
            )
        scaled = (x - self.mean) / np.sqrt(self.var + self.epsilon)
        return np.clip(scaled, -self.clip_obs, self.clip_obs).astype(np.float32)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the statistics to ``path`` (``.npz``: float64 arrays :attr:`KEYS`)."""
        with open(path, "wb") as file:
            np.savez(
                file,
                mean=self.mean,
                var=self.var,
                clip_obs=np.float64(self.clip_obs),
                epsilon=np.float64(self.epsilon),
            )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ObservationStatistics:
        """The statistics written by :meth:`save`.

        Raises
        ------
        ValueError
            If the file lacks one of :attr:`KEYS`, naming it and the file.
        """
        with np.load(path, allow_pickle=False) as data:
            missing = [key for key in cls.KEYS if key not in data.files]
            if missing:
                raise ValueError(f"{path}: arrays {missing} missing (expected {list(cls.KEYS)})")
            return cls(data["mean"], data["var"], float(data["clip_obs"]), float(data["epsilon"]))
