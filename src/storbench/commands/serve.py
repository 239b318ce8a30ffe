"""``storbench serve``: the history in the browser (read only), with runs in progress live."""

from __future__ import annotations

import ipaddress
import os
import socket

import click

from ..errors import UsageError
from .common import App, pass_app

#: addresses that reach only this machine: no token needed
LOOPBACK_NAMES = ("127.0.0.1", "::1", "localhost")


def needs_token(bind: str) -> bool:
    """Binding anything but this machine's own loopback address needs a token."""
    return bind not in LOOPBACK_NAMES


def _check_bind(bind: str, port: int) -> None:
    try:
        ipaddress.ip_address(bind)
    except ValueError:
        if bind != "localhost":
            raise UsageError(f"--bind {bind!r} is not an IP address (give one, such as 127.0.0.1 or 0.0.0.0)") from None
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((bind if bind != "localhost" else "127.0.0.1", port))
        except OSError as exc:
            raise UsageError(f"cannot listen on {bind}:{port}: {exc.strerror or exc} (another server on that port? give --port)") from None


@click.command()
@click.option("--db", "db", metavar="URL", help="The results database to show (default: storbench's, as for every command).")
@click.option("--port", type=click.IntRange(1, 65535), default=8080, show_default=True, help="TCP port to listen on.")
@click.option("--bind", default="127.0.0.1", show_default=True, help="Address to listen on; any other than 127.0.0.1, ::1 or localhost needs --token.")
@click.option("--token", envvar="STORBENCH_TOKEN", metavar="TEXT", help="Every request must carry it (?token=... once in the browser, or Authorization: Bearer ...); also from $STORBENCH_TOKEN.")
@click.option("--allow-host", "allow_hosts", metavar="NAME", multiple=True, help="Also answer requests for this host name (a reverse proxy's; repeatable). Others get 421: the defence against DNS rebinding.")
@click.option("--allow-run", "allow_run", metavar="DIR|FILE", multiple=True, help="Let the page start runs of the built-in suites on this directory or file (repeatable; needs --token). Nothing else can be named from the browser.")
@click.option("--allow-run-destroy", "allow_run_destroy", metavar="DEVICE|PATH", multiple=True, help="As --allow-run, for a block device or anything whose data a run may destroy (its --destroy-data).")
@pass_app
def serve(app: App, db, port, bind, token, allow_hosts, allow_run, allow_run_destroy):
    """Browse the stored history in a web browser: runs, run pages, compare, trend, curves, live runs.

    Read only unless --allow-run names targets: then a person with the token can start, queue and
    cancel runs of the built-in suites on them from the page (docs/serve.md).  Every script and
    style is served by storbench itself (works offline).  Ctrl-C stops it (and any run it started).
    """
    if needs_token(bind) and not token:
        raise UsageError(f"--bind {bind} makes the results reachable from other machines: give --token TEXT (or set STORBENCH_TOKEN)")
    allowed = _allowed_targets(app, allow_run, allow_run_destroy)
    if allowed and not token:
        raise UsageError("--allow-run lets the page start runs: give --token TEXT too (never without one)")
    if token is not None and (len(token) < 8 or any(c.isspace() for c in token)):
        raise UsageError("--token must be at least 8 characters without spaces")
    if db:
        app = App(env=app.env, db_option=db)
    url = app.db_url
    if url.startswith("sqlite:///") and not os.path.exists(url.removeprefix("sqlite:///")):
        raise UsageError(f"no results database at {url.removeprefix('sqlite:///')} yet (storbench run creates it; or give --db)")
    _check_bind(bind, port)
    import uvicorn

    from ..serve.app import create_app

    store = app.open_store()
    launcher = None
    try:
        from ..serve.guard import WILDCARDS, allowed_hosts

        own = _own_names() if bind in WILDCARDS else ()
        hosts = allowed_hosts(bind, allow_hosts, own)
        if allowed:
            from ..serve.launch import Launcher

            launcher = Launcher(allowed, url, environ=app.env.environ)
        asgi = create_app(store, token=token, hosts=hosts, launcher=launcher)
        host = f"[{bind}]" if ":" in bind else bind
        mode = "read only" if launcher is None else f"runs start at /start on {', '.join(a.path for a in allowed)}"
        app.err(f"storbench serve: http://{host}:{port}/ showing {store.display} ({mode}); Ctrl-C stops it")
        if bind in WILDCARDS:
            app.err(f"storbench serve: answers to {', '.join(sorted(hosts))} (others: 421; more with --allow-host NAME)")
        config = uvicorn.Config(asgi, host=bind, port=port, log_level="warning", access_log=False, lifespan="off",
                                server_header=False, timeout_graceful_shutdown=2)  # fmt: skip
        uvicorn.Server(config).run()
    finally:
        if launcher is not None:  # a run it started ends as Ctrl-C ends it, before serve does
            launcher.close()
        store.close()


def _allowed_targets(app: App, allow_run, allow_run_destroy):
    """``--allow-run`` directories and files (a device only with ``--allow-run-destroy``), each an
    existing absolute path; one line for one that is not."""
    import stat

    from ..serve.launch import Allowed

    out: list[Allowed] = []
    for path, destroy in [*((p, False) for p in allow_run), *((p, True) for p in allow_run_destroy)]:
        full = os.path.abspath(os.path.join(app.env.cwd, path))
        try:
            mode = os.stat(full).st_mode
        except OSError as exc:
            raise UsageError(f"--allow-run {path}: {exc.strerror or exc}") from None
        if stat.S_ISBLK(mode) and not destroy:
            raise UsageError(f"--allow-run {path} is a block device: a run writes it, destroying its data; name it with --allow-run-destroy")
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISBLK(mode)):
            raise UsageError(f"--allow-run {path} is not a directory, a regular file or a block device")
        if any(a.path == full for a in out):
            raise UsageError(f"--allow-run {path} is named twice")
        out.append(Allowed(full, destroy))
    return tuple(out)


def _own_names() -> tuple[str, ...]:
    """This machine's addresses (its network namespace's: ``/proc/net``) and host name, for a
    wildcard bind's Host allow-list; what cannot be read is left out."""
    import socket

    from ..serve.guard import local_addresses

    def read(path: str) -> str:
        try:
            with open(path, encoding="ascii", errors="replace") as fh:
                return fh.read()
        except OSError:
            return ""

    name = socket.gethostname()
    return (*local_addresses(read("/proc/net/fib_trie"), read("/proc/net/if_inet6")), name, name.split(".", 1)[0])
