"""Time to solve: env steps and wall time until a run's periodic evaluation first reaches its task's target.

Reads finished (or interrupted) run folders of ``twolink train`` / ``twolink
sweep``: their ``config.yaml``, ``train_summary.json`` and
``eval/time_log.csv`` (one row per periodic evaluation with the cumulative
training time, periodic evaluations excluded). For each run (one config, one
seed) it finds the first periodic evaluation whose success rate is at or above
the target of the run's task (:data:`TARGETS`), or with ``--consecutive k`` the
first of ``k`` consecutive evaluations that all are. Per config (runs whose
configs differ only in ``train.seed``, ``train.run_name``, ``train.output_dir``):
each seed, the median and the worst seed; a seed that never reaches the target
counts as "not reached" (infinitely late: it is the worst seed, and the median
is "not reached" when half the seeds or more are).

The time is training time: the wall time of ``learn`` minus the periodic
evaluations' own time, summed over ``--resume`` segments. The periodic
evaluation is small (``train.eval_episodes``, 20 in the shipped configs) and
runs every ``train.eval_freq`` steps, so the first crossing is a noisy event
with a resolution of one evaluation interval.

Usage::

    python benchmarks/time_to_solve.py RUN_OR_SWEEP_OR_GLOB [...] [--consecutive K]
        [--json out.json]

Each argument is a run folder, a sweep folder (its ``sweep.json`` lists the
runs), or a glob of either (quote it). Prints a Markdown table and the machine
and load line; ``--json`` also writes every number.
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import json
import math
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from twolink_gym.training.config import RunConfig, config_from_dict
from twolink_gym.training.train import CONFIG_FILE, SUMMARY_FILE, read_time_log


@dataclasses.dataclass(frozen=True)
class SuccessTarget:
    """The success rate at which a task counts as solved.

    Attributes
    ----------
    task, actuation : str
        The task (``env.task``) and actuation (``env.actuation``) it applies to.
    success : float
        Target success rate in [0, 1] (reached at or above).
    source : str
        Where the target is stated.
    """

    task: str
    actuation: str
    success: float
    source: str


#: The targets of the learning results, as the results pages state them:
#: reach and balance in docs/results/notes/index.md ("Targets of reach and
#: balance"; also notes/reach.md and notes/balance.md), swing-up in
#: docs/results/notes/swingup.md (">= 90 % on the full arm", ">= 80 % on the
#: acrobot or the pendubot"), tracking in docs/results/notes/track.md
#: ("PPO >= 80 % on the default path family").
TARGETS: tuple[SuccessTarget, ...] = (
    SuccessTarget("reach", "full", 0.90, "docs/results/notes/index.md"),
    SuccessTarget("balance", "full", 0.95, "docs/results/notes/index.md"),
    SuccessTarget("swingup", "full", 0.90, "docs/results/notes/swingup.md"),
    SuccessTarget("swingup", "acrobot", 0.80, "docs/results/notes/swingup.md"),
    SuccessTarget("swingup", "pendubot", 0.80, "docs/results/notes/swingup.md"),
    SuccessTarget("track", "full", 0.80, "docs/results/notes/track.md"),
)


def target_for(task: str, actuation: str) -> SuccessTarget:
    """The :data:`TARGETS` entry of a task and actuation.

    Raises
    ------
    ValueError
        If none is stated for them (naming the ones that are).
    """
    for target in TARGETS:
        if (target.task, target.actuation) == (task, actuation):
            return target
    known = [f"{t.task}/{t.actuation}" for t in TARGETS]
    raise ValueError(
        f"no success target for env.task={task!r} with env.actuation={actuation!r}; "
        f"targets exist for {known}"
    )


@dataclasses.dataclass(frozen=True)
class SeedResult:
    """One run's time to its target.

    Attributes
    ----------
    seed : int
    run : str
        The run folder.
    steps : int or None
        Environment steps at the first (qualifying) evaluation at or above the
        target; None if never reached.
    train_time_s : float or None
        Training time at that evaluation [s] (periodic evaluations excluded);
        None if never reached.
    wall_time_s : float or None
        Wall time at the end of that evaluation [s] (periodic evaluations
        included); None if never reached.
    end_steps : int
        Environment steps at the run's last periodic evaluation.
    end_train_time_s : float
        Training time at the run's last periodic evaluation [s].
    best_success : float
        Highest success rate of any periodic evaluation.
    """

    seed: int
    run: str
    steps: int | None
    train_time_s: float | None
    wall_time_s: float | None
    end_steps: int
    end_train_time_s: float
    best_success: float


def first_at_target(success: np.ndarray, target: float, consecutive: int = 1) -> int | None:
    """Index of the first evaluation starting ``consecutive`` evaluations all at or above target.

    Parameters
    ----------
    success : ndarray, shape (n_evaluations,)
        Success rate of each periodic evaluation, in order (NaN: none reported).
    target : float
        Target success rate.
    consecutive : int
        How many evaluations in a row must be at or above it (>= 1).

    Returns
    -------
    int or None
        The index, or None if no such run of evaluations exists.
    """
    if consecutive < 1:
        raise ValueError(f"consecutive must be >= 1, got {consecutive}")
    ok = np.asarray(success, dtype=float) >= target  # NaN compares False
    for i in range(len(ok) - consecutive + 1):
        if ok[i : i + consecutive].all():
            return i
    return None


def seed_result(run: Path, cfg: RunConfig, target: float, consecutive: int = 1) -> SeedResult:
    """The time to ``target`` of one run folder.

    Raises
    ------
    ValueError
        If the run has no ``eval/time_log.csv`` (trained without periodic
        evaluations, or before the log existed).
    """
    log = read_time_log(run)
    if log is None or len(log["timesteps"]) == 0:
        raise ValueError(
            f"{run}: no periodic evaluations with wall times (eval/time_log.csv); train it "
            "with train.eval_freq > 0"
        )
    i = first_at_target(log["success_rate"], target, consecutive)
    success = log["success_rate"]
    return SeedResult(
        seed=cfg.train.seed,
        run=str(run),
        steps=None if i is None else int(log["timesteps"][i]),
        train_time_s=None if i is None else float(log["train_time_s"][i]),
        wall_time_s=None if i is None else float(log["wall_time_s"][i]),
        end_steps=int(log["timesteps"][-1]),
        end_train_time_s=float(log["train_time_s"][-1]),
        best_success=float(np.nanmax(success)) if np.isfinite(success).any() else math.nan,
    )


def median_and_worst(values: Sequence[float | None]) -> tuple[float, float]:
    """Median and largest value, a None (not reached) counting as infinitely late.

    Returns
    -------
    median, worst : float
        ``math.inf`` where the median or worst seed did not reach the target.
    """
    if not values:
        raise ValueError("median_and_worst needs at least one seed")
    xs = [math.inf if v is None else float(v) for v in values]
    return float(statistics.median(xs)), max(xs)


def pass_probability(target: float, episodes: int, true_success: float) -> float:
    """Probability that an evaluation of ``episodes`` episodes reaches ``target``.

    Each episode succeeds independently with probability ``true_success``; the
    evaluation reaches the target when at least ``ceil(target · episodes)`` do.
    """
    need = math.ceil(target * episodes - 1e-9)
    p = true_success
    return sum(
        math.comb(episodes, k) * p**k * (1 - p) ** (episodes - k) for k in range(need, episodes + 1)
    )


def noise_line(row: dict[str, Any]) -> str:
    """What crossing the target in one periodic evaluation of ``row``'s config means."""
    n, target = int(row["eval_episodes"]), float(row["target"])
    need = math.ceil(target * n - 1e-9)
    return (
        f"{row['config']}: {n} episodes per periodic evaluation, the target needs {need}/{n}; "
        f"a policy whose true success is {target:.0%} passes one evaluation with probability "
        f"{pass_probability(target, n, target):.0%}, one at {target - 0.1:.0%} with "
        f"{pass_probability(target, n, target - 0.1):.0%}."
    )


def _run_folders(arguments: Sequence[str]) -> list[Path]:
    """The run folders named by run folders, sweep folders (``sweep.json``) and globs."""
    runs: list[Path] = []
    for argument in arguments:
        matches = sorted(glob.glob(argument)) or [argument]
        for match in map(Path, matches):
            if (match / CONFIG_FILE).is_file():
                runs.append(match)
            elif (match / "sweep.json").is_file():
                sweep = json.loads((match / "sweep.json").read_text())
                runs += [Path(s["run"]) for s in sweep["seeds"]]
            else:
                raise ValueError(
                    f"{match}: neither a run folder ({CONFIG_FILE}) nor a sweep folder (sweep.json)"
                )
    return runs


def _group_key(cfg: RunConfig) -> str:
    data = cfg.to_dict()
    for key in ("seed", "run_name", "output_dir"):
        data["train"].pop(key, None)
    return json.dumps(data, sort_keys=True, default=str)


def time_to_solve(runs: Sequence[Path], consecutive: int = 1) -> list[dict[str, Any]]:
    """Time to target per config, over its seeds.

    Parameters
    ----------
    runs : sequence of Path
        Run folders (any configs, any seeds).
    consecutive : int
        Evaluations in a row that must be at or above the target.

    Returns
    -------
    list of dict
        One per config, in first-seen order: ``config`` (the run name without
        its seed), ``task``, ``actuation``, ``algo``, ``target``,
        ``target_source``, ``consecutive``, ``eval_freq``, ``eval_episodes``,
        ``pass_probability_at_target`` (that one evaluation of a policy whose
        true success is the target reaches it, :func:`pass_probability`),
        ``seeds`` (:class:`SeedResult` fields, in seed order), the median and
        worst seed's ``steps`` and ``train_time_s`` (``None``: not reached),
        ``reached`` (seeds that reached it) and ``machine`` / ``load_average``
        (from each run's ``train_summary.json``).
    """
    groups: dict[str, list[tuple[Path, RunConfig]]] = {}
    for run in runs:
        path = run / CONFIG_FILE
        cfg = config_from_dict(yaml.safe_load(path.read_text()), str(path))
        groups.setdefault(_group_key(cfg), []).append((run, cfg))
    rows = []
    for members in groups.values():
        members.sort(key=lambda m: m[1].train.seed)
        cfg = members[0][1]
        target = target_for(cfg.env.task, cfg.env.actuation)
        seeds = [seed_result(run, c, target.success, consecutive) for run, c in members]
        med_steps, worst_steps = median_and_worst([s.steps for s in seeds])
        med_time, worst_time = median_and_worst([s.train_time_s for s in seeds])
        summaries = [_summary(run) for run, _ in members]
        rows.append(
            {
                "config": cfg.run_name.removesuffix(f"_s{cfg.train.seed}"),
                "task": cfg.env.task,
                "actuation": cfg.env.actuation,
                "algo": cfg.algo.name,
                "target": target.success,
                "target_source": target.source,
                "consecutive": consecutive,
                "eval_freq": cfg.train.eval_freq,
                "eval_episodes": cfg.train.eval_episodes,
                "pass_probability_at_target": pass_probability(
                    target.success, cfg.train.eval_episodes, target.success
                ),
                "seeds": [dataclasses.asdict(s) for s in seeds],
                "reached": sum(s.steps is not None for s in seeds),
                "median_steps": _finite(med_steps),
                "worst_steps": _finite(worst_steps),
                "median_train_time_s": _finite(med_time),
                "worst_train_time_s": _finite(worst_time),
                "machine": [
                    {**s["machine"], "cpu_model": s.get("cpu_model")} if s.get("machine") else None
                    for s in summaries
                ],
                "load_average": [s.get("load_average") for s in summaries],
            }
        )
    return rows


def _summary(run: Path) -> dict[str, Any]:
    path = run / SUMMARY_FILE
    data: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    return data


def _finite(value: float) -> float | None:
    return None if math.isinf(value) else value


def _minutes(seconds: float | None) -> str:
    return "not reached" if seconds is None else f"{seconds / 60:.2f}"


def _steps(steps: int | float | None) -> str:
    return "not reached" if steps is None else f"{int(steps):,}"


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    """The Markdown table of :func:`time_to_solve`'s rows (times in minutes)."""
    lines = [
        "| config | target | periodic evaluation | seeds reached | steps to target, each seed "
        "| median steps | worst steps | training time to target [min], each seed "
        "| median [min] | worst [min] |",
        "|---|---:|---|---:|---|---:|---:|---|---:|---:|",
    ]
    for r in rows:
        steps = " / ".join(_steps(s["steps"]) for s in r["seeds"])
        times = " / ".join(_minutes(s["train_time_s"]) for s in r["seeds"])
        rule = f"≥ {r['target']:.0%}" + (
            f", {r['consecutive']} in a row" if r["consecutive"] > 1 else ""
        )
        lines.append(
            f"| {r['config']} | {rule} | {r['eval_episodes']} episodes every "
            f"{r['eval_freq']:,} steps | {r['reached']}/{len(r['seeds'])} | {steps} "
            f"| {_steps(r['median_steps'])} | {_steps(r['worst_steps'])} | {times} "
            f"| {_minutes(r['median_train_time_s'])} | {_minutes(r['worst_train_time_s'])} |"
        )
    return "\n".join(lines) + "\n"


def machine_line(rows: Sequence[dict[str, Any]]) -> str:
    """One line: the machines of the runs and the 1-minute load average at their ends."""
    machines = [m for r in rows for m in r["machine"] if m]

    def values(*keys: str) -> str:
        found = {str(next((m[k] for k in keys if m.get(k)), "?")) for m in machines}
        return ", ".join(sorted(found)) or "not recorded"

    loads = [load[0] for r in rows for load in r["load_average"] if load]
    load = f"{min(loads):.2f}–{max(loads):.2f}" if loads else "not recorded"
    accelerators = sorted(
        {str(m["device_kind"]) for m in machines if m.get("jax_backend", "cpu") != "cpu"}
    )
    on = f"; JAX on {', '.join(accelerators)}" if accelerators else ""
    return (
        f"Machine: {values('cpu_count')} CPUs ({values('cpu_model', 'processor')}){on}, "
        f"torch {values('torch')}, {values('torch_threads')} torch thread(s) per run; "
        f"load average (1 min) at the runs' ends: {load}."
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run folders, sweep folders or globs of them")
    parser.add_argument(
        "--consecutive",
        type=int,
        default=1,
        help="periodic evaluations in a row that must be at or above the target (default 1)",
    )
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    if args.consecutive < 1:
        parser.error(f"--consecutive must be >= 1, got {args.consecutive}")
    try:
        rows = time_to_solve(_run_folders(args.runs), args.consecutive)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(markdown_table(rows))
    print(machine_line(rows))
    for row in rows:
        print(noise_line(row))
    print(
        "Time is training time (the wall time of learning, periodic evaluations excluded, "
        "summed over resumed segments) until the first periodic evaluation at or above the "
        "target; a periodic evaluation has only its few episodes, so crossing the target "
        "there is a noisy event, resolved to one evaluation interval."
    )
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"configs": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
