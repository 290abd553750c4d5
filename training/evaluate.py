"""``twolink evaluate``: run policies on one fixed set of episodes and measure them.

The episode set (initial states and, for reach, targets) is drawn once from
``evaluate.seed`` (episode ``i`` is what ``env.reset(seed=seed + i)`` draws) and
replayed for every policy through ``reset(options={"state": ..., "target": ...})``,
so every policy faces identical episodes. All episodes run at once in one
:class:`~twolink_gym.vector_env.TwoLinkVectorEnv`.

Metrics per episode
-------------------
success
    ``info["is_success"]`` at the episode's last step (a balance episode that
    falls ends there, unsuccessful).
return
    Sum of rewards (the task's raw reward, never normalised).
final_distance
    ``info["distance"]`` at the last step: m for reach, rad (larger link tilt) for balance.
settle_time
    The time [s] from which the distance stays within the task's tolerance
    (reach: ``tolerance``, balance: ``success_angle``) until the episode ends,
    counting the initial state at t = 0. NaN if the distance is outside the
    tolerance at the end (never settled, or fell).
effort
    Control effort ``∫ |τ|² dt`` [N²·m²·s], ``τ = clip(a, -1, 1) · max_torque``,
    summed over both joints (RealAIGym's "torque cost").
length
    Steps in the episode.
arrival_time
    The first time [s] the distance is within the tolerance (for swing-up: the
    swing-up time, the first arrival in the upright band); NaN if never.
peak_torque
    The largest ``|τ|`` of any joint in the episode [N·m].
torque_integral
    ``∫ Σ_j |τ_j| dt`` [N·m·s].
work
    Energy the motors put in or take out, ``∫ |τ · dq| dt`` [J] (RealAIGym's
    "energy"), with the joint speeds at the start of each control period.
rms_distance, max_distance
    Root mean square and largest ``info["distance"]`` over the episode's states
    (t = 0 included): for track the RMS and the largest tracking error [m],
    what its success and ``info["rms_error"]`` measure.
smoothness
    Standard deviation of the step-to-step torque changes ``Δτ`` of the actuated
    joints [N·m] (RealAIGym's "torque smoothness"; smaller is smoother).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import json
import math
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from twolink_gym.training.config import EnvConfig, EvalConfig
from twolink_gym.training.policies import LoadedPolicy, applicable_controllers, load_policy
from twolink_gym.training.stats import wilson_interval

from twolink_gym.env import TwoLinkEnv
from twolink_gym.tasks import Task
from twolink_gym.vector_env import TwoLinkVectorEnv

__all__ = [
    "EpisodeSet",
    "Rollouts",
    "draw_episodes",
    "evaluate_policies",
    "run_policy",
    "settle_tolerance",
    "staged_output",
    "summarize",
    "write_evaluation",
    "write_rollouts",
]

Array = NDArray[np.float64]

#: Goals longer than this (a track episode's reference table, 6317 numbers) are not
#: written to ``episodes.csv`` and ``episode_set.npz``; the set's seed is, and
#: :func:`draw_episodes` draws the same episodes again from it.
SMALL_GOAL_SIZE = 4

METRICS = (
    "success",
    "return",
    "final_distance",
    "settle_time",
    "effort",
    "length",
    "arrival_time",
    "peak_torque",
    "torque_integral",
    "work",
    "smoothness",
    "rms_distance",
    "max_distance",
)


def settle_tolerance(task: Task) -> float:
    """The distance tolerance of ``task`` used for the settling time (m or rad).

    The option the task names as its :attr:`~twolink_gym.tasks.Task.tolerance_option`.

    Raises
    ------
    ValueError
        If the task names none.
    """
    if task.tolerance_option is None:
        raise ValueError(
            f"task {task.name!r} declares no tolerance_option, so it has no settling tolerance"
        )
    return float(getattr(task, task.tolerance_option))


@dataclasses.dataclass(frozen=True)
class EpisodeSet:
    """Initial states ``(n, 4)`` and goals ``(n, goal_size)`` of ``n`` episodes."""

    states: Array
    goals: Array
    seed: int

    def __len__(self) -> int:
        return self.states.shape[0]

    def options(self) -> dict[str, Array]:
        """The reset options that replay these episodes in a vector env."""
        opts = {"state": self.states}
        if self.goals.shape[1]:
            opts["goal"] = self.goals
        return opts


def _vector_env(env_cfg: EnvConfig, n: int) -> TwoLinkVectorEnv:
    return TwoLinkVectorEnv(n, max_episode_steps=env_cfg.max_episode_steps, **env_cfg.make_kwargs())


def draw_episodes(env_cfg: EnvConfig, n: int, seed: int) -> EpisodeSet:
    """Draw ``n`` episodes; episode ``i`` is the one a single env draws with ``reset(seed=seed + i)``."""
    venv = _vector_env(env_cfg, n)
    venv.reset(seed=seed)
    return EpisodeSet(venv.state, venv.goal, seed)


@dataclasses.dataclass
class Rollouts:
    """Per-episode results of one policy on an :class:`EpisodeSet` (leading axis ``n``).

    ``distance`` and ``states`` have ``T + 1`` samples (t = 0 .. T·dt) and
    ``actions`` ``T`` (both joints' normalised torques; 0 at a joint without a
    motor), NaN after an episode's end. ``run_dir`` is the agent's folder
    (config and learning curve; ``None`` for a controller). The metrics are
    described in the module notes.
    """

    label: str
    kind: str
    success: NDArray[np.bool_]
    returns: Array
    final_distance: Array
    settle_time: Array
    effort: Array
    length: NDArray[np.int64]
    distance: Array
    states: Array
    actions: Array
    dt: float
    arrival_time: Array
    peak_torque: Array
    torque_integral: Array
    work: Array
    smoothness: Array
    rms_distance: Array
    max_distance: Array
    run_dir: Path | None = None

    def metrics(self) -> dict[str, NDArray[Any]]:
        """The per-episode metrics by name (:data:`METRICS`)."""
        return {
            "success": self.success,
            "return": self.returns,
            "final_distance": self.final_distance,
            "settle_time": self.settle_time,
            "effort": self.effort,
            "length": self.length,
            "arrival_time": self.arrival_time,
            "peak_torque": self.peak_torque,
            "torque_integral": self.torque_integral,
            "work": self.work,
            "smoothness": self.smoothness,
            "rms_distance": self.rms_distance,
            "max_distance": self.max_distance,
        }


def settle_times(distance: Array, length: NDArray[np.int64], tol: float, dt: float) -> Array:
    """Settling times [s] from distance histories ``(n, T + 1)`` (see the module notes)."""
    out = np.full(distance.shape[0], np.nan)
    for i, (d, k) in enumerate(zip(distance, length, strict=True)):
        d = d[: k + 1]
        outside = np.flatnonzero(~(d <= tol))
        if outside.size == 0:
            out[i] = 0.0
        elif outside[-1] < k:
            out[i] = (outside[-1] + 1) * dt
    return out


def arrival_times(distance: Array, tol: float, dt: float) -> Array:
    """First times [s] the distance histories ``(n, T + 1)`` are within ``tol`` (NaN: never)."""
    inside = distance <= tol
    first = np.argmax(inside, axis=1)
    return np.where(inside.any(axis=1), first * dt, np.nan)


def torque_metrics(
    torque: Array, speed: Array, actuated: Sequence[int], dt: float
) -> dict[str, Array]:
    """RealAIGym-style torque metrics of episodes (see the module notes), each ``(n,)``.

    Parameters
    ----------
    torque : ndarray, shape (n, T, 2)
        Joint torques [N·m], NaN after an episode's end.
    speed : ndarray, shape (n, T, 2)
        Joint speeds at the start of each control period [rad/s].
    actuated : sequence of int
        The joints with a motor (for the smoothness).
    dt : float
        Control period [s].
    """
    valid = np.isfinite(torque[..., 0])
    tau = np.where(valid[..., None], torque, 0.0)
    dq = np.where(valid[..., None], speed, 0.0)
    change = np.diff(torque[..., list(actuated)], axis=1).reshape(torque.shape[0], -1)
    with np.errstate(invalid="ignore"):
        smooth = np.array(
            [np.std(row[np.isfinite(row)]) if np.isfinite(row).any() else np.nan for row in change]
        )
    return {
        "peak_torque": np.max(np.abs(tau), axis=(1, 2)),
        "torque_integral": np.sum(np.abs(tau), axis=(1, 2)) * dt,
        "work": np.sum(np.abs(np.sum(tau * dq, axis=2)), axis=1) * dt,
        "smoothness": smooth,
    }


def run_policy(policy: LoadedPolicy, env_cfg: EnvConfig, episodes: EpisodeSet) -> Rollouts:
    """Run ``policy`` deterministically on every episode of ``episodes`` (batched)."""
    n = len(episodes)
    venv = _vector_env(env_cfg, n)
    sim = venv.sim
    horizon = venv.max_episode_steps
    if horizon is None:
        raise ValueError("an evaluation needs a finite episode length (env.max_episode_steps)")
    # seeded as well: the episodes are replayed from the options, and any noise the
    # env draws during them (observation or torque noise) is reproducible
    obs, info = venv.reset(seed=episodes.seed, options=episodes.options())
    distance = np.full((n, horizon + 1), np.nan)
    states = np.full((n, horizon + 1, 4), np.nan)
    actions = np.full((n, horizon, 2), np.nan)
    distance[:, 0] = info["distance"]
    states[:, 0] = info["state"]
    returns = np.zeros(n)
    effort = np.zeros(n)
    success = np.zeros(n, dtype=bool)
    length = np.zeros(n, dtype=np.int64)
    active = np.ones(n, dtype=bool)
    pstate = None
    starts = np.ones(n, dtype=bool)
    for t in range(horizon):
        action, pstate = policy.predictor.predict(
            obs, state=pstate, episode_start=starts, deterministic=True
        )
        starts = np.zeros(n, dtype=bool)
        action = np.clip(
            np.asarray(action, dtype=np.float64).reshape(n, sim.action_size), -1.0, 1.0
        )
        obs, reward, terminated, truncated, info = venv.step(action)
        a = active
        action = sim.expand_action(action)
        tau = sim.torque(action)
        returns[a] += reward[a]
        effort[a] += np.sum(tau[a] ** 2, axis=1) * sim.dt
        distance[a, t + 1] = info["distance"][a]
        states[a, t + 1] = info["state"][a]
        actions[a, t] = action[a]
        done = a & (terminated | truncated)
        success[done] = info["is_success"][done]
        length[done] = t + 1
        active = a & ~done
        if not active.any():
            break
    venv.close()
    final = distance[np.arange(n), length]
    tol = settle_tolerance(sim.task)
    torques = torque_metrics(actions * sim.max_torque, states[:, :-1, 2:], sim.actuated, sim.dt)
    return Rollouts(
        label=policy.label,
        kind=policy.kind,
        success=success,
        returns=returns,
        final_distance=final,
        settle_time=settle_times(distance, length, tol, sim.dt),
        effort=effort,
        length=length,
        distance=distance,
        states=states,
        actions=actions,
        dt=sim.dt,
        arrival_time=arrival_times(distance, tol, sim.dt),
        rms_distance=np.sqrt(np.nanmean(distance**2, axis=1)),
        max_distance=np.nanmax(distance, axis=1),
        run_dir=policy.run_dir,
        **torques,
    )


def _stat(values: NDArray[Any], fn: Any) -> float | None:
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    return float(fn(values)) if values.size else None


def summarize(r: Rollouts) -> dict[str, Any]:
    """Aggregate metrics of one policy (JSON-friendly; None where undefined).

    ``success_ci`` is the 95 % Wilson interval of the success rate over the
    episode sample (:func:`~twolink_gym.training.stats.wilson_interval`): how
    far the rate could move on another episode set of the same size.
    """
    settled = np.isfinite(r.settle_time)
    return {
        "policy": r.label,
        "kind": r.kind,
        "episodes": len(r.success),
        "success_rate": float(np.mean(r.success)),
        "success_ci": list(wilson_interval(int(np.sum(r.success)), len(r.success))),
        "return_mean": _stat(r.returns, np.mean),
        "return_std": _stat(r.returns, np.std),
        "final_distance_median": _stat(r.final_distance, np.median),
        "final_distance_mean": _stat(r.final_distance, np.mean),
        "final_distance_p90": _stat(r.final_distance, lambda v: np.percentile(v, 90)),
        "settled_fraction": float(np.mean(settled)),
        "settle_time_median": _stat(r.settle_time, np.median),
        "effort_mean": _stat(r.effort, np.mean),
        "length_mean": _stat(r.length, np.mean),
        "arrived_fraction": float(np.mean(np.isfinite(r.arrival_time))),
        "arrival_time_median": _stat(r.arrival_time, np.median),
        "peak_torque_max": _stat(r.peak_torque, np.max),
        "torque_integral_mean": _stat(r.torque_integral, np.mean),
        "work_mean": _stat(r.work, np.mean),
        "smoothness_mean": _stat(r.smoothness, np.mean),
        "rms_distance_median": _stat(r.rms_distance, np.median),
        "rms_distance_p90": _stat(r.rms_distance, lambda v: np.percentile(v, 90)),
        "max_distance_median": _stat(r.max_distance, np.median),
    }


def _slug(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in label).strip("_")


def write_rollouts(
    r: Rollouts, episodes: EpisodeSet, out_dir: Path, *, trajectories: bool = True
) -> Path:
    """Write ``episodes.csv``, ``summary.json`` and (optionally) ``trajectories.npz`` of one policy."""
    folder = out_dir / _slug(r.label)
    folder.mkdir(parents=True, exist_ok=True)
    metrics = r.metrics()
    with (folder / "episodes.csv").open("w", newline="") as fh:
        writer = csv.writer(fh)
        goal_size = episodes.goals.shape[1] if episodes.goals.shape[1] <= SMALL_GOAL_SIZE else 0
        goal_cols = [f"goal_{j}" for j in range(goal_size)]
        writer.writerow(["episode", "q1", "q2", "dq1", "dq2", *goal_cols, *metrics])
        for i in range(len(episodes)):
            row = [i, *episodes.states[i].tolist(), *episodes.goals[i, :goal_size].tolist()]
            for v in metrics.values():
                x = v[i].item()
                row.append(int(x) if isinstance(x, bool) else x)
            writer.writerow(row)
    (folder / "summary.json").write_text(json.dumps(summarize(r), indent=2))
    if not trajectories:
        return folder
    np.savez_compressed(
        folder / "trajectories.npz",
        distance=r.distance,
        states=r.states,
        actions=r.actions,
        dt=r.dt,
    )
    return folder


@contextlib.contextmanager
def staged_output(out_dir: str | Path) -> Iterator[Path]:
    """A temporary folder to write results into, moved into ``out_dir`` only on success.

    Yields an empty folder beside ``out_dir`` (in its nearest existing parent,
    so that the move is a rename). When the ``with`` block ends normally, each
    file and folder written there replaces the one of the same name in
    ``out_dir`` (created with its parents then; everything else in it is
    kept). When the block raises, the temporary folder is deleted, and
    ``out_dir`` and its parents are left as they were: a failed command writes
    nothing.

    Parameters
    ----------
    out_dir : str or Path
        The results folder.
    """
    out = Path(out_dir)
    parent = out.parent
    while not parent.is_dir():
        if parent.exists() or parent == parent.parent:
            raise NotADirectoryError(f"cannot write results to {out}: {parent} is not a folder")
        parent = parent.parent
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"cannot write results to {out}: it is a file")
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=parent))
    try:
        yield tmp
        out.mkdir(parents=True, exist_ok=True)
        for item in sorted(tmp.iterdir()):
            target = out / item.name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
            os.replace(item, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def resolve_policies(specs: Sequence[str], cfg: EvalConfig) -> list[str]:
    """Expand ``"auto"`` into the classical controllers that apply to the task and actuation."""
    auto = applicable_controllers(cfg.env.task, cfg.env.actuation)
    out: list[str] = []
    for spec in specs:
        items = auto if spec == "auto" else [spec]
        out.extend(s for s in items if s not in out)
    return out


def evaluate_policies(
    specs: Sequence[str],
    cfg: EvalConfig,
    out_dir: str | Path | None = None,
    *,
    episodes: int | None = None,
    seed: int | None = None,
    trajectories: bool = True,
) -> tuple[EpisodeSet, list[Rollouts]]:
    """Evaluate every policy of ``specs`` on the config's episode set; optionally write results.

    Parameters
    ----------
    specs : sequence of str
        Controller names, ``"auto"``, ``pretrained:NAME``, run folders, exported
        agents or model files.
    cfg : EvalConfig
        Its ``env`` and ``evaluate`` sections fix the environment and episodes.
    out_dir : path, optional
        Where to write per-policy results, ``episode_set.npz`` (initial states,
        the seed, and goals of at most :data:`SMALL_GOAL_SIZE` entries) and
        ``summary.json`` (:func:`write_evaluation`), once every policy has run.
    episodes, seed : int, optional
        Override ``cfg.evaluate.episodes`` / ``cfg.evaluate.seed``.
    trajectories : bool
        Also write each policy's ``trajectories.npz`` (states, actions, distances).
    """
    n = episodes if episodes is not None else cfg.evaluate.episodes
    base = seed if seed is not None else cfg.evaluate.seed
    episode_set = draw_episodes(cfg.env, n, base)
    env = TwoLinkEnv(**cfg.env.make_kwargs())
    results = []
    for spec in resolve_policies(specs, cfg):
        policy = load_policy(spec, cfg.env, env)
        results.append(run_policy(policy, cfg.env, episode_set))
    if out_dir is not None:
        with staged_output(out_dir) as tmp:
            write_evaluation(tmp, cfg.env.task, episode_set, results, trajectories=trajectories)
    return episode_set, results


def write_evaluation(
    out: Path,
    task: str,
    episode_set: EpisodeSet,
    results: Sequence[Rollouts],
    *,
    trajectories: bool = True,
) -> None:
    """Write ``episode_set.npz``, ``summary.json`` and each policy's folder into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, Any] = {"states": episode_set.states, "seed": np.int64(episode_set.seed)}
    if episode_set.goals.shape[1] <= SMALL_GOAL_SIZE:
        arrays["goals"] = episode_set.goals
    np.savez(out / "episode_set.npz", **arrays)
    for r in results:
        write_rollouts(r, episode_set, out, trajectories=trajectories)
    summary = {
        "task": task,
        "episodes": len(episode_set),
        "seed": episode_set.seed,
        "policies": [summarize(r) for r in results],
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, allow_nan=False))


def format_value(value: float | None, fmt: str) -> str:
    """Format a number for a table ("–" for None/NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return format(value, fmt)
