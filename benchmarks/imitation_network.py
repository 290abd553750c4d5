"""The network of the distillation benchmarks: its arguments, layers, fit, export and saved state.

``realaigym_v2_distill.py`` (DART on the v2 boards) and ``realaigym_v3_distill.py`` (DAgger
on v3 runs of the JAX twin) both teach a multilayer perceptron of the observation to
imitate a controller's normalised torque. What they share is here: the command-line
arguments every distillation takes, the network (hidden layers of ``activation``, a tanh
head, inputs normalised by the labelled observations' mean and variance), its fit (Adam on
the mean squared error, minibatches of :data:`BATCH` rows), its export as a
:class:`~twolink_gym.training.jax_export.NumpyPolicy` and back, and a seed's saved state.
A network's parameters ``ts`` are ``(layers, mean, var)``: ``layers`` the dense layers
``[(kernel (in, out), bias (out,)), ...]`` input to output, ``mean`` and ``var`` ``(obs_dim,)``.

JAX is imported inside the functions, so that a script parses and checks its arguments
before it pays for the import.
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

#: Rows of a fit's minibatch.
BATCH = 512
#: The fit's reported loss: the mean over its last this many minibatches.
LOSS_WINDOW = 200


def add_arguments(
    parser: argparse.ArgumentParser,
    *,
    teacher: str,
    config: str,
    rounds: int,
    runs: int,
    runs_help: str,
    fit_steps: int,
) -> None:
    """Add the arguments every distillation takes (the teacher, the config, the seeds, the net).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The script's parser.
    teacher, config : str
        The help of the positional ``variant`` and of ``--config``.
    rounds, runs, fit_steps : int
        The defaults of ``--rounds``, ``--runs`` and ``--fit-steps``.
    runs_help : str
        The help of ``--runs``.
    """
    parser.add_argument("variant", help=teacher)
    parser.add_argument("--robot", choices=("acrobot", "pendubot"), required=True)
    parser.add_argument("--config", required=True, help=config)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--runs", type=int, default=runs, help=runs_help)
    parser.add_argument("--fit-steps", type=int, default=fit_steps)
    parser.add_argument("--hidden", nargs="+", type=int, default=[256, 256])
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--out", required=True)


def check_arguments(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    counts: tuple[str, ...] = (),
    layers: tuple[str, ...] = (),
) -> None:
    """Refuse, through ``parser.error``, what :func:`add_arguments` took out of range.

    Parameters
    ----------
    parser, args : argparse.ArgumentParser, argparse.Namespace
        The script's parser and its parsed arguments.
    counts : tuple of str
        The script's own arguments (attribute names) that must be ``>= 1`` too.
    layers : tuple of str
        The script's own lists of layer widths (attribute names; ``None`` allowed).
    """
    for name in ("rounds", "runs", "fit_steps", *counts):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if not args.lr > 0:
        parser.error(f"--lr must be > 0, got {args.lr}")
    for name in ("hidden", *layers):
        if any(width < 1 for width in getattr(args, name) or ()):
            parser.error(f"--{name.replace('_', '-')} widths must be >= 1")


def teacher_variant(
    parser: argparse.ArgumentParser, args: argparse.Namespace, controller: type, kind: str
) -> Any:
    """The RealAIGym variant ``args.variant``, refused unless it is a ``controller`` of ``args.robot``.

    Parameters
    ----------
    parser, args : argparse.ArgumentParser, argparse.Namespace
        The script's parser and its parsed arguments.
    controller : type
        The controller class the variant must build.
    kind : str
        Its name in the error, with its article: ``"a TVLQR"``.
    """
    from twolink_gym.realaigym.controllers import VARIANTS

    if args.variant not in VARIANTS:
        parser.error(f"variant must be one of {sorted(VARIANTS)}, got {args.variant!r}")
    variant = VARIANTS[args.variant]
    if variant.robot != args.robot or variant.controller_class() is not controller:
        parser.error(f"{args.variant!r} is not {kind} variant of the {args.robot}")
    return variant


def actor(activation: str) -> Callable[[Any, Any], Any]:
    """``act(ts, obs)``: the network's normalised torque ``(..., 1)`` for observations ``(..., obs_dim)``.

    Parameters
    ----------
    activation : str
        The hidden layers': ``"relu"``, ``"tanh"`` or ``"silu"``.
    """
    import jax
    import jax.numpy as jnp

    hidden = {"relu": jax.nn.relu, "tanh": jnp.tanh, "silu": jax.nn.silu}[activation]

    def act(ts: Any, obs: Any) -> Any:
        layers, mean, var = ts
        h = (obs - mean) / jnp.sqrt(var + 1e-8)
        for w, b in layers[:-1]:
            h = hidden(h @ w + b)
        w, b = layers[-1]
        return jnp.tanh(h @ w + b)

    return act


def initial_layers(key: Any, obs_dim: int, hidden: list[int]) -> list[tuple[Any, Any]]:
    """Fresh layers: He-normal kernels (the head's scaled by 0.01, a near-zero torque), zero biases.

    Parameters
    ----------
    key : jax PRNG key
        Draws the kernels, one split a layer.
    obs_dim : int
        The observation's length.
    hidden : list of int
        The hidden layers' widths.
    """
    import jax
    import jax.numpy as jnp

    dims = [obs_dim, *hidden, 1]
    layers = []
    for i, (a, b) in enumerate(itertools.pairwise(dims)):
        key, draw = jax.random.split(key)
        w = jax.random.normal(draw, (a, b)) * jnp.sqrt(2.0 / a)
        layers.append((w * 0.01 if i == len(dims) - 2 else w, jnp.zeros(b)))
    return layers


def fitter(
    act: Callable[[Any, Any], Any],
    optimiser: Any,
    steps: int,
    seen: Callable[[Any, Any], Any] | None = None,
) -> Callable[..., Any]:
    """A jitted ``fit(layers, opt_state, mean, var, inputs, y, key) -> (layers, opt_state, loss)``.

    ``steps`` minibatches of :data:`BATCH` rows drawn with replacement from ``inputs``
    ``(n, ...)`` and the labels ``y`` ``(n,)`` (normalised torques), each an ``optimiser``
    step on the mean squared error of ``act``'s torque; ``loss`` is the mean of the last
    :data:`LOSS_WINDOW` minibatches'.

    Parameters
    ----------
    act : callable
        ``act(ts, obs)``, as :func:`actor` builds it.
    optimiser : optax.GradientTransformation
        Its state is ``opt_state``.
    steps : int
        Minibatches a fit.
    seen : callable, optional
        ``seen(rows, key)``: what the network is shown of a minibatch's ``inputs`` (noisy
        observations, say); by default the rows themselves.
    """
    import jax
    import jax.numpy as jnp
    import optax

    @jax.jit
    def fit(layers: Any, opt_state: Any, mean: Any, var: Any, inputs: Any, y: Any, key: Any) -> Any:
        def loss(layers: Any, o: Any, target: Any) -> Any:
            return jnp.mean((act((layers, mean, var), o)[..., 0] - target) ** 2)

        def update(carry: Any, k: Any) -> Any:
            layers, opt_state = carry
            rows = jax.random.randint(k, (BATCH,), 0, inputs.shape[0])
            o = inputs[rows] if seen is None else seen(inputs[rows], jax.random.fold_in(k, 1))
            value, grads = jax.value_and_grad(loss)(layers, o, y[rows])
            changes, opt_state = optimiser.update(grads, opt_state, layers)
            return (optax.apply_updates(layers, changes), opt_state), value

        keys = jax.random.split(key, steps)
        (layers, opt_state), values = jax.lax.scan(update, (layers, opt_state), keys)
        return layers, opt_state, values[-LOSS_WINDOW:].mean()

    return fit


def export(ts: Any, activation: str, source: str) -> Any:
    """The network ``ts`` as a :class:`~twolink_gym.training.jax_export.NumpyPolicy` (tanh head)."""
    from twolink_gym.training.jax_export import policy_of_layers

    layers, mean, var = ts
    return policy_of_layers(layers, activation, -1.0, 1.0, (mean, var), "tanh", source)


def network_of(policy: Any) -> Any:
    """The network ``ts`` of an exported policy (:func:`export`'s inverse)."""
    import jax.numpy as jnp

    arrays = policy.to_arrays()
    n = sum(1 for name in arrays if name.startswith("kernel_"))
    layers = [
        (jnp.asarray(arrays[f"kernel_{i}"]), jnp.asarray(arrays[f"bias_{i}"])) for i in range(n)
    ]
    return layers, jnp.asarray(arrays["obs_mean"]), jnp.asarray(arrays["obs_var"])


def write_log(folder: Path, log: list[dict[str, Any]]) -> None:
    """``folder/log.json``: one row a round (and a script's further rows)."""
    (folder / "log.json").write_text(json.dumps(log, indent=1) + "\n")


def save_state(folder: Path, tree: Any, arrays: dict[str, Any], log: list[dict[str, Any]]) -> None:
    """Save a seed after a round: ``folder/state.npz`` (``tree``'s leaves and ``arrays``) and its log.

    The state is written beside the old one and moved over it after the log, so that a
    stop while writing leaves the previous round's state whole.
    """
    import jax

    entries: dict[str, Any] = {
        f"leaf_{j}": np.asarray(v) for j, v in enumerate(jax.tree.leaves(tree))
    }
    entries.update(arrays)
    tmp = folder / "state.tmp.npz"
    np.savez(tmp, **entries)
    write_log(folder, log)
    tmp.replace(folder / "state.npz")


def saved_tree(saved: Any, like: Any) -> Any:
    """The tree of the shape of ``like`` from a :func:`save_state` file's leaves ``saved``."""
    import jax
    import jax.numpy as jnp

    leaves, tree = jax.tree.flatten(like)
    return jax.tree.unflatten(tree, [jnp.asarray(saved[f"leaf_{j}"]) for j in range(len(leaves))])
