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
# the application loads beside fio (storbench.loads; tests/loads/)
command -v dbench >/dev/null 2>&1 || need+=(dbench)
command -v fs_mark >/dev/null 2>&1 || need+=(fsmark)
command -v sysbench >/dev/null 2>&1 || need+=(sysbench)
# ZFS in user space (this kernel has no ZFS module): zfs-fuse 0.7, pool version 23; the tests
# start its daemon themselves (tests/zfsfuse.py) and stop it by its PID
command -v zfs-fuse >/dev/null 2>&1 || need+=(zfs-fuse)
# network storage servers and clients, all started by the tests on 127.0.0.1 (tests/servers.py)
command -v nbdkit >/dev/null 2>&1 || need+=(nbdkit)
command -v nbdinfo >/dev/null 2>&1 || need+=(libnbd-bin)
command -v smbd >/dev/null 2>&1 || need+=(samba)
command -v smbnetfs >/dev/null 2>&1 || need+=(smbnetfs)
command -v smbpasswd >/dev/null 2>&1 || need+=(samba-common-bin)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v sshfs >/dev/null 2>&1 || need+=(sshfs)
# iSCSI: tgt's userspace target (tests/servers.py Tgt), reached through qemu-nbd with qemu's
# libiscsi driver (qemu-block-extra) by storbench's iscsi:// targets; libiscsi-bin's iscsi-inq
command -v tgtd >/dev/null 2>&1 || need+=(tgt)
command -v iscsi-inq >/dev/null 2>&1 || need+=(libiscsi-bin)
[ -e /usr/lib/x86_64-linux-gnu/qemu/block-iscsi.so ] || ls /usr/lib/*/qemu/block-iscsi.so >/dev/null 2>&1 || need+=(qemu-block-extra)
# NFS: nfs-ganesha (VFS) with its own rpcbind and dbus-daemon in a network namespace (tests/servers.py
# Ganesha), reached through qemu-nbd's libnfs driver by storbench's nfs:// targets; nfs-ls
command -v ganesha.nfsd >/dev/null 2>&1 || need+=(nfs-ganesha)
[ -e /usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so ] || ls /usr/lib/*/ganesha/libfsalvfs.so >/dev/null 2>&1 || need+=(nfs-ganesha-vfs)
command -v rpcbind >/dev/null 2>&1 || [ -x /usr/sbin/rpcbind ] || need+=(rpcbind)
command -v nfs-ls >/dev/null 2>&1 || need+=(libnfs-utils)
command -v dbus-daemon >/dev/null 2>&1 || need+=(dbus-daemon)
command -v glusterd >/dev/null 2>&1 || need+=(glusterfs-server)
command -v gluster >/dev/null 2>&1 || need+=(glusterfs-cli)
# a one-node Ceph (mon, mgr, one BlueStore OSD on a file) that tests/ceph.py brings up; without
# recommends (they pull in the dashboard, cephadm and a Python web stack)
lean_need=()
command -v ceph-mon >/dev/null 2>&1 || lean_need+=(ceph-mon)
command -v ceph-mgr >/dev/null 2>&1 || lean_need+=(ceph-mgr)
command -v ceph-osd >/dev/null 2>&1 || lean_need+=(ceph-osd)
command -v rbd >/dev/null 2>&1 || lean_need+=(ceph-common)
# Ceph's S3 gateway on that cluster (tests/ceph.py's Gateway; s3:// targets, tests/targets/test_s3.py)
command -v radosgw >/dev/null 2>&1 || lean_need+=(radosgw)
# a second real S3 server: OpenStack Swift with s3api (tests/swift.py; tests/targets/test_s3_swift.py);
# its servers do not start on install (the policy below), the tests start their own
for s in proxy object container account; do
  command -v "swift-$s-server" >/dev/null 2>&1 || lean_need+=("swift-$s")
done
# an image's guest filesystem for the loads (storbench.study.guest): qemu-storage-daemon's FUSE
# export; without recommends (they pull in graphics and sound libraries)
command -v qemu-storage-daemon >/dev/null 2>&1 || lean_need+=(qemu-system-common)
# the drives' own health (tests/test_hardware.py runs the real smartctl); without recommends
# (a mail transport agent for smartd's mails), and smartd is kept from starting like the others
[ -x /usr/sbin/smartctl ] || lean_need+=(smartmontools)
if ((${#need[@]} + ${#lean_need[@]})); then
  echo "installing test dependencies with apt-get: ${need[*]} ${lean_need[*]}"
  # packaged daemons (smbd, sshd, zfs-fuse) must not start on install: the tests start their own
  made_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && made_policy=1
  fi
  apt-get update -qq
  if ((${#need[@]})); then DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; fi
  if ((${#lean_need[@]})); then DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${lean_need[@]}" >/dev/null; fi
  if [ -n "$made_policy" ]; then rm -f /usr/sbin/policy-rc.d; fi
fi
