"""The published RealAIGym v2 simulation boards, as data with their source.

``published_boards.json`` (beside this module) holds the rows of the current
performance and robustness leaderboards of both robots, numbers as rounded by
the publisher, and where they come from: repository, commit and path of each
leaderboard CSV. They are citations for printing our rows beside them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["BOARDS_FILE", "PUBLISHED", "load_published"]

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
