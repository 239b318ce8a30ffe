"""The application loads beside fio (issue 38's first part): dbench, fs_mark, sysbench fileio.

Each tool is a module of its own: how its command line is built from a workload's options
(:func:`argv`), how its output is read into frozen, typed records (:func:`parse`, one
:class:`LoadParseError` line where it cannot be), and the figures a result keeps of it
(:func:`measures`: :class:`storbench.model.Measure` records, the form PTS imports already take
through show, compare and the reports).  :data:`TOOLS` is the registry: adding a tool is a module
and a line here.  Nothing here runs a program; the run's edge does, through the process module.

May import: model, units and errors; never run, store, render or commands.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import StorbenchError
from ..model import Measure


class LoadParseError(StorbenchError):
    """A tool's output storbench cannot read; the message says what was wrong, in one line."""


@dataclass(frozen=True)
class LoadTool:
    """One application load: its program, the Debian package that has it, and its three functions."""

    name: str
    program: str
    package: str
    argv: Callable[[Mapping[str, str], str], list[str]]
    parse: Callable[[str], Any]
    measures: Callable[[Any], tuple[Measure, ...]]


def _registry() -> dict[str, LoadTool]:
    from . import dbench, fsmark, sysbench

    return {t.name: t for t in (dbench.TOOL, fsmark.TOOL, sysbench.TOOL)}


def tool(name: str) -> LoadTool:
    """The tool ``name``; one line naming the ones there are where it is none of them."""
    tools = _registry()
    if name not in tools:
        raise LoadParseError(f"unknown tool {name!r}: storbench runs {', '.join(sorted(tools))} (and fio)")
    return tools[name]


def tool_names() -> Sequence[str]:
    return sorted(_registry())
