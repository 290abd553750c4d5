"""Exported SBX (JAX) agents act like the run they come from, through the ``pretrained:`` path.

The reference is independent of the export: the run's own ``model.zip``
loaded by SBX (the whole algorithm, critics and optimiser state included), fed
observations normalised by SB3's own ``VecNormalize`` with the run's
``vecnormalize.pkl``. The exported agent is rebuilt from its ``config.yaml``,
given the actor of ``policy.msgpack`` and the numpy statistics of
``obs_stats.npz``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from twolink_gym.training.algorithms import ALGORITHMS, BackendNotInstalledError
from twolink_gym.training.config import RunConfig, config_from_dict
from twolink_gym.training.envs import load_vec_normalize
from twolink_gym.training.export import export_agent
from twolink_gym.training.policies import load_policy, load_pretrained
from twolink_gym.training.train import train

import twolink_gym
from twolink_gym import pretrained
from twolink_gym.env import TwoLinkEnv
from twolink_gym.vector_env import TwoLinkVectorEnv

needs_sbx = pytest.mark.skipif(
    importlib.util.find_spec("sbx") is None, reason='needs pip install "twolink-gym[jax]"'
)

HYPER = {
    "sbx_sac": {
        "learning_starts": 100,
        "batch_size": 32,
        "buffer_size": 2000,
        "policy_kwargs": {"net_arch": [16, 16]},
    },
    "sbx_crossq": {
        "learning_starts": 100,
        "batch_size": 32,
        "buffer_size": 2000,
        "policy_kwargs": {"net_arch": [16, 16]},
    },
    "sbx_ppo": {"n_steps": 64, "batch_size": 32, "n_epochs": 2, "policy_kwargs": {"net_arch": [8]}},
}


def _config(tmp: Path, algo: str) -> RunConfig:
    return config_from_dict(
        {
            "env": {"task": "balance"},
            "algo": {"name": algo, "hyperparams": HYPER[algo]},
            "train": {
                "total_timesteps": 1000,
                "n_envs": 2,
                "seed": 5,
                "eval_freq": 0,
                "checkpoint_freq": 0,
                "output_dir": str(tmp / "runs"),
                "progress_bar": False,
            },
            "evaluate": {"episodes": 4, "seed": 900},
        },
        "test",
    )


@pytest.fixture(scope="module", params=["sbx_sac", "sbx_ppo", "sbx_crossq"])
def exported(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """(config, run folder, agents folder, agent name) of a tiny trained and exported run."""
    if importlib.util.find_spec("sbx") is None:
        pytest.skip('needs pip install "twolink-gym[jax]"')
    algo = request.param
    threads = torch.get_num_threads()
    tmp = tmp_path_factory.mktemp(algo)
    cfg = _config(tmp, algo)
    run = train(cfg).run_dir
    torch.set_num_threads(threads)
    agents = tmp / "agents"
    name = f"balance_{algo}"
    export_agent(run, agents / name)
    return cfg, run, agents, name


def _observations(cfg: RunConfig, n_envs: int = 16, steps: int = 25, seed: int = 31):
    """Raw observations of real episodes of ``cfg``'s env under random actions."""
    venv = TwoLinkVectorEnv(n_envs, **cfg.env.make_kwargs())
    obs, _ = venv.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seen = []
    for _ in range(steps):
        seen.append(obs.copy())
        obs, *_ = venv.step(rng.uniform(-1, 1, (n_envs, 2)))
    return np.concatenate(seen).astype(np.float32)


def _reference(cfg: RunConfig, run: Path):
    """The run's own model on observations normalised by SB3's VecNormalize."""
    model = ALGORITHMS[cfg.algo.name].load(str(run / "model.zip"), device="cpu")
    vec = load_vec_normalize(run / "vecnormalize.pkl", cfg.env)

    def act(obs: np.ndarray) -> np.ndarray:
        return model.predict(vec.normalize_obs(obs), deterministic=True)[0]

    return act, model


@needs_sbx
def test_exported_sbx_agent_acts_like_its_run_through_pretrained(
    exported, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg, run, agents, name = exported
    folder = agents / name
    assert sorted(p.name for p in folder.iterdir()) == [
        "agent.json",
        "config.yaml",
        "obs_stats.npz",
        "policy.msgpack",
        "train_summary.json",
    ]
    card = json.loads((folder / "agent.json").read_text())
    assert card["backend"] == "sbx" and card["algorithm"] == cfg.algo.name
    assert pretrained.read_card(folder).env_id == "TwoLinkBalance-v0"

    monkeypatch.setattr(pretrained, "PRETRAINED_DIR", agents)
    assert pretrained.available() == [name]
    reference, model = _reference(cfg, run)
    obs = _observations(cfg)
    expected = reference(obs)

    agent = twolink_gym.load_pretrained(name)
    assert (agent.algorithm, agent.env_id) == (cfg.algo.name, "TwoLinkBalance-v0")
    actions, _ = agent.predict(obs, deterministic=True)
    np.testing.assert_allclose(actions, expected, rtol=0, atol=1e-6)
    # one observation at a time, as a Gymnasium loop gives them
    single, _ = agent.predict(obs[7], deterministic=True)
    assert single.shape == (2,)
    np.testing.assert_allclose(single, expected[7], rtol=0, atol=1e-6)

    env = TwoLinkEnv(**cfg.env.make_kwargs())
    loaded = load_policy(f"pretrained:{name}", cfg.env, env)
    assert loaded.label == f"{cfg.algo.name} (pretrained:{name})"
    np.testing.assert_allclose(loaded.predictor.predict(obs)[0], expected, rtol=0, atol=1e-6)

    # the statistics matter: the run's network on raw observations acts otherwise
    raw, _ = model.predict(obs, deterministic=True)
    assert np.max(np.abs(raw - actions)) > 1e-3


@needs_sbx
def test_exported_sbx_card_success_is_measured_and_reexport_keeps_the_actions(
    exported, tmp_path: Path
) -> None:
    _, _, agents, name = exported
    card = pretrained.read_card(agents / name)
    assert card.success is not None and card.success * 4 == round(card.success * 4)
    # an exported folder exports again (e.g. under another name) with the same actor
    again = export_agent(agents / name, tmp_path / "again", evaluate=False)
    for file in ("policy.msgpack", "obs_stats.npz"):
        assert (again / file).read_bytes() == (agents / name / file).read_bytes()
    assert json.loads((again / "agent.json").read_text())["backend"] == "sbx"


@needs_sbx
def test_loading_an_sbx_agent_without_jax_names_the_extra(
    exported, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg, _, agents, name = exported
    monkeypatch.setattr(pretrained, "PRETRAINED_DIR", agents)
    monkeypatch.setitem(sys.modules, "sbx", None)  # as if sbx-rl were not installed
    with pytest.raises(ImportError, match=r'balance_sbx_.*pip install "twolink-gym\[jax\]"'):
        load_pretrained(name)
    with pytest.raises(BackendNotInstalledError, match=r'pip install "twolink-gym\[jax\]"'):
        load_policy(f"pretrained:{name}", cfg.env, TwoLinkEnv(**cfg.env.make_kwargs()))


def test_card_backend_is_read_from_data(tmp_path: Path) -> None:
    folder = tmp_path / "agent"
    folder.mkdir()
    assert pretrained.backend_of(folder) == "torch"  # no card: the earlier layout
    (folder / "agent.json").write_text(json.dumps({"backend": "onnx"}))
    with pytest.raises(ValueError, match=r"backend must be one of \['numpy', 'sbx', 'torch'\]"):
        pretrained.backend_of(folder)
    (folder / "agent.json").write_text(json.dumps({"backend": "sbx"}))
    assert pretrained.policy_file(folder) == folder / "policy.msgpack"
