"""nfs-ganesha's own word on an export (storbench.storage.ganesha): its configuration read the way
ganesha reads it, the export holding a target's directory, and the servers beside storbench
found in /proc (a recorded tree here; a real ganesha in tests/targets/test_nfs.py)."""

from __future__ import annotations

import os
from pathlib import Path

from storbench.storage.ganesha import GaneshaExport, export_for, local_servers, parse_exports, server_commit

DATA = Path(__file__).resolve().parent.parent / "data" / "storage"


def test_the_test_servers_configuration():
    [export] = parse_exports((DATA / "ganesha-4.3-conf-tests-servers.conf").read_text())
    assert export == GaneshaExport(export_id="1", path="/tmp/pytest-of-root/pytest-1/t0/nfs/export", pseudo="/export", nfs_commit=True)
    assert export_for([export], "/export/") == export and export_for([export], "/export/bench/") == export
    assert export_for([export], "/exports/") is None and export_for([export], "/tmp/pytest-of-root/pytest-1/t0/nfs/export/") == export


def test_debians_default_configuration_has_no_export():
    assert parse_exports((DATA / "debian12-nfs-ganesha-4.3-default.conf").read_text()) == ()


def test_defaults_quotes_comments_and_case():
    text = """
    export_defaults { nfs_commit = TRUE; }   # the defaults of every export
    EXPORT { Export_Id = 2; Path = "/srv/a b"; Pseudo = /a; FSAL { Name = VFS; } }
    EXPORT { Export_Id = 3; Path = /srv/c; Pseudo = /c; NFS_Commit = false; # { not a block
             FSAL { Name = VFS; } }
    EXPORT { Export_Id = 4; Path = /srv/c/d; }
    """
    a, c, d = parse_exports(text)
    assert (a.path, a.nfs_commit, c.nfs_commit, d.pseudo, d.nfs_commit) == ("/srv/a b", True, False, None, True)
    assert export_for((a, c, d), "/srv/c/d/x/") == d  # the longest root that holds it
    assert parse_exports("EXPORT { Path = /x; }")[0].nfs_commit is False  # ganesha's own default


def _proc(tmp_path: Path, servers: dict[int, tuple[list[str], str]], mine: str = "net:[1]") -> Path:
    proc = tmp_path / "proc"
    (proc / "self" / "ns").mkdir(parents=True)
    os.symlink(mine, proc / "self" / "ns" / "net")
    for pid, (argv, ns) in servers.items():
        (proc / str(pid) / "ns").mkdir(parents=True)
        (proc / str(pid) / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
        os.symlink(ns, proc / str(pid) / "ns" / "net")
    return proc


def test_the_server_beside_storbench_is_the_one_in_its_network_namespace(tmp_path):
    conf = tmp_path / "g.conf"
    conf.write_text((DATA / "ganesha-4.3-conf-tests-servers.conf").read_text())
    proc = _proc(tmp_path, {
        41: (["ganesha.nfsd", "-f", str(conf), "-L", "/x/log"], "net:[1]"),
        42: (["/usr/bin/ganesha.nfsd", "-f", "/elsewhere.conf"], "net:[2]"),  # another namespace: not this target's server
        43: (["sshd"], "net:[1]"),
    })  # fmt: skip
    assert local_servers(str(proc)) == [(41, str(conf))]
    assert server_commit("/export/", str(proc)) == (True, f"nfs-ganesha (pid 41) {conf}: export /export NFS_Commit = true")
    commit, why = server_commit("/nosuch/", str(proc))
    assert commit is None and why == f"nfs-ganesha's {conf} has no export holding /nosuch/"
    empty = _proc(tmp_path / "e", {})
    assert server_commit("/export/", str(empty)) == (None, "no nfs-ganesha runs beside storbench (the server's NFS_Commit cannot be read)")
    default = _proc(tmp_path / "d", {7: (["ganesha.nfsd"], "net:[1]")})
    assert local_servers(str(default)) == [(7, "/etc/ganesha/ganesha.conf")]
