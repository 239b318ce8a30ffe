"""Re-record the fio client/server outputs in this directory (fio 3.33, loopback only).

    .venv/bin/python tests/data/multihost/record.py

Two fio servers on 127.0.0.1 (ports from the OS), each in its own temporary
directory; every process started here is stopped by its process group id.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
JOB = """[rnd]
rw=randread
bs=4k
size=8m
runtime={runtime}
time_based
ioengine=psync
filename={filename}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server(port: int, cwd: str) -> subprocess.Popen:
    proc = subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{port}"], cwd=cwd, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            time.sleep(0.05)
    raise SystemExit("fio server did not start")


def stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def client(tmp: str, ports: list[int], jobs: list[str], name: str, kill=None) -> None:
    argv = ["fio"]
    for i, (port, job) in enumerate(zip(ports, jobs)):
        path = os.path.join(tmp, f"job{i}.fio")
        Path(path).write_text(job)
        argv += [f"--client=ip:127.0.0.1,{port}", path]
    argv += ["--output-format=json", "--eta=never"]
    proc = subprocess.Popen(argv, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if kill is not None:
        time.sleep(1.5)
        stop(kill)
    out, err = proc.communicate(timeout=120)
    (HERE / f"{name}.stdout").write_text(out)
    (HERE / f"{name}.stderr").write_text(err + f"# exit status {proc.returncode}\n")
    print(name, proc.returncode, file=sys.stderr)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        d1, d2 = os.path.join(tmp, "s1"), os.path.join(tmp, "s2")
        os.mkdir(d1), os.mkdir(d2)
        p1, p2 = free_port(), free_port()
        s1, s2 = server(p1, d1), server(p2, d2)
        try:
            good = JOB.format(runtime=1, filename="storbench.testfile")
            client(tmp, [p1, p2], [good, good], "two_hosts")
            client(tmp, [p1, p2], [good, JOB.format(runtime=1, filename="/proc/storbench.testfile")], "host_error")
            closed = free_port()
            (HERE / "ports.json").write_text(json.dumps({"host1": p1, "host2": p2, "closed": closed}) + "\n")
            client(tmp, [p1, closed], [good, good], "one_unreachable")
            probe = subprocess.run(["fio", f"--client=ip:127.0.0.1,{p1}", "--showcmd", "/dev/stdin"],
                                   input="[p]\nioengine=null\nsize=4k\n", capture_output=True, text=True, cwd=tmp)
            (HERE / "probe.stdout").write_text(probe.stdout)
            long = JOB.format(runtime=3, filename="storbench.testfile")
            client(tmp, [p1, p2], [long, long], "one_killed", kill=s2)
        finally:
            stop(s1)
            stop(s2)


if __name__ == "__main__":
    main()
