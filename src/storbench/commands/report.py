"""``storbench report``: write an HTML (or Markdown) report comparing stored runs.

Also :func:`write_run_report`, which ``storbench run`` calls to leave an HTML
report of the run it just made.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import UsageError
from ..model import RunInfo
from ..record import ResultRecord
from .common import App, pass_app, resolve_runs

if TYPE_CHECKING:
    from ..store import Store


@dataclass(frozen=True)
class ReportData:
    """What a report shows of its runs: their results, run infos and metadata (curves,
    steady-state windows), read in one opening of the store."""

    records: list[ResultRecord]
    runs: dict[int, RunInfo]
    metas: dict[int, dict]


def load(store: Store, run_ids: Sequence[int]) -> ReportData:
    """The runs' results (in the order of ``run_ids``), infos and metadata: three queries."""
    found = store.results_of(run_ids)
    return ReportData(records=[rec for rid in run_ids for rec in found[rid]], runs=store.get_runs(run_ids),
                      metas=store.run_metas(run_ids))  # fmt: skip


def write_file(path: Path, data: str | bytes) -> None:
    try:
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        else:
            path.write_bytes(data)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None


def render_html(app: App, data: ReportData, title: str | None = None, baseline: str | None = None) -> str:
    """The HTML report of ``data`` (:func:`storbench.render.report.report_html`, as serve makes it)."""
    from ..render.report import report_html

    return report_html(data.records, data.runs, data.metas, baseline=baseline, title=title, generated_at=app.env.clock())


def write_run_report(app: App, run_id: int, path: str | os.PathLike[str]) -> Path:
    """Write the HTML report of one run to ``path`` (relative to the working directory); return the path."""
    out = Path(app.env.cwd, path)
    with contextlib.closing(app.open_store()) as store:
        data = load(store, [run_id])
    label = data.runs[run_id].label
    title = f"storbench report: run {run_id}" + (f" ({label})" if label else "")
    write_file(out, render_html(app, data, title))
    return out


@click.command()
@click.argument("run_refs", metavar="RUN...", nargs=-1)
@click.option("--label-prefix", metavar="TEXT", help="Also include every run whose label starts with TEXT.")
@click.option("--baseline", metavar="CONFIG", help="Compare against this configuration: a label, run id or key like run3 (default: the first).")
@click.option("-o", "--output", "output", metavar="FILE", required=True, type=click.Path(dir_okay=False), help="Write the report to FILE.")
@click.option("--format", "fmt", type=click.Choice(["html", "markdown"]), default="html", show_default=True,
              help="html: one self-contained page that works offline; markdown: FILE plus PNG charts beside it (FILE-stem_chartN.png).")  # fmt: skip
@pass_app
def report(app: App, run_refs, label_prefix, baseline, output, fmt):
    """Write a report comparing runs (ids, labels or 'last'): summary, charts, tables, findings."""
    if not run_refs and not label_prefix:
        raise UsageError("name at least one run (an id, a label or 'last') or give --label-prefix")
    with contextlib.closing(app.open_store()) as store:
        run_ids = resolve_runs(store, run_refs)
        if label_prefix:
            matched = [r.run_id for r in reversed(store.list_runs(label_prefix=label_prefix))]
            if not matched:
                raise UsageError(f"no run has a label starting with {label_prefix!r} (see 'storbench list')")
            run_ids += matched
        run_ids = list(dict.fromkeys(run_ids))  # keep the order given, once each
        data = load(store, run_ids)

    path = Path(app.env.cwd, output)
    if fmt == "html":
        write_file(path, render_html(app, data, baseline=baseline))
        app.out(str(path))
        return
    from ..render.markdown import format_markdown_report
    from ..render.report import comparison_of

    cmp = comparison_of(data.records, data.runs, baseline)

    text, pngs = format_markdown_report(data.records, cmp, Path("."), chart_stem=path.stem, generated_at=app.env.clock(),
                                        metas=data.metas)  # fmt: skip
    for name, png in pngs.items():
        write_file(path.parent / name, png)
    write_file(path, text)
    app.out(str(path))
    for name in pngs:
        app.err(f"chart: {path.parent / name}")
