"""Workloads and suites as TOML data: the built-in ones and the user's, loaded and validated.

Where things are: each built-in suite is one ``*.toml`` file beside this module
(``quick.toml`` is the default suite, ``fs-compare.toml`` holds the ``gitlab``
workload, ...).  ``fio_options.txt`` lists every option fio 3.33 accepts.

The file format (built-in and user files alike)::

    [workload.my-randread]
    description = "4k random read, 16 deep"
    headline = "iops"      # optional: iops | bw | lat
    fio = { rw = "randread", bs = "4k", iodepth = 16, direct = 1, ioengine = "libaio", runtime = 30, time_based = true }

    [suite.mine]
    description = "what this suite models"
    workloads = ["my-randread", "gitlab"]   # may name built-in workloads too

``fio`` options keep their order.  Values become fio's text:

* ``true`` / ``false`` become ``1`` / ``0``.  fio 3.33 accepts 0/1 for every
  boolean option, including the flag-style ones (``time_based``,
  ``group_reporting``, ``refill_buffers``), and honours ``0`` (checked with real
  fio: ``time_based=0`` runs untimed, ``group_reporting=0`` reports each job);
  it rejects the words ``true``/``false``.  So ``time_based = true`` is written
  ``time_based=1``, which fio treats exactly like the bare flag.
* sizes (``size``, ``bs``, ``filesize``, ``offset``, ...) are checked with
  :func:`storbench.units.parse_size`; a size fio would read the same way is kept
  as written (``16G``), any other is rewritten for fio (``1.5GiB`` -> ``1536m``:
  fio reads ``MiB`` as 10^6 bytes, see :mod:`storbench.units`).
* durations (``runtime``, ``ramp_time``, ``startdelay``) likewise (``1.5s`` ->
  ``1500ms``).
* ``ioengine = "auto"`` is storbench's own: the runner probes io_uring, libaio,
  posixaio (:func:`storbench.run.engines.probe_ioengine`) and the job builder writes
  the first that works.

Validation errors are one line, ``FILE:LINE: KEY: problem`` (the line where it
can be found in the file), and name what is allowed.  Options that decide where
the I/O goes or what fio writes (``filename``, ``directory``, ``name``, log
files, ``unlink``, ...) are storbench's and refused in a workload.  Nothing in a
name or value can add a fio option or job section: line breaks, ``;`` and
``#`` (fio comments), ``$`` (fio expansion), a leading ``[`` or ``]`` and keys
that are not option names are refused.

A user file's workload and suite names must not repeat built-in ones.

May import: jobs, loads, model, metrics (a workload's headline), units and errors; never run or commands.
"""

from __future__ import annotations

import functools
import json
import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from storbench.errors import SuiteError, UsageError
from storbench.jobs.jobfile import WHERE_KEYS, unsafe_key_reason, unsafe_value_reason
from storbench.jsontypes import JSONMapping, JSONObject, JSONValue
from storbench.metrics import default_headline
from storbench.model import Suite, Workload
from storbench.units import (
    fio_duration,
    fio_size,
    is_fio_native_duration,
    is_fio_native_size,
    parse_duration,
    parse_size,
)

if TYPE_CHECKING:
    from ..loads import LoadTool

#: where the built-in suites and the option table are (files beside this module)
_HERE = Path(__file__).resolve().parent

DEFAULT_SUITE = "quick"
BUILTIN_ORIGIN = "built-in"
HEADLINES: tuple[str, ...] = ("iops", "bw", "lat")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
NAME_MAX = 64

_TOP_KEYS = ("suite", "workload")
_WORKLOAD_KEYS = ("description", "fio", "headline")
_SUITE_KEYS = ("description", "workloads")

#: Options storbench sets itself, with why a workload may not.
OWNED_OPTIONS: Mapping[str, str] = MappingProxyType(
    {
        **{k: "storbench sets where the I/O goes" for k in sorted(WHERE_KEYS)},
        "unique_filename": "storbench sets where the I/O goes",
        "replay_redirect": "storbench sets where the I/O goes",
        "read_iolog": "storbench sets where the I/O goes (an I/O log names its own files)",
        "merge_blktrace_file": "storbench sets where the I/O goes",
        "unlink": "storbench creates and removes its test files (and never deletes a file target)",
        "unlink_each_loop": "storbench creates and removes its test files (and never deletes a file target)",
        "output": "storbench sets fio's output",
        "output-format": "storbench sets fio's output",
        "write_bw_log": "storbench decides what fio writes (no log files)",
        "write_lat_log": "storbench decides what fio writes (no log files)",
        "write_iops_log": "storbench decides what fio writes (no log files)",
        "write_hist_log": "storbench decides what fio writes (no log files)",
        "write_iolog": "storbench decides what fio writes (no log files)",
        "exec_prerun": "a workload describes I/O; it may not run programs",
        "exec_postrun": "a workload describes I/O; it may not run programs",
        "kb_base": "storbench reads sizes with fio's default kb_base=1024",
        "unit_base": "storbench reads fio's results in bytes (unit_base default)",
    }
)

_RW_VALUES = (
    "read", "write", "trim", "randread", "randwrite", "randtrim", "rw", "readwrite", "randrw",
    "trimwrite", "randtrimwrite",
)  # fmt: skip
_RW_RE = re.compile(r"^(" + "|".join(_RW_VALUES) + r")(:\d+[kmgtp]?)?$")
#: One size (percentages allowed where fio allows them).
_SIZE_OPTIONS = frozenset({"size", "io_size", "offset", "offset_increment", "zoneskip", "zonesize",
                           "zonerange", "zonecapacity", "lockmem"})  # fmt: skip
_PERCENT_OK = frozenset({"size", "io_size", "offset", "offset_increment"})
#: Up to three comma-separated sizes (read,write,trim).
_SIZE_LIST_OPTIONS = frozenset({"bs", "ba"})
#: Sizes or size ranges ``a-b``, comma separated.
_SIZE_RANGE_OPTIONS = frozenset({"bsrange", "filesize"})
#: Durations whose bare number is seconds (``startdelay`` may be a range).
_SECONDS_OPTIONS = frozenset({"runtime", "ramp_time", "startdelay", "steadystate_duration", "steadystate_ramp_time"})
#: Whole numbers with their allowed range.
_INT_OPTIONS: Mapping[str, tuple[int, int | None]] = MappingProxyType(
    {
        "numjobs": (1, None),
        "iodepth": (1, None),
        "iodepth_low": (0, None),
        "iodepth_batch": (0, None),
        "iodepth_batch_complete_min": (0, None),
        "iodepth_batch_complete_max": (0, None),
        "rwmixread": (0, 100),
        "rwmixwrite": (0, 100),
        "loops": (1, None),
        "nrfiles": (1, None),
        "openfiles": (1, None),
        "fsync": (0, None),
        "fdatasync": (0, None),
        "percentage_random": (0, 100),
    }
)
_SIZE_VALUE_RE = re.compile(r"^\d+(\.\d+)?\s*[kmgtp]?(i?b)?$", re.IGNORECASE)


# --------------------------------------------------------------------------- fio's option list


@dataclass(frozen=True)
class FioOption:
    """One name fio accepts in a job section (``fio_options.txt``)."""

    name: str
    kind: str  # bool, int, size, time, range, str
    canonical: str  # the option this name is (itself, or what an alias stands for)
    engines: frozenset[str] = frozenset()  # non-empty: only after ioengine= one of these


@dataclass(frozen=True)
class FioOptionTable:
    options: Mapping[str, FioOption]
    engines: tuple[str, ...]

    def get(self, name: str) -> FioOption | None:
        return self.options.get(name)


def parse_fio_options(text: str) -> FioOptionTable:
    """Parse ``fio_options.txt`` (format in its header)."""
    options: dict[str, FioOption] = {}
    engines: tuple[str, ...] = ()
    aliases: list[tuple[str, str, str]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@engines"):
            engines = tuple(line.split()[1:])
            continue
        name, kind, source = line.split()
        if source.startswith("alias:"):
            aliases.append((name, kind, source[len("alias:") :]))
        elif source.startswith("engine:"):
            options[name] = FioOption(name, kind, name, frozenset(source[len("engine:") :].split(",")))
        else:
            options[name] = FioOption(name, kind, name)
    for name, kind, target in aliases:
        base = options[target]
        options[name] = FioOption(name, kind, target, base.engines)
    return FioOptionTable(MappingProxyType(options), engines)


@functools.cache
def fio_option_table() -> FioOptionTable:
    """The option table shipped with storbench (fio 3.33)."""
    text = (_HERE / "fio_options.txt").read_text(encoding="utf-8")
    return parse_fio_options(text)


# --------------------------------------------------------------------------- catalog


@dataclass(frozen=True)
class Catalog:
    """Every workload and suite known: the built-in ones plus those of loaded files."""

    workloads: Mapping[str, Workload]
    suites: Mapping[str, Suite]

    def suite(self, name: str) -> Suite:
        try:
            return self.suites[name]
        except KeyError:
            raise SuiteError(_unknown("suite", name, self.suites)) from None

    def workload(self, name: str) -> Workload:
        try:
            return self.workloads[name]
        except KeyError:
            raise SuiteError(_unknown("workload", name, self.workloads)) from None


def _unknown(kind: str, name: str, known: JSONMapping) -> str:
    hint = did_you_mean(name, known)
    return f"unknown {kind} {name!r}{hint} (known: {', '.join(sorted(known))})"


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    import difflib  # only for a mistake: 10 ms of import a run's start-up does not need

    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


# --------------------------------------------------------------------------- locating keys in the file


_HEADER_RE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY_PART_RE = re.compile(r'\s*("(?:[^"\\]|\\.)*"|\'[^\']*\'|[A-Za-z0-9_-]+)\s*')


def _split_dotted(text: str) -> tuple[str, ...]:
    parts = []
    pos = 0
    while pos < len(text):
        m = _KEY_PART_RE.match(text, pos)
        if not m:
            return ()
        part = m.group(1)
        parts.append(part[1:-1] if part[:1] in "\"'" else part)
        pos = m.end()
        if pos < len(text):
            if text[pos] != ".":
                return ()
            pos += 1
    return tuple(parts)


def _key_regex(part: str) -> str:
    esc = re.escape(part)
    return r"(?<![A-Za-z0-9_\-\"'])(?:" + esc + r'|"' + esc + r'"|\'' + esc + r"')\s*[=.]"


def locate(text: str, path: tuple[str, ...], value: str | None = None) -> int | None:
    """Best-effort 1-based line of the key ``path`` (or of the string ``value`` under it) in TOML ``text``."""
    lines = text.splitlines()
    headers: list[tuple[int, tuple[str, ...]]] = []
    for i, line in enumerate(lines):
        m = _HEADER_RE.match(line)
        if m and "=" not in line.split("]")[0]:
            parts = _split_dotted(m.group(1))
            if parts:
                headers.append((i, parts))
    best: tuple[int, int] | None = None  # (line index, prefix length)
    for i, parts in headers:
        if tuple(path[: len(parts)]) == parts and (best is None or len(parts) > best[1]):
            best = (i, len(parts))
    if best is None:
        for i, parts in headers:
            if parts[: len(path)] == tuple(path):
                return i + 1  # [workloads.a] for the top-level key "workloads"
        start, depth = 0, 0
        end = headers[0][0] if headers else len(lines)
    else:
        start, depth = best[0], best[1]
        later = [i for i, _ in headers if i > start]
        end = later[0] if later else len(lines)
        if depth == len(path) and value is None:
            return start + 1
        start += 1
    scope = "\n".join(lines[start:end])
    offset = 0
    for part in path[depth:]:
        m = re.search(_key_regex(part), scope[offset:])
        if not m:
            return None
        offset += m.start() + len(part)
    if value is not None:
        m = re.search(r"[\"']" + re.escape(value) + r"[\"']", scope[offset:])
        if m:
            offset += m.start()
    return start + scope.count("\n", 0, offset) + 1


# --------------------------------------------------------------------------- loading


@dataclass
class _Source:
    """The file being read, for error messages."""

    label: str
    text: str

    def fail(self, path: tuple[str, ...], problem: str, *, value: str | None = None) -> SuiteError:
        line = locate(self.text, path, value) if path else None
        where = f"{self.label}:{line}" if line else self.label
        key = ".".join(p if re.fullmatch(r"[A-Za-z0-9_.-]+", p) else json.dumps(p) for p in path)
        return SuiteError(f"{where}: {key}: {problem}" if key else f"{where}: {problem}")


def _toml_error(label: str, text: str, exc: tomllib.TOMLDecodeError) -> SuiteError:
    message = str(exc)
    m = re.search(r"^(.*) \(at line (\d+), column (\d+)\)$", message)
    if not m:
        m2 = re.search(r"^(.*) \(at end of document\)$", message)
        if m2:
            return SuiteError(f"{label}: TOML syntax error at the end of the file: {m2.group(1)}")
        return SuiteError(f"{label}: TOML syntax error: {message}")
    what, line, col = m.group(1), int(m.group(2)), int(m.group(3))
    d = re.match(r"^Cannot declare \((.*)\) twice$", what)
    if d:
        parts = tuple(p.strip().strip("'\"") for p in d.group(1).split(","))
        parts = tuple(p for p in parts if p)
        if len(parts) == 2 and parts[0] in _TOP_KEYS:
            return SuiteError(
                f"{label}:{line}: {'.'.join(parts)}: {parts[0]} {parts[1]!r} is defined twice "
                f"(each {parts[0]} name may appear once)"
            )
        return SuiteError(f"{label}:{line}: {'.'.join(parts)}: table is defined twice (each may appear once)")
    if what == "Cannot overwrite a value":
        lines = text.splitlines()
        src = lines[line - 1] if 0 < line <= len(lines) else ""
        k = re.match(r"^\s*([A-Za-z0-9_.\"' -]+?)\s*=", src)
        key = k.group(1).strip() if k else "a key"
        return SuiteError(f"{label}:{line}: {key}: set twice (each key may appear once in a table)")
    d = re.match(r"^Duplicate inline table key '(.*)'$", what)
    if d:
        return SuiteError(f"{label}:{line}: {d.group(1)}: set twice in one inline table (each key may appear once)")
    return SuiteError(f"{label}:{line}:{col}: TOML syntax error: {what}")


def _check_name(src: _Source, kind: str, name: str) -> None:
    if not NAME_RE.match(name) or len(name) > NAME_MAX or name == "global":
        raise src.fail(
            (kind, name),
            f"invalid {kind} name {name!r}: use 1 to {NAME_MAX} characters a-z, 0-9, '.', '_', '-', "
            "starting with a letter or digit (and not 'global')",
        )


def _check_description(src: _Source, path: tuple[str, ...], value: JSONValue) -> str:
    if not isinstance(value, str):
        raise src.fail(path, f"description must be a string (got {_toml_type(value)})")
    if re.search(r"[\x00-\x1f\x7f]", value):
        raise src.fail(path, "description must be one line of text (no line breaks or control characters)")
    return value


def _toml_type(value: JSONValue) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def _number_text(value: float) -> str:
    text = f"{value:.9f}".rstrip("0").rstrip(".")
    return text or "0"


def _check_size(src: _Source, path: tuple[str, ...], text: str, *, percent: bool = False) -> str:
    s = text.strip()
    if percent and s.endswith("%"):
        try:
            pct = float(s[:-1])
        except ValueError:
            pct = -1.0
        if not 0 < pct <= 100:
            raise src.fail(path, f"invalid size {text!r}: a percentage must be more than 0% and at most 100%")
        return s
    try:
        parse_size(s)
    except UsageError as exc:
        raise src.fail(path, exc.message + (" or a percentage such as 50%" if percent else "")) from None
    return s if is_fio_native_size(s) else fio_size(s)


def _check_seconds(src: _Source, path: tuple[str, ...], text: str) -> str:
    s = text.strip()
    try:
        parse_duration(s)
    except UsageError as exc:
        raise src.fail(path, exc.message) from None
    return s if is_fio_native_duration(s) else fio_duration(s)


def _fio_value(
    src: _Source, path: tuple[str, ...], opt: FioOption, raw: JSONValue, table: FioOptionTable
) -> str:
    key = path[-1]
    name = opt.canonical
    # TOML type -> text
    if isinstance(raw, bool):
        if opt.kind != "bool":
            raise src.fail(path, f"{key!r} is not a true/false option; give its value (fio's type: {opt.kind})")
        return "1" if raw else "0"
    if isinstance(raw, int):
        text = str(raw)
    elif isinstance(raw, float):
        if not math.isfinite(raw):
            raise src.fail(path, f"invalid number {raw!r}")
        text = _number_text(raw)
    elif isinstance(raw, str):
        text = raw
    else:
        raise src.fail(path, f"value must be a string, a number or true/false (got {_toml_type(raw)})")

    reason = unsafe_value_reason(text)
    if reason:
        raise src.fail(path, f"value {text!r} {reason}")
    if not text.strip():
        raise src.fail(path, "value is empty; give a value, or true for an on/off option")

    if opt.kind == "bool":
        if text.strip() not in ("0", "1"):
            raise src.fail(path, f"{key!r} is an on/off option: use true/false (or 1/0), not {text!r}")
        return text.strip()
    if name == "ioengine":
        engine = text.strip()
        if engine == "exec":
            raise src.fail(path, "ioengine 'exec' runs programs; a workload describes I/O")
        if engine != "auto" and engine not in table.engines:
            raise src.fail(
                path,
                f"unknown ioengine {engine!r}{did_you_mean(engine, table.engines)} "
                f"(allowed: auto, {', '.join(sorted(e for e in table.engines if e != 'exec'))})",
            )
        return engine
    if name == "rw":
        if not _RW_RE.match(text.strip()):
            raise src.fail(
                path,
                f"invalid {key} {text!r}{did_you_mean(text.strip(), _RW_VALUES)} (allowed: {', '.join(_RW_VALUES)})",
            )
        return text.strip()
    if name in _INT_OPTIONS:
        lo, hi = _INT_OPTIONS[name]
        s = text.strip()
        if s in ("$ncpus",):
            return s
        if not re.fullmatch(r"\d+", s) or int(s) < lo or (hi is not None and int(s) > hi):
            allowed = f"a whole number from {lo} to {hi}" if hi is not None else f"a whole number of at least {lo}"
            raise src.fail(path, f"invalid {key} {text!r}: {allowed}")
        return s
    if name in _SIZE_OPTIONS:
        return _check_size(src, path, text, percent=name in _PERCENT_OK)
    if name in _SIZE_LIST_OPTIONS:
        parts = text.split(",")
        if len(parts) > 3:
            raise src.fail(path, f"invalid {key} {text!r}: at most three sizes (read,write,trim)")
        return ",".join(_check_size(src, path, p) if p.strip() else "" for p in parts)
    if name in _SIZE_RANGE_OPTIONS:
        out = []
        for part in text.split(","):
            ends = part.split("-")
            if len(ends) > 2 or not all(e.strip() for e in ends):
                raise src.fail(path, f"invalid {key} {text!r}: use sizes or ranges like 4k-64k, comma separated")
            out.append("-".join(_check_size(src, path, e) for e in ends))
        return ",".join(out)
    if name in _SECONDS_OPTIONS:
        ends = text.split("-") if name == "startdelay" else [text]
        if len(ends) > 2 or not all(e.strip() for e in ends):
            raise src.fail(path, f"invalid {key} {text!r}: use a duration such as 30, 30s, 2m")
        return "-".join(_check_seconds(src, path, e) for e in ends)
    return text


def _fio_options(
    src: _Source, path: tuple[str, ...], fio: JSONValue, table: FioOptionTable
) -> tuple[tuple[str, str | None], ...]:
    if not isinstance(fio, dict):
        raise src.fail(path, f"must be a table of fio options, e.g. fio = {{ rw = \"randread\", bs = \"4k\" }} "
                             f"(got {_toml_type(fio)})")  # fmt: skip
    if not fio:
        raise src.fail(path, "names no fio options")
    options: list[tuple[str, str | None]] = []
    seen: dict[str, str] = {}
    engine: str | None = None
    for key, raw in fio.items():
        kpath = path + (key,)
        reason = unsafe_key_reason(key)
        if reason:
            raise src.fail(kpath, f"{key!r} {reason}")
        opt = table.get(key)
        canonical = opt.canonical if opt else key
        if canonical in OWNED_OPTIONS or key in OWNED_OPTIONS:
            raise src.fail(kpath, f"fio option {key!r} may not be set in a workload: {OWNED_OPTIONS.get(canonical) or OWNED_OPTIONS[key]}")
        if opt is None:
            raise src.fail(kpath, f"unknown fio option {key!r}{did_you_mean(key, table.options)} "
                                  "(see 'fio --cmdhelp=all')")  # fmt: skip
        if opt.engines and engine not in opt.engines:
            raise src.fail(
                kpath,
                f"fio option {key!r} belongs to the {', '.join(sorted(opt.engines))} I/O engine(s): "
                "set ioengine to one of them before it",
            )
        if canonical in seen:
            other = seen[canonical]
            also = f" ({other!r} and {key!r} are the same fio option)" if other != key else ""
            raise src.fail(kpath, f"fio option set twice{also}")
        seen[canonical] = key
        value = _fio_value(src, kpath, opt, raw, table)
        if canonical == "ioengine":
            engine = value
        options.append((key, value))
    return tuple(options)


def _parse_workload(src: _Source, name: str, body: JSONValue, origin: str, table: FioOptionTable) -> Workload:
    path = ("workload", name)
    _check_name(src, "workload", name)
    if not isinstance(body, dict):
        raise src.fail(path, f"must be a table with description and fio (got {_toml_type(body)})")
    tool = body.get("tool", "fio")
    if tool != "fio":
        return _parse_load_workload(src, name, body, origin, tool)
    if "replay" in body:
        return _parse_replay_workload(src, name, body, origin)
    for key in body:
        if key not in _WORKLOAD_KEYS:
            raise src.fail(path + (key,), f"unknown key {key!r}{did_you_mean(key, _WORKLOAD_KEYS)} "
                                          f"(allowed: {', '.join(_WORKLOAD_KEYS)})")  # fmt: skip
    if "fio" not in body:
        raise src.fail(path, "missing fio table: give the fio options, e.g. fio = { rw = \"randread\", bs = \"4k\" }")
    description = _check_description(src, path + ("description",), body.get("description", ""))
    options = _fio_options(src, path + ("fio",), body["fio"], table)
    headline = body.get("headline")
    if headline is None:
        headline = default_headline(options)
    elif headline not in HEADLINES:
        raise src.fail(path + ("headline",), f"invalid headline {headline!r} (allowed: {', '.join(HEADLINES)})")
    return Workload(name=name, description=description, options=options, headline=headline, origin=origin)


_REPLAY_KEYS = ("description", "replay", "mode", "reads_only")
_REPLAY_MODES = ("timed", "fast")


def _parse_replay_workload(src: _Source, name: str, body: JSONObject, origin: str) -> Workload:
    """A replay of a stored trace (``replay = "db"``, an id or a label; ``mode = "timed"`` or
    ``"fast"``; ``reads_only``): its fio options are made from the trace when a run starts
    (:func:`storbench.run.replay.resolve_suite_replays`), so the workload holds only what names it."""
    path = ("workload", name)
    for key in body:
        if key not in _REPLAY_KEYS:
            raise src.fail(path + (key,), f"unknown key {key!r} for a replay workload (allowed: {', '.join(_REPLAY_KEYS)})")
    ref = body["replay"]
    if isinstance(ref, bool) or not isinstance(ref, (str, int)) or not str(ref).strip():
        raise src.fail(path + ("replay",), "must name a stored trace: its id or its label (storbench trace list)")
    mode = body.get("mode", "timed")
    if mode not in _REPLAY_MODES:
        raise src.fail(path + ("mode",), f"invalid mode {mode!r} (allowed: {', '.join(_REPLAY_MODES)})", value=mode if isinstance(mode, str) else None)
    reads_only = body.get("reads_only", False)
    if not isinstance(reads_only, bool):
        raise src.fail(path + ("reads_only",), f"must be true or false (got {_toml_type(reads_only)})")
    description = _check_description(src, path + ("description",), body.get("description", ""))
    return Workload(
        name=name, description=description or f"replay of trace {ref} ({mode})", options=(),
        headline="lat" if mode == "timed" else "iops", origin=origin,
        replay={"pending": str(ref), "mode": mode, "reads_only": reads_only},
    )  # fmt: skip


def _parse_load_workload(src: _Source, name: str, body: JSONObject, origin: str, tool: LoadTool) -> Workload:
    """A workload of an application load (``tool = "pgbench"``, its options in a table named after
    the tool): every option of the tool checked and filled in (:func:`storbench.loads.check_options`)."""
    from storbench.loads import LoadOptionError, check_options, tool_names
    from storbench.loads import tool as load_tool

    path = ("workload", name)
    if not isinstance(tool, str) or tool not in tool_names():
        raise src.fail(path + ("tool",), f"unknown tool {tool!r} (allowed: fio, {', '.join(tool_names())})",
                       value=tool if isinstance(tool, str) else None)  # fmt: skip
    load = load_tool(tool)
    allowed = ("description", "tool", tool)
    for key in body:
        if key not in allowed:
            why = " (a load's options go in its own table)" if key in ("fio", "headline") else ""
            raise src.fail(path + (key,), f"unknown key {key!r} for a {tool} workload{why} (allowed: {', '.join(allowed)})")
    if tool not in body:
        raise src.fail(path, f"missing {tool} table: give its options, e.g. {tool} = {{ {load.options[0].name} = ... }} "
                             f"(options: {', '.join(o.name for o in load.options)})")  # fmt: skip
    raw = body[tool]
    if not isinstance(raw, dict):
        raise src.fail(path + (tool,), f"must be a table of {tool} options (got {_toml_type(raw)})")
    description = _check_description(src, path + ("description",), body.get("description", ""))
    try:
        options = check_options(load, raw)
    except LoadOptionError as exc:
        key, _, problem = str(exc).partition(": ")
        raise src.fail(path + (tool, key) if key in raw else path + (tool,), problem if key in raw else str(exc)) from None
    return Workload(name=name, description=description, options=options, headline=load.headline, origin=origin, tool=tool)


def _parse_document(
    src: _Source, doc: JSONObject, base: Catalog, origin: str, table: FioOptionTable
) -> Catalog:
    for key in doc:
        if key not in _TOP_KEYS:
            raise src.fail((key,), f"unknown top-level table {key!r}{did_you_mean(key, _TOP_KEYS)} "
                                   f"(allowed: {', '.join(_TOP_KEYS)})")  # fmt: skip
    raw_workloads = doc.get("workload", {})
    raw_suites = doc.get("suite", {})
    for key, value in (("workload", raw_workloads), ("suite", raw_suites)):
        if not isinstance(value, dict):
            raise src.fail((key,), f"must be tables such as [{key}.NAME] (got {_toml_type(value)})")
    if not raw_workloads and not raw_suites:
        raise src.fail((), "defines no [workload.NAME] or [suite.NAME] tables")

    workloads: dict[str, Workload] = {}
    for name, body in raw_workloads.items():
        if name in base.workloads:
            prior = base.workloads[name].origin
            where = "a built-in workload" if prior == BUILTIN_ORIGIN else f"already defined in {prior}"
            raise src.fail(("workload", name), f"workload {name!r} is {where}; choose another name")
        workloads[name] = _parse_workload(src, name, body, origin, table)

    suites: dict[str, Suite] = {}
    for name, body in raw_suites.items():
        path = ("suite", name)
        _check_name(src, "suite", name)
        if name in base.suites:
            prior = base.suites[name].origin
            where = "a built-in suite" if prior == BUILTIN_ORIGIN else f"already defined in {prior}"
            raise src.fail(path, f"suite {name!r} is {where}; choose another name")
        if not isinstance(body, dict):
            raise src.fail(path, f"must be a table with description and workloads (got {_toml_type(body)})")
        for key in body:
            if key not in _SUITE_KEYS:
                raise src.fail(path + (key,), f"unknown key {key!r}{did_you_mean(key, _SUITE_KEYS)} "
                                              f"(allowed: {', '.join(_SUITE_KEYS)})")  # fmt: skip
        description = _check_description(src, path + ("description",), body.get("description", ""))
        if "workloads" not in body:
            raise src.fail(path, 'missing workloads: list the workload names, e.g. workloads = ["gitlab"]')
        names = body["workloads"]
        wpath = path + ("workloads",)
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise src.fail(wpath, "must be a list of workload names, e.g. [\"my-randread\", \"gitlab\"]")
        if not names:
            raise src.fail(wpath, "suite is empty: name at least one workload")
        members: list[Workload] = []
        for wname in names:
            if wname in (w.name for w in members):
                raise src.fail(wpath, f"names workload {wname!r} twice", value=wname)
            found = workloads.get(wname) or base.workloads.get(wname)
            if found is None:
                known = {**base.workloads, **workloads}
                raise src.fail(
                    wpath,
                    f"unknown workload {wname!r}{did_you_mean(wname, known)} "
                    f"(defined here: {', '.join(sorted(workloads)) or 'none'}; built-in ones: see 'storbench suites')",
                    value=wname,
                )
            members.append(found)
        suites[name] = Suite(name=name, description=description, workloads=tuple(members), origin=origin)

    return Catalog(
        workloads=MappingProxyType({**base.workloads, **workloads}),
        suites=MappingProxyType({**base.suites, **suites}),
    )


def parse_suite_text(text: str, label: str, base: Catalog | None = None, *, origin: str | None = None) -> Catalog:
    """Validate suite TOML ``text`` and merge it over ``base``.  ``label`` names the file in messages."""
    base = base or empty_catalog()
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _toml_error(label, text, exc) from None
    return _parse_document(_Source(label, text), doc, base, origin or label, fio_option_table())


def empty_catalog() -> Catalog:
    return Catalog(workloads=MappingProxyType({}), suites=MappingProxyType({}))


def load_suite_file(path: str | Path, base: Catalog | None = None) -> Catalog:
    """Read a user suite file and return ``base`` (default: the built-ins) with its workloads and suites added.

    A user suite may name workloads of ``base``; a user workload or suite may
    not reuse a name ``base`` has.  Raises :class:`SuiteError` (one line).
    """
    base = builtin_catalog() if base is None else base
    label = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SuiteError(f"{label}: cannot read suite file: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SuiteError(f"{label}: not UTF-8 text (byte {exc.start}); TOML files are UTF-8") from None
    return parse_suite_text(text, label, base, origin=label)


@functools.cache
def builtin_catalog() -> Catalog:
    """The built-in suites: every ``*.toml`` file in this package, the default suite's first, then in
    name order (a file naming workloads of a later one after it)."""
    catalog = empty_catalog()
    files = sorted(
        _HERE.glob("*.toml"),
        key=lambda f: (f.name != f"{DEFAULT_SUITE}.toml", f.name),
    )
    # a file whose suite names another file's workloads (pts-disk.toml: pts-fio.toml's) is read
    # once the others are
    deferred = []
    for f in files:
        try:
            catalog = parse_suite_text(f.read_text(encoding="utf-8"), f.name, catalog, origin=BUILTIN_ORIGIN)
        except SuiteError:
            deferred.append(f)
    for f in deferred:
        catalog = parse_suite_text(f.read_text(encoding="utf-8"), f.name, catalog, origin=BUILTIN_ORIGIN)
    return catalog


@functools.cache
def builtin_suite_catalog(name: str) -> Catalog | None:
    """The built-in suite ``name`` read from its own file (``<name>.toml``, which defines its
    workloads itself) without the other built-in files: what a run of one built-in suite needs
    (a fifth of the parse).  None when there is no such file or it does not define that suite:
    then :func:`builtin_catalog` is what to read."""
    path = _HERE / f"{name}.toml"
    if name.startswith(".") or "/" in name or not path.is_file():
        return None
    try:
        catalog = parse_suite_text(path.read_text(encoding="utf-8"), path.name, empty_catalog(), origin=BUILTIN_ORIGIN)
    except SuiteError:  # it names workloads of another built-in file (pts-disk: pts-fio's)
        return None
    return catalog if name in catalog.suites else None


def validate_extra_options(
    pairs: tuple[tuple[str, str | None], ...] | list[tuple[str, str | None]], label: str = "--fio-option"
) -> tuple[tuple[str, str | None], ...]:
    """Check extra fio options given outside a suite file (e.g. on the command line) by the same rules.

    A ``None`` value is accepted for on/off options and becomes ``1``.
    """
    table = fio_option_table()
    fio = {k: (True if v is None else v) for k, v in pairs}
    if len(fio) != len(pairs):
        raise SuiteError(f"{label}: an option is given twice")
    src = _Source(label, "")
    return _fio_options(src, ("fio",), fio, table) if fio else ()


__all__ = [
    "BUILTIN_ORIGIN",
    "DEFAULT_SUITE",
    "OWNED_OPTIONS",
    "Catalog",
    "FioOption",
    "FioOptionTable",
    "builtin_catalog",
    "builtin_suite_catalog",
    "empty_catalog",
    "fio_option_table",
    "load_suite_file",
    "parse_suite_text",
    "validate_extra_options",
]
