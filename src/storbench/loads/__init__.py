"""The application loads beside fio (issue 38): pgbench, dbench, fs_mark, sysbench fileio.

Each tool is a module of its own: its options (:class:`LoadOption`: name, kind, default, what it
does), the commands of one run in a directory of its own (:class:`LoadSteps`: what to prepare,
the measured command, what it leaves there), how its output is read into frozen, typed records
(``parse``, one :class:`LoadParseError` line where it cannot be), the figures a result keeps of it
(``measures``: :class:`storbench.model.Measure` records, first the one the load is judged by: the
form PTS imports already take through show, compare and the reports) and what it reported about
how it ran (``settings``).  :data:`TOOLS` is the registry: adding a tool is a module and a line in
:func:`_registry`.  Nothing here runs a program; the run's edge does (:mod:`storbench.run.loads`),
through the process module.

A workload names its tool in a suite file (``tool = "dbench"``) with the options in a table named
after the tool (``dbench = { clients = 4, runtime = 10 }``); :func:`check_options` turns that table
into the workload's options, every option present (defaults filled in), in the tool's order.

May import: model, units and errors; never run, store, render or commands.
"""

from __future__ import annotations

from collections.abc import Sequence

from .base import (
    KINDS,
    LoadOption,
    LoadOptionError,
    LoadParseError,
    LoadSteps,
    LoadTool,
    check_options,
    format_options_help,
    size_bytes,
    with_overrides,
)


def _registry() -> dict[str, LoadTool]:
    from . import dbench, fsmark, pgbench, sysbench

    return {t.name: t for t in (pgbench.TOOL, dbench.TOOL, fsmark.TOOL, sysbench.TOOL)}


def tool(name: str) -> LoadTool:
    """The tool ``name``; one line naming the ones there are where it is none of them."""
    tools = _registry()
    if name not in tools:
        raise LoadParseError(f"unknown tool {name!r}: storbench runs {', '.join(sorted(tools))} (and fio)")
    return tools[name]


def tool_names() -> Sequence[str]:
    return sorted(_registry())


__all__ = [
    "KINDS",
    "LoadOption",
    "LoadOptionError",
    "LoadParseError",
    "LoadSteps",
    "LoadTool",
    "check_options",
    "format_options_help",
    "size_bytes",
    "tool",
    "tool_names",
    "with_overrides",
]
