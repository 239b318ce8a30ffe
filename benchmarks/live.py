"""The live view's lag: how soon fio's rates reach ``/api/live/N`` (what the live page polls).

A real ``storbench run`` (two 6 s workloads on a directory under /var/tmp) beside a real
``storbench serve`` on the same store; the API is asked twice a second, as the page asks.  Each
rate fio printed has a wall time (the state's ``published_at`` less its ``elapsed_s``, plus the
sample's second); its lag is when this poller first saw it, less that.  A rate printed less than
2 s before its run ended had no 2 s to be seen and is not counted (the page then moves on).

Targets: at least 90 % of the rates within 2 s of fio printing them; every state read no older
than 2.5 s (the publishing interval plus a poll).  These were asserted by the browser and serve
tests until a busy CI machine showed 4 of 5 (session 25): a figure of the machine's speed is
measured here, never asserted in a test.

    .venv/bin/python benchmarks/live.py [--json FILE]
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Figure, arg_parser, bench_env, emit, median, scratch_dir, storbench_argv, warm_bytecode

WITHIN_S = 2.0
POLL_S = 0.5
WORKLOADS = ("rnd4k-q1t1-read", "rnd4k-q1t1-write")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


@contextlib.contextmanager
def serving(env: dict, db: Path) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen([*storbench_argv(), "serve", "--db", str(db), "--port", str(port), "--bind", "127.0.0.1"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"live: storbench serve did not start: {proc.stderr.read().decode(errors='replace')[-300:]}") from None
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> int:
    args = arg_parser(__doc__.splitlines()[0]).parse_args()
    warm_bytecode()
    with scratch_dir("storbench-bench-live-") as work:
        db = work / "live.sqlite"
        env = bench_env(db)
        target = work / "target"
        target.mkdir()
        from storbench.store.database import Store

        Store.open(f"sqlite:///{db}").close()  # the server opens an existing store only
        printed: dict[tuple[int, float], float] = {}  # (run, t_s) -> wall time fio printed it
        seen: dict[tuple[int, float], float] = {}  # -> wall time this poller first saw it
        ages: list[float] = []
        last_poll: dict[int, float] = {}
        with serving(env, db) as base:
            run = subprocess.Popen([*storbench_argv(), "run", "--target", str(target), "--size", "16m", "--runtime", "6",
                                    "--repeat", "1", *(x for w in WORKLOADS for x in ("--workload", w)), "--label", "live-bench"],
                                   env=env, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
            deadline = time.monotonic() + 180
            while run.poll() is None and time.monotonic() < deadline:
                for live in get_json(base + "/api/live")["runs"]:
                    rid = live["run_id"]
                    d = get_json(f"{base}/api/live/{rid}")
                    now = time.time()
                    state = d["state"]
                    if not state:
                        continue
                    last_poll[rid] = now
                    ages.append(d["server_time"] - state["published_at"])
                    start = state["published_at"] - state["elapsed_s"]
                    for sample in state["samples"]:
                        if sample[1] is not None:
                            key = (rid, sample[0])
                            printed.setdefault(key, start + sample[0])
                            seen.setdefault(key, now)
                time.sleep(POLL_S)
            _out, err = run.communicate(timeout=60)
        if run.returncode != 0:
            raise SystemExit(f"live: storbench run exited {run.returncode}: {err.decode(errors='replace')[-300:]}")
    lags = [seen[k] - printed[k] for k in printed if printed[k] + WITHIN_S <= last_poll[k[0]]]
    if not lags:
        raise SystemExit("live: fio printed no rate the poller could watch for 2 s")
    within = sum(lag <= WITHIN_S for lag in lags) / len(lags)
    print(f"  {len(lags)} rates watched; lag median {median(lags):.2f} s, max {max(lags):.2f} s; "
          f"state age median {median(ages):.2f} s, max {max(ages):.2f} s over {len(ages)} reads", flush=True)
    emit([
        Figure("live", f"rates on /api/live within {WITHIN_S:g} s of fio printing them", within, ">= 0.9",
               detail=f"{sum(lag <= WITHIN_S for lag in lags)} of {len(lags)}; lag median {median(lags):.2f} s, "
                      f"max {max(lags):.2f} s (polled every {POLL_S:g} s, as the page)"),
        Figure("live", "oldest live state read (server time less published_at)", max(ages), "<= 2.5", unit=" s",
               detail=f"median {median(ages):.2f} s over {len(ages)} reads"),
    ], args.json)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
