"""make test's servers session on two workers: which test modules go together (tests/conftest.py).

Pure: read from the test modules' own text, as the scheduler reads them."""

from __future__ import annotations

from conftest import ALONE_GROUPS, HEAVY_GROUPS, shared_groups


def test_every_daemon_one_per_machine_keeps_its_modules_on_one_worker():
    groups = shared_groups()
    # the ZFS studies start the share servers one per machine (rpcbind under nfs-ganesha, tgtd,
    # smbd, sshd): one group with every other module of those servers, on one worker
    shares = "rpcbind+smbd+sshd+tgtd+zfs"
    for module in ("tests/study/test_zfs_study.py", "tests/study/test_seed003.py", "tests/targets/test_zfs.py", "tests/targets/test_nfs.py",
                   "tests/targets/test_iscsi.py", "tests/targets/test_protocol_faults.py", "tests/targets/test_share_faults.py",
                   "tests/study/test_share_study.py"):  # fmt: skip
        assert groups[module] == shares, module
    # the session's PostgreSQL and serve's history: the modules that use them together
    assert groups["tests/serve/test_serve.py"] == groups["tests/store/test_store_postgres.py"] == groups["tests/serve/test_serve_browser.py"]
    # a module that shares nothing is a group of its own
    assert groups["tests/run/test_trust.py"] == "test_trust"
    assert groups["tests/targets/test_ceph.py"] == "ceph"


def test_the_heavy_groups_first_and_those_alone_are_groups_there_are():
    assert set(HEAVY_GROUPS) | ALONE_GROUPS <= set(shared_groups().values())
    assert not set(HEAVY_GROUPS) & ALONE_GROUPS  # a group alone is not on the two workers
