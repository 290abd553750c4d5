"""MkDocs hooks of the documentation site (listed under ``hooks`` in ``mkdocs.yml``).

The repository's ``training/`` folder is installed as the subpackage
``twolink_gym.training`` (``[tool.setuptools.package-dir]`` in ``pyproject.toml``),
so the source tree has no ``twolink_gym/training/`` folder for mkdocstrings'
static analysis to find. This hook lays out the package as it is installed,
``build/api-src/twolink_gym/`` with one symbolic link per entry of
``twolink_gym/`` and ``training`` linking to ``training/``, and mkdocstrings
reads the sources from there (``paths: [build/api-src]``). Nothing is copied
and nothing is imported.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
API_SRC = ROOT / "build" / "api-src"


def stage_package(root: Path = ROOT, dest: Path = API_SRC) -> Path:
    """Lay out ``twolink_gym`` as installed under ``dest``; returns ``dest``.

    Parameters
    ----------
    root : Path
        The repository (holds ``twolink_gym/`` and ``training/``).
    dest : Path
        Receives ``twolink_gym/``, a folder of relative symbolic links.

    Returns
    -------
    Path
        ``dest``, for mkdocstrings' ``paths``.
    """
    pkg = dest / "twolink_gym"
    pkg.mkdir(parents=True, exist_ok=True)
    wanted = {p.name: p for p in (root / "twolink_gym").iterdir() if p.name != "__pycache__"}
    wanted["training"] = root / "training"
    for entry in pkg.iterdir():
        if entry.name not in wanted or not entry.is_symlink() or not entry.exists():
            entry.unlink()
    for name, target in wanted.items():
        link = pkg / name
        if not link.is_symlink():
            link.symlink_to(os.path.relpath(target, pkg))
    return dest


def on_startup(**kwargs: Any) -> None:
    """Stage the package before the configuration's plugins load any source."""
    stage_package()


# mkdocs imports this module while it validates the configuration, before
# mkdocstrings reads any source, so the layout exists from the start.
stage_package()
