"""Many hosts at once, the edge: :class:`ClientFio`, the :class:`storbench.run.fioexec.FioExecutor`
that runs ONE fio client process for all hosts. Which hosts (:mod:`.inventory`), whether they can be
driven (:mod:`.preflight`) and what each did (:mod:`.perhost`) are rooms of their own.

Facts this module is built on (fio 3.33, checked by hand and in tests):
* In client mode the JSON names each host as it was given to ``--client`` (``hostname``)
  with its ``port``; two servers on one address differ only by port.
* A server opens the client's ``--output`` path ON THE SERVER (truncating it; a
  directory missing there makes the server's job fail with "output file open
  error").  So ClientFio gives no ``--output``: the JSON is read from the client's
  stdout, with ``--eta=always`` (a frozen host is found by its ETA requests timing out); the
  client's notes around it ("client: host=X disconnected", "<host> fio: ...") are
  kept by the parser as notes.
* A server that dies mid-run is simply missing from ``client_stats``; fio exits 1
  and the other hosts' results are complete.  The client notices at once ("client:
  host=127.0.0.1 disconnected") or, when the connection hangs, after up to about
  40 s of "timeout on cmd SEND_ETA".  A server that cannot be reached at all is
  left out with exit status 0.
* Interval logs come back named ``sb_bw.1.log.<hostname>``: two servers on one
  address overwrite each other's, so client runs write none.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..errors import FioMissingError, FioParseError, UsageError
from ..process import proc, signals
from .inventory import Host, file_tags, filename_of, job_for_host, with_window_logs
from .perhost import fio_lines, lost_hosts

if TYPE_CHECKING:
    from ..fio.progress import Status
    from .fioexec import FioInvocation


# --------------------------------------------------------------------------- hosts


# --------------------------------------------------------------------------- job text per host


# --------------------------------------------------------------------------- pre-flight


# --------------------------------------------------------------------------- results per host


# --------------------------------------------------------------------------- the executor


#: a small job's clock: no calibration of the CPU's clock on every host first (fio's default does
#: it for each job a server starts, ~0.1 s of CPU; a cleanup at 64 hosts on two cores took 4.9 s
#: with it, 2.7 s without); what these jobs measure is never read
TINY_CLOCK = "clocksource=gettimeofday"


class ClientFio:
    """A :class:`storbench.run.runner.FioExecutor` that runs each job on every host at once:
    ONE ``fio --client=H1,P1 job1 --client=H2,P2 job2 ... --output-format=json``.

    ``remote`` tells the runner that test files and filesystems are not local (no
    local space measurement, no local test-file removal: see :meth:`remove_test_files`).
    """

    remote = True

    def __init__(self, hosts: Sequence[Host], fio_path: str = "fio", left_out: Mapping[str, str] | None = None,
                 version: str | None = None) -> None:  # fmt: skip
        resolved = shutil.which(fio_path)
        if resolved is None:
            raise FioMissingError(
                f"fio not found ({fio_path!r} is not on PATH); install it with 'apt-get install fio' or 'make install'"
            )
        if not hosts:
            raise UsageError("no hosts to run on")
        self.path = resolved
        self.hosts = tuple(hosts)
        #: hosts asked for but left out by the pre-flight (display -> why): every aggregate is partial
        self.left_out: Mapping[str, str] = dict(left_out or {})
        #: test files every host removed itself (their last job ran with unlink=1 and ended well)
        self.removed: set[str] = set()
        #: each host's suffix for its own files where hosts may reach one directory (fixed for the
        #: run: a host lost later keeps its name)
        self._tags = file_tags(self.hosts)
        self._asked = {h.display: h for h in self.hosts}
        self._version: str | None = version

    def job_for(self, job_text: str, host: Host) -> str:
        """``job_text`` as ``host`` runs it: in its own target directory, and where hosts may
        reach one directory, with test files named for the host (:func:`inventory.file_tags`)."""
        return job_for_host(job_text, host.target, self._tags.get(host.display))

    def file_on(self, escaped: str, host: Host) -> str:
        """The test file ``escaped`` (fio's ``filename``) as ``host``'s job names it."""
        return filename_of(self.job_for(f"[x]\nfilename={escaped}\n", host)) or escaped

    @property
    def host_names(self) -> dict[tuple[str, int], str]:
        return {h.fio_key: h.display for h in self.hosts}

    def version(self) -> str:
        if self._version is None:
            out = proc.run([self.path, "--version"], timeout_s=30, c_locale=False)
            self._version = out.stdout.strip() or "unknown"
        return self._version

    def argv(self, job_paths: Sequence[str]) -> list[str]:
        argv = [self.path]
        for host, path in zip(self.hosts, job_paths):
            argv += [host.client_option(), path]
        # ETA requests on: they are how fio's client notices a host that stops answering mid-run
        # (a frozen or half-dead server: "timeout on cmd SEND_ETA", dropped after ~40 s, the other
        # hosts' results printed); with --eta=never it waits for that host for ever
        return argv + ["--output-format=json+", "--eta=always"]

    def run(self, job_text: str, on_status: Callable[[Status], None], env: Mapping[str, str] | None = None,
            watch: Callable[[], str | None] | None = None) -> FioInvocation:
        """``watch`` is never given (the runner watches servers for local runs only: the hosts reach them, not this one)."""
        from .fioexec import FioInvocation, stop_fio

        if env and (unnamed := [k for k in env if "${" + k + "}" not in job_text]):
            # fio's client cannot hand an environment to its servers (runner.run_fio refuses such jobs first)
            raise ValueError(f"fio's client mode cannot pass an environment ({', '.join(unnamed)})")
        if not self.hosts:  # every host was lost by earlier workloads: fio without --client would run HERE
            return FioInvocation(returncode=1, output_text="", stderr_text="fio: every host was lost earlier in this run; nothing to run on",
                                 stdout_text="", left_out=dict(self.left_out))  # fmt: skip

        with tempfile.TemporaryDirectory(prefix=f"storbench-fio-{os.getpid()}-client-") as tmp:
            paths = []
            for i, host in enumerate(self.hosts):
                path = os.path.join(tmp, f"job-{i}.fio")
                with open(path, "w", encoding="utf-8", opener=_private) as fh:
                    fh.write(with_values(with_window_logs(self.job_for(job_text, host), i), env or {}))
                paths.append(path)
            out_path, err_path = os.path.join(tmp, "stdout.json"), os.path.join(tmp, "stderr.txt")
            interrupted = False
            with open(out_path, "w+b") as out, open(err_path, "w+b") as err:
                client, noted = proc.spawn(self.argv(paths), stdout=out, stderr=err, cwd=tmp)
                try:
                    signals.raise_noted(noted)  # a signal while it was forked: it is ours to stop now
                    client.wait()
                except BaseException:
                    interrupted = True
                    stop_fio(client)
                    raise
                out.seek(0)
                err.seek(0)
                output_text = out.read().decode("utf-8", errors="replace")
                stderr_text = err.read().decode("utf-8", errors="replace")
            lost = lost_hosts(self.hosts, output_text, stderr_text)
            if client.returncode == 0 and not lost and "\nunlink=1\n" in job_text and (name := filename_of(job_text)):
                self.removed.add(name)
            left_out = dict(self.left_out)
            self._drop(lost)
            return FioInvocation(
                returncode=client.returncode,
                output_text=output_text,
                stderr_text=stderr_text,
                stdout_text="",  # the JSON is the client's stdout: see output_text
                interrupted=interrupted,
                host_names=self.host_names,
                lost_hosts=lost,
                host_series=self._host_series(tmp),
                left_out=left_out,
            )

    def _drop(self, lost: Mapping[str, str]) -> None:
        """Hosts lost during a workload are not asked again in this run (a frozen host would hold
        every later workload and the cleanup for fio's ~40 s of timeouts): their later aggregates
        are partial, and their test file is left to them."""
        if not lost:
            return
        self.hosts = tuple(h for h in self.hosts if h.display not in lost)
        self.left_out = {**self.left_out, **{h: f"lost during an earlier workload ({why})" for h, why in lost.items()}}

    def _host_series(self, tmp: str) -> dict[str, tuple[tuple[int, float, float], ...]]:
        """Each host's per-second figures from the logs its server sent back (``sbhN_iops.J.log.HOST``)."""
        from ..fio.logs import epoch_series

        names = os.listdir(tmp)
        out = {}
        for i, host in enumerate(self.hosts):
            texts: dict[str, list[str]] = {"iops": [], "bw": []}
            for name in names:
                m = re.match(rf"^sbh{i}_(iops|bw)\.\d+\.log\.", name)
                if m:
                    with open(os.path.join(tmp, name), encoding="ascii", errors="replace") as fh:
                        texts[m.group(1)].append(fh.read())
            if texts["iops"]:
                try:
                    out[host.display] = epoch_series(texts["iops"], texts["bw"])
                except FioParseError:
                    continue  # a log cut short: that host has no series (its result stands)
        return out

    def _tiny_job(self, name: str, options: Sequence[str], filename_for: Callable[[Host], str]) -> tuple[int, str, str]:
        """Run a small job on every host (probes, cleanup); (returncode, stdout, stderr)."""
        with tempfile.TemporaryDirectory(prefix=f"storbench-fio-{os.getpid()}-client-") as tmp:
            paths = []
            for i, host in enumerate(self.hosts):
                path = os.path.join(tmp, f"{name}-{i}.fio")
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(f"[{name}]\n" + "".join(o + "\n" for o in (*options, TINY_CLOCK)) + f"filename={filename_for(host)}\n")
                paths.append(path)
            child, noted = proc.spawn(self.argv(paths), stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp, text=True)
            try:
                signals.raise_noted(noted)
                out, err = child.communicate(timeout=120)
            except BaseException:
                proc.stop_group(child, ((signal.SIGKILL, 5.0),))
                raise
            return child.returncode, out, err

    def probe_ioengine(self, default_target: str) -> str:
        """The first of io_uring, libaio, posixaio that fio accepts on EVERY host (a 4 KiB
        read of a probe file in each host's target directory, removed afterwards)."""
        from ..errors import FioRunError
        from ..fio.json import parse_fio_json
        from ..jobs.jobfile import fio_filename
        from .engines import AUTO_ENGINES

        def probe_file(host: Host) -> str:
            where = (host.target or default_target).rstrip("/") or "/"
            return self.file_on(fio_filename(("" if where == "/" else where) + "/storbench-probe"), host)  # no leading dot: see run/engines.py

        reasons = []
        for engine in AUTO_ENGINES:
            _, out, err = self._tiny_job(
                "storbench-probe", [f"ioengine={engine}", "rw=read", "bs=4k", "size=4k", "unlink=1"], probe_file
            )
            try:
                result = parse_fio_json(out)
            except FioParseError:
                reasons.append(f"{engine}: {(fio_lines(err + out) or ['no result'])[0]}")
                continue
            hosts = {(j.hostname, j.port): j.error for j in result.jobs if j.hostname and not j.is_aggregate}
            bad = [h.display for h in self.hosts if hosts.get(h.fio_key, -1) != 0]
            if not bad:
                return engine
            reasons.append(f"{engine}: fails on {', '.join(bad)}")
        raise FioRunError("ioengine probe", "none of io_uring, libaio, posixaio works on every host (" + "; ".join(reasons) + ")")

    def remove_test_files(self, job_texts: Iterable[str]) -> list[str]:
        """Remove the test files the jobs used, ON EACH HOST: a 4 KiB read of each file
        with ``unlink=1`` (fio deletes it at the end; a missing file is created and
        deleted).  Returns problems, one line each (the run's results stand anyway)."""
        texts = list(job_texts)
        files = list(dict.fromkeys(f for f in (filename_of(t) for t in texts) if f and f not in self.removed))
        problems = [f"the test file {self.file_on(f, self._asked[host])} is left on {host}, lost during the run: remove it there"
                    for host, why in self.left_out.items() if why.startswith("lost during") and host in self._asked
                    for f in dict.fromkeys(x for x in (filename_of(t) for t in texts) if x)]  # fmt: skip
        if not self.hosts:
            return problems
        for escaped in files:
            def for_host(host: Host, escaped: str = escaped) -> str:
                return self.file_on(escaped, host)

            try:
                code, out, err = self._tiny_job(
                    "storbench-cleanup", ["ioengine=psync", "rw=read", "bs=4k", "size=4k", "io_size=4k", "unlink=1"], for_host
                )
            except (OSError, subprocess.SubprocessError) as exc:
                problems.append(f"could not remove test file {escaped} on the hosts: {exc}")
                continue
            if code != 0 and not _only_already_gone(out):
                said = fio_lines(err + out)
                problems.append(f"could not remove test file {escaped} on every host: {said[0] if said else f'fio exit status {code}'}")
        return problems


def with_values(job_text: str, env: Mapping[str, str]) -> str:
    """``job_text`` with each ``${NAME}`` of ``env`` replaced by its value: fio's client cannot
    hand its servers an environment, so the values a job names (an S3 target's keys) travel in the
    job file each server is sent, as fio's own protocol carries it (in the clear, like warp's to
    its agents); the file is the owner's alone and removed when fio ends, and fio's output has the
    values masked before anything reads it (:func:`storbench.run.fioexec.run_fio`).  Pure."""
    for name, value in env.items():
        job_text = job_text.replace("${" + name + "}", value)
    return job_text


def _private(path: str, flags: int) -> int:
    """``open``'s opener for a job file: readable by its owner only (it may hold an S3 key)."""
    return os.open(path, flags, 0o600)


def _only_already_gone(output_text: str) -> bool:
    """Pure: a cleanup job's JSON where every host either removed the file or found it gone
    already (ENOENT: servers sharing one directory, the first one removed it)."""
    import errno

    from ..fio.json import parse_fio_json

    try:
        result = parse_fio_json(output_text)
    except FioParseError:
        return False
    errors = [j.error for j in result.jobs if j.hostname and not j.is_aggregate]
    return bool(errors) and all(e in (0, errno.ENOENT) for e in errors)


