"""``storbench capture``: record what an application did to its disk, as a stored trace (issue 51).

``storbench capture --device /dev/sdb --seconds 60 --label db`` records the device's block
requests through the kernel's tracefs block events while the application runs; ``-- COMMAND``
runs a command and records until it ends.  ``--dir PATH`` traces the device under a mounted
directory.  The trace is stored (compressed) with its own figures and printed; the device's own
completed-request counters over the capture are printed beside the capture's, with the events
the kernel's buffer lost.  A capture never writes to the traced device: a results store on it is
refused.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from ..errors import UsageError
from .common import App, pass_app, print_json


@click.command(context_settings={"ignore_unknown_options": False})
@click.option("--device", metavar="DEV", help="The block device to trace (a disk, a partition, a loop device).")
@click.option("--dir", "directory", metavar="PATH", help="Trace the block device under this mounted directory.")
@click.option("--seconds", type=click.FloatRange(0.1, 86400), help="Record this long (with a command: at most this long).")
@click.option("--label", required=True, help="The trace's name (what the application was: 'db', 'build').")
@click.option("--buffer-kb", type=click.IntRange(64, 1 << 22), help="The kernel's per-CPU trace buffer for the capture (restored afterwards); larger loses fewer events.")
@click.option("--json", "as_json", is_flag=True, help="Print the stored trace's figures as JSON.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@pass_app
def capture(app: App, device: str | None, directory: str | None, seconds: float | None, label: str,
            buffer_kb: int | None, as_json: bool, command: Sequence[str]) -> None:  # fmt: skip
    """Record a device's block I/O while an application runs (for N seconds, or while COMMAND runs) and store it as a trace."""
    from ..capture.device import resolve_device, same_device
    from ..capture.tracefs import capture as record
    from ..render.trace import format_trace
    from ..trace.figures import trace_figures

    if not label.strip() or "\n" in label:
        raise UsageError("capture: --label must be one line of text")
    dev = resolve_device(device, directory)
    db = app.db_url
    db_path = db[len("sqlite:///") :] if db.startswith("sqlite:///") else None
    if db_path is not None and same_device(db_path, dev):
        raise UsageError(f"capture: the results store {db_path} is on the traced device {dev.path}: the capture would record its own writes; use --db on another filesystem")
    import os
    import tempfile

    # the kernel's text is spooled while the application runs: never onto the traced device
    spool_dir = next((d for d in (tempfile.gettempdir(), os.path.dirname(db_path or "") or None, "/var/tmp", "/dev/shm")
                      if d and os.path.isdir(d) and not same_device(d, dev)), None)  # fmt: skip
    if spool_dir is None:
        raise UsageError(f"capture: every place for the capture's spool ({tempfile.gettempdir()}, /var/tmp, /dev/shm) is on the traced device {dev.path}; set TMPDIR to a directory elsewhere")
    storage = _describe(directory or dev.path)  # before the recording: its own reads are not traced
    store = app.open_store()  # opened (and upgraded) before the capture: no store I/O while recording
    try:
        app.err(f"capture: tracing {dev.path} ({dev.major}:{dev.minor}) through the kernel's tracefs block events" + (f" for {seconds:g} s" if seconds else "") + (f" while {' '.join(command)} runs" if command else "") + "; Ctrl-C ends it")
        got = record(dev, label=label, seconds=seconds, command=command, buffer_kb=buffer_kb, clock=app.env.clock, spool_dir=spool_dir,
                     storage=storage)  # fmt: skip
        if not len(got.trace):
            raise UsageError(f"capture: {dev.path} completed no request while it was traced ({got.stopped_by} ended it): nothing stored")
        from ..trace.codec import encode_trace

        figures = trace_figures(got.trace)
        trace_id = store.add_trace(encode_trace(got.trace), figures)
        row = store.find_trace(str(trace_id))
    finally:
        store.close()
    if as_json:
        print_json(app, {"trace_id": trace_id, "stopped_by": got.stopped_by, "command_status": got.command_status, "meta": row.meta, "figures": row.figures, "stored_bytes": row.stored_bytes})
    else:
        for line in format_trace(row):
            app.out(line)
    if got.command_status not in (None, 0):
        app.err(f"capture: the command exited with status {got.command_status} (the trace is stored)")


def _describe(path: str) -> dict | None:
    """The storage description of the traced device (or directory), as the runs store theirs; None
    where it cannot be made (the capture does not depend on it)."""
    from ..errors import StorbenchError
    from ..storage.codec import storage_to_dict
    from ..targets import kind_of
    from ..targets import resolve as resolve_target

    try:
        target = resolve_target(path)
        info = kind_of(target).describe(target, None)
        return storage_to_dict(info) if info is not None else None
    except (StorbenchError, OSError):
        return None
