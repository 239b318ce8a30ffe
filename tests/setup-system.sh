#!/usr/bin/env bash
# System packages the test suite needs (real filesystems, image formats, network tools).
set -eu
need=()
command -v fio >/dev/null 2>&1 || need+=(fio)
command -v mkfs.xfs >/dev/null 2>&1 || need+=(xfsprogs)
command -v mkfs.btrfs >/dev/null 2>&1 || need+=(btrfs-progs)
command -v qemu-img >/dev/null 2>&1 || need+=(qemu-utils)
command -v iperf3 >/dev/null 2>&1 || need+=(iperf3)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ -x /usr/lib/postgresql/15/bin/postgres ] || ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need+=(postgresql)
command -v hdparm >/dev/null 2>&1 || need+=(hdparm)
# ZFS in user space (this kernel has no ZFS module): zfs-fuse 0.7, pool version 23; the tests
# start its daemon themselves (tests/zfsfuse.py) and stop it by its PID
command -v zfs-fuse >/dev/null 2>&1 || need+=(zfs-fuse)
if ((${#need[@]})); then
  echo "installing test dependencies with apt-get: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
