"""Application loads' outputs in a whole document (storbench import): a Markdown post with pgbench
9.x and 16, dbench, fs_mark, sysbench 0.4 and 1.1 outputs in code fences under headings, beside a
fio output; each stored as a result of its load with the figures its reader gives the output
alone, what it lacks said, nothing of it taken for fio's (sysbench 1.1's "read: IOPS=" lines)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storbench.loads import tool

DATA = Path(__file__).resolve().parent.parent / "data"
LOADS = DATA / "loads"

#: (heading, tool, file): the post's sections, each a fenced output
SECTIONS = (
    ("PostgreSQL 9.x, prepared custom query", "pgbench", "published-pgbench-9.x-custom-16clients-progress.txt"),
    ("PostgreSQL 16 on ZeroFS", "pgbench", "published-pgbench-16.9-tpcb-50clients.txt"),
    ("dbench, two clients", "dbench", "debian12-dbench-4.00-2clients-5s.txt"),
    ("fs_mark with fsync", "fs_mark", "debian12-fs_mark-3.3-2threads-2loops-fsync.txt"),
    ("sysbench 0.4 random writes", "sysbench-fileio", "published-sysbench-0.4.12.5-fileio-rndwr-async.txt"),
    ("sysbench 1.1 rewrite", "sysbench-fileio", "published-sysbench-1.1.0-fileio-seqrewr-direct.txt"),
)


def post(fio_output: str | None = None) -> str:
    """The Markdown post: a paragraph, then each section's heading, a sentence and its fenced output."""
    parts = ["# Storage for our database host\n", "What each tool said on the candidates.\n"]
    for heading, _tool, file in SECTIONS:
        parts.append(f"## {heading}\n\nThe run's output:\n\n```\n{(LOADS / file).read_text().rstrip()}\n```\n")
    if fio_output is not None:
        parts.append(f"## fio, for comparison\n\n```\n{fio_output.rstrip()}\n```\n")
    return "\n".join(parts)


def test_a_post_of_every_loads_output_imports_whole(cli, tmp_path):
    fio_text = (DATA / "fio-text").glob("seed000-01.txt")
    fio_output = next(fio_text).read_text()
    doc = tmp_path / "post.md"
    doc.write_text(post(fio_output))
    res = cli("import", str(doc), "--group-by", "heading", "--label", "post", "--json")
    assert res.code == 0, res.err
    records = json.loads(res.out)
    loads = [r for r in records if r.get("tool")]
    assert [(r["target"], r["tool"]) for r in loads] == [(h, t if t != "fs_mark" else "fs_mark") for h, t, _ in SECTIONS]
    for r, (heading, name, file) in zip(loads, SECTIONS):
        alone = tool(name).pasted((LOADS / file).read_text())
        assert r["workload"] == alone.workload and r["label"] == heading
        assert [(m["unit"], m["value"]) for m in r["measures"]] == [(m.unit, m.value) for m in alone.measures]
        assert {k: r["settings"][k] for k in alone.settings} == dict(alone.settings)
    assert [r["workload"] for r in loads] == ["pgbench-custom-query", "pgbench-rw", "dbench-2", "fsmark-4k-fsync", "sysbench-fileio-rndwr",
                                              "sysbench-fileio-seqrewr"]  # fmt: skip
    # the fio output beside them is found as before, and nothing of a load's is taken for fio's
    fio = [r for r in records if not r.get("tool")]
    assert len(fio) == 1 and fio[0]["target"] == "fio, for comparison" and fio[0]["jobs"]
    # what a paste lacks is said, per output, never made up
    said = [ln for ln in res.err.splitlines() if "left out, not made up" in ln]
    assert len(said) == 2 and all("pgbench output at line" in ln and "latency percentiles" in ln for ln in said)
    assert "6 application load outputs" in res.err and "1 fio output" in res.err
    assert not any(m["unit"].startswith("latency p9") for r in loads if r["tool"] == "pgbench" for m in r["measures"])
    # one table: the two sysbench versions side by side (different loads: a row each), pgbench's 16 under its heading
    doc_cmp = json.loads(cli("compare", "post", "--json").out)
    tps = [row for row in doc_cmp["rows"] if row["workload"] == "pgbench-rw" and row["metric"] == "tps"]
    assert len(tps) == 1 and [c["mean"] for c in tps[0]["cells"].values() if c] == [pytest.approx(53041.006947)]


def test_a_load_output_that_cannot_be_read_is_named_and_the_rest_imported(cli, tmp_path):
    cut = "\n".join((LOADS / "published-sysbench-1.1.0-fileio-seqrewr-direct.txt").read_text().splitlines()[:22])
    doc = tmp_path / "cut.md"
    doc.write_text(f"# cut\n\n```\n{cut}\n```\n\n# dbench\n\n```\n{(LOADS / 'debian12-dbench-4.00-2clients-5s.txt').read_text()}```\n")
    res = cli("import", str(doc), "--json")
    assert res.code == 0, res.err
    assert [r["workload"] for r in json.loads(res.out)] == ["dbench-2"]
    [line] = [ln for ln in res.err.splitlines() if "skipped" in ln]
    assert line.startswith("cut.md: lines 4-25 skipped: sysbench-fileio output storbench cannot read: sysbench fileio output cut short"), line


@pytest.mark.parametrize("ending", ["\r\n", "\r"])
def test_a_post_with_other_line_ends_imports_the_same(cli, tmp_path, ending):
    """Windows' CR LF and old Mac's lone CR: the loads' lines are blanked for fio's reader by the
    lines the document is read as, so nothing of theirs is taken for fio's."""
    fio_output = (DATA / "fio-text" / "seed000-01.txt").read_text()
    doc = tmp_path / "post.md"
    doc.write_bytes(post(fio_output).replace("\n", ending).encode())
    res = cli("import", str(doc), "--group-by", "heading", "--label", "post", "--json")
    assert res.code == 0, res.err
    records = json.loads(res.out)
    assert [r["workload"] for r in records if r.get("tool")] == ["pgbench-custom-query", "pgbench-rw", "dbench-2", "fsmark-4k-fsync",
                                                                 "sysbench-fileio-rndwr", "sysbench-fileio-seqrewr"]  # fmt: skip
    fio = [r for r in records if not r.get("tool")]
    assert len(fio) == 1 and fio[0]["target"] == "fio, for comparison"
    assert "6 application load outputs" in res.err and "1 fio output" in res.err
