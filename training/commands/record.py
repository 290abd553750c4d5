"""``twolink record``: one evaluation episode of a policy as a GIF or MP4."""

from __future__ import annotations

import argparse
from typing import Any

from twolink_gym.training.commands._args import add_evaluation_parser, integer, positive_float

__all__ = ["add_parser", "make_render_env"]


def add_parser(sub: Any) -> None:
    """Add ``record``."""
    p = add_evaluation_parser(
        sub,
        "record",
        "record one evaluation episode of a policy as GIF/MP4",
        "Record episode --episode of the evaluation set (what evaluate runs) of one policy.",
        1,
    )
    p.add_argument("--out", required=True, help="output file, .gif or .mp4")
    p.add_argument(
        "--episode",
        type=integer(0),
        default=0,
        help="index in the evaluation set, 0 .. evaluate.episodes - 1 (default 0)",
    )
    p.add_argument("--fps", type=positive_float, help="playback rate (default: real time)")
    p.add_argument(
        "--max-steps", type=integer(1), help="stop after this many steps (default: episode)"
    )
    p.add_argument(
        "--every",
        type=integer(1),
        default=1,
        help="keep one frame every N steps, for envs that step faster than a video plays "
        "(e.g. 5 at 2 ms steps; default 1: every step)",
    )
    p.set_defaults(func=run)


def make_render_env(cfg: Any, render_mode: str) -> Any:
    """The config's env from its per-task id (the task's own episode length), rendering ``render_mode``."""
    import gymnasium as gym

    from twolink_gym.registration import CONVENIENCE_IDS

    kwargs = cfg.env.make_kwargs()
    if cfg.env.max_episode_steps is not None:
        kwargs["max_episode_steps"] = cfg.env.max_episode_steps
    # the per-task id carries the task's own episode length (TwoLink-v0: 200 steps)
    return gym.make(CONVENIENCE_IDS[kwargs.pop("task")], render_mode=render_mode, **kwargs)


def run(args: argparse.Namespace) -> int:
    """Run ``twolink record``."""
    from twolink_gym.training.commands._setup import setup_from_args
    from twolink_gym.training.evaluate import draw_episodes
    from twolink_gym.training.policies import load_policy
    from twolink_gym.training.record import check_video_path, record_episode

    setup = setup_from_args(args)
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
    env = make_render_env(cfg, "rgb_array")
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
            every=args.every,
        )
    finally:
        env.close()
    print(f"{policy.label}: episode {args.episode} of the evaluation set written to {path}")
    return 0
