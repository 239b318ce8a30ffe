"""Run every benchmark (``make bench``) and print one table: benchmark, figure, target, PASS/MISS.

Each benchmark runs as its own process (its output streams through) and hands its
figures back as JSON.  Together they take about 5 minutes on a 2-core machine; the
longest part is fio-plot charting 5 million log lines.

    .venv/bin/python benchmarks/run_all.py [--only overhead walltime logs history history-pg imports startup loads hosts live replay] [--json FILE]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import fio_version  # noqa: E402


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


#: the history at a team's scale (issue 24): 100,000 runs / 1,000,000 results, made once per
#: store (SQLite ~4.5 minutes and ~15 GB; PostgreSQL longer) and kept for the next `make bench`
#: in this directory; "v2" since the templates vary target, host, suite and findings
HISTORY_CACHE = Path(os.environ.get("STORBENCH_BENCH_CACHE", "/var/tmp/storbench-bench-cache"))
#: name -> (script in benchmarks/, its arguments)
BENCHMARKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "overhead": ("overhead", ()),
    "walltime": ("walltime", ()),
    "logs": ("logs", ()),
    "history": ("history", ("--runs", "100000", "--keep", str(HISTORY_CACHE / "history-100000-v3.sqlite"))),
    "history-pg": ("history", ("--store", "postgresql", "--runs", "100000", "--keep",
                               str(HISTORY_CACHE / "history-100000-v3-postgresql"))),
    "imports": ("imports", ()),
    "startup": ("startup", ()),
    "loads": ("loads", ()),
    "hosts": ("hosts", ()),
    "live": ("live", ()),
    "replay": ("replay", ()),
}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="+", choices=BENCHMARKS, default=list(BENCHMARKS))
    p.add_argument("--json", metavar="FILE", help="also write every figure to FILE")
    args = p.parse_args()

    started = time.perf_counter()
    print(f"storbench benchmarks, {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, "
          f"{os.cpu_count()} CPUs, {platform.platform()}, {fio_version()}, load average {load()}", flush=True)
    rows: list[dict] = []
    failed: list[str] = []
    durations: dict[str, float] = {}
    for name in args.only:
        print(f"\n=== {name} ===", flush=True)
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
            out = Path(tmp.name)
        t = time.perf_counter()
        script, extra = BENCHMARKS[name]
        proc = subprocess.run([sys.executable, str(HERE / f"{script}.py"), "--json", str(out), *extra])
        durations[name] = time.perf_counter() - t
        try:
            figures = json.loads(out.read_text()) if out.stat().st_size else []
        except (OSError, ValueError):
            figures = []
        finally:
            out.unlink(missing_ok=True)
        if proc.returncode != 0 or not figures:
            failed.append(name)
            rows.append({"benchmark": name, "figure": f"benchmark failed (exit {proc.returncode})", "value": None,
                         "target": "runs", "status": "MISS", "unit": "", "detail": ""})
        rows.extend(figures)

    total = time.perf_counter() - started
    print(f"\n=== summary ({total / 60:.1f} min: "
          + ", ".join(f"{k} {v:.0f} s" for k, v in durations.items()) + f"; load average now {load()}) ===")
    width = max(len(r["figure"]) for r in rows)
    print(f"{'benchmark':10} {'figure':{width}} {'value':>10} {'target':>8} result")
    for r in rows:
        value = "n/a" if r["value"] is None else f"{r['value']:.3g}{r.get('unit', '')}"
        print(f"{r['benchmark']:10} {r['figure']:{width}} {value:>10} {r['target'] or '-':>8} {r['status']}")
    if args.json:
        Path(args.json).write_text(json.dumps({"total_s": total, "figures": rows}, indent=2))
    misses = sum(r["status"] == "MISS" for r in rows)
    print(f"\n{sum(r['status'] == 'PASS' for r in rows)} PASS, {misses} MISS"
          + (f"; failed to run: {', '.join(failed)}" if failed else ""))
    # the figures are the product; a MISS is a finding, not a crash
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
