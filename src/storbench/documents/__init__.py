"""Whole documents as fio results (pure): every fio output in a post, a mail, a log or a saved page.

======================  ===================================================================
:mod:`.source`          the document as numbered lines (HTML text and ``<pre>`` blocks,
                        mail quotes off, odd spaces as spaces) and wrapped values re-joined
:mod:`.split`           where each fio output is (JSON, terse, classic text), and the
                        fragments that look like fio's but hold no result
:mod:`.context`         what the document says about each: the command line, the heading,
                        the host of a prompt
======================  ===================================================================

:func:`read_document` puts them together: one :class:`Found` per output, in document order,
each with its parsed :class:`~storbench.model.FioResult` (or why it could not be read).

May import: fio (the readers), model and errors: pure; never the store or commands.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import FioParseError
from ..model import FioResult
from .context import Command, Context, context_before, section_headings
from .source import Line, document_lines, is_html
from .split import Output, Skipped, find_outputs


@dataclass(frozen=True)
class Found:
    """One fio output of a document: where, what it says, and what the document says about it."""

    output: Output
    result: FioResult
    context: Context

    @property
    def job_name(self) -> str | None:
        return self.result.jobs[0].name if self.result.jobs else None

    def label(self, how: str) -> str | None:
        """What names this output: ``heading`` (the heading it is under), ``command`` (its command
        line's ``--name``, else the heading), ``none``; None when the document does not say
        (the result is then named by its job name alone)."""
        c = self.context
        if how == "heading":
            return c.heading
        if how == "command":
            name = dict(c.command.options).get("name") if c.command else None
            return name or c.heading
        return None


@dataclass(frozen=True)
class Document:
    """Every output of one document, and every fragment skipped (with why)."""

    found: tuple[Found, ...]
    skipped: tuple[Skipped, ...]
    html: bool = False


def _parse(output: Output) -> FioResult:
    from ..fio.json import parse_fio_json
    from ..fio.terse import parse_fio_terse
    from ..fio.text import parse_fio_text

    return {"json": parse_fio_json, "terse": parse_fio_terse, "text": parse_fio_text}[output.kind](output.text)


#: from this many outputs on, a document's outputs are parsed on every core (a log of thousands)
PARALLEL_FROM_OUTPUTS = 400


def _parse_or_error(output: Output) -> FioResult | str:
    try:
        return _parse(output)
    except FioParseError as exc:
        return str(exc)


def _parse_all(outputs: list[Output]) -> list[FioResult | str]:
    """Each output's result, or its parse error's text.  Many outputs are parsed in forked worker
    processes, one per core (parsing is pure and ~1 ms an output); serially where that is not
    possible (one core, no fork, a worker lost)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if len(outputs) >= PARALLEL_FROM_OUTPUTS and cores > 1:
        import concurrent.futures
        import multiprocessing

        try:
            context = multiprocessing.get_context("fork")
            with concurrent.futures.ProcessPoolExecutor(max_workers=min(cores, 4), mp_context=context) as pool:
                return list(pool.map(_parse_or_error, outputs, chunksize=max(1, len(outputs) // (8 * cores))))
        except (OSError, ValueError, concurrent.futures.process.BrokenProcessPool):
            pass
    return [_parse_or_error(o) for o in outputs]


#: how close (in lines) the JSON and the normal text of one ``--output-format=json,normal`` run are
SAME_RUN_GAP_LINES = 3


def _one_run_two_formats(outputs: list[Output], skipped: list[Skipped]) -> tuple[list[Output], list[Skipped]]:
    """``--output-format=json,normal`` (or ``terse,json``, ...) prints one run in two forms, one
    right after the other.  An output right beside one of another kind with the same jobs is
    that run again: the JSON is kept (else the first), and the job lines fio printed right
    before a JSON document (its header) are not a skipped fragment."""
    import re

    cache: dict[int, frozenset[str]] = {}

    def names(o: Output) -> frozenset[str]:
        if id(o) not in cache:
            cache[id(o)] = _names(o)
        return cache[id(o)]

    def _names(o: Output) -> frozenset[str]:
        if o.kind == "json":
            return frozenset(re.findall(r'"jobname"\s*:\s*"([^"]*)"', o.text))
        if o.kind == "terse":
            return frozenset(f[1] if f[0] == "2" else f[2] for f in (ln.split(";") for ln in o.text.splitlines()) if len(f) > 2)
        return frozenset(m.group(1).strip() for m in re.finditer(r"^\s*(\S[^:]*?): \(groupid=", o.text, re.M))

    def twins(a: Output, b: Output) -> bool:
        near = 0 < b.first_line - a.last_line <= SAME_RUN_GAP_LINES or 0 < a.first_line - b.last_line <= SAME_RUN_GAP_LINES
        return a.kind != b.kind and near and bool(names(a)) and names(a) == names(b)

    rank = {"json": 0, "text": 1, "terse": 2}
    drop: set[int] = set()
    # outputs are in document order: only the next few can be near enough to be a twin (linear)
    for i, a in enumerate(outputs):
        for k in range(i + 1, len(outputs)):
            b = outputs[k]
            if b.first_line - a.last_line > SAME_RUN_GAP_LINES:
                break
            if i not in drop and k not in drop and twins(a, b):
                drop.add(k if (rank[a.kind], i) <= (rank[b.kind], k) else i)
    keep = [o for i, o in enumerate(outputs) if i not in drop]
    jsons = [o for o in outputs if o.kind == "json"]
    header = [s for s in skipped if not any(0 < j.first_line - s.last_line <= 1 for j in jsons)]
    return keep, header


def read_document(text: str) -> Document:
    """Every fio output in ``text``, in document order, with its context."""
    from ..fio.terse import is_terse_line
    from ..fio.text import classify_line

    def is_fio(s: str) -> bool:
        return classify_line(s) is not None or is_terse_line(s)

    lines = document_lines(text)
    from .source import unwrap

    lines = unwrap(lines, is_fio)
    outputs, skipped = find_outputs(lines)
    outputs, skipped = _one_run_two_formats(outputs, skipped)
    found: list[Found] = []
    skipped_all = list(skipped)
    floor = 0
    sections = section_headings(lines, is_fio)
    for out, result in zip(outputs, _parse_all(outputs)):
        if isinstance(result, str):
            skipped_all.append(Skipped(out.first_line, out.last_line, result))
            continue
        ctx = context_before(lines, out.index, floor, is_fio, sections)
        found.append(Found(out, result, ctx))
        floor = out.last_index + 1
    skipped_all.sort(key=lambda s: s.first_line)
    return Document(found=tuple(found), skipped=tuple(skipped_all), html=is_html(text))


__all__ = ["Command", "Context", "Document", "Found", "Line", "Output", "Skipped", "read_document"]
