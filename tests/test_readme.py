"""The README and the documentation pages stand alone: their Python runs, their links resolve.

Every ```python block of README.md and of every written page under docs/ (all
of docs/**/*.md but the pages generated into docs/results/ and docs/api/,
which hold no Python and have tests of their own) is run on its own (a fresh
namespace, rendering through SDL's dummy driver), and every relative link and
image path is checked to exist in the repository. The pages must not point
outside the repository, and a documentation page must not point outside docs/:
MkDocs serves only that folder (the README, on GitHub, may point anywhere in
the repository).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: Folders of docs/ whose pages are generated (results, API reference), not written.
GENERATED = ("results", "api")
DOC_PAGES = sorted(
    page for page in DOCS.rglob("*.md") if page.relative_to(DOCS).parts[0] not in GENERATED
)
PAGES = [ROOT / "README.md", *DOC_PAGES]

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


#: Written pages of the documentation site and the least number of Python blocks each holds.
EXPECTED_PAGES = {
    "index.md": 0,
    "getting-started.md": 3,
    "environments/index.md": 3,
    "environments/reach.md": 1,
    "environments/balance.md": 1,
    "environments/swingup.md": 1,
    "environments/track.md": 1,
    "physics.md": 2,
    "robustness.md": 1,
    "controllers.md": 1,
    "training.md": 0,
    "tuning.md": 0,
    "speed.md": 0,
    "realaigym.md": 0,
    "writing-a-task.md": 1,
    "architecture.md": 0,
    "changelog.md": 0,
}


def test_the_pages_exist_and_have_python() -> None:
    assert len(python_blocks(ROOT / "README.md")) >= 3
    for name, least in EXPECTED_PAGES.items():
        page = DOCS / name
        assert page in PAGES, f"docs/{name} is missing"
        assert len(python_blocks(page)) >= least, f"docs/{name}: fewer than {least} Python blocks"


def test_generated_pages_are_left_out_and_written_ones_found() -> None:
    names = {str(p.relative_to(DOCS)) for p in DOC_PAGES}
    assert "environments/track.md" in names
    assert not any(n.startswith(("results/", "api/")) for n in names)


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """Run with one torch thread: the suite already runs one process per core (``-n 2``)."""
    try:
        import torch
    except ImportError:  # the blocks that need torch fail on their own import
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@pytest.mark.usefixtures("one_torch_thread")
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


@pytest.mark.parametrize("page", DOC_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_doc_pages_link_only_inside_docs(page: Path) -> None:
    outside = [
        t
        for t in relative_links(page)
        if not (page.parent / t.split("#", 1)[0]).resolve().is_relative_to(DOCS)
    ]
    assert not outside, f"{page.relative_to(ROOT)}: links outside docs/ {outside}"


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


def test_the_configs_table_says_what_the_config_files_say() -> None:
    """docs/training.md's table of configs: every file, with its task, algorithm and budget."""
    text = (DOCS / "training.md").read_text(encoding="utf-8")
    header = "| config | task | algorithm | total_timesteps | n_envs | notes |"
    rows = {}
    for line in text[text.index(header) :].split("\n\n", 1)[0].splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = cells[1:5]
    assert sorted(rows) == sorted(p.name for p in (ROOT / "configs").glob("*.yaml"))
    for name, (task, algo, steps, n_envs) in rows.items():
        cfg = yaml.safe_load((ROOT / "configs" / name).read_text(encoding="utf-8"))
        assert (cfg["env"]["task"], cfg["algo"]["name"]) == (task, algo), name
        assert cfg["train"]["total_timesteps"] == int(steps.replace(",", "")), name
        assert cfg["train"]["n_envs"] == int(n_envs), name


def test_the_feature_list_puts_each_controller_in_its_module() -> None:
    # the iLQR/TVLQR swing-ups are in twolink_gym.realaigym, not twolink_gym.controllers
    import twolink_gym.controllers as controllers
    from twolink_gym.realaigym.trajopt import TVLQRController

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    features = text[text.index("## Features") :]
    bullets = re.split(r"\n- ", features.split("\n## ", 1)[0])
    (bullet,) = [b for b in bullets if "time-varying LQR" in b]
    module = TVLQRController.__module__.rsplit(".", 1)[0]  # twolink_gym.realaigym
    assert not hasattr(controllers, "TVLQRController")
    head, tail = bullet.split("time-varying LQR", 1)
    # the module named after the TVLQR swing-ups is the one that holds them
    assert re.findall(r"`(twolink_gym\.\w+)`", tail)[:1] == [module]
    assert f"`{module}`" not in head
