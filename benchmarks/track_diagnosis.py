"""Where the tracking agents fail: success and final distance by path family, speed, size, start.

Evaluates the shipped tracking agents and computed torque on one large episode
set that no reported figure uses (default: 400 episodes from seed 9,000,000; the
evaluation set is 1,000,000+, the issue's unseen checks 6,160,000+ and
8,250,000+, the shipped-agent tests 7,000,000+), all in one batched
:func:`~twolink_gym.training.evaluate.evaluate_policies` call, so every policy
faces identical episodes.

What each episode drew is recovered from its seed: episode ``i`` is what
``reset(seed=seed + i)`` draws (:func:`~twolink_gym.training.evaluate.draw_episodes`),
and the path of that draw is :func:`twolink_gym.paths.sample_path` with a
generator seeded ``seed + i`` and the task's options; the script redraws it and
checks that its tabulated reference equals the episode's goal exactly (it
stops if not). Per episode it records:

family
    circle, figure_eight, lissajous, looping.
speed
    Mean reference speed [m/s] over the table.
size
    Largest distance of the reference from its mean point [m].
rim clearance
    Smallest distance of the reference from the workspace's rims
    ``[|l1 - l2|, l1 + l2]`` [m] (near a rim the arm is near a singularity).
elbow
    The start's elbow branch, as the sign of ``q2`` at the start.

and each policy's success and final distance (the tracking error at the last
step [m]). Speed, size and rim clearance are cut into terciles of the set.

Writes ``diagnosis.json`` (per-episode records and the tables),
``diagnosis.md`` (the tables) and ``diagnosis.png`` (success per level, with
Wilson intervals) into the output folder.

Usage::

    python benchmarks/track_diagnosis.py [--episodes 400] [--seed 9000000] [--out FOLDER]
        [--policies POLICY ...]

(the output folder defaults to ``docs/results/track/diagnosis``).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from twolink_gym.training.config import load_config
from twolink_gym.training.evaluate import evaluate_policies
from twolink_gym.training.stats import wilson_interval

from twolink_gym.env import TwoLinkEnv
from twolink_gym.paths import FAMILIES, Circle, Lissajous, LoopingPath, sample_path
from twolink_gym.tasks.track import TrackTask

POLICIES = ("pretrained:track_ppo", "pretrained:track_sac", "computed_torque")
CONFIG = "configs/track_ppo.yaml"
FACTORS = ("family", "speed", "size", "rim_clearance", "elbow")
UNITS = {"speed": "m/s", "size": "m", "rim_clearance": "m"}


def episode_features(env: TwoLinkEnv, goals: np.ndarray, states: np.ndarray, seed: int) -> list:
    """Family, speed, size, rim clearance and elbow of each episode (see the module notes).

    Parameters
    ----------
    env : TwoLinkEnv
        A track env with the evaluation's options (its task and arm).
    goals : ndarray, shape (n, goal_size)
        The episodes' goals (reference tables).
    states : ndarray, shape (n, 4)
        The episodes' initial states [rad, rad, rad/s, rad/s].
    seed : int
        The episode set's seed (episode ``i`` was drawn with ``seed + i``).

    Returns
    -------
    list of dict
        One record per episode.

    Raises
    ------
    RuntimeError
        If a redrawn path does not reproduce its episode's goal.
    """
    task = env.sim.task
    if not isinstance(task, TrackTask):
        raise ValueError(f"episode_features needs a track env, got task {task.name!r}")
    params = env.sim.params
    out = []
    for i, goal in enumerate(goals):
        rng = np.random.default_rng(seed + i)
        path = sample_path(
            rng,
            params,
            task.families,
            margin=task.workspace_margin * params.reach,
            speed=(task.min_path_speed, task.max_path_speed),
        )
        if not np.array_equal(task.tabulate(path), goal):
            raise RuntimeError(f"episode {i}: the redrawn path does not give its goal")
        rows = task.reference_rows(goal)
        xy = rows[:, :2]
        r = np.hypot(xy[:, 0], xy[:, 1])
        # sample_path draws a figure-eight as a Lissajous curve (1, 2) of phase 0, and
        # the Lissajous family's own curves with a random phase
        if isinstance(path, Circle):
            family = "circle"
        elif isinstance(path, LoopingPath):
            family = "looping"
        elif isinstance(path, Lissajous) and (path.fx, path.fy, path.phase) == (1, 2, 0.0):
            family = "figure_eight"
        else:
            family = "lissajous"
        out.append(
            {
                "episode": i,
                "family": family,
                "speed": float(np.mean(np.hypot(rows[:, 2], rows[:, 3]))),
                "size": float(np.max(np.hypot(*(xy - xy.mean(axis=0)).T))),
                "rim_clearance": float(
                    min(np.min(params.reach - r), np.min(r - params.inner_radius))
                ),
                "elbow": "q2 > 0" if states[i, 1] > 0 else "q2 < 0",
            }
        )
    return out


def _levels(records: list, factor: str) -> list[tuple[str, np.ndarray]]:
    """The levels of ``factor`` and the mask of the episodes in each."""
    values = [r[factor] for r in records]
    if factor == "family":
        names = [f for f in FAMILIES if f in values]
        return [(f, np.array([v == f for v in values])) for f in names]
    if factor == "elbow":
        names = sorted(set(values))
        return [(f, np.array([v == f for v in values])) for f in names]
    x = np.asarray(values)
    cuts = np.quantile(x, [0, 1 / 3, 2 / 3, 1])
    out = []
    for j in range(3):
        lo, hi = cuts[j], cuts[j + 1]
        mask = (x >= lo) & ((x < hi) if j < 2 else (x <= hi))
        out.append((f"{lo:.3g}–{hi:.3g}", mask))
    return out


def tables(records: list, results: dict[str, dict[str, np.ndarray]]) -> list[dict[str, Any]]:
    """One row per (factor, level): episodes, each policy's success with its Wilson interval."""
    rows = []
    for factor in ("all", *FACTORS):
        levels = [("all", np.ones(len(records), bool))] if factor == "all" else None
        for level, mask in levels or _levels(records, factor):
            row: dict[str, Any] = {"factor": factor, "level": level, "episodes": int(mask.sum())}
            for label, res in results.items():
                s = res["success"][mask]
                low, high = wilson_interval(int(s.sum()), int(s.size))
                d = res["final_distance"][mask]
                row[label] = {
                    "success": float(s.mean()),
                    "ci": [low, high],
                    "final_distance_median": float(np.median(d)),
                    "final_distance_p90": float(np.percentile(d, 90)),
                }
            rows.append(row)
    return rows


def markdown(rows: list[dict[str, Any]], labels: list[str]) -> str:
    """The tables as markdown: success [95 % Wilson interval], final distance median / p90."""
    head = "| factor | level | episodes | " + " | ".join(labels) + " |"
    lines = [head, "|---|---|---:|" + "---:|" * len(labels)]
    for row in rows:
        unit = UNITS.get(row["factor"], "")
        level = f"{row['level']} {unit}".strip()
        cells = []
        for label in labels:
            c = row[label]
            cells.append(
                f"{100 * c['success']:.0f}% [{100 * c['ci'][0]:.0f}, {100 * c['ci'][1]:.0f}]; "
                f"{c['final_distance_median'] * 100:.1f} / {c['final_distance_p90'] * 100:.1f} cm"
            )
        lines.append(
            f"| {row['factor']} | {level} | {row['episodes']} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], labels: list[str], path: Path) -> None:
    """Success per level of each factor, one panel a factor, Wilson intervals as error bars."""
    fig, axes = plt.subplots(1, len(FACTORS), figsize=(3.2 * len(FACTORS), 3.6), sharey=True)
    width = 0.8 / len(labels)
    for ax, factor in zip(axes, FACTORS, strict=True):
        sub = [r for r in rows if r["factor"] == factor]
        x = np.arange(len(sub))
        for j, label in enumerate(labels):
            p = np.array([100 * r[label]["success"] for r in sub])
            ci = np.array([[100 * v for v in r[label]["ci"]] for r in sub])
            ax.bar(x + (j - (len(labels) - 1) / 2) * width, p, width, label=label)
            ax.errorbar(
                x + (j - (len(labels) - 1) / 2) * width,
                p,
                yerr=[p - ci[:, 0], ci[:, 1] - p],
                fmt="none",
                ecolor="k",
                lw=0.8,
            )
        unit = UNITS.get(factor, "")
        ax.set_xticks(x, [r["level"] for r in sub], rotation=30, ha="right", fontsize=7)
        ax.set_title(f"{factor.replace('_', ' ')}" + (f" [{unit}]" if unit else ""), fontsize=9)
        ax.axhline(90, color="grey", lw=0.6, ls=":")
    axes[0].set_ylabel("success [%] (95 % Wilson)")
    axes[0].set_ylim(0, 105)
    axes[-1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    """Run the diagnosis and write its table, JSON and plot."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=400)
    parser.add_argument("--seed", type=int, default=9_000_000)
    parser.add_argument("--out", default="docs/results/track/diagnosis")
    parser.add_argument(
        "--policies",
        nargs="+",
        default=list(POLICIES),
        metavar="POLICY",
        help="policies to diagnose (controllers, run folders, pretrained:NAME; "
        f"default: {' '.join(POLICIES)})",
    )
    args = parser.parse_args(argv)
    cfg = load_config(CONFIG)
    start = time.perf_counter()
    episodes, rollouts = evaluate_policies(
        args.policies, cfg, episodes=args.episodes, seed=args.seed, trajectories=False
    )
    seconds = time.perf_counter() - start
    env = TwoLinkEnv(**cfg.env.make_kwargs())
    records = episode_features(env, episodes.goals, episodes.states, args.seed)
    labels = [r.label for r in rollouts]
    results = {
        r.label: {"success": r.success, "final_distance": r.final_distance} for r in rollouts
    }
    for rec in records:
        i = rec["episode"]
        rec["success"] = {k: bool(v["success"][i]) for k, v in results.items()}
        rec["final_distance"] = {k: float(v["final_distance"][i]) for k, v in results.items()}
    rows = tables(records, results)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = markdown(rows, labels)
    (out / "diagnosis.md").write_text(table)
    (out / "diagnosis.json").write_text(
        json.dumps(
            {
                "config": CONFIG,
                "episodes": args.episodes,
                "seed": args.seed,
                "policies": labels,
                "evaluation_seconds": round(seconds, 1),
                "machine": platform.processor() or platform.machine(),
                "tables": rows,
                "records": records,
            },
            indent=1,
        )
    )
    plot(rows, labels, out / "diagnosis.png")
    print(table)
    print(f"evaluation: {seconds:.0f} s for {len(labels)} policies x {args.episodes} episodes")


if __name__ == "__main__":
    main()
