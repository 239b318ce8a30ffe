"""Wall-time efficiency: how long ``storbench run`` takes for the time fio was asked to run.

For the ``quick`` (8 workloads) and ``share`` (6 workloads) suites at
``--size 64m --runtime 2``: the wall time of ``storbench run`` (a child process,
from start to exit, ``--no-report``, default telemetry) divided by the sum of the
workloads' time-based runtimes (2 s each).  Reference: bench-fio (fio-plot's
runner) took 18.9 s for 8 such runs on a 64 MiB file, a ratio of 1.18.

Side by side, in the same run (alternating, ``--rounds`` times each, medians), bare
fio runs the very same job files one after the other (as ``storbench run --dry-run``
prints them: same options, same probed I/O engine, same test file laid out once by
the first job): its ratio is the floor set by fio itself on this machine, and
storbench's own cost is the difference.

    .venv/bin/python benchmarks/walltime.py [--suites quick share] [--rounds 2] [--src DIR] [--json FILE]

For reference, bench-fio itself (from benchmarks/.venv-fioplot, which logs.py
creates) runs 8 time-based 2-second runs on a 64 MiB file in the same run.

``--src DIR`` runs storbench from another source tree (PYTHONPATH=DIR), e.g. a
``git archive`` of an older commit, for before/after figures.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    BENCH_DIR,
    Figure,
    arg_parser,
    bench_env,
    emit,
    median,
    run_timed,
    scratch_dir,
    storbench_argv,
    warm_bytecode,
)

SIZE, RUNTIME_S = "64m", 2


def job_files(suite: str, target: Path, env: dict, work: Path) -> list[str]:
    t = run_timed([*storbench_argv(), "run", "--suite", suite, "--size", SIZE, "--runtime", str(RUNTIME_S),
                   "--target", str(target), "--dry-run"], env=env, cwd=work).check()
    jobs = re.split(r"^# workload .*$\n", t.stdout, flags=re.M)
    return [j.strip() + "\n" for j in jobs if j.strip()]


def bare_fio(jobs: list[str], target: Path, work: Path) -> float:
    """Every job file through fio, one after the other; the test file removed at the end."""
    logs = work / "bare-logs"
    logs.mkdir(exist_ok=True)
    paths = []
    for i, text in enumerate(jobs):
        p = work / f"job{i}.fio"
        p.write_text(text)
        paths.append(p)
    import time

    start = time.perf_counter()
    for p in paths:
        run_timed(["fio", "--output-format=json", f"--output={work / 'bare.json'}", str(p)], cwd=logs).check()
    (target / "storbench.testfile").unlink(missing_ok=True)
    return time.perf_counter() - start


def bench_fio(target: Path, work: Path) -> float | None:
    """bench-fio (fio-plot's runner, from benchmarks/.venv-fioplot if it is there): 8 time-based
    2-second runs (read, write, randread, randwrite x iodepth 1, 8; libaio, direct) on a 64 MiB
    file.  It refuses a missing file, so the file is laid out before the clock starts."""
    exe = BENCH_DIR / ".venv-fioplot" / "bin" / "bench-fio"
    if not exe.exists():
        return None
    testfile = target / "bench-fio.testfile"
    run_timed(["fio", "--name=layout", f"--filename={testfile}", "--size=64m", "--rw=write", "--bs=1m",
               "--output=/dev/null"]).check()
    try:
        t = run_timed([str(exe), "-d", str(testfile), "-t", "file", "-s", "64M", "-o", str(work / "bench-fio-out"),
                       "-m", "read", "write", "randread", "randwrite", "--iodepth", "1", "8", "--numjobs", "1",
                       "--runtime", str(RUNTIME_S), "--time-based", "--direct", "1", "-e", "libaio", "--destructive"],
                      cwd=work)
    finally:
        testfile.unlink(missing_ok=True)
        Path("/tmp", f"{testfile.name}-tmpjobfile.fio").unlink(missing_ok=True)  # bench-fio's job file
    return t.wall_s if t.returncode == 0 else None


def storbench(suite: str, target: Path, env: dict, work: Path) -> float:
    t = run_timed([*storbench_argv(), "run", "--suite", suite, "--size", SIZE, "--runtime", str(RUNTIME_S),
                   "--target", str(target), "--no-report", "--repeat", "1"], env=env, cwd=work).check()
    return t.wall_s


#: the own-time figure (issue 24): 8 workloads of 1 s on one laid-out file
OWN_RUNTIME_S, OWN_BRACKETS = 1, 3
#: start-up samples: exec to the first workload's fio exec varies by 50-70 ms from run to run on a
#: 2-core machine (a median of 3 moved by 40 ms between two runs of one tree; session 16)
STARTUP_SAMPLES = 11

#: a fio that notes when it is started with a job file (bash's clock: no fork), then is fio
_EXEC_LOGGER = """#!/bin/bash
case "$*" in *.fio) echo "$EPOCHREALTIME" >> "$STORBENCH_BENCH_EXEC_LOG";; esac
exec {fio} "$@"
"""


def startup_times(argv: list[str], env: dict, work: Path, samples: int = STARTUP_SAMPLES) -> list[float]:
    """From the ``storbench run`` exec to fio's exec for the first workload, ``samples`` times: a
    fio wrapper writes the time it was started with a job file (bash's clock, no fork; the
    wrapper's own bash start, ~3 ms, counts against storbench), and once it has, storbench is
    stopped (SIGTERM: it stops its fio, marks the run incomplete and exits 130) rather than left
    to run its 8 workloads: only its start is measured, so eleven samples cost seconds."""
    import shutil
    import signal
    import time

    logger = work / "fio-exec-logger"
    logger.write_text(_EXEC_LOGGER.format(fio=shutil.which("fio")))
    logger.chmod(0o755)
    log = work / "exec.log"
    startups = []
    for _ in range(samples):
        log.write_text("")
        env_s = {**env, "STORBENCH_FIO": str(logger), "STORBENCH_BENCH_EXEC_LOG": str(log)}
        t0 = time.time()
        child = subprocess.Popen(argv, env=env_s, cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + 60
        while not log.read_text().strip() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        started = log.read_text().split()
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
        try:
            _, err = child.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            _, err = child.communicate()
        if not started:
            raise SystemExit(f"walltime: storbench started no fio ({child.returncode}): {err.decode(errors='replace')[-500:]}")
        startups.append(float(started[0]) - t0)
    return startups


def own_time(target: Path, env: dict, work: Path, brackets: int = OWN_BRACKETS) -> tuple[list[float], list[float], list[float]]:
    """storbench's own time per workload, start-up included, in brackets of bare fio /
    storbench / bare fio (``quick``, 8 x 1 s, the test file laid out once beforehand and kept):
    (storbench - the mean of the bare fio runs either side) / 8, once per bracket.  Then the
    start-up (:func:`startup_times`).  Returns (own per workload, start-up, bare fio wall) lists."""
    import time

    argv = [*storbench_argv(), "run", "--suite", "quick", "--size", SIZE, "--runtime", str(OWN_RUNTIME_S),
            "--target", str(target), "--no-report", "--repeat", "1", "--keep-files"]
    t = run_timed([*argv, "--dry-run"], env=env, cwd=work).check()
    jobs = [j.strip() + "\n" for j in re.split(r"^# workload .*$\n", t.stdout, flags=re.M) if j.strip()]
    for p in target.iterdir():
        p.unlink()
    run_timed(["fio", "--output=/dev/null", str(_write(work / "layout.fio", jobs[0]))], cwd=work).check()  # lays the file out

    def bare() -> float:
        start = time.perf_counter()
        for i, text in enumerate(jobs):
            run_timed(["fio", "--output-format=json", f"--output={work / 'own-bare.json'}",
                       str(_write(work / f"own{i}.fio", text))], cwd=work).check()
        return time.perf_counter() - start

    own, bares = [], []
    for _ in range(brackets):
        before = bare()
        sb = run_timed(argv, env=env, cwd=work).check().wall_s
        after = bare()
        bares += [before, after]
        own.append((sb - (before + after) / 2) / len(jobs))
    startups = startup_times(argv, env, work)
    for p in target.iterdir():
        p.unlink()
    return own, startups, bares


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


#: a short and a long curve: their difference is what each added point costs, start-up aside
CURVE_SHORT, CURVE_LONG = "iodepth=1,2", "iodepth=1,2,4,8,16,32,64,128"


def curve_cost(target: Path, env: dict, work: Path, steps: str) -> tuple[float, float, int]:
    """``storbench curve`` of 1-second steps against bare fio running the job file of each
    step (read back from the store) one after the other: (curve wall, bare wall, steps)."""
    import sqlite3

    t = run_timed([*storbench_argv(), "curve", "--target", str(target), "--size", SIZE, "--runtime", "1s",
                   "--load", steps, "--label", "bench-curve", "--no-report"], env=env, cwd=work).check()
    db = sqlite3.connect(env["STORBENCH_DB"])
    try:
        (run_id,) = db.execute("SELECT max(id) FROM runs WHERE label = 'bench-curve'").fetchone()
        jobs = [row[0] for row in db.execute("SELECT job_text FROM results WHERE run_id = ? ORDER BY id", (run_id,))]
    finally:
        db.close()
    bare = bare_fio(jobs, target, work)
    return t.wall_s, bare, len(jobs)


def main() -> int:
    p = arg_parser(__doc__.splitlines()[0])
    p.add_argument("--suites", nargs="*", default=["quick", "share"], help="the wall-time suites (none: the own-time brackets only)")
    p.add_argument("--rounds", type=int, default=2, help="runs of each side per suite, alternating (median taken)")
    p.add_argument("--src", help="run storbench from this source tree instead (PYTHONPATH)")
    p.add_argument("--no-bench-fio", action="store_true", help="do not run bench-fio for reference")
    p.add_argument("--no-own-time", action="store_true", help="skip the own-time brackets (quick, 8 x 1 s)")
    args = p.parse_args()
    warm_bytecode()
    if args.src:
        warm_bytecode(args.src)
    figures = []
    with scratch_dir("storbench-bench-walltime-") as work:
        env = bench_env(work / "walltime.sqlite")
        if args.src:
            env["PYTHONPATH"] = str(Path(args.src).resolve())
            env["STORBENCH_DB"] = str(work / "walltime-src.sqlite")
        target = work / "target"
        target.mkdir()
        if not args.no_own_time:
            own, startups, bares = own_time(target, env, work)
            print(f"  own time, quick 8 x {OWN_RUNTIME_S} s in {len(own)} brackets: per workload "
                  f"{', '.join(f'{x:.3f}' for x in own)} s (bare fio {', '.join(f'{x:.2f}' for x in bares)} s); "
                  f"start-up to the first workload's fio {', '.join(f'{x:.3f}' for x in startups)} s", flush=True)
            figures.append(Figure(
                "walltime", f"storbench's own time per workload, start-up included (quick, 8 x {OWN_RUNTIME_S} s)",
                median(own), "<= 0.05", unit=" s",
                detail=f"median of {len(own)} brackets bare fio / storbench / bare fio, test file laid out once: "
                       + ", ".join(f"{x:.3f}" for x in own),
            ))
            figures.append(Figure(
                "walltime", "start-up: storbench run's exec to the first workload's fio exec", median(startups), "<= 0.15",
                unit=" s", detail=f"median of {len(startups)}: " + ", ".join(f"{x:.3f}" for x in startups),
            ))
        for suite in args.suites:
            jobs = job_files(suite, target, env, work)
            runtime = RUNTIME_S * len(jobs)
            bares, sbs = [], []
            for r in range(args.rounds):  # bare, storbench, storbench, bare, ...
                first, second = (bare_fio, storbench) if r % 2 == 0 else (storbench, bare_fio)
                for side in (first, second):
                    if side is bare_fio:
                        bares.append(bare_fio(jobs, target, work))
                    else:
                        sbs.append(storbench(suite, target, env, work))
            bare, sb = median(bares), median(sbs)
            print(f"  {suite}: {len(jobs)} workloads x {RUNTIME_S} s = {runtime} s; bare fio "
                  f"{', '.join(f'{x:.2f}' for x in bares)} s, storbench {', '.join(f'{x:.2f}' for x in sbs)} s", flush=True)
            figures.append(Figure(
                "walltime", f"{suite}: storbench wall / runtime ({len(jobs)} x {RUNTIME_S} s)", sb / runtime, "<= 1.10",
                detail=f"storbench {sb:.2f} s (median of {len(sbs)}) for {runtime} s of runtime; bench-fio reference 1.18",
            ))
            figures.append(Figure(
                "walltime", f"{suite}: bare fio wall / runtime (same job files)", bare / runtime, "",
                detail=f"bare fio {bare:.2f} s (median of {len(bares)}): fio's own start-up and finish per workload, the floor",
            ))
            figures.append(Figure(
                "walltime", f"{suite}: storbench's own time per workload", (sb - bare) / len(jobs), "<= 0.05",
                unit=" s", detail=f"(storbench - bare fio) / {len(jobs)} workloads",
            ))
            if suite == "quick":
                short = [curve_cost(target, env, work, CURVE_SHORT) for _ in range(args.rounds)]
                long = [curve_cost(target, env, work, CURVE_LONG) for _ in range(args.rounds)]
                added = long[0][2] - short[0][2]
                own = [(lw - lb) - (sw - sb_) for (lw, lb, _), (sw, sb_, _) in zip(long, short)]
                per_point = median(own) / added
                print(f"  curve: {short[0][2]} steps {', '.join(f'{w:.2f}/{b:.2f}' for w, b, _ in short)} s, "
                      f"{long[0][2]} steps {', '.join(f'{w:.2f}/{b:.2f}' for w, b, _ in long)} s (storbench/bare fio)", flush=True)
                figures.append(Figure(
                    "walltime", "curve: storbench's own time per added point (1 s steps)", per_point, "<= 0.05", unit=" s",
                    detail=f"((curve - bare fio) of {long[0][2]} steps - the same of {short[0][2]}) / {added}: start-up aside",
                ))
            if suite == "quick" and not args.no_bench_fio:
                bf = bench_fio(target, work)
                if bf is not None:
                    print(f"  bench-fio, 8 x {RUNTIME_S} s: {bf:.2f} s", flush=True)
                    figures.append(Figure(
                        "walltime", f"bench-fio wall / runtime (8 x {RUNTIME_S} s, 64 MiB file)", bf / 16, "",
                        detail=f"bench-fio {bf:.2f} s, measured here in the same run (the issue's reference: 18.9 s = 1.18)",
                    ))
    emit(figures, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
