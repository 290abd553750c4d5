"""The JAX twin reproduces the compiled env (states, rewards, terms, flags, observations).

Reference: the Gymnasium env (``gym.make``), the numba-compiled step kernel.
Under ``jax.enable_x64(True)``, from the compiled env's own episode start (its
state and goal given to the twin through ``reset(options=...)``) and the same
actions (uniform in ``[-1.2, 1.2]``: clipping included), the twin's free
rollout matches every step of the episode to ``TOL`` (relative to
``max(1, |value|)``): the state, the tip, the reward, every reported reward
term, the distance, the time, termination, success and truncation, and the
observation (its float64 entries against the encoding of the compiled state
and the compiled goal; the float32 observation to half a float32 ulp).

Chaotic episodes (:data:`TEACHER_FORCED`: random torques on a swinging arm
amplify the last-bit differences between numba's and XLA's ``sin``/``cos``):
the free rollout is held to ``TOL`` for the case's first ``free_steps`` steps,
and every step of the episode is compared one step at a time from the
compiled env's own state, memory and step count (teacher-forced). Measured
(free rollout, first step past 1e-12): the RealAIGym acrobot at step 376, the
RealAIGym pendubot at 605, the pendubot's swing-up at 665 (of 750); the other
episodes hold to the end (the full arm's swing-up: 1.0e-14).

Float32 (the twin's default): the same rollouts, held to :data:`F32_TOL` over
the first ``F32_STEPS`` steps.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

import twolink_gym  # noqa: E402, F401
import twolink_gym.jax as tj  # noqa: E402
from twolink_gym.realaigym.arm import arm as realaigym_arm  # noqa: E402

TOL = 1e-12
F32_TOL = 2e-4
F32_STEPS = 50

_RAG = {"params": realaigym_arm(), "dt": 0.01, "substeps": 5, "max_torque": 6.0}


@dataclasses.dataclass(frozen=True)
class Case:
    env_id: str
    kwargs: dict[str, Any]
    steps: int  # actions drawn (the episode may end earlier)
    start: tuple[float, float, float, float] | None = None  # reset state, or the env's draw
    free_steps: int | None = None  # None: the whole episode free; else teacher-forced too


CASES = {
    "reach": Case("TwoLinkReach-v0", {"task_options": {"speed_weight": 0.05}}, 200),
    "reach-sparse": Case("TwoLinkReach-v0", {"task_options": {"sparse": True}}, 200),
    "balance": Case("TwoLinkBalance-v0", {}, 500),
    "balance-acrobot": Case("TwoLinkAcrobotBalance-v0", {}, 500),
    "balance-pendubot": Case("TwoLinkPendubotBalance-v0", {}, 500),
    "balance-settings": Case(
        "TwoLink-v0",
        {"task": "balance", "dt": 0.01, "substeps": 3, "max_speed": 2.0, "max_episode_steps": 40},
        60,
    ),
    "swingup": Case("TwoLinkSwingup-v0", {}, 750),
    "swingup-acrobot-fall": Case(
        "TwoLinkAcrobotSwingup-v0",
        {"task_options": {"fall_angle": 0.6, "smooth_weight": 0.5}},
        750,
        start=(np.pi / 2 + 0.05, -0.05, 0.0, 0.1),
    ),
    "swingup-pendubot": Case("TwoLinkPendubotSwingup-v0", {}, 750, free_steps=500),
    "realaigym-acrobot": Case("TwoLinkAcrobotSwingup-v0", _RAG, 750, free_steps=300),
    "realaigym-pendubot": Case("TwoLinkPendubotSwingup-v0", _RAG, 750, free_steps=500),
    # the v3 training reward: the tip above the line
    "realaigym-pendubot-line": Case(
        "TwoLinkPendubotSwingup-v0",
        {**_RAG, "task_options": {"line_weight": 0.5, "ctrl_weight": 0.0}},
        750,
        free_steps=500,
        start=(np.pi / 2 + 0.05, -0.05, 0.0, 0.1),  # above the line, then through it
    ),
    # ... paid only unwound (the elbow starts a turn round), and the turns observed
    "realaigym-pendubot-wound": Case(
        "TwoLinkPendubotSwingup-v0",
        {
            **_RAG,
            "task_options": {
                "line_weight": 0.5,
                "wound_weight": 0.7,
                "wound_shaped_weight": 0.6,
                "ctrl_weight": 0.0,
                "observe_turns": True,
            },
        },
        750,
        free_steps=100,
        start=(np.pi / 2 + 0.05, 2 * np.pi - 0.05, 0.0, 0.1),
    ),
    # the C.1/1.0 motors: rotor inertia and Coulomb friction (the twin's Coulomb terms on)
    "realaigym-c10-acrobot": Case(
        "TwoLinkAcrobotSwingup-v0",
        {**_RAG, "params": realaigym_arm("C.1/1.0")},
        750,
        free_steps=300,
    ),
}
#: The cases compared teacher-forced beyond their first free steps.
TEACHER_FORCED = sorted(name for name, case in CASES.items() if case.free_steps is not None)


@dataclasses.dataclass
class Reference:
    """The compiled env's episode: per step after it (``T`` steps), and its start."""

    start: np.ndarray  # (4,)
    goal: np.ndarray  # (g,)
    obs0: np.ndarray  # (obs,) float32
    dist0: float
    actions: np.ndarray  # (T, action_size), as given (unclipped)
    obs: np.ndarray  # (T, obs) float32
    info: dict[str, np.ndarray]  # (T, ...) per entry
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray


def reference(case: Case, seed: int = 0) -> Reference:
    """Run the compiled env until the episode ends (or the case's steps)."""
    env = gym.make(case.env_id, **case.kwargs)
    options = None if case.start is None else {"state": np.asarray(case.start)}
    obs0, info0 = env.reset(seed=seed, options=options)
    base = env.unwrapped
    start, goal = base.state, base.goal
    rng = np.random.default_rng(seed + 1)
    actions = rng.uniform(-1.2, 1.2, (case.steps, env.action_space.shape[0]))
    obs, infos, rewards, terms, truncs = [], [], [], [], []
    for a in actions:
        o, r, te, tr, info = env.step(a)
        obs.append(o)
        infos.append(info)
        rewards.append(r)
        terms.append(te)
        truncs.append(tr)
        if te or tr:
            break
    n = len(rewards)
    keys = [k for k in infos[0] if k != "params"]
    return Reference(
        start=start,
        goal=goal,
        obs0=obs0,
        dist0=float(info0["distance"]),
        actions=actions[:n],
        obs=np.array(obs),
        info={k: np.array([i[k] for i in infos]) for k in keys},
        reward=np.array(rewards),
        terminated=np.array(terms),
        truncated=np.array(truncs),
    )


def _reset_options(env: Any, ref: Reference) -> dict[str, Any]:
    options: dict[str, Any] = {"state": jnp.asarray(ref.start)}
    if env.task.goal_size:
        options["goal"] = jnp.asarray(ref.goal)
    return options


def rollout(case: Case, ref: Reference) -> tuple[Any, Any, dict[str, np.ndarray]]:
    """The twin's free rollout from the reference's start: initial obs, per-step outputs."""
    env, params = tj.make(case.env_id, **case.kwargs)
    # eager reset (no compile of its own); the steps scanned under one jit
    obs0, state = env.reset_env(jax.random.key(0), params, _reset_options(env, ref))

    @jax.jit
    def run(state: Any, actions: Any) -> Any:
        def body(s: Any, a: Any) -> Any:
            o, s, r, d, info = env.step_env(jax.random.key(0), s, a, params)
            return s, (o, r, d, info)

        return jax.lax.scan(body, state, actions)[1]

    obs, reward, done, info = run(state, jnp.asarray(ref.actions, params.dt.dtype))
    out = {k: np.asarray(v) for k, v in info.items()}
    out["obs"] = np.asarray(obs)
    out["reward"] = np.asarray(reward)
    out["done"] = np.asarray(done)
    return np.asarray(obs0), env, out


def close(a: Any, b: Any, tol: float) -> float:
    """The largest ``|a - b| / max(1, |b|)`` (0 for empty arrays)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b))))


def encode(state: np.ndarray) -> np.ndarray:
    """``[cos q1, sin q1, cos q2, sin q2, dq1, dq2]`` of states ``(T, 4)`` (numpy, float64)."""
    q1, q2 = state[..., 0], state[..., 1]
    return np.stack(
        [np.cos(q1), np.sin(q1), np.cos(q2), np.sin(q2), state[..., 2], state[..., 3]], -1
    )


def extras_of(
    env: Any, state: np.ndarray, info: dict[str, np.ndarray], goal: np.ndarray
) -> np.ndarray:
    """The observation extras from the compiled env's info (reach: target, target - tip;
    swing-up with ``observe_turns``: the angles in turns)."""
    if env.task.name == "reach":
        target = np.broadcast_to(goal, info["tip"].shape)
        return np.concatenate([target, target - info["tip"]], -1)
    if env.task.name == "swingup" and env.task.observe_turns:
        return state[..., :2] / (2 * np.pi)
    return np.zeros((len(state), 0))


def compare(
    env: Any, ref: Reference, twin: dict[str, np.ndarray], n: int, tol: float
) -> dict[str, float]:
    """Errors of the twin's first ``n`` steps against the reference; flags must agree exactly."""
    errors = {
        "state": close(twin["state"][:n], ref.info["state"][:n], tol),
        "tip": close(twin["tip"][:n], ref.info["tip"][:n], tol),
        "reward": close(twin["reward"][:n], ref.reward[:n], tol),
        "distance": close(twin["distance"][:n], ref.info["distance"][:n], tol),
        "time": close(twin["time"][:n], ref.info["time"][:n], tol),
    }
    reported = [name for name, _ in env.task.reported_columns]
    assert sorted(k for k in ref.info if k.startswith("reward_")) == sorted(reported)
    for name in reported:
        errors[name] = close(twin[name][:n], ref.info[name][:n], tol)
    if "target" in ref.info:
        errors["target"] = close(twin["target"][:n], ref.info["target"][:n], tol)
    expected_obs = np.concatenate(
        [
            encode(ref.info["state"][:n]),
            extras_of(
                env, ref.info["state"][:n], {k: v[:n] for k, v in ref.info.items()}, ref.goal
            ),
        ],
        -1,
    )
    errors["obs"] = close(twin["obs"][:n], expected_obs, tol)
    np.testing.assert_array_equal(twin["is_success"][:n], ref.info["is_success"][:n])
    np.testing.assert_array_equal(twin["terminated"][:n], ref.terminated[:n])
    np.testing.assert_array_equal(twin["truncated"][:n], ref.truncated[:n])
    np.testing.assert_array_equal(twin["done"][:n], ref.terminated[:n] | ref.truncated[:n])
    return errors


@pytest.fixture
def x64() -> Any:
    """JAX in float64 for one test (the rest of the suite keeps the default)."""
    with jax.enable_x64(True):
        yield


@pytest.mark.parametrize("name", sorted(CASES))
def test_twin_reproduces_compiled_env_x64(name: str, x64: Any) -> None:
    case = CASES[name]
    ref = reference(case)
    obs0, env, twin = rollout(case, ref)
    assert twin["state"].dtype == np.float64
    n = len(ref.reward)
    # the episode start: the reset observation from the same state and goal
    assert close(obs0[:6], encode(ref.start), TOL) <= TOL
    assert np.max(np.abs(obs0.astype(np.float32) - ref.obs0)) <= 2.0**-24 * np.max(np.abs(ref.obs0))
    free = n if case.free_steps is None else min(n, case.free_steps)
    errors = compare(env, ref, twin, free, TOL)
    worst = max(errors.values())
    assert worst <= TOL, {k: v for k, v in errors.items() if v > TOL}
    # the float32 observation the agent sees: the compiled env's, up to half an ulp
    half_ulp = np.spacing(np.abs(ref.obs[:free]).astype(np.float32)) / 2
    assert np.all(
        np.abs(twin["obs"][:free].astype(np.float32) - ref.obs[:free]) <= half_ulp + 1e-30
    )
    if case.free_steps is not None:
        teacher_forced(case, env, ref)


def teacher_forced(case: Case, env: Any, ref: Reference) -> None:
    """Each step from the compiled env's own state, memory and step count (all ``T`` steps)."""
    params = env.default_params
    n = len(ref.reward)
    states = np.concatenate([ref.start[None], ref.info["state"][:-1]])
    steps = np.arange(n, dtype=np.int32)
    applied = np.clip(ref.actions, -1.0, 1.0)
    full = np.zeros((n, 2))
    full[:, list(env.actuated)] = applied
    previous = np.concatenate([np.zeros((1, 2)), full[:-1]])
    memory = env.twin.initial_memory(params.dt.dtype)
    if memory._fields:  # swing-up: (was_up, a1, a2), from the compiled distances and actions
        fall = env.task.fall_angle
        dists = np.concatenate([[ref.dist0], ref.info["distance"][:-1]])
        was_up = np.maximum.accumulate(dists <= fall).astype(np.float64)
        memory = type(memory)(
            jnp.asarray(was_up), jnp.asarray(previous[:, 0]), jnp.asarray(previous[:, 1])
        )
    _, state0 = env.reset_env(jax.random.key(0), params, _reset_options(env, ref))
    batch = jax.tree.map(lambda a: jnp.broadcast_to(a, (n, *jnp.shape(a))), state0)
    batch = batch.replace(
        x=jnp.asarray(states), steps=jnp.asarray(steps), memory=memory, action=jnp.asarray(previous)
    )
    step = jax.jit(jax.vmap(lambda s, a: env.step_env(jax.random.key(0), s, a, params)))
    obs, _, reward, done, info = step(batch, jnp.asarray(ref.actions))
    twin = {k: np.asarray(v) for k, v in info.items()}
    twin.update(obs=np.asarray(obs), reward=np.asarray(reward), done=np.asarray(done))
    errors = compare(env, ref, twin, n, TOL)
    assert max(errors.values()) <= TOL, {k: v for k, v in errors.items() if v > TOL}


@pytest.mark.parametrize("name", ["reach", "realaigym-acrobot"])
def test_twin_float32_within_tolerance(name: str) -> None:
    """The default float32 twin follows the compiled float64 env to F32_TOL over F32_STEPS steps."""
    case = dataclasses.replace(CASES[name], steps=F32_STEPS)
    ref = reference(case)
    _obs0, env, twin = rollout(case, ref)
    assert twin["state"].dtype == np.float32
    errors = compare(env, ref, twin, len(ref.reward), F32_TOL)
    assert max(errors.values()) <= F32_TOL, errors


def test_tip_from_trig_is_the_forward_kinematics_of_the_arm() -> None:
    """The twin's tip (``twolink_gym.jax.kinematics``) against numpy's forward kinematics.

    On random arms and angles, batched through ``jit(vmap(...))``: the same point to 1e-12
    in float64, whatever the link lengths; an arm with the links swapped moves the tip.
    """
    from twolink_gym.jax.kinematics import tip_from_trig
    from twolink_gym.jax.params import arm_of
    from twolink_gym.kinematics import tip_position
    from twolink_gym.params import ArmParams

    rng = np.random.default_rng(7)
    q = rng.uniform(-4 * np.pi, 4 * np.pi, size=(500, 2))
    with jax.enable_x64(True):
        for l1, l2 in ((1.0, 1.0), (0.2, 0.3), (0.7, 0.05)):
            params = ArmParams(l1=l1, l2=l2, lc1=l1 / 2, lc2=l2 / 2)
            arm = arm_of(params, jax.numpy.float64)

            @jax.jit
            @jax.vmap
            def tip(qi: Any, arm: Any = arm) -> Any:
                q12 = qi[0] + qi[1]
                trig = (jax.numpy.cos(qi[0]), jax.numpy.sin(qi[0]))
                trig12 = (jax.numpy.cos(q12), jax.numpy.sin(q12))
                return jax.numpy.stack(tip_from_trig(arm, trig[0], trig[1], *trig12))

            got = np.asarray(tip(jax.numpy.asarray(q)))
            np.testing.assert_allclose(got, tip_position(params, q), rtol=0, atol=1e-12)
            if l1 != l2:
                swapped = tip_position(ArmParams(l1=l2, l2=l1, lc1=l2 / 2, lc2=l1 / 2), q)
                assert np.max(np.abs(got - swapped)) > 0.1 * abs(l1 - l2)
