"""Held-out RealAIGym v3 runs of every seed during ``jax_*`` training (``train.eval_v3_pushes_seeds``).

At each periodic evaluation :func:`v3_scores` runs each seed's agent through
the v3 protocol (:mod:`twolink_gym.jax.realaigym_v3`: 60 s, 15 pushes) once
per held-out schedule, all in one compiled call on the training device; the
agent is asked as ``twolink realaigym v3`` asks it (the true state, encoded
by the config's nominal env, every ``dt / 2 ms`` of the steps it drives, its
action clipped and scaled by ``max_torque``). :class:`HeldOutLog` writes
each seed's scores to ``<run>/eval/v3_heldout.csv`` (the trainer adds their
mean to TensorBoard, ``eval/v3_heldout_score``). Why:
the periodic evaluation's episodes (swing-ups from hanging) rank agents
weakly against the v3 board; held-out v3 runs rank them well (the RealAIGym
results notes give the figures).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from twolink_gym.training.config import RunConfig

__all__ = ["SCORE_KEY", "HeldOutLog", "agent_torque", "v3_scores"]

#: The key of the mean held-out v3 score in a seed's evaluation row (and ``best/selection.json``).
SCORE_KEY = "v3_heldout_score"

#: The held-out scores file in a run folder's ``eval/``.
LOG_FILE = "v3_heldout.csv"


def agent_torque(
    cfg: RunConfig, make_env: Callable[[Any], tuple[Any, Any]], act: Callable[[Any, Any], Any]
) -> Callable[[Any, Any], Any]:
    """The agent as the v3 protocol asks it: ``torque(train_state, x (4,)) -> (2,)`` [N·m].

    What :class:`~twolink_gym.realaigym.protocol.PolicyRunner` does with a run
    folder's exported policy, in JAX: the state (our angles) encoded as the
    config's nominal env observes it, the trainer's deterministic action,
    clipped to [-1, 1], on the motor joint, times ``max_torque``.

    Parameters
    ----------
    cfg : RunConfig
        A ``jax_*`` config on a RealAIGym swing-up.
    make_env : callable
        ``env:`` section → the JAX twin ``(env, params)``.
    act : callable
        ``act(train_state, obs (n, obs_dim)) -> actions (n, action_size)``: the
        trainer's deterministic action (observations normalised inside).
    """
    import jax
    import jax.numpy as jnp

    env, params = make_env(cfg.env.nominal())
    actuated = jnp.asarray(env.actuated)
    key = jax.random.PRNGKey(0)  # the nominal env draws nothing that the state option keeps

    def torque(ts: Any, x: Any) -> Any:
        obs, _ = env.reset_env(key, params, {"state": x})
        a = jnp.clip(act(ts, obs[None])[0], -1.0, 1.0).astype(x.dtype)
        command = jnp.zeros(2, x.dtype).at[actuated].set(a)
        return command * params.max_torque.astype(x.dtype)

    return torque


def v3_scores(
    cfg: RunConfig, make_env: Callable[[Any], tuple[Any, Any]], act: Callable[[Any, Any], Any]
) -> tuple[Callable[[Any, Any], Any], Any]:
    """The held-out v3 evaluation of one seed, and the schedules it takes.

    Parameters
    ----------
    cfg : RunConfig
        With ``train.eval_v3_pushes_seeds`` set (validated by the config).
    make_env, act
        As :func:`agent_torque`.

    Returns
    -------
    scores : callable
        ``scores(train_state, pushes) -> (n_schedules,)`` v3 scores in [0, 1],
        pure (jit and vmap it over seeds).
    pushes : twolink_gym.jax.realaigym_v3.Pushes
        The schedules of ``train.eval_v3_pushes_seeds``, stacked.
    """
    import jax

    from twolink_gym.jax import realaigym_v3 as jv3
    from twolink_gym.realaigym.protocol import decision_steps

    steps = decision_steps(cfg.env.dt)
    torque = agent_torque(cfg, make_env, act)

    def scores(ts: Any, pushes: Any) -> Any:
        def one(schedule: Any) -> Any:
            record = jv3.run(lambda x: torque(ts, x), schedule, decision_steps=steps)
            return jv3.score(record)

        return jax.vmap(one)(pushes)

    robot = str(cfg.env.actuation)
    return scores, jv3.pushes(robot, list(cfg.train.eval_v3_pushes_seeds or []))


class HeldOutLog:
    """One seed's held-out v3 scores: ``eval/v3_heldout.csv``.

    Columns: ``timesteps``, one ``pushes_seed_N`` per schedule, ``mean``.

    Parameters
    ----------
    run_dir : Path
        The seed's run folder.
    pushes_seeds : sequence of int
        The schedules' seeds, in the order of the scores.
    resume_at : int or None
        On ``--resume``, keep the rows up to these timesteps.

    Raises
    ------
    ValueError
        On resume, if the file holds the scores of other pushes seeds.
    """

    def __init__(self, run_dir: Path, pushes_seeds: Sequence[int], resume_at: int | None) -> None:
        self.path = run_dir / "eval" / LOG_FILE
        self.columns = ["timesteps", *(f"pushes_seed_{s}" for s in pushes_seeds), "mean"]
        self.lines: list[str] = []
        if resume_at is not None and self.path.is_file():
            old = self.path.read_text().splitlines()
            if old and old[0] != ",".join(self.columns):
                raise ValueError(
                    f"--resume: {self.path} holds held-out v3 scores with columns {old[0]!r}, "
                    f"but train.eval_v3_pushes_seeds is {list(pushes_seeds)}; resume with the "
                    "same seeds, or move the file away to start its log anew"
                )
            self.lines = [line for line in old[1:] if int(line.split(",")[0]) <= resume_at]

    def add(self, steps: int, scores: Any) -> float:
        """Append the scores ``(n_schedules,)`` at ``steps``; return their mean (float64)."""
        values = np.asarray(scores, dtype=np.float64)
        mean = float(np.mean(values))
        self.lines.append(
            ",".join([str(int(steps)), *(repr(float(v)) for v in values), repr(mean)])
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("\n".join([",".join(self.columns), *self.lines]) + "\n")
        return mean
