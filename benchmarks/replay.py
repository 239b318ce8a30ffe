"""Capture and replay (issue 51): what a capture costs, how closely fio's timed replay keeps a
trace's pace, what a trace of a million requests costs to store, show and replay.

* **capture cost**: dbench (2 clients, 4 s) on ext4 on a loop device, alone and under
  ``storbench capture``; the figure is its throughput under capture over alone (target >= 0.90),
  with the capture's own CPU and events per second (root only; skipped otherwise).
* **timed replay error**: 2 s of 4 KiB random reads at 1,000 and 10,000 IOPS (synthetic v3 iologs,
  one request each 1 ms / 100 us), replayed timed by ``storbench run --replay`` onto a loop device
  over tmpfs (root; else a file under /var/tmp): fio's wall time against the trace's 2 s, as
  drift % (target <= 5 at 1k IOPS; given at 10k, where fio 3.33's replay is known to fall behind).
* **a million requests**: a v3 iolog of 1,000,000 requests (10,000 IOPS over 100 s) imported,
  shown, and replayed as fast as it goes onto a file under /var/tmp: storbench's peak RSS at
  each step (target <= 100 MB) and the bytes stored per request (target <= 16).

    .venv/bin/python benchmarks/replay.py [--json FILE]
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Figure, arg_parser, bench_env, emit, scratch_dir, storbench_argv, tmpfs, warm_bytecode

MB = 1_000_000


def write_iolog(path: Path, n: int, gap_us: int, span_blocks: int = 16384, seed: int = 1) -> None:
    import numpy as np

    rng = np.random.default_rng(seed)
    offsets = rng.integers(0, span_blocks, n) * 4096
    with open(path, "w") as f:
        f.write("fio version 3 iolog\n0 x add\n0 x open\n")
        for start in range(0, n, 100_000):
            stop = min(n, start + 100_000)
            f.write("".join(f"{i * gap_us} x read {int(offsets[i])} 4096\n" for i in range(start, stop)))
        f.write(f"{n * gap_us} x close\n")


def peak_rss(argv: list[str], env: dict) -> tuple[int, float, str, str]:
    """Run storbench; its own peak RSS (VmHWM, polled: not fio's), wall time, stdout, stderr."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = [0]

    def watch() -> None:
        while proc.poll() is None:
            with contextlib.suppress(OSError):
                m = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{proc.pid}/status").read_text())
                if m:
                    peak[0] = max(peak[0], int(m[1]) * 1024)
            time.sleep(0.02)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    out, err = proc.communicate()
    t.join()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[1:4])}: exit {proc.returncode}: {err.strip()[-500:]}")
    return peak[0], time.perf_counter() - started, out, err


@contextlib.contextmanager
def loop_device(backing: Path, size_mib: int) -> Iterator[str]:
    with open(backing, "wb") as f:
        f.truncate(size_mib * 1024 * 1024)
    dev = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", str(backing)], check=True, capture_output=True, text=True).stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)


def dbench_mb_s(text: str) -> float:
    m = re.search(r"Throughput ([\d.]+) MB/sec", text)
    if m is None:
        raise RuntimeError(f"no dbench throughput in: {text[-300:]}")
    return float(m[1])


def capture_cost(work: Path, env: dict) -> list[Figure]:
    if os.geteuid() != 0 or not Path("/usr/bin/dbench").exists():
        print("capture cost: needs root and dbench; skipped")
        return []
    image, mnt = work / "db.img", work / "mnt"
    mnt.mkdir()
    with loop_device(image, 256) as dev:
        subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev], check=True, capture_output=True)
        subprocess.run(["mount", dev, str(mnt)], check=True)
        try:
            dbench = ["dbench", "-D", str(mnt), "-t", "4", "2"]
            alone, under_mb = [], []
            cpu = events = 0.0
            for _ in range(2):
                alone.append(dbench_mb_s(subprocess.run(dbench, capture_output=True, text=True, check=True).stdout))
                _, _, out, _ = peak_rss([*storbench_argv(), "capture", "--device", dev, "--label", "dbench", "--json", "--",
                                         "sh", "-c", f"{' '.join(dbench)} > {work / 'dbench.out'}"], env)  # fmt: skip
                under_mb.append(dbench_mb_s((work / "dbench.out").read_text()))
                cost = json.loads(out)["meta"]["cost"]
                cpu, events = cost["cpu_s"] / cost["wall_s"] * 100, cost["events_per_s"]
        finally:
            subprocess.run(["umount", str(mnt)], capture_output=True)
    ratio = (sum(under_mb) / len(under_mb)) / (sum(alone) / len(alone))
    print(f"capture cost: dbench {sum(alone) / len(alone):.1f} MB/s alone, {sum(under_mb) / len(under_mb):.1f} MB/s under capture "
          f"(ratio {ratio:.3f}); the capture used {cpu:.1f} % of a CPU, {events:,.0f} events/s")
    return [Figure("replay", "dbench under capture / alone", ratio, ">= 0.90", f"{alone} vs {under_mb} MB/s"),
            Figure("replay", "capture CPU, % of one CPU", cpu, "", f"{events:,.0f} events/s", "%")]


def timed_error(work: Path, env: dict) -> list[Figure]:
    out = []
    with contextlib.ExitStack() as stack:
        if os.geteuid() == 0:
            mem = stack.enter_context(tmpfs("300m"))
            target = stack.enter_context(loop_device((mem or work) / "loop.img", 128))
            extra = ["--destroy-data", target]
            where = "a loop device over tmpfs"
        else:
            target = str(work / "t")
            os.mkdir(target)
            extra = []
            where = "a directory under /var/tmp"
        for iops in (1000, 10000):
            log = work / f"r{iops}.iolog"
            n = 2 * iops
            write_iolog(log, n, 1_000_000 // iops)
            label = f"r{iops}"
            subprocess.run([*storbench_argv(), "trace", "import", str(log), "--label", label], env=env, check=True, capture_output=True)
            _, _, res, _ = peak_rss([*storbench_argv(), "run", "--replay", label, "--replay-mode", "timed", "--target", target, *extra,
                                     "--repeat", "3", "--no-report", "--json"], env)  # fmt: skip
            drifts = []
            for rec in json.loads(res):
                fid = next(f for f in rec["findings"] if f["check"] == "replay-fidelity")
                m = re.search(r"took ([\d.]+) s \(([-+][\d.]+) %\)", fid["message"])
                drifts.append(float(m[2]) if m else float("nan"))
            drift = sorted(drifts)[len(drifts) // 2]
            print(f"timed replay at {iops:,} IOPS (2 s, 4 KiB reads) onto {where}: drift {drifts} %, median {drift:+.1f} %")
            out.append(Figure("replay", f"timed replay drift at {iops // 1000}k IOPS, %", drift, "<= 5" if iops == 1000 else "",
                              f"3 repetitions onto {where}: {drifts}", "%"))  # fmt: skip
    return out


def million(work: Path, env: dict) -> list[Figure]:
    log = work / "m.iolog"
    t = time.perf_counter()
    write_iolog(log, 1_000_000, 100, span_blocks=262144)
    print(f"a million requests: the iolog written in {time.perf_counter() - t:.1f} s ({log.stat().st_size / MB:.0f} MB)")
    rss_import, wall_import, _, _ = peak_rss([*storbench_argv(), "trace", "import", str(log), "--label", "m"], env)
    rss_show, wall_show, shown, _ = peak_rss([*storbench_argv(), "trace", "show", "m", "--json"], env)
    stored = json.loads(shown)["stored_bytes"] / 1_000_000
    target = work / "replay"
    target.mkdir()
    rss_replay, wall_replay, res, _ = peak_rss([*storbench_argv(), "run", "--replay", "m", "--replay-mode", "fast", "--target", str(target),
                                                "--repeat", "1", "--no-report", "--json", "--no-telemetry"], env)  # fmt: skip
    (rec,) = json.loads(res)
    ios = rec["jobs"][0]["read"]["total_ios"]
    print(f"a million requests: import {wall_import:.1f} s / {rss_import / MB:.0f} MB, show {wall_show:.1f} s / {rss_show / MB:.0f} MB, "
          f"fast replay {wall_replay:.1f} s / {rss_replay / MB:.0f} MB ({ios:,} reads replayed); stored {stored:.2f} bytes a request")
    return [
        Figure("replay", "1M requests: import peak RSS, MB", rss_import / MB, "<= 100", f"{wall_import:.1f} s", " MB"),
        Figure("replay", "1M requests: show peak RSS, MB", rss_show / MB, "<= 100", f"{wall_show:.1f} s", " MB"),
        Figure("replay", "1M requests: replay peak RSS, MB", rss_replay / MB, "<= 100", f"{wall_replay:.1f} s, {ios:,} reads", " MB"),
        Figure("replay", "1M requests: stored bytes a request", stored, "<= 16", "", " B"),
    ]


def main() -> int:
    args = arg_parser(__doc__.splitlines()[0]).parse_args()
    warm_bytecode()
    figures: list[Figure] = []
    with scratch_dir("storbench-bench-replay-") as work:
        env = bench_env(work / "r.sqlite")
        figures += million(work, env)
        figures += timed_error(work, env)
        figures += capture_cost(work, env)
    emit(figures, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
