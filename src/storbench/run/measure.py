"""One measurement: one fio run (or one application load) of one job with everything recorded
around it (the storage, the devices' and back-ends' activity, space before and after, the
per-second series), parsed into a :class:`~storbench.record.ResultRecord` with its findings, per
host and aggregated for client/server runs; and storing it so that nothing measured is lost."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from storbench.jsontypes import JSONMapping

from ..errors import FioParseError, UsageError
from ..fio.progress import Status
from ..model import JobSpec
from .aggregate import per_host_results
from .failures import errno_text, fio_failure_reason
from .fioexec import FioExecutor, FioInvocation, run_fio
from .outcome import BatchSink, Failure, ResultSink
from .space import measure_space, needs_flush

if TYPE_CHECKING:
    from ..activity import DeviceSample
    from ..model import Finding, FioResult
    from ..record import ResultRecord
    from ..storage import StorageInfo
    from .telemetry import Telemetry


def store_results(sink: ResultSink, records: Sequence[ResultRecord]) -> list[int]:
    """One repetition's results (each host's, then the aggregate) in one commit where the sink
    stores several at once (``add_results``: 65 commits of a 64-host workload took 0.16 s), else
    one by one; when the store refuses them, the error names the workload and where fio's output
    (the last record's: the aggregate holds every host's) was saved, so that nothing measured is lost."""
    from ..errors import StoreError

    try:
        if isinstance(sink, BatchSink) and len(records) > 1:
            return list(sink.add_results(records))
        return [sink.add_result(r) for r in records]
    except StoreError as exc:
        record = records[-1]
        where = f"repetition {record.repetition + 1} of workload {record.workload!r}"
        saved = None
        with contextlib.suppress(OSError):
            fd, saved = tempfile.mkstemp(prefix=f"storbench-unstored-run{record.run_id}-{record.workload}-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(record.raw_output or "")
        kept = (f"fio's output is kept in {saved} (storbench import it once the store has room)" if saved
                else "fio's output could not be saved either")  # fmt: skip
        raise StoreError(f"{exc.message}; {where} was measured but not stored: {kept}") from exc


def measure_once(
    run_id: int | Callable[[], int],
    spec: JobSpec,
    repetition: int,
    previous: Sequence[ResultRecord],
    storage: StorageInfo | None,
    *,
    executor: FioExecutor,
    telemetry: Telemetry,
    label: str | None,
    clock: Callable[[], str],
    fio_version: str,
    on_status: Callable[[Status], None],
    on_devices: Callable[[Sequence[DeviceSample]], None] | None = None,
    watch: Callable[[], str | None] | None = None,
) -> tuple[ResultRecord, list[ResultRecord], list[Failure]] | Failure:
    """One fio run of one job, with everything recorded around it; with each of fio's status
    lines, ``on_devices`` is given the activity sampler's newest reading of each device;
    ``watch``: the target's server watch (:mod:`.serverwatch`), polled while fio runs.

    Returns the primary record (the only one, or the aggregate of a client/server
    run), the per-host records of a client/server run, and per-host failures.
    """
    from ..targets import kind_of

    remote = executor.remote  # client/server: the target is on other hosts
    before = measure_space(spec) if not remote else None
    # a server every host reaches (an S3 gateway) is read from here as in a local run
    read_backend = not remote or kind_of(spec.target).hosts_reach
    backend_cm = (
        telemetry.backend_sampler(storage, spec.target, area_bytes(spec)) if read_backend else None
    ) or contextlib.nullcontext(None)
    with telemetry.sampler(storage) as sampler, backend_cm as backend_box:
        watch_status = on_status
        if on_devices is not None and sampler is not None:

            def watch_status(status: Status) -> None:
                on_status(status)
                on_devices(sampler.latest())

        inv = run_fio(executor, spec, watch_status, watch)
    activity = sampler.series() if sampler is not None else None
    # imported once the first fio has run: nothing before it needs the result records
    from ..fio.json import parse_fio_json
    from ..record import ResultRecord

    backend = backend_box.activity() if backend_box is not None else None
    after = measure_space(spec, flush=needs_flush(storage)) if not remote else None
    result: FioResult | None = None
    parse_problem = None
    try:
        result = parse_fio_json(inv.output_text)
    except FioParseError as exc:
        parse_problem = str(exc)
    reason = fio_failure_reason(inv, result)
    if reason is not None and result is not None and any(
        h is not None and not r.error for h, r in per_host_results(result, inv.host_names)
    ):
        reason = None  # client/server: the hosts that worked are kept; the others fail one by one below
    if reason is None and parse_problem:
        reason = parse_problem
    if reason is not None:
        from ..targets import kind_of

        reason = kind_of(spec.target).explain_failure(spec.target, reason)
        if backend is not None and backend.problems:
            reason = f"{reason}; {backend.problems[-1]}"
        return Failure(spec.workload.name, spec.target.display, reason)
    assert result is not None
    if result.fio_version is None:
        result = dataclasses.replace(result, fio_version=fio_version)
    space = None if before is None or after is None else {
        "files_before": before["files"],
        "files_after": after["files"],
        "fs_used_before": before["fs_used"],
        "fs_used_after": after["fs_used"],
        # storbench lays out its own test file in a directory target; a file target is the user's
        "test_file_created": spec.target.kind == "dir",
    }
    record = ResultRecord(
        run_id=run_id if isinstance(run_id, int) else run_id(),
        workload=spec.workload.name,
        target=spec.target.display,
        fio=result,
        raw_output=inv.output_text,
        label=label,
        options=dict(spec.options),
        job_text=spec.job_text,
        repetition=repetition,
        created_at=clock(),
        storage=storage,
        activity=activity,
        space=space,
        series=_series(inv),
        backend=backend,
    )
    hosts = per_host_results(result, inv.host_names)
    if not hosts:
        return dataclasses.replace(record, findings=findings_for(spec, record, previous, telemetry)), [], []
    from .perhost import common_window, host_outputs, host_timing, partial_findings, straggler_findings, window_findings

    timing = host_timing([(h, r) for h, r in hosts if h is not None and not r.error])
    own_outputs = host_outputs(inv.output_text, inv.host_names)
    per_host: list[ResultRecord] = []
    failures: list[Failure] = []
    # without fio's "All clients" entry (one host left) the whole result is the aggregate
    aggregate = dataclasses.replace(record, host="all")
    #: hosts asked for with no result in this aggregate, and why
    missing: dict[str, str] = dict(inv.left_out)
    for host, host_result in hosts:
        if host is None:
            aggregate = dataclasses.replace(record, fio=host_result, host="all")
            continue
        if host_result.error:
            why = "fio error {} ({})".format(*errno_text(host_result.error))
            missing[host] = why
            failures.append(Failure(spec.workload.name, f"{host}:{spec.target.display}", f"host {host}: {why}"))
            continue
        # the server's counters are every host's: kept with the aggregate alone
        per_host.append(dataclasses.replace(record, fio=host_result, host=host, activity=None, backend=None, series={"timing": timing.get(host)},
                                            raw_output=own_outputs.get(host, inv.output_text)))  # fmt: skip
    for host, why in inv.lost_hosts.items():  # a server killed mid-run is missing from fio's JSON
        failures.append(Failure(spec.workload.name, f"{host}:{spec.target.display}", f"host {host}: {why}"))
        missing[host] = why
    slow = partial_findings(spec.workload.name, len(per_host), missing)
    named = [(r.host, r) for r in per_host if r.host is not None]  # each of per_host is named (above)
    slow += straggler_findings(spec.workload.name, spec.workload.headline, [(host, r.fio) for host, r in named])
    window = common_window({host: inv.host_series[host] for host, _r in named if host in inv.host_series})
    if window is not None:  # the aggregate over the seconds every host ran, beside fio's sum
        from ..metrics import direction_figures

        fio_sum = sum(f["iops"] or 0 for d, f in direction_figures(aggregate.fio).items() if d != "result")
        slow += window_findings(spec.workload.name, window, fio_sum)
        aggregate = dataclasses.replace(aggregate, series={**(aggregate.series or {}), "window": window.to_dict()})
    aggregate = dataclasses.replace(aggregate, findings=findings_for(spec, aggregate, previous, telemetry) + tuple(slow))
    return aggregate, per_host, failures


def measure_load(
    run_id: int | Callable[[], int],
    spec: JobSpec,
    repetition: int,
    previous: Sequence[ResultRecord],
    storage: StorageInfo | None,
    *,
    telemetry: Telemetry,
    label: str | None,
    clock: Callable[[], str],
) -> tuple[ResultRecord, list[ResultRecord], list[Failure]] | Failure:
    """One repetition of an application load (run/loads.py), recorded like a fio result: its
    figures as measures, the devices' activity while it ran, the findings of the load checks."""
    from ..record import ResultRecord
    from .loads import LoadFailed, run_load

    try:
        done = run_load(spec, storage, telemetry)
    except LoadFailed as exc:
        return Failure(spec.workload.name, spec.target.display, str(exc))
    record = ResultRecord(
        run_id=run_id if isinstance(run_id, int) else run_id(), workload=spec.workload.name, target=spec.target.display,
        fio=done.result, raw_output=done.output, label=label, options=dict(spec.options), job_text=spec.job_text,
        repetition=repetition, created_at=clock(), storage=storage, activity=done.activity, backend=done.backend,
    )  # fmt: skip
    return dataclasses.replace(record, findings=findings_for(spec, record, previous, telemetry)), [], []


def area_bytes(spec: JobSpec) -> int | None:
    """The bytes of the target a job uses (its ``size=``), when storbench can tell."""
    from ..units import parse_size

    size = dict(spec.options).get("size")
    if not size or size.endswith("%"):
        return None
    try:
        return parse_size(size)
    except (UsageError, ValueError):
        return None


def _series(inv: FioInvocation) -> JSONMapping | None:
    if not inv.logs:
        return None
    from ..fio.logs import series_from_logs

    try:
        return series_from_logs(inv.logs)
    except FioParseError:
        return None


#: Job options that make fio write per-second interval logs into its working directory.
INTERVAL_LOG_OPTIONS: tuple[tuple[str, str], ...] = (
    ("write_bw_log", "sb"),
    ("write_iops_log", "sb"),
    ("log_avg_msec", "1000"),
)


def findings_for(
    spec: JobSpec, record: ResultRecord, previous: Sequence[ResultRecord], telemetry: Telemetry | None = None
) -> tuple[Finding, ...]:
    """The pitfall checks over this repetition and the ones before it."""
    try:
        from ..checks import CheckContext, FileState, run_checks
    except ImportError:  # pragma: no cover - checks not installed
        return ()
    space = record.space or {}
    mem = getattr(getattr(record.storage, "host", None), "mem_bytes", None)
    ctx = CheckContext(
        workload=spec.workload.name,
        options=dict(spec.options),
        results=tuple(r.fio for r in previous) + (record.fio,),
        storage=record.storage,
        activity=tuple(r.activity for r in previous) + (record.activity,),
        files_before=tuple(FileState(*f) for f in space.get("files_before", [])),
        files_after=tuple(FileState(*f) for f in space.get("files_after", [])),
        fs_used_before=space.get("fs_used_before"),
        fs_used_after=space.get("fs_used_after"),
        mem_bytes=mem,
        test_file_created=bool(space.get("test_file_created")),
        headline=spec.workload.headline,
        tool=spec.workload.tool,
        backend=record.backend,
        series=tuple(r.series for r in previous) + (record.series,),
        replay=spec.workload.replay,
    )
    return tuple(run_checks(ctx)) + _share_ceiling(record, telemetry)


def _share_ceiling(record: ResultRecord, telemetry: Telemetry | None) -> tuple[Finding, ...]:
    """Hook: a network share measured at (or above) the network's ceiling.  The
    ceilings come from ``telemetry.net_ceilings`` (server -> bits/s, measured by
    ``storbench net``; the CLI attaches them), looked up by the share's server."""
    ceilings = telemetry.net_ceilings if telemetry is not None else None
    fs = getattr(record.storage, "filesystem", None)
    export = getattr(record.storage, "export", None)
    server = getattr(getattr(fs, "network", None), "server", None)
    what = fs.fstype if fs is not None else None
    if server is None and export is not None and export.server and not export.server.startswith("/"):
        server = export.server.rsplit(":", 1)[0].strip("[]")  # an NBD export over TCP: its host
        what = "nbd"
    if server is None and record.storage is not None and record.storage.target_kind == "s3" and record.host is None:
        # a local run's requests only: the hosts of a client run reach the gateway over their own network
        from urllib.parse import urlsplit

        from ..targets.s3 import parse_s3_spec

        server, what = urlsplit(parse_s3_spec(record.storage.target).endpoint).hostname, "s3"  # the gateway's host
    if not ceilings or not server:
        return ()
    from ..net import share_ceiling_findings

    found = share_ceiling_findings(record.fio, what, ceilings.get(server))
    return tuple(dataclasses.replace(f, workload=record.workload) for f in found)
