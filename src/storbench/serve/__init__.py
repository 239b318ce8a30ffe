"""``storbench serve``: the store's history in a browser, and runs in progress live.

Pages (each a stable URL; every page has its JSON under ``/api``):

=====================  ==========================================================================
``/``                  the runs, newest first, filtered by label prefix, target, suite, host, date, finding; paged
``/runs/N``            one run: its glance grid, findings said once, every figure, per-second charts,
                       the storage under each target, the fio jobs and the command line
``/runs/N/report``     the run's full static report (the same page as ``storbench report``)
``/compare?run=..``    two or more runs: verdicts, what differs, every figure with Welch's verdict
``/trend?workload=..`` one workload (on one target, or in runs with a label prefix) over time,
                       with each run's 95% interval and regressions marked
``/curves``            every stored curve: knee, SLA ceiling, the curves overlaid
``/traces[/N]``       the stored block traces; one trace: its figures, requests per second, request sizes
``/live``, ``/live/N`` runs in progress (from any process or host writing this store), updated every second
``/metrics``           Prometheus text: the last result per workload and target, the live runs' figures
=====================  ==========================================================================

:mod:`.views` builds what each page shows (pure), :mod:`.prometheus` the metrics text (pure),
:mod:`.app` is the Starlette application (routes, parameters, token), the templates and the one
script and stylesheet are under ``templates/`` and ``static/``; plotly.js is the report's bundle.

May import: render, compare, metrics, stats, storage, trace records, model, units and errors; the store is
handed in by :mod:`storbench.commands.serve`, never imported here; never run or study.
"""
