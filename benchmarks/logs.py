"""Log ingestion: storbench against fio-plot on the same per-I/O fio logs.

fio itself writes the logs: 10 s of 4 KiB random reads of a page-cached 128 MiB file
(psync, buffered, invalidate=0) by 2 jobs, each rate-limited to 125,000 IOPS, with
``write_lat_log`` + ``write_bw_log`` and ``log_avg_msec=0`` (one line per I/O).  The
latency and bandwidth logs fio-plot charts hold about 5 million lines, 120 MB (fio
also writes clat and empty slat logs beside them).  Everything lives in a scratch
directory that is deleted afterwards.

Each tool runs as a child process, timed from start to exit, with its peak RSS from
``wait4``:

* storbench (``benchmarks/_ingest_logs.py``): streams the logs through
  ``storbench.fio.logs.summarize_io_logs`` (per-second IOPS and bandwidth, p50/p99
  latency per second, jobs aligned on timestamps) and charts them twice, in two
  runs: as plotly figures in a self-contained HTML page (the way ``storbench
  report`` draws) and as a PNG drawn by ``storbench.render.png`` (Pillow; what fio-plot makes);
* fio-plot, in its own venv (``benchmarks/.venv-fioplot``, created with
  ``pip install fio-plot`` when missing), in its ``-g`` (graph over time) mode on the
  same directory, named the way bench-fio names its logs:
  ``fio-plot -i DIR -g -t bw lat -r randread -d 1 -n 2 -T ... -o OUT.png`` (once:
  it takes minutes).

Targets: storbench >= 50x faster than fio-plot (each chart kind); storbench's peak
memory below the size of the logs charted.

    .venv/bin/python benchmarks/logs.py [--runtime 10] [--rate-iops 125000] [--no-fioplot] [--json FILE]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import BENCH_DIR, Figure, arg_parser, emit, run_timed, scratch_dir, warm_bytecode

PREFIX = "randread-iodepth-1-numjobs-2"  # bench-fio's naming, which fio-plot -g looks for
FIOPLOT_VENV = BENCH_DIR / ".venv-fioplot"


def make_logs(where: Path, runtime_s: int, rate_iops: int) -> None:
    data = where / "data"
    run_timed(["fio", "--name=layout", f"--filename={data}", "--size=128m", "--rw=read", "--bs=1m",
               "--output=/dev/null"], cwd=where).check()  # written, then read: in the page cache
    run_timed([
        "fio", f"--name={PREFIX}", f"--filename={data}", "--size=128m", "--rw=randread", "--bs=4k",
        "--ioengine=psync", "--direct=0", "--invalidate=0", "--numjobs=2", f"--runtime={runtime_s}",
        "--time_based", f"--rate_iops={rate_iops}", f"--write_lat_log={PREFIX}", f"--write_bw_log={PREFIX}",
        "--log_avg_msec=0", "--output-format=json", f"--output={where / 'fio.json'}",
    ], cwd=where, timeout_s=runtime_s + 120).check()
    data.unlink()
    (where / "fio.json").unlink()


def count_lines(paths: list[Path]) -> int:
    n = 0
    for p in paths:
        with p.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                n += block.count(b"\n")
    return n


def fioplot_bin() -> tuple[Path | None, str]:
    exe = FIOPLOT_VENV / "bin" / "fio-plot"
    if exe.exists():
        return exe, ""
    try:
        subprocess.run([sys.executable, "-m", "venv", str(FIOPLOT_VENV)], check=True, capture_output=True)
        subprocess.run([str(FIOPLOT_VENV / "bin" / "pip"), "install", "-q", "fio-plot"], check=True,
                       capture_output=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"cannot install fio-plot into {FIOPLOT_VENV}: {exc}"
    return (exe, "") if exe.exists() else (None, "pip install fio-plot gave no fio-plot command")


def mib(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def main() -> int:
    p = arg_parser(__doc__.splitlines()[0])
    p.add_argument("--runtime", type=int, default=10)
    p.add_argument("--rate-iops", type=int, default=125_000, help="per job (2 jobs)")
    p.add_argument("--no-fioplot", action="store_true", help="measure storbench alone")
    args = p.parse_args()
    warm_bytecode()
    figures = []
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with scratch_dir("storbench-bench-logs-") as work:
        logs = work / "logs"
        logs.mkdir()
        print(f"writing per-I/O logs with fio in {logs} ...", flush=True)
        make_logs(logs, args.runtime, args.rate_iops)
        charted = sorted(p for p in logs.iterdir() if p.name.endswith((".log",)) and ("_lat." in p.name or "_bw." in p.name))
        everything = sorted(p for p in logs.iterdir() if p.name.endswith(".log"))
        size = sum(p.stat().st_size for p in charted)
        lines = count_lines(charted)
        print(f"  lat + bw logs: {lines:,} lines, {mib(size)} ({len(charted)} files); "
              f"all logs {mib(sum(p.stat().st_size for p in everything))}", flush=True)

        helper = [sys.executable, str(BENCH_DIR / "_ingest_logs.py"), str(logs)]
        runs = {}
        for mode in ("html", "png"):
            t = run_timed([*helper, str(work / f"storbench.{mode}"), f"--{mode}"], env=env).check()
            info = json.loads(t.stdout.strip().splitlines()[-1])
            runs[mode] = (t, info)
            print(f"  storbench, {mode} chart: {t.wall_s:.2f} s (summary {info['summary_seconds']:.2f} s over "
                  f"{mib(info['bytes_read'])} of latency logs, chart {info['chart_seconds']:.2f} s), "
                  f"peak {mib(t.maxrss_bytes)}", flush=True)
        full = run_timed([*helper, str(work / "unused"), "--all"], env=env).check()
        full_info = json.loads(full.stdout.strip().splitlines()[-1])
        print(f"  storbench parsing every line of every log: {full_info['lines']:,} lines, {mib(full_info['bytes'])} "
              f"in {full.wall_s:.2f} s, peak {mib(full.maxrss_bytes)}", flush=True)

        fp = None
        why = "skipped (--no-fioplot)"
        if not args.no_fioplot:
            exe, why = fioplot_bin()
            if exe is not None:
                print("  fio-plot -g (this takes a while) ...", flush=True)
                fp = run_timed([str(exe), "-i", str(logs), "-g", "-t", "bw", "lat", "-r", "randread", "-d", "1",
                                "-n", "2", "-T", f"{lines:,} log lines", "-o", str(work / "fioplot.png")],
                               cwd=work, timeout_s=900)
                if fp.returncode != 0 or not (work / "fioplot.png").exists():
                    why = f"fio-plot failed (exit {fp.returncode}): {(fp.stderr or fp.stdout).strip()[-300:]}"
                    fp = None
                else:
                    print(f"  fio-plot: {fp.wall_s:.1f} s, peak {mib(fp.maxrss_bytes)}", flush=True)

    data = f"{lines:,} lines, {mib(size)} of lat + bw logs (2 jobs, {args.runtime} s)"
    what = {"html": "HTML chart (plotly, as storbench report)", "png": "PNG chart (storbench.render.png, like fio-plot)"}
    for mode in ("html", "png"):
        t, info = runs[mode]
        mine = (f"storbench {t.wall_s:.2f} s = summary {info['summary_seconds']:.2f} s (reads the "
                f"{mib(info['bytes_read'])} latency logs) + chart {info['chart_seconds']:.2f} s")
        if fp is not None:
            figures.append(Figure("logs", f"speed-up over fio-plot -g, storbench {what[mode]}", fp.wall_s / t.wall_s,
                                  ">= 50", unit="x",
                                  detail=f"fio-plot {fp.wall_s:.1f} s (peak {mib(fp.maxrss_bytes)}); {mine}; {data}"))
        else:
            figures.append(Figure("logs", f"speed-up over fio-plot -g, storbench {what[mode]}", None, ">= 50",
                                  detail=f"fio-plot not measured: {why}; {mine}; {data}"))
    peak = max(t.maxrss_bytes for t, _ in runs.values())
    figures.append(Figure("logs", "storbench peak memory / size of the logs charted", peak / size, "<= 1.0",
                          detail=f"peak RSS {mib(peak)} (html {mib(runs['html'][0].maxrss_bytes)}, png "
                                 f"{mib(runs['png'][0].maxrss_bytes)}) for {mib(size)} of logs"))
    figures.append(Figure("logs", "storbench parse of every line of every log (MB/s)", full_info["bytes"] / 1e6 / full.wall_s, "",
                          detail=f"{full_info['lines']:,} lines, {mib(full_info['bytes'])} in {full.wall_s:.2f} s "
                                 f"(lat, clat, bw; the summary needs only lat), peak {mib(full.maxrss_bytes)}"))
    emit(figures, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
