"""storbench serve: a real server process on a free port over a store of real fio runs, read
with real HTTP (urllib), its JSON by json, its /metrics by Prometheus's own text parser, and a
run in progress followed live while it writes to the same store.  The browser tests are in
tests/serve/test_serve_browser.py."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import html as html_mod
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from datetime import datetime
from pathlib import Path

import pytest

from storbench.fio.json import parse_fio_json
from storbench.model import RunInfo
from storbench.record import ResultRecord
from storbench.run.live import LivePublisher, parse_iops_text, parse_rate_text
from storbench.serve import prometheus, views

from conftest import DATA, needs_fio, needs_root
from pg import pg_server, pg_url  # noqa: F401 - fixtures

STORBENCH = [sys.executable, "-m", "storbench"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(db: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, STORBENCH_DB=str(db), STORBENCH_REPEAT="3", **extra)
    env.pop("STORBENCH_DEBUG", None)
    return env


@contextlib.contextmanager
def serving(db: Path, *args: str, bind: str = "127.0.0.1", env_extra: dict | None = None, log: list | None = None):
    """``storbench serve`` on a free port; yields its base URL; stopped by its PID (``log``: its
    stderr is appended there once it has stopped)."""
    port = free_port()
    proc = subprocess.Popen([*STORBENCH, "serve", "--db", str(db), "--port", str(port), "--bind", bind, *args],
                            env=_env(db, **(env_extra or {})), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    base = f"http://{bind}:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=2):
                    break
            except urllib.error.HTTPError:
                break  # answering (401 with a token): up
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    _out, err = proc.communicate(timeout=5)
                    raise AssertionError(f"storbench serve did not start: {err}") from None
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        try:
            _out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            _out, err = proc.communicate()
        if log is not None:
            log.append(err)


def get(url: str, headers: dict | None = None) -> tuple[int, str, dict]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode("utf-8"), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8"), dict(e.headers)


def get_json(url: str):
    code, body, _ = get(url)
    assert code == 200, (url, code, body[:300])
    return json.loads(body)


# --------------------------------------------------------------------------- a store of real runs


def make_history(root: Path) -> Path:
    """Four real runs of two workloads (labels study/a .. study/d; study/a's of 3 s, the others' of
    1 s), one on its own label, and an import, in ``root/results.sqlite``: made once a test session
    (conftest's ``serve_history``), each module given a copy of its own (:func:`history`)."""
    db = root / "results.sqlite"
    for name in ("a", "b", "c", "d"):
        target = root / f"t-{name}"
        target.mkdir()
        runtime = "3" if name == "a" else "1"  # study/a: three seconds of each, drawn per second on its page
        proc = subprocess.run([*STORBENCH, "run", "--target", str(target), "--size", "8m", "--runtime", runtime, "--repeat", "2",
                               "--workload", "rnd4k-q1t1-read", "--workload", "seq1m-q1t1-write", "--label", f"study/{name}"],
                              env=_env(db), cwd=root, capture_output=True, text=True, timeout=300)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    doc = DATA / "fio-text" / "public" / "05-fio3.1-randrw-libaio.txt"
    proc = subprocess.run([*STORBENCH, "import", str(doc), "--label", "imported"], env=_env(db), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return db


@pytest.fixture(scope="module")
def history(serve_history, tmp_path_factory) -> Path:
    """A copy of the session's store of real runs (:func:`make_history`) for this module alone: the
    live tests add runs to it, which another module's counts must not see."""
    import sqlite3

    db = tmp_path_factory.mktemp("serve") / "results.sqlite"
    with contextlib.closing(sqlite3.connect(serve_history)) as source, contextlib.closing(sqlite3.connect(db)) as copy:
        source.backup(copy)
    return db


pytestmark = needs_fio


@pytest.mark.slow  # real fio runs make the store (about 20 s for the module)
def test_runs_page_lists_and_filters(history):
    with serving(history) as base:
        everything = get_json(base + "/api/runs")
        assert everything["total"] == 5 and [r["label"] for r in everything["runs"]] == ["imported", "study/d", "study/c", "study/b", "study/a"]
        study = get_json(base + "/api/runs?label=study/")
        assert study["total"] == 4
        paged = get_json(base + "/api/runs?label=study/&per_page=3&page=2")
        assert (paged["pages"], [r["label"] for r in paged["runs"]]) == (2, ["study/a"])
        # "/t-b", not "t-b": the filter is a substring, and a temporary directory's random name may hold "t-b"
        assert [r["label"] for r in get_json(base + "/api/runs?target=%2Ft-b")["runs"]] == ["study/b"]
        assert get_json(base + "/api/runs?suite=nothing-like-it")["total"] == 0
        short = get_json(base + "/api/runs?finding=short-run")  # 1 s runs: every real run has it
        assert short["total"] == 4 and all("short-run" in r["warnings"] for r in short["runs"])
        code, html, _ = get(base + "/?label=study/")
        assert code == 200 and "4 runs matching" in html and html.count('name="run" value=') == 4
        code, body, _ = get(base + "/api/runs?page=zero")
        assert code == 400 and "parameter 'page' must be a whole number" in json.loads(body)["error"]
        code, body, _ = get(base + "/?since=yesterday")
        assert code == 400 and "must be a date" in body
        # per_page is kept in the links: "older" from the first page of one is page 2 of one, not of 50
        code, html, _ = get(base + "/?label=study/&per_page=1")
        older = re.search(r'id="next-page" href="([^"]+)"', html)
        assert code == 200 and older is not None and "per_page=1" in older.group(1), html[-2000:]
        code, html, _ = get(base + older.group(1).replace("&amp;", "&"))
        assert code == 200 and html.count('name="run" value=') == 1
        assert get_json(base + "/api/runs?status=interrupted")["total"] == 0 and get_json(base + "/api/runs?status=running")["total"] == 0


@pytest.mark.slow  # real fio runs make the store (about 20 s for the module)
def test_runs_page_gives_each_runs_figures_place_duration_and_findings(history):
    """A run at a glance in the list: its preset's headline figures (the first sequential
    workload's bandwidth, the first random one's IOPS: the means `show` gives), what is under its
    target, how long it took, its findings counted by severity; sortable over the whole history."""
    with serving(history) as base:
        row = get_json(base + "/api/runs?label=study/b")["runs"][0]
        results = get_json(f"{base}/api/runs/{row['id']}")["results"]
        stats = {r["workload"]: r["stats"] for r in results}
        figures = {f["workload"]: f for f in row["figures"]}
        assert set(figures) == {"rnd4k-q1t1-read", "seq1m-q1t1-write"}
        assert figures["rnd4k-q1t1-read"]["metric"] == "iops" and figures["rnd4k-q1t1-read"]["direction"] == "read"
        assert figures["rnd4k-q1t1-read"]["value"] == pytest.approx(stats["rnd4k-q1t1-read"]["read"]["iops"]["mean"], rel=1e-9)
        assert figures["seq1m-q1t1-write"]["metric"] == "bw_bytes" and figures["seq1m-q1t1-write"]["direction"] == "write"
        assert figures["seq1m-q1t1-write"]["value"] == pytest.approx(stats["seq1m-q1t1-write"]["write"]["bw_bytes"]["mean"], rel=1e-9)
        assert all(f["n"] == 2 for f in figures.values())
        # what is under the target: the filesystem of the test's temporary directory, as findmnt says it
        fstype = subprocess.run(["findmnt", "-no", "FSTYPE", "-T", row["targets"][0]], capture_output=True, text=True).stdout.strip()
        assert row["where"][0]["target"] == row["targets"][0] and row["where"][0]["storage"].startswith(fstype + " ")
        assert row["duration_s"] > 0 and row["duration"]
        assert row["machine"] == socket.gethostname()  # the machine it ran on, from its host facts
        assert row["finding_counts"] == {"invalid": len(row["invalid"]), "warning": len(row["warnings"])} and "short-run" in row["warnings"]
        code, html, _ = get(base + "/?label=study/")
        assert code == 200 and f"{len(row['warnings'])} warning" in html and figures["rnd4k-q1t1-read"]["text"] in html
        # sorted over the whole history by a run column, either way; the filters kept in the sort links
        by_label = [r["label"] for r in get_json(base + "/api/runs?sort=label&order=asc")["runs"]]
        assert by_label == sorted(by_label) and get_json(base + "/api/runs?sort=label")["runs"][0]["label"] == by_label[-1]
        assert 'href="/?label=study%2F&amp;sort=label&amp;order=desc"' in html or 'href="/?label=study/&amp;sort=label&amp;order=desc"' in html
        code, body, _ = get(base + "/api/runs?sort=figures")
        assert code == 400 and "parameter 'sort' must be one of run, label" in json.loads(body)["error"]


@pytest.mark.slow  # real fio runs make the store (about 20 s for the module)
def test_run_page_and_its_json(history):
    with serving(history) as base:
        runs = get_json(base + "/api/runs?label=study/a")["runs"]
        rid = runs[0]["id"]
        code, html, _ = get(f"{base}/runs/{rid}")
        assert code == 200
        assert "CrystalDiskMark grid (quick)" in html and "RND4K Q1T1" in html  # the preset's own grid
        assert "[short-run]" not in html and "<code>short-run</code> (2 workloads" in html  # said once, for both workloads
        assert "target: " in html and "mounted at" in html  # the storage description
        assert "rw=randread" in html and "storbench run --target" in html  # the job and the command line
        data = get_json(f"{base}/api/runs/{rid}")
        assert {r["workload"] for r in data["results"]} == {"rnd4k-q1t1-read", "seq1m-q1t1-write"}
        assert len(data["results"]) == 4 and all("stats" in r for r in data["results"])  # --json's form
        # one truth: the findings the page says are the final ones (the last repetition's), as show says them
        from markupsafe import escape

        first = next(r for r in data["results"] if r["workload"] == "rnd4k-q1t1-read")
        last = [r for r in data["results"] if r["workload"] == "rnd4k-q1t1-read"][-1]
        final = next(f["message"] for f in last["findings"] if f["check"] == "short-run")
        early = next(f["message"] for f in first["findings"] if f["check"] == "short-run")
        assert final != early and str(escape(final)) in html and str(escape(early)) not in html
        raw_id = data["results"][0]["result_id"] if "result_id" in data["results"][0] else None
        assert raw_id is None or get(f"{base}/results/{raw_id}/raw")[0] == 200
        code, page, _ = get(f"{base}/runs/{rid}/report")
        assert code == 200 and "storbench-figures" in page
        code, page, _ = get(f"{base}/runs/9999")
        assert code == 404 and "no run 9999 in this store" in page
        code, body, _ = get(f"{base}/api/runs/9999")
        assert code == 404 and json.loads(body) == {"error": "no run 9999 in this store", "status": 404}
        assert get(f"{base}/results/99999/raw")[0] == 404


@pytest.mark.slow  # real fio runs make the store (about 20 s for the module)
def test_compare_of_four_runs_says_what_the_cli_says(history):
    from markupsafe import escape

    with serving(history) as base:
        ids = sorted(r["id"] for r in get_json(base + "/api/runs?label=study/")["runs"])
        query = "&".join(f"run={i}" for i in ids)
        data = get_json(f"{base}/api/compare?{query}")
        cli = subprocess.run([*STORBENCH, "compare", *map(str, ids), "--json"], env=_env(history), capture_output=True, text=True, timeout=120)
        assert cli.returncode == 0, cli.stderr
        expected = json.loads(cli.stdout)
        assert data["verdicts"] == expected["verdicts"] and data["summary"] == expected["summary"]
        assert [c["name"] for c in data["configs"]] == ["study/a", "study/b", "study/c", "study/d"]
        code, html, _ = get(f"{base}/compare?{query}")
        # each verdict as the page escapes it ("p < 0.001" is "p &lt; 0.001" there: whether a run's p is that small is the machine's)
        assert code == 200 and all(str(escape(v)) in html for v in expected["verdicts"]), (expected["verdicts"], html[:3000])
        assert "study/a (baseline)" in html
        code, body, _ = get(f"{base}/api/compare?run={ids[0]}")
        assert code == 400 and "at least two configurations" in json.loads(body)["error"]


@pytest.mark.slow  # real fio runs make the store (about 20 s for the module)
def test_trend_follows_a_workload_over_runs(history):
    with serving(history) as base:
        trend = get_json(base + "/api/trend?workload=rnd4k-q1t1-read&label=study/")
        assert trend["metric"] == "iops" and trend["direction"] == "read"
        # each study run tested its own directory: four targets, four lines of one run each, never one line through all
        assert [Path(t).name for t in trend["targets"]] == ["t-d", "t-c", "t-b", "t-a"]  # the newest run's first
        assert [(Path(p["target"]).name, p["label"]) for p in trend["points"]] == [("t-d", "study/d"), ("t-c", "study/c"), ("t-b", "study/b"), ("t-a", "study/a")]
        assert all(p["n"] == 2 and p["ci95"] is None and p["ci_text"] == "none (n < 3)" and p["regression"] is None for p in trend["points"])
        assert trend["unit"] == "IOPS"
        one = get_json(base + f"/api/trend?workload=rnd4k-q1t1-read&target={urllib.parse.quote(trend['targets'][0])}")
        assert one["targets"] == [trend["targets"][0]] and [p["label"] for p in one["points"]] == ["study/d"]
        code, html, _ = get(base + "/trend?workload=rnd4k-q1t1-read")
        assert code == 200 and 'data-figure="' in html
        assert get(base + "/api/trend")[0] == 400


@pytest.mark.slow  # real fio runs make the store (about 20 s for the module)
def test_metrics_read_by_prometheus_own_parser(history):
    from prometheus_client.parser import text_string_to_metric_families

    with serving(history) as base:
        code, text, headers = get(base + "/metrics")
        assert code == 200 and headers["content-type"].startswith("text/plain; version=0.0.4")
        families = {f.name: f for f in text_string_to_metric_families(text)}
        iops = {(s.labels["workload"], s.labels["label"], s.labels["direction"]): s.value for s in families["storbench_result_iops"].samples}
        newest = get_json(base + "/api/runs?label=study/d")["runs"][0]["id"]
        stored = [r for r in get_json(f"{base}/api/runs/{newest}")["results"] if r["workload"] == "rnd4k-q1t1-read"][-1]
        # one truth: the result storbench show gives (the mean over study/d's repetitions), not its last repetition
        stats = stored["stats"]["read"]
        assert iops[("rnd4k-q1t1-read", "study/d", "read")] == pytest.approx(stats["iops"]["mean"], rel=1e-9)
        assert stats["iops"]["n"] == 2 and stats["iops"]["mean"] != pytest.approx(stored["jobs"][0]["read"]["iops"], rel=1e-12)
        lat = {(s.labels["label"], s.labels.get("quantile")): s.value for s in families["storbench_result_latency_seconds"].samples
               if s.labels["workload"] == "rnd4k-q1t1-read" and s.labels["direction"] == "read"}  # fmt: skip
        assert lat[("study/d", "0.99")] == pytest.approx(stats["clat_p99_ns"]["mean"] / 1e9, rel=1e-9)
        assert 0 < lat[("study/d", "0.5")] <= lat[("study/d", "0.99")]
        mean_lat = {s.labels["label"]: s.value for s in families["storbench_result_latency_mean_seconds"].samples
                    if s.labels["workload"] == "rnd4k-q1t1-read" and s.labels["direction"] == "read"}  # fmt: skip
        assert mean_lat["study/d"] == pytest.approx(stats["lat_mean_ns"]["mean"] / 1e9, rel=1e-9)
        reps = {s.labels["label"]: s.value for s in families["storbench_result_repetitions"].samples if s.labels["workload"] == "rnd4k-q1t1-read"}
        assert reps["study/d"] == 2
        when = {s.labels["label"]: s.value for s in families["storbench_result_timestamp_seconds"].samples if s.labels["workload"] == "rnd4k-q1t1-read"}
        info = get_json(f"{base}/api/runs/{newest}")["run"]
        assert when["study/d"] == datetime.fromisoformat(info["finished_at"].replace("Z", "+00:00")).timestamp()
        assert {k[1] for k in iops} >= {"study/a", "study/d", "imported"}
        assert "storbench_live_iops" not in text.replace("# HELP storbench_live_iops", "").replace("# TYPE storbench_live_iops", "")  # nothing is alive


@pytest.mark.slow  # real fio runs make the store (about 20 s for the module)
def test_the_traces_pages(cli, tmp_path):
    """The stored traces: listed, one shown with its lines and its two charts (requests per second,
    request sizes), its JSON; an unknown trace is a 404."""
    data = Path(__file__).parent.parent / "data" / "trace"
    assert cli("trace", "import", str(data / "tracefs-loop0-dd-blkdiscard-fsync.txt"), "--label", "dd").code == 0
    with serving(cli.db) as base:
        code, html, _ = get(base + "/traces")
        assert code == 200 and 'href="/traces/1"' in html and ">dd<" in html and ">59<" in html
        code, html, _ = get(base + "/traces/1")
        assert code == 200 and "trace 1 &#39;dd&#39;: 59 requests" in html and html.count('class="chart"') == 2
        figures = [json.loads(html_mod.unescape(m)) for m in re.findall(r'data-figure="([^"]*)"', html)]
        assert figures[0]["layout"]["title"]["text"] == "requests issued per second"
        assert [b["name"] for b in figures[1]["data"]] == ["read", "write", "trim"]
        api = get_json(base + "/api/traces/1")
        assert api["events"] == 59 and api["figures"]["directions"]["read"]["ops"] == 51
        assert [t["label"] for t in get_json(base + "/api/traces")["traces"]] == ["dd"]
        assert get(base + "/traces/9")[0] == 404


def test_read_only_and_offline(history):
    before = hashlib.sha256(history.read_bytes()).hexdigest()
    with serving(history) as base:
        for path in ("/", "/api/runs", "/curves", "/live"):
            req = urllib.request.Request(base + path, data=b"x", method="POST")
            with pytest.raises(urllib.error.HTTPError) as exc:
                urllib.request.urlopen(req, timeout=10)
            assert exc.value.code == 405
        _code, html, _ = get(base + "/")
        # every script and style is the server's own
        assert "http://" not in html.replace(base, "") and "https://" not in html
        assert get(base + "/static/plotly.js")[0] == 200 and get(base + "/static/..%2Fapp.py")[0] == 404
    assert hashlib.sha256(history.read_bytes()).hexdigest() == before


@pytest.mark.slow  # real fio runs make the store (about 20 s for the module)
def test_other_addresses_need_the_token(history, tmp_path):
    proc = subprocess.run([*STORBENCH, "serve", "--db", str(history), "--bind", "127.0.0.2", "--port", str(free_port())],
                          env=_env(history), capture_output=True, text=True, timeout=30)  # fmt: skip
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        "storbench: error: --bind 127.0.0.2 makes the results reachable from other machines: give --token TEXT (or set STORBENCH_TOKEN)"]
    missing = subprocess.run([*STORBENCH, "serve", "--db", str(tmp_path / "none.sqlite")], env=_env(history), capture_output=True, text=True, timeout=30)
    assert missing.returncode == 2 and "no results database at" in missing.stderr and not (tmp_path / "none.sqlite").exists()
    token = "s3cret-token-1"
    with serving(history, bind="127.0.0.2", env_extra={"STORBENCH_TOKEN": token}) as base:
        assert get(base + "/api/runs")[0] == 401
        assert get(base + "/api/runs", {"Authorization": "Bearer wrong-token"})[0] == 401
        assert get(base + "/api/runs", {"Authorization": f"Bearer {token}"})[0] == 200
        code, _, headers = get(base + f"/?token={token}")
        assert code == 200 and "storbench_token=" in headers.get("set-cookie", "")
        assert get(base + "/metrics", {"Cookie": f"storbench_token={token}"})[0] == 200
        # the scheme in any case; the right token wins over a stale cookie
        assert get(base + "/api/runs", {"Authorization": f"bearer {token}"})[0] == 200
        assert get(base + f"/api/runs?token={token}", {"Cookie": "storbench_token=an-old-token"})[0] == 200
        assert get(base + "/api/runs", {"Cookie": "storbench_token=an-old-token"})[0] == 401


#: asks a server on 127.0.0.1:PORT with each Host given, without and with the token: {host: [code, code]}
_HOST_CLIENT = """
import json, sys, time, urllib.error, urllib.request
port, token, hosts = sys.argv[1], sys.argv[2], sys.argv[3:]
def ask(host, bearer):
    headers = {"Host": host, **({"Authorization": "Bearer " + bearer} if bearer else {})}
    try:
        with urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/api/runs", headers=headers), timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
deadline = time.monotonic() + 30
while True:
    try:
        ask("127.0.0.1", token)
        break
    except OSError:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.1)
print(json.dumps({h: [ask(h, None), ask(h, token)] for h in hosts}))
"""


@needs_root
def test_a_wildcard_bind_answers_to_the_machines_own_addresses_and_names(history, tmp_path):
    """docs/serve.md's team set-up, --bind 0.0.0.0 with a token, in a network namespace of the test's
    own (its loopback and a veth pair with 10.213.7.1): the namespace's addresses, the machine's
    host name, localhost and loopback are answered (401 without the token, 200 with it); another
    name gets 421 either way. Only the namespace's own addresses are ever reached."""
    ns = f"sbtest-serve-{os.getpid()}"
    token = "team-token-1"
    subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True)
    try:
        for argv in (["link", "set", "lo", "up"], ["link", "add", "v0", "type", "veth", "peer", "name", "v1"],
                     ["addr", "add", "10.213.7.1/24", "dev", "v0"], ["link", "set", "v0", "up"], ["link", "set", "v1", "up"]):
            subprocess.run(["ip", "-n", ns, *argv], check=True, capture_output=True)  # fmt: skip
        port = str(free_port())
        server = subprocess.Popen(["ip", "netns", "exec", ns, *STORBENCH, "serve", "--db", str(history), "--bind", "0.0.0.0",
                                   "--port", port, "--token", token], env=_env(history), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            name = socket.gethostname()
            hosts = [name, f"{name}:{port}", f"10.213.7.1:{port}", "127.0.0.1", "localhost", "[::1]", "evil.example", "10.213.7.9"]
            done = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", _HOST_CLIENT, port, token, *hosts],
                                  capture_output=True, text=True, timeout=60)  # fmt: skip
            assert done.returncode == 0, done.stderr
            codes = json.loads(done.stdout)
        finally:
            server.terminate()
            _out, err = server.communicate(timeout=15)
        for own in hosts[:6]:
            assert codes[own] == [401, 200], (own, codes)
        assert codes["evil.example"] == [421, 421] and codes["10.213.7.9"] == [421, 421]
        said = next(line for line in err.splitlines() if "answers to" in line)
        assert "10.213.7.1" in said and name.lower() in said and "localhost" in said and "evil" not in said
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


#: hostile values for every parameter and path id: huge, negative, Unicode digits, dates that are no
#: day, NUL, markup, SQL, path tricks, over-long text
HOSTILE = ("99999999999999999999999999", "-1", "0", "²", "١٢", "1e3", "0x10", " 1", "%00", "<script>", "' OR 1=1 --",
           "../../etc/passwd", "x" * 300, "9999-99-99", "2026-13-45T99:99", "2026-02-30", "nan", "")  # fmt: skip


def _hostile_requests() -> list[str]:
    quoted = [urllib.parse.quote(v, safe="") for v in HOSTILE]
    paths = []
    for v in quoted:
        paths += [f"/runs/{v}", f"/api/runs/{v}", f"/results/{v}/raw", f"/live/{v}", f"/api/live/{v}", f"/runs/{v}/report"]
        paths += [f"/?page={v}", f"/?per_page={v}", f"/api/runs?page={v}", f"/?since={v}", f"/?until={v}", f"/?status={v}",
                  f"/compare?run=1&run={v}", f"/api/compare?run={v}&run=1", f"/report?run={v}", f"/trend?workload={v}",
                  f"/api/trend?workload=rnd4k-q1t1-read&target={v}", f"/curves?label={v}", f"/static/{v}", f"/?label={v}",
                  f"/?sort={v}", f"/api/runs?sort=label&order={v}", f"/?target={v}&finding={v}&host={v}"]  # fmt: skip
    return paths


def test_the_hostile_corpus_is_large_and_varied():
    paths = _hostile_requests()
    assert len(paths) >= 60 and len(set(paths)) == len(paths)
    assert {p.split("?")[0].split("/")[1] for p in paths} >= {"runs", "api", "results", "live", "compare", "report", "trend", "curves", "static", ""}


@pytest.mark.slow  # real fio runs make the store (about 20 s for the module)
def test_hostile_requests_get_4xx_never_a_5xx_or_a_traceback(history):
    """Every route with every hostile value: a 4xx (or a 200 where the value is a harmless text
    filter), each with the security headers; no 5xx, and the server's log holds no traceback."""
    log: list[str] = []
    seen: dict[int, int] = {}
    with serving(history, log=log) as base:
        for path in _hostile_requests():
            code, body, headers = get(base + path)
            seen[code] = seen.get(code, 0) + 1
            assert code < 500, (path, code, body[:300])
            assert headers.get("x-content-type-options") == "nosniff" and "default-src 'none'" in headers.get("content-security-policy", ""), path
            if code >= 400 and path.startswith("/api/"):
                assert json.loads(body)["status"] == code, path
        # the cases the issue names, each with its answer
        for path, want in (("/runs/99999999999999999999999999", 404), ("/?page=%C2%B2", 400), ("/compare?run=1&run=%C2%B2", 400),
                           ("/report?run=%C2%B2", 400), ("/?since=9999-99-99", 400), ("/?until=2026-13-45T99:99", 400),
                           ("/api/runs/99999999999999999999999999", 404), ("/results/99999999999999999999999999/raw", 404)):  # fmt: skip
            assert get(base + path)[0] == want, path
    assert seen.get(200, 0) + sum(v for k, v in seen.items() if 400 <= k < 500) == len(_hostile_requests())
    assert "Traceback" not in log[0] and "Exception" not in log[0], log[0][-2000:]


@pytest.mark.slow  # real fio runs make the store (about 20 s for the module)
def test_hosts_headers_token_and_compression(history):
    """A foreign Host gets 421 (DNS rebinding); CSP, nosniff and same-origin referrers on every answer; a
    405 says what is allowed; plotly.js and pages go gzip-compressed to a client that takes it."""
    with serving(history) as base:
        port = base.rsplit(":", 1)[1]
        for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.nip.io", "[::2]"):
            code, body, headers = get(base + "/api/runs", {"Host": host})
            assert code == 421 and "answers to" in body and headers.get("x-content-type-options") == "nosniff", host
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"LOCALHOST:{port}"):
            assert get(base + "/api/runs", {"Host": host})[0] == 200, host
        code, _, headers = get(base + "/")
        assert code == 200 and headers["referrer-policy"] == "same-origin"
        assert "script-src 'self'" in headers["content-security-policy"] and "unsafe-inline" not in headers["content-security-policy"].split("script-src")[1].split(";")[0]
        _code, html, _ = get(base + "/live")
        assert "<script>" not in html  # no inline script on a page (the CSP would block it)
        req = urllib.request.Request(base + "/", data=b"x", method="POST")
        with pytest.raises(urllib.error.HTTPError) as exc:
            urllib.request.urlopen(req, timeout=10)
        assert exc.value.code == 405 and "GET" in exc.value.headers.get("Allow", "")
        req = urllib.request.Request(base + "/static/plotly.js", headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(req, timeout=30) as r:
            packed = r.read()
            assert r.headers.get("Content-Encoding") == "gzip"
        import gzip

        from storbench.serve.app import PLOTLY

        plain = gzip.decompress(packed)
        assert plain == PLOTLY.read_bytes() and len(packed) < 0.5 * len(plain)
    with serving(history, "--allow-host", "bench.example.org") as base:
        assert get(base + "/api/runs", {"Host": "bench.example.org"})[0] == 200
        assert get(base + "/api/runs", {"Host": "evil.example"})[0] == 421


@pytest.mark.slow  # real fio runs make the store (about 20 s for the module)
def test_a_run_in_progress_is_live_and_ends_as_its_run_page(history, tmp_path):
    """A real storbench run writes to the store while the live API is polled five times a second:
    the run is never made to wait or fail, its figures arrive while it runs, and the end is the run
    (how soon they arrive is the machine's speed: ``benchmarks/live.py``)."""
    target = tmp_path / "t"
    target.mkdir()
    with serving(history) as base:
        run = subprocess.Popen([*STORBENCH, "run", "--target", str(target), "--size", "16m", "--runtime", "4", "--repeat", "1",
                                "--workload", "rnd4k-q1t1-read", "--workload", "rnd4k-q1t1-write", "--label", "live-run"],
                               env=_env(history), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        seen: dict[str, object] = {}
        lags: list[float] = []
        try:
            deadline = time.monotonic() + 120
            rid = None
            while time.monotonic() < deadline:
                live = get_json(base + "/api/live")["runs"]
                if rid is None and live:
                    rid = live[0]["run_id"]
                if rid is not None:
                    d = get_json(f"{base}/api/live/{rid}")
                    if d["state"] is not None:
                        s = d["state"]
                        lags.append(d["server_time"] - s["published_at"])
                        current = s["current"] or {}
                        if current.get("iops"):
                            seen.setdefault("iops", (current["workload"], current["iops"]))
                        if s["results"]:
                            seen.setdefault("result", s["results"][0])
                        seen.setdefault("total", s["total"])
                    elif d["status"] != "running":
                        seen["end"] = d
                        break
                if run.poll() is not None and rid is None:
                    break
                time.sleep(0.2)
        finally:
            _out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        assert seen["total"] == 2
        assert seen["iops"][0] in ("rnd4k-q1t1-read", "rnd4k-q1t1-write") and seen["iops"][1] > 0
        assert seen["result"]["workload"] == "rnd4k-q1t1-read" and seen["result"]["figures"]["read"]["iops"] > 0
        assert seen["end"]["done_url"] == f"/runs/{rid}" and seen["end"]["status"] == "complete"
        # a state is published before it is read, by the same clock (its age is make bench's figure)
        assert lags and min(lags) >= 0, lags
        assert get(f"{base}/runs/{rid}")[0] == 200


@pytest.mark.slow
@pytest.mark.root
@needs_root
def test_a_matrix_study_is_live_setup_by_setup_and_ends_on_its_compare_page(history, tmp_path):
    """storbench matrix in another process: each setup's run appears live with its study and
    setup, the live page of a finished setup goes on to the next, and the last ends on the
    compare page of the study's runs."""
    label = f"fs2-{uuid.uuid4().hex[:8]}"  # a study label is taken once in a history (the flake study repeats this)
    with serving(history) as base:
        study = subprocess.Popen([*STORBENCH, "matrix", "--fs", "ext4,btrfs", "--loop-file", str(tmp_path / "loop.img"), "--loop-size", "300m",
                                  "--workload", "rnd4k-q1t1-read", "--runtime", "3", "--size", "16m", "--repeat", "1", "--label", label,
                                  "--no-report"], env=_env(history), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        setups_seen: dict[str, int] = {}
        onward: dict[int, str] = {}
        try:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                for r in get_json(base + "/api/live")["runs"]:
                    st = r["state"].get("study") or {}
                    if st.get("label") == label:
                        setups_seen.setdefault(st["setup"], r["run_id"])
                for rid in list(setups_seen.values()):
                    d = get_json(f"{base}/api/live/{rid}")
                    if d["state"] is None and d.get("done_url"):
                        onward.setdefault(rid, d["done_url"])
                if study.poll() is not None:
                    break
                time.sleep(0.3)
        finally:
            _out, err = study.communicate(timeout=120)
        assert study.returncode == 0, err
        assert sorted(setups_seen) == ["btrfs", "ext4"]
        ext4, btrfs = setups_seen["ext4"], setups_seen["btrfs"]
        assert onward[ext4] in (f"/live/{btrfs}", f"/compare?run={ext4}&run={btrfs}")  # on to the next setup while it runs
        final = get_json(f"{base}/api/live/{ext4}")["done_url"]
        assert final == f"/compare?run={ext4}&run={btrfs}" == get_json(f"{base}/api/live/{btrfs}")["done_url"]
        code, html, _ = get(base + final)
        assert code == 200 and f"{label}/ext4 (baseline)" in html


# --------------------------------------------------------------------------- pure parts


def test_live_rates_from_fio_status_text():
    assert parse_rate_text("r=99.8MiB/s") == pytest.approx(99.8 * 2**20)
    assert parse_rate_text("r=3032KiB/s,w=1300KiB/s") == (3032 + 1300) * 1024
    assert parse_rate_text("w=50.4MB/s") == 50.4e6
    assert parse_iops_text("r=25.6k") == 25600 and parse_iops_text("r=758,w=325") == 1083
    assert parse_rate_text(None) is None and parse_iops_text("") is None


def test_live_publisher_throttles_and_survives_a_failing_store():
    from storbench.fio.progress import parse_status_line

    class Store:
        def __init__(self):
            self.states, self.fail = [], False

        def publish_live(self, run_id, state):
            if self.fail:
                raise RuntimeError("database is locked")
            self.states.append(json.loads(json.dumps(state)))

    clock = iter([0.0, 0.0, 0.1, 0.2, 0.3, 0.4, 1.5, 1.5, 1.6, 1.7])
    store = Store()
    pub = LivePublisher(store, 7, total=2, planned_s=10, clock=lambda: next(clock))
    pub.started("rnd", "/mnt", 0, 2, 0)
    status = parse_status_line("Jobs: 1 (f=1): [r(1)][60.0%][r=99.8MiB/s][r=25.6k IOPS][eta 00m:02s]")
    pub.status(status)  # 0.2 s after the last publish: kept, not written
    assert len(store.states) == 2
    pub.status(status)  # 1.5 s: written
    assert len(store.states) == 3 and store.states[-1]["current"]["iops"] == 25600 and store.states[-1]["current"]["percent"] == 60.0
    store.fail = True
    pub.note("a note")
    pub.failed("rnd", "/mnt", "fio exited 1")
    assert pub.broken == "live view stopped: database is locked" and len(store.states) == 3


def test_live_state_holds_the_last_rate_names_its_segments_and_the_devices_now():
    """What the live page draws from: each sample names its workload and repetition (a line per
    segment), the newest rate is held while the next workload lays out its file and said to be
    the one before's, the devices' newest reading and a matrix setup's plan give 'now' and the ETAs."""
    from storbench.activity import DeviceSample
    from storbench.fio.progress import parse_status_line

    class Store:
        def __init__(self):
            self.states = []

        def publish_live(self, run_id, state):
            self.states.append(json.loads(json.dumps(state)))

    now = [100.0]
    store = Store()
    pub = LivePublisher(store, 3, total=2, planned_s=None, kind="matrix", clock=lambda: now[0],
                        study={"label": "s", "setup": "ext4", "index": 0, "setups": ["ext4", "xfs"]})  # fmt: skip
    now[0] = 104.0
    pub.plan(20.0, 20.0)  # built in 4 s; 20 s of jobs, then one more setup of 20 s
    assert store.states[-1]["eta_run_s"] == 20 and store.states[-1]["eta_study_s"] == 40
    pub.started("rnd", "/mnt/a", 0, 2, 0)
    for t, line in ((105.0, "[r(1)][40.0%][r=4000KiB/s][r=1000 IOPS][eta 00m:02s]"), (106.0, "[r(1)][80.0%][r=8000KiB/s][r=2000 IOPS][eta 00m:01s]")):
        now[0] = t
        pub.status(parse_status_line("Jobs: 1 (f=1): " + line))
    pub.devices_now([DeviceSample(t_s=2.0, device="loop0", interval_s=1.0, reads_per_s=2000.0, writes_per_s=0.0, read_bytes_per_s=8192000.0,
                                  write_bytes_per_s=0.0, discard_bytes_per_s=None, avg_queue_size=1.4, r_await_ms=0.5, w_await_ms=None,
                                  util_pct=93.0)])  # fmt: skip
    now[0] = 107.0
    pub.started("seq", "/mnt/a", 1, 2, 0)  # laying out its file: no rate of its own yet
    state = store.states[-1]
    assert state["current"]["iops"] is None and state["last"]["iops"] == 2000 and state["last"]["index"] == 0
    assert [p[3:] for p in state["samples"]] == [[0, 0], [0, 0]] and state["names"] == {"0": "rnd on /mnt/a", "1": "seq on /mnt/a"}
    shown = views.live_text(state)
    assert shown["iops"] == "2000" and shown["rate_of"] == "rnd (the one before)"
    assert shown["devices"][0]["text"] == "loop0: 93% busy, queue 1.4, read 7.8 MiB/s, write 0 B/s"
    now[0] = 108.5
    pub.status(parse_status_line("Jobs: 1 (f=1): [R(1)][50.0%][r=100MiB/s][r=100 IOPS][eta 00m:01s]"))
    state = store.states[-1]
    assert views.live_text(state)["rate_of"] == "seq" and [p[3:] for p in state["samples"]][-1] == [1, 0]
    assert (state["eta_run_s"], state["eta_study_s"]) == (16, 36)  # 24 s planned from the start, 8.5 s gone; 20 s after


def _record(run_id: int, iops: float, rep: int = 0) -> ResultRecord:
    """A real fio result (group_reporting of 4 jobs) with its IOPS set to ``iops``."""
    fio = parse_fio_json((DATA / "fio-json" / "c_numjobs_group_reporting.json").read_text())
    job = fio.jobs[0]
    direction = next(iter(job.directions))
    d = dataclasses.replace(job.directions[direction], iops=iops)
    job = dataclasses.replace(job, directions={direction: d})
    return ResultRecord(run_id=run_id, workload="w", target="/t", fio=dataclasses.replace(fio, jobs=(job,)), raw_output="", repetition=rep)


def test_trend_marks_a_significant_drop_only():
    runs = {i: RunInfo(run_id=i, label=f"k{i}", kind="run", status="complete", created_at=f"2026-12-0{i}T00:00:00Z", finished_at=None,
                       suite=None, reason=None, storbench_version=None, result_count=3) for i in (1, 2, 3, 4)}  # fmt: skip
    records = [_record(1, v, k) for k, v in enumerate((1000, 1010, 990))] + [_record(2, v, k) for k, v in enumerate((1005, 995, 1000))]
    records += [_record(3, v, k) for k, v in enumerate((700, 710, 690))] + [_record(4, v) for v in (400,)]
    trend = views.trend_points(records, runs, "iops")
    marks = [(p["run_id"], p["regression"] is not None) for p in trend["points"]]
    assert marks == [(1, False), (2, False), (3, True), (4, False)]  # run 4 has one repetition: never judged
    assert trend["targets"] == ["/t"] and trend["unit"] == "IOPS"
    # the same runs on two targets are two lines: a run is judged against the run before it on its own target
    other = [dataclasses.replace(r, target="/u") for r in records if r.run_id in (3, 4)]
    split = views.trend_points([r for r in records if r.run_id in (1, 2)] + other, runs, "iops")
    assert split["targets"] == ["/u", "/t"] and [(p["target"], p["run_id"], p["regression"] is not None) for p in split["points"]] == [
        ("/u", 3, False), ("/u", 4, False), ("/t", 1, False), ("/t", 2, False)]  # fmt: skip
    fig = views.trend_figure(split, "w")
    assert [t["name"] for t in fig["data"]] == ["/u", "/t"] and fig["layout"]["yaxis"]["title"]["text"] == "IOPS"
    bw = views.trend_points(records, runs, "bw")
    assert bw["unit"] in ("B/s", "KiB/s", "MiB/s", "GiB/s") and views.trend_figure(bw, "w")["layout"]["yaxis"]["title"]["text"].endswith(f"({bw['unit']})")
    p3 = trend["points"][2]
    assert p3["regression"]["rel_diff_pct"] == pytest.approx(-30.0, abs=0.2) and p3["regression"]["p_value"] < 0.05
    assert p3["regression"]["lead_pct"] == pytest.approx(-100 * (1 / 0.7 - 1), abs=0.5)  # the run before leads it by 42.9%
    assert p3["ci95"][0] < 700 < p3["ci95"][1] and p3["n"] == 3


def test_prometheus_text_escapes_labels():
    from prometheus_client.parser import text_string_to_metric_families

    text = prometheus.format_metrics(
        [{"run_id": 3, "workload": 'we"ird\\name', "target": "/mnt/a\nb", "host": None, "label": None, "repetitions": 3, "ended_s": 1.7e9,
          "stats": {"read": {"iops": 1234.5, "bw_bytes": 5e6, "lat_mean_ns": 2e5, "clat_p99_ns": 9e5}}, "p50_ns": {"read": 1.5e5}}],
        [{"run_id": 9, "eta_run_s": 12, "results": [{}], "current": {"workload": "w", "target": "/t", "iops": 10.0, "bw_bytes": None, "percent": 50.0}}],
    )  # fmt: skip
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    (sample,) = fams["storbench_result_iops"].samples
    assert sample.labels["workload"] == 'we"ird\\name' and sample.labels["target"] == "/mnt/a\nb" and sample.value == 1234.5
    assert [s.value for s in fams["storbench_live_workload_percent"].samples] == [50.0]
    assert [s.value for s in fams["storbench_live_eta_seconds"].samples] == [12.0]
    assert [(s.labels["quantile"], s.value) for s in fams["storbench_result_latency_seconds"].samples] == [("0.5", 1.5e-4), ("0.99", 9e-4)]
    assert [s.value for s in fams["storbench_result_latency_mean_seconds"].samples] == [2e-4]
    assert [s.value for s in fams["storbench_result_timestamp_seconds"].samples] == [1.7e9]


@pytest.mark.slow  # real fio runs into a real PostgreSQL server
def test_serve_over_postgresql(pg_url, tmp_path):
    """The same pages over a PostgreSQL store: real runs and a real curve written there by the CLI,
    the runs page's filters, a run, a compare, the curves page and /metrics (the filters and the
    curves page used to fail there: PostgreSQL has no instr())."""
    for name in ("a", "b"):
        target = tmp_path / f"t-{name}"
        target.mkdir()
        proc = subprocess.run([*STORBENCH, "--db", pg_url, "run", "--target", str(target), "--size", "8m", "--runtime", "1",
                               "--repeat", "2", "--workload", "rnd4k-q1t1-read", "--label", f"pg/{name}", "--no-report"],
                              env=_env(pg_url), cwd=tmp_path, capture_output=True, text=True, timeout=300)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    curve = subprocess.run([*STORBENCH, "--db", pg_url, "curve", "--target", str(tmp_path / "t-a"), "--load", "iodepth=1,4",
                            "--size", "8m", "--runtime", "300ms", "--label", "pg/curve", "--no-report"],
                           env=_env(pg_url), cwd=tmp_path, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert curve.returncode == 0, curve.stderr
    with serving(pg_url) as base:
        everything = get_json(base + "/api/runs")
        assert [r["label"] for r in everything["runs"]] == ["pg/curve", "pg/b", "pg/a"]
        # "/t-b", not "t-b": the filter is a substring, and pytest's --basetemp (/tmp/sbt-XXXXXX) may be /tmp/sbt-b...
        assert [r["label"] for r in get_json(base + "/api/runs?target=%2Ft-b")["runs"]] == ["pg/b"]
        short = get_json(base + "/api/runs?finding=short-run")["runs"]  # sub-second workloads: every run has it
        assert [r["label"] for r in short] == ["pg/curve", "pg/b", "pg/a"] and all("short-run" in r["warnings"] for r in short)
        assert get_json(base + "/api/runs?finding=no-such-check")["total"] == 0
        host = everything["runs"][-1]["hosts"][0] if everything["runs"][-1].get("hosts") else os.uname().nodename
        assert get_json(base + "/api/runs?host=" + urllib.parse.quote(host))["total"] == 3
        assert get_json(base + "/api/runs?target=no-such-target")["total"] == 0
        ids = sorted(r["id"] for r in everything["runs"] if r["label"] in ("pg/a", "pg/b"))
        data = get_json(f"{base}/api/compare?run={ids[0]}&run={ids[1]}")
        assert [c["name"] for c in data["configs"]] == ["pg/a", "pg/b"] and data["verdicts"]
        code, html, _ = get(f"{base}/runs/{ids[0]}")
        assert code == 200 and "rw=randread" in html
        code, html, _ = get(base + "/curves")
        assert code == 200 and "pg/curve" in html
        # the curve run's own page draws its curve (IOPS against p99), not each step as a workload
        curve_id = everything["runs"][0]["id"]
        (stored,) = get_json(base + "/api/curves")["curves"]
        code, html, _ = get(f"{base}/runs/{curve_id}")
        figure = json.loads(html_mod.unescape(re.search(r'<section id="curve">.*?data-figure="([^"]+)"', html, re.S).group(1)))
        assert code == 200 and 'id="charts"' not in html
        assert figure["data"][0]["x"] == [st["iops"] for st in stored["steps"]] and len(stored["steps"]) == 2
        code, text, _ = get(base + "/metrics")
        assert code == 200 and 'label="pg/b"' in text


def test_run_page_says_what_the_zfs_pool_did_as_show_says_it(tmp_path):
    """A result with its pool's activity (recorded zpool iostat -v and status outputs of a RAID 10
    going DEGRADED): the run page's back-end lines are `storbench show`'s, to the character."""
    from markupsafe import escape

    from storbench.backend import BackendActivity
    from storbench.backend.zfs import zfs_activity
    from storbench.storage import parse_zpool_status
    from storbench.storage.zfs import ArcStats, parse_zpool_iostat
    from storbench.store import Store

    zfs = DATA / "zfs-fuse"
    (before,) = parse_zpool_status((zfs / "sb-zpool-status-raid10.txt").read_text())
    (after,) = parse_zpool_status((zfs / "zfs-zpool-status-degraded.txt").read_text())
    act = zfs_activity("tst", "tst/b", status_before=before, status_after=after, iostat=parse_zpool_iostat((zfs / "sb-zpool-iostat-v-raid10-randwrite.txt").read_text()),
                       arc_before=ArcStats(data_hits=0, data_misses=0), arc_after=ArcStats(data_hits=36_600, data_misses=94),
                       compressratio_before=1.0, compressratio_after=28.35)  # fmt: skip
    from test_multihost import recorded

    from storbench.run.aggregate import per_host_results

    fio = per_host_results(parse_fio_json(recorded("two_hosts")[0]))[-1][1]  # a real fio result
    db = tmp_path / "zfs.sqlite"
    with contextlib.closing(Store.open(f"sqlite:///{db}")) as store:
        run_id = store.create_run(label="pool", kind="run", meta={})
        store.add_result(ResultRecord(run_id=run_id, workload="w", target="/tst/b", fio=fio, raw_output="{}", backend=BackendActivity(zfs=act)))
        store.finish_run(run_id, "complete")
    shown = subprocess.run([*STORBENCH, "show", str(run_id)], env=_env(db), capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    at = lines.index("w:", next(i for i, ln in enumerate(lines) if "ZFS" in ln) - 1)
    block = [lines[at]] + [ln for ln in lines[at + 1:at + 40] if ln.startswith("  ")]
    assert "  ZFS pool tst after the run: DEGRADED, mirror-0 DEGRADED, loop2 OFFLINE" in block
    with serving(db) as base:
        code, html, _ = get(f"{base}/runs/{run_id}")
    assert code == 200
    page = html[html.index('<pre class="backend wrap" id="backend">') + len('<pre class="backend wrap" id="backend">'):]
    assert page[:page.index("</pre>")].splitlines() == [str(escape(ln)) for ln in block]


# --------------------------------------------------------------------------- a run on many hosts


def test_run_page_of_many_hosts_summarises_them(tmp_path):
    """A run on 24 hosts (fio's real two-host output, each host's figure scaled): the run page's
    table holds the aggregate and one line names the hosts' spread and the slowest; ?hosts=all
    gives a row for every host."""
    from test_multihost import _scaled, recorded

    from storbench.run.aggregate import per_host_results
    from storbench.store import Store

    result = parse_fio_json(recorded("two_hosts")[0])
    one, aggregate = per_host_results(result)[0][1], per_host_results(result)[-1][1]
    hosts = [f"10.0.0.{i}:8765" for i in range(1, 25)]
    db = tmp_path / "hosts.sqlite"
    with contextlib.closing(Store.open(f"sqlite:///{db}")) as store:
        run_id = store.create_run(label="fleet", kind="run", suite="quick", meta={})
        for i, host in enumerate(hosts):
            fio = _scaled(one, 0.4 if host == "10.0.0.7:8765" else 1.0 + i / 100)
            store.add_result(ResultRecord(run_id=run_id, workload="w", target=".", fio=fio, raw_output="{}", host=host))
        store.add_result(ResultRecord(run_id=run_id, workload="w", target=".", fio=aggregate, raw_output="{}", host="all"))
        store.finish_run(run_id, "complete")
    with serving(db) as base:
        code, html, _ = get(f"{base}/runs/{run_id}")
        assert code == 200
        table = html[html.index('id="results"'):html.index("</table>", html.index('id="results"'))]
        assert table.count("<tr>") == 2 and "<td>all</td>" in table  # the header and the aggregate's row
        assert "24 hosts: the table holds their aggregate" in html and 'href="?hosts=all"' in html
        assert re.search(r"24 hosts, IOPS each: min [\d.k]+ · median [\d.k]+ · max [\d.k]+ \(10\.0\.0\.24:8765\); slowest: 10\.0\.0\.7:8765 ", html), html
        code, every, _ = get(f"{base}/runs/{run_id}?hosts=all")
        table = every[every.index('id="results"'):every.index("</table>", every.index('id="results"'))]
        assert code == 200 and table.count("<tr>") == 26 and "24 hosts: the table" not in every
        code, body, _ = get(f"{base}/runs/{run_id}?hosts=some")
        assert code == 400 and "parameter &#39;hosts&#39; takes only &#39;all&#39;" in body


def test_the_runs_lists_headline_figures_pick_a_bandwidth_and_an_iops_workload():
    """Pure: the first workload judged by bandwidth and the first judged by IOPS (or latency), in
    the run's order, each the mean over its repetitions on its first target; a mix sums its
    directions; an application load (no headline column) gives none."""
    def row(workload, rep, options, target="/t", **cols):
        return {"workload": workload, "repetition": rep, "target": target, "options": options,
                **{k: cols.get(k) for k in ("read_iops", "write_iops", "read_bw_bytes", "write_bw_bytes")}}  # fmt: skip

    seq = {"rw": "read", "bs": "1m", "iodepth": "8"}
    mix = {"rw": "randrw", "bs": "4k", "rwmixread": "70"}
    sync = {"rw": "randwrite", "bs": "4k", "fsync": "1", "iodepth": "1"}
    figures = [
        row("journal", 0, sync, write_iops=300.0, write_bw_bytes=1.2e6),
        row("mixed", 0, mix, read_iops=700.0, write_iops=300.0), row("mixed", 1, mix, read_iops=900.0, write_iops=100.0),
        row("seq1m", 0, seq, read_bw_bytes=2e9, read_iops=2000.0), row("seq1m", 1, seq, read_bw_bytes=1e9, read_iops=1000.0),
        row("seq1m", 0, seq, target="/other", read_bw_bytes=9e9),  # another target: not this figure
        row("pgbench", 0, {"clients": "4"}),
    ]
    shown = views.headline_figures(figures)
    assert [(f["workload"], f["metric"], f["direction"], f["value"], f["n"]) for f in shown] == [
        ("journal", "iops", "write", 300.0, 1),  # judged by latency, shown as IOPS (the list keeps the headline columns)
        ("seq1m", "bw_bytes", "read", 1.5e9, 2),
    ]
    assert shown[1]["text"] == "1.4 GiB/s"
    assert [f["workload"] for f in views.headline_figures(figures[1:3] + figures[-1:])] == ["mixed"]
    (mixed,) = views.headline_figures(figures[1:3])
    assert (mixed["direction"], mixed["value"]) == ("read+write", 1000.0)
    assert views.headline_figures(figures[-1:]) == []
    assert [f["targets"] for f in shown] == [2, 2]  # the run had two targets: each figure is the first's


def test_the_runs_list_gives_an_application_loads_headline_figure_and_its_p99():
    """Pure: a database run's pgbench (no fio figure): its first figure, tps, the mean over its
    repetitions, with its p99 where every repetition measured one; dbench's MB/s without."""
    def load(workload, *measures):
        return {"workload": workload, "repetition": 0, "target": "/t", "options": {}, "read_iops": None, "write_iops": None,
                "read_bw_bytes": None, "write_bw_bytes": None, "measures": [{"unit": u, "value": v} for u, v in measures]}  # fmt: skip

    figures = [load("pg", ("tps", 1000.0), ("latency p99 ms", 3.0)), load("pg", ("tps", 2000.0), ("latency p99 ms", 4.0)),
               load("db", ("MB/s", 500.0), ("max latency ms", 9.0))]  # fmt: skip
    pg, db = views.headline_figures(figures)
    assert (pg["workload"], pg["metric"], pg["direction"], pg["value"], pg["n"]) == ("pg", "tps", "result", 1500.0, 2)
    assert pg["text"] == "1,500 tps, p99 3.5 ms" and db["text"] == "500 MB/s" and pg["targets"] == 1
    # a repetition without a p99: none is given rather than a mean of some
    assert views.headline_figures([figures[0], load("pg", ("tps", 2000.0))])[0]["text"] == "1,500 tps"
