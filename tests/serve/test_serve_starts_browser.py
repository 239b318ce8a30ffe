"""Runs started from the page in a real browser (Debian's Chromium, Playwright): the form, its plan,
start, follow it live to its run page; two on one target (the second queued), cancelled; a target
the form did not offer; a forged form on another origin.  No console error, no request off the
server on storbench's pages."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import threading
import time

import pytest
from test_report_browser import ARTIFACTS, CHROMIUM, browser  # noqa: F401  (browser: the shared Chromium)
from test_serve import free_port, get, history, serving  # noqa: F401  (history: a copy of the store of real runs)

from conftest import needs_fio

pytestmark = [
    needs_fio,
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing (apt-get install chromium)"),
]

TOKEN = "browser-start-1"


def _launches(base: str) -> list[dict]:
    code, body, _ = get(base + "/api/launches", headers={"Authorization": f"Bearer {TOKEN}"})
    assert code == 200, body
    return json.loads(body)["launches"]


def _plan(page, base: str, *, runtime: str, label: str, workload: str = "rnd4k-q1t1-read") -> None:
    """The form filled, planned, and every workload but one left out."""
    page.goto(base + "/start", wait_until="load")
    page.select_option("#suite", "quick")
    page.select_option("#target", "0")
    page.fill("input[name=repetitions]", "1")
    page.select_option("select[name=size]", "16m")
    page.select_option("select[name=runtime]", runtime)
    page.fill("input[name=label]", label)
    page.click("#plan-button")
    page.wait_for_selector("#plan")
    for box in page.locator("#plan input[type=checkbox]").all():
        if box.get_attribute("value") != workload:
            box.uncheck()


@pytest.fixture
def site(history, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    with serving(history, "--token", TOKEN, "--allow-run", str(target)) as base:
        yield base, target


def test_start_a_run_from_the_page_and_follow_it_live_to_its_run_page(browser, site):
    base, target = site
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base + f"/?token={TOKEN}", wait_until="load")
    page.click("nav >> text=start")
    page.wait_for_url("**/start")
    _plan(page, base, runtime="5s", label="clicked")
    assert page.inner_text("#plan legend").startswith("plan: 8 workloads x 1 repetition on 1 target: about")
    page.click("#start-button")
    page.wait_for_url("**/launches/1")
    page.wait_for_selector("#live-link", timeout=60_000)  # the launch page reloads itself until the run is stored
    page.click("#live-link")
    page.wait_for_url("**/live/*")
    run_id = page.url.rsplit("/", 1)[1]
    page.wait_for_url(f"**/runs/{run_id}", timeout=120_000)  # the live page's end: the run's own page
    assert page.inner_text("#run-status") == "complete"
    assert page.inner_text("#started-by") == "started from this page by 127.0.0.1"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "serve-started-run.png"), full_page=True)
    [launch] = _launches(base)
    assert (launch["state"], launch["run_id"], launch["workloads"], launch["label"]) == ("done", int(run_id), ["rnd4k-q1t1-read"], "clicked")
    assert errors == [] and list(target.iterdir()) == []


def test_two_runs_on_one_target_queue_and_both_are_cancelled_from_the_page(browser, site):
    base, target = site
    page = browser.new_page(viewport={"width": 390, "height": 844})  # a phone
    page.goto(base + f"/start?token={TOKEN}", wait_until="load")
    _plan(page, base, runtime="60s", label="first")
    page.click("#start-button")
    page.wait_for_url("**/launches/1")
    _plan(page, base, runtime="60s", label="second")
    assert page.inner_text("#queued-note").startswith("a run is in progress or waiting on this target")
    page.click("#start-button")
    page.wait_for_url("**/launches/2")
    assert "1 in the queue for" in page.inner_text("#launch-state")
    page.click("#cancel-button")  # the queued one: dropped, never started
    page.wait_for_url("**/launches/2")
    assert page.get_attribute("#launch-state", "data-state") == "cancelled"
    page.goto(base + "/launches/1", wait_until="load")
    page.wait_for_selector("#live-link", timeout=60_000)  # running and stored
    deadline = time.monotonic() + 60
    while not list(target.iterdir()):  # fio at work on its file
        assert time.monotonic() < deadline
        time.sleep(0.2)
    page.click("#cancel-button")
    deadline = time.monotonic() + 60
    while page.get_attribute("#launch-state", "data-state") != "cancelled":
        assert time.monotonic() < deadline, page.inner_text("#launch-state")
        time.sleep(0.5)
        page.reload(wait_until="load")
    assert "interrupted (Ctrl-C)" in page.inner_text("#launch-output")
    states = {x["label"]: (x["state"], x["started_at"] is not None) for x in _launches(base)}
    assert states == {"first": ("cancelled", True), "second": ("cancelled", False)}
    assert list(target.iterdir()) == []


def test_a_target_the_form_did_not_offer_is_refused(browser, site):
    base, _ = site
    page = browser.new_page()
    page.goto(base + f"/start?token={TOKEN}", wait_until="load")
    page.evaluate("""() => { const o = document.querySelector('#target option'); o.value = '7'; }""")  # a tampered form
    page.click("#plan-button")
    page.wait_for_selector("#form-error")
    assert page.inner_text("#form-error") == "target '7' is not one of the 1 targets this server allows (their numbers: 0 to 0)"
    assert _launches(base) == []


class _Forger(http.server.BaseHTTPRequestHandler):
    """Another site's page: a form that posts itself to storbench's /start when opened."""

    action = ""

    def do_GET(self) -> None:
        body = (f'<!doctype html><form method="post" action="{self.action}"><input name="suite" value="quick">'
                '<input name="target" value="0"><input name="action" value="start"><input name="csrf" value="guess"></form>'
                "<script>document.forms[0].submit()</script>").encode()  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def _forger(action: str):
    handler = type("Forger", (_Forger,), {"action": action})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_forged_form_from_another_origin_starts_nothing(browser, site, host):
    """The same browser, logged in to storbench, opens another origin's page whose form posts to
    /start: on 127.0.0.1 (same site, the token's cookie is sent) the origin check refuses it (403);
    on localhost (another site) the SameSite=Strict cookie is not sent (401)."""
    base, target = site
    context = browser.new_context()
    page = context.new_page()
    page.goto(base + f"/start?token={TOKEN}", wait_until="load")  # the person's own session
    with _forger(base + "/start") as port:
        with page.expect_navigation(url=base + "/start"):
            page.goto(f"http://{host}:{port}/", wait_until="commit")
        status = json.loads(page.evaluate("() => JSON.stringify(performance.getEntriesByType('navigation')[0].responseStatus)"))
    assert status == (403 if host == "127.0.0.1" else 401), page.content()[:500]
    assert _launches(base) == [] and list(target.iterdir()) == []
    context.close()
