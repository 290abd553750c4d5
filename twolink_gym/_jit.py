"""The compiler glue: numba's ``njit`` with the project's settings, and ``sincos``.

Every compiled function of the package is decorated with :func:`kernel`:
numba's ``njit`` with numpy's error model (a float division by zero gives
inf/NaN as in numpy, never an exception; the equations never divide by zero)
and, for functions defined in a ``.py`` file, numba's public on-disk cache
(``cache=True``: the machine code is written beside the module, in
``__pycache__``, or where ``NUMBA_CACHE_DIR`` points, and loaded by later
processes instead of being compiled again). Nothing compiles at import: a
kernel compiles on its first use (from Python, or inside the first compiled
function that calls it) and later processes load it from the cache.

Keeping the cache correct
    numba checks a cache entry only against the timestamp of the file that
    defines the cached function, but a kernel embeds the machine code of the
    kernels it calls, from other files: a cached RK4 would keep an old copy of
    the equations of motion after ``dynamics.py`` changed. So every cache entry
    of the package is filed under the function's qualified name plus a digest
    of *all* the package's ``.py`` sources (:data:`SOURCE_DIGEST`, no list of
    modules to keep): any change of the package's code gives every kernel new
    cache files, found again by any process with the same sources. The loops
    over a task kernel (:func:`bound_kernel`) add the digest of the task
    kernel's own file, so a task written outside the package is covered too.
    Old cache files are left where they are (numba never deletes them);
    deleting the ``*.nbi``/``*.nbc`` files of ``__pycache__`` is always safe.

Limits (numba's cache itself)
    A function defined outside a ``.py`` file (a notebook cell, ``exec``) is
    compiled in every process, never cached. A kernel of the user's own that
    calls a kernel from another of the user's files is keyed on its own file
    only (numba's rule). Functions that take a compiled function as an argument,
    and closures over one, cannot be cached (numba keys them on a pickle that
    differs in every process): :func:`bound_kernel` binds the compiled function
    as a global of its own copy of the function instead.

With the environment variable ``NUMBA_DISABLE_JIT=1`` set before the first
import, :func:`kernel` returns the plain Python function: the same source then
runs in the interpreter, slowly, for debugging with ``pdb`` or ``print``.
"""

from __future__ import annotations

import cmath
import functools
import hashlib
import inspect
import math
import os
import types as pytypes
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numba
import numpy as np
from numba import types
from numba.extending import overload

__all__ = [
    "JIT_DISABLED",
    "SOURCE_DIGEST",
    "bound_kernel",
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

_PACKAGE = Path(__file__).resolve().parent


def _sources_digest(root: Path) -> str:
    """SHA-256 over the relative paths and contents of every ``.py`` file under ``root``."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


#: Digest of the package's ``.py`` sources: part of every cache entry's name.
SOURCE_DIGEST: str = _sources_digest(_PACKAGE)


def kernel(
    signature: Any = None, *, parallel: bool = False, cache: bool = True, inline: bool = False
) -> Callable[[F], F]:
    """Compile a function with numba on first use (numpy error model, on-disk cache).

    Parameters
    ----------
    signature : numba signature, optional
        The argument and return types the function is written for (as a
        record of its interface, e.g. the task kernels'). Compilation is lazy
        in every case, for the argument types of each use: importing a module
        of kernels compiles nothing.
    parallel : bool
        Let ``numba.prange`` loops run on numba's thread pool.
    cache : bool
        Keep the machine code on disk under a key of the package's sources
        (see the module notes; only for functions of a ``.py`` file). Off
        for functions that take a compiled function as an argument: numba
        cannot find those in its cache from one process to the next.
    inline : bool
        Inline the function into its callers in numba's own IR (``inline="always"``),
        which lets numba drop the reference counting of the array views passed in.
    """
    del signature  # documentation only: compiled lazily for the types of each use
    options = _options(parallel=parallel, inline=inline)

    def decorate(fn: F) -> F:
        if JIT_DISABLED:
            return numba.njit(**options)(fn)  # the function itself
        if not (cache and _from_python_file(fn)):
            return numba.njit(**options)(fn)
        return _cached_njit(fn, fn.__globals__, SOURCE_DIGEST[:16], options)

    return decorate


def bound_kernel(
    template: Callable[..., Any],
    bindings: Mapping[str, Any],
    *,
    parallel: bool = False,
    variant: str = "",
) -> Any:
    """Compile a copy of ``template`` that sees ``bindings`` as globals (on first use, cached).

    The way to write one loop for many task kernels: ``template`` refers to a
    module-level name (say ``task_kernel``), and each copy binds it to one
    compiled function. numba freezes globals into the machine code, so each
    copy is compiled separately, and its cache entry is filed under the
    template's qualified name, ``variant``, the qualified names of the bound
    functions, the package's sources and the source files of the bound
    functions: a change of any of them gives new cache files.

    Parameters
    ----------
    template : function
        A plain Python function of a ``.py`` file (not compiled).
    bindings : mapping of str to object
        Globals of the copy, over the template's module globals.
    parallel : bool
        Compile with ``parallel=True`` (``prange`` on numba's thread pool).
    variant : str
        Told apart in the cache entry's name (e.g. a serial and a parallel copy).

    Returns
    -------
    numba dispatcher
        The compiled copy (the Python copy itself with ``NUMBA_DISABLE_JIT=1``).
    """
    namespace, key = _copy_key(template, bindings, variant)
    options = _options(parallel=parallel, inline=False)
    if JIT_DISABLED or key is None:
        return numba.njit(**options)(_copy(template, namespace, template.__qualname__))
    return _cached_njit(template, namespace, key, options)


def _copy_key(
    template: Callable[..., Any], bindings: Mapping[str, Any], variant: str
) -> tuple[dict[str, Any], str | None]:
    """The globals of a bound copy of ``template`` and its cache key (``None``: not cacheable)."""
    namespace = {**template.__globals__, **bindings}
    parts = [variant]
    cacheable = _from_python_file(template)
    for name, value in sorted(bindings.items()):
        if callable(value):
            source = python_source(value)
            parts.append(f"{name}={source.__module__}.{source.__qualname__}")
            if not _from_python_file(source):
                cacheable = False
                continue
            path = inspect.getsourcefile(source)
            assert path is not None
            parts.append(_file_digest(os.path.abspath(path)))
    if not cacheable:
        return namespace, None
    return namespace, hashlib.sha256("|".join([SOURCE_DIGEST, *parts]).encode()).hexdigest()[:16]


def _options(*, parallel: bool, inline: bool) -> dict[str, Any]:
    """``njit`` options of the package's kernels."""
    options: dict[str, Any] = {"error_model": "numpy", "nogil": True}
    if inline:
        options["inline"] = "always"
    if parallel:
        options["parallel"] = True
    return options


def _copy(fn: Callable[..., Any], namespace: dict[str, Any], qualname: str) -> Any:
    """A new function with ``fn``'s code over globals ``namespace``, named ``qualname``."""
    copy = pytypes.FunctionType(
        fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__
    )
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__module__ = fn.__module__
    copy.__doc__ = fn.__doc__
    copy.__qualname__ = qualname
    return copy


def _cached_njit(
    fn: Callable[..., Any], namespace: dict[str, Any], key: str, options: dict[str, Any]
) -> Any:
    """``njit(cache=True)`` of a copy of ``fn`` whose cache files carry ``key`` in their name.

    numba names a function's cache files after its qualified name: the copy's
    is ``fn``'s plus ``key``; the dispatcher shows ``fn``'s own name.
    """
    copy = _copy(fn, namespace, f"{fn.__qualname__}~{key}")
    dispatcher = numba.njit(cache=True, **options)(copy)
    dispatcher.__qualname__ = fn.__qualname__
    return dispatcher


@functools.cache
def _file_digest(path: str) -> str:
    """SHA-256 of a source file (read once per process)."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _from_python_file(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` was defined in a ``.py`` file (not a notebook cell or ``exec``)."""
    try:
        path = inspect.getsourcefile(python_source(fn))
    except TypeError:
        return False
    return path is not None and path.endswith(".py") and os.path.isfile(path)


def sincos(x: float) -> tuple[float, float]:
    """``(sin x, cos x)`` of a float (compiled code also takes a complex ``x``).

    Compiled, it is ``math.sin`` and ``math.cos``: numba emits LLVM's ``sin``
    and ``cos``, and LLVM lowers the pair to the platform's own routines (on
    Linux one call of the C library's ``sincos``, which shares the argument
    reduction; elsewhere whatever that platform provides), so no C symbol is
    named here. In the interpreter (``NUMBA_DISABLE_JIT=1``) this Python body
    runs, for floats and complex numbers alike.
    """
    return np.sin(x), np.cos(x)


@overload(sincos)
def _sincos_overload(x):  # type: ignore[no-untyped-def,unused-ignore]  # numba matches names
    if isinstance(x, types.Float):
        return lambda x: (math.sin(x), math.cos(x))
    if isinstance(x, types.Complex):  # the complex step of dynamics.linearize
        return lambda x: (cmath.sin(x), cmath.cos(x))
    return None


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
