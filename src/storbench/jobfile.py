"""Workload + target + overrides -> the exact fio job file text.  Pure: no I/O.

One job file holds one job section, named after the workload, with no
``[global]`` section::

    [gitlab]
    randrepeat=1
    ...
    size=16G
    filename=/mnt/pool/storbench.testfile

Options keep the workload's order; overrides replace values in place (so the
option stays where the workload put it) and options the workload lacks are
appended; ``filename`` always comes last.

Where the I/O goes (``filename``):

* ``dir`` target: ``<dir>/<test_file_name>``.  Every workload of a run on one
  target uses this one file, so fio lays it out once and later workloads reuse
  it; with ``numjobs`` > 1 all clones share it too.  It is listed in
  :attr:`JobSpec.test_files` for the runner to remove.  A job on a ``dir``
  target always has a ``size``: ``--size`` if given, else the workload's own,
  else ``default_size``.
* ``file`` target: the file itself, never listed for removal.  ``default_size``
  is not added (fio uses the file's size); a workload's own size is kept (fio
  extends a smaller file to it).
* ``block`` target: the device.  As for ``file``; a size limits the region of
  the device used.
* ``nbd`` target (``Target(kind="nbd", path=SOCKET)``): an NBD export served on a
  unix socket (qemu-nbd, see :mod:`storbench.images`).  fio reaches it with its
  own NBD client, so the job gets ``ioengine=nbd`` and
  ``uri=nbd+unix:///?socket=SOCKET`` instead of ``filename`` (no kernel nbd
  module is involved).  Whatever engine the workload names is replaced by
  ``nbd`` -- the engine is the NBD client here, not a choice of the workload --
  and the job text starts with a ``#`` comment line saying so.  The size is the
  export's size (``export_size``, the image size) where the workload and
  ``--size`` name none, and is capped at it where they name more (with a
  comment line too).  A workload may not set ``uri`` itself.

``--size`` (``Overrides.size``) replaces the workload's size on every kind of
target and is added where the workload has none; ``--runtime`` does the same
for ``runtime`` (or its alias ``timeout``).  ``Overrides.extra`` options replace
a same-named option in place or are appended.

Size consistency: built-in suites give all their workloads the same size, so
the shared test file is laid out once.  In a user suite whose workloads name
different sizes, fio extends the file for a workload that needs more than is
there (the later, larger workload pays the layout); a smaller size uses the
start of the file.  ``--size`` gives every workload the same size.

fio's ``filename`` uses ``:`` to separate several files, so a ``:`` in a path is
written ``\\:``.  Text fio would misread (line breaks, ``;`` and ``#`` which
start comments, ``$`` which fio expands) never reaches a job file: values are
validated when suites load (:mod:`storbench.suites`), and checked here again.
"""

from __future__ import annotations

import posixpath
import re

from storbench.errors import SuiteError, TargetError
from storbench.model import JobSpec, Overrides, Target, Workload
from storbench.units import fio_duration, fio_size, parse_duration, parse_size

DEFAULT_TEST_FILE_NAME = "storbench.testfile"
#: Kinds of :class:`~storbench.model.Target` a job can be built for.
TARGET_KINDS: tuple[str, ...] = ("dir", "file", "block", "nbd")

#: Names of fio's runtime option (``timeout`` is its alias).
RUNTIME_KEYS: tuple[str, ...] = ("runtime", "timeout")
#: Options that say where the I/O goes; only this module sets them.
WHERE_KEYS: frozenset[str] = frozenset({"filename", "directory", "filename_format", "opendir", "name"})

_OPTION_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
#: A workload name, optionally with a sweep point suffix (``rnd4k@bs=64k,iodepth=4``, see storbench.sweep)
SWEEP_VALUE_RE = re.compile(r"^[A-Za-z0-9._%:/-]+$")
_SECTION_NAME_RE = re.compile(
    r"^[a-z0-9][a-z0-9._-]{0,63}(@[a-z0-9_]+=[A-Za-z0-9._%:/-]+(,[a-z0-9_]+=[A-Za-z0-9._%:/-]+)*)?$"
)
_ENGINE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
#: fio's own ``$`` keywords, substituted in any option value.
FIO_KEYWORDS: tuple[str, ...] = ("$ncpus", "$mb_memory", "$pagesize")


def unsafe_text_reason(text: str) -> str | None:
    """Why ``text`` cannot appear in a fio job file line, or ``None`` when it can.

    fio reads job files line by line, ends a line's content at ``;`` or ``#``
    (comments) and expands ``${VAR}`` and ``$ncpus``-style keywords.
    """
    if _CONTROL_RE.search(text):
        return "contains a line break or control character (fio job files are line based)"
    if ";" in text or "#" in text:
        return "contains ';' or '#', which start a comment in a fio job file (fio would drop the rest)"
    stripped = text
    for keyword in FIO_KEYWORDS:
        stripped = stripped.replace(keyword, "")
    if "$" in stripped:
        return "contains '$', which fio expands (environment variables); write the value literally"
    return None


def unsafe_value_reason(value: str) -> str | None:
    """Why ``value`` cannot be an option value in a job file, or ``None``."""
    reason = unsafe_text_reason(value)
    if reason:
        return reason
    if value.lstrip().startswith(("[", "]")):
        return "starts with '[' or ']' (fio job section syntax)"
    return None


def unsafe_key_reason(key: str) -> str | None:
    """Why ``key`` cannot be an option name in a job file, or ``None``."""
    if not _OPTION_NAME_RE.match(key):
        return "is not a fio option name (lower-case letters, digits, '_' and '-' only)"
    return None


def render_job_text(name: str, options: tuple[tuple[str, str | None], ...] | list[tuple[str, str | None]]) -> str:
    """One job section: ``[name]`` then ``key=value`` lines (``key`` alone for a ``None`` value).

    Raises :class:`SuiteError` for a name, key or value that could change the
    job file's structure (defence in depth: suites are validated on load).
    """
    if not _SECTION_NAME_RE.match(name) or name == "global":
        raise SuiteError(f"job name {name!r} cannot be a fio job section name")
    lines = [f"[{name}]"]
    for key, value in options:
        reason = unsafe_key_reason(key)
        if reason:
            raise SuiteError(f"job {name!r}: option {key!r} {reason}")
        if value is None:
            lines.append(key)
            continue
        if not isinstance(value, str):
            raise SuiteError(f"job {name!r}: option {key!r} has a non-text value {value!r}")
        reason = unsafe_value_reason(value)
        if reason:
            raise SuiteError(f"job {name!r}: value of {key!r} {reason}")
        lines.append(f"{key}={value}")
    return "\n".join(lines) + "\n"


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


def _set(options: list[tuple[str, str | None]], keys: tuple[str, ...], key: str, value: str | None) -> None:
    """Replace the first option named one of ``keys`` in place (keeping its spelling), else append ``key``."""
    for i, (k, _) in enumerate(options):
        if k in keys:
            options[i] = (k, value)
            return
    options.append((key, value))


def _has(options: list[tuple[str, str | None]], key: str) -> bool:
    return any(k == key for k, _ in options)


#: Waits before the measured part of a job; ``--runtime`` scales them with the runtime.
WARMUP_KEYS: tuple[str, ...] = ("ramp_time", "startdelay")


def _scale_warmup(options: list[tuple[str, str | None]], new_runtime: str) -> None:
    """Scale ``ramp_time``/``startdelay`` by new runtime / workload runtime.

    A 20 s pts/fio job with a 5 s ramp run with ``--runtime 1s`` gets a 0.25 s
    ramp, so a scaled-down study keeps the workload's proportions instead of
    spending most of its time warming up.  Without a workload runtime they are kept.
    """
    old = next((v for k, v in options if k in RUNTIME_KEYS and v), None)
    if old is None:
        return
    old_s, new_s = parse_duration(old), parse_duration(new_runtime)
    if old_s <= 0 or new_s >= old_s:
        return
    for i, (key, value) in enumerate(options):
        if key in WARMUP_KEYS and value:
            scaled_ms = round(parse_duration(value) * new_s / old_s * 1000)
            options[i] = (key, f"{scaled_ms}ms")


def build_job(
    workload: Workload,
    target: Target,
    overrides: Overrides | None = None,
    *,
    ioengine: str | None = None,
    test_file_name: str = DEFAULT_TEST_FILE_NAME,
    export_size: str | None = None,
) -> JobSpec:
    """The fio job for ``workload`` on ``target``, scaled by ``overrides``.

    ``ioengine`` replaces ``ioengine=auto`` in the workload (the runner probes
    which engine works, see :func:`storbench.engines.probe_ioengine`); it is
    ignored for workloads that name their engine.  ``export_size`` is the size
    of an ``nbd`` target's export (ignored for other kinds).  Deterministic: the
    same inputs give the same text.
    """
    overrides = overrides or Overrides()
    if target.kind not in TARGET_KINDS:
        raise ValueError(f"unknown target kind {target.kind!r} (expected dir, file, block or nbd)")
    if not target.path:
        raise TargetError("empty target path")
    options: list[tuple[str, str | None]] = list(workload.options)
    for key, _ in options:
        if key in WHERE_KEYS:
            raise SuiteError(
                f"workload {workload.name!r}: option {key!r} is set by storbench (it decides where the I/O goes)"
            )

    notes: list[str] = []
    if target.kind == "nbd":
        options, notes = _nbd_engine(workload, options)
    for i, (key, value) in enumerate(options):
        if key == "ioengine" and value == "auto":
            if ioengine is None:
                raise ValueError(
                    f"workload {workload.name!r} uses ioengine=auto: pass the probed engine as ioengine="
                )
            if not _ENGINE_RE.match(ioengine) or ioengine == "auto":
                raise ValueError(f"invalid ioengine {ioengine!r}")
            options[i] = (key, ioengine)

    if overrides.size is not None:
        _set(options, ("size",), "size", fio_size(overrides.size))
    elif target.kind == "dir" and not _has(options, "size"):
        options.append(("size", fio_size(overrides.default_size)))

    if overrides.runtime is not None:
        _scale_warmup(options, overrides.runtime)
        _set(options, RUNTIME_KEYS, "runtime", fio_duration(overrides.runtime))

    for key, value in overrides.extra:
        if key in WHERE_KEYS:
            raise SuiteError(f"extra fio option {key!r} is set by storbench (it decides where the I/O goes)")
        _set(options, (key,), key, value)

    test_files: tuple[str, ...] = ()
    if target.kind == "nbd":
        notes += _nbd_size(options, export_size)
        options.append(("uri", nbd_uri(target.path)))
    elif target.kind == "dir":
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", test_file_name):
            raise ValueError(f"invalid test file name {test_file_name!r}")
        path = posixpath.join(target.path, test_file_name)
        test_files = (path,)
        options.append(("filename", fio_filename(path)))
    else:
        options.append(("filename", fio_filename(target.path)))

    frozen = tuple(options)
    comments = "".join(f"# storbench: {note}\n" for note in notes)
    return JobSpec(
        workload=workload,
        target=target,
        job_text=comments + render_job_text(workload.name, frozen),
        test_files=test_files,
        options=frozen,
    )


# --------------------------------------------------------------------------- nbd targets


def nbd_uri(socket_path: str) -> str:
    """fio's ``uri`` for an NBD export on a unix socket (the default, unnamed export)."""
    if not socket_path.startswith("/"):
        raise TargetError(f"NBD socket {socket_path!r} must be an absolute path")
    if _CONTROL_RE.search(socket_path) or any(c in socket_path for c in ";#$&?% "):
        raise TargetError(f"NBD socket path {socket_path!r} holds a character an NBD URI or a fio job file cannot carry")
    return f"nbd+unix:///?socket={socket_path}"


def _nbd_engine(
    workload: Workload, options: list[tuple[str, str | None]]
) -> tuple[list[tuple[str, str | None]], list[str]]:
    """``ioengine=nbd`` in place of the workload's engine (or appended), with a note when one was replaced."""
    notes: list[str] = []
    if any(k == "uri" for k, _ in options):
        raise SuiteError(
            f"workload {workload.name!r}: option 'uri' is set by storbench on an NBD target (it decides where the I/O goes)"
        )
    engines = [v for k, v in options if k == "ioengine"]
    replaced = [v for v in engines if v != "nbd"]
    if replaced:
        notes.append(f"ioengine={replaced[-1]} replaced by nbd: the target is an NBD export, fio's nbd engine is its client")
    out = [(k, v) for k, v in options if k != "ioengine"]
    # keep the engine where the workload put it
    index = next((i for i, (k, _) in enumerate(options) if k == "ioengine"), None)
    if index is None:
        out.append(("ioengine", "nbd"))
    else:
        before = sum(1 for k, _ in options[:index] if k != "ioengine")
        out.insert(before, ("ioengine", "nbd"))
    return out, notes


def _nbd_size(options: list[tuple[str, str | None]], export_size: str | None) -> list[str]:
    """The export's size where no size is given; capped at it where more is asked."""
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
        _set(options, ("size",), "size", export)
        return [f"size={current} capped at the NBD export's size {export}"]
    return []
