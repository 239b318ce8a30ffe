"""Many hosts at once: what one ``storbench run --hosts FILE`` costs at 1, 8, 32, 64, 128 and 256
fio servers, beside bare ``fio --client`` driving the same servers with the same job.

The servers: plain ``fio --server`` processes on 127.0.42.N (one port, a directory each), all on
this machine; each host's job is a random 4 KiB read of a 4 MiB file capped at 200 IOPS for 3 s (20 s beyond
64 hosts)
(``rate_iops``), so the servers' I/O stays small.  storbench runs it once (``--repeat 1
--no-report``); bare fio runs the same job text through one client (``--output-format=json``).

Figures per host count: storbench's wall time over the runtime asked for, bare fio's, storbench's
own CPU seconds a host (its own process, threads included, children excluded: read by a wrapper
from ``getrusage(RUSAGE_SELF)`` when it exits) and its peak resident memory a host.  All servers
share this machine's cores: every fio job a server starts calibrates its clock (~0.1 s of CPU), so
bare fio's own time grows with the host count here, as it would not across real machines; the
figure to read for storbench is the wall time beyond bare fio's and its own CPU and memory.

    .venv/bin/python benchmarks/hosts.py [--counts 1 8 32 64 128 256] [--json FILE]
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
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


def bare(work: Path, hosts: list[str]) -> float:
    path = work / "bare.fio"
    path.write_text("[bare]\n" + job(len(hosts)) + "filename=./bare.testfile\nunlink=1\n")
    argv = ["fio", "--output-format=json"]
    for h in hosts:
        address, port = h.rsplit(":", 1)
        argv += [f"--client=ip:{address},{port}", str(path)]
    return run_timed(argv, cwd=work).check().wall_s


def through_storbench(work: Path, hosts: list[str], env: dict) -> tuple[float, float, int, int, float | None]:
    """(wall s, own CPU s, own peak KiB, stored host results, seconds every host ran together)"""
    hosts_file = work / "hosts.txt"
    hosts_file.write_text("".join(f"{h}\n" for h in hosts))
    suite_file = work / "hosts.toml"
    suite_file.write_text(suite(len(hosts)))
    usage = work / "rusage.json"
    wrapper = work / "wrapper.py"
    wrapper.write_text(WRAPPER)
    argv = [sys.executable, str(wrapper), "run", "--hosts", str(hosts_file), "--suite-file", str(suite_file), "--workload", "bench-hosts",
            "--repeat", "1", "--no-report", "--json"]  # fmt: skip
    t = run_timed(argv, env={**env, "STORBENCH_BENCH_RUSAGE": str(usage)}, cwd=work).check()
    own = json.loads(usage.read_text())
    records = json.loads(t.stdout)
    stored = sum(1 for r in records if r.get("host") not in (None, "all"))
    window = next((r.get("window") for r in records if r.get("host") == "all"), None)
    return t.wall_s, own["cpu_s"], own["maxrss_kib"], stored, window["seconds"] if window else None


def main() -> int:
    p = arg_parser(__doc__.splitlines()[0])
    p.add_argument("--counts", type=int, nargs="+", default=[1, 8, 32, 64, 128, 256])
    args = p.parse_args()
    warm_bytecode()
    assert storbench_argv()  # the venv's storbench: the wrapper runs its module with this Python
    figures: list[Figure] = []
    with scratch_dir("storbench-bench-hosts-") as work:
        env = bench_env(work / "hosts.sqlite")
        with contextlib.closing(socket.socket()) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        base: tuple[int, float, int] | None = None  # (hosts, own CPU s, peak KiB) of the smallest count
        for count in sorted(args.counts):
            with servers(work, count, port) as hosts:
                bare_wall = bare(work, hosts)
                wall, cpu_s, peak_kib, stored, together_s = through_storbench(work, hosts, env)
            base = base or (count, cpu_s, peak_kib)
            more = count - base[0]
            runtime = runtime_s(count)
            print(f"  {count} hosts, {runtime} s: storbench {wall:.1f} s (own CPU {cpu_s:.2f} s, peak {peak_kib / 1024:.0f} MiB, "
                  f"{stored} host results, all ran together {together_s if together_s is not None else '-'} s), "
                  f"bare fio {bare_wall:.1f} s", flush=True)  # fmt: skip
            at = f"at {count} host{'s' if count > 1 else ''}"
            figures += [
                Figure("hosts", f"wall / runtime {at}", wall / runtime, "<= 2.67" if count == 64 else "",
                       detail=f"storbench {wall:.1f} s, bare fio {bare_wall:.1f} s ({bare_wall / runtime:.2f}x), runtime {runtime} s; "
                              f"{stored} of {count} host results stored; every host ran together "
                              f"{'for ' + format(together_s, '.1f') + ' s' if together_s else 'in no whole second'}"),
                Figure("hosts", f"wall beyond bare fio's {at}", wall - bare_wall, "<= 5" if count == 64 else "", unit=" s"),
                Figure("hosts", f"own CPU per host {at}", cpu_s / count * 1000, "<= 20" if count >= 64 else "", unit=" ms",
                       detail=f"{cpu_s:.2f} s in all"),
            ]  # fmt: skip
            if more > 0:  # what each host beyond the smallest run adds to storbench's peak memory
                figures.append(Figure("hosts", f"peak memory per added host {at}", (peak_kib - base[2]) / 1024 / more,
                                      "<= 1" if count >= 64 else "", unit=" MiB",
                                      detail=f"peak {peak_kib / 1024:.0f} MiB against {base[2] / 1024:.0f} MiB at {base[0]}"))  # fmt: skip
    emit(figures, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
