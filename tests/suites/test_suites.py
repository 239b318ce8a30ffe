"""Built-in suites against the published procedures, and every validation rule of suite files."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from storbench.errors import SuiteError, UsageError
from storbench.model import Suite, Workload
from storbench.suites import (
    DEFAULT_SUITE,
    Catalog,
    builtin_catalog,
    builtin_suite_catalog,
    default_headline,
    fio_option_table,
    load_suite_file,
    locate,
    parse_fio_options,
    validate_extra_options,
)
from storbench.units import parse_size

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def published(cmd: str) -> tuple[tuple[str, str], ...]:
    """'a=1 flag b=x' as published -> options as storbench writes them (a bare flag is flag=1)."""
    out = []
    for word in cmd.split():
        key, eq, value = word.partition("=")
        out.append((key, value if eq else "1"))
    return tuple(out)


# --------------------------------------------------------------------------- the published procedures

FS_COMPARE = {
    "gitlab": "randrepeat=1 ioengine=libaio direct=1 gtod_reduce=1 bs=4k iodepth=64 rw=randrw rwmixread=75 size=16G",
    "app": "ioengine=posixaio rw=randwrite bs=4k numjobs=1 size=16g iodepth=1 runtime=30 time_based end_fsync=1",
    "nas": "ioengine=posixaio rw=randwrite bs=1m numjobs=1 size=16g iodepth=1 runtime=30 time_based end_fsync=1",
    "vm": "size=16G direct=1 rw=randrw rwmixread=69 bs=4k ioengine=libaio iodepth=12 runtime=30 numjobs=4 time_based group_reporting",
}
SSD_JOURNAL = {
    "journal-sync": "ioengine=libaio sync=1 direct=1 bs=4k iodepth=1 rw=write runtime=60",
    "journal-fsync": "ioengine=libaio fsync=1 direct=1 bs=4k iodepth=1 rw=write runtime=60",
    "parallel-sync": "ioengine=libaio sync=1 direct=1 bs=4k iodepth=32 rw=randwrite runtime=60",
    "parallel-fsync": "ioengine=libaio fsync=32 direct=1 bs=4k iodepth=32 rw=randwrite runtime=60",
    "non-txn": "ioengine=libaio direct=1 bs=4k iodepth=128 rw=randwrite runtime=60",
    "linear-write": "ioengine=libaio sync=1 direct=1 bs=4M iodepth=32 rw=write runtime=60",
}
_SHARE_COMMON = "ioengine=auto direct=1 gtod_reduce=1 runtime=30 time_based size=16G"
SHARE = {
    "seq-read": f"rw=read bs=4k iodepth=1 numjobs=1 {_SHARE_COMMON}",
    "seq-write": f"rw=write bs=4k iodepth=1 numjobs=1 {_SHARE_COMMON}",
    "rand-read-1": f"rw=randread bs=4k iodepth=1 numjobs=1 {_SHARE_COMMON}",
    "rand-write-1": f"rw=randwrite bs=4k iodepth=1 numjobs=1 {_SHARE_COMMON}",
    "rand-read-16": f"rw=randread bs=4k iodepth=16 numjobs=16 group_reporting {_SHARE_COMMON}",
    "rand-write-16": f"rw=randwrite bs=4k iodepth=16 numjobs=16 group_reporting {_SHARE_COMMON}",
}
# pts/fio test profile 1.15.0 (fio 3.29): its fio-run script's [global] + [test] options,
# with engine=libaio direct=1 buffered=0; name/filename/stonewall left out (see pts-fio.toml)
PTS_FIO = {
    f"{kind}-{bs}": (
        f"rw={rw} ioengine=libaio iodepth=64 size=1g direct=1 buffered=0 startdelay=5 ramp_time=5 runtime=20 "
        f"time_based disk_util=0 clat_percentiles=0 disable_lat=1 disable_clat=1 disable_slat=1 bs={bs}"
    )
    for kind, rw in (("seq-read", "read"), ("seq-write", "write"), ("rand-read", "randread"), ("rand-write", "randwrite"))
    for bs in ("4k", "8k", "64k", "1m")
}
# CrystalDiskMark's standard preset as KDiskMark runs it with fio, 5 s each
QUICK = {
    f"{test}-{direction}": (
        "ioengine=libaio direct=1 randrepeat=0 refill_buffers end_fsync=1 size=1g "
        f"bs={bs} rw={rw[direction]} iodepth={q} numjobs={t} runtime=5 time_based"
    )
    for direction in ("read", "write")
    for test, bs, q, t, rw in (
        ("seq1m-q8t1", "1m", 8, 1, {"read": "read", "write": "write"}),
        ("seq1m-q1t1", "1m", 1, 1, {"read": "read", "write": "write"}),
        ("rnd4k-q32t1", "4k", 32, 1, {"read": "randread", "write": "randwrite"}),
        ("rnd4k-q1t1", "4k", 1, 1, {"read": "randread", "write": "randwrite"}),
    )
}
PUBLISHED = {"fs-compare": FS_COMPARE, "ssd-journal": SSD_JOURNAL, "share": SHARE, "pts-fio": PTS_FIO, "quick": QUICK}

HEADLINES = {
    "gitlab": "iops", "app": "iops", "nas": "bw", "vm": "iops",
    "journal-sync": "lat", "journal-fsync": "lat", "parallel-sync": "iops", "parallel-fsync": "iops",
    "non-txn": "iops", "linear-write": "bw",
    **{name: "iops" for name in SHARE},
    **{name: ("bw" if name.startswith("seq") and name.endswith(("64k", "1m")) else "iops") for name in PTS_FIO},
    **{name: ("bw" if name.startswith("seq1m") else "iops") for name in QUICK},
}  # fmt: skip


def test_builtin_suites_are_exactly_the_published_ones():
    catalog = builtin_catalog()
    # curve: storbench's own, for storbench curve; the application loads' suites (issue 38)
    assert set(catalog.suites) == set(PUBLISHED) | {"curve", "database", "smallfiles", "pts-disk", "objects"}
    assert [(w.name, w.tool) for w in catalog.suite("database").workloads] == [
        ("pgbench-rw", "pgbench"), ("pgbench-ro", "pgbench"), ("oltp-8k-fsync", "fio")]  # fmt: skip
    assert {w.tool for w in catalog.suite("smallfiles").workloads} == {"fs_mark", "dbench"}
    # seed 002's: pts/fio's workloads themselves, dbench's ladder, and each left-out test named with its stand-in
    disk = catalog.suite("pts-disk")
    assert [w.name for w in disk.workloads[:4]] == ["rand-read-4k", "rand-write-4k", "seq-read-1m", "seq-write-1m"]
    assert all(w in catalog.suite("pts-fio").workloads for w in disk.workloads[:4])
    assert [dict(w.options)["clients"] for w in disk.workloads[4:]] == ["1", "6", "12", "48", "128", "256"]
    for left_out in ("IOzone (not in Debian main", "AIO-Stress (not packaged", "compilebench (not packaged, Python 2"):
        assert left_out in disk.description
    assert DEFAULT_SUITE == "quick"
    assert next(iter(catalog.suites)) == "quick"
    assert len(catalog.suite("pts-fio").workloads) == 16
    assert len(catalog.suite("quick").workloads) == 8


@pytest.mark.parametrize(
    ("suite", "workload", "cmd"),
    [(s, w, cmd) for s, table in PUBLISHED.items() for w, cmd in table.items()],
)
def test_builtin_workload_option_for_option(suite, workload, cmd):
    catalog = builtin_catalog()
    w = catalog.workload(workload)
    assert w in catalog.suite(suite).workloads
    assert w.options == published(cmd)
    assert w.origin == "built-in"
    assert w.description


def test_builtin_suite_workload_order():
    catalog = builtin_catalog()
    for suite, table in PUBLISHED.items():
        assert [w.name for w in catalog.suite(suite).workloads] == list(table)


@pytest.mark.parametrize(("workload", "headline"), sorted(HEADLINES.items()))
def test_builtin_headlines(workload, headline):
    assert builtin_catalog().workload(workload).headline == headline


def test_builtin_suites_describe_model_and_source():
    catalog = builtin_catalog()
    expected_words = {
        "fs-compare": ["GitLab", "Ars Technica", "VM host", "NAS"],
        "ssd-journal": ["Ceph", "journal", "raw device or a file"],
        "share": ["shares", "io_uring", "libaio", "posixaio", "one shared"],
        "pts-fio": ["Phoronix", "pts/fio", "buffered=0"],
        "quick": ["CrystalDiskMark", "KDiskMark", "minute"],
    }
    for name, words in expected_words.items():
        description = catalog.suite(name).description
        for word in words:
            assert word in description, (name, word)


def test_builtin_suites_use_one_size_each():
    # one shared test file per target: every workload of a suite names the same size (or none); but
    # objects: each object size has its own keys on an s3:// target (size / bs objects a client)
    for suite in builtin_catalog().suites.values():
        if suite.name == "objects":
            continue
        sizes = {parse_size(w.option("size")) if w.has_option("size") else None for w in suite.workloads if w.is_fio}
        assert len(sizes) <= 1 and (sizes or all(not w.is_fio for w in suite.workloads)), (suite.name, sizes)


def test_each_builtin_suite_reads_alone_from_its_own_file():
    """A run of one built-in suite reads only that suite's file: each file defines every
    workload its suite names, and gives exactly what the whole catalog gives."""
    whole = builtin_catalog()
    for name, suite in whole.suites.items():
        alone = builtin_suite_catalog(name)
        if name == "pts-disk":  # seed 002's selection names pts-fio's workloads: read with every file
            assert alone is None and {w.origin for w in suite.workloads} == {"built-in"}
            continue
        assert alone is not None, name
        assert alone.suite(name) == suite and set(alone.suites) == {name}
    assert builtin_suite_catalog("nosuch") is None and builtin_suite_catalog("../quick") is None


def test_a_run_reads_one_suite_file_unless_it_needs_more(tmp_path):
    from storbench.commands.common import load_catalog, run_catalog

    everything = set(builtin_catalog().suites)
    assert set(run_catalog(None, None, ()).suites) == {"quick"}
    assert set(run_catalog(None, "share", ()).suites) == {"share"}
    assert set(run_catalog(None, "nosuch", ()).suites) == everything  # to say what is known
    assert set(run_catalog(None, None, ("vm",)).suites) == everything
    assert set(load_catalog(None).suites) == everything  # curve, doctor, suites: every built-in one
    assert set(load_catalog(None).workloads) == set(builtin_catalog().workloads)


def test_builtin_catalog_is_immutable():
    catalog = builtin_catalog()
    with pytest.raises(TypeError):
        catalog.suites["x"] = catalog.suite("quick")  # type: ignore[index]


def test_unknown_suite_and_workload_messages():
    catalog = builtin_catalog()
    with pytest.raises(SuiteError) as err:
        catalog.suite("quik")
    assert str(err.value) == (
        "unknown suite 'quik' (did you mean 'quick'?) (known: curve, database, fs-compare, objects, pts-disk, pts-fio, quick, share, smallfiles, ssd-journal)"
    )
    with pytest.raises(SuiteError, match=r"^unknown workload 'gitlb' \(did you mean 'gitlab'\?\) \(known: app, "):
        catalog.workload("gitlb")
    with pytest.raises(SuiteError, match=r"^unknown suite 'x' \(known: curve, database, fs-compare, objects, pts-disk, pts-fio, quick, share, smallfiles, ssd-journal\)$"):
        catalog.suite("x")


# --------------------------------------------------------------------------- fio's option list


def test_option_table_has_options_aliases_and_engine_options():
    table = fio_option_table()
    for name in ("rw", "bs", "iodepth", "time_based", "group_reporting", "gtod_reduce", "ramp_time", "end_fsync"):
        assert table.get(name) is not None, name
    assert table.get("readwrite").canonical == "rw"
    assert table.get("blocksize").canonical == "bs"
    assert table.get("timeout").canonical == "runtime"
    assert table.get("hipri").engines >= {"io_uring"}
    assert table.get("userspace_reap").engines == frozenset({"libaio"})
    assert table.get("time_based").kind == "bool"
    assert table.get("direct").kind == "bool"
    assert {"io_uring", "libaio", "posixaio", "psync"} <= set(table.engines)
    assert table.get("iodeph") is None


def test_parse_fio_options_format():
    table = parse_fio_options("# c\n@engines a b\nfoo int -\nbar bool engine:a\nbaz int alias:foo\n")
    assert table.engines == ("a", "b")
    assert table.get("baz").canonical == "foo"
    assert table.get("bar").engines == frozenset({"a"})


@needs_fio
def test_option_table_covers_this_fio():
    version = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    if version != "fio-3.33":
        pytest.skip(f"fio_options.txt was generated from fio-3.33, this is {version}")
    out = subprocess.run(["fio", "--cmdhelp=all"], capture_output=True, text=True).stdout
    names = {line.split(":")[0].strip() for line in out.splitlines() if line.strip()}
    table = fio_option_table()
    assert names and names <= set(table.options)
    engines = subprocess.run(["fio", "--enghelp"], capture_output=True, text=True).stdout.split()[3:]
    assert set(engines) == set(table.engines)


# --------------------------------------------------------------------------- user files


def write(tmp_path: Path, text: str, name: str = "mine.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_error(tmp_path: Path, text: str, name: str = "mine.toml") -> str:
    path = write(tmp_path, text, name)
    with pytest.raises(SuiteError) as err:
        load_suite_file(path, builtin_catalog())
    message = str(err.value)
    assert "\n" not in message and "\r" not in message, message
    assert message.startswith(str(path)), message
    assert isinstance(err.value, UsageError)
    return message[len(str(path)) :]


GOOD = '''\
[workload.my-randread]
description = "4k random read, 16 deep"
headline = "iops"
fio = { rw = "randread", bs = "4k", iodepth = 16, direct = 1, ioengine = "libaio", runtime = 30, time_based = true }

[suite.mine]
description = "what this suite models"
workloads = ["my-randread", "gitlab"]
'''


def test_user_file_merges_over_builtins(tmp_path):
    path = write(tmp_path, GOOD)
    catalog = load_suite_file(path, builtin_catalog())
    assert isinstance(catalog, Catalog)
    suite = catalog.suite("mine")
    assert isinstance(suite, Suite)
    assert [w.name for w in suite.workloads] == ["my-randread", "gitlab"]
    assert suite.origin == str(path)
    mine = catalog.workload("my-randread")
    assert isinstance(mine, Workload)
    assert mine.origin == str(path)
    assert mine.options == (
        ("rw", "randread"), ("bs", "4k"), ("iodepth", "16"), ("direct", "1"),
        ("ioengine", "libaio"), ("runtime", "30"), ("time_based", "1"),
    )  # fmt: skip
    assert catalog.workload("gitlab") is builtin_catalog().workload("gitlab")
    assert "quick" in catalog.suites and "fs-compare" in catalog.suites
    assert "mine" not in builtin_catalog().suites


def test_load_suite_file_defaults_to_builtins(tmp_path):
    catalog = load_suite_file(write(tmp_path, GOOD))
    assert "quick" in catalog.suites


def test_a_second_file_may_use_the_first_files_workloads(tmp_path):
    first = load_suite_file(write(tmp_path, GOOD, "a.toml"))
    second = load_suite_file(write(tmp_path, '[suite.more]\nworkloads = ["my-randread"]\n', "b.toml"), first)
    assert second.suite("more").workloads[0].name == "my-randread"


def test_booleans_map_to_1_and_0(tmp_path):
    path = write(tmp_path, '[workload.w]\nfio = { rw = "read", time_based = false, group_reporting = true, end_fsync = 0, direct = "1" }\n')
    w = load_suite_file(path).workload("w")
    assert w.options == (("rw", "read"), ("time_based", "0"), ("group_reporting", "1"), ("end_fsync", "0"), ("direct", "1"))


def test_sizes_and_durations_are_written_for_fio(tmp_path):
    path = write(
        tmp_path,
        '[workload.w]\nfio = { rw = "read", size = "1.5GiB", bs = "8MiB", offset = "10%", runtime = "1.5s", '
        'ramp_time = "2m", filesize = "1m-2MiB", bsrange = "4k-1MiB", startdelay = "1-2.5s" }\n',
    )
    w = load_suite_file(path).workload("w")
    assert dict(w.options) == {
        "rw": "read", "size": "1536m", "bs": "8m", "offset": "10%", "runtime": "1500ms", "ramp_time": "2m",
        "filesize": "1m-2m", "bsrange": "4k-1m", "startdelay": "1-2500ms",
    }  # fmt: skip


def test_published_size_spelling_is_kept(tmp_path):
    path = write(tmp_path, '[workload.w]\nfio = { rw = "read", size = "16G", bs = "4k,64k" }\n')
    assert load_suite_file(path).workload("w").options == (("rw", "read"), ("size", "16G"), ("bs", "4k,64k"))


def test_default_headline_rules(tmp_path):
    assert default_headline((("rw", "read"), ("bs", "1m"))) == "bw"
    assert default_headline((("rw", "write"), ("bs", "64k"))) == "bw"
    assert default_headline((("rw", "randread"), ("bs", "1m"))) == "iops"
    assert default_headline((("rw", "read"), ("bs", "4k"))) == "iops"
    assert default_headline((("rw", "write"), ("sync", "1"), ("iodepth", "1"))) == "lat"
    assert default_headline((("rw", "write"), ("fsync", "1"))) == "lat"
    assert default_headline((("rw", "randwrite"), ("sync", "1"), ("iodepth", "32"))) == "iops"
    assert default_headline((("rw", "randwrite"),)) == "iops"
    path = write(tmp_path, '[workload.w]\nfio = { rw = "write", bs = "1m" }\n')
    assert load_suite_file(path).workload("w").headline == "bw"


def test_engine_options_after_their_engine(tmp_path):
    path = write(tmp_path, '[workload.w]\nfio = { ioengine = "io_uring", hipri = true, rw = "read" }\n')
    assert load_suite_file(path).workload("w").options[1] == ("hipri", "1")


def test_subtable_and_dotted_forms(tmp_path):
    text = '[workload.w]\ndescription = "d"\nfio.rw = "read"\nfio.bs = "4k"\n\n[workload.v.fio]\nrw = "write"\n'
    catalog = load_suite_file(write(tmp_path, text))
    assert catalog.workload("w").options == (("rw", "read"), ("bs", "4k"))
    assert catalog.workload("v").options == (("rw", "write"),)


def test_validate_extra_options():
    assert validate_extra_options([("ramp_time", "5s"), ("norandommap", None)]) == (("ramp_time", "5s"), ("norandommap", "1"))
    with pytest.raises(SuiteError, match="unknown fio option 'iodeph'"):
        validate_extra_options([("iodeph", "4")])
    with pytest.raises(SuiteError, match="storbench sets where the I/O goes"):
        validate_extra_options([("filename", "/etc/passwd")])
    with pytest.raises(SuiteError, match="line break"):
        validate_extra_options([("description", "x\n[evil]")])


# --------------------------------------------------------------------------- validation: one test per rule


def test_toml_syntax_error_names_file_line_and_column(tmp_path):
    msg = load_error(tmp_path, '[workload.a]\ndescription = "x"\nfio = { rw = read }\n')
    assert msg == ":3:14: TOML syntax error: Invalid value"


def test_toml_unclosed_table(tmp_path):
    msg = load_error(tmp_path, '[workload.a]\nfio = { rw = "read" \n')
    assert msg.startswith(":2:") and "TOML syntax error: Unclosed inline table" in msg


def test_duplicate_workload_is_clear(tmp_path):
    msg = load_error(tmp_path, '[workload.a]\nfio = { rw = "read" }\n\n[workload.a]\nfio = { rw = "write" }\n')
    assert msg == ":4: workload.a: workload 'a' is defined twice (each workload name may appear once)"


def test_duplicate_suite_is_clear(tmp_path):
    msg = load_error(tmp_path, '[suite.s]\nworkloads = ["gitlab"]\n[suite.s]\nworkloads = ["app"]\n')
    assert msg == ":3: suite.s: suite 's' is defined twice (each suite name may appear once)"


def test_duplicate_key_is_clear(tmp_path):
    msg = load_error(tmp_path, '[workload.a]\nfio = { rw = "read" }\nfio = { rw = "write" }\n')
    assert msg == ":3: fio: set twice (each key may appear once in a table)"


def test_duplicate_inline_key_is_clear(tmp_path):
    msg = load_error(tmp_path, '[workload.a]\nfio = { rw = "read", rw = "write" }\n')
    assert msg == ":2: rw: set twice in one inline table (each key may appear once)"


def test_unknown_top_level_table(tmp_path):
    msg = load_error(tmp_path, '[workloads.a]\nfio = { rw = "read" }\n')
    assert msg == ":1: workloads: unknown top-level table 'workloads' (did you mean 'workload'?) (allowed: suite, workload)"


def test_unknown_workload_key(tmp_path):
    msg = load_error(tmp_path, '[workload.a]\ndescripton = "x"\nfio = { rw = "read" }\n')
    assert msg == (
        ":2: workload.a.descripton: unknown key 'descripton' (did you mean 'description'?) "
        "(allowed: description, fio, headline)"
    )


def test_unknown_suite_key(tmp_path):
    msg = load_error(tmp_path, '[suite.s]\nworkloads = ["gitlab"]\nrepeat = 3\n')
    assert msg == ":3: suite.s.repeat: unknown key 'repeat' (allowed: description, workloads)"


def test_missing_fio_table(tmp_path):
    msg = load_error(tmp_path, '[workload.a]\ndescription = "x"\n')
    assert msg.startswith(":1: workload.a: missing fio table")


def test_fio_not_a_table(tmp_path):
    msg = load_error(tmp_path, '[workload.a]\nfio = "rw=read"\n')
    assert msg.startswith(":2: workload.a.fio: must be a table of fio options")


def test_non_string_description(tmp_path):
    msg = load_error(tmp_path, '[workload.a]\ndescription = 42\nfio = { rw = "read" }\n')
    assert msg == ":2: workload.a.description: description must be a string (got an integer)"
    msg = load_error(tmp_path, '[suite.s]\ndescription = ["x"]\nworkloads = ["gitlab"]\n')
    assert msg == ":2: suite.s.description: description must be a string (got an array)"


def test_bad_headline(tmp_path):
    msg = load_error(tmp_path, '[workload.a]\nheadline = "speed"\nfio = { rw = "read" }\n')
    assert msg == ":2: workload.a.headline: invalid headline 'speed' (allowed: iops, bw, lat)"


def test_unknown_fio_option_suggests_closest(tmp_path):
    msg = load_error(tmp_path, '[workload.my-randread]\ndescription = "x"\n\nfio = { rw = "randread", iodeph = 16 }\n')
    assert msg == (
        ":4: workload.my-randread.fio.iodeph: unknown fio option 'iodeph' (did you mean 'iodepth'?) "
        "(see 'fio --cmdhelp=all')"
    )


def test_unknown_fio_option_in_subtable_has_line(tmp_path):
    msg = load_error(tmp_path, '[workload.a]\ndescription = "x"\n\n[workload.a.fio]\nrw = "read"\nblocksiz = "4k"\n')
    assert msg.startswith(":6: workload.a.fio.blocksiz: unknown fio option 'blocksiz' (did you mean 'blocksize'?)")


def test_bad_size(tmp_path):
    msg = load_error(tmp_path, '[workload.my-randread]\nfio = { rw = "randread", bs = "4q" }\n')
    assert msg.startswith(":2: workload.my-randread.fio.bs: invalid size '4q': use a whole number of bytes or a number with a unit k, m, g, t or p")


@pytest.mark.parametrize(
    ("fio", "key", "problem"),
    [
        ('size = "lots"', "size", "invalid size 'lots'"),
        ('size = "150%"', "size", "a percentage must be more than 0% and at most 100%"),
        ('filesize = "1m-"', "filesize", "use sizes or ranges like 4k-64k"),
        ('offset = "-4k"', "offset", "invalid size '-4k'"),
        ('bs = "4k,4k,4k,4k"', "bs", "at most three sizes"),
        ("iodepth = 0", "iodepth", "invalid iodepth '0': a whole number of at least 1"),
        ('iodepth = "deep"', "iodepth", "invalid iodepth 'deep': a whole number of at least 1"),
        ("numjobs = 1.5", "numjobs", "invalid numjobs '1.5'"),
        ("rwmixread = 101", "rwmixread", "invalid rwmixread '101': a whole number from 0 to 100"),
        ('runtime = "30 parsecs"', "runtime", "invalid duration '30 parsecs'"),
        ('rw = "randomread"', "rw", "invalid rw 'randomread' (did you mean 'randread'?) (allowed: read, write,"),
        ('ioengine = "libiao"', "ioengine", "unknown ioengine 'libiao' (did you mean 'libaio'?) (allowed: auto,"),
        ('ioengine = "exec"', "ioengine", "ioengine 'exec' runs programs"),
        ('ioengine = "external:/tmp/evil.so"', "ioengine", "unknown ioengine 'external:/tmp/evil.so'"),
        ("bs = true", "bs", "'bs' is not a true/false option; give its value"),
        ('time_based = "yes"', "time_based", "'time_based' is an on/off option: use true/false (or 1/0), not 'yes'"),
        ("direct = 2", "direct", "'direct' is an on/off option"),
        ('bs = ["4k"]', "bs", "value must be a string, a number or true/false (got an array)"),
        ("bs = { read = \"4k\" }", "bs", "value must be a string, a number or true/false (got a table)"),
        ('description = ""', "description", "value is empty"),
        ("hipri = true", "hipri", "belongs to the io_uring, io_uring_cmd, pvsync2, sg I/O engine(s): set ioengine to one of them before it"),
        ('bs = "4k", blocksize = "8k"', "blocksize", "fio option set twice ('bs' and 'blocksize' are the same fio option)"),
    ],
)
def test_bad_fio_values(tmp_path, fio, key, problem):
    msg = load_error(tmp_path, f'[workload.w]\ndescription = "x"\nfio = {{ ramp_time = 1, {fio} }}\n')
    prefix = f":3: workload.w.fio.{key}: "
    assert msg.startswith(prefix), msg
    assert problem in msg, msg


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("filename", "storbench sets where the I/O goes"),
        ("directory", "storbench sets where the I/O goes"),
        ("name", "storbench sets where the I/O goes"),
        ("filename_format", "storbench sets where the I/O goes"),
        ("opendir", "storbench sets where the I/O goes"),
        ("read_iolog", "storbench sets where the I/O goes"),
        ("replay_redirect", "storbench sets where the I/O goes"),
        ("output", "storbench sets fio's output"),
        ("output-format", "storbench sets fio's output"),
        ("write_bw_log", "storbench decides what fio writes"),
        ("write_lat_log", "storbench decides what fio writes"),
        ("write_iops_log", "storbench decides what fio writes"),
        ("write_hist_log", "storbench decides what fio writes"),
        ("write_iolog", "storbench decides what fio writes"),
        ("unlink", "storbench creates and removes its test files"),
        ("exec_prerun", "may not run programs"),
        ("exec_postrun", "may not run programs"),
        ("kb_base", "kb_base=1024"),
    ],
)
def test_storbench_owned_options_are_refused(tmp_path, key, why):
    msg = load_error(tmp_path, f'[workload.w]\nfio = {{ rw = "read", {key} = "x" }}\n')
    assert msg.startswith(f":2: workload.w.fio.{key}: fio option '{key}' may not be set in a workload: "), msg
    assert why in msg


# injection: nothing may add a fio option or a job section
@pytest.mark.parametrize(
    ("fio", "key", "problem"),
    [
        ('description = "x\\nfilename=/dev/sda"', "description", "line break"),
        ('description = "x\\r\\n[evil]"', "description", "line break"),
        ('bs = "4k\\nfilename=/dev/sda"', "bs", "line break"),
        ('bs = "4k;filename=/dev/sda"', "bs", "';' or '#'"),
        ('bs = "4k # comment"', "bs", "';' or '#'"),
        ('description = "[global]"', "description", "starts with '[' or ']'"),
        ('description = "]"', "description", "starts with '[' or ']'"),
        ('description = "${HOME}"', "description", "'$'"),
        ('description = "a\\u0000b"', "description", "control character"),
        ('"bs=4k" = "8k"', '"bs=4k"', "is not a fio option name"),
        ('"rw\\n[evil]\\nfilename" = "/dev/sda"', '"rw\\n[evil]\\nfilename"', "is not a fio option name"),
        ('"IODEPTH" = 4', "IODEPTH", "is not a fio option name"),
    ],
)
def test_injection_is_refused(tmp_path, fio, key, problem):
    msg = load_error(tmp_path, f'[workload.w]\nfio = {{ rw = "read", {fio} }}\n')
    assert msg.startswith((":2: ", ": ")), msg
    assert f"workload.w.fio.{key}: " in msg, msg
    assert problem in msg, msg


@pytest.mark.parametrize(
    "name",
    ['"x]\\n[evil"', '"Upper"', '"-dash"', '"global"', '"a b"', '"' + "a" * 65 + '"', '"semi;colon"', '"x#y"'],
)
def test_bad_workload_names(tmp_path, name):
    msg = load_error(tmp_path, f'[workload.{name}]\nfio = {{ rw = "read" }}\n')
    assert "invalid workload name" in msg
    assert "a-z, 0-9, '.', '_', '-'" in msg


def test_good_workload_names(tmp_path):
    name = "a" * 64
    text = f'[workload.{name}]\nfio = {{ rw = "read" }}\n[workload."v1.2_x-y"]\nfio = {{ rw = "read" }}\n'
    catalog = load_suite_file(write(tmp_path, text))
    assert name in catalog.workloads and "v1.2_x-y" in catalog.workloads


def test_bad_suite_name(tmp_path):
    msg = load_error(tmp_path, '[suite."My Suite"]\nworkloads = ["gitlab"]\n')
    assert msg.startswith(":1: suite.\"My Suite\": invalid suite name 'My Suite'")


def test_multiline_description_refused(tmp_path):
    msg = load_error(tmp_path, '[suite.s]\ndescription = """one\ntwo"""\nworkloads = ["gitlab"]\n')
    assert msg == ":2: suite.s.description: description must be one line of text (no line breaks or control characters)"


def test_suite_naming_unknown_workload(tmp_path):
    msg = load_error(tmp_path, '[workload.mine]\nfio = { rw = "read" }\n\n[suite.s]\nworkloads = [\n  "mine",\n  "gitlb",\n]\n')
    assert msg == (
        ":7: suite.s.workloads: unknown workload 'gitlb' (did you mean 'gitlab'?) "
        "(defined here: mine; built-in ones: see 'storbench suites')"
    )


def test_empty_suite(tmp_path):
    msg = load_error(tmp_path, "[suite.s]\nworkloads = []\n")
    assert msg == ":2: suite.s.workloads: suite is empty: name at least one workload"


def test_suite_without_workloads(tmp_path):
    msg = load_error(tmp_path, '[suite.s]\ndescription = "x"\n')
    assert msg.startswith(":1: suite.s: missing workloads")


def test_suite_workloads_not_a_list(tmp_path):
    msg = load_error(tmp_path, '[suite.s]\nworkloads = "gitlab"\n')
    assert msg.startswith(":2: suite.s.workloads: must be a list of workload names")


def test_suite_names_workload_twice(tmp_path):
    msg = load_error(tmp_path, '[suite.s]\nworkloads = ["gitlab", "gitlab"]\n')
    assert msg == ":2: suite.s.workloads: names workload 'gitlab' twice"


def test_user_workload_may_not_shadow_builtin(tmp_path):
    msg = load_error(tmp_path, '[workload.gitlab]\nfio = { rw = "read" }\n')
    assert msg == ":1: workload.gitlab: workload 'gitlab' is a built-in workload; choose another name"


def test_user_suite_may_not_shadow_builtin(tmp_path):
    msg = load_error(tmp_path, '[suite.quick]\nworkloads = ["gitlab"]\n')
    assert msg == ":1: suite.quick: suite 'quick' is a built-in suite; choose another name"


def test_second_file_may_not_redefine_first(tmp_path):
    first = load_suite_file(write(tmp_path, GOOD, "a.toml"))
    path = write(tmp_path, '[workload.my-randread]\nfio = { rw = "read" }\n', "b.toml")
    with pytest.raises(SuiteError) as err:
        load_suite_file(path, first)
    assert str(err.value) == (
        f"{path}:1: workload.my-randread: workload 'my-randread' is already defined in {tmp_path / 'a.toml'}; choose another name"
    )


def test_empty_file(tmp_path):
    assert load_error(tmp_path, "# nothing\n") == ": defines no [workload.NAME] or [suite.NAME] tables"


def test_missing_file(tmp_path):
    path = tmp_path / "nope.toml"
    with pytest.raises(SuiteError, match=r"nope\.toml: cannot read suite file: No such file or directory$"):
        load_suite_file(path)


def test_not_utf8(tmp_path):
    path = tmp_path / "bin.toml"
    path.write_bytes(b"\xff\xfe[workload]")
    with pytest.raises(SuiteError, match=r"bin\.toml: not UTF-8 text"):
        load_suite_file(path)


def test_locate_finds_keys_in_all_forms():
    text = (
        "[workload.a]\n"  # 1
        'description = "bs = 4k"\n'  # 2
        'fio = { rw = "read", bs = "4k" }\n'  # 3
        "\n"  # 4
        "[workload.b.fio]\n"  # 5
        'rw = "read"\n'  # 6
        'bs = "4k"\n'  # 7
        "[suite.s]\n"  # 8
        'workloads = ["a",\n "b"]\n'  # 9, 10
    )
    assert locate(text, ("workload", "a")) == 1
    assert locate(text, ("workload", "a", "fio", "bs")) == 3
    assert locate(text, ("workload", "b", "fio", "bs")) == 7
    assert locate(text, ("suite", "s", "workloads")) == 9
    assert locate(text, ("suite", "s", "workloads"), value="b") == 10
    assert locate(text, ("workload", "zzz", "fio")) is None
