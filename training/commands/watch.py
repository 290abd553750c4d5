"""``twolink watch``: episodes of a policy in a window (``render_mode="human"``), or in a video.

The episodes are those of the evaluation set (episode ``i``: ``reset(seed=
evaluate.seed + i)`` with its drawn start), so what is watched is what
``evaluate`` scores. A machine without a screen gets an error naming what is
missing (``DISPLAY``, ``SDL_VIDEODRIVER``) and the way out: ``--record FILE``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from twolink_gym.training.commands._args import (
    CommandError,
    add_evaluation_parser,
    integer,
    positive_float,
)

__all__ = ["NoDisplayError", "add_parser", "display_problem"]

#: SDL video drivers that draw to no screen.
_HEADLESS_DRIVERS = ("dummy", "offscreen")


def add_parser(sub: Any) -> None:
    """Add ``watch``."""
    p = add_evaluation_parser(
        sub,
        "watch",
        "watch a policy's episodes in a window (or --record them to a GIF/MP4)",
        "Run one policy on the first episodes of the evaluation set and show them in a "
        "window, in real time; print each episode's outcome. Without a screen (no DISPLAY, "
        "SDL_VIDEODRIVER=dummy) it stops with an error; --record FILE writes the episodes to "
        "a .gif or .mp4 instead.",
        1,
    )
    p.add_argument(
        "--episodes", type=integer(1), default=3, help="how many episodes to show (default 3)"
    )
    p.add_argument(
        "--record",
        metavar="FILE",
        help="write the episodes to FILE (.gif or .mp4) instead of opening a window",
    )
    p.add_argument("--max-steps", type=integer(1), help="stop each episode after this many steps")
    p.add_argument(
        "--fps", type=positive_float, help="with --record: playback rate (default: real time)"
    )
    p.add_argument(
        "--every",
        type=integer(1),
        help="with --record: keep one frame every N steps, the reset's and each episode's "
        "last always (default 1: every step)",
    )
    p.set_defaults(func=run)


def display_problem() -> str | None:
    """Why no window can be opened here, or ``None`` when a screen looks available."""
    driver = os.environ.get("SDL_VIDEODRIVER", "")
    if driver.lower() in _HEADLESS_DRIVERS:
        return f"SDL_VIDEODRIVER={driver} draws to no screen"
    wayland = os.environ.get("WAYLAND_DISPLAY")
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or wayland or driver):
        return "DISPLAY and WAYLAND_DISPLAY are unset: no desktop session to open a window in"
    return None


class NoDisplayError(CommandError):
    """``twolink watch`` cannot open a window on this machine."""


def _no_window(reason: str) -> NoDisplayError:
    return NoDisplayError(
        f"twolink watch opens a window, and this machine has none to open ({reason}). Run it "
        "on a machine with a desktop (pygame's SDL needs DISPLAY or WAYLAND_DISPLAY), or write "
        "the episodes to a video: --record FILE.gif (or .mp4)"
    )


def _make_env(cfg: Any, human: bool) -> Any:
    from twolink_gym.training.commands.record import make_render_env

    if not human:
        return make_render_env(cfg, "rgb_array")
    reason = display_problem()
    if reason is not None:
        raise _no_window(reason)
    import pygame

    env = make_render_env(cfg, "human")
    try:
        env.reset(seed=cfg.evaluate.seed)  # draws: the window opens before any episode runs
    except pygame.error as exc:
        env.close()
        raise _no_window(f"SDL: {exc}") from exc
    return env


def run(args: argparse.Namespace) -> int:
    """Run ``twolink watch``."""
    from twolink_gym.training.commands._setup import setup_from_args
    from twolink_gym.training.evaluate import draw_episodes
    from twolink_gym.training.policies import load_policy
    from twolink_gym.training.record import check_video_path, play_episode, write_video

    setup = setup_from_args(args)
    if len(setup.policies) != 1:
        raise ValueError(
            f"twolink watch shows one policy (after the config, if any), got {setup.policies}"
        )
    (spec,) = setup.policies
    cfg = setup.cfg
    path = check_video_path(args.record, "--record") if args.record is not None else None
    if path is None:
        given = [f"--{name}" for name in ("fps", "every") if getattr(args, name) is not None]
        if given:
            raise ValueError(
                f"{' and '.join(given)} only shape the video of --record FILE; without "
                "--record, watch opens a window that plays every step in real time"
            )
    every = args.every or 1
    env = _make_env(cfg, human=path is None)
    frames: list[Any] = []
    try:
        policy = load_policy(spec, cfg.env, env)
        episodes = draw_episodes(cfg.env, args.episodes, cfg.evaluate.seed)
        for i in range(args.episodes):
            seed = cfg.evaluate.seed + i
            options = {k: v[i] for k, v in episodes.options().items()}
            episode = play_episode(
                policy.predictor,
                env,
                seed=seed,
                options=options,
                max_steps=args.max_steps,
                every=None if path is None else every,
            )
            frames.extend(episode.frames)
            outcome = "success" if episode.info.get("is_success") else "no success"
            print(
                f"{policy.label}: episode {i} (seed {seed}): {outcome}, "
                f"return {episode.total_reward:.2f}, {episode.steps} steps"
            )
    finally:
        env.close()
    if path is not None:
        fps = args.fps or float(env.metadata.get("render_fps", 50)) / every
        path.parent.mkdir(parents=True, exist_ok=True)
        write_video(frames, path, fps)
        print(f"{len(frames)} frames written to {path}")
    return 0
