"""``twolink robustness``: success of policies under variations of the arm, one at a time.

Every policy runs the config's evaluation episode set (the episodes of
``evaluate``/``compare``) once nominally and once under each *condition*: one
change of the simulated arm, its sensors or its motors, all else nominal. A
condition is data, a mapping of :class:`~twolink_gym.training.config.EnvConfig`
overrides (``{"params": {..., "m1": 1.2}}``, ``{"obs_noise": 0.01}``), built
from the declared :data:`PERTURBATIONS` and their levels.

Only the *true* arm changes. Every policy is loaded once, on the nominal
environment: a classical controller keeps the config's arm as its model, an
agent its frozen observation statistics, whatever the condition.

The score
---------
Following the RealAIGym robustness leaderboards (dfki-ric-underactuated-lab
``double_pendulum``, ``analysis/benchmark_scores.py``), the conditions fall into
groups (model, observation noise, torque noise, torque response, delay,
observation model). A group's score is the fraction of successful episodes over
all of the group's conditions (each condition has the same episodes, so it is
the mean of their success rates), and the **robustness score** is the mean of
the group scores, each group weighing the same; it lies in [0, 1]. The nominal
run is reported beside it but not part of it. A condition a policy cannot run
under (an agent trained on the full state, given joint angles only) is skipped
with its reason and left out of its group; a group with no condition left is
left out of the score, and the score says how many groups it averages.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from twolink_gym.training.config import EnvConfig, RunConfig
from twolink_gym.training.evaluate import (
    EpisodeSet,
    draw_episodes,
    resolve_policies,
    run_policy,
)
from twolink_gym.training.policies import LoadedPolicy, load_policy

from twolink_gym.env import TwoLinkEnv
from twolink_gym.params import ArmParams
from twolink_gym.tasks import ReachTask, make_task

__all__ = [
    "OUTPUT_FILES",
    "PERTURBATIONS",
    "Condition",
    "Perturbation",
    "PolicyRobustness",
    "RobustnessResult",
    "build_conditions",
    "group_scores",
    "markdown_table",
    "parse_levels",
    "plot_robustness",
    "robustness",
    "robustness_score",
    "run_conditions",
]

#: The files ``robustness`` writes into its output folder (only these are replaced).
OUTPUT_FILES = ("robustness.json", "table.md", "robustness.png")

#: The arm parameters the model-mismatch conditions scale, one at a time.
MODEL_FIELDS = ("m1", "m2", "l1", "l2", "lc1", "lc2", "I1", "I2", "friction1", "friction2")


def _positive_factor(value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"must be a finite factor > 0, got {value!r}")
    return value


def _std(value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"must be a finite standard deviation > 0, got {value!r}")
    return value


def _response(value: float) -> float:
    if not (math.isfinite(value) and 0 < value < 1):
        raise ValueError(f"must be a response factor k in (0, 1) (1 is nominal), got {value!r}")
    return value


def _delay(value: float) -> int:
    if value != int(value) or value < 1:
        raise ValueError(f"must be a whole number of control steps >= 1, got {value!r}")
    return int(value)


def _observation(value: str) -> str:
    if value != "angles":
        raise ValueError(f"must be 'angles' (the full state is nominal), got {value!r}")
    return value


@dataclasses.dataclass(frozen=True)
class Perturbation:
    """One kind of variation, at several levels (each level is one condition per field).

    Attributes
    ----------
    name : str
        Its name on the command line (``--conditions``, ``--levels``).
    group : str
        The score group its conditions belong to.
    env_key : str
        The :class:`EnvConfig` field it sets (``"params"``: scales each of
        :data:`MODEL_FIELDS` by the level, one at a time).
    levels : tuple
        The default levels.
    check : callable
        Validates and converts one level (raises ``ValueError`` saying what is allowed).
    numeric : bool
        Levels are numbers (else strings).
    meaning : str
        What a level means, with its unit.
    """

    name: str
    group: str
    env_key: str
    levels: tuple[Any, ...]
    check: Callable[[Any], Any]
    numeric: bool
    meaning: str


#: The declared variations, by command-line name. Defaults follow the spirit of
#: RealAIGym's robustness benchmark: ±20 % on each parameter, two noise levels, a
#: slower motor, one and two steps of delay.
PERTURBATIONS: dict[str, Perturbation] = {
    p.name: p
    for p in (
        Perturbation(
            "model",
            "model",
            "params",
            (0.8, 1.2),
            _positive_factor,
            True,
            "factor on one arm parameter of the true arm (m1, m2, l1, l2, lc1, lc2, I1, I2, "
            "friction1, friction2), one at a time",
        ),
        Perturbation(
            "obs_noise",
            "observation noise",
            "obs_noise",
            (0.01, 0.05),
            _std,
            True,
            "std of Gaussian noise added to every observation entry",
        ),
        Perturbation(
            "torque_noise",
            "torque noise",
            "torque_noise",
            (0.05, 0.1),
            _std,
            True,
            "std of Gaussian noise on each joint torque, as a fraction of its max_torque",
        ),
        Perturbation(
            "torque_response",
            "torque response",
            "torque_response",
            (0.5, 0.25),
            _response,
            True,
            "k of the first-order motor tau_t = tau_{t-1} + k (tau_cmd - tau_{t-1})",
        ),
        Perturbation(
            "action_delay",
            "delay",
            "action_delay",
            (1, 2),
            _delay,
            True,
            "control steps between an action and its torque",
        ),
        Perturbation(
            "observation",
            "observation model",
            "observation",
            ("angles",),
            _observation,
            False,
            "the observation: 'angles' gives the joint angles only (encoders)",
        ),
    )
}

#: The group of the nominal condition (reported, not scored).
NOMINAL = "nominal"


def available_perturbations() -> list[str]:
    """Names of :data:`PERTURBATIONS` whose env keyword exists in :class:`EnvConfig`."""
    fields = {f.name for f in dataclasses.fields(EnvConfig)}
    return [name for name, p in PERTURBATIONS.items() if p.env_key in fields]


@dataclasses.dataclass(frozen=True)
class Condition:
    """One variation of the environment: a mapping of :class:`EnvConfig` overrides.

    Attributes
    ----------
    name : str
        Its label in tables (``"m1 ×0.8"``, ``"obs_noise 0.01"``, ``"nominal"``).
    group : str
        Its score group (``"nominal"`` is not scored).
    overrides : mapping
        :class:`EnvConfig` field → value (``params`` is the whole parameter mapping).
    """

    name: str
    group: str
    overrides: Mapping[str, Any]

    def env_config(self, base: EnvConfig) -> EnvConfig:
        """``base`` with this condition's overrides."""
        return dataclasses.replace(base, **self.overrides)


def _format_level(value: Any) -> str:
    return format(value, "g") if isinstance(value, float) else str(value)


def build_conditions(
    env_cfg: EnvConfig,
    kinds: Sequence[str] | None = None,
    levels: Mapping[str, Sequence[Any]] | None = None,
) -> list[Condition]:
    """The nominal condition and one condition per perturbation, field and level.

    Parameters
    ----------
    env_cfg : EnvConfig
        The nominal environment; model factors scale its arm parameters.
    kinds : sequence of str, optional
        Names of :data:`PERTURBATIONS` (default: every available one).
    levels : mapping, optional
        Levels per perturbation name, replacing its defaults.

    Raises
    ------
    ValueError
        For an unknown or unavailable perturbation, a level that is out of range,
        or a model factor that gives an invalid arm.
    """
    available = available_perturbations()
    chosen = list(available if kinds is None else kinds)
    for name in [*chosen, *(levels or {})]:
        if name not in PERTURBATIONS:
            raise ValueError(f"unknown condition {name!r}; conditions are {sorted(PERTURBATIONS)}")
    for name in levels or {}:
        if name not in chosen:
            raise ValueError(
                f"--levels names condition {name!r}, which is not among the chosen "
                f"conditions {chosen}"
            )
    for name in chosen:
        if name not in available:
            raise ValueError(
                f"condition {name!r} needs the env keyword {PERTURBATIONS[name].env_key!r}, "
                f"which this version of the environment does not have; available: {available}"
            )
    conditions = [Condition("nominal", NOMINAL, {})]
    nominal = ArmParams(**env_cfg.params)
    for name in chosen:
        p = PERTURBATIONS[name]
        given = (levels or {}).get(name, p.levels)
        if not given:
            raise ValueError(f"--levels {name}: give at least one level")
        values = []
        for level in given:
            try:
                values.append(p.check(level))
            except ValueError as exc:
                raise ValueError(f"--levels {name}: level {level!r} {exc} ({p.meaning})") from exc
        if p.env_key != "params":
            for v in values:
                label = f"{name} {_format_level(v)}"
                conditions.append(Condition(label, p.group, {p.env_key: v}))
            continue
        for field in MODEL_FIELDS:
            for v in values:
                value = getattr(nominal, field) * v
                try:
                    nominal.replace(**{field: value})
                except ValueError as exc:
                    raise ValueError(
                        f"--levels model: factor {v} on {field} gives an invalid arm ({exc})"
                    ) from exc
                label = f"{field} ×{_format_level(v)}"
                conditions.append(
                    Condition(label, p.group, {"params": {**env_cfg.params, field: value}})
                )
    return conditions


def parse_levels(items: Sequence[str]) -> dict[str, list[Any]]:
    """``["model=0.7,1.3", "action_delay=1"]`` → ``{"model": [0.7, 1.3], "action_delay": [1.0]}``.

    Raises
    ------
    ValueError
        For an item without ``=``, an unknown name, or a non-number where numbers go.
    """
    out: dict[str, list[Any]] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not text.strip():
            raise ValueError(f"--levels {item!r} must look like NAME=V1,V2 (e.g. model=0.8,1.2)")
        if name not in PERTURBATIONS:
            raise ValueError(
                f"--levels {item!r}: unknown condition {name!r}; conditions are "
                f"{sorted(PERTURBATIONS)}"
            )
        values: list[Any] = []
        for part in text.split(","):
            part = part.strip()
            if not PERTURBATIONS[name].numeric:
                values.append(part)
                continue
            try:
                values.append(float(part))
            except ValueError as exc:
                raise ValueError(f"--levels {name}: {part!r} is not a number") from exc
        out[name] = values
    return out


# -- the score ----------------------------------------------------------------
def group_scores(
    success: Mapping[str, float | None], conditions: Sequence[Condition]
) -> dict[str, float]:
    """Each scored group's fraction of successful episodes (skipped conditions, ``None``, left out).

    Parameters
    ----------
    success : mapping
        Condition name → success rate in [0, 1], or ``None`` if skipped.
    conditions : sequence of Condition
        The conditions (for their groups); every equal-sized in episodes.
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
    reachable: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly summary (rates in [0, 1], scores, skips, reachable-target fractions)."""
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
                    "wall_time_s": p.wall_time_s,
                }
            )
        return {
            "task": self.task,
            "episodes": len(self.episodes),
            "seed": self.episodes.seed,
            "conditions": [dataclasses.asdict(c) for c in self.conditions],
            "reachable_targets": self.reachable,
            "policies": rows,
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


def reachable_fraction(env_cfg: EnvConfig, episodes: EpisodeSet) -> float | None:
    """Fraction of the episodes' reach targets inside the workspace of ``env_cfg``'s arm.

    ``None`` for a task without targets. A model condition that shortens a link
    puts some targets (drawn for the nominal arm) out of reach: no policy can
    succeed on those.
    """
    if not isinstance(make_task(env_cfg.task, env_cfg.task_options or None), ReachTask):
        return None
    arm = ArmParams(**env_cfg.params)
    radius = np.linalg.norm(episodes.goals, axis=1)
    return float(np.mean((radius >= arm.inner_radius) & (radius <= arm.reach)))


def _probe(policy: LoadedPolicy, env_cfg: EnvConfig, nominal: EnvConfig) -> str | None:
    """Why ``policy`` cannot act on ``env_cfg``'s observations, or ``None`` if it can."""
    shape = TwoLinkEnv(**env_cfg.make_kwargs()).observation_space.shape
    if shape == TwoLinkEnv(**nominal.make_kwargs()).observation_space.shape:
        return None
    obs = np.zeros((1, *(shape or ())), dtype=np.float32)
    try:
        policy.predictor.predict(
            obs, state=None, episode_start=np.ones(1, bool), deterministic=True
        )
    except (ValueError, RuntimeError) as exc:
        return f"it cannot take observations of shape {shape} ({type(exc).__name__}: {exc})"
    return None


def run_conditions(
    policy: LoadedPolicy,
    env_cfg: EnvConfig,
    episodes: EpisodeSet,
    conditions: Sequence[Condition],
) -> PolicyRobustness:
    """Run ``policy`` (loaded on ``env_cfg``) on ``episodes`` under every condition."""
    start = time.perf_counter()
    success: dict[str, NDArray[np.bool_]] = {}
    skipped: dict[str, str] = {}
    for c in conditions:
        cfg = c.env_config(env_cfg)
        reason = _probe(policy, cfg, env_cfg)
        if reason is not None:
            skipped[c.name] = reason
            continue
        success[c.name] = run_policy(policy, cfg, episodes).success
    return PolicyRobustness(
        policy.label, policy.kind, success, skipped, time.perf_counter() - start
    )


def robustness(
    cfg: RunConfig,
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
    cfg : RunConfig
        Its ``env`` is the nominal environment, its ``evaluate`` section the episodes.
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
    conditions = build_conditions(cfg.env, kinds, levels)
    for c in conditions:  # every condition's env must build before anything runs
        TwoLinkEnv(**c.env_config(cfg.env).make_kwargs())
    env = TwoLinkEnv(**cfg.env.make_kwargs())
    policies = [load_policy(spec, cfg.env, env) for spec in resolve_policies(specs, cfg)]
    n = episodes if episodes is not None else cfg.evaluate.episodes
    episode_set = draw_episodes(cfg.env, n, cfg.evaluate.seed)
    reachable = {
        c.name: r
        for c in conditions
        if (r := reachable_fraction(c.env_config(cfg.env), episode_set)) is not None
    }
    results = []
    for policy in policies:
        results.append(run_conditions(policy, cfg.env, episode_set, conditions))
        if progress is not None:
            progress(
                f"{policy.label}: {len(conditions)} conditions in {results[-1].wall_time_s:.0f} s"
            )
    return RobustnessResult(cfg.env.task, episode_set, conditions, results, reachable)


# -- output -------------------------------------------------------------------
def _pct(rate: float | None) -> str:
    return "–" if rate is None else f"{100 * rate:.0f}%"


def markdown_table(result: RobustnessResult) -> str:
    """Success per condition (rows) and policy (columns), then group scores and the score."""
    data = result.to_dict()
    rows = data["policies"]
    reach = bool(result.reachable)
    head = "| condition | group |" + "".join(f" {r['policy']} |" for r in rows)
    head += " reachable targets |" if reach else ""
    rule = "|---|---|" + "---:|" * (len(rows) + reach)
    lines = [head, rule]
    for c in result.conditions:
        cells = "".join(f" {_pct(r['success'][c.name])} |" for r in rows)
        extra = f" {_pct(result.reachable.get(c.name))} |" if reach else ""
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
    return out + ("\nSkipped conditions:\n\n" + "\n".join(notes) + "\n" if notes else "")


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
    ax.set_yticks(range(len(result.conditions)), [c.name for c in result.conditions], fontsize=7)
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


def write_results(result: RobustnessResult, out: Path) -> str:
    """Write ``robustness.json``, ``table.md`` and ``robustness.png``; return the table."""
    out.mkdir(parents=True, exist_ok=True)
    data = result.to_dict()
    (out / "robustness.json").write_text(json.dumps(data, indent=2, allow_nan=False))
    table = markdown_table(result)
    seed = result.episodes.seed
    header = (
        f"Task `{result.task}`, {len(result.episodes)} episodes (seeds {seed}.."
        f"{seed + len(result.episodes) - 1}), identical for every policy and condition; "
        "success per condition, one variation at a time (training/robustness.py, module "
        "notes: the score).\n\n"
    )
    (out / "table.md").write_text(header + table)
    plot_robustness(result, out / "robustness.png")
    return table
