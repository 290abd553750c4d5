"""The "Writing a task" page's task is one file: it registers, runs in both envs and trains.

The page's Python is written to a file of its own and run in a fresh process
(no file of the package is touched, nothing else imported): it registers an
id, steps the single and the vector env, renders, passes Gymnasium's checker
and trains PPO for a few hundred steps; it asserts each of those itself.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parent.parent / "docs" / "writing-a-task.md"
_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def page_code() -> str:
    (code,) = _FENCE.findall(PAGE.read_text(encoding="utf-8"))
    return code


def test_the_page_holds_one_complete_task() -> None:
    code = page_code()
    for step in ("@twolink_gym.task_kernel", "gym.register(", "TwoLinkVectorEnv(", ".learn("):
        assert step in code, step


@pytest.mark.slow
def test_the_pages_task_registers_runs_in_both_envs_and_trains(tmp_path: Path) -> None:
    script = tmp_path / "height_task.py"
    script.write_text(
        page_code()
        + "\nprint('ids', 'TwoLinkHeight-v0' in gym.registry)"
        + "\nprint('terms', HeightTask.term_names)"
        + "\nprint('trained', model.num_timesteps)\n"
    )
    env = dict(os.environ, SDL_VIDEODRIVER="dummy")
    proc = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert "ids True" in lines
    assert "terms ('reward_height', 'reward_ctrl')" in lines
    trained = int(next(line for line in lines if line.startswith("trained")).split()[1])
    assert trained >= 256
