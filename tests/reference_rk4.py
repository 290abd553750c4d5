"""A second RK4 for the tests: the classic scheme written out in numpy.

It integrates the batched vector field ``dynamics.state_derivative`` (checked
against a sympy derivation in ``test_dynamics.py``), so the compiled RK4 kernel
is compared with an independent implementation of the scheme.
"""

from __future__ import annotations

from twolink_gym.dynamics import state_derivative


def numpy_rk4(params, state, tau, dt, substeps):
    """``substeps`` classic RK4 steps of ``dt / substeps`` from ``state`` (shape (..., 4))."""
    h = dt / substeps
    x = state.copy()
    for _ in range(substeps):
        k1 = state_derivative(params, x, tau)
        k2 = state_derivative(params, x + 0.5 * h * k1, tau)
        k3 = state_derivative(params, x + 0.5 * h * k2, tau)
        k4 = state_derivative(params, x + h * k3, tau)
        x = x + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return x
