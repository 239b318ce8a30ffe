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
  unix socket (qemu-nbd, see :mod:`storbench.study.images`).  fio reaches it with its
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

import re

from storbench.errors import SuiteError, TargetError
from storbench.model import JobSpec, Overrides, Target, Workload
from storbench.targets import (
    Placement,
    TargetKind,
    drop_for_kind,
    engine_for_kind,
    fio_filename,  # noqa: F401  (re-exported: hosts, tests)
    kind_names,
    kind_of,
)
from storbench.targets.nbd import nbd_uri  # noqa: F401  (re-exported: images, tests)
from storbench.units import fio_duration, fio_size, parse_duration

DEFAULT_TEST_FILE_NAME = "storbench.testfile"
#: Kinds of :class:`~storbench.model.Target` a job can be built for (see :mod:`storbench.targets`).
TARGET_KINDS: tuple[str, ...] = kind_names()

#: Names of fio's runtime option (``timeout`` is its alias).
RUNTIME_KEYS: tuple[str, ...] = ("runtime", "timeout")
#: Options that say where the I/O goes; only this module sets them.
WHERE_KEYS: frozenset[str] = frozenset({"filename", "directory", "filename_format", "opendir", "name", "replay_redirect"})

#: engines that reach one export or image whatever file a replayed log names (no redirect needed)
REPLAY_OWN_ENGINES: frozenset[str] = frozenset({"nbd", "rbd"})

_OPTION_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
#: A workload name, optionally with a sweep point suffix (``rnd4k@bs=64k,iodepth=4``, see storbench.suites.sweep)
SWEEP_VALUE_RE = re.compile(r"^[A-Za-z0-9._%:/-]+$")
_SECTION_NAME_RE = re.compile(
    r"^[a-z0-9][a-z0-9._-]{0,63}(@[a-z0-9_]+=[A-Za-z0-9._%:/-]+(,[a-z0-9_]+=[A-Za-z0-9._%:/-]+)*)?$"
)
_ENGINE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
#: fio's own ``$`` keywords, substituted in any option value.
FIO_KEYWORDS: tuple[str, ...] = ("$ncpus", "$mb_memory", "$pagesize")
#: what storbench itself writes with a ``$``: an S3 target's per-clone key base (``filename_format``,
#: a where-option no workload may set) and its credentials, which fio reads from its environment so
#: that no job file holds them (:mod:`storbench.targets.s3`)
STORBENCH_KEYWORDS: tuple[str, ...] = ("$jobname", "$jobnum", "${STORBENCH_SECRET_S3_KEYID}", "${STORBENCH_SECRET_S3_KEY}")


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
    for keyword in (*STORBENCH_KEYWORDS, *FIO_KEYWORDS):
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


def in_every_section(job_text: str, lines: list[str] | tuple[str, ...]) -> str:
    """``job_text`` with ``lines`` (``key=value``) at the end of each of its job sections: a job
    file's group of jobs (:attr:`Workload.sections`) has several, and each must get them."""
    out: list[str] = []
    seen = False
    for line in job_text.rstrip("\n").split("\n"):
        if line.startswith("["):
            if seen:
                while out and not out[-1]:
                    out.pop()
                out.extend(lines)
                out.append("")
            seen = True
        out.append(line)
    out.extend(lines)
    return "\n".join(out) + "\n"


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
    which engine works, see :func:`storbench.run.engines.probe_ioengine`); it is
    ignored for workloads that name their engine.  ``export_size`` is the size
    of an ``nbd`` target's export (ignored for other kinds).  Deterministic: the
    same inputs give the same text.
    """
    overrides = overrides or Overrides()
    kind = kind_of(target)
    if not target.path:
        raise TargetError("empty target path")
    sections = workload.sections or ((workload.name, workload.options),)
    options, notes, placed = _section(workload, sections[0][1], kind, target, overrides, ioengine, test_file_name, export_size)
    if _has(options, "read_iolog"):
        # a replayed trace: every request of the log goes where the job's file is, or, for an engine
        # that reaches one export or image whatever the file (nbd, rbd), there
        where = next((v for k, v in placed.options if k == "filename"), None)
        engine = next((v for k, v in options if k == "ioengine"), None)
        if where is not None and "\\:" not in where:
            options.append(("replay_redirect", where))
        elif engine not in REPLAY_OWN_ENGINES:
            raise TargetError(
                f"workload {workload.name!r} replays a trace, which fio sends to one file, device, export or image "
                f"(replay_redirect): a {target.kind} target is none; replay onto a block device, a file, a directory, "
                "an NBD export, an iSCSI LUN or an RBD image"
            )
    test_files = placed.test_files
    body = render_job_text(sections[0][0], tuple(options))
    built = [tuple(options)]
    for name, section_options in sections[1:]:  # a job file's jobs that fio runs together
        more, more_notes, more_placed = _section(workload, section_options, kind, target, overrides, ioengine, test_file_name, export_size)
        notes += [n for n in more_notes if n not in notes]
        test_files += tuple(f for f in more_placed.test_files if f not in test_files)
        body += "\n" + render_job_text(name, tuple(more))
        built.append(tuple(more))

    frozen = tuple(options)
    comments = "".join(f"# storbench: {note}\n" for note in notes)
    return JobSpec(
        workload=workload,
        target=target,
        job_text=comments + body,
        test_files=test_files,
        options=frozen,
        env=placed.env,
        sections=tuple(built) if len(built) > 1 else (),
    )


def _section(
    workload: Workload,
    section_options: tuple[tuple[str, str | None], ...],
    kind: TargetKind,
    target: Target,
    overrides: Overrides,
    ioengine: str | None,
    test_file_name: str,
    export_size: str | None,
) -> tuple[list[tuple[str, str | None]], list[str], Placement]:
    """One job section's options made concrete for ``target`` (the kind's engine, ``ioengine=auto``
    resolved, ``--size``/``--runtime``/extra options, where the I/O goes), its notes, its placement."""
    options: list[tuple[str, str | None]] = list(section_options)
    for key, _ in options:
        if key in WHERE_KEYS:
            raise SuiteError(
                f"workload {workload.name!r}: option {key!r} is set by storbench (it decides where the I/O goes)"
            )

    notes: list[str] = []
    if kind.engine is not None:
        options, notes = engine_for_kind(kind, workload, options)
    if kind.dropped_options:
        options, dropped = drop_for_kind(kind, options)
        notes += dropped
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
    elif kind.needs_size and not _has(options, "size"):
        options.append(("size", fio_size(overrides.default_size)))

    if overrides.runtime is not None:
        _scale_warmup(options, overrides.runtime)
        _set(options, RUNTIME_KEYS, "runtime", fio_duration(overrides.runtime))

    for key, value in overrides.extra:
        if key in WHERE_KEYS:
            raise SuiteError(f"extra fio option {key!r} is set by storbench (it decides where the I/O goes)")
        _set(options, (key,), key, value)

    placed = kind.place(target, options, test_file_name=test_file_name, export_size=export_size)
    options.extend(placed.options)
    return options, notes + list(placed.notes), placed
