"""Studies: the same workloads on several storage setups, one after another (``storbench matrix``).

:mod:`.setups` says what a setup is (a filesystem with its options, a ZFS pool, an image format,
a device setting) and reads the TOML (pure); :mod:`.matrix` builds each setup on scratch devices
or loop files, runs the workloads on it through :mod:`storbench.run`, tears it down and stores
one run per setup; :mod:`.images` serves VM disk images through qemu-nbd; :mod:`.devsettings`
sets a block device's write cache, scheduler or read-ahead for one setup and always puts it back.

May import run, curve, jobs, storage, targets, backend, process and the pure stages; never
commands, render or serve.
"""
