"""The README and docs/*.md stand alone: their Python runs and their links resolve.

Every ```python block of README.md and docs/*.md is run on its own (a fresh
namespace, rendering through SDL's dummy driver), and every relative link and
image path is checked to exist in the repository. The pages must not point
outside the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
# [text](target) and ![alt](target), the target up to the first space or ')'
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HTML = re.compile(r"<(?:img|a)\b[^>]*?\b(?:src|href)=\"([^\"]+)\"", re.IGNORECASE)
# fenced code is not prose: links inside it are not links
_ANY_FENCE = re.compile(r"^```.*?^```[ \t]*$", re.MULTILINE | re.DOTALL)


def python_blocks(page: Path) -> list[tuple[int, str]]:
    """``(line number, code)`` of every ```python block of ``page``."""
    text = page.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in _FENCE.finditer(text)]


def relative_links(page: Path) -> list[str]:
    """Link and image targets of ``page`` that point into the repository."""
    text = _ANY_FENCE.sub("", page.read_text(encoding="utf-8"))
    targets = [*_LINK.findall(text), *_HTML.findall(text)]
    return [t for t in targets if not re.match(r"^(?:[a-z][a-z0-9+.-]*:|#)", t, re.IGNORECASE)]


BLOCKS = [
    pytest.param(page, line, code, id=f"{page.relative_to(ROOT)}:{line}")
    for page in PAGES
    for line, code in python_blocks(page)
]


def test_the_pages_exist_and_have_python() -> None:
    assert (ROOT / "docs" / "physics.md") in PAGES
    assert len(python_blocks(ROOT / "README.md")) >= 3
    assert len(python_blocks(ROOT / "docs" / "physics.md")) >= 1


@pytest.mark.parametrize(("page", "line", "code"), BLOCKS)
def test_python_block_runs(
    page: Path, line: int, code: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.chdir(tmp_path)  # a block that writes files writes them here
    namespace: dict[str, object] = {"__name__": "__readme__"}
    # dont_inherit: the block runs as a script would, without this module's __future__ imports
    exec(compile(code, f"{page.name}:{line}", "exec", dont_inherit=True), namespace)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_and_images_exist(page: Path) -> None:
    missing = []
    for target in relative_links(page):
        path = target.split("#", 1)[0].split("?", 1)[0]
        if path and not (page.parent / path).exists():
            missing.append(target)
    assert not missing, f"{page.name}: links to missing files {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_stay_inside_the_repository(page: Path) -> None:
    outside = [
        t
        for t in relative_links(page)
        if not (page.parent / t.split("#", 1)[0]).resolve().is_relative_to(ROOT)
    ]
    assert not outside, f"{page.name}: links outside the repository {outside}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_references_to_material_outside_the_repository(page: Path) -> None:
    text = page.read_text(encoding="utf-8").lower()
    for phrase in ("../shared", "spec.md", "seed 00", "source documents", "suggested layout"):
        assert phrase not in text, f"{page.name} mentions {phrase!r}"


def test_the_link_finder_finds_links(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        'See [a](docs/a.md#x), ![img](b.png "t"), [web](https://x.org), [top](#top),\n'
        '<img src="c.gif">.\n```bash\n[not](a/link.md)\n```\n'
    )
    assert sorted(relative_links(page)) == ["b.png", "c.gif", "docs/a.md#x"]
