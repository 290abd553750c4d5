"""Check the built documentation site in a real browser (headless Chromium).

Usage::

    python docs/scripts/check_site.py [SITE_DIR] [--chromium PATH]

Serves ``SITE_DIR`` (default ``site/``, written by ``mkdocs build``) on a free
localhost port from a thread, opens the home page, every environment page and
the results overview in headless Chromium (Debian's ``chromium`` package, driven
by playwright) in a 1280 × 900 window and checks that:

- every image on those pages decodes (``naturalWidth > 0``);
- no table on those pages is wider than the text column (none scrolls sideways);
- every link of the site navigation answers HTTP 200;
- the site search, typed into Material's search box, finds "acrobot";
- the console shows no error, no script fails and no request fails, and no
  request leaves localhost (no fonts, scripts or styles from elsewhere).

Prints one line per check and exits 0 if all pass, 1 listing every failure,
2 if the site or the browser is missing (saying how to get it).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import tempfile
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urljoin, urlsplit

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SEARCH_TERM = "acrobot"
TIMEOUT_MS = 20_000


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        # the browser may drop a connection it no longer needs (a large GIF
        # when the page changes); anything else is reported as usual
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


@contextmanager
def serve(site: Path) -> Iterator[str]:
    """Serve ``site`` on ``127.0.0.1`` (a free port) from a thread; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


#: Pages opened besides the home page and the environment pages.
MORE_PAGES = ("results/",)
#: For each table of a page: its first header cell, its width and its column's [px].
WIDE_TABLES_JS = """() => Array.from(document.querySelectorAll('.md-typeset__scrollwrap'))
  .map(w => [(w.querySelector('th') || {textContent: ''}).textContent.trim(),
             w.scrollWidth, w.clientWidth])
  .filter(([, content, column]) => content > column)"""


def pages_to_open(site: Path) -> list[str]:
    """The home page, every environment page and :data:`MORE_PAGES`, relative to the site root."""
    pages = [""]
    env_dir = site / "environments"
    if (env_dir / "index.html").is_file():
        pages.append("environments/")
    pages += sorted(
        f"environments/{p.parent.name}/"
        for p in env_dir.glob("*/index.html")
        if p.parent.parent == env_dir
    )
    return pages + [p for p in MORE_PAGES if (site / p / "index.html").is_file()]


def http_status(url: str) -> int:
    """The HTTP status of a GET of ``url`` (on the local server)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def check(site: Path, chromium: str) -> list[str]:
    """Run every check; returns the failures (empty when all pass)."""
    from playwright.sync_api import sync_playwright

    failures: list[str] = []
    pages = pages_to_open(site)
    if len(pages) < 2:
        failures.append(f"{site}/environments/ holds no environment pages")
    with serve(site) as base, sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        host = urlsplit(base).netloc
        # a new, empty profile for every run
        context = pw.chromium.launch_persistent_context(
            profile,
            executable_path=chromium,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
        outside: list[str] = []

        def route(route: object) -> None:
            request = route.request  # type: ignore[attr-defined]
            if urlsplit(request.url).netloc != host and not request.url.startswith(
                ("data:", "blob:")
            ):
                outside.append(request.url)
                route.abort()  # type: ignore[attr-defined]
            else:
                route.continue_()  # type: ignore[attr-defined]

        context.route("**/*", route)
        page = context.new_page()
        errors: list[str] = []
        page.on(
            "console",
            lambda msg: (
                errors.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None
            ),
        )
        page.on("pageerror", lambda exc: errors.append(f"script error: {exc}"))
        page.on(
            "requestfailed",
            lambda req: errors.append(f"request failed: {req.url} ({req.failure})"),
        )
        page.on(
            "response",
            lambda resp: (
                errors.append(f"HTTP {resp.status}: {resp.url}") if resp.status >= 400 else None
            ),
        )
        nav_links: set[str] = set()
        for path in pages:
            url = base + path
            errors.clear()
            response = page.goto(url, wait_until="load", timeout=TIMEOUT_MS)
            if response is None or response.status != 200:
                failures.append(f"{url}: HTTP {None if response is None else response.status}")
                continue
            # nothing in flight (images, the search worker) before checking and moving on
            page.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)
            page.wait_for_function(
                "Array.from(document.images).every(i => i.complete)", timeout=TIMEOUT_MS
            )
            images = page.evaluate(
                "Array.from(document.images).map(i => [i.currentSrc || i.src, i.naturalWidth])"
            )
            broken = [src for src, width in images if not width]
            for src in broken:
                failures.append(f"{url}: image does not decode: {src}")
            hrefs = page.evaluate(
                "Array.from(document.querySelectorAll('nav.md-nav a.md-nav__link[href]'))"
                ".map(a => a.getAttribute('href'))"
            )
            for href in hrefs:
                target = urljoin(url, href).split("#")[0]
                if urlsplit(target).netloc == host:
                    nav_links.add(target)
                else:
                    failures.append(f"{url}: navigation link leaves the site: {href}")
            wide = page.evaluate(WIDE_TABLES_JS)
            failures += [
                f"{url}: the table headed {head!r} is wider than the text column "
                f"({content} > {column} px at 1280 px)"
                for head, content, column in wide
            ]
            failures += [f"{url}: {e}" for e in errors]
            print(
                f"check_site: {path or '/'}: {len(images)} images decode"
                f"{'' if not broken else f' ({len(broken)} do not)'}, {len(hrefs)} nav links, "
                f"{len(wide)} tables wider than the text, {len(errors)} console errors"
            )
        if not nav_links:
            failures.append("no navigation links found (nav.md-nav a.md-nav__link)")
        bad = [(link, http_status(link)) for link in sorted(nav_links)]
        bad = [(link, status) for link, status in bad if status != 200]
        failures += [f"navigation link {link}: HTTP {status}" for link, status in bad]
        print(f"check_site: {len(nav_links)} distinct navigation links, {len(bad)} not HTTP 200")

        # the search: type into Material's search box on the home page
        errors.clear()
        page.goto(base, wait_until="load", timeout=TIMEOUT_MS)
        box = page.locator("input.md-search__input")
        box.click()
        box.fill(SEARCH_TERM)
        try:
            page.wait_for_selector(".md-search-result__item", timeout=TIMEOUT_MS)
            hits = page.locator(".md-search-result__item").count()
            meta = page.locator(".md-search-result__meta").inner_text()
            print(f"check_site: search {SEARCH_TERM!r}: {meta.strip()}")
            page.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)
            if hits == 0:
                failures.append(f"search for {SEARCH_TERM!r} returned no result")
        except Exception as exc:  # playwright's TimeoutError
            failures.append(f"search for {SEARCH_TERM!r} returned no result ({exc})")
        failures += [f"search: {e}" for e in errors]
        failures += [f"a request left localhost: {u}" for u in sorted(set(outside))]
        context.close()
    return failures


def main(argv: Sequence[str] | None = None) -> int:
    """Check the site; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", default="site", type=Path, help="the built site")
    parser.add_argument("--chromium", default=CHROMIUM, help=f"the browser (default {CHROMIUM})")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        print(
            f"check_site: {args.site}/index.html not found; run `mkdocs build` first",
            file=sys.stderr,
        )
        return 2
    if not Path(args.chromium).is_file():
        print(
            f"check_site: no Chromium at {args.chromium}; install Debian's package with\n"
            "    sudo apt-get update && sudo apt-get install -y chromium\n"
            "or pass --chromium PATH",
            file=sys.stderr,
        )
        return 2
    try:
        import playwright  # noqa: F401
    except ImportError:
        print('check_site: needs playwright: pip install -e ".[docs]"', file=sys.stderr)
        return 2
    failures = check(args.site, args.chromium)
    for failure in failures:
        print(f"check_site: FAIL {failure}", file=sys.stderr)
    if failures:
        print(f"check_site: {len(failures)} failures", file=sys.stderr)
        return 1
    print("check_site: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
