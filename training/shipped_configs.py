"""The training configs shipped with the package (the repository's ``configs/`` folder).

They install as the data package ``twolink_gym.configs``, so that a command
takes a shipped config by name (``twolink run reach_ppo``) wherever it runs.
Standard library only: ``twolink configs`` works with the core install.
"""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

__all__ = ["PACKAGE", "available", "copy_out", "folder", "is_shipped_name", "resolve"]

#: The package that holds the shipped configs.
PACKAGE = "twolink_gym.configs"
_SUFFIXES = (".yaml", ".yml")


def folder() -> Path:
    """The folder of the shipped configs (``configs/`` in a checkout, the package's when installed)."""
    root = resources.files(PACKAGE)
    if not isinstance(root, Path):  # pragma: no cover - a zipped install
        raise RuntimeError(f"the shipped configs ({PACKAGE}) are not a folder on disk: {root}")
    return root


def available() -> list[str]:
    """The names of the shipped training configs, sorted (``reach_ppo``, ...)."""
    return sorted(p.stem for p in folder().glob("*.yaml"))


def is_shipped_name(text: str) -> bool:
    """Whether ``text`` names a shipped config: its name, with or without ``.yaml``, no folder."""
    path = Path(text)
    if len(path.parts) != 1 or path.suffix.lower() not in ("", *_SUFFIXES):
        return False
    return path.stem in available()


def resolve(text: str) -> Path:
    """The config file that ``text`` names: an existing file, else a shipped config of that name.

    Raises
    ------
    FileNotFoundError
        If ``text`` is neither, naming the shipped configs (and the one that a
        missing ``configs/NAME.yaml`` of a checkout would be).
    """
    path = Path(text)
    if path.exists():
        return path
    if is_shipped_name(text):
        return folder() / f"{path.stem}.yaml"
    names = available()
    hint = ""
    if path.stem in names:
        hint = f"; the shipped config of that name is {path.stem!r} (give it by name)"
    raise FileNotFoundError(
        f"no such config file {text!r}{hint}; a config is a YAML file or the name of a "
        f"shipped config: {', '.join(names)} (`twolink configs`)"
    )


def copy_out(name: str, out: str | Path, *, overwrite: bool = False) -> Path:
    """Copy the shipped config ``name`` to ``out`` (a file, or a folder to put ``NAME.yaml`` in).

    Raises
    ------
    ValueError
        If ``name`` is not a shipped config.
    FileExistsError
        If the target exists and ``overwrite`` is false.
    """
    if not is_shipped_name(name):
        raise ValueError(f"no shipped config {name!r}; the shipped configs are {available()}")
    source = folder() / f"{Path(name).stem}.yaml"
    target = Path(out)
    if target.is_dir():
        target = target / source.name
    if target.exists() and not overwrite:
        raise FileExistsError(f"{target} already exists; give another --out, or --overwrite")
    if not target.parent.is_dir():
        raise FileNotFoundError(f"--out {out}: the folder {target.parent} does not exist")
    shutil.copyfile(source, target)
    return target
