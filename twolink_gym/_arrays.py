"""Input checking shared by the numerical modules (private)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["as_vectors"]


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
