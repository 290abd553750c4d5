"""``twolink robustness``: success of policies under variations of the arm, one at a time.

Every policy runs the config's evaluation episode set (the episodes of
``evaluate``/``compare``) once nominally and once under each *condition*: one
change of the simulated arm, its sensors or its motors, all else nominal. A
condition is data, a mapping of :class:`~twolink_gym.training.config.EnvConfig`
overrides built from the declared perturbations and their levels
(:mod:`twolink_gym.training.conditions`).

Only the *true* arm changes. Every policy is loaded once, on the nominal
environment: a classical controller keeps the config's arm as its model, an
agent its frozen observation statistics, whatever the condition. Under joint
angles only, a classical controller estimates the speeds itself (it reads the
condition's observations); an agent trained on the full state cannot, and is
skipped there.

The score
---------
Following the RealAIGym robustness leaderboards (dfki-ric-underactuated-lab
``double_pendulum``, ``analysis/benchmark_scores.py``), the conditions fall into
groups (model, observation noise, torque noise, torque response, delay,
observation model). A group's score is the mean success rate of its
conditions (the fraction of successful episodes over the group when every
condition runs the same episodes: reach episodes whose target a shortened arm
cannot reach are not run), and the **robustness score** is the mean of
the group scores, each group weighing the same; it lies in [0, 1]. The nominal
run is reported beside it but not part of it. A condition a policy cannot run
under (an agent trained on the full state, given joint angles only) is skipped
with its reason and left out of its group; a group with no condition left is
left out of the score, and the score says how many groups it averages.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from twolink_gym.training.conditions import NOMINAL, Condition, build_conditions
from twolink_gym.training.config import EnvConfig, EvalConfig
from twolink_gym.training.evaluate import (
    EpisodeSet,
    draw_episodes,
    resolve_policies,
    run_policy,
    staged_output,
)
from twolink_gym.training.policies import LoadedPolicy, load_policy

from twolink_gym.controllers import Controller
from twolink_gym.env import TwoLinkEnv
from twolink_gym.params import ArmParams
from twolink_gym.tasks import make_task

__all__ = [
    "OUTPUT_FILES",
    "PolicyRobustness",
    "RobustnessResult",
    "check_output",
    "feasible_episodes",
    "group_scores",
    "markdown_table",
    "plot_robustness",
    "robustness",
    "robustness_score",
    "run_conditions",
    "score_table",
    "write_results",
]

#: The files ``robustness`` writes into its output folder (only these are replaced).
OUTPUT_FILES = ("robustness.json", "table.md", "robustness.png")


# -- the score ----------------------------------------------------------------
def group_scores(
    success: Mapping[str, float | None], conditions: Sequence[Condition]
) -> dict[str, float]:
    """Each scored group's mean success rate (skipped conditions, ``None``, left out).

    Parameters
    ----------
    success : mapping
        Condition name → success rate in [0, 1], or ``None`` if skipped.
    conditions : sequence of Condition
        The conditions (for their groups).

    Notes
    -----
    A group's score is the mean of its conditions' success rates: with the
    same episodes under every condition, the fraction of successful episodes
    over the group (RealAIGym's ``S / N``).
    """
    rates: dict[str, list[float]] = {}
    for c in conditions:
        rate = success[c.name]
        if c.group == NOMINAL or rate is None:
            continue
        rates.setdefault(c.group, []).append(rate)
    return {group: float(np.mean(r)) for group, r in rates.items()}


def robustness_score(groups: Mapping[str, float]) -> float | None:
    """The mean of the group scores (each group weighs the same); ``None`` without groups."""
    return float(np.mean(list(groups.values()))) if groups else None


# -- running ------------------------------------------------------------------
@dataclasses.dataclass
class PolicyRobustness:
    """One policy's results: per-episode success per condition, skip reasons, wall time [s]."""

    label: str
    kind: str
    success: dict[str, NDArray[np.bool_]]
    skipped: dict[str, str]
    wall_time_s: float

    def rates(self, conditions: Sequence[Condition]) -> dict[str, float | None]:
        """Condition name → success rate, or ``None`` where skipped."""
        return {
            c.name: float(np.mean(self.success[c.name])) if c.name in self.success else None
            for c in conditions
        }


@dataclasses.dataclass
class RobustnessResult:
    """Every policy under every condition, on one episode set."""

    task: str
    episodes: EpisodeSet
    conditions: list[Condition]
    policies: list[PolicyRobustness]
    feasible: dict[str, NDArray[np.bool_]]

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly summary (rates in [0, 1], scores, skips, episodes run per condition).

        Nothing in it depends on the machine or the time: a re-run writes the same file.
        """
        rows = []
        for p in self.policies:
            rates = p.rates(self.conditions)
            groups = group_scores(rates, self.conditions)
            rows.append(
                {
                    "policy": p.label,
                    "kind": p.kind,
                    "success": rates,
                    "skipped": p.skipped,
                    "group_scores": groups,
                    "score": robustness_score(groups),
                }
            )
        return {
            "task": self.task,
            "episodes": len(self.episodes),
            "seed": self.episodes.seed,
            "conditions": [dataclasses.asdict(c) for c in self.conditions],
            "episodes_run": {name: int(np.sum(m)) for name, m in self.feasible.items()},
            "policies": rows,
        }

    def timing_dict(self) -> dict[str, Any]:
        """Wall time per policy [s] and the machine it ran on.

        Kept apart from :meth:`to_dict`, the results, which a re-run reproduces exactly.
        """
        return {
            "wall_time_s": {p.label: p.wall_time_s for p in self.policies},
            "machine": machine_note(),
        }


def machine_note() -> dict[str, Any]:
    """The machine and its load when the results were made (for timings)."""
    try:
        load: list[float] | None = [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not on every platform
        load = None
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "load_average_1_5_15min": load,
        "python": platform.python_version(),
    }


def feasible_episodes(env_cfg: EnvConfig, episodes: EpisodeSet) -> NDArray[np.bool_]:
    """Which episodes' goals the arm of ``env_cfg`` can reach (the task's own goal check).

    A model condition that shortens a link puts some reach targets, drawn for
    the nominal arm, outside the true arm's workspace: no policy can succeed
    there, and the env refuses them. Those episodes are not run under that
    condition, and its success rate is over the others.
    """
    task = make_task(env_cfg.task, env_cfg.task_options or None)
    arm = ArmParams(**env_cfg.params)
    ok = np.ones(len(episodes), dtype=bool)
    for i in range(len(episodes)):
        try:
            task.validate_goal(arm, episodes.goals[i : i + 1])
        except ValueError:
            ok[i] = False
    return ok


def _read_observations_of(policy: LoadedPolicy, env: TwoLinkEnv) -> None:
    """Let a classical controller read ``env``'s observations (its model stays as it is).

    On joint angles only, a controller estimates the speeds itself
    (:meth:`~twolink_gym.controllers.base.Controller.set_observation`), as it
    would on an arm with encoders alone; an agent has no such switch.
    """
    if isinstance(policy.predictor, Controller):
        policy.predictor.set_observation(env.sim.observation_kind)


def _probe(policy: LoadedPolicy, env_cfg: EnvConfig, nominal: EnvConfig) -> str | None:
    """Why ``policy`` cannot act on ``env_cfg``'s observations, or ``None`` if it can."""
    env = TwoLinkEnv(**env_cfg.make_kwargs())
    _read_observations_of(policy, env)
    shape = env.observation_space.shape
    own = TwoLinkEnv(**nominal.make_kwargs()).observation_space.shape
    if shape == own:
        return None
    obs = np.zeros((1, *(shape or ())), dtype=np.float32)
    try:
        policy.predictor.predict(
            obs, state=None, episode_start=np.ones(1, bool), deterministic=True
        )
    except Exception as exc:  # any failure on this shape (ValueError, IndexError, ...)
        first = str(exc).splitlines()[0] if str(exc) else ""
        return (
            f"it acts on observations of shape {own}, this condition gives {shape} "
            f"({type(exc).__name__}: {first[:160]})"
        )
    return None


def run_conditions(
    policy: LoadedPolicy,
    env_cfg: EnvConfig,
    episodes: EpisodeSet,
    conditions: Sequence[Condition],
    feasible: Mapping[str, NDArray[np.bool_]],
) -> PolicyRobustness:
    """Run ``policy`` (loaded on ``env_cfg``) on ``episodes`` under every condition.

    ``feasible`` maps each condition's name to the episodes to run under it
    (:func:`feasible_episodes`).
    """
    start = time.perf_counter()
    success: dict[str, NDArray[np.bool_]] = {}
    skipped: dict[str, str] = {}
    for c in conditions:
        cfg = c.env_config(env_cfg)
        reason = _probe(policy, cfg, env_cfg)
        if reason is not None:
            skipped[c.name] = reason
            continue
        mask = feasible[c.name]
        if not mask.any():
            skipped[c.name] = "no episode's goal is within this arm's reach"
            continue
        subset = EpisodeSet(episodes.states[mask], episodes.goals[mask], episodes.seed)
        success[c.name] = run_policy(policy, cfg, subset).success
    _read_observations_of(policy, TwoLinkEnv(**env_cfg.make_kwargs()))
    return PolicyRobustness(
        policy.label, policy.kind, success, skipped, time.perf_counter() - start
    )


def robustness(
    cfg: EvalConfig,
    specs: Sequence[str],
    *,
    kinds: Sequence[str] | None = None,
    levels: Mapping[str, Sequence[Any]] | None = None,
    episodes: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> RobustnessResult:
    """Evaluate policies under every condition on the config's episode set.

    Parameters
    ----------
    cfg : EvalConfig
        Its ``env`` without its own robustness conditions
        (:meth:`EnvConfig.nominal`: no randomisation, noise or actuator model)
        is the nominal environment; its ``evaluate`` section gives the episodes.
    specs : sequence of str
        Policies as ``evaluate`` takes them (controller names, ``"auto"``,
        ``pretrained:NAME``, run folders, exported agents, model files).
    kinds, levels
        See :func:`build_conditions`.
    episodes : int, optional
        Override ``cfg.evaluate.episodes``.
    progress : callable, optional
        Called with a line of text after each policy.

    Raises
    ------
    ValueError
        For an unknown policy, condition or level, before anything runs.
    """
    if episodes is not None and episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    base = cfg.env.nominal()
    conditions = build_conditions(base, kinds, levels)
    for c in conditions:  # every condition's env must build before anything runs
        TwoLinkEnv(**c.env_config(base).make_kwargs())
    env = TwoLinkEnv(**base.make_kwargs())
    policies = [load_policy(spec, base, env) for spec in resolve_policies(specs, cfg)]
    n = episodes if episodes is not None else cfg.evaluate.episodes
    episode_set = draw_episodes(base, n, cfg.evaluate.seed)
    feasible = {c.name: feasible_episodes(c.env_config(base), episode_set) for c in conditions}
    results = []
    for policy in policies:
        results.append(run_conditions(policy, base, episode_set, conditions, feasible))
        if progress is not None:
            progress(
                f"{policy.label}: {len(conditions)} conditions in {results[-1].wall_time_s:.0f} s"
            )
    return RobustnessResult(cfg.env.task, episode_set, conditions, results, feasible)


# -- output -------------------------------------------------------------------
def _pct(rate: float | None) -> str:
    """A rate as a whole percentage, with one decimal where that would show 0 % or 100 %."""
    if rate is None:
        return "–"
    text = f"{100 * rate:.0f}"
    if text in ("0", "100") and rate not in (0.0, 1.0):
        text = f"{100 * rate:.1f}"
    return text + "%"


def markdown_table(result: RobustnessResult) -> str:
    """Success per condition (rows) and policy (columns), then group scores and the score."""
    data = result.to_dict()
    rows = data["policies"]
    n = len(result.episodes)
    runs = {name: int(np.sum(m)) for name, m in result.feasible.items()}
    reach = any(runs.get(c.name, n) < n for c in result.conditions)
    head = "| condition | group |" + "".join(f" {r['policy']} |" for r in rows)
    head += " episodes run (goal within reach) |" if reach else ""
    rule = "|---|---|" + "---:|" * (len(rows) + reach)
    lines = [head, rule]
    for c in result.conditions:
        cells = "".join(f" {_pct(r['success'][c.name])} |" for r in rows)
        extra = f" {runs.get(c.name, n)} |" if reach else ""
        lines.append(f"| {c.name} | {c.group} |{cells}{extra}")
    groups = list(dict.fromkeys(c.group for c in result.conditions if c.group != NOMINAL))
    for g in groups:
        cells = "".join(f" {_pct(r['group_scores'].get(g))} |" for r in rows)
        lines.append(f"| **{g} (group score)** | |{cells}" + (" |" if reach else ""))
    cells = ""
    for r in rows:
        score = r["score"]
        text = "–" if score is None else f"{score:.3f}"
        if len(r["group_scores"]) < len(groups):
            text += f" ({len(r['group_scores'])}/{len(groups)} groups)"
        cells += f" **{text}** |"
    lines.append(f"| **robustness score** | |{cells}" + (" |" if reach else ""))
    out = "\n".join(lines) + "\n"
    notes = [
        f"- {r['policy']}, {name}: skipped: {why}"
        for r in rows
        for name, why in r["skipped"].items()
    ]
    if reach:
        out += (
            "\nUnder a condition that shortens a link, the episodes whose target is outside "
            "the true arm's workspace are not run (no arm could succeed there); its success "
            "rate is over the episodes run.\n"
        )
    return out + ("\nSkipped conditions:\n\n" + "\n".join(notes) + "\n" if notes else "")


def score_table(data: Mapping[str, Any]) -> str:
    """One row per policy: nominal success, each group's score and the robustness score.

    Parameters
    ----------
    data : mapping
        :meth:`RobustnessResult.to_dict` (or a ``robustness.json`` read back).
    """
    groups = list(dict.fromkeys(c["group"] for c in data["conditions"] if c["group"] != NOMINAL))
    head = "| policy | nominal |" + "".join(f" {g} |" for g in groups) + " robustness score |"
    lines = [head, "|---|---:|" + "---:|" * (len(groups) + 1)]
    for r in data["policies"]:
        cells = "".join(f" {_pct(r['group_scores'].get(g))} |" for g in groups)
        score = "–" if r["score"] is None else f"{r['score']:.3f}"
        if len(r["group_scores"]) < len(groups):
            score += f" ({len(r['group_scores'])}/{len(groups)} groups)"
        lines.append(f"| {r['policy']} | {_pct(r['success']['nominal'])} |{cells} **{score}** |")
    return "\n".join(lines) + "\n"


def plot_robustness(result: RobustnessResult, path: Path) -> None:
    """A heatmap of success [%] per condition (rows) and policy (columns); skipped cells grey."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rates = [p.rates(result.conditions) for p in result.policies]
    grid = np.array(
        [
            [np.nan if (v := r[c.name]) is None else 100 * v for r in rates]
            for c in result.conditions
        ]
    )
    labels = [p.label for p in result.policies]
    fig, ax = plt.subplots(figsize=(2.0 + 1.4 * len(labels), 1.2 + 0.28 * len(result.conditions)))
    cmap = matplotlib.colormaps["RdYlGn"].with_extremes(bad="lightgrey")
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0, vmax=100, aspect="auto")
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            text = "skip" if np.isnan(grid[i, j]) else f"{grid[i, j]:.0f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=7)
    scores = [robustness_score(group_scores(r, result.conditions)) for r in rates]
    ax.set_xticks(
        range(len(labels)),
        [
            f"{lab}\nscore {s:.2f}" if s is not None else lab
            for lab, s in zip(labels, scores, strict=True)
        ],
        rotation=20,
        ha="right",
        fontsize=7,
    )
    # monospace: "I1" (an inertia) and "l1" (a length) look alike in the default font
    ax.set_yticks(
        range(len(result.conditions)),
        [c.name for c in result.conditions],
        fontsize=7,
        fontfamily="monospace",
    )
    groups = [c.group for c in result.conditions]
    for i in range(1, len(groups)):
        if groups[i] != groups[i - 1]:
            ax.axhline(i - 0.5, color="k", lw=0.8)
    ax.set_title(
        f"{result.task}: success [%] per condition, {len(result.episodes)} episodes each",
        fontsize=9,
    )
    fig.colorbar(image, ax=ax, label="success [%]", fraction=0.04)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def check_output(out: Path, overwrite: bool) -> None:
    """Refuse a folder that already holds robustness results, unless ``overwrite``.

    Raises
    ------
    FileExistsError
        Saying how to proceed.
    """
    existing = [name for name in OUTPUT_FILES if (out / name).exists()]
    if existing and not overwrite:
        raise FileExistsError(
            f"{out} already holds robustness results ({', '.join(existing)}); give another "
            "--out, or --overwrite to replace them (only these files are replaced)"
        )


def write_results(result: RobustnessResult, out_dir: Path) -> str:
    """Write ``robustness.json``, ``table.md``, ``robustness.png`` and ``timing.json``; return the table.

    The files replace those of ``out_dir`` together, once all are written
    (:func:`~twolink_gym.training.evaluate.staged_output`).
    """
    with staged_output(out_dir) as out:
        return _write_files(result, out)


def _write_files(result: RobustnessResult, out: Path) -> str:
    data = result.to_dict()
    (out / "robustness.json").write_text(json.dumps(data, indent=2, allow_nan=False))
    (out / "timing.json").write_text(json.dumps(result.timing_dict(), indent=2))
    table = markdown_table(result)
    seed = result.episodes.seed
    header = (
        f"Task `{result.task}`, {len(result.episodes)} episodes (seeds {seed}.."
        f"{seed + len(result.episodes) - 1}), identical for every policy and condition; "
        "success per condition, one variation at a time (training/robustness.py, module "
        "notes: the score).\n\n"
    )
    (out / "table.md").write_text(header + score_table(data) + "\n" + table)
    plot_robustness(result, out / "robustness.png")
    return table
