"""storbench export: runs as CSV or JSON."""

from __future__ import annotations

import contextlib
import json

import click

from ..errors import UsageError
from ..record import ResultRecord
from .common import App, finite, pass_app, public_records, resolve_runs


@click.command()
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "json"]),
    default="csv",
    show_default=True,
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    help="Write to FILE instead of stdout.",
)
@pass_app
def export(app: App, run_refs, fmt, output):
    """Export runs' results as CSV or JSON."""
    from ..render.csv import format_csv

    with contextlib.closing(app.open_store()) as store:
        records: list[ResultRecord] = []
        for run_id in resolve_runs(store, run_refs):
            records.extend(store.results(run_id))
    text = (
        format_csv(records)
        if fmt == "csv"
        else json.dumps(finite(public_records(records)), indent=2, allow_nan=False) + "\n"
    )
    if output:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise UsageError(f"cannot write {output}: {exc.strerror}") from None
        app.err(f"wrote {len(records)} result(s) to {output}")
    else:
        app.env.stdout.write(text)
