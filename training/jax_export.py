"""A JAX-trained agent as a numpy forward pass: the file format and its ``predict``.

An agent trained by :mod:`twolink_gym.training.jax_train` (``algo.name:
jax_ppo``, rejax) is saved as ``policy.npz``: the weights of its actor network
and what surrounds it, all numpy arrays, so that running it needs numpy only
(no JAX, flax or rejax)::

    kernel_<i>, bias_<i>   the dense layers in order, (in, out) and (out,) float32;
                           the last one is the action head
    activation             the hidden layers' activation, a name of ACTIVATIONS
    output                 how the head's output becomes the action, a name of OUTPUTS
    action_low, action_high  the action space's bounds, (action_dim,) float32
    obs_mean, obs_var      observation statistics (absent: no normalisation)
    obs_epsilon            added to ``obs_var`` under the square root

The action for an observation ``o`` (shape ``(obs_dim,)`` or ``(n, obs_dim)``) is::

    x = (o - obs_mean) / sqrt(obs_var + obs_epsilon)       # if normalised
    x = act(x @ kernel_i + bias_i)                         # each hidden layer
    a = x @ kernel_last + bias_last                        # the Gaussian's mean
    a = clip(a, action_low, action_high)                   # output "clip" (rejax PPO)
    a = loc + tanh(a) * scale                              # output "tanh" (rejax SAC)

with ``loc = (action_high + action_low) / 2`` and ``scale = (action_high -
action_low) / 2``. "clip" is what rejax's PPO does with the mean of its
``GaussianPolicy`` (its ``act`` samples, then clips to the action space; the
deterministic action is the clipped mean); "tanh" is the action of rejax's
``SquashedGaussianPolicy`` (SAC) at zero noise. The observations are the env's raw ones: the statistics are
the training run's running mean and variance of the observations
(``NormalizeObservationsMixin``), frozen at the moment of saving.

This module imports numpy alone: :func:`export_policy` builds the policy from
a rejax actor's parameters (given as numpy arrays), :func:`policy_of_layers` from
any network's dense layers, and
:mod:`~twolink_gym.training.jax_train` writes it from each seed's train state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "ACTIVATIONS",
    "JAX_POLICY_FILE",
    "OUTPUTS",
    "NumpyPolicy",
    "export_policy",
    "policy_of_layers",
]

#: The policy file of an agent trained with a ``jax_*`` algorithm.
JAX_POLICY_FILE = "policy.npz"

FloatArray = NDArray[np.float32]


def _swish(x: FloatArray) -> FloatArray:
    return np.asarray(x / (np.float32(1.0) + np.exp(-x)), dtype=np.float32)


#: Hidden-layer activations by name (flax.linen's names), as numpy functions.
ACTIVATIONS: dict[str, Callable[[FloatArray], FloatArray]] = {
    "swish": _swish,
    "silu": _swish,
    "relu": lambda x: np.maximum(x, np.float32(0.0)),
    "tanh": np.tanh,
}

#: How the action head's output becomes an action in ``[low, high]``.
OUTPUTS = ("clip", "tanh")


class NumpyPolicy:
    """The deterministic policy of a ``policy.npz``, with SB3's ``predict``.

    Parameters
    ----------
    arrays : mapping of str to ndarray
        The file's entries (see the module docstring).
    source : str
        Where they came from, for messages.

    Raises
    ------
    ValueError
        If an entry is missing, names an unknown activation or output, or the
        layer shapes do not chain.
    """

    def __init__(self, arrays: Mapping[str, Any], source: str = "<arrays>") -> None:
        def entry(name: str) -> Any:
            if name not in arrays:
                raise ValueError(f"{source}: missing entry {name!r}")
            return arrays[name]

        n_layers = sum(1 for k in arrays if k.startswith("kernel_"))
        if n_layers < 1:
            raise ValueError(f"{source}: no layers (kernel_0, bias_0, ...)")
        self.kernels = [np.asarray(entry(f"kernel_{i}"), np.float32) for i in range(n_layers)]
        self.biases = [np.asarray(entry(f"bias_{i}"), np.float32) for i in range(n_layers)]
        for i in range(1, n_layers):
            if self.kernels[i].shape[0] != self.kernels[i - 1].shape[1]:
                raise ValueError(
                    f"{source}: kernel_{i} takes {self.kernels[i].shape[0]} inputs, "
                    f"kernel_{i - 1} gives {self.kernels[i - 1].shape[1]}"
                )
        self.activation = str(entry("activation"))
        if self.activation not in ACTIVATIONS:
            raise ValueError(
                f"{source}: activation {self.activation!r} is not one of {sorted(ACTIVATIONS)}"
            )
        self.output = str(entry("output"))
        if self.output not in OUTPUTS:
            raise ValueError(f"{source}: output {self.output!r} is not one of {list(OUTPUTS)}")
        self.action_low = np.asarray(entry("action_low"), np.float32)
        self.action_high = np.asarray(entry("action_high"), np.float32)
        self.obs_mean: FloatArray | None = None
        self.obs_var: FloatArray | None = None
        self.obs_epsilon = np.float32(0.0)
        self.obs_scale: FloatArray | None = None
        if "obs_mean" in arrays:
            self.obs_mean = np.asarray(arrays["obs_mean"], np.float32)
            self.obs_var = np.asarray(entry("obs_var"), np.float32)
            self.obs_epsilon = np.float32(entry("obs_epsilon"))
            self.obs_scale = np.asarray(np.sqrt(self.obs_var + self.obs_epsilon), np.float32)

    @property
    def obs_dim(self) -> int:
        """Length of an observation."""
        return int(self.kernels[0].shape[0])

    @property
    def action_dim(self) -> int:
        """Length of an action."""
        return int(self.kernels[-1].shape[1])

    @classmethod
    def load(cls, path: str | Path) -> NumpyPolicy:
        """Read a ``policy.npz``."""
        with np.load(path, allow_pickle=False) as data:
            return cls({k: data[k] for k in data.files}, str(path))

    def to_arrays(self) -> dict[str, NDArray[Any]]:
        """The file's entries (inverse of the constructor)."""
        out: dict[str, NDArray[Any]] = {}
        for i, (k, b) in enumerate(zip(self.kernels, self.biases, strict=True)):
            out[f"kernel_{i}"], out[f"bias_{i}"] = k, b
        out["activation"] = np.array(self.activation)
        out["output"] = np.array(self.output)
        out["action_low"], out["action_high"] = self.action_low, self.action_high
        if self.obs_mean is not None and self.obs_var is not None:
            out["obs_mean"] = self.obs_mean
            out["obs_var"] = self.obs_var
            out["obs_epsilon"] = np.array(self.obs_epsilon, np.float32)
        return out

    def save(self, path: str | Path) -> None:
        """Write the policy as ``path`` (a ``.npz``)."""
        with open(path, "wb") as f:
            arrays: dict[str, Any] = self.to_arrays()
            np.savez(f, **arrays)

    def action(self, observation: NDArray[Any]) -> FloatArray:
        """The deterministic action for ``observation`` ``(obs_dim,)`` or ``(n, obs_dim)``.

        Returns
        -------
        ndarray
            ``(action_dim,)`` or ``(n, action_dim)`` float32, within the bounds.
        """
        x = np.asarray(observation, dtype=np.float32)
        if x.shape[-1] != self.obs_dim:
            raise ValueError(
                f"observation of shape {x.shape}: this policy takes {self.obs_dim} entries"
            )
        if self.obs_mean is not None and self.obs_scale is not None:
            x = (x - self.obs_mean) / self.obs_scale
        act = ACTIVATIONS[self.activation]
        for k, b in zip(self.kernels[:-1], self.biases[:-1], strict=True):
            x = act(x @ k + b)
        x = x @ self.kernels[-1] + self.biases[-1]
        if self.output == "tanh":
            loc = (self.action_high + self.action_low) / np.float32(2.0)
            scale = (self.action_high - self.action_low) / np.float32(2.0)
            return np.asarray(loc + np.tanh(x) * scale, dtype=np.float32)
        return np.clip(x, self.action_low, self.action_high).astype(np.float32)

    def predict(
        self,
        observation: NDArray[Any],
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
    ) -> tuple[FloatArray, Any]:
        """SB3's ``predict``: the deterministic action (``deterministic`` is ignored) and ``state``."""
        return self.action(observation), state


def _dense_layers(params: Mapping[str, Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (kernel, bias) pairs of a rejax policy's mean, input to output.

    The hidden layers ``features/Dense_<i>`` and the head ``action_mean`` of a
    ``GaussianPolicy`` (PPO) or ``SquashedGaussianPolicy`` (SAC).
    """
    p = params["params"]
    features = p["features"]
    names = sorted(features, key=lambda k: int(k.split("_")[-1]))
    layers = [(np.asarray(features[n]["kernel"]), np.asarray(features[n]["bias"])) for n in names]
    layers.append((np.asarray(p["action_mean"]["kernel"]), np.asarray(p["action_mean"]["bias"])))
    return layers


def export_policy(
    actor_params: Mapping[str, Any],
    activation: str,
    action_low: Any,
    action_high: Any,
    obs_rms: tuple[Any, Any] | None,
    output: str = "clip",
) -> NumpyPolicy:
    """The numpy policy of one seed's trained rejax actor (PPO or SAC).

    Parameters
    ----------
    actor_params : mapping
        ``train_state.actor_ts.params`` of one seed (JAX or numpy arrays).
    activation : str
        ``agent_kwargs.activation``.
    action_low, action_high, output
        As :func:`policy_of_layers`.
    obs_rms : (mean, var) or None
        ``train_state.obs_rms_state``'s mean and variance ``(obs_dim,)`` if the
        observations were normalised.
    """
    return policy_of_layers(
        _dense_layers(actor_params), activation, action_low, action_high, obs_rms, output
    )


def policy_of_layers(
    layers: Sequence[tuple[Any, Any]],
    activation: str,
    action_low: Any,
    action_high: Any,
    obs_rms: tuple[Any, Any] | None,
    output: str = "clip",
    source: str = "rejax train state",
) -> NumpyPolicy:
    """The numpy policy of a network given as its dense layers (module notes).

    Parameters
    ----------
    layers : sequence of (kernel, bias)
        Input to output, ``(in, out)`` and ``(out,)`` (JAX or numpy arrays); the last is
        the action head.
    activation : str
        The hidden layers' activation (a key of :data:`ACTIVATIONS`).
    action_low, action_high : array
        The action space's bounds ``(action_dim,)``.
    obs_rms : (mean, var) or None
        The observations' mean and variance ``(obs_dim,)`` if the network sees them
        normalised.
    output : str
        A name of :data:`OUTPUTS`: ``"clip"`` for PPO's actor, ``"tanh"`` for SAC's.
    source : str
        Where the network comes from (for error messages).
    """
    arrays: dict[str, Any] = {}
    for i, (k, b) in enumerate(layers):
        arrays[f"kernel_{i}"], arrays[f"bias_{i}"] = np.asarray(k), np.asarray(b)
    arrays["activation"] = activation
    arrays["output"] = output
    dim = arrays[f"bias_{i}"].shape[0]
    arrays["action_low"] = np.broadcast_to(np.asarray(action_low, np.float32), (dim,))
    arrays["action_high"] = np.broadcast_to(np.asarray(action_high, np.float32), (dim,))
    if obs_rms is not None:
        arrays["obs_mean"] = np.asarray(obs_rms[0], np.float32)
        arrays["obs_var"] = np.asarray(obs_rms[1], np.float32)
        arrays["obs_epsilon"] = np.float32(1e-8)  # rejax's NormalizeObservationsMixin
    return NumpyPolicy(arrays, source)
