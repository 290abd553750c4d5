"""``twolink export``: a trained run reduced to what acting needs, for shipping.

A run's ``model.zip`` holds the whole algorithm: actor, critics, target
networks, optimiser states, hyperparameters. Acting needs only the policy
network, so an exported agent is::

    policy.pt           the SB3 policy (``policy.save``: weights and constructor
                        arguments, no optimiser state)
    vecnormalize.pkl    frozen observation statistics (if the run used them)
    config.yaml         the run's resolved config (environment, algorithm, seed)
    train_summary.json  steps, wall time, machine
    eval/evaluations.npz  the run's periodic evaluations (its learning curve)

which :func:`twolink_gym.training.policies.load_policy` loads like a run folder. This is how
the agents of :mod:`twolink_gym.pretrained` were made.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from twolink_gym.training.algorithms import ALGORITHMS
from twolink_gym.training.config import config_from_dict

__all__ = ["POLICY_FILE", "export_agent"]

#: The policy-only file of an exported agent.
POLICY_FILE = "policy.pt"


def export_agent(run_dir: str | Path, out_dir: str | Path, *, overwrite: bool = False) -> Path:
    """Write the acting part of the run in ``run_dir`` to ``out_dir``.

    Parameters
    ----------
    run_dir : path
        A training run folder (``model.zip``, ``config.yaml``, ...).
    out_dir : path
        The agent folder to create.
    overwrite : bool
        Replace an existing ``out_dir``.

    Returns
    -------
    Path
        ``out_dir``.

    Raises
    ------
    FileNotFoundError
        If the run has no ``model.zip`` or ``config.yaml``.
    FileExistsError
        If ``out_dir`` exists and ``overwrite`` is false.
    """
    import yaml
    from twolink_gym.training.train import CONFIG_FILE, MODEL_FILE, SUMMARY_FILE, VECNORM_FILE

    run, out = Path(run_dir), Path(out_dir)
    for name in (MODEL_FILE, CONFIG_FILE):
        if not (run / name).is_file():
            raise FileNotFoundError(f"{run} is not a finished run: no {name}")
    if out.exists() and not overwrite:
        raise FileExistsError(f"{out} exists; pass --overwrite to replace it")
    cfg = config_from_dict(yaml.safe_load((run / CONFIG_FILE).read_text()), str(run / CONFIG_FILE))
    from twolink_gym.training.policies import ACT_ONLY

    model = ALGORITHMS[cfg.algo.name].load(str(run / MODEL_FILE), device="cpu", **ACT_ONLY)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    model.policy.save(str(out / POLICY_FILE))
    for name in (CONFIG_FILE, VECNORM_FILE, SUMMARY_FILE, "eval/evaluations.npz"):
        if (run / name).is_file():
            (out / name).parent.mkdir(exist_ok=True)
            shutil.copy2(run / name, out / name)
    return out
