"""The project's own code stays ruff clean, ruff formatted and mypy clean (as pyproject.toml configures).

Only the project's folders are linted (:data:`PROJECT_DIRS`), never the whole
working tree: a user's scratch files beside them must not fail the test suite.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The folders of the project's own Python code, relative to the repository root.
PROJECT_DIRS = ("twolink_gym", "training", "tests", "benchmarks", "docs/scripts")


def _tool(name: str) -> str:
    exe = Path(sys.executable).with_name(name)
    found = str(exe) if exe.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: install the 'dev' extra")
    return found


def lint_commands(root: Path) -> dict[str, list[str]]:
    """The lint commands, by name, over the project folders present under ``root``.

    mypy checks the folders that ``[tool.mypy]`` in ``pyproject.toml`` lists (``files``).
    """
    dirs = [d for d in PROJECT_DIRS if (root / d).is_dir()]
    return {
        "ruff-check": [_tool("ruff"), "check", *dirs],
        "ruff-format": [_tool("ruff"), "format", "--check", *dirs],
        "mypy": [_tool("mypy")],
    }


@pytest.mark.parametrize("name", ["ruff-check", "ruff-format", "mypy"])
def test_clean(name: str) -> None:
    result = subprocess.run(
        lint_commands(ROOT)[name], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr


BAD = "import os\nx=1\n"  # an unused import (ruff check) and no spaces around = (ruff format)


@pytest.mark.parametrize("name", ["ruff-check", "ruff-format"])
def test_scratch_files_outside_the_project_folders_are_not_linted(
    tmp_path: Path, name: str
) -> None:
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "good.py").write_text('"""A clean module."""\n\nX = 1\n')
    (tmp_path / "scratch.py").write_text(BAD)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "try.py").write_text(BAD)

    def run() -> int:
        cmd = lint_commands(tmp_path)[name]
        return subprocess.run(cmd, cwd=tmp_path, capture_output=True, timeout=120).returncode

    assert run() == 0
    # the same file inside a project folder is linted, and fails
    (tmp_path / "tests" / "bad.py").write_text(BAD)
    assert run() != 0
