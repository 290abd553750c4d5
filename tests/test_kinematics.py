"""Tests of forward/inverse kinematics, the Jacobian and angle wrapping."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import twolink_gym.kinematics as kin
from twolink_gym import ArmParams

DEFAULT = ArmParams()
UNEQUAL = ArmParams(l1=1.5, l2=0.6, lc1=0.75, lc2=0.3)
bounded = settings(max_examples=50, deadline=None)


def arm(l1, l2):
    return ArmParams(l1=l1, l2=l2, lc1=l1 / 2, lc2=l2 / 2)


def tip_from_spec(l1, l2, q1, q2):
    """docs/physics.md (Kinematics), evaluated with math (scalar, independent of the module)."""
    elbow = (l1 * math.cos(q1), l1 * math.sin(q1))
    tip = (elbow[0] + l2 * math.cos(q1 + q2), elbow[1] + l2 * math.sin(q1 + q2))
    return elbow, tip


# -- forward kinematics --------------------------------------------------------------

S2 = math.sqrt(0.5)


@pytest.mark.parametrize(
    ("l1", "l2", "q", "elbow", "tip"),
    [
        (1.0, 1.0, (0.0, 0.0), (1.0, 0.0), (2.0, 0.0)),
        (1.0, 1.0, (math.pi / 2, 0.0), (0.0, 1.0), (0.0, 2.0)),
        (1.0, 1.0, (-math.pi / 2, 0.0), (0.0, -1.0), (0.0, -2.0)),
        (1.0, 1.0, (math.pi, 0.0), (-1.0, 0.0), (-2.0, 0.0)),
        (1.0, 1.0, (0.0, math.pi), (1.0, 0.0), (0.0, 0.0)),
        (1.5, 0.6, (0.0, math.pi / 2), (1.5, 0.0), (1.5, 0.6)),
        (1.5, 0.6, (math.pi / 2, -math.pi / 2), (0.0, 1.5), (0.6, 1.5)),
        (1.5, 0.6, (math.pi / 2, math.pi), (0.0, 1.5), (0.0, 0.9)),
        (0.4, 2.0, (math.pi / 4, math.pi / 4), (0.4 * S2, 0.4 * S2), (0.4 * S2, 0.4 * S2 + 2.0)),
        (2.0, 0.5, (-math.pi / 2, -math.pi / 2), (0.0, -2.0), (-0.5, -2.0)),
    ],
)
def test_forward_kinematics_hand_cases(l1, l2, q, elbow, tip):
    got_elbow, got_tip = kin.forward_kinematics(arm(l1, l2), q)
    np.testing.assert_allclose(got_elbow, elbow, atol=1e-14)
    np.testing.assert_allclose(got_tip, tip, atol=1e-14)
    np.testing.assert_allclose(kin.tip_position(arm(l1, l2), q), tip, atol=1e-14)


@bounded
@given(st.floats(0.1, 3.0), st.floats(0.1, 3.0), st.floats(-10.0, 10.0), st.floats(-10.0, 10.0))
def test_forward_kinematics_matches_spec_formula(l1, l2, q1, q2):
    elbow, tip = kin.forward_kinematics(arm(l1, l2), [q1, q2])
    want_elbow, want_tip = tip_from_spec(l1, l2, q1, q2)
    np.testing.assert_allclose(elbow, want_elbow, atol=1e-12)
    np.testing.assert_allclose(tip, want_tip, atol=1e-12)
    # link lengths are preserved
    assert np.hypot(*elbow) == pytest.approx(l1)
    assert np.hypot(*(tip - elbow)) == pytest.approx(l2)
    # the distance of the tip from the base depends on q2 only (law of cosines)
    r = math.sqrt(l1**2 + l2**2 + 2 * l1 * l2 * math.cos(q2))
    assert np.hypot(*tip) == pytest.approx(r, abs=1e-12)


# -- inverse kinematics -------------------------------------------------------------


def random_reachable(rng, l1, l2, n):
    r = rng.uniform(abs(l1 - l2) + 1e-6, l1 + l2 - 1e-6, n)
    phi = rng.uniform(-math.pi, math.pi, n)
    return np.stack([r * np.cos(phi), r * np.sin(phi)], -1)


@pytest.mark.parametrize("elbow", ["up", "down"])
def test_inverse_of_forward_is_identity_random(elbow):
    rng = np.random.default_rng(0 if elbow == "up" else 1)
    for _ in range(40):
        l1, l2 = rng.uniform(0.2, 2.0, 2)
        p = arm(l1, l2)
        targets = random_reachable(rng, l1, l2, 25)
        q = kin.inverse_kinematics(p, targets, elbow)
        assert q.shape == (25, 2)
        np.testing.assert_allclose(kin.tip_position(p, q), targets, atol=1e-9 * (l1 + l2))
        if elbow == "up":
            assert np.all(q[:, 1] <= 0.0)
        else:
            assert np.all(q[:, 1] >= 0.0)
        assert np.all((q[:, 0] >= -math.pi) & (q[:, 0] < math.pi))
        assert np.all(np.abs(q[:, 1]) <= math.pi)
        # the two branches have the same elbow-angle magnitude and reach the same point
        other = kin.inverse_kinematics(p, targets, "down" if elbow == "up" else "up")
        np.testing.assert_allclose(np.abs(other[:, 1]), np.abs(q[:, 1]), atol=1e-12)


@bounded
@given(
    st.floats(0.2, 2.0),
    st.floats(0.2, 2.0),
    st.floats(-math.pi, math.pi),
    st.floats(0.05, math.pi - 0.05),
)
def test_forward_of_inverse_recovers_joint_angles(l1, l2, q1, abs_q2):
    p = arm(l1, l2)
    for sign, branch in ((1.0, "down"), (-1.0, "up")):
        q = np.array([q1, sign * abs_q2])
        got = kin.inverse_kinematics(p, kin.tip_position(p, q), branch)
        np.testing.assert_allclose(np.cos(got - q), 1.0, atol=1e-12)
        np.testing.assert_allclose(got[1], q[1], atol=1e-7)


def test_elbow_up_lies_above_the_base_tip_line():
    # for a target to the right of the base, "up" puts the elbow above the line
    p = DEFAULT
    target = np.array([1.2, 0.0])
    up = kin.inverse_kinematics(p, target, "up")
    down = kin.inverse_kinematics(p, target, "down")
    assert kin.forward_kinematics(p, up)[0][1] > 0.0
    assert kin.forward_kinematics(p, down)[0][1] < 0.0


def test_published_worked_example_003():
    # source document 003: l1 = l2 = 1, tip (1.71, 0.30)
    target = [1.71, 0.30]
    down = np.degrees(kin.inverse_kinematics(DEFAULT, target, "down"))
    up = np.degrees(kin.inverse_kinematics(DEFAULT, target, "up"))
    np.testing.assert_allclose(down, [-19.8, 59.5], atol=0.1)
    np.testing.assert_allclose(up, [39.7, -59.5], atol=0.1)


def test_straight_and_folded_targets():
    q = kin.inverse_kinematics(DEFAULT, [0.0, 2.0], "up")
    np.testing.assert_allclose(q, [math.pi / 2, 0.0], atol=1e-7)
    q = kin.inverse_kinematics(UNEQUAL, [0.9, 0.0], "down")  # fully folded, r = l1 - l2
    np.testing.assert_allclose(kin.tip_position(UNEQUAL, q), [0.9, 0.0], atol=1e-9)
    assert abs(q[1]) == pytest.approx(math.pi)


@pytest.mark.parametrize(
    ("params", "target"),
    [
        (DEFAULT, [2.0001, 0.0]),
        (DEFAULT, [1.5, 1.5]),
        (DEFAULT, [0.0, -3.0]),
        (UNEQUAL, [2.2, 0.0]),
        (UNEQUAL, [0.5, 0.0]),  # inside the hole: r < l1 - l2 = 0.9
        (UNEQUAL, [0.0, 0.0]),
        (arm(0.5, 1.5), [0.0, -0.8]),
    ],
)
def test_unreachable_target_raises(params, target):
    for branch in ("up", "down"):
        with pytest.raises(ValueError, match="workspace"):
            kin.inverse_kinematics(params, target, branch)


def test_unreachable_in_batch_raises():
    targets = np.array([[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    with pytest.raises(ValueError, match="workspace"):
        kin.inverse_kinematics(DEFAULT, targets)


@pytest.mark.parametrize(
    ("params", "target", "radius"),
    [
        (DEFAULT, [3.0, 4.0], 2.0),
        (DEFAULT, [0.0, -2.5], 2.0),
        (UNEQUAL, [0.3, 0.4], 0.9),
        (UNEQUAL, [-0.2, 0.0], 0.9),
        (UNEQUAL, [-6.0, 8.0], 2.1),
        (arm(0.5, 1.5), [0.0, 0.5], 1.0),
    ],
)
@pytest.mark.parametrize("branch", ["up", "down"])
def test_clip_returns_nearest_reachable_point(params, target, radius, branch):
    q = kin.inverse_kinematics(params, target, branch, clip=True)
    tip = kin.tip_position(params, q)
    assert np.hypot(*tip) == pytest.approx(radius, abs=1e-9)
    direction = np.asarray(target) / np.hypot(*target)
    np.testing.assert_allclose(tip, radius * direction, atol=1e-7)
    np.testing.assert_allclose(kin.project_to_workspace(params, target), radius * direction)


def test_clip_leaves_reachable_targets_alone():
    rng = np.random.default_rng(4)
    targets = random_reachable(rng, 1.5, 0.6, 30)
    np.testing.assert_allclose(
        kin.inverse_kinematics(UNEQUAL, targets, "down", clip=True),
        kin.inverse_kinematics(UNEQUAL, targets, "down"),
    )
    np.testing.assert_array_equal(kin.project_to_workspace(UNEQUAL, targets), targets)


def test_project_to_workspace():
    p = UNEQUAL  # annulus 0.9 <= r <= 2.1
    pts = np.array([[0.0, 3.0], [1.0, 1.0], [0.1, 0.0], [0.0, 0.0], [-2.1, 0.0], [0.0, -0.9]])
    want = np.array([[0.0, 2.1], [1.0, 1.0], [0.9, 0.0], [0.9, 0.0], [-2.1, 0.0], [0.0, -0.9]])
    got = kin.project_to_workspace(p, pts)
    np.testing.assert_allclose(got, want, atol=1e-15)
    # equal links: the origin is reachable and stays put
    np.testing.assert_array_equal(kin.project_to_workspace(DEFAULT, [0.0, 0.0]), [0.0, 0.0])
    # idempotent and never farther than the input from any reachable point it replaces
    rng = np.random.default_rng(8)
    pts = rng.uniform(-4, 4, (200, 2))
    proj = kin.project_to_workspace(p, pts)
    np.testing.assert_allclose(kin.project_to_workspace(p, proj), proj, atol=1e-14)
    r = np.hypot(proj[:, 0], proj[:, 1])
    assert np.all((r >= 0.9 - 1e-12) & (r <= 2.1 + 1e-12))
    reachable = random_reachable(rng, 1.5, 0.6, 500)
    dist_proj = np.linalg.norm(pts - proj, axis=-1)
    dist_any = np.min(np.linalg.norm(pts[:, None] - reachable[None], axis=-1), axis=1)
    assert np.all(dist_proj <= dist_any + 1e-12)


@pytest.mark.parametrize("branch", ["sideways", "UP", "", None])
def test_bad_elbow_raises(branch):
    with pytest.raises(ValueError, match="elbow"):
        kin.inverse_kinematics(DEFAULT, [1.0, 0.5], branch)


# -- Jacobian and velocities ------------------------------------------------------------


@bounded
@given(st.floats(0.1, 3.0), st.floats(0.1, 3.0), st.floats(-7.0, 7.0), st.floats(-7.0, 7.0))
def test_jacobian_matches_finite_differences(l1, l2, q1, q2):
    p = arm(l1, l2)
    q = np.array([q1, q2])
    jac = kin.jacobian(p, q)
    eps = 1e-6
    fd = np.stack(
        [
            (kin.tip_position(p, q + eps * e) - kin.tip_position(p, q - eps * e)) / (2 * eps)
            for e in np.eye(2)
        ],
        -1,
    )
    np.testing.assert_allclose(jac, fd, atol=1e-8 * (l1 + l2))
    assert np.linalg.det(jac) == pytest.approx(l1 * l2 * math.sin(q2), abs=1e-12)


@pytest.mark.parametrize("q2", [0.0, math.pi, -math.pi])
def test_jacobian_singular_when_straight_or_folded(q2):
    jac = kin.jacobian(UNEQUAL, [0.7, q2])
    assert abs(np.linalg.det(jac)) < 1e-12
    assert np.linalg.matrix_rank(jac, tol=1e-9) == 1


@bounded
@given(
    st.floats(-7.0, 7.0),
    st.floats(-7.0, 7.0),
    st.floats(-5.0, 5.0),
    st.floats(-5.0, 5.0),
)
def test_tip_velocity(q1, q2, dq1, dq2):
    p = UNEQUAL
    q, dq = np.array([q1, q2]), np.array([dq1, dq2])
    v = kin.tip_velocity(p, q, dq)
    np.testing.assert_allclose(v, kin.jacobian(p, q) @ dq, rtol=1e-13, atol=1e-13)
    # d tip / dt along q(t) = q + t dq, by central differences
    h = 1e-6
    fd = (kin.tip_position(p, q + h * dq) - kin.tip_position(p, q - h * dq)) / (2 * h)
    np.testing.assert_allclose(v, fd, atol=1e-7 * (1 + np.max(np.abs(dq))))


# -- angle wrapping ----------------------------------------------------------------------


def _in_range(w):
    w = np.asarray(w)
    return np.all((w >= -math.pi) & (w < math.pi))


@bounded
@given(st.floats(-1e4, 1e4))
def test_wrap_angle_range_and_congruence(a):
    w = kin.wrap_angle(a)
    assert _in_range(w), (a, w)
    assert math.cos(w) == pytest.approx(math.cos(a), abs=1e-9)
    assert math.sin(w) == pytest.approx(math.sin(a), abs=1e-9)
    k = (a - w) / (2 * math.pi)
    assert k == pytest.approx(round(k), abs=1e-9)


def test_wrap_angle_values():
    pi = math.pi
    cases = {
        0.0: 0.0,
        1.0: 1.0,
        -1.0: -1.0,
        pi / 2: pi / 2,
        pi: -pi,
        -pi: -pi,
        3 * pi / 2: -pi / 2,
        -3 * pi / 2: pi / 2,
        2 * pi: 0.0,
        7.0: 7.0 - 2 * pi,
        -7.0: -7.0 + 2 * pi,
    }
    got = kin.wrap_angle(np.array(list(cases)))
    np.testing.assert_allclose(got, list(cases.values()), atol=1e-12)


@pytest.mark.parametrize(
    "a",
    [
        np.nextafter(-math.pi, -np.inf),
        np.nextafter(math.pi, np.inf),
        np.nextafter(math.pi, 0.0),
        np.nextafter(3 * math.pi, np.inf),
        np.nextafter(-3 * math.pi, -np.inf),
        -1e-300,
        1e-300,
    ],
)
def test_wrap_angle_edges_stay_half_open(a):
    # float rounding near the seam must not produce +pi
    w = kin.wrap_angle(a)
    assert _in_range(w), (a, w)
    assert math.cos(w) == pytest.approx(math.cos(a), abs=1e-12)
    assert math.sin(w) == pytest.approx(math.sin(a), abs=1e-12)


def test_wrap_angle_batched():
    a = np.random.default_rng(2).uniform(-50, 50, (3, 4, 5))
    w = kin.wrap_angle(a)
    assert w.shape == a.shape
    assert _in_range(w)
    for idx in np.ndindex(*a.shape):
        assert w[idx] == kin.wrap_angle(a[idx])


# -- batching and bad input ----------------------------------------------------------------


def _outputs(out):
    return out if isinstance(out, tuple) else (out,)


CALLS = {
    "forward_kinematics": (lambda p, a, b: kin.forward_kinematics(p, a), ((2,), (2,))),
    "tip_position": (lambda p, a, b: kin.tip_position(p, a), ((2,),)),
    "jacobian": (lambda p, a, b: kin.jacobian(p, a), ((2, 2),)),
    "tip_velocity": (kin.tip_velocity, ((2,),)),
    "project_to_workspace": (lambda p, a, b: kin.project_to_workspace(p, 3 * a), ((2,),)),
    "ik_up": (lambda p, a, b: kin.inverse_kinematics(p, a, "up", clip=True), ((2,),)),
    "ik_down": (lambda p, a, b: kin.inverse_kinematics(p, 2 * a, "down", clip=True), ((2,),)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("lead", [(), (5,), (3, 4)])
def test_batched_equals_loop(name, lead):
    func, shapes = CALLS[name]
    rng = np.random.default_rng(31)
    a = rng.uniform(-2, 2, (*lead, 2))
    b = rng.uniform(-2, 2, (*lead, 2))
    outs = _outputs(func(UNEQUAL, a, b))
    for out, shape in zip(outs, shapes, strict=True):
        assert out.shape == (*lead, *shape)
    for idx in np.ndindex(*lead):
        singles = _outputs(func(UNEQUAL, a[idx], b[idx]))
        for out, single in zip(outs, singles, strict=True):
            np.testing.assert_allclose(out[idx], single, rtol=1e-13, atol=1e-13)


def test_tip_velocity_broadcasts_q_against_batched_dq():
    q = np.array([0.3, 1.1])
    dq = np.random.default_rng(5).uniform(-2, 2, (6, 2))
    v = kin.tip_velocity(UNEQUAL, q, dq)
    assert v.shape == (6, 2)
    for i in range(6):
        np.testing.assert_allclose(v[i], kin.tip_velocity(UNEQUAL, q, dq[i]), atol=1e-14)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: kin.forward_kinematics(DEFAULT, [0.0, 0.0, 0.0]), "q"),
        (lambda: kin.tip_position(DEFAULT, np.zeros((4, 3))), "q"),
        (lambda: kin.jacobian(DEFAULT, 0.5), "q"),
        (lambda: kin.tip_velocity(DEFAULT, [0.0, 0.0], [1.0]), "dq"),
        (lambda: kin.tip_velocity(DEFAULT, [0.0], [1.0, 0.0]), "q"),
        (lambda: kin.inverse_kinematics(DEFAULT, [1.0, 0.0, 0.0]), "tip_xy"),
        (lambda: kin.project_to_workspace(DEFAULT, [1.0]), "point_xy"),
        (lambda: kin.forward_kinematics(DEFAULT, ["a", "b"]), "q"),
        (lambda: kin.inverse_kinematics(DEFAULT, np.array([None, None])), "tip_xy"),
    ],
)
def test_bad_input_raises_naming_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()


# -- Jacobian derivative -------------------------------------------------------------


@pytest.mark.parametrize("params", [DEFAULT, UNEQUAL], ids=["default", "unequal"])
def test_jacobian_derivative_matches_finite_differences_along_a_motion(params):
    rng = np.random.default_rng(3)
    q, dq = rng.uniform(-3, 3, (20, 2)), rng.uniform(-4, 4, (20, 2))
    h = 1e-6
    fd = (kin.jacobian(params, q + h * dq) - kin.jacobian(params, q - h * dq)) / (2 * h)
    np.testing.assert_allclose(kin.jacobian_derivative(params, q, dq), fd, atol=1e-7)
    assert kin.jacobian_derivative(params, q[0], dq).shape == (20, 2, 2)  # broadcasts
