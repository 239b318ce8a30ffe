"""``storbench trace``: the stored block traces (``capture`` records them, ``import`` reads them).

``trace list``, ``trace show TRACE`` (an id, a label or ``last``: its figures), ``trace import FILE
--label L`` (a fio v2/v3 iolog, the MSR Cambridge or Alibaba block trace CSV of the SNIA IOTTA repository, a saved
``trace_pipe`` text; what cannot be read is one line, nothing stored), ``trace export TRACE -o FILE``
(the v3 iolog fio replays, or the figures as JSON) and ``trace delete TRACE``.  A stored trace is
replayed on a candidate with ``storbench run --replay TRACE``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import UsageError
from ..render.trace import format_trace
from .common import App, pass_app, print_json

if TYPE_CHECKING:
    from ..trace.events import Trace

FORMATS = ("auto", "iolog", "msr", "alibaba", "tracefs")


def _detect(path: Path, head: bytes) -> str:
    if head[:4] in (b"\x07\x74\x61\x65", b"\x65\x61\x74\x07") or head[:3] == b"\x74\x61\x65":
        raise UsageError(f"{path}: a blktrace binary (blkparse -d) dump is not read by this storbench; convert it with 'blkparse -i DEV -f \"...\"' or record with storbench capture")
    text = head.decode("utf-8", "replace")
    first = text.splitlines()[0] if text else ""
    if first.startswith("fio version"):
        return "iolog"
    from ..trace.msr import looks_like_msr

    if looks_like_msr(first) or first.lower().startswith("timestamp,hostname,disknumber"):
        return "msr"
    from ..trace.alibaba import looks_like_alibaba

    if looks_like_alibaba(first):
        return "alibaba"
    if "block_rq_issue" in text or "block_rq_complete" in text or first.startswith("# tracer"):
        return "tracefs"
    raise UsageError(f"{path}: not a trace storbench reads (a fio v2/v3 iolog, an MSR Cambridge or Alibaba block trace CSV, a saved trace_pipe of block_rq events); its first line is {first[:60]!r}")


def _read(path: Path, fmt: str, label: str, disk: str | None, clock: str) -> Trace:
    from ..trace.events import TraceMeta

    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError as exc:
        raise UsageError(f"trace import: {path}: {exc.strerror}") from exc
    kind = _detect(path, head) if fmt == "auto" else fmt
    source = {"iolog": "fio-iolog", "msr": "msr-cambridge", "alibaba": "alibaba", "tracefs": "tracefs"}[kind]
    meta = TraceMeta(label=label, source=source, created_at=clock, notes=(f"imported from {path.name}",))
    try:
        with open(path, encoding="utf-8", errors="strict") as f:
            if kind == "iolog":
                from ..trace.iolog import read_iolog

                return read_iolog(f, meta, where=str(path))
            if kind == "msr":
                from ..trace.msr import read_msr

                return read_msr(f, meta, where=str(path), disk=disk)
            if kind == "alibaba":
                from ..trace.alibaba import read_alibaba

                return read_alibaba(f, meta, where=str(path), disk=disk)
            from ..trace.tracefs import TracefsReader

            device = None
            if disk is not None:
                m = re.fullmatch(r"(\d+):(\d+)", disk.strip())
                if m is None:
                    raise UsageError(f"--disk {disk!r}: a trace_pipe text's device is MAJOR:MINOR (7:0 for loop0)")
                device = (int(m[1]), int(m[2]))
            reader = TracefsReader(device=device)
            reader.feed(f)
            devices = reader.devices()
            if device is None and len(devices) > 1:
                raise UsageError(f"{path}: holds the requests of {len(devices)} devices ({', '.join(f'{a}:{b}' for a, b in sorted(devices))}): storbench keeps one device a trace; name one with --disk MAJOR:MINOR")
            if not reader.issue_ns:
                raise UsageError(f"{path}: no block_rq_issue event in it: nothing to store")
            return reader.trace(meta)
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not text at byte {exc.start}: not a trace storbench reads") from exc


def _build() -> click.Group:
    @click.group()
    def trace() -> None:
        """List, show, import, export and delete the stored block traces (storbench capture records them; run --replay replays them)."""

    @trace.command("list")
    @click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
    @pass_app
    def list_(app: App, as_json: bool) -> None:
        """The stored traces, newest first."""
        with app.open_reader() as store:
            rows = store.list_traces()
        if as_json:
            print_json(app, [{"trace_id": r.trace_id, "label": r.label, "created_at": r.created_at, "source": r.source, "device": r.device, "events": r.events, "span_s": r.span_s, "stored_bytes": r.stored_bytes} for r in rows])
            return
        if not rows:
            app.out("no traces stored (storbench capture records one; storbench trace import reads one)")
            return
        for r in rows:
            app.out(f"{r.trace_id:>5}  {r.created_at}  {r.label:20}  {r.source:14}  {r.events:>12,} requests  {r.span_s:9.2f} s  {r.device or ''}")

    @trace.command("show")
    @click.argument("ref")
    @click.option("--json", "as_json", is_flag=True, help="Print the description and figures as JSON.")
    @pass_app
    def show(app: App, ref: str, as_json: bool) -> None:
        """One stored trace (an id, a label or 'last'): what it holds and its figures."""
        with app.open_reader() as store:
            row = store.find_trace(ref)
        if as_json:
            print_json(app, {"trace_id": row.trace_id, "meta": row.meta, "figures": row.figures, "stored_bytes": row.stored_bytes})
            return
        for line in format_trace(row):
            app.out(line)

    @trace.command("import")
    @click.argument("path", type=click.Path(path_type=Path))
    @click.option("--label", required=True, help="The trace's name.")
    @click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True, help="What the file is (auto: read from its first lines).")
    @click.option("--disk", metavar="VOLUME", help="The one volume of a file that holds several: HOST,NUMBER (MSR), DEVICE_ID (Alibaba) or MAJOR:MINOR (trace_pipe text).")
    @pass_app
    def import_(app: App, path: Path, label: str, fmt: str, disk: str | None) -> None:
        """Read a trace made elsewhere (a fio iolog, an MSR Cambridge CSV, a saved trace_pipe) into the store."""
        from ..trace.codec import encode_trace
        from ..trace.figures import trace_figures

        if not label.strip() or "\n" in label:
            raise UsageError("trace import: --label must be one line of text")
        got = _read(path, fmt, label, disk, app.env.clock())
        figures = trace_figures(got)
        encoded = encode_trace(got)
        del got  # the events are let go before the store is opened: one copy of a large trace at a time
        with app.open_store() as store:
            trace_id = store.add_trace(encoded, figures)
            row = store.find_trace(str(trace_id))
        for line in format_trace(row):
            app.out(line)

    @trace.command("export")
    @click.argument("ref")
    @click.option("-o", "--output", "output", type=click.Path(path_type=Path), required=True, help="The file to write.")
    @click.option("--format", "fmt", type=click.Choice(("iolog", "json")), default="iolog", show_default=True, help="iolog: fio's v3 iolog (replay it with fio --read_iolog and --replay_redirect); json: the description and figures.")
    @pass_app
    def export(app: App, ref: str, output: Path, fmt: str) -> None:
        """Write a stored trace as fio's v3 iolog, or its figures as JSON."""
        import json

        with app.open_reader() as store:
            row = store.find_trace(ref)
            try:
                if fmt == "json":
                    output.write_text(json.dumps({"trace_id": row.trace_id, "meta": row.meta, "figures": row.figures}, indent=2) + "\n")
                else:
                    from ..trace.iolog import write_iolog_v3

                    trace = store.load_trace(row.trace_id)
                    with open(output, "w") as f:
                        for chunk in write_iolog_v3(trace):
                            f.write(chunk)
            except OSError as exc:
                raise UsageError(f"trace export: cannot write {output}: {exc.strerror or exc}") from exc
        app.out(f"trace {row.trace_id} {row.label!r} written to {output} ({fmt})")

    @trace.command("delete")
    @click.argument("ref")
    @pass_app
    def delete(app: App, ref: str) -> None:
        """Remove a stored trace."""
        with app.open_store() as store:
            row = store.find_trace(ref)
            store.delete_trace(row.trace_id)
        app.out(f"trace {row.trace_id} {row.label!r} deleted")

    return trace


trace = _build()

