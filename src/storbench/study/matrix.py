"""Edge: the study driver -- the same workloads on several storage setups, one after another.

``storbench matrix`` (see :mod:`storbench.commands.matrix`) takes a scratch
device and a list of setups (:mod:`storbench.study.setups`) and, for each setup in turn:

1. wipes the device (``wipefs -a``),
2. builds the setup: ``mkfs.X`` and ``mount`` on a mountpoint in a temporary
   directory storbench owns, or ``zpool create`` + ``zfs create`` (a one-device
   pool that is never imported at boot, ``cachefile=none``), or nothing (the raw
   device); for an image setup it then creates the image (``qemu-img create``,
   or ``zfs create -V`` for a zvol) and serves it with ``qemu-nbd``,
3. applies the setup's device settings (:func:`storbench.study.devsettings.apply_settings`),
4. runs the workloads with :func:`storbench.run.runner.execute` as one run labelled
   ``<study label>/<setup name>`` (so ``storbench list --label-prefix STUDY/`` and
   ``storbench compare --label-prefix STUDY/`` find the whole study); each result
   is stored the moment it exists, with the storage description of what was built,
5. tears down what it built (stops qemu-nbd, removes the image, unmounts or
   destroys the pool, wipes the device) and restores the device settings.

The scratch device
------------------
``--loop-file PATH --loop-size SIZE``: storbench creates PATH (it must not
exist), attaches it with ``losetup -f --show --direct-io=on`` (no double caching
through the file's page cache), and at the end detaches it and removes the file
(kept with ``--keep-files``).

``--device DEV --destroy-data DEV``: a real device passes the data-safety guard
(:mod:`storbench.targets.guard`): not read-only, not holding ``/`` or the results
database, not mounted, no holders, not claimed by anything.  ``--destroy-data``
must repeat ``--device`` character for character.  One rule differs from
``storbench run``: a device that holds a signature (a filesystem, a ZFS label, a
partition table) is accepted **only** when ``--destroy-data`` names it, because
the matrix wipes it before every setup anyway; without the flag the refusal names
what was found and the exact flag to pass.

Guarantees
----------
Whatever fails or interrupts a study -- a failing ``mkfs``, fio killed, Ctrl-C or
SIGTERM -- everything storbench created is torn down (mounts, qemu-nbd servers,
images, zpools, loop devices, temporary directories), every device setting is
restored, and the results stored so far stay stored.  Teardown steps are
registered *before* the thing they undo is created and check whether it exists,
and SIGINT/SIGTERM are held while tearing down (acted on afterwards).  A setup
that fails to build is recorded as a failed run and the study goes on with the
next setup; an interrupt stops the study (exit 130).  Only SIGKILL of storbench
itself defeats this (qemu-nbd and fio still die with it: parent-death signal).

``--resume STUDY`` continues a study from the plan stored in its runs: setups
whose run is complete are skipped; an incomplete one (interrupted, a workload
failed, or its build failed) is built afresh and only its missing workloads and
repetitions are run (:func:`storbench.run.runner.execute` with ``previous=``).

The edge is injectable (:class:`System`: command runner, ``which``, sysfs and
/dev roots, the qemu-nbd starter, the pool name) so the ZFS paths are tested
with a fake command runner on machines without ZFS.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..curve.model import CurvePlan
from ..errors import Interrupted, StorbenchError, TargetError, UsageError
from ..jobs.jobfile import build_job
from ..model import JobSpec, Overrides, ResultRecord, RunInfo, Target, Workload
from ..process import signals
from ..run import runner as runner_mod
from ..run.runner import Repeat
from ..units import fio_size, parse_size
from .devsettings import apply_settings, restore_settings
from .images import ImageError, create_image, run_command, socket_path_for, start_server
from .setups import (
    TOOL_PACKAGES,
    Setup,
    SetupError,
    check_zfs_properties,
    devices_needed,
    expected_vdevs,
    mkfs_argv,
    mount_argv,
    setup_from_table,
    setup_to_table,
    setup_tools,
    wipe_argv,
    zfs_create_argv,
    zfs_get_argv,
    zpool_create_argv,
    zpool_destroy_argv,
)

#: Version of the study plan stored in each run's meta (``meta["study"]``).
STUDY_FORMAT_VERSION = 1
#: mkfs.xfs refuses filesystems smaller than 300 MB.
XFS_MIN_BYTES = 300 * 1000 * 1000
MIN_LOOP_BYTES = 64 * 1024 * 1024
ZVOL_APPEAR_TIMEOUT_S = 30.0
UMOUNT_TRIES = 5
#: How long a pool that says "pool is busy" is retried before its teardown fails.
POOL_BUSY_TIMEOUT_S = 20.0


class SetupFailed(StorbenchError):
    """Building or tearing down a setup failed (one line naming the command and its words)."""


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Scratch:
    """Where setups are built: devices the user gave, loop files storbench makes, or none
    (every setup is an image on a given directory).

    ``device``: ``paths`` are the devices as given (``--device`` or ``--devices``; ``path`` is
    the first).  ``loop``: one file at ``path`` (``--loop-file``), or ``count`` new files in a
    directory storbench makes under ``path`` (``--loop-files N``), each ``size`` large.
    """

    kind: str  # "device" | "loop" | "none"
    path: str | None = None
    size: str | None = None  # a loop file's size (fio form)
    destroy: tuple[str, ...] = ()  # --destroy-data values (never stored)
    paths: tuple[str, ...] = ()  # kind "device": every device, in order
    count: int = 0  # kind "loop" with --loop-files: how many files

    @property
    def device_count(self) -> int:
        if self.kind == "device":
            return len(self.paths) or (1 if self.path else 0)
        if self.kind == "loop":
            return self.count or 1
        return 0

    def meta(self) -> dict:
        return {"kind": self.kind, "path": self.path, "size": self.size, "paths": list(self.paths), "count": self.count}


@dataclass(frozen=True)
class Study:
    """What a study runs: its label, setups and workloads, and how."""

    label: str
    setups: tuple[Setup, ...]
    workloads: tuple[Workload, ...]
    overrides: Overrides = field(default_factory=Overrides)
    repeat: Repeat = field(default_factory=Repeat)
    suite: str | None = None
    keep_files: bool = False
    prefill: bool = False  # one sequential write pass over each setup's test area before its workloads
    curve: CurvePlan | None = None  # matrix --curve: the one workload's load raised step by step on every setup

    def meta(self, scratch: Scratch) -> dict:
        return {
            "format_version": STUDY_FORMAT_VERSION,
            "label": self.label,
            "setups": [{"name": s.name, **setup_to_table(s)} for s in self.setups],
            "workloads": [
                {"name": w.name, "description": w.description, "options": [list(o) for o in w.options],
                 "headline": w.headline, "origin": w.origin}
                for w in self.workloads
            ],
            "overrides": {"size": self.overrides.size, "runtime": self.overrides.runtime,
                          "default_size": self.overrides.default_size, "extra": [list(e) for e in self.overrides.extra]},
            "repeat": dataclasses.asdict(self.repeat),
            "suite": self.suite,
            "keep_files": self.keep_files,
            "prefill": self.prefill,
            "curve": self.curve.meta() if self.curve is not None else None,
            "scratch": scratch.meta(),
        }

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> Study:
        """The study stored by :meth:`meta`; :class:`UsageError` when it cannot be read back."""
        try:
            setups = []
            for table in meta["setups"]:
                table = dict(table)
                name = table.pop("name")
                setups.append(setup_from_table(name, table, label=f"stored study {meta['label']!r}"))
            workloads = tuple(
                Workload(name=w["name"], description=w["description"], options=tuple((k, v) for k, v in w["options"]),
                         headline=w.get("headline", "iops"), origin=w.get("origin", "built-in"))
                for w in meta["workloads"]
            )  # fmt: skip
            ov = meta["overrides"]
            overrides = Overrides(
                size=ov["size"], runtime=ov["runtime"], default_size=ov.get("default_size", "1g"),
                extra=tuple((k, v) for k, v in ov.get("extra", [])),
            )  # fmt: skip
            return cls(
                label=meta["label"], setups=tuple(setups), workloads=workloads, overrides=overrides,
                repeat=Repeat(**meta["repeat"]), suite=meta.get("suite"), keep_files=bool(meta.get("keep_files")),
                prefill=bool(meta.get("prefill", False)),
                curve=CurvePlan.from_meta(meta["curve"]) if meta.get("curve") else None,
            )  # fmt: skip
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"this study cannot be resumed: its stored plan is incomplete ({exc})") from None


@dataclass(frozen=True)
class SetupOutcome:
    """What became of one setup: its run and status (``complete``, ``incomplete``, ``failed``)."""

    setup: str
    run_id: int | None
    status: str
    reason: str | None = None
    skipped: bool = False  # resumed study: the run was complete already
    stored: int = 0  # results stored by this invocation


@dataclass(frozen=True)
class StudyOutcome:
    label: str
    setups: tuple[SetupOutcome, ...]

    @property
    def run_ids(self) -> tuple[int, ...]:
        return tuple(o.run_id for o in self.setups if o.run_id is not None)

    @property
    def problems(self) -> tuple[SetupOutcome, ...]:
        return tuple(o for o in self.setups if o.status != "complete")


# --------------------------------------------------------------------------- the environment


Observer = Callable[[str, Mapping[str, Any]], None]


def _no_observer(event: str, info: Mapping[str, Any]) -> None:
    pass


@dataclass
class System:
    """Everything the study does to the machine goes through here (tests swap pieces).

    ``run(argv) -> (returncode, stdout, stderr)`` runs one program (no shell);
    ``serve(image, image_path, socket_path)`` starts qemu-nbd and returns an object
    with ``stop()`` (:func:`storbench.study.images.start_server`).
    """

    run: Callable[[Sequence[str]], tuple[int, str, str]] = run_command
    which: Callable[[str], str | None] = shutil.which
    sys_root: str = "/sys"
    dev_root: str = "/dev"
    serve: Callable[..., Any] = start_server
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


def _check_zfs(setups: Sequence[Setup], system: System) -> None:
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
        return  # _check_tools names the missing package
    if rc != 0:
        words = _last_words(err, out) or f"exit status {rc}"
        hint = "start zfs-fuse" if impl == "zfs-fuse" or os.path.exists(ZFS_FUSE_SOCKET) else "load the zfs module (modprobe zfs) or start zfs-fuse"
        raise UsageError(f"setup {zfs_setups[0].name!r} needs ZFS, which is not answering (zpool status -x: {words}); {hint}; nothing was changed")


# --------------------------------------------------------------------------- signals


@contextlib.contextmanager
def _critical() -> Iterator[None]:
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
    image: Mapping[str, Any] | None = None  # image setups: what was created and how it is served


class Builder:
    """Builds one setup on the scratch device, registering each undo step first."""

    def __init__(self, system: System, tmpdir: str, device: str | Sequence[str] | None, keep_files: bool) -> None:
        self.system = system
        self.tmpdir = tmpdir
        self.devices: list[str] = [device] if isinstance(device, str) else list(device or [])
        self.keep_files = keep_files

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
            words = _last_words(err, out) or f"exit status {rc}"
            if rc == 127:
                words = f"{argv[0]} is not installed (Debian package {TOOL_PACKAGES.get(argv[0], argv[0])})"
            raise SetupFailed(f"{' '.join(argv)} failed: {words}")
        if done is not None:
            done.append(" ".join(argv))
        return out

    # ------------------------------------------------------------ pieces

    def _mountpoint(self, setup: Setup, td: Teardown) -> str:
        path = os.path.join(self.tmpdir, f"mnt-{setup.name}")
        with _critical():
            os.mkdir(path, 0o755)
            td.add(f"remove mountpoint {path}", lambda: self._rmdir_mountpoint(path))
        return path

    def _rmdir_mountpoint(self, path: str) -> None:
        if _mount_fstype(path) == "fuse.zfs" and not self._zfs_answers():
            # the ZFS daemon (zfs-fuse) died: its mount is left behind, dead, on our own mountpoint
            rc, out, err = self.system.run(["umount", "-l", path])
            if rc != 0:
                raise SetupFailed(f"umount -l {path} failed: {_last_words(err, out)}; the dead ZFS mount is still there")
        if self.system.is_mount(path):
            raise SetupFailed(f"{path} is still mounted; not removed")
        _rmdir(path)

    def _zfs_answers(self) -> bool:
        rc, _out, _err = self.system.run(["zpool", "status", "-x"])
        return rc == 0

    def _umount(self, path: str) -> None:
        last = ""
        for attempt in range(UMOUNT_TRIES):
            if not self.system.is_mount(path):
                return
            rc, out, err = self.system.run(["umount", path])
            if rc == 0 and not self.system.is_mount(path):
                return
            last = _last_words(err, out) or f"exit status {rc}"
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
            words = _last_words(err, out) or f"exit status {rc}"
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
        if setup.uses_scratch:
            if dev is None:
                raise SetupFailed(f"setup {setup.name!r} is built on a scratch device: give --device or --loop-file")
            used = self.devices_for(setup)
            for d in used:
                self.run(wipe_argv(d), done)
                if not self.keep_files:  # leave the device blank (with --keep-files: the last setup stays for a look)
                    td.add(f"wipefs -a {d}", lambda d=d: self._wipe(d))
        if setup.mkfs in ("ext4", "xfs", "btrfs"):
            assert dev is not None
            self.run(mkfs_argv(setup, used), done)
            mnt = self._mountpoint(setup, td)
            td.add(f"umount {mnt}", lambda: self._umount(mnt))
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
        holder_box: list[Any] = []

        def stop() -> None:
            for server in holder_box:
                server.stop()

        td.add("stop qemu-nbd", stop)
        try:
            server = self.system.serve(image, path, sock)
        except ImageError as exc:
            raise SetupFailed(str(exc)) from None
        holder_box.append(server)
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
            target=Target(kind="nbd", path=sock), describe_path=path, notes=notes, export_size=image.size, image=meta,
        )  # fmt: skip

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


def _mount_fstype(path: str, mounts: str = "/proc/self/mounts") -> str | None:
    """The filesystem type mounted at ``path`` (the last mount there), from the kernel's table."""
    try:
        with open(mounts, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    target = os.path.abspath(path)
    found = None
    for line in lines:
        f = line.split()
        if len(f) >= 3 and f[1].replace("\\040", " ") == target:
            found = f[2]
    return found


def _rmdir(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.rmdir(path)


def _last_words(stderr: str, stdout: str = "") -> str:
    lines = [ln.strip() for ln in (stderr + "\n" + stdout).splitlines() if ln.strip()]
    return lines[-1] if lines else ""


# --------------------------------------------------------------------------- the scratch device


@dataclass(frozen=True)
class ScratchDevice:
    """The device setups are built on: its path (what mkfs is given) and kernel name."""

    path: str | None
    kname: str | None


def _check_tools(setups: Sequence[Setup], scratch: Scratch, which: Callable[[str], str | None]) -> None:
    """Refuse (one line) before anything is touched when a needed program is missing."""
    needs: dict[str, list[str]] = {}
    for s in setups:
        for tool in setup_tools(s):
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


def _check_scratch_plan(setups: Sequence[Setup], scratch: Scratch) -> None:
    if any(s.uses_scratch for s in setups) and scratch.kind == "none":
        first = next(s for s in setups if s.uses_scratch)
        raise UsageError(f"setup {first.name!r} is built on a scratch device: give --device DEV --destroy-data DEV or --loop-file PATH --loop-size SIZE")
    for s in setups:
        if s.uses_scratch:
            devices_needed(s, scratch.device_count)  # refuses, in one line, a setup needing more devices
    if scratch.kind == "loop":
        size = parse_size(scratch.size or "0")
        if size < MIN_LOOP_BYTES:
            raise UsageError(f"--loop-size {scratch.size} is too small: give at least 64m")
        xfs = [s.name for s in setups if s.mkfs == "xfs"]
        if xfs and size < XFS_MIN_BYTES:
            raise UsageError(f"--loop-size {scratch.size} is too small for setup {xfs[0]!r}: mkfs.xfs needs at least 300 MB (give --loop-size 400m)")


def check_scratch_device(path: str, destroy: Sequence[str], *, db_path: str | None, sys_root: str = "/sys") -> ScratchDevice:
    """The guard for ``--device``: every rule of :mod:`storbench.targets.guard` except that a signature
    is accepted when ``--destroy-data`` names the device exactly (the matrix wipes it anyway)."""
    from ..targets.guard import BlockTargetRefused, check_block_target, gather_device_facts

    facts = gather_device_facts(path, db_path=db_path, sys_root=sys_root, probe_exclusive=True)
    named = path in destroy
    try:
        check_block_target(
            dataclasses.replace(facts, signatures=()) if named else facts,
            writes=True, destroy=tuple(destroy), writing=("storbench matrix",),
        )  # fmt: skip
    except BlockTargetRefused as exc:
        if exc.rule in ("signature", "destroy-data", "destroy-data-mismatch"):
            found = f" (it holds {', '.join(dict.fromkeys(facts.signatures))})" if facts.signatures else ""
            raise BlockTargetRefused(
                exc.rule,
                f"refusing to use block device {path!r} [{exc.rule}]: storbench matrix wipes it and builds every "
                f"setup on it, destroying its data{found}; pass --destroy-data {path}, spelled exactly as --device",
            ) from None
        raise
    return ScratchDevice(path=facts.realpath, kname=facts.kname)


def _loop_files(scratch: Scratch, td: Teardown, keep_files: bool) -> list[str]:
    """The loop file (``--loop-file``), or the paths of ``count`` new files in a directory
    storbench makes under ``scratch.path`` (``--loop-files N``; removed with them)."""
    if not scratch.count:
        return [os.path.abspath(scratch.path or "")]
    parent = os.path.abspath(scratch.path or ".")
    with _critical():
        try:
            folder = tempfile.mkdtemp(prefix=".storbench-loops-", dir=parent)
        except OSError as exc:
            raise TargetError(f"cannot make the loop files' directory in {parent}: {exc.strerror or exc}") from None
        if not keep_files:
            td.add(f"remove {folder}", lambda: _rmdir(folder))
    return [os.path.join(folder, f"disk{i}.img") for i in range(scratch.count)]


def _attach_loop(scratch: Scratch, system: System, td: Teardown, observe: Observer, keep_files: bool) -> ScratchDevice:
    path = os.path.abspath(scratch.path or "")
    if os.path.lexists(path):
        raise TargetError(f"--loop-file {path} exists; give a new path (storbench creates the file and removes it afterwards)")
    size = parse_size(scratch.size or "0")
    with _critical():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as exc:
            raise TargetError(f"cannot create --loop-file {path}: {exc.strerror or exc}") from None
        if not keep_files:
            td.add(f"remove {path}", lambda: _unlink(path))
    try:
        os.ftruncate(fd, size)
    except OSError as exc:
        raise TargetError(f"cannot make --loop-file {path} {scratch.size} large: {exc.strerror or exc}") from None
    finally:
        os.close(fd)

    def detach() -> None:
        devices = _loops_of(system, path)
        for dev in devices:
            observe("before-detach", {"device": dev, "kname": os.path.basename(dev)})
            rc, out, err = system.run(["losetup", "-d", dev])
            if rc != 0:
                raise SetupFailed(f"losetup -d {dev} failed: {_last_words(err, out)}")
        deadline = time.monotonic() + 5
        while _loops_of(system, path):
            if time.monotonic() > deadline:
                raise SetupFailed(f"loop device of {path} is still attached after losetup -d")
            time.sleep(0.05)

    td.add(f"detach the loop device of {path}", detach)
    rc, out, err = system.run(["losetup", "-f", "--show", "--direct-io=on", path])
    if rc != 0:
        raise SetupFailed(f"losetup -f --show --direct-io=on {path} failed: {_last_words(err, out)}")
    dev = out.strip().splitlines()[-1].strip()
    kname = os.path.basename(dev)
    return ScratchDevice(path=dev, kname=kname)


def loop_direct_io(kname: str, sys_root: str = "/sys") -> bool | None:
    """Whether the loop device reads its backing file with direct I/O (``loop/dio``); None: cannot tell."""
    try:
        with open(os.path.join(sys_root, "block", kname, "loop", "dio"), encoding="ascii") as fh:
            return fh.read().strip() == "1"
    except OSError:
        return None


def _loops_of(system: System, path: str) -> list[str]:
    rc, out, _ = system.run(["losetup", "-j", path])
    if rc != 0:
        return []
    return [line.split(":", 1)[0] for line in out.splitlines() if line.strip()]


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


# --------------------------------------------------------------------------- telemetry and sink


class _SetupTelemetry:
    """The storage description of what was built (the image's filesystem for an nbd target),
    with notes saying how it was built."""

    def __init__(self, built: Built, inner: Any) -> None:
        self.built = built
        self.inner = inner

    def describe(self, target: Target, fio_version: str):
        storage = self.inner.describe(Target(kind="dir", path=self.built.describe_path), fio_version)
        if storage is None:
            return None
        return dataclasses.replace(storage, notes=tuple(storage.notes) + tuple(self.built.notes))

    def sampler(self, storage):
        return self.inner.sampler(storage)

    def backend_sampler(self, storage, target=None, area_bytes=None):
        inner = getattr(self.inner, "backend_sampler", None)
        return inner(storage, target, area_bytes) if inner is not None else None


class _ImageSink:
    """Adds the image's creation and serving options to every result's ``space`` mapping."""

    def __init__(self, sink: Any, image: Mapping[str, Any] | None) -> None:
        self.sink = sink
        self.image = image

    def add_result(self, record: ResultRecord) -> int:
        if self.image is not None:
            space = dict(record.space or {})
            space["image"] = dict(self.image)
            record = dataclasses.replace(record, space=space)
        return self.sink.add_result(record)


# --------------------------------------------------------------------------- study runs in the store


def setup_label(study_label: str, setup_name: str) -> str:
    return f"{study_label}/{setup_name}"


def study_runs(store: Any, label: str) -> dict[str, RunInfo]:
    """The newest run of each setup of study ``label`` (by setup name)."""
    out: dict[str, RunInfo] = {}
    for info in store.list_runs(label_prefix=f"{label}/"):  # newest first
        meta = store.run_meta(info.run_id)
        study = meta.get("study") if isinstance(meta, dict) else None
        if not isinstance(study, dict) or study.get("label") != label:
            continue
        name = meta.get("setup_name")
        if isinstance(name, str) and name not in out:
            out[name] = info
    return out


def stored_study(store: Any, label: str) -> tuple[Study, Scratch]:
    """The plan of study ``label`` from its newest run (``--resume``)."""
    for info in store.list_runs(label_prefix=f"{label}/"):
        meta = store.run_meta(info.run_id)
        study = meta.get("study") if isinstance(meta, dict) else None
        if isinstance(study, dict) and study.get("label") == label:
            sm = study.get("scratch") or {}
            scratch = Scratch(
                kind=sm.get("kind", "none"), path=sm.get("path"), size=sm.get("size"),
                paths=tuple(sm.get("paths") or ()), count=int(sm.get("count") or 0),
            )  # fmt: skip
            return Study.from_meta(study), scratch
    raise UsageError(f"no study labelled {label!r} is stored (see 'storbench list --label-prefix {label}/')")


# --------------------------------------------------------------------------- the driver


@dataclass
class _Context:
    study: Study
    scratch: Scratch
    store: Any
    executor: Any
    reporter: Any
    clock: Callable[[], str]
    system: System
    observe: Observer
    telemetry: Any
    argv: Sequence[str]
    fio_version: str
    existing: dict[str, RunInfo]
    say: Callable[[str], None]


def run_study(
    study: Study,
    scratch: Scratch,
    *,
    store: Any,
    executor: Any,
    reporter: Any,
    clock: Callable[[], str],
    resume: bool = False,
    system: System | None = None,
    db_path: str | None = None,
    observe: Observer | None = None,
    telemetry: Any = None,
    argv: Sequence[str] = (),
    say: Callable[[str], None] | None = None,
) -> StudyOutcome:
    """Run every setup of ``study`` in turn on ``scratch`` (see the module doc).

    Raises :class:`UsageError` before touching anything when the plan cannot run
    (missing tools, a label already used, a device the guard refuses),
    :class:`Interrupted` on Ctrl-C/SIGTERM after tearing everything down, and
    :class:`SetupFailed` when a teardown step failed (what is left is named).
    A setup that fails to build or whose workloads fail does not stop the study:
    its outcome says so.
    """
    system = system or System()
    observe = observe or _no_observer
    say = say or (lambda text: None)
    _check_tools(study.setups, scratch, system.which)
    _check_scratch_plan(study.setups, scratch)
    _check_zfs(study.setups, system)
    existing = study_runs(store, study.label)
    if existing and not resume:
        raise UsageError(
            f"study {study.label!r} already has {len(existing)} run(s); continue it with --resume {study.label} "
            "or give another --label"
        )
    scratch_td = Teardown()
    outcomes: list[SetupOutcome] = []
    interrupted: str | None = None
    failure: StorbenchError | None = None
    with signals.as_interrupt():
        try:
            devices: list[ScratchDevice] = []
            if scratch.kind == "device":
                devices = [
                    check_scratch_device(p, scratch.destroy, db_path=db_path, sys_root=system.sys_root)
                    for p in (scratch.paths or (scratch.path or "",))
                ]
                real = [d.path for d in devices]
                if len(set(real)) != len(real):
                    raise UsageError(f"--devices names one device twice ({', '.join(scratch.paths)}); give each once")
            with _critical():
                tmpdir = tempfile.mkdtemp(prefix="storbench-matrix-")
                scratch_td.add(f"remove {tmpdir}", lambda: _remove_tmpdir(tmpdir, system))
            if scratch.kind == "loop":
                files = _loop_files(scratch, scratch_td, study.keep_files)
                for path in files:
                    dev = _attach_loop(Scratch(kind="loop", path=path, size=scratch.size), system, scratch_td, observe, study.keep_files)
                    devices.append(dev)
                    dio = loop_direct_io(dev.kname or "", system.sys_root)
                    how = {True: "direct I/O", False: "NO direct I/O: results include the host page cache", None: "direct I/O unknown"}[dio]
                    say(f"scratch device: {dev.path} (loop device over {path}, {how})")
            elif scratch.kind == "device":
                for dev in devices:
                    say(f"scratch device: {dev.path}")
            device = devices[0] if devices else ScratchDevice(path=None, kname=None)
            observe("scratch-ready", {"device": device.path, "kname": device.kname, "tmpdir": tmpdir,
                                      "devices": [d.path for d in devices]})  # fmt: skip
            ctx = _Context(
                study=study, scratch=scratch, store=store, executor=executor, reporter=reporter, clock=clock,
                system=system, observe=observe, telemetry=telemetry or runner_mod.SystemTelemetry(), argv=argv,
                fio_version=executor.version(), existing=existing, say=say,
            )  # fmt: skip
            builder = Builder(system, tmpdir, [d.path for d in devices if d.path], study.keep_files)
            for index, setup in enumerate(study.setups):
                outcome = _run_setup(ctx, builder, devices, setup, index)
                outcomes.append(outcome)
        except KeyboardInterrupt as exc:
            interrupted = f"interrupted ({signals.how(exc)})"
        except _SetupInterrupted as exc:
            outcomes.append(exc.outcome)
            interrupted = exc.message
        except StorbenchError as exc:
            failure = exc
        finally:
            problems, pending = scratch_td.run()
            if pending and interrupted is None and failure is None:
                interrupted = f"interrupted ({pending[0]}) while tearing down"
    stored = sum(o.stored for o in outcomes)
    if problems:
        left = "; ".join(problems)
        raise SetupFailed(
            (f"{interrupted}; " if interrupted else (f"{failure}; " if failure else ""))
            + f"teardown incomplete, left behind: {left}"
        )
    if interrupted is not None:
        raise Interrupted(
            f"{interrupted}; {stored} result(s) stored by this invocation; everything storbench set up was torn down "
            f"and device settings restored; continue with 'storbench matrix --resume {study.label}'"
        )
    if failure is not None:
        raise failure
    return StudyOutcome(label=study.label, setups=tuple(outcomes))


def _remove_tmpdir(tmpdir: str, system: System) -> None:
    """Remove storbench's temporary directory -- never through a mountpoint."""
    if not os.path.isdir(tmpdir):
        return
    for name in os.listdir(tmpdir):
        path = os.path.join(tmpdir, name)
        if system.is_mount(path):
            raise SetupFailed(f"{path} is still mounted; {tmpdir} was left in place")
    shutil.rmtree(tmpdir)


class _SetupInterrupted(Exception):
    def __init__(self, message: str, outcome: SetupOutcome) -> None:
        super().__init__(message)
        self.message = message
        self.outcome = outcome


def _specs(study: Study, built: Built, tmpdir_for_probe: str, fio_path: str | None) -> list[JobSpec]:
    specs = []
    engine: str | None = None
    for workload in study.workloads:
        if workload.option("ioengine") == "auto" and built.target.kind != "nbd":
            if engine is None:
                from ..run.engines import probe_ioengine

                where = built.target.path if built.target.kind == "dir" else tmpdir_for_probe
                engine = probe_ioengine(fio_path or "fio", where)
            specs.append(build_job(workload, built.target, study.overrides, ioengine=engine, export_size=built.export_size))
        else:
            specs.append(build_job(workload, built.target, study.overrides, export_size=built.export_size))
    return specs


def _run_setup(ctx: _Context, builder: Builder, devices: Sequence[ScratchDevice], setup: Setup, index: int) -> SetupOutcome:
    device = devices[0] if devices else ScratchDevice(path=None, kname=None)
    study, store = ctx.study, ctx.store
    label = setup_label(study.label, setup.name)
    total = len(study.setups)
    info = ctx.existing.get(setup.name)
    if info is not None and info.status == "complete":
        ctx.say(f"setup {index + 1}/{total} {setup.name}: complete already (run {info.run_id}), skipped")
        return SetupOutcome(setup=setup.name, run_id=info.run_id, status="complete", skipped=True)
    ctx.say(f"setup {index + 1}/{total} {setup.name}: {setup.summary()}")
    old: list[ResultRecord] = []
    # a signal while the run is created or reopened is raised inside the try below, which ends
    # the run as interrupted (raised here, it left a run 'running' with no result: issue 25)
    with signals.held() as pending_at_start:
        if info is not None:
            run_id = info.run_id
            old = [r for r in store.results(run_id) if r.host in (None, "all")]
            store.reopen_run(run_id)
        else:
            meta = {
                "host": runner_mod.host_facts(ctx.fio_version),
                "argv": list(ctx.argv),
                "study": study.meta(ctx.scratch),
                "setup_name": setup.name,
                "setup": {"name": setup.name, **setup_to_table(setup)},
            }
            run_id = store.create_run(label=label, kind="run", suite=study.suite, meta=meta)
    publish = getattr(ctx.reporter, "publish_live", None)
    if publish is not None:  # storbench serve's live page: this setup's run, as part of its study
        publish(store, run_id, total=0, kind="matrix",
                study={"label": study.label, "setup": setup.name, "index": index, "setups": [s.name for s in study.setups]})  # fmt: skip
    td = Teardown()  # what was built, undone in reverse
    settings_td = Teardown()  # device settings, restored after everything else
    outcome: runner_mod.RunOutcome | None = None
    error: StorbenchError | None = None
    interrupted: str | None = None
    specs: list[JobSpec] = []
    try:
        signals.raise_noted(pending_at_start)
        built = builder.build(setup, td)
        if setup.device is not None:
            if device.kname is None:
                raise SetupFailed(f"setup {setup.name!r} has device settings but there is no scratch device")
            used = builder.devices_for(setup)
            for dev in devices:
                if dev.path not in used or dev.kname is None:
                    continue
                kname = dev.kname
                with _critical():
                    original = apply_settings(kname, setup.device, ctx.system.sys_root)
                    settings_td.add(
                        f"restore {kname} settings",
                        lambda kname=kname, original=original: restore_settings(kname, original, ctx.system.sys_root),
                    )
                applied_now = ", ".join(f"{f}={getattr(setup.device, f)!r}" for f in setup.device.changed())
                built = dataclasses.replace(built, notes=built.notes + (f"device {kname}: {applied_now} (restored afterwards)",))
        ctx.observe("setup-ready", {"setup": setup.name, "target": built.target, "device": device.path, "kname": device.kname})
        for note in built.notes[1:]:
            ctx.say(f"  {note}")
        specs = _specs(study, built, builder.tmpdir, getattr(ctx.executor, "path", None))
        replaced = [ln for s in specs[:1] for ln in s.job_text.splitlines() if ln.startswith("# storbench: ")]
        for line in replaced:
            ctx.say(f"  {line[len('# storbench: '):]}")
        runner_mod.check_free_space(specs)
        previous: dict[tuple[str, str], list[ResultRecord]] = {}
        for rec in old:  # the setup is built afresh: earlier results count for the new target
            previous.setdefault((rec.workload, built.target.display), []).append(rec)
        if study.curve is not None:
            _run_curve(ctx, built, setup, run_id, label, builder.tmpdir)
        else:
            outcome = runner_mod.execute(
                run_id, specs, executor=ctx.executor, sink=_ImageSink(store, built.image), reporter=ctx.reporter,
                label=label, clock=ctx.clock, keep_files=study.keep_files, repeat=study.repeat,
                telemetry=_SetupTelemetry(built, ctx.telemetry), previous=previous, prefill=study.prefill,
            )  # fmt: skip
    except Interrupted as exc:  # runner: "interrupted (SIGTERM) during workload 'x'; N result(s) were stored before it"
        interrupted = f"{str(exc).split(';', 1)[0]} of setup {setup.name!r}"
    except KeyboardInterrupt as exc:
        interrupted = f"interrupted ({signals.how(exc)}) in setup {setup.name!r} (before its workloads ran)"
    except StorbenchError as exc:
        error = exc
    except BaseException as exc:  # a bug, or SystemExit (rich exits on a broken pipe): tear down, then let it go on
        td.run()
        settings_td.run()
        with contextlib.suppress(Exception):
            status = "incomplete" if old or _count_new(store, run_id, old) else "failed"
            store.finish_run(run_id, status, reason=f"storbench stopped: {type(exc).__name__}: {exc}")
        raise
    problems, pending = td.run()
    more, pending2 = settings_td.run()
    problems += more
    pending += pending2
    ctx.observe("setup-done", {"setup": setup.name, "device": device.path, "kname": device.kname})
    left = f"; teardown left: {'; '.join(problems)}" if problems else ""
    if interrupted is not None:
        stored_now = _count_new(store, run_id, old)
        store.finish_run(run_id, "incomplete", reason=interrupted + left)
        if problems:  # what is left behind matters more than the interrupt
            raise SetupFailed(f"{interrupted}; teardown failed, the study stops: {'; '.join(problems)}")
        raise _SetupInterrupted(
            interrupted, SetupOutcome(setup=setup.name, run_id=run_id, status="incomplete", reason=interrupted, stored=stored_now)
        )
    stored_now = len(outcome.stored) if outcome is not None else (_count_new(store, run_id, old) if study.curve is not None else 0)
    had = bool(old) or stored_now > 0
    if error is not None:
        reason = f"setup {setup.name!r}: {error}"
        status = "incomplete" if had else "failed"
    elif outcome is not None and outcome.failures:
        first = outcome.failures[0]
        reason = (
            f"{len(outcome.failures)} of {len(specs)} workload(s) failed; first: "
            f"workload {first.workload!r} on {first.target}: {first.reason}"
        )
        status = "incomplete" if had else "failed"
    else:
        reason, status = None, "complete"
    if problems:
        reason = (reason or "") + left if reason else left[2:]
        status = "incomplete" if status == "complete" else status
    store.finish_run(run_id, status, reason=reason)
    if status != "complete":
        ctx.say(f"setup {setup.name}: {status}: {reason}")
    result = SetupOutcome(setup=setup.name, run_id=run_id, status=status, reason=reason, stored=stored_now)
    if problems:
        raise SetupFailed(f"setup {setup.name!r}: teardown failed, the study stops: {'; '.join(problems)}")
    if pending:
        raise _SetupInterrupted(f"interrupted ({pending[0]}) after setup {setup.name!r}", result)
    return result


def _run_curve(ctx: _Context, built: Built, setup: Setup, run_id: int, label: str, tmpdir: str) -> None:
    """``matrix --curve``: the study's one workload raised step by step on this setup's
    target (:class:`curve_runner.CurveRunner`), each step stored in the setup's run; the
    curve, its knee and SLA ceiling go into the run's meta (``curve_result``), as for
    ``storbench curve``.  The steps' test file is removed before the setup is torn down."""
    from ..curve.runner import CurveRunner

    assert ctx.study.curve is not None
    steps, shares, stop, limit = ctx.study.curve.parsed()
    workload = ctx.study.workloads[0]
    curve = CurveRunner(
        run_id, workload, built.target, ctx.study.overrides, executor=ctx.executor, store=ctx.store, reporter=ctx.reporter,
        telemetry=_SetupTelemetry(built, ctx.telemetry), repeat=ctx.study.repeat.count, clock=ctx.clock, cwd=tmpdir,
        sink=_ImageSink(ctx.store, built.image), export_size=built.export_size, label=label,
    )  # fmt: skip
    try:
        result = curve.run(steps, shares, stop, limit)
    finally:
        if not ctx.study.keep_files:
            curve.remove_files()
    result["setup"] = setup.name
    for line in result["lines"]:
        ctx.say(f"  {line}")
    ctx.store.update_run_meta(run_id, {"curve_result": {"workload": workload.name, "curves": [result]}})


def _stored_count(store: Any, run_id: int) -> int:
    return len(store.results(run_id))


def _count_new(store: Any, run_id: int, old: Sequence[ResultRecord]) -> int:
    return max(0, _stored_count(store, run_id) - len(old))


# --------------------------------------------------------------------------- labels


def default_label(clock: Callable[[], str]) -> str:
    """``matrix-20261130-133909`` from the clock's ISO time."""
    digits = re.sub(r"[^0-9]", "", clock())[:14]
    return f"matrix-{digits[:8]}-{digits[8:14]}" if len(digits) >= 14 else f"matrix-{digits or 'study'}"


def validate_label(label: str) -> str:
    if not label or re.search(r"[\x00-\x1f\x7f]", label):
        raise UsageError("--label must be one line of text")
    if label.endswith("/"):
        raise UsageError(f"--label {label!r} must not end with '/' (setup names are added after a '/')")
    return label


def loop_size(text: str) -> str:
    """``--loop-size`` in fio's form, checked."""
    return fio_size(text)


def _mount_role(setup: Setup) -> str:
    """A study's mountpoint as it is stored: the same in every attempt of the study (its path lies in a
    new ``storbench-matrix-XXXXXX`` directory each time, so ``--resume`` would make it a new configuration)."""
    return f"storbench-matrix/mnt-{setup.name}"
