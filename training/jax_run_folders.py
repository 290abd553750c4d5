"""The run folders of a ``jax_*`` training: one per seed, its resume state, policy and time log.

Each seed gets a run folder in the layout of SB3 runs::

    config.yaml          the config of that seed alone (train.seed: S, train.seeds: null)
    policy.npz           the agent as a numpy forward pass (jax_export)
    agent.json           its card (backend "numpy"; success null until exported)
    train_state.npz      the rejax train state of the last segment (for --resume)
    eval/evaluations.npz periodic evaluations (timesteps, results, ep_lengths, successes)
    eval/time_log.csv    each periodic evaluation with its cumulative wall times
    best/                the policy of the best periodic evaluation (train.save_best)
    tb/run_1/            TensorBoard scalars
    train_summary.json   timesteps, wall time (compile included), compile time, machine

A train state is saved as its leaves (``jax.tree.leaves``) of one seed, in
order, with the step count; :func:`load_states` stacks the seeds' leaves back
into the tree of a template state.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from twolink_gym.training.config import RunConfig
from twolink_gym.training.jax_export import JAX_POLICY_FILE, NumpyPolicy

from twolink_gym.pretrained import BACKEND_KEY, CARD_FILE

__all__ = [
    "JAX_ARTIFACTS",
    "STATE_FILE",
    "TimeLog",
    "best_row",
    "check_folders",
    "clear_run",
    "imitation_config",
    "init_dirs",
    "is_jax_run",
    "load_states",
    "rank",
    "resume_config",
    "save_best",
    "save_state",
    "seed_config",
    "seed_leaves",
    "seeds_of",
    "write_policy",
]

#: The rejax train state of one seed after the last segment (``--resume``).
STATE_FILE = "train_state.npz"

#: What a ``jax_*`` training writes into a run folder: what ``--overwrite`` replaces.
JAX_ARTIFACTS = (
    "config.yaml",
    JAX_POLICY_FILE,
    CARD_FILE,
    STATE_FILE,
    "train_summary.json",
    "eval",
    "best",
    "tb",
    "compare",
    "evaluation",
    "robustness",
)


def seed_config(cfg: RunConfig, seed: int) -> RunConfig:
    """The config of seed ``seed`` alone: ``train.seed`` set, ``train.seeds`` cleared.

    Its :attr:`~RunConfig.run_dir` is that seed's run folder (``train.run_name``
    with ``_s<seed>`` added when it names the folder of several seeds).
    """
    tc = cfg.train
    name = tc.run_name
    if name is not None and len(seeds_of(cfg)) > 1:
        name = f"{name}_s{seed}"
    train = dataclasses.replace(tc, seed=seed, seeds=None, run_name=name)
    return dataclasses.replace(cfg, train=train)


def imitation_config(
    cfg: RunConfig,
    algorithm: str,
    seed: int,
    steps: int,
    settings: Mapping[str, Any],
    folder: Path,
) -> RunConfig:
    """The config of a network that ``algorithm`` trained by imitation, observing ``cfg``'s env.

    Parameters
    ----------
    cfg : RunConfig
        The config whose env the network observes: the agent's env is its nominal
        one (:meth:`~twolink_gym.training.config.EnvConfig.nominal`), with
        ``normalize_obs`` off (the network normalises its inputs itself).
    algorithm : str
        An imitation name (:data:`~twolink_gym.training.algorithms.IMITATION_ALGORITHMS`).
    seed : int
        The training seed (``train.seed``).
    steps : int
        The env steps labelled for training (``train.total_timesteps``).
    settings : mapping
        The settings of the training (``algo.hyperparams``; keys of
        :data:`~twolink_gym.training.algorithms.IMITATION_SETTINGS`).
    folder : Path
        The agent's folder (``train.output_dir`` and ``train.run_name``).

    Raises
    ------
    ConfigError
        If the result is not a valid config (an unknown algorithm or setting):
        checked as a config file is.
    """
    from twolink_gym.training.config import AlgoConfig, config_from_dict

    env = dataclasses.replace(cfg.env.nominal(), normalize_obs=False)
    train = dataclasses.replace(
        cfg.train,
        seed=seed,
        seeds=None,
        total_timesteps=steps,
        eval_v3_pushes_seeds=None,
        output_dir=str(folder.parent),
        run_name=folder.name,
    )
    algo = AlgoConfig(name=algorithm, policy="MlpPolicy", hyperparams=dict(settings))
    made = dataclasses.replace(cfg, env=env, algo=algo, train=train)
    return config_from_dict(made.to_dict(), f"the config of {folder}")


def seeds_of(cfg: RunConfig) -> list[int]:
    """The seeds of ``cfg``: ``train.seeds``, or ``[train.seed]`` when it is not set."""
    return list(cfg.train.seeds) if cfg.train.seeds else [cfg.train.seed]


def seed_leaves(ts: Any, i: int) -> list[np.ndarray]:
    """The leaves of seed ``i`` of the stacked train states ``ts``, as numpy arrays."""
    import jax

    return [np.asarray(leaf[i]) for leaf in jax.tree.leaves(ts)]


def save_state(
    path: Path, leaves: Sequence[np.ndarray], steps: int, group: RunConfig | None = None
) -> None:
    """Write one seed's train state ``leaves`` and its step count to ``path`` (atomically).

    ``group`` (the config of all the seeds trained together) is recorded as
    ``seeds`` and ``run_name`` (absent when ``train.run_name`` is not set):
    what :func:`resume_config` needs to rebuild the group from one seed's folder.
    """
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        arrays: dict[str, Any] = {f"leaf_{j}": v for j, v in enumerate(leaves)}
        if group is not None:
            arrays["seeds"] = np.asarray(seeds_of(group), np.int64)
            if group.train.run_name is not None:
                arrays["run_name"] = np.asarray(group.train.run_name)
        np.savez(f, steps=np.int64(steps), **arrays)
    tmp.replace(path)


def is_jax_run(folder: Path) -> bool:
    """Whether ``folder`` is a ``jax_*`` run folder that can be resumed (holds :data:`STATE_FILE`)."""
    return folder.is_dir() and (folder / STATE_FILE).is_file()


def resume_config(run: str | Path, overrides: Sequence[str] = ()) -> RunConfig:
    """The config of the seed group that trained the run folder ``run``, to resume it.

    ``run`` is one seed's run folder; the config is that of every seed trained
    together with it (its ``config.yaml`` with ``train.seeds`` and
    ``train.run_name`` read from its :data:`STATE_FILE`), with
    ``train.output_dir`` set to the folder that holds ``run`` (so it resumes
    from any working folder) and ``overrides`` (``section.key=value``) applied
    on top. ``--resume`` of one seed's folder so continues the whole group: its
    seeds are one computation, and continuing them together gives what one
    uninterrupted run gives.

    Raises
    ------
    FileNotFoundError
        If ``run`` is not a ``jax_*`` run folder with ``config.yaml`` and
        :data:`STATE_FILE`, or a seed folder of its group is missing.
    ValueError
        If the state file does not record its group (or the folder was renamed).
    """
    from twolink_gym.training.config import apply_overrides, config_from_dict

    folder = Path(run)
    path = folder / "config.yaml"
    if not is_jax_run(folder) or not path.is_file():
        raise FileNotFoundError(
            f"--resume {run}: expected the run folder of one seed of a jax_* run "
            f"(holding config.yaml and {STATE_FILE})"
        )
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("train"), dict):
        return config_from_dict(data, str(path))  # raises, naming the file
    with np.load(folder / STATE_FILE, allow_pickle=False) as state:
        if "seeds" not in state.files:
            raise ValueError(
                f"--resume {run}: {folder / STATE_FILE} does not record the seeds trained "
                "together with it; give the config it was trained with: "
                f"twolink train CONFIG --resume {run}"
            )
        seeds = [int(s) for s in state["seeds"]]
        run_name = str(state["run_name"]) if "run_name" in state.files else None
    seed = int(data["train"].get("seed", 0))
    train = data["train"]
    train["output_dir"] = str(folder.parent)
    if len(seeds) > 1:
        train.update(seeds=seeds, run_name=run_name)
    else:
        train.update(seeds=None, run_name=folder.name)
    source = str(path)
    if overrides:
        data = apply_overrides(data, list(overrides), source)
        source = f"{source} (with overrides {list(overrides)})"
    cfg = config_from_dict(data, source)
    expected = seed_config(cfg, seed).run_dir
    if len(seeds) > 1 and expected.name != folder.name:
        raise ValueError(
            f"--resume {run}: seed {seed} of the group {seeds} trains in a folder named "
            f"{expected.name!r}, not {folder.name!r} (renamed?); give the config: "
            f"twolink train CONFIG --resume {run}"
        )
    missing = [str(d) for d in (seed_config(cfg, s).run_dir for s in seeds_of(cfg))]
    missing = [d for d in missing if not is_jax_run(Path(d))]
    if missing:
        raise FileNotFoundError(
            f"--resume {run}: the seeds {seeds_of(cfg)} were trained together and resume "
            f"together; their run folder(s) {missing} hold no {STATE_FILE}"
        )
    return cfg


def init_dirs(cfg: RunConfig) -> list[Path]:
    """The run folders ``train.init_from`` starts ``cfg``'s seeds from, in seed order.

    Raises
    ------
    FileNotFoundError, ValueError
        Naming ``train.init_from``: not a ``jax_*`` run's seed folder, or a
        group without one of ``cfg``'s seeds.
    """
    init_from = cfg.train.init_from
    if init_from is None:
        raise ValueError(f"{cfg.source}: train.init_from is not set")
    key = f"{cfg.source}: train.init_from {init_from}"
    try:
        source = resume_config(init_from)
    except (FileNotFoundError, ValueError) as exc:
        raise type(exc)(f"{key}: {exc}") from exc
    available = seeds_of(source)
    missing = [s for s in seeds_of(cfg) if s not in available]
    if missing:
        raise ValueError(
            f"{key}: its group trained the seeds {available}, not {missing} of train.seeds "
            f"{seeds_of(cfg)}"
        )
    dirs = [seed_config(source, s).run_dir for s in seeds_of(cfg)]
    own = {seed_config(cfg, s).run_dir.resolve() for s in seeds_of(cfg)}
    if any(d.resolve() in own for d in dirs):
        raise ValueError(f"{key}: is this run's own folder; continue a run with --resume")
    return dirs


def load_states(template: Any, run_dirs: Sequence[Path], what: str = "--resume") -> tuple[Any, int]:
    """The stacked train states saved in ``run_dirs`` and their common step count.

    ``what`` starts the errors (``--resume``, or ``train.init_from``).
    """
    import jax
    import jax.numpy as jnp

    leaves, treedef = jax.tree.flatten(template)
    stacked: list[list[np.ndarray]] = [[] for _ in leaves]
    steps = set()
    for run_dir in run_dirs:
        path = run_dir / STATE_FILE
        if not path.is_file():
            raise FileNotFoundError(f"{what}: {path} is missing (no segment of it was saved)")
        with np.load(path) as data:
            steps.add(int(data["steps"]))
            count = sum(1 for k in data.files if k.startswith("leaf_"))
            if count != len(leaves):
                raise ValueError(
                    f"{what}: {path} holds {count} arrays, this config's train state "
                    f"{len(leaves)}: it was trained with other settings"
                )
            for j, leaf in enumerate(leaves):
                value = data[f"leaf_{j}"]
                if value.shape != leaf.shape[1:]:
                    raise ValueError(
                        f"{what}: {path} array {j} has shape {value.shape}, this config's "
                        f"train state {leaf.shape[1:]}: it was trained with other settings"
                    )
                stacked[j].append(value)
    if len(steps) != 1:
        raise ValueError(
            f"{what}: the seeds' run folders stopped at different steps {sorted(steps)}"
        )
    state = jax.tree.unflatten(treedef, [jnp.asarray(np.stack(v)) for v in stacked])
    return state, steps.pop()


def write_policy(
    folder: Path,
    policy: NumpyPolicy,
    cfg: RunConfig,
    description: str | None = None,
    name: str | None = None,
) -> None:
    """``policy.npz``, ``config.yaml`` and a card (backend numpy, success null) in ``folder``.

    ``description`` is the card's (default: :func:`~twolink_gym.training.export.describe`
    of ``cfg``), ``name`` its name (default: the folder's).
    """
    from twolink_gym.training.export import agent_card

    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / (JAX_POLICY_FILE + ".tmp")
    policy.save(tmp)
    tmp.replace(folder / JAX_POLICY_FILE)
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    card = agent_card(name or folder.name, cfg, None, description).to_dict()
    card[BACKEND_KEY] = "numpy"
    (folder / CARD_FILE).write_text(json.dumps(card, indent=2) + "\n")


def clear_run(run_dir: Path) -> None:
    """Remove what a ``jax_*`` training wrote into ``run_dir`` (:data:`JAX_ARTIFACTS`)."""
    for name in JAX_ARTIFACTS:
        path = run_dir / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()


def check_folders(run_dirs: Sequence[Path], resume: bool, overwrite: bool) -> bool:
    """Refuse to overwrite a run unless asked; return whether to clear the folders."""
    if resume:
        return False
    taken = [d for d in run_dirs if any((d / n).exists() for n in JAX_ARTIFACTS)]
    if not taken:
        return False
    if overwrite:
        return True
    from twolink_gym.training.train import RunExistsError

    raise RunExistsError(
        f"run folder(s) {[str(d) for d in taken]} already exist. To keep them, train into "
        "other folders with --set train.run_name=NEW_NAME (or other train.seeds); to continue "
        "them, use --resume; to replace them, pass --overwrite"
    )


class TimeLog:
    """One seed's periodic evaluations: ``eval/time_log.csv``, ``evaluations.npz``, TensorBoard."""

    def __init__(self, run_dir: Path, resume_at: int | None) -> None:
        from twolink_gym.training.train import TIME_LOG_COLUMNS, read_time_log

        self.run_dir = run_dir
        self.columns = TIME_LOG_COLUMNS
        self.rows: list[dict[str, float]] = []
        self.npz: dict[str, list[Any]] = {
            "timesteps": [],
            "results": [],
            "ep_lengths": [],
            "successes": [],
        }
        if resume_at is not None:
            log = read_time_log(run_dir)
            if log is not None:
                for i in np.flatnonzero(log["timesteps"] <= resume_at):
                    row = {k: log[k][i].item() for k in TIME_LOG_COLUMNS}
                    row["timesteps"], row["episodes"] = int(row["timesteps"]), int(row["episodes"])
                    self.rows.append(row)
            old = run_dir / "eval" / "evaluations.npz"
            if old.is_file():
                with np.load(old) as data:
                    keep = data["timesteps"] <= resume_at
                    for k in self.npz:
                        self.npz[k] = list(data[k][keep])
        (run_dir / "eval").mkdir(parents=True, exist_ok=True)
        self._writer: Any = None

    def offsets(self) -> tuple[float, float]:
        """The cumulative train and evaluation times (s) of the last row kept, or zeros."""
        if not self.rows:
            return 0.0, 0.0
        return float(self.rows[-1]["train_time_s"]), float(self.rows[-1]["eval_time_s"])

    def add(
        self,
        row: dict[str, float],
        returns: Any,
        lengths: Any,
        successes: Any,
        scalars: Mapping[str, float] | None = None,
    ) -> None:
        """Append a periodic evaluation: its time-log row and per-episode arrays.

        ``scalars`` (tag → value) go to TensorBoard at the row's timesteps too.
        """
        from torch.utils.tensorboard import SummaryWriter

        self.rows.append(row)
        lines = [",".join(self.columns)]
        lines += [",".join(str(r[k]) for k in self.columns) for r in self.rows]
        (self.run_dir / "eval" / "time_log.csv").write_text("\n".join(lines) + "\n")
        for key, value in zip(
            self.npz, (row["timesteps"], returns, lengths, successes), strict=True
        ):
            self.npz[key].append(np.asarray(value))
        with open(self.run_dir / "eval" / "evaluations.npz", "wb") as f:
            arrays: dict[str, Any] = {k: np.asarray(v) for k, v in self.npz.items()}
            np.savez(f, **arrays)
        if self._writer is None:
            self._writer = SummaryWriter(str(self.run_dir / "tb" / "run_1"))
        step = int(row["timesteps"])
        self._writer.add_scalar("eval/mean_reward", row["mean_return"], step)
        if not math.isnan(row["success_rate"]):
            self._writer.add_scalar("eval/success_rate", row["success_rate"], step)
        self._writer.add_scalar("time/wall_time_s", row["wall_time_s"], step)
        for tag, value in (scalars or {}).items():
            self._writer.add_scalar(tag, value, step)
        self._writer.flush()

    def close(self) -> None:
        """Close the TensorBoard writer."""
        if self._writer is not None:
            self._writer.close()


def rank(row: Mapping[str, float], key: str | None = None) -> tuple[float, ...]:
    """The order of periodic evaluations for ``best/``: success rate, then mean return.

    With ``key`` (the held-out v3 score's), ``row[key]`` first (-inf where the row has none).
    """
    success = row["success_rate"]
    order = (-math.inf if math.isnan(success) else success, row["mean_return"])
    if key is None:
        return order
    return (float(row.get(key, -math.inf)), *order)


def best_row(run_dir: Path) -> dict[str, float] | None:
    """The time-log row of the policy saved in ``run_dir/best`` (None if there is none)."""
    from twolink_gym.training.train import read_best_selection

    return read_best_selection(run_dir)


def save_best(cfg: RunConfig, policy: NumpyPolicy, row: Mapping[str, float]) -> None:
    """Replace ``best/`` of ``cfg``'s run folder by ``policy`` and its evaluation ``row``."""
    best = cfg.run_dir / "best"
    tmp = best.with_name("best.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    write_policy(tmp, policy, cfg, name=f"{cfg.run_dir.name}_best")  # not the tmp folder's
    (tmp / "selection.json").write_text(json.dumps(dict(row), indent=2) + "\n")
    if best.exists():
        shutil.rmtree(best)
    tmp.rename(best)
