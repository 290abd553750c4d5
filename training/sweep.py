"""``twolink sweep``: one config trained over several seeds, evaluated and summarised.

Each seed is a separate run folder (``<run name>_s<seed>``, or the config's
default ``<task>_<algo>_s<seed>``), trained in its own process (at most
``workers`` at once, each with the config's ``train.torch_threads``). Every
run's final model is then evaluated on the config's fixed episode set
(``evaluate.seed``, ``evaluate.episodes``; the periodic evaluations during
training use other episodes), and the sweep folder ``<group>_sweep/`` receives::

    sweep.json            per-seed metrics (with each seed's periodic-evaluation
                          curve) and their statistics over seeds
    table.md              the same as a markdown table
    learning_curves.png   periodic-evaluation success rate and return, mean over
                          seeds with the band between the worst and best seed
    <run>/                each run's per-episode results (see ``evaluate``)

With a study storage (``--storage``), the seeds are handed out by an Optuna
study instead, so that processes on several machines share one sweep
(:mod:`~twolink_gym.training.shared_sweep`); both write the summary with
:func:`write_summary`.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import multiprocessing
import os
import re
import signal
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from twolink_gym.training.algorithms import check_trainable
from twolink_gym.training.config import RunConfig, config_from_dict
from twolink_gym.training.evaluate import (
    Rollouts,
    evaluate_policies,
    format_value,
    summarize,
)
from twolink_gym.training.interrupts import defer_interrupts, interrupt_requested
from twolink_gym.training.stats import (
    SeedStatistics,
    seed_difference,
    seed_statistics,
    two_level_bootstrap,
)

from twolink_gym.tasks import TASKS

__all__ = [
    "SweepResult",
    "combine_sweeps",
    "compare_to_baseline",
    "format_sweep_table",
    "learning_curve",
    "parse_seeds",
    "plot_seed_curves",
    "seed_config",
    "seed_record",
    "sweep",
    "sweep_dir",
    "write_summary",
]

SWEEP_FILE = "sweep.json"


def parse_seeds(text: str) -> list[int]:
    """Seeds from ``"0-4"``, ``"0,3,7"`` or a mix (``"0-2,10"``), in order, without repeats.

    Raises
    ------
    ValueError
        Naming ``--seeds`` and the accepted forms.
    """
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if match is None or (match[2] is not None and int(match[2]) < int(match[1])):
            raise ValueError(
                f"--seeds {text!r}: expected non-negative integers and ranges such as "
                "'0-4', '0,3,7' or '0-2,10'"
            )
        low = int(match[1])
        high = int(match[2]) if match[2] is not None else low
        seeds.extend(s for s in range(low, high + 1) if s not in seeds)
    return seeds


def seed_config(cfg: RunConfig, seed: int) -> RunConfig:
    """``cfg`` with ``train.seed = seed`` and its own run folder name."""
    name = f"{cfg.train.run_name}_s{seed}" if cfg.train.run_name else None
    return dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, seed=seed, run_name=name))


def sweep_dir(cfg: RunConfig) -> Path:
    """The sweep's summary folder: ``<output_dir>/<group>_sweep``."""
    group = cfg.train.run_name or cfg.default_group
    return Path(cfg.train.output_dir) / f"{group}_sweep"


#: In a worker process: set by the sweep when it is interrupted (see :func:`_train_all`).
_STOP: Any = None


def _init_worker(stop: Any) -> None:
    """Worker initialiser: keep the sweep's stop event; interrupts stop training only.

    An interrupt that arrives outside a seed's learning loop (while its run is
    saved) waits: the run is saved whole and no other seed is started.
    """
    global _STOP
    _STOP = stop
    defer_interrupts()


def _train_one(data: dict[str, Any], source: str, overwrite: bool) -> tuple[int, float]:
    """Worker: train one seed's config (a fresh process; returns timesteps and wall time).

    A seed handed to the worker after the sweep was interrupted is not started.
    """
    from twolink_gym.training.train import train

    if interrupt_requested() or (_STOP is not None and _STOP.is_set()):
        return 0, 0.0
    result = train(config_from_dict(data, source), overwrite=overwrite)
    return result.timesteps, result.wall_time_s


@dataclasses.dataclass(frozen=True)
class SweepResult:
    """What :func:`sweep` produced."""

    out_dir: Path
    seeds: tuple[int, ...]
    runs: tuple[Path, ...]
    rollouts: tuple[Rollouts, ...]
    success: SeedStatistics
    final_distance: SeedStatistics
    summary: dict[str, Any]


def _train_summary(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "train_summary.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _interrupt_workers(signum: int, frame: Any) -> None:
    """SIGTERM on a sweep: interrupt every worker as Ctrl-C would (each saves its run), then stop.

    Ctrl-C in a terminal reaches the workers by itself (they share the
    terminal's process group); a SIGTERM sent to the sweep alone does not, and
    would otherwise leave them training after the sweep has gone.
    """
    if _STOP is not None:
        _STOP.set()
    for child in multiprocessing.active_children():
        if child.pid is not None:
            os.kill(child.pid, signal.SIGINT)
    raise KeyboardInterrupt


def _train_all(configs: Sequence[RunConfig], workers: int, overwrite: bool) -> None:
    """Train every config in at most ``workers`` processes; an interruption stops them all.

    On Ctrl-C or SIGTERM the running workers save their current model (as
    ``twolink train`` does on Ctrl-C, so ``--resume`` continues them), seeds
    not started yet are dropped, and ``KeyboardInterrupt`` is raised once every
    worker has exited.
    """
    global _STOP
    context = multiprocessing.get_context("spawn")  # torch and forked threads do not mix
    _STOP = context.Event()
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _interrupt_workers) if in_main_thread else None
    try:
        with concurrent.futures.ProcessPoolExecutor(
            workers, mp_context=context, initializer=_init_worker, initargs=(_STOP,)
        ) as pool:
            jobs = [
                pool.submit(_train_one, c.to_dict(), f"{c.source} (seed {c.train.seed})", overwrite)
                for c in configs
            ]
            try:
                for job in concurrent.futures.as_completed(jobs):
                    job.result()  # re-raise a worker's error here
            except KeyboardInterrupt:
                _STOP.set()  # seeds already queued to a worker are not started
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    finally:
        _STOP = None
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)


def sweep(
    cfg: RunConfig,
    seeds: Sequence[int],
    *,
    workers: int = 1,
    train: bool = True,
    overwrite: bool = False,
) -> SweepResult:
    """Train ``cfg`` once per seed (in parallel processes), evaluate and summarise.

    Parameters
    ----------
    cfg : RunConfig
    seeds : sequence of int
        Training seeds (``train.seed`` of each run).
    workers : int
        Training processes at once (each uses ``train.torch_threads`` threads).
    train : bool
        ``False``: only evaluate and summarise runs that were trained before.
    overwrite : bool
        Replace existing run folders of these seeds (otherwise an existing
        folder is an error, raised before anything is trained).

    Returns
    -------
    SweepResult
    """
    if not seeds:
        raise ValueError("sweep needs at least one seed")
    if train:
        check_trainable(cfg.algo.name, cfg.source)
    if workers < 1:
        raise ValueError(f"--workers must be an integer >= 1, got {workers}")
    configs = [seed_config(cfg, s) for s in seeds]
    runs = [c.run_dir for c in configs]
    if train and not overwrite:
        existing = [str(r) for r in runs if r.exists()]
        if existing:
            raise FileExistsError(
                f"run folders {existing} exist; pass --overwrite to train them again, or "
                "--no-train to evaluate them as they are"
            )
    if not train:
        missing = [str(r) for r in runs if not (r / "model.zip").exists()]
        if missing:
            raise FileNotFoundError(f"--no-train: no trained model in {missing}")
    if train:
        _train_all(configs, workers, overwrite)
    out = sweep_dir(cfg)
    _, rollouts = evaluate_policies([str(r) for r in runs], cfg, out, trajectories=False)
    records = [seed_record(s, run, r) for s, run, r in zip(seeds, runs, rollouts, strict=True)]
    summary, success, distance = write_summary(cfg, records, out)
    return SweepResult(out, tuple(seeds), tuple(runs), tuple(rollouts), success, distance, summary)


def seed_record(seed: int, run: Path, rollouts: Rollouts) -> dict[str, Any]:
    """One seed's entry of ``sweep.json`` (JSON-friendly).

    Parameters
    ----------
    seed : int
        The training seed.
    run : Path
        Its run folder (``train_summary.json`` and ``eval/`` are read from it).
    rollouts : Rollouts
        Its final model on the config's episode set.

    Returns
    -------
    dict
        ``seed``, ``run``, the metrics of :func:`~twolink_gym.training.evaluate.summarize`,
        ``episode_success`` (each evaluation episode's success, 0 or 1, in episode
        order), ``timesteps``, ``wall_time_s`` (the whole run's, summed over
        ``--resume`` segments), ``machine`` and ``curve`` (:func:`learning_curve`,
        or None).
    """
    info = _train_summary(run)
    return {
        "seed": seed,
        "run": str(run),
        **summarize(rollouts),
        "episode_success": [int(v) for v in rollouts.success],
        "timesteps": info.get("timesteps"),
        "wall_time_s": info.get("cumulative_wall_time_s", info.get("wall_time_s")),
        "machine": info.get("machine"),
        "curve": learning_curve(run),
    }


def write_summary(
    cfg: RunConfig, records: Sequence[dict[str, Any]], out: Path
) -> tuple[dict[str, Any], SeedStatistics, SeedStatistics]:
    """Statistics over seeds; ``sweep.json``, ``table.md`` and ``learning_curves.png`` in ``out``.

    Parameters
    ----------
    cfg : RunConfig
        The sweep's config (any seed's).
    records : sequence of dict
        :func:`seed_record` of every seed, in seed order.
    out : Path
        The sweep folder.

    Returns
    -------
    summary : dict
        The contents of ``sweep.json``. ``success_rate_two_level`` is the 95 %
        interval of the mean success rate over seeds *and* episodes
        (:func:`~twolink_gym.training.stats.two_level_bootstrap`), present when
        every record holds its ``episode_success``.
    success, final_distance : SeedStatistics
        Success rate and median final distance over seeds.
    """
    seeds = [int(r["seed"]) for r in records]
    success = seed_statistics(seeds, [float(r["success_rate"]) for r in records])
    two_level = None
    if records and all("episode_success" in r for r in records):
        low, high = two_level_bootstrap([r["episode_success"] for r in records])
        two_level = {
            "ci_low": low,
            "ci_high": high,
            "confidence": 0.95,
            "method": "bootstrap over seeds, then episodes within each seed",
        }
    distance = seed_statistics(
        seeds, [float(r["final_distance_median"]) for r in records], higher_is_better=False
    )
    summary = {
        "label": _group_label(cfg),
        "config": cfg.source,
        "task": cfg.env.task,
        "algo": cfg.algo.name,
        "evaluation": {"episodes": cfg.evaluate.episodes, "seed": cfg.evaluate.seed},
        "selection": "final model of each run (no selection on evaluation episodes)",
        "success_rate": success.to_dict(),
        "success_rate_two_level": two_level,
        "final_distance_median": distance.to_dict(),
        "seeds": list(records),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / SWEEP_FILE).write_text(json.dumps(summary, indent=2))
    (out / "table.md").write_text(format_sweep_table([summary]))
    plot_seed_curves(
        {_group_label(cfg): [r["curve"] for r in records]}, out / "learning_curves.png"
    )
    return summary, success, distance


def _group_label(cfg: RunConfig) -> str:
    """``"<algo> (<run name without the seed>)"``, e.g. ``"ppo (default)"``."""
    return f"{cfg.algo.name} ({cfg.train.run_name or cfg.default_group})"


def _distance_unit(task: str) -> str:
    """The unit a registered task declares for its distance (``""`` for another name)."""
    return TASKS[task].distance_unit if task in TASKS else ""


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def format_sweep_table(summaries: Sequence[dict[str, Any]]) -> str:
    """A markdown table, one row per sweep: every seed, mean, worst seed, intervals.

    ``mean [95% CI]`` is the interval over seeds; ``seeds + episodes 95% CI``
    adds the episode sample (``success_rate_two_level`` of ``sweep.json``; "n/a"
    for sweeps written without per-episode results).

    Parameters
    ----------
    summaries : sequence of dict
        The ``sweep.json`` contents of each sweep.
    """
    lines = [
        "| agent | task | seeds | success per seed | mean [95% CI] | seeds + episodes 95% CI | "
        "worst seed | final distance median (per seed) | training time per seed |",
        "|---|---|---:|---|---|---|---:|---|---|",
    ]
    for s in summaries:
        succ = s["success_rate"]
        per = " / ".join(_pct(v) for v in succ["values"])
        dists = " / ".join(format_value(d["final_distance_median"], ".2g") for d in s["seeds"])
        times = [d["wall_time_s"] for d in s["seeds"] if d.get("wall_time_s") is not None]
        time = f"{min(times) / 60:.1f}–{max(times) / 60:.1f} min" if times else "–"
        both = s.get("success_rate_two_level")
        both_cell = f"[{_pct(both['ci_low'])}, {_pct(both['ci_high'])}]" if both else "n/a"
        lines.append(
            f"| {s['label']} | {s['task']} | {len(succ['seeds'])} | "
            f"{per} | {_pct(succ['mean'])} [{_pct(succ['ci_low'])}, {_pct(succ['ci_high'])}] | "
            f"{both_cell} | {_pct(succ['worst'])} | {dists} {_distance_unit(s['task'])} | {time} |"
        )
    return "\n".join(lines) + "\n"


def learning_curve(run: Path) -> dict[str, list[float]] | None:
    """A run's periodic evaluations, JSON-friendly; None if it has none.

    Returns
    -------
    dict or None
        ``timesteps`` (environment steps), ``success`` (success rate of each
        evaluation, NaN if the task reports none) and ``return`` (mean episode
        return), lists of equal length, from ``<run>/eval/evaluations.npz``.
    """
    path = run / "eval" / "evaluations.npz"
    if not path.exists():
        return None
    data = np.load(path)
    steps = data["timesteps"]
    success = data["successes"].mean(axis=1) if "successes" in data else np.full(len(steps), np.nan)
    return {
        "timesteps": [float(t) for t in steps],
        "success": [float(v) for v in success],
        "return": [float(v) for v in data["results"].mean(axis=1)],
    }


def plot_seed_curves(
    groups: dict[str, Sequence[dict[str, list[float]] | None]], path: Path
) -> None:
    """Periodic-evaluation curves per group of seeds: mean line, worst-to-best band.

    Parameters
    ----------
    groups : dict of str to sequence of (dict or None)
        A label (one agent config) and the :func:`learning_curve` of each of
        its seeds (None: a seed without periodic evaluations, left out).
    path : Path
        The PNG to write.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for label, seed_curves in groups.items():
        curves = [c for c in seed_curves if c is not None]
        if not curves:
            continue
        n = min(len(c["timesteps"]) for c in curves)  # seeds stopped at the same steps
        steps = curves[0]["timesteps"][:n]
        for ax, k in ((axes[0], "success"), (axes[1], "return")):
            values = np.stack([np.asarray(c[k][:n], dtype=float) for c in curves])
            (line,) = ax.plot(steps, values.mean(axis=0), label=f"{label}, {len(curves)} seeds")
            ax.fill_between(
                steps, values.min(axis=0), values.max(axis=0), color=line.get_color(), alpha=0.2
            )
    axes[0].set_ylabel("success rate (periodic evaluation)")
    axes[1].set_ylabel("return (periodic evaluation)")
    for ax in axes:
        ax.set_xlabel("environment steps")
        ax.set_xscale("log")  # PPO and SAC runs differ ~10x to 50x in length
        ax.grid(alpha=0.3)
    axes[0].set_ylim(-0.02, 1.02)
    axes[0].legend(fontsize=8, loc="lower right")
    fig.suptitle("mean over seeds; band: worst to best seed")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _read_sweep(folder: Path) -> dict[str, Any]:
    path = folder / SWEEP_FILE
    if not path.exists():
        raise FileNotFoundError(f"{folder} holds no {SWEEP_FILE} (run `twolink sweep` first)")
    summary: dict[str, Any] = json.loads(path.read_text())
    return summary


def compare_to_baseline(
    summaries: Sequence[dict[str, Any]], baseline: dict[str, Any]
) -> tuple[str, list[dict[str, Any]]]:
    """Each sweep's success rate against a baseline sweep's, over seeds.

    Parameters
    ----------
    summaries : sequence of dict
        The ``sweep.json`` contents of the candidate sweeps.
    baseline : dict
        The ``sweep.json`` contents of the baseline sweep.

    Returns
    -------
    table : str
        A markdown table, one row per candidate: the means, the difference of
        the means with its 95% bootstrap interval, the probability of
        improvement and the Mann-Whitney p-value
        (:func:`~twolink_gym.training.stats.seed_difference`).
    records : list of dict
        The same, JSON-friendly.

    Raises
    ------
    ValueError
        If a candidate was evaluated on another task or another episode set
        (``evaluate.episodes``, ``evaluate.seed``) than the baseline: their
        success rates would not be comparable.
    """
    lines = [
        "| candidate | baseline | seeds | mean success | difference [95% CI] | "
        "P(candidate > baseline) | Mann-Whitney p |",
        "|---|---|---|---|---|---:|---:|",
    ]
    records = []
    for s in summaries:
        for key in ("task", "evaluation"):
            if s[key] != baseline[key]:
                raise ValueError(
                    f"{s['label']} and the baseline {baseline['label']} differ in {key} "
                    f"({s[key]} against {baseline[key]}): their success rates are not comparable"
                )
        d = seed_difference(s["success_rate"]["values"], baseline["success_rate"]["values"])
        records.append({"candidate": s["label"], "baseline": baseline["label"], **d.to_dict()})
        lines.append(
            f"| {s['label']} | {baseline['label']} | "
            f"{len(d.candidate_values)} / {len(d.baseline_values)} | "
            f"{_pct(s['success_rate']['mean'])} / {_pct(baseline['success_rate']['mean'])} | "
            f"{100 * d.difference:+.1f} pts [{100 * d.ci_low:+.1f}, {100 * d.ci_high:+.1f}] | "
            f"{d.probability_of_improvement:.2f} | {d.p_value:.2g} |"
        )
    return "\n".join(lines) + "\n", records


def _sweep_record(summary: dict[str, Any]) -> dict[str, Any]:
    """What a combined table's row rests on: the sweep's episode set and its success statistics."""
    return {
        key: summary.get(key)
        for key in ("label", "task", "evaluation", "success_rate", "success_rate_two_level")
    }


def combine_sweeps(
    sweep_dirs: Sequence[str | Path], out_dir: str | Path, baseline: str | Path | None = None
) -> str:
    """One table and one seed-band plot for several sweeps (e.g. PPO and SAC on a task).

    Parameters
    ----------
    sweep_dirs : sequence of path
        Folders written by :func:`sweep` (each holds ``sweep.json``).
    out_dir : path
        Receives ``table.md``, ``learning_curves.png`` and ``sweeps.json`` (per
        sweep: its label, task, evaluation episode set and success statistics,
        so that a reader of the table knows its episode set), and with a
        baseline ``comparison.md`` and ``comparison.json``.
    baseline : path, optional
        A sweep folder (one of ``sweep_dirs``, or an extra one, then listed
        first) that every other sweep is compared with (:func:`compare_to_baseline`).

    Returns
    -------
    str
        The markdown table (followed by the comparison table with a baseline).

    Raises
    ------
    FileNotFoundError
        Naming a folder without ``sweep.json``.
    ValueError
        If a sweep and the baseline were evaluated on different tasks or episode sets.
    """
    folders = [Path(d) for d in sweep_dirs]
    index = None
    if baseline is not None:
        resolved = [f.resolve() for f in folders]
        base = Path(baseline)
        if base.resolve() in resolved:
            index = resolved.index(base.resolve())
        else:
            folders.insert(0, base)
            index = 0
    summaries = [_read_sweep(folder) for folder in folders]
    comparison = None
    if index is not None:
        others = [s for i, s in enumerate(summaries) if i != index]
        comparison = compare_to_baseline(others, summaries[index])
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = format_sweep_table(summaries)
    (out / "table.md").write_text(table)
    (out / "sweeps.json").write_text(json.dumps([_sweep_record(s) for s in summaries], indent=2))
    if comparison is not None:
        (out / "comparison.md").write_text(comparison[0])
        (out / "comparison.json").write_text(json.dumps(comparison[1], indent=2))
        table += "\n" + comparison[0]
    # sweeps written before 0.5.0 hold no curves: read them from the runs
    groups: dict[str, Sequence[dict[str, list[float]] | None]] = {
        s["label"]: [
            d["curve"] if "curve" in d else learning_curve(Path(d["run"])) for d in s["seeds"]
        ]
        for s in summaries
    }
    plot_seed_curves(groups, out / "learning_curves.png")
    return table
