"""Runs started from storbench serve's page (serve --allow-run), over HTTP against a real serve,
real fio runs on a temporary directory and the real store: start, queue, cancel, who started it,
what is refused, and a serve stopped with a run in progress.  The browser's side is in
test_serve_browser.py."""

from __future__ import annotations

import contextlib
import http.cookiejar
import json
import re
import sqlite3
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from test_serve import STORBENCH, _env, history, serving  # noqa: F401  (history: a copy of the store of real runs)

from conftest import needs_fio

pytestmark = [needs_fio, pytest.mark.slow]

TOKEN = "start-token-1"
#: one short workload a launch: the tests wait for real runs
SHORT = {"suite": "quick", "workload": ["rnd4k-q1t1-read"], "target": "0", "repetitions": "1", "size": "16m", "runtime": "1s"}


class Browser:
    """A client with cookies, as a browser keeps them: the token's and the form token's."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def get(self, path: str) -> tuple[int, str]:
        try:
            with self.opener.open(self.base + path, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def csrf(self) -> str:
        status, html = self.get("/start")
        assert status == 200, html
        return re.search(r'name="csrf" value="([0-9a-f]{32})"', html).group(1)

    def post(self, path: str, fields: dict, origin: str | None = "own") -> tuple[int, str, str]:
        headers = {} if origin is None else {"Origin": self.base if origin == "own" else origin}
        req = urllib.request.Request(self.base + path, data=urllib.parse.urlencode(fields, doseq=True).encode(), headers=headers)
        try:
            with self.opener.open(req, timeout=30) as r:
                return r.status, r.geturl(), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, "", e.read().decode()

    def launch(self, launch_id: int) -> dict:
        return json.loads(self.get(f"/api/launches/{launch_id}")[1])

    def wait(self, launch_id: int, states: tuple[str, ...], timeout_s: float = 120) -> dict:
        deadline = time.monotonic() + timeout_s
        while (view := self.launch(launch_id))["state"] not in states:
            assert time.monotonic() < deadline, view
            time.sleep(0.2)
        return view


@contextlib.contextmanager
def site(db: Path, *targets: Path, log: list | None = None):
    with serving(db, "--token", TOKEN, *(a for t in targets for a in ("--allow-run", str(t))), log=log) as base:
        b = Browser(base)
        assert b.get(f"/?token={TOKEN}")[0] == 200  # the token once; the cookie keeps it
        yield b


def _run_row(db: Path, run_id: int) -> tuple[str, str | None, str | None, dict]:
    with contextlib.closing(sqlite3.connect(db)) as con:
        status, label, suite, meta = con.execute("select status, label, suite, meta_json from runs where id = ?", (run_id,)).fetchone()
    return status, label, suite, json.loads(meta)


def test_a_run_started_from_the_page_is_an_ordinary_stored_run_saying_who_started_it(history, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    with site(history, target) as b:
        csrf = b.csrf()
        # the plan and its ETA first, nothing started
        status, _, html = b.post("/start", {**SHORT, "csrf": csrf, "label": "from-the-page", "action": "plan"})
        assert status == 200 and 'id="plan"' in html and "plan: 1 workload x 1 repetition on 1 target: about" in html
        assert json.loads(b.get("/api/launches")[1]) == {"launches": []}
        status, url, html = b.post("/start", {**SHORT, "csrf": csrf, "label": "from-the-page", "action": "start"})
        assert status == 200 and url.endswith("/launches/1")
        view = b.wait(1, ("done", "failed"))
        assert view["state"] == "done" and view["exit_code"] == 0 and view["started_by"] == "127.0.0.1", view
        status, html = b.get("/launches/1")
        assert f'href="/runs/{view["run_id"]}"' in html
        status, html = b.get(f"/runs/{view['run_id']}")
        assert status == 200 and 'id="started-by">started from this page by 127.0.0.1' in html
    run_status, label, suite, meta = _run_row(history, view["run_id"])
    assert (run_status, label, suite, meta["started_by"]) == ("complete", "from-the-page", None, "127.0.0.1")  # workloads chosen: no suite
    assert TOKEN not in json.dumps(meta)  # who started it, never the token
    with contextlib.closing(sqlite3.connect(history)) as con:
        rows = con.execute("select workload, read_iops from results where run_id = ?", (view["run_id"],)).fetchall()
    assert [r[0] for r in rows] == ["rnd4k-q1t1-read"] and rows[0][1] > 0
    assert list(target.iterdir()) == []


def test_one_run_at_a_time_per_target_the_next_waits_and_a_cancel_ends_as_ctrl_c(history, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    with site(history, target) as b:
        csrf = b.csrf()
        long = {**SHORT, "runtime": "30s", "csrf": csrf, "action": "start", "label": "cancelled"}
        assert b.post("/start", long)[0] == 200
        assert b.post("/start", {**SHORT, "csrf": csrf, "action": "start", "label": "after"})[0] == 200
        first = b.wait(1, ("running",))
        second = b.launch(2)
        assert (second["state"], second["queue_position"]) == ("queued", 1)
        assert "1 in the queue for" in b.get("/launches/2")[1]
        deadline = time.monotonic() + 60
        while b.launch(1)["run_id"] is None or not list(target.iterdir()):  # stored, and fio at work on its file
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert b.post("/launches/1/cancel", {"csrf": csrf})[0] == 200
        first = b.wait(1, ("cancelled", "done", "failed"), timeout_s=60)
        assert first["state"] == "cancelled" and first["exit_code"] == 130, first
        assert any("interrupted (Ctrl-C)" in line for line in first["output"]), first["output"]
        second = b.wait(2, ("done", "failed"))  # the queue moved on once the target was free
        assert second["state"] == "done" and second["started_at"] >= first["ended_at"] - 1
        assert b.post("/launches/1/cancel", {"csrf": csrf})[0] == 200  # an ended launch: nothing more happens
        assert b.launch(1)["state"] == "cancelled"
    assert _run_row(history, first["run_id"])[0] in ("interrupted", "incomplete")
    assert _run_row(history, second["run_id"])[:2] == ("complete", "after")
    assert list(target.iterdir()) == []


def test_what_the_operator_did_not_allow_and_forged_forms_are_refused(history, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    with site(history, target) as b:
        csrf = b.csrf()
        status, _, html = b.post("/start", {**SHORT, "csrf": csrf, "target": "1", "action": "start"})
        assert status == 400 and "target &#39;1&#39; is not one of the 1 targets this server allows" in html
        status, _, html = b.post("/start", {**SHORT, "csrf": csrf, "suite": "mine.toml", "action": "start"})
        assert status == 400 and "is not a built-in suite" in html
        status, _, body = b.post("/start", {**SHORT, "csrf": csrf, "action": "start"}, origin="http://evil.example")
        assert status == 403 and "refused (cross-site request)" in body
        status, _, body = b.post("/start", {**SHORT, "csrf": "0" * 32, "action": "start"})
        assert status == 403 and "does not match this browser&#39;s" in body
        status, _, body = b.post("/start", {**SHORT, "action": "start"}, origin=None)  # neither Origin nor Referer
        assert status == 403
        stranger = Browser(b.base)  # no token: nothing at all
        assert stranger.post("/start", {**SHORT, "csrf": csrf, "action": "start"})[0] == 401
        assert json.loads(b.get("/api/launches")[1]) == {"launches": []}
        assert list(target.iterdir()) == []


def test_serve_refuses_allow_run_without_a_token_and_what_is_not_a_target(history, tmp_path):
    def serve(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*STORBENCH, "serve", "--db", str(history), "--port", "1", *args], env=_env(history),
                              capture_output=True, text=True, timeout=60)  # fmt: skip

    no_token = serve("--allow-run", str(tmp_path))
    assert no_token.returncode == 2
    assert no_token.stderr.strip() == "storbench: error: --allow-run lets the page start runs: give --token TEXT too (never without one)"
    missing = serve("--token", TOKEN, "--allow-run", str(tmp_path / "nope"))
    assert missing.returncode == 2 and missing.stderr.strip() == f"storbench: error: --allow-run {tmp_path / 'nope'}: No such file or directory"
    char = serve("--token", TOKEN, "--allow-run", "/dev/null")
    assert char.stderr.strip() == "storbench: error: --allow-run /dev/null is not a directory, a regular file or a block device"


def test_a_read_only_serve_says_how_to_start_runs(history):
    with serving(history) as base:
        b = Browser(base)
        status, html = b.get("/start")
        assert status == 404 and "storbench serve --token T --allow-run DIR starts them" in html
        assert 'href="/start"' not in b.get("/")[1]


def test_serve_stopped_with_a_run_in_progress_ends_it_and_leaves_nothing(history, tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    log: list[str] = []
    with site(history, target, log=log) as b:
        csrf = b.csrf()
        assert b.post("/start", {**SHORT, "runtime": "60s", "csrf": csrf, "action": "start", "label": "stopped"})[0] == 200
        deadline = time.monotonic() + 60
        while (view := b.launch(1))["run_id"] is None or not list(target.iterdir()):
            assert time.monotonic() < deadline, view
            time.sleep(0.2)
    # serve got SIGTERM (serving's end): its run ended as Ctrl-C ends one, before serve did
    assert _run_row(history, view["run_id"])[0] in ("interrupted", "incomplete")
    assert list(target.iterdir()) == []
    leftover = subprocess.run(["pgrep", "-f", f"--target {target}"], capture_output=True, text=True)
    assert leftover.stdout == "", leftover.stdout
    # the launcher's own directory (the runs' logs) is gone with it; one of a killed serve goes at the next start
    import tempfile

    from storbench.serve.launch import WORKDIR_PREFIX

    # (a directory gone between the listing and the look at its process: another serve that ended well)
    dead = [p.name for p in Path(tempfile.gettempdir()).glob(WORKDIR_PREFIX + "*")
            if not Path(f"/proc/{p.name[len(WORKDIR_PREFIX):].split('-')[0]}").exists() and p.exists()]  # fmt: skip
    assert dead == []
