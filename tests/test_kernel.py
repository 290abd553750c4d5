"""The compiled step kernel against an independent numpy reference, and its invariants.

Reference: a classic RK4 written here in numpy over the batched vector field
``dynamics.state_derivative`` (itself checked against a sympy derivation in
``test_dynamics.py``), the torque ``action * max_torque``, speeds clipped to
``max_speed``; then each task's reward, success, termination and extras
computed from their documented formulas with the numpy kinematics
(``forward_kinematics``, ``tip_velocity``, ``wrap_angle``). The kernel must
match it to round-off. The single env, the vector env (one thread or two)
and per-copy arms must match each other bit for bit; with numba's compiler
disabled the same source must give the same numbers to round-off.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import types

import numpy as np
import pytest
from reference_rk4 import numpy_rk4

import twolink_gym
from twolink_gym import _jit
from twolink_gym.env import TwoLinkEnv
from twolink_gym.kernel import loop_arrays, step_kernels
from twolink_gym.kinematics import forward_kinematics, tip_velocity, wrap_angle
from twolink_gym.params import ArmParams
from twolink_gym.simulation import Simulation, encode_state
from twolink_gym.tasks import BalanceTask, ReachTask
from twolink_gym.vector_env import TwoLinkVectorEnv

TASKS = {
    "reach": ReachTask(),
    "reach_speed": ReachTask(speed_weight=0.3),
    "reach_sparse": ReachTask(sparse=True, tolerance=0.5),
    "balance": BalanceTask(),
}
RTOL, ATOL = 1e-11, 1e-11


def task_reference(task, params, state, goal, action):
    """The documented reward, terms, termination, success, distance and extras (numpy)."""
    tip = forward_kinematics(params, state[:, :2])[1]
    if isinstance(task, ReachTask):
        d = np.hypot(goal[:, 0] - tip[:, 0], goal[:, 1] - tip[:, 1])
        v = tip_velocity(params, state[:, :2], state[:, 2:])
        speed = np.hypot(v[:, 0], v[:, 1])
        if task.sparse:
            terms = {"reward_dist": (d <= task.tolerance).astype(float)}
        else:
            terms = {
                "reward_dist": -d,
                "reward_near": task.near_weight * np.exp(-(d**2) / (2 * task.near_sigma**2)),
                "reward_ctrl": -task.ctrl_weight * np.sum(action**2, axis=1),
            }
            if task.speed_weight:
                terms["reward_speed"] = -task.speed_weight * speed**2
        reward = sum(terms.values())
        success = (d <= task.tolerance) & (speed <= task.success_speed)
        terminated = np.zeros(len(d), dtype=bool)
        extras = np.concatenate([goal, goal - tip], axis=1)
    else:
        t1 = wrap_angle(state[:, 0] - math.pi / 2)
        t2 = wrap_angle(state[:, 0] + state[:, 1] - math.pi / 2)
        d = np.maximum(np.abs(t1), np.abs(t2))
        upright = np.exp(-(t1**2 + t2**2) / (2 * task.upright_sigma**2))
        ctrl = 1 - 0.5 * task.ctrl_weight * np.sum(action**2, axis=1)
        speed2 = np.sum(state[:, 2:] ** 2, axis=1)
        still = 1 - task.speed_weight * (1 - np.exp(-speed2 / (2 * task.still_sigma**2)))
        terms = {"reward_upright": upright, "reward_ctrl": ctrl, "reward_still": still}
        reward = upright * ctrl * still
        success = (d <= task.success_angle) & np.all(
            np.abs(state[:, 2:]) <= task.success_speed, axis=1
        )
        terminated = d > task.fall_angle
        extras = np.zeros((len(d), 0))
    return {
        "reward": reward,
        "terms": terms,
        "terminated": terminated,
        "success": success,
        "distance": d,
        "tip": tip,
        "extras": extras,
    }


def reference(sim: Simulation, state, goal, action):
    nxt = numpy_rk4(sim.params, state, action * sim.max_torque, sim.dt, sim.substeps)
    nxt[:, 2:] = np.clip(nxt[:, 2:], -sim.max_speed, sim.max_speed)
    ref = task_reference(sim.task, sim.params, nxt, goal, action)
    obs = np.concatenate([encode_state(nxt), ref["extras"]], 1).astype(np.float32)
    return nxt, obs, ref


def random_batch(sim: Simulation, n: int, seed: int):
    """States all over the state space (speeds up to the limit) and goals in the workspace."""
    rng = np.random.default_rng(seed)
    state = np.column_stack(
        [rng.uniform(-4, 4, (n, 2)), rng.uniform(-sim.max_speed, sim.max_speed, (n, 2))]
    )
    if isinstance(sim.task, BalanceTask):  # also states near upright: success and no fall
        state[: n // 2] = np.array([math.pi / 2, 0, 0, 0]) + rng.uniform(-0.05, 0.05, (n // 2, 4))
    goal = np.array([sim.task.sample_goal(rng, sim.params) for _ in range(n)]).reshape(n, -1)
    if isinstance(sim.task, ReachTask):  # some targets at the tip: success
        goal[: n // 4] = forward_kinematics(sim.params, state[: n // 4, :2])[1]
        state[: n // 4, 2:] = 0.0
    action = np.clip(rng.uniform(-1.3, 1.3, (n, 2)), -1, 1)
    return state, goal, action


def assert_outcome_close(outcome, ref):
    np.testing.assert_allclose(outcome.reward, ref["reward"], rtol=RTOL, atol=ATOL)
    assert outcome.terms.keys() == ref["terms"].keys()
    for key, value in ref["terms"].items():
        np.testing.assert_allclose(outcome.terms[key], value, rtol=RTOL, atol=ATOL, err_msg=key)
    np.testing.assert_allclose(outcome.distance, ref["distance"], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(outcome.tip, ref["tip"], rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(outcome.terminated, ref["terminated"])
    np.testing.assert_array_equal(outcome.success, ref["success"])


def run_step(sim: Simulation, state, goal, action, parallel=False, steps=None):
    """The arrays of one call of the task's step loop (through numba's dispatch)."""
    n = state.shape[0]
    arrays = loop_arrays(sim.task, n, sim.config)
    arrays.arms[:] = sim.arms(None, n)
    arrays.state[:] = state
    arrays.goal[:] = goal
    arrays.action[:] = action
    if steps is not None:
        arrays.steps[:] = steps
    loops = step_kernels(sim.task)
    (loops.step_parallel if parallel else loops.step)(*arrays)
    return arrays


def outcome_of(task, arrays):
    """The loop's outcome in the form of ``Task.evaluate`` (for assert_outcome_close)."""
    o = arrays.outcome
    return types.SimpleNamespace(
        reward=o["reward"],
        terms={name: arrays.terms[:, j] for name, j in task.reported_columns},
        distance=o["distance"],
        tip=o["tip"],
        terminated=o["terminated"],
        success=o["success"],
    )


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("name", TASKS)
def test_kernel_step_matches_numpy_reference(name, parallel):
    sim = Simulation.create(task=TASKS[name])
    n = 400
    state, goal, action = random_batch(sim, n, seed=1)
    nxt, obs, ref = reference(sim, state, goal, action)
    arrays = run_step(sim, state, goal, action, parallel=parallel)
    np.testing.assert_allclose(arrays.state, nxt, rtol=RTOL, atol=ATOL)
    assert_outcome_close(outcome_of(sim.task, arrays), ref)
    np.testing.assert_allclose(arrays.obs, obs, rtol=1e-6, atol=1e-7)
    assert arrays.obs.dtype == np.float32
    # the random batch does exercise both branches of the flags
    if name != "reach_speed":
        assert ref["success"].any() and not ref["success"].all()
    if name == "balance":
        assert ref["terminated"].any() and not ref["terminated"].all()


def test_the_step_loop_advances_the_counts_and_reports_the_time_after_the_step():
    sim = Simulation.create(task=TASKS["reach"])
    state, goal, action = random_batch(sim, 5, seed=2)
    steps = np.array([0, 1, 7, 199, 3], dtype=np.int64)
    arrays = run_step(sim, state, goal, action, steps=steps)
    np.testing.assert_array_equal(arrays.steps, steps + 1)
    np.testing.assert_allclose(arrays.outcome["time"], (steps + 1) * sim.dt, rtol=1e-15)


def test_the_loops_arguments_are_the_fields_of_loop_arrays_and_cannot_be_rebound():
    import inspect

    from twolink_gym import kernel

    sim = Simulation.create(task="track")
    arrays = loop_arrays(sim.task, 3, sim.config)
    names = list(inspect.signature(step_kernels(sim.task).step.py_func).parameters)
    assert list(arrays._fields) == names
    assert arrays.obs.dtype == np.float32 and arrays.steps.dtype == np.int64
    assert arrays.outcome.dtype == kernel.OUTCOME
    assert all(a.flags.c_contiguous for a in arrays)
    with pytest.raises(AttributeError):
        arrays.state = np.zeros((3, 4))  # type: ignore[misc]


@pytest.mark.parametrize("name", TASKS)
def test_task_evaluate_matches_documented_formulas(name):
    task = TASKS[name]
    sim = Simulation.create(task=task)
    state, goal, action = random_batch(sim, 300, seed=2)
    got = task.evaluate(sim.params, state, goal, action)
    ref = task_reference(task, sim.params, state, goal, action)
    assert_outcome_close(got, ref)
    np.testing.assert_allclose(got.extras, ref["extras"], rtol=RTOL, atol=ATOL)


def test_sincos_is_math_sin_and_cos_bit_for_bit():
    from numba import njit

    @njit
    def both(x, out):
        for i in range(x.shape[0]):
            out[i, 0], out[i, 1] = _jit.sincos(x[i])

    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-10, 10, 20000), rng.normal(0, 1e4, 2000)])
    out = np.empty((len(x), 2))
    both(x, out)
    np.testing.assert_array_equal(out[:, 0], [math.sin(v) for v in x.tolist()])
    np.testing.assert_array_equal(out[:, 1], [math.cos(v) for v in x.tolist()])


@pytest.mark.skipif(_jit.JIT_DISABLED, reason="NUMBA_DISABLE_JIT=1: nothing is compiled")
def test_the_compiled_step_names_no_c_library_symbol_of_its_own():
    """The loop's sines and cosines are LLVM's: the platform picks its routines (portability).

    A function linked by name (glibc's ``sincos``, as before 0.9's core) would
    not exist on every platform; what numba itself declares (``atan``, its
    runtime, Python's C API) is numba's to port.
    """
    import re

    from numba import njit

    sim = Simulation.create(task="balance")
    arrays = loop_arrays(sim.task, 2, sim.config)
    arrays.arms[:] = sim.arms(None, 2)
    # an uncached copy: numba shows no IR of code loaded from its cache
    fresh = njit(error_model="numpy")(step_kernels(sim.task).step.py_func)
    fresh(*arrays)
    declared = set(
        re.findall(r'declare[^@\n]*@"?([^"(\s]+)', fresh.inspect_llvm(fresh.signatures[0]))
    )
    assert {"llvm.sin.f64", "llvm.cos.f64"} <= declared
    assert not any("sincos" in name for name in declared)


def reference_env_step(env: TwoLinkEnv, action):
    a = np.clip(np.asarray(action, dtype=np.float64), -1, 1)[None]
    nxt, obs, ref = reference(env.sim, env.state[None], env.goal[None], a)
    return nxt[0], obs[0], ref


@pytest.mark.parametrize("name", TASKS)
def test_single_env_step_matches_reference_across_episodes(name):
    env = TwoLinkEnv(task=TASKS[name])
    rng = np.random.default_rng(4)
    env.reset(seed=4)
    steps, resets = 0, 0
    while steps < 150:
        action = rng.uniform(-1.5, 1.5, 2).astype(np.float32)
        if steps % 3 == 0:
            action = action.tolist()  # a list goes through the checked path
        nxt, obs, ref = reference_env_step(env, action)
        o, r, terminated, truncated, info = env.step(action)
        steps += 1
        np.testing.assert_allclose(env.state, nxt, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(o, obs, rtol=1e-6, atol=1e-7)
        assert o.dtype == np.float32 and o.shape == env.observation_space.shape
        assert type(r) is float and type(terminated) is bool and truncated is False
        np.testing.assert_allclose(r, ref["reward"][0], rtol=RTOL, atol=ATOL)
        assert terminated == ref["terminated"][0]
        assert type(info["is_success"]) is bool and info["is_success"] == ref["success"][0]
        assert type(info["distance"]) is float
        np.testing.assert_allclose(info["distance"], ref["distance"][0], rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(info["tip"], ref["tip"][0], rtol=RTOL, atol=ATOL)
        np.testing.assert_array_equal(info["state"], env.state)
        for key, value in ref["terms"].items():
            assert type(info[key]) is float
            np.testing.assert_allclose(info[key], value[0], rtol=RTOL, atol=ATOL)
        if terminated or steps % 60 == 0:
            env.reset()
            resets += 1
    assert resets >= 2


def run_single_envs(task, seeds, actions, params=None):
    """Per copy: the obs/reward/terminated/truncated sequence of a single env (SameStep resets)."""
    runs = []
    for i, seed in enumerate(seeds):
        env = TwoLinkEnv(task=task, params=None if params is None else params[i])
        limit = env.default_max_episode_steps
        env.reset(seed=seed)
        rows, t = [], 0
        for a in actions[:, i]:
            o, r, term, _, info = env.step(a)
            t += 1
            trunc = t >= limit and not term
            final = o
            if term or trunc:
                o, _ = env.reset()
                t = 0
            rows.append((o, r, term, trunc, final, info["is_success"], info["state"]))
        runs.append(rows)
    return runs


def assert_vector_equals_singles(venv, singles, actions):
    n = venv.num_envs
    ends = 0
    for t in range(actions.shape[0]):
        obs, reward, terminated, truncated, info = venv.step(actions[t])
        for i in range(n):
            o, r, term, trunc, final, success, _ = singles[i][t]
            np.testing.assert_array_equal(obs[i], o)
            assert reward[i] == r
            assert terminated[i] == term and truncated[i] == trunc
            if term or trunc:
                ends += 1
                np.testing.assert_array_equal(info["final_obs"][i], final)
                assert info["final_info"]["is_success"][i] == success
            else:
                assert info["is_success"][i] == success
    return ends


@pytest.mark.parametrize(
    ("name", "n", "threads"), [("balance", 3, 1), ("balance", 40, 2), ("reach", 5, 2)]
)
def test_vector_env_equals_single_envs_bit_for_bit(name, n, threads):
    task = TASKS[name]
    steps = 210 if name == "reach" else 120  # reach truncates at 200; balance falls
    actions = np.random.default_rng(6).uniform(-1, 1, (steps, n, 2)).astype(np.float32)
    venv = TwoLinkVectorEnv(n, task=task, autoreset_mode="SameStep", num_threads=threads)
    venv.reset(seed=10)
    singles = run_single_envs(task, [10 + i for i in range(n)], actions)
    assert assert_vector_equals_singles(venv, singles, actions) >= n


def random_arms(n, seed):
    rng = np.random.default_rng(seed)
    base = ArmParams()
    arms = []
    for _ in range(n):
        f = rng.uniform(0.7, 1.3, 6)
        arms.append(
            ArmParams(
                m1=base.m1 * f[0],
                m2=base.m2 * f[1],
                l1=base.l1 * f[2],
                l2=base.l2 * f[3],
                lc1=base.lc1 * f[2] * f[4] / 1.3,
                lc2=base.lc2 * f[3] * f[5] / 1.3,
                friction1=rng.uniform(0, 0.5),
                friction2=rng.uniform(0, 0.5),
            )
        )
    return arms


@pytest.mark.parametrize("name", ["reach", "balance"])
def test_vector_env_with_per_copy_arms_equals_single_envs(name):
    n = 6
    arms = random_arms(n, seed=7)
    assert len({(a.m1, a.l1) for a in arms}) == n  # really different arms
    steps = 210 if name == "reach" else 120
    actions = np.random.default_rng(8).uniform(-1, 1, (steps, n, 2)).astype(np.float32)
    venv = TwoLinkVectorEnv(n, task=name, params=arms, autoreset_mode="SameStep", num_threads=2)
    assert venv.arm_params == arms
    venv.reset(seed=20)
    singles = run_single_envs(name, [20 + i for i in range(n)], actions, params=arms)
    assert_vector_equals_singles(venv, singles, actions)
    # and the copies did move differently: same seed start, different arms
    assert not np.allclose(singles[0][50][6], singles[1][50][6])


def test_vector_env_runs_the_coulomb_terms_per_copy():
    # one batch of copies with and without Coulomb friction (and rotors): every copy
    # steps as the numpy RK4 over its own arm's full vector field
    base = ArmParams()
    arms = [
        base,
        base.replace(coulomb1=0.16, coulomb2=0.12),
        base.replace(rotor_inertia=6.3e-5, gear_ratio=6.0),
        base.replace(coulomb2=0.3),
        base.replace(rotor_inertia=6.3e-5, gear_ratio=6.0, coulomb1=0.2),
    ]
    venv = TwoLinkVectorEnv(len(arms), task="reach", params=arms)
    venv.reset(seed=5)
    rng = np.random.default_rng(6)
    apart = np.zeros(len(arms))
    for _ in range(30):
        before = venv.state
        action = rng.uniform(-1, 1, (len(arms), 2)).astype(np.float32)
        venv.step(action)
        for i, p in enumerate(arms):
            tau = action[i].astype(np.float64) * venv.max_torque
            want = numpy_rk4(p, before[i], tau, venv.dt, venv.substeps)
            want[2:] = np.clip(want[2:], -venv.max_speed, venv.max_speed)
            np.testing.assert_allclose(venv.state[i], want, rtol=RTOL, atol=ATOL)
            plain = numpy_rk4(
                p.replace(coulomb1=0.0, coulomb2=0.0), before[i], tau, venv.dt, venv.substeps
            )
            apart[i] = max(apart[i], np.max(np.abs(want - plain)))
    np.testing.assert_array_equal(apart > 1e-6, [False, True, False, True, True])


def test_per_copy_arms_are_validated():
    with pytest.raises(ValueError, match="sequence of num_envs = 3"):
        TwoLinkVectorEnv(3, params=[ArmParams(), ArmParams()])
    with pytest.raises(ValueError, match="num_threads must lie in"):
        TwoLinkVectorEnv(3, num_threads=_jit.max_threads() + 1)
    with pytest.raises(ValueError, match="num_threads must be an integer"):
        TwoLinkVectorEnv(3, num_threads=0)


def test_observation_bounds_cover_every_copys_arm():
    arms = [ArmParams(l1=0.5, l2=0.5), ArmParams(l1=1.5, l2=1.0)]
    venv = TwoLinkVectorEnv(2, task="reach", params=arms)
    assert venv.single_observation_space.high[6] == pytest.approx(2.5)


_DISABLED_JIT_SCRIPT = """
import json, numpy as np, twolink_gym
from twolink_gym import _jit
assert _jit.JIT_DISABLED == {disabled}
out = {{}}
for task in ("reach", "balance"):
    env = twolink_gym.TwoLinkEnv(task=task)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    rewards = []
    for _ in range(40):
        _, r, term, _, info = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
        rewards.append(r)
        if term:
            env.reset()
    venv = twolink_gym.TwoLinkVectorEnv(3, task=task)
    venv.reset(seed=3)
    vobs, *_ = venv.step(np.full((3, 2), 0.5))
    out[task] = {{"state": env.state.tolist(), "rewards": rewards, "vobs": vobs.tolist()}}
out["forward"] = twolink_gym.forward_dynamics(
    twolink_gym.ArmParams(), [[0.3, -0.2]], [[1.0, 2.0]], [[3.0, -1.0]]).tolist()
print(json.dumps(out))
"""


def _run(disabled: bool):
    env = dict(os.environ, NUMBA_DISABLE_JIT="1" if disabled else "0")
    proc = subprocess.run(
        [sys.executable, "-c", _DISABLED_JIT_SCRIPT.format(disabled=disabled)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=300,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_same_source_runs_with_the_compiler_disabled():
    compiled, interpreted = _run(False), _run(True)
    for task in ("reach", "balance"):
        np.testing.assert_allclose(
            interpreted[task]["state"], compiled[task]["state"], rtol=1e-9, atol=1e-9
        )
        np.testing.assert_allclose(
            interpreted[task]["rewards"], compiled[task]["rewards"], rtol=1e-9, atol=1e-9
        )
        np.testing.assert_allclose(
            interpreted[task]["vobs"], compiled[task]["vobs"], rtol=1e-6, atol=1e-6
        )
    np.testing.assert_allclose(interpreted["forward"], compiled["forward"], rtol=1e-12)


def test_task_kernel_is_exported_at_the_top_level():
    assert twolink_gym.task_kernel is twolink_gym.tasks.task_kernel


_CACHE_PROBE = """
import json, numpy as np, twolink_gym
from twolink_gym.kernel import step_kernels
env = twolink_gym.TwoLinkEnv(task="balance")
env.reset(seed=0)
env.step(np.zeros(2, np.float32))
loops = step_kernels(env.sim.task)
print(json.dumps({
    name: [sum(loop.stats.cache_hits.values()), sum(loop.stats.cache_misses.values())]
    for name, loop in [("step", loops.step), ("observe", loops.observe)]
}))
"""


needs_compiler = pytest.mark.skipif(
    _jit.JIT_DISABLED, reason="NUMBA_DISABLE_JIT=1: nothing is compiled, so nothing is cached"
)


@needs_compiler
def test_step_loops_are_found_in_the_disk_cache_by_a_later_process():
    def probe():
        proc = subprocess.run(
            [sys.executable, "-c", _CACHE_PROBE], capture_output=True, text=True, check=True
        )
        return json.loads(proc.stdout.strip().splitlines()[-1])

    probe()  # compiles (or finds) the balance loops and writes them
    # [hits, misses]: the step loop and the observe loop (the env's step and reset)
    assert probe() == {"step": [1, 0], "observe": [1, 0]}


_PACKAGE = os.path.dirname(twolink_gym.__file__)

_IMPORT_PROBE = """
import json, sys, twolink_gym
from numba.extending import is_jitted
compiled = sorted(
    f"{name}.{attr}"
    for name, module in list(sys.modules.items())
    if name.startswith("twolink_gym")
    for attr, value in vars(module).items()
    if is_jitted(value) and value.signatures
)
dispatchers = sum(
    is_jitted(value)
    for name, module in list(sys.modules.items())
    if name.startswith("twolink_gym")
    for value in vars(module).values()
)
print(json.dumps({"compiled": compiled, "dispatchers": dispatchers}))
"""


@needs_compiler
def test_import_compiles_nothing():
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE], capture_output=True, text=True, check=True
    )
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["dispatchers"] > 10  # the probe sees the package's kernels
    assert out["compiled"] == []


def test_the_package_uses_no_numba_internals():
    """Only numba's public API: no ``numba.core`` import anywhere in the package."""
    offenders = []
    for folder, _, files in os.walk(_PACKAGE):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    if "numba.core" in f.read():
                        offenders.append(os.path.relpath(path, _PACKAGE))
    assert offenders == []


_RK4_PROBE = """
import json, numpy as np
from twolink_gym.dynamics import arm_vector
from twolink_gym.integrators import rk4
from twolink_gym.params import ArmParams
x = rk4(arm_vector(ArmParams()), 0.3, -0.2, 1.0, 0.5, 2.0, -1.0, 0.02, 2)
stats = rk4.stats
print(json.dumps({"x": list(x), "hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values())}))
"""


@needs_compiler
def test_a_change_in_a_callees_file_gives_new_cache_entries(tmp_path):
    """Editing ``dynamics.py`` retires the cached RK4 of ``integrators.py`` that embeds it.

    numba's own rule would check only ``integrators.py``'s timestamp and load
    the RK4 compiled with the old equations of motion.
    """
    import shutil

    copy = tmp_path / "twolink_gym"
    shutil.copytree(_PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "pretrained"))

    def probe():
        env = dict(os.environ, PYTHONPATH=str(tmp_path))
        proc = subprocess.run(
            [sys.executable, "-c", _RK4_PROBE],
            capture_output=True,
            text=True,
            check=True,
            env=env,
            cwd=tmp_path,
        )
        return json.loads(proc.stdout.strip().splitlines()[-1])

    first = probe()
    assert (first["hits"], first["misses"]) == (0, 1)
    again = probe()
    assert (again["hits"], again["misses"]) == (1, 0)
    assert again["x"] == first["x"]
    dynamics = copy / "dynamics.py"
    dynamics.write_text(dynamics.read_text() + "\n# edited\n")
    edited = probe()
    assert (edited["hits"], edited["misses"]) == (0, 1)
    assert edited["x"] == first["x"]


def test_threads_default_to_one_and_pass_through_make_vec():
    import gymnasium as gym

    assert TwoLinkVectorEnv(2).num_threads == 1
    venv = gym.make_vec(
        "TwoLink-v0", num_envs=2, vectorization_mode="vector_entry_point", num_threads=2
    )
    assert venv.unwrapped.num_threads == 2
