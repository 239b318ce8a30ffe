"""storbench doctor: the storage under a target and the checks that need no measurement."""

from __future__ import annotations

import click

from ..errors import StorbenchError
from .common import App, load_catalog, overrides_from, pass_app, print_json


@click.command()
@click.option(
    "--target",
    "targets",
    metavar="PATH|URI",
    multiple=True,
    help="Directory, file, device, export, volume, image or pool to examine (default: the current directory).",
)
@click.option(
    "--suite",
    "suite_name",
    metavar="NAME",
    default="quick",
    show_default=True,
    help="Judge the workloads of this suite.",
)
@click.option(
    "--suite-file",
    type=click.Path(dir_okay=False),
    help="TOML file with your own workloads and suites.",
)
@click.option("--size", metavar="SIZE", help="The test file size you plan to use.")
@click.option(
    "--ceph-conf",
    metavar="PATH",
    type=click.Path(dir_okay=False),
    help="The Ceph cluster's ceph.conf for rbd: and rados: targets.",
)
@click.option(
    "--ceph-client",
    metavar="NAME",
    help="The Ceph client for rbd: and rados: targets (default: admin).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the storage description and findings as JSON.",
)
@pass_app
def doctor(
    app: App, targets, suite_name, suite_file, size, ceph_conf, ceph_client, as_json
):
    """Describe the storage under a target and run the checks that need no measurement."""
    from ..checks import PreflightContext, preflight
    from ..jobs.jobfile import build_job
    from ..run import runner
    from ..storage import format_storage, storage_to_dict
    from ..targets import kind_of
    from ..targets import resolve as resolve_target

    catalog = load_catalog(suite_file)
    suite = catalog.suite(suite_name)
    overrides = overrides_from(size, None)
    try:
        fio_version = runner.SubprocessFio(app.env.fio_path).version()
    except StorbenchError:
        fio_version = None
    report = []
    for path in targets or (app.env.cwd,):
        target = resolve_target(
            path, ceph_conf=ceph_conf, ceph_client=ceph_client
        )
        storage = kind_of(target).describe(target, fio_version)
        # "auto" engines are judged as libaio: the checks care about sync vs async, not which
        options = {
            w.name: dict(build_job(w, target, overrides, ioengine="libaio").options)
            for w in suite.workloads
            if w.is_fio  # an application load's pitfalls are judged from its run
        }
        mem = storage.host.mem_bytes if storage is not None and storage.host else None
        findings = preflight(
            PreflightContext(
                options_by_workload=options, storage=storage, mem_bytes=mem
            )
        )
        report.append((target, storage, findings))
    if as_json:
        print_json(
            app,
            [
                {
                    "target": t.path,
                    "storage": storage_to_dict(st) if st is not None else None,
                    "findings": [
                        {
                            "check": f.check,
                            "severity": f.severity,
                            "message": f.message,
                            "fix": f.fix,
                            "workload": f.workload,
                        }
                        for f in fs
                    ],
                }
                for t, st, fs in report
            ],
        )
        return
    for target, storage, findings in report:
        for line in format_storage(storage):
            app.out(line)
        if not findings:
            app.out(f"no pitfalls found for suite {suite.name} on {target.path}")
        for f in findings:
            app.out(
                f"{f.severity.upper():8} {f.workload or ''} [{f.check}] {f.message}"
            )
            app.out(f"         fix: {f.fix}")
        app.out("")
