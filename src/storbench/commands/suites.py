"""storbench suites: every suite with every workload and option."""

from __future__ import annotations

import click

from ..errors import UsageError
from .common import App, job_file_catalog, load_catalog, pass_app


@click.command()
@click.argument("name", required=False)
@click.option(
    "--suite-file",
    type=click.Path(dir_okay=False),
    help="Also show the suites of this TOML file.",
)
@click.option("--job-file", "job_file", metavar="FILE.fio", type=click.Path(dir_okay=False), help="Show the workloads a fio job file runs as (run --job-file).")
@pass_app
def suites(app: App, name, suite_file, job_file):
    """List the built-in and user suites with every workload and option."""
    from ..render.terminal import format_suites

    if job_file and suite_file:
        raise UsageError("give either --suite-file or --job-file, not both")
    catalog = job_file_catalog(app, job_file) if job_file else load_catalog(suite_file)
    chosen = [catalog.suite(name)] if name else list(catalog.suites.values())
    for line in format_suites(chosen):
        app.out(line)
