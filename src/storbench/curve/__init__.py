"""Curves: latency against throughput as the load rises, their knee and the SLA ceiling.

:mod:`.model` is the pure part (the steps, stopping, the knee, the bisection for an SLA
ceiling, the wording); :mod:`.runner` runs one target's steps through :mod:`storbench.run`,
shared by ``storbench curve`` and ``storbench matrix --curve``.

May import run, jobs, stats, metrics, model and units; never commands, study, render or serve.
"""
