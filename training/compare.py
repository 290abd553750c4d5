"""``twolink compare``: every agent and every applicable controller on one episode set.

Writes, into the output folder::

    table.md              the comparison table (markdown)
    field_metrics.md      the field's (RealAIGym's) criteria: arrival (swing-up) time,
                          peak and integrated torque, work, torque smoothness
    summary.json          the same numbers, plus the episode set's seed
    learning_curves.png   success rate and return of each agent's periodic evaluations
    distributions.png     per-episode final distance, return and effort, per policy
    trajectory.png        an example episode (the same one) for every policy
    <policy>/             per-episode CSV, summary and trajectories (see ``evaluate``)
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from twolink_gym.training.config import EvalConfig
from twolink_gym.training.evaluate import (
    EpisodeSet,
    Rollouts,
    evaluate_policies,
    format_value,
    settle_tolerance,
    staged_output,
    summarize,
    write_evaluation,
)

from twolink_gym.tasks import TASKS

__all__ = [
    "OUTPUT_FILES",
    "check_output",
    "compare",
    "field_metrics_table",
    "markdown_table",
    "plot_distributions",
    "plot_learning_curves",
    "plot_trajectory",
    "trajectory_figure",
]


#: A table column: its header, and the cell it shows of a policy's :func:`summarize` dict.
Column = tuple[str, Callable[[dict[str, Any]], str]]


def _percent(key: str) -> Callable[[dict[str, Any]], str]:
    return lambda s: f"{100 * s[key]:.0f}%"


def _value(key: str, spec: str) -> Callable[[dict[str, Any]], str]:
    return lambda s: format_value(s[key], spec)


def _pair(first: str, second: str, spec: str, sep: str) -> Callable[[dict[str, Any]], str]:
    return lambda s: f"{format_value(s[first], spec)}{sep}{format_value(s[second], spec)}"


_POLICY: Column = ("policy", lambda s: str(s["policy"]))
_SUCCESS: Column = ("success", _percent("success_rate"))


def _interval(s: dict[str, Any]) -> str:
    """The success rate's 95 % Wilson interval over the episodes, in points."""
    low, high = s["success_ci"]
    return f"[{100 * low:.0f}, {100 * high:.0f}]"


#: The episode-sample interval of the success rate (Wilson, 95 %).
_INTERVAL: Column = ("95% CI (episodes)", _interval)
_RETURN: Column = ("return (mean ± std)", _pair("return_mean", "return_std", ".1f", " ± "))
_EFFORT: Column = ("effort ∫τ²dt [N²m²s]", _value("effort_mean", ".0f"))
#: The track task's error columns: over the episode, what its success measures.
_TRACKING: tuple[Column, ...] = (
    ("RMS error median / p90 [m]", _pair("rms_distance_median", "rms_distance_p90", ".3g", " / ")),
    ("max error median [m]", _value("max_distance_median", ".3g")),
)
_FIELD_METRICS: tuple[Column, ...] = (
    _POLICY,
    _SUCCESS,
    _INTERVAL,
    ("arrived", _percent("arrived_fraction")),
    ("arrival time median [s]", _value("arrival_time_median", ".2f")),
    ("peak torque max [N·m]", _value("peak_torque_max", ".3g")),
    ("∫Σ\\|τ\\|dt mean [N·m·s]", _value("torque_integral_mean", ".3g")),
    ("∫τ²dt mean [N²m²s]", _value("effort_mean", ".3g")),
    ("work ∫\\|τ·dq\\|dt mean [J]", _value("work_mean", ".3g")),
    ("smoothness std(Δτ) mean [N·m]", _value("smoothness_mean", ".3g")),
)


def _table(results: Sequence[Rollouts], columns: Sequence[Column]) -> str:
    """A markdown table of ``columns`` (the first left-aligned), one row per policy."""
    lines = [
        "| " + " | ".join(header for header, _ in columns) + " |",
        "|---|" + "---:|" * (len(columns) - 1),
    ]
    for r in results:
        s = summarize(r)
        lines.append("| " + " | ".join(cell(s) for _, cell in columns) + " |")
    return "\n".join(lines) + "\n"


def markdown_table(results: Sequence[Rollouts], task: str) -> str:
    """The comparison table, one row per policy.

    For a task whose success is judged over the episode
    (:attr:`~twolink_gym.tasks.Task.success_over_episode`: track), the
    tracking error (RMS and largest) replaces the final distance and the
    settling columns.
    """
    if TASKS[task].success_over_episode:
        middle = _TRACKING
    else:
        unit = TASKS[task].distance_unit
        middle = (
            (
                f"final distance median / p90 [{unit}]",
                _pair("final_distance_median", "final_distance_p90", ".3g", " / "),
            ),
            ("settled", _percent("settled_fraction")),
            ("settle time median [s]", _value("settle_time_median", ".2f")),
        )
    return _table(results, (_POLICY, _SUCCESS, _INTERVAL, _RETURN, *middle, _EFFORT))


def field_metrics_table(results: Sequence[Rollouts]) -> str:
    """The field's criteria (RealAIGym's), one row per policy (means over episodes)."""
    return _table(results, _FIELD_METRICS)


def _load_curve(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / "eval" / "evaluations.npz"
    if not path.exists():
        return None
    data = np.load(path)
    out = {"timesteps": data["timesteps"], "return": data["results"].mean(axis=1)}
    if "successes" in data and data["successes"].size:
        out["success"] = data["successes"].mean(axis=1)
    return out


def plot_learning_curves(
    runs: Sequence[tuple[str, Path]], path: Path, baselines: Sequence[Rollouts] = ()
) -> bool:
    """Success rate and mean return of each run's periodic evaluations vs timesteps.

    Classical controllers are drawn as horizontal lines (their rate on the
    comparison episodes). Returns False (and writes nothing) if no run has an
    evaluation log.
    """
    curves = [(label, c) for label, run in runs if (c := _load_curve(run)) is not None]
    if not curves:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for label, c in curves:
        if "success" in c:
            axes[0].plot(c["timesteps"], 100 * c["success"], marker="o", ms=3, label=label)
        axes[1].plot(c["timesteps"], c["return"], marker="o", ms=3, label=label)
    for i, b in enumerate(baselines):
        style = {"color": f"C{len(curves) + i}", "ls": "--", "lw": 1}
        axes[0].axhline(100 * np.mean(b.success), label=b.label, **style)
        axes[1].axhline(float(np.mean(b.returns)), label=b.label, **style)
    axes[0].set(xlabel="environment steps", ylabel="success rate [%]", ylim=(-3, 103))
    axes[1].set(xlabel="environment steps", ylabel="mean episode return")
    axes[0].set_title("periodic evaluation (deterministic)")
    axes[1].set_title("periodic evaluation (deterministic)")
    for ax in axes:
        ax.set_xscale("log")  # PPO and SAC runs differ ~10x in length
        ax.grid(alpha=0.3, which="both")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_distributions(
    results: Sequence[Rollouts], task: str, path: Path, tolerance: float | None = None
) -> None:
    """Box plots of per-episode final distance (with the task's tolerance), return and effort."""
    labels = [r.label for r in results]
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    panels = [
        (
            "final distance [" + TASKS[task].distance_unit + "]",
            [r.final_distance for r in results],
        ),
        ("episode return", [r.returns for r in results]),
        ("effort ∫τ²dt [N²m²s]", [r.effort for r in results]),
    ]
    for ax, (title, data) in zip(axes, panels, strict=True):
        ax.boxplot(data, showfliers=True)
        ax.set_xticks(range(1, len(labels) + 1), labels, rotation=25, ha="right", fontsize=8)
        ax.set_title(title)
        ax.grid(alpha=0.3, axis="y")
    axes[0].set_yscale("log")
    if tolerance is not None:
        axes[0].axhline(tolerance, color="k", ls="--", lw=0.8, label="tolerance")
        axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


#: Line styles that tell the policies of one panel apart where their lines overlap.
_LINE_STYLES = ("-", "--", ":", "-.")


def _line_style(i: int) -> dict[str, Any]:
    """The colour, dash pattern and width of policy ``i``: no two policies of one plot alike."""
    return {
        "color": f"C{i % 10}",
        "ls": _LINE_STYLES[(i // 10 + i) % len(_LINE_STYLES)],
        "lw": 2.2 - 0.3 * (i % 4),
    }


def plot_trajectory(
    results: Sequence[Rollouts], task: str, tolerance: float, path: Path, episode: int = 0
) -> None:
    """Distance to the goal and each joint's torque over time, one example episode per policy.

    Three panels (distance, base torque, elbow torque), each with its legend;
    a policy has the same colour, dash pattern and width in every panel, and
    no two policies have the same, so that overlapping lines stay apart.
    """
    fig = trajectory_figure(results, task, tolerance, episode)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def trajectory_figure(
    results: Sequence[Rollouts], task: str, tolerance: float, episode: int = 0
) -> Any:
    """The matplotlib figure of :func:`plot_trajectory` (the caller closes it)."""
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for i, r in enumerate(results):
        style = _line_style(i)
        d = r.distance[episode]
        t = np.arange(d.size) * r.dt
        axes[0].plot(t, d, label=r.label, **style)
        a = r.actions[episode]
        ta = np.arange(1, a.shape[0] + 1) * r.dt
        for joint in (0, 1):
            axes[1 + joint].plot(ta, a[:, joint], label=r.label, alpha=0.85, **style)
    axes[0].axhline(tolerance, color="k", ls="--", lw=0.8, label="tolerance")
    if TASKS[task].distance_log_axis:
        axes[0].set_yscale("log")
    axes[0].set(
        xlabel="time [s]",
        ylabel=f"distance [{TASKS[task].distance_unit}]",
        title=f"episode {episode}: distance to goal",
    )
    for joint, name in ((0, "base (joint 1)"), (1, "elbow (joint 2)")):
        axes[1 + joint].set(
            xlabel="time [s]",
            ylabel="normalised torque a = τ / max_torque",
            title=f"episode {episode}: {name} torque",
            ylim=(-1.05, 1.05),
        )
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def compare(
    cfg: EvalConfig,
    agents: Sequence[str | Path],
    out_dir: str | Path,
    *,
    controllers: Sequence[str] | None = None,
    episodes: int | None = None,
    trajectories: bool = True,
    overwrite: bool = False,
) -> tuple[str, EpisodeSet, list[Rollouts]]:
    """Evaluate agents and controllers on one episode set; write the table and plots.

    Parameters
    ----------
    cfg : EvalConfig
        Environment and episode set (``evaluate`` section).
    agents : sequence of str or path
        Trained agents: run folders, model files, exported agent folders or
        shipped agents ``pretrained:NAME``.
    out_dir : path
        Output folder, written once every policy has run (a failure writes nothing).
    controllers : sequence of str, optional
        Controller names or ``"auto"`` (default: ``cfg.evaluate.controllers``).
    episodes : int, optional
        Override the number of episodes.
    trajectories : bool
        Also write per-policy ``trajectories.npz`` files (large; off for docs/).
    overwrite : bool
        Replace a comparison that ``out_dir`` already holds: its files and its
        policies' folders (other files are kept). Without it such a folder
        raises ``FileExistsError`` before anything runs.

    Returns
    -------
    table : str
        The markdown table.
    episode_set : EpisodeSet
    results : list of Rollouts
    """
    earlier = check_output(Path(out_dir), overwrite)
    ctrl = list(cfg.evaluate.controllers if controllers is None else controllers)
    specs = [str(a) for a in agents] + ctrl
    episode_set, results = evaluate_policies(specs, cfg, episodes=episodes)
    table = markdown_table(results, cfg.env.task)
    with staged_output(out_dir) as out:
        _write_comparison(cfg, out, episode_set, results, table, trajectories)
        written = {item.name for item in out.iterdir()}
    for folder in earlier:  # an earlier comparison's policies that this one does not have
        if folder.name not in written:
            shutil.rmtree(folder)
    return table, episode_set, results


#: The files :func:`compare` writes into its output folder, besides one folder per policy.
OUTPUT_FILES = (
    "table.md",
    "field_metrics.md",
    "summary.json",
    "episode_set.npz",
    "learning_curves.png",
    "distributions.png",
    "trajectory.png",
)


def check_output(out: Path, overwrite: bool) -> list[Path]:
    """Refuse a folder that holds a comparison unless ``overwrite``; return its policy folders.

    Raises
    ------
    FileExistsError
        Naming the folder and how to proceed.
    """
    if not out.is_dir():
        return []
    existing = [name for name in OUTPUT_FILES if (out / name).exists()]
    if not existing:
        return []
    if not overwrite:
        raise FileExistsError(
            f"{out} already holds a comparison ({', '.join(existing)}); give another --out, "
            "or --overwrite to replace it (its files and policy folders are deleted)"
        )
    return [d for d in out.iterdir() if d.is_dir() and (d / "episodes.csv").is_file()]


def _write_comparison(
    cfg: EvalConfig,
    out: Path,
    episode_set: EpisodeSet,
    results: Sequence[Rollouts],
    table: str,
    trajectories: bool,
) -> None:
    """Write the evaluation, the tables and the plots of :func:`compare` into ``out``."""
    write_evaluation(out, cfg.env.task, episode_set, results, trajectories=trajectories)
    (out / "table.md").write_text(
        f"Task `{cfg.env.task}`, {len(episode_set)} episodes (seeds {episode_set.seed}.."
        f"{episode_set.seed + len(episode_set) - 1}), identical for every policy.\n\n" + table
    )
    (out / "field_metrics.md").write_text(
        f"Task `{cfg.env.task}`, the episodes of table.md; the field's criteria "
        "(training/evaluate.py, module notes).\n\n" + field_metrics_table(results)
    )
    agent_runs = [(r.label, r.run_dir) for r in results if r.run_dir is not None]
    baselines = [r for r in results if r.kind == "controller"]
    plot_learning_curves(agent_runs, out / "learning_curves.png", baselines)
    tol = settle_tolerance(_task(cfg))
    plot_distributions(results, cfg.env.task, out / "distributions.png", tol)
    plot_trajectory(results, cfg.env.task, tol, out / "trajectory.png")


def _task(cfg: EvalConfig) -> Any:
    from twolink_gym.tasks import make_task

    return make_task(cfg.env.task, cfg.env.task_options or None)
