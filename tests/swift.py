"""OpenStack Swift with its S3 layer (``s3api``) for the tests: a second, real S3 server beside
radosgw (tests/ceph.py), so that a test or a comparison of two S3 servers is real.

One replica on one device directory under the work directory, rings of 2^8 partitions, the
account, container and object servers and the proxy each one process (``workers = 0``: the PID
started is the server), bound to 127.0.0.1 at free ports, run in the foreground as children of
the test process and stopped by their PIDs.  Credentials by ``tempauth``: access key
``bench:bench``, secret ``benchsecret``.  Swift reads ``/etc/swift/swift.conf`` (the hash prefix
and suffix) from that fixed path, as the Debian package ships it; everything else lives under the
work directory.  About 3 s here (the servers; the three rings in one process).  Recipe: ../shared/S3.md.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from servers import free_port, stop_pid

SERVERS = ("object", "container", "account")
_FILTERS = {"healthcheck": "healthcheck", "cache": "memcache", "catch_errors": "catch_errors", "gatekeeper": "gatekeeper",
            "proxy-logging": "proxy_logging", "listing_formats": "listing_formats", "copy": "copy", "slo": "slo", "dlo": "dlo"}  # fmt: skip


class Swift:
    """``with Swift(workdir) as sw``: Swift's proxy with ``s3api`` answering at ``sw.endpoint``."""

    KEY, SECRET = "bench:bench", "benchsecret"

    def __init__(self, workdir: Path) -> None:
        self.dir = workdir
        self.ports = {name: free_port() for name in (*SERVERS, "proxy")}
        self.procs: dict[str, subprocess.Popen] = {}

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports['proxy']}"

    @property
    def env(self) -> dict[str, str]:
        """The environment of a storbench that uses this server: its keys, nothing of the user's AWS files."""
        return {**os.environ, "AWS_ACCESS_KEY_ID": self.KEY, "AWS_SECRET_ACCESS_KEY": self.SECRET,
                "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull}  # fmt: skip

    def s3(self):
        import boto3
        from botocore.config import Config

        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1", aws_access_key_id=self.KEY,
                            aws_secret_access_key=self.SECRET, config=Config(s3={"addressing_style": "path"}))  # fmt: skip

    def _conf(self, name: str) -> Path:
        d = self.dir
        common = (f"[DEFAULT]\nbind_ip = 127.0.0.1\nbind_port = {self.ports[name]}\nuser = root\nswift_dir = {d / 'etc'}\n"
                  "workers = 0\nlog_level = WARNING\n")  # fmt: skip
        if name == "proxy":
            filters = "".join(f"[filter:{n}]\nuse = egg:swift#{egg}\n" for n, egg in _FILTERS.items())
            body = (common + "[pipeline:main]\npipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats "
                    "s3api tempauth copy slo dlo proxy-logging proxy-server\n"
                    "[app:proxy-server]\nuse = egg:swift#proxy\naccount_autocreate = true\n"
                    # a loaded test machine: the proxy's defaults (0.5 s to connect to a server, 10 s for
                    # its answer) made it answer 503 "Please reduce your request rate" to a bucket's creation
                    "conn_timeout = 5\nnode_timeout = 60\n"
                    f"[filter:tempauth]\nuse = egg:swift#tempauth\nuser_bench_bench = {self.SECRET} .admin\n"
                    "[filter:s3api]\nuse = egg:swift#s3api\nlocation = us-east-1\n" + filters)  # fmt: skip
        else:
            body = (common + f"devices = {d / 'srv'}\nmount_check = false\nrecon_cache_path = {d / 'cache'}\n"
                    f"[pipeline:main]\npipeline = {name}-server\n[app:{name}-server]\nuse = egg:swift#{name}\n")  # fmt: skip
        path = d / "etc" / f"{name}-server.conf"
        path.write_text(body)
        return path

    def __enter__(self) -> Swift:
        d = self.dir
        for sub in ("etc", "srv/d1", "cache", "log"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        try:
            # the three rings, in one process of Swift's own Python (swift-ring-builder's create, add and
            # rebalance, nine processes, took 6 s of the 8)
            script = ("import sys\nfrom swift.common.ring import RingBuilder\n"
                      "for name, port in zip(sys.argv[2::2], sys.argv[3::2]):\n"
                      "    b = RingBuilder(8, 1, 1)\n"
                      "    b.add_dev({'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': int(port), 'device': 'd1', 'weight': 100})\n"
                      "    b.rebalance()\n"
                      "    b.get_ring().save(f'{sys.argv[1]}/{name}.ring.gz')\n")  # fmt: skip
            ports = [str(x) for name in SERVERS for x in (name, self.ports[name])]
            subprocess.run(["/usr/bin/python3", "-c", script, str(d / "etc"), *ports], check=True, capture_output=True, timeout=60)
            for name in (*SERVERS, "proxy"):
                conf = self._conf(name)
                with open(d / "log" / f"{name}.log", "wb") as log:
                    self.procs[name] = subprocess.Popen([f"swift-{name}-server", str(conf)], stdout=log, stderr=subprocess.STDOUT,
                                                        start_new_session=True)  # fmt: skip
            import urllib.request

            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(self.endpoint + "/healthcheck", timeout=2):
                        break
                except OSError:
                    dead = [n for n, p in self.procs.items() if p.poll() is not None]
                    if dead or time.monotonic() > deadline:
                        logs = {n: (d / "log" / f"{n}.log").read_text()[-300:] for n in dead or self.procs}
                        raise RuntimeError(f"Swift did not answer on {self.endpoint}: {logs}") from None
                    time.sleep(0.2)
            # the proxy answers its healthcheck alone: the account, container and object servers (each a
            # Python of its own, seconds to start on a loaded machine) are waited for by their ports,
            # and the proxy's 503 ("Please reduce your request rate") to the first bucket is retried
            import socket

            from botocore.exceptions import ClientError

            for name in SERVERS:
                while True:
                    try:
                        socket.create_connection(("127.0.0.1", self.ports[name]), timeout=2).close()
                        break
                    except OSError:
                        if self.procs[name].poll() is not None or time.monotonic() > deadline:
                            raise RuntimeError(f"Swift's {name} server did not listen: {(d / 'log' / f'{name}.log').read_text()[-300:]}") from None
                        time.sleep(0.2)
            # the account and its database made now (account_autocreate), not by a test's first request
            api = self.s3()
            deadline = time.monotonic() + 60
            while True:
                try:
                    api.create_bucket(Bucket="warm-up")
                    break
                except ClientError as exc:
                    if exc.response.get("Error", {}).get("Code") != "ServiceUnavailable" or time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)
            api.delete_bucket(Bucket="warm-up")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                stop_pid(proc.pid, timeout_s=15)
                proc.wait()
