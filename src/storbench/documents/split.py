"""Every fio output in a document (pure): where each one is, of which kind, and what around it was not read.

A document (a blog post, a mail thread, a log appended to with ``>>``, a saved page) holds
fio outputs among other text.  :func:`find_outputs` returns them in document order:

* **JSON** (and json+): each complete document with ``jobs`` or ``client_stats``; text fio
  printed before it (error lines) belongs to nothing; documents back to back with the same
  jobs further on (``--status-interval`` snapshots) are one run, whose last document counts;
* **terse**: consecutive terse lines are one run's jobs (terse lines carry no time, so two
  runs appended with nothing between them read as one run of both); any other line, a blank
  one too, ends the run;
* **classic text**: one run is its job definition lines, the ``fio-3.x`` line, the job
  result blocks, the ``Run status group`` totals and the ``Disk stats``; the next run starts
  with a job definition, version, ``Starting`` or job result line after a run's totals, and a
  line of prose after the totals ends a run.  Several jobs or groups of one run stay one
  output.

Lines inside a text output that are neither fio's nor blank are kept as ``unread`` (a
shell prompt, a ``^C``, a fragment a mail client cut off), so that nothing is dropped
without a word.  Fragments that look like fio's but hold no result (a job definition line
alone, a JSON document that does not decode) are ``skipped`` with their line numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..fio.json import find_fio_json, status_snapshots
from ..fio.terse import is_terse_line
from ..fio.text import classify_line
from .source import Line

#: non-fio lines a text output may hold before it is over (prompts, ^C, cut-off fragments)
MAX_GAP_LINES = 3


@dataclass(frozen=True)
class Output:
    """One fio output in a document: its kind, its first and last line numbers, its text."""

    kind: str  # "json", "terse", "text"
    first_line: int
    last_line: int
    text: str
    #: lines inside it that are not fio's (line number, text)
    unread: tuple[tuple[int, str], ...] = ()
    #: indexes into the document's lines of its first and last lines (for the context before it)
    index: int = 0
    last_index: int = 0


@dataclass(frozen=True)
class Skipped:
    """A fragment that looked like fio output but holds no result."""

    first_line: int
    last_line: int
    reason: str


@dataclass
class _Text:
    start: int  # index into lines
    end: int
    kinds: set[str] = field(default_factory=set)
    after_status: bool = False
    gap: int = 0
    unread: list[int] = field(default_factory=list)


def _is_fio(text: str) -> bool:
    return classify_line(text) is not None or is_terse_line(text)


#: fio's direction line (``write: IOPS=...`` / ``write: io=...``): a summary fragment starts with one
_DIRECTION = re.compile(r"^\s*(?:>\s*)*(?:read|write|trim|mixed)\s*:\s*(?:IOPS=|io=)")


def find_outputs(lines: list[Line]) -> tuple[list[Output], list[Skipped]]:
    """The fio outputs in ``lines`` (:func:`~storbench.documents.source.document_lines`, then
    :func:`~storbench.documents.source.unwrap`), and the skipped fragments."""
    outputs: list[Output] = []
    skipped: list[Skipped] = []
    used = [False] * len(lines)

    # JSON documents, wherever they start
    text = "\n".join(ln.text for ln in lines)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln.text) + 1)

    def index_of(offset: int) -> int:
        lo, hi = 0, len(lines) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo

    if "{" in text:
        docs, failures = find_fio_json(text)
        runs: list[list[tuple[int, int, dict]]] = []
        for doc in docs:
            prev = runs[-1][-1] if runs else None
            if prev is not None and not text[prev[1] : doc[0]].strip() and status_snapshots(prev[2], doc[2]):
                runs[-1].append(doc)  # --status-interval: the same run, later (the last one counts)
            else:
                runs.append([doc])
        for run in runs:
            s, e = run[0][0], run[-1][1]
            a, b = index_of(s), index_of(max(s, e - 1))
            outputs.append(Output("json", lines[a].number, lines[b].number, text[s:e], index=a, last_index=b))
            for i in range(a, b + 1):
                used[i] = True
        for s, e, problem in failures:
            a, b = index_of(s), index_of(max(s, e - 1))
            if not any(used[a : b + 1]) and ('"jobs"' in text[s:e] or '"fio version"' in text[s:e]):
                skipped.append(Skipped(lines[a].number, lines[b].number, problem))
                for i in range(a, b + 1):
                    used[i] = True

    # terse runs
    i = 0
    while i < len(lines):
        if used[i] or not is_terse_line(lines[i].text):
            i += 1
            continue
        a = i
        while i < len(lines) and not used[i] and is_terse_line(lines[i].text):
            used[i] = True
            i += 1
        outputs.append(Output("terse", lines[a].number, lines[i - 1].number, "\n".join(ln.text for ln in lines[a:i]), index=a, last_index=i - 1))

    # classic text runs
    cur: _Text | None = None

    def close() -> None:
        nonlocal cur
        if cur is None:
            return
        seg = lines[cur.start : cur.end + 1]
        if cur.kinds & {"head", "body"}:
            unread = tuple((lines[j].number, lines[j].text.strip()) for j in cur.unread if j <= cur.end)
            outputs.append(Output("text", seg[0].number, seg[-1].number, "\n".join(ln.text for ln in seg), unread,
                                  index=cur.start, last_index=cur.end))  # fmt: skip
        elif cur.kinds & {"def", "status"}:
            skipped.append(Skipped(seg[0].number, seg[-1].number, "fio's job lines without a result block"))
        cur = None

    for j, ln in enumerate(lines):
        if used[j]:
            close()
            continue
        kind = classify_line(ln.text)
        if kind is None:
            if cur is not None and ln.text.strip():
                cur.gap += 1
                if cur.after_status or cur.gap > MAX_GAP_LINES:
                    close()
                else:
                    cur.unread.append(j)
            continue
        starts_run = kind in ("def", "version", "starting", "head", "progress")
        if cur is not None and starts_run and (cur.after_status or cur.gap):
            close()  # after a run's totals, or after prose: the next run
        elif cur is not None and cur.gap and kind == "body" and "head" not in cur.kinds and _DIRECTION.match(ln.text):
            # a summary quoting only direction lines, each under its own label ("Write cache ON:", then
            # "Write cache OFF:"): each fragment is an output of its own, named by the label above it
            close()
        if cur is None:
            cur = _Text(start=j, end=j)  # a progress or note line alone comes to nothing (see close)
        cur.kinds.add(kind)
        cur.end = j
        cur.gap = 0
        if kind == "status":
            cur.after_status = True
    close()
    outputs.sort(key=lambda o: o.first_line)
    skipped.sort(key=lambda s: s.first_line)
    return outputs, skipped
