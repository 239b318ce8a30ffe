"""Reports from real runs: real fio through the real CLI into a real store, then
``storbench report`` (HTML and Markdown) checked against what the store holds."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markupsafe import escape

from storbench import compare
from storbench.commands.common import App
from storbench.context import Env
from storbench.metrics import direction_figures
from storbench.model import Finding
from storbench.render import chartdata
from storbench.render.html import embedded, format_html_report
from storbench.render.markdown import format_markdown_report, md
from storbench.stats.core import summarize
from storbench.store import Store
from storbench.units import fmt_bw, fmt_iops, fmt_ns

from conftest import Cli, needs_fio

pytestmark = needs_fio

SCRIPT_LABEL = "<script>alert(1)</script>"
SMALL = ("--size", "16m", "--runtime", "500ms")
WORKLOADS = ("rnd4k-q1t1-read", "seq1m-q1t1-read")
FORMAT = {"iops": fmt_iops, "bw_bytes": fmt_bw, "lat_mean_ns": fmt_ns, "clat_p99_ns": fmt_ns}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

SWEEP_SUITE = """
[workload.sweep]
description = "one workload, swept over bs with --sweep"
fio = { ioengine = "libaio", direct = 1, rw = "randread", bs = "4k", iodepth = 2, size = "16m", runtime = 1, time_based = true }
[workload.variety-4k]
description = "a suite's fixed variety: not a sweep"
fio = { ioengine = "libaio", direct = 1, rw = "randread", bs = "4k", iodepth = 2, size = "16m", runtime = 1, time_based = true }
[workload.variety-1m]
description = "a suite's fixed variety: not a sweep"
fio = { ioengine = "libaio", direct = 1, rw = "randread", bs = "1m", iodepth = 2, size = "16m", runtime = 1, time_based = true }
"""


@dataclass
class Runs:
    cli: Cli
    root: Path
    a: int  # label "alpha", 2 workloads x 2 repetitions
    b: int  # label SCRIPT_LABEL, same workloads, another directory
    sweep: int  # bs sweep 4k / 64k / 1m (suite order 4k, 1m, 64k)

    def store(self) -> Store:
        return Store.open(f"sqlite:///{self.cli.db}")


def make_runs(root: Path) -> Runs:
    """Three real runs in a fresh store under ``root``."""
    cli = Cli(root)
    ids = []
    for label, sub in (("alpha", "a"), (SCRIPT_LABEL, "b")):
        target = root / sub
        target.mkdir()
        args = ["run", "--target", str(target), "--label", label, "--repeat", "2", *SMALL]
        for w in WORKLOADS:
            args += ["--workload", w]
        res = cli(*args)
        assert res.code == 0, res.err
        ids.append(len(ids) + 1)
    suite = root / "sweep.toml"
    suite.write_text(SWEEP_SUITE)
    (root / "s").mkdir()
    res = cli("run", "--suite-file", str(suite), "--target", str(root / "s"), "--label", "sweep",
              "--workload", "sweep", "--sweep", "bs=4k,1m,64k")  # fmt: skip
    assert res.code == 0, res.err
    (root / "v").mkdir()  # two workloads differing in bs, not swept: no sweep chart (issue 22: quick got one)
    res = cli("run", "--suite-file", str(suite), "--target", str(root / "v"), "--label", "variety",
              "--workload", "variety-4k", "--workload", "variety-1m")  # fmt: skip
    assert res.code == 0, res.err
    return Runs(cli=cli, root=root, a=1, b=2, sweep=3)


@pytest.fixture(scope="module")
def runs(report_runs) -> Runs:
    return report_runs


@pytest.fixture(scope="module")
def report_html(runs) -> str:
    res = runs.cli("report", "alpha", SCRIPT_LABEL, "-o", "report.html")
    assert res.code == 0, res.err
    path = Path(res.out.strip())
    assert path == runs.root / "report.html"
    return path.read_text(encoding="utf-8")


class _Cells(HTMLParser):
    """The figure cells of the tables: (data-* attributes, text)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.cells: list[tuple[dict[str, str], str]] = []
        self._open: dict[str, str] | None = None
        self._row: dict[str, str] = {}
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr":  # the row names the configuration and direction, each cell its metric
            self._row = {k: v for k, v in a.items() if k in ("data-config", "data-direction")}
        if tag == "td" and "data-metric" in a:
            self._open, self._text = {**self._row, **a}, []

    def handle_endtag(self, tag):
        if tag == "td" and self._open is not None:
            self.cells.append((self._open, "".join(self._text)))
            self._open = None

    def handle_data(self, data):
        if self._open is not None:
            self._text.append(data)


def _script(html: str, element_id: str):
    """An embedded part of the page, unpacked (gzip + base64, as the page's script does)."""
    return embedded(html, element_id)


def _unpacked(html: str) -> str:
    """The page with its packed parts (the data, the figures, plotly.js) as plain text."""
    def plain(m: re.Match) -> str:
        part = embedded(html, m.group(1))
        return m.group(0).replace(m.group(2), part if isinstance(part, str) else json.dumps(part))

    return re.sub(r'<script type="application/gzip" id="([^"]+)"[^>]*>(.*?)</script>', plain, html, flags=re.DOTALL)


def _stored_values(runs: Runs, run_id: int) -> dict[tuple[str, str, str], list[float]]:
    """(workload, direction, metric) -> one value per repetition, straight from the store."""
    with contextlib.closing(runs.store()) as store:
        records = store.results(run_id)
    out: dict[tuple[str, str, str], list[float]] = {}
    for rec in records:
        for direction, figures in direction_figures(rec.fio).items():
            for metric, value in figures.items():
                if value is not None:
                    out.setdefault((rec.workload, direction, metric), []).append(value)
    return out


# --------------------------------------------------------------------------- HTML content


def test_every_configuration_and_workload_is_in_the_report(report_html):
    escaped = str(escape(SCRIPT_LABEL))
    assert "alpha" in report_html and escaped in report_html
    for w in WORKLOADS:
        assert f'data-workload="{w}"' in report_html
        assert f"<h2>{w}</h2>" in report_html
        assert f'<summary>{w}</summary>' in report_html  # its fio job file
    for heading in ("Summary", "Runs", "Configurations", "Findings", "fio job files"):
        assert f">{heading}</h2>" in report_html
    assert "fio-3." in report_html


def test_job_text_and_storage_are_shown(runs, report_html):
    with contextlib.closing(runs.store()) as store:
        records = store.results(runs.a) + store.results(runs.b)
    for rec in records:
        assert str(escape(rec.job_text)) in report_html
    assert f"target: {runs.root / 'a'} (dir)" in report_html
    assert "Settings that differ" in report_html or "No storage or host setting differs" in report_html


def test_table_figures_equal_the_stored_results(runs, report_html):
    by_workload: dict[str, dict] = {}
    # the cells follow the page order: group them by the workload section they are in
    for w in WORKLOADS:
        start = report_html.index(f'data-workload="{w}"')
        end = report_html.find('<section class="workload"', start)
        sub = _Cells()
        sub.feed(report_html[start : end if end > 0 else len(report_html)])
        by_workload[w] = {(a["data-config"], a["data-direction"], a["data-metric"]): (a, t) for a, t in sub.cells}
    checked = 0
    for run_id, key in ((runs.a, "run1"), (runs.b, "run2")):
        for (workload, direction, metric), values in _stored_values(runs, run_id).items():
            attrs, text = by_workload[workload][(key, direction, metric)]
            s = summarize(values)
            assert float(attrs["data-mean"]) == s.mean
            assert int(attrs["data-n"]) == len(values) == 2
            fmt = FORMAT[metric]
            assert text.startswith(f"{fmt(s.mean)} ± {fmt(s.stddev)}"), (workload, metric, text)
            checked += 1
    assert checked >= 2 * 2 * 4
    # the charts' error bars are the tables' spread: each bar's ± is its configuration's sd (a
    # share of its mean, whatever the chart's unit), as the text above the charts says
    spreads = {(w, d): [] for w in WORKLOADS for d in ("read", "write")}
    for run_id in (runs.a, runs.b):
        for (workload, direction, _metric), values in _stored_values(runs, run_id).items():
            s = summarize(values)
            spreads.setdefault((workload, direction), []).append(s.stddev / s.mean if s.mean else 0.0)
    bars = 0
    figures = _script(report_html, "storbench-figures")
    for w in WORKLOADS:
        start = report_html.index(f'data-workload="{w}"')
        section = report_html[start : report_html.index("</section>", start)]
        assert "error bars ± one standard deviation (the table's ± sd)" in section
        for index in re.findall(r'<div class="plot" data-fig="(\d+)"', section.split("<h4>")[0]):
            for trace in figures[int(index)]["data"]:
                for x, err in zip(trace["x"], trace["error_x"]["array"]):
                    assert any(err / x == pytest.approx(r, rel=1e-9) for r in spreads[(w, trace["name"])]), (w, trace["name"], err / x)
                    bars += 1
    assert bars >= 2 * 2
    # the mean IOPS printed for the baseline is the one a person would compute
    iops = _stored_values(runs, runs.a)[("rnd4k-q1t1-read", "read", "iops")]
    assert fmt_iops(sum(iops) / len(iops)) in report_html


def test_embedded_data_equals_the_store(runs, report_html):
    data = _script(report_html, "storbench-data")
    assert [c["name"] for c in data["configs"]] == ["alpha", SCRIPT_LABEL]
    # a report is made to be shared: device serial numbers stay out of it
    with contextlib.closing(runs.store()) as store:
        serials = {d.serial for r in store.results(runs.a) if r.storage for d in r.storage.devices if d.serial}
    assert all(s not in report_html for s in serials)
    assert data["baseline"] == "run1"
    stored = {"run1": _stored_values(runs, runs.a), "run2": _stored_values(runs, runs.b)}
    for row in data["rows"]:
        for key, cell in row["cells"].items():
            values = stored[key][(row["workload"], row["direction"], row["metric"])]
            assert sorted(cell["values"]) == sorted(values)
            assert cell["mean"] == summarize(values).mean
    # every chart has its figure, and the bar charts carry the same means (IOPS: unscaled)
    figures = _script(report_html, "storbench-figures")
    assert len(figures) == len(re.findall(r'data-fig="\d+"', report_html))
    iops_bars = [f for f in figures if f["data"] and f["data"][0].get("type") == "bar" and f["layout"]["title"]["text"].startswith("IOPS")]
    assert len(iops_bars) == len(WORKLOADS)
    means = {summarize(v).mean for k, v in stored["run1"].items() if k[2] == "iops"}
    assert means <= {x for f in iops_bars for t in f["data"] for x in t["x"]}


def test_summary_verdicts_are_prominent(runs, report_html):
    with contextlib.closing(runs.store()) as store:
        records = store.results(runs.a) + store.results(runs.b)
    groups = compare.configurations(records, {1: "alpha", 2: SCRIPT_LABEL})
    cmp = compare.compare(groups)
    summary = report_html[report_html.index('<section class="summary"') : report_html.index("</section>")]
    # each verdict with the findings that put its figures in doubt (a busy machine's host-cpu-busy)
    verdicts = compare.verdict_lines(cmp, caveats=compare.finding_caveats({c.key: list(m) for c, m in groups}))
    assert len(verdicts) == len(WORKLOADS)  # one line per workload (each has one direction)
    ul = summary[summary.index('<ul class="verdicts">') : summary.index("</ul>")]
    for s in verdicts:
        assert f"<li>{escape(s)}</li>" in ul
    # the sentences stay, folded under the verdicts
    for s in compare.summary_sentences(cmp):
        assert f"<li>{escape(s)}</li>" in summary
    # before the first table
    assert report_html.index('<section class="summary"') < report_html.index("<table")


def test_findings_of_every_run_are_listed(runs, report_html):
    with contextlib.closing(runs.store()) as store:
        records = store.results(runs.a) + store.results(runs.b)
    findings = [f for r in records for f in r.findings]
    section = report_html[report_html.index('id="findings"') : report_html.index('id="jobs"')]
    for f in findings:
        assert f"<code>{f.check}</code>" in section
        assert str(escape(f.fix)) in section
    # the latest message of each check (checks re-run over the repetitions so far)
    latest = {(r.run_id, r.workload, f.check): f.message for r in sorted(records, key=lambda r: r.repetition) for f in r.findings}
    for message in latest.values():
        assert str(escape(message)) in section
    if not findings:
        assert "No findings" in section


def test_invalid_findings_make_a_red_banner(runs):
    """A record with an invalid finding (added here: which checks fire depends on the machine)."""
    with contextlib.closing(runs.store()) as store:
        records = store.results(runs.a) + store.results(runs.b)
    bad = Finding("page-cache", "invalid", "read 9 GiB/s <img src=x onerror=alert(2)> from a 16 MiB file", "use direct=1", None)
    records = [dataclasses.replace(r, findings=r.findings + (bad,)) if r.run_id == 2 and r.workload == WORKLOADS[1] else r for r in records]
    cmp = compare.compare(compare.configurations(records, {1: "alpha", 2: SCRIPT_LABEL}))
    page = format_html_report(records, cmp, generated_at="2026-01-01T00:00:00Z")
    banner = page[page.index('<div class="banner invalid"') : page.index('<section class="summary"')]
    assert f"<b>{WORKLOADS[1]}</b>" in banner and "page-cache" in banner
    assert WORKLOADS[0] not in banner
    assert "&lt;img src=x onerror=alert(2)&gt;" in page and "<img" not in page
    # the banner comes first, before the summary
    assert page.index("banner invalid") < page.index('class="summary"')


def test_nothing_is_loaded_from_the_network(report_html):
    # the page minus the packed parts (plotly.js names URLs in its code, never fetched)
    rest = re.sub(r'(<script type="application/gzip"[^>]*>)[A-Za-z0-9+/=]*</script>', r"\1</script>", report_html)
    assert len(rest) < len(report_html) - 500_000
    assert "http://" not in rest and "https://" not in rest
    assert not re.search(r"<(script|img|link|iframe|source|video|audio|embed|object)\b[^>]*\b(src|href|data)=", rest, re.IGNORECASE)
    assert "@import" not in rest and "url(" not in rest
    assert '<meta name="viewport"' in rest
    # exactly our four scripts: the packed data, figures and plotly.js, and the drawing code
    assert len(re.findall(r"<script\b", report_html)) == 4
    assert "plotly.js (basic - minified) v" in embedded(report_html, "storbench-plotly")


def test_a_script_label_is_text(report_html):
    assert SCRIPT_LABEL not in report_html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in report_html
    # inside the packed JSON the label is base64, so it cannot close the <script> element
    assert report_html.count("</script>") == 4
    data = _script(report_html, "storbench-data")
    assert data["configs"][1]["name"] == SCRIPT_LABEL
    figures = _script(report_html, "storbench-figures")
    # plotly renders a little HTML in SVG text: its labels are entity-escaped too
    labels = json.dumps(figures)
    assert SCRIPT_LABEL not in labels and "&lt;script&gt;alert(1)&lt;/script&gt;" in labels


def test_the_same_input_gives_the_same_page(runs):
    with contextlib.closing(runs.store()) as store:
        records = store.results(runs.a) + store.results(runs.b)
    cmp = compare.compare(compare.configurations(records, {1: "alpha", 2: SCRIPT_LABEL}))
    one = format_html_report(records, cmp, generated_at="t")
    assert one == format_html_report(records, cmp, generated_at="t")
    # plotly.js's partial bundle (1.19 MB, 0.53 MB packed) is most of it, not the full 4.8 MB one
    assert "plotly.js (basic - minified) v" in embedded(one, "storbench-plotly")
    assert 520_000 < len(one.encode()) < 800_000
    assert 1_190_000 < len(_unpacked(one).encode()) < 1_500_000
    # the bundle draws every trace the report makes
    from storbench.render.html import PLOTLY_TRACE_TYPES

    kinds = {t.get("type", "scatter") for f in _script(one, "storbench-figures") for t in f["data"]}
    assert kinds and kinds <= PLOTLY_TRACE_TYPES, kinds


# --------------------------------------------------------------------------- sweeps


def test_a_bs_sweep_gets_a_sweep_section(runs):
    res = runs.cli("report", "sweep", "-o", "sweep.html")
    assert res.code == 0, res.err
    page = (runs.root / "sweep.html").read_text()
    assert 'id="sweeps"' in page
    assert "Sweep over bs: 4k, 64k, 1m" in page  # sizes in order of size, not of the suite or the alphabet
    figures = _script(page, "storbench-figures")
    lines = [f for f in figures if f["layout"]["title"]["text"].startswith(("IOPS over bs", "bandwidth over bs", "mean latency over bs"))]
    assert len(lines) == 3
    for f in lines:
        assert f["data"][0]["x"] == ["4k", "64k", "1m"]
        assert f["layout"]["xaxis"]["categoryarray"] == ["4k", "64k", "1m"]
    # the bandwidth line carries the stored means
    stored = _stored_values(runs, runs.sweep)
    bw = next(f for f in lines if f["layout"]["title"]["text"].startswith("bandwidth"))
    div, _unit = chartdata.scale_for("bw_bytes", max(v[0] for k, v in stored.items() if k[2] == "bw_bytes"))
    expected = [stored[(f"sweep@bs={v}", "read", "bw_bytes")][0] / div for v in ("4k", "64k", "1m")]
    assert bw["data"][0]["y"] == pytest.approx(expected)


def test_no_sweep_without_one(report_html, runs):
    assert 'id="sweeps"' not in report_html
    # a suite's workloads that differ in bs are a variety, not a sweep
    res = runs.cli("report", "variety", "-o", "variety.html")
    assert res.code == 0, res.err
    assert 'id="sweeps"' not in (runs.root / "variety.html").read_text()


def test_option_values_sort_by_meaning():
    values = ["1m", "64k", "4k", "128k", "512", "2m"]
    assert sorted(values, key=chartdata.option_sort_key) == ["512", "4k", "64k", "128k", "1m", "2m"]
    assert sorted(["32", "1", "8"], key=chartdata.option_sort_key) == ["1", "8", "32"]
    assert sorted(["psync", "libaio", "16"], key=chartdata.option_sort_key) == ["16", "libaio", "psync"]


def test_downsample_keeps_at_most_500_points_and_the_mean():
    points = [[float(t), float(t % 7)] for t in range(2003)]
    out = chartdata.downsample(points)
    assert len(out) == 500
    assert out[0][0] == pytest.approx(1.5) and out[-1][0] > 1990
    assert sum(v for _, v in out) / 500 == pytest.approx(sum(v for _, v in points) / len(points), rel=0.01)
    assert chartdata.downsample(points[:10]) == [(p[0], p[1]) for p in points[:10]]


# --------------------------------------------------------------------------- markdown


def test_markdown_report_with_png_charts(runs):
    res = runs.cli("report", "alpha", SCRIPT_LABEL, "-o", "md/report.md", "--format", "markdown", cwd=runs.root)
    assert res.code != 0  # the md/ directory does not exist: one clear error
    assert "cannot write" in res.err
    (runs.root / "md").mkdir()
    res = runs.cli("report", "alpha", SCRIPT_LABEL, "-o", "md/report.md", "--format", "markdown")
    assert res.code == 0, res.err
    path = runs.root / "md" / "report.md"
    assert res.out.strip() == str(path)
    text = path.read_text()
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert len(links) == 2 * len(WORKLOADS)  # bars and percentiles per workload
    for link in links:
        assert not link.startswith(("/", "http"))
        png = path.parent / link
        assert png.name.startswith("report_chart") and png.exists()
        data = png.read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 5000
    assert sorted(p.name for p in path.parent.iterdir()) == sorted(["report.md", *links])
    # the label is text, the figures are the store's
    assert SCRIPT_LABEL not in text and md(SCRIPT_LABEL) in text
    iops = _stored_values(runs, runs.b)[("rnd4k-q1t1-read", "read", "iops")]
    s = summarize(iops)
    assert md(f"{fmt_iops(s.mean)} ± {fmt_iops(s.stddev)}") in text
    for heading in ("## Summary", "## Findings", "## Configurations", "## fio job files", *(f"## {md(w)}" for w in WORKLOADS)):
        assert heading in text
    cmp, caveats = _cmp(runs, with_caveats=True)
    for verdict in compare.verdict_lines(cmp, caveats=caveats):
        assert f"- **{md(verdict)}**" in text


@pytest.mark.slow
def test_markdown_report_draws_every_second_of_a_real_run(cli, tmp_path):
    """A 4 s run has fio's per-second interval logs: the Markdown report gains a third chart
    per workload (IOPS and bandwidth per second, drawn by render.png) whose panels hold every
    stored second of the run, in the first configuration's colour.  Asserted on what the chart
    was given, not on its pixels: how the line moves is the machine's (a busy second fills the
    panel); render.png's own tests hold the drawing to its input on made-up series."""
    from PIL import Image

    from storbench.render.markdown import series_chart_panels

    res = cli("run", "--target", str(tmp_path), "--workload", "rnd4k-q1t1-read", "--size", "16m",
              "--runtime", "4s", "--repeat", "1", "--no-report", "--label", "secs")  # fmt: skip
    assert res.code == 0, res.err
    with contextlib.closing(Store.open(f"sqlite:///{cli.db}")) as store:
        records = store.results(1)
    (rec,) = records
    seconds = rec.series["iops"]["read"]
    assert len(seconds) >= 3
    res = cli("report", "secs", "-o", "s.md", "--format", "markdown")
    assert res.code == 0, res.err
    text = (cli.cwd / "s.md").read_text()
    links = re.findall(r"!\[([^\]]*)\]\(([^)]+)\)", text)
    assert [alt for alt, _ in links] == [f"rnd4k-q1t1-read: {w}" for w in (
        "IOPS, bandwidth and latency per configuration", "latency percentiles", "IOPS and bandwidth per second")]  # fmt: skip
    with Image.open(cli.cwd / links[2][1]) as img:
        assert img.format == "PNG" and img.width == 900

    cmp = compare.compare(compare.configurations(records, {1: "secs"}))
    title, panels = series_chart_panels(cmp, {cmp.configs[0].key: records}, "rnd4k-q1t1-read")
    assert title == "rnd4k-q1t1-read: over time"
    assert [p.title for p in panels] == ["IOPS per second (every run)", "bandwidth per second (every run)"]
    for panel, kind in zip(panels, ("iops", "bw_bytes")):
        (line,) = panel.series  # one repetition, one direction
        stored = rec.series[kind]["read"]
        assert line.name == "secs read" and line.color == "#636efa"  # chartdata.color(0)
        assert list(line.x) == [t for t, _ in stored]  # every stored second, none thinned
        div, unit = chartdata.scale_for(kind, max(v for _, v in stored))
        assert panel.y_label == unit
        assert list(line.y) == [v / div for _, v in stored]


def _cmp(runs, *, with_caveats: bool = False):
    with contextlib.closing(runs.store()) as store:
        records = store.results(runs.a) + store.results(runs.b)
    groups = compare.configurations(records, {1: "alpha", 2: SCRIPT_LABEL})
    if with_caveats:
        return compare.compare(groups), compare.finding_caveats({c.key: list(m) for c, m in groups})
    return compare.compare(groups)


def test_markdown_without_charts_is_text_only(runs):
    with contextlib.closing(runs.store()) as store:
        records = store.results(runs.a)
    cmp = compare.compare(compare.configurations(records, {1: "alpha"}))
    text, pngs = format_markdown_report(records, cmp, None)
    assert pngs == {} and "![" not in text and "## rnd4k-q1t1-read" in text
    text, pngs = format_markdown_report(records, cmp, Path("charts"), chart_stem="x")
    assert sorted(pngs) == [f"charts/x_chart{i}.png" for i in range(1, 5)]
    assert all(f"(charts/x_chart{i}.png)" in text for i in range(1, 5))


# --------------------------------------------------------------------------- the command


def test_report_command_errors_are_one_line(runs):
    for args, words in (
        (("report", "-o", "x.html"), "name at least one run"),
        (("report", "99", "-o", "x.html"), "no run matches '99'"),
        (("report", "alpha", "--baseline", "nope", "-o", "x.html"), "--baseline 'nope' names no configuration"),
        (("report", "--label-prefix", "zzz", "-o", "x.html"), "no run has a label starting with 'zzz'"),
    ):
        res = runs.cli(*args)
        assert res.code == 2, args
        assert res.err.count("\n") == 1 and words in res.err, res.err
    assert not (runs.root / "x.html").exists()


def test_baseline_and_label_prefix(runs):
    res = runs.cli("report", "--label-prefix", "alp", SCRIPT_LABEL, "--baseline", SCRIPT_LABEL, "-o", "b.html")
    assert res.code == 0, res.err
    data = _script((runs.root / "b.html").read_text(), "storbench-data")
    assert [c["key"] for c in data["configs"]] == ["run2", "run1"]
    assert data["baseline"] == "run2"
    res = runs.cli("report", "alpha", "2", "--baseline", "2", "-o", "b.html")
    assert res.code == 0 and _script((runs.root / "b.html").read_text(), "storbench-data")["baseline"] == "run2"


def test_write_run_report(runs):
    from storbench.commands.report import write_run_report

    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), environ={**os.environ, "STORBENCH_DB": str(runs.cli.db)}, cwd=str(runs.root), clock=lambda: "2026-01-02T03:04:05Z")
    path = write_run_report(App(env=env, db_option=None), runs.b, "run-report.html")
    assert path == runs.root / "run-report.html"
    page = path.read_text()
    assert "generated 2026-01-02T03:04:05Z" in page
    assert "<title>storbench report: run 2 (&lt;script&gt;alert(1)&lt;/script&gt;)</title>" in page
    assert _script(page, "storbench-data")["configs"][0]["key"] == "run2"


def test_imported_results_of_every_kind_render(cli):
    """Imports have no storage, activity, series or job file; some lack latencies,
    percentiles or directions: the report still renders, in both formats."""
    data = Path(__file__).parent.parent / "data" / "fio-json"
    files = ["f_client_server.json", "h_randrw.json", "i_lat_percentiles_only.json", "p7_disable_clat_lat.json",
             "p7_gtod_reduce.json", "numjobs2_trim_null.json", "c_numjobs_no_group_reporting.json", "j_fsync1.json",
             "g_terse_v3.txt"]  # fmt: skip
    assert cli("import", "--label", "imp <1>", *(str(data / f) for f in files)).code == 0
    assert cli("import", "--label", "imp 2", str(data / "h_randrw.json"), str(data / "c_numjobs_group_reporting.json")).code == 0
    res = cli("report", "imp <1>", "imp 2", "-o", "imp.html")
    assert res.code == 0, res.err
    page = (cli.cwd / "imp.html").read_text()
    assert "not described (imported results or --no-telemetry)" in page and "imp &lt;1&gt;" in page
    assert "<th class=\"rowhead\" scope=\"row\">Kernel</th>" not in page  # rows nobody knows are left out
    res = cli("report", "imp <1>", "imp 2", "-o", "imp.md", "--format", "markdown")
    assert res.code == 0, res.err
    text = (cli.cwd / "imp.md").read_text()
    for link in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text):
        assert (cli.cwd / link).read_bytes().startswith(PNG_MAGIC)


# --------------------------------------------------------------------------- many configurations


def _many(runs: Runs, n: int) -> tuple[list, compare.Comparison]:
    """``n`` configurations made from the real runs' records: run 1's results copied as runs
    1..n, configuration i with IOPS and bandwidth scaled by 1 + i/100 (so the ranking is known)."""
    with contextlib.closing(runs.store()) as store:
        base = store.results(runs.a)
    records = []
    for i in range(n):
        for r in base:
            jobs = tuple(
                dataclasses.replace(j, directions={k: dataclasses.replace(d, iops=d.iops * (1 + i / 100), bw_bytes=d.bw_bytes * (1 + i / 100))
                                                   for k, d in j.directions.items()})
                for j in r.fio.jobs
            )  # fmt: skip
            records.append(dataclasses.replace(r, run_id=i + 1, label=f"cfg-{i:02d}", fio=dataclasses.replace(r.fio, jobs=jobs)))
    return records, compare.compare(compare.configurations(records, {i + 1: f"cfg-{i:02d}" for i in range(n)}))


def test_charted_configs_are_the_baseline_and_both_ends_of_the_ranking(runs):
    _records, cmp = _many(runs, 12)
    chosen = [c.name for c in chartdata.charted_configs(cmp, WORKLOADS[0], "iops")]
    # cfg-00 is the baseline (slowest); cfg-11 the fastest: best, worst, second best, ... of the other eleven
    assert chosen == ["cfg-00", "cfg-01", "cfg-02", "cfg-03", "cfg-08", "cfg-09", "cfg-10", "cfg-11"]
    few = _many(runs, 3)[1]
    assert [c.name for c in chartdata.charted_configs(few, WORKLOADS[0], "iops")] == ["cfg-00", "cfg-01", "cfg-02"]


def test_a_report_of_many_configurations_stays_small_and_keeps_every_figure(runs):
    records, cmp = _many(runs, 12)
    page = format_html_report(records, cmp, generated_at="t")
    figures = _script(page, "storbench-figures")
    pct = [f for f in figures if f["layout"]["title"]["text"].startswith("Latency percentiles")]
    assert len(pct) == len(WORKLOADS)
    for f in pct:
        assert "8 of 12 configurations" in f["layout"]["title"]["text"]
        assert {t["name"].rsplit(" ", 1)[0] for t in f["data"]} == {"cfg-00", "cfg-01", "cfg-02", "cfg-03", "cfg-08", "cfg-09", "cfg-10", "cfg-11"}
    # no chart per configuration for device activity: one table per workload, every configuration in it
    assert not [f for f in figures if f["layout"]["title"]["text"].startswith(("Device and CPU activity", "CPU activity"))]
    with_activity = {r.label for r in records if r.activity is not None}
    if with_activity:
        tables = re.findall(r'<table class="activity">(.*?)</table>', page, re.S)
        assert len(tables) == len(WORKLOADS)
        assert all(f'<td class="cfg">{name}</td>' in tables[0] for name in with_activity)
    # the figures table still has every configuration, with its stored mean
    cells = _Cells()
    cells.feed(page)
    keys = {(a["data-config"], a["data-metric"]) for a, _ in cells.cells}
    assert {(c.key, "iops") for c in cmp.configs} <= keys
    # packed: the page is far smaller than what it holds
    assert len(page.encode()) < 0.6 * len(_unpacked(page).encode())


def test_a_two_by_two_sweep_grid_gets_its_chart(runs, tmp_path):
    """--sweep bs=4k,64k --sweep iodepth=1,4 (two values per axis): a grid section (the finder wanted 3)."""
    target = tmp_path / "g"
    target.mkdir()
    res = runs.cli("run", "--suite-file", str(runs.root / "sweep.toml"), "--workload", "sweep", "--target", str(target),
                   "--sweep", "bs=4k,64k", "--sweep", "iodepth=1,4", "--runtime", "200ms", "--label", "grid", "--no-report")  # fmt: skip
    assert res.code == 0, res.err
    res = runs.cli("report", "grid", "-o", str(tmp_path / "grid.html"))
    assert res.code == 0, res.err
    page = (tmp_path / "grid.html").read_text()
    assert 'id="sweeps"' in page and "Sweep over bs × iodepth" in page, page[:2000]
