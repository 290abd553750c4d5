"""``twolink train``: train an SB3 agent from a config into a self-contained run folder.

A run folder holds::

    config.yaml          the resolved config (re-run it with ``twolink train config.yaml``)
    model.zip            the final model (also written on Ctrl-C)
    vecnormalize.pkl     observation-normalisation statistics, if used
    eval/evaluations.npz periodic evaluations (timesteps, returns, successes)
    eval/time_log.csv    each periodic evaluation with its cumulative wall times
    replay_buffer.pkl    the SAC replay buffer at the end (also written on Ctrl-C)
    checkpoints/         periodic checkpoints (model, statistics, SAC replay buffer)
    best/                the model of the best periodic evaluation (``train.save_best``):
                         model.zip, vecnormalize.pkl, config.yaml and selection.json,
                         a folder every command loads as a run
    tb/                  TensorBoard logs
    train_summary.json   timesteps, wall time, steps/s, machine

An existing run folder is never overwritten unless asked (``overwrite=True``,
``--overwrite``); a run continues from its folder or any of its models with
``resume`` (``--resume``). Everything is validated before anything is written.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import platform
import re
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from stable_baselines3.common import callbacks as sb3_callbacks
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import (
    BaseCallback,
    CallbackList,
    CheckpointCallback,
    EvalCallback,
    ProgressBarCallback,
)
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm
from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm
from stable_baselines3.common.type_aliases import TrainFreq, TrainFrequencyUnit
from stable_baselines3.common.vec_env import VecEnv, VecNormalize
from twolink_gym.training.algorithms import ALGORITHMS, build_model, check_trainable, is_rejax
from twolink_gym.training.config import RunConfig, config_from_dict
from twolink_gym.training.envs import make_training_env
from twolink_gym.training.interrupts import interruptible

__all__ = [
    "BEST_DIR",
    "MODEL_FILE",
    "REPLAY_BUFFER_FILE",
    "TIME_LOG_COLUMNS",
    "TIME_LOG_FILE",
    "VECNORM_FILE",
    "ResumePoint",
    "RunExistsError",
    "TimedEvalCallback",
    "TrainResult",
    "checkpoint_steps",
    "find_resume_point",
    "planned_timesteps",
    "read_best_selection",
    "read_time_log",
    "rollout_steps",
    "train",
]

MODEL_FILE = "model.zip"
VECNORM_FILE = "vecnormalize.pkl"
REPLAY_BUFFER_FILE = "replay_buffer.pkl"
CONFIG_FILE = "config.yaml"
SUMMARY_FILE = "train_summary.json"
CHECKPOINT_DIR = "checkpoints"
EVAL_DIR = "eval"
#: The run's best model by periodic evaluation (see :class:`TimedEvalCallback`).
BEST_DIR = "best"
#: What selected the best model: its evaluation's row of the time log.
SELECTION_FILE = "selection.json"
#: The periodic evaluations with their wall times (see :class:`TimedEvalCallback`).
TIME_LOG_FILE = "time_log.csv"

#: What training (and ``twolink run``'s comparison) writes into a run folder:
#: what ``overwrite`` replaces. Anything else in the folder is left alone.
RUN_ARTIFACTS = (
    CONFIG_FILE,
    MODEL_FILE,
    VECNORM_FILE,
    REPLAY_BUFFER_FILE,
    SUMMARY_FILE,
    EVAL_DIR,
    CHECKPOINT_DIR,
    BEST_DIR,
    "tb",
    "compare",
    "evaluation",
    "robustness",
)
#: The run artifacts that are results of ``evaluate``/``compare``/``robustness``, not training.
EVALUATION_ARTIFACTS = ("compare", "evaluation", "robustness")

_CHECKPOINT = re.compile(r"(?P<prefix>.+)_(?P<steps>\d+)_steps\.zip")


class RunExistsError(ValueError):
    """The run folder already holds a run and neither overwriting nor resuming was asked for."""


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """What :func:`train` produced."""

    run_dir: Path
    model_path: Path
    timesteps: int
    wall_time_s: float
    interrupted: bool
    #: ``train.total_timesteps`` as configured.
    requested_timesteps: int = 0
    #: Where training was planned to stop: the requested total rounded up to
    #: whole rollouts (what SB3's ``learn`` actually runs).
    planned_timesteps: int = 0
    #: Environment steps per rollout (``n_steps · n_envs`` for PPO,
    #: ``train_freq · n_envs`` for SAC), or None if not a fixed number.
    rollout_steps: int | None = None
    #: The model training continued from, if any.
    resumed_from: Path | None = None


def _gamma(cfg: RunConfig) -> float:
    return float(cfg.algo.hyperparams.get("gamma", 0.99))


def _checkpoint_stats(checkpoint: Path) -> Path | None:
    """The VecNormalize file CheckpointCallback wrote beside ``checkpoint`` (or None)."""
    match = _CHECKPOINT.fullmatch(checkpoint.name)
    if match is None:
        return None
    path = checkpoint.with_name(f"{match['prefix']}_vecnormalize_{match['steps']}_steps.pkl")
    return path if path.exists() else None


def _checkpoint_buffer(checkpoint: Path) -> Path | None:
    """The replay buffer CheckpointCallback wrote beside ``checkpoint`` (or None)."""
    match = _CHECKPOINT.fullmatch(checkpoint.name)
    if match is None:
        return None
    path = checkpoint.with_name(f"{match['prefix']}_replay_buffer_{match['steps']}_steps.pkl")
    return path if path.exists() else None


@dataclasses.dataclass(frozen=True)
class ResumePoint:
    """A saved model and what was saved with it.

    Attributes
    ----------
    model : Path
        The model ``.zip``.
    vecnormalize : Path or None
        Its VecNormalize statistics, if saved.
    replay_buffer : Path or None
        Its replay buffer (off-policy algorithms), if saved.
    run_dir : Path
        The run folder the model belongs to.
    """

    model: Path
    vecnormalize: Path | None
    replay_buffer: Path | None
    run_dir: Path


def _final_model_steps(run_dir: Path) -> float:
    """Timesteps of ``run_dir/model.zip`` from the run summary (inf if unknown: prefer it)."""
    try:
        return float(json.loads((run_dir / SUMMARY_FILE).read_text())["timesteps"])
    except (OSError, ValueError, KeyError, TypeError):
        return math.inf


def _newest_model(run_dir: Path) -> Path:
    """The model of ``run_dir`` with the most timesteps: ``model.zip`` or the latest checkpoint."""
    candidates: list[tuple[float, int, Path]] = []
    if (run_dir / MODEL_FILE).is_file():
        candidates.append((_final_model_steps(run_dir), 1, run_dir / MODEL_FILE))
    for path in (run_dir / CHECKPOINT_DIR).glob("*_steps.zip"):
        match = _CHECKPOINT.fullmatch(path.name)
        if match is not None:
            candidates.append((float(match["steps"]), 0, path))
    if not candidates:
        raise ValueError(
            f"--resume {run_dir}: the folder holds no {MODEL_FILE} and no "
            f"{CHECKPOINT_DIR}/model_<N>_steps.zip to continue from"
        )
    return max(candidates)[2]


def find_resume_point(path: str | Path) -> ResumePoint:
    """Find the model to continue from, and its statistics and replay buffer.

    Parameters
    ----------
    path : str or Path
        A run folder (its newest model: the final ``model.zip``, written at the
        end and on Ctrl-C, or the latest checkpoint, whichever has more
        timesteps), a run's ``model.zip`` (with ``vecnormalize.pkl`` and
        ``replay_buffer.pkl`` beside it), or a checkpoint
        ``checkpoints/model_<N>_steps.zip`` (with
        ``model_vecnormalize_<N>_steps.pkl`` and ``model_replay_buffer_<N>_steps.pkl``).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If it is neither a folder nor a ``.zip``, or the folder holds no model.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"--resume {path}: no such run folder or model .zip")
    if path.is_dir():
        model = _newest_model(path)
    elif path.suffix == ".zip":
        model = path
    else:
        raise ValueError(f"--resume {path}: expected a run folder or a model .zip")
    if _CHECKPOINT.fullmatch(model.name) is not None:
        stats, buffer = _checkpoint_stats(model), _checkpoint_buffer(model)
        run_dir = model.parent.parent if model.parent.name == CHECKPOINT_DIR else model.parent
    else:
        stats = model.parent / VECNORM_FILE
        buffer = model.parent / REPLAY_BUFFER_FILE
        stats = stats if stats.is_file() else None
        buffer = buffer if buffer.is_file() else None
        run_dir = model.parent
    return ResumePoint(model, stats, buffer, run_dir)


def rollout_steps(model: BaseAlgorithm) -> int | None:
    """Environment steps (summed over the envs) that one pass of SB3's ``learn`` loop collects.

    ``learn`` collects whole rollouts until ``total_timesteps`` is reached, so it
    stops at the next multiple of this: ``n_steps · n_envs`` for on-policy
    algorithms, ``train_freq · n_envs`` for off-policy ones trained every
    ``train_freq`` steps; None for ``train_freq`` counted in episodes.
    """
    if isinstance(model, OnPolicyAlgorithm):
        return int(model.n_steps) * int(model.n_envs)
    if isinstance(model, OffPolicyAlgorithm):
        freq = model.train_freq
        if isinstance(freq, TrainFreq) and freq.unit == TrainFrequencyUnit.STEP:
            return int(freq.frequency) * int(model.n_envs)
    return None


def planned_timesteps(start: int, total: int, chunk: int | None) -> int:
    """Where ``learn`` stops when asked for ``total`` steps from ``start`` in chunks of ``chunk``."""
    remaining = total - start
    if remaining <= 0:
        return start
    if chunk is None:
        return total
    return start + math.ceil(remaining / chunk) * chunk


def checkpoint_steps(freq: int, chunk: int | None, n_envs: int) -> int:
    """Environment steps between checkpoints: ``freq`` rounded to whole rollouts of ``chunk``.

    A checkpoint at the end of a rollout resumes to the very total of the
    uninterrupted run (``learn`` goes on in whole rollouts from it); one in
    the middle of a rollout would end up to a rollout past it. The nearest
    whole number of rollouts (at least one); without rollouts (``chunk``
    None) ``freq`` in whole steps of the ``n_envs`` envs.
    """
    if chunk is None:
        return max(freq // n_envs, 1) * n_envs
    return max(round(freq / chunk), 1) * chunk


class _ProgressBar(ProgressBarCallback):
    """SB3's progress bar, counting to the real end of training (not the requested total)."""

    def __init__(self, start: int, end: int) -> None:
        super().__init__()
        self._start, self._end = start, end

    def _on_training_start(self) -> None:
        self.pbar = sb3_callbacks.tqdm(total=self._end - self._start, unit="steps")


def _artifacts(run_dir: Path) -> list[str]:
    return [name for name in RUN_ARTIFACTS if (run_dir / name).exists()]


def _check_run_dir(run_dir: Path, resume: ResumePoint | None, overwrite: bool) -> bool:
    """Decide what may happen to an existing run folder; return whether to clear it first.

    Raises
    ------
    RunExistsError
        If it holds a run that would be overwritten and neither ``overwrite`` nor
        a resume of that very run was asked for.
    """
    found = _artifacts(run_dir)
    if not found:
        return False
    if resume is not None and resume.run_dir.resolve() == run_dir.resolve():
        return False  # continuing this run in its own folder
    if overwrite:
        return True
    keep = (
        "To keep it, train into another folder with --set train.run_name=NEW_NAME "
        "(or another --set train.seed=N)"
    )
    try:
        _newest_model(run_dir)
    except ValueError:
        pass
    else:
        raise RunExistsError(
            f"run folder {run_dir} already exists (it holds {', '.join(found)}). "
            f"{keep}; to continue it, use `twolink train --resume {run_dir}` (its own config); "
            f"to replace it, pass --overwrite"
        )
    if all(name in EVALUATION_ARTIFACTS for name in found):
        what = "evaluation results, no training run"
    else:
        what = "no model to continue from"
    raise RunExistsError(
        f"run folder {run_dir} already exists (it holds {', '.join(found)}: {what}). "
        f"{keep}; to delete these and train here, pass --overwrite"
    )


def _clear_run(run_dir: Path) -> None:
    """Delete the run artifacts of ``run_dir`` (see :data:`RUN_ARTIFACTS`), nothing else."""
    for name in RUN_ARTIFACTS:
        path = run_dir / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()


def _check_same_run(cfg: RunConfig, resume: ResumePoint) -> None:
    """Refuse to continue a model of another task, algorithm or environment than ``cfg``'s."""
    path = resume.run_dir / CONFIG_FILE
    if not path.is_file():
        return
    try:
        saved = config_from_dict(yaml.safe_load(path.read_text()), str(path))
    except Exception:  # an unreadable old config: the model load checks the spaces
        return
    if saved.algo.name != cfg.algo.name:
        raise ValueError(
            f"--resume {resume.model}: trained with algo.name={saved.algo.name!r} ({path}), "
            f"but the config has {cfg.algo.name!r}"
        )
    if saved.env != cfg.env:
        raise ValueError(
            f"--resume {resume.model}: trained on another environment ({path}: env "
            f"{saved.env.make_kwargs()}) than the config's ({cfg.env.make_kwargs()})"
        )


def _load_for_resume(
    cfg: RunConfig, resume: ResumePoint, env: VecEnv, run_dir: Path
) -> tuple[BaseAlgorithm, VecEnv]:
    """Load the model, its statistics and replay buffer onto ``env``; return model and env."""
    if isinstance(env, VecNormalize):
        if resume.vecnormalize is None:
            expected = (
                _CHECKPOINT.sub(r"\g<prefix>_vecnormalize_\g<steps>_steps.pkl", resume.model.name)
                if _CHECKPOINT.fullmatch(resume.model.name)
                else VECNORM_FILE
            )
            raise ValueError(
                f"--resume {resume.model}: the config normalises observations or rewards, "
                f"but no VecNormalize statistics ({expected}) were found beside it"
            )
        env = VecNormalize.load(str(resume.vecnormalize), env.venv)
    elif resume.vecnormalize is not None:
        raise ValueError(
            f"--resume {resume.model}: it was trained with VecNormalize statistics "
            f"({resume.vecnormalize}), but the config has env.normalize_obs and "
            "env.normalize_reward false"
        )
    cls = ALGORITHMS[cfg.algo.name]
    try:
        model = cls.load(
            str(resume.model),
            env=env,
            device=cfg.train.device,
            tensorboard_log=str(run_dir / "tb"),
        )
    except Exception as exc:
        raise ValueError(
            f"--resume {resume.model}: cannot continue it as {cfg.algo.name} on this "
            f"config's environment ({type(exc).__name__}: {exc})"
        ) from exc
    if isinstance(model, OffPolicyAlgorithm):
        if resume.replay_buffer is not None:
            model.load_replay_buffer(str(resume.replay_buffer))
        else:
            print(f"resume: no replay buffer saved with {resume.model}; starting with an empty one")
    return model, env


def _restore_evaluations(callback: EvalCallback, path: Path, upto: int) -> None:
    """Put the periodic evaluations up to ``upto`` timesteps back into ``callback``.

    ``EvalCallback`` rewrites ``evaluations.npz`` from its own lists at every
    evaluation; without this a resumed run's learning curve would start at the
    resumed step.
    """
    if not path.is_file():
        return
    try:
        with np.load(path) as data:
            keep = data["timesteps"] <= upto
            callback.evaluations_timesteps = [int(t) for t in data["timesteps"][keep]]
            callback.evaluations_results = [list(r) for r in data["results"][keep]]
            callback.evaluations_length = [list(r) for r in data["ep_lengths"][keep]]
            if "successes" in data.files:
                callback.evaluations_successes = [list(r) for r in data["successes"][keep]]
    except (OSError, ValueError, KeyError) as exc:
        print(f"resume: could not read the earlier evaluations in {path} ({exc}); starting afresh")


#: The columns of ``eval/time_log.csv``, one row per periodic evaluation (see
#: :class:`TimedEvalCallback` for their meaning and units).
TIME_LOG_COLUMNS = (
    "timesteps",
    "train_time_s",
    "eval_time_s",
    "wall_time_s",
    "success_rate",
    "mean_return",
    "episodes",
)


class TimedEvalCallback(EvalCallback):
    """SB3's ``EvalCallback`` that also logs the wall time of every periodic evaluation.

    After each evaluation it rewrites ``<log_path>/time_log.csv`` (beside SB3's
    ``evaluations.npz``), one row per evaluation, columns :data:`TIME_LOG_COLUMNS`:

    - ``timesteps``: environment steps (summed over the envs) at the evaluation;
    - ``train_time_s``: cumulative wall time of training when the evaluation
      started, the periodic evaluations' own time excluded [s];
    - ``eval_time_s``: cumulative wall time spent in periodic evaluations, this
      one included [s];
    - ``wall_time_s``: ``train_time_s + eval_time_s``, the wall time since
      training started when this evaluation ended [s];
    - ``success_rate``: fraction of the evaluation's episodes that succeeded
      (NaN if the task reports no ``is_success``);
    - ``mean_return``: mean episode return of the evaluation;
    - ``episodes``: number of evaluation episodes.

    The clock starts when ``learn`` starts (``_on_training_start``); a resumed
    run continues the counts of its earlier segments from ``train_offset_s``
    and ``eval_offset_s`` and keeps their rows (``rows``).

    With ``best_dir``, an evaluation better than every one before it (a higher
    success rate, or an equal one and a higher mean return; a NaN success rate
    counts as lowest) saves the model, its VecNormalize statistics, the run's
    ``config.yaml`` and the evaluation's row (``selection.json``) into
    ``best_dir``, replacing what was there: a folder that loads as a run.

    Parameters
    ----------
    *args, **kwargs
        ``EvalCallback``'s arguments; ``log_path`` must be given.
    train_offset_s, eval_offset_s : float
        Training and evaluation time of the earlier segments of the run [s].
    rows : list of dict, optional
        The earlier segments' rows (keys :data:`TIME_LOG_COLUMNS`).
    best_dir : Path, optional
        Where to keep the best model (None: nowhere).
    best_row : dict, optional
        The earlier segments' best evaluation (a row), the one to beat.
    """

    def __init__(
        self,
        *args: Any,
        train_offset_s: float = 0.0,
        eval_offset_s: float = 0.0,
        rows: list[dict[str, float]] | None = None,
        best_dir: Path | None = None,
        best_row: dict[str, float] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        if self.log_path is None:
            raise ValueError("TimedEvalCallback needs log_path (the run's eval/ folder)")
        self._time_log = Path(self.log_path).parent / TIME_LOG_FILE
        self.train_offset_s = float(train_offset_s)
        self.eval_offset_s = float(eval_offset_s)
        self.rows: list[dict[str, float]] = list(rows or [])
        self.best_dir = best_dir
        self.best_row = best_row
        #: Wall time spent in this segment's periodic evaluations [s].
        self.segment_eval_time_s = 0.0
        self._clock_start = time.perf_counter()

    def _on_training_start(self) -> None:
        super()._on_training_start()
        self._clock_start = time.perf_counter()

    def _on_step(self) -> bool:
        before = len(self.evaluations_timesteps)
        started = time.perf_counter()
        continue_training = super()._on_step()
        if len(self.evaluations_timesteps) == before:
            return continue_training
        ended = time.perf_counter()
        train_time = self.train_offset_s + (started - self._clock_start) - self.segment_eval_time_s
        self.segment_eval_time_s += ended - started
        eval_time = self.eval_offset_s + self.segment_eval_time_s
        n = len(self.evaluations_timesteps)
        returns = self.evaluations_results[-1]
        success = (
            float(np.mean(self.evaluations_successes[-1]))
            if len(self.evaluations_successes) == n
            else math.nan
        )
        self.rows.append(
            {
                "timesteps": int(self.num_timesteps),
                "train_time_s": round(train_time, 3),
                "eval_time_s": round(eval_time, 3),
                "wall_time_s": round(train_time + eval_time, 3),
                "success_rate": success,
                "mean_return": float(np.mean(returns)),
                "episodes": len(returns),
            }
        )
        _write_time_log(self._time_log, self.rows)
        if self.best_dir is not None and (
            self.best_row is None or _rank(self.rows[-1]) > _rank(self.best_row)
        ):
            self.best_row = self.rows[-1]
            _save_best(self.model, self.best_dir, self.best_row)
        return continue_training


def _rank(row: Mapping[str, float]) -> tuple[float, float]:
    """How good a periodic evaluation is: its success rate (NaN lowest), then its mean return."""
    success = row["success_rate"]
    return (-math.inf if math.isnan(success) else success, row["mean_return"])


def _save_best(model: BaseAlgorithm, best_dir: Path, row: Mapping[str, float]) -> None:
    """Write ``model`` with its statistics, the run's config and ``row`` as ``best_dir``.

    Written into a sibling folder first, then put in place of the old one.
    """
    tmp = best_dir.with_name(best_dir.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    model.save(str(tmp / MODEL_FILE))
    vec = model.get_vec_normalize_env()
    if vec is not None:
        vec.save(str(tmp / VECNORM_FILE))
    shutil.copy2(best_dir.parent / CONFIG_FILE, tmp / CONFIG_FILE)
    (tmp / SELECTION_FILE).write_text(json.dumps(dict(row), indent=2) + "\n")
    if best_dir.exists():
        shutil.rmtree(best_dir)
    tmp.rename(best_dir)


def read_best_selection(run_dir: str | Path) -> dict[str, float] | None:
    """The periodic evaluation that selected ``<run_dir>/best/`` (a time-log row), or None."""
    path = Path(run_dir) / BEST_DIR / SELECTION_FILE
    try:
        row = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return row if isinstance(row, dict) and {"success_rate", "mean_return"} <= set(row) else None


def _write_time_log(path: Path, rows: list[dict[str, float]]) -> None:
    lines = [",".join(TIME_LOG_COLUMNS)]
    lines += [",".join(str(row[k]) for k in TIME_LOG_COLUMNS) for row in rows]
    path.write_text("\n".join(lines) + "\n")


def read_time_log(run_dir: str | Path) -> dict[str, np.ndarray] | None:
    """The periodic evaluations of a run with their wall times; None if it logged none.

    Parameters
    ----------
    run_dir : str or Path
        A run folder (``<run_dir>/eval/time_log.csv`` is read).

    Returns
    -------
    dict of str to ndarray or None
        One array of shape ``(n_evaluations,)`` per column of
        :data:`TIME_LOG_COLUMNS` (see :class:`TimedEvalCallback`), in
        evaluation order.

    Raises
    ------
    ValueError
        If the file lacks one of the columns.
    """
    path = Path(run_dir) / EVAL_DIR / TIME_LOG_FILE
    if not path.is_file():
        return None
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    header = lines[0].split(",")
    missing = [k for k in TIME_LOG_COLUMNS if k not in header]
    if missing:
        raise ValueError(f"{path}: missing columns {missing}; expected {list(TIME_LOG_COLUMNS)}")
    values = np.array([[float(v) for v in line.split(",")] for line in lines[1:]]).reshape(
        -1, len(header)
    )
    return {k: values[:, header.index(k)] for k in TIME_LOG_COLUMNS}


def _earlier_time(run_dir: Path, upto: int) -> tuple[float, float, list[dict[str, float]]]:
    """Training and evaluation time of a run up to ``upto`` timesteps, and its rows up to there.

    The times are interpolated in timesteps between the run's known points:
    the start (0 s), its logged evaluations and its summary's end of training.
    Resuming from the final model gives the summary's totals exactly; from a
    checkpoint, the time at the checkpoint's step count (the training after
    it, which the resumed run repeats, is not counted).
    """
    steps, train_t, eval_t = [0.0], [0.0], [0.0]
    log = read_time_log(run_dir)
    rows: list[dict[str, float]] = []
    if log is not None:
        steps += list(log["timesteps"])
        train_t += list(log["train_time_s"])
        eval_t += list(log["eval_time_s"])
        for i in np.flatnonzero(log["timesteps"] <= upto):
            rows.append({k: log[k][i].item() for k in TIME_LOG_COLUMNS})
            rows[-1]["timesteps"] = int(rows[-1]["timesteps"])
            rows[-1]["episodes"] = int(rows[-1]["episodes"])
    try:
        summary = json.loads((run_dir / SUMMARY_FILE).read_text())
        steps.append(float(summary["timesteps"]))
        train_t.append(float(summary.get("cumulative_train_time_s", summary["wall_time_s"])))
        eval_t.append(float(summary.get("cumulative_eval_time_s", 0.0)))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    order = np.argsort(steps, kind="stable")
    xs = np.asarray(steps)[order]
    train_s = float(np.interp(upto, xs, np.asarray(train_t)[order]))
    eval_s = float(np.interp(upto, xs, np.asarray(eval_t)[order]))
    return train_s, eval_s, rows


def _earlier_best(run_dir: Path, upto: int) -> dict[str, float] | None:
    """The best evaluation of ``run_dir`` to beat when resuming it at ``upto`` timesteps.

    None (the next evaluation replaces the best folder) if there is none or it
    came after ``upto``: the resumed run repeats the training after it.
    """
    row = read_best_selection(run_dir)
    if row is None or float(row.get("timesteps", math.inf)) > upto:
        return None
    return row


def _cpu_model() -> str:
    """The CPU's model name (Linux ``/proc/cpuinfo``), else ``platform.processor()``."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_description() -> dict[str, Any]:
    """CPU count, platform and library versions, for the run summary."""
    import stable_baselines3

    return {
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "stable_baselines3": stable_baselines3.__version__,
        "torch_threads": torch.get_num_threads(),
        **_jax_description(),
    }


def _jax_description() -> dict[str, Any]:
    """JAX's version and ``XLA_FLAGS``, if JAX was imported (an ``sbx_*`` algorithm), else ``{}``."""
    import sys

    jax = sys.modules.get("jax")
    if jax is None:
        return {}
    return {"jax": jax.__version__, "xla_flags": os.environ.get("XLA_FLAGS", "")}


def train(
    cfg: RunConfig,
    *,
    resume: str | Path | None = None,
    overwrite: bool = False,
    after_eval: BaseCallback | None = None,
) -> TrainResult:
    """Train the agent of ``cfg`` into its run folder; return what was saved.

    Everything is checked before anything is written: the config (including
    building the arm, task and env), the run folder, the model to resume and
    its statistics.

    Parameters
    ----------
    cfg : RunConfig
    resume : path, optional
        Continue from a run folder, its ``model.zip`` or a checkpoint (see
        :func:`find_resume_point`): the model, its VecNormalize statistics, its
        replay buffer (SAC) and its step count are restored, and training
        continues up to ``cfg.train.total_timesteps`` in total. Into the
        model's own run folder this needs no ``overwrite``.
    overwrite : bool
        Replace an existing run in ``cfg.run_dir`` (its run artifacts are
        deleted first; other files are kept). Without it an existing run
        raises :class:`RunExistsError`.
    after_eval : BaseCallback, optional
        Called after every periodic evaluation (SB3's ``callback_after_eval``;
        its ``parent`` is the ``EvalCallback``, whose ``evaluations_successes``
        hold the success of each evaluation); returning ``False`` stops
        training, as ``twolink tune``'s pruning does. Needs ``train.eval_freq > 0``.

    Returns
    -------
    TrainResult

    Raises
    ------
    RunExistsError
        If ``cfg.run_dir`` holds a run and neither ``overwrite`` nor a resume of
        that run was asked for.
    FileNotFoundError, ValueError
        On a ``resume`` path that holds no usable model, a model of another
        algorithm or environment, missing statistics, or a model that already
        has ``total_timesteps`` steps.

    Notes
    -----
    Ctrl-C (``KeyboardInterrupt``) stops training, saves the current model,
    statistics and replay buffer as the run's final model (resumable with
    ``resume=run_dir``), and returns with ``interrupted=True``.
    """
    check_trainable(cfg.algo.name, cfg.source)
    if is_rejax(cfg.algo.name):
        raise ValueError(
            f"{cfg.source}: algo.name {cfg.algo.name!r} trains all of train.seeds at once in "
            "JAX: run it with `twolink train CONFIG` (twolink_gym.training.jax_train.train_jax)"
        )
    tc = cfg.train
    run_dir = cfg.run_dir
    if after_eval is not None and not tc.eval_freq:
        raise ValueError("after_eval needs periodic evaluations: train.eval_freq must be > 0")
    point = find_resume_point(resume) if resume is not None else None
    if point is not None:
        _check_same_run(cfg, point)
    clear = _check_run_dir(run_dir, point, overwrite)

    torch.set_num_threads(tc.torch_threads)
    # the agent trains on its training episodes; every evaluation uses the task's own
    env = make_training_env(cfg.env.for_training(), tc.n_envs, tc.seed, gamma=_gamma(cfg))
    eval_env = make_training_env(
        cfg.env, min(tc.eval_episodes, 8), tc.seed + 10_000, training=False, gamma=_gamma(cfg)
    )
    try:
        if point is not None:
            model, env = _load_for_resume(cfg, point, env, run_dir)
        else:
            model = build_model(
                cfg.algo.name,
                cfg.algo.policy,
                env,
                cfg.algo.hyperparams,
                seed=tc.seed,
                device=tc.device,
                tensorboard_log=str(run_dir / "tb"),
            )
        start_steps = int(model.num_timesteps) if point is not None else 0
        if start_steps >= tc.total_timesteps:
            raise ValueError(
                f"--resume {point.model if point else ''}: the model already has {start_steps:,} "
                f"timesteps, train.total_timesteps is {tc.total_timesteps:,}; raise it, e.g. "
                f"--set train.total_timesteps={2 * tc.total_timesteps}"
            )
    except BaseException:
        env.close()
        eval_env.close()
        raise
    chunk = rollout_steps(model)
    planned = planned_timesteps(start_steps, tc.total_timesteps, chunk)

    # -- validated: from here on the run folder is written ---------------------
    if clear:
        _clear_run(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / CONFIG_FILE).write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    off_policy = isinstance(model, OffPolicyAlgorithm)

    callbacks: list[BaseCallback] = []
    earlier = _earlier_time(point.run_dir, start_steps) if point is not None else (0.0, 0.0, [])
    same_folder = point is not None and point.run_dir.resolve() == run_dir.resolve()
    evaluation: TimedEvalCallback | None = None
    if tc.eval_freq:
        evaluation = TimedEvalCallback(
            eval_env,
            n_eval_episodes=tc.eval_episodes,
            eval_freq=max(tc.eval_freq // tc.n_envs, 1),
            log_path=str(run_dir / EVAL_DIR),
            best_model_save_path=None,
            deterministic=True,
            verbose=0,
            callback_after_eval=after_eval,
            train_offset_s=earlier[0],
            eval_offset_s=earlier[1],
            rows=earlier[2],
            best_dir=run_dir / BEST_DIR if tc.save_best else None,
            best_row=_earlier_best(run_dir, start_steps) if same_folder else None,
        )
        if point is not None:
            _restore_evaluations(evaluation, run_dir / EVAL_DIR / "evaluations.npz", start_steps)
        callbacks.append(evaluation)
    if tc.checkpoint_freq:
        callbacks.append(
            CheckpointCallback(
                save_freq=checkpoint_steps(tc.checkpoint_freq, chunk, tc.n_envs) // tc.n_envs,
                save_path=str(run_dir / CHECKPOINT_DIR),
                name_prefix="model",
                save_replay_buffer=off_policy,
                save_vecnormalize=True,
            )
        )
    if tc.progress_bar:
        callbacks.append(_ProgressBar(start_steps, planned))

    if point is not None:
        print(f"resuming from {point.model} at {start_steps:,} timesteps")
    if planned != tc.total_timesteps and chunk is not None:
        print(
            f"train.total_timesteps = {tc.total_timesteps:,} is not a whole number of rollouts "
            f"of {chunk:,} steps ({tc.n_envs} envs x {chunk // tc.n_envs} steps): "
            f"training runs to {planned:,} timesteps"
        )

    start = time.perf_counter()
    interrupted = False
    try:
        with interruptible():  # a study's worker defers interrupts outside this block
            model.learn(
                total_timesteps=tc.total_timesteps - start_steps,
                callback=CallbackList(callbacks),
                progress_bar=False,
                reset_num_timesteps=point is None,
                tb_log_name="run",
            )
    except KeyboardInterrupt:
        interrupted = True
        print(f"\ninterrupted at {model.num_timesteps:,} timesteps; saving the current model")
    wall = time.perf_counter() - start

    model_path = run_dir / MODEL_FILE
    model.save(str(model_path))
    vec = model.get_vec_normalize_env()
    if vec is not None:
        vec.save(str(run_dir / VECNORM_FILE))
    if off_policy:
        model.save_replay_buffer(str(run_dir / REPLAY_BUFFER_FILE))  # type: ignore[attr-defined]
    steps = model.num_timesteps - start_steps
    eval_time = evaluation.segment_eval_time_s if evaluation is not None else 0.0
    summary = {
        "run": cfg.run_name,
        "task": cfg.env.task,
        "algo": cfg.algo.name,
        "seed": tc.seed,
        "timesteps": int(model.num_timesteps),
        "requested_timesteps": tc.total_timesteps,
        "planned_timesteps": planned,
        "rollout_steps": chunk,
        "wall_time_s": round(wall, 2),
        "steps_per_s": round(steps / wall, 1) if wall > 0 else None,
        # wall_time_s is this segment's, periodic evaluations included; the
        # cumulative times add the earlier segments' of a resumed run and split
        # training from periodic evaluation (as eval/time_log.csv does)
        "eval_time_s": round(eval_time, 2),
        "cumulative_train_time_s": round(earlier[0] + wall - eval_time, 2),
        "cumulative_eval_time_s": round(earlier[1] + eval_time, 2),
        "cumulative_wall_time_s": round(earlier[0] + earlier[1] + wall, 2),
        "load_average": [round(v, 2) for v in os.getloadavg()],
        "cpu_model": _cpu_model(),
        "interrupted": interrupted,
        "resumed_from": str(resume) if resume is not None else None,
        "resumed_at": start_steps if point is not None else None,
        "machine": machine_description(),
    }
    (run_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=2))
    env.close()
    eval_env.close()
    return TrainResult(
        run_dir,
        model_path,
        int(model.num_timesteps),
        wall,
        interrupted,
        requested_timesteps=tc.total_timesteps,
        planned_timesteps=planned,
        rollout_steps=chunk,
        resumed_from=point.model if point is not None else None,
    )
