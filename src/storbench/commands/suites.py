"""storbench suites: every suite with every workload and option."""

from __future__ import annotations

import click

from .common import App, load_catalog, pass_app


@click.command()
@click.argument("name", required=False)
@click.option(
    "--suite-file",
    type=click.Path(dir_okay=False),
    help="Also show the suites of this TOML file.",
)
@pass_app
def suites(app: App, name, suite_file):
    """List the built-in and user suites with every workload and option."""
    from ..render.terminal import format_suites

    catalog = load_catalog(suite_file)
    chosen = [catalog.suite(name)] if name else list(catalog.suites.values())
    for line in format_suites(chosen):
        app.out(line)
