"""Application loads' outputs in a document (pure): pgbench's summary, dbench's result, fs_mark's
table and sysbench fileio's report, as a ticket, a mail or a post shows them.

Each output starts at a line only that tool prints first (:data:`STARTS`: ``transaction type:``
or pgbench's version line, ``dbench version``, fs_mark's ``FSUse%`` header with the ``#`` lines
above it, ``sysbench N.N``) and runs to the next such line, the next code fence or the end of the
document; the tool's own reader (:attr:`storbench.loads.base.LoadTool.pasted`) reads it, and
what it cannot read is one :class:`LoadSkipped` with the reader's words.  A dbench output pasted
from its ``Throughput`` line alone is found by that line.  Each output is under the nearest
Markdown or HTML heading above it outside code fences and outputs.

May import: loads (the readers), errors; pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..loads.base import LoadParseError, Pasted
from .source import Line, document_lines

#: the first line of each tool's output: (tool, pattern)
STARTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("pgbench", re.compile(r"^\s*(?:pgbench \((?:PostgreSQL\) )?\d|starting vacuum\.\.\.|transaction type: )")),
    ("dbench", re.compile(r"^\s*dbench version \S+")),
    ("fs_mark", re.compile(r"^\s*#\s+(?:\S*/)?fs_mark\s|^\s*FSUse%\s+Count\s+Size\s+Files/sec")),
    ("sysbench-fileio", re.compile(r"^\s*sysbench \d+\.\d+\S*(?::|\s+\(|\s*$)")),
)
#: lines that continue the output above them rather than start another (pgbench prints its
#: version, "starting vacuum" and then "transaction type"; fs_mark its "#" lines then its header)
_CONTINUES = {"pgbench": re.compile(r"^\s*(?:starting vacuum|transaction type: )"), "fs_mark": re.compile(r"^\s*FSUse%")}
#: how far below its start a continuing line may be (pgbench prints a progress line a second
#: between its version and its summary)
_REACH = {"pgbench": 100_000, "fs_mark": 12}
_DBENCH_END = re.compile(r"^\s*Throughput [\d.]+ MB/sec")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6}) (\S.*?)\s*#*\s*$")
#: fs_mark's own "#" lines, which a Markdown reader would take for headings
_FS_MARK_COMMENT = re.compile(r"^#\s+(?:Version|Sync method|Directories|File names|Files info|App overhead|fs_mark)\b")


@dataclass(frozen=True)
class LoadFound:
    """One load's output in a document: which tool, where, under which heading, and what it says."""

    tool: str
    first_line: int
    last_line: int
    text: str
    heading: str | None
    pasted: Pasted


@dataclass(frozen=True)
class LoadSkipped:
    """An output that starts as a load's does but cannot be read: where, and the reader's words."""

    tool: str
    first_line: int
    last_line: int
    reason: str


def find_load_outputs(text: str, readers: Mapping[str, Callable[[str], Pasted] | None]) -> tuple[list[LoadFound], list[LoadSkipped]]:
    """Every load output of ``text`` in document order (``readers``: tool name -> its
    :attr:`~storbench.loads.base.LoadTool.pasted`), and the ones that could not be read."""
    lines = document_lines(text)
    starts = _starts(lines)
    found: list[LoadFound] = []
    skipped: list[LoadSkipped] = []
    taken: set[int] = set()
    for k, (index, tool) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else len(lines)
        end = next((j for j in range(index + 1, end) if _FENCE.match(lines[j].text) or _is_heading(lines[j].text)), end)
        while end > index + 1 and not lines[end - 1].text.strip():
            end -= 1
        region = lines[index:end]
        taken.update(range(index, end))
        body = "\n".join(ln.text for ln in region)
        read = readers.get(tool)
        try:
            if read is None:
                raise LoadParseError(f"storbench cannot read {tool}'s output")
            pasted = read(body)
        except LoadParseError as exc:
            skipped.append(LoadSkipped(tool, region[0].number, region[-1].number, str(exc)))
            continue
        found.append(LoadFound(tool, region[0].number, region[-1].number, body, None, pasted))
    headings = _headings(lines, taken)
    return [_with_heading(f, headings) for f in found], skipped


def load_line_numbers(found: list[LoadFound], skipped: list[LoadSkipped]) -> set[int]:
    """The document's line numbers that belong to load outputs (fio's reader leaves them alone)."""
    spans = [(f.first_line, f.last_line) for f in found] + [(s.first_line, s.last_line) for s in skipped]
    return {n for first, last in spans for n in range(first, last + 1)}


def _starts(lines: list[Line]) -> list[tuple[int, str]]:
    """(index, tool) of each output's first line; a line that continues the output started just
    above (pgbench's "transaction type" after its version line) starts nothing."""
    out: list[tuple[int, str]] = []
    for i, ln in enumerate(lines):
        tool = next((t for t, pattern in STARTS if pattern.match(ln.text)), None)
        if tool is None and _DBENCH_END.match(ln.text) and not (out and out[-1][1] == "dbench"):
            tool = "dbench"  # a dbench result pasted from its Throughput line alone
        if tool is None:
            continue
        if out and out[-1][1] == tool and (cont := _CONTINUES.get(tool)) and cont.match(ln.text) and _near(lines, out[-1][0], i, _REACH[tool]):
            continue
        out.append((i, tool))
    return out


def _near(lines: list[Line], start: int, i: int, reach: int) -> bool:
    """Whether line ``i`` follows the output started at ``start`` within ``reach`` lines, with no
    fence or heading between."""
    return i - start <= reach and not any(_FENCE.match(lines[j].text) or _is_heading(lines[j].text) for j in range(start + 1, i))


def _is_heading(text: str) -> bool:
    return _HEADING.match(text) is not None and _FS_MARK_COMMENT.match(text) is None


def _headings(lines: list[Line], taken: set[int]) -> list[tuple[int, str]]:
    """(line number, text) of every Markdown (or HTML) heading outside code fences and outputs."""
    out: list[tuple[int, str]] = []
    fenced = False
    for i, ln in enumerate(lines):
        if _FENCE.match(ln.text):
            fenced = not fenced
            continue
        if fenced or i in taken:
            continue
        if _is_heading(ln.text) and (m := _HEADING.match(ln.text)):
            out.append((ln.number, m.group(2).strip()))
    return out


def _with_heading(f: LoadFound, headings: list[tuple[int, str]]) -> LoadFound:
    above = [text for number, text in headings if number < f.first_line]
    return LoadFound(f.tool, f.first_line, f.last_line, f.text, above[-1] if above else None, f.pasted)
