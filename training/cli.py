"""The ``twolink`` command: ``train``, ``evaluate``, ``compare``, ``robustness``, ``record``, ``run``...

Examples::

    twolink run configs/default.yaml                 # train, evaluate, compare (~10 min)
    twolink train configs/reach_ppo.yaml --set train.seed=3
    twolink train configs/reach_ppo.yaml --resume runs/reach_ppo_s0   # after Ctrl-C, or for more steps
    twolink train configs/reach_ppo.yaml --resume runs/reach_ppo_s0/checkpoints/model_250000_steps.zip
    twolink agents                                   # the shipped agents (--json)
    twolink evaluate pretrained:balance_ppo lqr      # the agent's own env and episodes
    twolink evaluate --task balance lqr pd_gravity   # controllers need no config
    twolink evaluate configs/balance_ppo.yaml runs/balance_ppo_s0 lqr --out results/
    twolink compare configs/reach_ppo.yaml runs/reach_ppo_s0 runs/reach_sac_s0 --out docs/results/reach
    twolink record pretrained:reach_sac --out reach.gif --episode 0
    twolink robustness pretrained:balance_ppo auto --episodes 20
    twolink tune configs/reach_sac.yaml --trials 40 --workers 2 --report

``evaluate``, ``compare``, ``record`` and ``robustness`` take the environment
from a config (the first argument, when it is a YAML file), from ``--task``,
or from the first agent that carries its config (``pretrained:NAME``, a run
folder, an exported agent); their results go to the evaluated run's own folder,
else to ``<output dir>/<command>/<name>`` (:func:`default_output`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from twolink_gym.training.config import (
    ConfigError,
    EvalConfig,
    RunConfig,
    apply_overrides,
    eval_config_from_dict,
    load_config,
    load_eval_config,
)

if TYPE_CHECKING:
    from twolink_gym.training.stats import SeedStatistics
    from twolink_gym.training.train import TrainResult

__all__ = ["main"]


def _config(args: argparse.Namespace) -> RunConfig:
    return load_config(args.config, args.set or ())


#: The commands that evaluate policies: an optional config, then policies.
EVALUATION_COMMANDS = ("evaluate", "compare", "record", "robustness")
#: The folder each evaluation command writes into inside an evaluated run folder.
RUN_SUBFOLDER = {"evaluate": "evaluation", "compare": "compare", "robustness": "robustness"}
#: The prefix of a shipped agent in a policy string.
PRETRAINED = "pretrained:"
_CONFIG_SUFFIXES = (".yaml", ".yml")


@dataclasses.dataclass(frozen=True)
class EvaluationSetup:
    """What an evaluation command runs: the config, the policies, the name of its results.

    Attributes
    ----------
    cfg : EvalConfig
        The environment and the episode set.
    policies : list of str
        The policy strings as given.
    name : str
        What set the environment: the config file's name (its folder's for a
        run's ``config.yaml``), the task of ``--task`` (``<task>_<actuation>``
        for an underactuated arm), or the agent whose config was used.
    """

    cfg: EvalConfig
    policies: list[str]
    name: str


def _is_config(item: str) -> bool:
    """Whether a positional argument names a config: a YAML file, or another existing file."""
    path = Path(item)
    if path.suffix.lower() in _CONFIG_SUFFIXES:
        return True
    return path.is_file() and path.suffix.lower() != ".zip"


def _config_name(path: Path) -> str:
    """``configs/balance_ppo.yaml`` → ``balance_ppo``; a run's ``config.yaml`` → the run's name."""
    if path.stem == "config" and path.resolve().parent.name:
        return path.resolve().parent.name
    return path.stem


def _agent_config(spec: str) -> tuple[Path, str] | None:
    """The ``config.yaml`` an agent carries, and the agent's name; ``None`` for a controller."""
    if spec.startswith(PRETRAINED):
        from twolink_gym import pretrained

        name = spec[len(PRETRAINED) :]
        return pretrained.pretrained_dir(name) / "config.yaml", name
    path = Path(spec)
    if path.is_dir():
        folder = path
    elif path.is_file() and path.suffix.lower() == ".zip":
        folder = path.parent.parent if path.parent.name == "checkpoints" else path.parent
    else:
        return None
    config = folder / "config.yaml"
    return (config, folder.resolve().name) if config.is_file() else None


def evaluation_setup(
    items: Sequence[str],
    overrides: Sequence[str] = (),
    *,
    task: str | None = None,
    actuation: str | None = None,
) -> EvaluationSetup:
    """The config and policies of ``twolink evaluate|compare|record|robustness``.

    Parameters
    ----------
    items : sequence of str
        The positional arguments: an optional config first (a ``.yaml``/``.yml``
        file, or any existing file but a ``.zip``), then policy strings.
    overrides : sequence of str
        ``--set`` values, applied to whichever config is used.
    task, actuation : str, optional
        ``--task`` and ``--actuation``: a config of that env alone (instead of a
        config file).

    Returns
    -------
    EvaluationSetup
        The environment comes from the config file, else from ``--task``, else
        from the first agent among the policies that carries its config
        (``pretrained:NAME``, a run folder or a model inside one, an exported
        agent). With a config or ``--task``, each agent is checked against that
        environment when it is loaded.

    Raises
    ------
    ValueError
        If both a config and ``--task`` are given, ``--actuation`` comes without
        ``--task``, or nothing gives the environment.
    ConfigError
        If the config (or ``--task`` with ``--set``) is invalid.
    """
    items = list(items)
    config = items.pop(0) if items and _is_config(items[0]) else None
    if actuation is not None and task is None:
        raise ValueError(
            "--actuation goes with --task (a config sets env.actuation; --set env.actuation=... "
            "changes it)"
        )
    if config is not None and task is not None:
        raise ValueError(
            f"give either a config ({config}) or --task {task}, not both (--set env.task=... "
            "changes a config's task)"
        )
    if config is not None:
        path = Path(config)
        return EvaluationSetup(load_eval_config(path, overrides), items, _config_name(path))
    if task is not None:
        arm = actuation or "full"
        source = f"--task {task}" + (f" --actuation {actuation}" if actuation else "")
        data = apply_overrides({"env": {"task": task, "actuation": arm}}, overrides, source)
        if overrides:
            source += f" (with overrides {list(overrides)})"
        name = task if arm == "full" else f"{task}_{arm}"
        return EvaluationSetup(eval_config_from_dict(data, source), items, name)
    for spec in items:
        found = _agent_config(spec)
        if found is not None:
            path, name = found
            return EvaluationSetup(load_eval_config(path, overrides), items, name)
    raise ValueError(
        "nothing gives the environment to evaluate on: give a config first (e.g. "
        "configs/balance_ppo.yaml, or a config with only env: {task: balance}), --task TASK "
        "[--actuation full|acrobot|pendubot], or an agent that carries its config "
        "(pretrained:NAME, see `twolink agents`; a run folder)"
    )


def _run_folder(spec: str) -> Path | None:
    """The training run folder a policy string names (the folder, or a model inside it)."""
    if spec.startswith(PRETRAINED):
        return None
    path = Path(spec)
    if path.is_dir():
        return path if (path / "model.zip").is_file() else None
    if path.is_file() and path.suffix.lower() == ".zip":
        folder = path.parent.parent if path.parent.name == "checkpoints" else path.parent
        return folder if (folder / "config.yaml").is_file() else None
    return None


def default_output(command: str, setup: EvaluationSetup, policies: Sequence[str]) -> Path:
    """Where ``command`` writes its results when no ``--out`` is given.

    Into the evaluated run's own folder (``<run>/evaluation``, ``<run>/compare``,
    ``<run>/robustness``) when exactly one run folder (or a model inside one) is
    among ``policies``; otherwise ``<output dir>/<command>/<name>``, where the
    output dir is the config's ``train.output_dir`` (``runs`` for a config
    without one) and the name is :attr:`EvaluationSetup.name`. Never a run
    folder that does not exist.
    """
    runs = {folder.resolve(): folder for spec in policies if (folder := _run_folder(spec))}
    if len(runs) == 1:
        (run,) = runs.values()
        return run / RUN_SUBFOLDER[command]
    return setup.cfg.output_dir / command / setup.name


def _setup(args: argparse.Namespace) -> EvaluationSetup:
    return evaluation_setup(args.items, args.set or (), task=args.task, actuation=args.actuation)


def _version() -> str:
    """The installed distribution's version (the package's own if not installed)."""
    from importlib import metadata

    try:
        return metadata.version("twolink-gym")
    except metadata.PackageNotFoundError:  # pragma: no cover - a source checkout
        from twolink_gym import __version__

        return __version__


def _integer(minimum: int) -> Callable[[str], int]:
    """An argparse ``type``: an integer >= ``minimum`` (argparse names the argument)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {text!r}")
        return value

    return parse


def _positive_float(text: str) -> float:
    """An argparse ``type``: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (value > 0 and value != float("inf")):
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", help="YAML config file (configs/*.yaml or a run's config.yaml)")
    p.add_argument(
        "--set",
        action="append",
        metavar="SECTION.KEY=VALUE",
        help="override one config value (YAML syntax), e.g. --set train.seed=3; repeatable",
    )


#: How the evaluation commands' help names the policies they take.
POLICY_HELP = (
    "controller names (lqr, ...), 'auto' (every controller for the task and actuation), "
    "pretrained:NAME (a shipped agent, see `twolink agents`), run folders, exported agent "
    "folders or model .zip files"
)


def _evaluation_parser(
    sub: Any, command: str, help: str, description: str, policies: str | int
) -> argparse.ArgumentParser:
    """A sub-command that takes an optional config, then policies (``items``)."""
    outputs = (
        ""
        if command == "record"
        else (
            f" Results go to --out; by default into the evaluated run's own folder "
            f"(<run>/{RUN_SUBFOLDER[command]}) when exactly one run folder (or a model in one) "
            f"is evaluated, else to <output dir>/{command}/<name> (output dir: the config's "
            "train.output_dir, or runs; name: the config file's, the task's, or the agent's "
            "whose config was used). A failed command writes nothing."
        )
    )
    p: argparse.ArgumentParser = sub.add_parser(
        command,
        help=help,
        description=description
        + " The environment comes from CONFIG (a YAML file: a training config, or one with "
        "only env: and optionally evaluate:), else from --task, else from the first agent "
        "that carries its config (pretrained:NAME, a run folder, an exported agent). With a "
        "config or --task, every agent must have been trained on that environment." + outputs,
    )
    p.add_argument(
        "config",
        nargs="?",
        metavar="CONFIG",
        help="YAML config (configs/*.yaml, a run's config.yaml, or env: alone); optional",
    )
    one = (
        "one policy: a controller name (lqr, ...), pretrained:NAME (a shipped agent, see "
        "`twolink agents`), a run folder, an exported agent folder or a model .zip"
    )
    p.add_argument(
        "items", nargs=policies, metavar="POLICY", help=one if policies == 1 else POLICY_HELP
    )
    p.add_argument(
        "--task",
        metavar="TASK",
        help="evaluate on this task's default env instead of a config (reach, balance, "
        "swingup, track)",
    )
    p.add_argument(
        "--actuation",
        metavar="A",
        help="with --task: full (default), acrobot (elbow motor only) or pendubot "
        "(shoulder motor only)",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="SECTION.KEY=VALUE",
        help="override one config value (YAML syntax), e.g. --set evaluate.episodes=20; repeatable",
    )
    return p


def _add_overwrite(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the config's run folder if it already holds a run (default: refuse, "
        "saying how to proceed); only the run's own files are deleted",
    )


def _timesteps_note(result: TrainResult) -> str:
    if result.planned_timesteps > result.requested_timesteps and result.rollout_steps:
        return (
            f" (train.total_timesteps {result.requested_timesteps:,} rounded up to whole "
            f"rollouts of {result.rollout_steps:,} steps)"
        )
    return ""


def _train_stopping_on_sigterm(cfg: RunConfig, **kwargs: Any) -> TrainResult:
    """:func:`~twolink_gym.training.train.train`, SIGTERM (``kill PID``, a job scheduler) as Ctrl-C.

    Either signal stops the learning loop and saves the run; one that arrives
    while the run is being set up or saved waits for the learning loop or is
    not needed (:mod:`~twolink_gym.training.interrupts`).
    """
    import signal

    from twolink_gym.training.interrupts import deferred_interrupts
    from twolink_gym.training.train import train

    with deferred_interrupts(signal.SIGTERM):
        return train(cfg, **kwargs)


def cmd_train(args: argparse.Namespace) -> int:
    cfg = _config(args)
    result = _train_stopping_on_sigterm(cfg, resume=args.resume, overwrite=args.overwrite)
    state = "interrupted" if result.interrupted else "done"
    print(
        f"{state}: {result.timesteps:,} timesteps{_timesteps_note(result)} "
        f"in {result.wall_time_s:.0f} s; model {result.model_path}"
    )
    if result.interrupted:
        print(f"continue with: twolink train {args.config} --resume {result.run_dir}")
    return 130 if result.interrupted else 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from twolink_gym.training.compare import markdown_table
    from twolink_gym.training.evaluate import evaluate_policies, summarize

    setup = _setup(args)
    if not setup.policies:
        raise ValueError("give at least one policy to evaluate (after the config, if any)")
    cfg = setup.cfg
    out = Path(args.out) if args.out else default_output("evaluate", setup, setup.policies)
    episodes, results = evaluate_policies(
        setup.policies, cfg, out, episodes=args.episodes, seed=args.seed
    )
    if args.json:
        for r in results:
            print(json.dumps(summarize(r)))
    else:
        print(
            f"Task {cfg.env.task!r}, {len(episodes)} episodes (seeds {episodes.seed}.."
            f"{episodes.seed + len(episodes) - 1}), identical for every policy:"
        )
        print(markdown_table(results, cfg.env.task), end="")
    print(f"results (summary.json, per-episode CSV) in {out}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from twolink_gym.training.compare import compare

    setup = _setup(args)
    cfg = setup.cfg
    agents = setup.policies
    if not agents and isinstance(cfg, RunConfig):  # a training config: its own run
        if not (cfg.run_dir / "model.zip").is_file():
            raise ValueError(
                f"no agents given, and the config's own run folder {cfg.run_dir} holds no "
                "model.zip: train it first (twolink train CONFIG), or name the agents "
                "to compare (pretrained:NAME, run folders, model .zip files)"
            )
        agents = [str(cfg.run_dir)]
    out = Path(args.out) if args.out else default_output("compare", setup, agents)
    table, _, _ = compare(
        cfg,
        agents,
        out,
        controllers=args.controllers,
        episodes=args.episodes,
        trajectories=not args.no_trajectories,
    )
    print(table)
    print(f"table, plots and per-episode results in {out}/")
    return 0


def cmd_robustness(args: argparse.Namespace) -> int:
    from twolink_gym.training.conditions import parse_levels
    from twolink_gym.training.robustness import check_output, robustness, write_results

    setup = _setup(args)
    if not setup.policies:
        raise ValueError("give at least one policy (after the config, if any)")
    cfg = setup.cfg
    levels = parse_levels(args.levels or ())
    out = Path(args.out) if args.out else default_output("robustness", setup, setup.policies)
    check_output(out, args.overwrite)
    result = robustness(
        cfg,
        setup.policies,
        kinds=args.conditions,
        levels=levels,
        episodes=args.episodes,
        progress=print,
    )
    table = write_results(result, out)
    print(table, end="")
    print(f"robustness.json, table.md, robustness.png and timing.json in {out}/")
    return 0


def cmd_record(args: argparse.Namespace) -> int:
    import gymnasium as gym
    from twolink_gym.training.evaluate import draw_episodes
    from twolink_gym.training.policies import load_policy
    from twolink_gym.training.record import check_video_path, record_episode

    setup = _setup(args)
    if len(setup.policies) != 1:
        raise ValueError(
            f"twolink record records one policy (after the config, if any), got {setup.policies}"
        )
    (spec,) = setup.policies
    cfg = setup.cfg
    check_video_path(args.out, "--out")
    n = cfg.evaluate.episodes
    if not 0 <= args.episode < n:
        raise ValueError(
            f"--episode must be an index into the evaluation set, 0..{n - 1} "
            f"(evaluate.episodes = {n} in {cfg.source}), got {args.episode}"
        )
    from twolink_gym.registration import CONVENIENCE_IDS

    kwargs = cfg.env.make_kwargs()
    if cfg.env.max_episode_steps is not None:
        kwargs["max_episode_steps"] = cfg.env.max_episode_steps
    # the per-task id carries the task's own episode length (TwoLink-v0: 200 steps)
    env = gym.make(CONVENIENCE_IDS[kwargs.pop("task")], render_mode="rgb_array", **kwargs)
    try:
        policy = load_policy(spec, cfg.env, env)
        episodes = draw_episodes(cfg.env, args.episode + 1, cfg.evaluate.seed)
        options = {k: v[args.episode] for k, v in episodes.options().items()}
        path = record_episode(
            policy.predictor,
            env,
            args.out,
            seed=cfg.evaluate.seed + args.episode,
            options=options,
            fps=args.fps,
            max_steps=args.max_steps,
        )
    finally:
        env.close()
    print(f"{policy.label}: episode {args.episode} of the evaluation set written to {path}")
    return 0


def cmd_agents(args: argparse.Namespace) -> int:
    from twolink_gym import pretrained

    cards = pretrained.catalog()
    if args.json:
        print(json.dumps([dataclasses.asdict(card) for card in cards], indent=2))
        return 0
    header = ("name", "task", "actuation", "algorithm", "env id", "success")
    rows = [
        (
            card.name,
            card.task,
            card.actuation,
            card.algorithm,
            card.env_id,
            "not measured"
            if card.success is None
            else f"{100 * card.success:.0f}% of {card.episodes} (seeds {card.seed}..)",
        )
        for card in cards
    ]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, tuple("-" * w for w in widths), *rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    print(
        "\nsuccess: the fraction of the agent's fixed evaluation episodes it succeeds on "
        "(deterministic actions).\nUse an agent as pretrained:NAME (twolink evaluate "
        "pretrained:balance_ppo), or from Python: twolink_gym.load_pretrained(NAME)."
    )
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from twolink_gym.training.compare import compare

    cfg = _config(args)
    start = time.perf_counter()
    result = _train_stopping_on_sigterm(cfg, overwrite=args.overwrite)
    if result.interrupted:
        print("training interrupted; comparing the model saved at that point")
    out = cfg.run_dir / "compare"
    table, episodes, _ = compare(cfg, [result.run_dir], out)
    total = time.perf_counter() - start
    print()
    print(
        f"Task {cfg.env.task!r}: {cfg.algo.name} trained for {result.timesteps:,} steps"
        f"{_timesteps_note(result)} ({result.wall_time_s:.0f} s); {len(episodes)} evaluation "
        "episodes, identical for all."
    )
    print(table)
    print(f"total wall time {total:.0f} s")
    shown = ("model.zip", "config.yaml", "tb", "eval", "checkpoints", "best")
    held = [n + ("/" if p.is_dir() else "") for n in shown if (p := result.run_dir / n).exists()]
    print(f"run folder:  {result.run_dir}/ ({', '.join(held)})")
    print(
        f"comparison:  {out}/ (table.md, field_metrics.md, learning_curves.png, distributions.png, trajectory.png)"
    )
    return 0


def _print_seed_summary(out_dir: Path, s: SeedStatistics) -> None:
    """A sweep's table and its success rate over seeds (mean, worst seed, interval)."""
    print((out_dir / "table.md").read_text(), end="")
    print(
        f"success rate: mean {100 * s.mean:.1f}%, worst seed {100 * s.worst:.0f}%, "
        f"{100 * s.confidence:.0f}% bootstrap CI of the mean [{100 * s.ci_low:.1f}%, "
        f"{100 * s.ci_high:.1f}%]"
    )


def cmd_sweep(args: argparse.Namespace) -> int:
    from twolink_gym.training.sweep import parse_seeds, sweep

    cfg = _config(args)
    seeds = parse_seeds(args.seeds)
    if args.study is not None and args.storage is None:
        raise ValueError("--study names a sweep in a study storage: give --storage URL too")
    if args.storage is not None:
        return _shared_sweep(args, cfg, seeds)
    start = time.perf_counter()
    result = sweep(
        cfg, seeds, workers=args.workers, train=not args.no_train, overwrite=args.overwrite
    )
    total = time.perf_counter() - start
    print(
        f"Task {cfg.env.task!r}, {cfg.algo.name}, {len(seeds)} seeds, each evaluated on the "
        f"same {cfg.evaluate.episodes} episodes (seeds {cfg.evaluate.seed}..):"
    )
    _print_seed_summary(result.out_dir, result.success)
    print(f"total wall time {total:.0f} s; runs {[str(r) for r in result.runs]}")
    print(f"summary: {result.out_dir}/ (sweep.json, table.md, learning_curves.png)")
    return 0


def _shared_sweep(args: argparse.Namespace, cfg: RunConfig, seeds: list[int]) -> int:
    """``twolink sweep --storage URL``: this process's share of a sweep kept in a study."""
    from twolink_gym.training.shared_sweep import shared_sweep

    start = time.perf_counter()
    try:
        result = shared_sweep(
            cfg,
            seeds,
            storage=args.storage,
            study=args.study,
            workers=args.workers,
            train=not args.no_train,
            overwrite=args.overwrite,
        )
    except KeyboardInterrupt:
        print(
            "\ninterrupted: completed seeds are kept in the storage and interrupted runs are "
            "saved; run the same command again to continue the sweep"
        )
        return 130
    total = time.perf_counter() - start
    print(f"sweep study {result.study!r} ({result.storage}), seeds {list(result.seeds)}:")
    for seed, worker in sorted(result.workers.items()):
        print(f"  seed {seed}: done by {worker}")
    if result.success is None:
        print(
            f"seeds {list(result.pending)} are not done yet (waiting, running on another "
            "machine, or interrupted); when they are, `twolink sweep CONFIG --seeds ... "
            "--storage URL --no-train` writes the summary (a sweep process re-enqueues "
            "interrupted seeds)"
        )
        return 0
    _print_seed_summary(result.out_dir, result.success)
    print(f"total wall time {total:.0f} s")
    print(f"summary: {result.out_dir}/ (sweep.json, table.md, learning_curves.png)")
    return 0


def cmd_tune(args: argparse.Namespace) -> int:
    from twolink_gym.training.tune import report, tune
    from twolink_gym.training.tune_space import parse_space

    cfg = _config(args)
    if args.trials is None and not args.report:
        raise ValueError("twolink tune needs --trials N (the study's total), --report, or both")
    space = None
    if args.space is not None:
        import yaml

        path = Path(args.space)
        try:
            data = yaml.safe_load(path.read_text())
        except yaml.YAMLError as exc:
            raise ValueError(f"--space {path}: not valid YAML ({exc})") from exc
        space = parse_space(cfg.algo.name, data, f"--space {path}")
    if args.trials is not None:
        try:
            result = tune(
                cfg,
                trials=args.trials,
                space=space,
                workers=args.workers,
                storage=args.storage,
                study=args.study,
                timeout=args.timeout,
                seed=args.seed,
            )
        except KeyboardInterrupt:
            print(
                "\ninterrupted: completed trials are kept in the storage; run the same "
                "command again to continue the study"
            )
            return 130
        best = result.best
        print(
            f"study {result.study!r} ({result.storage}): {result.trials} trials"
            + (f"; best trial {best.number}, success rate {best.value:.3f}" if best else "")
        )
        if result.best_yaml is not None:
            print(f"best config: {result.best_yaml} (twolink train {result.best_yaml})")
    if args.report:
        print(report(cfg, storage=args.storage, study=args.study), end="")
    return 0


def cmd_summarize(args: argparse.Namespace) -> int:
    from twolink_gym.training.sweep import combine_sweeps

    print(combine_sweeps(args.sweeps, args.out, baseline=args.baseline), end="")
    extra = ", comparison.md/.json" if args.baseline else ""
    print(f"table.md, learning_curves.png, sweeps.json{extra} in {args.out}/")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from twolink_gym.training.export import export_agent

    out = export_agent(args.run, args.out, overwrite=args.overwrite)
    size = sum(p.stat().st_size for p in out.iterdir())
    print(f"{args.run} exported to {out}/ ({size / 1024:.0f} KiB): load it as policy {out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``twolink``."""
    parser = argparse.ArgumentParser(
        prog="twolink", description="Train and compare agents on the two-link arm."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="train an SB3 agent from a config")
    _add_common(p)
    p.add_argument(
        "--resume",
        metavar="RUN_OR_MODEL",
        help="continue a run: its folder (the newest of model.zip and the checkpoints), its "
        "model.zip, or a checkpoint .zip; restores the VecNormalize statistics, the replay "
        "buffer (SAC) and the step count, and trains up to train.total_timesteps in total",
    )
    _add_overwrite(p)
    p.set_defaults(func=cmd_train)

    p = _evaluation_parser(
        sub,
        "evaluate",
        "evaluate policies on a fixed episode set (controllers, pretrained:NAME, runs)",
        "Run every policy deterministically on the same fixed episodes (drawn from "
        "evaluate.seed) and print a table; write per-episode CSV and summary.json.",
        "+",
    )
    p.add_argument("--episodes", type=_integer(1), help="number of episodes (default: config)")
    p.add_argument("--seed", type=_integer(0), help="first episode seed (default: config)")
    p.add_argument(
        "--out", help="output folder (default: <run>/evaluation or <output dir>/evaluate/<name>)"
    )
    p.add_argument(
        "--json", action="store_true", help="print one JSON line per policy instead of the table"
    )
    p.set_defaults(func=cmd_evaluate)

    p = _evaluation_parser(
        sub,
        "compare",
        "compare agents and classical controllers (table, plots)",
        "Evaluate the agents and the classical controllers on one fixed episode set and "
        "write the comparison: table.md, field_metrics.md, learning curves, distributions, "
        "an example trajectory. Without agents, a training config's own run is compared.",
        "*",
    )
    p.add_argument(
        "--controllers",
        nargs="*",
        metavar="NAME",
        help="controller names or 'auto' (default: the config's evaluate.controllers)",
    )
    p.add_argument("--episodes", type=_integer(1), help="number of episodes (default: config)")
    p.add_argument(
        "--out", help="output folder (default: <run>/compare or <output dir>/compare/<name>)"
    )
    p.add_argument(
        "--no-trajectories", action="store_true", help="skip the per-policy trajectories.npz"
    )
    p.set_defaults(func=cmd_compare)

    p = _evaluation_parser(
        sub,
        "robustness",
        "success of policies under model mismatch, noise, slow motors and delay",
        "Run every policy on the evaluation episodes nominally and under each condition "
        "(one variation of the true arm, its sensors or motors at a time; controllers keep "
        "the config's arm as their model) and report success per condition and a "
        "robustness score in [0, 1] (docs/robustness.md).",
        "+",
    )
    p.add_argument(
        "--conditions",
        nargs="+",
        metavar="NAME",
        help="which variations (default: all): model, obs_noise, torque_noise, "
        "torque_response, action_delay, observation",
    )
    p.add_argument(
        "--levels",
        nargs="+",
        metavar="NAME=V1,V2",
        help="levels of a variation, replacing its defaults, e.g. model=0.7,1.3 "
        "obs_noise=0.02 action_delay=1,2,3",
    )
    p.add_argument("--episodes", type=_integer(1), help="number of episodes (default: config)")
    p.add_argument(
        "--out",
        help="output folder (default: <run>/robustness or <output dir>/robustness/<name>)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the results in the output folder (default: refuse if it holds some)",
    )
    p.set_defaults(func=cmd_robustness)

    p = _evaluation_parser(
        sub,
        "record",
        "record one evaluation episode of a policy as GIF/MP4",
        "Record episode --episode of the evaluation set (what evaluate runs) of one policy.",
        1,
    )
    p.add_argument("--out", required=True, help="output file, .gif or .mp4")
    p.add_argument(
        "--episode",
        type=_integer(0),
        default=0,
        help="index in the evaluation set, 0 .. evaluate.episodes - 1 (default 0)",
    )
    p.add_argument("--fps", type=_positive_float, help="playback rate (default: real time)")
    p.add_argument(
        "--max-steps", type=_integer(1), help="stop after this many steps (default: episode)"
    )
    p.set_defaults(func=cmd_record)

    p = sub.add_parser(
        "agents",
        help="list the shipped agents (use them as pretrained:NAME)",
        description="List the agents shipped with the package: name (use it as "
        "pretrained:NAME), task, actuation, algorithm, Gymnasium id and success rate on "
        "their fixed evaluation set.",
    )
    p.add_argument("--json", action="store_true", help="print a JSON list instead of the table")
    p.set_defaults(func=cmd_agents)

    p = sub.add_parser(
        "run",
        help="train, then compare with the classical controllers",
        description="Train the config's agent into its run folder, then compare it with the "
        "classical controllers. If the run folder already holds a run, twolink run refuses "
        "and says how to proceed, unless --overwrite is given (`make run` passes it: the "
        "default run is seeded and reproducible).",
    )
    _add_common(p)
    _add_overwrite(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "sweep",
        help="train a config over several seeds in parallel, evaluate and summarise",
        description="Train the config once per seed (run folders <run name>_s<seed>), in "
        "parallel processes, then evaluate every final model on the config's fixed episode "
        "set and report each seed, the mean, the worst seed and a bootstrap interval.",
    )
    _add_common(p)
    p.add_argument("--seeds", default="0-4", help="seeds, e.g. 0-4 or 0,3,7 (default 0-4)")
    p.add_argument(
        "--workers", type=_integer(1), default=1, help="training processes at once (default 1)"
    )
    p.add_argument(
        "--no-train", action="store_true", help="only evaluate and summarise existing runs"
    )
    p.add_argument(
        "--storage",
        default=None,
        help="database URL of a study storage (sqlite:///sweep.db, postgresql://...): the seeds "
        "are handed out through it, so sweep processes on several machines share the sweep "
        "(default: local processes only)",
    )
    p.add_argument(
        "--study",
        default=None,
        help="the sweep's study name in --storage (default <run name>_sweep)",
    )
    _add_overwrite(p)
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser(
        "tune",
        help="an Optuna study over the config's hyperparameters (local workers or many machines)",
        description="Tune the config's algorithm hyperparameters with Optuna (TPE sampler, "
        "median pruning on the periodic evaluations): each trial trains the config with "
        "sampled hyperparameters and is scored by its success rate. The study lives in a "
        "database (default: <run name>_tune/study.db, SQLite); restarting continues it; "
        "--storage postgresql://... shares it between machines. Writes best.yaml.",
    )
    _add_common(p)
    p.add_argument(
        "--trials",
        type=_integer(1),
        help="the study's total number of trials (a restart runs the rest)",
    )
    p.add_argument(
        "--workers", type=_integer(1), default=1, help="local worker processes (default 1)"
    )
    p.add_argument(
        "--storage",
        metavar="URL",
        help="database URL (default sqlite:///<output_dir>/<run name>_tune/study.db), e.g. "
        "postgresql://user:password@host:5432/dbname",
    )
    p.add_argument("--study", metavar="NAME", help="study name (default: the run name)")
    p.add_argument(
        "--timeout", type=_positive_float, metavar="S", help="start no trial after S seconds"
    )
    p.add_argument(
        "--space",
        metavar="FILE",
        help="YAML search space replacing the algorithm's default (docs/tuning.md)",
    )
    p.add_argument(
        "--seed",
        type=_integer(0),
        help="sampler seed (default train.seed; each worker derives its own from it, its "
        "index and the trials stored); give each "
        "machine sharing a study its own",
    )
    p.add_argument(
        "--report",
        action="store_true",
        help="print the best trials and parameter importances and write the plots "
        "(<run name>_tune/report/*.png)",
    )
    p.set_defaults(func=cmd_tune)

    p = sub.add_parser(
        "summarize", help="one table and seed-band plot for several sweeps (e.g. PPO and SAC)"
    )
    p.add_argument("sweeps", nargs="+", help="sweep folders (<output_dir>/<name>_sweep)")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument(
        "--baseline",
        metavar="SWEEP",
        help="a sweep folder to compare every other sweep with: difference of the mean "
        "success rate with its bootstrap interval, probability of improvement, Mann-Whitney p "
        "(comparison.md)",
    )
    p.set_defaults(func=cmd_summarize)

    p = sub.add_parser(
        "export",
        help="reduce a trained run to what acting needs (policy.pt, statistics, config)",
        description="Write the run's policy network (no critics' optimiser states), its "
        "VecNormalize statistics, config and training summary to a folder that every "
        "command accepts as a policy. The shipped pretrained agents were made this way.",
    )
    p.add_argument("run", help="a finished run folder")
    p.add_argument("--out", required=True, help="the agent folder to create")
    p.add_argument("--overwrite", action="store_true", help="replace an existing folder")
    p.set_defaults(func=cmd_export)

    from twolink_gym.training.realaigym import add_parser as add_realaigym_parser

    add_realaigym_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``twolink`` command."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command in EVALUATION_COMMANDS:
        # policies may follow options (`evaluate CONFIG --episodes 2 lqr`): argparse hands
        # back those after the first run of positionals as unknown
        if any(item.startswith("-") for item in extra):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.items = ([args.config] if args.config is not None else []) + args.items + extra
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return int(args.func(args))
    except (ConfigError, ValueError, FileNotFoundError, FileExistsError) as exc:
        print(f"twolink {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
