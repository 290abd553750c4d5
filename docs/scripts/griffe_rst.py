"""A griffe extension for the API reference: reStructuredText markup in docstrings as Markdown.

The package's docstrings are numpy style with a few reStructuredText habits
that Markdown would show literally: cross-reference roles
(``:class:`Task```, ``:func:`~twolink_gym.step```), double-backtick literals
and ``::`` before a literal block. The extension rewrites them in the
docstrings as griffe loads them (the source files are not touched): a role
becomes inline code of its target (the last component for ``~``), a double
backtick a single one, and a trailing ``::`` a single colon (the indented
block after it is a code block in Markdown already). Listed under the
mkdocstrings handler's ``extensions`` in ``mkdocs.yml``.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|obj|exc|const):`(~?)([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")
_BLOCK = re.compile(r"(\S)::$", re.M)


def _role(match: re.Match[str]) -> str:
    target = match.group(2).strip()
    if "<" in target and target.endswith(">"):  # :func:`text <target>`
        target = target[: target.index("<")].strip()
    if match.group(1):
        target = target.rsplit(".", 1)[-1]
    return f"`{target}`"


def rst_to_markdown(text: str) -> str:
    """``text`` with the reStructuredText roles, literals and ``::`` rewritten as Markdown."""
    text = _ROLE.sub(_role, text)
    text = _LITERAL.sub(r"`\1`", text)
    return _BLOCK.sub(r"\1:", text)


class RstToMarkdown(griffe.Extension):
    """Rewrite every loaded docstring with :func:`rst_to_markdown`.

    Griffe calls ``on_object`` for every object it loads but the top-level
    package itself, which it passes to ``on_package`` once the whole package is
    loaded: both hooks rewrite (the rewrite is idempotent).
    """

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Rewrite the docstring of one object (module, class, function or attribute)."""
        if obj.docstring is not None:
            obj.docstring.value = rst_to_markdown(obj.docstring.value)

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Rewrite the docstring of the top-level package (``twolink_gym/__init__.py``)."""
        self.on_object(obj=pkg)
