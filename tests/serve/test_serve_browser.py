"""storbench serve in a real browser (Debian's Chromium, driven by Playwright), as a person uses it:
browse and filter the runs, check four and compare them, follow a real run live from its plan to
its stored results and its run page, and read every page at a phone's width.  No console error,
no request off the server.  Screenshots go to test-artifacts/."""

from __future__ import annotations

import os
import subprocess

import pytest
from test_report_browser import ARTIFACTS, CHROMIUM, browser  # noqa: F401  (browser: the shared Chromium)
from test_serve import STORBENCH, _env, get_json, history, serving  # noqa: F401  (history: the store of real runs)

from conftest import needs_fio

pytestmark = [
    needs_fio,
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing (apt-get install chromium)"),
]


@pytest.fixture(scope="module")
def site(history):
    with serving(history) as base:
        yield base


class Watched:
    """A page with its console errors, page errors and every URL it requested."""

    def __init__(self, browser, width: int, height: int = 900) -> None:
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))

    def close(self, base: str) -> None:
        self.page.close()
        assert self.errors == []
        assert self.requests and all(u.startswith(base) for u in self.requests), [u for u in self.requests if not u.startswith(base)]


def test_browse_filter_and_compare_four_runs(browser, site):
    w = Watched(browser, 1280)
    page = w.page
    page.goto(site + "/", wait_until="load")
    assert page.locator("#runs tbody tr").count() == 5
    page.fill("input[name=label]", "study/")
    page.click("form.filters button")
    page.wait_for_url("**/?label=study*")
    rows = page.locator("#runs tbody tr")
    assert rows.count() == 4 and page.inner_text("#run-count").startswith("4 runs matching")
    for i in range(4):
        rows.nth(i).locator("input[type=checkbox]").check()
    page.click("#compare-button")
    page.wait_for_url("**/compare?run=*")
    # the runs page and the compare page draw nothing: plotly.js (1.2 MB) was never asked for
    assert not any(u.endswith("/static/plotly.js") for u in w.requests), w.requests
    verdicts = page.locator("#verdicts li").all_inner_texts()
    expected = get_json(site + "/api/compare?" + page.url.split("?", 1)[1])["verdicts"]
    assert verdicts == expected and len(verdicts) >= 1
    assert page.locator("#compare-table tbody tr").count() >= 2
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "serve-compare.png"), full_page=True)
    # one click from a run of the list to its page, whose chart is drawn
    page.goto(site + "/?label=study/a", wait_until="load")
    page.click("#runs tbody tr >> nth=0 >> a")
    page.wait_for_url("**/runs/*")
    assert "CrystalDiskMark grid" in page.inner_text("main")
    # a page that draws (the trend) loads plotly.js, once, and draws
    page.goto(site + "/trend?workload=rnd4k-q1t1-read", wait_until="load")
    page.wait_for_selector("div.chart .main-svg", timeout=30_000)
    assert sum(u.endswith("/static/plotly.js") for u in w.requests) == 1
    w.close(site)


@pytest.mark.parametrize("path", ["/", "/runs/1", "/compare?run=1&run=2&run=3&run=4", "/trend?workload=rnd4k-q1t1-read", "/curves", "/live", "/runs/1/report"])
def test_every_page_fits_a_phone(browser, site, path):
    w = Watched(browser, 390, 844)
    page = w.page
    page.goto(site + path, wait_until="load")
    if path == "/runs/1/report":
        page.wait_for_selector("body[data-charts=done]", timeout=120_000)
    else:
        page.wait_for_timeout(300)
    width, client = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert width <= client == 390, f"{path}: the page is {width} px wide on a 390 px screen"
    for box in page.locator("div.chart").all():
        b = box.bounding_box()
        assert b is None or (b["x"] >= 0 and b["x"] + b["width"] <= 390), (path, b)
    name = path.strip("/").replace("/", "-").split("?")[0] or "runs"
    page.screenshot(path=str(ARTIFACTS / f"serve-phone-{name}.png"), full_page=True)
    w.close(site)


def _wait_until(page, expression: str, timeout_s: float) -> None:
    """``page.wait_for_function`` without its string predicate, which Playwright evaluates inside
    the page, where storbench serve's Content-Security-Policy refuses eval: the expression is
    asked through the devtools protocol (``page.evaluate``), which the policy does not govern."""
    import time

    deadline = time.monotonic() + timeout_s
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout_s} s: {expression}")
        time.sleep(0.1)


def test_follow_a_real_run_live_to_its_run_page(browser, site, history, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    w = Watched(browser, 1280)
    page = w.page
    run = subprocess.Popen([*STORBENCH, "run", "--target", str(target), "--size", "16m", "--runtime", "4", "--repeat", "1",
                            "--workload", "rnd4k-q1t1-read", "--workload", "rnd4k-q1t1-write", "--label", "watched"],
                           env=_env(history), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        page.goto(site + "/live", wait_until="load")
        page.wait_for_selector("#live-runs a", timeout=60_000)  # the live index reloads itself every 3 s
        page.click("#live-runs a")
        page.wait_for_url("**/live/*")
        run_id = page.url.rsplit("/", 1)[1]
        _wait_until(page, "document.getElementById('live-plan').textContent.includes('of 2')", 60)
        _wait_until(page, "document.getElementById('live-iops').textContent !== '-'", 60)
        page.wait_for_selector("#live-results li", timeout=60_000)
        first = page.inner_text("#live-results li >> nth=0")
        assert first.startswith("rnd4k-q1t1-read: read ") and "IOPS" in first
        page.wait_for_selector("#live-chart .main-svg", timeout=60_000)
        page.wait_for_url(f"**/runs/{run_id}", timeout=120_000)  # the end: the same page as a finished run
        assert page.inner_text("#run-status") == "complete"
        page.wait_for_selector("div.chart .main-svg", timeout=30_000)  # 4 s workloads: fio's per-second series drawn
        page.screenshot(path=str(ARTIFACTS / "serve-run.png"), full_page=True)
    finally:
        _out, err = run.communicate(timeout=180)
    assert run.returncode == 0, err
    w.close(site)

