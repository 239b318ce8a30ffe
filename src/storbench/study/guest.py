"""Edge: the guest filesystem of an image setup -- where a study's application loads run.

In a VM, dbench or PostgreSQL runs on the filesystem the guest made on its virtual disk, not on
the host's; seed 002 ran its dbench so.  fio reaches an image over NBD (qemu-nbd, fio's nbd
engine), which gives a block device to fio only.  For the loads, once fio's workloads on the
setup are done, the matrix stops qemu-nbd and :func:`make_guest_filesystem`:

1. exports the image to the host itself: ``qemu-storage-daemon`` serves it as a regular file over
   FUSE through the same format driver and cache mode qemu-nbd used
   (:func:`storbench.study.setup_images.qsd_fuse_argv`); a zvol is a block device already;
2. puts a loop device on that file (buffered: over qemu-storage-daemon 7.2's FUSE export a loop
   device with ``--direct-io=on`` reads back other bytes than were written -- checked on this
   kind of machine -- while the export itself is opened with FUSE's direct I/O, so the host's page
   cache holds none of the image, as with qemu's ``cache=none``);
3. makes the image's ``guest_fs`` on it (ext4 unless the setup says ``xfs`` or ``btrfs``) and
   mounts it on ``TMPDIR/guest-SETUP``, where each load makes its own directory.

Every undo step is registered before what it undoes exists (unmount, detach the loop device,
stop the daemon and remove its export file, remove the mountpoint); the setup's teardown runs
them last-registered first, before the image is removed.

May import: the build stage (System, Teardown, Builder, Built), images, setups, the model.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import TYPE_CHECKING

from ..model import Target
from .build import Builder, Built, SetupFailed, Teardown, attach_loop_device, critical, image_role, no_observer
from .images import ImageError
from .setup_images import guest_mkfs_argv
from .setups import Setup

if TYPE_CHECKING:
    from .images import FuseExport


def make_guest_filesystem(builder: Builder, setup: Setup, built: Built, td: Teardown) -> Built:
    """The image of ``built`` (qemu-nbd stopped already) with a guest filesystem mounted: a
    ``dir`` target for the loads, stored as the image's (the same configuration as fio's results on
    it) and described as the image is (its host filesystem, the pool's properties), with notes
    saying how the guest filesystem was made."""
    image = setup.image
    if image is None or built.image is None:
        raise ValueError(f"make_guest_filesystem: setup {setup.name!r} has no image")
    path = str(built.image["path"])
    done: list[str] = []
    if image.format == "zvol":
        device = path
    else:
        export_path = os.path.join(builder.tmpdir, f".storbench-{setup.name}.export")
        box: list[FuseExport] = []

        def stop() -> None:
            for export in box:
                export.stop()

        td.add(f"stop qemu-storage-daemon exporting {path}", stop)
        try:
            with critical():
                box.append(builder.system.export(image, path, export_path))
        except ImageError as exc:
            raise SetupFailed(f"setup {setup.name!r}: the guest filesystem's export: {exc}") from None
        done.append(" ".join(box[0].argv) + " (in the background)")
        device = attach_loop_device(export_path, builder.system, td, no_observer, direct_io=False)
        done.append(f"losetup -f --show {export_path} -> {device}")
    builder.run(guest_mkfs_argv(image.guest_fs, device), done)
    mnt = os.path.join(builder.tmpdir, f"guest-{setup.name}")
    with critical():
        os.mkdir(mnt, 0o755)
        td.add(f"remove mountpoint {mnt}", functools.partial(builder.rmdir_mountpoint, mnt))
    td.add(f"umount {mnt}", functools.partial(builder.umount, mnt))
    builder.run(["mount", device, mnt], done)
    meta = {**built.image, "guest_fs": image.guest_fs, "guest_made_with": done}
    notes = (
        f"setup {setup.name} guest: " + "; ".join(done),
        f"application loads run in a guest {image.guest_fs} made inside the image ({image.describe()}), as in a VM",
    )
    return dataclasses.replace(
        built, target=Target(kind="dir", path=mnt, role=image_role(setup)),
        notes=built.notes[:1] + notes, image=meta, export_size=None,
    )  # fmt: skip
