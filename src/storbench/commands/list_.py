"""storbench list: the stored runs, newest first."""

from __future__ import annotations

import contextlib

import click

from .common import App, pass_app, print_json


@click.command("list")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="How many runs, newest first.",
)
@click.option(
    "--label-prefix", metavar="TEXT", help="Only runs whose label starts with TEXT."
)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@pass_app
def list_(app: App, limit, label_prefix, as_json):
    """List stored runs, newest first."""
    from ..render.terminal import format_run_list
    from ..serialize import run_info_to_public

    with contextlib.closing(app.open_reader()) as store:
        runs = store.list_runs(limit=limit, label_prefix=label_prefix)
    if as_json:
        print_json(app, [run_info_to_public(r) for r in runs])
    elif not runs:
        app.out(f"no runs stored yet in {app.db_url} (try 'storbench run')")
    else:
        app.console().print(format_run_list(runs))
