"""Shared test fixtures: an injected Env, a temporary database, a CLI runner."""

from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from storbench.cli import main
from storbench.context import Env

#: property tests judge what a function returns, never how fast: no per-example deadline (200 ms
#: by default) and no "too slow" health check, which a busy machine fails (seen under the CPU hog
#: of the flake study: test_prop_repeat_decision_is_consistent, DeadlineExceeded); a test's own
#: @settings still sets its example count
settings.register_profile("storbench", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("storbench")

TESTS = Path(__file__).parent
DATA = TESTS / "data"

#: the test folders mirror the source packages (tests/run for storbench.run, ...); a test module
#: shares its helpers and fixtures by name with the others (``from test_agent import free_port``),
#: as it did when they all sat in one folder, so every folder is on the path (docs/testing.md)
for _folder in sorted(p for p in TESTS.iterdir() if p.is_dir() and p.name not in ("data", "__pycache__")):
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))

#: every storbench the tests start (in-process or as a child) runs each workload once unless a
#: test says otherwise: the default of 3 (tests/checks/test_findings_once.py checks it) would triple
#: every real fio run of the suite
os.environ["STORBENCH_REPEAT"] = "1"

#: a suite started in the background of a non-interactive shell (``make test &``, a CI runner)
#: inherits SIGINT ignored, and so would every storbench the tests start: Ctrl-C tests would then
#: test nohup's behaviour.  The tests' storbench is one a person runs in a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@dataclass
class CliResult:
    code: int
    out: str
    err: str


class Cli:
    """Runs ``storbench`` in-process with captured streams and a private database."""

    def __init__(self, tmp_path: Path) -> None:
        self.db = tmp_path / "results.sqlite"
        self.cwd = tmp_path

    def __call__(self, *args: str, cwd: Path | None = None, env_extra: dict | None = None) -> CliResult:
        out, err = io.StringIO(), io.StringIO()
        environ = dict(os.environ)
        environ["STORBENCH_DB"] = str(self.db)
        environ.pop("STORBENCH_DEBUG", None)
        for key, value in (env_extra or {}).items():  # None: take the variable away
            if value is None:
                environ.pop(key, None)
            else:
                environ[key] = value
        env = Env(stdout=out, stderr=err, environ=environ, cwd=str(cwd or self.cwd), progress=False)
        code = main(list(args), env=env)
        return CliResult(int(code), out.getvalue(), err.getvalue())


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def stored_results(db: Path, run_id: int):
    """The records a test's run stored (``cli.db``), through the store."""
    from storbench.store.database import Store

    with Store.open(f"sqlite:///{db}") as store:
        return store.results(run_id)


def requests_of(records, workload: str, direction: str) -> int:
    """The I/Os (an S3 target: requests) of ``direction`` fio counted for ``workload`` over
    ``records``, summed over their jobs (no aggregate)."""
    return sum(d.total_ios or 0 for r in records if r.workload == workload for j in r.fio.jobs if not j.is_aggregate
               for n, d in j.directions.items() if n == direction)  # fmt: skip


needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")



@contextlib.contextmanager
def loop_mount(tmp_path: Path, fstype: str = "ext4", size_mib: int = 64, mount_options: str | None = None, mkfs_args: tuple[str, ...] = ()):
    """A real filesystem on a loop device (direct I/O on), mounted; always torn down.

    Yields (mountpoint, loop device path, image path).
    """
    image = tmp_path / f"{fstype}.img"
    mnt = tmp_path / f"mnt-{fstype}"
    mnt.mkdir()
    with open(image, "wb") as fh:
        fh.truncate(size_mib * 1024 * 1024)
    dev = subprocess.run(
        ["losetup", "-f", "--show", "--direct-io=on", str(image)], check=True, capture_output=True, text=True
    ).stdout.strip()
    mounted = False
    try:
        mkfs = {"ext4": ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"], "xfs": ["mkfs.xfs", "-q", "-f"], "btrfs": ["mkfs.btrfs", "-q", "-f"]}[fstype]
        subprocess.run([*mkfs, *mkfs_args, dev], check=True, capture_output=True)
        cmd = ["mount"] + (["-o", mount_options] if mount_options else []) + [dev, str(mnt)]
        subprocess.run(cmd, check=True, capture_output=True)
        mounted = True
        yield mnt, dev, image
    finally:
        if mounted:
            subprocess.run(["umount", str(mnt)], capture_output=True)
        subprocess.run(["losetup", "-d", dev], capture_output=True)


# --------------------------------------------------------------------------- ZFS (zfs-fuse)

needs_zfs_fuse = pytest.mark.skipif(
    shutil.which("zfs-fuse") is None or os.geteuid() != 0, reason="needs root and zfs-fuse (tests/setup-system.sh installs it)"
)


@pytest.fixture(scope="session")
def zfs_daemon():
    """One zfs-fuse daemon for the whole test session (started here, stopped by its PID)."""
    if shutil.which("zfs-fuse") is None or os.geteuid() != 0:
        pytest.skip("needs root and zfs-fuse (tests/setup-system.sh installs it)")
    from zfsfuse import Daemon

    daemon = Daemon()
    daemon.start()
    try:
        yield daemon
    finally:
        daemon.stop()


@pytest.fixture
def zfs(zfs_daemon, tmp_path):
    """The session's zfs-fuse daemon, running (restarted if a test killed it)."""
    zfs_daemon.ensure()
    return zfs_daemon


@pytest.fixture(scope="session")
def serve_history(tmp_path_factory):
    """The store of real runs the serve tests read (tests/serve/test_serve.make_history), made once
    a session, or once for all of ``make test``'s sessions and workers where it names a directory
    they share (``STORBENCH_TEST_SHARED``: the first to need it makes it, under a lock, the others
    wait for it); each module takes a copy (test_serve.history)."""
    from test_serve import make_history

    shared = os.environ.get("STORBENCH_TEST_SHARED")
    if not shared:
        return make_history(tmp_path_factory.mktemp("serve-history"))
    return made_once(Path(shared) / "serve-history", lambda root: make_history(root).name)


def made_once(where: Path, make) -> Path:
    """``where / make(where)``, made by the first process that asks (``make`` given the directory,
    returning the name of what it made there, kept in ``where/.made``), the others waiting on a
    lock beside it; made again if a process died making it."""
    import fcntl

    where.parent.mkdir(parents=True, exist_ok=True)
    with open(where.parent / f".{where.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = where / ".made"
        if not done.exists():
            shutil.rmtree(where, ignore_errors=True)
            where.mkdir()
            name = make(where)
            done.write_text(name)
        return where / done.read_text()


@pytest.fixture(scope="session")
def report_runs(tmp_path_factory):
    """Three real runs (test_report.make_runs), made once for the report and browser tests."""
    from test_report import make_runs

    return make_runs(tmp_path_factory.mktemp("report-runs"))


# --------------------------------------------------------------------------- tiers (docs/testing.md)

#: modules whose every test needs a real server or daemon the session starts (ZFS, Ceph, GlusterFS,
#: SMB, sshfs, NBD, iperf3, fio servers, PostgreSQL)
BACKEND_MODULES = frozenset({
    "test_agent", "test_ceph", "test_gluster", "test_iscsi", "test_multihost", "test_nfs", "test_nbd", "test_net", "test_share_faults",
    "test_share_study", "test_store_postgres", "test_zfs", "test_zfs_study", "test_protocol_faults", "test_seed003", "test_s3",
    "test_s3_swift",
})
BACKEND_FIXTURES = frozenset({"pg_server", "pg_url", "zfs_daemon", "zfs", "ceph", "rgw", "swift", "iperf3_server", "agents", "netns"})
BROWSER_MODULES = frozenset({"test_report_browser"})
BROWSER_FIXTURES = frozenset({"browser"})
#: fixtures whose fio runs must have the machine to themselves: fio's rate_iops caps (2000 vs 500
#: IOPS, the regression gate's deterministic difference) are not held beside another test's fio
SERIAL_FIXTURES = frozenset({"rates"})
#: fixtures that attach loop devices, mount filesystems or switch users: root only
ROOT_FIXTURES = frozenset({"ext4_loop", "loop_fs", "loop_image", "loop_kname", "btrfs_zstd_loop", "devices", "nobody_home",
                           "no_loop_left_behind"})  # fmt: skip


def pytest_collection_modifyitems(config, items):
    """Mark every test with its tier: ``backend`` (a real server), ``browser`` (Chromium), ``root``
    (loop devices, mounts, other users); the rest, but ``slow`` (several seconds of fio, marked
    where the test is), is ``make check``'s fast tier."""
    import inspect

    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1] if item.module else ""
        names = set(getattr(item, "fixturenames", ()))
        try:
            source = inspect.getsource(item.function)
        except (OSError, TypeError):
            source = ""
        if module in BACKEND_MODULES or names & BACKEND_FIXTURES or "Nbdkit(" in source:  # nbdkit: a real NBD server
            item.add_marker(pytest.mark.backend)
        if module in BROWSER_MODULES or names & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        if names & SERIAL_FIXTURES:
            item.add_marker(pytest.mark.serial)
        needs_root_mark = any("root" in str(m.kwargs.get("reason", "")) for m in item.iter_markers("skipif"))
        if needs_root_mark or names & ROOT_FIXTURES or "loop_mount(" in source:
            item.add_marker(pytest.mark.root)
        if shared_groups().get(_project_path(item)) in ALONE_GROUPS:
            item.add_marker(pytest.mark.daemons)
    _heavy_first(config, items)


def _project_path(item) -> str:
    try:
        return str(Path(str(item.fspath)).relative_to(TESTS.parent))
    except ValueError:
        return ""


# --------------------------------------------------------------------------- the servers' session on two workers

#: what a test module may share with one that runs at the same moment on the other worker: a daemon
#: one per machine (zfs-fuse; glusterd's /var/run/glusterd.socket; rpcbind's /run/rpcbind.sock under
#: nfs-ganesha; sshd's /run/sshd; tgtd; smbd), a server or
#: data made once per session or module (PostgreSQL, the Ceph cluster, the serve and report
#: histories). Each is found by the words that start it in the module, or by a fixture's name among
#: the parameters of the module's functions.
SHARED_BY_SOURCE = {"Sshfs(": "sshd", "Samba(": "smbd", "Gluster(": "glusterd", "Tgt(": "tgtd", "Ganesha(": "rpcbind",
                    "Cluster(": "ceph", "zfsfuse": "zfs", "from test_serve import": "serve-history"}  # fmt: skip
SHARED_BY_FIXTURE = {"zfs": "zfs", "zfs_daemon": "zfs", "pg_server": "postgresql", "pg_url": "postgresql", "ceph": "ceph",
                     "serve_history": "serve-history", "report_runs": "report-runs"}  # fmt: skip
_PARAMETERS = re.compile(r"^\s*def \w+\(([^)]*)\)", re.M)


@functools.cache
def shared_groups() -> dict[str, str]:
    """Each test module's group (its path relative to the project -> a name): the connected parts
    of the graph of modules and what they share (a union-find), so that a module's tests (its
    module-scoped servers) and every module of one machine-wide daemon run on one worker."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    modules = sorted(TESTS.rglob("test_*.py"))
    for path in modules:
        source = path.read_text(encoding="utf-8")
        module = f"module:{path.stem}"
        find(module)
        shared = {what for words, what in SHARED_BY_SOURCE.items() if words in source}
        for params in _PARAMETERS.findall(source):
            shared |= {SHARED_BY_FIXTURE[p] for p in re.findall(r"\w+", params) if p in SHARED_BY_FIXTURE}
        for what in shared:
            parent[find(module)] = find(f"shared:{what}")
    # a group is named by what its modules share ("rpcbind+tgtd"), else by its module
    names: dict[str, set[str]] = {}
    for node in list(parent):
        if node.startswith("shared:"):
            names.setdefault(find(node), set()).add(node.split(":", 1)[1])
    root = TESTS.parent
    return {str(path.relative_to(root)): "+".join(sorted(names.get(find(f"module:{path.stem}"), ()))) or path.stem
            for path in modules}  # fmt: skip


def pytest_xdist_make_scheduler(config, log):
    """``make test``'s servers session (``-n $(SERVER_JOBS) --dist loadgroup``): each test module goes to a worker
    with the modules it shares something with (:func:`shared_groups`), each group whole, so that every
    server starts once while modules that share nothing run beside each other. (pytest-xdist's own
    ``xdist_group`` marks cannot do it with pytest 9.2, whose node ids are no longer the attribute
    pytest-xdist appends the group to.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    groups = shared_groups()

    def scope(nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        return groups.get(path, path)

    class SharedScheduling(LoadScopeScheduling):
        """Scopes in collection order, which the workers' collection put the longest groups first
        (:func:`_heavy_first`): the controller must never reorder its copy of a worker's collection,
        as the indexes it sends are read against the worker's own (a reordered copy once sent the
        Ceph modules to both workers at once, two clusters on one port)."""

        def _split_scope(self, nodeid: str) -> str:
            return scope(nodeid)

        def schedule(self) -> None:
            config.option.loadscopereorder = False
            super().schedule()

    return SharedScheduling(config, log)


def _heavy_first(config, items) -> None:
    """The servers' session (``--dist loadgroup``): the longest groups' tests first, each group in
    its collection order, sorted where the collection is made (each worker the same way; xdist
    tells its workers ``option.loadgroup``, their ``dist`` being "no")."""
    if not getattr(config.option, "loadgroup", False) and config.getvalue("dist") != "loadgroup":
        return
    groups = shared_groups()

    def first(item) -> int:
        name = groups.get(_project_path(item), "")
        return HEAVY_GROUPS.index(name) if name in HEAVY_GROUPS else len(HEAVY_GROUPS)

    items[:] = sorted(items, key=first)


#: the groups that do not bear another worker beside them: ``daemons``-marked, run in a session of
#: their own, one test at a time (none now: the ZFS studies share their share daemons with the NFS,
#: iSCSI, SMB and sshfs modules and run on one worker with them, beside the other; seed 002, whose
#: dbench in a guest ext4 over zfs-fuse deadlocked once beside a busy worker, is ``serial``)
ALONE_GROUPS: frozenset[str] = frozenset()

#: the groups that take longest (docs/testing.md's durations), started first so that the two
#: workers end together: the ZFS studies with the share daemons they start (zfs-fuse, rpcbind
#: under nfs-ganesha, tgtd, smbd, sshd), the Ceph cluster, serve's history and PostgreSQL, the
#: many-hosts runs
HEAVY_GROUPS = ("rpcbind+smbd+sshd+tgtd+zfs", "ceph", "postgresql+serve-history", "test_many_hosts", "test_multihost", "glusterd")
