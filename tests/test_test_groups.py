"""make test's servers session on two workers: which test modules go together (tests/conftest.py).

Pure: read from the test modules' own text, as the scheduler reads them."""

from __future__ import annotations

from conftest import ALONE_GROUPS, HEAVY_GROUPS, shared_groups


def test_every_daemon_one_per_machine_keeps_its_modules_on_one_worker():
    groups = shared_groups()
    # the ZFS studies (and the share servers they start on zfs-fuse): one group, run alone
    for module in ("tests/study/test_zfs_study.py", "tests/study/test_seed003.py", "tests/targets/test_zfs.py"):
        assert groups[module] == "zfs", module
    # the share servers one per machine beside them, each its group on the two workers
    assert groups["tests/targets/test_nfs.py"] == groups["tests/targets/test_iscsi.py"] == "rpcbind+tgtd"
    assert groups["tests/targets/test_protocol_faults.py"] == "rpcbind+tgtd"
    assert groups["tests/targets/test_share_faults.py"] == groups["tests/study/test_share_study.py"] == "smbd+sshd"
    # the session's PostgreSQL and serve's history: the modules that use them together
    assert groups["tests/serve/test_serve.py"] == groups["tests/store/test_store_postgres.py"] == groups["tests/serve/test_serve_browser.py"]
    # a module that shares nothing is a group of its own
    assert groups["tests/run/test_trust.py"] == "test_trust"
    assert groups["tests/targets/test_ceph.py"] == "ceph"


def test_the_heavy_groups_first_and_those_alone_are_groups_there_are():
    assert set(HEAVY_GROUPS) | ALONE_GROUPS <= set(shared_groups().values())
    assert not set(HEAVY_GROUPS) & ALONE_GROUPS  # a group alone is not on the two workers
