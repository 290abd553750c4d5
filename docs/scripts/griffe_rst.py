"""A griffe extension for the API reference: reStructuredText markup in docstrings as Markdown.

The package's docstrings are numpy style with a few reStructuredText habits
that Markdown would show literally: cross-reference roles
(``:class:`Task```, ``:func:`~twolink_gym.step```), double-backtick literals
and ``::`` before a literal block. The extension rewrites them in the
docstrings as griffe loads them (the source files are not touched): a role
becomes inline code of its target (the last component for ``~``), a double
backtick a single one, and a trailing ``::`` a single colon (the indented
block after it is a code block in Markdown already). A parameter's set of
values (``name : {"a", "b"}``) is led by the signature's default, which the
numpy convention reads as its first value (:func:`default_first`). Listed under the
mkdocstrings handler's ``extensions`` in ``mkdocs.yml``.
"""

from __future__ import annotations

import re
from typing import Any, cast

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|obj|exc|const):`(~?)([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")
_BLOCK = re.compile(r"(\S)::$", re.M)
#: A numpy-style parameter line with a set of values: ``name : {"a", "b"}, optional``.
_CHOICES = re.compile(r"^(?P<head>\s*(?P<name>\w+) : )\{(?P<choices>[^{}]+)\}(?P<rest>.*)$", re.M)


def _role(match: re.Match[str]) -> str:
    target = match.group(2).strip()
    if "<" in target and target.endswith(">"):  # :func:`text <target>`
        target = target[: target.index("<")].strip()
    if match.group(1):
        target = target.rsplit(".", 1)[-1]
    return f"`{target}`"


def _same_value(a: str, b: str) -> bool:
    return a.strip().replace("'", '"') == b.strip().replace("'", '"')


def default_first(text: str, defaults: dict[str, str]) -> str:
    """``text`` with each parameter's set of values led by its signature default.

    The numpy docstring convention (and griffe's parser) reads the first value
    of ``name : {"a", "b"}`` as the default; where the signature's default
    (``defaults[name]``, as source text) is another, or not in the set (``None``),
    it is moved or added first: ``render_mode : {None, "human", "rgb_array"}``.
    """

    def fix(match: re.Match[str]) -> str:
        default = defaults.get(match["name"])
        if default is None:
            return match[0]
        choices = [c.strip() for c in match["choices"].split(",")]
        if _same_value(choices[0], default):
            return match[0]
        rest = [c for c in choices if not _same_value(c, default)]
        if choices[0][:1] == '"' and default[:1] == "'":  # the set's quotes
            default = f'"{default[1:-1]}"'
        return f"{match['head']}{{{', '.join([default, *rest])}}}{match['rest']}"

    return _CHOICES.sub(fix, text)


def _defaults(obj: griffe.Object) -> dict[str, str]:
    """The signature defaults of a function's or a class's parameters, as source text."""
    if not (obj.is_function or obj.is_class):
        return {}
    try:
        parameters = cast("griffe.Function | griffe.Class", obj).parameters
    except (AttributeError, ValueError):
        return {}
    return {p.name: str(p.default) for p in parameters if p.default is not None}


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
            text = rst_to_markdown(obj.docstring.value)
            obj.docstring.value = default_first(text, _defaults(obj))

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Rewrite the docstring of the top-level package (``twolink_gym/__init__.py``)."""
        self.on_object(obj=pkg)
