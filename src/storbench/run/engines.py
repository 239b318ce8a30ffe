"""Edge: find which asynchronous I/O engine this fio and kernel accept.

Workloads that say ``ioengine = "auto"`` (the ``share`` suite) run with the
first of :data:`AUTO_ENGINES` that works: io_uring where the kernel allows it,
else libaio, else posixaio.  :func:`probe_ioengine` asks fio itself with a tiny
4 KiB read in the target directory, so a kernel with io_uring disabled, or a
filesystem an engine cannot use, is found before the suite starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile

from storbench.errors import FioMissingError, FioRunError, TargetError
from storbench.process import proc as processes

#: Engines ``ioengine = "auto"`` may resolve to, in order of preference.
AUTO_ENGINES: tuple[str, ...] = ("io_uring", "libaio", "posixaio")
PROBE_TIMEOUT_S = 10.0
#: the probe file's name in the target directory (see probe_ioengine for why no leading dot)
PROBE_PREFIX = "storbench-probe-"


def _engine_works(fio_path: str, engine: str, filename: str) -> tuple[bool, str]:
    argv = [
        fio_path,
        "--name=probe",
        f"--ioengine={engine}",
        "--filename=" + filename.replace(":", "\\:"),  # fio splits filename= at ':' unless escaped
        "--size=4k",
        "--rw=read",
        "--bs=4k",
        "--output-format=json",
    ]
    try:
        done = processes.run(argv, timeout_s=PROBE_TIMEOUT_S, c_locale=False)
    except FileNotFoundError as exc:
        raise FioMissingError(f"fio not found at {fio_path!r}") from exc
    except subprocess.TimeoutExpired:
        return False, f"{engine}: no answer within {PROBE_TIMEOUT_S:g} s"
    if done.returncode != 0:
        lines = [ln.strip() for ln in (done.stderr + done.stdout).splitlines() if ln.strip()]
        return False, f"{engine}: {lines[0] if lines else f'exit status {done.returncode}'}"
    try:
        doc = json.loads(done.stdout[done.stdout.index("{") :])
        errors = [job.get("error", 0) for job in doc.get("jobs", [])]
    except (ValueError, AttributeError):
        return False, f"{engine}: fio printed no JSON result"
    if not errors or any(errors):
        return False, f"{engine}: fio reported error {errors}"
    return True, ""


def probe_ioengine(fio_path: str, directory: str) -> str:
    """The first of io_uring, libaio, posixaio that fio can use for a file in ``directory``.

    Runs ``fio --name=probe --ioengine=X --filename=<tmp file> --size=4k --rw=read
    --bs=4k --output-format=json`` (an argument list, never a shell; 10 s timeout
    each) and removes its temporary file.  Raises :class:`FioRunError` when none
    works and :class:`FioMissingError` when ``fio_path`` does not exist.
    """
    try:
        # not a dot file: a Samba share on a filesystem without xattrs (zfs-fuse) marks it hidden, and
        # smbnetfs (libsmbclient) then cannot delete it (ENOSYS) and fails every later call with EIO
        fd, filename = tempfile.mkstemp(prefix=PROBE_PREFIX, dir=directory)
        os.close(fd)
    except OSError as exc:  # a share whose server fails (EIO), a full or read-only filesystem: one line
        raise TargetError(f"cannot create a file in {directory} to find fio's I/O engine: {exc.strerror or exc}") from None
    reasons: list[str] = []
    found: str | None = None
    try:
        for engine in AUTO_ENGINES:
            ok, reason = _engine_works(fio_path, engine, filename)
            if ok:
                found = engine
                break
            reasons.append(reason)
    finally:
        try:
            os.unlink(filename)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise TargetError(f"cannot remove {filename} (storbench's probe of fio's I/O engine): {exc.strerror or exc}; "
                              "remove it by hand") from None  # fmt: skip
    if found is not None:
        return found
    raise FioRunError("ioengine probe", "none of io_uring, libaio, posixaio works here (" + "; ".join(reasons) + ")")
