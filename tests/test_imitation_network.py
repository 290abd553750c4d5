"""The distillation benchmarks' network (``benchmarks/imitation_network.py``).

The JAX network is held to the numpy policy its export writes (the code every command
runs the agent with, written apart from it); the fit to a torque map a network of its
shape can represent exactly; the saved state to the tree it was saved from.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NoReturn

import numpy as np
import pytest
from benchmark_scripts import load_benchmark

jax = pytest.importorskip("jax")
jnp = jax.numpy
optax = pytest.importorskip("optax")

from twolink_gym.training.jax_export import NumpyPolicy  # noqa: E402

network = load_benchmark("imitation_network")


def _network(activation: str, seed: int = 0) -> tuple[list[tuple[jax.Array, jax.Array]], ...]:
    key = jax.random.PRNGKey(seed)
    layers = network.initial_layers(key, 6, [16, 8])
    # the head's kernel is drawn near zero: scale it up so that the torque is not near 0
    layers[-1] = (layers[-1][0] * 300.0, layers[-1][1] + 0.1)
    rng = np.random.default_rng(seed)
    mean = jnp.asarray(rng.normal(size=6), jnp.float32)
    var = jnp.asarray(rng.uniform(0.5, 2.0, size=6), jnp.float32)
    return layers, mean, var


@pytest.mark.parametrize("activation", ["relu", "tanh", "silu"])
def test_the_exported_policy_acts_as_the_network(activation: str, tmp_path: Path) -> None:
    ts = _network(activation)
    obs = np.random.default_rng(1).normal(size=(64, 6)).astype(np.float32)
    torque = np.asarray(network.actor(activation)(ts, jnp.asarray(obs)))
    assert torque.shape == (64, 1)
    assert 0.05 < np.abs(torque).mean() < 1.0  # neither near zero nor saturated
    network.export(ts, activation, "test").save(tmp_path / "policy.npz")
    policy = NumpyPolicy.load(tmp_path / "policy.npz")
    action, _ = policy.predict(obs)
    np.testing.assert_allclose(action, torque, rtol=0, atol=2e-6)
    back = network.network_of(policy)
    for (w, b), (w2, b2) in zip(ts[0], back[0], strict=True):
        assert np.array_equal(np.asarray(w), np.asarray(w2))
        assert np.array_equal(np.asarray(b), np.asarray(b2))
    assert np.array_equal(np.asarray(ts[1]), np.asarray(back[1]))


def test_initial_layers_chain_and_start_near_zero_torque() -> None:
    layers = network.initial_layers(jax.random.PRNGKey(3), 5, [32, 32])
    assert [w.shape for w, _ in layers] == [(5, 32), (32, 32), (32, 1)]
    assert all(not np.any(np.asarray(b)) for _, b in layers)
    # He-normal: the first kernel's spread is sqrt(2 / fan-in)
    assert np.std(np.asarray(layers[0][0])) == pytest.approx(np.sqrt(2.0 / 5), rel=0.3)
    obs = jnp.asarray(np.random.default_rng(0).normal(size=(100, 5)), jnp.float32)
    torque = network.actor("relu")((layers, jnp.zeros(5), jnp.ones(5)), obs)
    assert float(jnp.abs(torque).max()) < 0.1


def test_the_fit_learns_a_torque_map_the_network_can_hold() -> None:
    # labels from a teacher network of the same shape: a fit can drive the error to ~0
    teacher = _network("tanh", seed=4)
    inputs = jnp.asarray(np.random.default_rng(5).normal(size=(4096, 6)), jnp.float32)
    act = network.actor("tanh")
    y = act(teacher, inputs)[:, 0]
    student = network.initial_layers(jax.random.PRNGKey(6), 6, [16, 8])
    optimiser = optax.adam(3e-3)
    fit = network.fitter(act, optimiser, 3000)
    mean, var = teacher[1], teacher[2]
    start = float(jnp.mean((act((student, mean, var), inputs)[:, 0] - y) ** 2))
    layers, opt_state, loss = fit(
        student, optimiser.init(student), mean, var, inputs, y, jax.random.PRNGKey(7)
    )
    end = float(jnp.mean((act((layers, mean, var), inputs)[:, 0] - y) ** 2))
    assert end < 0.02 * start and end < 1e-3
    assert float(loss) == pytest.approx(end, abs=2e-3)  # the last minibatches' mean
    # the optimiser's state comes back advanced by the fit's steps
    assert int(opt_state[0].count) == 3000


def test_a_saved_state_gives_back_its_tree_and_arrays(tmp_path: Path) -> None:
    layers = network.initial_layers(jax.random.PRNGKey(0), 4, [8])
    optimiser = optax.adam(1e-3)
    tree = (layers, optimiser.init(layers))
    log = [{"round": 0, "loss": 0.5}]
    network.save_state(tmp_path, tree, {"obs": np.ones((3, 4), np.float32)}, log)
    assert not (tmp_path / "state.tmp.npz").exists()
    saved = np.load(tmp_path / "state.npz")
    assert np.array_equal(saved["obs"], np.ones((3, 4), np.float32))
    fresh = (network.initial_layers(jax.random.PRNGKey(1), 4, [8]), optimiser.init(layers))
    back = network.saved_tree(saved, fresh)
    for a, b in zip(jax.tree.leaves(tree), jax.tree.leaves(back), strict=True):
        assert np.array_equal(np.asarray(a), np.asarray(b))
    assert (tmp_path / "log.json").read_text() == '[\n {\n  "round": 0,\n  "loss": 0.5\n }\n]\n'


def test_arguments_out_of_range_are_refused_by_name() -> None:
    parser = argparse.ArgumentParser()
    network.add_arguments(
        parser, teacher="t", config="c", rounds=3, runs=2, runs_help="r", fit_steps=10
    )
    parser.add_argument("--final-hidden", nargs="+", type=int)
    base = ["v", "--robot", "acrobot", "--config", "x.yaml", "--out", "o"]
    args = parser.parse_args(base)
    assert (args.rounds, args.runs, args.fit_steps, args.hidden) == (3, 2, 10, [256, 256])
    network.check_arguments(parser, args, layers=("final_hidden",))
    cases = {
        "--runs 0": "--runs must be >= 1",
        "--lr 0": "--lr must be > 0, got 0.0",
        "--hidden 8 0": "--hidden widths must be >= 1",
        "--final-hidden 0": "--final-hidden widths must be >= 1",
    }
    for extra, message in cases.items():
        args = parser.parse_args([*base, *extra.split()])
        with pytest.raises(ValueError, match=f"^{message}$"):
            network.check_arguments(_RaisingParser(), args, layers=("final_hidden",))


class _RaisingParser(argparse.ArgumentParser):
    """A parser whose ``error`` raises the message (argparse's prints it and exits)."""

    def error(self, message: str) -> NoReturn:
        raise ValueError(message)
