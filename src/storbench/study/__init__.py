"""Studies: the same workloads on several storage setups, one after another (``storbench matrix``).

The rooms, in the order a study goes through them:

- :mod:`.setups` says what a setup is (a filesystem with its options, a ZFS pool, an image format,
  a device setting) and reads the TOML (pure);
- :mod:`.plan` what a study is (setups, workloads, scratch), how its plan is stored in its runs and
  read back for ``--resume``, its outcome and labels (pure);
- :mod:`.scratch` the scratch devices: a guarded real device or loop files storbench makes;
- :mod:`.build` builds one setup on them and tears it down (mkfs/mount, zpool/zfs, btrfs
  profiles), every undo step registered first; :mod:`.images` serves VM disk images through
  qemu-nbd; :mod:`.devsettings` sets a block device's write cache, scheduler or read-ahead for
  one setup and always puts it back;
- :mod:`.matrix` the driver: each setup in turn built, measured through :mod:`storbench.run`
  (one run per setup, each result stored as it exists), torn down.

Inside the package the imports run one way: setups <- plan <- build <- scratch <- matrix.

May import run, curve, jobs, storage, targets, backend, process and the pure stages; never
commands, render or serve.
"""
