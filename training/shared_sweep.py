"""``twolink sweep --storage URL``: a seed sweep handed out by an Optuna study, for several machines.

The seeds of a sweep become trials of an Optuna study in a relational storage
(the one ``twolink tune`` uses: a SQLite file, or a PostgreSQL server that
several machines reach). Every ``twolink sweep CONFIG --seeds S --storage
URL`` process enqueues the seeds of ``S`` that the study does not hold yet
(as waiting trials, the seed in the trial's user attributes), then its
workers take waiting trials, any process's, one at a time (Optuna's storage
gives each to exactly one worker), and for each:

1. train the seed's run into this machine's run folder (``<run name>_s<seed>``,
   as ``twolink sweep`` does; a folder left by an interrupted run is resumed,
   a finished one is evaluated as it is, ``--overwrite`` trains again);
2. evaluate its final model on the config's fixed episode set, writing the
   per-episode results to ``<sweep folder>/seeds/<run>/``;
3. store the seed's record (:func:`~twolink_gym.training.sweep.seed_record`:
   metrics, training time, machine and periodic-evaluation curve) in the trial
   and complete it with the seed's success rate.

When no seed of ``S`` is waiting or running any more, the process writes the
sweep's summary (``sweep.json``, ``table.md``, ``learning_curves.png``, the
same files as a local sweep) from the records in the storage, so any machine,
and ``--no-train`` anywhere, can write it. A seed interrupted by Ctrl-C or
SIGTERM fails its trial (marked ``interrupted``; its run saved) and is
enqueued again by the next ``twolink sweep`` that names it; the trial of a
killed worker is failed by Optuna's heartbeat after 3 minutes of silence and
enqueued again the same way. No completed seed is trained twice.

The study (default name ``<run name>_sweep``) is bound to the config: a
process with another env, algorithm, hyperparameters, training length or
evaluation set is refused, naming what differs.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState
from twolink_gym.training.config import RunConfig, config_from_dict
from twolink_gym.training.evaluate import evaluate_policies
from twolink_gym.training.interrupts import interrupt_requested
from twolink_gym.training.stats import SeedStatistics
from twolink_gym.training.sweep import seed_config, seed_record, sweep_dir, write_summary
from twolink_gym.training.tune import bind_study, open_storage
from twolink_gym.training.workers import run_workers

__all__ = ["SharedSweepResult", "shared_sweep", "sweep_study_name"]

#: The trial user attribute that holds the seed (set when the seed is enqueued).
SEED_ATTR = "seed"
#: The trial user attribute that holds the seed's record (``sweep.json``'s entry).
RECORD_ATTR = "record"
_SEEDS_DIR = "seeds"
_OPEN = (TrialState.WAITING, TrialState.RUNNING)


def sweep_study_name(cfg: RunConfig) -> str:
    """The default study name: ``<run name or task_algo>_sweep`` (the sweep folder's name)."""
    return sweep_dir(cfg).name


def _signature(cfg: RunConfig) -> dict[str, Any]:
    """What a sweep study is bound to (everything that shapes a seed's result but the seed)."""
    data = cfg.to_dict()
    train = {k: data["train"][k] for k in ("total_timesteps", "n_envs", "eval_freq")}
    sig = {"env": data["env"], "algo": data["algo"], "train": train, "evaluate": data["evaluate"]}
    return json.loads(json.dumps(sig))  # as stored (tuples become lists)


def _create_or_check(cfg: RunConfig, storage: optuna.storages.BaseStorage, name: str) -> None:
    """Create the study, or check that the stored one was made from the same config."""
    diff = bind_study(storage, name, "sweep", _signature(cfg), cfg)
    if diff:
        raise ValueError(
            f"--study {name!r} is a sweep of another {', '.join(diff)} than {cfg.source}'s; "
            "run it with the same config, or start another sweep with --study NEW_NAME"
        )


def _seed_of(trial: FrozenTrial) -> int | None:
    value = trial.user_attrs.get(SEED_ATTR)
    return None if value is None else int(value)


def _enqueue_missing(study: optuna.Study, seeds: Sequence[int]) -> None:
    """Enqueue the seeds that no completed, running or waiting trial holds."""
    held = {
        _seed_of(t) for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, *_OPEN))
    }
    missing = [s for s in seeds if s not in held]
    for s in missing:
        study.enqueue_trial({}, user_attrs={SEED_ATTR: s})


def _waiting(study: optuna.Study) -> bool:
    return bool(study.get_trials(deepcopy=False, states=(TrialState.WAITING,)))


def _train_seed(cfg: RunConfig, overwrite: bool) -> bool:
    """Train one seed's config into its run folder; False if it was interrupted.

    A folder that already holds this seed's run is continued (``resume``) if
    the run is unfinished and evaluated as it is if it is finished; with
    ``overwrite`` it is trained again from scratch.
    """
    from twolink_gym.training.train import MODEL_FILE, SUMMARY_FILE, find_resume_point, train

    run = cfg.run_dir
    if overwrite or not run.exists():
        return not train(cfg, overwrite=overwrite).interrupted
    summary = run / SUMMARY_FILE
    if (run / MODEL_FILE).exists() and summary.exists():
        info = json.loads(summary.read_text())
        if not info.get("interrupted") and info.get("timesteps", 0) >= cfg.train.total_timesteps:
            return True  # finished: evaluate it as it is
    find_resume_point(run)  # raises, naming the folder, if there is nothing to continue
    return not train(cfg, resume=run).interrupted


def _objective(cfg: RunConfig, overwrite: bool) -> Any:
    def objective(trial: optuna.Trial) -> float:
        if interrupt_requested():  # between two seeds: start none
            raise KeyboardInterrupt
        seed = trial.user_attrs.get(SEED_ATTR)
        if seed is None:  # another worker took the last waiting seed meanwhile
            trial.set_user_attr("surplus", True)
            raise optuna.TrialPruned("no seed was waiting")
        others = trial.study.get_trials(
            deepcopy=False, states=(TrialState.COMPLETE, TrialState.RUNNING, TrialState.WAITING)
        )
        # enqueued twice by two processes at once: the seed stays with a completed trial,
        # else with the earliest trial that holds it, running or waiting (both holders
        # pruning each other would leave the seed undone, neither would train it twice)
        if any(
            t.number != trial.number
            and _seed_of(t) == seed
            and (t.state == TrialState.COMPLETE or t.number < trial.number)
            for t in others
        ):
            trial.set_user_attr("duplicate", True)
            raise optuna.TrialPruned(f"seed {seed} is held by another trial")
        trial.set_user_attr("worker", f"{platform.node()}:{os.getpid()}")
        one = seed_config(cfg, int(seed))
        if not _train_seed(one, overwrite):
            trial.set_user_attr("interrupted", True)
            raise KeyboardInterrupt
        out = sweep_dir(cfg) / _SEEDS_DIR / one.run_dir.name
        _, (rollouts,) = evaluate_policies([str(one.run_dir)], cfg, out, trajectories=False)
        record = seed_record(int(seed), one.run_dir, rollouts)
        record["host"] = platform.node()
        trial.set_user_attr(RECORD_ATTR, record)
        return float(record["success_rate"])

    return objective


def _work(
    cfg_data: dict[str, Any],
    source: str,
    url: str,
    name: str,
    overwrite: bool,
    worker: int,
) -> None:
    """One worker: take waiting seeds (any process's) until none is left."""
    cfg = config_from_dict(cfg_data, source)
    study = optuna.load_study(study_name=name, storage=open_storage(url))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        optuna.storages.fail_stale_trials(study)  # trials of killed workers

    def stop_when_empty(study: optuna.Study, trial: FrozenTrial) -> None:
        if interrupt_requested():  # deferred until the seed's state was stored
            raise KeyboardInterrupt
        if not _waiting(study):
            study.stop()

    if not _waiting(study):
        return
    study.optimize(_objective(cfg, overwrite), callbacks=[stop_when_empty], gc_after_trial=True)


@dataclasses.dataclass(frozen=True)
class SharedSweepResult:
    """What :func:`shared_sweep` found in the storage (and wrote, once every seed was done)."""

    out_dir: Path
    storage: str
    study: str
    #: The seeds asked for, in order.
    seeds: tuple[int, ...]
    #: Seeds not completed yet (waiting, running elsewhere, or failed), in order.
    pending: tuple[int, ...]
    #: Seed -> the host and process that trained it (completed seeds).
    workers: dict[int, str]
    success: SeedStatistics | None
    final_distance: SeedStatistics | None
    summary: dict[str, Any] | None


def _collect(
    cfg: RunConfig, study: optuna.Study, seeds: Sequence[int], out: Path, url: str, name: str
) -> SharedSweepResult:
    """The completed seeds' records from the storage; the summary if all ``seeds`` are done."""
    records: dict[int, dict[str, Any]] = {}
    workers: dict[int, str] = {}
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        seed = _seed_of(t)
        if (
            seed is not None
            and seed in seeds
            and seed not in records
            and RECORD_ATTR in t.user_attrs
        ):
            records[seed] = t.user_attrs[RECORD_ATTR]
            workers[seed] = str(t.user_attrs.get("worker", "?"))
    pending = tuple(s for s in seeds if s not in records)
    if pending:
        return SharedSweepResult(out, url, name, tuple(seeds), pending, workers, None, None, None)
    summary, success, distance = write_summary(cfg, [records[s] for s in seeds], out)
    return SharedSweepResult(out, url, name, tuple(seeds), (), workers, success, distance, summary)


def shared_sweep(
    cfg: RunConfig,
    seeds: Sequence[int],
    *,
    storage: str,
    study: str | None = None,
    workers: int = 1,
    train: bool = True,
    overwrite: bool = False,
) -> SharedSweepResult:
    """Run this process's share of a seed sweep kept in a study storage (module notes).

    Parameters
    ----------
    cfg : RunConfig
    seeds : sequence of int
        The sweep's seeds (every process of one sweep should name the same).
    storage : str
        Database URL (``sqlite:///...``, ``postgresql://...``).
    study : str, optional
        Study name; default :func:`sweep_study_name`.
    workers : int
        Local worker processes.
    train : bool
        ``False``: train nothing; write the summary if every seed is done.
    overwrite : bool
        Train a seed again even if this machine holds its run folder.

    Returns
    -------
    SharedSweepResult
        With ``summary`` None and the seeds still to do in ``pending`` if not
        every seed is done (they may be running on other machines).

    Raises
    ------
    ValueError
        On no seeds, ``workers`` < 1, a storage URL that cannot be opened or a
        study of another config (nothing is written before these checks).
    KeyboardInterrupt
        On Ctrl-C or SIGTERM, once the workers have saved their runs.
    """
    if not seeds:
        raise ValueError("sweep needs at least one seed")
    if workers < 1:
        raise ValueError(f"--workers must be an integer >= 1, got {workers}")
    name = study or sweep_study_name(cfg)
    handle = open_storage(storage)
    _create_or_check(cfg, handle, name)
    loaded = optuna.load_study(study_name=name, storage=handle)
    if train:
        _enqueue_missing(loaded, seeds)
        args = (cfg.to_dict(), cfg.source, storage, name, overwrite)
        run_workers(_work, args, workers, "sweep")
    return _collect(cfg, loaded, seeds, sweep_dir(cfg), storage, name)
