"""Record one episode of a policy as a GIF or an MP4.

:func:`record_episode` runs any object with stable-baselines3's ``predict``
protocol (a trained model, a classical controller, ...) for one episode of an
env made with ``render_mode="rgb_array"`` and writes the frames with imageio:
``.gif`` through Pillow (looping forever), ``.mp4`` through imageio-ffmpeg.

:func:`play_episode` is its episode loop (a policy's deterministic episode, its frames,
return and last ``info``), which ``twolink watch`` runs as well.

Standalone use, with the two trivial policies defined here::

    python -m twolink_gym.training.record --task reach --policy random --out reach.gif --seed 0
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.wrappers import TimeLimit
from numpy.typing import NDArray

import twolink_gym  # noqa: F401  (registers the ids)
from twolink_gym._arrays import positive_integer
from twolink_gym.registration import task_env_id
from twolink_gym.tasks import TASKS

__all__ = [
    "POLICIES",
    "PlayedEpisode",
    "RandomPolicy",
    "ZeroPolicy",
    "check_video_path",
    "keeps_frame",
    "main",
    "play_episode",
    "record_episode",
]

#: Video formats by file suffix.
FORMATS = (".gif", ".mp4")


class ZeroPolicy:
    """Applies no torque: the arm moves under gravity and friction alone.

    Parameters
    ----------
    action_space : gymnasium.spaces.Box
        The env's action space.
    """

    def __init__(self, action_space: gym.spaces.Box, seed: int | None = None) -> None:
        self.action_space = action_space

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
    ) -> tuple[NDArray[Any], Any]:
        """Zero action (SB3's ``predict`` protocol)."""
        return np.zeros(self.action_space.shape, dtype=self.action_space.dtype), state


class RandomPolicy:
    """Uniformly random actions from the action space, seeded.

    Parameters
    ----------
    action_space : gymnasium.spaces.Box
        The env's action space (a copy is seeded, the env's is left alone).
    seed : int, optional
        Seed of the action draws.
    """

    def __init__(self, action_space: gym.spaces.Box, seed: int | None = None) -> None:
        self.action_space = gym.spaces.Box(
            action_space.low, action_space.high, dtype=action_space.dtype, seed=seed
        )

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
    ) -> tuple[NDArray[Any], Any]:
        """A random action (SB3's ``predict`` protocol; ``deterministic`` is ignored)."""
        return self.action_space.sample(), state


#: The policies of the standalone command, by name (the CLI edge).
POLICIES: dict[str, type[ZeroPolicy] | type[RandomPolicy]] = {
    "zero": ZeroPolicy,
    "random": RandomPolicy,
}


def check_video_path(path: str | Path, name: str = "path") -> Path:
    """Return ``path`` as a Path after checking its suffix is a video format.

    Parameters
    ----------
    path : str or Path
        The output file.
    name : str
        How the caller calls the argument (``"--out"`` on the command line).

    Raises
    ------
    ValueError
        Naming the argument and the allowed suffixes.
    """
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"{name} must end in one of {list(FORMATS)}, got {str(path)!r}")
    return path


def keeps_frame(step: int, every: int, last: bool) -> bool:
    """Whether the frame after step ``step`` (1-based) goes into a video kept ``every`` steps.

    The frame after every ``every``-th step is kept, and the last step's frame
    (``last``: the episode or the run ends there) always, so a video ends where
    the episode does.
    """
    return step % every == 0 or last


def _episode_limit(env: gym.Env, max_steps: int | None) -> int:
    """The most steps to run: ``max_steps``, else the env's ``TimeLimit``, else its task length."""
    if max_steps is not None:
        return positive_integer(max_steps, "max_steps")
    layer: Any = env
    while isinstance(layer, gym.Wrapper):
        if isinstance(layer, TimeLimit):
            return int(layer._max_episode_steps)
        layer = layer.env
    limit = getattr(env.unwrapped, "default_max_episode_steps", None)
    if limit is None:
        raise ValueError(
            "the env has no TimeLimit and no default_max_episode_steps; pass max_steps"
        )
    return int(limit)


def write_video(frames: Sequence[NDArray[np.uint8]], path: Path, fps: float) -> None:
    """Write ``frames`` (each ``(H, W, 3)`` uint8) to ``path`` (``.gif`` or ``.mp4``) at ``fps``.

    Raises
    ------
    ValueError
        On another suffix or no frames.
    """
    import imageio.v2 as imageio

    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"path must end in one of {list(FORMATS)}, got {str(path)!r}")
    if not frames:
        raise ValueError("no frames to write")
    if suffix == ".gif":
        # Pillow's GIF writer takes the frame duration in milliseconds and truncates it to
        # hundredths of a second: round off the float error first (1000 / (50 / 3) is 59.99...)
        duration = round(1000.0 / fps, 6)
        imageio.mimwrite(path, list(frames), format="GIF", duration=duration, loop=0)
    else:
        # H.264 in yuv420p needs even sides; macro_block_size=2 pads odd ones by a pixel
        writer: Any = imageio.get_writer(
            path, format="FFMPEG", mode="I", fps=fps, codec="libx264", macro_block_size=2
        )
        with writer:
            for frame in frames:
                writer.append_data(frame)


def _frame(env: gym.Env) -> NDArray[np.uint8]:
    """The env's ``rgb_array`` frame ``(H, W, 3)``."""
    return np.asarray(env.render(), dtype=np.uint8)


@dataclasses.dataclass
class PlayedEpisode:
    """One episode run by :func:`play_episode`.

    Attributes
    ----------
    frames : list of ndarray
        The kept frames, each ``(H, W, 3)`` uint8 (empty when none were kept).
    total_reward : float
        The sum of the step rewards.
    steps : int
        The steps run.
    info : dict
        The last step's ``info`` (the reset's if no step ran).
    """

    frames: list[NDArray[np.uint8]]
    total_reward: float
    steps: int
    info: dict[str, Any]


def play_episode(
    policy: Any,
    env: gym.Env,
    *,
    seed: int,
    options: dict[str, Any] | None = None,
    max_steps: int | None = None,
    every: int | None = 1,
) -> PlayedEpisode:
    """Run ``policy`` deterministically for one episode of ``env``, keeping frames.

    Parameters
    ----------
    policy : object
        Anything with SB3's ``predict(obs, state=None, episode_start=None,
        deterministic=True) -> (action, state)``.
    env : gymnasium.Env
        A (possibly wrapped) TwoLink env.
    seed : int
        Seed of ``env.reset``.
    options : dict, optional
        Options of ``env.reset``.
    max_steps : int, optional
        Stop after this many steps (``>= 1``); default: when the episode
        terminates or truncates.
    every : int or None
        Keep the reset's frame and one after every ``every``-th step, and the
        last step's (:func:`keeps_frame`); the env must render ``rgb_array``.
        None: keep none (an env that renders itself, ``render_mode="human"``).

    Returns
    -------
    PlayedEpisode
    """
    if max_steps is not None:
        max_steps = positive_integer(max_steps, "max_steps")
    if every is not None:
        every = positive_integer(every, "every")
    obs, info = env.reset(seed=seed, options=options)
    frames: list[NDArray[np.uint8]] = []
    if every is not None:
        frames.append(_frame(env))
    policy_state, episode_start = None, np.ones(1, dtype=bool)
    total, steps, done = 0.0, 0, False
    while not done and (max_steps is None or steps < max_steps):
        action, policy_state = policy.predict(
            obs, state=policy_state, episode_start=episode_start, deterministic=True
        )
        episode_start = np.zeros(1, dtype=bool)
        obs, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        steps += 1
        done = bool(terminated or truncated)
        if every is not None and keeps_frame(steps, every, done or steps == max_steps):
            frames.append(_frame(env))
    return PlayedEpisode(frames, total, steps, dict(info))


def record_episode(
    policy: Any,
    env: gym.Env,
    path: str | Path,
    *,
    seed: int = 0,
    options: dict[str, Any] | None = None,
    fps: float | None = None,
    max_steps: int | None = None,
    every: int = 1,
) -> Path:
    """Run ``policy`` for one episode of ``env`` and write the frames to ``path``.

    Parameters
    ----------
    policy : object
        Anything with SB3's ``predict(obs, state=None, episode_start=None,
        deterministic=True) -> (action, state)``; called deterministically.
    env : gymnasium.Env
        A (possibly wrapped) TwoLink env made with ``render_mode="rgb_array"``.
    path : str or Path
        Output file, ``.gif`` or ``.mp4``; parent folders are created.
    seed : int
        Seed of ``env.reset``.
    options : dict, optional
        Options of ``env.reset`` (e.g. ``{"state": ..., "target": ...}``).
    fps : float, optional
        Playback rate; default ``env.metadata["render_fps"] / every`` (real time).
    max_steps : int, optional
        Stop after this many steps; default: the env's ``TimeLimit`` (or its
        task length). The episode also ends when it terminates or truncates.
    every : int
        Keep one frame every ``every`` steps (``>= 1``), for envs that step
        faster than a video plays (a GIF's frames last 10 ms or more).

    Returns
    -------
    Path
        The written file. It holds one frame after the reset and one after
        every ``every``-th step, and the last step's frame if the episode
        ends between two kept ones.

    Raises
    ------
    ValueError
        If the env does not render ``rgb_array`` frames, or on a bad path
        suffix, ``fps``, ``max_steps`` or ``every``.
    """
    path = check_video_path(path)
    if env.render_mode != "rgb_array":
        raise ValueError(
            f'env must be created with render_mode="rgb_array", got {env.render_mode!r}'
        )
    every = positive_integer(every, "every")
    if fps is None:
        fps = float(env.metadata.get("render_fps", 50)) / every
    if not (isinstance(fps, (int, float)) and np.isfinite(fps) and fps > 0):
        raise ValueError(f"fps must be a number > 0, got {fps!r}")
    limit = _episode_limit(env, max_steps)

    episode = play_episode(policy, env, seed=seed, options=options, max_steps=limit, every=every)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_video(episode.frames, path, fps)
    return path


def main(argv: Sequence[str] | None = None) -> Path:
    """Command line: record one episode of a trivial policy (``zero`` or ``random``)."""
    parser = argparse.ArgumentParser(
        prog="python -m twolink_gym.training.record",
        description="Record one episode of a task (its per-task id) as a GIF or MP4.",
    )
    parser.add_argument("--task", choices=sorted(TASKS), default="reach")
    parser.add_argument("--policy", choices=sorted(POLICIES), default="zero")
    parser.add_argument("--out", type=Path, required=True, help="output file, .gif or .mp4")
    parser.add_argument("--seed", type=int, default=0, help="seed of the episode and the policy")
    parser.add_argument(
        "--fps", type=float, default=None, help="playback rate (default: real time)"
    )
    parser.add_argument("--max-steps", type=int, default=None, help="stop after this many steps")
    parser.add_argument("--every", type=int, default=1, help="keep one frame every N steps")
    args = parser.parse_args(argv)
    try:
        check_video_path(args.out, "--out")
    except ValueError as exc:
        parser.error(str(exc))

    env = gym.make(task_env_id(args.task), render_mode="rgb_array")
    try:
        space = env.action_space
        assert isinstance(space, gym.spaces.Box)  # TwoLink's actions are a Box
        policy = POLICIES[args.policy](space, seed=args.seed)
        out = record_episode(
            policy,
            env,
            args.out,
            seed=args.seed,
            fps=args.fps,
            max_steps=args.max_steps,
            every=args.every,
        )
    finally:
        env.close()
    print(out)
    return out


if __name__ == "__main__":
    main()
