"""The HTML report in a real browser: headless Chromium (Debian's) driven by Playwright.

Opened from a file:// URL with the network left on, the page must load nothing but
itself, log no errors, and draw every chart.  Screenshots of a desktop and a phone
width go to ``test-artifacts/`` at the repository root for a person to look at.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from storbench.render.html import embedded

from conftest import needs_fio

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = [
    needs_fio,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing (apt-get install chromium)"),
]


@pytest.fixture(scope="module")
def report_path(report_runs) -> Path:
    """A report of real runs: two labels (one of them a <script> tag) and a bs sweep."""
    from test_report import SCRIPT_LABEL

    res = report_runs.cli("report", "alpha", SCRIPT_LABEL, "sweep", "-o", "browser-report.html")
    assert res.code == 0, res.err
    return Path(res.out.strip())


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            yield b
        finally:
            b.close()


def _open(browser, path: Path, width: int, height: int = 900):
    """Load the page; return (page, console messages, page errors, requested URLs)."""
    page = browser.new_page(viewport={"width": width, "height": height})
    console: list[tuple[str, str]] = []
    errors: list[str] = []
    requests: list[str] = []
    page.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
    page.on("console", lambda m: console.append((m.type, m.text)))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri(), wait_until="load")
    page.wait_for_selector("body[data-charts=done]", timeout=120_000)
    return page, console, errors, requests


def _figure_count(path: Path) -> int:
    html = path.read_text(encoding="utf-8")
    return len(embedded(html, "storbench-figures"))


def test_report_renders_offline_without_errors(browser, report_path):
    page, console, errors, requests = _open(browser, report_path, 1280)
    try:
        assert errors == []
        assert [m for m in console if m[0] in ("error", "warning")] == []
        others = [u for u in requests if u != report_path.as_uri() and not u.startswith(("data:", "blob:"))]
        assert others == [], others
        # every figure was drawn by plotly, as SVG
        n = _figure_count(report_path)
        assert n >= 12
        assert page.locator(".js-plotly-plot").count() == n
        assert page.locator(".js-plotly-plot svg.main-svg").count() >= n
        assert page.locator(".js-plotly-plot .bars .point").count() > 0  # bar charts have bars
        assert page.locator(".js-plotly-plot .scatterlayer .trace").count() > 0  # lines
        # no chart collapsed or left empty
        heights = page.evaluate("Array.from(document.querySelectorAll('.js-plotly-plot')).map(e => e.getBoundingClientRect().height)")
        assert min(heights) >= 120
        # the script label is text on the page (no alert ran: a dialog would be in errors)
        assert page.get_by_text("<script>alert(1)</script>", exact=True).count() > 0
        assert page.locator("#sweeps").count() == 1
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        # a full-page screenshot resizes the viewport: the charts keep their size
        after = page.evaluate("Array.from(document.querySelectorAll('.js-plotly-plot')).map(e => e.getBoundingClientRect().height)")
        assert after == heights
    finally:
        page.close()
    assert (ARTIFACTS / "report.png").stat().st_size > 50_000


def test_report_reads_on_a_phone(browser, report_path):
    page, console, errors, _requests = _open(browser, report_path, 390, 844)
    try:
        assert errors == [] and [m for m in console if m[0] == "error"] == []
        # nothing makes the page wider than the phone: wide tables scroll inside their box
        widths = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert widths[0] <= widths[1] == 390
        chart_widths = page.evaluate("Array.from(document.querySelectorAll('.js-plotly-plot')).map(e => e.getBoundingClientRect().width)")
        assert max(chart_widths) <= 390 and min(chart_widths) >= 300
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report-phone.png"), full_page=True)
    finally:
        page.close()
    assert (ARTIFACTS / "report-phone.png").stat().st_size > 20_000


@pytest.fixture(scope="module")
def single_report_path(report_runs) -> Path:
    """A report of one run: it opens with the figures at a glance instead of verdicts."""
    res = report_runs.cli("report", "alpha", "-o", "browser-single.html")
    assert res.code == 0, res.err
    return Path(res.out.strip())


@pytest.mark.parametrize("width", [390, 1400])
def test_the_summary_reads_at_a_glance(browser, report_path, single_report_path, width):
    # a study: one verdict line per workload, on screen, nothing wider than the page
    page, _console, errors, _ = _open(browser, report_path, width, 844)
    try:
        assert errors == []
        items = page.locator("#summary ul.verdicts > li")
        assert items.count() >= 1
        first = items.first.inner_text()
        assert re.match(r"\S+ \w+ (IOPS|bandwidth|mean latency): .+ (leads|is) ", first), first
        box = page.locator("#summary").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    finally:
        page.close()
    # a single run: its preset's grid, a row per workload; a wide grid scrolls inside its box
    page, _console, errors, _ = _open(browser, single_report_path, width, 844)
    try:
        assert errors == []
        assert page.locator("#summary ul.verdicts").count() == 0
        grid = page.locator("#summary table.glance")
        assert grid.count() == 1
        assert grid.locator("tbody tr").count() >= 1
        assert "n" in [c.strip() for c in grid.locator("thead th").all_inner_texts()] or grid.locator("thead th").count() >= 5
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"report-single-{width}.png"))
    finally:
        page.close()
