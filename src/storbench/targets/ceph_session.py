"""One librados client for a run's questions to a Ceph cluster (edge).

Every ``ceph``, ``rbd`` or ``rados`` command starts a Python and connects to the cluster anew:
0.3-0.5 s each, four to six of them around every repetition of a Ceph or S3-on-Ceph workload (the
OSDs' counters and the cluster's health before and after, the image's written extents) and six more
to describe each target.  While a run uses a Ceph target (:meth:`CephKind.serve`, and an ``s3://``
target whose cluster storbench reached), :func:`held` keeps one client connected instead:
:mod:`.rados_helper`, run by the Python the ``ceph`` command itself runs on (whose ``rados`` and
``rbd`` modules come with ceph-common), answering one JSON line per question.  :func:`answer` serves
the commands storbench runs that it knows (:func:`request_of`), in the words and formats the commands
would have printed, so that every parser and every caller stays the same; anything else, and any
cluster for which no client could be started (no ``ceph`` command, its Python without ``rados``),
goes to the commands as before.

A question is bounded as a command was (the cluster's own operation timeout inside, a wall-clock
bound outside); a client that stops answering is stopped and the cluster taken as not answering,
as a command that timed out.  The client ends with the run, and with storbench however it ends
(its stdin closes; the parent-death signal).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import selectors
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence

from storbench.jsontypes import JSONObject, JSONValue

#: how long the client may take to start and connect, beyond the cluster's own connect timeout
START_SLACK_S = 10.0
#: the client's status for a question it leaves to the command (EOPNOTSUPP, its words begin "pass:")
PASS = 95
HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rados_helper.py")


@dataclasses.dataclass(frozen=True)
class Request:
    """One question to the client: ``op`` ``mon``/``mgr``/``osd``/``rbd-diff``/``rbd-info``/``rbd-du``/``rbd-status``/``stat`` and its arguments."""

    op: str
    args: tuple[tuple[str, JSONValue], ...] = ()

    def line(self) -> str:
        return json.dumps({"op": self.op, **dict(self.args)}) + "\n"


#: the ceph commands storbench runs that the client answers: (words without ``-f json``) -> (to, command)
_CEPH_JSON: dict[tuple[str, ...], tuple[str, JSONObject]] = {
    ("status",): ("mon", {"prefix": "status"}),
    ("versions",): ("mon", {"prefix": "versions"}),
    ("fsid",): ("mon", {"prefix": "fsid"}),
    ("osd", "pool", "ls", "detail"): ("mon", {"prefix": "osd pool ls", "detail": "detail"}),
    ("osd", "metadata"): ("mon", {"prefix": "osd metadata"}),
    ("service", "dump"): ("mgr", {"prefix": "service dump"}),
}
#: ``ceph tell osd.* perf dump -f json``: every OSD's counters, asked of each OSD in turn
OSD_PERF_DUMP = ("tell", "osd.*", "perf", "dump")


def request_of(tool: str, args: Sequence[str]) -> Request | str | None:
    """The client's question for ``tool ARGS``; ``"osd-perf-dump"`` for the OSDs' counters (several
    questions); None: a command the client does not answer (it runs as a command)."""
    words = tuple(args)
    if tool == "ceph":
        if words == ("health",):
            return Request("mon", (("cmd", {"prefix": "health"}),))
        if words[-2:] in (("-f", "json"), ("--format", "json")):
            if words[:-2] == OSD_PERF_DUMP:
                return "osd-perf-dump"
            if words[:-2] in _CEPH_JSON:
                to, cmd = _CEPH_JSON[words[:-2]]
                return Request(to, (("cmd", {**cmd, "format": "json"}),))
        return None
    if tool == "rbd" and len(words) == 4 and words[0] in ("diff", "info", "du", "status") and words[1:3] == ("--format", "json") and words[3].count("/") == 1:
        pool, image = words[3].split("/")
        return Request(f"rbd-{words[0]}", (("pool", pool), ("image", image)))
    if tool == "rados" and len(words) == 4 and words[0] == "--pool" and words[2] == "stat":
        return Request("stat", (("pool", words[1]), ("object", words[3])))
    return None


def as_printed(request: Request, rc: int, out: str, err: str) -> tuple[int, str, str]:
    """The client's answer in the words the command would have printed."""
    fields = dict(request.args)
    if rc != 0:
        if request.op == "stat":
            return rc, "", f" error stat-ing {fields['pool']}/{fields['object']}: ({rc}) {os.strerror(rc)}"
        if request.op == "rbd-du" and rc == errno.ENOENT:
            return rc, "", f"specified image {fields['image']} is not found.\nrbd: du failed: ({rc}) {os.strerror(rc)}"
        if request.op.startswith("rbd-") and rc == errno.ENOENT:
            return rc, "", f"rbd: error opening image {fields['image']}: ({rc}) {os.strerror(rc)}"
        return rc, out, err or f"error {rc}: {os.strerror(rc)}"
    try:
        if request.op == "rbd-diff":
            return 0, json.dumps(json.loads(out)["extents"]), ""
        if request.op == "stat":
            stat = json.loads(out)
            return 0, f"{fields['pool']}/{fields['object']} mtime {stat['mtime']}, size {stat['size']}\n", ""
    except (ValueError, KeyError, TypeError):
        return 5, "", f"not the client's answer to {request.op}: {out[:80]!r}"
    if (request.op == "mon" and fields["cmd"]["prefix"] == "health") or request.op in ("rbd-info", "rbd-du", "rbd-status"):
        return 0, out if out.endswith("\n") or not out else out + "\n", ""  # as the commands end it
    return 0, out, err


def perf_dump_printed(answers: Sequence[tuple[int, tuple[int, str, str]]]) -> tuple[int, str, str]:
    """``ceph tell osd.* perf dump -f json``'s words from each OSD's answer: ``osd.N: {...}`` a
    line each; when an OSD did not answer, the first failure's status and every failed OSD named
    (counters from some OSDs only would not be the cluster's)."""
    failed = [(osd, rc, err) for osd, (rc, _out, err) in answers if rc != 0]
    if failed:
        return failed[0][1], "", "; ".join(f"osd.{osd}: {err or os.strerror(rc)}" for osd, rc, err in failed)
    return 0, "".join(f"osd.{osd}: {out.strip()}\n" for osd, (_rc, out, _err) in answers), ""


def interpreter(ceph: str | None = None) -> list[str] | None:
    """The interpreter the ``ceph`` command runs on, from its ``#!`` line; None: not a Python script."""
    path = ceph or shutil.which("ceph")
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            first = fh.readline(256).decode("utf-8", "replace")
    except OSError:
        return None
    words = first[2:].split() if first.startswith("#!") else []
    if not words or "python" not in " ".join(words):
        return None
    return words


class CephSession:
    """A started :mod:`.rados_helper` client (made by :meth:`start`)."""

    def __init__(self, proc: subprocess.Popen, wait_s: float) -> None:
        self.proc = proc
        self.wait_s = wait_s
        self.dead: str | None = None  # why it can no longer be asked
        self.hung = False  # it stopped answering (a cluster that does not answer), rather than ended
        self._buffer = b""
        self._lock = threading.Lock()  # one question and its answer at a time, whichever thread asks

    @classmethod
    def start(cls, conf: str, client: str, op_timeout_s: int, wait_s: float) -> tuple[CephSession | None, str]:
        """(the connected client, "") or (None, why not)."""
        from storbench.process import proc as processes

        python = interpreter()
        if python is None:
            return None, "no ceph command running on Python"
        try:
            proc, _noted = processes.spawn([*python, HELPER, conf, client, str(op_timeout_s)], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, c_locale=True)  # fmt: skip
        except OSError as exc:
            return None, str(exc)
        session = cls(proc, wait_s)
        rc, out, err = session._read(op_timeout_s + START_SLACK_S)
        if rc != 0 or out != "ready":
            session.close()
            return None, err or f"the client said {out!r}"
        return session, ""

    def _read(self, timeout_s: float) -> tuple[int, str, str]:
        stdout = self.proc.stdout
        assert stdout is not None
        deadline = time.monotonic() + timeout_s
        with selectors.DefaultSelector() as sel:
            sel.register(stdout, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    self.dead, self.hung = f"timed out after {timeout_s:g} s", True
                    return 124, "", self.dead
                chunk = os.read(stdout.fileno(), 65536)
                if not chunk:
                    self.dead = "the client ended"
                    return 5, "", self.dead
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            reply = json.loads(line)
            return int(reply["rc"]), str(reply["out"]), str(reply["err"])
        except (ValueError, KeyError, TypeError):
            self.dead = f"not the client's answer: {line[:80]!r}"
            return 5, "", self.dead

    def ask(self, request: Request) -> tuple[int, str, str]:
        """One question: (0 or an errno, what it printed, what it said)."""
        if self.dead is not None:
            return 124, "", f"skipped: {self.dead}"
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            stdin.write(request.line().encode())
            stdin.flush()
        except (BrokenPipeError, OSError):
            self.dead = "the client ended"
            return 5, "", self.dead
        return self._read(self.wait_s)

    def run(self, tool: str, args: Sequence[str]) -> tuple[int, str, str] | None:
        """``tool ARGS`` answered as the command would have; None: not one the client answers, or
        one the client leaves to the command (``rbd du`` without a fast-diff map), or a client that
        ended (or said what is not an answer) before or while answering it: the command answers
        that question and every later one. A client that stopped answering is another thing: the
        cluster does not answer, and a command would wait as long (skipped)."""
        request = request_of(tool, args)
        if request is None:
            return None
        with self._lock:
            if self.dead is not None and not self.hung:
                return None
            answered = self._answer(request)
            if self.dead is not None and not self.hung:
                return None
        return None if answered[0] == PASS and answered[2].startswith("pass:") else answered  # left to the command

    def _answer(self, request: Request | str) -> tuple[int, str, str]:
        if isinstance(request, Request):
            return as_printed(request, *self.ask(request))
        rc, out, err = self.ask(Request("mon", (("cmd", {"prefix": "osd ls", "format": "json"}),)))
        if rc != 0:
            return rc, out, err
        try:
            osds = [int(x) for x in json.loads(out)]
        except (ValueError, TypeError):
            return 22, "", f"osd ls: not a list of OSDs: {out[:80]!r}"
        return perf_dump_printed([(osd, self.ask(Request("osd", (("id", osd), ("cmd", {"prefix": "perf dump", "format": "json"}))))) for osd in osds])

    def close(self) -> None:
        from storbench.process import proc as processes

        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()  # the client's end: it shuts down and exits
        if processes.wait(self.proc, 2.0) is None:  # hung in the cluster: the project's own ladder
            processes.stop_group(self.proc)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@dataclasses.dataclass
class _Held:
    session: CephSession
    holders: int = 0


#: the clients of the runs in progress, by (conf, client, op timeout)
_HELD: dict[tuple[str, str, int], _Held] = {}


@contextlib.contextmanager
def held(conf: str, client: str, op_timeout_s: int, wait_s: float) -> Iterator[str | None]:
    """For the run: one client connected to the cluster of ``conf`` as ``client`` (shared by every
    target of that cluster); yields None when it runs, else why not (the commands answer instead)."""
    key = (conf, client, op_timeout_s)
    if key not in _HELD:
        session, why = CephSession.start(conf, client, op_timeout_s, wait_s=wait_s)
        if session is None:
            yield why
            return
        _HELD[key] = _Held(session)
    _HELD[key].holders += 1
    try:
        yield None
    finally:
        entry = _HELD[key]
        entry.holders -= 1
        if entry.holders == 0:
            del _HELD[key]
            entry.session.close()


def answer(conf: str, client: str, op_timeout_s: int, tool: str, args: Sequence[str]) -> tuple[int, str, str] | None:
    """``tool ARGS`` answered by the run's client of that cluster; None: no client, or not a
    command it answers."""
    entry = _HELD.get((conf, client, op_timeout_s))
    if entry is None:
        return None
    return entry.session.run(tool, args)
