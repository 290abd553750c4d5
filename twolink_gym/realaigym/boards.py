"""The published RealAIGym v2 simulation boards, as data with their source.

``published_boards.json`` (beside this module) holds the rows of the current
performance and robustness leaderboards of both robots, numbers as rounded by
the publisher, and where they come from: repository, commit and path of each
leaderboard CSV. ``published_boards_v3.json`` holds the ICRA 2025 simulation
results (v3) the same way, at full precision. They are citations for printing
our rows beside them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = [
    "BOARDS_FILE",
    "BOARDS_V3_FILE",
    "PUBLISHED",
    "PUBLISHED_V3",
    "load_published",
    "load_published_v3",
]

#: The data file.
BOARDS_FILE = Path(__file__).with_name("published_boards.json")


def load_published(path: Path = BOARDS_FILE) -> dict[str, Any]:
    """``{"source": {...}, board: {robot: {"path", "source", "rows"}}}`` for the two v2 boards.

    Each board entry gets ``source``: ``"<repository>@<commit[:10]>:<path>"``.
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    src = data["source"]
    for board in ("performance", "robustness"):
        for entry in data[board].values():
            entry["source"] = f"{src['repository']}@{src['commit'][:10]}:{entry['path']}"
    return data


#: The published boards (:func:`load_published`).
PUBLISHED = load_published()


#: The v3 data file (ICRA 2025 simulation results).
BOARDS_V3_FILE = Path(__file__).with_name("published_boards_v3.json")


def load_published_v3(path: Path = BOARDS_V3_FILE) -> dict[str, Any]:
    """``{"source": {...}, "v3": {robot: {"path", "source", "rows"}}}``: the ICRA 2025 simulation results.

    Each row: ``controller``, ``username``, ``n_swingups``, ``uptime`` [s] and
    ``score`` at full precision (from the run's ``scores_v3.csv``, at ``path``).
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    src = data["source"]
    for entry in data["v3"].values():
        entry["source"] = f"{src['repository']}@{src['commit'][:10]}:{entry['path']}"
    return data


#: The published v3 results (:func:`load_published_v3`).
PUBLISHED_V3 = load_published_v3()
