"""What every target kind is: the :class:`TargetKind` interface and the helpers kinds share.

A kind answers, for one sort of ``--target``:

* **what it is** (:attr:`TargetKind.name`, :meth:`TargetKind.claims`: ``nbd://...``, a path);
* **how it is checked** (:meth:`TargetKind.resolve`: the edge; refusals are one
  :class:`~storbench.errors.TargetError` line naming the rule and how to proceed);
* **which fio options it sets** (:meth:`TargetKind.place`: pure; ``filename`` for files
  and devices, ``ioengine`` and ``uri`` for an NBD export, ...);
* **how it is described** (:meth:`TargetKind.describe_path`: what the storage
  description describes) and **laid out and cleaned up** (:meth:`TargetKind.test_files`
  via :meth:`place`, :meth:`TargetKind.space_paths`).

:func:`storbench.targets.kind_of` finds the kind of a :class:`~storbench.model.Target`.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from storbench.errors import SuiteError, TargetError
from storbench.model import Target, Workload
from storbench.units import fio_size, parse_size

if TYPE_CHECKING:
    from storbench.storage import StorageInfo

Options = list[tuple[str, "str | None"]]

_CONTROL_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def fio_filename(path: str) -> str:
    """A path as fio's ``filename`` option reads it: ``:`` escaped as ``\\:``.

    Raises :class:`TargetError` for paths a job file cannot carry.
    """
    if not path:
        raise TargetError("empty target path")
    if "\\" in path:
        raise TargetError(f"target path {path!r} contains '\\', which fio's filename option treats as an escape")
    if path != path.strip():
        raise TargetError(f"target path {path!r} starts or ends with spaces, which fio strips")
    if _CONTROL_RE.search(path) or ";" in path or "#" in path or "$" in path:
        raise TargetError(
            f"target path {path!r} contains a character fio job files cannot carry "
            "(line break, ';', '#' or '$'); use a path without it"
        )
    return path.replace(":", "\\:")



@dataclass(frozen=True)
class Placement:
    """Where one job's I/O goes: the options a kind adds (after the workload's), the files
    storbench creates and must remove, and notes for the job file's header comment."""

    options: tuple[tuple[str, str | None], ...] = ()
    test_files: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    #: environment fio needs (CEPH_CONF: fio's rbd engine has no option for the config file)
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ResolveContext:
    """What checking a target may depend on: the ``--destroy-data`` values, the workloads
    that will run on it (do they write?), and the results database (never written)."""

    destroy: tuple[str, ...] = ()
    workloads: tuple[Workload, ...] = field(default_factory=tuple)
    db_path: str | None = None
    #: ``--ceph-conf`` and ``--ceph-client`` (only Ceph kinds take them)
    ceph_conf: str | None = None
    ceph_client: str | None = None
    ceph_timeout_s: int | None = None


class TargetKind:
    """One kind of target.  Subclasses override what differs; the defaults fit a path
    that fio opens with ``filename=`` (a regular file or a block device)."""

    #: the :attr:`Target.kind` word
    name: str = ""
    #: ``--target`` prefixes that name this kind (URI kinds); empty for path kinds
    prefixes: tuple[str, ...] = ()
    #: the engine fio must use (the kind's own client: nbd, rbd, rados, gfapi); None: the workload's
    engine: str | None = None
    #: options only this kind sets (a workload setting them is refused)
    own_options: frozenset[str] = frozenset()
    #: a job here always gets a size (``--size``, the workload's, else the default size)
    needs_size: bool = False
    #: the I/O goes through the local filesystem (space, syncfs and the page cache apply)
    local_path: bool = True
    #: what the kind is, in a sentence ("an NBD export")
    noun: str = "a target"
    #: the test file lives where storbench cannot unlink it (a GlusterFS volume): removed with a fio job
    remote_test_file: bool = False
    #: files fio's engine writes outside the job's directory, removed when the run made them
    artifacts: tuple[str, ...] = ()
    #: a read fetches objects a write made, one per block (S3): storbench writes them before a
    #: workload that reads them runs (:func:`storbench.run.prepare.write_objects_first`)
    reads_need_objects: bool = False
    #: seconds past a time-based job's planned end after which its requests count as stuck and fio
    #: is stopped (a server that answers new connections but not the requests in flight); None: never
    request_stall_s: float | None = None
    #: options the kind's client cannot carry out, dropped from a job with a note saying why
    dropped_options: Mapping[str, str] = {}
    #: every host of a client/server run (``--host``) reaches this target's server itself: the
    #: server's address and all the job needs are in the job file each host is sent (S3); a kind
    #: without it cannot be given with ``--host`` (its client, configuration or bridge is here)
    hosts_reach: bool = False
    #: takes ``--ceph-conf``, ``--ceph-client`` and ``--ceph-timeout`` (a Ceph cluster under it)
    ceph_access: bool = False

    def claims(self, spec: str) -> bool:
        return bool(self.prefixes) and spec.startswith(self.prefixes)

    def resolve(self, spec: str, ctx: ResolveContext) -> Target:  # pragma: no cover - every kind overrides
        raise NotImplementedError

    def place(self, target: Target, options: Options, *, test_file_name: str, export_size: str | None) -> Placement:
        return Placement(options=(("filename", fio_filename(target.path)),))

    def explain_failure(self, target: Target, reason: str) -> str:
        """A failed job's one-line reason, with what the kind knows of its likely cause."""
        return reason

    def remove_remote(self, target: Target, names: Sequence[str]) -> bool:
        """Remove the test files ``names`` of a :attr:`remote_test_file` kind (edge); False: the
        runner removes them with a fio job (``unlink=1``, as for a GlusterFS volume)."""
        return False

    def describe_path(self, target: Target) -> str | None:
        """The path whose storage the description describes; None: nothing local to describe."""
        return target.path

    def describe(self, target: Target, fio_version: str | None) -> StorageInfo | None:
        """The storage description (:class:`storbench.storage.StorageInfo`) of ``target`` (edge)."""
        from storbench.storage import describe_target

        path = self.describe_path(target)
        return describe_target(path, fio_version=fio_version) if path is not None else None

    def serve(self, target: Target, size_bytes: int | None = None) -> contextlib.AbstractContextManager[None]:
        """What the kind keeps running while a run uses ``target`` (edge): an iSCSI LUN's or an NFS
        export's userspace bridge (an NFS test file of ``size_bytes``, the jobs' largest size);
        nothing for the others."""
        return contextlib.nullcontext()

    def server(self, target: Target) -> tuple[str, str, int] | None:
        """(the server in words, host, TCP port) of a target whose I/O hangs when that server dies
        (a userspace client that retries for ever): the runner watches it while fio runs
        (:mod:`storbench.run.serverwatch`); None for the others."""
        return None

    def space_paths(self, target: Target, test_files: Sequence[str]) -> tuple[list[str], str] | None:
        """(files to stat, directory whose filesystem's used space to read); None: not local."""
        import os

        return (list(test_files) or [target.path], os.path.dirname(target.path))


def capped_size(options: Options, export_size: str | None, what: str) -> list[str]:
    """Set an export's or image's size where no size is given, cap it where more is asked; the notes
    (``what``: "the NBD export's")."""
    if export_size is None:
        return []
    export = fio_size(export_size)
    current = next((v for k, v in options if k == "size"), None)
    if current is None:
        options.append(("size", export))
        return []
    if current.endswith("%"):
        return []
    if parse_size(current) > parse_size(export):
        for i, (k, _v) in enumerate(options):
            if k == "size":
                options[i] = ("size", export)
        return [f"size={current} capped at {what} size {export}"]
    return []


#: a target's parameter saying it is an existing file (a local one, or one of an NFS export): read
#: as it is, its size caps every workload, written only when named with ``--destroy-data``
EXISTING_FILE = "existing_file"


def is_existing_file(target: Target) -> bool:
    """Whether ``target`` is a file that is there already (never grown, never made or removed)."""
    return target.kind == "file" or target.param(EXISTING_FILE) == "1"


def refuse_unnamed_writes(spec: str, ctx: ResolveContext, what: str, harm: str = "destroying what it holds") -> list[str]:
    """The workloads that write to ``spec``; a one-line TargetError when there are some and
    ``--destroy-data`` does not repeat the target exactly (``what``: "NBD export 'nbd://...'")."""
    from storbench.targets.guard import workload_writes

    writing = [w.name for w in ctx.workloads if workload_writes(w.options)]
    if writing and spec not in ctx.destroy:
        named = f" (--destroy-data {ctx.destroy[0]!r} is not spelled as the target)" if ctx.destroy else ""
        many = len(writing) > 1
        raise TargetError(
            f"refusing to write to {what} [destroy-data]: workload{'s' if many else ''} {', '.join(writing)} "
            f"write{'' if many else 's'} to it, {harm}{named}; "
            f"pass --destroy-data {spec}, spelled exactly as --target (read-only workloads need nothing)"
        )
    return writing


def drop_for_kind(kind: TargetKind, options: Options) -> tuple[Options, list[str]]:
    """``options`` without those the kind's client cannot carry out (:attr:`TargetKind.dropped_options`),
    and one note for each dropped: ``end_fsync=1 dropped: ...``.  Pure."""
    kept: Options = []
    notes: list[str] = []
    for key, value in options:
        if key in kind.dropped_options and value not in (None, "0"):
            notes.append(f"{key}={value} dropped: {kind.dropped_options[key]}")
        else:
            kept.append((key, value))
    return kept, notes


def engine_for_kind(kind: TargetKind, workload: Workload, options: Options) -> tuple[Options, list[str]]:
    """``ioengine=<the kind's engine>`` in place of the workload's engine (or appended), with a
    note when one was replaced; a workload that sets an option the kind owns is refused."""
    assert kind.engine is not None
    for key, _ in options:
        if key in kind.own_options:
            raise SuiteError(
                f"workload {workload.name!r}: option {key!r} is set by storbench on an {kind.name.upper()} target "
                "(it decides where the I/O goes)"
            )
    notes: list[str] = []
    engines = [v for k, v in options if k == "ioengine"]
    replaced = [v for v in engines if v != kind.engine]
    if replaced:
        notes.append(
            f"ioengine={replaced[-1]} replaced by {kind.engine}: the target is {kind.noun}, fio's {kind.engine} engine is its client"
        )
    out = [(k, v) for k, v in options if k != "ioengine"]
    index = next((i for i, (k, _) in enumerate(options) if k == "ioengine"), None)
    if index is None:
        out.append(("ioengine", kind.engine))
    else:
        before = sum(1 for k, _ in options[:index] if k != "ioengine")
        out.insert(before, ("ioengine", kind.engine))
    return out, notes


#: where ``make install`` puts fio's external engines (tools/fio-engines.sh); the environment's
#: STORBENCH_FIO_ENGINES names another directory
ENGINES_DIR = os.path.join(sys.prefix, "lib", "storbench", "fio-engines")


def external_engine(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The path of fio's external engine ``fio-NAME.so`` (``libiscsi``, ``nfs``) where it was built; None: not here."""
    env = os.environ if environ is None else environ
    path = os.path.join(env.get("STORBENCH_FIO_ENGINES") or ENGINES_DIR, f"fio-{name}.so")
    return path if os.path.isfile(path) else None


def check_uri_text(what: str, text: str) -> None:
    """A URI or name that goes into a job file line: no control characters, ``;``, ``#``, ``$`` or spaces."""
    if _CONTROL_RE.search(text) or any(c in text for c in ";#$ ") or text.lstrip().startswith(("[", "]")):
        raise TargetError(f"{what} {text!r} holds a character a fio job file cannot carry (';', '#', '$', a space or a control character)")
