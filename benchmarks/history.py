"""History at scale: ``storbench list``, ``compare`` and ``report`` on 10,000 runs x 10 workloads.

The database is made quickly but with real records: ten fio results parsed from the
JSON fixtures in tests/data/fio-json (one per workload), each with a real storage
description, device-activity series, per-second series and (on a third) findings,
are stored with ``Store.add_result`` in 53 template runs whose IOPS and bandwidth are
scaled a little per run (so comparisons have spread), spread over 7 targets, 5 hosts
and 3 suites, one in ten left incomplete; the other runs are copied from those rows
with one ``INSERT ... SELECT`` through the store's own tables (labels
``nightly-NNNNN``, two runs each).

Then, each as a child process (the CLI as a user types it), timed from start to exit:

* ``storbench list`` (newest 50 runs, with their result counts);
* ``storbench compare`` of 20 runs (labels spread over the history, 2 repetitions each);
* ``storbench report`` of 50 runs to an HTML file.

Target: each within 2 s.

    .venv/bin/python benchmarks/history.py [--runs 10000] [--keep DB] [--src DIR] [--json FILE]

``--keep DB`` keeps the generated database for the next run; ``--src DIR`` runs the
commands from another source tree (before/after figures).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, Figure, arg_parser, bench_env, emit, run_timed, scratch_dir, storbench_argv, warm_bytecode

FIXTURES = REPO / "tests" / "data" / "fio-json"
SOURCES = {  # workload name -> fio JSON fixture
    "seq1m-q8t1-read": "p1_invalidate1_reference.json",
    "seq1m-q1t1-read": "p4_sparse_file_direct_read.json",
    "rnd4k-q32t1-read": "io_uring_lat_percentiles.json",
    "rnd4k-q1t1-read": "p1_pagecache_invalidate0.json",
    "seq1m-q8t1-write": "p8_buffered_write_end_fsync.json",
    "seq1m-q1t1-write": "p8_buffered_write_direct.json",
    "rnd4k-q32t1-write": "j_fsync1_libaio.json",
    "rnd4k-q1t1-write": "j_fsync1.json",
    "randrw-70-30": "h_randrw.json",
    "numjobs-group": "c_numjobs_group_reporting.json",
}
#: template runs, each workload stored once per template with figures of its own; a prime,
#: so that the 50 runs the report takes (evenly spread over the history) are 50 different
#: templates, and the report's size is that of 50 different runs (not of one copied)
TEMPLATES = 53
#: the suites the template runs name, in turn
SUITES = ("quick", "oltp", "vm-host")


def scaled(fio, factor: float, seed: int):
    """The same fio result with every direction's IOPS and bandwidth scaled by ``factor`` and
    its latencies (mean, sd, percentiles) moved by up to ±5 % (seeded): runs
    that differ as real runs do, not copies."""
    rng = random.Random(seed)

    def lat(s):
        if s is None:
            return None
        m = rng.uniform(0.95, 1.05)
        return dataclasses.replace(s, min_ns=s.min_ns * m, max_ns=s.max_ns * m, mean_ns=s.mean_ns * m, stddev_ns=s.stddev_ns * m,
                                   percentiles={k: v * rng.uniform(0.95, 1.05) for k, v in s.percentiles.items()})  # fmt: skip

    def jitter(d):
        return dataclasses.replace(d, iops=d.iops * factor, bw_bytes=d.bw_bytes * factor,
                                   lat_ns=lat(d.lat_ns), clat_ns=lat(d.clat_ns), slat_ns=lat(d.slat_ns))  # fmt: skip

    jobs = [dataclasses.replace(job, directions={name: jitter(d) for name, d in job.directions.items()}) for job in fio.jobs]
    return dataclasses.replace(fio, jobs=tuple(jobs))


def jittered_series(series, seed: int):
    """Per-second series with every value moved by up to ±20 % (seeded)."""
    rng = random.Random(seed)
    return {kind: ({d: [(t, v * rng.uniform(0.8, 1.2)) for t, v in pts] for d, pts in per.items()} if isinstance(per, dict) else per)
            for kind, per in series.items()}  # fmt: skip


def build_database(db: Path | str, nruns: int, where: Path | None = None) -> dict:
    """10 workloads x ``nruns`` runs in ``db`` (a SQLite file, or a PostgreSQL URL with
    ``where`` the directory whose storage the records describe); returns what was made."""
    from sqlalchemy import func, select, text

    from storbench.fio.json import parse_fio_json
    from storbench.fio.logs import series_from_logs
    from storbench.model import Finding
    from storbench.record import ResultRecord
    from storbench.run.devices import ActivitySampler
    from storbench.storage import describe_target
    from storbench.store import Store
    from storbench.store.tables import results, runs

    t0 = time.perf_counter()
    sqlite = isinstance(db, Path)
    storage = describe_target(str(db.parent if sqlite else where), fio_version="fio-3.33")
    with ActivitySampler([d.kname or d.name for d in storage.devices], interval_s=0.1) as sampler:
        time.sleep(0.35)
    activity = sampler.series()
    logs_dir = REPO / "tests" / "data" / "fio-logs"
    series = series_from_logs({p.name: p.read_text() for p in logs_dir.glob("sb_*.log")})
    finding = Finding(check="duration-short", severity="warning", message="fio measured for only 5 s (runtime=5)",
                      fix="use --runtime 30s or more", workload=None)
    sources = {}
    for workload, name in SOURCES.items():
        raw = (FIXTURES / name).read_text()
        sources[workload] = (raw, parse_fio_json(raw))

    with Store.open(f"sqlite:///{db}" if sqlite else db) as store:
        for t in range(TEMPLATES):
            # variety: 7 targets, 5 hosts, 3 suites, findings on some workloads, one run in 10 incomplete
            target, host, suite = f"/srv/pool{t % 7}", f"node{t % 5:02d}", SUITES[t % len(SUITES)]
            run_id = store.create_run(label=f"template-{t}", kind="run", suite=suite,
                                      meta={"host": {"hostname": host}, "argv": ["run", "--target", target],
                                            "targets": [target]})  # fmt: skip
            for w, (workload, (raw, fio)) in enumerate(sources.items()):
                opts = dict(fio.jobs[0].options) if fio.jobs else {}
                found = (dataclasses.replace(finding, workload=workload),) if (t + w) % 3 == 0 else ()
                store.add_result(ResultRecord(
                    run_id=run_id, workload=workload, target=target, fio=scaled(fio, 0.94 + 0.005 * t, seed=t), raw_output=raw,
                    label=f"template-{t}", options=opts, job_text=f"[{workload}]\n", repetition=0, host=host,
                    created_at="2026-11-01T00:00:00Z", storage=storage, activity=activity, series=jittered_series(series, t),
                    space={"files_before": [], "files_after": [], "fs_used_before": 1, "fs_used_after": 2},
                    findings=found,
                ))
            store.finish_run(run_id, "incomplete" if t % 10 == 9 else "complete")
        engine = store._engine
        with engine.begin() as conn:
            first = conn.execute(select(func.min(runs.c.id))).scalar_one()
            run_cols = [c.name for c in runs.c if c.name != "id"]
            res_cols = [c.name for c in results.c if c.name not in ("id", "run_id", "label")]
            # runs: copies of the templates, two per label (a label = one configuration, 2 repetitions)
            label_expr = (  # two runs per label: a configuration run twice
                "printf('nightly-%05d', i / 2)" if sqlite else "'nightly-' || lpad((i / 2)::text, 5, '0')")
            picked = ", ".join(label_expr if c == "label" else f"t.{c}" for c in run_cols)
            conn.execute(text(
                f"WITH RECURSIVE n(i) AS (SELECT {TEMPLATES} UNION ALL SELECT i + 1 FROM n WHERE i < {nruns - 1}) "
                f"INSERT INTO runs ({', '.join(run_cols)}) "
                f"SELECT {picked} FROM n JOIN runs t ON t.id = {first} + (i % {TEMPLATES}) ORDER BY i"
            ))
            conn.execute(text(
                f"INSERT INTO results (run_id, label, {', '.join(res_cols)}) "
                f"SELECT r.id, r.label, {', '.join('t.' + c for c in res_cols)} "
                f"FROM runs r JOIN results t ON t.run_id = {first} + ((r.id - {first}) % {TEMPLATES}) "
                f"WHERE r.id >= {first} + {TEMPLATES} ORDER BY r.id, t.id"
            ))
            conn.execute(text(  # what the runs page filters on (run_index, 0006): the template's row
                f"INSERT INTO run_index (run_id, targets, hosts, checks) SELECT r.id, t.targets, t.hosts, t.checks "
                f"FROM runs r JOIN run_index t ON t.run_id = {first} + ((r.id - {first}) % {TEMPLATES}) "
                f"WHERE r.id >= {first} + {TEMPLATES}"
            ))
        with engine.connect() as conn:
            n_runs = conn.execute(select(func.count()).select_from(runs)).scalar_one()
            n_results = conn.execute(select(func.count()).select_from(results)).scalar_one()
            last = conn.execute(select(func.max(runs.c.id))).scalar_one()
    if sqlite:
        c = __import__("sqlite3").connect(db)
        try:  # one file, no -wal beside it (storbench turns WAL on again when it opens it)
            c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            c.execute("PRAGMA journal_mode=DELETE")
        finally:
            c.close()
    return {"runs": n_runs, "results": n_results, "first": first, "last": last,
            "seconds": time.perf_counter() - t0, "bytes": _size(db)}


def _size(db: Path | str) -> int:
    if isinstance(db, Path):
        return db.stat().st_size
    from sqlalchemy import create_engine, text

    engine = create_engine(db)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one())
    finally:
        engine.dispose()


def _existing(url: str) -> dict | None:
    """What a kept PostgreSQL history holds (None: empty, or a build cut short: no
    ``bench_history_complete`` table)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            if not conn.execute(text("SELECT to_regclass('bench_history_complete') IS NOT NULL")).scalar_one():
                return None
            first, last, n = conn.execute(text("SELECT min(id), max(id), count(*) FROM runs")).one()
            nres = conn.execute(text("SELECT count(*) FROM results")).scalar_one()
    finally:
        engine.dispose()
    return {"runs": n, "results": nres, "first": first, "last": last, "seconds": 0.0, "bytes": _size(url)}


def vacuum_once(url: str) -> float | None:
    """``VACUUM (ANALYZE)`` the history's tables unless PostgreSQL has vacuumed them already (by
    hand or by autovacuum); the seconds it took, None when not needed.  A team's years-old
    database has been vacuumed by autovacuum many times; a history just bulk-loaded has not, and
    its first reads set every row's hint bits (writes) while autovacuum starts on it in the
    background: measured then, PostgreSQL figures are those of a state no user keeps for long
    (``list`` 0.47 s then, 0.37 s a few minutes later; pgbench vacuums before its runs for the
    same reason)."""
    import time

    import psycopg

    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as conn:
        never = conn.execute(
            "SELECT count(*) FROM pg_stat_user_tables WHERE relname IN ('runs', 'results')"
            " AND last_vacuum IS NULL AND last_autovacuum IS NULL"
        ).fetchone()[0]
        if not never:
            return None
        start = time.perf_counter()
        conn.execute("VACUUM (ANALYZE)")
        return time.perf_counter() - start


@contextlib.contextmanager
def postgres(keep: Path | None):
    """A PostgreSQL server from the tests' helper (tests/pg.py), its cluster in ``keep`` (kept
    for the next run) or in a temporary directory; stopped at the end.  Yields the URL."""
    sys.path.insert(0, str(REPO / "tests"))
    import pg

    bin_dir = pg.find_pg_bin()
    if bin_dir is None:
        raise SystemExit("PostgreSQL is not installed (apt-get install postgresql): no PostgreSQL figures")
    if keep is None:
        server = pg.start_server(bin_dir)
        try:
            yield server.create_database()
        finally:
            pg.stop_server(server)
        return
    import pwd

    keep.mkdir(parents=True, exist_ok=True)
    entry = pwd.getpwnam("postgres") if os.geteuid() == 0 else None
    if entry:
        os.chown(keep, entry.pw_uid, entry.pw_gid)
    server = pg.PgServer(bin_dir=bin_dir, root=keep, port=pg._free_port(), as_user="postgres" if entry else None)
    if not (server.data_dir / "PG_VERSION").exists():
        server.run(str(bin_dir / "initdb"), "-D", str(server.data_dir), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                   "--no-sync", "--locale=C")
    started = server.run(str(bin_dir / "pg_ctl"), "-D", str(server.data_dir), "-l", str(server.log_file), "-w", "-t", "120",
                         "-o", f"-p {server.port} -k {keep} -c listen_addresses=127.0.0.1", "start")
    if started.returncode != 0:
        raise SystemExit(f"pg_ctl start failed: {started.stderr.strip()}\n{server.log()}")
    try:
        import psycopg

        with psycopg.connect(server.admin_dsn(), autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'history'").fetchone():
                conn.execute('CREATE DATABASE "history"')
        yield server.url("history")
    finally:
        server.run(str(bin_dir / "pg_ctl"), "-D", str(server.data_dir), "-m", "fast", "-w", "stop", timeout=120)


def query_plans(db: Path | str, made: dict) -> list[str]:
    """How the database answers the queries behind list, show, compare/report and the runs page's
    filters: SQLite's ``EXPLAIN QUERY PLAN``, PostgreSQL's ``EXPLAIN (ANALYZE)`` (docs/performance.md
    quotes them).  The SQL is what the store and its reader send (store/reader.py writes it out)."""
    span = made["last"] - made["first"]
    middle = made["first"] + span // 2
    ids20 = ", ".join(str(made["first"] + TEMPLATES + i * max(1, (span - TEMPLATES) // 20)) for i in range(20))
    runs_page = "SELECT runs.*, (SELECT count(*) FROM results WHERE results.run_id = runs.id) AS result_count FROM runs"
    sqlite = isinstance(db, Path)
    position = "instr(run_index.targets, '/srv/pool3')" if sqlite else "strpos(run_index.targets, '/srv/pool3')"
    queries = {
        "list (newest 50)": f"{runs_page} ORDER BY runs.id DESC LIMIT 50",
        "list --label-prefix": f"{runs_page} WHERE substr(runs.label, 1, 12) = 'nightly-0400' ORDER BY runs.id DESC LIMIT 50",
        "show: a run by label": "SELECT id FROM runs WHERE label = 'nightly-04000' ORDER BY id DESC",
        "show: its results": f"SELECT * FROM results WHERE run_id = {middle} ORDER BY id",
        "compare/report: the results of 20 runs": f"SELECT * FROM results WHERE run_id IN ({ids20}) ORDER BY id",
        "serve: runs with a result on a target (count; run_index, schema 0006)": (
            f"SELECT count(*) FROM runs WHERE runs.id IN (SELECT run_index.run_id FROM run_index WHERE {position} > 0)"),
    }
    lines = []
    if sqlite:
        import sqlite3

        conn = sqlite3.connect(db)
        try:
            for name, sql in queries.items():
                lines.append(f"  {name}:")
                lines += [f"    {'  ' * (r[1] != 0)}{r[3]}" for r in conn.execute("EXPLAIN QUERY PLAN " + sql)]
        finally:
            conn.close()
    else:
        import psycopg

        with psycopg.connect(str(db).replace("postgresql+psycopg://", "postgresql://")) as conn:
            for name, sql in queries.items():
                lines.append(f"  {name}:")
                lines += [f"    {r[0]}" for r in conn.execute("EXPLAIN (ANALYZE, COSTS OFF) " + sql)]
    return lines


def serve_figures(db: Path, env: dict, made: dict, work: Path) -> list[Figure]:
    """``storbench serve`` over the same history: the runs page, a run page and a compare of 20
    runs, each timed from request to the last byte (the median of 5, after one to warm up)."""
    import socket
    import statistics
    import subprocess
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([*storbench_argv(), "serve", "--db", str(db), "--port", str(port)], env=env, cwd=work,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    span = made["last"] - made["first"]
    ids20 = [made["first"] + TEMPLATES + i * max(1, (span - TEMPLATES) // 20) for i in range(20)]
    pages = {
        "runs page (newest 50)": ("/", "<= 0.3"),
        "runs page, label filter": ("/?label=nightly-04", "<= 0.3"),
        # a result's target / host contains it, a finding has that check: every run looked at (its run_index row)
        "runs page, target filter": ("/?target=/srv/pool3", "<= 0.3"),
        "runs page, host filter": ("/?host=node02", "<= 0.3"),
        "runs page, finding filter": ("/?finding=duration-short", "<= 0.3"),
        "runs page, sorted by label": ("/?sort=label&order=asc", "<= 0.3"),
        "run page": (f"/runs/{made['first'] + span // 2}", "<= 0.5"),
        "compare of 20 runs": ("/compare?" + "&".join(f"run={i}" for i in ids20), "<= 1.0"),
    }
    out: list[Figure] = []
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(base + "/healthz", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"storbench serve did not start: {proc.stderr.read().decode()[-300:]}") from None
                time.sleep(0.1)
        for name, (path, target) in pages.items():
            times, status = [], None
            for i in range(6):
                t0 = time.perf_counter()
                try:
                    with urllib.request.urlopen(base + path, timeout=60) as r:
                        r.read()
                        status = r.status
                except OSError as exc:
                    status = str(exc)
                    break
                if i:
                    times.append(time.perf_counter() - t0)
            value = statistics.median(times) if times and status == 200 else None
            print(f"  storbench serve {name}: " + (f"{value * 1000:.0f} ms" if value is not None else f"failed ({status})"), flush=True)
            out.append(Figure("history", f"serve: {name} ({made['runs']:,} runs)", value, target, unit=" s",
                              detail=f"GET {path[:60]}{'...' if len(path) > 60 else ''}; median of 5 after a warm-up"))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return out


def main() -> int:
    p = arg_parser(__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10_000)
    p.add_argument("--keep", metavar="DB", help="reuse this database if it exists (else make it there and keep it)")
    p.add_argument("--src", help="run the storbench commands from this source tree instead (PYTHONPATH)")
    p.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite",
                   help="where the history is (postgresql: a server from tests/pg.py; --keep is then its cluster directory)")
    args = p.parse_args()
    warm_bytecode()
    if args.src:
        warm_bytecode(args.src)
    figures = []
    with scratch_dir("storbench-bench-history-") as work, contextlib.ExitStack() as stack:
        if args.store == "postgresql":
            db = stack.enter_context(postgres(Path(args.keep) if args.keep else None))
            made = _existing(db)
            if made is None:
                print(f"making {args.runs:,} runs x {len(SOURCES)} workloads on PostgreSQL ...", flush=True)
                from sqlalchemy import create_engine, text

                engine = create_engine(db)
                with engine.begin() as conn:  # a build cut short: started again from nothing
                    conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
                engine.dispose()
                made = build_database(db, args.runs, where=work)
                engine = create_engine(db)
                with engine.begin() as conn:  # the mark of a finished build (the bench's own table)
                    conn.execute(text("CREATE TABLE bench_history_complete (runs integer)"))
                engine.dispose()
            else:
                print("reusing the kept PostgreSQL history")
            if (took := vacuum_once(str(db))) is not None:
                print(f"  VACUUM (ANALYZE) of the history: {took:.1f} s (once: it was never vacuumed)", flush=True)
        else:
            db = Path(args.keep) if args.keep else work / "history.sqlite"
            db.parent.mkdir(parents=True, exist_ok=True)
            if db.exists():
                from sqlite3 import connect

                with connect(db) as c:
                    first, last, n = c.execute("SELECT min(id), max(id), count(*) FROM runs").fetchone()
                    made = {"runs": n, "results": c.execute("SELECT count(*) FROM results").fetchone()[0],
                            "first": first, "last": last, "seconds": 0.0, "bytes": db.stat().st_size}
                print(f"reusing {db}")
            else:
                print(f"making {args.runs:,} runs x {len(SOURCES)} workloads in {db} ...", flush=True)
                building = db.with_name(db.name + ".building")  # a build cut short is never reused
                for leftover in (building, building.with_name(building.name + "-wal"), building.with_name(building.name + "-shm")):
                    leftover.unlink(missing_ok=True)
                made = build_database(building, args.runs)
                building.replace(db)
        print(f"  {made['runs']:,} runs, {made['results']:,} results, {made['bytes'] / 2**20:,.0f} MiB "
              f"(made in {made['seconds']:.1f} s)", flush=True)
        env = bench_env(db)
        if args.src:
            env["PYTHONPATH"] = str(Path(args.src).resolve())
        sb = storbench_argv()
        # 20 runs = 10 labels x 2 repetitions, spread over the history; 50 runs for the report
        span = made["last"] - made["first"]
        labels20 = [f"nightly-{i:05d}" for i in range(TEMPLATES // 2, span // 2, max(1, span // 2 // 10))][:10]
        ids50 = [str(made["first"] + i * max(1, span // 50)) for i in range(50)]
        # the targets: issue 24's at 100,000 runs (list and compare 1 s, report 1.5 s, show 0.5 s,
        # 300 MB each); the earlier 2 s at 10,000
        big = made["runs"] >= 100_000
        commands = {
            "list": ([*sb, "list"], 1.0 if big else 2.0),
            "list, label filter": ([*sb, "list", "--label-prefix", "nightly-0400"], 1.0 if big else 2.0),
            "show": ([*sb, "show", str(made["first"] + span // 2)], 0.5 if big else 2.0),
            "compare 20 runs": ([*sb, "compare", *labels20], 1.0 if big else 2.0),
            "report 50 runs": ([*sb, "report", *ids50, "-o", str(work / "report.html")], 1.5 if big else 2.0),
        }
        for name, (argv, target_s) in commands.items():
            run_timed(argv, env=env, cwd=work)  # warm the page cache: the figure is the second run
            t = run_timed(argv, env=env, cwd=work)
            ok = t.returncode == 0
            what = f"exit {t.returncode}: {(t.stderr.strip() or t.stdout.strip())[-300:]}" if not ok else ""
            out_lines = len(t.stdout.splitlines())
            print(f"  storbench {name}: {t.wall_s:.2f} s, peak {t.maxrss_bytes / 2**20:,.0f} MiB"
                  + (f" ({what})" if what else f", {out_lines} lines of output"), flush=True)
            figures.append(Figure(
                "history", f"storbench {name} ({made['runs']:,} runs, {made['results']:,} results, {args.store})",
                t.wall_s if ok else None, f"<= {target_s}", unit=" s",
                detail=(f"peak RSS {t.maxrss_bytes / 2**20:,.0f} MiB; " + (what or " ".join(argv[len(sb):len(sb) + 4]) + " ...")),
            ))
            if big:
                figures.append(Figure("history", f"storbench {name}: peak memory ({made['runs']:,} runs, {args.store})",
                                      t.maxrss_bytes / 1e6 if ok else None, "<= 300", unit=" MB", detail="peak RSS of the child"))
        print("  query plans:", flush=True)
        for line in query_plans(db, made):
            print(line, flush=True)
        figures.extend(serve_figures(db, env, made, work))
        report = work / "report.html"
        size = report.stat().st_size if report.exists() else None
        print(f"  report of 50 runs: {size / 1e6:.2f} MB" if size else "  report of 50 runs: not written", flush=True)
        figures.append(Figure("history", "self-contained HTML report of 50 runs (MB)", size / 1e6 if size else None, "<= 1.5",
                              unit=" MB", detail="50 different runs; plotly.js partial bundle, figures and data packed (gzip + base64)"))
    emit(figures, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
