"""pgbench (PostgreSQL 15's, Debian's ``postgresql-15``): a database's own figure, transactions a second.

storbench's run edge (:mod:`storbench.run.loads`) brings up a private PostgreSQL cluster in the
load's directory (``initdb``, the settings of :func:`conf_lines`, started on a Unix socket in that
directory, no TCP port), then runs :func:`steps`: ``pgbench -i -s SCALE`` (not timed) and the
measured ``pgbench -c CLIENTS -j THREADS -T SECONDS -l``.  pgbench prints its summary (transaction
type, scale, clients, transactions processed and failed, latency average, initial connection time,
``tps = N (without initial connection time)``; PostgreSQL 13 and older: ``tps = N (excluding
connections establishing)`` and no latency average without ``-l``, read as well; PostgreSQL 16
and 17 print what 15 does) and with ``-l`` writes one line per transaction to
``pgbench_log.PID[.THREAD]``: ``client transaction latency_us script epoch_s epoch_us``, the latency
``failed`` or ``skipped`` where it did not complete.  The latency percentiles are computed from that
log (nearest rank over every completed transaction), not from pgbench's average.

The server settings that decide the result (``fsync``, ``synchronous_commit``,
``full_page_writes``, ``wal_sync_method``, ``shared_buffers``, ``checkpoint_timeout``) and the
database's size are read back from the server after the run (:data:`SETTINGS_SQL`,
:func:`parse_settings`) and kept with the result.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model import Measure

from .base import LoadOption, LoadParseError, LoadSteps, LoadTool, Pasted, size_bytes

MODES = ("tpcb", "select-only", "simple-update")
_MODE_FLAG = {"tpcb": (), "select-only": ("-S",), "simple-update": ("-N",)}
#: the bytes a database takes per unit of scale (100,000 accounts), measured with PostgreSQL 15
#: here: 23.5 MB at scale 1, 70.6 MB at scale 4; :data:`BASE_BYTES` is an empty database's
BYTES_PER_SCALE = 15_700_000
BASE_BYTES = 7_800_000
#: the log's file name prefix in the load's directory (``-l --log-prefix``)
LOG_PREFIX = "pgbench_log"
#: the server settings kept with a result
SETTINGS = ("fsync", "synchronous_commit", "full_page_writes", "wal_sync_method", "shared_buffers", "checkpoint_timeout",
            "server_version")  # fmt: skip
SETTINGS_SQL = (
    "select name, setting, coalesce(unit, '') from pg_settings where name in ("
    + ", ".join(f"'{s}'" for s in SETTINGS)
    + ") union all select 'database_size', pg_database_size('postgres')::text, 'B' order by 1"
)
#: the role and database pgbench uses in the private cluster
ROLE = "postgres"
DATABASE = "postgres"

OPTIONS = (
    LoadOption("mode", "choice", "tpcb", "tpcb: TPC-B-like read-write (pgbench's default); select-only (-S); simple-update (-N)",
               choices=MODES),
    LoadOption("scale", "count", "1", "pgbench's scale (-s): 100,000 accounts, about 15 MiB, per unit"),
    LoadOption("size", "size", "", "the dataset's size instead of a scale (e.g. 2G: scale = size / 15 MiB, rounded up)"),
    LoadOption("clients", "count", "1", "concurrent database sessions (-c)"),
    LoadOption("threads", "count", "1", "pgbench's worker threads (-j), at most the clients"),
    LoadOption("runtime", "seconds", "10", "seconds of the measured run (-T)"),
    LoadOption("fsync", "choice", "on", "the server's fsync (off: nothing is durable)", choices=("on", "off")),
    LoadOption("synchronous_commit", "choice", "on", "the server's synchronous_commit (off: commits acknowledged before the WAL is flushed)",
               choices=("on", "off", "local")),
    LoadOption("full_page_writes", "choice", "on", "the server's full_page_writes", choices=("on", "off")),
    LoadOption("shared_buffers", "size", "128M", "the server's shared_buffers"),
)


def scale_of(options: Mapping[str, str]) -> int:
    """The scale: ``size`` where given (rounded up), else ``scale``."""
    size = options.get("size", "")
    if size:
        return max(1, math.ceil((size_bytes(size) - BASE_BYTES) / BYTES_PER_SCALE))
    return int(options.get("scale", "1"))


def dataset_bytes(scale: int) -> int:
    """About how large a database of ``scale`` is (see :data:`BYTES_PER_SCALE`)."""
    return BASE_BYTES + scale * BYTES_PER_SCALE


def conf_lines(options: Mapping[str, str], socket_dir: str) -> list[str]:
    """The lines added to the private cluster's ``postgresql.conf``: no TCP, the socket in the load's
    directory, and the workload's settings."""
    return [
        "listen_addresses = ''",
        f"unix_socket_directories = '{socket_dir}'",
        f"fsync = {options.get('fsync', 'on')}",
        f"synchronous_commit = {options.get('synchronous_commit', 'on')}",
        f"full_page_writes = {options.get('full_page_writes', 'on')}",
        f"shared_buffers = {options.get('shared_buffers', '128M')}B",
        "max_connections = " + str(max(100, int(options.get("clients", "1")) + 10)),
    ]


def steps(options: Mapping[str, str], directory: str) -> LoadSteps:
    """pgbench's commands; ``directory`` holds the cluster's socket (and its data in ``data/``)."""
    conn = ("-h", directory, "-U", ROLE)
    scale = scale_of(options)
    clients = int(options.get("clients", "1"))
    threads = min(clients, int(options.get("threads", "1")))
    init = ("pgbench", *conn, "-i", "-q", "-s", str(scale), DATABASE)
    run = ("pgbench", *conn, "-c", str(clients), "-j", str(threads), "-T", str(int(options.get("runtime", "10"))),
           *_MODE_FLAG[options.get("mode", "tpcb")], "-l", f"--log-prefix={directory}/{LOG_PREFIX}", DATABASE)  # fmt: skip
    mib = dataset_bytes(scale) / 2**20
    return LoadSteps(prepare=(init,), measure=run, logs=(f"{LOG_PREFIX}.*",),
                     creates=f"a private PostgreSQL cluster (initdb into data/, its socket here), a pgbench dataset of scale {scale} "
                             f"(about {mib:.0f} MiB), pgbench's per-transaction logs")  # fmt: skip


def runtime_s(options: Mapping[str, str]) -> float:
    """The measured run plus the dataset's load (pgbench -i writes about 100 MB/s here)."""
    return float(options.get("runtime", "10")) + dataset_bytes(scale_of(options)) / 100e6 + 2.0


@dataclass(frozen=True)
class PgbenchResult:
    """One pgbench run: its summary and the latencies of its per-transaction log."""

    version: str | None
    transaction_type: str
    scale: int
    query_mode: str | None
    clients: int
    threads: int
    processed: int
    failed: int
    tps: float  # without the initial connection time
    latency_avg_ms: float | None  # pgbench's own average (PostgreSQL 13 and older print none without -l or -L)
    connection_ms: float | None
    #: from the per-transaction log (every completed transaction)
    transactions_logged: int
    lat_mean_ms: float
    lat_max_ms: float
    #: (percentile, ms): 50, 95, 99, 99.9
    percentiles_ms: tuple[tuple[float, float], ...]


_FIELDS = {
    "transaction type": "transaction_type", "scaling factor": "scale", "query mode": "query_mode",
    "number of clients": "clients", "number of threads": "threads",
    "number of transactions actually processed": "processed", "number of failed transactions": "failed",
    "latency average": "latency", "initial connection time": "connection", "duration": "duration",
}  # fmt: skip
_LINE = re.compile(r"^([a-z ]+?)(?::| =) (.*)$")
#: the rate without the sessions' start: "without initial connection time" since PostgreSQL 14,
#: "excluding connections establishing" (beside an "including" one) before
_TPS = re.compile(r"^tps = ([\d.]+) \((?:without initial connection time|excluding connections establishing)\)")
_VERSION = re.compile(r"^pgbench \((?:PostgreSQL\) )?(\d[\w.]*)")
PERCENTILES = (50.0, 95.0, 99.0, 99.9)


def nearest_rank(sorted_values: Sequence[float], pct: float) -> float:
    """The ``pct`` percentile by nearest rank: the smallest value with at least ``pct`` % at or below it."""
    rank = max(1, math.ceil(pct / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def log_latencies_us(logs: Mapping[str, str]) -> list[int]:
    """Every completed transaction's latency (µs) of pgbench's ``-l`` logs; :class:`LoadParseError`
    names a line that is not one."""
    out: list[int] = []
    for name in sorted(logs):
        for number, line in enumerate(logs[name].splitlines(), 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) < 6 or not fields[0].isdigit():
                raise LoadParseError(f"pgbench log {name}, line {number}: not 'client transaction latency script epoch us' ({line[:60]!r})")
            if fields[2] in ("failed", "skipped"):
                continue
            if not fields[2].isdigit():
                raise LoadParseError(f"pgbench log {name}, line {number}: latency {fields[2]!r} is not a whole number of µs")
            out.append(int(fields[2]))
    return out


def _summary(text: str) -> tuple[str | None, dict[str, str], float]:
    """(version, the summary's fields, tps) of pgbench's printed summary; :class:`LoadParseError`
    names the line it lacks."""
    version = None
    found: dict[str, str] = {}
    tps = None
    for line in text.splitlines():
        line = line.strip().removeprefix("> ")
        if version is None and (m := _VERSION.match(line)):
            version = m.group(1)
        elif m := _TPS.match(line):
            tps = float(m.group(1))
        elif (m := _LINE.match(line)) and m.group(1) in _FIELDS:
            found[_FIELDS[m.group(1)]] = m.group(2)
    if tps is None:
        what = "pgbench output cut short" if found else "not pgbench output"
        raise LoadParseError(f"{what}: no 'tps = N (without initial connection time)' line")
    missing = [k for k in ("transaction_type", "scale", "clients", "threads", "processed") if k not in found]
    if missing:
        raise LoadParseError(f"pgbench output without its {missing[0].replace('_', ' ')} line")
    return version, found, tps


def parse(text: str, logs: Mapping[str, str] | None = None) -> PgbenchResult:
    version, found, tps = _summary(text)
    latencies = sorted(log_latencies_us(logs or {}))
    if not latencies:
        raise LoadParseError("pgbench wrote no per-transaction log (-l): its latency percentiles cannot be computed")
    ms = [v / 1000 for v in latencies]
    failed = found.get("failed", "0").split()[0]
    return PgbenchResult(
        version=version, transaction_type=found["transaction_type"].strip("<>").removeprefix("builtin: "),
        scale=int(found["scale"]), query_mode=found.get("query_mode"), clients=int(found["clients"]),
        threads=int(found["threads"]), processed=int(found["processed"].split("/")[0]), failed=int(failed),
        tps=tps, latency_avg_ms=float(found["latency"].split()[0]) if "latency" in found else None,
        connection_ms=float(found["connection"].split()[0]) if "connection" in found else None,
        transactions_logged=len(ms), lat_mean_ms=sum(ms) / len(ms), lat_max_ms=ms[-1],
        percentiles_ms=tuple((p, nearest_rank(ms, p)) for p in PERCENTILES),
    )  # fmt: skip


def measures(r: PgbenchResult) -> tuple[Measure, ...]:
    from ..model import Measure  # the result records load once a run has measured (tests/run/test_startup.py)

    out = [Measure("tps", r.tps, True), Measure("latency mean ms", r.lat_mean_ms, False)]
    out += [Measure(f"latency p{p:g} ms", v, False) for p, v in r.percentiles_ms]
    return (*out, Measure("latency max ms", r.lat_max_ms, False))


def settings(r: PgbenchResult) -> dict[str, str]:
    return {"pgbench_version": r.version or "unknown", "transaction_type": r.transaction_type, "scale": str(r.scale),
            "clients": str(r.clients), "threads": str(r.threads), "transactions": str(r.processed), "failed": str(r.failed)}  # fmt: skip


#: the workload a pasted pgbench run is (named as the database suite names its pgbench loads)
PASTED_WORKLOADS = {"TPC-B (sort of)": "pgbench-rw", "select only": "pgbench-ro", "simple update": "pgbench-simple-update"}


def pasted(text: str) -> Pasted:
    """pgbench's printed summary as published (PostgreSQL 9.x to 16): its tps without the
    connections' start and its own latency average where it printed one; no percentiles (they
    come from the per-transaction log, which a paste does not hold: said, never invented)."""
    from ..model import Measure

    version, found, tps = _summary(text)
    kind = found["transaction_type"].strip("<>").removeprefix("builtin: ")
    measures = [Measure("tps", tps, True)]
    absent = ["latency percentiles (they come from pgbench's per-transaction log, -l, which the output does not hold)"]
    if "latency" in found:
        measures.append(Measure("latency mean ms", float(found["latency"].split()[0]), False))
    else:
        absent.append("the latency average (pgbench before PostgreSQL 14 prints none without -l or -L)")
    settings = {"pgbench_version": version or "unknown", "transaction_type": kind, "scale": found["scale"].strip(),
                "clients": found["clients"].strip(), "threads": found["threads"].strip(),
                "transactions": found["processed"].split("/")[0].strip(), "failed": found.get("failed", "0").split()[0]}  # fmt: skip
    for key in ("query_mode", "duration"):
        if key in found:
            settings[key] = found[key].strip()
    name = PASTED_WORKLOADS.get(kind, "pgbench-" + re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-"))
    return Pasted(workload=name, measures=tuple(measures), settings=settings, absent=tuple(absent))


def parse_settings(text: str) -> dict[str, str]:
    """``psql -At -F '|'`` of :data:`SETTINGS_SQL` -> {name: value with its unit} (``shared_buffers``
    as bytes: PostgreSQL gives it in 8kB pages)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) != 3:
            continue
        name, value, unit = parts
        if unit == "8kB" and value.isdigit():
            value, unit = str(int(value) * 8192), "B"
        out[name] = f"{value}{unit}" if unit not in ("", "B") else value
    missing = [s for s in ("fsync", "synchronous_commit") if s not in out]
    if missing:
        raise LoadParseError(f"PostgreSQL's settings without {missing[0]!r} (got {', '.join(sorted(out)) or 'nothing'})")
    return out


TOOL = LoadTool(
    name="pgbench", program="pgbench", package="postgresql", headline="tps", options=OPTIONS, steps=steps, parse=parse, measures=measures,
    runtime_s=runtime_s, settings=settings, server="postgresql", clients="clients", pasted=pasted,
    description="pgbench (PostgreSQL 15) on a private cluster in the target: transactions per second, latency percentiles from its per-transaction log, the server's durability settings",
)  # fmt: skip
