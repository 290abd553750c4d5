"""Tests of the RK4 integrator: energy drift, convergence order, power balance."""

import itertools
import math

import numpy as np
import pytest
from reference_rk4 import numpy_rk4
from scipy.integrate import simpson, solve_ivp

from twolink_gym import ArmParams, state_derivative, step, total_energy
from twolink_gym.dynamics import arm_vector, has_coulomb
from twolink_gym.integrators import rk4

DEFAULT = ArmParams()
FRICTIONLESS = DEFAULT.replace(friction1=0.0, friction2=0.0)
X0_CHAOTIC = np.array([0.3, -0.5, 0.0, 0.0])  # docs/physics.md: a chaotic free swing
DT = 0.02
SUBSTEPS = (1, 2, 4, 8, 16)


def random_params(rng):
    m1, m2 = rng.uniform(0.2, 3.0, 2)
    l1, l2 = rng.uniform(0.3, 1.5, 2)
    lc1, lc2 = l1 * rng.uniform(0.2, 1.0), l2 * rng.uniform(0.2, 1.0)
    i1, i2 = rng.uniform(0.01, 0.3, 2)
    fr1, fr2 = rng.uniform(0.05, 0.5, 2)
    return ArmParams(m1, m2, l1, l2, lc1, lc2, i1, i2, rng.uniform(1.0, 15.0), fr1, fr2)


def _max_relative_drift(params, x0, dt, substeps, duration=10.0):
    e0 = float(total_energy(params, x0))
    x = np.array(x0, dtype=float)
    worst = 0.0
    for _ in range(round(duration / dt)):
        x = step(params, x, [0.0, 0.0], dt, substeps)
        worst = max(worst, abs(float(total_energy(params, x)) - e0) / abs(e0))
    return worst


@pytest.fixture(scope="module")
def drift():
    """Max relative energy drift over 10 s, tau = 0, no friction, 20 ms control steps."""
    return {n: _max_relative_drift(FRICTIONLESS, X0_CHAOTIC, DT, n) for n in SUBSTEPS}


# -- energy conservation -----------------------------------------------------------


def test_chaotic_swing_is_energetic():
    # the test case is a real swing, not a small oscillation about the bottom
    e0 = float(total_energy(FRICTIONLESS, X0_CHAOTIC))
    e_bottom = float(total_energy(FRICTIONLESS, [-math.pi / 2, 0.0, 0.0, 0.0]))
    assert e0 - e_bottom > 20.0
    x = X0_CHAOTIC
    trajectory = []
    for _ in range(500):
        x = step(FRICTIONLESS, x, [0.0, 0.0], DT, 4)
        trajectory.append(x)
    spread = np.ptp(np.array(trajectory), axis=0)
    assert spread[0] > math.pi  # link 1 swings through more than half a turn
    assert spread[1] > 1.0
    assert np.all(spread[2:] > 5.0)


@pytest.mark.parametrize(
    ("substeps", "bound"),
    [
        (1, 6e-4),  # 20 ms sub-steps; README: 2.7e-4
        (2, 2e-5),  # 10 ms; README: 9.1e-6
        (4, 1e-6),  # 5 ms; README: 3.0e-7
    ],
)
def test_energy_drift_within_spec(drift, substeps, bound):
    assert drift[substeps] < bound, drift


def test_energy_drift_has_fourth_order_convergence(drift):
    # halving the sub-step should cut the drift by about 2**4 (between 2**3 and 2**5)
    for coarse, fine in itertools.pairwise(SUBSTEPS):
        ratio = drift[coarse] / drift[fine]
        assert 8.0 < ratio < 32.0, (coarse, fine, ratio, drift)


def test_energy_drift_same_for_equivalent_step_splits():
    # dt = 0.01 with one sub-step is the same integration as dt = 0.02 with two
    assert _max_relative_drift(FRICTIONLESS, X0_CHAOTIC, 0.01, 1) == pytest.approx(
        _max_relative_drift(FRICTIONLESS, X0_CHAOTIC, 0.02, 2), rel=0.05
    )


# -- convergence against a high-accuracy reference -----------------------------------


def test_rk4_converges_at_fourth_order_to_reference():
    tau = np.array([1.5, -0.7])
    x0 = np.array([0.3, -0.5, 0.4, -0.2])
    sol = solve_ivp(
        lambda _t, x: state_derivative(DEFAULT, x, tau),
        (0.0, 1.0),
        x0,
        method="DOP853",
        rtol=1e-12,
        atol=1e-12,
    )
    assert sol.success
    reference = sol.y[:, -1]
    errors = {}
    for substeps in (1, 2, 4, 8):
        x = x0
        for _ in range(50):
            x = step(DEFAULT, x, tau, 0.02, substeps)
        errors[substeps] = float(np.max(np.abs(x - reference)))
    for coarse, fine in ((1, 2), (2, 4), (4, 8)):
        ratio = errors[coarse] / errors[fine]
        assert 12.0 < ratio < 20.0, (coarse, fine, ratio, errors)
    assert errors[4] < 1e-6, errors  # 5 ms sub-steps
    assert errors[8] > 1e-10  # the reference is far more accurate than what is measured


# -- dissipation and power balance ---------------------------------------------------


def test_friction_never_increases_energy():
    x = X0_CHAOTIC.copy()
    energies = [float(total_energy(DEFAULT, x))]
    for _ in range(1000):  # 10 s at 10 ms
        x = step(DEFAULT, x, [0.0, 0.0], 0.01, 1)
        energies.append(float(total_energy(DEFAULT, x)))
    energies = np.array(energies)
    increase = np.diff(energies)
    assert np.all(increase <= 1e-12 * np.maximum(1.0, np.abs(energies[1:]))), increase.max()
    assert energies[-1] < energies[0] - 1.0  # and it does dissipate


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_energy_change_equals_work_done(seed):
    rng = np.random.default_rng(seed)
    params = DEFAULT if seed == 0 else random_params(rng)
    n, dt, steps = 6, 1e-3, 2000  # 2 s
    x = np.concatenate([rng.uniform(-math.pi, math.pi, (n, 2)), rng.uniform(-2, 2, (n, 2))], -1)
    tau = rng.uniform(-3.0, 3.0, (n, 2))
    fric = np.array([params.friction1, params.friction2])

    def power(state):
        dq = state[..., 2:]
        return np.sum(dq * (tau - fric * dq), axis=-1)

    e_start = total_energy(params, x)
    powers = [power(x)]
    for _ in range(steps):
        x = step(params, x, tau, dt)
        powers.append(power(x))
    powers = np.array(powers)
    work = simpson(powers, dx=dt, axis=0)
    change = total_energy(params, x) - e_start
    scale = simpson(np.abs(powers), dx=dt, axis=0) + 1.0
    np.testing.assert_array_less(np.abs(change - work), 1e-8 * scale)
    assert np.all(np.abs(work) > 1e-3)  # the check is not vacuous


# -- the scalar path and batching ----------------------------------------------------


@pytest.mark.parametrize("substeps", [1, 2, 3, 4])
def test_rk4_kernel_and_step_equal_anumpy_rk4(substeps):
    rng = np.random.default_rng(100 + substeps)
    for _ in range(25):
        params = random_params(rng)
        x = np.concatenate([rng.uniform(-4, 4, 2), rng.uniform(-6, 6, 2)])
        tau = rng.uniform(-10, 10, 2)
        dt = rng.uniform(0.001, 0.05)
        got = rk4(arm_vector(params), *x.tolist(), *tau.tolist(), dt, substeps)
        assert isinstance(got, tuple)
        assert len(got) == 4
        assert all(isinstance(v, float) for v in got)
        want = numpy_rk4(params, x, tau, dt, substeps)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(step(params, x, tau, dt, substeps), want, rtol=1e-12, atol=1e-12)


# arms with and without Coulomb friction (rk4 runs the Coulomb terms only for the former)
COULOMB_ARMS = {
    "none": DEFAULT,
    "both_joints": DEFAULT.replace(coulomb1=0.16, coulomb2=0.12),
    "joint1": DEFAULT.replace(coulomb1=0.3),
    "joint2": DEFAULT.replace(coulomb2=0.3),
    "rotor_only": DEFAULT.replace(rotor_inertia=6.3e-5, gear_ratio=6.0),
    "rotor_and_coulomb": DEFAULT.replace(
        rotor_inertia=6.3e-5, gear_ratio=6.0, coulomb1=0.2, coulomb2=0.1
    ),
}


@pytest.mark.parametrize("name", COULOMB_ARMS)
def test_rk4_runs_the_coulomb_terms_for_exactly_the_arms_that_have_them(name):
    params = COULOMB_ARMS[name]
    arm = arm_vector(params)
    coulomb = params.coulomb1 != 0.0 or params.coulomb2 != 0.0
    assert has_coulomb(arm) is coulomb
    without = params.replace(coulomb1=0.0, coulomb2=0.0)
    rng = np.random.default_rng(31)
    for _ in range(20):
        x = np.concatenate([rng.uniform(-4, 4, 2), rng.uniform(-6, 6, 2)])
        tau = rng.uniform(-10, 10, 2)
        got = np.array(rk4(arm, *x.tolist(), *tau.tolist(), DT, 2))
        # the numpy RK4 over the full vector field (Coulomb terms whenever cf != 0)
        want = numpy_rk4(params, x, tau, DT, 2)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(step(params, x, tau, DT, 2), want, rtol=1e-12, atol=1e-12)
        if coulomb:  # the Coulomb terms were run: leaving them out is far off
            assert np.max(np.abs(got - numpy_rk4(without, x, tau, DT, 2))) > 1e-4


def test_rk4_kernel_conserves_like_step():
    x = tuple(X0_CHAOTIC)
    arm = arm_vector(FRICTIONLESS)
    for _ in range(100):
        x = rk4(arm, *x, 0.0, 0.0, DT, 4)
    e0 = float(total_energy(FRICTIONLESS, X0_CHAOTIC))
    assert abs(float(total_energy(FRICTIONLESS, np.array(x))) - e0) < 1e-6 * abs(e0)


@pytest.mark.parametrize("lead", [(), (5,), (3, 4)])
def test_batched_step_equals_loop(lead):
    rng = np.random.default_rng(len(lead) + 7)
    params = random_params(rng)
    x = rng.uniform(-3, 3, (*lead, 4))
    tau = rng.uniform(-5, 5, (*lead, 2))
    out = step(params, x, tau, 0.02, 3)
    assert out.shape == (*lead, 4)
    assert out.dtype == np.float64
    for idx in np.ndindex(*lead):
        np.testing.assert_allclose(out[idx], step(params, x[idx], tau[idx], 0.02, 3), atol=1e-12)
    # one torque for the whole batch
    out = step(params, x, tau[(0,) * len(lead)], 0.02, 2)
    for idx in np.ndindex(*lead):
        single = step(params, x[idx], tau[(0,) * len(lead)], 0.02, 2)
        np.testing.assert_allclose(out[idx], single, atol=1e-12)


def test_step_does_not_modify_input():
    x = np.array([0.1, 0.2, 0.3, 0.4])
    copy = x.copy()
    step(DEFAULT, x, [1.0, 1.0], 0.01, 2)
    np.testing.assert_array_equal(x, copy)


def test_step_is_a_flow_composition():
    # substeps=k over dt is exactly k single steps over dt/k
    x = np.array([0.3, -0.5, 1.0, -2.0])
    tau = np.array([0.5, 0.2])
    once = step(DEFAULT, x, tau, 0.03, 3)
    three = x
    for _ in range(3):
        three = step(DEFAULT, three, tau, 0.01, 1)
    np.testing.assert_allclose(once, three, rtol=1e-13, atol=1e-13)


# -- bad input -----------------------------------------------------------------------


@pytest.mark.parametrize("dt", [0.0, -0.01, math.nan, math.inf, -math.inf, "0.01", None])
def test_bad_dt_raises(dt):
    with pytest.raises(ValueError, match="dt"):
        step(DEFAULT, X0_CHAOTIC, [0.0, 0.0], dt)


@pytest.mark.parametrize("substeps", [0, -1, 1.5, 2.0, True, "2", None])
def test_bad_substeps_raises(substeps):
    with pytest.raises(ValueError, match="substeps"):
        step(DEFAULT, X0_CHAOTIC, [0.0, 0.0], 0.01, substeps)


def test_numpy_integer_substeps_accepted():
    out = step(DEFAULT, X0_CHAOTIC, [0.0, 0.0], 0.02, np.int64(2))
    np.testing.assert_array_equal(out, step(DEFAULT, X0_CHAOTIC, [0.0, 0.0], 0.02, 2))


@pytest.mark.parametrize(
    ("state", "tau", "name"),
    [
        (np.zeros(3), np.zeros(2), "state"),
        (np.zeros(5), np.zeros(2), "state"),
        (np.zeros((2, 5)), np.zeros(2), "state"),
        (np.float64(0.0), np.zeros(2), "state"),
        (np.array(["a", "b", "c", "d"]), np.zeros(2), "state"),
        (np.zeros(4), np.zeros(3), "tau"),
        (np.zeros(4), np.zeros((4, 1)), "tau"),
    ],
)
def test_bad_shapes_raise(state, tau, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        step(DEFAULT, state, tau, 0.01)
