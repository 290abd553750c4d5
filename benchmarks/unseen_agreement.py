"""Each shipped agent's reported success beside its success on an unseen episode set.

For every shipped agent (:func:`twolink_gym.pretrained.catalog`), the reported
figure is its card's: ``success`` on ``episodes`` episodes from ``seed``
(the evaluation set of its own config, ``evaluate.episodes`` from
``evaluate.seed`` = 1,000,000). The script evaluates the agent in the env of
its own config (robust agents: randomised arm parameters and observation noise)
on as many episodes from a seed range that no reported figure, test or training
run uses (default 11,000,000 + i; the evaluation set is 1,000,000 + i, the
shipped-agent tests 5,000,000 + i and 7,000,000, the issue's checks 6,160,000 +
i and 8,250,000 + i, the tracking diagnosis 9,000,000 + i), with deterministic
actions, as ``twolink evaluate pretrained:NAME --episodes N --seed SEED`` does.

Agreement rule: the unseen success rate lies inside the reported figure's 95 %
Wilson interval (:func:`~twolink_gym.training.stats.wilson_interval` of the
card's successes out of its episodes). The two sets are independent samples of
the same size, so an agent whose rate is the same on both still falls outside
with a probability of about 17 % when its rate is not near 0 or 1 (the
difference of two such estimates has twice the variance of one); the table also
gives the unseen figure's own interval.

Writes ``agreement.json`` into the output folder: per agent the reported and the
unseen successes, episodes, seeds, rates and intervals, whether they agree, and
the unseen set's per-episode outcomes; the machine, its load and the wall time.

Usage::

    python benchmarks/unseen_agreement.py [--seed 11000000] [--out docs/results/unseen]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from twolink_gym.training.config import config_from_dict
from twolink_gym.training.evaluate import evaluate_policies
from twolink_gym.training.stats import wilson_interval

from twolink_gym import pretrained

#: First seed of the unseen episodes (episode ``i`` is ``reset(seed=SEED + i)``).
SEED = 11_000_000
CONFIDENCE = 0.95
RULE = "the unseen success rate lies inside the reported figure's 95 % Wilson interval"


def agent_row(card: pretrained.AgentCard, seed: int) -> dict[str, Any]:
    """One agent's reported and unseen figures.

    Parameters
    ----------
    card : AgentCard
        The shipped agent's card (its reported success on ``card.episodes``
        episodes from ``card.seed``).
    seed : int
        First seed of the unseen episodes (``card.episodes`` of them).

    Returns
    -------
    dict
        ``name``, ``task``, ``actuation``, ``algorithm``, ``episodes``,
        ``reported`` and ``unseen`` (each ``seed``, ``successes``, ``rate``,
        ``ci``), ``agrees``, ``unseen_outcomes`` (one character per
        episode, ``"1"`` success, ``"0"`` failure) and ``wall_time_s``.

    Raises
    ------
    ValueError
        If the card has no measured success, or its success is not a whole
        number of its episodes.
    """
    if card.success is None:
        raise ValueError(f"{card.name}: its card has no success figure (agent.json 'success')")
    n = card.episodes
    reported_k = round(card.success * n)
    if abs(reported_k - card.success * n) > 1e-6:
        raise ValueError(
            f"{card.name}: its card's success {card.success} is not a whole number of "
            f"its {n} episodes (agent.json 'success', 'episodes')"
        )
    folder = pretrained.pretrained_dir(card.name)
    cfg = config_from_dict(
        yaml.safe_load((folder / "config.yaml").read_text()), str(folder / "config.yaml")
    )
    start = time.perf_counter()
    _, (rollouts,) = evaluate_policies(
        [f"pretrained:{card.name}"], cfg, episodes=n, seed=seed, trajectories=False
    )
    wall = time.perf_counter() - start
    outcomes = np.asarray(rollouts.success, dtype=bool)
    unseen_k = int(outcomes.sum())
    reported_ci = wilson_interval(reported_k, n, confidence=CONFIDENCE)
    unseen_rate = unseen_k / n
    return {
        "name": card.name,
        "task": card.task,
        "actuation": card.actuation,
        "algorithm": card.algorithm,
        "episodes": n,
        "reported": {
            "seed": card.seed,
            "successes": reported_k,
            "rate": reported_k / n,
            "ci": list(reported_ci),
        },
        "unseen": {
            "seed": seed,
            "successes": unseen_k,
            "rate": unseen_rate,
            "ci": list(wilson_interval(unseen_k, n, confidence=CONFIDENCE)),
        },
        "agrees": bool(reported_ci[0] <= unseen_rate <= reported_ci[1]),
        "unseen_outcomes": "".join("1" if s else "0" for s in outcomes),
        "wall_time_s": wall,
    }


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo``), else the platform's machine type."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def main(argv: list[str] | None = None) -> None:
    """Evaluate every shipped agent on the unseen set and write ``agreement.json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=SEED, help="first seed of the unseen episodes")
    parser.add_argument("--out", default="docs/results/unseen", help="output folder")
    args = parser.parse_args(argv)
    if args.seed == pretrained.catalog()[0].seed:
        parser.error(f"--seed {args.seed} is the reported figures' own evaluation set")
    load = os.getloadavg()
    start = time.perf_counter()
    rows = []
    for card in pretrained.catalog():
        row = agent_row(card, args.seed)
        rows.append(row)
        r, u = row["reported"], row["unseen"]
        print(
            f"{card.name:22s} reported {r['successes']}/{row['episodes']} "
            f"unseen {u['successes']}/{row['episodes']} "
            f"{'agrees' if row['agrees'] else 'DISAGREES'}",
            flush=True,
        )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = {
        "seed": args.seed,
        "confidence": CONFIDENCE,
        "rule": RULE,
        "agents": rows,
        "machine": cpu_model(),
        "cpus": os.cpu_count(),
        "load_average_at_start": list(load),
        "wall_time_s": time.perf_counter() - start,
    }
    (out / "agreement.json").write_text(json.dumps(data, indent=1) + "\n")
    print(f"written {out / 'agreement.json'}")


if __name__ == "__main__":
    main()
