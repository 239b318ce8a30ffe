"""storbench.loads: the application loads' parsers on real outputs (this machine's Debian packages
and published ones), their command lines, their one-line errors, and each tool run for real."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from storbench.loads import (
    LoadOptionError,
    LoadParseError,
    check_options,
    dbench,
    fsmark,
    pgbench,
    sysbench,
    tool,
    tool_names,
)
from storbench.model import Measure

DATA = Path(__file__).resolve().parent.parent / "data" / "loads"


def text(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_dbench_debian_output():
    r = dbench.parse(text("debian12-dbench-4.00-2clients-5s.txt"))
    assert (r.version, r.throughput_mb_s, r.clients, r.procs, r.max_latency_ms, r.sync) == ("4.00", 117.116, 2, 2, 287.183, None)
    assert [o.name for o in r.operations][:3] == ["NTCreateX", "Close", "Rename"] and len(r.operations) == 14
    assert r.operations[-1] == dbench.DbenchOperation("Flush", 1352, 4.125, 287.156)
    # the execute phase's seconds (dbench's warm-up left out, as it leaves it out of its result)
    assert r.seconds == ((1, 177.18, 158.333), (2, 124.37, 284.134), (3, 133.41, 48.427), (4, 117.12, 287.183))
    assert dbench.measures(r) == (Measure("MB/s", 117.116, True), Measure("max latency ms", 287.183, False))


def test_dbench_operations_are_shown_from_the_stored_output():
    from storbench.model import FioResult
    from storbench.record import ResultRecord
    from storbench.render.terminal import format_load_operations

    out = text("debian12-dbench-4.00-2clients-5s.txt")
    rec = ResultRecord(run_id=1, workload="dbench-2", target="/t", raw_output=out,
                       fio=FioResult(fio_version=None, jobs=(), format="dbench", measures=dbench.measures(dbench.parse(out))))  # fmt: skip
    [line] = format_load_operations([rec])
    assert line.startswith("  dbench-2: Flush 1352 ops, mean 4.125 ms, max 287.156 ms; ")  # the slowest first
    assert line.count(" ops, ") == 14
    broken = ResultRecord(run_id=1, workload="dbench-2", target="/t", raw_output="garbage", fio=rec.fio)
    assert format_load_operations([broken]) == ["  dbench-2: its stored output could not be read again (not dbench output: no 'Throughput N MB/sec' line)"]


def test_dbench_published_sync_open_output():
    r = dbench.parse(text("published-dbench-btrfs-32clients-sync-open.txt"))
    assert (r.version, r.throughput_mb_s, r.clients, r.sync, r.max_latency_ms) == (None, 241.4, 32, "sync open", 1178.207)
    assert {o.name for o in r.operations} >= {"Deltree", "Mkdir", "WriteX"} and len(r.operations) == 16 and r.seconds == ()


def test_fs_mark_outputs():
    r = fsmark.parse(text("debian12-fs_mark-3.3-2threads-2loops-fsync.txt"))
    assert (r.version, r.threads, r.sync_method) == ("3.3", 2, "INBAND FSYNC: fsync() per file in write loop.")
    assert [(loop.files, loop.files_per_s) for loop in r.loops] == [(400, 516.7), (800, 663.0)]
    assert r.files_per_s == pytest.approx((516.7 + 663.0) / 2) and fsmark.measures(r) == (Measure("files/s", r.files_per_s, True),)
    quick = fsmark.parse(text("debian12-fs_mark-3.3-1thread-nosync.txt"))
    assert quick.threads == 1 and quick.loops[0].files_per_s == 22014.3 and quick.sync_method.startswith("NO SYNC")


def test_sysbench_fileio_output():
    r = sysbench.parse(text("debian12-sysbench-1.0.20-fileio-rndrw.txt"))
    assert (r.version, r.reads_per_s, r.writes_per_s, r.fsyncs_per_s) == ("1.0.20", 4130.07, 2753.38, 276.34)
    assert (r.read_mib_s, r.written_mib_s, r.total_time_s, r.events) == (64.53, 43.02, 3.0064, 21527)
    assert (r.lat_min_ms, r.lat_avg_ms, r.lat_max_ms, r.lat_percentile) == (0.0, 0.14, 263.84, (99.0, 2.91))
    assert [m.unit for m in sysbench.measures(r)] == ["I/O/s", "reads/s", "writes/s", "fsyncs/s", "latency avg ms", "latency p99 ms"]


def test_pgbench_debian_output_and_its_transaction_log():
    logs = {p.name: p.read_text(encoding="utf-8") for p in DATA.glob("debian12-pgbench-15-tpcb-2clients-t150.log.*")}
    r = pgbench.parse(text("debian12-pgbench-15-tpcb-2clients-t150.txt"), logs)
    assert (r.version, r.transaction_type, r.scale, r.query_mode, r.clients, r.threads) == ("15.18", "TPC-B (sort of)", 4, "simple", 2, 2)
    assert (r.processed, r.failed, r.tps, r.latency_avg_ms, r.connection_ms) == (300, 0, 2975.865729, 0.672, 3.04)
    # the percentiles by nearest rank over the 300 logged latencies (µs in the log's third field)
    latencies = sorted(int(line.split()[2]) for t in logs.values() for line in t.splitlines())
    assert r.transactions_logged == 300 == len(latencies)
    assert r.percentiles_ms == ((50.0, latencies[149] / 1000), (95.0, latencies[284] / 1000), (99.0, latencies[296] / 1000),
                                (99.9, latencies[299] / 1000))  # fmt: skip
    assert r.percentiles_ms[0] == (50.0, 0.638) and r.lat_max_ms == 3.281
    assert r.lat_mean_ms == pytest.approx(sum(latencies) / 300 / 1000)
    assert [m.unit for m in pgbench.measures(r)] == ["tps", "latency mean ms", "latency p50 ms", "latency p95 ms", "latency p99 ms",
                                                     "latency p99.9 ms", "latency max ms"]  # fmt: skip
    assert pgbench.measures(r)[0] == Measure("tps", 2975.865729, True)


def test_pgbench_select_only_output_needs_its_log():
    out = text("debian12-pgbench-15-select-only-2clients-2s.txt")
    r = pgbench.parse(out, {"pgbench_log.7": "0 1 20 0 1796420649 658706\n1 1 failed 0 1796420649 658707\n0 2 30 0 1796420649 658720\n"})
    assert (r.transaction_type, r.processed, r.tps, r.transactions_logged) == ("select only", 201838, 101057.448705, 2)
    with pytest.raises(LoadParseError, match="no per-transaction log"):
        pgbench.parse(out, {})
    with pytest.raises(LoadParseError, match=r"pgbench log x, line 2: latency 'abc' is not a whole number"):
        pgbench.parse(out, {"x": "0 1 20 0 1 2\n0 2 abc 0 1 2\n"})


def test_pgbench_published_outputs_of_postgresql_17_and_10():
    """The manual's sample outputs: 17's (as 15's: tries, failed transactions, stddev) and 10's
    (two tps lines, 'excluding connections establishing' the one without the sessions' start)."""
    log = {"pgbench_log.1": "0 1 1200 0 1796420649 658706\n0 2 900 0 1796420649 659906\n"}
    new = pgbench.parse(text("published-pgbench-17-manual-tpcb-10clients.txt"), log)
    assert (new.version, new.scale, new.clients, new.threads, new.processed, new.failed) == (None, 10, 10, 1, 10000, 0)
    assert (new.tps, new.latency_avg_ms, new.connection_ms) == (896.967014, 11.013, 45.758)
    old = pgbench.parse(text("published-pgbench-10-manual-tpcb-10clients.txt"), log)
    assert (old.transaction_type, old.scale, old.clients, old.processed, old.failed) == ("TPC-B (sort of)", 10, 10, 10000, 0)
    assert (old.tps, old.latency_avg_ms, old.connection_ms) == (85.296346, None, None)
    assert old.percentiles_ms[0] == (50.0, 0.9) and old.lat_max_ms == 1.2  # from the log, as for any version
    including_only = text("published-pgbench-10-manual-tpcb-10clients.txt").replace("tps = 85.296346 (excluding connections establishing)\n", "")
    with pytest.raises(LoadParseError, match="no 'tps = N"):
        pgbench.parse(including_only, log)  # the rate with the sessions' start is not the figure


def test_postgresql_settings():
    got = pgbench.parse_settings(text("debian12-postgresql-15-settings.txt"))
    assert got == {"checkpoint_timeout": "300s", "database_size": "70819175", "fsync": "on", "full_page_writes": "on",
                   "server_version": "15.18 (Debian 15.18-0+deb12u1)", "shared_buffers": str(16384 * 8192),
                   "synchronous_commit": "on", "wal_sync_method": "fdatasync"}  # fmt: skip
    with pytest.raises(LoadParseError, match="without 'fsync'"):
        pgbench.parse_settings("server_version|15||\n")


def test_pgbench_steps_and_scale():
    opts = dict(check_options(pgbench.TOOL, {"clients": 4, "threads": 8, "mode": "select-only", "size": "100M"}))
    assert pgbench.scale_of(opts) == 7  # (100 MiB - an empty database) / 15.7 MB, rounded up
    steps = pgbench.steps(opts, "/t/d")
    assert steps.prepare == (("pgbench", "-h", "/t/d", "-U", "postgres", "-i", "-q", "-s", "7", "postgres"),)
    assert steps.measure == ("pgbench", "-h", "/t/d", "-U", "postgres", "-c", "4", "-j", "4", "-T", "10", "-S", "-l",
                             "--log-prefix=/t/d/pgbench_log", "postgres")  # fmt: skip (threads at most the clients)
    assert "listen_addresses = ''" in pgbench.conf_lines(opts, "/t/d") and "fsync = on" in pgbench.conf_lines(opts, "/t/d")


@pytest.mark.parametrize(("raw", "words"), [
    ({"clientz": 2}, "clientz: unknown pgbench option (allowed: mode, scale, size, clients"),
    ({"clients": 0}, "clients: must be at least 1 (got 0)"),
    ({"clients": "2"}, "clients: must be a whole number (got '2')"),
    ({"mode": "tpc-c"}, "mode: must be one of tpcb, select-only, simple-update (got 'tpc-c')"),
    ({"size": "lots"}, "size: 'lots' is not a size"),
    ({"fsync": True}, "fsync: must be text"),
])  # fmt: skip
def test_bad_load_options_are_one_line(raw, words):
    with pytest.raises(LoadOptionError) as exc:
        check_options(pgbench.TOOL, raw)
    assert words in str(exc.value) and "\n" not in str(exc.value)


def test_options_filled_in_tool_order():
    assert check_options(tool("dbench"), {"clients": 6, "fsync": True}) == (("clients", "6"), ("runtime", "10"), ("sync", "none"), ("fsync", "1"))


@pytest.mark.parametrize(("parse", "output", "words"), [
    (dbench.parse, "", "no 'Throughput N MB/sec' line"),
    (dbench.parse, " Operation      Count    AvgLat    MaxLat\n NTCreateX      19005     0.065    61.244\n", "cut short"),
    (fsmark.parse, "#  fs_mark  -d  /x\n", "no 'FSUse% Count"),
    (sysbench.parse, "hello\n", "not sysbench fileio output"),
    (pgbench.parse, "hello\n", "not pgbench output"),
    (dbench.parse, "Throughput 0 MB/sec  2 clients  2 procs  max_latency=0.000 ms\n", "measured nothing: its run ended inside its warm-up"),
    (pgbench.parse, "transaction type: <builtin: TPC-B (sort of)>\nscaling factor: 1\n", "cut short"),
    (sysbench.parse, "File operations:\n    reads/s:                      4130.07\n", "cut short: no 'writes/s' line"),
])  # fmt: skip
def test_unreadable_output_is_one_line(parse, output, words):
    with pytest.raises(LoadParseError, match=words) as exc:
        parse(output)
    assert "\n" not in str(exc.value)


def test_command_lines():
    assert dbench.argv({"clients": "6", "runtime": "30", "sync": "open"}, "/d") == [
        "dbench", "-D", "/d", "-t", "30", "-c", "/usr/share/dbench/client.txt", "-s", "6"]  # fmt: skip
    assert fsmark.argv({"files": "100", "file_size": "16K", "sync": "0"}, "/d") == [
        "fs_mark", "-d", ".", "-n", "100", "-s", "16384", "-t", "1", "-S", "0", "-L", "1"]  # fmt: skip (run in the directory)
    assert sysbench.argv({"size": "32M"}, "/d", "prepare")[-1] == "prepare"
    assert "--file-test-mode=rndrw" in sysbench.argv({}, "/d") and "--percentile=99" in sysbench.argv({}, "/d")
    with pytest.raises(LoadParseError, match="fs_mark sync='9': give one of 0, 1"):
        fsmark.argv({"sync": "9"}, "/d")
    with pytest.raises(LoadParseError, match="mode='random': give one of seqwr"):
        sysbench.argv({"mode": "random"}, "/d")
    assert tool_names() == ["dbench", "fs_mark", "pgbench", "sysbench-fileio"] and tool("fs_mark").package == "fsmark"
    with pytest.raises(LoadParseError, match="unknown tool 'iozone': storbench runs dbench, fs_mark, pgbench, sysbench-fileio"):
        tool("iozone")


# --------------------------------------------------------------------------- the real tools


def _real(program: str):
    return pytest.mark.skipif(shutil.which(program) is None, reason=f"{program} is installed by tests/setup-system.sh")


@pytest.mark.slow
@_real("dbench")
def test_dbench_for_real(tmp_path):
    run = subprocess.run(dbench.argv({"clients": "1", "runtime": "2"}, str(tmp_path)), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    r = dbench.parse(run.stdout)
    assert r.clients == 1 and r.throughput_mb_s > 0 and r.operations and r.version == "4.00"


@pytest.mark.slow
@_real("fs_mark")
def test_fs_mark_for_real(tmp_path):
    deep = tmp_path / ("a-directory-name-longer-than-fs_mark-takes-with-its-d-option" * 2)
    deep.mkdir()
    run = subprocess.run(fsmark.argv({"files": "50", "file_size": "4K", "sync": "1", "loops": "2"}, str(deep)), cwd=deep,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr
    r = fsmark.parse(run.stdout)
    assert [loop.files for loop in r.loops] == [50, 100] and r.files_per_s > 0 and r.sync_method.startswith("INBAND FSYNC")


@pytest.mark.slow
@_real("sysbench")
def test_sysbench_fileio_for_real(tmp_path):
    opts = {"size": "8M", "files": "2", "runtime": "1", "mode": "rndrw"}
    for phase in ("prepare", "run", "cleanup"):
        done = subprocess.run(sysbench.argv(opts, str(tmp_path), phase), cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        if phase == "run":
            r = sysbench.parse(done.stdout)
            assert r.reads_per_s > 0 and r.writes_per_s > 0 and r.lat_percentile is not None and r.lat_percentile[0] == 99.0
    assert list(tmp_path.iterdir()) == []  # cleanup removed its files


def test_a_dead_runs_load_directories_are_removed_and_no_other(tmp_path, monkeypatch):
    """What a killed run left on a target (``.storbench-load-<pid>-*``, its PID gone) is removed,
    with the server it may have left stopped first; a live run's, a link and other names stay."""
    from storbench.run import loads as run_loads

    dead = 2**22 + 12345  # above pid_max: no such process
    for name in (f".storbench-load-{dead}-a", f".storbench-load-{os.getpid()}-b", "keep-me"):
        (tmp_path / name / "data").mkdir(parents=True)
    (tmp_path / f".storbench-load-{dead}-link").symlink_to(tmp_path / "keep-me")
    stopped: list[str] = []
    monkeypatch.setattr(run_loads, "kill_postmaster", stopped.append)
    removed = run_loads.remove_dead_load_dirs(str(tmp_path))
    assert removed == [str(tmp_path / f".storbench-load-{dead}-a")] and stopped == [str(tmp_path / f".storbench-load-{dead}-a" / "data")]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([f".storbench-load-{os.getpid()}-b", f".storbench-load-{dead}-link", "keep-me"])


# --------------------------------------------------------------------------- pasted outputs (storbench import)


@pytest.mark.parametrize(("name", "file", "workload", "figures", "settings", "absent"), [
    ("sysbench-fileio", "published-sysbench-0.4.12.5-fileio-rndwr-async.txt", "sysbench-fileio-rndwr",
     # 0.4 prints counts over its total time: 10000 writes and 51200 fsyncs in 3.2942 s
     {"I/O/s": 10000 / 3.2942, "reads/s": 0.0, "writes/s": 10000 / 3.2942, "fsyncs/s": 51200 / 3.2942, "latency avg ms": 0.01,
      "latency p95 ms": 0.01},
     {"sysbench_version": "0.4.12.5", "mode": "rndwr", "total_time_s": "3.2942"}, 0),
    ("sysbench-fileio", "published-sysbench-1.1.0-fileio-seqrewr-direct.txt", "sysbench-fileio-seqrewr",
     {"I/O/s": 9057.41, "reads/s": 0.0, "writes/s": 9057.41, "fsyncs/s": 96.96, "latency avg ms": 0.44, "latency p95 ms": 1.12},
     {"sysbench_version": "1.1.0-df89d34", "mode": "seqrewr"}, 0),
    ("sysbench-fileio", "debian12-sysbench-1.0.20-fileio-rndrw.txt", "sysbench-fileio-rndrw",
     {"I/O/s": 4130.07 + 2753.38, "fsyncs/s": 276.34, "latency p99 ms": 2.91}, {"sysbench_version": "1.0.20", "mode": "rndrw"}, 0),
    ("pgbench", "published-pgbench-16.9-tpcb-50clients.txt", "pgbench-rw", {"tps": 53041.006947, "latency mean ms": 0.943},
     {"pgbench_version": "16.9", "scale": "50", "clients": "50", "threads": "15", "transactions": "5000000", "query_mode": "simple"}, 1),
    ("pgbench", "published-pgbench-9.x-custom-16clients-progress.txt", "pgbench-custom-query",
     # the rate without the connections' start ("excluding"), its "latency average:" of 9.x
     {"tps": 2401.013184, "latency mean ms": 6.663}, {"clients": "16", "duration": "300 s", "query_mode": "prepared"}, 1),
    ("pgbench", "published-pgbench-10-manual-tpcb-10clients.txt", "pgbench-rw", {"tps": 85.296346}, {"scale": "10"}, 2),
    ("dbench", "debian12-dbench-4.00-2clients-5s.txt", "dbench-2", {"MB/s": 117.116, "max latency ms": 287.183}, {"clients": "2"}, 0),
    ("fs_mark", "debian12-fs_mark-3.3-2threads-2loops-fsync.txt", "fsmark-4k-fsync", {"files/s": 589.85},
     {"threads": "2", "loops": "2", "file_size": "4096"}, 0),
])  # fmt: skip
def test_a_pasted_output_gives_its_figures_settings_and_what_it_lacks(name, file, workload, figures, settings, absent):
    """Each load's reader of a published or recorded output (tests/data/loads/README.md): the
    figures a run of storbench's has where the output holds them, how it ran, and each thing it
    lacks named (pgbench's percentiles without its per-transaction log), never made up."""
    from storbench.loads import tool

    pasted = tool(name).pasted((DATA / file).read_text())
    got = {m.unit: m.value for m in pasted.measures}
    assert pasted.workload == workload
    assert {k: got[k] for k in figures} == {k: pytest.approx(v, rel=1e-6) for k, v in figures.items()}
    assert {k: pasted.settings[k] for k in settings} == settings
    assert len(pasted.absent) == absent and not any(u.startswith("latency p") for u in got if name == "pgbench")


def test_a_pasted_output_cut_short_or_of_another_tool_is_one_line():
    from storbench.loads import tool
    from storbench.loads.base import LoadParseError

    cut = "\n".join((DATA / "published-sysbench-1.1.0-fileio-seqrewr-direct.txt").read_text().splitlines()[:22])  # after "read: IOPS="
    with pytest.raises(LoadParseError, match=r"^sysbench fileio output cut short: no 'writes/s' line") as exc:
        tool("sysbench-fileio").pasted(cut)
    assert "\n" not in str(exc.value)
    with pytest.raises(LoadParseError, match=r"^not pgbench output"):
        tool("pgbench").pasted((DATA / "debian12-dbench-4.00-2clients-5s.txt").read_text())
