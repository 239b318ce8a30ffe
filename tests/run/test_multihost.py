"""Many hosts: --host/--hosts parsing, pre-flight, per-host results, stragglers, and real
runs against several fio servers ('storbench agent') on 127.0.0.1 only."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import socket
import sqlite3
import statistics
import threading
import time
from pathlib import Path

import pytest
from test_agent import free_port

from storbench.errors import UsageError
from storbench.fio.json import parse_fio_json
from storbench.jobs.jobfile import build_job
from storbench.metrics import direction_figures
from storbench.model import Overrides, Target
from storbench.record import ResultRecord
from storbench.run.aggregate import per_host_results
from storbench.run.inventory import (
    DEFAULT_PORT,
    Host,
    combine_hosts,
    filename_of,
    job_for_host,
    parse_host,
    parse_inventory,
)
from storbench.run.perhost import format_host_lines, host_timing, lost_hosts, straggler_findings
from storbench.run.preflight import HostFacts, ProbeOutput, check_hosts, judge_probe, parse_probe_line
from storbench.run.runner import ExecuteContext, FioInvocation, NoTelemetry, SilentReporter, execute
from storbench.suites import builtin_catalog
from storbench.units import fmt_iops

from conftest import DATA, needs_fio

MH = DATA / "multihost"
PORTS = json.loads((MH / "ports.json").read_text())
H1 = Host("127.0.0.1", PORTS["host1"])
H2 = Host("127.0.0.1", PORTS["host2"])


def recorded(name: str) -> tuple[str, str]:
    return (MH / f"{name}.stdout").read_text(), (MH / f"{name}.stderr").read_text()


# --------------------------------------------------------------------------- --host values


@pytest.mark.parametrize(
    "text, address, port",
    [
        ("127.0.0.1", "127.0.0.1", DEFAULT_PORT),
        ("127.0.0.1:18801", "127.0.0.1", 18801),
        ("10.0.0.5:8765", "10.0.0.5", 8765),
        ("[::1]:9000", "::1", 9000),
        ("[::1]", "::1", DEFAULT_PORT),
        ("[FD00:0::5]:1", "fd00::5", 1),
        ("hv-05.lan:65535", "hv-05.lan", 65535),
        ("HV-05", "hv-05", DEFAULT_PORT),
        (" bench ", "bench", DEFAULT_PORT),
    ],
)
def test_parse_host(text, address, port) -> None:
    host = parse_host(text)
    assert (host.address, host.port, host.target, host.name) == (address, port, None, None)


@pytest.mark.parametrize(
    "text, words",
    [
        ("", "needs a value"),
        ("::1", "brackets"),
        ("fd00::5:8765", "brackets"),
        ("[::1", "missing ']'"),
        ("[::1]x", "expected ':PORT'"),
        ("[nope]:1", "not an IPv6 address"),
        ("host:0", "1 to 65535"),
        ("host:65536", "1 to 65535"),
        ("host:", "1 to 65535"),
        ("host:ab", "1 to 65535"),
        ("999.1.1.1", "not a valid IPv4"),
        ("bad_name", "not a host name"),
        ("a,b:1", "not a host name"),
        ("-lead", "not a host name"),
    ],
)
def test_parse_host_errors_are_one_line(text, words) -> None:
    with pytest.raises(UsageError) as err:
        parse_host(text)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_client_options_per_address_kind() -> None:
    assert Host("127.0.0.1", 1).client_option() == "--client=ip:127.0.0.1,1"
    assert Host("::1", 2).client_option() == "--client=ip6:::1,2"
    assert Host("hv-05.lan", 3).client_option() == "--client=hv-05.lan,3"
    assert Host("::1", 2).endpoint == "[::1]:2"
    assert Host("::1", 2, name="x").display == "x"


# --------------------------------------------------------------------------- inventory

INVENTORY = """
[host.hv-05]
address = "10.0.0.5"
port = 8765
target = "/mnt/bench"
label = "hv-05"

[host.hv-06]
address = "fd00::6"

[host.tunnel]
address = "127.0.0.1"
port = 18802
label = "hv-07-via-ssh"
"""


def test_inventory() -> None:
    hosts = parse_inventory(INVENTORY, "inv.toml")
    assert hosts == (
        Host("10.0.0.5", 8765, "/mnt/bench", "hv-05"),
        Host("fd00::6", DEFAULT_PORT, None, "hv-06"),
        Host("127.0.0.1", 18802, None, "hv-07-via-ssh"),
    )


@pytest.mark.parametrize(
    "text, words",
    [
        ("[host.a\n", "not valid TOML"),
        ("x = 1\n", "unknown top-level key 'x'"),
        ("", "no hosts"),
        ("host = 3\n", "no hosts"),
        ("[host]\na = 1\n", "must be a table"),
        ("[host.a]\nport = 1\n", "address = \"...\" (a string) is required"),
        ("[host.a]\naddress = 5\n", "address = \"...\" (a string) is required"),
        ("[host.a]\naddress = \"h\"\nuser = \"root\"\n", "unknown key 'user'"),
        ("[host.a]\naddress = \"h\"\nport = \"x\"\n", "1 to 65535"),
        ("[host.a]\naddress = \"h\"\nport = 70000\n", "1 to 65535"),
        ("[host.a]\naddress = \"h\"\nport = true\n", "not a number"),
        ("[host.a]\naddress = \"h h\"\n", "not a host name"),
        ("[host.a]\naddress = \"h\"\ntarget = \"/x;rm\"\n", "target path"),
        ("[host.a]\naddress = \"h\"\ntarget = \"\"\n", "non-empty directory"),
        ("[host.a]\naddress = \"h\"\nlabel = \"two words\"\n", "label 'two words'"),
        ("[host.\"a b\"]\naddress = \"h\"\n", "name must be"),
    ],
)
def test_inventory_errors_name_file_and_host(text, words) -> None:
    with pytest.raises(UsageError) as err:
        parse_inventory(text, "inv.toml")
    message = str(err.value)
    assert message.startswith("inv.toml") and words in message and "\n" not in message


def test_the_same_server_or_name_twice_is_refused() -> None:
    with pytest.raises(UsageError, match="given twice"):
        combine_hosts([parse_host("127.0.0.1:1"), Host("127.0.0.1", 1, name="x")])
    with pytest.raises(UsageError, match="two hosts are named 'x'"):
        combine_hosts([Host("10.0.0.1", 1, name="x"), Host("10.0.0.2", 1, name="x")])
    assert combine_hosts([H1, H2]) == (H1, H2)


# --------------------------------------------------------------------------- job text per host


def _spec(target: str = ".", workload: str = "rnd4k-q1t1-read", runtime: str = "1"):
    wl = builtin_catalog().workload(workload)
    return build_job(wl, Target(kind="dir", path=target), Overrides(size="8m", runtime=runtime))


def test_job_for_host_moves_only_the_filename() -> None:
    spec = _spec()
    assert filename_of(spec.job_text) == "./storbench.testfile"
    assert job_for_host(spec.job_text, None) == spec.job_text
    moved = job_for_host(spec.job_text, "/mnt/bench:x/")
    assert filename_of(moved) == "/mnt/bench\\:x/storbench.testfile"
    assert moved.replace(filename_of(moved), "") == spec.job_text.replace("./storbench.testfile", "")
    assert filename_of(job_for_host(spec.job_text, "/")) == "/storbench.testfile"


# --------------------------------------------------------------------------- pre-flight


def test_probe_line_golden() -> None:
    facts = parse_probe_line((MH / "probe.stdout").read_text())
    assert facts == HostFacts(hostname="vm", os="Linux", arch="x86-64", fio_version="fio-3.33", big_endian=False, bits=64)
    assert parse_probe_line("nothing here\n") is None


OK_PROBE = ProbeOutput(0, (MH / "probe.stdout").read_text(), "")


def test_judge_probe_cases() -> None:
    ok = judge_probe(H1, None, OK_PROBE, "fio-3.33")
    assert ok.ok and ok.facts.hostname == "vm"
    down = judge_probe(H1, "connection refused", None, "fio-3.33")
    assert not down.ok and f"cannot reach 127.0.0.1:{H1.port}: connection refused" in down.problem
    old = judge_probe(H1, None, OK_PROBE, "fio-3.36")
    assert old.facts is not None and "runs fio-3.33 but this client runs fio-3.36" in old.problem
    silent = judge_probe(H1, None, ProbeOutput(None, "", ""), "fio-3.33")
    assert "no fio probe reply" in silent.problem and "mismatched protocol versions" in silent.problem
    said = judge_probe(H1, None, ProbeOutput(1, "", "fio: connect: Connection reset by peer\n"), "fio-3.33")
    assert said.problem.endswith("did not answer as a fio server: connect: Connection reset by peer")


def test_check_hosts_keeps_order_and_leaves_out_the_unreachable() -> None:
    hosts = [H1, H2, Host("10.9.9.9", 1)]
    down = {H2.fio_key: "connection refused"}
    probed = []

    def probe(fio_path, host):
        probed.append(host)
        return OK_PROBE

    checks = check_hosts(hosts, "fio", "fio-3.33", connect=lambda h: down.get(h.fio_key), probe=probe)
    assert [c.host for c in checks] == hosts
    assert [c.ok for c in checks] == [True, False, True]
    assert H2 not in probed


# --------------------------------------------------------------------------- results per host (recorded fio output)


def test_per_host_results_name_servers_sharing_an_address_by_port() -> None:
    result = parse_fio_json(recorded("two_hosts")[0])
    parts = per_host_results(result)
    assert [n for n, _ in parts] == [f"127.0.0.1:{H1.port}", f"127.0.0.1:{H2.port}", None]
    named = per_host_results(result, {H1.fio_key: "alpha", H2.fio_key: "beta"})
    assert [n for n, _ in named] == ["alpha", "beta", None]
    total = sum(r.jobs[0].directions["read"].iops for n, r in parts if n)
    assert parts[-1][1].jobs[0].directions["read"].iops == pytest.approx(total, rel=1e-6)


def test_lost_hosts_golden() -> None:
    assert lost_hosts([H1, H2], *recorded("two_hosts")) == {}
    assert lost_hosts([H1, H2], *recorded("one_killed")) == {
        H2.display: "no result from this host: fio said: client: host=127.0.0.1 disconnected"
    }
    closed = Host("127.0.0.1", PORTS["closed"], name="gone")
    assert lost_hosts([H1, closed], *recorded("one_unreachable")) == {
        "gone": f"no result from this host: fio said: failed to connect to 127.0.0.1:{PORTS['closed']}"
    }
    assert lost_hosts([H1, H2], "not json", "fio: everything failed") == {}


def test_host_timing_shows_the_tail() -> None:
    result = parse_fio_json(recorded("two_hosts")[0])
    (a, ra), (b, rb), _ = per_host_results(result)
    slow = dataclasses.replace(rb, jobs=(dataclasses.replace(rb.jobs[0], job_runtime_ms=1750),))
    timing = host_timing([(a, ra), (b, slow)])
    assert timing[a] == {"format_version": 1, "runtime_ms": 1000, "first_done_ms": 1000, "last_done_ms": 1750, "behind_first_ms": 0, "hosts": 2}
    assert timing[b]["behind_first_ms"] == 750 and timing[b]["runtime_ms"] == 1750


def _late_start() -> dict[str, tuple]:
    """Two real hosts' per-second IOPS logs (fio 3.33 client/server on 127.0.0.2 and .3, log_unix_epoch=1,
    runtime 4 s; the second host's job with startdelay=2: tests/data/multihost/late-start-*)."""
    from storbench.fio.logs import epoch_series

    data = Path(__file__).resolve().parent.parent / "data" / "multihost"
    return {host: epoch_series([(data / f"late-start-sbh{i}_iops.1.log.{host}").read_text()]) for i, host in enumerate(("127.0.0.2", "127.0.0.3"))}


def test_the_common_window_of_a_host_started_late() -> None:
    from storbench.run.perhost import common_window, window_findings

    series = _late_start()
    assert series["127.0.0.2"][0] == (1796423629313, 20122.0, 0.0) and len(series["127.0.0.3"]) == 3
    w = common_window(series)
    assert w is not None and (w.start_ms, w.end_ms) == (1796423630315, 1796423631313)
    assert w.iops == 15368 + 15267  # the one second both ran, each host's figure in it
    assert w.spans == (("127.0.0.2", 1796423628313, 1796423631313), ("127.0.0.3", 1796423630315, 1796423633315))
    data = Path(__file__).resolve().parent.parent / "data" / "multihost"
    everyone = next(c for c in json.loads((data / "late-start-client.json").read_text())["client_stats"] if c["jobname"] == "All clients")
    [finding] = window_findings("r", w, everyone["read"]["iops"])
    assert finding.check == "hosts-not-together" and finding.severity == "warning"
    assert finding.message.startswith("127.0.0.3 started 2.0 s after the first; 127.0.0.2 ended 2.0 s before the last:")
    assert "every host ran together for 1.0 s, in which they did 30,635 IOPS together" in finding.message
    assert f"says {everyone['read']['iops']:,.0f}" in finding.message


def test_hosts_that_ran_together_raise_nothing() -> None:
    from storbench.run.perhost import common_window, window_findings

    one = _late_start()["127.0.0.2"]
    together = {"a": one, "b": tuple((t + 37, i, b) for t, i, b in one)}  # 37 ms apart: the same seconds
    w = common_window(together)
    assert w is not None and w.seconds == pytest.approx(2.963) and window_findings("r", w, 1.0) == []
    assert common_window({"a": one}) is None and window_findings("r", None, 1.0) == []


def _scaled(result, factor: float):
    job = result.jobs[0]
    d = job.directions["read"]
    read = dataclasses.replace(d, iops=d.iops * factor, bw_bytes=d.bw_bytes * factor)
    return dataclasses.replace(result, jobs=(dataclasses.replace(job, directions={"read": read}),))


def test_stragglers_named_against_the_median() -> None:
    result = parse_fio_json(recorded("two_hosts")[0])
    (_a, ra), (_b, rb), _ = per_host_results(result)
    hosts = [("h1", ra), ("h2", _scaled(ra, 1.02)), ("h3", _scaled(ra, 0.5)), ("h4", _scaled(ra, 0.95))]
    [finding] = straggler_findings("w", "iops", hosts)
    assert finding.check == "straggler" and finding.severity == "warning" and finding.workload == "w"
    assert "h3 (51% of the median)" in finding.message and "h4" not in finding.message
    assert straggler_findings("w", "iops", hosts[:2]) == []
    assert straggler_findings("w", "iops", hosts[:1]) == []
    # latency headline: the slow host has the HIGHER latency
    lat = straggler_findings("w", "lat", [("h1", ra), ("h2", rb)])
    assert lat == []


def test_a_straggler_finding_at_256_hosts_names_the_five_worst_and_counts_the_rest() -> None:
    result = parse_fio_json(recorded("two_hosts")[0])
    (_a, ra), _b, _ = per_host_results(result)
    # 198 hosts at the median, 58 below it: h200 at 30 %, h201 at 31 %, ... h257 at 87 % is not slow
    hosts = [(f"h{i}", ra) for i in range(2, 200)] + [(f"h{i}", _scaled(ra, 0.30 + (i - 200) * 0.01)) for i in range(200, 258)]
    [finding] = straggler_findings("w", "iops", hosts)
    slow = [name for name, r in hosts if r.jobs[0].directions["read"].iops < 0.8 * ra.jobs[0].directions["read"].iops]
    assert len(slow) == 50
    named = re.findall(r"\b(h\d+) \((\d+)% of the median\)", finding.message)
    assert [n for n, _ in named] == ["h200", "h201", "h202", "h203", "h204"]  # the worst five, worst first
    assert [int(p) for _, p in named] == [30, 31, 32, 33, 34]
    assert f"and {len(slow) - 5} more of {len(slow)} hosts" in finding.message and "median of 256 hosts" in finding.message
    assert len(finding.message) < 400  # one readable line, not 50 names


# --------------------------------------------------------------------------- the runner with recorded client output


class Replay:
    """A remote FioExecutor that answers with a recorded client/server output."""

    remote = True

    def __init__(self, hosts, stdout: str, stderr: str = "", returncode: int = 0) -> None:
        self.hosts, self.stdout, self.stderr, self.returncode = hosts, stdout, stderr, returncode

    def version(self) -> str:
        return "fio-3.33"

    def run(self, job_text, on_status):
        return FioInvocation(
            returncode=self.returncode, output_text=self.stdout, stderr_text=self.stderr, stdout_text="",
            host_names={h.fio_key: h.display for h in self.hosts},
            lost_hosts=lost_hosts(self.hosts, self.stdout, self.stderr),
        )


class ListSink:
    def __init__(self) -> None:
        self.records: list[ResultRecord] = []

    def add_result(self, record: ResultRecord) -> int:
        self.records.append(record)
        return len(self.records)


def _execute(executor, spec=None):
    sink = ListSink()
    outcome = execute([spec or _spec()], ExecuteContext(
        run_id=1, executor=executor, sink=sink, reporter=SilentReporter(), clock=lambda: "2026-11-30T00:00:00+00:00",
        telemetry=NoTelemetry(),
    ))
    return outcome, sink.records


def test_runner_stores_each_host_and_the_aggregate(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "storbench.testfile").write_text("a local file of the same name")
    alpha, beta = dataclasses.replace(H1, name="alpha"), dataclasses.replace(H2, name="beta")
    outcome, records = _execute(Replay([alpha, beta], recorded("two_hosts")[0]))
    assert outcome.failures == ()
    assert [r.host for r in records] == ["alpha", "beta", "all"]
    per_host = sum(r.fio.jobs[0].directions["read"].iops for r in records[:2])
    assert records[2].fio.jobs[0].directions["read"].iops == pytest.approx(per_host, rel=1e-6)
    assert records[0].series["timing"]["runtime_ms"] == 1000 and records[2].space is None
    assert not any(f.check == "straggler" for f in records[2].findings)
    # remote test files are not the runner's business: the local namesake is untouched
    assert (tmp_path / "storbench.testfile").read_text() == "a local file of the same name"


def test_hosts_that_may_share_a_directory_each_write_a_file_of_their_own(tmp_path, monkeypatch) -> None:
    """Issue 54: 256 fio servers sharing one directory, each host's last job ended with unlink=1,
    so the first host done removed the file the others were still to open (59-62 of 256 hosts
    failed with ENOENT here).  Hosts on alike paths now name their files apart, as fio's own
    client does on a shared filesystem, so each removes its own as its last job ends."""
    from storbench.run.hosts import ClientFio
    from storbench.run.inventory import file_tags, shares_paths

    own = [dataclasses.replace(H1, target="/srv/a"), dataclasses.replace(H2, target="/srv/b")]
    assert shares_paths([H1, H2]) and not shares_paths(own) and not shares_paths([H1])
    assert shares_paths([dataclasses.replace(H1, target="/srv/a"), dataclasses.replace(H2, target="/srv/a")])
    assert file_tags(own) == {} and file_tags([H1]) == {}
    assert file_tags([H1, H2]) == {H1.display: H1.display.replace(":", "_"), H2.display: H2.display.replace(":", "_")}
    v6, label = parse_host("[fd00::5]:8765"), dataclasses.replace(H1, name="hv-05")
    assert file_tags([v6, label]) == {"[fd00::5]:8765": "_fd00__5__8765", "hv-05": "hv-05"}
    clash = [dataclasses.replace(H1, name="a_1"), parse_host("a:1")]  # two names alike once made safe: by place
    assert file_tags(clash) == {"a_1": "h0", "a:1": "h1"}

    spec = _spec()
    assert filename_of(job_for_host(spec.job_text, None, "hv-05")) == "./storbench.testfile.hv-05"
    assert filename_of(job_for_host(spec.job_text, "/mnt/x", "hv-05")) == "/mnt/x/storbench.testfile.hv-05"
    assert filename_of(job_for_host("[x]\nfilename=/srv/t/storbench.testfile\n", None, "h3")) == "/srv/t/storbench.testfile.h3"
    assert filename_of(job_for_host("[x]\nfilename=/storbench.testfile\n", None, "h3")) == "/storbench.testfile.h3"
    client = ClientFio([H1, H2])
    assert [filename_of(client.job_for(spec.job_text, h)) for h in (H1, H2)] == [
        f"./storbench.testfile.{H1.display.replace(':', '_')}", f"./storbench.testfile.{H2.display.replace(':', '_')}"]
    assert client.job_for(spec.job_text, H1) != spec.job_text and ClientFio(own).job_for(spec.job_text, own[0]).endswith(
        "filename=/srv/a/storbench.testfile\n")

    class Recording(Replay):
        def run(self, job_text, on_status):
            self.jobs.append(job_text)
            return super().run(job_text, on_status)

    monkeypatch.chdir(tmp_path)
    executor = Recording([H1, H2], recorded("two_hosts")[0])
    executor.jobs = []
    _execute(executor)  # the one repetition is the file's last use: its hosts remove it as it ends
    assert len(executor.jobs) == 1 and "\nunlink=1\n" in executor.jobs[0]


def test_runner_killed_host_is_a_per_host_failure_and_the_other_is_stored(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    out, err = recorded("one_killed")
    outcome, records = _execute(Replay([H1, H2], out, err, returncode=1))
    assert [r.host for r in records] == [H1.display, "all"]
    assert records[1].fio.jobs == records[0].fio.jobs  # one host left: it is the aggregate
    [failure] = outcome.failures
    assert failure.target == f"{H2.display}:."
    assert failure.reason == f"host {H2.display}: no result from this host: fio said: client: host=127.0.0.1 disconnected"


def test_runner_host_job_error_is_a_per_host_failure(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    out, err = recorded("host_error")
    outcome, records = _execute(Replay([H1, H2], out, err, returncode=1))
    [failure] = outcome.failures
    assert failure.reason == f"host {H2.display}: fio error 2 (No such file or directory)"
    assert [r.host for r in records] == [H1.display, "all"]


def test_runner_flags_a_straggler_on_the_aggregate(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    text = recorded("two_hosts")[0]
    doc = json.loads(text[text.index("{"):])
    slow = next(c for c in doc["client_stats"] if c["port"] == H2.port)
    for key in ("iops", "bw_bytes", "bw", "io_bytes", "io_kbytes"):  # counts stay whole numbers, as fio writes them
        slow["read"][key] = slow["read"][key] * 0.4 if key in ("iops", "bw_bytes") else round(slow["read"][key] * 0.4)
    _outcome, records = _execute(Replay([H1, H2], json.dumps(doc)))
    aggregate = records[-1]
    [finding] = [f for f in aggregate.findings if f.check == "straggler"]
    assert H2.display in finding.message and H1.display not in finding.message
    assert not any(f.check == "straggler" for r in records[:-1] for f in r.findings)


def test_format_host_lines() -> None:
    result = parse_fio_json(recorded("two_hosts")[0])
    recs = [
        ResultRecord(run_id=1, workload="w", target=".", fio=r, raw_output="", host=n or "all",
                     series={"timing": {"runtime_ms": 1500, "behind_first_ms": 500}} if n == "b" else None)
        for n, r in zip(["a", "b", None], [r for _, r in per_host_results(result)])
    ]
    lines = format_host_lines(recs)
    assert lines[0] == "w:"
    assert lines[1].startswith("  all 2 hosts ") and "33.9k IOPS" in lines[1]  # the aggregate first
    assert lines[2].startswith("  a ") and "17.3k IOPS" in lines[2]
    assert lines[3].endswith("took 1.5 s (+0.5 s after the first)")
    assert len(lines) == 4


def test_hundreds_of_hosts_are_summarised_with_the_slowest_named() -> None:
    one = next(r for _, r in per_host_results(parse_fio_json(recorded("two_hosts")[0])))
    iops = direction_figures(one)["read"]["iops"]
    hosts = [f"10.0.{i // 250}.{i % 250 + 1}:8765" for i in range(300)]
    factors = {h: 1.0 + (i % 7) / 100 for i, h in enumerate(hosts)}
    factors[hosts[17]], factors[hosts[203]] = 0.5, 0.25  # two slow hosts
    recs = [ResultRecord(run_id=1, workload="w", target=".", fio=_scaled(one, factors[h]), raw_output="", host=h) for h in hosts]
    recs.append(ResultRecord(run_id=1, workload="w", target=".", fio=one, raw_output="", host="all",
                             series={"window": {"seconds": 0.0, "iops": 0.0, "bw_bytes": 0.0}}))  # fmt: skip
    lines = format_host_lines(recs, every_host="storbench show 1 --hosts")
    assert lines[0] == "w:"
    assert lines[1].startswith("  all 300 hosts ") and lines[1].endswith("no second had every host running")
    median = statistics.median(iops * f for f in factors.values())
    assert lines[2] == (f"  300 hosts, IOPS each: min {fmt_iops(iops * 0.25)} · median {fmt_iops(median)} · max {fmt_iops(iops * 1.06)} "
                        f"({max(hosts, key=lambda h: (factors[h], hosts.index(h)))}); slowest: {hosts[203]} {fmt_iops(iops * 0.25)}, "
                        f"{hosts[17]} {fmt_iops(iops * 0.5)}, {hosts[0]} {fmt_iops(iops)}")  # fmt: skip
    assert lines[3:] == ["every host: storbench show 1 --hosts"]
    # at or below 16 hosts, a line each, in the order a person counts them (10.0.0.9 before 10.0.0.10)
    few = format_host_lines([r for r in recs if r.host in hosts[:16] or r.host == "all"])
    assert [ln.split()[0] for ln in few[2:]] == hosts[:16] and len(few) == 18


# --------------------------------------------------------------------------- CLI without fio servers


def test_dry_run_prints_each_hosts_job(cli, tmp_path) -> None:
    inv = tmp_path / "hosts.toml"
    inv.write_text('[host.a]\naddress = "127.0.0.1"\nport = 1\ntarget = "/srv/a"\n[host.b]\naddress = "127.0.0.1"\nport = 2\n')
    res = cli("run", "--hosts", str(inv), "--host", "127.0.0.1:3", "--workload", "rnd4k-q1t1-read", "--size", "8m", "--dry-run")
    assert res.code == 0, res.err
    assert "# workload rnd4k-q1t1-read on host a (127.0.0.1:1), directory /srv/a" in res.out
    assert "filename=/srv/a/storbench.testfile" in res.out
    assert res.out.count("filename=./storbench.testfile") == 2
    assert "write_bw_log" not in res.out  # interval logs of hosts on one address would collide


@pytest.mark.parametrize(
    "args, words",
    [
        (("--host", "127.0.0.1:1", "--target", "/a", "--target", "/b"), "at most one --target"),
        (("--host", "127.0.0.1:1", "--destroy-data", "/dev/sdz"), "--destroy-data"),
        (("--host", "127.0.0.1:1", "--host", "127.0.0.1:1"), "given twice"),
        (("--host", "[::1"), "missing ']'"),
        (("--hosts", "/nonexistent/hosts.toml"), "cannot read hosts file"),
        (("--host", "127.0.0.1:1", "--target", "/a;b"), "--target '/a;b'"),
    ],
)
def test_host_option_mistakes_are_one_line(cli, args, words) -> None:
    res = cli("run", "--workload", "rnd4k-q1t1-read", *args)
    assert res.code == 2 and words in res.err and res.err.count("\n") == 1


def test_no_reachable_host_is_one_line(cli) -> None:
    port = free_port()
    res = cli("run", "--host", f"127.0.0.1:{port}", "--workload", "rnd4k-q1t1-read", "--size", "8m", "--runtime", "1")
    assert res.code == 1
    assert f"host 127.0.0.1:{port}: left out: cannot reach 127.0.0.1:{port}: connection refused" in res.err
    assert res.err.strip().splitlines()[-1].startswith("storbench: error: no host can run (1 left out)")


# --------------------------------------------------------------------------- real runs on several fio servers

from test_agent import agents  # noqa: E402,F401  (fixture)

SMALL = ("--workload", "rnd4k-q1t1-read", "--size", "8m", "--runtime", "1", "--no-report")


def _rows(db: Path, sql: str):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@needs_fio
def test_two_agents_at_once_per_host_and_aggregate(cli, tmp_path, agents) -> None:
    a, b = agents("a1"), agents("a2")
    # 3 s: the hosts' per-second logs need whole seconds (a 1 s job logs none, so has no common window)
    res = cli("run", "--host", a.endpoint, "--host", b.endpoint, *SMALL, "--runtime", "3", "--label", "two")
    assert res.code == 0, res.err
    rows = _rows(cli.db, "select host, read_iops, target from results order by id")
    assert [r[0] for r in rows] == [a.endpoint, b.endpoint, "all"]
    assert all(r[2] == "." for r in rows)
    assert rows[0][1] > 100 and rows[1][1] > 100
    # fio's "All clients" figure: every host's I/Os over the longest host's runtime (fio keeps the
    # longest in its sum); their plain sum when the hosts ran equally long, less when one ran longer
    from storbench.store import Store

    with Store.open(f"sqlite:///{cli.db}") as store:
        reads = [r.fio.jobs[0].directions["read"] for r in store.results(1) if r.host != "all"]
    assert rows[2][1] == pytest.approx(1000 * sum(d.total_ios for d in reads) / max(d.runtime_ms for d in reads), rel=0.01)
    assert rows[2][1] <= (rows[0][1] + rows[1][1]) * 1.01
    # each agent's test file went into its own directory, and was removed there afterwards
    assert list(a.directory.iterdir()) == [] and list(b.directory.iterdir()) == []
    assert list(tmp_path.glob("storbench.testfile")) == []
    meta = json.loads(_rows(cli.db, "select meta_json from runs")[0][0])
    facts = [c["facts"] for c in meta["host_checks"]]
    assert all(f["fio_version"].startswith("fio-3") and f["hostname"] and f["os"] == "Linux" for f in facts)
    assert [h["port"] for h in meta["hosts"]] == [a.port, b.port]
    series = json.loads(_rows(cli.db, "select series_json from results order by id")[0][0])
    assert series["timing"]["runtime_ms"] >= 900
    # the aggregate over the seconds both hosts ran, from their Unix-time stamped logs; they started together
    window = json.loads(_rows(cli.db, "select series_json from results where host = 'all'")[0][0])["window"]
    assert {h[0] for h in window["hosts"]} == {a.endpoint, b.endpoint} and window["end_ms"] >= window["start_ms"] and window["iops"] > 0
    stored = json.loads(_rows(cli.db, "select findings_json from results where host = 'all'")[0][0] or "{}")
    # whether the two started together is the machine's to decide: the finding is there exactly when
    # the stored spans are further apart than the rule allows
    from storbench.run.perhost import APART_SHARE, INTERVAL_MS

    spans = window["hosts"]
    allowed = max(INTERVAL_MS, APART_SHARE * max(e - s for _, s, e in spans))
    apart = max(s for _, s, _ in spans) - min(s for _, s, _ in spans) > allowed or max(e for _, _, e in spans) - min(e for _, _, e in spans) > allowed
    assert ("hosts-not-together" in {f["check"] for f in stored.get("findings", [])}) == apart
    assert "all ran together" in res.out  # beside fio's sum in the hosts' lines
    assert f"{a.endpoint}" in res.out and "all 2 hosts" in res.out
    # the glance is the aggregate's (never the mean of the hosts and their sum), said with the host count
    from storbench.render.glance import glance
    from storbench.store import Store
    from storbench.units import fmt_iops

    with Store.open(f"sqlite:///{cli.db}") as store:
        records = store.results(1)
    g = glance(records)
    assert g is not None and g.title.endswith(", 2 hosts") and "all 2 hosts together" in g.note
    (row,) = [r for r in g.rows if r[0] == "RND4K Q1T1"]
    assert fmt_iops(rows[2][1]) in row and fmt_iops((rows[0][1] + rows[2][1]) / 2) not in row
    # the aggregate's p99 is the hosts' merged histogram's (fio's "All clients" block has none)
    from storbench.metrics import direction_figures

    host_p99 = sorted(direction_figures(r.fio)["read"]["clat_p99_ns"] for r in records if r.host != "all")
    aggregate_p99 = direction_figures(records[-1].fio)["read"]["clat_p99_ns"]
    assert aggregate_p99 is not None and host_p99[0] <= aggregate_p99 <= host_p99[1]
    # show names whose each row is: the aggregate and each host
    shown = cli("show", "two").out
    assert "all (2 hosts)" in shown and a.endpoint in shown and b.endpoint in shown
    # compared alone, a multi-host run is its hosts side by side; the aggregate is never ranked against them
    cmp = cli("compare", "two")
    assert cmp.code == 0, cmp.err
    verdict = cmp.out.splitlines()[0]
    assert a.endpoint in verdict and b.endpoint in verdict and "(all)" not in cmp.out, cmp.out


@needs_fio
def test_inventory_labels_and_per_host_targets(cli, tmp_path, agents) -> None:
    a, b = agents("a1"), agents("a2")
    remote = tmp_path / "remote-a"
    remote.mkdir()
    inv = tmp_path / "hosts.toml"
    inv.write_text(
        f'[host.first]\naddress = "127.0.0.1"\nport = {a.port}\ntarget = "{remote}"\nlabel = "alpha"\n'
        f'[host.second]\naddress = "127.0.0.1"\nport = {b.port}\n'
    )
    res = cli("run", "--hosts", str(inv), *SMALL, "--keep-files", "--json")
    assert res.code == 0, res.err
    records = json.loads(res.out)
    assert [r["host"] for r in records] == ["alpha", "second", "all"]
    # one host without a target of its own may share a directory with the other: each file is named for its host
    assert [p.name for p in remote.iterdir()] == ["storbench.testfile.alpha"]
    assert list(a.directory.iterdir()) == []
    assert [p.name for p in b.directory.iterdir()] == ["storbench.testfile.second"]


@needs_fio
def test_unreachable_host_is_left_out_and_the_other_runs(cli, tmp_path, agents) -> None:
    a = agents("a1")
    closed = free_port()
    res = cli("run", "--host", f"127.0.0.1:{closed}", "--host", a.endpoint, *SMALL)
    assert res.code == 0, res.err
    assert f"host 127.0.0.1:{closed}: left out: cannot reach 127.0.0.1:{closed}: connection refused (is 'storbench agent' running there?)" in res.err
    assert [r[0] for r in _rows(cli.db, "select host from results order by id")] == [a.endpoint, "all"]
    meta = json.loads(_rows(cli.db, "select meta_json from runs")[0][0])
    assert [c["problem"] is None for c in meta["host_checks"]] == [False, True]


@needs_fio
def test_storbenchs_own_probe_says_what_fios_client_says(agents, monkeypatch) -> None:
    """The pre-flight's probe over a socket of storbench's own (run/fioprobe.py) against a real fio
    server: the line fio's own client prints for it; a client of another protocol version gets
    nothing (the server closes, as it does for fio's client), which the pre-flight names."""
    from storbench.run import fioprobe, preflight
    from storbench.run.preflight import CONNECT_TIMEOUT_S, check_hosts, parse_probe_line, probe_host

    a = agents("a1")
    host = parse_host(a.endpoint)
    [(why, line)] = fioprobe.ask_all([host], fioprobe.SERVER_VERSIONS["fio-3.33"], CONNECT_TIMEOUT_S, 20)
    theirs = probe_host("fio", host)
    assert why is None and line is not None and parse_probe_line(line) == parse_probe_line(theirs.stdout)
    assert fioprobe.ask_all([host], fioprobe.SERVER_VERSIONS["fio-3.36"], CONNECT_TIMEOUT_S, 20) == [(None, None)]
    # the pre-flight asks itself from NATIVE_PROBE_MIN_HOSTS hosts on: here from one
    monkeypatch.setattr(preflight, "NATIVE_PROBE_MIN_HOSTS", 1)
    (other,) = check_hosts([host], "fio", "fio-3.36")
    assert "no fio probe reply" in other.problem and "a fio version other than fio-3.36" in other.problem
    (same_protocol,) = check_hosts([host], "fio", "fio-3.32")  # 3.32 speaks 3.33's protocol: the reply names the version
    assert same_protocol.facts is not None and "runs fio-3.33 but this client runs fio-3.32" in same_protocol.problem
    (ok,) = check_hosts([host], "fio", "fio-3.33")
    assert ok.ok and ok.facts == parse_probe_line(theirs.stdout)
    closed = parse_host(f"127.0.0.1:{free_port()}")
    assert fioprobe.ask_all([closed, host], 97, CONNECT_TIMEOUT_S, 20) == [("connection refused", None), (None, line)]


@needs_fio
def test_the_probe_asks_a_host_again_whose_first_connection_is_silent(agents) -> None:
    """A fio server's connection handler that polled before the probe arrived answers only a
    second later (server.c); ask_all asks such a host again on a new connection and takes the
    first answer.  Here the first connection is held unanswered for good, the second is relayed
    to a real fio server: its reply is fio's own, well before the probe's timeout."""
    from storbench.run import fioprobe
    from storbench.run.preflight import CONNECT_TIMEOUT_S

    real = parse_host(agents("a1").endpoint)
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def serve() -> None:
        silent, _ = listener.accept()  # read, never answered
        accepted.append(silent)
        second, _ = listener.accept()
        accepted.append(second)
        with socket.create_connection((real.address, real.port), timeout=10) as upstream:
            upstream.sendall(second.recv(65536))
            second.sendall(upstream.recv(65536))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        host = parse_host(f"127.0.0.1:{listener.getsockname()[1]}")
        [(why, line)] = fioprobe.ask_all([host], fioprobe.SERVER_VERSIONS["fio-3.33"], CONNECT_TIMEOUT_S, 20)
        thread.join(10)
        assert why is None and line is not None and "fio=fio-3.33" in line and len(accepted) == 2
    finally:
        listener.close()
        for sock in accepted:
            sock.close()


def test_a_target_the_hosts_cannot_reach_themselves_is_one_line_before_any_host_is_asked(cli, tmp_path) -> None:
    """With --host, a --target path is a directory on the hosts and an s3:// bucket is reached by
    every host itself; a kind whose client or bridge runs here (rbd:, nbd://, iscsi://, ...) is
    refused in one line, as is a per-host directory beside a bucket.  No host is asked first (the
    address here answers nothing)."""
    closed = f"127.0.0.1:{free_port()}"
    for target, kind in (("rbd:bench/img", "an RBD image"), ("nbd://127.0.0.1:10809", "an NBD export")):
        res = cli("run", "--host", closed, "--target", target, "--workload", "rnd4k-q1t1-read")
        assert res.code == 2 and res.err.strip().splitlines() == [
            f"storbench: error: --target {target}: {kind} cannot be driven through --host/--hosts (its client or bridge runs "
            "on this machine); give a directory on the hosts, or an s3:// bucket"], res.err
    inv = tmp_path / "hosts.toml"
    inv.write_text(f'[host.hv1]\naddress = "127.0.0.1"\nport = {closed.rsplit(":", 1)[1]}\ntarget = "/srv/a"\n')
    res = cli("run", "--hosts", str(inv), "--target", "s3://bench?endpoint=http://127.0.0.1:1", "--workload", "put-4k-t1")
    assert res.code == 2 and res.err.strip().splitlines() == [
        "storbench: error: --target s3://bench?endpoint=http://127.0.0.1:1: an S3 bucket is reached by every host itself; "
        "the hosts file gives hv1 a target directory of its own: leave it out"], res.err


@needs_fio
def test_version_mismatch_leaves_hosts_out(cli, tmp_path, agents) -> None:
    a = agents("a1")
    fake = tmp_path / "fio-3.99"
    fake.write_text('#!/bin/sh\nif [ "$1" = "--version" ]; then echo fio-3.99; exit 0; fi\nexec fio "$@"\n')
    fake.chmod(0o755)
    res = cli("run", "--host", a.endpoint, *SMALL, env_extra={"STORBENCH_FIO": str(fake)})
    assert res.code == 1
    assert f"host {a.endpoint}: left out: {a.endpoint} runs fio-3.33 but this client runs fio-3.99" in res.err
    assert "storbench: error: no host can run" in res.err


@needs_fio
@pytest.mark.slow
def test_server_killed_mid_run_is_a_per_host_error_and_the_other_is_stored(cli, tmp_path, agents) -> None:
    a, b = agents("a1"), agents("a2")
    killed = threading.Event()

    def kill_when_running() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if any(b.directory.glob("storbench.testfile*")):  # b's job has started (its file is named for it)
                time.sleep(0.5)
                os.killpg(b.fio_pid, signal.SIGKILL)  # the agent's fio and its job processes
                killed.set()
                return
            time.sleep(0.05)

    watcher = threading.Thread(target=kill_when_running, daemon=True)
    watcher.start()
    started = time.monotonic()
    res = cli("run", "--host", a.endpoint, "--host", b.endpoint, "--workload", "rnd4k-q1t1-read", "--size", "8m", "--runtime", "3", "--no-report")
    watcher.join(timeout=5)
    assert killed.is_set()
    assert time.monotonic() - started < 90
    assert res.code == 1
    assert f"FAILED rnd4k-q1t1-read on .: host {b.endpoint}: no result from this host" in res.err
    assert f"storbench: error: 1 of 1 workload(s) failed; first: workload 'rnd4k-q1t1-read' on {b.endpoint}:." in res.err
    rows = _rows(cli.db, "select host, read_iops from results order by id")
    assert [r[0] for r in rows] == [a.endpoint, "all"] and rows[0][1] > 100
    assert _rows(cli.db, "select status from runs") == [("incomplete",)]
    # the agent whose fio died says so and exits
    assert b.proc.wait(timeout=30) == 1


@needs_fio
def test_ioengine_auto_is_probed_on_every_host(cli, tmp_path, agents) -> None:
    a, b = agents("a1"), agents("a2")
    res = cli("run", "--host", a.endpoint, "--host", b.endpoint, "--workload", "seq-read", "--size", "8m", "--runtime", "1", "--no-report", "--json")
    assert res.code == 0, res.err
    records = json.loads(res.out)
    engines = {r["options"]["ioengine"] for r in records}
    assert len(engines) == 1 and engines <= {"io_uring", "libaio", "posixaio"}
    # the probe files were removed on the hosts (fio's unlink=1), the test files too
    assert list(a.directory.iterdir()) == [] and list(b.directory.iterdir()) == []


def test_hosts_survive_resume_meta() -> None:
    from storbench.run.request import RunRequest
    from storbench.run.runner import Repeat

    wl = builtin_catalog().workload("rnd4k-q1t1-read")
    request = RunRequest(
        workloads=(wl,), target_paths=("/srv/x",), overrides=Overrides(size="8m"), repeat=Repeat(), label=None,
        suite=None, keep_files=False, telemetry=True, destroy=(), hosts=(H1, Host("fd00::1", 9, "/t", "n")),
    )
    again = RunRequest.from_meta(json.loads(json.dumps(request.meta())), None, None)
    assert again.hosts == request.hosts and again.target_paths == ("/srv/x",)
    local = dataclasses.replace(request, hosts=())
    assert "hosts" not in local.meta() and RunRequest.from_meta(local.meta(), None, None).hosts == ()


def test_a_job_that_needs_fios_environment_is_refused_on_hosts_before_fio() -> None:
    """The executor protocol says it: client mode (remote) passes no environment (an RBD job's
    CEPH_CONF); the job is refused in one line, never handed to fio's client."""
    from storbench.errors import TargetError
    from storbench.model import JobSpec, Workload
    from storbench.run import runner

    calls = []

    class Remote:
        remote = True

        def run(self, job_text, on_status, env=None):
            calls.append(env)

    spec = JobSpec(workload=Workload("w", "", (("rw", "read"),)), target=Target(kind="rbd", path="rbd:rbd/img"),
                   job_text="[w]\nrw=read\n", test_files=(), options=(("rw", "read"),), env=(("CEPH_CONF", "/etc/ceph/x.conf"),))  # fmt: skip
    with pytest.raises(TargetError, match=r"^rbd:rbd/img: this target needs fio's environment \(CEPH_CONF\), which fio's client/server mode cannot pass"):
        runner.run_fio(Remote(), spec, lambda status: None)
    assert calls == []


def test_a_plain_list_of_hosts() -> None:
    """``--hosts FILE`` also takes one HOST[:PORT] a line (comments and blank lines allowed), as fio's
    own --client files are written; a mistake names its line."""
    text = "# the rack\n127.0.0.2\n127.0.0.3:8766  # a second server\n\n[fd00::5]:8765\nhv-05.lan\n"
    hosts = parse_inventory(text, "hosts.txt")
    assert [(h.address, h.port) for h in hosts] == [("127.0.0.2", 8765), ("127.0.0.3", 8766), ("fd00::5", 8765), ("hv-05.lan", 8765)]
    assert [h.display for h in hosts][:2] == [hosts[0].display, hosts[1].display] and len({h.display for h in hosts}) == 4
    for bad, words in (("127.0.0.2\nfd00::5\n", "hosts.txt: line 2: 'fd00::5': write an IPv6 address in brackets"),
                       ("h:99999\n", "hosts.txt: line 1: 'h:99999'"), ("# nothing\n\n", "hosts.txt: no hosts")):  # fmt: skip
        with pytest.raises(UsageError) as err:
            parse_inventory(bad, "hosts.txt")
        assert str(err.value).startswith(words) and "\n" not in str(err.value), str(err.value)


def test_a_run_on_many_hosts_is_compared_and_reported_through_its_aggregate() -> None:
    from storbench.compare import comparable, configurations

    one = next(r for _, r in per_host_results(parse_fio_json(recorded("two_hosts")[0])))

    def run(hosts: int) -> list[ResultRecord]:
        recs = [ResultRecord(run_id=1, workload="w", target=".", fio=one, raw_output="", host=f"10.0.0.{i}:8765") for i in range(1, hosts + 1)]
        return [*recs, ResultRecord(run_id=1, workload="w", target=".", fio=one, raw_output="", host="all")]

    # alone, up to 16 hosts side by side (one configuration each); beyond, the aggregate
    assert [r.host for r in comparable(run(16))] == [f"10.0.0.{i}:8765" for i in range(1, 17)]
    assert [r.host for r in comparable(run(17))] == ["all"]
    assert [c.key for c, _ in configurations(run(300), {1: "fleet"})] == ["run1@all"]
