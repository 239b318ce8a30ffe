"""Whole documents imported: every fio output of a post, a mail, an appended log, a saved page, a
JSON document with notes around it; each checked against the same output parsed alone.

The documents are assembled here from the real outputs in ../shared/fixtures (a 2021
ext4/xfs/zfs comparison's 18 fio 3.7 runs, 18 public outputs of fio 2.0.2 to 3.41, fio 3.33
JSON and terse), the way they appear in the wild: blog headings and en-dash command lines
with prompts, a mail quoted with "> " and wrapped at 72 columns, ``>>`` logs, HTML ``<pre>``
blocks with entities."""

from __future__ import annotations

import dataclasses
import html
import json
from pathlib import Path

import pytest

from storbench.documents import read_document
from storbench.documents.context import parse_command
from storbench.documents.source import Line, document_lines, unwrap
from storbench.fio import parse_output
from storbench.fio.text import classify_line

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures"
SEED = FIXTURES / "fio-text"
PUBLIC = FIXTURES / "fio-text" / "public"
JSON = FIXTURES / "fio-json"

pytestmark = pytest.mark.skipif(not SEED.is_dir(), reason="needs ../shared/fixtures beside the project")

EN_DASH_COMMAND = ("[root@lab data]# fio \u2013randrepeat=1 \u2013ioengine=libaio \u2013direct=1 \u2013gtod_reduce=1 \u2013name=test "
                   "\u2013filename=test \u2013bs=4k \u2013iodepth=64 \u2013size=4G \u2013readwrite=randrw \u2013rwmixread=75")  # fmt: skip


def seed(i: int) -> str:
    return (SEED / f"seed000-{i:02d}.txt").read_text()


def public() -> list[Path]:
    return sorted(PUBLIC.glob("[0-9]*.txt"))


def wrap72(line: str) -> list[str]:
    """What a mail client does to a long line: cut at the last space before column 72."""
    out = []
    while len(line) > 72:
        cut = line.rfind(" ", 0, 73)
        if cut <= len(line) - len(line.lstrip()):
            break
        out.append(line[:cut].rstrip())
        line = line[cut + 1 :].lstrip()
    return out + [line]


def post() -> str:
    parts = ["# ext4 vs xfs vs zfs on a 4-disk RAID 10\n", "The machine has four disks. Everything ran three times.\n"]
    for fs, numbers in (("ext4", range(1, 7)), ("XFS", range(7, 13)), ("ZFS", range(13, 19))):
        parts.append(f"\n## {fs} results\n\n")
        for i in numbers:
            parts.append(f"Run {i}, same job as before.\n\n{EN_DASH_COMMAND}\n{seed(i)}\n")
    return "".join(parts)


def mail() -> str:
    body = ["Hi all,", "", "here are my numbers, write cache off first.", ""]
    for title, numbers in (("# Write cache DISABLED", range(7, 13)), ("# Write cache ENABLED", range(13, 19))):
        body.append(title)
        for i in numbers:
            body.append("$ fio --name=test --rw=randrw --bs=4k --iodepth=64 --size=4G")
            for line in seed(i).splitlines():
                body.extend(wrap72(line))
            body.append("")
    quoted = "\n".join("> " + ln if ln else ">" for ln in body)
    return f"From: bob@example.org\nSubject: Re: slow RAID 10\n\nOn Mon, Bob wrote:\n{quoted}\n-- \nBob\n"


def same(a, b) -> list[str]:
    """The fields in which two parsed results differ."""
    return [f.name for f in dataclasses.fields(a) if getattr(a, f.name) != getattr(b, f.name)]


def test_a_blog_post_of_18_runs_gives_18_results_with_headings_and_commands():
    doc = read_document(post())
    assert len(doc.found) == 18 and doc.skipped == ()
    for f, i in zip(doc.found, range(1, 19)):
        assert same(f.result, parse_output(seed(i))) == [], i  # each as if imported alone
        assert f.output.unread == ()
    assert [f.context.heading for f in doc.found] == ["ext4 results"] * 6 + ["XFS results"] * 6 + ["ZFS results"] * 6
    cmd = doc.found[0].context.command
    assert cmd is not None and cmd.host == "lab" and cmd.line == 8
    assert cmd.text.startswith("fio --randrepeat=1 --ioengine=libaio --direct=1")
    assert dict(cmd.options) == {"randrepeat": "1", "ioengine": "libaio", "direct": "1", "gtod_reduce": "1", "name": "test",
                                 "filename": "test", "bs": "4k", "iodepth": "64", "size": "4G", "readwrite": "randrw", "rwmixread": "75"}  # fmt: skip
    # the figures, as printed in seed000-10.txt (the README's golden numbers)
    ten = doc.found[9].result.jobs[0].directions
    assert ten["read"].iops == 712 and ten["read"].clat_ns.mean_ns == pytest.approx(66097970.0)
    assert ten["write"].iops == 330 and ten["write"].clat_ns.mean_ns == pytest.approx(2268270.0)
    assert [f.label("heading") for f in doc.found][:2] == ["ext4 results", "ext4 results"]
    assert [f.label("none") for f in doc.found][:2] == [None, None]


def test_a_quoted_mail_wrapped_at_72_columns_loses_nothing():
    text = mail()
    assert max(len(ln) for ln in text.splitlines()) <= 74  # "> " + 72
    doc = read_document(text)
    assert len(doc.found) == 12 and doc.skipped == ()
    for f, i in zip(doc.found, range(7, 19)):
        assert same(f.result, parse_output(seed(i))) == [], i
        assert f.output.unread == ()
    vm = doc.found[3].result.jobs[0].directions["read"]  # seed000-10: 17 clat percentiles, two of them wrapped
    assert len(vm.clat_ns.percentiles) == 17
    assert [f.context.heading for f in doc.found] == ["Write cache DISABLED"] * 6 + ["Write cache ENABLED"] * 6


def test_a_log_appended_with_double_redirect_across_fio_versions():
    files = public()
    log = "".join(p.read_text(errors="replace").rstrip("\n") + "\n" for p in files)
    doc = read_document(log)
    assert len(doc.found) == len(files) == 18 and doc.skipped == ()
    for f, p in zip(doc.found, files):
        assert same(f.result, parse_output(p.read_text(errors="replace"))) == [], p.name
    jobs = [len(f.result.jobs) for f in doc.found]
    assert jobs[11] == 4  # 12-fio3.25-4jobs-no-group-reporting: one run of four jobs stays one result
    windows = doc.found[14].context.command  # "C:\Users\danil\Documents\k8s-public-copy>fio --rw=write ..."
    assert windows is not None and dict(windows.options)["fdatasync"] == "1" and dict(windows.options)["name"] == "mytest"
    jobfile = doc.found[13].context.command  # "🤒  sudo fio /home/.../4k-read.fio"
    assert jobfile is not None and jobfile.job_files == ("/home/martins3/core/vn/docs/kernel/code/aio/4k-read.fio",)


def test_a_saved_html_page_with_pre_blocks():
    blocks = "".join(f"<h2>Disk {i}</h2>\n<p>We ran <code>fio</code> like this &amp; got:</p>\n<pre>{html.escape(seed(i))}</pre>\n"
                     for i in (1, 10, 13))  # fmt: skip
    page = f"<!DOCTYPE html>\n<html><head><title>t</title><style>pre{{color:red}}</style></head><body>\n<h1>Bench</h1>\n{blocks}</body></html>\n"
    doc = read_document(page)
    assert doc.html and len(doc.found) == 3 and doc.skipped == ()
    for f, i in zip(doc.found, (1, 10, 13)):
        assert same(f.result, parse_output(seed(i))) == [], i  # "&gt;=64" read as ">=64"
        assert f.context.heading == f"Disk {i}"
    # line numbers are the page's own: the first <pre> starts on line 6
    assert doc.found[0].output.first_line == 6


def test_json_terse_and_text_in_one_document_with_notes_around():
    jsonplus = (JSON / "b_jsonplus.json").read_text()
    terse = (JSON / "g_terse_v3.txt").read_text()
    normal_and_json = (JSON / "e_normal_plus_json.txt").read_text()  # one run printed twice (json,normal)
    text = (f"Results of the json+ run (note: direct=1):\n{jsonplus}\n\nterse, for the spreadsheet:\n{terse}\n"
            f"and with --output-format=json,normal:\n{normal_and_json}\nthat's all\n{seed(2)}")  # fmt: skip
    doc = read_document(text)
    assert [f.output.kind for f in doc.found] == ["json", "terse", "json", "text"] and doc.skipped == ()
    assert same(doc.found[0].result, parse_output(jsonplus)) == []
    assert same(doc.found[1].result, parse_output(terse)) == []
    # the JSON, once; the job lines fio printed before it are that run's header, not notes of it
    assert same(doc.found[2].result, parse_output(normal_and_json)) == ["notes"] and doc.found[2].result.notes == ()
    assert doc.found[0].context.heading == "Results of the json+ run (note: direct=1)"  # a label line, its ':' off
    assert doc.found[1].context.heading == "terse, for the spreadsheet"


def test_fragments_are_named_and_the_outputs_kept():
    truncated = (JSON / "h_randrw.json").read_text()[:1500]
    text = f"intro\n{seed(1)}\nthen this broke:\n{truncated}\n\nand a job line alone:\n{seed(2).splitlines()[0]}\n\nlast:\n{seed(3)}"
    doc = read_document(text)
    assert len(doc.found) == 2
    lines = text.splitlines()
    json_line = next(i for i, ln in enumerate(lines, 1) if ln.startswith("{"))
    def_line = lines.index("and a job line alone:") + 2
    assert [(s.first_line, s.reason.split(" on line")[0]) for s in doc.skipped] == [
        (json_line, "malformed fio JSON"), (def_line, "fio's job lines without a result block")]  # fmt: skip
    assert same(doc.found[1].result, parse_output(seed(3))) == []


def test_nothing_found_and_single_outputs_are_as_before(cli, tmp_path: Path):
    prose = tmp_path / "prose.txt"
    prose.write_text("no fio here\njust words = and numbers 42\n")
    res = cli("import", str(prose))
    assert res.code != 0 and res.err == f"storbench: error: {prose}: not fio output: found no fio JSON, terse or classic text result in it\n"
    one = tmp_path / "one.txt"
    one.write_text(seed(10))
    res = cli("import", str(one), "--json")
    assert res.code == 0 and res.err == ""
    (rec,) = json.loads(res.out)
    assert rec["source"] == str(one) and rec["workload"] == "vm" and rec["label"] is None
    assert rec["jobs"][0]["read"]["iops"] == 712


def test_import_a_post_grouped_by_heading_and_compared(cli, tmp_path: Path):
    path = tmp_path / "post.txt"
    path.write_text(post())
    res = cli("import", str(path), "--group-by", "heading", "--label", "published")
    assert res.code == 0, res.err
    assert res.err.splitlines()[0] == "post.txt: 18 fio outputs -> run 1 (18 results)"
    recs = json.loads(cli("show", "1", "--json").out)
    assert len(recs) == 18
    assert {r["target"] for r in recs} == {"ext4 results", "XFS results", "ZFS results"}
    assert recs[0]["label"] == "ext4 results" and recs[0]["source"] == f"{path}:9"
    assert recs[0]["options"]["readwrite"] == "randrw" and recs[0]["options"]["rw"] == "randrw"  # the command's and fio's
    cmp = cli("compare", "1", "--json")
    assert cmp.code == 0, cmp.err
    names = sorted(c["name"] for c in json.loads(cmp.out)["configs"])
    assert names == ["published (XFS results)", "published (ZFS results)", "published (ext4 results)"]


def test_import_says_what_it_could_not_read(cli, tmp_path: Path):
    path = tmp_path / "mixed.txt"
    lines = seed(1).splitlines()
    lines.insert(8, "^C and something the mail client mangled = 3")
    path.write_text("\n".join(lines) + "\n\nnext\n" + seed(2) + "\n{\n  \"fio version\" : \"fio-3.7\",\n  \"jobs\" : [\n")
    res = cli("import", str(path))
    assert res.code == 0, res.err
    said = res.err.splitlines()
    assert said[0] == "mixed.txt: 2 fio outputs -> run 1 (2 results)"
    assert "mixed.txt: line 9 (in the output at line 1) not read: '^C and something the mail client mangled = 3'" in said
    assert any(s.startswith("mixed.txt: lines ") and "skipped: truncated fio JSON" in s for s in said), said


@pytest.mark.parametrize(
    ("text", "host", "options"),
    [
        ("$ fio --name=a --rw=read", None, {"name": "a", "rw": "read"}),
        ("user@box:~/t$ sudo fio \u2014rw=randread \u2013bs=4k --output-format=json", "box", {"rw": "randread", "bs": "4k"}),
        ("[root@lab data]# fio --name=\u201cmy job\u201d --direct=1 > out.txt", "lab", {"name": "my job", "direct": "1"}),
        ("# fio --time_based --runtime=5 job.fio", None, {"time_based": None, "runtime": "5"}),
    ],
)
def test_command_lines(text, host, options):
    cmd = parse_command(text, 1)
    assert cmd is not None and cmd.host == host and dict(cmd.options) == options


def test_continuation_lines_and_prose_are_not_commands():
    doc = read_document("## Sequential\n$ fio --name=seq \\\n    --rw=read \\\n    --bs=1m\n" + seed(3))
    (f,) = doc.found
    assert dict(f.context.command.options) == {"name": "seq", "rw": "read", "bs": "1m"} and f.context.command.line == 2
    assert f.context.heading == "Sequential"
    assert parse_command("I used fio for this.", 1) is None or parse_command("I used fio for this.", 1).options == ()


def test_unwrap_joins_only_what_a_mail_client_cut():
    lines = [Line(1, "     |  1.00th=[ 1029],  5.00th=[ 1045], 10.00th=[ 1057], 20.00th=["), Line(2, "1156],"),
             Line(3, "     | 30.00th=[ 2073]"), Line(4, "XFS results"), Line(5, "  IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%,"),
             Line(6, ">=64=0.0%"), Line(7, "$ fio --name=x --rw=read")]  # fmt: skip
    out = unwrap(document_lines("\n".join(ln.text for ln in lines)), lambda s: classify_line(s) is not None)
    assert [ln.number for ln in out] == [1, 3, 4, 5, 7]
    assert out[0].text.endswith("20.00th=[1156],") and out[3].text.endswith("32=0.0%, >=64=0.0%")


def test_import_a_directory(cli, tmp_path: Path):
    folder = tmp_path / "outs"
    folder.mkdir()
    (folder / "a.txt").write_text(seed(1))
    (folder / "b.json").write_text((JSON / "h_randrw.json").read_text())
    (folder / "c-post.txt").write_text(post())
    (folder / ".hidden").write_text("not imported")
    res = cli("import", str(folder), "--json")
    assert res.code == 0, res.err
    recs = json.loads(res.out)
    assert len(recs) == 1 + 1 + 18
    assert [r["source"] for r in recs[:2]] == [str(folder / "a.txt"), str(folder / "b.json")]
    assert res.err.splitlines() == ["c-post.txt: 18 fio outputs -> run 1 (18 results)"]
    (folder / "d.txt").write_text("no fio here\n")
    bad = cli("import", str(folder))
    assert bad.code == 2 and bad.err.startswith(f"storbench: error: {folder / 'd.txt'}: not fio output")
    assert len(json.loads(cli("list", "--json").out)) == 1  # nothing of the refused import was stored
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli("import", str(empty)).err == f"storbench: error: {empty}: the directory holds no files to import\n"
