"""From a policy string of the CLI to an object with SB3's ``predict`` (done once, here).

A policy string is the name of a classical controller
(:data:`twolink_gym.controllers.CONTROLLERS`, e.g. ``"lqr"``), a shipped agent
``pretrained:<name>`` (:mod:`twolink_gym.pretrained`, e.g.
``"pretrained:reach_sac"``), or a path to a trained agent: a run folder (holding
``model.zip``; a run's ``best/`` folder is one too) or a model ``.zip`` (a final
model or a checkpoint). An agent's VecNormalize statistics, if it was trained
with them, are loaded from beside the model and applied frozen.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from numpy.typing import NDArray
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecNormalize
from twolink_gym.training.algorithms import ALGORITHMS, BackendNotInstalledError
from twolink_gym.training.config import ConfigError, EnvConfig, config_from_dict
from twolink_gym.training.envs import goal_split, load_vec_normalize
from twolink_gym.training.export import POLICY_FILE
from twolink_gym.training.normalization import ObservationStatistics
from twolink_gym.training.train import (
    BEST_DIR,
    CONFIG_FILE,
    MODEL_FILE,
    VECNORM_FILE,
    _checkpoint_stats,
)

from twolink_gym import pretrained
from twolink_gym.controllers import CONTROLLERS, controllers_for

__all__ = [
    "PRETRAINED_PREFIX",
    "LoadedPolicy",
    "PretrainedAgent",
    "SB3Agent",
    "applicable_controllers",
    "load_policy",
    "load_pretrained",
]

#: ``load`` overrides for a model that will only act: no replay buffer to allocate
#: (and HER's buffer, which needs the training env, is not rebuilt).
ACT_ONLY: dict[str, Any] = {
    "replay_buffer_class": None,
    "replay_buffer_kwargs": {},
    "buffer_size": 1,
}

#: The policy-string prefix of the agents shipped in :mod:`twolink_gym.pretrained`.
PRETRAINED_PREFIX = "pretrained:"


class SB3Agent:
    """A trained SB3 model with frozen observation normalisation, behind ``predict``.

    Parameters
    ----------
    model : BaseAlgorithm or policy
        Anything with SB3's ``predict`` (a model, an SB3 or SBX policy).
    vec_normalize : VecNormalize or ObservationStatistics, optional
        Statistics to normalise observations with (never updated here).
    observation_view : callable, optional
        Maps the env's flat observations ``(n, d)`` to what the model was trained
        on (a :class:`~twolink_gym.training.goal_env.GoalSplit` for a goal-conditioned agent).
    frame_stack : int
        Observations the model sees side by side (``env.frame_stack`` of its
        config), stacked as SB3's ``VecFrameStack`` does (newest last, zeros
        before an episode's first) before the normalisation. The stack travels
        in ``predict``'s ``state`` (pass it back, with ``episode_start``).
    """

    def __init__(
        self,
        model: BaseAlgorithm | Any,
        vec_normalize: VecNormalize | ObservationStatistics | None = None,
        observation_view: Callable[[NDArray[np.float32]], Any] | None = None,
        frame_stack: int = 1,
    ) -> None:
        self.model = model
        self.vec_normalize = vec_normalize
        self.observation_view = observation_view
        self.frame_stack = frame_stack

    def predict(
        self,
        observation: NDArray[np.float32],
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
    ) -> tuple[NDArray[np.float32], Any]:
        """The model's action for a raw observation (or batch), like SB3's ``predict``."""
        obs: Any = np.asarray(observation, dtype=np.float32)
        if self.observation_view is not None:
            obs = self.observation_view(obs)
        stack = None
        if self.frame_stack > 1:
            stack, state = state if state is not None else (None, None)
            stack = self._stack(obs, stack, episode_start)
            obs = stack if obs.ndim == 2 else stack[0]
        if self.vec_normalize is not None:
            obs = self.vec_normalize.normalize_obs(obs)
        action, state = self.model.predict(
            obs, state=state, episode_start=episode_start, deterministic=deterministic
        )
        if self.frame_stack > 1:
            state = (stack, state)
        return np.asarray(action, dtype=np.float32), state

    def _stack(
        self, obs: NDArray[np.float32], stack: NDArray[np.float32] | None, episode_start: Any
    ) -> NDArray[np.float32]:
        """The next frame stack ``(n, frame_stack * d)`` after observations ``obs`` ``(n, d)`` or ``(d,)``."""
        frames = obs.reshape(-1, obs.shape[-1])
        n, d = frames.shape
        size = self.frame_stack * d
        if stack is None or stack.shape != (n, size):
            stack, starts = np.zeros((n, size), dtype=np.float32), np.ones(n, dtype=bool)
        else:
            starts = np.zeros(n, dtype=bool)
            if episode_start is not None:
                starts = np.asarray(episode_start, dtype=bool).reshape(n)
            stack = np.roll(stack, -d, axis=-1)
        stack[starts] = 0.0
        stack[:, -d:] = frames
        return stack


@dataclasses.dataclass
class LoadedPolicy:
    """A policy ready to run, with the label it gets in tables and plots.

    Attributes
    ----------
    label : str
        ``"lqr"``, or ``"<algo> (<run folder>)"`` for an agent.
    kind : str
        ``"controller"`` or ``"agent"``.
    predictor : object
        Has SB3's ``predict(obs, state, episode_start, deterministic)``.
    run_dir : Path or None
        The agent's run folder (for its learning curve).
    """

    label: str
    kind: str
    predictor: Any
    run_dir: Path | None = None


def applicable_controllers(task: str, actuation: str = "full") -> list[str]:
    """Names of the classical controllers that apply to ``task`` and drive ``actuation``."""
    return sorted(controllers_for(task, actuation))


def _run_config(run_dir: Path) -> Any:
    """The config of a run or agent folder (``None`` without ``config.yaml``).

    Raises
    ------
    BackendNotInstalledError
        If the config names an ``sbx_*`` algorithm and JAX is not installed
        (an ``ImportError`` naming the ``jax`` extra and the file).
    """
    path = run_dir / CONFIG_FILE
    if not path.exists():
        return None
    try:
        return config_from_dict(yaml.safe_load(path.read_text()), str(path))
    except ConfigError as exc:
        if isinstance(exc.__cause__, BackendNotInstalledError):
            raise BackendNotInstalledError(str(exc)) from exc
        raise


def _load_exported_sbx(folder: Path, run_cfg: Any, shown: str) -> LoadedPolicy:
    """An SBX agent folder written by ``twolink export`` (``policy.msgpack``, ``obs_stats.npz``).

    The policy comes from :func:`~twolink_gym.training.export.load_sbx_policy`;
    the statistics, if the folder has them, are applied before it.
    """
    from twolink_gym.training.algorithms import is_sbx
    from twolink_gym.training.export import OBS_STATS_FILE, SBX_POLICY_FILE, load_sbx_policy
    from twolink_gym.training.normalization import ObservationStatistics

    if not is_sbx(run_cfg.algo.name):
        raise ValueError(
            f"policy {shown!r}: its card says backend 'sbx', but its config's algo.name is "
            f"{run_cfg.algo.name!r}"
        )
    try:
        network = load_sbx_policy(
            run_cfg, (folder / SBX_POLICY_FILE).read_bytes(), str(folder / SBX_POLICY_FILE)
        )
    except BackendNotInstalledError as exc:
        raise BackendNotInstalledError(
            f"policy {shown!r} is an SBX (JAX) agent ({run_cfg.algo.name}): {exc}"
        ) from exc
    stats_path = folder / OBS_STATS_FILE
    stats = ObservationStatistics.load(stats_path) if stats_path.is_file() else None
    if run_cfg.env.normalize_obs and stats is None:
        raise ValueError(f"policy {shown!r}: trained with VecNormalize but {stats_path} is missing")
    agent = SB3Agent(network, stats, None, run_cfg.env.frame_stack)
    return LoadedPolicy(f"{run_cfg.algo.name} ({folder.name})", "agent", agent, folder)


def _load_exported_numpy(folder: Path, run_cfg: Any, shown: str) -> LoadedPolicy:
    """A numpy agent (``policy.npz``): a ``jax_*`` run or export, or an imitation-trained one.

    The policy normalises the raw observations itself
    (:class:`~twolink_gym.training.jax_export.NumpyPolicy`).
    """
    from twolink_gym.training.algorithms import is_numpy_agent
    from twolink_gym.training.jax_export import JAX_POLICY_FILE, NumpyPolicy

    if not is_numpy_agent(run_cfg.algo.name):
        raise ValueError(
            f"policy {shown!r}: its card says backend 'numpy', but its config's algo.name is "
            f"{run_cfg.algo.name!r}"
        )
    network = NumpyPolicy.load(folder / JAX_POLICY_FILE)
    agent = SB3Agent(network, None, None, run_cfg.env.frame_stack)
    label = f"{folder.parent.name}/{folder.name}" if folder.name == BEST_DIR else folder.name
    return LoadedPolicy(f"{run_cfg.algo.name} ({label})", "agent", agent, folder)


def _load_exported(folder: Path, env_cfg: EnvConfig, display: str | None = None) -> LoadedPolicy:
    """An agent folder written by ``twolink export`` (a policy file, no ``model.zip``).

    The card's backend (:func:`twolink_gym.pretrained.backend_of`) says which
    policy file the folder holds. For ``policy.pt`` both layouts load: the
    current one (the policy normalises, and for a goal-conditioned agent
    splits, the raw observations itself:
    :mod:`twolink_gym.training.normalization`) and the earlier one (a policy on
    normalised observations beside ``vecnormalize.pkl``). An SBX agent's
    ``policy.msgpack`` loads with its ``obs_stats.npz`` applied before it.
    """
    from twolink_gym.training.normalization import is_normalizing

    shown = display or str(folder)
    run_cfg = _run_config(folder)
    if run_cfg is None:
        raise ValueError(f"policy {shown!r}: {folder / CONFIG_FILE} is missing")
    _check_same_env(shown, run_cfg.env, env_cfg, folder / CONFIG_FILE)
    if pretrained.backend_of(folder) == "sbx":
        return _load_exported_sbx(folder, run_cfg, shown)
    if pretrained.backend_of(folder) == "numpy":
        return _load_exported_numpy(folder, run_cfg, shown)
    algo = ALGORITHMS[run_cfg.algo.name]
    policy_class = algo.policy_aliases.get(run_cfg.algo.policy)
    if policy_class is None:
        raise ValueError(
            f"policy {shown!r}: {run_cfg.algo.policy!r} is not one of "
            f"{sorted(algo.policy_aliases)} of {run_cfg.algo.name}"
        )
    network = policy_class.load(str(folder / POLICY_FILE), device="cpu")
    stats = folder / VECNORM_FILE
    if is_normalizing(network):
        if stats.exists():
            raise ValueError(
                f"policy {shown!r}: {POLICY_FILE} normalises its observations itself, but "
                f"{stats} is there too; remove one of them"
            )
        agent = SB3Agent(network, None, None, run_cfg.env.frame_stack)
        return LoadedPolicy(f"{run_cfg.algo.name} ({folder.name})", "agent", agent, folder)
    goal_view = run_cfg.env.goal_observation
    agent_env = dataclasses.replace(env_cfg, goal_observation=goal_view)
    vec = load_vec_normalize(stats, agent_env) if stats.exists() else None
    if run_cfg.env.normalize_obs and vec is None:
        raise ValueError(f"policy {shown!r}: trained with VecNormalize but {stats} is missing")
    view = goal_split(agent_env)[0] if goal_view else None
    agent = SB3Agent(network, vec, view, run_cfg.env.frame_stack)
    return LoadedPolicy(f"{run_cfg.algo.name} ({folder.name})", "agent", agent, folder)


def _shown(value: Any) -> Any:
    """A config value as the config file writes it (tuples as lists)."""
    return list(value) if isinstance(value, tuple) else value


def _env_differences(trained: EnvConfig, env_cfg: EnvConfig) -> list[str]:
    """``"key: <trained> (trained) vs <evaluation> (evaluation)"`` for each differing entry."""
    mine = trained.nominal().make_kwargs() | {"max_episode_steps": trained.max_episode_steps}
    theirs = env_cfg.nominal().make_kwargs() | {"max_episode_steps": env_cfg.max_episode_steps}
    return [
        f"{key}: {_shown(mine.get(key))!r} (trained) vs {_shown(theirs.get(key))!r} (evaluation)"
        for key in sorted(set(mine) | set(theirs))
        if mine.get(key) != theirs.get(key)
    ]


def _check_same_env(
    shown: str, trained: EnvConfig, env_cfg: EnvConfig, own_config: Path | None = None
) -> None:
    """Raise ``ValueError`` if an agent trained on ``trained`` is run on another env.

    The robustness conditions (randomisation, noise, actuator models) may
    differ: the envs are compared through :meth:`EnvConfig.nominal`. So may
    ``frame_stack``: the agent stacks its observations itself (:class:`SB3Agent`).
    The message lists only the entries that differ, with both values, and
    points to the agent's own config (``own_config``).

    Parameters
    ----------
    shown : str
        The policy as the user wrote it (``pretrained:NAME``, a folder, a file).
    trained, env_cfg : EnvConfig
        The agent's training env and the evaluation env.
    own_config : Path, optional
        The agent's ``config.yaml``.
    """
    differences = _env_differences(trained, env_cfg)
    if not differences:
        return
    if shown.startswith(PRETRAINED_PREFIX):
        hint = "omit the config, the agent carries its own"
        if own_config is not None:
            hint += f" ({own_config})"
    elif own_config is not None:
        hint = f"evaluate it with its own config {own_config}"
    else:
        hint = "evaluate it with the config it was trained with"
    if trained.task != env_cfg.task:
        raise ValueError(
            f"policy {shown!r} was trained on task {trained.task!r}, "
            f"but the evaluation task is {env_cfg.task!r}; {hint}"
        )
    raise ValueError(
        f"policy {shown!r} was trained on another environment than the evaluation one: "
        + "; ".join(differences)
        + f". {hint[0].upper()}{hint[1:]}"
    )


def _load_agent(path: Path, env_cfg: EnvConfig, display: str | None = None) -> LoadedPolicy:
    if (
        path.is_dir()
        and pretrained.policy_file(path).is_file()
        and not (path / MODEL_FILE).exists()
    ):
        return _load_exported(path, env_cfg, display)
    if path.is_dir():
        run_dir, model_path, stats = path, path / MODEL_FILE, path / VECNORM_FILE
    else:
        model_path = path
        run_dir = path.parent.parent if path.parent.name == "checkpoints" else path.parent
        stats = _checkpoint_stats(path) or (path.parent / VECNORM_FILE)
    if not model_path.exists():
        raise ValueError(f"policy {str(path)!r}: no model file {model_path}")
    run_cfg = _run_config(run_dir)
    if run_cfg is not None:
        _check_same_env(display or str(path), run_cfg.env, env_cfg, run_dir / CONFIG_FILE)
    names = [run_cfg.algo.name] if run_cfg is not None else sorted(ALGORITHMS)
    errors = []
    for name in names:
        try:
            model = ALGORITHMS[name].load(str(model_path), device="cpu", **ACT_ONLY)
            break
        except Exception as exc:  # any failure: try the next algorithm class
            errors.append(f"{name}: {exc}")
    else:
        raise ValueError(f"policy {str(path)!r}: could not load the model ({'; '.join(errors)})")
    # the agent's own view of the env (goal-conditioned or flat), as it was trained
    goal_view = run_cfg is not None and run_cfg.env.goal_observation
    agent_env = dataclasses.replace(env_cfg, goal_observation=goal_view)
    vec = load_vec_normalize(stats, agent_env) if stats is not None and stats.exists() else None
    if run_cfg is not None and (run_cfg.env.normalize_obs and vec is None):
        raise ValueError(f"policy {str(path)!r}: trained with VecNormalize but {stats} is missing")
    view = goal_split(agent_env)[0] if goal_view else None
    # a run's best model is labelled with its run: "ppo (reach_ppo_s0/best)"
    folder = f"{run_dir.parent.name}/{BEST_DIR}" if run_dir.name == BEST_DIR else run_dir.name
    label = f"{name} ({folder})"
    stack = run_cfg.env.frame_stack if run_cfg is not None else 1
    return LoadedPolicy(label, "agent", SB3Agent(model, vec, view, stack), run_dir)


class PretrainedAgent:
    """A shipped agent: acts on raw observations and knows the env it was trained for.

    Made by :func:`load_pretrained` (``twolink_gym.load_pretrained``).

    Attributes
    ----------
    name : str
        The agent's name, e.g. ``"balance_ppo"``.
    task, actuation, algorithm : str
        Its task (``"balance"``), arm (``"full"``, ``"acrobot"``, ``"pendubot"``)
        and learning algorithm (``"ppo"``, ``"sac"``).
    env_id : str
        The per-task Gymnasium id of its task and actuation, e.g.
        ``"TwoLinkBalance-v0"``, ``"TwoLinkPendubotSwingup-v0"``.
    env_kwargs : dict
        Further ``gym.make`` keywords of the env it was trained and evaluated on
        (empty when that env has the task's defaults).
    config : RunConfig
        Its resolved training config (``config.yaml`` of its folder).
    folder : Path
        Its folder in :mod:`twolink_gym.pretrained`.
    policy : BasePolicy
        The SB3 policy network (normalising its observations itself); for an
        SBX agent (card ``"backend": "sbx"``) the SBX policy, which acts on
        normalised observations (:meth:`predict` normalises them first).
    """

    def __init__(self, name: str, folder: Path, config: Any, predictor: SB3Agent) -> None:
        from twolink_gym.training.envs import env_id_for, gym_make_kwargs

        self.name = name
        self.folder = folder
        self.config = config
        self.task: str = config.env.task
        self.actuation: str = config.env.actuation
        self.algorithm: str = config.algo.name
        self.env_id = env_id_for(self.task, self.actuation)
        self.env_kwargs: dict[str, Any] = gym_make_kwargs(config.env)
        self._predictor = predictor
        self.policy = predictor.model

    def make_env(self, **overrides: Any) -> Any:
        """``gym.make(env_id, **env_kwargs)``, with ``overrides`` replacing or adding keywords.

        E.g. ``agent.make_env(render_mode="rgb_array")``.
        """
        import gymnasium as gym

        return gym.make(self.env_id, **{**self.env_kwargs, **overrides})

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
    ) -> tuple[NDArray[np.float32], Any]:
        """The agent's action for a raw observation ``(d,)`` or a batch ``(n, d)``, like SB3's ``predict``.

        Parameters
        ----------
        observation : array_like
            Observations of :meth:`make_env`'s env, as ``reset``/``step`` return them.
        state, episode_start
            As in SB3 (an agent that stacks frames keeps its stack in ``state``:
            pass it back).
        deterministic : bool
            The policy's mean action (true, the default) or a sample.

        Returns
        -------
        action : ndarray, shape (2,) or (n, 2)
            In the env's action space ``[-1, 1]``.
        state
            Pass it back into the next call.
        """
        return self._predictor.predict(
            observation, state=state, episode_start=episode_start, deterministic=deterministic
        )

    def __repr__(self) -> str:
        return (
            f"PretrainedAgent({self.name!r}, algorithm={self.algorithm!r}, "
            f"env_id={self.env_id!r}, env_kwargs={self.env_kwargs!r})"
        )


def load_pretrained(name: str) -> PretrainedAgent:
    """A shipped agent, ready to act on raw observations of its env.

    Parameters
    ----------
    name : str
        One of :func:`twolink_gym.pretrained.available` (e.g. ``"balance_ppo"``).

    Returns
    -------
    PretrainedAgent

    Raises
    ------
    ValueError
        If no agent ``name`` is shipped (listing those that are).

    Examples
    --------
    >>> agent = load_pretrained("balance_ppo")  # doctest: +SKIP
    >>> env = agent.make_env()  # doctest: +SKIP
    >>> obs, info = env.reset(seed=0)  # doctest: +SKIP
    >>> action, _ = agent.predict(obs, deterministic=True)  # doctest: +SKIP
    """
    folder = pretrained.pretrained_dir(name)
    run_cfg = _run_config(folder)
    if run_cfg is None:
        raise ValueError(f"pretrained agent {name!r}: {folder / CONFIG_FILE} is missing")
    loaded = _load_agent(folder, run_cfg.env, f"{PRETRAINED_PREFIX}{name}")
    return PretrainedAgent(name, folder, run_cfg, loaded.predictor)


def load_policy(spec: str, env_cfg: EnvConfig, env: Any) -> LoadedPolicy:
    """Map a policy string to a :class:`LoadedPolicy`.

    Parameters
    ----------
    spec : str
        A controller name (see :data:`~twolink_gym.controllers.CONTROLLERS`),
        ``pretrained:<name>``, a run folder, or a model ``.zip``.
    env_cfg : EnvConfig
        The environment the policy will run on.
    env : object
        An env of ``env_cfg`` (controllers take task, dt and torque limits from it).

    Raises
    ------
    ValueError
        If ``spec`` is neither a controller that applies to the task nor a model
        trained on it.
    """
    if spec in CONTROLLERS:
        cls = CONTROLLERS[spec]
        if env_cfg.actuation not in cls.actuations:
            raise ValueError(
                f"controller {spec!r} cannot drive env.actuation {env_cfg.actuation!r}; "
                f"it drives {list(cls.actuations)}; controllers for this task and actuation "
                f"are {applicable_controllers(env_cfg.task, env_cfg.actuation)}"
            )
        if not cls.applies_to(env_cfg.task):
            raise ValueError(
                f"controller {spec!r} does not apply to task {env_cfg.task!r}; "
                f"controllers for it are {applicable_controllers(env_cfg.task, env_cfg.actuation)}"
            )
        return LoadedPolicy(spec, "controller", cls.from_env(env))
    if spec.startswith(PRETRAINED_PREFIX):
        name = spec[len(PRETRAINED_PREFIX) :]
        loaded = _load_agent(pretrained.pretrained_dir(name), env_cfg, spec)
        return dataclasses.replace(loaded, label=f"{loaded.label.split(' ')[0]} ({spec})")
    path = Path(spec)
    if path.exists():
        return _load_agent(path, env_cfg)
    raise ValueError(
        f"policy {spec!r} is neither a controller ({sorted(CONTROLLERS)}), a pretrained agent "
        f"(pretrained:NAME with NAME in {pretrained.available()}) nor an existing run folder "
        "or model .zip"
    )
