"""The distribution installs one top-level package, twolink_gym (training lives inside it)."""

import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest


def _run(code: str, cwd) -> subprocess.CompletedProcess:
    # a fresh interpreter outside the repository, so that its folders are not on sys.path
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_no_top_level_training_module(tmp_path):
    result = _run("import training", tmp_path)
    assert result.returncode != 0
    assert "No module named 'training'" in result.stderr


def test_training_is_a_subpackage_of_twolink_gym(tmp_path):
    result = _run("import twolink_gym.training.cli as c; print(c.main.__module__)", tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "twolink_gym.training.cli"


def test_a_users_own_training_module_is_not_shadowed(tmp_path):
    (tmp_path / "training.py").write_text("WHO = 'the user'\n")
    code = "import training, twolink_gym.training.sweep; print(training.WHO)"
    result = _run(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "the user"


def test_console_script_points_into_the_package():
    scripts = {ep.name: ep.value for ep in metadata.entry_points(group="console_scripts")}
    assert scripts["twolink"] == "twolink_gym.training.cli:main"


# -- the wheel ----------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]
#: What the build reads: the project file, the readme, and the folders it packages.
BUILD_INPUTS = ("pyproject.toml", "README.md", "twolink_gym", "training", "configs")


@pytest.fixture(scope="module")
def wheel_build(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """A wheel built (verbosely) from a copy of the repository's sources, and its path."""
    src = tmp_path_factory.mktemp("src")
    out = tmp_path_factory.mktemp("wheel")
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    for name in BUILD_INPUTS:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=ignore)
        elif path.exists():
            shutil.copy2(path, src / name)
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v"]
    result = subprocess.run(
        [*pip, "-w", str(out), str(src)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (wheel,) = out.glob("*.whl")
    return result, wheel


def test_building_the_wheel_prints_no_setuptools_warnings(wheel_build):
    result, _ = wheel_build
    log = result.stdout + result.stderr
    # setuptools' complaint about data folders that look like packages (one per folder)
    assert "absent from the `packages` configuration" not in log
    assert "Warning" not in log, [line for line in log.splitlines() if "Warning" in line][:5]


def test_the_wheel_holds_every_pretrained_file(wheel_build):
    _, wheel = wheel_build
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = {
            name for name in archive.namelist() if name.startswith("twolink_gym/pretrained/")
        }
    pretrained = REPO / "twolink_gym" / "pretrained"
    in_repo = {
        "twolink_gym/" + path.relative_to(REPO / "twolink_gym").as_posix()
        for path in pretrained.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert len(in_repo) > 80  # 18 agents, each a few files (most with an eval/ folder)
    assert in_wheel == in_repo


def test_the_wheel_holds_every_shipped_config(wheel_build):
    # `twolink configs` and configs by name outside a clone (#43): configs/ is package data
    _, wheel = wheel_build
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = {
            name.removeprefix("twolink_gym/configs/")
            for name in archive.namelist()
            if name.startswith("twolink_gym/configs/") and name.endswith(".yaml")
        }
    in_repo = {path.name for path in (REPO / "configs").glob("*.yaml")}
    assert len(in_repo) > 20
    assert in_wheel == in_repo


def test_the_wheel_holds_every_python_module_of_the_package(wheel_build):
    # the packages are listed by hand in pyproject.toml: a new subpackage must be added
    _, wheel = wheel_build
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = {name for name in archive.namelist() if name.endswith(".py")}
    installed_as = {"twolink_gym": "twolink_gym", "training": "twolink_gym/training"}
    in_repo = {
        f"{prefix}/{path.relative_to(REPO / folder).as_posix()}"
        for folder, prefix in installed_as.items()
        for path in (REPO / folder).rglob("*.py")
        if "__pycache__" not in path.parts
    }
    assert in_repo - in_wheel == set()
