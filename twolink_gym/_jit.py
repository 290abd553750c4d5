"""The compiler glue: numba's ``njit`` with the project's settings, and ``sincos``.

Every compiled function of the package is decorated with :func:`kernel`:
numba's ``njit`` with ``cache=True`` (the machine code is written beside the
module, in ``__pycache__``, and loaded by later processes instead of being
compiled again) and numpy's error model (a float division by zero gives
inf/NaN as in numpy, never an exception; the equations never divide by zero).

With the environment variable ``NUMBA_DISABLE_JIT=1`` set before the first
import, :func:`kernel` returns the plain Python function: the same source then
runs in the interpreter, slowly, for debugging with ``pdb`` or ``print``.
"""

from __future__ import annotations

import cmath
import functools
import hashlib
import inspect
import os
from collections.abc import Callable
from typing import Any, TypeVar

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.caching import FunctionCache
from numba.extending import intrinsic, overload

__all__ = [
    "JIT_DISABLED",
    "cache_closure",
    "get_num_threads",
    "kernel",
    "max_threads",
    "python_source",
    "set_num_threads",
    "sincos",
]

F = TypeVar("F", bound=Callable[..., Any])

#: Whether numba's compiler is disabled (``NUMBA_DISABLE_JIT=1``).
JIT_DISABLED: bool = bool(numba.config.DISABLE_JIT)  # type: ignore[attr-defined]


def kernel(
    signature: Any = None, *, parallel: bool = False, cache: bool = True, inline: bool = False
) -> Callable[[F], F]:
    """Compile a function with numba (``cache=True``, numpy error model).

    Parameters
    ----------
    signature : numba signature, optional
        Compile eagerly for this signature only; default: compile lazily for
        the argument types of each call.
    parallel : bool
        Let ``numba.prange`` loops run on numba's thread pool.
    cache : bool
        Write the machine code to disk, keyed on the sources it embeds (see
        :func:`cache_closure`; only for functions of a ``.py`` file: in a
        notebook or ``exec``'d code there is no file to key the cache on). Off
        for functions that take a compiled function as an argument: numba
        cannot find those in its cache from one process to the next.
    inline : bool
        Inline the function into its callers in numba's own IR (``inline="always"``),
        which lets numba drop the reference counting of the array views passed in.
    """
    options: dict[str, Any] = {"error_model": "numpy", "nogil": True}
    if inline:
        options["inline"] = "always"
    if parallel:
        options["parallel"] = True

    def decorate(fn: F) -> F:
        dispatcher = numba.njit(**options)(fn)
        if JIT_DISABLED:  # njit gave the Python function back
            return dispatcher  # type: ignore[no-any-return,unused-ignore]
        if cache:
            cache_closure(dispatcher, fn)
        if signature is not None:  # eager, for this signature only (as njit(signature))
            dispatcher.compile(signature)
            dispatcher.disable_compile()
        return dispatcher  # type: ignore[no-any-return,unused-ignore]

    return decorate


def _from_python_file(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` was defined in a ``.py`` file (not a notebook cell or ``exec``)."""
    try:
        path = inspect.getsourcefile(python_source(fn))
    except TypeError:
        return False
    return path is not None and path.endswith(".py") and os.path.isfile(path)


def sincos(x: float) -> tuple[float, float]:
    """``(sin x, cos x)``: one call of the C library's ``sincos`` in compiled code.

    C's ``sincos`` shares the argument reduction of the two functions and costs
    about as much as one of them; its results are those of ``sin`` and ``cos``
    bit for bit (glibc; checked in the tests against ``numpy.sin``/``cos``).
    Compiled code also accepts a complex ``x`` (``cmath``). In the interpreter
    (``NUMBA_DISABLE_JIT=1``) this Python body runs, for floats and complex
    numbers alike.
    """
    return np.sin(x), np.cos(x)


@intrinsic
def _libm_sincos(typingctx, x):  # type: ignore[no-untyped-def,unused-ignore]
    if not isinstance(x, types.Float):
        return None
    sig = types.UniTuple(types.float64, 2)(x)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        dbl = ir.DoubleType()
        fnty = ir.FunctionType(ir.VoidType(), [dbl, dbl.as_pointer(), dbl.as_pointer()])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "sincos")
        s = cgutils.alloca_once(builder, dbl)
        c = cgutils.alloca_once(builder, dbl)
        builder.call(fn, [context.cast(builder, args[0], signature.args[0], types.float64), s, c])
        return context.make_tuple(
            builder, signature.return_type, [builder.load(s), builder.load(c)]
        )

    return sig, codegen


@overload(sincos)
def _sincos_overload(x):  # type: ignore[no-untyped-def,unused-ignore]  # numba matches names
    if isinstance(x, types.Float):
        return lambda x: _libm_sincos(x)  # type: ignore[call-arg]
    if isinstance(x, types.Complex):  # the complex step of dynamics.linearize
        return lambda x: (cmath.sin(x), cmath.cos(x))
    return None


#: The package's kernel modules, whose compiled code other kernels embed: a change
#: in any of them makes every cache entry unreachable (see :func:`cache_closure`).
_KERNEL_MODULES = (
    "_jit.py",
    "dynamics.py",
    "kinematics.py",
    "integrators.py",
    "kernel.py",
    "tasks/base.py",
    "tasks/balance.py",  # upright_terms and tilt_from_vertical, shared with swing-up
)


@functools.cache
def _file_digest(path: str) -> str:
    """SHA-256 of a source file (read once per process: the sources do not change under it)."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class _KeyedCache(FunctionCache):  # type: ignore[misc,unused-ignore]
    """numba's function cache with the index key of :func:`cache_closure`."""

    def __init__(self, py_func: Callable[..., Any], salt: str) -> None:
        super().__init__(py_func)
        self._salt = salt

    def _index_key(self, sig: Any, codegen: Any) -> Any:
        code = hashlib.sha256(self._py_func.__code__.co_code).hexdigest()
        return (sig, codegen.magic_tuple(), (code, self._salt))


def cache_closure(dispatcher: Any, captured: Callable[..., Any], variant: str = "") -> bool:
    """Give a compiled function an on-disk cache keyed on the sources it embeds.

    Used for every kernel (:func:`kernel` calls it with the function itself as
    ``captured``) and for the closures over a task kernel. numba's own cache
    has two gaps here: it keys a closure on a pickle of the captured values, and
    a compiled function pickles differently in every process, so a closure over
    one is never found again; and it checks only the timestamp of the cached
    function's own file, so a cached RK4 would keep an old copy of the equations
    of motion after ``dynamics.py`` changed. Here the key is the function's
    code, a digest of the source files of the package's kernel modules and of
    the file that defines ``captured``, and ``captured``'s qualified name: the
    entry is found again by any process with the same sources, and a change in
    any of them gives a new key.

    Parameters
    ----------
    dispatcher : numba dispatcher
        The function to cache (before its first compilation).
    captured : function or compiled function
        The function whose file and name key the entry: the closure's captured
        kernel, or the function itself.
    variant : str
        Told apart in the key: one source compiled with different options
        (serial and ``parallel=True``) must not share entries.

    Returns
    -------
    bool
        Whether the cache was enabled (not for a ``captured`` defined outside a
        ``.py`` file, or with the compiler disabled).
    """
    if JIT_DISABLED or not _from_python_file(captured):
        return False
    py_func = python_source(captured)
    package = os.path.dirname(os.path.abspath(__file__))
    files = [os.path.join(package, name) for name in _KERNEL_MODULES]
    files.append(os.path.abspath(inspect.getsourcefile(py_func) or ""))
    digests = ",".join(_file_digest(path) for path in files)
    salt = f"{py_func.__module__}.{py_func.__qualname__}:{variant}:{digests}"
    dispatcher._cache = _KeyedCache(dispatcher.py_func, salt)
    return True


def python_source(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The Python function behind a compiled kernel (the function itself without the compiler).

    A kernel that calls no other kernel runs on numpy arrays this way.
    """
    return getattr(fn, "py_func", fn)


def max_threads() -> int:
    """The size of numba's thread pool (``NUMBA_NUM_THREADS``, default: the CPU count)."""
    return int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]


def get_num_threads() -> int:
    """The number of threads the calling thread's parallel loops use."""
    return int(numba.get_num_threads())


def set_num_threads(n: int) -> None:
    """Set the threads of the calling thread's parallel loops (1 … :func:`max_threads`)."""
    numba.set_num_threads(n)
