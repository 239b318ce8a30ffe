"""``storbench import`` never stores an impossible figure: mutated real outputs (JSON and
classic text) end either in exit 0 with every figure stored as it was written and sound, or
in exit 2 with one line naming the file, and nothing stored.

The 32 named mutations below are the hostile tester's set (issue 25); Hypothesis adds
random values in every figure of a JSON direction and random cuts of a text output.
"""

from __future__ import annotations

import copy
import io
import json
import math
import os
import re
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storbench.cli import main
from storbench.context import Env
from storbench.fio.validate import result_problems

DATA = Path(__file__).parent.parent / "data"
JSON_BASE = json.loads((DATA / "fio-json" / "h_randrw.json").read_text())
TEXT_BASE = (DATA / "fio-text" / "public" / "05-fio3.1-randrw-libaio.txt").read_text()


def _import(tmp: Path, name: str, text: str) -> tuple[int, str, list]:
    path = tmp / name
    path.write_text(text)
    db = tmp / "results.sqlite"
    out, err = io.StringIO(), io.StringIO()
    environ = {**os.environ, "STORBENCH_DB": str(db)}
    environ.pop("STORBENCH_DEBUG", None)
    code = main(["import", str(path), "--json"], env=Env(stdout=out, stderr=err, environ=environ, cwd=str(tmp), progress=False))
    assert "Traceback" not in err.getvalue(), err.getvalue()
    records = json.loads(out.getvalue()) if code == 0 else []
    if code != 0:
        lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("storbench: ") and str(path) in lines[0], err.getvalue()
        if db.exists():  # nothing of the refused file was stored
            con = sqlite3.connect(db)
            try:
                assert con.execute("select count(*) from results").fetchone()[0] == 0
            finally:
                con.close()
    return int(code), err.getvalue(), records


def _stored_results(tmp: Path) -> list:
    from storbench.store import Store

    store = Store.open(f"sqlite:///{tmp / 'results.sqlite'}")
    try:
        return [r.fio for run in store.list_runs() for r in store.results(run.run_id)]
    finally:
        store.close()


def _json_with(direction: str, key: str, value) -> str:
    doc = copy.deepcopy(JSON_BASE)
    doc["jobs"][0][direction][key] = value
    return json.dumps(doc, allow_nan=True)


#: (name, mutated output): each must be refused
REFUSED: list[tuple[str, str]] = [
    ("iops-negative", _json_with("read", "iops", -12345)),
    ("bw-negative", _json_with("write", "bw_bytes", -5000)),
    ("iops-nan", _json_with("read", "iops", float("nan"))),
    ("iops-infinity", _json_with("read", "iops", float("inf"))),
    ("iops-nan-string", _json_with("read", "iops", "NaN")),
    ("iops-minus-infinity", _json_with("write", "iops", float("-inf"))),
    ("bw-nan", _json_with("read", "bw_bytes", float("nan"))),
    ("bw-infinity", _json_with("write", "bw_bytes", float("inf"))),
    ("iops-1e308", _json_with("read", "iops", 1e308)),
    ("bw-1e40", _json_with("read", "bw_bytes", 1e40)),
    ("iops-1e10", _json_with("read", "iops", 1e10)),
    ("bw-1e14", _json_with("write", "bw_bytes", 1e14)),
    ("runtime-negative", _json_with("read", "runtime", -100)),
    ("io-bytes-negative", _json_with("read", "io_bytes", -4096)),
    ("total-ios-negative", _json_with("write", "total_ios", -3)),
    ("runtime-nan", _json_with("read", "runtime", float("nan"))),
    ("iops-text", _json_with("read", "iops", "many")),
    ("runtime-zero", _json_with("read", "runtime", 0)),
    ("bw-contradicts-iops", _json_with("read", "bw_bytes", 1000)),
    ("iops-contradicts-bw", _json_with("write", "iops", 1.0)),
    ("lat-mean-negative", json.dumps({**JSON_BASE, "jobs": [{**JSON_BASE["jobs"][0], "read": {
        **JSON_BASE["jobs"][0]["read"], "lat_ns": {**JSON_BASE["jobs"][0]["read"]["lat_ns"], "mean": -1.0}}}]})),
    ("clat-p99-negative", json.dumps({**JSON_BASE, "jobs": [{**JSON_BASE["jobs"][0], "read": {
        **JSON_BASE["jobs"][0]["read"], "clat_ns": {**JSON_BASE["jobs"][0]["read"]["clat_ns"], "percentile": {
            **JSON_BASE["jobs"][0]["read"]["clat_ns"]["percentile"], "99.000000": -5}}}}]})),
    ("text-cut-at-write-iops", TEXT_BASE[: TEXT_BASE.index("write: IOPS") + len("write: IOPS")]),
    ("text-cut-mid-write-line", TEXT_BASE[: TEXT_BASE.index("write: IOPS") + 20]),
    ("text-iops-nan", re.sub(r"read: IOPS=[^,]+", "read: IOPS=nan", TEXT_BASE, count=1)),
    ("text-iops-inf", re.sub(r"write: IOPS=[^,]+", "write: IOPS=inf", TEXT_BASE, count=1)),
    ("text-iops-negative-bw", re.sub(r"read: IOPS=[^,]+", "read: IOPS=-5", TEXT_BASE, count=1)),
    ("text-bw-garbled", re.sub(r"(read: IOPS=[^,]+, )BW=", r"\1BW=x", TEXT_BASE, count=1)),
    ("text-iops-1e12", re.sub(r"read: IOPS=[^,]+", "read: IOPS=1000000000k", TEXT_BASE, count=1)),
    ("text-bw-contradicts", re.sub(r"(read: IOPS=[^,]+, )BW=[0-9.]+", r"\g<1>BW=999999", TEXT_BASE, count=1)),
    ("text-runtime-zero", re.sub(r"/\d+msec\)", "/0msec)", TEXT_BASE, count=1)),
    ("text-lat-avg-nan", re.sub(r"(clat \(usec\): min=[^,]+, max=[^,]+, avg=)[0-9.]+", r"\1nan", TEXT_BASE, count=1)),
    # a paste that ends inside a line label: what followed (the write figures) is gone
    ("text-cut-at-write-io", TEXT_BASE[: TEXT_BASE.index("write: IOPS") + len("write: IO")]),
    ("text-cut-at-read-i", TEXT_BASE[: TEXT_BASE.index("read: IOPS") + len("read: I")]),
    ("text-cut-at-lat-u", TEXT_BASE[: TEXT_BASE.index("lat (usec)") + len("lat (u")]),
    ("text-cut-at-clat-perc", TEXT_BASE[: TEXT_BASE.index("clat percentiles") + len("clat perc")]),
]


def test_the_named_mutations_are_36_and_differ_from_the_original():
    assert len(REFUSED) == 36
    originals = {json.dumps(JSON_BASE), TEXT_BASE}
    assert not any(text in originals for _, text in REFUSED)


@pytest.mark.parametrize("name,text", REFUSED, ids=[n for n, _ in REFUSED])
def test_impossible_figures_are_refused_in_one_line(tmp_path, name, text):
    code, err, _ = _import(tmp_path, f"{name}.out", text)
    assert code == 2, (name, err)


@pytest.mark.parametrize("name,text", [("json", json.dumps(JSON_BASE)), ("text", TEXT_BASE)])
def test_the_originals_import_with_their_figures(tmp_path, name, text):
    code, err, _records = _import(tmp_path, f"original.{name}", text)
    assert code == 0, err
    (fio,) = _stored_results(tmp_path)
    assert set(fio.jobs[0].directions) == {"read", "write"}
    assert result_problems(fio) == []
    if name == "json":
        assert fio.jobs[0].directions["read"].iops == JSON_BASE["jobs"][0]["read"]["iops"]


FIGURE_KEYS = ("iops", "bw_bytes", "io_bytes", "runtime", "total_ios")
values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.sampled_from(["NaN", "Infinity", "-1", "1e400", "", "12k"]),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(direction=st.sampled_from(["read", "write"]), key=st.sampled_from(FIGURE_KEYS), value=values)
def test_any_value_in_a_json_figure_is_stored_as_written_and_sound_or_refused(direction, key, value):
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        code, err, _ = _import(tmp, "mutated.json", _json_with(direction, key, value))
        if code == 0:
            (fio,) = _stored_results(tmp)
            assert result_problems(fio) == []
            stored = fio.jobs[0].directions[direction]
            figure = {"iops": stored.iops, "bw_bytes": stored.bw_bytes, "io_bytes": stored.io_bytes,
                      "runtime": stored.runtime_ms, "total_ios": stored.total_ios}[key]  # fmt: skip
            given_value = float(value)  # accepted: the value was a number, and is stored as written
            assert math.isfinite(given_value) and given_value >= 0
            assert figure == pytest.approx(given_value, rel=1e-9, abs=0.5)
        else:
            assert code == 2, err


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.integers(min_value=1, max_value=len(TEXT_BASE)))
def test_a_text_output_cut_anywhere_keeps_every_direction_it_shows_or_is_refused(cut):
    text = TEXT_BASE[:cut]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        code, err, _ = _import(tmp, "cut.txt", text)
        if code == 0:
            (fio,) = _stored_results(tmp)
            assert result_problems(fio) == []
            shown = {m.group(1) for m in re.finditer(r"^\s*(read|write)\s*:\s*IOPS", text, re.M)}
            assert shown <= set(fio.jobs[0].directions), (shown, text[-80:])
        else:
            assert code == 2, err


def _wrap_percentile_lines(text: str, width: int = 72) -> str:
    """As a mail client wraps a paste: a percentile table line longer than ``width`` is broken at
    the last space before it (``20.00th=[`` at a line's end, ``43],`` on the next)."""
    out = []
    for line in text.splitlines():
        while "th=[" in line and len(line) > width:
            cut = line.rfind(" ", 0, width)
            out.append(line[:cut])
            line = line[cut + 1 :]
        out.append(line)
    return "\n".join(out) + "\n"


def test_a_wrapped_paste_on_its_own_imports_every_percentile(tmp_path):
    wrapped = _wrap_percentile_lines(TEXT_BASE)
    assert wrapped.count("\n") > TEXT_BASE.count("\n") and any(ln.rstrip().endswith("th=[") for ln in wrapped.splitlines())
    code, err, _ = _import(tmp_path, "paste.txt", wrapped)
    assert code == 0, err
    (fio,) = _stored_results(tmp_path)
    from storbench.fio import parse_output

    whole = parse_output(TEXT_BASE)
    for direction in ("read", "write"):
        assert fio.jobs[0].directions[direction].clat_ns.percentiles == whole.jobs[0].directions[direction].clat_ns.percentiles
        assert len(fio.jobs[0].directions[direction].clat_ns.percentiles) == 17


SUMMARY_MAIL = """Hi all,

here are the numbers from the controller test.

Write cache ON:
  write: IOPS=12.3k, BW=48.1MiB/s (50.4MB/s)(2886MiB/60001msec)
     lat (usec): min=45, max=9123, avg=80.77, stdev=31.02

Write cache OFF:
  write: IOPS=2104, BW=8418KiB/s (8620kB/s)(493MiB/60002msec)
     lat (usec): min=210, max=48211, avg=474.10, stdev=102.33

Regards,
Bob
"""


def test_summary_fragments_are_results_of_their_own_under_their_own_labels(tmp_path):
    """Each quoted write/lat pair under its label: it became one result labelled with the first
    label and carrying the second one's figure."""
    code, err, records = _import(tmp_path, "mail.txt", SUMMARY_MAIL)
    assert code == 0, err
    got = [(r["label"], r["jobs"][0]["write"]["iops"], r["jobs"][0]["write"]["lat_ns"]["mean"]) for r in records]
    assert got == [("Write cache ON", 12300.0, 80770.0), ("Write cache OFF", 2104.0, 474100.0)]
    assert "2 summary fragments" in err and "not read" not in err


def test_summary_lines_that_repeat_full_outputs_are_said_once_not_stored_twice(tmp_path):
    """A mail whose summary quotes the direction lines of the outputs it then shows in full: the
    quotes are recognised as repeats (same figures as a full output below), said in one line and
    not stored; a summary line with figures of its own is still a result under its own label."""
    full_a = (DATA / "fio-text" / "public" / "05-fio3.1-randrw-libaio.txt").read_text()
    full_b = (DATA / "fio-text" / "public" / "09-fio3.19-randwrite-qd1.txt").read_text()
    mail = (
        "Summary:\n\n"
        "libaio randrw:\n  write: IOPS=24.7k, BW=96.3MiB/s (101MB/s)(615MiB/6385msec)\n\n"
        "qd1 randwrite:\n  write: IOPS=7711, BW=30.1MiB/s (31.6MB/s)(1808MiB/60001msec); 0 zone resets\n"
        "     lat (usec): min=116, max=1216, avg=128.84, stdev= 5.47\n\n"
        "Old box, from memory:\n  write: IOPS=2104, BW=8418KiB/s (8620kB/s)(493MiB/60002msec)\n\n"
        "Full outputs follow.\n\n## libaio randrw\n\n" + full_a + "\n## qd1 randwrite\n\n" + full_b
    )
    code, err, records = _import(tmp_path, "mail.txt", mail)
    assert code == 0, err
    assert "2 summary lines repeat outputs found in full in the same document (lines 4, 7): not stored twice" in err
    assert "1 summary fragment " in err
    got = sorted((r["label"], r["jobs"][0]["write"]["iops"], "percentiles" in str(r["jobs"][0]["write"])) for r in records)
    # the full outputs (with their percentiles) under their headings; the repeats are not second results
    assert got == [("Old box, from memory", 2104.0, False), ("libaio randrw", 24700.0, True), ("qd1 randwrite", 7711.0, True)]
