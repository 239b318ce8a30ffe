"""Sizes and durations as people and fio write them.  Pure: no I/O.

Sizes follow fio's default ``kb_base=1024``: every unit is binary, whether it is
written ``k``, ``K``, ``KB``, ``KiB`` or ``kib``.  ``4k`` = ``4KiB`` = 4096 bytes,
``1g`` = ``1GiB`` = 1073741824 bytes.  A bare number is bytes.

Watch out: fio itself reads the IEC spellings the *other* way round under
``kb_base=1024`` (to stay compatible with old job files, ``1MiB`` means
1,000,000 bytes to fio while ``1m`` and ``1MB`` mean 1,048,576).  So a size a
person wrote as ``8MiB`` must never reach fio as written: :func:`fio_size`
turns it into ``8m``, which fio reads as the 8 * 1024 * 1024 bytes meant.

Durations: a bare number is seconds; units ``us``, ``ms``, ``s``, ``m`` (minutes),
``h`` and ``d``, as fio accepts them for time options.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from storbench.errors import UsageError

_SIZE_UNITS: dict[str, int] = {
    "": 1,
    "k": 1024,
    "m": 1024**2,
    "g": 1024**3,
    "t": 1024**4,
    "p": 1024**5,
}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?|\.\d+)\s*([kmgtp]?)(i?b)?\s*$", re.IGNORECASE)
#: A size fio reads exactly as :func:`parse_size` does (no IEC ``i``, no fraction).
_FIO_NATIVE_SIZE_RE = re.compile(r"^\d+[kmgtp]?b?$", re.IGNORECASE)

_SIZE_HELP = (
    "use a whole number of bytes or a number with a unit k, m, g, t or p "
    "(binary: 1k = 1024 bytes; KB, KiB and k all mean the same), e.g. 4k, 512M, 16g, 1.5GiB"
)

_DURATION_UNITS: dict[str, float] = {
    "us": 1e-6,
    "usec": 1e-6,
    "ms": 1e-3,
    "msec": 1e-3,
    "": 1.0,
    "s": 1.0,
    "sec": 1.0,
    "m": 60.0,
    "min": 60.0,
    "h": 3600.0,
    "hour": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
}
_DURATION_RE = re.compile(
    r"^\s*(\d+(?:\.\d+)?|\.\d+)\s*(us|usec|ms|msec|s|sec|min|m|hour|h|day|d)?\s*$", re.IGNORECASE
)
#: A duration fio reads exactly as :func:`parse_duration` does (bare number = seconds).
_FIO_NATIVE_DURATION_RE = re.compile(r"^\d+(us|usec|ms|msec|s|sec|m|min|h|hour|d|day)?$", re.IGNORECASE)
_DURATION_HELP = (
    "use a number of seconds or a number with a unit us, ms, s, m, h or d, e.g. 30, 30s, 2m, 500ms, 1.5s"
)


def _shown(text: object) -> str:
    return repr(text) if isinstance(text, str) else repr(str(text))


def parse_size(text: str | int) -> int:
    """Bytes in a size such as ``"16G"``, ``"1.5GiB"``, ``"4k"``, ``"4096"``.

    All units are binary (fio's default ``kb_base=1024``).  Fractions are
    allowed when the result is a whole number of bytes (``"1.5g"``, not ``"0.3k"``).
    Raises :class:`UsageError` naming the bad value.
    """
    if isinstance(text, bool):
        raise UsageError(f"invalid size {text!r}: {_SIZE_HELP}")
    if isinstance(text, int):
        if text < 0:
            raise UsageError(f"invalid size {text!r}: a size cannot be negative")
        return text
    if not isinstance(text, str):
        raise UsageError(f"invalid size {_shown(text)}: {_SIZE_HELP}")
    m = _SIZE_RE.match(text)
    if not m:
        raise UsageError(f"invalid size {text!r}: {_SIZE_HELP}")
    number, unit = m.group(1), m.group(2).lower()
    multiplier = _SIZE_UNITS[unit]
    if "." in number:
        whole, _, frac = number.partition(".")
        # exact arithmetic: value = (whole * 10^len(frac) + frac) * multiplier / 10^len(frac)
        scale = 10 ** len(frac)
        numerator = (int(whole or "0") * scale + int(frac)) * multiplier
        if numerator % scale:
            raise UsageError(f"invalid size {text!r}: not a whole number of bytes; {_SIZE_HELP}")
        return int(numerator // scale)
    return int(number) * multiplier


def read_size(text: str | int | None) -> int | None:
    """Bytes in a size a tool printed (``"4096"``, ``"4096k"``, ``"8.00MiB"``, ``"128M"``, ``"512B"``):
    the units of :func:`parse_size`, a fraction rounded to whole bytes; None when it is not a size
    (tool output is read leniently, a person's input strictly)."""
    if text is None or isinstance(text, bool):
        return None
    m = _SIZE_RE.match(str(text))
    if not m:
        return None
    return round(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])


def is_fio_native_size(text: str) -> bool:
    """True where fio reads ``text`` exactly as :func:`parse_size` does (``16G``, ``4k``, ``1048576``)."""
    return bool(_FIO_NATIVE_SIZE_RE.match(text))


def fio_size(text: str | int) -> str:
    """Validate a size and return it in a form fio reads as meant: ``"1.5GiB"`` -> ``"1536m"``.

    The result is the largest binary unit that divides the size exactly, lower
    case (``"16g"``, ``"4k"``, ``"1000"``), so fio's own reading of IEC
    suffixes never applies.
    """
    n = parse_size(text)
    for unit in ("p", "t", "g", "m", "k"):
        mult = _SIZE_UNITS[unit]
        if n and n % mult == 0:
            return f"{n // mult}{unit}"
    return str(n)


def format_bytes(n: int | float | None, *, exact: bool = False, missing: str = "-") -> str:
    """Bytes in binary units, the one byte formatter: ``1073741824`` -> ``"1.0 GiB"``; below
    1 KiB whole bytes, ``"512 B"``; ``None`` -> ``missing``.  ``exact``: a whole number of the
    unit without its decimal, as the storage description shows sizes (``"64 MiB"``, ``"1.8 TiB"``)."""
    if n is None:
        return missing
    if n < 0:
        return "-" + format_bytes(-n, exact=exact, missing=missing)
    if n < 1024:
        return f"{n:.0f} B"
    for unit, name in (("p", "PiB"), ("t", "TiB"), ("g", "GiB"), ("m", "MiB"), ("k", "KiB")):
        mult = _SIZE_UNITS[unit]
        if n >= mult:
            value = n / mult
            return f"{value:.0f} {name}" if exact and value == int(value) else f"{value:.1f} {name}"
    raise AssertionError("unreachable")  # pragma: no cover


#: no benchmark runs 30 years; beyond it fio's microsecond counters and storbench's arithmetic overflow
MAX_DURATION_S = 1e9


def parse_duration(text: str | int | float) -> float:
    """Seconds in a duration such as ``"30"``, ``"30s"``, ``"2m"``, ``"1h"``, ``"500ms"``, ``"1.5s"``.

    A bare number is seconds.  Raises :class:`UsageError` naming the bad value.
    """
    if isinstance(text, bool):
        raise UsageError(f"invalid duration {text!r}: {_DURATION_HELP}")
    if isinstance(text, (int, float)):
        if not math.isfinite(text) or text < 0:
            raise UsageError(f"invalid duration {text!r}: {_DURATION_HELP}")
        if text > MAX_DURATION_S:
            raise UsageError(f"invalid duration {text!r}: too long (at most {MAX_DURATION_S:.0e} s)")
        return float(text)
    if not isinstance(text, str):
        raise UsageError(f"invalid duration {_shown(text)}: {_DURATION_HELP}")
    m = _DURATION_RE.match(text)
    if not m:
        raise UsageError(f"invalid duration {text!r}: {_DURATION_HELP}")
    seconds = float(m.group(1)) * _DURATION_UNITS[(m.group(2) or "").lower()]
    if not math.isfinite(seconds) or seconds > MAX_DURATION_S:
        raise UsageError(f"invalid duration {text[:40]!r}: too long (at most {MAX_DURATION_S:.0e} s)")
    return seconds


def is_fio_native_duration(text: str) -> bool:
    """True where fio reads ``text`` as :func:`parse_duration` does (for options whose bare number is seconds)."""
    return bool(_FIO_NATIVE_DURATION_RE.match(text))


def fio_duration(text: str | int | float) -> str:
    """Validate a duration and return a form fio accepts for seconds-based options (``runtime``, ``ramp_time``).

    Whole-number input that fio already reads the same way is returned as
    written (``"30"``, ``"2m"``); anything else becomes whole seconds, milli- or
    microseconds with an explicit unit (``"1.5s"`` -> ``"1500ms"``), because fio
    does not take fractions.
    """
    seconds = parse_duration(text)
    if isinstance(text, str) and is_fio_native_duration(text.strip()):
        return text.strip()
    if isinstance(text, int) and not isinstance(text, bool):
        return str(text)
    us = seconds * 1_000_000
    if abs(us - round(us)) > 1e-6 * max(1.0, us):
        raise UsageError(f"invalid duration {_shown(text)}: fio's finest time unit is 1 us")
    us_int = round(us)
    if us_int % 1_000_000 == 0:
        return f"{us_int // 1_000_000}s"
    if us_int % 1000 == 0:
        return f"{us_int // 1000}ms"
    return f"{us_int}us"


def format_duration(seconds: float) -> str:
    """Human form: ``0.5`` -> ``"500 ms"``, ``1.5`` -> ``"1.5 s"``, ``90`` -> ``"1 m 30 s"``, ``3600`` -> ``"1 h"``."""
    if seconds < 0:
        return "-" + format_duration(-seconds)
    if seconds == 0:
        return "0 s"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.0f} ms"
    if seconds < 60:
        text = f"{seconds:.1f}".rstrip("0").rstrip(".")
        return f"{text} s"
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    parts = []
    if hours:
        parts.append(f"{hours} h")
    if minutes:
        parts.append(f"{minutes} m")
    if secs:
        parts.append(f"{secs} s")
    return " ".join(parts)


# --------------------------------------------------------------------------- figures as a person reads them
# (Human forms of measured numbers (pure).)


def fmt_iops(iops: float | None) -> str:
    if iops is None:
        return "-"
    if iops >= 1e6:
        return f"{iops / 1e6:.2f}M"
    if iops >= 1e4:
        return f"{iops / 1e3:.1f}k"
    if iops >= 100:
        return f"{iops:.0f}"
    return f"{iops:.1f}"


def fmt_bw(bw_bytes: float | None) -> str:
    """Bytes per second in binary units, as fio prints them."""
    if bw_bytes is None:
        return "-"
    for unit, scale in (("GiB/s", 1 << 30), ("MiB/s", 1 << 20), ("KiB/s", 1 << 10)):
        if bw_bytes >= scale:
            return f"{bw_bytes / scale:.1f} {unit}"
    return f"{bw_bytes:.0f} B/s"


def fmt_ns(ns: float | None) -> str:
    """A latency in the unit that keeps 3-4 significant digits."""
    if ns is None:
        return "n/m"  # not measured
    if ns >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def fmt_number(value: float | None, unit: str = "") -> str:
    """Another benchmark's figure in its own unit, with 4 significant digits ("1,631,249
    Final Score", "2.05 MB/s", "264 Seconds")."""
    if value is None:
        return "-"
    if abs(value) >= 1e4:
        text = f"{value:,.0f}"
    else:
        text = f"{value:.4g}"
    return f"{text} {unit}".rstrip()


def formatter(metric: str) -> Callable[[float | None], str]:
    """The human form of a comparison metric: fio's by its kind, another benchmark's figure
    (a Measure, whose metric is its unit) as a number with that unit."""
    if metric == "iops":
        return fmt_iops
    if metric == "bw_bytes":
        return fmt_bw
    if metric.endswith("_ns"):
        return fmt_ns
    return fmt_number  # the unit is the metric's name, shown beside it


def fmt_interval(lo: float | None, hi: float | None, metric: str, n: int, fmt: Callable[[float], str] | None = None) -> str:
    """A 95% interval of a positive quantity (IOPS, bandwidth, latency), both ends in one unit:
    "n < 3: none" for one or two runs (Student's t with 1 degree of freedom is 12.7: an interval
    that wide says nothing), clipped at 0 where the t interval reaches below it (the runs are too
    few or too spread for it; said so): the rule of :attr:`storbench.stats.core.Summary.reported_ci95`.
    ``fmt`` formats both ends of another benchmark's figure (``metric`` is then its unit)."""
    if n < 3 or lo is None or hi is None:
        return "none (n < 3)"
    clipped = lo < 0
    lo = max(lo, 0.0)
    if fmt is not None:
        text = f"{fmt(lo)} … {fmt(hi)}"
    elif metric == "iops":
        unit, scale, digits = next(((u, s, d) for u, s, d in (("M", 1e6, 2), ("k", 1e3, 1)) if hi >= s * 10), ("", 1.0, 0))
        text = f"{lo / scale:.{digits}f} … {hi / scale:.{digits}f}{unit} IOPS"
    elif metric == "bw_bytes":
        unit, scale = next(((u, s) for u, s in (("GiB/s", 1 << 30), ("MiB/s", 1 << 20), ("KiB/s", 1 << 10)) if hi >= s), ("B/s", 1))
        text = f"{lo / scale:.1f} … {hi / scale:.1f} {unit}"
    else:  # nanoseconds, in the unit of the upper end
        unit, scale = next(((u, s) for u, s in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)) if hi >= s), ("ns", 1.0))
        digits = 2 if scale >= 1e6 else (1 if scale == 1e3 else 0)
        text = f"{lo / scale:.{digits}f} … {hi / scale:.{digits}f} {unit}"
    return text + (" (clipped at 0: too few or too spread runs)" if clipped else "")


#: the words read as a fio boolean's "on" and "off".  fio 3.33 itself takes only a number there
#: (``--direct=yes`` fails: "failed parsing direct=yes", checked on this machine); the words are read
#: as write-ups and older job files mean them.  One set for every reader (checks, the write guard).
FIO_TRUE: frozenset[str] = frozenset({"1", "true", "yes", "on", "y"})
FIO_FALSE: frozenset[str] = frozenset({"0", "false", "no", "off", "n", "none"})


def fio_bool(value: str | None) -> bool | None:
    """A fio boolean option's value: a valueless flag (None or blank) is on, a word of
    :data:`FIO_TRUE`/:data:`FIO_FALSE` or a number (non-zero: on) says which; None: unreadable."""
    if value is None or not str(value).strip():
        return True
    word = str(value).strip().lower()
    if word in FIO_TRUE:
        return True
    if word in FIO_FALSE:
        return False
    try:
        return int(word) != 0
    except ValueError:
        return None


def fmt_measure(value: float) -> str:
    """Another benchmark's figure (tps, MB/s, files/s, ms): whole with thousands separators from
    100 up (``3,164``), else three significant digits (``42.2``, ``0.638``)."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
