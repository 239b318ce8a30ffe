"""Network shares and NBD exports described from recorded outputs: mount sources and options,
the FUSE daemon's own options, whether writes wait for the server, nbdinfo's answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from storbench.storage import StorageInfo, format_storage, network_info_from_mount, storage_from_dict, storage_to_dict
from storbench.storage.network import nbd_server_of, parse_nbdinfo_json, split_fuse_options
from storbench.storage.probe.network import fuse_daemon_argv

DATA = Path(__file__).parent.parent / "data" / "nbd"
SSHFS_OPTS = ("rw", "nosuid", "nodev", "relatime", "user_id=0", "group_id=0")


def test_sshfs_without_and_with_sync_write():
    argv = ("sshfs", "-p", "2222", "-o", "IdentityFile=/k,BatchMode=yes", "root@127.0.0.1:/srv/lab/ssh/export", "/srv/lab/ssh/mnt")
    n = network_info_from_mount("fuse.sshfs", "root@127.0.0.1:/srv/lab/ssh/export", SSHFS_OPTS, daemon_argv=argv)
    assert (n.server, n.share, n.protocol, n.client) == ("127.0.0.1", "/srv/lab/ssh/export", "sftp", "sshfs")
    assert n.writes_wait_for_server is False and "without -o sync_write" in n.write_ack_option
    n2 = network_info_from_mount("fuse.sshfs", "root@127.0.0.1:/x", SSHFS_OPTS, daemon_argv=(*argv[:4], "IdentityFile=/k,sync_write", *argv[5:]))
    assert n2.writes_wait_for_server is True and n2.cache_options == ("sync_write",)


def test_fuse_options_in_both_spellings():
    assert split_fuse_options(["sshfs", "-o", "a,b=1", "-oc", "host:/", "/mnt"]) == ("a", "b=1", "c")


@pytest.mark.parametrize(
    "fstype, source, options, waits, words",
    [
        ("nfs4", "nas:/export", ("rw", "vers=4.2", "rsize=1048576", "hard"), False, "nfs without the sync mount option"),
        ("nfs4", "nas:/export", ("rw", "sync", "vers=4.2"), True, "nfs mount option sync"),
        ("cifs", "//fs01/bench", ("rw", "vers=3.1.1", "cache=strict"), False, "cifs cache=strict"),
        ("cifs", "//fs01/bench", ("rw", "vers=3.1.1"), False, "cifs cache=strict (the default)"),
        ("cifs", "//fs01/bench", ("rw", "cache=none"), True, "cifs cache=none"),
        ("fuse.glusterfs", "127.0.0.1:/gv0", ("rw",), None, None),
    ],
)
def test_write_acknowledgement_by_protocol(fstype, source, options, waits, words):
    n = network_info_from_mount(fstype, source, options)
    assert n.writes_wait_for_server is waits
    if words:
        assert words in n.write_ack_option


def test_smbnetfs_server_and_share_come_from_the_path_under_the_mount():
    n = network_info_from_mount("fuse.smbnetfs", "smbnetfs", SSHFS_OPTS, mountpoint="/srv/lab/smb/mnt",
                                target="/srv/lab/smb/mnt/127.0.0.1/bench/sub")  # fmt: skip
    assert (n.server, n.share, n.protocol, n.client) == ("127.0.0.1", "bench", "smb", "smbnetfs")
    assert "fuse.smbnetfs smbnetfs /srv/lab/smb/mnt" in (DATA / "smb-smbnetfs-findmnt-statf.txt").read_text()


def test_fuse_daemon_found_by_its_mountpoint(tmp_path):
    for pid, argv in ((101, ["sshfs", "-p", "2222", "host:/x", "/mnt/other"]), (102, ["/usr/bin/sshfs", "-o", "sync_write", "h:/", "/mnt/a"]),
                      (103, ["bash", "/mnt/a"])):  # fmt: skip
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
    assert fuse_daemon_argv("/mnt/a", "fuse.sshfs", proc_root=str(tmp_path)) == ("/usr/bin/sshfs", "-o", "sync_write", "h:/", "/mnt/a")
    assert fuse_daemon_argv("/mnt/b", "fuse.sshfs", proc_root=str(tmp_path)) == ()
    assert fuse_daemon_argv("/mnt/a", "nfs4", proc_root=str(tmp_path)) == ()


def test_nbdinfo_json_of_nbdkit():
    e = parse_nbdinfo_json((DATA / "nbdinfo-json-nbdkit-memory-64M.json").read_text(), "nbd://127.0.0.1:10809")
    assert (e.protocol, e.server, e.export, e.size_bytes, e.read_only, e.rotational) == ("nbd", "127.0.0.1:10809", "", 67108864, False, False)
    assert "protocol=newstyle-fixed" in e.details and "can_flush=true" in e.details and "contexts=base:allocation" in e.details
    with pytest.raises(ValueError, match="not JSON"):
        parse_nbdinfo_json((DATA / "nbd-nbdkit-nbdinfo.txt").read_text(), "nbd://x")  # the human form is not JSON
    info = StorageInfo(target="nbd://127.0.0.1:10809", target_kind="nbd", filesystem=None, devices=(), export=e)
    assert storage_from_dict(storage_to_dict(info)) == info
    assert "nbd export nbd://127.0.0.1:10809: server 127.0.0.1:10809, export '', size 64 MiB, read-write" in format_storage(info)[1]


@pytest.mark.parametrize(
    "uri, server",
    [("nbd://127.0.0.1:10810/x", "127.0.0.1:10810"), ("nbd://nas", "nas:10809"), ("nbd://[fd00::1]:7000/", "[fd00::1]:7000"),
     ("nbd+unix:///disk?socket=/run/nbd.sock", "/run/nbd.sock"), ("http://x", None)],
)
def test_nbd_server_of(uri, server):
    assert nbd_server_of(uri) == server
