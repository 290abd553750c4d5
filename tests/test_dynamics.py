"""Tests of the equations of motion against an independent Euler-Lagrange derivation.

The reference model is derived here with sympy from the kinetic and potential
energy of the two links (centre-of-mass positions from the geometry of docs/physics.md);
M, C and G are never typed in a second time.
"""

import dataclasses
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import twolink_gym.dynamics as dyn
from twolink_gym import ArmParams

FIELDS = tuple(f.name for f in dataclasses.fields(ArmParams))
DEFAULT = ArmParams()


# -- the independent reference: Euler-Lagrange with sympy ----------------------


def _broadcast_stack(values, inner_shape):
    arrays = np.broadcast_arrays(*[np.asarray(v, dtype=float) for v in values])
    return np.stack(arrays, -1).reshape(*arrays[0].shape, *inner_shape)


class Reference:
    """Lambdified pieces of the sympy derivation, evaluated on numpy arrays."""

    def __init__(self):
        t = sp.Symbol("t", real=True)
        par = sp.symbols(" ".join(FIELDS), real=True)
        # l2 does not enter M, C, G; ir, gr: rotor inertia and gear ratio; c1, c2: Coulomb
        m1, m2, l1, _l2, lc1, lc2, i1, i2, g, f1, f2, ir, gr, cf1, cf2 = par
        q1t, q2t = sp.Function("q1")(t), sp.Function("q2")(t)

        # Centres of mass from the geometry: link 1 from the origin at angle q1,
        # link 2 from the elbow at absolute angle q1 + q2; gravity along -y.
        c1 = sp.Matrix([lc1 * sp.cos(q1t), lc1 * sp.sin(q1t)])
        c2 = sp.Matrix(
            [
                l1 * sp.cos(q1t) + lc2 * sp.cos(q1t + q2t),
                l1 * sp.sin(q1t) + lc2 * sp.sin(q1t + q2t),
            ]
        )
        v1, v2 = c1.diff(t), c2.diff(t)
        w1, w2 = q1t.diff(t), q1t.diff(t) + q2t.diff(t)
        kin = m1 * v1.dot(v1) / 2 + m2 * v2.dot(v2) / 2 + i1 * w1**2 / 2 + i2 * w2**2 / 2
        # The motors' rotors (RealAIGym's model): motor 1 on the base turns at gr q1';
        # motor 2 rides on link 1 and turns at gr q2' against it (its angle in space
        # q1 - gr q2); each has inertia ir about its axis.
        r1, r2 = gr * q1t.diff(t), q1t.diff(t) - gr * q2t.diff(t)
        kin = kin + ir * r1**2 / 2 + ir * r2**2 / 2
        pot = m1 * g * c1[1] + m2 * g * c2[1]
        lag = kin - pot

        q = sp.symbols("q1 q2", real=True)
        dq = sp.symbols("dq1 dq2", real=True)
        ddq = sp.symbols("ddq1 ddq2", real=True)
        second = {qt.diff(t, 2): a for qt, a in zip((q1t, q2t), ddq, strict=True)}
        first = {qt.diff(t): v for qt, v in zip((q1t, q2t), dq, strict=True)}
        angles = {qt: s for qt, s in zip((q1t, q2t), q, strict=True)}
        # viscous and RealAIGym's smooth Coulomb friction, a generalised force
        friction = [
            f * v + cf * sp.atan(100 * v) for f, cf, v in zip((f1, f2), (cf1, cf2), dq, strict=True)
        ]
        tau = []
        for i, qt in enumerate((q1t, q2t)):
            el = sp.diff(sp.diff(lag, qt.diff(t)), t) - sp.diff(lag, qt)
            tau.append(el + friction[i])

        def plain(expr):
            # highest derivatives first, then velocities, then the angles
            return expr.subs(second).subs(first).subs(angles)

        tau = [sp.expand(plain(e)) for e in tau]
        kin = sp.expand(plain(kin))
        pot = sp.expand(plain(pot))

        mass = sp.hessian(kin, dq)
        grav = [sp.diff(pot, s) for s in q]
        # Everything in tau that is not M ddq, G or F dq: the velocity products.
        cor = [
            sp.expand(tau[i] - sum(mass[i, j] * ddq[j] for j in range(2)) - grav[i] - friction[i])
            for i in range(2)
        ]
        # Christoffel-form Coriolis matrix built from M
        chris = sp.Matrix(
            2,
            2,
            lambda i, j: sum(
                (sp.diff(mass[i, j], q[k]) + sp.diff(mass[i, k], q[j]) - sp.diff(mass[j, k], q[i]))
                * dq[k]
                / 2
                for k in range(2)
            ),
        )
        self.symbolic = {
            "tau": tau,
            "mass": mass,
            "grav": grav,
            "cor": cor,
            "kin": kin,
            "pot": pot,
            "friction": friction,
        }
        self.symbols = {"q": q, "dq": dq, "ddq": ddq, "params": par}

        args = (*q, *dq, *ddq, *par)

        def lamb(exprs):
            return [sp.lambdify(args, e, "numpy") for e in exprs]

        self._tau = lamb(tau)
        self._mass = lamb(list(mass))
        self._grav = lamb(grav)
        self._cor = lamb(cor)
        self._chris = lamb(list(chris))
        self._kin = lamb([kin])
        self._pot = lamb([pot])
        self._gjac = lamb(list(sp.hessian(pot, q)))
        self._fric = lamb(friction)

    @staticmethod
    def _call(funcs, p, q, dq, ddq, inner_shape):
        q = np.asarray(q, dtype=float)
        dq = np.zeros_like(q) if dq is None else np.asarray(dq, dtype=float)
        ddq = np.zeros_like(q) if ddq is None else np.asarray(ddq, dtype=float)
        vals = tuple(getattr(p, f) for f in FIELDS)
        args = (q[..., 0], q[..., 1], dq[..., 0], dq[..., 1], ddq[..., 0], ddq[..., 1], *vals)
        out = [f(*args) for f in funcs]
        lead = np.broadcast_shapes(q.shape[:-1], dq.shape[:-1], ddq.shape[:-1])
        out = [np.broadcast_to(np.asarray(o, dtype=float), lead) for o in out]
        return _broadcast_stack(out, inner_shape)

    def tau(self, p, q, dq, ddq):
        return self._call(self._tau, p, q, dq, ddq, (2,))

    def mass(self, p, q):
        return self._call(self._mass, p, q, None, None, (2, 2))

    def grav(self, p, q):
        return self._call(self._grav, p, q, None, None, (2,))

    def cor(self, p, q, dq):
        return self._call(self._cor, p, q, dq, None, (2,))

    def christoffel(self, p, q, dq):
        return self._call(self._chris, p, q, dq, None, (2, 2))

    def kinetic(self, p, q, dq):
        return self._call(self._kin, p, q, dq, None, ())

    def potential(self, p, q):
        return self._call(self._pot, p, q, None, None, ())

    def friction(self, p, dq):
        return self._call(self._fric, p, np.zeros_like(np.asarray(dq, float)), dq, None, (2,))

    def gravity_jacobian(self, p, q):
        return self._call(self._gjac, p, q, None, None, (2, 2))

    def forward(self, p, q, dq, tau):
        """Accelerations by a numerical linear solve of the derived equations."""
        m = self.mass(p, q)
        rest = self.tau(p, q, dq, np.zeros_like(np.asarray(dq, dtype=float)))
        return np.linalg.solve(m, (np.asarray(tau) - rest)[..., None])[..., 0]


@pytest.fixture(scope="module")
def ref():
    return Reference()


# -- random inputs -------------------------------------------------------------


def random_params(rng, gravity_min=0.0):
    m1, m2 = rng.uniform(0.1, 5.0, 2)
    l1, l2 = rng.uniform(0.2, 2.0, 2)
    # lc in (0, l]: 1 - U[0, 1) lies in (0, 1]
    lc1, lc2 = l1 * (1.0 - rng.random()), l2 * (1.0 - rng.random())
    i1, i2 = rng.uniform(0.0, 1.0, 2)
    gravity = rng.uniform(gravity_min, 20.0)
    fr1, fr2 = rng.uniform(0.0, 2.0, 2)
    # motors and Coulomb friction; each is absent (exactly 0) a quarter of the time
    rotor, cf1, cf2 = rng.uniform(0.0, [0.01, 1.0, 1.0]) * (rng.random(3) > 0.25)
    gear = rng.uniform(0.5, 10.0)
    return ArmParams(m1, m2, l1, l2, lc1, lc2, i1, i2, gravity, fr1, fr2, rotor, gear, cf1, cf2)


def random_states(rng, n):
    q = rng.uniform(-math.pi, math.pi, (n, 2)) * 1.5
    dq = rng.uniform(-6.0, 6.0, (n, 2))
    return q, dq


params_strategy = st.builds(
    lambda m1, m2, l1, l2, f1, f2, i1, i2, g, fr1, fr2: ArmParams(
        m1=m1,
        m2=m2,
        l1=l1,
        l2=l2,
        lc1=f1 * l1,
        lc2=f2 * l2,
        I1=i1,
        I2=i2,
        gravity=g,
        friction1=fr1,
        friction2=fr2,
    ),
    *[st.floats(0.1, 5.0)] * 2,
    *[st.floats(0.2, 2.0)] * 2,
    *[st.floats(0.01, 1.0)] * 2,
    *[st.floats(0.0, 1.0)] * 2,
    st.floats(1.0, 20.0),
    *[st.floats(0.0, 2.0)] * 2,
)
angle = st.floats(-2 * math.pi, 2 * math.pi)
speed = st.floats(-8.0, 8.0)
vec2_angle = st.tuples(angle, angle).map(np.array)
vec2_speed = st.tuples(speed, speed).map(np.array)
bounded = settings(max_examples=50, deadline=None)


def assert_close_scaled(got, want, scale, tol):
    """|got - want| <= tol * scale elementwise (scale broadcasts)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    err = np.abs(got - want)
    bound = tol * np.maximum(np.asarray(scale), 1e-300)
    bad = err > bound
    assert not np.any(bad), (
        f"max scaled error {np.max(err / bound) * tol:.3g} > {tol:g}; "
        f"got {got[bad][:4]}, want {want[bad][:4]}"
    )


# -- the derivation itself -------------------------------------------------------


def test_reference_derivation_is_well_formed(ref):
    sym = ref.symbolic
    ddq = set(ref.symbols["ddq"])
    par = ref.symbols["params"]
    gravity, f1, f2, cf1, cf2 = par[8], par[9], par[10], par[13], par[14]
    for expr in sym["cor"]:
        # velocity products only: no acceleration, gravity or friction left over
        assert not (expr.free_symbols & (ddq | {gravity, f1, f2, cf1, cf2}))
        # and the rotors (constant inertias) add none
        assert not (expr.free_symbols & {par[11], par[12]})
        dq = ref.symbols["dq"]
        assert sp.simplify(expr.subs({dq[0]: 0, dq[1]: 0})) == 0
    m = sym["mass"]
    assert sp.simplify(m[0, 1] - m[1, 0]) == 0
    assert not (m.free_symbols & set(ref.symbols["dq"]))


# -- equations of motion vs. the derivation ---------------------------------------


def test_inverse_and_forward_dynamics_match_derivation(ref):
    rng = np.random.default_rng(12345)
    n_states = 0
    for _ in range(250):
        p = random_params(rng)
        q, dq = random_states(rng, 4)
        ddq = rng.uniform(-20.0, 20.0, (4, 2))
        tau = rng.uniform(-30.0, 30.0, (4, 2))

        want = ref.tau(p, q, dq, ddq)
        terms = np.abs(np.einsum("...ij,...j->...i", ref.mass(p, q), ddq))
        terms = terms + np.abs(ref.cor(p, q, dq)) + np.abs(ref.grav(p, q))
        scale = np.max(terms + np.abs(dq), axis=-1, keepdims=True)
        assert_close_scaled(dyn.inverse_dynamics(p, q, dq, ddq), want, scale, 1e-10)

        want_acc = ref.forward(p, q, dq, tau)
        got_acc = dyn.forward_dynamics(p, q, dq, tau)
        cond = np.linalg.cond(ref.mass(p, q))[..., None]
        scale = np.max(np.abs(want_acc), axis=-1, keepdims=True) + 1.0
        assert_close_scaled(got_acc, want_acc, scale * cond, 1e-12)
        # and the backward-stable form: residual of the derived equation
        resid = ref.tau(p, q, dq, got_acc) - tau
        assert_close_scaled(resid, np.zeros_like(resid), np.max(np.abs(tau)) + scale, 1e-10)
        n_states += len(q)
    assert n_states >= 200


def test_pieces_match_derivation(ref):
    rng = np.random.default_rng(7)
    for _ in range(100):
        p = random_params(rng)
        q, dq = random_states(rng, 5)
        m_ref = ref.mass(p, q)
        scale = np.max(np.abs(m_ref))
        assert_close_scaled(dyn.mass_matrix(p, q), m_ref, scale, 1e-12)
        g_ref = ref.grav(p, q)
        g_scale = (p.m1 + p.m2) * p.gravity * (p.l1 + p.l2)
        assert_close_scaled(dyn.gravity_torque(p, q), g_ref, g_scale, 1e-12)
        assert_close_scaled(dyn.gravity_jacobian(p, q), ref.gravity_jacobian(p, q), g_scale, 1e-12)
        c_scale = scale * np.max(dq**2)
        assert_close_scaled(dyn.coriolis_forces(p, q, dq), ref.cor(p, q, dq), c_scale, 1e-12)
        assert_close_scaled(
            dyn.coriolis_matrix(p, q, dq),
            ref.christoffel(p, q, dq),
            scale * np.max(np.abs(dq)),
            1e-12,
        )
        k_ref = ref.kinetic(p, q, dq)
        assert_close_scaled(dyn.kinetic_energy(p, q, dq), k_ref, c_scale, 1e-12)
        assert_close_scaled(dyn.potential_energy(p, q), ref.potential(p, q), g_scale, 1e-12)
        kin, pot = dyn.energy(p, q, dq)
        assert_close_scaled(kin + pot, dyn.total_energy(p, np.concatenate([q, dq], -1)), 1, 1e-12)
        want_f = ref.friction(p, dq)
        np.testing.assert_allclose(dyn.friction_torque(p, dq), want_f, rtol=1e-14, atol=1e-15)


def test_default_numbers_from_spec():
    # a known error of a published source (docs/physics.md): [pi, 0] (arm horizontal, pointing left) is not an
    # equilibrium; [0, 0] needs the holding torque G(0) (published numbers).
    np.testing.assert_allclose(dyn.gravity_torque(DEFAULT, [math.pi, 0.0]), [-19.62, -4.905])
    np.testing.assert_allclose(dyn.gravity_torque(DEFAULT, [0.0, 0.0]), [19.62, 4.905])
    acc = dyn.forward_dynamics(DEFAULT, [math.pi, 0.0], [0.0, 0.0], [0.0, 0.0])
    assert np.linalg.norm(acc) > 1.0
    acc = dyn.forward_dynamics(DEFAULT, [0.0, 0.0], [0.0, 0.0], [0.0, 0.0])
    assert np.linalg.norm(acc) > 1.0
    acc = dyn.forward_dynamics(DEFAULT, [0.0, 0.0], [0.0, 0.0], [19.62, 4.905])
    np.testing.assert_allclose(acc, [0.0, 0.0], atol=1e-12)


# -- structural properties ---------------------------------------------------------


@bounded
@given(params_strategy, vec2_angle)
def test_mass_matrix_symmetric_positive_definite(p, q):
    m = dyn.mass_matrix(p, q)
    assert m.shape == (2, 2)
    assert m[0, 1] == m[1, 0]
    eig = np.linalg.eigvalsh(m)
    assert np.all(eig > 0.0), eig
    # determinant from the geometry: with I = 0 it is m1 m2 lc1^2 lc2^2 + m2^2 l1^2 lc2^2 sin^2 q2
    # (plus positive inertia terms), so it is bounded below by the I = 0 value
    det0 = p.m1 * p.m2 * p.lc1**2 * p.lc2**2 + (p.m2 * p.l1 * p.lc2 * math.sin(q[1])) ** 2
    assert np.linalg.det(m) >= det0 * (1 - 1e-9)


@bounded
@given(params_strategy, vec2_angle, vec2_speed)
def test_mdot_equals_c_plus_c_transpose(p, q, dq):
    eps = 1e-6
    mdot = (dyn.mass_matrix(p, q + eps * dq) - dyn.mass_matrix(p, q - eps * dq)) / (2 * eps)
    c = dyn.coriolis_matrix(p, q, dq)
    scale = np.max(np.abs(dyn.mass_matrix(p, q))) * (np.max(np.abs(dq)) + 1.0)
    assert_close_scaled(mdot, c + c.T, scale, 1e-7)
    # equivalently Mdot - 2C is skew-symmetric
    s = mdot - 2 * c
    assert_close_scaled(s + s.T, np.zeros((2, 2)), scale, 1e-7)


@bounded
@given(params_strategy, vec2_angle, vec2_speed)
def test_coriolis_matrix_times_dq_is_coriolis_forces(p, q, dq):
    c = dyn.coriolis_matrix(p, q, dq)
    scale = p.m2 * p.l1 * p.lc2 * (np.max(dq**2) + 1.0)
    assert_close_scaled(c @ dq, dyn.coriolis_forces(p, q, dq), scale, 1e-13)


@bounded
@given(
    params_strategy,
    vec2_angle,
    vec2_speed,
    st.tuples(st.floats(-40, 40), st.floats(-40, 40)).map(np.array),
)
def test_forward_and_inverse_dynamics_are_inverses(p, q, dq, v):
    tau = v
    ddq = dyn.forward_dynamics(p, q, dq, tau)
    tau_back = dyn.inverse_dynamics(p, q, dq, ddq)
    # solving M ddq = tau - h loses up to cond(M) eps (the forward error bound of a
    # linear solve): near-singular mass matrices (I1 = I2 = 0, a short lc1) reach 1e6
    cond = np.linalg.cond(dyn.mass_matrix(p, q))
    scale = np.max(np.abs(tau)) + np.max(np.abs(dyn.mass_matrix(p, q) @ ddq)) + 1.0
    assert_close_scaled(tau_back, tau, scale * cond, 1e-12)

    ddq_in = v / 2.0
    ddq_back = dyn.forward_dynamics(p, q, dq, dyn.inverse_dynamics(p, q, dq, ddq_in))
    assert_close_scaled(ddq_back, ddq_in, (np.max(np.abs(ddq_in)) + 1.0) * cond, 1e-12)


def _energy_rate(p, x, tau):
    """dE/dt along the vector field, by complex-step differentiation of total_energy."""
    h = 1e-20
    f = dyn.state_derivative(p, x, tau)
    return np.imag(dyn.total_energy(p, x + 1j * h * f)) / h, f


def _power(p, x, tau):
    # dE/dt = dq . (tau - b dq - cf atan(100 dq)), written out from the friction law
    dq = x[..., 2:]
    fric = np.array([p.friction1, p.friction2])
    coulomb = np.array([p.coulomb1, p.coulomb2])
    return np.sum(dq * (tau - fric * dq - coulomb * np.arctan(100.0 * dq)), axis=-1)


def test_power_balance_random_states_and_params():
    rng = np.random.default_rng(99)
    for _ in range(60):
        p = random_params(rng)
        q, dq = random_states(rng, 8)
        x = np.concatenate([q, dq], -1)
        tau = rng.uniform(-20.0, 20.0, (8, 2))
        rate, f = _energy_rate(p, x, tau)
        want = _power(p, x, tau)
        # each term of dE/dt is at most |dq| * (|M ddq| + |C dq| + |G| + |tau|)
        scale = np.max(np.abs(dq), -1) * (
            np.max(np.abs(tau), -1)
            + np.max(np.abs(dyn.gravity_torque(p, q)), -1)
            + np.max(np.abs(dyn.coriolis_forces(p, q, dq)), -1)
            + np.max(np.abs(np.einsum("...ij,...j", dyn.mass_matrix(p, q), f[..., 2:])), -1)
            + 1.0
        )
        assert_close_scaled(rate, want, scale, 1e-12)

        # same thing by central finite differences of total_energy (a second method)
        eps = 1e-6
        fd = (dyn.total_energy(p, x + eps * f) - dyn.total_energy(p, x - eps * f)) / (2 * eps)
        assert_close_scaled(fd, want, scale, 1e-6)


def test_energy_conserved_without_torque_and_friction():
    p = DEFAULT.replace(friction1=0.0, friction2=0.0)
    rng = np.random.default_rng(3)
    q, dq = random_states(rng, 20)
    x = np.concatenate([q, dq], -1)
    rate, _ = _energy_rate(p, x, np.zeros(2))
    np.testing.assert_allclose(rate, 0.0, atol=1e-10)


def _dissipation(p, dq):
    """Friction power -dq . F(dq) [W], written out from the friction law."""
    b = np.array([p.friction1, p.friction2])
    cf = np.array([p.coulomb1, p.coulomb2])
    return -np.sum(b * dq**2 + cf * np.arctan(100.0 * dq) * dq, axis=-1)


# RealAIGym's identified C.1 / model 1.0 arm (model_parameters.yml, joint-axis
# inertias converted to centre-of-mass ones): rotors, damping and Coulomb friction
MODEL_1_0 = ArmParams(
    m1=0.5234602302310271,
    m2=0.6255677234174437,
    l1=0.2,
    l2=0.3,
    lc1=0.2,
    lc2=0.25569305436052964,
    I1=0.031887199591513114 - 0.5234602302310271 * 0.2**2,
    I2=0.05086984812807257 - 0.6255677234174437 * 0.25569305436052964**2,
    gravity=9.81,
    friction1=0.001,
    friction2=0.001,
    rotor_inertia=6.287203962819607e-05,
    gear_ratio=6.0,
    coulomb1=0.16,
    coulomb2=0.12,
)


@pytest.mark.parametrize(
    "p",
    [MODEL_1_0, MODEL_1_0.replace(friction1=0.3, coulomb2=0.0)],
    ids=["realaigym_1.0", "more_damping"],
)
def test_energy_balance_with_friction_along_a_trajectory(p):
    # integrate x and the dissipated work W together (RK4, 0.1 ms) over 2 s of a free
    # swing: E(t) - W(t) must stay E(0), with W' = -b dq² - cf atan(100 dq) dq
    def f(z):
        x = z[:4]
        return np.concatenate([dyn.state_derivative(p, x, np.zeros(2)), [_dissipation(p, x[2:])]])

    z = np.array([0.3, -0.5, 0.0, 0.0, 0.0])
    e0 = dyn.total_energy(p, z[:4])
    h = 1e-4
    for _ in range(20000):
        k1 = f(z)
        k2 = f(z + h / 2 * k1)
        k3 = f(z + h / 2 * k2)
        k4 = f(z + h * k3)
        z = z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    e1 = dyn.total_energy(p, z[:4])
    scale = abs(e0) + np.max(dyn.potential_energy(p, [[np.pi / 2, 0.0], [-np.pi / 2, 0.0]]))
    assert e1 - e0 < -0.05 * scale  # friction took a good share of the energy ...
    assert abs(e1 - z[4] - e0) < 1e-9 * scale  # ... and exactly the work it did


def test_motor_and_coulomb_defaults_add_exact_zeros():
    rng = np.random.default_rng(5)
    for _ in range(20):
        p = random_params(rng).replace(rotor_inertia=0.0, coulomb1=0.0, coulomb2=0.0)
        old = ArmParams(**{**p.to_dict(), "gear_ratio": 1.0})
        vec = dyn.arm_vector(p)
        assert vec[dyn.ARM_VECTOR_FIELDS.index("e")] == vec[dyn.ARM_VECTOR_FIELDS.index("d")]
        np.testing.assert_array_equal(vec, dyn.arm_vector(old))  # gr is inert without a rotor
        q, dq = random_states(rng, 6)
        tau = rng.uniform(-10, 10, (6, 2))
        np.testing.assert_array_equal(
            dyn.forward_dynamics(p, q, dq, tau), dyn.forward_dynamics(old, q, dq, tau)
        )


def test_linearize_sees_rotor_inertia_and_coulomb_friction(ref):
    # at rest the velocity block of A is -M⁻¹ diag(b + 100 cf) (d atan(100 v)/dv = 100 at 0),
    # M with the rotors' terms, from the sympy derivation
    p = MODEL_1_0
    x0 = np.array([np.pi / 2, 0.0, 0.0, 0.0])
    a, b = dyn.linearize(p, x0)
    m = ref.mass(p, x0[:2])
    damping = np.diag([p.friction1 + 100 * p.coulomb1, p.friction2 + 100 * p.coulomb2])
    np.testing.assert_allclose(a[2:, 2:], -np.linalg.solve(m, damping), rtol=1e-12)
    np.testing.assert_allclose(b[2:], np.linalg.inv(m), rtol=1e-12)


def test_nonphysical_arm_runs_the_same_equations(ref):
    from twolink_gym.params import NonphysicalArmParams

    # negative damping feeds energy in: the power balance holds with its sign
    p = NonphysicalArmParams(**{**MODEL_1_0.to_dict(), "friction1": -0.1, "coulomb2": -0.2})
    rng = np.random.default_rng(8)
    q, dq = random_states(rng, 10)
    x = np.concatenate([q, dq], -1)
    rate, _ = _energy_rate(p, x, np.zeros(2))
    np.testing.assert_allclose(rate, _dissipation(p, dq), rtol=1e-9, atol=1e-12)
    assert np.mean(rate > 0) > 0.5
    tau = rng.uniform(-6, 6, (10, 2))
    want = ref.forward(p, q, dq, tau)
    np.testing.assert_allclose(dyn.forward_dynamics(p, q, dq, tau), want, rtol=1e-9, atol=1e-9)


# -- equilibria -----------------------------------------------------------------

SPEC_EQUILIBRIA = {
    "down": ([-math.pi / 2, 0.0], 0),
    "up": ([math.pi / 2, 0.0], 2),
    "up_folded": ([math.pi / 2, math.pi], 1),
    "down_folded": ([-math.pi / 2, math.pi], 1),
}


def _positive_real_eigs(a, tol=1e-7):
    eig = np.linalg.eigvals(a)
    return eig[(np.abs(eig.imag) <= tol * (1 + np.abs(eig.real))) & (eig.real > tol)]


def test_equilibria_are_the_four_spec_poses():
    eqs = dyn.equilibria(DEFAULT)
    assert len(eqs) == 4
    assert [e.name for e in eqs] == ["down", "up", "up_folded", "down_folded"]
    for e in eqs:
        q_spec, _ = SPEC_EQUILIBRIA[e.name]
        assert e.state.shape == (4,)
        np.testing.assert_allclose(e.state, [*q_spec, 0.0, 0.0], atol=1e-15)
        assert isinstance(e.description, str)
        assert e.description


def test_equilibrium_stability_from_spec():
    eqs = {e.name: e for e in dyn.equilibria(DEFAULT)}
    for name, (_, modes) in SPEC_EQUILIBRIA.items():
        assert eqs[name].unstable_modes == modes, name
        assert eqs[name].stable == (name == "down")
    assert [e.name for e in dyn.equilibria(DEFAULT) if e.stable] == ["down"]


def test_equilibria_are_still_under_zero_torque_random_params():
    rng = np.random.default_rng(5)
    for _ in range(50):
        p = random_params(rng, gravity_min=0.5)
        eqs = dyn.equilibria(p)
        assert [e.name for e in eqs] == list(SPEC_EQUILIBRIA)
        for e in eqs:
            q_spec, modes = SPEC_EQUILIBRIA[e.name]
            np.testing.assert_allclose(e.state[:2], q_spec, atol=1e-15)
            np.testing.assert_allclose(e.state[2:], 0.0, atol=0.0)
            f = dyn.state_derivative(p, e.state, [0.0, 0.0])
            np.testing.assert_allclose(f, 0.0, atol=1e-12)
            acc = dyn.forward_dynamics(p, e.state[:2], e.state[2:], [0.0, 0.0])
            np.testing.assert_allclose(acc, 0.0, atol=1e-12)
            assert e.unstable_modes == modes
            a, _ = dyn.linearize(p, e.state, [0.0, 0.0])
            assert len(_positive_real_eigs(a)) == e.unstable_modes, (e.name, p)


def test_linearized_stability_at_defaults():
    eqs = {e.name: e for e in dyn.equilibria(DEFAULT)}
    a, _ = dyn.linearize(DEFAULT, eqs["down"].state, [0.0, 0.0])
    eig = np.linalg.eigvals(a)
    assert np.all(eig.real < 0.0), eig  # friction 0.1 makes the hanging pose asymptotically stable
    for name in ("up", "up_folded", "down_folded"):
        a, _ = dyn.linearize(DEFAULT, eqs[name].state, [0.0, 0.0])
        pos = _positive_real_eigs(a)
        assert len(pos) >= 1, name
        assert len(pos) == eqs[name].unstable_modes, name
    a, _ = dyn.linearize(DEFAULT, eqs["up"].state, [0.0, 0.0])
    assert len(_positive_real_eigs(a)) == 2


def test_equilibria_need_gravity():
    with pytest.raises(ValueError, match="gravity"):
        dyn.equilibria(DEFAULT.replace(gravity=0.0))


# -- linearize ------------------------------------------------------------------


def _fd_jacobians(p, x, u, eps=1e-6):
    a = np.zeros((4, 4))
    b = np.zeros((4, 2))
    for j in range(4):
        e = np.zeros(4)
        e[j] = eps
        a[:, j] = (dyn.state_derivative(p, x + e, u) - dyn.state_derivative(p, x - e, u)) / (
            2 * eps
        )
    for j in range(2):
        e = np.zeros(2)
        e[j] = eps
        b[:, j] = (dyn.state_derivative(p, x, u + e) - dyn.state_derivative(p, x, u - e)) / (
            2 * eps
        )
    return a, b


def test_linearize_matches_finite_differences():
    rng = np.random.default_rng(11)
    for _ in range(40):
        p = random_params(rng)
        q, dq = random_states(rng, 1)
        x = np.concatenate([q[0], dq[0]])
        u = rng.uniform(-20.0, 20.0, 2)
        a, b = dyn.linearize(p, x, u)
        assert a.shape == (4, 4)
        assert b.shape == (4, 2)
        a_fd, b_fd = _fd_jacobians(p, x, u)
        scale_a = np.max(np.abs(a_fd)) + 1.0
        assert_close_scaled(a, a_fd, scale_a, 1e-6)
        assert_close_scaled(b, b_fd, np.max(np.abs(b_fd)) + 1.0, 1e-6)

        # structure: d(q)/dt = dq, torque enters the accelerations through M^-1
        np.testing.assert_array_equal(a[:2, :2], np.zeros((2, 2)))
        np.testing.assert_array_equal(a[:2, 2:], np.eye(2))
        np.testing.assert_array_equal(b[:2], np.zeros((2, 2)))
        minv = np.linalg.inv(dyn.mass_matrix(p, x[:2]))
        assert_close_scaled(b[2:], minv, np.max(np.abs(minv)), 1e-10)


def test_linearize_default_torque_is_holding_torque():
    x = np.array([0.4, -1.1, 0.0, 0.0])
    a_default, b_default = dyn.linearize(DEFAULT, x)
    a, b = dyn.linearize(DEFAULT, x, dyn.gravity_torque(DEFAULT, x[:2]))
    np.testing.assert_allclose(a_default, a, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(b_default, b, rtol=1e-14, atol=1e-14)
    # a still pose with its holding torque is an equilibrium
    f = dyn.state_derivative(DEFAULT, x, dyn.gravity_torque(DEFAULT, x[:2]))
    np.testing.assert_allclose(f, 0.0, atol=1e-12)


@pytest.mark.parametrize("lead", [(), (5,), (3, 4)])
def test_linearize_batched_equals_loop(lead):
    rng = np.random.default_rng(len(lead))
    x = rng.uniform(-3.0, 3.0, (*lead, 4))
    u = rng.uniform(-10.0, 10.0, (*lead, 2))
    a, b = dyn.linearize(DEFAULT, x, u)
    assert a.shape == (*lead, 4, 4)
    assert b.shape == (*lead, 4, 2)
    for idx in np.ndindex(*lead):
        a1, b1 = dyn.linearize(DEFAULT, x[idx], u[idx])
        np.testing.assert_allclose(a[idx], a1, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(b[idx], b1, rtol=1e-12, atol=1e-12)
    a_def, _ = dyn.linearize(DEFAULT, x)
    for idx in np.ndindex(*lead):
        np.testing.assert_allclose(a_def[idx], dyn.linearize(DEFAULT, x[idx])[0], atol=1e-12)


# -- batching -------------------------------------------------------------------

# name -> (sizes of the array arguments, shape of one output (tuple for each output))
FUNCTIONS = {
    "mass_matrix": ((2,), ((2, 2),)),
    "coriolis_matrix": ((2, 2), ((2, 2),)),
    "coriolis_forces": ((2, 2), ((2,),)),
    "gravity_torque": ((2,), ((2,),)),
    "gravity_jacobian": ((2,), ((2, 2),)),
    "friction_torque": ((2,), ((2,),)),
    "forward_dynamics": ((2, 2, 2), ((2,),)),
    "inverse_dynamics": ((2, 2, 2), ((2,),)),
    "state_derivative": ((4, 2), ((4,),)),
    "kinetic_energy": ((2, 2), ((),)),
    "potential_energy": ((2,), ((),)),
    "energy": ((2, 2), ((), ())),
    "total_energy": ((4,), ((),)),
    "linearize": ((4, 2), ((4, 4), (4, 2))),
}


def _as_tuple(out):
    return out if isinstance(out, tuple) else (out,)


def test_every_public_function_is_covered():
    public = {
        name
        for name in dyn.__all__
        if callable(getattr(dyn, name)) and not isinstance(getattr(dyn, name), type)
    }
    # the scalar kernels and the arm-vector builders are covered through the
    # batched functions that run them (and test_kernel.py)
    kernels = {
        "accelerations",
        "arm_vector",
        "arm_vectors",
        "bias_torques",
        "energies",
        "has_coulomb",
        "mass_matrix_entries",
    }
    assert public - kernels - {"equilibria"} == set(FUNCTIONS)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("lead", [(), (5,), (3, 4)])
def test_batched_equals_loop(name, lead):
    sizes, out_shapes = FUNCTIONS[name]
    func = getattr(dyn, name)
    rng = np.random.default_rng(17)
    p = random_params(rng)
    args = [rng.uniform(-4.0, 4.0, (*lead, s)) for s in sizes]
    outs = _as_tuple(func(p, *args))
    assert len(outs) == len(out_shapes)
    for out, shape in zip(outs, out_shapes, strict=True):
        assert np.shape(out) == (*lead, *shape)
    for idx in np.ndindex(*lead):
        singles = _as_tuple(func(p, *[a[idx] for a in args]))
        for out, single, shape in zip(outs, singles, out_shapes, strict=True):
            assert np.shape(single) == shape
            np.testing.assert_allclose(out[idx], single, rtol=1e-12, atol=1e-12)


BROADCAST_Q_DQ = ["coriolis_matrix", "coriolis_forces", "kinetic_energy", "energy"]


@pytest.mark.parametrize("name", [*BROADCAST_Q_DQ, "forward_dynamics", "inverse_dynamics"])
def test_q_broadcasts_against_batched_dq(name):
    sizes, out_shapes = FUNCTIONS[name]
    func = getattr(dyn, name)
    rng = np.random.default_rng(23)
    p = random_params(rng)
    n = 6
    q = rng.uniform(-3.0, 3.0, 2)
    rest = [rng.uniform(-4.0, 4.0, (n, s)) for s in sizes[1:]]
    outs = _as_tuple(func(p, q, *rest))
    for out, shape in zip(outs, out_shapes, strict=True):
        assert np.shape(out) == (n, *shape)
    for i in range(n):
        singles = _as_tuple(func(p, q, *[r[i] for r in rest]))
        for out, single in zip(outs, singles, strict=True):
            np.testing.assert_allclose(out[i], single, rtol=1e-12, atol=1e-12)


def test_state_derivative_broadcasts_one_torque_over_states():
    rng = np.random.default_rng(29)
    x = rng.uniform(-3.0, 3.0, (7, 4))
    tau = np.array([0.5, -1.0])
    out = dyn.state_derivative(DEFAULT, x, tau)
    assert out.shape == (7, 4)
    for i in range(7):
        np.testing.assert_allclose(out[i], dyn.state_derivative(DEFAULT, x[i], tau), atol=1e-12)
    np.testing.assert_array_equal(out[:, :2], x[:, 2:])


# -- bad input ------------------------------------------------------------------

ARG_NAMES = {
    "mass_matrix": ("q",),
    "coriolis_matrix": ("q", "dq"),
    "coriolis_forces": ("q", "dq"),
    "gravity_torque": ("q",),
    "gravity_jacobian": ("q",),
    "friction_torque": ("dq",),
    "forward_dynamics": ("q", "dq", "tau"),
    "inverse_dynamics": ("q", "dq", "ddq"),
    "state_derivative": ("state", "tau"),
    "kinetic_energy": ("q", "dq"),
    "potential_energy": ("q",),
    "energy": ("q", "dq"),
    "total_energy": ("state",),
    "linearize": ("state", "tau"),
}

BAD_CASES = [
    (name, position, bad)
    for name in sorted(ARG_NAMES)
    for position in range(len(ARG_NAMES[name]))
    for bad in ("short", "long", "batched", "scalar")
]


def _bad_value(size, kind):
    return {
        "short": np.zeros(size - 1),
        "long": np.zeros(size + 1),
        "batched": np.zeros((3, size + 1)),
        "scalar": np.float64(0.5),
    }[kind]


@pytest.mark.parametrize(("name", "position", "kind"), BAD_CASES)
def test_wrong_last_axis_raises_naming_argument(name, position, kind):
    sizes, _ = FUNCTIONS[name]
    args = [np.zeros(s) for s in sizes]
    args[position] = _bad_value(sizes[position], kind)
    arg_name = ARG_NAMES[name][position]
    # the message starts with the argument's name ("state_eq"/"tau_eq" for linearize)
    with pytest.raises(ValueError, match=rf"^{arg_name}(_eq)?\b"):
        getattr(dyn, name)(DEFAULT, *args)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("junk", [np.array(["a", "b", "c", "d"]), np.array([None] * 4)])
def test_non_numeric_input_raises(name, junk):
    sizes, _ = FUNCTIONS[name]
    for position in range(len(sizes)):
        args = [np.zeros(s) for s in sizes]
        args[position] = junk[: sizes[position]]
        with pytest.raises(ValueError, match="numeric"):
            getattr(dyn, name)(DEFAULT, *args)


def test_integer_input_is_accepted_as_float():
    got = dyn.gravity_torque(DEFAULT, np.array([0, 0]))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, [19.62, 4.905])


# -- a peer library: Gymnasium's Acrobot-v1 ---------------------------------------


def test_acrobot_v1_preset_matches_gymnasiums_own_equations():
    """Our dynamics with ArmParams.acrobot_v1() against AcrobotEnv._dsdt ("book")."""
    from gymnasium.envs.classic_control.acrobot import AcrobotEnv, rk4

    from twolink_gym import ArmParams, step

    env = AcrobotEnv()
    assert env.book_or_nips == "book"
    params = ArmParams.acrobot_v1()
    rng = np.random.default_rng(2024)
    theta = rng.uniform(-np.pi, np.pi, (500, 2))
    dtheta = np.column_stack(
        [rng.uniform(-4 * np.pi, 4 * np.pi, 500), rng.uniform(-9 * np.pi, 9 * np.pi, 500)]
    )
    torque = rng.uniform(-1.0, 1.0, 500)
    # Acrobot-v1 measures theta1 from the hanging pose; ours from +x (hanging is -pi/2)
    q = theta + np.array([-np.pi / 2, 0.0])
    tau = np.column_stack([np.zeros(500), torque])
    ours = dyn.forward_dynamics(params, q, dtheta, tau)
    theirs = np.array(
        [
            env._dsdt(np.array([*t, *w, a]))[2:4]
            for t, w, a in zip(theta, dtheta, torque, strict=True)
        ]
    )
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12 * np.max(np.abs(theirs)))
    # and one of Acrobot-v1's steps (a single RK4 step of dt = 0.2 s) from the same states
    for t, w, a in list(zip(theta, dtheta, torque, strict=True))[:50]:
        theirs_next = rk4(env._dsdt, np.array([*t, *w, a]), [0, env.dt])[:4]
        ours_next = step(params, [t[0] - np.pi / 2, t[1], *w], [0.0, a], env.dt, 1)
        np.testing.assert_allclose(ours_next[0] + np.pi / 2, theirs_next[0], rtol=0, atol=1e-10)
        np.testing.assert_allclose(ours_next[1:], theirs_next[1:], rtol=1e-10, atol=1e-10)
