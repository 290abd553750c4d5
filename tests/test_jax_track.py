"""The track task's JAX twin against the compiled task: paths, table, kernel, episodes.

References: the numpy path classes of :mod:`twolink_gym.paths`, the compiled
task's ``tabulate``, its numba ``reference_at`` / ``reference_position`` and
task kernel (through ``Task.evaluate``), and the Gymnasium env (``gym.make``).
Under ``jax.enable_x64(True)`` every value agrees to ``TOL``; the path draws
(JAX's generator, not numpy's) are held to the numpy sampler's distribution.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

import twolink_gym  # noqa: E402, F401
import twolink_gym.jax as tj  # noqa: E402
from twolink_gym import paths as P  # noqa: E402
from twolink_gym.jax import paths as jp  # noqa: E402
from twolink_gym.params import ArmParams  # noqa: E402
from twolink_gym.tasks import TrackTask  # noqa: E402
from twolink_gym.tasks.track import reference_at, reference_position  # noqa: E402

TOL = 1e-12

ANALYTIC = [
    P.Circle((0.3, 0.1), 0.4, 7.0, -1, 0.3),
    P.Circle((0.5, 0.0), 0.3, 10.0),
    P.figure_eight((0.5, -0.1), 0.6, 0.4, 9.0, 0.2),
    P.Lissajous((0.1, 0.2), 0.3, 0.2, 3, 2, 1.1, 12.0),
    P.LoopingPath(),
    P.LoopingPath((0.2, -0.1), 0.6, 0.1, 7, 23.0, -1.0, 0.4),
]


@pytest.fixture(scope="module")
def x64() -> Any:
    with jax.enable_x64(True):
        yield


def _numpy_path(v: np.ndarray) -> P.TipPath:
    """The numpy path class of a drawn path vector (an independent evaluator of it)."""
    kind, cx, cy, a1, w1, p1, a2, w2, p2 = (float(x) for x in v)
    centre = (cx, cy)
    if kind == jp.KIND_LISSAJOUS:
        ratio = w2 / w1
        fx, fy = min(jp.LISSAJOUS_FREQUENCIES, key=lambda f: abs(f[1] / f[0] - ratio))
        return P.Lissajous(centre, a1, a2, fx, fy, p1, 2.0 * math.pi * fx / w1)
    if a2 == 0.0:
        return P.Circle(centre, a1, 2.0 * math.pi / abs(w1), int(np.sign(w1)), p1)
    return P.LoopingPath(
        centre, a1, a2, round(w2 / w1) - 1, 2.0 * math.pi / w1, p1, p2 - p1 - math.pi / 2
    )


def _family(path: P.TipPath) -> str:
    if isinstance(path, P.Circle):
        return "circle"
    if isinstance(path, P.LoopingPath):
        return "looping"
    assert isinstance(path, P.Lissajous)
    return "figure_eight" if (path.fx, path.fy, path.phase) == (1, 2, 0.0) else "lissajous"


# -- paths and the table ----------------------------------------------------------
def test_analytic_paths_match_numpy(x64: Any) -> None:
    t = np.linspace(-3.0, 70.0, 997)
    for path in ANALYTIC:
        rows = np.asarray(jp.path_rows(jnp.asarray(jp.path_vector(path)), jnp.asarray(t)))
        expected = np.concatenate([path.position(t), path.velocity(t), path.acceleration(t)], 1)
        assert np.max(np.abs(rows - expected)) <= TOL * max(1.0, np.max(np.abs(expected))), path


def test_table_matches_compiled_tabulate(x64: Any) -> None:
    task = TrackTask(preview=3, seconds=4.0)
    tab = jax.jit(jp.tabulate, static_argnums=1)
    for path in ANALYTIC:
        goal = np.asarray(tab(jnp.asarray(jp.path_vector(path)), task.table_rows))
        expected = task.tabulate(path)
        assert goal.shape == (task.goal_size,)
        assert np.max(np.abs(goal - expected)) <= TOL, path


def test_reference_reads_the_table_as_the_compiled_kernel(x64: Any) -> None:
    task = TrackTask(seconds=3.0)
    sampled = P.SampledPath(
        np.linspace(0.0, 2.5, 9), np.c_[0.5 + 0.2 * np.sin(np.arange(9.0)), 0.1 * np.arange(9.0)]
    )
    goals = [task.tabulate(sampled), task.tabulate(P.PATH_NAMES["figure_eight"])]
    rows = task.table_rows
    ends = [0.0, 0.005, 0.01, 2.5, 2.503, (rows - 2) * 0.01, (rows - 1) * 0.01, rows * 0.01, 50.0]
    times = np.concatenate([np.linspace(-0.3, rows * 0.01 + 0.3, 613), ends])
    at = jax.jit(jax.vmap(jp.reference_at, (None, 0)))
    position = jax.jit(jax.vmap(jp.reference_position, (None, 0)))
    out = np.zeros(6)
    for goal in goals:
        twin = np.asarray(at(jnp.asarray(goal), jnp.asarray(times)))
        twin_p = np.asarray(position(jnp.asarray(goal), jnp.asarray(times)))
        for k, t in enumerate(times):
            reference_at(goal, t, out)
            assert np.max(np.abs(twin[k] - out)) <= TOL, t
            assert np.max(np.abs(twin_p[k] - np.array(reference_position(goal, t)))) <= TOL, t


def test_drawn_paths_follow_the_numpy_samplers_distribution(x64: Any) -> None:
    """Families, speeds and sizes of JAX draws against numpy's draws (same arm, same options)."""
    arm = ArmParams(l1=1.1, l2=0.8)
    margin, speed = 0.1 * arm.reach, (0.1, 0.4)
    n = 240
    # one path per call (a vmapped while loop compiles three times slower on a CPU)
    draw = jax.jit(lambda k: jp.sample_path(k, arm.l1, arm.l2, P.FAMILIES, margin, speed))
    vectors = np.array([draw(k) for k in jax.random.split(jax.random.key(3), n)])
    twin = [_numpy_path(v) for v in vectors]
    rng = np.random.default_rng(0)
    numpy_paths = [P.sample_path(rng, arm, margin=margin, speed=speed) for _ in range(n)]
    inner, outer = arm.inner_radius + margin, arm.reach - margin
    position = jax.jit(jax.vmap(lambda v, t: jp.path_derivative(v, t, 0)))
    times = np.array([path.sample_times(512) for path in twin])
    # the twin's vectors are the paths the numpy classes describe
    np.testing.assert_allclose(
        np.asarray(position(jnp.asarray(vectors), jnp.asarray(times))),
        np.array([path.position(t) for path, t in zip(twin, times, strict=True)]),
        atol=1e-9,
    )
    for path, t in zip(twin, times, strict=True):
        # inside the annulus at the numpy sampler's instants
        r = np.hypot(*path.position(t).T)
        assert np.all((r >= inner - 1e-9) & (r <= outer + 1e-9))
    # mean tip speed (arc length over the period) uniform in the range
    speeds = np.array([P._arc_length(p, 2048) / p.duration for p in twin])
    assert np.all((speeds > speed[0] * (1 - 1e-4)) & (speeds < speed[1] * (1 + 1e-4)))
    ref_speeds = np.array([P._arc_length(p, 2048) / p.duration for p in numpy_paths])
    se = 0.0866 * 0.3 / math.sqrt(n)  # std of U(0.1, 0.4) over sqrt(n)
    assert abs(speeds.mean() - ref_speeds.mean()) < 5 * math.sqrt(2) * se
    # the families, after the rejection: the same shares as numpy's within 5 standard errors
    for family in P.FAMILIES:
        share = np.mean([_family(p) == family for p in twin])
        ref = np.mean([_family(p) == family for p in numpy_paths])
        se = math.sqrt(max(ref * (1 - ref), 0.01) * 2 / n)
        assert abs(share - ref) < 5 * se, (family, share, ref)
    # sizes: circle radii within 5-50 % of the reach, looping loops 6-13
    radii = [p.radius / arm.reach for p in twin if isinstance(p, P.Circle)]
    assert radii and 0.05 <= min(radii) and max(radii) <= 0.5
    loops = {p.loops for p in twin if isinstance(p, P.LoopingPath)}
    assert loops and loops <= set(range(6, 14))


# -- the kernel -------------------------------------------------------------------
def test_kernel_matches_the_compiled_kernel(x64: Any) -> None:
    """Reward, terms, lost termination, success, distance and extras from random states and memories."""
    task = TrackTask(lost_distance=0.25, tolerance=0.1, preview=4, preview_dt=0.07, seconds=3.0)
    env, params = tj.make("TwoLink-v0", task=task, max_episode_steps=300)
    arm = ArmParams()
    goal = task.tabulate(P.PATH_NAMES["circle"])
    rng = np.random.default_rng(1)
    n = 256
    state = np.c_[rng.uniform(-np.pi, np.pi, (n, 2)), rng.uniform(-3, 3, (n, 2))]
    action = rng.uniform(-1, 1, (n, 2))
    time = rng.integers(0, 340, n) * 0.01
    memory = np.c_[rng.uniform(0, 0.05, n), rng.integers(1, 100, n), rng.uniform(0, 0.4, n)]
    memory[: n // 4] = 0.0  # episode starts
    ref = task.evaluate(arm, state, np.tile(goal, (n, 1)), action, time, memory)

    def one(x: Any, a: Any, t: Any, m: Any) -> Any:
        s1, c1 = jnp.sin(x[0]), jnp.cos(x[0])
        s12, c12 = jnp.sin(x[0] + x[1]), jnp.cos(x[0] + x[1])
        step = tj_step(t, x, c1, s1, c12, s12, a)
        return env.twin.kernel(params.arm, params.options, step, jnp.asarray(goal), m)

    from twolink_gym.kernel import Step
    from twolink_gym.tasks.track import TrackMemory

    def tj_step(t: Any, x: Any, c1: Any, s1: Any, c12: Any, s12: Any, a: Any) -> Step:
        return Step(t, x[0], x[1], x[2], x[3], c1, s1, c12, s12, a[0], a[1])

    mem = TrackMemory(*(jnp.asarray(memory[:, j]) for j in range(3)))
    outcome, terms, _, extras = jax.jit(jax.vmap(one))(
        jnp.asarray(state), jnp.asarray(action), jnp.asarray(time), mem
    )
    # the compiled kernel's trig: the step loop's c12 from c1, c2 (1 ulp from sin(q1 + q2))
    assert np.max(np.abs(np.asarray(outcome.reward) - ref.reward)) <= 1e-12
    assert np.max(np.abs(np.asarray(outcome.distance) - ref.distance)) <= 1e-12
    for name in task.reported_terms():
        assert np.max(np.abs(np.asarray(getattr(terms, name)) - ref.terms[name])) <= 1e-12, name
    assert np.max(np.abs(np.asarray(extras) - ref.extras)) <= 1e-12
    np.testing.assert_array_equal(np.asarray(outcome.terminated), ref.terminated)
    np.testing.assert_array_equal(np.asarray(outcome.success), ref.success)
    assert ref.terminated.any() and not ref.terminated.all()
    assert ref.success.any() and not ref.success.all()


# -- episodes ---------------------------------------------------------------------
def test_episodes_from_the_compiled_goal_match_x64(x64: Any) -> None:
    """A path the compiled env drew (``"goal"``) and a named one (``"path"``), stepped alike.

    With ``lost_distance`` set, random torques lose the path: the episode
    terminates at the compiled env's step.
    """
    kwargs = {"task_options": {"lost_distance": 0.2}}
    compiled = gym.make("TwoLinkTrack-v0", **kwargs).unwrapped
    env, params = tj.make("TwoLinkTrack-v0", **kwargs)
    step = jax.jit(env.step_env)
    reset = jax.jit(
        lambda goal, x: env.reset_env(jax.random.key(0), params, {"goal": goal, "state": x})
    )
    rng = np.random.default_rng(0)
    ended = []
    for seed, options in ((5, None), (2, {"path": "circle"})):
        obs, info = compiled.reset(seed=seed, options=options)
        if options:  # the path option gives the compiled env's table
            goal = env.twin.goal_from_option("path", options["path"], params)
            np.testing.assert_array_equal(np.asarray(goal), compiled.goal)
        obs_j, state = reset(jnp.asarray(compiled.goal), jnp.asarray(compiled.state))
        assert np.all(np.asarray(obs_j).astype(np.float32) == obs)
        for k in range(200):
            a = rng.uniform(-1.2, 1.2, 2)
            obs, reward, terminated, _, info = compiled.step(a)
            obs_j, state, reward_j, _, info_j = step(
                jax.random.key(k), state, jnp.asarray(a), params
            )
            assert np.max(np.abs(np.asarray(info_j["state"]) - info["state"])) <= TOL
            assert abs(float(reward_j) - reward) <= TOL
            for name in ("distance", "rms_error", "max_error", "reward_near", "reward_ctrl"):
                assert abs(float(info_j[name]) - info[name]) <= TOL, name
            assert np.max(np.abs(np.asarray(info_j["reference"]) - info["reference"])) <= TOL
            # the compiled observation is float32: the twin's float64 one rounds to it
            assert np.all(np.asarray(obs_j).astype(np.float32) == obs)
            assert bool(info_j["is_success"]) == info["is_success"]
            assert bool(info_j["terminated"]) == terminated
            if terminated:
                ended.append(k)
                break
    assert len(ended) == 2, ended


def test_start_on_a_given_path(x64: Any) -> None:
    """Without the start noise the twin starts on the path, on either elbow branch."""
    kwargs = {"task_options": {"init_angle_noise": 0.0, "init_speed_noise": 0.0}}
    env, params = tj.make("TwoLinkTrack-v0", **kwargs)
    task = env.task
    goal = task.tabulate(P.PATH_NAMES["figure_eight"])
    row = task.reference_rows(goal)[:1]
    arm = ArmParams()
    branches = [
        np.concatenate(
            P.joint_states_on_branch(arm, row[:, :2], row[:, 2:4], row[:, 4:], [d])[:2], 1
        )[0]
        for d in (True, False)
    ]
    reset = jax.jit(lambda k: env.reset_env(k, params, {"goal": goal})[1].x)
    starts = np.array([reset(jax.random.key(k)) for k in range(16)])
    on = [np.max(np.abs(starts - b), axis=1) <= TOL for b in branches]
    assert np.all(on[0] | on[1]) and on[0].any() and on[1].any()


def test_float32_episode_within_tolerance() -> None:
    """The default float32 twin follows the compiled float64 episode to 2e-4 over 50 steps."""
    # float32 even where the module's x64 fixture is active
    with jax.enable_x64(False):
        _float32_episode()


def _float32_episode() -> None:
    compiled = gym.make("TwoLinkTrack-v0").unwrapped
    compiled.reset(seed=5)
    env, params = tj.make("TwoLinkTrack-v0")
    assert params.dt.dtype == jnp.float32
    reset = jax.jit(lambda g, x: env.reset_env(jax.random.key(0), params, {"goal": g, "state": x}))
    _, state = reset(jnp.asarray(compiled.goal), jnp.asarray(compiled.state))
    step = jax.jit(env.step_env)
    rng = np.random.default_rng(3)
    worst = 0.0
    for k in range(50):
        a = rng.uniform(-1, 1, 2)
        _, reward, _, _, info = compiled.step(a)
        _, state, reward_j, _, info_j = step(jax.random.key(k), state, jnp.asarray(a), params)
        worst = max(
            worst,
            float(np.max(np.abs(np.asarray(info_j["state"], np.float64) - info["state"]))),
            abs(float(reward_j) - reward),
            abs(float(info_j["rms_error"]) - info["rms_error"]),
            float(np.max(np.abs(np.asarray(info_j["reference"], np.float64) - info["reference"]))),
        )
    assert worst <= 2e-4, worst
