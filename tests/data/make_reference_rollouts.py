"""Record the reference rollouts of twolink-gym 0.8.0 (``reference_rollouts_0.8.0.npz``).

The file beside this script was written by running it once on the committed
0.8.0 code (``git archive`` of the 0.8.0 commit, on ``PYTHONPATH``, so that no
working-tree edit could leak in)::

    mkdir -p /tmp/v080 && git archive <0.8.0 commit> | tar -x -C /tmp/v080
    PYTHONPATH=/tmp/v080 python tests/data/make_reference_rollouts.py

It freezes the behaviour of 0.8.0 for the refactor of the core:
``tests/test_reference_rollouts.py`` replays every case of :data:`CASES` with
the stored seeds and actions on the current code and requires every
observation, reward, joint state and numeric info entry to equal the stored
one within 1e-12, and ``terminated``/``truncated`` exactly.

**Do not re-run this script to "fix" a failing comparison.** A mismatch means
the code's behaviour changed; regenerating the file on the changed code would
erase the very record the test compares against. Regenerate only on a
deliberate, documented change of behaviour (and say so in the changelog).

Every case runs through public API only: ``gym.make`` of the per-task ids
(single env, ``TimeLimit`` included), :class:`~twolink_gym.vector_env.TwoLinkVectorEnv`
(a few copies, autoreset across episode ends) and ``gym.make_vec``. Actions are
drawn from ``numpy.random.default_rng(action_seed)``, uniform in
``[-1.2, 1.2]`` (so clipping is exercised), and stored in the file: the test
replays the stored actions, not a new draw.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

import twolink_gym  # registers the ids

#: Path of the reference file written by :func:`main`.
REFERENCE_FILE = Path(__file__).with_name("reference_rollouts_0.8.0.npz")

#: Separator of case name and quantity in the file's keys (``"<case>::<quantity>"``).
SEP = "::"

#: Per-task ids of every registered task × actuation: ``(task, actuation) -> id``.
IDS: dict[tuple[str, str], str] = {
    ("reach", "full"): "TwoLinkReach-v0",
    ("balance", "full"): "TwoLinkBalance-v0",
    ("balance", "acrobot"): "TwoLinkAcrobotBalance-v0",
    ("balance", "pendubot"): "TwoLinkPendubotBalance-v0",
    ("swingup", "full"): "TwoLinkSwingup-v0",
    ("swingup", "acrobot"): "TwoLinkAcrobotSwingup-v0",
    ("swingup", "pendubot"): "TwoLinkPendubotSwingup-v0",
    ("track", "full"): "TwoLinkTrack-v0",
}

#: The robustness models all on at once (each keyword of the env that acts on a step).
ROBUST_KWARGS: dict[str, Any] = {
    "randomize": {"m2": [0.8, 1.2], "friction1": [0.5, 1.5]},
    "obs_noise": 0.01,
    "torque_noise": 0.05,
    "torque_response": 0.5,
    "action_delay": 1,
}


def _cases() -> list[dict[str, Any]]:
    """The recorded cases: JSON-serialisable dicts (see :func:`rollout` for the keys)."""
    cases: list[dict[str, Any]] = []
    for k, ((task, actuation), env_id) in enumerate(IDS.items()):
        name = f"{task}_{actuation}"
        # single env: short episodes, several episode ends (TimeLimit or termination)
        cases.append(
            {
                "name": f"single_{name}",
                "kind": "single",
                "id": env_id,
                "kwargs": {"max_episode_steps": 40},
                "seed": 100 + k,
                "steps": 130,
            }
        )
        # vector env: 3 copies, NextStep autoreset across the episode ends
        cases.append(
            {
                "name": f"vector_{name}",
                "kind": "vector",
                "kwargs": {
                    "num_envs": 3,
                    "task": task,
                    "actuation": actuation,
                    "max_episode_steps": 25,
                },
                "seed": 200 + k,
                "steps": 70,
            }
        )
    cases += [
        # the tasks' own episode lengths: truncation by the registered TimeLimit
        {
            "name": "single_reach_default_length",
            "kind": "single",
            "id": "TwoLinkReach-v0",
            "kwargs": {},
            "seed": 7,
            "steps": 215,
        },
        {
            "name": "single_track_default_length",
            "kind": "single",
            "id": "TwoLinkTrack-v0",
            "kwargs": {},
            "seed": 8,
            "steps": 510,
        },
        # reset options and task options
        {
            "name": "single_reach_options",
            "kind": "single",
            "id": "TwoLinkReach-v0",
            "kwargs": {
                "max_episode_steps": 30,
                "task_options": {"tolerance": 0.1, "speed_weight": 0.2, "sparse": True},
            },
            "seed": 9,
            "steps": 70,
            "reset_options": {"target": [0.6, 0.8], "state": [0.3, -0.2, 0.1, 0.0]},
        },
        {
            "name": "single_balance_pendubot_state",
            "kind": "single",
            "id": "TwoLinkPendubotBalance-v0",
            "kwargs": {"max_episode_steps": 50},
            "seed": 10,
            "steps": 80,
            "reset_options": {"state": [1.5, 0.1, 0.0, -0.2]},
        },
        {
            "name": "single_swingup_explore",
            "kind": "single",
            "id": "TwoLinkSwingup-v0",
            "kwargs": {
                "max_episode_steps": 30,
                "task_options": {"explore_fraction": 0.5, "explore_speed": 2.0},
            },
            "seed": 11,
            "steps": 150,
        },
        {
            "name": "vector_swingup_pendubot_explore",
            "kind": "vector",
            "kwargs": {
                "num_envs": 4,
                "task": "swingup",
                "actuation": "pendubot",
                "max_episode_steps": 20,
                "task_options": {"explore_fraction": 0.5},
            },
            "seed": 12,
            "steps": 60,
        },
        {
            "name": "single_track_options",
            "kind": "single",
            "id": "TwoLinkTrack-v0",
            "kwargs": {
                "max_episode_steps": 40,
                "task_options": {"families": ["lissajous"], "preview": 3, "seconds": 4.0},
            },
            "seed": 13,
            "steps": 90,
        },
        # env settings: arm, control period, torques, speed limit, observation kind
        {
            "name": "single_acrobot_balance_angles",
            "kind": "single",
            "id": "TwoLinkAcrobotBalance-v0",
            "kwargs": {
                "max_episode_steps": 40,
                "observation": "angles",
                "params": {"m2": 1.3, "friction1": 0.05},
                "dt": 0.025,
                "substeps": 3,
                "max_torque": [20.0, 12.0],
                "max_speed": 10.0,
            },
            "seed": 14,
            "steps": 90,
        },
        # the robustness models
        {
            "name": "single_reach_robust",
            "kind": "single",
            "id": "TwoLinkReach-v0",
            "kwargs": {"max_episode_steps": 30, **ROBUST_KWARGS},
            "seed": 15,
            "steps": 70,
        },
        {
            "name": "vector_balance_robust",
            "kind": "vector",
            "kwargs": {
                "num_envs": 3,
                "task": "balance",
                "max_episode_steps": 25,
                **ROBUST_KWARGS,
            },
            "seed": 16,
            "steps": 60,
        },
        # vector env: one arm per copy, SameStep autoreset, two threads
        {
            "name": "vector_reach_per_copy_samestep",
            "kind": "vector",
            "kwargs": {
                "num_envs": 3,
                "task": "reach",
                "max_episode_steps": 20,
                "autoreset_mode": "SameStep",
                "params": [{"m2": 0.8}, {}, {"l2": 1.2, "lc2": 0.6}],
            },
            "seed": 17,
            "steps": 50,
        },
        {
            "name": "vector_track_samestep",
            "kind": "vector",
            "kwargs": {
                "num_envs": 2,
                "task": "track",
                "max_episode_steps": 30,
                "autoreset_mode": "SameStep",
            },
            "seed": 18,
            "steps": 70,
        },
        {
            "name": "vector_swingup_two_threads",
            "kind": "vector",
            "kwargs": {
                "num_envs": 5,
                "task": "swingup",
                "max_episode_steps": 25,
                "num_threads": 2,
            },
            "seed": 19,
            "steps": 60,
        },
        # gym.make_vec through the ids' vector entry point, and the generic id
        {
            "name": "make_vec_acrobot_swingup",
            "kind": "make_vec",
            "id": "TwoLinkAcrobotSwingup-v0",
            "kwargs": {"num_envs": 2, "max_episode_steps": 25},
            "seed": 20,
            "steps": 60,
        },
        {
            "name": "single_generic_pendubot_swingup",
            "kind": "single",
            "id": "TwoLink-v0",
            "kwargs": {"task": "swingup", "actuation": "pendubot", "max_episode_steps": 40},
            "seed": 21,
            "steps": 90,
        },
    ]
    for i, case in enumerate(cases):
        case["action_seed"] = 1000 + i
    return cases


#: Every recorded case (the test replays exactly these).
CASES: list[dict[str, Any]] = _cases()


def make(case: Mapping[str, Any]) -> Any:
    """The env of ``case``: a ``gym.make`` env or a vector env."""
    kwargs = dict(case["kwargs"])
    if case["kind"] == "single":
        return gym.make(case["id"], **kwargs)
    if case["kind"] == "vector":
        from twolink_gym.vector_env import TwoLinkVectorEnv

        return TwoLinkVectorEnv(**kwargs)
    if case["kind"] == "make_vec":
        return gym.make_vec(case["id"], vectorization_mode="vector_entry_point", **kwargs)
    raise ValueError(f"unknown case kind {case['kind']!r}")


def draw_actions(case: Mapping[str, Any], env: Any) -> NDArray[np.float32]:
    """The case's actions, shape ``(steps, *action_space.shape)``, uniform in [-1.2, 1.2]."""
    rng = np.random.default_rng(case["action_seed"])
    shape = (case["steps"], *env.action_space.shape)
    return rng.uniform(-1.2, 1.2, size=shape).astype(np.float32)


def _flatten(info: Mapping[str, Any], prefix: str = "info.") -> dict[str, NDArray[Any]]:
    """The numeric entries of an info dict, nested dicts flattened with dots.

    Gymnasium's mask entries (``"_key"``) are left out.
    """
    flat: dict[str, NDArray[Any]] = {}
    for key, value in info.items():
        if key.startswith("_"):
            continue
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{prefix}{key}."))
            continue
        array = np.asarray(value)
        if array.dtype.kind in "biuf":
            flat[prefix + key] = array
    return flat


def rollout(
    case: Mapping[str, Any],
    actions: NDArray[np.float32],
    make_env: Callable[[Mapping[str, Any]], Any] = make,
) -> dict[str, NDArray[Any]]:
    """Run ``case`` with ``actions`` and record every call's outputs.

    The env is reset with ``seed`` (and ``reset_options``, if any) and stepped
    with ``actions``. A single env that ends an episode is reset without a
    seed (its generator carries on); a vector env resets its copies itself.

    Parameters
    ----------
    case : mapping
        One entry of :data:`CASES`.
    actions : ndarray, shape (steps, *action_shape)
        The actions of the steps.
    make_env : callable
        Builds the env from the case (tests pass a variant to perturb it).

    Returns
    -------
    dict of str to ndarray
        One row per call (resets and steps, in order): ``"obs"``, ``"reward"``
        (0 on a reset row), ``"terminated"``, ``"truncated"`` (False on a reset
        row), ``"is_reset"`` and ``"info.<key>"`` for each numeric info entry;
        an entry missing from some rows' info (SameStep's ``final_*``) is NaN
        there, with the row mask ``"has.info.<key>"``.
    """
    env = make_env(case)
    vector = case["kind"] != "single"
    rows: list[dict[str, NDArray[Any]]] = []

    def record(
        obs: Any, reward: Any, terminated: Any, truncated: Any, info: Any, reset: bool
    ) -> None:
        row = {
            "obs": np.asarray(obs),
            "reward": np.asarray(reward, dtype=np.float64),
            "terminated": np.asarray(terminated, dtype=bool),
            "truncated": np.asarray(truncated, dtype=bool),
            "is_reset": np.asarray(reset),
        }
        row.update(_flatten(info))
        rows.append(row)

    try:
        obs, info = env.reset(seed=case["seed"], options=case.get("reset_options"))
        if vector:
            falses = np.zeros(env.num_envs, dtype=np.bool_)
            record(obs, np.zeros(env.num_envs), falses, falses, info, True)
        else:
            record(obs, 0.0, False, False, info, True)
        for action in actions:
            obs, reward, terminated, truncated, info = env.step(action)
            record(obs, reward, terminated, truncated, info, False)
            if not vector and (terminated or truncated):
                obs, info = env.reset()
                record(obs, 0.0, False, False, info, True)
    finally:
        env.close()

    keys = list(dict.fromkeys(k for row in rows for k in row))
    out: dict[str, NDArray[Any]] = {}
    for key in keys:
        present = [key in row for row in rows]
        if all(present):
            out[key] = np.stack([row[key] for row in rows])
            continue
        like = next(row[key] for row in rows if key in row)
        filler = np.full(like.shape, np.nan)
        out[key] = np.stack([row[key] if key in row else filler for row in rows]).astype(float)
        out["has." + key] = np.asarray(present)
    return out


def main() -> None:
    """Record every case and write :data:`REFERENCE_FILE` (on twolink-gym 0.8.0 only)."""
    print(f"twolink_gym {twolink_gym.__version__} from {twolink_gym.__file__}", file=sys.stderr)
    if twolink_gym.__version__ != "0.8.0":
        raise SystemExit(f"the reference is of 0.8.0, this is {twolink_gym.__version__}")
    data: dict[str, Any] = {
        "version": np.asarray(twolink_gym.__version__),
        "cases": np.asarray(json.dumps(CASES)),
    }
    spec_lengths = {}
    for env_id in [*IDS.values(), "TwoLink-v0"]:
        spec_lengths[env_id] = gym.spec(env_id).max_episode_steps
    data["spec_max_episode_steps"] = np.asarray(json.dumps(spec_lengths))
    default_lengths = {}
    for env_id in IDS.values():
        env = gym.make(env_id)
        default_lengths[env_id] = env.get_wrapper_attr("default_max_episode_steps")
        env.close()
    data["default_max_episode_steps"] = np.asarray(json.dumps(default_lengths))
    for case in CASES:
        env = make(case)
        actions = draw_actions(case, env)
        env.close()
        data[case["name"] + SEP + "actions"] = actions
        for key, value in rollout(case, actions).items():
            data[case["name"] + SEP + key] = value
        print(case["name"], len(actions), file=sys.stderr)
    np.savez_compressed(REFERENCE_FILE, **data)
    print(f"wrote {REFERENCE_FILE} ({REFERENCE_FILE.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
