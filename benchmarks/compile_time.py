"""Compile time of the numba kernels: the first run after install and a cached run.

Each measurement runs in a fresh interpreter and reports the wall time of
``import twolink_gym``, of the first reach env (``gym.make``, reset and one
step: compiles the reach step loops) and of the first native vector env of
balance on all threads (the balance loops, and the parallel loop). ``--cold``
first deletes numba's cache files of the package (``__pycache__/*.nbi``,
``*.nbc``), as after a fresh install.

Usage::

    python benchmarks/compile_time.py            # cold, then three cached runs
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import twolink_gym

PACKAGE = Path(twolink_gym.__file__).resolve().parent

_PROBE = """
import json, time
t0 = time.perf_counter()
import gymnasium as gym, numpy as np
import twolink_gym
t1 = time.perf_counter()
env = gym.make("TwoLink-v0", task="reach")
env.reset(seed=0)
env.step(env.action_space.sample())
t2 = time.perf_counter()
venv = twolink_gym.TwoLinkVectorEnv(64, task="balance")
venv.reset(seed=0)
venv.step(np.zeros((64, 2)))
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first_single_env": t2 - t1, "first_vector_env": t3 - t2}))
"""


def clear_cache() -> int:
    files = [p for p in PACKAGE.rglob("__pycache__/*") if p.suffix in (".nbi", ".nbc")]
    for p in files:
        p.unlink()
    return len(files)


def probe() -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    removed = clear_cache()
    cold = probe()
    cached = [probe() for _ in range(3)]
    print(f"machine load average: {os.getloadavg()}")
    print(f"cold (after deleting {removed} cache files): " + json.dumps(cold))
    for run in cached:
        print("cached: " + json.dumps(run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
