"""``twolink configs``: list the shipped training configs, or copy one out to edit it."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Add ``configs``."""
    p = sub.add_parser(
        "configs",
        help="list the shipped configs (every command takes one by name), or copy one out",
        description="Without NAME: list the training configs shipped with the package, with "
        "the first line of each. Every command that takes a config takes one of these by name "
        "(twolink run reach_ppo). With NAME and --out: copy that config to a file to edit.",
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="a shipped config to copy out")
    p.add_argument(
        "--out", metavar="PATH", help="where to copy NAME: a file, or a folder (NAME.yaml in it)"
    )
    p.add_argument("--overwrite", action="store_true", help="replace an existing file at PATH")
    p.set_defaults(func=run)


def _summary(text: str) -> str:
    """The first comment line of a config file, without its ``#``."""
    for line in text.splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
        if line.strip():
            break
    return ""


def run(args: argparse.Namespace) -> int:
    """Run ``twolink configs``."""
    from twolink_gym.training import shipped_configs

    if args.name is None:
        if args.out is not None:
            raise ValueError("--out needs the NAME of the config to copy (twolink configs)")
        names = shipped_configs.available()
        width = max(len(n) for n in names)
        for name in names:
            text = (shipped_configs.folder() / f"{name}.yaml").read_text()
            print(f"{name:{width}s}  {_summary(text)}".rstrip())
        print(
            f"\n{len(names)} configs in {shipped_configs.folder()}. Use one by name "
            "(twolink run reach_ppo), or copy it out to edit: twolink configs NAME --out PATH"
        )
        return 0
    if args.out is None:
        if not shipped_configs.is_shipped_name(args.name):
            raise ValueError(
                f"no shipped config {args.name!r}; the shipped configs are "
                f"{shipped_configs.available()}"
            )
        print(
            (shipped_configs.folder() / f"{args.name.removesuffix('.yaml')}.yaml").read_text(),
            end="",
        )
        return 0
    target = shipped_configs.copy_out(args.name, args.out, overwrite=args.overwrite)
    print(f"{args.name} copied to {target}: twolink train {target}")
    return 0
