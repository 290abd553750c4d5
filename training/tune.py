"""``twolink tune``: an Optuna study over a config's algorithm hyperparameters.

Each trial trains the config (:func:`~twolink_gym.training.train.train`) with
hyperparameters drawn from a search space (:mod:`~twolink_gym.training.tune_space`)
and is scored by the success rate of its last periodic evaluation (the task's
success, on the evaluation env seeded ``train.seed + 10_000``); Optuna's
``MedianPruner`` stops a trial early on those evaluations. The sampler is
``TPESampler`` seeded from ``--seed`` (default ``train.seed``), the local
worker's index and the number of trials already stored; trial ``n`` trains with
``train.seed + n``.

A config of a ``jax_*`` algorithm (:mod:`~twolink_gym.training.jax_train`) is
tuned the same way, each trial training all of its ``train.seeds`` at once:
trial ``n`` trains the seeds ``train.seeds + n`` (each shifted by ``n``) in
``trials/trial_N/``, one run folder per seed. Its value is the **mean over
the seeds** of their last periodic evaluation's success rate (what Optuna
maximises; the mean is reported to the pruner after every evaluation); the
per-seed rates and the worst one are kept as the trial's user attributes
``seed_success`` and ``worst_seed_success`` and shown by ``--report``. A
pruned JAX trial stops after the evaluation that pruned it and keeps its run
folders as an interrupted run does. With ``train.eval_v3_pushes_seeds`` (a
RealAIGym swing-up), the trial's value is instead the mean over the seeds of
their held-out v3 scores at the last periodic evaluation
(:mod:`~twolink_gym.training.jax_v3_eval`; user attributes
``seed_v3_heldout_score`` and ``worst_seed_v3_heldout_score``): a study for the
v3 board that never looks at the board's pushes.

The study lives in a relational storage: by default the SQLite file
``<output_dir>/<run name>_tune/study.db``; ``--storage postgresql://...`` lets
processes on several machines share one study. A study continues where it
stopped: ``--trials N`` is the study's total (completed and pruned trials,
and trials that failed with an error), counted in the storage, so a restart
runs only the missing trials; a trial interrupted by Ctrl-C or SIGTERM is
not counted and is run again. The study folder holds::

    study.db          the SQLite storage (default storage only)
    trials/trial_N/   each trial's run folder (see ``twolink train``); for a
                      jax_* config, a folder holding one run folder per seed
    best.yaml         the best trial's config, ready for ``twolink train``
    report/           ``--report``: history.png, parallel_coordinate.png, importances.png
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import platform
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import yaml
from optuna.trial import FrozenTrial, TrialState
from stable_baselines3.common.callbacks import BaseCallback
from twolink_gym.training.algorithms import check_trainable, is_rejax
from twolink_gym.training.config import RunConfig, config_from_dict
from twolink_gym.training.interrupts import interrupt_requested
from twolink_gym.training.sqlite_transactions import lock_transactions
from twolink_gym.training.tune_space import SearchSpace, apply_values, parse_space
from twolink_gym.training.workers import run_workers

__all__ = [
    "BEST_FILE",
    "SIGNATURE_ATTRS",
    "Measure",
    "TuneResult",
    "bind_study",
    "counted_trials",
    "default_storage",
    "measure",
    "open_storage",
    "report",
    "study_dir",
    "tune",
    "write_best",
]

BEST_FILE = "best.yaml"
STUDY_FILE = "study.db"
TRIALS_DIR = "trials"
REPORT_DIR = "report"

# Optuna marks the heartbeat arguments experimental; they are what makes a trial
# of a killed worker count as failed (and run again) instead of running forever.
_HEARTBEAT_S, _GRACE_S = 60, 180
_ERRORS = (ValueError, AssertionError, RuntimeError)  # a bad combination fails one trial
#: Attempts at opening a storage whose tables another process is creating.
_SCHEMA_ATTEMPTS = 4


def study_dir(cfg: RunConfig) -> Path:
    """The study folder: ``<output_dir>/<run name or task_algo>_tune``."""
    return Path(cfg.train.output_dir) / f"{cfg.train.run_name or cfg.default_group}_tune"


def default_storage(cfg: RunConfig) -> str:
    """``sqlite:///<study folder>/study.db`` (absolute path)."""
    return f"sqlite:///{(study_dir(cfg) / STUDY_FILE).resolve()}"


def open_storage(url: str, *, heartbeat: bool = True) -> optuna.storages.RDBStorage:
    """Open (creating its tables if needed) the relational storage at ``url``.

    Raises
    ------
    ValueError
        Naming ``--storage`` when the URL cannot be opened (unknown scheme,
        missing driver, unreachable server, a SQLite file in a missing folder).
    """
    kwargs: dict[str, Any] = {}
    sqlite = url.startswith("sqlite")
    if sqlite:
        # workers writing to one SQLite file wait for each other's locks
        kwargs["engine_kwargs"] = {"connect_args": {"timeout": 120}}
    if heartbeat:
        kwargs.update(heartbeat_interval=_HEARTBEAT_S, grace_period=_GRACE_S)
    import sqlalchemy.exc

    try:
        for attempt in range(_SCHEMA_ATTEMPTS):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                    storage = optuna.storages.RDBStorage(url, **kwargs)
                if sqlite:
                    # else two processes can take the same waiting trial
                    lock_transactions(storage)
                return storage
            except (
                sqlalchemy.exc.IntegrityError,
                sqlalchemy.exc.OperationalError,
                sqlalchemy.exc.ProgrammingError,
            ) as exc:
                # two processes creating the tables of a fresh database at once (a
                # duplicate row; on SQLite also "table ... already exists" or "database
                # is locked"; on PostgreSQL a ProgrammingError, 'type "studydirection"
                # already exists'): the other one's tables are there once it has committed
                race = isinstance(exc, sqlalchemy.exc.IntegrityError) or any(
                    text in str(exc) for text in ("already exists", "database is locked")
                )
                if not race or attempt == _SCHEMA_ATTEMPTS - 1:
                    raise
                time.sleep(1.0 + attempt)
        raise AssertionError("unreachable")
    except Exception as exc:
        raise ValueError(
            f"--storage {url!r} cannot be opened ({type(exc).__name__}: {exc}); expected a "
            "database URL such as sqlite:///path/study.db or "
            "postgresql://user:password@host:5432/dbname (with its driver installed)"
        ) from exc


def counted_trials(trials: Sequence[FrozenTrial]) -> list[FrozenTrial]:
    """The trials that count towards ``--trials``.

    Completed and pruned trials, trials that failed with an error in the
    training (they would fail again), and running ones; not a trial that was
    interrupted (or whose worker died), nor a surplus trial started when the
    study was already full.
    """
    out = []
    for t in trials:
        if t.state in (TrialState.COMPLETE, TrialState.RUNNING):
            out.append(t)
        elif t.state == TrialState.PRUNED and not t.user_attrs.get("surplus"):
            out.append(t)
        elif t.state == TrialState.FAIL and "error" in t.user_attrs:
            out.append(t)
    return out


class _ReportEvaluations(BaseCallback):
    """After each periodic evaluation: report its success rate to the trial; prune if told to."""

    def __init__(self, trial: optuna.Trial) -> None:
        super().__init__()
        self.trial = trial
        self.last: float | None = None
        self.pruned = False

    def _on_step(self) -> bool:
        successes = getattr(self.parent, "evaluations_successes", [])
        if not successes:
            raise ValueError(
                "the periodic evaluation recorded no success (info['is_success']); "
                "twolink tune needs a task that reports it"
            )
        self.last = float(np.mean(successes[-1]))
        self.trial.report(self.last, step=int(self.num_timesteps))
        if self.trial.should_prune():
            self.pruned = True
            return False
        return True


@dataclasses.dataclass(frozen=True)
class Measure:
    """What a ``jax_*`` trial is scored by: a key of the seeds' evaluation rows.

    Attributes
    ----------
    key : str
        The row's key (``success_rate``, or the held-out v3 score's).
    label : str
        Its name in reports.
    """

    key: str
    label: str

    @property
    def seeds_attr(self) -> str:
        """The trial's user attribute holding each seed's value."""
        return "seed_success" if self.key == "success_rate" else f"seed_{self.key}"

    @property
    def worst_attr(self) -> str:
        """The trial's user attribute holding the worst seed's value."""
        return f"worst_{self.seeds_attr}"


def measure(cfg: RunConfig) -> Measure:
    """The measure of ``cfg``'s trials: the held-out v3 score with ``train.eval_v3_pushes_seeds``."""
    if cfg.train.eval_v3_pushes_seeds is not None:
        from twolink_gym.training.jax_v3_eval import SCORE_KEY

        return Measure(SCORE_KEY, "held-out v3 score")
    return Measure("success_rate", "success rate")


class _ReportSeedEvaluations:
    """A ``jax_*`` trial's ``after_eval``: report the mean over seeds of its measure; prune if told to.

    Called by :func:`~twolink_gym.training.jax_train.train_jax` after each
    periodic evaluation with the steps per seed and each seed's time-log row.
    """

    def __init__(self, trial: optuna.Trial, key: str = "success_rate") -> None:
        self.trial = trial
        self.key = key
        self.seeds: list[float] | None = None
        self.last: float | None = None
        self.pruned = False

    def __call__(self, steps: int, rows: Sequence[dict[str, float]]) -> bool:
        rates = [float(r.get(self.key, math.nan)) for r in rows]
        if not all(np.isfinite(rates)):
            raise ValueError(
                "the periodic evaluation recorded no success rate; twolink tune needs a task "
                "that reports success"
            )
        self.seeds, self.last = rates, float(np.mean(rates))
        self.trial.report(self.last, step=int(steps))
        if self.trial.should_prune():
            self.pruned = True
            return False
        return True


def trial_config(cfg: RunConfig, values: dict[str, Any], number: int, folder: Path) -> RunConfig:
    """``cfg`` with the trial's hyperparameters, seed(s) shifted by ``number`` and its folder.

    An SB3 or SBX trial trains seed ``train.seed + number`` in the run folder
    ``trials/trial_NNNN``; a ``jax_*`` trial trains the seeds ``train.seeds +
    number`` at once, in the run folders ``trials/trial_NNNN/<task>_<algo>_s<seed>``.

    Raises
    ------
    ConfigError
        If the combination is invalid (checked as a config is).
    """
    data = cfg.to_dict()
    data["algo"]["hyperparams"] = apply_values(cfg.algo.hyperparams, values)
    data["train"].update(seed=cfg.train.seed + number, progress_bar=False)
    if is_rejax(cfg.algo.name):
        data["train"].update(run_name=None, output_dir=str(folder / TRIALS_DIR / _trial(number)))
        if cfg.train.seeds:
            data["train"]["seeds"] = [s + number for s in cfg.train.seeds]
    else:
        data["train"].update(run_name=_trial(number), output_dir=str(folder / TRIALS_DIR))
    return config_from_dict(data, f"{cfg.source} (trial {number})")


def _trial(number: int) -> str:
    return f"trial_{number:04d}"


def _train_trial(
    trial: optuna.Trial, cfg: RunConfig
) -> tuple[bool, bool, float | None, int, list[float] | None]:
    """Train one trial's config, reporting to ``trial``.

    Returns
    -------
    tuple
        ``(interrupted, pruned, value, timesteps, seed values)``: ``value`` is
        the success rate of the last periodic evaluation (of a ``jax_*`` config,
        the mean over its seeds), None when no evaluation ran; ``seed values``
        are each seed's rate at that evaluation (None for SB3 and SBX).
    """
    if is_rejax(cfg.algo.name):
        from twolink_gym.training.jax_train import train_jax

        hook = _ReportSeedEvaluations(trial, measure(cfg).key)
        jax_result = train_jax(cfg, overwrite=True, after_eval=hook)
        return jax_result.interrupted, hook.pruned, hook.last, jax_result.timesteps, hook.seeds
    from twolink_gym.training.train import train

    callback = _ReportEvaluations(trial)
    result = train(cfg, overwrite=True, after_eval=callback)
    return result.interrupted, callback.pruned, callback.last, result.timesteps, None


def _objective(
    cfg: RunConfig, space: SearchSpace, folder: Path, target: int
) -> Callable[[optuna.Trial], float]:
    def objective(trial: optuna.Trial) -> float:
        if interrupt_requested():  # between two trials: start none
            raise KeyboardInterrupt
        earlier = [t for t in trial.study.get_trials(deepcopy=False) if t.number < trial.number]
        if len(counted_trials(earlier)) >= target:  # another worker filled the study meanwhile
            trial.set_user_attr("surplus", True)
            raise optuna.TrialPruned("the study already has its trials")
        values = space.sample(trial)
        trial.set_user_attr("hyperparams", values)
        trial.set_user_attr("worker", f"{platform.node()}:{os.getpid()}")
        try:
            interrupted, pruned, last, timesteps, seeds = _train_trial(
                trial, trial_config(cfg, values, trial.number, folder)
            )
        except _ERRORS as exc:
            trial.set_user_attr("error", f"{type(exc).__name__}: {exc}")
            raise
        if interrupted:
            trial.set_user_attr("interrupted", True)
            raise KeyboardInterrupt
        if seeds is not None:
            scored = measure(cfg)
            trial.set_user_attr(scored.seeds_attr, seeds)
            trial.set_user_attr(scored.worst_attr, min(seeds))
        if pruned:
            raise optuna.TrialPruned(f"pruned at {timesteps} steps")
        if last is None:
            trial.set_user_attr("error", "no periodic evaluation ran")
            raise ValueError(
                f"trial {trial.number}: no periodic evaluation ran (train.eval_freq "
                f"{cfg.train.eval_freq} > train.total_timesteps {cfg.train.total_timesteps})"
            )
        return last

    return objective


def _signature(cfg: RunConfig, space: SearchSpace) -> dict[str, Any]:
    """What a study is bound to: a restarted study must have the same."""
    data = cfg.to_dict()
    train = {
        k: data["train"][k]
        for k in ("total_timesteps", "n_envs", "seed", "eval_freq", "eval_episodes")
    }
    if is_rejax(cfg.algo.name):  # the seeds trained together in each trial
        train["seeds"] = data["train"]["seeds"]
    if cfg.train.eval_v3_pushes_seeds is not None:  # the trials' measure
        train["eval_v3_pushes_seeds"] = data["train"]["eval_v3_pushes_seeds"]
    sig = {"env": data["env"], "algo": data["algo"], "train": train, "space": space.data}
    return json.loads(json.dumps(sig))  # as stored (tuples become lists)


def _make_study(
    cfg: RunConfig, storage: optuna.storages.BaseStorage, name: str, seed: int, worker: int
) -> optuna.Study:
    """Load the study with this worker's sampler and the pruner.

    The sampler's seed is derived from ``seed``, the worker index and the
    number of trials already stored: a fresh study with one worker is
    reproducible, and a restarted study does not draw its first trials
    again (TPE's first trials are random draws from the seed).
    """
    study = optuna.load_study(
        study_name=name,
        storage=storage,
        pruner=optuna.pruners.MedianPruner(
            n_startup_trials=5, n_warmup_steps=cfg.train.total_timesteps // 3
        ),
    )
    stored = len(study.get_trials(deepcopy=False))
    state = np.random.SeedSequence([seed, worker, stored]).generate_state(1)[0]
    study.sampler = optuna.samplers.TPESampler(seed=int(state), constant_liar=True)
    return study


#: The study user attribute that binds a study to its config, per kind of study
#: (``twolink tune``, ``twolink sweep --storage``).
SIGNATURE_ATTRS = {"tune": "signature", "sweep": "sweep_signature"}


def bind_study(
    storage: optuna.storages.BaseStorage,
    name: str,
    kind: str,
    signature: dict[str, Any],
    cfg: RunConfig,
) -> list[str]:
    """Create the study ``name`` bound to ``signature``, or compare it with the bound one.

    Parameters
    ----------
    storage : optuna.storages.BaseStorage
    name : str
        The study's name.
    kind : {"tune", "sweep"}
        What the study is for (:data:`SIGNATURE_ATTRS`).
    signature : dict
        JSON-like description of what the study is bound to (a new study stores
        it, with the config).
    cfg : RunConfig

    Returns
    -------
    list of str
        The keys of ``signature`` whose value differs from the stored one
        (empty for a new study or the same config).

    Raises
    ------
    ValueError
        If the study is one of another kind.
    """
    study = optuna.create_study(
        storage=storage, study_name=name, direction="maximize", load_if_exists=True
    )
    for other, attr in SIGNATURE_ATTRS.items():
        if other != kind and study.user_attrs.get(attr) is not None:
            raise ValueError(
                f"--study {name!r} is a twolink {other} study; give the {kind} another --study name"
            )
    stored = study.user_attrs.get(SIGNATURE_ATTRS[kind])
    if stored is None:
        study.set_user_attr(SIGNATURE_ATTRS[kind], signature)
        study.set_user_attr("config", cfg.to_dict())
        return []
    return sorted(k for k in signature if stored.get(k) != signature[k])


def _create_or_check(
    cfg: RunConfig, space: SearchSpace, storage: optuna.storages.BaseStorage, name: str
) -> None:
    """Create the study, or check that the existing one was made from the same config and space."""
    diff = bind_study(storage, name, "tune", _signature(cfg, space), cfg)
    if diff:
        raise ValueError(
            f"--study {name!r} exists in the storage with another {', '.join(diff)} than "
            f"{cfg.source}'s; continue it with the same config and search space, or start "
            "another study with --study NEW_NAME"
        )


def _work(
    cfg_data: dict[str, Any],
    source: str,
    space_data: dict[str, Any],
    url: str,
    name: str,
    target: int,
    timeout: float | None,
    folder: str,
    seed: int,
    worker: int,
) -> None:
    """One worker: run trials until the study holds ``target`` counted trials (or ``timeout``)."""
    cfg = config_from_dict(cfg_data, source)
    space = parse_space(cfg.algo.name, space_data)
    study = _make_study(cfg, open_storage(url), name, seed, worker)

    def stop_when_full(study: optuna.Study, trial: FrozenTrial) -> None:
        if interrupt_requested():  # deferred until the trial's state was stored
            raise KeyboardInterrupt
        if len(counted_trials(study.get_trials(deepcopy=False))) >= target:
            study.stop()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        optuna.storages.fail_stale_trials(study)  # trials of killed workers: run them again
    if len(counted_trials(study.get_trials(deepcopy=False))) >= target:
        return
    study.optimize(
        _objective(cfg, space, Path(folder), target),
        timeout=timeout,
        catch=_ERRORS,
        callbacks=[stop_when_full],
        gc_after_trial=True,
    )


@dataclasses.dataclass(frozen=True)
class TuneResult:
    """What :func:`tune` left in the storage and the study folder."""

    folder: Path
    storage: str
    study: str
    trials: int
    best: FrozenTrial | None
    best_yaml: Path | None


def tune(
    cfg: RunConfig,
    *,
    trials: int,
    space: SearchSpace | None = None,
    workers: int = 1,
    storage: str | None = None,
    study: str | None = None,
    timeout: float | None = None,
    seed: int | None = None,
) -> TuneResult:
    """Run (or continue) the study of ``cfg`` until it holds ``trials`` trials.

    Everything is validated before anything is written: the search space,
    the numbers, the config's evaluations and the storage URL.

    Parameters
    ----------
    cfg : RunConfig
        The base config; each trial overrides its ``algo.hyperparams``.
    trials : int
        The study's total number of trials (see :func:`counted_trials`).
    space : SearchSpace, optional
        Default: the algorithm's (:data:`~twolink_gym.training.tune_space.DEFAULT_SPACES`).
    workers : int
        Local worker processes against the same storage.
    storage : str, optional
        Database URL; default :func:`default_storage`.
    study : str, optional
        Study name; default the run name (``train.run_name`` or ``<task>_<algo>``).
    timeout : float, optional
        Each worker starts no trial after this many seconds [s].
    seed : int, optional
        Seed of the samplers (each worker's is derived from it, its index and the
        number of trials stored); default ``train.seed``.

    Returns
    -------
    TuneResult
    """
    check_trainable(cfg.algo.name, cfg.source)
    if trials < 1:
        raise ValueError(f"--trials must be an integer >= 1, got {trials}")
    if workers < 1:
        raise ValueError(f"--workers must be an integer >= 1, got {workers}")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"--timeout must be a number of seconds > 0, got {timeout}")
    if cfg.train.eval_freq < 1 or cfg.train.eval_freq > cfg.train.total_timesteps:
        raise ValueError(
            f"{cfg.source}: train.eval_freq must be in 1..train.total_timesteps "
            f"({cfg.train.total_timesteps}) for twolink tune (trials are scored and pruned on "
            f"the periodic evaluations), got {cfg.train.eval_freq}"
        )
    space = space or parse_space(cfg.algo.name)
    if space.algo != cfg.algo.name:
        raise ValueError(
            f"the search space is for {space.algo}, the config's algo is {cfg.algo.name}"
        )
    for dim in space.dimensions:  # the config's own values must take the dotted keys
        apply_values(cfg.algo.hyperparams, {dim.key: dim.extremes()[0]})
    folder = study_dir(cfg)
    name = study or cfg.train.run_name or cfg.default_group
    url = storage or default_storage(cfg)
    if storage is not None:
        handle = open_storage(url)  # raises before anything is written
    else:
        folder.mkdir(parents=True, exist_ok=True)
        handle = open_storage(url)
    _create_or_check(cfg, space, handle, name)
    folder.mkdir(parents=True, exist_ok=True)

    args = (cfg.to_dict(), cfg.source, space.data, url, name, trials, timeout, str(folder))
    try:
        run_workers(_work, (*args, cfg.train.seed if seed is None else seed), workers, "tune")
    finally:
        done = optuna.load_study(study_name=name, storage=handle)
        best_yaml = write_best(done, cfg, folder / BEST_FILE, url)
    counted = counted_trials(done.get_trials(deepcopy=False))
    return TuneResult(folder, url, name, len(counted), _best(done, measure(cfg)), best_yaml)


def _best(study: optuna.Study, scored: Measure) -> FrozenTrial | None:
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    if not complete:
        return None
    # highest value; among equals the best worst seed (jax_* trials), then the earliest
    # trial (deterministic)
    worst = scored.worst_attr
    return max(complete, key=lambda t: (t.value, t.user_attrs.get(worst, 0.0), -t.number))


def write_best(study: optuna.Study, cfg: RunConfig, path: Path, url: str) -> Path | None:
    """Write the best trial's config to ``path`` (None if no trial completed).

    The file is ``cfg`` with the trial's hyperparameters, the config's own
    ``train.seed`` and ``train.run_name: <run name>_tuned``: ``twolink train
    best.yaml`` trains it (``twolink sweep best.yaml`` over seeds).
    """
    scored = measure(cfg)
    best = _best(study, scored)
    if best is None:
        return None
    data = cfg.to_dict()
    data["algo"]["hyperparams"] = apply_values(cfg.algo.hyperparams, best.user_attrs["hyperparams"])
    data["train"]["run_name"] = f"{cfg.train.run_name or cfg.default_group}_tuned"
    config_from_dict(data, str(path))  # what is written must load
    if is_rejax(cfg.algo.name):
        seeds = [s + best.number for s in cfg.train.seeds or [cfg.train.seed]]
        worst = best.user_attrs.get(scored.worst_attr, float("nan"))
        text = (
            f"{scored.label} {best.value:.3f} (mean over seeds; worst seed {worst:.3f}) at its\n"
            f"# last periodic evaluation, trained with train.seeds {seeds}"
        )
    else:
        text = (
            f"success rate {best.value:.3f} at its last periodic evaluation,\n"
            f"# trained with train.seed {cfg.train.seed + best.number}"
        )
    header = (
        f"# Best trial of the Optuna study {study.study_name!r} ({url}):\n"
        f"# trial {best.number}, {text}. Written by `twolink tune`\n"
        f"# from {cfg.source}; train it with `twolink train {path}`.\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + yaml.safe_dump(data, sort_keys=False))
    return path


def report(
    cfg: RunConfig, *, storage: str | None = None, study: str | None = None, top: int = 5
) -> str:
    """The study as text (best trials, parameter importances); plots as PNG.

    Writes ``history.png`` (optimisation history), ``parallel_coordinate.png``
    and ``importances.png`` (PED-ANOVA importances; needs two completed trials)
    into ``<study folder>/report/`` and refreshes ``best.yaml``.

    Raises
    ------
    ValueError
        If the storage cannot be opened or holds no such study.
    """
    url = storage or default_storage(cfg)
    name = study or cfg.train.run_name or cfg.default_group
    if storage is None and not (study_dir(cfg) / STUDY_FILE).is_file():
        raise ValueError(f"no study at {study_dir(cfg) / STUDY_FILE}; run `twolink tune` first")
    handle = open_storage(url, heartbeat=False)
    try:
        loaded = optuna.load_study(study_name=name, storage=handle)
    except KeyError as exc:
        names = [s.study_name for s in optuna.get_all_study_summaries(handle)]
        raise ValueError(f"--study {name!r} is not in {url}; it holds {names}") from exc
    trials = loaded.get_trials(deepcopy=False)
    states = {s.name.lower(): sum(t.state == s for t in trials) for s in TrialState}
    lines = [
        f"study {name!r} in {url}: {len(counted_trials(trials))} counted trials "
        f"({', '.join(f'{n} {k}' for k, n in states.items() if n)})"
    ]
    complete = sorted(
        loaded.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)),
        key=lambda t: (-(t.value or 0.0), t.number),
    )
    keys = [
        str(k) for k in parse_space(cfg.algo.name, loaded.user_attrs["signature"]["space"]).data
    ]
    seeds = is_rejax(cfg.algo.name)
    scored = measure(cfg)
    text = f"mean over seeds of the {scored.label}" if seeds else scored.label
    column = "success" if scored.key == "success_rate" else "held-out v3"
    lines += ["", f"best trials ({text} at the last periodic evaluation), top {top}:"]
    head = f"| trial | {column} | worst seed | " if seeds else f"| trial | {column} | "
    lines.append(head + " | ".join(keys) + " |")
    lines.append(("|---:|---:|---:|" if seeds else "|---:|---:|") + "---|" * len(keys))
    for t in complete[:top]:
        cells = " | ".join(_cell(t.params.get(k, "–")) for k in keys)
        worst = f" {t.user_attrs.get(scored.worst_attr, float('nan')):.3f} |" if seeds else ""
        lines.append(f"| {t.number} | {t.value:.3f} |{worst} {cells} |")
    out = study_dir(cfg) / REPORT_DIR
    out.mkdir(parents=True, exist_ok=True)
    plots = _plots(loaded, out)
    importances = _importances(loaded)
    lines += ["", "parameter importances (PED-ANOVA):"]
    lines += [f"  {k}: {v:.3f}" for k, v in importances.items()] or ["  (needs 2 completed trials)"]
    best = write_best(loaded, cfg, study_dir(cfg) / BEST_FILE, url)
    lines += ["", f"plots: {', '.join(str(p) for p in plots)}"]
    if best is not None:
        lines.append(f"best config: {best}")
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _importances(study: optuna.Study) -> dict[str, float]:
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    if len(complete) < 2:
        return {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        warnings.simplefilter("ignore", UserWarning)  # "importances will be equal"
        try:
            return dict(
                optuna.importance.get_param_importances(
                    study, evaluator=optuna.importance.PedAnovaImportanceEvaluator()
                )
            )
        except (ValueError, RuntimeError, ZeroDivisionError):
            return {}


def _plots(study: optuna.Study, out: Path) -> list[Path]:
    """Optuna's matplotlib plots of ``study`` as PNG files in ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from optuna.visualization import matplotlib as vis

    makers: dict[str, Callable[[], Any]] = {
        "history.png": lambda: vis.plot_optimization_history(study),
        "parallel_coordinate.png": lambda: vis.plot_parallel_coordinate(study),
    }
    if len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))) >= 2:
        makers["importances.png"] = lambda: vis.plot_param_importances(
            study, evaluator=optuna.importance.PedAnovaImportanceEvaluator()
        )
    written = []
    for filename, make in makers.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            warnings.simplefilter("ignore", UserWarning)  # degenerate axes of tiny studies
            try:
                ax = make()
            except (ValueError, RuntimeError):
                continue
        fig = ax.get_figure() if hasattr(ax, "get_figure") else ax.flat[0].get_figure()
        fig.tight_layout()
        fig.savefig(out / filename, dpi=90)
        plt.close(fig)
        written.append(out / filename)
    return written
