"""Every form storbench stores, its version now, and what each version changed: one table, as pyperf
keeps one ``_JSON_VERSION`` with its history above it.  A reader refuses a version newer than the
one here (one line: "upgrade storbench"); an older one is read as it was written.  A change to a
stored form that an older storbench could not read raises its number here, with a line below.

May import: nothing.
"""

from __future__ import annotations

#: A result's fio figures (``results.fio_json``; :mod:`storbench.serialize`).
#:   1  2026-11-30  the first form: FioResult with jobs, directions, latency, disk use
#:   2  2026-12-01  ``measures``: another benchmark's figures (a Phoronix Test Suite import); a result
#:                  without measures is still written as 1, so an older storbench reads it
RESULT = 2

#: The storage description under a target (``results.storage_json``; :mod:`storbench.storage.codec`).
#:   1  2026-11-30  the first form; optional fields added since (ZFS, shares, Ceph, drives' health,
#:                  RAID controllers and their member drives) take their defaults when absent and
#:                  needed no new version
STORAGE = 1

#: A result's findings (``results.findings_json``; :mod:`storbench.store.database`).
#:   1  2026-11-30  the first form: check, severity, message, fix, workload
FINDINGS = 1

#: How long each host of a client/server run took (a host result's ``series["timing"]``;
#: :func:`storbench.run.hosts.host_timing`).
#:   1  2026-11-30  the first form
HOST_TIMING = 1

#: The devices' activity sampled while fio ran (``results.activity_json``; :mod:`storbench.activity`).
#:   1  2026-11-30  the first form
ACTIVITY = 1

#: What the back-ends reported during a run (``results.backend_json``; :mod:`storbench.backend`).
#:   1  2026-12-01  the first form (ZFS; NBD, Ceph, the drives' readings and, 2026-12-05, the bridge's CPU
#:                   and an nfs-ganesha export's own counters added as optional parts; 2026-12-06 an S3
#:                   bucket's count before and after: an older storbench reads the rest)
BACKEND = 1

#: The per-second series from fio's interval logs (``results.series_json``; :mod:`storbench.fio.logs`).
#:   1  2026-11-30  the first form
SERIES = 1

#: A run's live state (``live.state_json``; :mod:`storbench.run.live`).
#:   1  2026-12-02  the first form
#:   2  2026-12-05  each sample names its workload (index, repetition: the chart's segments); the
#:                  last rate held across workloads (``last``); the devices now; the plan's names;
#:                  the study's ETA
LIVE = 2

#: A matrix study's plan in its runs' metadata (:mod:`storbench.study.plan`).
#:   1  2026-11-30  the first form
STUDY = 1

#: A block trace's description (``traces.meta_json``; :mod:`storbench.trace.codec`).
#:   1  2026-12-06  the first form
TRACE = 1

#: A block trace's events (``traces.events``, a blob; :mod:`storbench.trace.codec`).
#:   1  2026-12-06  the first form: delta-encoded, byte-shuffled int64 columns and the op bytes, zlib
TRACE_EVENTS = 1

#: The figures of a trace (``traces.figures_json``; :mod:`storbench.trace.figures`).
#:   1  2026-12-06  the first form
TRACE_FIGURES = 1

#: The database's schema: Alembic revisions (``store/migrations/versions``); a database at an older
#: one is backed up and upgraded, a newer one refused.
#:   0001  runs and results
#:   0002  storage description, device activity, findings, space and interval series per result
#:   0003  network ceilings measured with iperf3 (storbench net)
#:   0004  what the storage back-end reported during each result
#:   0005  the live state of runs in progress
#:   0006  what the runs page filters on, one row per run (targets, hosts, finding checks)
#:   0007  block traces (storbench capture, imported traces)
SCHEMA = "0007"
