"""What the single and the vector env share around a :class:`Simulation`: info dicts and drawing.

:class:`~twolink_gym.env.TwoLinkEnv` and
:class:`~twolink_gym.vector_env.TwoLinkVectorEnv` are thin Gymnasium adapters
of one :class:`~twolink_gym.simulation.Simulation`; their binding of the
compiled step loop and their renderers are built here, once. Each env builds
its ``info`` on its own fast path (on floats for one arm, on arrays for a
batch), with the same entries in the same order: ``state``, ``tip``,
``distance``, ``is_success``, ``time``, the task's goal entries
(:meth:`~twolink_gym.tasks.Task.goal_info`, for a task with a goal), the
reported reward terms, and ``params`` with ``randomize``
(``tests/test_speed_contract.py`` checks that they agree).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from twolink_gym._jit import JIT_DISABLED
from twolink_gym.kernel import call_table, step_kernels
from twolink_gym.params import ArmParams
from twolink_gym.simulation import Simulation, StepBuffers

if TYPE_CHECKING:
    from twolink_gym.rendering import ArmRenderer

__all__ = ["BoundStepLoop", "check_render_mode", "draw", "new_renderer"]


class BoundStepLoop:
    """The task's compiled step loops, bound once to an env's arrays.

    Mixed into both envs. The env's arrays (``_arms`` ``(n, 12)``, ``_state``
    ``(n, 4)``, ``_goal``, ``_last_action`` ``(n, 2)``, ``_buffers``,
    ``_elapsed`` ``(n,)``) are updated in place from step to step, never
    rebound, so a step calls the loop (:meth:`_step_loop`) without rebuilding
    its arguments. Pickling leaves the compiled loops out and binds
    them again on unpickling.
    """

    sim: Simulation
    _arms: NDArray[np.float64]
    _state: NDArray[np.float64]
    _goal: NDArray[np.float64]
    _last_action: NDArray[np.float64]
    _buffers: StepBuffers
    _elapsed: NDArray[np.int64]

    def _bind_kernel(self) -> None:
        """Look up the task's step loops and bind their arguments to the env's arrays.

        :meth:`_step_loop` calls the loop by the address of the arrays' call
        table (``step_by_address`` of :class:`~twolink_gym.kernel.StepKernels`:
        one integer crosses to compiled code instead of twelve arrays), or,
        without numba's compiler, the loop itself.
        """
        self._loops = step_kernels(self.sim.task)
        self._step_args = self.sim.loop_arguments(
            self._arms, self._state, self._goal, self._last_action, self._buffers, self._elapsed
        )
        self._call_table = call_table(self._step_args)
        self._table_address = int(self._call_table.ctypes.data)
        self._by_address = None if JIT_DISABLED else self._loops.step_by_address

    def _step_loop(self) -> None:
        """One control step of every arm on the calling thread (the arrays in place)."""
        if self._by_address is not None:
            self._by_address(self._table_address)
        else:
            self._loops.step(*self._step_args)

    def __getstate__(self) -> dict[str, Any]:
        """The env's attributes without the compiled loops and the call table."""
        state = self.__dict__.copy()
        for name in ("_loops", "_step_args", "_call_table", "_table_address", "_by_address"):
            del state[name]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore the attributes and bind the loops again."""
        self.__dict__.update(state)
        self._bind_kernel()


def check_render_mode(render_mode: str | None, modes: Sequence[str]) -> str | None:
    """``render_mode`` if it is ``None`` or one of ``modes``.

    Raises
    ------
    ValueError
        Naming the argument and the allowed values.
    """
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode must be one of {list(modes)} or None, got {render_mode!r}")
    return render_mode


def new_renderer(sim: Simulation, arm: ArmParams, render_mode: str, fps: int) -> ArmRenderer:
    """A renderer of ``sim``'s task and motors for the arm ``arm`` (imports pygame).

    Raises
    ------
    ImportError
        If pygame is not installed (from :mod:`twolink_gym.rendering`).
    """
    from twolink_gym.rendering import ArmRenderer

    return ArmRenderer(
        arm,
        sim.task,
        render_mode=render_mode,
        fps=fps,
        max_torque=sim.max_torque,
        actuated=sim.actuated,
    )


def draw(
    renderer: ArmRenderer,
    sim: Simulation,
    state: NDArray[np.float64],
    goal: NDArray[np.float64],
    time: float,
    reward: float,
    action: NDArray[np.float64],
) -> NDArray[np.uint8] | None:
    """Draw one arm: ``state`` ``(4,)``, ``goal`` ``(goal_size,)``, applied ``action`` ``(2,)``.

    ``time`` [s] and ``reward`` are shown; the action is drawn as joint
    torques [N·m]. Returns the ``(H, W, 3)`` uint8 frame (``rgb_array``) or ``None``.
    """
    return renderer.draw(state, goal, time=time, reward=reward, torque=sim.torque(action))
