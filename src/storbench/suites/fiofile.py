"""A user's fio job file (``storbench run --job-file FILE.fio``) read as fio reads it, as a suite.

fio's job file syntax, as fio 3.33 reads it (``init.c``'s ``__parse_jobs_ini``, ``parse.c``):

* a line whose first non-blank character is ``;`` or ``#`` is a comment; on an option line
  everything from the first ``;`` or ``#`` on is too (``numjobs=4 ; four threads``);
* ``[NAME]`` starts a job section; a section whose name starts with ``global`` holds defaults for
  every job section *after* it (several ``[global]`` sections add up, a later value replacing an
  earlier one); a job's own options replace the defaults';
* ``key=value`` or a bare ``key`` (an on/off option set on); ``include FILE`` reads the options of
  another file into the section (relative to the job file when not found as given; no sections);
* ``${VAR}`` is replaced by the environment's ``VAR``; ``$ncpus``, ``$mb_memory`` and
  ``$pagesize`` are fio's own and stay for fio.

fio starts every job of a file at once, except that a job with ``stonewall`` (its alias
``wait_for_previous``) waits for every job before it, and one with ``wait_for=NAME`` for that
job.  So each run of jobs between two such boundaries is one **workload** here, run in one fio
process as fio runs it: a lone job is a workload named after its section; several jobs are one
workload (``file1..file4``) whose figures are the group's (IOPS and bandwidth summed, the p99 of
the jobs' merged histograms).  ``new_group`` only changes fio's reporting groups: those jobs still
run together, and stay one workload.

Where the I/O goes is the target's, with the guard's rules: ``filename``, ``directory``,
``filename_format``, ``opendir``, ``name`` and ``unique_filename`` are replaced; ``unlink`` and
fio's log and output options are storbench's (it removes its own files and writes fio's
per-second logs itself).  Each such option is left out and said, in one note per option
(:attr:`JobFile.notes`).  What storbench cannot honour is refused in one line naming the file,
the line and why: programs run by the file (``exec_prerun``, ``ioengine=exec``), a replayed log
(``read_iolog``: ``storbench trace import`` and ``run --replay`` do that), engines that do no I/O
on a file or device (``net``, ``cpuio``, ``rdma``, ...), ``kb_base``/``unit_base``, an option
fio 3.33 does not have, and values fio would read differently from the text (line breaks, ``$``).

Pure: the caller reads the files (``read``) and gives the environment.

May import: model, metrics, units, errors, jobs and the suites package; never run or commands.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from storbench.errors import SuiteError
from storbench.jobs.jobfile import WHERE_KEYS, unsafe_key_reason, unsafe_value_reason
from storbench.metrics import default_headline
from storbench.model import Suite, Workload

from . import NAME_MAX, did_you_mean, fio_option_table

Options = tuple[tuple[str, str | None], ...]

#: options that say where the I/O goes or what fio writes: left out (the target and storbench
#: decide), each said once with why
REPLACED: Mapping[str, str] = {
    **{k: "replaced by the target (storbench decides where the I/O goes)" for k in WHERE_KEYS},
    "unique_filename": "replaced by the target (storbench decides where the I/O goes)",
    "unlink": "left out: storbench removes the test files it made (and never a file it did not)",
    "unlink_each_loop": "left out: storbench removes the test files it made (and never a file it did not)",
    **{k: "left out: storbench writes fio's per-second logs itself"
       for k in ("write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log", "write_iolog")},
    "output": "left out: storbench reads fio's JSON output itself",
    "output-format": "left out: storbench reads fio's JSON output itself",
}  # fmt: skip
#: options that make a file something storbench cannot run as it is, with why
REFUSED: Mapping[str, str] = {
    "exec_prerun": "runs a program; storbench runs I/O workloads only",
    "exec_postrun": "runs a program; storbench runs I/O workloads only",
    "read_iolog": "replays an I/O log: import it with 'storbench trace import' and run it with 'storbench run --replay'",
    "merge_blktrace_file": "replays a blktrace: import it with 'storbench trace import' and run it with 'storbench run --replay'",
    "replay_redirect": "replays an I/O log: import it with 'storbench trace import' and run it with 'storbench run --replay'",
    "kb_base": "storbench reads sizes with fio's default kb_base=1024",
    "unit_base": "storbench reads fio's results in bytes (unit_base's default)",
}
#: engines that do I/O on a file or a device (the target's); a job file naming another is refused
FILE_ENGINES: frozenset[str] = frozenset({
    "sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio", "mmap", "splice",
    "null", "falloc", "ftruncate", "filecreate", "filestat", "filedelete", "e4defrag",
})  # fmt: skip
#: options of fio's profiles (``profile=tiobench``, ``profile=act``) that fio reads in any job and
#: that do nothing without their profile (``threads=1`` in fio's own waitfor.fio): left out, said
PROFILE_OPTIONS: Mapping[str, str] = {
    **{k: "tiobench" for k in ("block", "numruns", "dir", "threads")},
    **{k: "act" for k in ("device-names", "load", "test-duration", "threads-per-queue", "read-req-num-512-blocks",
                          "large-block-op-kbytes", "prep")},
}  # fmt: skip
#: engines that are a target kind's own (the kind sets them and their options), with the target to give
TARGET_ENGINES: Mapping[str, str] = {
    "rbd": "rbd://POOL/IMAGE", "rados": "rados://POOL", "gfapi": "gluster://HOST/VOLUME",
    "gfapi_async": "gluster://HOST/VOLUME", "nbd": "nbd://HOST/EXPORT", "libiscsi": "iscsi://HOST/IQN/LUN",
    "nfs": "nfs://HOST/EXPORT?client=fio", "http": "s3://BUCKET?endpoint=URL",
}  # fmt: skip
#: the options that end one group of jobs run together (each is left out of the job text: the
#: workloads' order keeps what they say)
BOUNDARY_KEYS: frozenset[str] = frozenset({"stonewall", "wait_for_previous", "wait_for"})
#: how deep ``include`` may nest (fio has no limit; a file including itself would never end)
INCLUDE_DEPTH = 8

_ENV_RE = re.compile(r"\$\{([^}]*)\}")
_SECTION_RE = re.compile(r"^\[(.+)\]$")


@dataclass(frozen=True)
class JobFile:
    """A fio job file as storbench runs it: its suite and what was left out or replaced."""

    suite: Suite
    #: one line per option storbench replaced or left out (``FILE:LINE: directory=/data1 replaced by the target ...``)
    notes: tuple[str, ...]


@dataclass(frozen=True)
class _Line:
    label: str  # the file the line is in (the job file, or one it includes)
    number: int
    text: str


@dataclass
class _Section:
    name: str
    line: _Line
    is_global: bool
    options: list[tuple[str, str | None, _Line]]


def _fail(line: _Line, problem: str) -> SuiteError:
    return SuiteError(f"{line.label}:{line.number}: {problem}")


def _content(text: str) -> str:
    """A line without its comment (from the first ``;`` or ``#``) and blanks, as fio strips it."""
    cut = min((i for i in (text.find(";"), text.find("#")) if i >= 0), default=len(text))
    return text[:cut].strip()


def _lines(label: str, text: str, read: Callable[[str, str], tuple[str, str]], depth: int = 0) -> list[_Line]:
    """The meaningful lines of ``text`` with ``include`` lines replaced by the included file's."""
    out: list[_Line] = []
    for number, raw in enumerate(text.splitlines(), 1):
        body = _content(raw)
        if not body:
            continue
        line = _Line(label, number, body)
        if body.startswith("include") and (body == "include" or body[len("include")].isspace()):
            name = body[len("include") :].strip()
            if not name:
                raise _fail(line, "include names no file")
            if depth >= INCLUDE_DEPTH:
                raise _fail(line, f"include nests deeper than {INCLUDE_DEPTH} files (does a file include itself?)")
            included_label, included = read(name, label)
            for inner in _lines(included_label, included, read, depth + 1):
                if inner.text.startswith("["):
                    raise _fail(inner, "an included file may hold options only, not a [section] (as fio says)")
                out.append(inner)
            continue
        out.append(line)
    return out


def _expand(line: _Line, value: str, environ: Mapping[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in environ:
            raise _fail(line, f"{value!r} uses ${{{name}}}, which is not set in the environment (fio would read it as empty)")
        return environ[name]

    return _ENV_RE.sub(one, value)


def _option(line: _Line, environ: Mapping[str, str]) -> tuple[str, str | None]:
    key, eq, value = line.text.partition("=")
    key = key.strip()
    reason = unsafe_key_reason(key)
    if reason:
        raise _fail(line, f"{key!r} {reason}")
    if not eq:
        return key, None
    return key, _expand(line, value.strip(), environ)


def _checked_value(key: str, value: str | None, line: _Line) -> str | None:
    if value is None:
        return None
    reason = unsafe_value_reason(value)
    if reason:
        raise _fail(line, f"{key}: value {value!r} {reason}")
    if not value:
        raise _fail(line, f"{key}: the value is empty")
    return value


def _sections(lines: list[_Line], environ: Mapping[str, str]) -> list[_Section]:
    sections: list[_Section] = []
    for line in lines:
        if line.text.startswith("["):
            m = _SECTION_RE.match(line.text)
            if not m or not m.group(1).strip():
                raise _fail(line, f"{line.text!r} is not a [section] line")
            name = m.group(1).strip()
            sections.append(_Section(name, line, name.startswith("global"), []))
            continue
        if not sections:
            raise _fail(line, f"option {line.text!r} outside of a [section] (fio says the same)")
        key, value = _option(line, environ)
        sections[-1].options.append((key, value, line))
    return sections


def _set(options: list[tuple[str, str | None, _Line]], key: str, value: str | None, line: _Line) -> None:
    for i, (k, _, _) in enumerate(options):
        if k == key:
            options[i] = (key, value, line)
            return
    options.append((key, value, line))


def _canonical(key: str, line: _Line) -> str:
    table = fio_option_table()
    opt = table.get(key)
    if opt is None and key in PROFILE_OPTIONS:
        return key
    if opt is None:
        raise _fail(line, f"unknown fio option {key!r}{did_you_mean(key, table.options)} "
                          "(storbench knows fio 3.33's options: 'fio --cmdhelp=all')")  # fmt: skip
    return opt.canonical


def _slug(name: str) -> str:
    s = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-._")
    return s[:NAME_MAX] or "job"


def _unique(name: str, taken: set[str]) -> str:
    out, n = name, 2
    while out in taken or out == "global":
        suffix = f"-{n}"
        out = name[: NAME_MAX - len(suffix)] + suffix
        n += 1
    taken.add(out)
    return out


def _is_on(value: str | None) -> bool:
    return value is None or value.strip() not in ("0", "")


def parse_job_file_text(
    text: str,
    label: str,
    *,
    environ: Mapping[str, str],
    read: Callable[[str, str], tuple[str, str]] | None = None,
) -> JobFile:
    """``text`` (the job file ``label``) as a suite of workloads, one per group of jobs fio runs
    together.  ``read(name, from_label)`` gives an included file's label and text (refused when
    None).  Raises :class:`SuiteError` in one line naming the file and line."""

    def no_include(name: str, from_label: str) -> tuple[str, str]:
        raise SuiteError(f"{from_label}: include {name}: includes are not read here")

    sections = _sections(_lines(label, text, read or no_include), environ)
    defaults: list[tuple[str, str | None, _Line]] = []
    jobs: list[tuple[_Section, list[tuple[str, str | None, _Line]]]] = []
    for section in sections:
        target = defaults if section.is_global else list(defaults)
        for key, value, line in section.options:
            _set(target, key, value, line)
        if not section.is_global:
            jobs.append((section, target))
    if not jobs:
        first = sections[0].line if sections else _Line(label, 1, "")
        raise _fail(first, "defines no job section (only [global] ones, or nothing): fio would run nothing")

    said: dict[str, str] = {}
    taken: set[str] = set()
    groups: list[list[tuple[str, Options, _Section]]] = []
    for section, merged in jobs:
        for key, value, line in merged:  # the engine first: its options are unknown to fio without it
            if key == "ioengine" and value is not None:
                _check_engine(value.strip(), line)
        options: list[tuple[str, str | None]] = []
        boundary = not groups
        for key, value, line in merged:
            canonical = _canonical(key, line)
            if canonical in BOUNDARY_KEYS:
                boundary = boundary or (canonical == "wait_for" or _is_on(value))
                continue
            if canonical == "profile":
                raise _fail(line, f"profile={value}: fio's profiles write jobs of their own; give the jobs themselves")
            if canonical in PROFILE_OPTIONS:
                shown = key if value is None else f"{key}={value}"
                said.setdefault(canonical, f"{line.label}:{line.number}: {shown} left out: an option of fio's "
                                           f"{PROFILE_OPTIONS[canonical]} profile, which does nothing without "
                                           f"profile={PROFILE_OPTIONS[canonical]}{did_you_mean(key, fio_option_table().options)}")
                continue
            if canonical in REFUSED or key in REFUSED:
                raise _fail(line, f"{key}: {REFUSED.get(canonical) or REFUSED[key]}")
            if canonical in REPLACED or key in REPLACED:
                shown = key if value is None else f"{key}={value}"
                said.setdefault(canonical, f"{line.label}:{line.number}: {shown} {REPLACED.get(canonical) or REPLACED[key]}")
                continue
            value = _checked_value(key, value, line)
            options.append((key, value))
        name = _unique(_slug(section.name), taken)
        if boundary:
            groups.append([])
        groups[-1].append((name, tuple(options), section))

    workloads = tuple(_workload(group, label) for group in groups)
    stem = re.sub(r"^.*/", "", label)
    suite = Suite(
        name=_slug(stem),
        description=f"fio job file {label}: {len(jobs)} job{'s' if len(jobs) != 1 else ''} in "
                    f"{len(workloads)} workload{'s' if len(workloads) != 1 else ''} (each a group of jobs fio runs together)",
        workloads=workloads,
        origin=label,
    )  # fmt: skip
    return JobFile(suite=suite, notes=tuple(said.values()))


def _check_engine(engine: str, line: _Line) -> None:
    if engine in FILE_ENGINES:
        return
    if engine in TARGET_ENGINES:
        raise _fail(line, f"ioengine={engine} is the engine of storbench's {TARGET_ENGINES[engine].split(':')[0]}:// targets, "
                          f"which set it and its options: leave them out of the job file and give --target {TARGET_ENGINES[engine]}")  # fmt: skip
    why = "runs programs" if engine == "exec" else "does no I/O on a file or device (the target)"
    if engine.startswith("external:"):
        why = "is an external engine storbench cannot vouch for"
    raise _fail(line, f"ioengine={engine} {why}: storbench runs a job file on its target with an engine that does "
                      f"file or block I/O ({', '.join(sorted(FILE_ENGINES))})")  # fmt: skip


def _workload(group: list[tuple[str, Options, _Section]], label: str) -> Workload:
    (name, options, section), rest = group[0], group[1:]
    if not rest:
        return Workload(
            name=name, description=f"[{section.name}] of {label} (line {section.line.number})",
            options=options, headline=default_headline(options), origin=label,
        )  # fmt: skip
    whole = f"{name}..{rest[-1][0]}"
    if len(whole) > NAME_MAX:
        whole = f"{name[: NAME_MAX - 8]}..{len(group)}-jobs"
    listed = ", ".join(f"[{s.name}]" for _, _, s in group)
    return Workload(
        name=whole,
        description=f"{len(group)} jobs of {label} fio runs together (line {section.line.number}): {listed}",
        options=options, headline=default_headline(options), origin=label,
        sections=tuple((n, o) for n, o, _ in group),
    )  # fmt: skip


__all__ = ["BOUNDARY_KEYS", "FILE_ENGINES", "REFUSED", "REPLACED", "JobFile", "parse_job_file_text"]
