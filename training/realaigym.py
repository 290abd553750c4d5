"""``twolink realaigym``: RealAIGym's scores of a trajectory, and our policies on its boards.

``score FILE.csv`` prints a trajectory's criteria and score. ``performance`` and
``robustness`` run policies through RealAIGym's protocol
(:mod:`twolink_gym.realaigym.protocol`) and print their rows beside the
published v2 boards (:data:`twolink_gym.realaigym.boards.PUBLISHED`, numbers
cited with their source). ``v3`` runs policies through the ICRA 2025 protocol
(:mod:`twolink_gym.realaigym.v3`: 60 s, 15 pushes, scored by uptime) and prints
them beside its published results (:data:`~twolink_gym.realaigym.boards.PUBLISHED_V3`);
``score --version v3`` scores a v3 trajectory. A policy is a controller name (default gains, or a
RealAIGym variant of :data:`twolink_gym.realaigym.controllers.VARIANTS`),
``pretrained:NAME``, or a run folder: agents act in the env of their own config
(its ``dt`` a multiple of 2 ms, the command held in between, its ``max_torque``
scaling its actions; the board clips to 6 N·m).
"""

from __future__ import annotations

import argparse
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from twolink_gym.realaigym import criteria, read_csv, score, write_csv
from twolink_gym.realaigym.boards import PUBLISHED
from twolink_gym.realaigym.protocol import (
    DT,
    PolicyRunner,
    check_robot,
    decision_steps,
    make_policy_env,
    run,
)
from twolink_gym.simulation import Simulation

__all__ = ["add_parser", "policy_runner"]


def policy_runner(spec: str, robot: str) -> PolicyRunner:
    """The policy ``spec`` ready for the board of ``robot``.

    Raises
    ------
    ValueError
        For an unknown policy, one for another robot or task, or an agent whose
        ``dt`` is not a multiple of 2 ms.
    """
    from twolink_gym.controllers import CONTROLLERS
    from twolink_gym.realaigym.controllers import VARIANTS, variant_runner

    robot = check_robot(robot)
    if spec in VARIANTS:
        return variant_runner(spec, robot)
    if spec in CONTROLLERS:
        env = make_policy_env(robot)
        cls = CONTROLLERS[spec]
        if robot not in cls.actuations or not cls.applies_to("swingup"):
            raise ValueError(f"controller {spec!r} cannot swing up the {robot}")
        return PolicyRunner(cls.from_env(env), env.sim)
    from twolink_gym.training.config import load_config
    from twolink_gym.training.policies import load_policy

    config = _agent_config_file(spec)
    if not config.is_file():
        raise ValueError(
            f"policy {spec!r} is neither a controller ({sorted(CONTROLLERS)}), a RealAIGym "
            f"variant ({sorted(VARIANTS)}), pretrained:NAME nor a run folder with config.yaml"
        )
    env_cfg = load_config(config).env
    if env_cfg.task != "swingup" or env_cfg.actuation != robot:
        raise ValueError(
            f"policy {spec!r} was trained for task {env_cfg.task!r} with actuation "
            f"{env_cfg.actuation!r}, not the {robot}'s swing-up"
        )
    try:
        steps = decision_steps(env_cfg.dt)
    except ValueError as err:
        raise ValueError(
            f"policy {spec!r}: its dt {env_cfg.dt} s is not a multiple of {DT} s"
        ) from err
    kwargs = env_cfg.nominal().make_kwargs()
    sim = Simulation.create(
        task=kwargs["task"],
        params=kwargs["params"],
        dt=kwargs["dt"],
        max_torque=kwargs["max_torque"],
        task_options=kwargs["task_options"],
        actuation=robot,
        observation=kwargs["observation"],
    )
    loaded = load_policy(spec, env_cfg, None)
    return PolicyRunner(loaded.predictor, sim, steps)


def _runners(args: argparse.Namespace) -> list[tuple[str, PolicyRunner]]:
    """Each policy of ``args.policies`` as a runner, with the velocity observer if asked."""
    from twolink_gym.realaigym.observer import OBSERVER_GAINS, VelocityObserver

    runners = [(spec, policy_runner(spec, args.robot)) for spec in args.policies]
    if args.observer_gains is not None and not args.observer:
        raise ValueError("--observer-gains needs --observer")
    if args.observer:
        for _, runner in runners:
            try:
                gains = args.observer_gains or OBSERVER_GAINS[args.robot]
                runner.observer = VelocityObserver(runner.sim.params, *gains)
            except ValueError as err:
                raise ValueError(f"--observer-gains: {err}") from None
    return runners


def _observer_details(runner: Any) -> dict[str, Any]:
    """``{"observer": settings}`` for a runner with an observer, else empty.

    Also empty for a plain policy function, which ``run_v3`` accepts too.
    """
    observer = getattr(runner, "observer", None)
    return {} if observer is None else {"observer": observer.settings()}


def _row_name(row: dict[str, Any]) -> str:
    """A board's name of one of our rows: the policy, and the observer if it had one."""
    return row["policy"] + (" + observer" if row.get("observer") else "") + " (ours)"


def _agent_config_file(spec: str) -> Path:
    """The ``config.yaml`` of the agent ``spec`` (``pretrained:NAME`` or a folder); may not exist."""
    from twolink_gym.training.policies import PRETRAINED_PREFIX

    from twolink_gym import pretrained

    if spec.startswith(PRETRAINED_PREFIX):
        return pretrained.pretrained_dir(spec[len(PRETRAINED_PREFIX) :]) / "config.yaml"
    return Path(spec) / "config.yaml"


def _agent_details(spec: str) -> dict[str, Any]:
    """The training seed and algorithm of a policy that :func:`policy_runner` accepted.

    Empty for a controller, a RealAIGym variant or a policy without a ``config.yaml``;
    for an agent, ``train.seed`` and ``algo.name`` of its ``config.yaml``, so that a
    results page can group one config's seeds.
    """
    from twolink_gym.training.config import load_config

    from twolink_gym.controllers import CONTROLLERS
    from twolink_gym.realaigym.controllers import VARIANTS

    config = _agent_config_file(spec)
    if spec in VARIANTS or spec in CONTROLLERS or not config.is_file():
        return {}
    cfg = load_config(config)
    return {"train_seed": cfg.train.seed, "algorithm": cfg.algo.name}


def _folder_name(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", spec.rstrip("/")).strip("_") or "policy"


def cmd_score(args: argparse.Namespace) -> int:
    """Print the criteria and the score of one trajectory file."""
    if args.version == "v3":
        from twolink_gym.realaigym.v3 import score_v3

        v3 = score_v3(read_csv(args.file)).as_dict()
        if args.json:
            print(json.dumps({**v3, "robot": args.robot, "version": "v3"}))
            return 0
        print(f"{'n_swingups':16s} {v3['n_swingups']}")
        print(f"{'uptime':16s} {v3['uptime']:.6f} s")
        print(f"{'score':16s} {v3['score']:.6f}  (RealAI score v3, {args.robot})")
        return 0
    c = criteria(read_csv(args.file), args.robot, args.version)
    s = score(c, args.version)
    if args.json:
        print(json.dumps({**c.as_dict(), "score": s, "robot": args.robot, "version": args.version}))
        return 0
    for name, value in c.as_dict().items():
        print(f"{name:16s} {value:.6g}")
    print(f"{'score':16s} {s:.6f}  (RealAI score {args.version}, {args.robot})")
    return 0


def _progress(total: int, label: str) -> Any:
    """A progress callback ``update(done)`` drawing a bar on a terminal (none when piped)."""
    from tqdm import tqdm

    bar = tqdm(total=total, desc=label, unit="step", leave=False, disable=None)

    def update(done: int) -> None:
        bar.update(done - bar.n)
        if done == total:
            bar.close()

    return update


def cmd_performance(args: argparse.Namespace) -> int:
    """Run each policy once, write its trajectory and scores, print the board."""
    out = Path(args.out)
    rows = []
    runners = _runners(args)
    for spec, runner in runners:
        runs = run(runner, args.robot, record=True, progress=_progress(5000, spec))
        trajectory = runs.trajectory()
        c = criteria(trajectory, args.robot, "v2")
        folder = out / _folder_name(spec)
        folder.mkdir(parents=True, exist_ok=True)
        write_csv(folder / "sim_swingup.csv", trajectory)
        result = {
            "policy": spec,
            "robot": args.robot,
            **_agent_details(spec),
            **_observer_details(runner),
            **c.as_dict(),
            "score": score(c, "v2"),
            "score_v1": score(c, "v1"),
        }
        (folder / "scores.json").write_text(json.dumps(result, indent=1) + "\n")
        rows.append(result)
    print(_performance_table(rows, args.robot))
    (out / "performance.json").write_text(json.dumps(rows, indent=1) + "\n")
    return 0


def _name_width(entries: list[tuple[str, Any, Any]]) -> int:
    """The width of a board's first column: its longest name, at least 34 characters."""
    return max(34, *(len(name) for name, *_ in entries))


def _performance_table(rows: list[dict[str, Any]], robot: str) -> str:
    board = PUBLISHED["performance"][robot]
    entries = [(r["controller"] + " (published)", r, "1/1") for r in board["rows"]]
    entries += [(_row_name(r), r, f"{r['success']}/1") for r in rows]
    w = _name_width(entries)
    lines = [
        f"RealAIGym {robot} simulation performance v2 (published: {board['source']})",
        f"{'controller':{w}s} {'succ':>4s} {'time':>6s} {'energy':>7s} {'tcost':>6s} "
        f"{'smooth':>7s} {'vel':>7s} {'score':>6s}",
    ]
    for name, r, succ in sorted(entries, key=lambda e: -e[1]["score"]):
        lines.append(
            f"{name:{w}s} {succ:>4s} {r['swingup_time']:6.2f} {r['energy']:7.2f} "
            f"{r['tau_cost']:6.2f} {r['tau_smoothness']:7.3f} {r['velocity_cost']:7.2f} "
            f"{r['score']:6.3f}"
        )
    return "\n".join(lines)


def cmd_robustness(args: argparse.Namespace) -> int:
    """Run the robustness families for each policy, write results and plots, print the board."""
    from twolink_gym.realaigym.robustness import FAMILIES, robustness

    out = Path(args.out)
    rows = []
    runners = _runners(args)
    for spec, runner in runners:
        # every policy meets the same noise and pulses (common random numbers): its
        # score does not depend on the other policies of the command
        rng = np.random.default_rng(args.seed)
        results = robustness(runner, args.robot, rng=rng, progress=_progress(5000, spec))
        folder = out / _folder_name(spec)
        folder.mkdir(parents=True, exist_ok=True)
        families = {f: results[f].as_dict() for f in FAMILIES}
        overall = float(np.mean([results[f].score for f in FAMILIES]))
        partial = any(results[f].partial for f in FAMILIES)
        row = {"policy": spec, "robot": args.robot, **_agent_details(spec)}
        row |= _observer_details(runner)
        row |= {"score": overall, "partial": partial, "noise_seed": args.seed}
        row |= {f: results[f].score for f in FAMILIES}
        (folder / "robustness.json").write_text(
            json.dumps({**row, "families": families}, indent=1) + "\n"
        )
        _plot_families(results, folder, spec)
        rows.append(row)
    print(_robustness_table(rows, args.robot))
    (out / "robustness.json").write_text(json.dumps(rows, indent=1) + "\n")
    return 0


def _robustness_table(rows: list[dict[str, Any]], robot: str) -> str:
    from twolink_gym.realaigym.robustness import FAMILIES

    board = PUBLISHED["robustness"][robot]
    head = " ".join(f"{f[:8]:>8s}" for f in FAMILIES)
    entries = [(r["controller"] + " (published)", r, 1.0) for r in board["rows"]]
    entries += [(_row_name(r) + (" *" if r["partial"] else ""), r, 100.0) for r in rows]
    w = _name_width(entries)
    lines = [
        f"RealAIGym {robot} simulation robustness v2 (published: {board['source']})",
        f"{'controller':{w}s} {head} {'score':>6s}",
    ]
    for name, r, scale in sorted(entries, key=lambda e: -e[1]["score"]):
        cells = " ".join(f"{r[f] * scale:8.1f}" for f in FAMILIES)
        lines.append(f"{name:{w}s} {cells} {r['score']:6.3f}")
    if any(r["partial"] for r in rows):
        lines.append(
            "* partial: the model family over the levels our physics can express "
            "(rotor inertia, damping and Coulomb friction levels not run)"
        )
    return "\n".join(lines)


def _plot_families(results: dict[str, Any], folder: Path, spec: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for family, result in results.items():
        fig, ax = plt.subplots(figsize=(6, 3.2))
        groups: dict[str, list[tuple[float, float]]] = {}
        for lv, s, p in zip(result.levels, result.successes, result.passed, strict=True):
            if p is not None:
                groups.setdefault(lv.parameter, []).append((lv.value, s / lv.runs))
        for name, points in groups.items():
            xs, ys = zip(*points, strict=True)
            ax.plot(xs, ys, "o-", label=name, ms=3)
        ax.set_ylim(-0.05, 1.05)
        ax.set_ylabel("success fraction")
        ax.set_xlabel(family)
        shown = "n/a" if math.isnan(result.score) else f"{result.score:.3f}"
        ax.set_title(f"{spec}: {family} ({shown}{', partial' if result.partial else ''})")
        if len(groups) > 1:
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(folder / f"{family}.png", dpi=80)
        plt.close(fig)


def write_scores_v3(path: Path, numbers: dict[str, Any]) -> Path:
    """``scores_v3.csv`` in the publisher's layout: a header and one row, floats as Python prints them."""
    path.write_text(
        "#swingups,Uptime [s],RealAI Score\n"
        f"{float(numbers['n_swingups'])!r},{numbers['uptime']!r},{numbers['score']!r}\n",
        encoding="utf-8",
    )
    return path


def _pushes_seed(text: str) -> int:
    """``--pushes-seed``: :func:`twolink_gym.realaigym.v3.check_pushes_seed` of the integer."""
    from twolink_gym.realaigym.v3 import check_pushes_seed

    try:
        return check_pushes_seed(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an integer in [0, 2**32), got {text!r}"
        ) from None


def cmd_v3(args: argparse.Namespace) -> int:
    """Run each policy through the v3 protocol; write its trajectory, scores and plot; print the board."""
    from twolink_gym.realaigym.v3 import STEPS, run_v3, score_v3

    out = Path(args.out)
    runners = _runners(args)
    rows = []
    seed = args.pushes_seed
    for spec, runner in runners:
        result = run_v3(runner, args.robot, progress=_progress(STEPS, spec), pushes_seed=seed)
        numbers = score_v3(result.trajectory).as_dict()
        folder = out / _folder_name(spec)
        folder.mkdir(parents=True, exist_ok=True)
        write_csv(folder / "sim_swingup.csv", result.trajectory)
        write_scores_v3(folder / "scores_v3.csv", numbers)
        _plot_v3(result, folder / "timeseries.png", f"{spec} ({args.robot}, v3)")
        row = {"policy": spec, "robot": args.robot, **_agent_details(spec)}
        row |= _observer_details(runner) | numbers
        rows.append({**row, "pushes_seed": seed})
    print(_v3_table(rows, args.robot, seed))
    (out / "v3.json").write_text(json.dumps(rows, indent=1) + "\n")
    return 0


def _v3_table(rows: list[dict[str, Any]], robot: str, pushes_seed: int | None = None) -> str:
    """Our rows among the published ones; with held-out pushes, ours alone."""
    from twolink_gym.realaigym.boards import PUBLISHED_V3

    board = PUBLISHED_V3["v3"][robot]
    if pushes_seed is None:
        entries = [(r["controller"] + " (published)", r, None) for r in board["rows"]]
        title = f"RealAIGym {robot} simulation v3, ICRA 2025 (published: {board['source']})"
    else:
        entries = []
        title = (
            f"RealAIGym {robot} v3 protocol with held-out pushes (seed {pushes_seed}): "
            "not the ICRA 2025 board, whose published scores are not comparable"
        )
    entries += [(_row_name(r), r, None) for r in rows]
    w = _name_width(entries)
    lines = [title, f"{'controller':{w}s} {'#swingups':>9s} {'uptime':>8s} {'score':>6s}"]
    for name, r, _ in sorted(entries, key=lambda e: -e[1]["score"]):
        lines.append(f"{name:{w}s} {r['n_swingups']:9d} {r['uptime']:8.3f} {r['score']:6.3f}")
    return "\n".join(lines)


def _plot_v3(result: Any, path: Path, title: str) -> None:
    """Angles, velocities and torques over the run, the pushes shaded, the uptime rows marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from twolink_gym.realaigym.v3 import LINKS

    tr = result.trajectory
    t = tr.t
    l1, l2 = LINKS
    height = -l1 * np.cos(tr.x[:, 0]) - l2 * np.cos(tr.x[:, 0] + tr.x[:, 1])
    fig, axes = plt.subplots(4, 1, figsize=(10, 8), sharex=True)
    series = (
        (tr.x[:, :2], ("q1", "q2"), "angle [rad]"),
        (tr.x[:, 2:], ("q̇1", "q̇2"), "velocity [rad/s]"),
        (tr.u, ("τ1", "τ2"), "torque [N·m]"),
        (height[:, None], ("tip height",), "height [m]"),
    )
    edges = np.flatnonzero(np.diff(np.r_[0, result.pushed.astype(int), 0]))
    for ax, (values, names, label) in zip(axes, series, strict=True):
        for j, name in enumerate(names):
            ax.plot(t, values[:, j], lw=0.6, label=name)
        for start, stop in zip(edges[::2], edges[1::2], strict=True):
            ax.axvspan(t[start], t[stop - 1], color="0.8", lw=0)
        ax.set_ylabel(label)
        ax.legend(loc="upper right", fontsize=7)
    axes[-1].axhline(0.9 * (l1 + l2), color="k", lw=0.6, ls="--")
    axes[-1].set_xlabel("time [s] (pushes shaded; dashed: the uptime line)")
    axes[0].set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def add_parser(sub: Any) -> None:
    """Add ``realaigym`` with its ``score``, ``performance``, ``robustness`` and ``v3`` sub-commands."""
    p = sub.add_parser(
        "realaigym",
        help="RealAIGym's acrobot/pendubot boards: score a trajectory, run policies",
        description="RealAIGym's simulation benchmark (docs/realaigym.md).",
    )
    inner = p.add_subparsers(dest="realaigym_command", required=True)
    robots = ("acrobot", "pendubot")
    s = inner.add_parser("score", help="criteria and score of a sim_swingup.csv trajectory")
    s.add_argument("file", help="a trajectory in RealAIGym's CSV format")
    s.add_argument("--robot", required=True, choices=robots)
    s.add_argument("--version", default="v2", choices=("v1", "v2", "v3"))
    s.add_argument("--json", action="store_true", help="print one JSON object (key score)")
    s.set_defaults(func=cmd_score)
    for name, func, text in (
        ("performance", cmd_performance, "run policies on the performance board (v2)"),
        ("robustness", cmd_robustness, "run policies on the robustness board (v2, 722 runs)"),
    ):
        q = inner.add_parser(name, help=text)
        q.add_argument("policies", nargs="+", metavar="POLICY")
        q.add_argument("--robot", required=True, choices=robots)
        q.add_argument("--out", required=True, help="output folder (one sub-folder per policy)")
        if name == "robustness":
            q.add_argument(
                "--seed", type=int, default=None, help="noise and pulses (default: unseeded)"
            )
        _add_observer_arguments(q)
        q.set_defaults(func=func)
    q = inner.add_parser(
        "v3", help="run policies through the v3 protocol (ICRA 2025: 60 s, 15 pushes)"
    )
    q.add_argument("policies", nargs="+", metavar="POLICY")
    q.add_argument("--robot", required=True, choices=robots)
    q.add_argument("--out", required=True, help="output folder (one sub-folder per policy)")
    q.add_argument(
        "--pushes-seed",
        type=_pushes_seed,
        default=None,
        metavar="N",
        help="draw the 15 pushes from numpy's RandomState(N), in [0, 2**32), instead of the "
        "board's seed (333 acrobot, 777 pendubot): held-out runs for choosing among models; "
        "the published rows are then left out",
    )
    _add_observer_arguments(q)
    q.set_defaults(func=cmd_v3)


def _add_observer_arguments(q: argparse.ArgumentParser) -> None:
    """``--observer`` and ``--observer-gains`` of the commands that run policies."""
    from twolink_gym.realaigym.observer import OBSERVER_GAINS

    q.add_argument(
        "--observer",
        action="store_true",
        help="estimate the velocities by the model-based observer before each policy sees "
        "the measurement (twolink_gym.realaigym.observer); the rows record it",
    )
    q.add_argument(
        "--observer-gains",
        type=float,
        nargs=2,
        default=None,
        metavar=("VELOCITY", "POSITION"),
        help="the observer's velocity_gain in [0, 1] and position_gain in [0, 2] (default: "
        + ", ".join(f"{robot} {v:g} {p:g}" for robot, (v, p) in OBSERVER_GAINS.items())
        + ")",
    )
