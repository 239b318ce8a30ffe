"""What the two Ceph kinds share: the configuration and client they use, the CLI calls, the description.

A Ceph target is reached with fio's own librbd/librados client (:mod:`.rbd`, :mod:`.rados`),
configured by one file: ``--ceph-conf PATH``, else ``$CEPH_CONF``, else
``/etc/ceph/ceph.conf`` (checked before anything runs: fio's rados engine segfaults on a
configuration it cannot read), and one client name: ``--ceph-client NAME`` (``client.NAME``;
``admin`` by default); ``--ceph-timeout SECONDS`` bounds how long one operation may wait
for the cluster (15 s by default) before the workload fails.  Both are kept in the target's ``params`` and given to every command
storbench runs (``ceph``, ``rbd``, ``rados`` from ceph-common, with ``--conf`` and ``--id``)
and to fio (``CEPH_CONF`` for the rbd engine, which has no option for it; ``conf=`` for the
rados engine).  A cluster that stops answering must not hang a run: every command has a
timeout, and fio's librados gets ``CEPH_ARGS`` with bounded mount and operation timeouts.
While a run uses the target (:meth:`CephKind.serve`), the commands storbench's own questions
would run are answered by one librados client kept for the run (:mod:`.ceph_session`).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from storbench.errors import TargetError
from storbench.jsontypes import JSONObject
from storbench.model import Target

from .base import ResolveContext, TargetKind, check_uri_text

if TYPE_CHECKING:
    from ..storage.ceph import CephInfo

DEFAULT_CONF = "/etc/ceph/ceph.conf"
DEFAULT_CLIENT = "admin"
#: each ceph/rbd/rados command storbench runs
CLI_TIMEOUT_S = 30.0
#: how long the cluster may keep fio (librados) waiting: at mount, and for one operation.  A
#: monitor does not mark a killed OSD down for as long as 15 minutes when no other OSD reports
#: it, and librados waits for it forever by default; a benchmark op slower than this has failed.
CLIENT_TIMEOUT_S = 15
#: the same for storbench's own ceph/rbd/rados commands
CLI_OP_TIMEOUT_S = 5
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
_CLIENT_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
#: the objects a RADOS target's workloads write are named by storbench's test file name
OBJECT_PREFIX = "storbench."


def check_name(what: str, spec: str, name: str, form: str) -> str:
    if not name or not _NAME_RE.match(name):
        raise TargetError(f"{what} target {spec!r}: give {form} (names of letters, digits, '.', '_', '-')")
    return name


def access_params(ctx: ResolveContext) -> tuple[tuple[str, str], ...]:
    """The configuration file and client a Ceph target uses, checked (one-line TargetError)."""
    conf = ctx.ceph_conf or os.environ.get("CEPH_CONF") or DEFAULT_CONF
    where = "--ceph-conf" if ctx.ceph_conf else ("$CEPH_CONF" if os.environ.get("CEPH_CONF") else "the default")
    if not os.path.isfile(conf) or not os.access(conf, os.R_OK):
        raise TargetError(
            f"Ceph configuration {conf} ({where}) is not a readable file: give --ceph-conf PATH "
            "(the cluster's ceph.conf, naming its monitors and keyring)"
        )
    check_uri_text("Ceph configuration path", conf)
    client = ctx.ceph_client or DEFAULT_CLIENT
    if client.startswith("client."):
        client = client[len("client."):]
    if not _CLIENT_RE.match(client):
        raise TargetError(f"--ceph-client {ctx.ceph_client!r}: give a client name such as admin or client.bench")
    params: tuple[tuple[str, str], ...] = (("conf", os.path.abspath(conf)), ("client", client))
    if ctx.ceph_timeout_s is not None:
        params += (("timeout_s", str(ctx.ceph_timeout_s)),)
    return params


def conf_of(target: Target) -> str:
    return target.param("conf") or DEFAULT_CONF


def client_of(target: Target) -> str:
    return target.param("client") or DEFAULT_CLIENT


def timeout_of(target: Target) -> int:
    """``--ceph-timeout``: how long one operation may wait for the cluster (default :data:`CLIENT_TIMEOUT_S`)."""
    value = target.param("timeout_s")
    return int(value) if value and value.isdigit() else CLIENT_TIMEOUT_S


def op_timeout_of(target: Target) -> int:
    """How long one of storbench's own questions may wait for the cluster: a command's operation
    timeout, and a part of the key of the run's client (:func:`hold_client`), so the two agree."""
    return min(CLI_OP_TIMEOUT_S, timeout_of(target))


def fio_env(target: Target) -> tuple[tuple[str, str], ...]:
    """fio's environment for a Ceph target: its configuration, and timeouts so a dead cluster ends the job."""
    t = timeout_of(target)
    return (
        ("CEPH_CONF", conf_of(target)),
        ("CEPH_ARGS", f"--client-mount-timeout={t} --rados-mon-op-timeout={t} --rados-osd-op-timeout={t}"),
    )


def cli(target: Target, tool: str, *args: str) -> tuple[int, str, str]:
    """``tool --conf CONF --id CLIENT ARGS`` (argument list, a timeout): (returncode, stdout, stderr); 127 when missing."""
    from storbench.storage import SubprocessRunner

    from . import ceph_session

    t = op_timeout_of(target)
    answered = ceph_session.answer(conf_of(target), client_of(target), t, tool, args)
    if answered is not None:  # the run's own client (ceph_session.held) answered it
        return answered
    argv = [tool, "--conf", conf_of(target), "--id", client_of(target),
            f"--rados-osd-op-timeout={t}", f"--rados-mon-op-timeout={t}"]  # fmt: skip
    argv += ["--connect-timeout", str(t)] if tool == "ceph" else [f"--client-mount-timeout={t}"]
    return SubprocessRunner(CLI_TIMEOUT_S).run(argv + list(args))


def hold_client(target: Target) -> contextlib.AbstractContextManager[str | None]:
    """For a run: one librados client answers storbench's own questions to the cluster of
    ``target`` (:mod:`.ceph_session`) instead of a command each; yields why not, or None."""
    from . import ceph_session

    return ceph_session.held(conf_of(target), client_of(target), op_timeout_of(target), CLI_TIMEOUT_S)


def first_line(out: str, err: str, rc: int) -> str:
    lines = [ln.strip() for ln in (err + "\n" + out).splitlines() if ln.strip() and "AdminSocket" not in ln]
    return lines[-1] if lines else f"exit status {rc}"


def unreachable(rc: int, out: str, err: str) -> bool:
    """The cluster (a monitor, or the OSD an operation needed) did not answer in time."""
    text = err + out
    return rc in (-1, 110, 124) or any(w in text for w in ("timed out", "ETIMEDOUT", "couldn't connect", "error connecting to the cluster"))


def describe_cluster(target: Target, pool: str, notes: list[str]) -> CephInfo:
    """The cluster under a Ceph target (:class:`~storbench.storage.ceph.CephInfo`) with the pool;
    what could not be asked becomes a note."""
    import dataclasses

    from storbench.storage.ceph import (
        CephInfo,
        parse_ceph_status,
        parse_ceph_versions,
        parse_osd_metadata,
        parse_pool_ls_detail,
        parse_rados_df,
    )

    rc, out, err = cli(target, "ceph", "status", "-f", "json")
    if rc == 127:
        notes.append("Ceph cluster not described: the ceph command is not installed (Debian package ceph-common)")
        return CephInfo(conf=conf_of(target), client=client_of(target))
    if rc != 0:
        notes.append(f"Ceph cluster not described: ceph status failed: {first_line(out, err, rc)}")
        return CephInfo(conf=conf_of(target), client=client_of(target))
    try:
        info = parse_ceph_status(out)
    except ValueError as exc:
        notes.append(f"Ceph cluster not described: {exc}")
        return CephInfo(conf=conf_of(target), client=client_of(target))
    extra: JSONObject = {"conf": conf_of(target), "client": client_of(target)}
    for args, parse, key in (
        (("versions", "-f", "json"), parse_ceph_versions, "version"),
        (("osd", "pool", "ls", "detail", "-f", "json"), lambda t: parse_pool_ls_detail(t, pool), "pool"),
        (("osd", "metadata", "-f", "json"), parse_osd_metadata, "osd_details"),
    ):
        rc, out, err = cli(target, "ceph", *args)
        if rc != 0:
            notes.append(f"ceph {' '.join(args[:-2])} failed: {first_line(out, err, rc)}")
            continue
        try:
            extra[key] = parse(out)
        except ValueError as exc:
            notes.append(f"ceph {' '.join(args[:-2])}: {exc}")
    if extra.get("osd_details") is None:
        extra.pop("osd_details", None)
    rc, out, err = cli(target, "rados", "df", "-f", "json")
    if rc == 0:
        try:
            counters = parse_rados_df(out, pool)
            extra["pool_objects"] = counters.objects if counters is not None else None
        except ValueError as exc:
            notes.append(f"rados df: {exc}")
    return dataclasses.replace(info, **extra)


def explain_failure(target: Target, reason: str) -> str:
    """fio's words for a cluster that stopped answering ("rbd_open failed.", error 110) with what it means."""
    words = ("timed out", "Connection timed out", "rbd_open failed", "rados_connect failed", "rados_ioctx_create failed", "error=110", "ETIMEDOUT")
    if any(w in reason for w in words):
        return (f"{reason} (the Ceph cluster of {conf_of(target)} did not answer within {timeout_of(target)} s: "
                "an OSD or monitor down or a placement group inactive? see ceph -s)")  # fmt: skip
    return reason


class CephKind(TargetKind):
    """What the RBD and RADOS kinds share: no local path, failures explained as the cluster's."""

    local_path = False
    ceph_access = True

    def explain_failure(self, target: Target, reason: str) -> str:
        return explain_failure(target, reason)

    def describe_path(self, target: Target) -> str | None:
        return None

    def space_paths(self, target: Target, test_files: Sequence[str]) -> tuple[list[str], str] | None:
        return None

    @contextlib.contextmanager
    def serve(self, target: Target, size_bytes: int | None = None) -> Iterator[None]:
        """For the run: one librados client for storbench's own questions to the cluster."""
        with hold_client(target):
            yield
