"""Each policy's v3 score over many push schedules: every run, the mean, an interval, the worst.

The v3 board is one 60 s run per policy on one push schedule (the robot's seed); an arm
that winds or spins on some schedules and not on others scores very differently on two
of them. Run the policies on other schedules first, one output folder per schedule::

    for n in $(seq 1001 1016); do
        twolink realaigym v3 POLICY [POLICY ...] --robot acrobot --out OUT/pushes_$n --pushes-seed $n
    done
    python benchmarks/realaigym_v3_schedules.py OUT/pushes_* [--above 0.658] [--json FILE]

Reads each folder's ``v3.json`` (the rows ``twolink realaigym v3`` writes: ``policy``,
``score``, ``pushes_seed``) and prints per policy the number of schedules, the mean
score with its 95 % percentile bootstrap interval over the schedules
(:func:`twolink_gym.training.stats.seed_statistics`, resampling schedules), the worst and best
schedule, and with ``--above`` the share of schedules scoring above that value (say a
published score). Each policy must have run on the same schedules, each once.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from twolink_gym.training.stats import SeedStatistics, seed_statistics


def read_runs(folders: Sequence[Path]) -> dict[str, dict[int, float]]:
    """The v3 score of each policy on each push schedule.

    Parameters
    ----------
    folders : sequence of Path
        Output folders of ``twolink realaigym v3 ... --pushes-seed N``, each holding ``v3.json``.

    Returns
    -------
    dict
        ``{policy: {pushes_seed: score}}``, policies in the order first met.

    Raises
    ------
    ValueError
        If a folder has no ``v3.json``, a row has no ``pushes_seed`` (a run on the board's
        schedule), a policy ran twice on one schedule, or the policies' schedules differ.
    """
    if not folders:
        raise ValueError("folders: give at least one output folder of `twolink realaigym v3`")
    runs: dict[str, dict[int, float]] = {}
    for folder in folders:
        path = Path(folder) / "v3.json"
        if not path.is_file():
            raise ValueError(
                f"folders: {folder} has no v3.json (not a `twolink realaigym v3` output)"
            )
        for row in json.loads(path.read_text()):
            if row.get("pushes_seed") is None:
                raise ValueError(
                    f"{path}: the row of {row['policy']} is on the board's schedule; "
                    "give runs made with --pushes-seed N"
                )
            seed = int(row["pushes_seed"])
            scores = runs.setdefault(row["policy"], {})
            if seed in scores:
                raise ValueError(f"{path}: {row['policy']} ran twice on pushes seed {seed}")
            scores[seed] = float(row["score"])
    schedules = {policy: sorted(scores) for policy, scores in runs.items()}
    first = next(iter(schedules.values()))
    for policy, seeds in schedules.items():
        if seeds != first:
            raise ValueError(
                f"the policies ran on different schedules: {policy} on {seeds}, "
                f"{next(iter(schedules))} on {first}"
            )
    return runs


def summarise(scores: dict[int, float]) -> SeedStatistics:
    """One policy's scores over the schedules: mean, 95 % bootstrap interval, worst, best."""
    seeds = sorted(scores)
    return seed_statistics(seeds, [scores[s] for s in seeds])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path, metavar="OUT_DIR")
    parser.add_argument(
        "--above",
        type=float,
        default=None,
        help="also print the share of schedules above this score",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the summaries here")
    args = parser.parse_args(argv)
    try:
        runs = read_runs(args.folders)
    except ValueError as err:
        parser.error(str(err))
    seeds = sorted(next(iter(runs.values())))  # every policy's (read_runs checks)
    print(
        f"v3 over {len(seeds)} push schedules (pushes seeds {seeds[0]}-{seeds[-1]}); "
        "mean [95 % bootstrap interval over schedules]"
    )
    width = max(len(p) for p in runs)
    above = "" if args.above is None else f"  > {args.above:g}"
    print(f"{'policy':<{width}}  {'mean':>6} {'interval':>15}  {'worst':>6}  {'best':>6}{above}")
    report: dict[str, Any] = {}
    for policy, scores in runs.items():
        st = summarise(scores)
        line = (
            f"{policy:<{width}}  {st.mean:6.3f} [{st.ci_low:.3f}, {st.ci_high:.3f}]  "
            f"{st.worst:6.3f}  {st.best:6.3f}"
        )
        entry = st.to_dict()
        if args.above is not None:
            share = sum(v > args.above for v in scores.values()) / len(scores)
            line += f"  {share:5.0%}"
            entry["share_above"] = share
        print(line)
        report[policy] = entry
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
