"""Overhead of storbench over bare fio: the IOPS of one job run both ways, alternately.

The job: 4 KiB random reads, iodepth 32, libaio, direct=1, a 256 MiB file, 3 s
time-based.  Bare fio gets it as an argument list; ``storbench run`` gets it as a
suite file (same options, same file, ``--no-report --keep-files``) and runs it with
its default telemetry: interval logs (write_bw_log/write_iops_log, 1000 ms),
/proc/diskstats sampling, the storage description, fio's status lines read live
(progress bars are off: stderr is not a terminal).

Pairs alternate which side goes first.  The figure is the median over pairs of
IOPS(storbench) / IOPS(bare fio), on a file on the local disk and on a tmpfs file
(fio is CPU-bound there, so anything storbench does on the CPU shows).

    .venv/bin/python benchmarks/overhead.py [--pairs 5] [--json FILE]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    Figure,
    arg_parser,
    bench_env,
    emit,
    median,
    run_timed,
    scratch_dir,
    storbench_argv,
    tmpfs,
    warm_bytecode,
)

WORKLOAD = "rnd4k-q32"
OPTIONS = {
    "ioengine": "libaio",
    "direct": "1",
    "rw": "randread",
    "bs": "4k",
    "iodepth": "32",
    "size": "256m",
    "runtime": "3",
    "time_based": "1",
}
TEST_FILE = "storbench.testfile"  # where storbench puts a directory target's file

SUITE = f"""
[suite.overhead]
description = "benchmarks/overhead.py: the job bare fio runs too"
workloads = ["{WORKLOAD}"]

[workload.{WORKLOAD}]
description = "4 KiB random reads, iodepth 32, libaio, direct, 256 MiB, 3 s"
fio = {{ {", ".join(f'{k} = "{v}"' for k, v in OPTIONS.items())} }}
"""


def bare_fio(directory: Path, out: Path) -> float:
    argv = ["fio", f"--name={WORKLOAD}", *(f"--{k}={v}" for k, v in OPTIONS.items()),
            f"--filename={directory / TEST_FILE}", "--output-format=json", f"--output={out}"]
    run_timed(argv, cwd=directory).check()
    doc = json.loads(out.read_text())
    return float(doc["jobs"][0]["read"]["iops"])


def storbench(directory: Path, suite_file: Path, env: dict, work: Path) -> float:
    argv = [*storbench_argv(), "run", "--suite-file", str(suite_file), "--suite", "overhead",
            "--target", str(directory), "--keep-files", "--no-report", "--json"]
    t = run_timed(argv, env=env, cwd=work).check()
    records = json.loads(t.stdout)
    return float(records[0]["jobs"][0]["read"]["iops"])


def measure(where: str, directory: Path, pairs: int, work: Path) -> tuple[list[float], list[float], list[float]]:
    suite_file = work / "overhead.toml"
    suite_file.write_text(SUITE)
    env = bench_env(work / "overhead.sqlite")
    out = work / "bare.json"
    bare_fio(directory, out)  # lays out the 256 MiB file once; not counted
    ratios, bare_all, sb_all = [], [], []
    for i in range(pairs):
        if i % 2 == 0:
            b = bare_fio(directory, out)
            s = storbench(directory, suite_file, env, work)
        else:
            s = storbench(directory, suite_file, env, work)
            b = bare_fio(directory, out)
        ratios.append(s / b)
        bare_all.append(b)
        sb_all.append(s)
        print(f"  {where} pair {i + 1}: bare fio {b:,.0f} IOPS, storbench {s:,.0f} IOPS, ratio {s / b:.4f}", flush=True)
    (directory / TEST_FILE).unlink(missing_ok=True)
    return ratios, bare_all, sb_all


def figure(where: str, target: str, ratios, bare, sb) -> Figure:
    return Figure(
        "overhead",
        f"IOPS storbench/bare fio, {where} (median of {len(ratios)} pairs)",
        median(ratios),
        target,
        detail=f"ratios {', '.join(f'{r:.3f}' for r in ratios)}; median IOPS bare {median(bare):,.0f}, storbench {median(sb):,.0f}",
    )


def main() -> int:
    p = arg_parser(__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--disk-dir", default=None, help="directory on the local disk (default: a scratch dir in /var/tmp)")
    args = p.parse_args()
    warm_bytecode()
    figures = []
    with scratch_dir("storbench-bench-overhead-") as work:
        disk = Path(args.disk_dir) if args.disk_dir else work / "disk"
        disk.mkdir(exist_ok=True)
        print(f"disk: {disk}", flush=True)
        r, b, s = measure("disk", disk, args.pairs, work)
        figures.append(figure("local disk", ">= 0.98", r, b, s))
        with tmpfs("320m") as mnt:
            if mnt is None:
                figures.append(Figure("overhead", "IOPS storbench/bare fio, tmpfs", None, ">= 0.95", "tmpfs could not be mounted (needs root)"))
            else:
                print(f"tmpfs: {mnt}", flush=True)
                r, b, s = measure("tmpfs", mnt, args.pairs, work)
                figures.append(figure("tmpfs, CPU-bound", ">= 0.95", r, b, s))
    emit(figures, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
