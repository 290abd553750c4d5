"""The documentation site's configuration and build helpers (mkdocs.yml, docs/scripts/).

The strict build and the browser check run in `make docs`; these tests check,
without building, that the navigation holds exactly the agreed pages and that
each exists, that nothing loads from elsewhere, and the two build helpers.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: The pages of the site, in navigation order (the agreed layout of the docs).
PAGES = [
    "index.md",
    "getting-started.md",
    "environments/index.md",
    "environments/reach.md",
    "environments/balance.md",
    "environments/swingup.md",
    "environments/track.md",
    "physics.md",
    "robustness.md",
    "controllers.md",
    "training.md",
    "tuning.md",
    "results/index.md",
    "results/reach.md",
    "results/balance.md",
    "results/swingup.md",
    "results/track.md",
    "results/robustness.md",
    "results/realaigym.md",
    "results/time_to_solve.md",
    "realaigym.md",
    "jax.md",
    "speed.md",
    "writing-a-task.md",
    "architecture.md",
    "api/index.md",
    "api/envs.md",
    "api/tasks.md",
    "api/physics.md",
    "api/controllers.md",
    "api/training.md",
    "api/pretrained.md",
    "api/realaigym.md",
    "api/jax.md",
    "changelog.md",
]


class _Loader(yaml.SafeLoader):
    pass


# mkdocs.yml may hold python tags (!!python/name:...); they are not needed here
_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def mkdocs_config() -> dict[str, Any]:
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)


def nav_files(items: list[Any]) -> list[str]:
    out: list[str] = []
    for item in items:
        value = item if isinstance(item, str) else next(iter(item.values()))
        out += nav_files(value) if isinstance(value, list) else [value]
    return out


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_navigation_lists_exactly_the_agreed_pages_and_each_exists() -> None:
    files = nav_files(mkdocs_config()["nav"])
    assert files == PAGES
    missing = [f for f in files if not (DOCS / f).is_file()]
    assert not missing, f"pages in the navigation but not in docs/: {missing}"


def test_build_is_strict_and_loads_nothing_from_elsewhere() -> None:
    cfg = mkdocs_config()
    assert cfg["strict"] is True
    assert cfg["theme"]["name"] == "material"
    assert cfg["theme"]["font"] is False  # Material's default loads Google Fonts
    assert "extra_javascript" not in cfg and "extra_css" not in cfg
    assert "repo_url" not in cfg  # Material would query the repository host from the page
    handler = cfg["plugins"][1]["mkdocstrings"]["handlers"]["python"]
    assert handler["options"]["docstring_style"] == "numpy"


def test_docs_extra_is_pinned() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    docs = extras["docs"]
    assert {d.split("==")[0].split("[")[0] for d in docs} >= {
        "mkdocs",
        "mkdocs-material",
        "mkdocstrings",
        "mkdocstrings-python",
        "playwright",
    }
    assert all("==" in d for d in docs), docs


def test_staged_package_has_the_training_subpackage(tmp_path: Path) -> None:
    hooks = load(DOCS / "scripts" / "mkdocs_hooks.py", "mkdocs_hooks_under_test")
    dest = hooks.stage_package(ROOT, tmp_path / "api-src")
    pkg = dest / "twolink_gym"
    assert (pkg / "training" / "config.py").resolve() == ROOT / "training" / "config.py"
    assert (pkg / "env.py").resolve() == ROOT / "twolink_gym" / "env.py"
    assert (pkg / "tasks" / "reach.py").is_file()
    # idempotent, and an entry that no longer exists in the package is removed
    (pkg / "gone.py").symlink_to(tmp_path / "nowhere.py")
    hooks.stage_package(ROOT, dest)
    assert not (pkg / "gone.py").is_symlink()
    assert sorted(p.name for p in pkg.iterdir()) == sorted(
        [p.name for p in (ROOT / "twolink_gym").iterdir() if p.name != "__pycache__"] + ["training"]
    )


def test_rst_markup_in_docstrings_becomes_markdown() -> None:
    pytest.importorskip("griffe")
    ext = load(DOCS / "scripts" / "griffe_rst.py", "griffe_rst_under_test")
    convert = ext.rst_to_markdown
    assert convert("See :func:`simulation_of`.") == "See `simulation_of`."
    assert convert(":class:`~twolink_gym.paths.LoopingPath`") == "`LoopingPath`"
    assert convert(":meth:`Task.reset <twolink_gym.tasks.Task.reset>`") == "`Task.reset`"
    assert convert("``max_torque`` in N·m") == "`max_torque` in N·m"
    assert convert("Usage::\n\n    python x.py") == "Usage:\n\n    python x.py"
    assert convert("a :: b") == "a :: b"


def test_a_set_of_values_is_led_by_the_signature_default() -> None:
    # numpy's convention (griffe's parser): the first value of {...} is the default;
    # TwoLinkEnv's render_mode (default None) read "human" in the API page
    griffe = pytest.importorskip("griffe")
    ext = load(DOCS / "scripts" / "griffe_rst.py", "griffe_rst_defaults")
    first = ext.default_first
    line = '    render_mode : {"human", "rgb_array"}, optional'
    assert first(line, {"render_mode": "None"}) == (
        '    render_mode : {None, "human", "rgb_array"}, optional'
    )
    assert first('    v : {"v1", "v2"}', {"v": "'v2'"}) == '    v : {"v2", "v1"}'
    assert first('    a : {"full", "acrobot"}', {"a": '"full"'}) == '    a : {"full", "acrobot"}'
    assert first('    a : {"full", "acrobot"}', {}) == '    a : {"full", "acrobot"}'
    # the page's parse of TwoLinkEnv, through the extension
    from griffe import Parser, parse

    package = griffe.load(
        "twolink_gym",
        search_paths=[ROOT],
        extensions=griffe.load_extensions(ext.RstToMarkdown),
        allow_inspection=False,
    )
    env = package["env"]["TwoLinkEnv"]
    sections = parse(env.docstring, Parser.numpy)
    (params,) = [s for s in sections if s.kind.value == "parameters"]
    defaults = {p.name: p.value for p in params.value}
    assert str(defaults["render_mode"]) == "None"


def test_no_rst_role_is_left_in_any_docstring_of_the_api_pages() -> None:
    # the package's own docstring (on the Environments page) kept `:mod:` and `:func:`
    griffe = pytest.importorskip("griffe")
    ext = load(DOCS / "scripts" / "griffe_rst.py", "griffe_rst_for_roles")
    role = re.compile(r":[a-z]+(?::[a-z]+)?:`")
    left: list[tuple[str, list[str]]] = []
    seen: set[str] = set()

    def walk(obj: Any) -> None:
        seen.add(obj.path)
        if obj.docstring is not None and role.search(obj.docstring.value):
            left.append((obj.path, role.findall(obj.docstring.value)))
        for member in obj.members.values():
            if not member.is_alias and member.path not in seen:
                walk(member)

    # the package, and training/ (installed as twolink_gym.training) as its own package
    for name in ("twolink_gym", "training"):
        walk(
            griffe.load(
                name,
                search_paths=[ROOT],
                extensions=griffe.load_extensions(ext.RstToMarkdown),
                allow_inspection=False,
            )
        )
    assert {"twolink_gym", "twolink_gym.registration", "training.cli"} <= seen
    assert not left, left[:10]


def test_no_table_has_an_empty_header_row() -> None:
    # a Markdown table's first row is its header: an empty one shows as a blank bar
    separator = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+$")
    empty = []
    for page in [*DOCS.rglob("*.md"), ROOT / "README.md"]:
        lines = page.read_text(encoding="utf-8").splitlines()
        for i in range(1, len(lines)):
            if separator.match(lines[i].strip()) and lines[i - 1].strip().startswith("|"):
                cells = lines[i - 1].strip().strip("|").split("|")
                if all(not cell.strip() for cell in cells):
                    empty.append(f"{page.relative_to(ROOT)}:{i}")
    assert not empty, empty


def test_the_results_overview_tables_fit_the_text_column_at_1280_px() -> None:
    # Material gives every column at least 5rem (100 px) plus 32 px of padding around
    # the table, and its text column is 720 px wide in a 1280 px window: a table of
    # 7 or more columns scrolls sideways ("Targets of reach and balance" had 9).
    # `make docs` measures the built page in Chromium (docs/scripts/check_site.py).
    page = (DOCS / "results" / "index.md").read_text(encoding="utf-8").splitlines()
    separator = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+$")
    widths = [line.count("|") - 1 for line in page if separator.match(line.strip())]
    assert widths, "no table found"
    assert max(widths) <= 6, widths
