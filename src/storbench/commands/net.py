"""``storbench net``: measure the network's ceiling with iperf3 and store it.

``storbench net SERVER`` runs iperf3 against an iperf3 server: one stream each way,
then ``--parallel N`` streams each way (``iperf3 -c SERVER -p P -J -t S [-P N] [-R]``,
argument lists, never a shell), prints each rate and stores every measurement
(table ``net_ceilings``).  ``storbench run`` on a network share of SERVER then
compares its throughput with the ceiling (check ``share-ceiling``): use the same
server name as the share's mount source (``SERVER:/export``, ``//SERVER/share``).

``storbench net --serve`` runs ``iperf3 -s`` in the foreground until Ctrl-C/SIGTERM.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time

import click

from ..errors import StorbenchError, UsageError
from ..net import (
    DEFAULT_IPERF3_PORT,
    NetError,
    format_measurements,
    iperf3_argv,
    parse_iperf3_json,
    plan_measurements,
)
from ..process import proc as processes
from ..run.inventory import parse_address
from .common import App, pass_app, print_json

#: how long a refused (or reset) connection is retried after the first measurement: the server's gap
#: between tests, which a busy server stretches (seen: a reset of the control connection under load)
REFUSED_RETRY_S = 10.0
#: what iperf3 says when its server is between tests or still busy with the last one
BETWEEN_TESTS = ("Connection refused", "Connection reset by peer", "the server is busy running a test")
#: extra seconds iperf3 may take beyond --time (connecting, the end exchange)
IPERF3_GRACE_S = 30


def _iperf3(app: App) -> str:
    name = app.env.environ.get("STORBENCH_IPERF3", "iperf3")
    path = shutil.which(name)
    if path is None:
        raise StorbenchError(f"iperf3 not found ({name!r} is not on PATH); install it with 'apt-get install iperf3'")
    return path


@click.command()
@click.argument("server", required=False)
@click.option("--port", type=click.IntRange(1, 65535), default=DEFAULT_IPERF3_PORT, show_default=True, help="iperf3 server port.")
@click.option("--parallel", type=click.IntRange(1, 128), default=4, show_default=True, help="Also measure with N parallel streams (1: single stream only).")
@click.option("--time", "seconds", type=click.IntRange(1, 3600), default=5, show_default=True, help="Seconds per iperf3 run.")
@click.option("--serve", is_flag=True, help="Run an iperf3 server here (foreground, until Ctrl-C) instead of measuring.")
@click.option("--bind", metavar="ADDR", help="With --serve: listen only on this address (default: every interface, as iperf3 does).")
@click.option("--json", "as_json", is_flag=True, help="Print the measurements as JSON.")
@pass_app
def net(app: App, server: str | None, port: int, parallel: int, seconds: int, serve: bool, bind: str | None, as_json: bool) -> None:
    """Measure the network's ceiling to SERVER with iperf3 and store it (for network shares)."""
    iperf3 = _iperf3(app)
    if serve:
        if server is not None:
            raise UsageError("give either SERVER (measure) or --serve (run a server), not both")
        _serve(app, iperf3, port, bind)
        return
    if server is None:
        raise UsageError("give the iperf3 SERVER to measure against (or --serve to run one here)")
    if bind is not None:
        raise UsageError("--bind is for --serve")
    address = parse_address(server, "SERVER")
    measurements, raws = [], []
    for index, (streams, reverse) in enumerate(plan_measurements(parallel)):
        argv = iperf3_argv(address, port, seconds, streams, reverse, iperf3=iperf3)
        # an iperf3 server refuses (or resets) connections for a moment after each test it served:
        # after the first measurement, that is retried for up to REFUSED_RETRY_S
        retry_until = time.monotonic() + (REFUSED_RETRY_S if index else 0.0)
        while True:
            try:
                proc = processes.run(argv, timeout_s=seconds + IPERF3_GRACE_S, c_locale=False)
            except subprocess.TimeoutExpired:
                raise NetError(f"iperf3 to {server}:{port} did not finish within {seconds + IPERF3_GRACE_S} s") from None
            try:
                measured = parse_iperf3_json(proc.stdout, server=address, port=port)
                measurements.append(measured)
                raws.append(proc.stdout)
                break
            except NetError as exc:
                said = f"{exc} {proc.stderr}"
                if any(words in said for words in BETWEEN_TESTS) and time.monotonic() < retry_until:
                    time.sleep(0.2)
                    continue
                if proc.stderr.strip() and "printed nothing" in str(exc):
                    raise NetError(f"iperf3: {proc.stderr.strip().splitlines()[0]}") from None
                raise NetError(f"{exc} (server {server}:{port}; is 'iperf3 -s' or 'storbench net --serve' running there?)") from None
        if not as_json:
            app.err(f"  {measured.direction} with {measured.streams} stream(s): done")
    with contextlib.closing(app.open_store()) as store:
        created_at = app.env.clock()
        for m, raw in zip(measurements, raws):
            store.add_net_ceiling(address, m.streams, m.direction, m.bits_per_second, raw, created_at=created_at)
    if as_json:
        print_json(app, [
            {"server": m.server, "port": m.port, "streams": m.streams, "direction": m.direction,
             "bits_per_second": m.bits_per_second, "retransmits": m.retransmits, "iperf3_version": m.iperf3_version}
            for m in measurements
        ])
        return
    app.out(f"network to {server} (port {port}, {seconds} s per run):")
    for line in format_measurements(measurements):
        app.out(f"  {line}")
    app.out(f"stored in {app.db_url}; runs on a share of {address} are checked against it")


def _serve(app: App, iperf3: str, port: int, bind: str | None) -> None:
    from .agent import say, serve_until_stopped

    argv = [iperf3, "-s", "-p", str(port), "--forceflush"]
    address = None
    if bind is not None:
        address = parse_address(bind, "--bind")
        argv += ["-B", address]

    def ready(proc, seen: list[str]) -> bool:
        # not a test connection: iperf3 -s takes a bare connect as a client and logs an error
        return any(line.startswith("Server listening on") for line in seen)

    def on_ready(proc) -> None:
        where = f"{address}:{port}" if address else f"every interface, port {port}"
        say(app.env.stdout, f"iperf3 server listening on {where} (pid {proc.pid}); measure with: storbench net THIS-HOST --port {port}")
        say(app.env.stdout, "stop with Ctrl-C or SIGTERM")

    serve_until_stopped(app, argv, cwd=None, ready=ready, on_ready=on_ready, what="iperf3 server")
