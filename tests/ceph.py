"""A one-node Ceph cluster for the tests: one mon, one mgr, one BlueStore OSD on a 2 GiB file.

Everything lives under the work directory (``ceph.conf``, keyrings, the mon's and the OSD's
data, logs, admin sockets); nothing is written to /etc/ceph.  The daemons run in the
foreground as children of the test process (``-f``), bound to 127.0.0.1, and are stopped by
their PIDs.  Bring-up takes about 20 s here; see ../shared/BACKENDS.md and
../shared/backends/ceph.sh for the recipe this follows.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import uuid
from pathlib import Path

from servers import stop_pid

PORT_V2 = 3300
PORT_V1 = 6789


class Cluster:
    """``with Cluster(workdir) as c``: a healthy cluster with the pool ``rbd`` (size 1, 8 PGs,
    application rbd) holding the empty 256 MiB image ``rbd/img1``, and the empty pool ``bench``
    (size 1, 8 PGs, application rados) for RADOS targets."""

    POOL = "rbd"
    IMAGE = "img1"
    OBJECT_POOL = "bench"

    def __init__(self, workdir: Path, *, image_size: str = "256M") -> None:
        self.dir = workdir
        self.conf = workdir / "ceph.conf"
        self.image_size = image_size
        self.procs: dict[str, subprocess.Popen] = {}
        self.fsid = str(uuid.uuid4())

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "CEPH_CONF": str(self.conf)}

    def cli(self, *args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        """``ceph``/``rbd``/``rados`` ... with this cluster's configuration."""
        return subprocess.run([args[0], "--conf", str(self.conf), *args[1:]], capture_output=True, text=True,
                              check=check, timeout=timeout)  # fmt: skip

    def _write_conf(self) -> None:
        c = self.dir
        self.conf.write_text(
            f"""[global]
fsid = {self.fsid}
mon initial members = a
mon host = [v2:127.0.0.1:{PORT_V2},v1:127.0.0.1:{PORT_V1}]
public network = 127.0.0.0/8
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
auth allow insecure global id reclaim = false
osd pool default size = 1
osd pool default min size = 1
osd crush chooseleaf type = 0
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon data avail warn = 5
run dir = {c}/run
admin socket = {c}/run/$name.asok
pid file = {c}/run/$name.pid
log file = {c}/log/$name.log
mon cluster log file = {c}/log/$cluster.$channel.log
crash dir = {c}/crash
keyring = {c}/keyring
mon data = {c}/mon/$cluster-$id
mgr data = {c}/mgr/$cluster-$id
osd data = {c}/osd/$cluster-$id
[mgr]
keyring = $mgr_data/keyring
[osd]
keyring = $osd_data/keyring
osd objectstore = bluestore
bluestore block create = true
bluestore block size = 2147483648
osd memory target = 939524096
osd client watch timeout = 5
"""
        )

    def _start(self, name: str, argv: list[str]) -> None:
        log = open(self.dir / "log" / f"{name}.stdout", "wb")
        self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        log.close()

    def _wait(self, what: str, ok, timeout_s: float = 90.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not ok():
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"ceph-{name} exited ({proc.returncode}) while waiting for {what}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the test Ceph cluster: no {what} after {timeout_s:g} s")
            time.sleep(0.5)

    def __enter__(self) -> Cluster:
        c = self.dir
        for sub in ("run", "log", "mon", "mgr/ceph-x", "osd/ceph-0", "crash"):
            (c / sub).mkdir(parents=True, exist_ok=True)
        self._write_conf()
        try:
            run = lambda *a: subprocess.run(list(a), check=True, capture_output=True, env=self.env, timeout=60)  # noqa: E731
            run("monmaptool", "--create", "--fsid", self.fsid, "--addv", "a", f"[v2:127.0.0.1:{PORT_V2},v1:127.0.0.1:{PORT_V1}]", str(c / "monmap"))
            run("ceph-authtool", "--create-keyring", str(c / "keyring"), "--gen-key", "-n", "mon.", "--cap", "mon", "allow *")
            run("ceph-authtool", str(c / "keyring"), "--gen-key", "-n", "client.admin", "--cap", "mon", "allow *",
                "--cap", "osd", "allow *", "--cap", "mgr", "allow *", "--cap", "mds", "allow *")  # fmt: skip
            run("ceph-mon", "--conf", str(self.conf), "--mkfs", "-i", "a", "--monmap", str(c / "monmap"), "--keyring", str(c / "keyring"))
            self._start("mon", ["ceph-mon", "--conf", str(self.conf), "-f", "-i", "a"])
            self._wait("monitor", lambda: self.cli("ceph", "mon", "stat", check=False, timeout=10).returncode == 0)
            self._start("mgr", ["ceph-mgr", "--conf", str(self.conf), "-f", "-i", "x"])
            osd_uuid = str(uuid.uuid4())
            self.osd_id = self.cli("ceph", "osd", "new", osd_uuid).stdout.strip()
            run("ceph-osd", "--conf", str(self.conf), "-i", self.osd_id, "--mkfs", "--osd-uuid", osd_uuid)
            self._start_osd()
            self.cli("ceph", "osd", "pool", "create", self.POOL, "8", "8")
            self.cli("ceph", "osd", "pool", "set", self.POOL, "size", "1", "--yes-i-really-mean-it")
            self.cli("rbd", "pool", "init", self.POOL)
            self.cli("rbd", "create", "--size", self.image_size, f"{self.POOL}/{self.IMAGE}")
            self.cli("ceph", "osd", "pool", "create", self.OBJECT_POOL, "8", "8")
            self.cli("ceph", "osd", "pool", "set", self.OBJECT_POOL, "size", "1", "--yes-i-really-mean-it")
            self.cli("ceph", "osd", "pool", "application", "enable", self.OBJECT_POOL, "rados")
            self._wait("HEALTH_OK with every PG active+clean", self._healthy)
        except BaseException:
            self.__exit__()
            raise
        return self

    def _healthy(self) -> bool:
        status = json.loads(self.cli("ceph", "status", "-f", "json").stdout)
        pgs = status.get("pgmap", {}).get("pgs_by_state", [])
        return status.get("health", {}).get("status") == "HEALTH_OK" and all(p.get("state_name") == "active+clean" for p in pgs)

    def _start_osd(self) -> None:
        self._start("osd", ["ceph-osd", "--conf", str(self.conf), "-f", "-i", self.osd_id])
        self._wait("OSD up", lambda: json.loads(self.cli("ceph", "osd", "stat", "-f", "json").stdout).get("num_up_osds") == 1)

    def kill_osd(self) -> None:
        """SIGKILL the OSD (the monitor goes on calling it up: no other OSD reports it)."""
        proc = self.procs.get("osd")
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def ensure(self) -> None:
        """The OSD running again (after :meth:`kill_osd`), every PG active+clean and no watch
        left on the image (a client that died holding one keeps it until the OSD times it out,
        30 s by default; storbench would rightly refuse to write an image in use)."""
        proc = self.procs.get("osd")
        if proc is None or proc.poll() is not None:
            self._start_osd()
        self._wait("HEALTH_OK with every PG active+clean", self._healthy)
        self._wait("no watcher on the image", self._unwatched)

    def _unwatched(self) -> bool:
        status = self.cli("rbd", "status", "--format", "json", f"{self.POOL}/{self.IMAGE}").stdout
        return not json.loads(status).get("watchers")

    def fresh_image(self) -> None:
        """The image made anew, never written (a test that reads an unwritten image may follow
        one that wrote it, or itself in a repeated run)."""
        self.ensure()
        self.cli("rbd", "rm", "--no-progress", f"{self.POOL}/{self.IMAGE}")
        self.cli("rbd", "create", "--size", self.image_size, f"{self.POOL}/{self.IMAGE}")

    def __exit__(self, *exc: object) -> None:
        for name in ("osd", "mgr", "mon"):
            proc = self.procs.pop(name, None)
            if proc is not None and proc.poll() is None:
                stop_pid(proc.pid, timeout_s=15)
                proc.wait()
        shutil.rmtree(self.dir / "osd", ignore_errors=True)  # the 2 GiB BlueStore file


class Gateway:
    """``with Gateway(cluster) as gw``: Ceph's S3 gateway, radosgw (beast frontend on 127.0.0.1 at a
    free port), on the cluster, with the S3 user ``bench`` (fixed keys) and the usage log on; run in
    the foreground as a child of the test process, stopped by its PID.  ``nodelay=False`` leaves
    out ``tcp_nodelay=1`` (every small GET then waits ~40 ms: Nagle and delayed ACKs).  About 8 s
    here (radosgw makes its six pools on its first start).  Recipe: ../shared/backends/rgw.sh."""

    NAME = "client.rgw.a"
    KEY, SECRET = "benchkey", "benchsecret"

    def __init__(self, cluster: Cluster, *, nodelay: bool = True) -> None:
        from servers import free_port

        self.cluster, self.nodelay = cluster, nodelay
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        """The environment of a storbench that uses this gateway: its keys, nothing of the user's AWS files."""
        return {**os.environ, "AWS_ACCESS_KEY_ID": self.KEY, "AWS_SECRET_ACCESS_KEY": self.SECRET,
                "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull}  # fmt: skip

    @property
    def asok(self) -> Path:
        return self.cluster.dir / "run" / f"{self.NAME}.asok"

    def s3(self):
        import boto3
        from botocore.config import Config

        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1", aws_access_key_id=self.KEY,
                            aws_secret_access_key=self.SECRET, config=Config(s3={"addressing_style": "path"}))  # fmt: skip

    def counters(self) -> dict[str, int]:
        """radosgw's own request counters (``perf dump``, section ``rgw``): req, failed_req, get, put, ..."""
        out = subprocess.run(["ceph", "--admin-daemon", str(self.asok), "perf", "dump"], capture_output=True, text=True,
                             check=True, timeout=30).stdout  # fmt: skip
        return {k: v for k, v in json.loads(out)["rgw"].items() if isinstance(v, int)}

    def __enter__(self) -> Gateway:
        c = self.cluster
        (c.dir / "rgw").mkdir(exist_ok=True)
        for key, value in (("osd_pool_default_pg_num", "8"), ("osd_pool_default_pgp_num", "8")):
            c.cli("ceph", "config", "set", "global", key, value)
        c.cli("ceph", "auth", "get-or-create", self.NAME, "mon", "allow rw", "osd", "allow rwx", "mgr", "allow rw",
              "-o", str(c.dir / "rgw" / "keyring"))  # fmt: skip
        frontend = f"beast endpoint=127.0.0.1:{self.port}" + (" tcp_nodelay=1" if self.nodelay else "")
        argv = ["radosgw", "--conf", str(c.conf), "-n", self.NAME, "-f", "--keyring", str(c.dir / "rgw" / "keyring"),
                "--rgw-data", str(c.dir / "rgw"), "--ms-mon-client-mode", "crc secure", "--rgw-frontends", frontend,
                "--rgw-enable-usage-log", "true", "--rgw-usage-log-flush-threshold", "1", "--rgw-usage-log-tick-interval", "1",
                "--client-mount-timeout", "30"]  # fmt: skip
        log = open(c.dir / "log" / "rgw.stdout", "wb")
        self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=c.env, start_new_session=True)
        log.close()
        try:
            import urllib.error
            import urllib.request

            deadline = time.monotonic() + 90
            while True:
                try:
                    with urllib.request.urlopen(self.endpoint + "/", timeout=2):
                        break
                except urllib.error.HTTPError:
                    break  # answering
                except OSError:
                    if self.proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"radosgw did not answer on {self.endpoint}: {(c.dir / 'log' / 'rgw.stdout').read_text()[-500:]}") from None
                    time.sleep(0.25)
            # the cluster's service map names this gateway and its port (the mgr learns it within seconds; a
            # gateway started again on another port is otherwise seen at its old one for that while)
            deadline = time.monotonic() + 60
            while not re.search(rf"endpoint=127\.0\.0\.1:{self.port}(?!\d)", c.cli("ceph", "service", "dump", "-f", "json", check=False).stdout):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the cluster's service map does not name radosgw at port {self.port} after 60 s")
                time.sleep(0.5)
            admin = ["radosgw-admin", "--conf", str(c.conf), "-n", self.NAME, "--keyring", str(c.dir / "rgw" / "keyring")]
            if subprocess.run([*admin, "user", "info", "--uid=bench"], capture_output=True, env=c.env, timeout=60).returncode != 0:
                subprocess.run([*admin, "user", "create", "--uid=bench", "--display-name=bench", f"--access-key={self.KEY}",
                                f"--secret={self.SECRET}"], check=True, capture_output=True, env=c.env, timeout=60)  # fmt: skip
        except BaseException:
            self.__exit__()
            raise
        return self

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            stop_pid(self.proc.pid, timeout_s=15)
            self.proc.wait()
