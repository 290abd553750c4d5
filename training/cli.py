"""The ``twolink`` command: ``train``, ``evaluate``, ``compare``, ``record`` and ``run``.

Examples::

    twolink run configs/default.yaml                 # train, evaluate, compare (~10 min)
    twolink train configs/reach_ppo.yaml --set train.seed=3
    twolink train configs/reach_ppo.yaml --resume runs/reach_ppo_s0/checkpoints/model_250000_steps.zip
    twolink evaluate configs/balance_ppo.yaml runs/balance_ppo_s0 lqr --out results/
    twolink compare configs/reach_ppo.yaml runs/reach_ppo_s0 runs/reach_sac_s0 --out docs/results/reach
    twolink record configs/reach_ppo.yaml runs/reach_ppo_s0 --out reach.gif --episode 0
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from training.config import ConfigError, RunConfig, load_config

__all__ = ["main"]


def _config(args: argparse.Namespace) -> RunConfig:
    return load_config(args.config, args.set or ())


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", help="YAML config file (configs/*.yaml or a run's config.yaml)")
    p.add_argument(
        "--set",
        action="append",
        metavar="SECTION.KEY=VALUE",
        help="override one config value (YAML syntax), e.g. --set train.seed=3; repeatable",
    )


def cmd_train(args: argparse.Namespace) -> int:
    from training.train import train

    cfg = _config(args)
    result = train(cfg, resume=args.resume)
    state = "interrupted" if result.interrupted else "done"
    print(
        f"{state}: {result.timesteps} timesteps in {result.wall_time_s:.0f} s; "
        f"model {result.model_path}"
    )
    return 130 if result.interrupted else 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from training.evaluate import evaluate_policies, summarize

    cfg = _config(args)
    out = args.out or (cfg.run_dir / "evaluation")
    _, results = evaluate_policies(args.policies, cfg, out, episodes=args.episodes, seed=args.seed)
    for r in results:
        print(json.dumps(summarize(r)))
    print(f"results in {out}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from training.compare import compare

    cfg = _config(args)
    agents = args.agents or [str(cfg.run_dir)]
    out = Path(args.out or (cfg.run_dir / "compare"))
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


def cmd_record(args: argparse.Namespace) -> int:
    import gymnasium as gym

    from training.evaluate import draw_episodes
    from training.policies import load_policy
    from training.record import record_episode

    cfg = _config(args)
    kwargs = cfg.env.make_kwargs()
    if cfg.env.max_episode_steps is not None:
        kwargs["max_episode_steps"] = cfg.env.max_episode_steps
    env = gym.make("TwoLink-v0", render_mode="rgb_array", **kwargs)
    policy = load_policy(args.policy, cfg.env, env)
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
    env.close()
    print(f"{policy.label}: episode {args.episode} of the evaluation set written to {path}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from training.compare import compare
    from training.train import train

    cfg = _config(args)
    start = time.perf_counter()
    result = train(cfg)
    if result.interrupted:
        print("training interrupted; comparing the model saved at that point")
    out = cfg.run_dir / "compare"
    table, episodes, _ = compare(cfg, [result.run_dir], out)
    total = time.perf_counter() - start
    print()
    print(
        f"Task {cfg.env.task!r}: {cfg.algo.name} trained for {result.timesteps} steps "
        f"({result.wall_time_s:.0f} s); {len(episodes)} evaluation episodes, identical for all."
    )
    print(table)
    print(f"total wall time {total:.0f} s")
    print(f"run folder:  {result.run_dir}/ (model.zip, config.yaml, tb/, eval/, checkpoints/)")
    print(f"comparison:  {out}/ (table.md, learning_curves.png, distributions.png, trajectory.png)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``twolink``."""
    parser = argparse.ArgumentParser(
        prog="twolink", description="Train and compare agents on the two-link arm."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="train an SB3 agent from a config")
    _add_common(p)
    p.add_argument("--resume", metavar="CHECKPOINT", help="continue from a checkpoint .zip")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("evaluate", help="evaluate policies on the config's fixed episode set")
    _add_common(p)
    p.add_argument(
        "policies", nargs="+", help="controller names, 'auto', run folders or model .zip files"
    )
    p.add_argument("--episodes", type=int, help="number of episodes (default: config)")
    p.add_argument("--seed", type=int, help="first episode seed (default: config)")
    p.add_argument("--out", help="output folder (default: <run folder>/evaluation)")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("compare", help="compare agents and classical controllers")
    _add_common(p)
    p.add_argument("agents", nargs="*", help="run folders or models (default: the config's run)")
    p.add_argument("--controllers", nargs="*", help="controller names or 'auto' (default: config)")
    p.add_argument("--episodes", type=int, help="number of episodes (default: config)")
    p.add_argument("--out", help="output folder (default: <run folder>/compare)")
    p.add_argument(
        "--no-trajectories", action="store_true", help="skip the per-policy trajectories.npz"
    )
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("record", help="record one evaluation episode of a policy as GIF/MP4")
    _add_common(p)
    p.add_argument("policy", help="controller name, run folder or model .zip")
    p.add_argument("--out", required=True, help="output .gif or .mp4")
    p.add_argument("--episode", type=int, default=0, help="index in the evaluation set")
    p.add_argument("--fps", type=float, help="playback rate (default: real time)")
    p.add_argument("--max-steps", type=int, help="stop after this many steps (default: episode)")
    p.set_defaults(func=cmd_record)

    p = sub.add_parser("run", help="train, then compare with the classical controllers")
    _add_common(p)
    p.set_defaults(func=cmd_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``twolink`` command."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (ConfigError, ValueError, FileNotFoundError) as exc:
        print(f"twolink {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
