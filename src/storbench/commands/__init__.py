"""Every subcommand, one module each (``run.py`` is ``storbench run``).

Each module defines its command with ``@click.command()``, takes what commands share
(:class:`~storbench.commands.common.App`, the injected environment; ``pass_app``; JSON
printing, run lookup) from :mod:`.common`, and never imports :mod:`storbench.cli`:
``cli.py`` holds only the group, its ``--db`` option and the mapping of errors to exit
codes, and adds every command it finds here.  Keep command modules thin: parse options,
call the pure modules, print.

May import every stage (commands are the top: they parse options, call the stages, print);
never :mod:`storbench.cli`.
"""

#: each command's summary, its help's first paragraph: ``storbench --help`` lists the commands from
#: here without importing their modules (tests/commands/test_startup_imports.py holds it equal to
#: each command's own help)
SUMMARIES: dict[str, str] = {
    "agent": "Run a fio server for 'storbench run --host' until Ctrl-C or SIGTERM.",
    "capture": "Record a device's block I/O while an application runs (for N seconds, or while COMMAND runs) and store it as a trace.",
    "compare": "Compare runs (ids, labels or 'last') workload by workload, with Welch's t-test.",
    "curve": "Raise the load on a workload step by step: a latency-versus-throughput curve, its knee, and with --sla the most IOPS that keep a latency limit.",
    "doctor": "Describe the storage under a target and run the checks that need no measurement.",
    "export": "Export runs' results as CSV or JSON.",
    "import": "Import fio outputs into the store: single output files, every output in a document (a post, a mail, a log, a saved page), or every file of a directory.",
    "list": "List stored runs, newest first.",
    "matrix": "Run the same workloads on several storage setups of one scratch device, one after another.",
    "net": "Measure the network's ceiling to SERVER with iperf3 and store it (for network shares).",
    "report": "Write a report comparing runs (ids, labels or 'last'): summary, charts, tables, findings.",
    "run": "Run a suite (or single workloads) through fio and store every result.",
    "serve": "Browse the stored history in a web browser: runs, run pages, compare, trend, curves, live runs.",
    "show": "Show one run (an id or a label) with every result.",
    "suites": "List the built-in and user suites with every workload and option.",
    "trace": "List, show, import, export and delete the stored block traces (storbench capture records them; run --replay replays them).",
}
