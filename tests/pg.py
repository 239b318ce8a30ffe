"""A real PostgreSQL server for the test session (fixtures imported by the tests that need it).

``pg_server`` (session scope) runs Debian's PostgreSQL binaries: ``initdb`` into a
fresh temporary directory owned by the ``postgres`` user (PostgreSQL refuses to run
as root), ``pg_ctl start`` on a free local TCP port with its socket in that
directory, and at the end ``pg_ctl stop -m fast`` and removal of the directory.
``pg_url`` gives each test its own new database:
``postgresql+psycopg://postgres@127.0.0.1:PORT/sb_N``.

Skipped only when the PostgreSQL binaries are missing; any other failure to
start the server is an error, with the server log in the message.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PG_BIN_DIRS = ("/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin")


def find_pg_bin() -> Path | None:
    """The directory holding initdb, pg_ctl and postgres, or None."""
    candidates = [Path(d) for d in PG_BIN_DIRS]
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    for d in candidates:
        if all((d / b).is_file() and os.access(d / b, os.X_OK) for b in ("initdb", "pg_ctl", "postgres")):
            return d
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PgServer:
    bin_dir: Path
    root: Path  # temporary directory: data/, socket, log
    port: int
    as_user: str | None  # run the binaries as this user (None: as ourselves)
    _counter = itertools.count(1)

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def log_file(self) -> Path:
        return self.root / "server.log"

    def cmd(self, *argv: str) -> list[str]:
        return (["runuser", "-u", self.as_user, "--"] if self.as_user else []) + list(argv)

    def run(self, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(self.cmd(*argv), capture_output=True, text=True, timeout=timeout)

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def admin_dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"

    def create_database(self) -> str:
        """A new empty database; returns its SQLAlchemy URL."""
        import psycopg

        name = f"sb_{os.getpid()}_{next(self._counter)}"
        with psycopg.connect(self.admin_dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def log(self) -> str:
        try:
            return self.log_file.read_text(errors="replace")[-2000:]
        except OSError:
            return "(no server log)"


def start_server(bin_dir: Path) -> PgServer:
    as_user = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.fail("running as root, but there is no 'postgres' user to run PostgreSQL as")
        as_user = "postgres"
    root = Path(tempfile.mkdtemp(prefix="storbench-pg-"))
    if as_user:
        entry = pwd.getpwnam(as_user)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    server = PgServer(bin_dir=bin_dir, root=root, port=_free_port(), as_user=as_user)
    init = server.run(
        str(bin_dir / "initdb"), "-D", str(server.data_dir), "-U", "postgres", "-A", "trust",
        "-E", "UTF8", "--no-sync", "--locale=C",
    )
    if init.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"initdb failed: {init.stderr.strip() or init.stdout.strip()}")
    opts = f"-p {server.port} -k {root} -c listen_addresses=127.0.0.1"
    start = server.run(
        str(bin_dir / "pg_ctl"), "-D", str(server.data_dir), "-l", str(server.log_file), "-w", "-t", "60",
        "-o", opts, "start",
    )
    if start.returncode != 0:
        log = server.log()
        stop_server(server)
        pytest.fail(f"pg_ctl start failed: {start.stderr.strip() or start.stdout.strip()}\n{log}")
    return server


def stop_server(server: PgServer) -> None:
    if (server.data_dir / "postmaster.pid").exists():
        server.run(str(server.bin_dir / "pg_ctl"), "-D", str(server.data_dir), "-m", "fast", "-w", "stop", timeout=60)
    shutil.rmtree(server.root, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    bin_dir = find_pg_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl, postgres) are not installed; apt-get install postgresql")
    try:
        import psycopg  # noqa: F401
    except ImportError:  # pragma: no cover - a dev dependency
        pytest.fail("psycopg is not installed in the venv (pip install 'psycopg[binary]')")
    server = start_server(bin_dir)
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """A fresh, empty database on the session's server."""
    return pg_server.create_database()
