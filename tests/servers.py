"""Real servers for the network-storage tests, bound to 127.0.0.1 and stopped by their PIDs.

* :class:`Sshfs`: a private ``sshd`` (own host key, key authentication, a free port) and an
  ``sshfs`` mount of a directory it exports;
* :class:`Samba`: ``smbd`` from a private configuration (port 445 on 127.0.0.1 only: the
  smbnetfs client always dials 445) and the ``smbnetfs`` FUSE client;
* :class:`Nbdkit`: ``nbdkit`` serving a file or memory on a free port, with optional filters
  (``delay``, ``error``).

Each is a context manager; nothing is written outside its work directory except what the
daemons insist on (``/run/sshd`` for sshd, created and removed here when missing).  See
../shared/BACKENDS.md for the traps.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout_s:g} s")


def wait_until(ready, timeout_s: float, what, step_s: float = 0.05) -> None:
    """Ask ``ready()`` every ``step_s`` until it is true; after ``timeout_s`` an AssertionError
    saying ``what`` (a text, or a function giving it then: a log's tail)."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert time.monotonic() < deadline, what() if callable(what) else what
        time.sleep(step_s)


def stop_pid(pid: int, timeout_s: float = 10.0) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def when_fio_runs(then, delay_s: float, timeout_s: float = 60.0, pid: int | None = None):
    """A started thread that calls ``then()`` ``delay_s`` after storbench's fio starts (join it);
    ``pid``: the storbench whose fio (a child process), else this process's."""
    import threading

    def watch() -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            # this storbench's fio only (its temporary directory carries storbench's PID): another
            # storbench on the machine must not set it off
            if subprocess.run(["pgrep", "-f", f"storbench-fio-{pid or os.getpid()}-.*/job.fio"], capture_output=True).returncode == 0:
                time.sleep(delay_s)
                then()
                return
            time.sleep(0.05)

    t = threading.Thread(target=watch)
    t.start()
    return t


def is_mounted(path: Path) -> bool:
    out = subprocess.run(["findmnt", "-rn", "-o", "TARGET"], capture_output=True, text=True).stdout.split()
    return str(path) in out


def fuse_unmount(path: Path) -> None:
    for argv in (["fusermount3", "-u", str(path)], ["fusermount", "-u", str(path)], ["umount", "-l", str(path)]):
        if not is_mounted(path):
            return
        if shutil.which(argv[0]):
            subprocess.run(argv, capture_output=True)
            time.sleep(0.2)


class Sshfs:
    """A private sshd on 127.0.0.1 and an sshfs mount of ``export`` at ``mnt``."""

    def __init__(self, workdir: Path, *, sync_write: bool = False, export: Path | None = None, options: str = "") -> None:
        self.dir = workdir
        self.own_export = export is None
        self.export = export or workdir / "export"
        self.mnt = workdir / "mnt"
        self.port = free_port()
        self.sync_write = sync_write
        self.options = options  # more -o options for sshfs ("direct_io": every read goes to the server)
        self.sshd: subprocess.Popen | None = None
        self.sshfs_pid: int | None = None
        self.made_run_sshd = False

    def __enter__(self) -> Sshfs:
        d = self.dir
        d.mkdir(parents=True, exist_ok=True)
        if self.own_export:
            self.export.mkdir(parents=True)
        self.mnt.mkdir()
        os.chmod(d, 0o700)
        for key in ("hostkey", "id_ed25519"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / key)], check=True)
        shutil.copy(d / "id_ed25519.pub", d / "authorized_keys")
        (d / "sshd_config").write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {d / 'hostkey'}\nPidFile {d / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {d / 'authorized_keys'}\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nSubsystem sftp /usr/lib/openssh/sftp-server\n"
        )
        if not os.path.isdir("/run/sshd"):
            os.mkdir("/run/sshd", 0o755)
            self.made_run_sshd = True
        try:
            self.sshd = subprocess.Popen(["/usr/sbin/sshd", "-D", "-f", str(d / "sshd_config"), "-E", str(d / "sshd.log")])
            wait_for_port(self.port)
            opts = f"IdentityFile={d / 'id_ed25519'},StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,BatchMode=yes"
            if self.sync_write:
                opts += ",sync_write"
            if self.options:
                opts += "," + self.options
            subprocess.run(["sshfs", "-p", str(self.port), "-o", opts, f"root@127.0.0.1:{self.export}", str(self.mnt)], check=True, timeout=30)
            out = subprocess.run(["pgrep", "-o", "-f", f"^sshfs -p {self.port} "], capture_output=True, text=True).stdout.strip()
            self.sshfs_pid = int(out) if out else None
        except BaseException:
            self.__exit__()
            raise
        return self

    def kill_server(self) -> None:
        """SIGKILL sshd and the session processes it forked (the one serving sshfs among them)."""
        if self.sshd is not None and self.sshd.poll() is None:
            subprocess.run(["pkill", "-KILL", "-P", str(self.sshd.pid)], capture_output=True)
            self.sshd.kill()
            self.sshd.wait()

    def __exit__(self, *exc: object) -> None:
        fuse_unmount(self.mnt)
        if self.sshfs_pid is not None:
            stop_pid(self.sshfs_pid)
        if self.sshd is not None and self.sshd.poll() is None:
            self.sshd.terminate()
            self.sshd.wait(timeout=10)
        if self.made_run_sshd:
            with contextlib.suppress(OSError):
                os.rmdir("/run/sshd")


class Samba:
    """smbd from a private configuration on 127.0.0.1:445, share ``bench``, and smbnetfs at ``mnt``."""

    PASSWORD = "storbench-test"

    def __init__(self, workdir: Path, share_path: Path | None = None) -> None:
        self.dir = workdir
        self.share = share_path or workdir / "share"
        self.mnt = workdir / "mnt"
        self.smbd: subprocess.Popen | None = None
        self.smbnetfs_pid: int | None = None

    @property
    def share_dir(self) -> Path:
        """Where the share appears under the smbnetfs mount."""
        return self.mnt / "127.0.0.1" / "bench"

    def __enter__(self) -> Samba:
        s = self.dir
        for sub in ("private", "lock", "state", "cache", "pid", "ncalrpc", "log", "mnt", "home/.smb"):
            (s / sub).mkdir(parents=True, exist_ok=True)
        self.share.mkdir(parents=True, exist_ok=True)
        conf = s / "smb.conf"
        conf.write_text(
            "[global]\n  server role = standalone server\n  interfaces = lo\n  bind interfaces only = yes\n"
            "  disable netbios = yes\n  smb ports = 445\n  server min protocol = SMB2\n"
            f"  private dir = {s}/private\n  lock directory = {s}/lock\n  state directory = {s}/state\n"
            f"  cache directory = {s}/cache\n  pid directory = {s}/pid\n  ncalrpc dir = {s}/ncalrpc\n"
            f"  binddns dir = {s}/private/bind-dns\n  passdb backend = tdbsam:{s}/private/passdb.tdb\n"
            f"  log file = {s}/log/log.%m\n  logging = file\n  load printers = no\n  printcap name = /dev/null\n"
            "  disable spoolss = yes\n  rpc start on demand helpers = false\n"
            f"[bench]\n  path = {self.share}\n  read only = no\n  valid users = root\n  force user = root\n"
        )
        subprocess.run(["smbpasswd", "-c", str(conf), "-a", "-s", "root"], input=f"{self.PASSWORD}\n{self.PASSWORD}\n",
                       text=True, check=True, capture_output=True)  # fmt: skip
        home = s / "home"
        (home / ".smb" / "smb.conf").write_text(
            "[global]\n  client min protocol = SMB2\n  disable netbios = yes\n"
            f"  lock directory = {home}/lock\n  state directory = {home}/state\n  cache directory = {home}/cache\n"
            f"  private dir = {home}/private\n"
        )
        (home / ".smb" / "smbnetfs.conf").write_text(
            f'smb_query_browsers "false"\nuse_libsecret "false"\nauth "127.0.0.1" "root" "{self.PASSWORD}"\n'
            'host "127.0.0.1" visible=true\n'
        )
        for f in (home / ".smb").iterdir():
            os.chmod(f, 0o600)
        try:
            # a session of its own: smbd signals its whole process group when it stops
            self.smbd = subprocess.Popen(["smbd", "-F", "--no-process-group", "-s", str(conf)], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, start_new_session=True)
            wait_for_port(445)
            env = dict(os.environ, HOME=str(home))
            subprocess.run(["smbnetfs", str(self.mnt), "-o", f"log_file={s}/log/smbnetfs.log"], env=env, check=True, timeout=30)
            out = subprocess.run(["pgrep", "-o", "-f", f"^smbnetfs {self.mnt}"], capture_output=True, text=True).stdout.strip()
            self.smbnetfs_pid = int(out) if out else None
            deadline = time.monotonic() + 15
            while not self.share_dir.is_dir():
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{self.share_dir} did not appear")
                time.sleep(0.1)
        except BaseException:
            self.__exit__()
            raise
        return self

    def kill_server(self) -> None:
        """SIGKILL smbd, the per-client smbd processes it forked, and its helpers."""
        if self.smbd is not None and self.smbd.poll() is None:
            subprocess.run(["pkill", "-KILL", "-P", str(self.smbd.pid)], capture_output=True)
            self.smbd.kill()
            self.smbd.wait()
        self._stop_helpers(signal.SIGKILL)

    def _stop_helpers(self, sig: int = signal.SIGTERM) -> None:
        # smbd may start samba-dcerpcd, which outlives it (re-parented): stop ours by its config path
        out = subprocess.run(["pgrep", "-f", "--", f"--configfile={self.dir / 'smb.conf'}"], capture_output=True, text=True).stdout.split()
        for pid in out:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), sig)
            stop_pid(int(pid))

    def __exit__(self, *exc: object) -> None:
        fuse_unmount(self.mnt)
        if self.smbnetfs_pid is not None:
            stop_pid(self.smbnetfs_pid)
        if self.smbd is not None and self.smbd.poll() is None:
            self.smbd.terminate()
            try:
                self.smbd.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.smbd.kill()
                self.smbd.wait()
        self._stop_helpers()


class Nbdkit:
    """nbdkit on 127.0.0.1:PORT serving ``plugin_args`` (``["memory", "64M"]``, ``["file", PATH]``)."""

    def __init__(self, workdir: Path, plugin_args: Sequence[str], filters: Sequence[str] = (), params: Sequence[str] = ()) -> None:
        self.dir = workdir
        self.plugin_args = list(plugin_args)
        self.filters = list(filters)
        self.params = list(params)
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def uri(self) -> str:
        return f"nbd://127.0.0.1:{self.port}"

    def __enter__(self) -> Nbdkit:
        self.dir.mkdir(parents=True, exist_ok=True)
        argv = ["nbdkit", "-f", "-i", "127.0.0.1", "-p", str(self.port), *(f"--filter={f}" for f in self.filters), *self.plugin_args, *self.params]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(self.dir / "nbdkit.log", "wb"))
        try:
            wait_for_port(self.port)
        except BaseException:
            self.__exit__()
            raise
        return self

    def kill_server(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Gluster:
    """glusterd from a private volfile on 127.0.0.1:24007 and a started one-brick volume ``gv0``.

    The gluster CLI refuses 127.0.0.1 as a brick host; the machine's hostname (which resolves
    to 127.0.0.1) is accepted, with ``force`` for a brick on the root filesystem.  glusterd
    still makes /var/run/glusterd.socket, /var/run/gluster/ (the brick's socket) and
    /var/log/glusterfs/: removed here when they were not there before.
    """

    VOLUME = "gv0"
    LEFTOVERS = ("/var/run/glusterd.socket", "/var/run/gluster", "/var/log/glusterfs")

    def __init__(self, workdir: Path) -> None:
        self.dir = workdir
        self.brick = workdir / "brick"
        self.proc: subprocess.Popen | None = None
        self.existed = {p: os.path.exists(p) for p in self.LEFTOVERS}

    @property
    def uri(self) -> str:
        return f"gluster://127.0.0.1/{self.VOLUME}"

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(["gluster", "--log-file=/dev/null", "--mode=script", *args], capture_output=True, text=True, check=check, timeout=60)

    def __enter__(self) -> Gluster:
        g = self.dir
        for sub in ("lib", "run", "log"):
            (g / sub).mkdir(parents=True, exist_ok=True)
        self.brick.mkdir(parents=True, exist_ok=True)
        (g / "glusterd.vol").write_text(
            "volume management\n    type mgmt/glusterd\n"
            f"    option working-directory {g}/lib\n    option run-directory {g}/run\n    option logging-directory {g}/log\n"
            "    option transport-type socket\n    option transport.socket.bind-address 127.0.0.1\n"
            "    option transport.socket.listen-port 24007\n    option ping-timeout 0\n    option event-threads 1\n"
            "    option max-port 60999\nend-volume\n"
        )
        try:
            self.proc = subprocess.Popen(
                ["glusterd", "-N", "-f", str(g / "glusterd.vol"), "-l", str(g / "log" / "glusterd.log"), "-S", str(g / "run" / "glusterd.socket")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
            wait_for_port(24007)
            deadline = time.monotonic() + 30
            while self.cli("pool", "list", check=False).returncode != 0:
                if time.monotonic() > deadline:
                    raise RuntimeError("glusterd did not answer")
                time.sleep(0.2)
            self.cli("volume", "create", self.VOLUME, f"{socket.gethostname()}:{self.brick}", "force")
            self.cli("volume", "start", self.VOLUME)
        except BaseException:
            self.__exit__()
            raise
        return self

    def kill_brick(self) -> None:
        """SIGKILL the brick's glusterfsd (glusterd goes on answering)."""
        out = subprocess.run(["pgrep", "-f", "--", f"--brick-name {self.brick}"], capture_output=True, text=True).stdout.split()
        for pid in out:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.cli("volume", "stop", self.VOLUME, "force", check=False)  # stops the brick's glusterfsd
            self.cli("volume", "delete", self.VOLUME, check=False)
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        out = subprocess.run(["pgrep", "-f", "--", f"--brick-name {self.brick}"], capture_output=True, text=True).stdout.split()
        for pid in out:
            stop_pid(int(pid))
        for path, existed in self.existed.items():
            if not existed:
                if os.path.isdir(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(path)


class Tgt:
    """tgt's ``tgtd`` (a userspace iSCSI target) on 127.0.0.1:PORT, its management socket in its
    work directory, one target ``IQN`` with LUN 1 backed by a ``size_mib`` file (zeros, or the
    bytes of ``content``), bound to the initiator address 127.0.0.1.

    tgtd ignores SIGTERM (../shared/NFS-ISCSI.md, trap 1): it is stopped by taking the system
    offline and deleting it with tgtadm, then waited for by its PID (SIGKILL after 10 s)."""

    IQN = "iqn.2026-12.lab.storbench:disk1"

    #: the caching mode page with WCE=0, as tgt-admin writes it for "write-cache off"
    CACHE_OFF = "mode_page=8:0:18:0x10:0:0xff:0xff:0:0:0xff:0xff:0xff:0xff:0x80:0x14:0:0:0:0:0:0"

    def __init__(self, workdir: Path, size_mib: int = 64, content: bytes = b"", write_cache: bool = True,
                 inside: Sequence[str] = (), backing: Path | None = None) -> None:  # fmt: skip
        self.write_cache = write_cache
        #: the LUN's backing file (default: disk.img in the work directory)
        self.backing = backing or workdir / "disk.img"
        #: a command prefix that runs tgtd in another network namespace (``Ganesha.inside()``'s nsenter)
        self.prefix = list(inside)
        self.dir = workdir
        self.size_mib = size_mib
        self.content = content
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.env = dict(os.environ, TGT_IPC_SOCKET=str(workdir / "tgtd.ipc"))

    @property
    def uri(self) -> str:
        return f"iscsi://127.0.0.1:{self.port}/{self.IQN}/1"

    def adm(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(["tgtadm", *args], env=self.env, capture_output=True, text=True, timeout=30, check=check)

    def __enter__(self) -> Tgt:
        self.dir.mkdir(parents=True, exist_ok=True)
        disk = self.backing
        with open(disk, "wb") as fh:
            fh.write(self.content)
            fh.truncate(self.size_mib << 20)
        self.proc = subprocess.Popen([*self.prefix, "tgtd", "-f", "--iscsi", f"portal=127.0.0.1:{self.port}"], env=self.env,
                                     stdout=subprocess.DEVNULL, stderr=open(self.dir / "tgtd.log", "wb"))  # fmt: skip
        try:
            if not self.prefix:  # in another namespace its port is not reachable from here: the login below tells
                wait_for_port(self.port)
            wait_until(lambda: self.adm("--mode", "sys", "--op", "show", check=False).returncode == 0, 10, "tgtd's management socket did not answer")
            self.adm("--lld", "iscsi", "--mode", "target", "--op", "new", "--tid", "1", "--targetname", self.IQN)
            self.adm("--lld", "iscsi", "--mode", "logicalunit", "--op", "new", "--tid", "1", "--lun", "1", "--backing-store", str(disk))
            if not self.write_cache:
                self.adm("--lld", "iscsi", "--mode", "logicalunit", "--op", "update", "--tid", "1", "--lun", "1", "--params", self.CACHE_OFF)
            self.adm("--lld", "iscsi", "--mode", "target", "--op", "bind", "--tid", "1", "--initiator-address", "127.0.0.1")
            wait_until(lambda: subprocess.run([*self.prefix, "qemu-img", "info", "-f", "raw", self.uri], capture_output=True, timeout=30).returncode == 0,
                       15, "the LUN does not answer a login", step_s=0.1)  # fmt: skip
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.adm("--op", "update", "--mode", "sys", "--name", "State", "-v", "offline", check=False)
        self.adm("--lld", "iscsi", "--mode", "target", "--op", "delete", "--force", "--tid", "1", check=False)
        self.adm("--op", "delete", "--mode", "system", check=False)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _alive(pid: int) -> bool:
    """A process that runs (a zombie does not: PID 1 here reaps late, ../shared/NFS-ISCSI.md trap 11)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split()[0] != "Z"


def _stop(pid: int | None, comm: str) -> None:
    """SIGTERM ``pid`` if it still is ``comm``, wait 10 s, then SIGKILL."""
    if pid is None or not _alive(pid):
        return
    try:
        if Path(f"/proc/{pid}/comm").read_text().strip() != comm[:15]:
            return
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(pid):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


class Ganesha:
    """nfs-ganesha 4.3 (VFS) serving ``export/`` as NFSv3 and v4, in a private loopback-only network
    namespace with its own rpcbind (rpcbind cannot be limited to 127.0.0.1, and NFSv3 needs it:
    ../shared/NFS-ISCSI.md traps 2-4) and a private dbus-daemon (trap 7).  :meth:`inside` prefixes
    a command with ``nsenter`` into that namespace: a client (storbench, nfs-ls) runs there.
    ``commit``: ganesha's ``NFS_Commit`` (true: every WRITE made stable on the server)."""

    RPCBIND_FILES = ("/run/rpcbind.sock", "/run/rpcbind.lock", "/run/rpcbind/portmap.xdr", "/run/rpcbind/rpcbind.xdr")

    def __init__(self, workdir: Path, commit: bool = False, export: Path | None = None) -> None:
        self.dir = workdir
        #: the exported directory (default: export/ in the work directory), as /export
        self.export = export or workdir / "export"
        self.commit = commit
        self.pids: dict[str, int] = {}

    @property
    def url(self) -> str:
        return "nfs://127.0.0.1/export/"

    def inside(self, *argv: str) -> list[str]:
        return ["nsenter", f"--net=/proc/{self.pids['rpcbind']}/ns/net", *argv]

    def _write_config(self) -> None:
        d = self.dir
        (d / "ganesha.conf").write_text(f"""NFS_CORE_PARAM {{
    NFS_Port = 2049; MNT_Port = 20048; Protocols = 3, 4;
    Enable_NLM = false; Enable_RQUOTA = false; Enable_UDP = false; mount_path_pseudo = true;
}}
NFSV4 {{ Graceless = true; RecoveryBackend = fs; RecoveryRoot = {d}/recov; }}
EXPORT {{
    Export_Id = 1; Path = {self.export}; Pseudo = /export; Access_Type = RW; Squash = No_Root_Squash;
    NFS_Commit = {'true' if self.commit else 'false'}; SecType = sys; Protocols = 3, 4; Transports = TCP;
    FSAL {{ Name = VFS; }}
}}
NFS_KRB5 {{ Active_krb5 = false; CCacheDir = {d}/ccache; }}
LOG {{ Default_Log_Level = EVENT; }}
""")
        (d / "dbus.conf").write_text(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>system</type><listen>unix:path={d}/dbus.sock</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="root"/><allow own="org.ganesha.nfsd"/><allow send_destination="*"/><allow receive_sender="*"/></policy>
</busconfig>
""")

    def __enter__(self) -> Ganesha:
        if subprocess.run(["pgrep", "-x", "rpcbind"], capture_output=True).returncode == 0:
            raise RuntimeError("an rpcbind already runs here: the test's rpcbind would take over /run/rpcbind.sock")
        for sub in ("recov", "ccache"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        self.export.mkdir(parents=True, exist_ok=True)
        self._write_config()
        try:
            dbus = subprocess.run(["dbus-daemon", f"--config-file={self.dir / 'dbus.conf'}", "--fork", "--print-pid"],
                                  capture_output=True, text=True, timeout=15, check=True)  # fmt: skip
            self.pids["dbus-daemon"] = int(dbus.stdout.split()[0])
            rpcbind = subprocess.Popen(["unshare", "-n", "sh", "-c", "ip link set lo up && exec rpcbind -f"], start_new_session=True,
                                       stdout=subprocess.DEVNULL, stderr=open(self.dir / "rpcbind.log", "wb"))  # fmt: skip
            self.pids["rpcbind"] = rpcbind.pid
            wait_until(lambda: rpcbind.poll() is not None or subprocess.run(self.inside("rpcinfo", "-p", "127.0.0.1"), capture_output=True).returncode == 0,
                       10, lambda: (self.dir / "rpcbind.log").read_text())  # fmt: skip
            assert rpcbind.poll() is None, (self.dir / "rpcbind.log").read_text()
            env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={self.dir / 'dbus.sock'}")
            log, pidfile = self.dir / "ganesha.log", self.dir / "ganesha.pid"
            subprocess.run(self.inside("ganesha.nfsd", "-f", str(self.dir / "ganesha.conf"), "-L", str(log), "-p", str(pidfile), "-N", "NIV_EVENT"),
                           env=env, check=True, timeout=30, capture_output=True)  # fmt: skip
            wait_until(lambda: pidfile.exists() and log.exists() and "NFS SERVER INITIALIZED" in log.read_text(errors="replace"),
                       20, lambda: log.read_text(errors="replace")[-2000:] if log.exists() else "no ganesha log")  # fmt: skip
            self.pids["ganesha.nfsd"] = int(pidfile.read_text().split()[0])
            wait_until(lambda: subprocess.run(self.inside("nfs-ls", self.url), capture_output=True, timeout=15).returncode == 0,
                       15, "ganesha does not answer nfs-ls", step_s=0.1)  # fmt: skip
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for comm in ("ganesha.nfsd", "rpcbind", "dbus-daemon"):
            _stop(self.pids.get(comm), comm)
        if "rpcbind" in self.pids:
            for path in self.RPCBIND_FILES:
                with contextlib.suppress(OSError):
                    os.unlink(path)
