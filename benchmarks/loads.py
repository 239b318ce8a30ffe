"""storbench's own cost around an application load: pgbench through ``storbench run`` against the
same pgbench run by hand on the same kind of private cluster, alternately.

The load: pgbench TPC-B-like, 2 clients, 2 threads, scale 4, 5 s, PostgreSQL's defaults, in a
private cluster (initdb, Unix socket only) in a scratch directory on the local disk.  The bare
side makes that cluster with storbench's own :class:`storbench.run.loads.PostgresCluster` (the
same settings), loads it with ``pgbench -i`` and runs the measured pgbench with the same options;
storbench runs a suite file of that workload (``--no-report``, default telemetry: the device
sampler, the storage description, the server's settings read back, the load findings).

Figures: the median over pairs of tps(storbench) / tps(bare); and storbench's own seconds around
the load, the median over pairs of wall(storbench run) - wall(the bare side's cluster, load and
run), both measured from outside.

    .venv/bin/python benchmarks/loads.py [--pairs 3] [--json FILE]
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Figure, arg_parser, bench_env, emit, median, run_timed, scratch_dir, storbench_argv, warm_bytecode

RAW = {"clients": "2", "threads": "2", "scale": "4", "runtime": "5"}
SUITE = """
[workload.bench-pgbench]
description = "benchmarks/loads.py: pgbench TPC-B-like, 2 clients, 2 threads, scale 4, 5 s"
tool = "pgbench"
pgbench = { clients = 2, threads = 2, scale = 4, runtime = 5 }
"""
_TPS = re.compile(r"^tps = ([\d.]+) \(without initial connection time\)", re.M)


def bare(parent: Path) -> tuple[float, float]:
    """(tps, wall seconds) of the load run by hand: cluster, load, run, stop."""
    from storbench.loads import check_options, pgbench
    from storbench.run.loads import PostgresCluster

    options = dict(check_options(pgbench.TOOL, {k: int(v) for k, v in RAW.items()}))
    directory = parent / f"bare-{os.getpid()}"
    directory.mkdir(mode=0o755)
    started = time.perf_counter()
    cluster = PostgresCluster(str(directory), options)
    try:
        cluster.start()
        steps = pgbench.steps(options, str(directory))
        for argv in steps.prepare:
            run_timed(list(argv), cwd=directory).check()
        out = run_timed(list(steps.measure), cwd=directory).check().stdout
    finally:
        cluster.stop()
        shutil.rmtree(directory, ignore_errors=True)
    wall = time.perf_counter() - started
    m = _TPS.search(out)
    if m is None:
        raise RuntimeError(f"no tps line in pgbench's output: {out[-300:]}")
    return float(m.group(1)), wall


def through_storbench(parent: Path, suite: Path, env: dict) -> tuple[float, float]:
    t = run_timed([*storbench_argv(), "run", "--suite-file", str(suite), "--workload", "bench-pgbench", "--target", str(parent),
                   "--no-report", "--json"], env=env, cwd=parent).check()  # fmt: skip
    [record] = json.loads(t.stdout)
    return float(next(m["value"] for m in record["measures"] if m["unit"] == "tps")), t.wall_s


def main() -> int:
    p = arg_parser(__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=3)
    args = p.parse_args()
    if shutil.which("pgbench") is None:
        emit([Figure("loads", "pgbench tps storbench/bare", None, ">= 0.9", detail="pgbench is not installed (postgresql)")], args.json)
        return 0
    warm_bytecode()
    ratios, extra, shown = [], [], []
    with scratch_dir("storbench-bench-loads-") as work:
        work.chmod(0o755)  # PostgreSQL runs as its own user when this runs as root
        suite = work / "loads.toml"
        suite.write_text(SUITE)
        env = bench_env(work / "loads.sqlite")
        for i in range(args.pairs):
            if i % 2 == 0:
                b_tps, b_wall = bare(work)
                s_tps, s_wall = through_storbench(work, suite, env)
            else:
                s_tps, s_wall = through_storbench(work, suite, env)
                b_tps, b_wall = bare(work)
            ratios.append(s_tps / b_tps)
            extra.append(s_wall - b_wall)
            shown.append(f"{s_tps:,.0f}/{b_tps:,.0f} tps, {s_wall:.1f}/{b_wall:.1f} s")
            print(f"  pair {i + 1}: storbench {s_tps:,.0f} tps in {s_wall:.1f} s, bare {b_tps:,.0f} tps in {b_wall:.1f} s", flush=True)
    emit([
        Figure("loads", f"pgbench tps storbench/bare (median of {len(ratios)} pairs)", median(ratios), ">= 0.9",
               detail="; ".join(shown)),
        Figure("loads", "storbench's own seconds around a pgbench run (median)", median(extra), "<= 3", unit=" s",
               detail=", ".join(f"{x:.2f}" for x in extra)),
    ], args.json)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
