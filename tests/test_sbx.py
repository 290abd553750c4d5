"""The JAX algorithms (SBX, the ``jax`` extra) behind the same configs and run folders.

``make test`` installs the extra, so these run in CI; only an environment
without JAX skips the tests that train.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from twolink_gym.training.algorithms import ALGORITHMS, check_hyperparams
from twolink_gym.training.config import ConfigError, RunConfig, config_from_dict
from twolink_gym.training.train import train

TINY_SBX_SAC = {
    "learning_starts": 100,
    "batch_size": 32,
    "buffer_size": 2000,
    "policy_kwargs": {"net_arch": [16, 16]},
}


def tiny_config(tmp_path: Path, algo: str = "sbx_sac", **train_: object) -> RunConfig:
    hyper = (
        {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "policy_kwargs": {"net_arch": [8]}}
        if algo == "sbx_ppo"
        else TINY_SBX_SAC
    )
    return config_from_dict(
        {
            "env": {"task": "balance"},
            "algo": {"name": algo, "hyperparams": hyper},
            "train": {
                "total_timesteps": 400,
                "n_envs": 2,
                "seed": 3,
                "eval_freq": 0,
                "checkpoint_freq": 0,
                "output_dir": str(tmp_path / "runs"),
                "progress_bar": False,
                **train_,
            },
            "evaluate": {"episodes": 4, "seed": 500},
        },
        "test",
    )


# find_spec does not import sbx: the first import must come through ALGORITHMS (threads)
needs_sbx = pytest.mark.skipif(
    importlib.util.find_spec("sbx") is None, reason='needs pip install "twolink-gym[jax]"'
)


@pytest.fixture(autouse=True)
def _restore_torch_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def test_without_jax_the_package_imports_and_sbx_names_the_extra() -> None:
    # a fresh interpreter in which importing jax or sbx fails, as when they are not installed
    code = textwrap.dedent(
        """
        import sys

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("jax", "jaxlib", "sbx", "flax", "optax"):
                    raise ImportError(f"No module named {name!r} (blocked)")
                return None

        sys.meta_path.insert(0, Block())
        import twolink_gym, twolink_gym.training, twolink_gym.training.train
        from twolink_gym.training.config import ConfigError, config_from_dict

        train = {"total_timesteps": 100}
        config_from_dict({"env": {"task": "balance"}, "algo": {"name": "sac"}, "train": train})
        try:
            config_from_dict(
                {"env": {"task": "balance"}, "algo": {"name": "sbx_sac"}, "train": train}, "cfg"
            )
        except ConfigError as exc:
            print(exc)
        assert "jax" not in sys.modules and "sbx" not in sys.modules
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    message = out.stdout.strip()
    assert message.startswith("cfg: algo.name:"), out
    assert "'sbx_sac'" in message and 'pip install "twolink-gym[jax]"' in message


def test_sbx_names_are_config_names() -> None:
    for name in ("sbx_sac", "sbx_tqc", "sbx_crossq", "sbx_ppo"):
        assert name in ALGORITHMS and name in list(ALGORITHMS)
    with pytest.raises(ConfigError, match=r"algo.name must be one of .*sbx_crossq"):
        config_from_dict(
            {
                "env": {"task": "balance"},
                "algo": {"name": "sbx_droq"},
                "train": {"total_timesteps": 9},
            },
            "test",
        )


@needs_sbx
def test_hyperparameters_are_checked_against_the_sbx_signatures() -> None:
    # qf_learning_rate and policy_delay exist in SBX's SAC only (SBX README),
    # target_update_interval in SB3's SAC only
    check_hyperparams("sbx_sac", {"qf_learning_rate": 1.0e-3, "policy_delay": 2})
    with pytest.raises(ValueError, match="qf_learning_rate"):
        check_hyperparams("sac", {"qf_learning_rate": 1.0e-3})
    with pytest.raises(ValueError, match=r"target_update_interval.*sbx_sac"):
        check_hyperparams("sbx_sac", {"target_update_interval": 2})
    with pytest.raises(ValueError, match="buffer_size"):
        check_hyperparams("sbx_ppo", {"buffer_size": 10})
    check_hyperparams("sbx_crossq", {"policy_kwargs": {"net_arch": [64, 64]}})


@needs_sbx
@pytest.mark.parametrize("given", ["", "--xla_cpu_multi_thread_eigen=true"])
def test_sbx_lookup_limits_xla_to_one_thread_unless_set(given: str) -> None:
    code = textwrap.dedent(
        """
        import os
        from twolink_gym.training.algorithms import ALGORITHMS

        ALGORITHMS["sbx_sac"]
        print(os.environ.get("XLA_FLAGS", ""))
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    if given:
        env["XLA_FLAGS"] = given
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    expected = given or "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    assert out.stdout.strip() == expected


def _weights(path: Path, algo: str) -> list[np.ndarray]:
    import jax

    model = ALGORITHMS[algo].load(str(path), device="cpu")
    states = (
        [model.policy.actor_state, model.policy.vf_state]
        if algo == "sbx_ppo"
        else [model.policy.actor_state, model.policy.qf_state]
    )
    return [np.asarray(leaf) for s in states for leaf in jax.tree_util.tree_leaves(s.params)]


@pytest.mark.parametrize("algo", ["sbx_sac", "sbx_ppo"])
@needs_sbx
def test_seeded_sbx_training_is_reproducible(tmp_path: Path, algo: str) -> None:
    runs = [
        train(tiny_config(tmp_path / k, algo, seed=s)) for k, s in (("a", 3), ("b", 3), ("c", 4))
    ]
    a, b, c = (_weights(r.model_path, algo) for r in runs)
    assert len(a) >= 4
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert any(not np.array_equal(x, z) for x, z in zip(a, c, strict=True))


@needs_sbx
def test_sbx_run_folder_resume_evaluate_and_export(tmp_path: Path) -> None:
    from stable_baselines3.common.save_util import load_from_pkl
    from twolink_gym.training.evaluate import evaluate_policies
    from twolink_gym.training.export import export_agent

    cfg = tiny_config(tmp_path, total_timesteps=300, checkpoint_freq=200, eval_freq=200)
    first = train(cfg)
    run = first.run_dir
    for name in ("model.zip", "vecnormalize.pkl", "replay_buffer.pkl", "eval/evaluations.npz"):
        assert (run / name).is_file(), name
    assert (run / "checkpoints" / "model_replay_buffer_200_steps.pkl").is_file()
    summary = json.loads((run / "train_summary.json").read_text())
    assert "jax" in summary["machine"] and "xla_flags" in summary["machine"]
    saved = load_from_pkl(run / "replay_buffer.pkl")
    assert saved.pos == 150  # 300 steps of 2 envs

    longer = config_from_dict(
        {**cfg.to_dict(), "train": {**cfg.to_dict()["train"], "total_timesteps": 500}}
    )
    second = train(longer, resume=run)
    assert second.timesteps == 500
    final = load_from_pkl(run / "replay_buffer.pkl")
    assert final.pos == 250
    np.testing.assert_array_equal(final.observations[:150], saved.observations[:150])

    _, (rollout,) = evaluate_policies([str(run)], longer, tmp_path / "eval", trajectories=False)
    assert rollout.success.shape == (4,)
    # exported without PyTorch: the actor's parameters and the statistics, a card naming SBX
    agent = export_agent(run, tmp_path / "agent", evaluate=False)
    assert not (agent / "policy.pt").exists()
    assert (agent / "policy.msgpack").is_file() and (agent / "obs_stats.npz").is_file()
    assert json.loads((agent / "agent.json").read_text())["backend"] == "sbx"
