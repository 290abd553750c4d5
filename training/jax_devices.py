"""The seeds of a ``jax_*`` run laid out over devices: CPU cores or GPUs, one share each.

A ``jax_*`` run vmaps its train state over the seeds (axis 0 of every leaf). With
several devices, :class:`SeedLayout` splits that axis over them (a
``NamedSharding`` of axis ``seed``): ``jax.jit`` then runs each device's share of
the seeds in parallel, and every seed trains as it would alone, up to float32
rounding (the batch each device computes differs, and with it the order of sums).
The axis must divide evenly, so the layout pads it with copies of the first seeds'
rows ("spare copies": trained, never saved, evaluated or reported).

On a CPU, JAX has one device unless told otherwise before its backend starts:
:func:`request_cpu_devices` asks for ``train.jax_devices`` of them, and XLA runs
each device's computations on threads of its own, so one device per core keeps
every core busy with a share of the seeds.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

__all__ = ["SeedLayout", "request_cpu_devices", "seed_layout"]


def request_cpu_devices(count: int) -> None:
    """Ask JAX for ``count`` CPU devices, if its backend has not started yet.

    ``jax.config.update("jax_num_cpu_devices", count)``; once JAX has run a
    computation in this process the request cannot take effect and is left (the
    run then uses the devices JAX has, and says how many).
    """
    import jax

    try:
        jax.config.update("jax_num_cpu_devices", count)
    except RuntimeError:  # the backend is already initialised
        pass


@dataclasses.dataclass(frozen=True)
class SeedLayout:
    """How ``n_seeds`` seeds are spread over ``devices``.

    Attributes
    ----------
    n_seeds : int
        The config's seeds.
    copies : int
        Rows of the vmapped axis: ``n_seeds`` rounded up to a multiple of the devices.
    devices : list
        The JAX devices the rows are split over (one: no sharding).
    """

    n_seeds: int
    copies: int
    devices: list[Any]

    @property
    def sharding(self) -> Any | None:
        """The ``NamedSharding`` of axis 0 over :attr:`devices`; None for one device."""
        if len(self.devices) == 1:
            return None
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        return NamedSharding(Mesh(self.devices, ("seed",)), PartitionSpec("seed"))

    def pad(self, tree: Any) -> Any:
        """``tree`` (leaves with ``n_seeds`` rows) with the spare copies appended (rows 0, 1, ...)."""
        import jax
        import jax.numpy as jnp

        spare = self.copies - self.n_seeds
        if spare == 0:
            return tree
        rows = [i % self.n_seeds for i in range(spare)]
        return jax.tree.map(lambda x: jnp.concatenate([x, x[jnp.asarray(rows)]]), tree)

    def place(self, tree: Any) -> Any:
        """``tree`` (``copies`` rows) put on the devices, split along axis 0."""
        import jax

        sharding = self.sharding
        return tree if sharding is None else jax.device_put(tree, sharding)

    def abstract(self, tree: Any) -> Any:
        """Shape-dtype structs of ``tree``'s leaves, carrying the layout's sharding."""
        import jax

        sharding = self.sharding
        return jax.tree.map(
            lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding), tree
        )

    def describe(self) -> str:
        """The layout in words for the progress line: ``"2 cpu devices, 1 spare copy"``."""
        devices, spare = len(self.devices), self.copies - self.n_seeds
        words = f"{devices} {self.devices[0].platform} device" + ("s" if devices > 1 else "")
        if spare:
            words += f", {spare} spare cop" + ("ies" if spare > 1 else "y")
        return words


def seed_layout(n_seeds: int, wanted: int) -> SeedLayout:
    """The layout of ``n_seeds`` seeds over ``wanted`` devices (``train.jax_devices``).

    The devices of JAX's default backend (the GPUs when JAX sees any): the first
    ``wanted`` of them, no more than there are seeds or devices.
    """
    import jax

    devices = jax.local_devices()
    count = max(1, min(len(devices), n_seeds, wanted))
    return SeedLayout(n_seeds, math.ceil(n_seeds / count) * count, devices[:count])
