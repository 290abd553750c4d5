"""Tests of the tip paths, the workspace check, the sampler and the joint reference."""

import math
import re

import numpy as np
import pytest
from benchmark_scripts import load_benchmark

import twolink_gym.kinematics as kin
from twolink_gym import ArmParams
from twolink_gym.paths import (
    FAMILIES,
    PATH_NAMES,
    Circle,
    Lissajous,
    LoopingPath,
    SampledPath,
    check_in_workspace,
    figure_eight,
    joint_reference,
    make_path,
    sample_path,
)

LOOPING_ARM = ArmParams.uniform_rods(m1=1.0, m2=10.0, l1=0.5, l2=0.5, friction1=0.0, friction2=0.0)
UNEQUAL = ArmParams(l1=1.5, l2=0.6, lc1=0.75, lc2=0.3)

ANALYTIC = [
    Circle(centre=(0.3, -0.2), radius=0.4, period=7.0, direction=1, phase=0.3),
    Circle(centre=(0.3, -0.2), radius=0.4, period=7.0, direction=-1, phase=-2.0),
    Lissajous(centre=(0.1, 0.2), ax=0.3, ay=0.2, fx=3, fy=2, phase=0.7, period=9.0),
    figure_eight(centre=(0.5, 0.0), width=0.6, height=0.4, period=5.0),
    LoopingPath(),
    LoopingPath(centre=(0.1, 0.1), radius=0.5, loop_radius=0.1, loops=5, period=20.0),
]


# -- analytic derivatives ------------------------------------------------------------


@pytest.mark.parametrize("path", ANALYTIC, ids=repr)
def test_derivatives_match_central_differences_of_position(path):
    t = np.linspace(0.0, path.duration, 97)
    h = 1e-4
    fd_v = (path.position(t + h) - path.position(t - h)) / (2 * h)
    fd_a = (path.position(t + h) - 2 * path.position(t) + path.position(t - h)) / h**2
    v_scale = np.abs(path.velocity(t)).max()
    a_scale = np.abs(path.acceleration(t)).max()
    np.testing.assert_allclose(path.velocity(t), fd_v, rtol=0, atol=1e-7 * v_scale)
    np.testing.assert_allclose(path.acceleration(t), fd_a, rtol=0, atol=1e-5 * a_scale)


@pytest.mark.parametrize("path", ANALYTIC, ids=repr)
def test_paths_are_periodic_and_vectorised(path):
    t = np.array([[0.0, 0.37], [1.2, 2.5]])
    assert path.position(t).shape == (2, 2, 2)
    assert path.position(0.0).shape == (2,)
    np.testing.assert_allclose(path.position(t + path.duration), path.position(t), atol=1e-12)
    np.testing.assert_allclose(path.velocity(t + path.duration), path.velocity(t), atol=1e-12)


@pytest.mark.parametrize("direction", [1, -1])
def test_circle_radius_speed_and_direction_are_constant(direction):
    c = Circle(centre=(0.2, 0.1), radius=0.3, period=4.0, direction=direction, phase=1.0)
    t = np.linspace(0.0, 8.0, 501)
    rel, v, a = c.position(t) - [0.2, 0.1], c.velocity(t), c.acceleration(t)
    omega = 2 * math.pi / 4.0
    np.testing.assert_allclose(np.hypot(*rel.T), 0.3, rtol=1e-14)
    np.testing.assert_allclose(np.hypot(*v.T), 0.3 * omega, rtol=1e-14)
    assert c.speed == pytest.approx(0.3 * omega)
    np.testing.assert_allclose(a, -(omega**2) * rel, atol=1e-14)  # centripetal
    # counter-clockwise: angular momentum about the centre has the sign of ``direction``
    cross = rel[:, 0] * v[:, 1] - rel[:, 1] * v[:, 0]
    np.testing.assert_allclose(cross, direction * 0.3**2 * omega, rtol=1e-13)
    np.testing.assert_allclose(
        c.position(0.0), [0.2 + 0.3 * math.cos(1.0), 0.1 + 0.3 * math.sin(1.0)]
    )


def test_figure_eight_crosses_its_centre_twice_per_period():
    f = figure_eight(centre=(0.5, 0.1), width=0.6, height=0.4, period=6.0)
    assert (f.fx, f.fy, f.ax, f.ay) == (1, 2, 0.3, 0.2)
    np.testing.assert_allclose(f.position([0.0, 3.0]), [[0.5, 0.1], [0.5, 0.1]], atol=1e-15)
    p = f.position(np.linspace(0.0, 6.0, 2001))
    np.testing.assert_allclose(p.min(0), [0.2, -0.1], atol=1e-6)
    np.testing.assert_allclose(p.max(0), [0.8, 0.3], atol=1e-6)


def test_looping_path_reproduces_the_exercises_points():
    """The exercise's construction: a sampled circle plus loops in its finite-difference frame."""
    n, scale, radius, freq = 2000, 0.79, 0.2, 13
    phi = np.linspace(0, 2 * np.pi, n) + np.pi / 2
    base = scale * np.column_stack((np.cos(phi), np.sin(phi)))
    d = np.gradient(base, axis=0)
    tangent = d / np.linalg.norm(d, axis=1, keepdims=True)
    normal = np.column_stack((-tangent[:, 1], tangent[:, 0]))
    angles = 2 * np.pi * freq * np.linspace(0, 1, n) + np.pi / 2
    points = base + radius * (np.cos(angles)[:, None] * tangent + np.sin(angles)[:, None] * normal)
    ours = LoopingPath().position(np.linspace(0.0, 60.0, n))
    # the end points use one-sided differences in the exercise (tangent off by half a step)
    np.testing.assert_allclose(ours[1:-1], points[1:-1], atol=1e-13)
    np.testing.assert_allclose(ours[[0, -1]], points[[0, -1]], atol=5e-4)
    r = np.hypot(*ours.T)
    assert r.min() == pytest.approx(0.59) and r.max() == pytest.approx(0.99, abs=1e-6)


# -- sampled paths -------------------------------------------------------------------


@pytest.mark.parametrize("bc_type", ["periodic", "not-a-knot"])
def test_sampled_circle_matches_the_analytic_derivatives(bc_type):
    circle = Circle(centre=(0.5, 0.2), radius=0.3, period=6.0, direction=-1, phase=0.4)
    times = np.linspace(0.0, 6.0, 401)  # 15 ms between points, 0.9° of arc
    sampled = SampledPath(times, circle.position(times), bc_type=bc_type)
    assert sampled.duration == pytest.approx(6.0)
    t = np.linspace(0.0, 6.0, 1777)
    scale = circle.speed
    omega = 2 * math.pi / 6.0
    # relative spline errors with ωh = 2π/400: about (ωh)^4 / 77 in position (8e-10),
    # (ωh)^3 / 24 in velocity (2e-7) and (ωh)^2 / 12 in acceleration (2e-5) in the interior;
    # the "not-a-knot" ends are about ten times worse (measured: 2e-10, 3e-8, 2e-5 periodic;
    # 2e-9, 6e-7, 2e-4 not-a-knot)
    tol = {"periodic": (1e-9, 1e-7, 5e-5), "not-a-knot": (1e-8, 2e-6, 5e-4)}[bc_type]
    np.testing.assert_allclose(sampled.position(t), circle.position(t), atol=tol[0] * 0.3)
    np.testing.assert_allclose(sampled.velocity(t), circle.velocity(t), atol=tol[1] * scale)
    np.testing.assert_allclose(
        sampled.acceleration(t), circle.acceleration(t), atol=tol[2] * 0.3 * omega**2
    )


def test_sampled_path_rejects_bad_input_and_times_outside():
    t = np.linspace(0.0, 1.0, 10)
    p = np.column_stack([t, t**2])
    with pytest.raises(ValueError, match=r"path SampledPath: points must have shape \(T, 2\)"):
        SampledPath(t, p.T)
    with pytest.raises(ValueError, match="path SampledPath: times must have shape"):
        SampledPath(t[:-1], p)
    with pytest.raises(
        ValueError,
        match=r"times must increase strictly, got times\[2\] = 0.222\d* and times\[3\] = 0.222",
    ):
        SampledPath(np.r_[t[:3], t[2], t[4:]], p)
    bad = p.copy()
    bad[4, 1] = np.nan
    with pytest.raises(ValueError, match="path SampledPath: times and points must be finite"):
        SampledPath(t, bad)
    with pytest.raises(ValueError, match="bc_type"):
        SampledPath(t, p, bc_type="cubic")
    with pytest.raises(ValueError, match="periodic"):
        SampledPath(t, p, bc_type="periodic")
    with pytest.raises(ValueError, match=r"t must lie in \[0, 1\] s"):
        SampledPath(t, p).position([0.5, 1.5])
    assert "SampledPath(T=10" in repr(SampledPath(t, p))


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Circle(radius=0.0), "path Circle: radius must be a finite number > 0, got 0.0"),
        (lambda: Circle(period=-1.0), "path Circle: period must be a finite number > 0"),
        (lambda: Circle(direction=2), "path Circle: direction must be 1 or -1"),
        (lambda: Circle(centre=(0.0, np.inf)), "path Circle: centre must be 2 finite numbers"),
        (lambda: Lissajous(fx=0), "path Lissajous: fx must be an integer >= 1"),
        (lambda: Lissajous(ay=-0.1), "path Lissajous: ay must be a finite number > 0"),
        (lambda: LoopingPath(loop_radius=0.0), "path LoopingPath: loop_radius must be"),
        (lambda: LoopingPath(period=float("nan")), "path LoopingPath: period must be"),
        (lambda: figure_eight(width=-1.0), "path Lissajous: ax must be a finite number > 0"),
    ],
)
def test_invalid_fields_are_rejected_by_name(make, match):
    with pytest.raises(ValueError, match=re.escape(match)):
        make()


# -- workspace -----------------------------------------------------------------------


def test_check_in_workspace_names_the_path_and_the_first_time_outside():
    # starts at (0.5, 0), counter-clockwise; leaves r <= 1 - 0.005 at cos θ = (0.995² - 0.73) / 0.48
    circle = Circle(centre=(0.8, 0.0), radius=0.3, period=10.0, phase=math.pi)
    theta = 2 * math.pi - math.acos((0.995**2 - 0.73) / 0.48)
    t_exit = (theta - math.pi) / (2 * math.pi) * 10.0
    with pytest.raises(ValueError, match=r"path Circle\(centre=\(0\.8, 0\.0\)") as info:
        check_in_workspace(circle, LOOPING_ARM, margin=0.005, samples=2001)
    message = str(info.value)
    assert "leaves the reachable annulus [0.005, 0.995] m" in message
    t_reported = float(re.search(r"at t = ([0-9.]+) s", message).group(1))
    assert t_exit <= t_reported < t_exit + 10.0 / 2000 + 1e-9
    # the inner rim (unequal links: |l1 - l2| = 0.9 m)
    inner = Circle(centre=(0.0, 0.0), radius=0.95, period=3.0)
    check_in_workspace(inner, UNEQUAL, margin=0.04)
    with pytest.raises(ValueError, match=r"at t = 0 s: distance 0.95 m"):
        check_in_workspace(inner, UNEQUAL, margin=0.06)


def test_named_paths_fit_the_looping_arm_and_the_default_arm():
    for name in PATH_NAMES:
        for params in (LOOPING_ARM, ArmParams()):
            check_in_workspace(make_path(name), params)
    with pytest.raises(ValueError, match="leaves the reachable annulus"):
        check_in_workspace(make_path("looping"), LOOPING_ARM, margin=0.02)


# -- make_path -----------------------------------------------------------------------


def test_make_path_accepts_names_mappings_and_arrays():
    assert make_path("looping") == LoopingPath()
    assert make_path({"type": "circle", "radius": 0.2}) == Circle(radius=0.2)
    assert make_path({"type": "figure_eight", "width": 0.4}) == figure_eight(width=0.4)
    c = Circle()
    assert make_path(c) is c
    t = np.linspace(0.0, 2.0, 21)
    rows = np.column_stack([t, np.cos(t), np.sin(t)])
    from_rows = make_path(rows)
    assert isinstance(from_rows, SampledPath)
    np.testing.assert_allclose(from_rows.position(t), rows[:, 1:], atol=1e-15)
    np.testing.assert_allclose(
        make_path((t, rows[:, 1:])).position(1.0), [math.cos(1), math.sin(1)]
    )


@pytest.mark.parametrize("spec", ["spiral", 3.0, np.zeros((5, 2)), ["circle"]])
def test_make_path_error_names_path_and_the_allowed_names(spec):
    with pytest.raises(ValueError) as info:
        make_path(spec)
    message = str(info.value)
    assert message.startswith("path must be one of ['circle', 'figure_eight', 'looping']")
    if isinstance(spec, str):
        assert repr(spec) in message


def test_make_path_mapping_errors_name_the_type_and_field():
    with pytest.raises(ValueError, match=r"path mapping needs 'type' in \['circle'"):
        make_path({"radius": 0.2})
    with pytest.raises(ValueError, match=r"path 'circle': .*'wobble'"):
        make_path({"type": "circle", "wobble": 1})


# -- sampler -------------------------------------------------------------------------


@pytest.mark.parametrize("params", [LOOPING_ARM, UNEQUAL], ids=["looping_arm", "unequal"])
def test_sampled_paths_are_inside_the_annulus_and_reproducible(params):
    rng = np.random.default_rng(7)
    paths = [sample_path(rng, params, margin=0.05) for _ in range(30)]
    for path in paths:
        check_in_workspace(path, params, margin=0.05, samples=4001)
        assert 0.1 - 1e-9 <= np.hypot(*path.velocity(path.sample_times(256)).T).mean()
    kinds = {type(p).__name__ for p in paths}
    assert {"Circle", "Lissajous"} <= kinds <= {"Circle", "Lissajous", "LoopingPath"}
    assert any(isinstance(p, Lissajous) and (p.fx, p.fy) == (1, 2) for p in paths)
    again = np.random.default_rng(7)
    assert [sample_path(again, params, margin=0.05) for _ in range(30)] == paths
    assert sample_path(np.random.default_rng(8), params) != paths[0]


def test_sample_path_draws_only_the_requested_families_and_speeds():
    rng = np.random.default_rng(1)
    circles = [sample_path(rng, LOOPING_ARM, ["circle"], speed=(0.2, 0.3)) for _ in range(20)]
    assert all(isinstance(c, Circle) and 0.2 <= c.speed <= 0.3 for c in circles)
    assert {c.direction for c in circles} == {-1, 1}
    with pytest.raises(ValueError, match=r"families: unknown \['spiral'\]; allowed names are"):
        sample_path(rng, LOOPING_ARM, ["circle", "spiral"])
    assert set(FAMILIES) == {"circle", "figure_eight", "lissajous", "looping"}
    loops = [sample_path(rng, LOOPING_ARM, ["looping"], speed=(0.2, 0.3)) for _ in range(5)]
    for path in loops:
        assert isinstance(path, LoopingPath)
        speed = np.hypot(*path.velocity(path.sample_times(8192)).T).mean()
        assert 0.2 - 1e-3 <= speed <= 0.3 + 1e-3


# -- joint reference -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "path"),
    [
        (LOOPING_ARM, LoopingPath()),
        (ArmParams(), figure_eight(centre=(0.9, 0.4), width=0.8, height=0.5, period=4.0)),
        (UNEQUAL, Circle(centre=(-0.5, 1.2), radius=0.3, period=3.0, direction=-1)),
    ],
)
def test_joint_reference_reproduces_the_path_and_its_derivatives(params, path):
    t = np.linspace(0.0, path.duration, 1201)
    q, dq, ddq = joint_reference(params, path, t)
    np.testing.assert_allclose(kin.tip_position(params, q), path.position(t), atol=1e-13)
    np.testing.assert_allclose(kin.tip_velocity(params, q, dq), path.velocity(t), atol=1e-12)
    h = 1e-4
    q_plus = joint_reference(params, path, t + h)[0]
    q_minus = joint_reference(params, path, t - h)[0]
    np.testing.assert_allclose(dq, (q_plus - q_minus) / (2 * h), atol=1e-6 * np.abs(dq).max())
    fd_ddq = (q_plus - 2 * q + q_minus) / h**2
    np.testing.assert_allclose(ddq, fd_ddq, atol=1e-4 * np.abs(ddq).max())


def test_joint_reference_keeps_one_branch_and_unwraps_along_the_looping_path():
    path, t = LoopingPath(), np.linspace(0.0, 60.0, 3001)
    q_down = joint_reference(LOOPING_ARM, path, t)[0]
    assert np.all(q_down[:, 1] > 0.2)  # "down" by default: q2 >= 0, never near 0
    assert np.abs(np.diff(q_down, axis=0)).max() < 0.1  # continuous
    assert q_down[-1, 0] - q_down[0, 0] == pytest.approx(2 * math.pi)  # one turn, unwrapped
    # starting near the other branch (shifted by a turn) keeps that branch throughout
    q_up_start = kin.inverse_kinematics(LOOPING_ARM, path.position(0.0), "up") + np.array(
        [2 * math.pi, 0]
    )
    q_up = joint_reference(LOOPING_ARM, path, t, q0=q_up_start + 0.05)[0]
    assert np.all(q_up[:, 1] < -0.2)
    np.testing.assert_allclose(q_up[0], q_up_start, atol=1e-12)
    np.testing.assert_allclose(kin.tip_position(LOOPING_ARM, q_up), path.position(t), atol=1e-13)
    # an explicit branch wins over q0
    q_forced = joint_reference(LOOPING_ARM, path, t[:5], q0=q_up_start, elbow="down")[0]
    assert np.all(q_forced[:, 1] > 0)


def test_joint_reference_errors_near_singularities_and_outside():
    # touches the outer rim (arm straight, q2 = 0) at t = 0
    rim = Circle(centre=(0.5, 0.0), radius=0.5, period=2.0)
    with pytest.raises(
        ValueError, match=r"path Circle\(.*\) comes within .* singularity .* t = 0 s"
    ):
        joint_reference(LOOPING_ARM, rim, np.linspace(0.0, 1.0, 11))
    joint_reference(
        LOOPING_ARM, rim, np.linspace(0.1, 0.9, 9)
    )  # away from t = 0 and t = 1 (folded)
    # from (-0.1, 0) counter-clockwise; r > 1 from cos θ > 0.65, θ = π (1 + t): t > 0.725 s
    outside = Circle(centre=(0.5, 0.0), radius=0.6, period=2.0, phase=math.pi)
    with pytest.raises(ValueError, match=r"leaves the reachable annulus \[0, 1\] m at t = 0.8 s"):
        joint_reference(LOOPING_ARM, outside, np.linspace(0.0, 1.0, 11))
    with pytest.raises(ValueError, match="elbow must be 'up' or 'down'"):
        joint_reference(LOOPING_ARM, LoopingPath(), [0.0], elbow="left")


def test_jacobian_derivative_is_used_consistently_with_tip_acceleration():
    """Tip acceleration J ddq + J̇ dq of the reference equals the path's."""
    path = LoopingPath()
    t = np.linspace(0.0, 60.0, 501)
    q, dq, ddq = joint_reference(LOOPING_ARM, path, t)
    accel = np.einsum("nij,nj->ni", kin.jacobian(LOOPING_ARM, q), ddq) + np.einsum(
        "nij,nj->ni", kin.jacobian_derivative(LOOPING_ARM, q, dq), dq
    )
    np.testing.assert_allclose(accel, path.acceleration(t), atol=1e-12)


# -- the looping-path exercise -------------------------------------------------------------


def test_computed_torque_tracks_the_looping_path_and_open_loop_diverges():
    bench = load_benchmark("looping_path")
    path = LoopingPath()
    run = bench.computed_torque(bench.LOOPING_ARM, bench.LOOPING_ARM, path, seconds=4.0)
    assert run.rms < 1e-3
    assert run.max < 3e-3
    mid = np.arange(200) * bench.DT + bench.DT / 2
    free = bench.open_loop(
        bench.LOOPING_ARM, path, bench.feed_forward(bench.LOOPING_ARM, path, mid), 4.0
    )
    assert free.time_to(0.05) < 4.0
    assert free.error[0] < 1e-12 and free.error[:10].max() < 1e-4  # it starts on the path
