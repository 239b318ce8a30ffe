"""Many hosts at once: what one ``storbench run --hosts FILE`` costs at 1, 16, 64 and 256 fio
servers, beside bare ``fio --client`` driving the same servers with storbench's own job files.

The servers: plain ``fio --server`` processes on 127.0.42.N (one port, a working directory each),
all on this machine, given one directory they all share as the target (``--target``: the clients
of one NFS export); each host's job is a random 4 KiB read of a 4 MiB file capped at 200 IOPS for 3 s
(20 s beyond 64 hosts) (``rate_iops``), so the servers' I/O stays small.  storbench runs it once
(``--repeat 1 --no-report``) with fio replaced by a shell wrapper that logs each call's start and
end and keeps a copy of its job files; then bare fio runs the workload's call again: the same job
files (per-second logs included), the same options (``--output-format=json+``), the same servers.
For context, bare fio also runs the job as a user would type it (one job file, plain JSON, no
logs).

Figures per host count: storbench's wall time, bare fio's with the same files, the difference and
where storbench's part goes (its own work before the workload's fio: start-up, plan, probe and
layout; the other fio calls: version, engine probe, cleanup; its own work after: the logs, the
merge, the findings, the store, the printing); storbench's own CPU seconds a host (its own
process, children excluded: read by a wrapper from ``getrusage(RUSAGE_SELF)`` when it exits), in
all divided by the hosts and what each host beyond the smallest count added (its fixed start, the
store's modules above all, is ~0.4 s of CPU at any count), and its peak resident memory a host.
Every count also checks the shared directory: every host stored, nothing left in it.  All servers share this machine's cores: every fio job a server
starts calibrates its clock (~0.1 s of CPU), so bare fio's own time grows with the host count
here, as it would not across real machines.

    .venv/bin/python benchmarks/hosts.py [--counts 1 16 64 256] [--json FILE]
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Figure, arg_parser, bench_env, emit, run_timed, scratch_dir, storbench_argv, warm_bytecode


def runtime_s(count: int) -> int:
    """3 s, and 20 s beyond 64 hosts: the servers' job starts spread over more seconds than 3 there
    (each calibrates fio's clock on these two cores), and the common window needs a second they
    all ran."""
    return 3 if count <= 64 else 20


def job(count: int) -> str:
    return f"rw=randread\nbs=4k\nsize=4m\nruntime={runtime_s(count)}\ntime_based=1\nrate_iops=200\n"


def suite(count: int) -> str:
    return ("[workload.bench-hosts]\ndescription = \"benchmarks/hosts.py: 4 KiB random reads at 200 IOPS\"\n[workload.bench-hosts.fio]\n"
            + "".join(f'{k} = "{v}"\n' for k, v in (line.split("=", 1) for line in job(count).splitlines())))  # fmt: skip


#: storbench run inside a wrapper that writes its own CPU seconds and peak memory when it exits
WRAPPER = """
import atexit, json, os, resource, runpy, sys
def _own():
    u = resource.getrusage(resource.RUSAGE_SELF)
    with open(os.environ["STORBENCH_BENCH_RUSAGE"], "w") as fh:
        json.dump({"cpu_s": u.ru_utime + u.ru_stime, "maxrss_kib": u.ru_maxrss}, fh)
atexit.register(_own)
sys.argv = ["storbench", *sys.argv[1:]]
runpy.run_module("storbench", run_name="__main__")
"""


def _address(i: int) -> str:
    return f"127.0.42.{i + 1}" if i < 254 else f"127.0.43.{i - 253}"


@contextlib.contextmanager
def servers(work: Path, count: int, port: int) -> Iterator[list[str]]:
    procs: list[subprocess.Popen] = []
    try:
        for i in range(count):
            d = work / f"s{i}"
            d.mkdir(exist_ok=True)
            procs.append(subprocess.Popen(["fio", f"--server=ip:{_address(i)},{port}"], cwd=d, start_new_session=True,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))  # fmt: skip
        deadline = time.monotonic() + 60
        for i in range(count):
            while True:
                with contextlib.closing(socket.socket()) as s:
                    s.settimeout(0.5)
                    if s.connect_ex((_address(i), port)) == 0:
                        break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"fio server {_address(i)}:{port} did not listen")
                time.sleep(0.02)
        yield [f"{_address(i)}:{port}" for i in range(count)]
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
        for p in procs:
            p.wait(timeout=30)


#: fio, as storbench calls it during the bench: each call's start, end, exit status and argv
#: appended to $STORBENCH_BENCH_FIO_LOG, and the job files it is given copied to a directory of
#: the call's own under $STORBENCH_BENCH_KEEP, so that bare fio can run the very same files
FIO_WRAPPER = """#!/bin/sh
n=$(date +%s.%N)
keep="$STORBENCH_BENCH_KEEP/$n"
mkdir -p "$keep"
files=""
for a; do case "$a" in *.fio) files="$files $a" ;; esac; done
[ -z "$files" ] || cp $files "$keep/"
fio "$@"
rc=$?
printf '%s %s %s %s\\n' "$n" "$(date +%s.%N)" "$rc" "$*" >> "$STORBENCH_BENCH_FIO_LOG"
exit $rc
"""


@dataclass(frozen=True)
class FioCall:
    start_s: float  #: epoch seconds
    end_s: float
    argv: tuple[str, ...]
    kept: Path  #: the copies of its job files

    @property
    def is_workload(self) -> bool:
        """The workload's own client run (job-N.fio, storbench's per-host job files)."""
        return any(Path(a).name.startswith("job-") and a.endswith(".fio") for a in self.argv)


def bare_same_files(work: Path, call: FioCall) -> float:
    """Bare fio given storbench's own job files, options and output format (its logs included)."""
    cwd = work / "bare-same"
    shutil.rmtree(cwd, ignore_errors=True)
    cwd.mkdir()
    argv = ["fio"] + [str(call.kept / Path(a).name) if a.endswith(".fio") else a for a in call.argv]
    return run_timed(argv, cwd=cwd).check().wall_s


def bare_plain(work: Path, hosts: list[str]) -> float:
    """Bare fio as a user would type it: the job alone, no per-second logs, plain JSON."""
    path = work / "bare.fio"
    path.write_text("[bare]\n" + job(len(hosts)) + "filename=./bare.testfile\nunlink=1\n")
    argv = ["fio", "--output-format=json"]
    for h in hosts:
        address, port = h.rsplit(":", 1)
        argv += [f"--client=ip:{address},{port}", str(path)]
    return run_timed(argv, cwd=work).check().wall_s


@dataclass(frozen=True)
class Through:
    wall_s: float
    cpu_s: float  #: storbench's own process, children excluded
    peak_kib: int
    stored: int  #: host results stored
    together_s: float | None  #: seconds every host ran together
    calls: tuple[FioCall, ...]  #: every fio it started, in order
    start_s: float  #: epoch seconds at its exec
    left: tuple[str, ...]  #: what it left in the directory the hosts share


def through_storbench(work: Path, hosts: list[str], env: dict) -> Through:
    hosts_file = work / "hosts.txt"
    hosts_file.write_text("".join(f"{h}\n" for h in hosts))
    suite_file = work / "hosts.toml"
    suite_file.write_text(suite(len(hosts)))
    usage = work / "rusage.json"
    wrapper = work / "wrapper.py"
    wrapper.write_text(WRAPPER)
    fio = work / "fio-wrapper.sh"
    fio.write_text(FIO_WRAPPER)
    fio.chmod(0o755)
    log, keep = work / "fio-calls.log", work / "kept"
    log.unlink(missing_ok=True)
    shutil.rmtree(keep, ignore_errors=True)
    keep.mkdir()
    shared = work / "shared"
    shutil.rmtree(shared, ignore_errors=True)
    shared.mkdir()
    argv = [sys.executable, str(wrapper), "run", "--hosts", str(hosts_file), "--target", str(shared), "--suite-file", str(suite_file),
            "--workload", "bench-hosts", "--repeat", "1", "--no-report", "--json"]  # fmt: skip
    start = time.time()
    t = run_timed(argv, env={**env, "STORBENCH_BENCH_RUSAGE": str(usage), "STORBENCH_FIO": str(fio), "STORBENCH_BENCH_FIO_LOG": str(log),
                             "STORBENCH_BENCH_KEEP": str(keep)}, cwd=work).check()  # fmt: skip
    own = json.loads(usage.read_text())
    left = sorted(p.name for p in shared.iterdir())
    records = json.loads(t.stdout)
    calls = []
    for line in log.read_text().splitlines():
        begin, end, _rc, *rest = line.split()
        calls.append(FioCall(float(begin), float(end), tuple(rest), keep / begin))
    window = next((r.get("window") for r in records if r.get("host") == "all"), None)
    return Through(wall_s=t.wall_s, cpu_s=own["cpu_s"], peak_kib=own["maxrss_kib"],
                   stored=sum(1 for r in records if r.get("host") not in (None, "all")),
                   together_s=window["seconds"] if window else None, calls=tuple(sorted(calls, key=lambda c: c.start_s)), start_s=start,
                   left=tuple(left))  # fmt: skip


def phases(t: Through) -> dict[str, float]:
    """Where storbench's wall time went: its own work before the workload's fio (start-up, plan,
    the hosts' probe and layout, counted without the fio calls), the other fio calls (version,
    probes, cleanup), the workload's fio, and its own work after it (logs, merge, findings,
    store, print)."""
    run = next(c for c in t.calls if c.is_workload)
    others = sum(c.end_s - c.start_s for c in t.calls if c is not run)
    before_fio = sum(c.end_s - c.start_s for c in t.calls if c.end_s <= run.start_s)
    return {"own work before": run.start_s - t.start_s - before_fio, "other fio calls": others, "workload fio": run.end_s - run.start_s,
            "own work after": t.start_s + t.wall_s - run.end_s - (others - before_fio)}  # fmt: skip


def main() -> int:
    p = arg_parser(__doc__.splitlines()[0])
    p.add_argument("--counts", type=int, nargs="+", default=[1, 16, 64, 256])
    p.add_argument("--calls", action="store_true", help="also list every fio call storbench made, with its time")
    args = p.parse_args()
    warm_bytecode()
    assert storbench_argv()  # the venv's storbench: the wrapper runs its module with this Python
    figures: list[Figure] = []
    with scratch_dir("storbench-bench-hosts-") as work:
        env = bench_env(work / "hosts.sqlite")
        # the store made (and its schema migrated) before anything is measured, as a user's is
        run_timed([*storbench_argv(), "list"], env=env, cwd=work).check()
        with contextlib.closing(socket.socket()) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        base: tuple[int, float, int] | None = None  # (hosts, own CPU s, peak KiB) of the smallest count
        for count in sorted(args.counts):
            with servers(work, count, port) as hosts:
                plain_wall = bare_plain(work, hosts)
                t = through_storbench(work, hosts, env)
                run_call = next(c for c in t.calls if c.is_workload)
                same_wall = bare_same_files(work, run_call)
            base = base or (count, t.cpu_s, t.peak_kib)
            more = count - base[0]
            runtime = runtime_s(count)
            where = phases(t)
            said = ", ".join(f"{k} {v:.2f} s" for k, v in where.items())
            print(f"  {count} hosts, {runtime} s: storbench {t.wall_s:.1f} s ({said}; own CPU {t.cpu_s:.2f} s, peak {t.peak_kib / 1024:.0f} MiB, "
                  f"{t.stored} host results, all ran together {t.together_s if t.together_s is not None else '-'} s, "
                  f"{len(t.left)} files left in the shared directory); "
                  f"bare fio with storbench's job files {same_wall:.1f} s, with a plain job {plain_wall:.1f} s", flush=True)  # fmt: skip
            if args.calls:
                for c in t.calls:
                    shown = " ".join(a for a in c.argv if not a.startswith("--client="))
                    print(f"    {c.start_s - t.start_s:6.2f} s +{c.end_s - c.start_s:5.2f} s  fio {shown[:160]}")
            at = f"at {count} host{'s' if count > 1 else ''}"
            figures += [
                Figure("hosts", f"wall / runtime {at}", t.wall_s / runtime, "",
                       detail=f"storbench {t.wall_s:.1f} s, bare fio {same_wall:.1f} s with the same job files "
                              f"({plain_wall:.1f} s with a plain job, no logs), runtime {runtime} s; "
                              f"{t.stored} of {count} host results stored; every host ran together "
                              f"{'for ' + format(t.together_s, '.1f') + ' s' if t.together_s else 'in no whole second'}"),
                Figure("hosts", f"wall beyond bare fio's with the same job files {at}", t.wall_s - same_wall, "<= 1" if count == 64 else "",
                       unit=" s", detail=said),
                Figure("hosts", f"own CPU per host {at}", t.cpu_s / count * 1000, "<= 10" if count >= 64 else "", unit=" ms",
                       detail=f"{t.cpu_s:.2f} s in all"),
                Figure("hosts", f"hosts lost sharing one directory {at}", count - t.stored, "<= 0",
                       detail=f"{t.stored} of {count} host results stored; left in the directory: {', '.join(t.left[:5]) or 'nothing'}"),
                Figure("hosts", f"files left in the shared directory {at}", len(t.left), "<= 0"),
            ]  # fmt: skip
            if more > 0:  # what each host beyond the smallest run adds to storbench's CPU and peak memory
                figures.append(Figure("hosts", f"own CPU per added host {at}", (t.cpu_s - base[1]) / more * 1000, "<= 10" if count >= 64 else "",
                                      unit=" ms", detail=f"{t.cpu_s:.2f} s against {base[1]:.2f} s at {base[0]}"))  # fmt: skip
                figures.append(Figure("hosts", f"peak memory per added host {at}", (t.peak_kib - base[2]) / 1024 / more,
                                      "<= 1" if count >= 64 else "", unit=" MiB",
                                      detail=f"peak {t.peak_kib / 1024:.0f} MiB against {base[2] / 1024:.0f} MiB at {base[0]}"))  # fmt: skip
    emit(figures, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
