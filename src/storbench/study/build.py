"""Edge: building and tearing down one setup on the scratch devices -- mkfs and mount, zpool and
zfs create, btrfs multi-device profiles, images served by qemu-nbd -- through an injectable
:class:`System`, every undo step registered (:class:`Teardown`) before what it undoes exists.

May import: the setups and images of this package, the storage parsers, the process stage's
signals, units and errors; never the run loop or the driver (:mod:`storbench.study.matrix`)."""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from storbench.jsontypes import JSONMapping, JSONObject

from ..errors import StorbenchError, UsageError
from ..model import Target
from ..process import signals
from .images import ImageError, create_image, mount_fstype, run_command, socket_path_for, start_export, start_server
from .plan import Scratch
from .setup_fs import devices_needed, mkfs_argv, mount_argv, setup_tools, wipe_argv
from .setup_images import guest_tools
from .setup_zfs import (
    check_zfs_properties,
    expected_vdevs,
    zfs_create_argv,
    zfs_get_argv,
    zpool_create_argv,
    zpool_destroy_argv,
)
from .setups import TOOL_PACKAGES, Setup, SetupError

if TYPE_CHECKING:
    from .images import FuseExport, NbdServer
    from .setups import ImageSpec

ZVOL_APPEAR_TIMEOUT_S = 30.0
UMOUNT_TRIES = 5
#: How long a pool that says "pool is busy" is retried before its teardown fails.
POOL_BUSY_TIMEOUT_S = 20.0


class SetupFailed(StorbenchError):
    """Building or tearing down a setup failed (one line naming the command and its words)."""


# --------------------------------------------------------------------------- the environment


Observer = Callable[[str, JSONMapping], None]


def no_observer(event: str, info: JSONMapping) -> None:
    pass


@dataclass
class System:
    """Everything the study does to the machine goes through here (tests swap pieces).

    ``run(argv) -> (returncode, stdout, stderr)`` runs one program (no shell);
    ``serve(image, image_path, socket_path)`` starts qemu-nbd and returns an object
    with ``stop()`` (:func:`storbench.study.images.start_server`); ``export(image, image_path,
    export_path)`` exports it as a file over FUSE, the same way (:func:`~storbench.study.images.start_export`).
    """

    run: Callable[[Sequence[str]], tuple[int, str, str]] = run_command
    which: Callable[[str], str | None] = shutil.which
    sys_root: str = "/sys"
    dev_root: str = "/dev"
    serve: Callable[[ImageSpec, str, str], NbdServer] = start_server
    export: Callable[[ImageSpec, str, str], FuseExport] = start_export
    is_mount: Callable[[str], bool] = os.path.ismount
    pool_name: Callable[[], str] = lambda: f"storbench-{secrets.token_hex(4)}"
    #: "OpenZFS" (the kernel module is loaded), "zfs-fuse" (its daemon's socket exists) or None
    zfs_implementation: Callable[[], str | None] = lambda: zfs_implementation()


#: zfs-fuse's daemon socket; the kernel module shows under /sys/module.
ZFS_FUSE_SOCKET = "/var/run/zfs/zfs_socket"


def zfs_implementation(sys_root: str = "/sys", socket_path: str = ZFS_FUSE_SOCKET) -> str | None:
    """Which ZFS answers the ``zpool``/``zfs`` commands here."""
    if os.path.isdir(os.path.join(sys_root, "module", "zfs")):
        return "OpenZFS"
    if os.path.exists(socket_path):
        return "zfs-fuse"
    return None


def check_zfs(setups: Sequence[Setup], system: System) -> None:
    """Before anything is touched: ZFS answers, and it can build what the setups ask
    (zfs-fuse has no zvols: ``zfs create -V`` aborts with "Function not implemented")."""
    zfs_setups = [s for s in setups if s.mkfs == "zfs"]
    if not zfs_setups:
        return
    impl = system.zfs_implementation()
    if impl == "zfs-fuse":
        zvol = next((s for s in zfs_setups if s.image is not None and s.image.format == "zvol"), None)
        if zvol is not None:
            raise UsageError(
                f"setup {zvol.name!r} asks for a zvol, but the ZFS here is zfs-fuse, which has no zvols "
                "(zfs create -V fails: Function not implemented); use image = { format = \"raw\" } or \"qcow2\" on a dataset; "
                "nothing was changed"
            )
    rc, out, err = system.run(["zpool", "status", "-x"])
    if rc == 127:
        return  # check_tools names the missing package
    if rc != 0:
        words = last_words(err, out) or f"exit status {rc}"
        hint = "start zfs-fuse" if impl == "zfs-fuse" or os.path.exists(ZFS_FUSE_SOCKET) else "load the zfs module (modprobe zfs) or start zfs-fuse"
        raise UsageError(f"setup {zfs_setups[0].name!r} needs ZFS, which is not answering (zpool status -x: {words}); {hint}; nothing was changed")


# --------------------------------------------------------------------------- signals


@contextlib.contextmanager
def critical() -> Iterator[None]:
    """Create-and-register as one step: a signal inside is acted on right after."""
    with signals.held() as pending:
        yield
    if pending:
        raise KeyboardInterrupt(pending[0])


# --------------------------------------------------------------------------- teardown


class Teardown:
    """Undo steps, run last-registered first; every step runs even when one fails."""

    def __init__(self) -> None:
        self._steps: list[tuple[str, Callable[[], None]]] = []

    def add(self, what: str, fn: Callable[[], None]) -> None:
        self._steps.append((what, fn))

    def __len__(self) -> int:
        return len(self._steps)

    def run(self) -> tuple[list[str], list[str]]:
        """Run every step with signals held; (problems, signals that came meanwhile)."""
        problems: list[str] = []
        with signals.held() as pending:
            while self._steps:
                what, fn = self._steps.pop()
                try:
                    fn()
                except Exception as exc:  # keep going: the other steps still matter
                    problems.append(f"{what}: {exc}")
        return problems, pending


# --------------------------------------------------------------------------- building setups


@dataclass(frozen=True)
class Built:
    """A setup ready to measure."""

    target: Target
    describe_path: str  # what the storage description describes (the mountpoint, device or image)
    notes: tuple[str, ...]  # how it was built, for the storage description
    export_size: str | None = None  # nbd targets: the image size
    image: JSONMapping | None = None  # image setups: what was created and how it is served


class Builder:
    """Builds one setup on the scratch device, registering each undo step first."""

    def __init__(self, system: System, tmpdir: str, device: str | Sequence[str] | None, keep_files: bool) -> None:
        self.system = system
        self.tmpdir = tmpdir
        self.devices: list[str] = [device] if isinstance(device, str) else list(device or [])
        self.keep_files = keep_files
        #: the qemu-nbd serving each image setup, by setup name (stopped before its guest filesystem is made)
        self.servers: JSONObject = {}

    @property
    def device(self) -> str | None:
        """The first scratch device (what one-device setups are built on)."""
        return self.devices[0] if self.devices else None

    def devices_for(self, setup: Setup) -> list[str]:
        """The scratch devices ``setup`` is built on (the first N of the study's)."""
        if not setup.uses_scratch:
            return []
        try:
            return self.devices[: devices_needed(setup, len(self.devices))]
        except SetupError as exc:
            raise SetupFailed(str(exc)) from None

    # ------------------------------------------------------------ commands

    def run(self, argv: Sequence[str], done: list[str] | None = None) -> str:
        rc, out, err = self.system.run(list(argv))
        if rc != 0:
            words = last_words(err, out) or f"exit status {rc}"
            if rc == 127:
                words = f"{argv[0]} is not installed (Debian package {TOOL_PACKAGES.get(argv[0], argv[0])})"
            raise SetupFailed(f"{' '.join(argv)} failed: {words}")
        if done is not None:
            done.append(" ".join(argv))
        return out

    # ------------------------------------------------------------ pieces

    def _mountpoint(self, setup: Setup, td: Teardown) -> str:
        path = os.path.join(self.tmpdir, f"mnt-{setup.name}")
        with critical():
            os.mkdir(path, 0o755)
            td.add(f"remove mountpoint {path}", lambda: self.rmdir_mountpoint(path))
        return path

    def rmdir_mountpoint(self, path: str) -> None:
        if mount_fstype(path) == "fuse.zfs" and not self._zfs_answers():
            # the ZFS daemon (zfs-fuse) died: its mount is left behind, dead, on our own mountpoint
            rc, out, err = self.system.run(["umount", "-l", path])
            if rc != 0:
                raise SetupFailed(f"umount -l {path} failed: {last_words(err, out)}; the dead ZFS mount is still there")
        if self.system.is_mount(path):
            raise SetupFailed(f"{path} is still mounted; not removed")
        rmdir_quiet(path)

    def _zfs_answers(self) -> bool:
        rc, _out, _err = self.system.run(["zpool", "status", "-x"])
        return rc == 0

    def umount(self, path: str) -> None:
        last = ""
        for attempt in range(UMOUNT_TRIES):
            if not self.system.is_mount(path):
                return
            rc, out, err = self.system.run(["umount", path])
            if rc == 0 and not self.system.is_mount(path):
                return
            last = last_words(err, out) or f"exit status {rc}"
            time.sleep(0.2 * (attempt + 1))  # a process may still be closing a file there
        raise SetupFailed(f"umount {path} failed: {last}; it is still mounted (unmount it by hand)")

    def _destroy_pool(self, pool: str) -> None:
        rc, _, _ = self.system.run(["zpool", "list", "-H", "-o", "name", pool])
        if rc != 0:
            return  # never created, or gone already
        deadline = time.monotonic() + POOL_BUSY_TIMEOUT_S
        delay = 0.2
        while True:
            rc, out, err = self.system.run(zpool_destroy_argv(pool))
            if rc == 0:
                return
            words = last_words(err, out) or f"exit status {rc}"
            # zfs-fuse keeps a dataset busy for a second or so after its last file is closed
            if "busy" not in words or time.monotonic() > deadline:
                raise SetupFailed(f"{' '.join(zpool_destroy_argv(pool))} failed: {words}")
            time.sleep(delay)
            delay = min(delay * 2, 2.0)

    def _wipe(self, device: str) -> None:
        self.run(wipe_argv(device))

    def _remove_image(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)

    def _wait_for(self, path: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while not os.path.exists(path):
            if time.monotonic() > deadline:
                raise SetupFailed(f"{path} did not appear within {timeout_s:g} s after zfs create -V (is udev running?)")
            time.sleep(0.05)

    # ------------------------------------------------------------ a setup

    def build(self, setup: Setup, td: Teardown) -> Built:
        done: list[str] = []
        dev = self.device
        holder: str | None = None  # the directory the image file goes into
        describe_path: str | None = None
        target: Target | None = None
        zvol: str | None = None
        used: list[str] = []
        mnt: str | None
        if setup.uses_scratch:
            if dev is None:
                raise SetupFailed(f"setup {setup.name!r} is built on a scratch device: give --device or --loop-file")
            used = self.devices_for(setup)
            for d in used:
                self.run(wipe_argv(d), done)
                if not self.keep_files:  # leave the device blank (with --keep-files: the last setup stays for a look)
                    td.add(f"wipefs -a {d}", functools.partial(self._wipe, d))
        if setup.mkfs in ("ext4", "xfs", "btrfs"):
            assert dev is not None
            self.run(mkfs_argv(setup, used), done)
            mnt = self._mountpoint(setup, td)
            td.add(f"umount {mnt}", functools.partial(self.umount, mnt))
            self.run(mount_argv(setup, dev, mnt), done)
            if setup.profile is not None:
                self._check_btrfs(setup, mnt, used)
            holder = describe_path = mnt
            target = Target(kind="dir", path=mnt, role=_mount_role(setup))
        elif setup.mkfs == "zfs":
            assert dev is not None
            zvol_setup = setup.image is not None and setup.image.format == "zvol"
            # the mountpoint goes before the pool, so it is removed after the pool (and its mount) is gone
            mnt = None if zvol_setup else self._mountpoint(setup, td)
            pool = self.system.pool_name()
            td.add(f"zpool destroy {pool}", lambda: self._destroy_pool(pool))
            self.run(zpool_create_argv(setup, pool, used), done)
            self._check_pool(pool, setup, used)
            if zvol_setup:
                dataset = f"{pool}/image"
                self.run(zfs_create_argv(setup, dataset, None), done)
                zvol = os.path.join(self.system.dev_root, "zvol", dataset)
                self._wait_for(zvol, ZVOL_APPEAR_TIMEOUT_S)
                describe_path = zvol
            else:
                assert mnt is not None
                dataset = f"{pool}/bench"
                self.run(zfs_create_argv(setup, dataset, mnt), done)
                holder = describe_path = mnt
                target = Target(kind="dir", path=mnt, role=_mount_role(setup))
            self._check_dataset(setup, dataset)
        elif setup.image is None:  # mkfs = "none": the raw device
            assert dev is not None
            target = Target(kind="block", path=dev)
            describe_path = dev
        if setup.image is None:
            assert target is not None and describe_path is not None
            return Built(target=target, describe_path=describe_path, notes=(f"setup {setup.name}: " + "; ".join(done),))
        return self._image(setup, td, done, holder, zvol)

    def _image(self, setup: Setup, td: Teardown, done: list[str], holder: str | None, zvol: str | None) -> Built:
        image = setup.image
        assert image is not None
        created: list[str] | None = None
        if image.format == "zvol":
            assert zvol is not None
            path = zvol
            sock_dir = self.tmpdir
        else:
            if image.directory is not None:
                holder = image.directory
                if not os.path.isdir(holder) or not os.access(holder, os.W_OK | os.X_OK):
                    raise SetupFailed(f"setup {setup.name!r}: image.directory {holder} is not a writable directory")
                sock_dir = self.tmpdir  # no sockets in the user's directory
            else:
                sock_dir = holder or self.tmpdir  # beside the image: space figures are the image's filesystem
            assert holder is not None
            suffix = "qcow2" if image.format == "qcow2" else "img"
            path = os.path.join(holder, f"storbench-{setup.name}.{suffix}")
            if image.directory is None or not self.keep_files:
                td.add(f"remove image {path}", lambda: self._remove_image(path))
            try:
                created = create_image(image, path, runner=self.system.run)
            except ImageError as exc:
                raise SetupFailed(str(exc)) from None
            done.append(" ".join(created))
        sock = socket_path_for(sock_dir, f".storbench-{setup.name}")
        holder_box: list[NbdServer] = []

        def stop() -> None:
            for server in holder_box:
                server.stop()

        td.add("stop qemu-nbd", stop)
        try:
            server = self.system.serve(image, path, sock)
        except ImageError as exc:
            raise SetupFailed(str(exc)) from None
        holder_box.append(server)
        self.servers[setup.name] = server
        nbd_argv = list(getattr(server, "argv", []))
        done.append(" ".join(nbd_argv) + " (in the background)")
        meta = {
            "format": image.format,
            "size": image.size,
            "options": dict(image.options),
            "path": path,
            "directory": image.directory,
            "cache": image.cache,
            "aio": image.aio,
            "created_with": created,
            "served_with": nbd_argv,
        }
        notes = (f"setup {setup.name}: " + "; ".join(done), f"image: {image.describe()}; fio reaches it with ioengine=nbd")
        return Built(
            target=Target(kind="nbd", path=sock, role=image_role(setup)), describe_path=path, notes=notes,
            export_size=image.size, image=meta,
        )  # fmt: skip

    def stop_server(self, setup: Setup) -> None:
        """Stop the qemu-nbd serving ``setup``'s image now (its teardown step stays, and does nothing more)."""
        server = self.servers.pop(setup.name, None)
        if server is not None:
            server.stop()

    def _check_pool(self, pool: str, setup: Setup, devices: Sequence[str]) -> None:
        """``zpool status`` shows exactly the asked layout: the vdevs, their kinds and members."""
        from ..storage import parse_zpool_status

        rc, out, _err = self.system.run(["zpool", "status", "-P", pool])
        if rc != 0:  # zfs-fuse's zpool status has no -P: its leaves are bare names (loop1)
            out = self.run(["zpool", "status", pool])
        pools = parse_zpool_status(out)
        data = [v for p in pools if p.pool == pool for v in p.vdevs if v.role == "data"]
        got = [(v.kind, len(v.devices)) for v in data]
        want = expected_vdevs(setup, devices)
        names = {os.path.basename(d) for d in devices} | set(devices)
        members = [d for v in data for d in v.devices]
        if got != want or not all(m in names or os.path.basename(m) in names for m in members):
            shape = ", ".join(f"{v.kind} {v.name}" for v in data) or "no data vdev"
            asked = " + ".join(f"{k} of {n}" if k != "disk" else "one vdev" for k, n in want)
            raise SetupFailed(f"zpool {pool} was created as {shape}, not {asked} of {', '.join(devices)}")

    def _check_btrfs(self, setup: Setup, mnt: str, devices: Sequence[str]) -> None:
        """``btrfs filesystem df`` shows the asked profile for data and metadata."""
        from ..storage import parse_btrfs_fi_df

        out = self.run(["btrfs", "filesystem", "df", "-b", mnt])
        profiles = {s.kind: s.profile.upper() for s in parse_btrfs_fi_df(out)}
        want = (setup.profile or "single").upper()
        if profiles.get("Data") != want or profiles.get("Metadata") != want:
            raise SetupFailed(
                f"btrfs on {', '.join(devices)} has data {profiles.get('Data', '?')} and metadata "
                f"{profiles.get('Metadata', '?')}, not {want} as setup {setup.name!r} asked"
            )

    def _check_dataset(self, setup: Setup, dataset: str) -> None:
        """Every property asked for took effect (``zfs get -Hp``)."""
        from ..storage import parse_zfs_get

        wanted = [k for k, _ in (setup.zfs.dataset_options if setup.zfs else ())]
        if setup.image is not None and setup.image.format == "zvol":
            wanted += ["volsize", "volblocksize"]
        if not wanted:
            return
        out = self.run(zfs_get_argv(dataset, list(dict.fromkeys(wanted))))
        got = {p.property: p.value for p in parse_zfs_get(out)}
        problems = check_zfs_properties(setup, dataset, got)
        if problems:
            raise SetupFailed(f"ZFS did not apply setup {setup.name!r} as asked: {'; '.join(problems)}")


def attach_loop_device(path: str, system: System, td: Teardown, observe: Observer, *, direct_io: bool) -> str:
    """``losetup -f --show [--direct-io=on] PATH``: the loop device's path.  Its undo step (detach
    every loop device over ``path``, found by ``losetup -j``, and wait until they are gone) is
    registered first, so that a signal between the two leaves nothing attached."""

    def detach() -> None:
        for dev in loops_of(system, path):
            observe("before-detach", {"device": dev, "kname": os.path.basename(dev)})
            rc, out, err = system.run(["losetup", "-d", dev])
            if rc != 0:
                raise SetupFailed(f"losetup -d {dev} failed: {last_words(err, out)}")
        deadline = time.monotonic() + 5
        while loops_of(system, path):
            if time.monotonic() > deadline:
                raise SetupFailed(f"loop device of {path} is still attached after losetup -d")
            time.sleep(0.05)

    td.add(f"detach the loop device of {path}", detach)
    argv = ["losetup", "-f", "--show", *(["--direct-io=on"] if direct_io else []), path]
    rc, out, err = system.run(argv)
    if rc != 0:
        raise SetupFailed(f"{' '.join(argv)} failed: {last_words(err, out)}")
    return out.strip().splitlines()[-1].strip()


def loops_of(system: System, path: str) -> list[str]:
    """The loop devices whose backing file is ``path``."""
    rc, out, _ = system.run(["losetup", "-j", path])
    if rc != 0:
        return []
    return [line.split(":", 1)[0] for line in out.splitlines() if line.strip()]


def rmdir_quiet(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.rmdir(path)


def last_words(stderr: str, stdout: str = "") -> str:
    lines = [ln.strip() for ln in (stderr + "\n" + stdout).splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def check_tools(setups: Sequence[Setup], scratch: Scratch, which: Callable[[str], str | None], *, with_loads: bool = False) -> None:
    """Refuse (one line) before anything is touched when a needed program is missing (``with_loads``:
    the study has application loads, which run in a guest filesystem inside each image)."""
    needs: dict[str, list[str]] = {}
    for s in setups:
        guest = guest_tools(s.image) if with_loads and s.image is not None else ()
        for tool in (*setup_tools(s), *guest):
            needs.setdefault(tool, []).append(s.name)
    if scratch.kind == "loop":
        needs.setdefault("losetup", []).append("--loop-file")
    missing = [t for t in needs if which(t) is None]
    if not missing:
        return
    by_setup: dict[str, list[str]] = {}
    for tool in missing:
        by_setup.setdefault(needs[tool][0], []).append(tool)
    first, tools = next(iter(by_setup.items()))
    packages = sorted({TOOL_PACKAGES.get(t, t) for t in tools})
    what = first if first == "--loop-file" else f"setup {first!r}"
    extra = " and the ZFS kernel module" if "zfsutils-linux" in packages else ""
    raise UsageError(
        f"{what} needs {' and '.join(tools)}, which {'is' if len(tools) == 1 else 'are'} not installed "
        f"(Debian package {', '.join(packages)}{extra}); nothing was changed"
    )


def image_role(setup: Setup) -> str:
    """An image setup's target as it is stored, whether fio reaches it over NBD or a load runs in its
    guest filesystem (:mod:`storbench.study.guest`): its socket and mountpoint are new each time."""
    return f"storbench-matrix/image-{setup.name}"


def _mount_role(setup: Setup) -> str:
    """A study's mountpoint as it is stored: the same in every attempt of the study (its path lies in a
    new ``storbench-matrix-XXXXXX`` directory each time, so ``--resume`` would make it a new configuration)."""
    return f"storbench-matrix/mnt-{setup.name}"
