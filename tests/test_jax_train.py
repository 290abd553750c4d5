"""``twolink train`` with ``algo.name: jax_ppo``: rejax's PPO on the JAX twin, seeds at once.

The references are independent of the numpy export: rejax's own actor network
(``actor.apply`` on the saved train state, in JAX) for the exported forward
pass, rejax's dataclass for the hyperparameter table, and the compiled env for
running the exported agent (in a process where JAX cannot be imported).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from twolink_gym.training.config import ConfigError, config_from_dict

needs_rejax = pytest.mark.skipif(
    importlib.util.find_spec("rejax") is None, reason='needs pip install "twolink-gym[jax]"'
)

TINY = {
    "env": {"task": "balance", "max_episode_steps": 20, "normalize_reward": True},
    "algo": {
        "name": "jax_ppo",
        "hyperparams": {
            "num_steps": 16,
            "num_minibatches": 2,
            "num_epochs": 1,
            "log_std_init": -0.5,
            "agent_kwargs": {"activation": "tanh", "hidden_layer_sizes": [16, 8]},
        },
    },
    "train": {
        "total_timesteps": 256,
        "n_envs": 8,
        "seeds": [3, 5],
        "eval_freq": 128,
        "eval_episodes": 2,
    },
    "evaluate": {"episodes": 3},
}


#: A tiny jax_sac run: 2 seeds, 4 envs, updates from step 32 on, observations normalised.
TINY_SAC = {
    "env": {"task": "balance", "max_episode_steps": 20, "normalize_obs": True},
    "algo": {
        "name": "jax_sac",
        "hyperparams": {
            "buffer_size": 256,
            "fill_buffer": 32,
            "batch_size": 32,
            "num_epochs": 2,
            "agent_kwargs": {"activation": "relu", "hidden_layer_sizes": [16, 8]},
        },
    },
    "train": {
        "total_timesteps": 128,
        "n_envs": 4,
        "seeds": [1, 2],
        "eval_freq": 64,
        "eval_episodes": 2,
    },
    "evaluate": {"episodes": 3},
}


def _write_config(tmp: Path, base: dict[str, Any] = TINY, **train: object) -> Path:
    data = json.loads(json.dumps(base))
    data["train"].update(output_dir=str(tmp / "runs"), **train)
    path = tmp / f"tiny_{data['algo']['name']}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture(scope="module")
def xla_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """JAX's persistent compilation cache in a temporary folder, for this module's tests only.

    The later trainings of a program compiled once (resume, the uninterrupted
    run it is compared with) skip compiling it.
    """
    pytest.importorskip("rejax")
    import jax

    names = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs")
    before = {name: getattr(jax.config, name) for name in names}
    jax.config.update("jax_compilation_cache_dir", str(tmp_path_factory.mktemp("xla_cache")))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    try:
        yield
    finally:
        for name, value in before.items():
            jax.config.update(name, value)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, xla_cache: None) -> Path:
    """Two seeds of a tiny jax_ppo run trained at once through the CLI; the config's path."""
    from twolink_gym.training.cli import main

    config = _write_config(tmp_path_factory.mktemp("jax_train"))
    assert main(["train", str(config)]) == 0
    return config


@pytest.fixture(scope="module")
def trained_sac(tmp_path_factory: pytest.TempPathFactory, xla_cache: None) -> Path:
    """Two seeds of a tiny jax_sac run trained at once through the CLI; the config's path."""
    from twolink_gym.training.cli import main

    config = _write_config(tmp_path_factory.mktemp("jax_sac"), TINY_SAC)
    assert main(["train", str(config)]) == 0
    return config


@needs_rejax
def test_cli_writes_a_run_folder_per_seed(trained: Path) -> None:
    runs = trained.parent / "runs"
    assert sorted(p.name for p in runs.iterdir()) == ["balance_jax_ppo_s3", "balance_jax_ppo_s5"]
    returns = []
    for seed in (3, 5):
        run = runs / f"balance_jax_ppo_s{seed}"
        for name in ("config.yaml", "policy.npz", "agent.json", "train_state.npz"):
            assert (run / name).is_file(), name
        cfg = yaml.safe_load((run / "config.yaml").read_text())
        assert cfg["train"]["seed"] == seed and cfg["train"]["seeds"] is None
        log = (run / "eval" / "time_log.csv").read_text().splitlines()
        assert log[0].startswith("timesteps,") and len(log) == 3  # header + 2 segments
        assert [int(line.split(",")[0]) for line in log[1:]] == [128, 256]
        with np.load(run / "eval" / "evaluations.npz") as ev:
            assert ev["results"].shape == (2, 2) and ev["successes"].shape == (2, 2)
            returns.append(ev["results"])
        summary = json.loads((run / "train_summary.json").read_text())
        assert summary["timesteps"] == 256 and summary["seeds_trained_together"] == [3, 5]
        assert summary["compile_time_s"] > 0 and summary["wall_time_s"] >= summary["compile_time_s"]
        # the devices the seeds ran on, as JAX names them (the test runs on the CPU)
        import jax

        assert summary["machine"]["jax_backend"] == "cpu" == summary["device"].split(":")[0]
        assert summary["machine"]["device_kind"] == jax.devices("cpu")[0].device_kind
        assert any((run / "tb").rglob("events.out.tfevents.*"))
        assert (run / "best" / "policy.npz").is_file()
    assert not np.array_equal(returns[0], returns[1])  # two seeds, two trainings


@needs_rejax
def test_numpy_forward_pass_equals_rejax_network(trained: Path) -> None:
    """The exported numpy policy gives rejax's actor's (clipped) mean on random observations."""
    import jax
    import jax.numpy as jnp
    from twolink_gym.training.config import load_config
    from twolink_gym.training.jax_export import NumpyPolicy
    from twolink_gym.training.jax_program import build_program
    from twolink_gym.training.jax_run_folders import load_states, seed_config

    cfg = load_config(trained)
    program = build_program(cfg)
    keys = jax.vmap(jax.random.PRNGKey)(jnp.asarray([3, 5], dtype=jnp.uint32))
    dirs = [seed_config(cfg, s).run_dir for s in (3, 5)]
    state, steps = load_states(program.init(keys), dirs)
    assert steps == 256
    rng = np.random.default_rng(0)
    obs = rng.normal(0.0, 2.0, size=(64, 6)).astype(np.float32)
    for i, run in enumerate(dirs):
        seed_state = jax.tree.map(lambda x, i=i: x[i], state)
        normalized = program.algo.normalize_obs(seed_state.obs_rms_state, jnp.asarray(obs))
        mean = program.algo.actor.apply(
            seed_state.actor_ts.params,
            normalized,
            method=lambda m, o: m.action_mean(m.features(o)),
        )
        expected = np.clip(np.asarray(mean), -1.0, 1.0)
        got = NumpyPolicy.load(run / "policy.npz").predict(obs)[0]
        np.testing.assert_allclose(got, expected, atol=1e-5, rtol=0)
        assert np.abs(got).max() > 1e-3  # a trained network, not zeros
        # the initial log std was set from log_std_init (and trained from there)
        log_std = np.asarray(seed_state.actor_ts.params["params"]["action_log_std"])
        assert np.all(np.abs(log_std + 0.5) < 0.1)


def test_numpy_policy_file_survives_load_and_save_bit_for_bit(tmp_path: Path) -> None:
    """Saving a loaded ``policy.npz`` writes the arrays it was given, observation statistics too."""
    from twolink_gym.training.jax_export import NumpyPolicy

    rng = np.random.default_rng(3)
    given = {
        "kernel_0": rng.normal(size=(6, 8)).astype(np.float32),
        "bias_0": rng.normal(size=8).astype(np.float32),
        "kernel_1": rng.normal(size=(8, 1)).astype(np.float32),
        "bias_1": rng.normal(size=1).astype(np.float32),
        "activation": np.array("relu"),
        "output": np.array("tanh"),
        "action_low": np.array([-6.0], np.float32),
        "action_high": np.array([6.0], np.float32),
        "obs_mean": rng.normal(size=6).astype(np.float32),
        "obs_var": rng.uniform(0.01, 30.0, size=6).astype(np.float32),
        "obs_epsilon": np.array(1e-8, np.float32),
    }
    NumpyPolicy(given, "given").save(tmp_path / "policy.npz")
    NumpyPolicy.load(tmp_path / "policy.npz").save(tmp_path / "again.npz")
    with np.load(tmp_path / "again.npz") as saved:
        assert sorted(saved.files) == sorted(given)
        for name, value in given.items():
            assert saved[name].dtype == value.dtype, name
            np.testing.assert_array_equal(saved[name], value, err_msg=name)
    obs = rng.normal(size=(5, 6)).astype(np.float32)
    x = (obs - given["obs_mean"]) / np.sqrt(given["obs_var"] + given["obs_epsilon"])
    expected = 6.0 * np.tanh(
        np.maximum(x @ given["kernel_0"] + given["bias_0"], 0.0) @ given["kernel_1"]
        + given["bias_1"]
    )
    np.testing.assert_allclose(
        NumpyPolicy.load(tmp_path / "again.npz").action(obs), expected, rtol=1e-5, atol=1e-5
    )


@needs_rejax
def test_exported_agent_runs_on_the_compiled_env_without_jax(trained: Path) -> None:
    """``load_policy`` runs a run folder's policy.npz on the compiled env; JAX is blocked."""
    run = trained.parent / "runs" / "balance_jax_ppo_s3"
    code = f"""
import sys
sys.modules["jax"] = None  # import jax raises ImportError
sys.modules["jaxlib"] = None
import numpy as np
from twolink_gym.training.config import load_eval_config
from twolink_gym.training.policies import load_policy
from twolink_gym.training.jax_export import NumpyPolicy
from twolink_gym.env import TwoLinkEnv
cfg = load_eval_config({str(run / "config.yaml")!r})
env = TwoLinkEnv(**cfg.env.make_kwargs())
policy = load_policy({str(run)!r}, cfg.env, env)
direct = NumpyPolicy.load({str(run / "policy.npz")!r})
obs, _ = env.reset(seed=0)
for _ in range(10):
    action, _ = policy.predictor.predict(obs, deterministic=True)
    assert np.array_equal(action, direct.action(obs)), (action, direct.action(obs))
    assert action.shape == (2,) and np.all(np.abs(action) <= 1.0)
    obs, *_ = env.step(action)
assert "jax" not in [m.split(".")[0] for m in sys.modules if sys.modules[m] is not None]
print(policy.label)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "jax_ppo (balance_jax_ppo_s3)" in out.stdout


@needs_rejax
def test_resume_continues_every_seed_exactly(trained: Path, tmp_path: Path) -> None:
    """--resume trains on from the saved train states, as one uninterrupted run does."""
    import shutil

    from twolink_gym.training.cli import main

    resumed = tmp_path / "resumed"
    resumed.mkdir()
    shutil.copytree(trained.parent / "runs", resumed / "runs")
    config = _write_config(resumed, total_timesteps=384)
    run = resumed / "runs" / "balance_jax_ppo_s3"
    assert main(["train", str(config), "--resume", str(run)]) == 0
    log = (run / "eval" / "time_log.csv").read_text().splitlines()
    assert [int(line.split(",")[0]) for line in log[1:]] == [128, 256, 384]
    assert json.loads((run / "train_summary.json").read_text())["resumed_at"] == 256
    with np.load(run / "train_state.npz") as data:
        assert int(data["steps"]) == 384

    # without a config: one seed's folder (a copy, elsewhere) continues its whole group there
    bare = tmp_path / "bare"
    shutil.copytree(trained.parent / "runs", bare / "runs")
    one = bare / "runs" / "balance_jax_ppo_s5"
    assert main(["train", "--resume", str(one), "--set", "train.total_timesteps=384"]) == 0
    for seed in (3, 5):
        with np.load(bare / "runs" / f"balance_jax_ppo_s{seed}" / "train_state.npz") as data:
            assert int(data["steps"]) == 384 and list(data["seeds"]) == [3, 5]
        with np.load(trained.parent / "runs" / f"balance_jax_ppo_s{seed}/train_state.npz") as d:
            assert int(d["steps"]) == 256  # the original runs are left as they were

    straight = tmp_path / "straight"
    straight.mkdir()
    assert main(["train", str(_write_config(straight, total_timesteps=384))]) == 0
    for seed in (3, 5):
        name = f"balance_jax_ppo_s{seed}/policy.npz"
        for other in (resumed, bare):
            with np.load(other / "runs" / name) as a, np.load(straight / "runs" / name) as b:
                assert sorted(a.files) == sorted(b.files)
                for key in a.files:
                    np.testing.assert_array_equal(a[key], b[key], err_msg=f"{other}/{name}: {key}")


@needs_rejax
def test_resume_without_config_names_what_is_missing(trained: Path, tmp_path: Path) -> None:
    """A seed's folder without its group, or a state that does not record it: clear errors."""
    import shutil

    from twolink_gym.training.jax_run_folders import resume_config

    runs = tmp_path / "runs"
    shutil.copytree(trained.parent / "runs", runs)
    cfg = resume_config(runs / "balance_jax_ppo_s3", ["train.total_timesteps=512"])
    assert cfg.train.seeds == [3, 5] and cfg.train.total_timesteps == 512
    assert Path(cfg.train.output_dir) == runs and cfg.train.run_name is None

    shutil.rmtree(runs / "balance_jax_ppo_s5")
    with pytest.raises(FileNotFoundError, match=r"seeds \[3, 5\] were trained together.*_s5"):
        resume_config(runs / "balance_jax_ppo_s3")
    with pytest.raises(FileNotFoundError, match="run folder of one seed of a jax_\\* run"):
        resume_config(runs)  # the folder holding the seeds' folders
    state = runs / "balance_jax_ppo_s3" / "train_state.npz"
    with np.load(state) as data:
        arrays = {k: data[k] for k in data.files if k != "seeds"}
    with open(state, "wb") as f:
        np.savez(f, **arrays)
    with pytest.raises(ValueError, match="twolink train CONFIG --resume"):
        resume_config(runs / "balance_jax_ppo_s3")


@needs_rejax
def test_existing_runs_are_not_overwritten(trained: Path) -> None:
    from twolink_gym.training.cli import main

    before = (trained.parent / "runs" / "balance_jax_ppo_s3" / "policy.npz").read_bytes()
    assert main(["train", str(trained)]) != 0
    after = (trained.parent / "runs" / "balance_jax_ppo_s3" / "policy.npz").read_bytes()
    assert before == after


@needs_rejax
def test_hyperparameter_table_is_rejax_ppo() -> None:
    """The table read without rejax lists rejax's PPO fields (less the reserved) and ours."""
    import rejax
    from twolink_gym.training.jax_bootstrapping_ppo import bootstrapping_ppo
    from twolink_gym.training.jax_hyperparams import (
        HYPERPARAMETERS,
        INITIAL_STATE_KEYS,
        RESERVED,
        field_kinds,
    )

    kinds = field_kinds(rejax.PPO)
    ours = field_kinds(bootstrapping_ppo(rejax.PPO))  # rejax's and the subclass's fields
    assert set(ours) - set(kinds) == {"clip_value_loss"}
    assert HYPERPARAMETERS["jax_ppo"] == {**ours, **dict.fromkeys(INITIAL_STATE_KEYS, "number")}
    assert set(RESERVED) | set(kinds) == {f.name for f in dataclasses.fields(rejax.PPO)} | {
        "agent_kwargs"
    }


def _config_error(**hyper: object) -> str:
    data = json.loads(json.dumps(TINY))
    data["algo"]["hyperparams"].update(hyper)
    with pytest.raises(ConfigError) as info:
        config_from_dict(data, "cfg.yaml")
    return str(info.value)


def test_unknown_hyperparameter_names_key_file_and_allowed_keys() -> None:
    message = _config_error(n_steps=64)
    assert "cfg.yaml" in message and "'n_steps'" in message and "clip_eps" in message


def test_bad_hyperparameter_values_are_named() -> None:
    assert "learning_rate" in _config_error(learning_rate="3e-4")
    assert "gamma must be in (0.0, 1.0]" in _config_error(gamma=1.5)
    assert "num_steps" in _config_error(num_steps=2.5)
    assert "train.n_envs" in _config_error(num_envs=4)
    assert "agent_kwargs.activation" in _config_error(agent_kwargs={"activation": "softsign"})
    assert "agent_kwargs.width" in _config_error(agent_kwargs={"width": 3})


def test_seeds_are_for_jax_algorithms() -> None:
    data = json.loads(json.dumps(TINY))
    data["algo"] = {"name": "ppo"}
    with pytest.raises(ConfigError, match=r"train\.seeds"):
        config_from_dict(data, "cfg.yaml")
    data = json.loads(json.dumps(TINY))
    data["train"]["seeds"] = [1, 1]
    with pytest.raises(ConfigError, match="distinct"):
        config_from_dict(data, "cfg.yaml")


@needs_rejax
def test_export_copies_the_numpy_agent_and_measures_it(trained: Path, tmp_path: Path) -> None:
    from twolink_gym.training.export import export_agent

    from twolink_gym import pretrained

    run = trained.parent / "runs" / "balance_jax_ppo_s5"
    out = export_agent(run, tmp_path / "agent")
    assert pretrained.backend_of(out) == "numpy"
    assert (out / "policy.npz").read_bytes() == (run / "policy.npz").read_bytes()
    card = pretrained.read_card(out)
    assert card.algorithm == "jax_ppo" and card.episodes == 3
    assert card.success is not None and 0.0 <= card.success <= 1.0


def test_sb3_training_function_refuses_a_jax_config(tmp_path: Path) -> None:
    """``train()`` (sweep, run, tune) names the command that trains a jax_* config."""
    from twolink_gym.training.train import train

    data = json.loads(json.dumps(TINY))
    data["train"]["output_dir"] = str(tmp_path)
    with pytest.raises(ValueError, match="twolink train CONFIG"):
        train(config_from_dict(data, "cfg.yaml"))
    assert not any(tmp_path.iterdir())


@needs_rejax
def test_time_limit_bootstraps_the_value_of_the_final_observation() -> None:
    """A truncated (not terminated) step's reward gains gamma · V(final obs); no other step's does.

    Reach never terminates, so every episode of 3 steps ends by the time limit at
    the rollout's third step. The critic is set to the constant ``c`` (zero weights,
    output bias ``c``) and then to 0, from the same train state: the actions, the
    twin's steps and the rewards are the same, so the rewards differ by exactly
    ``gamma · c`` where the time limit cut the episode and by 0 elsewhere (rejax's
    own PPO gives 0 everywhere: it reads the time limit as the end of the return).
    """
    import jax
    import jax.numpy as jnp
    from twolink_gym.training.jax_program import build_program

    data = json.loads(json.dumps(TINY))
    data["env"] = {"task": "reach", "max_episode_steps": 3, "normalize_reward": True}
    data["algo"]["hyperparams"].update(num_steps=6, gamma=0.9)
    data["train"].update(n_envs=4, seeds=None, seed=0, total_timesteps=24, eval_freq=24)
    program = build_program(config_from_dict(data, "cfg.yaml"))
    algo = program.algo
    ts = algo.init_state(jax.random.PRNGKey(0))

    def with_critic(value: float) -> object:
        params = jax.tree.map(
            lambda x: jnp.full_like(x, value) if x.shape == (1,) else jnp.zeros_like(x),
            ts.critic_ts.params,
        )
        return ts.replace(critic_ts=ts.critic_ts.replace(params=params))

    c = 1000.0
    _, high = algo.collect_trajectories(with_critic(c))
    _, zero = algo.collect_trajectories(with_critic(0.0))
    done = np.asarray(high.done)
    assert done.shape == (6, 4)
    np.testing.assert_array_equal(done, np.repeat([[False], [False], [True]] * 2, 4, axis=1))
    np.testing.assert_array_equal(np.asarray(high.action), np.asarray(zero.action))
    expected = np.where(done, 0.9 * c, 0.0)
    np.testing.assert_allclose(
        np.asarray(high.reward) - np.asarray(zero.reward), expected, rtol=1e-5
    )


@needs_rejax
@pytest.mark.parametrize("clip", [True, False])
def test_clip_value_loss_false_fits_the_critic_where_rejax_clipping_stops_it(clip: bool) -> None:
    """A batch whose rollout values lie 10 above the targets and the critic 1 above them.

    rejax's loss keeps the larger of the plain error (1²) and the error of the
    prediction clipped to ``±clip_eps`` of the rollout value (9.8²): the clipped
    branch, whose gradient is zero, so the critic does not move. The plain squared
    error (``clip_value_loss: false``, SB3's default) moves it towards the targets.
    """
    import jax
    import jax.numpy as jnp
    from rejax.algos.ppo import AdvantageMinibatch
    from twolink_gym.training.jax_program import build_program

    data = json.loads(json.dumps(TINY))
    data["algo"]["hyperparams"]["clip_value_loss"] = clip
    data["train"].update(seeds=None, seed=0)
    algo = build_program(config_from_dict(data, "cfg.yaml")).algo
    assert algo.clip_value_loss is clip
    ts = algo.init_state(jax.random.PRNGKey(0))
    _, trajectories = algo.collect_trajectories(ts)
    obs = trajectories.obs.reshape(-1, trajectories.obs.shape[-1])
    predicted = algo.critic.apply(ts.critic_ts.params, obs)
    targets = predicted - 1.0
    flat = jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), trajectories)
    batch = AdvantageMinibatch(flat.replace(value=targets + 10.0), jnp.zeros_like(targets), targets)
    after = algo.update_critic(ts, batch)
    error_before = float(jnp.mean(jnp.abs(predicted - targets)))
    error_after = float(jnp.mean(jnp.abs(algo.critic.apply(after.critic_ts.params, obs) - targets)))
    if clip:
        assert error_after == pytest.approx(error_before, abs=1e-6)
    else:
        assert error_after < error_before - 1e-3


@needs_rejax
def test_action_mean_init_scale_scales_the_first_policy_mean_actions() -> None:
    """``action_mean_init_scale: 0.01``: the first policy's mean actions are 0.01 of rejax's.

    The mean layer is the network's last, linear one: scaling its weights and bias
    scales the mean actions (read through rejax's own actor), and leaves the
    critic and the log std as rejax drew them.
    """
    import jax
    from twolink_gym.training.jax_program import build_program, with_initial_policy

    data = json.loads(json.dumps(TINY))
    data["algo"]["hyperparams"]["action_mean_init_scale"] = 0.01
    data["train"].update(seeds=None, seed=0)
    cfg = config_from_dict(data, "cfg.yaml")
    algo = build_program(cfg).algo
    ts = algo.init_state(jax.random.PRNGKey(0))
    scaled = with_initial_policy(ts, {"action_mean_init_scale": 0.01})
    shape = algo.env.observation_space(algo.env_params).shape
    obs = jax.random.normal(jax.random.PRNGKey(1), (64, *shape))

    def mean_action(state: Any) -> np.ndarray:
        return np.asarray(
            algo.actor.apply(
                state.actor_ts.params, obs, method=lambda m, o: m.action_mean(m.features(o))
            )
        )

    before, after = mean_action(ts), mean_action(scaled)
    assert np.std(before) > 0.1  # rejax's first policy: mean actions of order 0.1-1
    np.testing.assert_allclose(after, 0.01 * before, rtol=1e-5, atol=1e-8)
    same = jax.tree.map(np.array_equal, scaled.critic_ts.params, ts.critic_ts.params)
    assert all(jax.tree.leaves(same))
    np.testing.assert_array_equal(
        scaled.actor_ts.params["params"]["action_log_std"],
        ts.actor_ts.params["params"]["action_log_std"],
    )


@needs_rejax
def test_seeds_split_over_two_cpu_devices_train_as_on_one(trained: Path, tmp_path: Path) -> None:
    """train.jax_devices: 2 with seeds [3, 5, 7]: two CPU devices, one spare copy, three runs.

    In a fresh process (JAX's CPU device count is fixed when its backend starts).
    Seeds 3 and 5 train as in the one-device run of the ``trained`` fixture (the
    same config but the seeds): the same policies up to float32 rounding.
    """
    config = _write_config(tmp_path, seeds=[3, 5, 7], jax_devices=2)
    out = subprocess.run(
        [sys.executable, "-m", "twolink_gym.training.cli", "train", str(config)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    assert "3 seeds [3, 5, 7] at once on 2 cpu devices, 1 spare copy" in out.stdout
    runs = tmp_path / "runs"
    names = ["balance_jax_ppo_s3", "balance_jax_ppo_s5", "balance_jax_ppo_s7"]
    assert sorted(p.name for p in runs.iterdir()) == names
    summary = json.loads((runs / names[0] / "train_summary.json").read_text())
    assert summary["devices"] == 2 and summary["spare_copies"] == 1
    for seed in (3, 5):
        with (
            np.load(runs / f"balance_jax_ppo_s{seed}" / "policy.npz") as two,
            np.load(trained.parent / "runs" / f"balance_jax_ppo_s{seed}" / "policy.npz") as one,
        ):
            for key in ("kernel_0", "bias_0", "kernel_1", "kernel_2", "bias_2"):
                np.testing.assert_allclose(two[key], one[key], atol=1e-4, err_msg=key)


def test_jax_devices_must_be_positive() -> None:
    data = json.loads(json.dumps(TINY))
    data["train"]["jax_devices"] = 0
    with pytest.raises(ConfigError, match=r"cfg.yaml: train.jax_devices must be >= 1, got 0"):
        config_from_dict(data, "cfg.yaml")


# -- jax_sac ------------------------------------------------------------------------


@needs_rejax
def test_sac_run_folders_and_numpy_policy_equal_rejax_deterministic_action(
    trained_sac: Path,
) -> None:
    """Each seed's policy.npz gives rejax's squashed Gaussian at zero noise, to 1e-6 in float32.

    The reference is rejax's own ``SquashedGaussianPolicy``: its distribution's
    mean through its tanh bijector, scaled to the action space.
    """
    import jax
    import jax.numpy as jnp
    from twolink_gym.training.config import load_config
    from twolink_gym.training.jax_export import NumpyPolicy
    from twolink_gym.training.jax_program import build_program
    from twolink_gym.training.jax_run_folders import load_states, seed_config

    cfg = load_config(trained_sac)
    dirs = [seed_config(cfg, s).run_dir for s in (1, 2)]
    for run in dirs:
        for name in ("config.yaml", "policy.npz", "agent.json", "train_state.npz"):
            assert (run / name).is_file(), name
        log = (run / "eval" / "time_log.csv").read_text().splitlines()
        assert [int(line.split(",")[0]) for line in log[1:]] == [64, 128]
        assert (run / "best" / "policy.npz").is_file()
    program = build_program(cfg)
    keys = jax.vmap(jax.random.PRNGKey)(jnp.asarray([1, 2], dtype=jnp.uint32))
    state, steps = load_states(program.init(keys), dirs)
    assert steps == 128
    obs = np.random.default_rng(0).normal(0.0, 2.0, size=(64, 6)).astype(np.float32)
    for i, run in enumerate(dirs):
        seed_state = jax.tree.map(lambda x, i=i: x[i], state)
        normalized = program.algo.normalize_obs(seed_state.obs_rms_state, jnp.asarray(obs))
        expected = program.algo.actor.apply(
            seed_state.actor_ts.params,
            normalized,
            method=lambda m, o: (
                m.action_loc + m.bij.forward(m._action_dist(o).loc) * m.action_scale
            ),
        )
        policy = NumpyPolicy.load(run / "policy.npz")
        assert policy.output == "tanh"
        # agent_kwargs.hidden_layer_sizes reached rejax's SAC (its own default is [64, 64])
        assert [k.shape for k in policy.kernels] == [(6, 16), (16, 8), (8, 2)]
        got = policy.predict(obs)[0]
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, np.asarray(expected, np.float32), atol=1e-6, rtol=0)
        assert np.abs(got).max() > 1e-3 and np.abs(got).max() <= 1.0


@needs_rejax
def test_sac_resume_without_config_continues_exactly(trained_sac: Path, tmp_path: Path) -> None:
    """A jax_sac group resumed from one seed's folder trains as one uninterrupted run does."""
    import shutil

    from twolink_gym.training.cli import main

    resumed = tmp_path / "resumed"
    shutil.copytree(trained_sac.parent / "runs", resumed / "runs")
    run = resumed / "runs" / "balance_jax_sac_s2"
    assert main(["train", "--resume", str(run), "--set", "train.total_timesteps=192"]) == 0
    straight = tmp_path / "straight"
    straight.mkdir()
    assert main(["train", str(_write_config(straight, TINY_SAC, total_timesteps=192))]) == 0
    for seed in (1, 2):
        name = f"balance_jax_sac_s{seed}"
        log = (resumed / "runs" / name / "eval" / "time_log.csv").read_text().splitlines()
        assert [int(line.split(",")[0]) for line in log[1:]] == [64, 128, 192]
        for file in ("policy.npz", "train_state.npz"):
            with (
                np.load(resumed / "runs" / name / file) as a,
                np.load(straight / "runs" / name / file) as b,
            ):
                assert sorted(a.files) == sorted(b.files)
                for key in a.files:
                    np.testing.assert_array_equal(a[key], b[key], err_msg=f"{name}/{file}: {key}")


def _files(folder: Path) -> dict[Path, bytes]:
    """Every file under ``folder`` with its bytes."""
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@needs_rejax
def test_sac_init_from_starts_where_the_source_stopped(trained_sac: Path, tmp_path: Path) -> None:
    """``train.init_from``: with the source's settings, what ``--resume`` of the source gives.

    The reference is the source group copied and resumed to the same step count;
    a run with pushes in its env starts from the same state and trains apart;
    the source's folders keep their bytes.
    """
    import shutil

    from twolink_gym.training.cli import main

    runs = trained_sac.parent / "runs"
    before = _files(runs)
    source = runs / "balance_jax_sac_s1"
    copy = tmp_path / "copy"
    shutil.copytree(runs, copy / "runs")
    resume = ["--resume", str(copy / "runs" / "balance_jax_sac_s1")]
    assert main(["train", *resume, "--set", "train.total_timesteps=192"]) == 0
    same = tmp_path / "same"
    same.mkdir()
    config = _write_config(
        same, TINY_SAC, total_timesteps=192, init_from=str(source), run_name="started"
    )
    assert main(["train", str(config)]) == 0
    pushed = json.loads(json.dumps(TINY_SAC))
    pushed["env"]["push_rate"] = 20.0
    other = tmp_path / "pushed"
    other.mkdir()
    config = _write_config(
        other, pushed, total_timesteps=192, init_from=str(source), run_name="pushed"
    )
    assert main(["train", str(config)]) == 0
    for seed in (1, 2):
        ref = copy / "runs" / f"balance_jax_sac_s{seed}"
        ours = same / "runs" / f"started_s{seed}"
        log = (ours / "eval" / "time_log.csv").read_text().splitlines()
        assert [int(line.split(",")[0]) for line in log[1:]] == [192]
        summary = json.loads((ours / "train_summary.json").read_text())
        assert summary["initialised_from"] == str(source)
        assert summary["initialised_at"] == 128 and summary["resumed_at"] is None
        assert summary["timesteps"] == 192
        with (
            np.load(ours / "train_state.npz") as a,
            np.load(ref / "train_state.npz") as b,
            np.load(other / "runs" / f"pushed_s{seed}" / "train_state.npz") as c,
        ):
            leaves = [k for k in a.files if k.startswith("leaf_")]
            assert leaves and leaves == [k for k in b.files if k.startswith("leaf_")]
            for key in [*leaves, "steps"]:
                np.testing.assert_array_equal(a[key], b[key], err_msg=f"seed {seed}: {key}")
            assert str(a["run_name"]) == "started"  # its own group, not the source's
            assert any(not np.array_equal(a[k], c[k]) for k in leaves)
    assert _files(runs) == before


@needs_rejax
def test_init_from_refusals_name_the_key_and_write_nothing(
    trained_sac: Path, tmp_path: Path
) -> None:
    from twolink_gym.training.jax_train import train_jax

    source = str(trained_sac.parent / "runs" / "balance_jax_sac_s1")

    def config(algo: str = "jax_sac", **train: object) -> Any:
        data = json.loads(json.dumps(TINY_SAC))
        data["algo"]["name"] = algo
        if algo == "sac":
            data["algo"]["hyperparams"] = {}
            data["train"].pop("seeds")
        data["train"].update(output_dir=str(tmp_path / "runs"), run_name="new", **train)
        return config_from_dict(data, "new.yaml")

    with pytest.raises(ConfigError, match=r"new.yaml: train.init_from starts a jax_\* run"):
        config("sac", init_from=source)
    with pytest.raises(ConfigError, match=r"train.init_from must be the folder of one seed"):
        config(init_from="")
    cases = [
        (config(init_from=str(tmp_path / "nowhere_s1")), r"train.init_from .*nowhere_s1"),
        (config(init_from=source, seeds=[1, 7]), r"trained the seeds \[1, 2\], not \[7\]"),
        (config(init_from=source, total_timesteps=128), r"already have 128 timesteps"),
    ]
    for cfg, match in cases:
        with pytest.raises((FileNotFoundError, ValueError), match=match):
            train_jax(cfg)
    assert not (tmp_path / "runs").exists()


@needs_rejax
def test_sac_stores_the_final_observation_where_the_time_limit_cuts() -> None:
    """Reach episodes of 3 steps: rejax's SAC stores the reset observation and done at the cut.

    Ours stores the step's own observation and ``terminated`` (never, on reach);
    every other transition, and every reward, is rejax's own (same keys, same
    twin; equal to float32 rounding: rejax steps through the twin's jitted
    ``step``, ours through ``step_env`` and ``reset_env``). The new episodes
    after the cut are drawn with other keys, so ours continues from rejax's
    (env states, observations and running statistics).
    """
    import jax
    import rejax
    from twolink_gym.training.jax_program import build_program

    data = json.loads(json.dumps(TINY_SAC))
    data["env"] = {"task": "reach", "max_episode_steps": 3}
    data["train"].update(n_envs=4, seeds=None, seed=0, total_timesteps=24, eval_freq=24)
    algo = build_program(config_from_dict(data, "cfg.yaml")).algo
    ts_ours = ts_rejax = algo.init_state(jax.random.PRNGKey(0))
    close = {"atol": 1e-5, "rtol": 0}
    for t in range(6):
        ts_ours, ours = algo.collect_transitions(ts_ours)
        ts_rejax, theirs = rejax.SAC.collect_transitions(algo, ts_rejax)
        np.testing.assert_allclose(np.asarray(ours.obs), np.asarray(theirs.obs), **close)
        np.testing.assert_allclose(np.asarray(ours.reward), np.asarray(theirs.reward), **close)
        last_rejax = np.asarray(ts_rejax.last_obs)
        cut = t % 3 == 2
        if not cut:  # at the cut each draws its new episodes with keys of its own
            np.testing.assert_allclose(np.asarray(ts_ours.last_obs), last_rejax, **close)
        assert not np.asarray(ours.done).any()
        assert np.asarray(theirs.done).all() == cut and np.asarray(theirs.done).any() == cut
        # rejax's next_obs is the observation the envs continue from (a new episode at the cut)
        np.testing.assert_array_equal(np.asarray(theirs.next_obs), last_rejax)
        gap = np.abs(np.asarray(ours.next_obs) - np.asarray(theirs.next_obs)).max(axis=1)
        assert np.all(gap > 1e-2) if cut else np.all(gap < 1e-5), (t, gap)
        ts_ours = ts_ours.replace(
            last_obs=ts_rejax.last_obs,
            env_state=ts_rejax.env_state,
            obs_rms_state=ts_rejax.obs_rms_state,
            rew_rms_state=ts_rejax.rew_rms_state,
        )


@needs_rejax
def test_hyperparameter_table_is_rejax_sac() -> None:
    """jax_sac takes rejax's SAC fields, less the reserved and the ones without effect here."""
    import rejax
    from twolink_gym.training.jax_hyperparams import (
        HYPERPARAMETERS,
        NOT_APPLICABLE,
        RESERVED,
        field_kinds,
    )

    kinds = field_kinds(rejax.SAC)
    assert set(NOT_APPLICABLE["jax_sac"]) <= set(kinds)
    expected = {k: v for k, v in kinds.items() if k not in NOT_APPLICABLE["jax_sac"]}
    assert HYPERPARAMETERS["jax_sac"] == expected
    assert set(RESERVED) | set(kinds) == {f.name for f in dataclasses.fields(rejax.SAC)} | {
        "agent_kwargs"
    }


def test_sac_config_errors_name_the_key() -> None:
    """target_entropy_ratio (discrete only) and PPO's log_std_init are refused by name."""
    for key, match in (
        ("target_entropy_ratio", "target_entropy_ratio does not apply to jax_sac"),
        ("log_std_init", r"unknown key\(s\) \['log_std_init'\] for jax_sac"),
    ):
        data = json.loads(json.dumps(TINY_SAC))
        data["algo"]["hyperparams"][key] = 0.5
        with pytest.raises(ConfigError, match=match) as info:
            config_from_dict(data, "cfg.yaml")
        assert "cfg.yaml" in str(info.value)


@needs_rejax
def test_sac_fill_buffer_below_batch_size_is_refused() -> None:
    from twolink_gym.training.jax_program import build_program

    data = json.loads(json.dumps(TINY_SAC))
    data["algo"]["hyperparams"].update(fill_buffer=16, batch_size=32)
    with pytest.raises(ValueError, match=r"fill_buffer = 16 must be at least .*batch_size = 32"):
        build_program(config_from_dict(data, "cfg.yaml"))


def test_evaluation_means_are_taken_in_float64() -> None:
    """19 successes in 20 episodes log as 0.95 exactly (a float32 mean gives 0.9499999881)."""
    from twolink_gym.training.jax_train import mean64

    success = np.array([1.0] * 19 + [0.0], dtype=np.float32)
    assert float(np.mean(success)) != 0.95  # the float32 mean this guards against
    assert mean64(success) == 0.95
    assert mean64(np.array([1.0] * 18 + [0.0] * 2, dtype=np.float32)) == 0.9
