"""The distribution installs one top-level package, twolink_gym (training lives inside it)."""

import subprocess
import sys
from importlib import metadata


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
