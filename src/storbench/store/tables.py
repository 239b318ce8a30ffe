"""The results database schema as SQLAlchemy Core tables (the current head revision).

The migrations under ``migrations/versions`` are the source of truth for what is
on disk; this module must describe the same schema as the head revision (a test
compares the two).  Times are ISO 8601 UTC text (``2024-05-01T12:00:00Z``) so they
read the same in every backend and in ``sqlite3``.

``runs``
    One invocation of ``storbench run`` or ``storbench import``.  ``meta_json`` is
    free JSON (host facts, argv, targets) that only the CLI interprets.

``results``
    One fio invocation (one workload x target x repetition).  ``result_json`` is
    :func:`storbench.serialize.fio_result_to_dict` as JSON; ``raw_output`` is what
    fio printed, verbatim.  The headline columns (``read_iops``, ``write_iops``,
    ``read_bw_bytes``, ``write_bw_bytes``) are denormalised for fast listing: taken
    from the aggregate job ("All clients") when there is one, else summed over all
    jobs that did I/O in that direction; NULL when no job did.
"""

from __future__ import annotations

from sqlalchemy import (
    CheckConstraint,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)

RUN_KINDS: tuple[str, ...] = ("run", "import")
RUN_STATUSES: tuple[str, ...] = ("running", "complete", "incomplete", "failed")

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_name)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)

#: Tables that mark a database as storbench's (besides ``alembic_version``).
STORBENCH_TABLES: frozenset[str] = frozenset({"runs", "results"})

runs = Table(
    "runs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("label", Text, nullable=True),
    Column("kind", String(16), nullable=False),
    Column("status", String(16), nullable=False),
    Column("reason", Text, nullable=True),
    Column("suite", Text, nullable=True),
    Column("created_at", String(40), nullable=False),
    Column("finished_at", String(40), nullable=True),
    Column("storbench_version", String(64), nullable=True),
    Column("meta_json", Text, nullable=False),
    CheckConstraint("kind IN ('run', 'import')", name="kind"),
    CheckConstraint("status IN ('running', 'complete', 'incomplete', 'failed')", name="status"),
    Index("ix_runs_label", "label"),
)

results = Table(
    "results",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("workload", Text, nullable=False),
    Column("target", Text, nullable=True),
    Column("label", Text, nullable=True),
    Column("source", Text, nullable=True),
    Column("repetition", Integer, nullable=False),
    Column("fio_version", String(64), nullable=True),
    Column("options_json", Text, nullable=False),
    Column("job_text", Text, nullable=True),
    Column("result_json", Text, nullable=False),
    Column("raw_output", Text, nullable=False),
    Column("created_at", String(40), nullable=False),
    Column("host", Text, nullable=True),
    Column("read_iops", Float, nullable=True),
    Column("write_iops", Float, nullable=True),
    Column("read_bw_bytes", Float, nullable=True),
    Column("write_bw_bytes", Float, nullable=True),
    # 0002: the storage under the target, device activity, findings, space (JSON, versioned)
    Column("storage_json", Text, nullable=True),
    Column("activity_json", Text, nullable=True),
    Column("findings_json", Text, nullable=True),
    Column("space_json", Text, nullable=True),
    Column("series_json", Text, nullable=True),
    # 0004: what the storage back-end (a ZFS pool) reported during the run (JSON, versioned)
    Column("backend_json", Text, nullable=True),
    Index("ix_results_run_id", "run_id"),
)

#: 0005: the live state of a run in progress (plan, current workload, fio's per-second rates,
#: results and findings so far), written by the run at most once a second and removed when it
#: finishes; ``state_json`` is :mod:`storbench.run.live`'s versioned form.
live_runs = Table(
    "live_runs",
    metadata,
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("updated_at", String(40), nullable=False),
    Column("state_json", Text, nullable=False),
)

#: 0006: what the runs page filters on, one narrow row per run (the store keeps it as results are
#: added): the run's distinct result targets, its hosts (the results' ``host:port`` and the run's
#: own host name) and the checks of its findings, each on a line of its own (``"\n/srv/a\n/srv/b\n"``;
#: ``""`` for none), so that ``?target=``, ``?host=`` and ``?finding=`` read 100,000 small rows, not
#: every result.
run_index = Table(
    "run_index",
    metadata,
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("targets", Text, nullable=False, server_default=""),
    Column("hosts", Text, nullable=False, server_default=""),
    Column("checks", Text, nullable=False, server_default=""),
)

#: 0003: ``storbench net`` measurements, one row per iperf3 run.  ``direction`` is
#: ``to-server`` (iperf3's default: the client sends, as when writing to a share) or
#: ``from-server`` (``-R``: as when reading); ``bits_per_second`` is what the receiver
#: got; ``raw_json`` is iperf3's ``-J`` output verbatim.  Rows of one invocation share
#: ``created_at``.
NET_DIRECTIONS: tuple[str, ...] = ("to-server", "from-server")

net_ceilings = Table(
    "net_ceilings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("server", Text, nullable=False),
    Column("created_at", String(40), nullable=False),
    Column("streams", Integer, nullable=False),
    Column("direction", String(16), nullable=False),
    Column("bits_per_second", Float, nullable=False),
    Column("raw_json", Text, nullable=False),
    CheckConstraint("direction IN ('to-server', 'from-server')", name="direction"),
    Index("ix_net_ceilings_server", "server"),
)

#: 0007: block traces (``storbench capture``, imported traces; issue 51).  ``meta_json`` is
#: :func:`storbench.trace.codec.meta_to_dict`, ``figures_json`` :func:`storbench.trace.figures.trace_figures`,
#: ``events`` the compressed events (:func:`storbench.trace.codec.encode_events`); ``events_count``
#: and ``span_s`` are denormalised for listing.
traces = Table(
    "traces",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("label", Text, nullable=False),
    Column("created_at", String(40), nullable=False),
    Column("source", String(32), nullable=False),
    Column("device", Text, nullable=True),
    Column("events_count", Integer, nullable=False),
    Column("span_s", Float, nullable=False),
    Column("meta_json", Text, nullable=False),
    Column("figures_json", Text, nullable=False),
    Column("events", LargeBinary, nullable=False),
    Index("ix_traces_label", "label"),
)
