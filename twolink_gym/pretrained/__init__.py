"""Pretrained agents shipped with the package: one folder per agent.

Each folder is a training run's final model reduced to what acting needs
(``twolink export``): ``policy.pt`` (the SB3 policy network, without critics'
optimiser states), ``config.yaml`` (the resolved training config: environment,
algorithm, seed), ``vecnormalize.pkl`` (frozen observation statistics, when the
agent was trained with them), ``train_summary.json`` (steps, wall time,
machine) and ``eval/evaluations.npz`` (the run's periodic evaluations: its
learning curve). Loading an agent needs stable-baselines3 (the ``train``
extra): use ``pretrained:NAME`` wherever the ``twolink`` command takes a policy,
or :func:`twolink_gym.training.policies.load_pretrained` from Python. This module only
locates the folders, so that it imports nothing beyond the standard library.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PRETRAINED_DIR", "available", "pretrained_dir"]

#: The folder that holds one sub-folder per pretrained agent.
PRETRAINED_DIR = Path(__file__).resolve().parent


def available() -> list[str]:
    """Names of the shipped agents (``"<task>_<algorithm>"``), sorted."""
    return sorted(p.name for p in PRETRAINED_DIR.iterdir() if (p / "policy.pt").is_file())


def pretrained_dir(name: str) -> Path:
    """The folder of the pretrained agent ``name``.

    Raises
    ------
    ValueError
        If no agent of that name is shipped, listing the ones that are.
    """
    path = PRETRAINED_DIR / name
    if not isinstance(name, str) or "/" in name or not (path / "policy.pt").is_file():
        raise ValueError(f"no pretrained agent {name!r}; shipped agents are {available()}")
    return path
