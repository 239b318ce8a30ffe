"""Pure reader of fio's classic human-readable output (``--output-format=normal``) -> :class:`FioResult`.

The text is read the way people paste it: with shell prompts, progress (``Jobs: ...``)
lines, ``^C`` fragments, CRLF or lone-CR line ends, tabs, and other text around it.
Every fio version from 2.0 to 3.41 is understood; the forms differ like this:

=====================  ===========================================================
fio 2.0 - 2.20         ``  read : io=1024.0KB, bw=341333KB/s, iops=85333 , runt=  3msec``
                       (``KB``/``MB`` are binary: KiB/MiB), ``iops=8289.3K``,
                       ``issued    : total=r=../w=../d=.., short=.., drop=..``,
                       ``bw (KB  /s): min=.., per=.., avg=.., stdev=..`` (no samples)
fio 2.21 and later     ``  read: IOPS=46.0k, BW=12.6MiB/s (13.2MB/s)(83.9MiB/30134msec)``
                       with an optional ``; 0 zone resets`` / ``; Cachehit=..%`` suffix,
                       ``issued rwt:`` (3.1-3.3) / ``issued rwts:`` (later),
                       ``bw (  KiB/s): ..., samples=N`` and ``iops        : ...`` summaries
all                    ``clat (usec): min=62, max=1264.8k, avg=66097.97, stdev=..``
                       (unit per line, ``k``/``K``/``M`` on min/max = x1000/x1e6 of that
                       unit); ``clat percentiles (msec):`` tables of 3 or 4 columns;
                       ``lat (usec)   : 100=0.01%, ...`` bucket lines; ``Disk stats``
=====================  ===========================================================

What becomes what:

* One :class:`JobResult` per ``name: (groupid=N, jobs=N): err=..`` block (so several
  without ``group_reporting``, one per group with it).  Direction lines printed without
  any such header (a partial paste) go to a job named after the job definition line,
  else ``"unknown"``.  ``All clients`` blocks of client/server runs are
  ``is_aggregate=True``; the ``<host>`` line fio prints before a client's block gives
  ``hostname`` and the ``hostname`` of the disks after it - the name the *server* reports
  (``<vm>``), where fio's JSON gives the address the client dialled (``127.0.0.1``);
  ``port`` is never printed.
* ``options``: ``rw``, ``bs``, ``ioengine``, ``iodepth`` from the job definition line
  (``name: (g=0): rw=randrw, bs=(R) 4096B-4096B, ...``) of the job with that name, and
  ``description``.  ``bs`` is rewritten in fio's own option syntax in bytes: ``"4096"``,
  ``"4096-32768"`` (a range), ``"4096,8192,4096"`` (read/write/trim differ).
* ``fio_version`` as fio names itself in JSON: ``"fio-3.7"`` (also from ``fio 2.0.2``
  and from a client run's ``hostname=.., fio=fio-3.33`` line).  ``time_text`` is the
  first job header's date; ``timestamp_s`` stays ``None`` (no time zone is printed).
* Several runs pasted one after the other give all their job blocks, in order, with the
  first run's ``fio_version`` and ``time_text``.
* ``interrupted`` when fio printed ``fio: terminating on signal N``.  ``notes`` keep the
  ``fio: ...`` lines and verify failures (``pattern: verify failed at ...``); progress
  lines, prompts and the job definition lines are not notes.

Decisions:

* Values are kept as printed and converted exactly (decimal arithmetic, so
  ``66097.97 usec`` is ``66097970.0`` ns).  ``io_bytes`` therefore carries fio's
  3-significant-figure rounding (``83.9MiB`` -> 87975526 bytes, while the job really
  moved ``total_ios * bs``); it is *not* recomputed from ``total_ios``, which is given
  beside it where printed.  ``bw_bytes`` comes from the primary (binary) ``BW=`` figure.
* Units: ``nsec/usec/msec/sec`` -> ns; ``KiB/MiB/GiB`` binary, ``kB/MB/GB`` decimal in
  fio 2.21+ (the primary figure under ``kb_base=1000``) but binary (``KB``/``MB``) in the
  old ``io=/bw=`` lines and in the ``bw (..)`` summary line, which fio labels ``KiB``,
  ``kB``, ``MiB`` or (2.x) ``KB``/``MB`` - except that under ``kb_base=1000`` it labels
  MB/s "MiB/s", read as 1e6 when the direction's primary ``BW=`` is decimal.  ``bit``
  units (``unit_base=1``) are divided by 8.  IOPS ``k``/``K`` = 1e3, ``M`` = 1e6.
  A bare ``BW=227Mi (239M)`` (client/server aggregate) reads like ``MiB/s``.
* A latency that fio did not print is ``None`` (gtod_reduce, disable_clat); a percentile
  table whose ``min/max/avg`` line is missing is dropped with it (fio 2.0 prints a table
  of zeros for the verify read phase).  Percentiles are kept as printed, including the
  all-zero ``lat percentiles`` table of fio 3.3 (a fio bug) and the ceiling-rounded
  values of ``(msec)`` tables.  ``clat prio`` / ``lat prio`` lines and tables are skipped.
  ``LatencyStats.samples`` is ``None`` (text never says N).
* A direction that did no I/O is omitted.  That includes the ``mixed: IOPS=0, BW=0
  (0)(0B/..msec)`` line fio 3.33 prints under ``unified_rw_reporting=both`` (a fio
  printing bug; the JSON of the same run has the real figures).
* A ``bw (..)`` summary without ``samples=`` (fio 2.x) is ``None``: the model needs N.
* ``latency_dist_pct`` holds the buckets fio printed; fio omits zero buckets, so a key
  that is absent is 0 % (the JSON reader lists every bucket).  Keys ``"750ns"``,
  ``"100us"``, ``"2ms"``, ``">=2000ms"``.
* ``total_ios``/``short_ios``/``drop_ios`` from the ``issued`` line: read/write/trim by
  position, ``mixed`` the sum of the three.  ``sync`` is a :class:`SyncStats` when fio
  printed a ``fsync/fdatasync/...`` latency section or counted syncs (4th ``rwts`` number);
  ``total_ios`` is that 4th number (0 where the line has only three).
* ``steadystate``: ``{"attained": 1|0, "criterion": "0.461%", "criterion_name": "iops mean
  dev", "data": {"bw_mean": bytes/s, "iops_mean": .., "lat_mean": ns}}`` - the keys
  follow fio's JSON object where the text has the same figure.
* ``Run status group`` totals are recognised but not kept (the model has no group record).

Any ``str`` input either parses or raises :class:`FioParseError` with one short line.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING

from ..errors import FioParseError
from ..model import (
    DIRECTIONS,
    DirectionStats,
    DiskUtil,
    FioResult,
    JobResult,
    LatencyStats,
    SampleSummary,
    SyncStats,
    pct_key,
)

if TYPE_CHECKING:
    from storbench.jsontypes import JSONObject

__all__ = ["classify_line", "looks_like_fio_text", "mangled_direction", "parse_fio_text"]

_EXCERPT = 60

# --------------------------------------------------------------------------- line patterns

#: a number as fio prints it, optionally scaled (``1264.8k``, ``4251.4K``, ``1.5M``)
_N = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
_NS = _N + r"[kKMGTP]?"
_NAN = r"-?nan|-?inf"

_CLIENT = re.compile(r"^<(?P<host>[^<>\s]+)>\s?(?P<rest>.*)$")
#: "<vm> " alone on a line, or glued after a progress line ("Jobs: 0 (f=0)<vm> ")
_HOST_MARK = re.compile(r"(?:^|[\s)\]])<(?P<host>[^<>\s/]+)>\s*$")
_HOSTNAME_LINE = re.compile(r"^hostname=.*?\bfio=(?P<version>fio-\S+?),")
_VERSION = re.compile(r"^fio[- ]v?(?P<v>\d+\.\d+\S*)$")
_SIGNAL = re.compile(r"fio: terminating on signal")
_NOTE = re.compile(r"^(?:fio:\s|[\w./-]+: verify failed)")
#: job definition line, matched from its first ": (g=" (the name is what precedes it)
_JOB_DEF_AT = ": (g="
_JOB_DEF = re.compile(
    r": \(g=(?P<g>\d+)\): rw=(?P<rw>[^,\s]+), bs=(?P<bs>.+?), "
    r"ioengine=(?P<engine>[^,\s]+), iodepth=(?P<depth>\d+)"
)
#: job result header, matched from its first ": (groupid=" (the name is what precedes it)
_JOB_HEAD_AT = ": (groupid="
_JOB_HEAD = re.compile(
    r": \(groupid=(?P<g>-?\d+), jobs=(?P<jobs>\d+)\): "
    r"err=\s*(?P<err>-?\d+)(?: \((?P<verror>.*)\))?: pid=(?P<pid>-?\d+)(?::(?P<time>.*))?$"
)
_GROUP = re.compile(r"^Run status group \d+")
_DISK_HEAD = re.compile(r"^Disk stats \(read/write\):")
_DISK = re.compile(
    r"^(?P<name>\S+): ios=(?P<r>\d+)/(?P<w>\d+),\s*(?:sectors=\d+/\d+,\s*)?"
    r"merge=(?P<rm>\d+)/(?P<wm>\d+),\s*ticks=(?P<rt>\d+)/(?P<wt>\d+),\s*"
    r"in_queue=(?P<q>\d+),\s*util=(?P<util>" + _N + r")%(?P<agg>,\s*aggrios=)?"
)
_DIR_NEW = re.compile(
    r"^(?P<dir>read|write|trim|mixed)\s*:\s*IOPS=(?P<iops>" + _NS + r"),\s*"
    r"BW=(?P<bw>" + _N + r")\s*(?P<bwu>[A-Za-z]*)(?:/s)?\s*\([^)]*\)\s*"
    r"\((?P<io>" + _N + r")\s*(?P<iou>[A-Za-z]*)/(?P<runt>\d+)\s*msec\)"
)
_DIR_OLD = re.compile(
    r"^(?P<dir>read|write|trim|mixed)\s*:\s*io=(?P<io>" + _N + r")\s*(?P<iou>[A-Za-z]*),\s*"
    r"bw=(?P<bw>" + _N + r")\s*(?P<bwu>[A-Za-z]*)(?:/s)?\s*,\s*"
    r"iops=(?P<iops>" + _NS + r")\s*,\s*runt=\s*(?P<runt>\d+)\s*msec"
)
#: the start of a direction line: one that starts so but matches neither form is cut or mangled
_DIR_START = re.compile(r"^(?P<dir>read|write|trim|mixed)\s*:\s*(?:IOPS\b|io=)")
_LAT = re.compile(
    r"^(?P<kind>slat|clat|lat|sync)\s*\((?P<unit>nsec|usec|msec|sec)\)\s*:\s*"
    r"min=\s*(?P<min>" + _NS + r")\s*,\s*max=\s*(?P<max>" + _NS + r")\s*,\s*"
    r"avg=\s*(?P<avg>" + _N + "|" + _NAN + r")\s*,\s*stdev=\s*(?P<dev>" + _N + "|" + _NAN + r")"
)
_PCT_HEAD = re.compile(r"^(?P<kind>.*)\bpercentiles\s*\((?P<unit>nsec|usec|msec|sec)\)\s*:?$")
_PCT_ENTRY = re.compile(r"(?<![\d.])(?P<p>" + _N + r")th\s*=\s*\[\s*(?P<v>" + _NS + r")\s*\]")
_BW_SUM = re.compile(
    r"^bw\s*\(\s*(?P<unit>[A-Za-z]+)\s*/s\)\s*:\s*min=\s*(?P<min>" + _N + r")\s*,\s*"
    r"max=\s*(?P<max>" + _N + r")\s*,\s*per=\s*(?P<per>" + _N + r")%\s*,\s*"
    r"avg=\s*(?P<avg>" + _N + r")\s*,\s*stdev=\s*(?P<dev>" + _N + "|" + _NAN + r")"
    r"(?:\s*,\s*samples=\s*(?P<samples>\d+))?"
)
_IOPS_SUM = re.compile(
    r"^iops\s*:\s*min=\s*(?P<min>" + _N + r")\s*,\s*max=\s*(?P<max>" + _N + r")\s*,\s*"
    r"avg=\s*(?P<avg>" + _N + r")\s*,\s*stdev=\s*(?P<dev>" + _N + "|" + _NAN + r")"
    r"\s*,\s*samples=\s*(?P<samples>\d+)"
)
_LAT_DIST = re.compile(r"^lat\s*\((?P<unit>nsec|usec|msec)\)\s*:\s*(?P<body>.*%.*)$")
_DIST_ENTRY = re.compile(r"(?<![\w.>=])(?P<key>(?:>=)?\d+)=(?P<v>" + _N + r")%")
_SYNC_HEAD = re.compile(r"^fsync/fdatasync")
_CPU = re.compile(
    r"^cpu\s*:\s*usr=(?P<usr>" + _N + r")%,\s*sys=(?P<sys>" + _N + r")%,\s*"
    r"ctx=(?P<ctx>\d+),\s*majf=(?P<majf>\d+),\s*minf=(?P<minf>\d+)"
)
_DEPTHS = re.compile(r"^(?P<which>IO depths|submit|complete)\s*:\s*(?P<body>.*)$")
_ISSUED = re.compile(r"^issued\b[^:]*:\s*(?P<body>total=.*)$")
#: splits "total=21468,9950,0,0 short=r=0/w=0/d=0, dropped=0,0,0," into keys and their numbers
_ISSUED_SPLIT = re.compile(r"\b(total|short|dropped|drop)=")
_ERRORS = re.compile(r"^errors\s*:\s*total=(?P<total>\d+),\s*first_error=(?P<first>-?\d+)")
_DESCRIPTION = re.compile(r"^Description\s*:\s*\[(?P<text>.*)\]\s*$")
_STEADY = re.compile(
    r"^steadystate\s*:\s*attained=(?P<att>yes|no),\s*bw=(?P<bw>" + _N + r")\s*(?P<bwu>[A-Za-z]*)(?:/s)?"
    r"\s*\([^)]*\),\s*iops=(?P<iops>" + _NS + r")"
    r"(?:,\s*lat=(?P<lat>" + _NS + r")\s*(?P<latu>nsec|usec|msec|sec))?"
    r",\s*(?P<crit>(?:iops|bw|lat) (?:slope|mean dev))=(?P<val>" + _N + r")(?P<pct>%?)"
)
_SNIFF = re.compile(
    r"\(groupid=\d+, jobs=\d+\)|^[ \t]*(?:read|write|trim|mixed)[ \t]*:[ \t]*(?:IOPS=|io=[^\n]*iops=)", re.M
)
_JSON_START = re.compile(r"^[ \t]*\{", re.M)
#: no line of fio's own output comes near this; longer lines are skipped (bounded work)
_MAX_LINE = 16384

_BS_RANGE = re.compile(r"(?<![\d.])(" + _N + r")\s*([A-Za-z]*)\s*-\s*(" + _N + r")\s*([A-Za-z]*)")

_TIME_NS = {"nsec": 1, "usec": 1000, "msec": 1000_000, "sec": 1000_000_000}
_SUFFIX = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15}
_PREFIX_POWER = {"": 0, "k": 1, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
_UNIT = re.compile(r"^(?P<p>[kKMGTPE]?)(?P<i>i?)(?P<b>B|bit|b)?$")
_DIST_UNIT = {"nsec": "ns", "usec": "us", "msec": "ms"}


# --------------------------------------------------------------------------- public API


def mangled_direction(line: str) -> str | None:
    """The direction (``read``, ``write``, ...) of a line that starts as fio's direction line but
    is cut or holds a figure that is no number (``write: IOPS`` at a paste's end), else None."""
    text = line.replace("\t", " ").strip().lstrip(">").strip()
    m = _DIR_START.match(text)
    if m and not (_DIR_NEW.match(text) or _DIR_OLD.match(text)):
        return m["dir"]
    return None


#: the labels that open fio's result lines (the part before their first ``:`` or ``=``): a text whose last
#: line is a part of one of these (``wri``, ``lat (u``, ``clat perc``) ends inside a line
_LABELS = (
    "read", "write", "trim", "mixed", "READ", "WRITE", "TRIM", "MIXED", "slat (", "clat (", "lat (", "sync (",
    "clat percentiles (", "lat percentiles (", "slat percentiles (", "clat prio", "lat prio", "bw (", "iops", "cpu",
    "IO depths", "submit", "complete", "issued rwts", "latency", "errors", "steadystate", "Run status group",
    "Disk stats (read/write)", "fsync/fdatasync/sync_file_range",
    *(f"{kind} ({unit})" for kind in ("slat", "clat", "lat", "sync") for unit in ("nsec", "usec", "msec", "sec")),
    *(f"{kind} percentiles ({unit})" for kind in ("slat", "clat", "lat") for unit in ("nsec", "usec", "msec", "sec")),
)  # fmt: skip
#: a direction line cut inside its first figure's name: ``write: IO``, ``read: I``, ``write:``
_DIR_CUT = re.compile(r"^(?:read|write|trim|mixed|READ|WRITE|TRIM|MIXED)\s*:\s*(?:I|IO|IOP|IOPS|i|io|b|bw)?$")
#: a line that is one of fio's result lines by its label (what follows must then match the line's form)
_LABELLED = (
    (re.compile(r"^(?:slat|clat|lat|sync)\s*\((?:nsec|usec|msec|sec)\)\s*:\s*min"), (_LAT,)),
    (re.compile(r"^bw\s*\("), (_BW_SUM,)),
    (re.compile(r"^iops\s*:"), (_IOPS_SUM,)),
    (re.compile(r"^cpu\s*:"), (_CPU,)),
    (re.compile(r"^(?:read|write|trim|mixed)\s*:\s*(?:IOPS|io=)"), (_DIR_NEW, _DIR_OLD)),
    (re.compile(r"^steadystate\s*:"), (_STEADY,)),
    (re.compile(r"^latency\s*:\s*target"), (re.compile(r"^latency\s*:\s*target=\d+, window=\d+, percentile=" + _N + r"%, depth=\d+"),)),
)
#: a label whose figures follow on the same line, with nothing after its colon
_VALUE_LABEL_ONLY = re.compile(
    r"^(?:read|write|trim|mixed|READ|WRITE|TRIM|MIXED|(?:slat|clat|lat|sync)\s*\([a-z]+\)|bw\s*\([^)]*\)|iops|cpu|"
    r"IO depths|submit|complete|issued(?: rwts?)?|latency|errors|steadystate)\s*:\s*[A-Za-z_]*$"
)


def cut_last_line(text: str) -> str | None:
    """Why ``text`` (fio's classic output, or a paste of it) ends inside one of fio's lines, or
    None: :func:`cut_line` of its last line that is not blank.  Such a text lost what followed
    the cut; reading it would store a part as a whole."""
    for raw in reversed(text.splitlines()):
        if raw.strip():
            return cut_line(raw)
    return None


def cut_line(line: str) -> str | None:
    """Why ``line`` is one of fio's lines cut short, or None: a part of a line label
    (``write: IO``, ``lat (u``, ``clat perc``), a labelled line whose figures stop short of the
    line's form (``cpu          : usr=0.``, ``clat (usec): min=1, max=2``), or a percentile
    table row cut before its closing ``]``."""
    last = line.replace("\t", " ").replace("\u00a0", " ").strip().lstrip(">").strip()
    if not last:
        return None
    if _DIR_CUT.match(last):
        return f"it ends inside a direction line ({_excerpt(last)!r})"
    if _VALUE_LABEL_ONLY.match(last):
        return f"it ends after a line label ({_excerpt(last)!r})"
    if ":" not in last and "=" not in last and any(label.startswith(last) for label in _LABELS):
        return f"it ends inside a line label ({_excerpt(last)!r})"
    if last.startswith("|") and "th=[" in last and not last.rstrip(",").endswith("]"):
        return f"it ends inside a percentile table row ({_excerpt(last)!r})"
    if (m := _PCT_HEAD_CUT.match(last)) and not _PCT_HEAD.match(last):
        return f"it ends inside a percentile heading ({_excerpt(m.group(0))!r})"
    if _DEPTHS.match(last) and not (last.endswith("%") and ">=" in last):  # IO depths/submit/complete end at >=N=x%
        return f"it ends inside a line ({_excerpt(last)!r})"
    if _ISSUED.match(last) and not _issued_whole(last):
        return f"it ends inside a line ({_excerpt(last)!r})"
    for label, forms in _LABELLED:
        if label.match(last) and not any(form.match(last) for form in forms):
            return f"it ends inside a line ({_excerpt(last)!r})"
    return None


def _issued_whole(line: str) -> bool:
    """An ``issued`` line that reaches its end: as many short (and dropped) counts as totals
    (fio 3: ``total=1,2,0,0 short=0,0,0,0 dropped=0,0,0,0``; 3.1: three each with commas after;
    fio 2: ``total=r=1/w=2/d=0, short=r=0/w=0/d=0[, drop=r=0/w=0/d=0]``)."""
    parts = {k: re.findall(r"\d+", v) for k, v in re.findall(r"\b(total|short|dropped|drop)=([^a-z]*(?:[rwd]=[\d/rwd=]*)?)", line)}
    if "total" not in parts or "short" not in parts:
        return False
    n = len(parts["total"])
    if line.lstrip().startswith("issued rwts") and "dropped" not in parts:  # fio 3 always prints dropped=
        return False
    return all(len(v) == n for v in parts.values()) and re.search(r"\d,?\s*$", line) is not None
_PCT_HEAD_CUT = re.compile(r"^(?:clat|lat|slat) percentiles\b.*$")


def looks_like_fio_text(text: str) -> bool:
    """Cheap sniff: a job result header ``(groupid=N, jobs=N)`` or a direction line
    (``read: IOPS=...`` / ``read : io=..., iops=...``)."""
    return isinstance(text, str) and _SNIFF.search(text) is not None


_GROUP_TOTAL = re.compile(r"^(?:READ|WRITE|TRIM|MIXED)\s*:\s*(?:bw=|io=)")
#: ``Jobs: 1 (f=1): [m(1)]...``, also with a ``^C`` written over its start (``^Cbs: 1 (f=1)``)
_PROGRESS = re.compile(r"^(?:\^C)*(?:Jobs|obs|bs|s):\s*\d+\s*\(f=\d+\)")
_STARTING = re.compile(r"^Starting \d+ (?:process|processes|thread|threads)\b")
_LAYING = re.compile(r"^\S+: Laying out IO file")
_BODY = re.compile(
    r"^(?:(?:slat|clat|lat|sync)\s*\((?:nsec|usec|msec|sec)\)|(?:clat|lat|slat) prio|bw\s*\(|iops\s*:|cpu\s*:|IO depths\s*:|"
    r"submit\s*:|complete\s*:|issued\b|latency\s*:|errors\s*:|Description\s*:|steadystate\s*:|fsync/fdatasync|"
    r"(?:read|write|trim|mixed)\s*:\s*(?:IOPS=|io=)|[\w ]*percentiles\s*\(|\|)"
)


def classify_line(line: str) -> str | None:
    """What one line of fio's classic text output is (whitespace around it ignored), or None.

    ``"def"`` a job definition line (``name: (g=0): rw=...``), ``"version"`` (``fio-3.33``),
    ``"starting"`` (``Starting 1 process``), ``"head"`` a job result header
    (``name: (groupid=0, jobs=1): err= 0: ...``), ``"body"`` a line of a job's result block
    (direction, latency, percentiles, bw/iops summaries, cpu, depths, issued, ...),
    ``"status"`` the ``Run status group`` line and its ``READ:``/``WRITE:`` totals, ``"disk"``
    ``Disk stats`` and its device lines, ``"progress"`` ``Jobs: ...`` lines, ``Laying out``
    lines, the ``...`` fio prints under a job repeated by ``numjobs``, ``<host>`` marks and
    ``fio: ...`` notes.  Used to find where one run's output
    starts and ends in a longer document (:mod:`storbench.documents`).
    """
    line = line.replace("\t", " ").strip()
    if not line or len(line) > _MAX_LINE or line[0] in _NEVER_FIRST:
        return None  # JSON's lines, mostly: no fio text line starts like that
    return _classify(line)


#: characters no line of fio's classic text starts with (JSON lines do)
_NEVER_FIRST = frozenset('"{}[],')
_DISK_ANY = re.compile(r"^\S+: ios=\d+/\d+")


@functools.lru_cache(maxsize=65536)
def _classify(line: str) -> str | None:
    if _CLIENT.match(line) and not line.startswith("<<"):
        line = _CLIENT.match(line).group("rest").strip() or "<host>"  # type: ignore[union-attr]
        if line == "<host>":
            return "progress"
    at = line.find(_JOB_HEAD_AT)
    if at > 0 and _JOB_HEAD.match(line, at):
        return "head"
    at = line.find(_JOB_DEF_AT)
    if at > 0 and _JOB_DEF.match(line, at):
        return "def"
    if _VERSION.match(line) or _HOSTNAME_LINE.match(line):
        return "version"
    if _STARTING.match(line):
        return "starting"
    if _GROUP.match(line) or _GROUP_TOTAL.match(line):
        return "status"
    if _DISK_HEAD.match(line) or _DISK.match(line) or line.startswith("aggrios=") or _DISK_ANY.match(line):
        return "disk"
    if line == "..." or _PROGRESS.match(line) or _LAYING.match(line) or _NOTE.match(line) or _HOST_MARK.search(line):
        return "progress"
    if _BODY.match(line):
        return "body"
    return None


def parse_fio_text(text: str) -> FioResult:
    """Parse fio's classic text output (with any noise around it) into a :class:`FioResult`.

    Raises :class:`FioParseError` (one line) when the text holds no fio result block.
    """
    if not isinstance(text, str):
        raise FioParseError(f"fio output must be text, not {type(text).__name__}")
    try:
        parser = _Parser()
        for number, line in enumerate(_lines(text), 1):
            parser.line_no = number
            parser.feed(line)
        result = parser.result(text)
        if why := cut_last_line(text):
            raise FioParseError(f"fio text output is cut: {why}; nothing of it is read (paste the whole output)")
        return result
    except FioParseError:
        raise
    except (ValueError, ArithmeticError, LookupError, TypeError, AttributeError, RecursionError) as exc:
        raise FioParseError(f"unreadable fio text output: {_excerpt(str(exc))}") from None


# --------------------------------------------------------------------------- helpers


def _lines(text: str) -> Iterator[str]:
    """Stripped lines; ``\\r`` alone also ends a line (progress output), tabs are spaces."""
    for raw in text.lstrip("\ufeff").splitlines():
        yield raw.replace("\t", " ").strip()


def _excerpt(value: str) -> str:
    value = " ".join(value.split())
    return value if len(value) <= _EXCERPT else value[: _EXCERPT - 1] + "…"


@functools.lru_cache(maxsize=256)
def _pct_key(printed: str) -> str:
    """:func:`pct_key` of a printed percentile ("99.90"): the same few recur in every table."""
    return pct_key(printed)


def _dec(value: str) -> Decimal:
    """A printed number with an optional ``k``/``K``/``M``.. suffix (powers of 1000); ``nan``
    and ``inf`` as Decimal reads them."""
    suffix = value[-1:]
    if suffix and suffix in _SUFFIX:
        return Decimal(value[:-1]) * _SUFFIX[suffix]
    return Decimal(value)


def _num(value: str, scale: int | Decimal = 1) -> float:
    if type(scale) is int and len(value) < 16 and value.isascii() and value.isdigit():  # most of fio's numbers: exact as integers
        return float(int(value) * scale)
    return float(_dec(value) * scale)


def _int(value: str, scale: int | Decimal = 1) -> int:
    if type(scale) is int and len(value) < 16 and value.isascii() and value.isdigit():
        return int(value) * scale
    return int((_dec(value) * scale).to_integral_value())


def _byte_scale(unit: str, legacy: bool) -> Decimal:
    """Bytes per printed unit: ``KiB`` 1024, ``kB`` 1000, ``MB`` 1e6 (or 1024**2 if
    ``legacy``), ``Kibit`` 128.  Lowercase ``k`` is always SI; ``i`` always binary."""
    match = _UNIT.match(unit)
    if not match:
        raise ValueError(f"unknown unit {unit!r}")
    prefix, binary, kind = match["p"], match["i"], match["b"]
    base = 1024 if binary or (legacy and prefix not in ("", "k")) else 1000
    scale = Decimal(base) ** _PREFIX_POWER[prefix]
    return scale / 8 if kind in ("bit", "b") else scale


def _is_si(unit: str) -> bool:
    """``kB``/``MB``/``Gbit``: a decimal multiple (fio's primary unit under ``kb_base=1000``)."""
    return bool(unit) and unit[0] in "kKMGTPE" and "i" not in unit


def _pct_items(body: str) -> dict[str, float]:
    return {m["key"]: float(Decimal(m["v"])) for m in _DIST_ENTRY.finditer(body)}


def _ints(segment: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", segment)]


def _bs_option(text: str) -> str:
    """``(R) 4096B-4096B, (W) 16.0KiB-16.0KiB, ..`` / ``4K-4K/4K-4K`` -> fio option syntax in bytes."""
    ranges = _BS_RANGE.findall(text)
    if not ranges:
        return text.strip()
    parts = []
    for lo, lo_unit, hi, hi_unit in ranges:
        lo_b = int((Decimal(lo) * _byte_scale(lo_unit or "B", True)).to_integral_value())
        hi_b = int((Decimal(hi) * _byte_scale(hi_unit or "B", True)).to_integral_value())
        parts.append(str(lo_b) if lo_b == hi_b else f"{lo_b}-{hi_b}")
    return parts[0] if len(set(parts)) == 1 else ",".join(parts)


# --------------------------------------------------------------------------- builders


@dataclass
class _Dir:
    direction: str
    io_bytes: int
    bw_bytes: float
    iops: float
    runtime_ms: int
    si: bool = False  # kb_base=1000: the primary BW figure is in kB/MB/GB
    lat: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)
    pct: dict[str, dict[str, float]] = field(default_factory=dict)
    bw_summary: SampleSummary | None = None
    iops_summary: SampleSummary | None = None


@dataclass
class _Job:
    name: str
    groupid: int = 0
    error: int = 0
    time_text: str | None = None
    hostname: str | None = None
    dirs: dict[str, _Dir] = field(default_factory=dict)
    sync_lat: tuple[float, float, float, float] | None = None
    sync_pct: dict[str, float] = field(default_factory=dict)
    content: bool = False
    cpu: JSONObject = field(default_factory=dict)
    depths: dict[str, dict[str, float]] = field(default_factory=dict)
    lat_dist: dict[str, float] = field(default_factory=dict)
    total: list[int] = field(default_factory=list)
    short: list[int] = field(default_factory=list)
    drop: list[int] = field(default_factory=list)
    total_err: int | None = None
    first_error: int | None = None
    description: str | None = None
    steadystate: JSONObject | None = None


class _Parser:
    """A line-at-a-time state machine: job blocks, their directions, and the tables in them."""

    def __init__(self) -> None:
        self.version: str | None = None
        self.host_version: str | None = None
        self.job_defs: dict[str, dict[str, str | None]] = {}
        self.first_def: str | None = None
        self.jobs: list[_Job] = []
        self.job: _Job | None = None
        #: where latency lines go: a direction, ``"sync"``, or None (outside a direction)
        self.target: _Dir | str | None = None
        #: the percentile table being read: (dict to fill, ns per printed unit)
        self.table: tuple[dict[str, float], int] | None = None
        self.notes: list[str] = []
        self.interrupted = False
        self.disks: list[DiskUtil] = []
        self.host: str | None = None  # client/server: the last "<host>" seen
        self.client_mode = False
        self.line_no = 0  # the line being fed (1-based), for the errors that name it

    # ----------------------------------------------------------------- dispatch

    def feed(self, line: str) -> None:
        if not line:
            self.table = None
            return
        if len(line) > _MAX_LINE:
            self.interrupted = self.interrupted or bool(_SIGNAL.search(line))
            return
        client = _CLIENT.match(line) if line[0] == "<" else None
        if client:
            self.client_mode = True
            self.host = client["host"]
            line = client["rest"].strip()
            if not line:
                return
        elif ">" in line and (mark := _HOST_MARK.search(line)):
            self.client_mode = True
            self.host = mark["host"]
            return

        if line.startswith("|"):
            if self.table is not None:
                values, unit_ns = self.table
                for m in _PCT_ENTRY.finditer(line):
                    values[_pct_key(m["p"])] = _num(m["v"], unit_ns)
            return
        self.table = None

        if "terminating on signal" in line and _SIGNAL.search(line):
            self.interrupted = True
        if _NOTE.match(line):
            self.notes.append(line)
            return
        if self._global(line):
            return
        first = line[0]
        if first in "rwtm" and (start := _DIR_START.match(line)) and not (_DIR_NEW.match(line) or _DIR_OLD.match(line)):
            raise FioParseError(
                f"line {self.line_no}: the {start['dir']} line is cut or holds a figure that is not a number "
                f"({_excerpt(line)!r}): the output is incomplete or mangled"
            )
        if self.job is None:
            if not (_DIR_NEW.match(line) or _DIR_OLD.match(line)):
                return
            name = self.first_def if self.first_def is not None else "unknown"
            self._start(_Job(name=name))
        assert self.job is not None  # _start set it
        self._job_line(line, self.job)

    def _global(self, line: str) -> bool:
        """Lines outside job blocks; True when consumed."""
        if m := _VERSION.match(line):
            self.version = self.version or f"fio-{m['v']}"
            return True
        if m := _HOSTNAME_LINE.match(line):
            self.host_version = self.host_version or m["version"]
            return True
        at = line.find(_JOB_HEAD_AT)
        if at >= 0 and (m := _JOB_HEAD.match(line, at)):
            self._start(self._head(line[:at], m))
            return True
        at = line.find(_JOB_DEF_AT)
        if at >= 0 and (m := _JOB_DEF.match(line, at)):
            self._job_def(line[:at], m)
            return True
        if _GROUP.match(line) or _DISK_HEAD.match(line):
            self._close()
            return True
        if m := _DISK.match(line):
            self._close()
            self.disks.append(self._disk(m))
            return True
        return False

    def _job_line(self, line: str, job: _Job) -> None:
        # each pattern is tried only where the line starts as it must (a literal test is cheaper than a match)
        c = line[0]
        if c in "rwtm" and (m := (_DIR_NEW.match(line) or _DIR_OLD.match(line))):
            legacy = m.re is _DIR_OLD
            d = _Dir(
                direction=m["dir"],
                io_bytes=_int(m["io"], _byte_scale(m["iou"] or "B", legacy)),
                bw_bytes=_num(m["bw"], _byte_scale(m["bwu"] or "B", legacy)),
                iops=_num(m["iops"]),
                runtime_ms=int(m["runt"]),
                si=not legacy and _is_si(m["bwu"]),
            )
            job.dirs[d.direction] = d
            job.content = True
            self.target = d
        elif c in "scl" and (m := _LAT.match(line)):
            stats = tuple(_num(m[k], _TIME_NS[m["unit"]]) for k in ("min", "max", "avg", "dev"))
            if m["kind"] == "sync":
                if self.target == "sync":
                    job.sync_lat = stats  # type: ignore[assignment]
            elif isinstance(self.target, _Dir):
                self.target.lat[m["kind"]] = stats  # type: ignore[assignment]
        elif "percentiles" in line and (m := _PCT_HEAD.match(line)):
            self.table = self._table_for(m["kind"].strip(), _TIME_NS[m["unit"]], job)
        elif c == "b" and (m := _BW_SUM.match(line)):
            if isinstance(self.target, _Dir) and m["samples"] is not None:
                unit = m["unit"]
                if self.target.si and unit.startswith("Mi"):  # kb_base=1000: fio labels MB/s "MiB/s"
                    scale = _byte_scale("M" + unit[2:], legacy=False)
                else:  # 2.x "KB"/"MB" are binary, like "KiB"/"MiB"; "kB" is SI
                    scale = _byte_scale(unit, legacy=True)
                low, high, mean, dev = (_num(m[k], scale) for k in ("min", "max", "avg", "dev"))
                self.target.bw_summary = SampleSummary(low, high, mean, dev, samples=int(m["samples"]), agg_pct=_num(m["per"]))
        elif c == "i" and (m := _IOPS_SUM.match(line)):
            if isinstance(self.target, _Dir):
                low, high, mean, dev = (_num(m[k]) for k in ("min", "max", "avg", "dev"))
                self.target.iops_summary = SampleSummary(low, high, mean, dev, samples=int(m["samples"]))
        elif c == "l" and (m := _LAT_DIST.match(line)):
            unit = _DIST_UNIT[m["unit"]]
            job.lat_dist.update({f"{k}{unit}": v for k, v in _pct_items(m["body"]).items()})
            self.target = None
        elif c == "f" and _SYNC_HEAD.match(line):
            self.target = "sync"
        elif c == "c" and (m := _CPU.match(line)):
            job.cpu = {
                "usr": _num(m["usr"]),
                "sys": _num(m["sys"]),
                **{k: int(m[k]) for k in ("ctx", "majf", "minf")},
            }
            job.content = True
            self.target = None
        elif c in "Isc" and (m := _DEPTHS.match(line)):
            job.depths[m["which"]] = _pct_items(m["body"])
        elif c == "i" and (m := _ISSUED.match(line)):
            parts = _ISSUED_SPLIT.split(m["body"])  # ["", "total", "1,2,0,0 ", "short", ...]
            for key, values in zip(parts[1::2], parts[2::2]):
                setattr(job, "drop" if key.startswith("drop") else key, _ints(values))
        elif c == "e" and (m := _ERRORS.match(line)):
            job.total_err, job.first_error = int(m["total"]), int(m["first"])
        elif c == "D" and (m := _DESCRIPTION.match(line)):
            job.description = m["text"]
        elif c == "s" and (m := _STEADY.match(line)):
            job.steadystate = self._steady(m)

    # ----------------------------------------------------------------- pieces

    def _start(self, job: _Job) -> None:
        self._close()
        self.jobs.append(job)
        self.job = job

    def _close(self) -> None:
        self.job = None
        self.target = None
        self.table = None

    def _head(self, name: str, m: re.Match[str]) -> _Job:
        name = name.strip()
        if name.startswith("Jobs:") and "]" in name:  # a progress line glued in front
            name = name.rsplit("]", 1)[1].strip()
        aggregate = name == "All clients"
        return _Job(
            name=name,
            groupid=int(m["g"]),
            error=int(m["err"]),
            time_text=(m["time"] or "").strip() or None,
            hostname=None if aggregate or not self.client_mode else self.host,
        )

    def _job_def(self, name: str, m: re.Match[str]) -> None:
        name = name.strip()
        if name in self.job_defs:
            return
        self.job_defs[name] = {
            "rw": m["rw"],
            "bs": _bs_option(m["bs"]),
            "ioengine": m["engine"],
            "iodepth": m["depth"],
        }
        if self.first_def is None:
            self.first_def = name

    def _table_for(self, kind: str, unit_ns: int, job: _Job) -> tuple[dict[str, float], int] | None:
        if kind == "sync":
            return (job.sync_pct, unit_ns) if self.target == "sync" else None
        if kind in ("clat", "lat", "slat") and isinstance(self.target, _Dir):
            return self.target.pct.setdefault(kind, {}), unit_ns
        return None  # "clat prio 2/7 (69.25% of IOs)" and the like

    def _disk(self, m: re.Match[str]) -> DiskUtil:
        return DiskUtil(
            name=m["name"],
            read_ios=int(m["r"]),
            write_ios=int(m["w"]),
            read_merges=int(m["rm"]),
            write_merges=int(m["wm"]),
            read_ticks_ms=int(m["rt"]),
            write_ticks_ms=int(m["wt"]),
            in_queue_ms=int(m["q"]),
            util_pct=_num(m["util"]),
            aggregate=m["agg"] is not None,
            hostname=self.host if self.client_mode else None,
        )

    @staticmethod
    def _steady(m: re.Match[str]) -> JSONObject:
        data: JSONObject = {
            "bw_mean": _int(m["bw"], _byte_scale(m["bwu"] or "B", False)),
            "iops_mean": _int(m["iops"]),
        }
        if m["lat"] is not None:
            data["lat_mean"] = _int(m["lat"], _TIME_NS[m["latu"]])
        return {
            "attained": 1 if m["att"] == "yes" else 0,
            "criterion": f"{m['val']}{m['pct']}",
            "criterion_name": m["crit"].strip(),
            "data": data,
        }

    # ----------------------------------------------------------------- result

    def result(self, text: str) -> FioResult:
        jobs = [j for j in self.jobs if j.content or j.error]
        if not jobs:
            raise FioParseError(self._no_result_message(text))
        return FioResult(
            fio_version=self.version or self.host_version,
            jobs=tuple(self._build(j) for j in jobs),
            format="normal",
            time_text=next((j.time_text for j in jobs if j.time_text), None),
            disk_util=tuple(self.disks),
            notes=tuple(self.notes),
            interrupted=self.interrupted,
        )

    def _no_result_message(self, text: str) -> str:
        if self.jobs:
            return "fio text output is truncated: a job header without any results"
        first = next((line for line in _lines(text) if line), "")
        if not first:
            return "not fio text output: the text is empty"
        if _JSON_START.search(text) and ('"jobs"' in text or '"client_stats"' in text):
            return "not fio text output: this is fio JSON output (found no classic text result block)"
        return f"not fio text output: found no fio result block (starts with {_excerpt(first)!r})"

    def _build(self, job: _Job) -> JobResult:
        directions: dict[str, DirectionStats] = {}
        for name in DIRECTIONS:
            d = job.dirs.get(name)
            if d is None or (d.io_bytes == 0 and d.iops == 0):
                continue
            directions[name] = self._direction(d, job)
        sync_total = job.total[3] if len(job.total) > 3 else 0
        sync = None
        if job.sync_lat is not None or sync_total:
            sync = SyncStats(total_ios=sync_total, lat_ns=_latency(job.sync_lat, job.sync_pct))
        options: dict[str, str | None] = dict(self.job_defs.get(job.name, {}))
        if job.description is not None:
            options["description"] = job.description
        return JobResult(
            name=job.name,
            groupid=job.groupid,
            error=job.error,
            directions=directions,
            sync=sync,
            usr_cpu_pct=job.cpu.get("usr"),
            sys_cpu_pct=job.cpu.get("sys"),
            ctx=job.cpu.get("ctx"),
            majf=job.cpu.get("majf"),
            minf=job.cpu.get("minf"),
            iodepth_level_pct=job.depths.get("IO depths", {}),
            iodepth_submit_pct=job.depths.get("submit", {}),
            iodepth_complete_pct=job.depths.get("complete", {}),
            latency_dist_pct=job.lat_dist,
            options=options,
            hostname=job.hostname,
            is_aggregate=job.name == "All clients",
            steadystate=job.steadystate,
            total_err=job.total_err,
            first_error=job.first_error,
        )

    @staticmethod
    def _direction(d: _Dir, job: _Job) -> DirectionStats:
        index = {"read": [0], "write": [1], "trim": [2], "mixed": [0, 1, 2]}[d.direction]

        def count(values: list[int]) -> int | None:
            if not values or max(index) >= len(values):
                return None
            return sum(values[i] for i in index)

        return DirectionStats(
            direction=d.direction,
            io_bytes=d.io_bytes,
            bw_bytes=d.bw_bytes,
            iops=d.iops,
            runtime_ms=d.runtime_ms,
            total_ios=count(job.total),
            short_ios=count(job.short),
            drop_ios=count(job.drop),
            lat_ns=_latency(d.lat.get("lat"), d.pct.get("lat", {})),
            clat_ns=_latency(d.lat.get("clat"), d.pct.get("clat", {})),
            slat_ns=_latency(d.lat.get("slat"), d.pct.get("slat", {})),
            bw_summary=d.bw_summary,
            iops_summary=d.iops_summary,
        )


def _latency(stats: tuple[float, float, float, float] | None, pct: dict[str, float]) -> LatencyStats | None:
    if stats is None:
        return None
    lo, hi, mean, dev = stats
    return LatencyStats(lo, hi, mean, dev, samples=None, percentiles=dict(pct))

