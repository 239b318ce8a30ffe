"""tgt's own word about a LUN: ``tgtadm --op show`` read (golden), and the local tgtd found."""

from __future__ import annotations

from pathlib import Path

from storbench.storage.tgt import TgtLun, backing_store, local_tgtds, lun_of, parse_target_show

DATA = Path(__file__).parent.parent / "data" / "storage"


def test_target_show_of_tgt_1_0_85():
    (target,) = parse_target_show((DATA / "tgt-1.0.85-target-show.txt").read_text())
    assert (target.tid, target.iqn) == (1, "iqn.2024-01.lab.storbench:disk1")
    controller, disk = target.luns
    assert controller == TgtLun(lun=0, type="controller", size_mb=0, block_size=1, readonly=False, backing_type="null",
                                backing_path=None, backing_flags=None)  # fmt: skip
    assert disk == TgtLun(lun=1, type="disk", size_mb=1074, block_size=512, readonly=False, backing_type="rdwr",
                          backing_path="/srv/lab/iscsi/disk.img", backing_flags=None)  # fmt: skip
    assert lun_of([target], "iqn.2024-01.lab.storbench:disk1", 1) is disk
    assert lun_of([target], "iqn.2024-01.lab.storbench:disk1", 2) is None and lun_of([target], "iqn.other", 1) is None


def test_two_targets_flags_and_nothing():
    text = """Target 1: iqn.a
    LUN information:
        LUN: 1
            Type: disk
            Size: 68 MB, Block size: 4096
            Readonly: Yes
            Backing store type: aio
            Backing store path: /dev/zvol/tank/lun
            Backing store flags: direct
    Account information:
        Type: ignored here
Target 2: iqn.b
    LUN information:
"""
    a, b = parse_target_show(text)
    assert a.luns == (TgtLun(lun=1, type="disk", size_mb=68, block_size=4096, readonly=True, backing_type="aio",
                             backing_path="/dev/zvol/tank/lun", backing_flags="direct"),)  # fmt: skip
    assert (b.iqn, b.luns) == ("iqn.b", ())
    assert parse_target_show("") == () and parse_target_show("tgtadm: can't send the request to the tgt daemon") == ()


def test_no_tgtd_beside_storbench_is_said(tmp_path):
    proc = tmp_path / "proc"
    (proc / "self" / "ns").mkdir(parents=True)
    (proc / "self" / "ns" / "net").symlink_to("net:[4026531992]")
    assert local_tgtds(str(proc)) == []
    lun, why = backing_store("127.0.0.1", 3260, "iqn.a", 1, proc=str(proc))
    assert lun is None and why == "no tgtd beside storbench serves 127.0.0.1:3260 (the LUN's backing store cannot be read)"


def test_a_tgtd_in_this_namespace_with_its_portal_and_socket(tmp_path):
    proc = tmp_path / "proc"
    for pid, argv, env, net in (("41", b"tgtd\0-f\0--iscsi\0portal=127.0.0.1:3261\0", b"TGT_IPC_SOCKET=/tmp/t/tgtd.ipc\0PATH=/bin\0", "net:[1]"),
                                ("42", b"tgtd\0-f\0", b"", "net:[2]"), ("43", b"sshd\0", b"", "net:[1]")):  # fmt: skip
        (proc / pid / "ns").mkdir(parents=True)
        (proc / pid / "cmdline").write_bytes(argv)
        (proc / pid / "environ").write_bytes(env)
        (proc / pid / "ns" / "net").symlink_to(net)
    (proc / "self" / "ns").mkdir(parents=True)
    (proc / "self" / "ns" / "net").symlink_to("net:[1]")
    (found,) = local_tgtds(str(proc))  # 42 is in another namespace, 43 is no tgtd
    assert (found.pid, found.portals, found.socket) == (41, ("127.0.0.1:3261",), "/tmp/t/tgtd.ipc")
    lun, why = backing_store("127.0.0.1", 3260, "iqn.a", 1, proc=str(proc))  # another port
    assert lun is None and "no tgtd beside storbench serves 127.0.0.1:3260" in why
