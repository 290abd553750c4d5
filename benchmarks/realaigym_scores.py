"""Check the RealAIGym scorer against the publisher's own trajectories and scores.

Usage::

    python benchmarks/realaigym_scores.py DATA_DIR [--tolerance 1e-6]

``DATA_DIR`` holds the published ``sim_swingup.csv`` files (any names) and a
``published_scores.json`` mapping each entry to its ``csv`` file name, ``robot``,
``score_version`` and the publisher's full-precision ``published`` criteria and
score. The publisher's data is not part of this repository: point the script at
a copy of it. Prints each entry's score beside the published one and the largest
absolute difference of any criterion or score; exits 1 if it exceeds the tolerance.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from twolink_gym.realaigym import criteria, read_csv, score


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--tolerance", type=float, default=1e-6)
    args = parser.parse_args()
    index = args.data_dir / "published_scores.json"
    if not index.is_file():
        parser.error(f"{index} does not exist")
    published = json.loads(index.read_text())
    worst = 0.0
    print(f"{'entry':32s} {'ver':3s} {'score':>9s} {'published':>9s} {'max |diff|':>10s}")
    for name, entry in sorted(published.items()):
        version = entry["score_version"]
        c = criteria(read_csv(args.data_dir / entry["csv"]), entry["robot"], version)
        mine = c.as_dict() | {"score": score(c, version)}
        diff = max(abs(mine[key] - value) for key, value in entry["published"].items())
        worst = max(worst, diff)
        print(
            f"{name:32s} {version:3s} {mine['score']:9.6f} "
            f"{entry['published']['score']:9.6f} {diff:10.2e}"
        )
    print(
        f"{len(published)} entries; largest difference {worst:.2e} (tolerance {args.tolerance:g})"
    )
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
