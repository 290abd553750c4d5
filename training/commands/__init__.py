"""The sub-commands of ``twolink``: one module each, its options and help beside its code.

Each module has ``add_parser(subparsers)``, which adds the command with its
options and sets ``func`` to the function that runs it. Building the parser
imports nothing but the standard library (``twolink --help`` works with the
core install); a command imports what it needs when it runs.
"""

from __future__ import annotations

#: The command modules, in the order ``twolink --help`` lists them.
COMMANDS = (
    "train",
    "run",
    "evaluate",
    "compare",
    "robustness",
    "record",
    "watch",
    "agents",
    "configs",
    "sweep",
    "tune",
    "summarize",
    "export",
)
