"""Input checking shared by the numerical modules (private)."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["as_vectors", "positive_integer", "positive_number"]


def as_vectors(value: ArrayLike, size: int, name: str) -> NDArray[Any]:
    """Return ``value`` as a float (or complex) array whose last axis has ``size`` entries.

    Parameters
    ----------
    value : array_like, shape (size,) or (..., size)
        The input.
    size : int
        Required length of the last axis.
    name : str
        Argument name used in the error message.

    Returns
    -------
    ndarray, shape (..., size)
        ``float64`` unless the input is already floating or complex (complex
        inputs are kept so that complex-step differentiation works).

    Raises
    ------
    ValueError
        If the last axis does not have ``size`` entries or the values are not
        numeric.
    """
    arr = np.asarray(value)
    if arr.dtype.kind not in "fc":
        if arr.dtype.kind not in "iu":
            raise ValueError(f"{name} must be numeric, got an array of dtype {arr.dtype}")
        arr = arr.astype(np.float64)
    if arr.ndim == 0 or arr.shape[-1] != size:
        raise ValueError(f"{name} must have shape ({size},) or (..., {size}), got {arr.shape}")
    return arr


def positive_number(value: Any, name: str) -> float:
    """Return ``value`` as a float after checking it is a finite real number > 0.

    Raises
    ------
    ValueError
        Naming the argument, for a bool, a non-number, NaN, infinity or a value <= 0.
    """
    message = f"{name} must be a finite number > 0, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(message)
    number = float(value)
    if not (math.isfinite(number) and number > 0):
        raise ValueError(message)
    return number


def non_negative_number(value: Any, name: str) -> float:
    """Return ``value`` as a float after checking it is a finite real number >= 0.

    Raises
    ------
    ValueError
        Naming the argument, for a bool, a non-number, NaN, infinity or a value < 0.
    """
    message = f"{name} must be a finite number >= 0, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(message)
    number = float(value)
    if not (math.isfinite(number) and number >= 0):
        raise ValueError(message)
    return number


def positive_integer(value: Any, name: str) -> int:
    """Return ``value`` as an int after checking it is an integer >= 1 (bools rejected).

    Raises
    ------
    ValueError
        Naming the argument.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)
